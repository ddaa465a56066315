// Patches a copy of Twilio's official OpenAPI spec (twilio_api_v2010.json
// from @twilio/cli-core) where it rejects traffic real Twilio sends. Prism
// validates the Twilio stand-in against the patched copy; the spec itself
// is never committed.
//
//   node patch-spec.js IN.json OUT.json
//
// Each patch is as narrow as the defect, and fails loudly when the defect
// is gone, so a newer spec that fixed it drops the patch instead of
// silently loosening validation.
"use strict";

const fs = require("fs");

const [input, output] = process.argv.slice(2);
if (!input || !output) {
  console.error("usage: node patch-spec.js IN.json OUT.json");
  process.exit(2);
}
const spec = JSON.parse(fs.readFileSync(input, "utf8"));

// Patch 1: list envelopes' page links are relative.
//
// Every list response (ListMessageResponse and the rest) declares uri,
// first_page_uri, next_page_uri and previous_page_uri as `format: uri`,
// which JSON Schema reads as an absolute URI. Twilio answers with paths
// ("/2010-04-01/Accounts/AC…/Messages.json?PageSize=50&Page=0"), and
// twilio-go joins them to its base URL. Prism therefore rejects every
// genuine list page; maestro lists messages to reconcile a lost answer, so
// the eval lists them too. The fields stay strings, nullable where they
// were; only the absolute-URI format goes.
const pageLinks = ["uri", "first_page_uri", "next_page_uri", "previous_page_uri"];
let relaxed = 0;
for (const [path, item] of Object.entries(spec.paths)) {
  const schema = item.get?.responses?.["200"]?.content?.["application/json"]?.schema;
  if (!schema?.properties?.first_page_uri) {
    continue; // not a list endpoint
  }
  for (const link of pageLinks) {
    const prop = schema.properties[link];
    if (prop?.format === "uri") {
      delete prop.format;
      relaxed++;
    }
  }
}
if (relaxed === 0) {
  console.error("patch 1 (relative page links) found nothing to patch: drop it");
  process.exit(1);
}

// Not patched: single-value form arrays. MediaUrl (and the other array
// parameters of form-encoded requests) is declared `type: array`, and
// Prism reads a form that carries one MediaUrl as a string, so a valid
// one-attachment MMS is refused. maestro never sends media, so no request
// in the eval meets the defect, and loosening the schema would only widen
// what Prism lets through.

fs.writeFileSync(output, JSON.stringify(spec));
console.error(`patched Twilio spec: ${relaxed} page-link formats relaxed across list responses`);
