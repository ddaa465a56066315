// Package codec encrypts every Temporal payload maestro writes, so that a
// workflow history holds no phone number, message body, tenant name or
// transcript in clear: AES-256-GCM under a named key, the key's ID riding
// in the payload's metadata so that a history outlives a key rotation.
package codec
