package eval

// FenceParts exposes FenceCatalog over parts, so tests can build catalogs
// the loader would refuse.
var FenceParts = fenceCatalog
