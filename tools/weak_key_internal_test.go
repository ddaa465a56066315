package tools

import (
	"crypto/sha256"
	"testing"
)

// BenchmarkWeakKeyPrefixes is the one-off cost of the weak-key set, paid
// by a process's first catalog load.
func BenchmarkWeakKeyPrefixes(b *testing.B) {
	for b.Loop() {
		if len(buildWeakKeySet().low) < weakKeyCount()*9/10 {
			b.Fatal("the set lost keys")
		}
	}
}

// BenchmarkWeakKeyClass is what each key of each later load costs.
func BenchmarkWeakKeyClass(b *testing.B) {
	weakKeys()
	h := keyHash(sha256.Sum256([]byte("a strong key would be 32 random bytes")))
	for b.Loop() {
		if weakKeyClass(h) != "" {
			b.Fatal("a strong key was refused")
		}
	}
}
