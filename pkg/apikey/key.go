// Package apikey issues, lists, revokes and checks agentgate API keys.
//
// A key is "agk_<id>_<secret>": a recognisable prefix (so secret scanners and
// people can tell what leaked), a short public id used to find the record,
// and 256 bits of randomness. Only a SHA-256 hash of the whole key is stored:
// a key has enough entropy that a fast hash is safe, and a hash lets the
// table leak without leaking keys. The secret is shown once, at creation.
package apikey

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base32"
	"encoding/hex"
	"strings"
)

// Prefix starts every key.
const Prefix = "agk_"

const (
	idBytes     = 8  // 64-bit public id: 13 base32 characters
	secretBytes = 32 // 256-bit secret: 52 base32 characters
)

var enc = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

var (
	idLen     = enc.EncodedLen(idBytes)
	secretLen = enc.EncodedLen(secretBytes)
	keyLen    = len(Prefix) + idLen + 1 + secretLen
)

// generate returns a new key and its public id.
func generate() (key, id string) {
	var b [idBytes + secretBytes]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on supported platforms
	id = enc.EncodeToString(b[:idBytes])
	return Prefix + id + "_" + enc.EncodeToString(b[idBytes:]), id
}

// Looks reports whether s has the shape of an agentgate key; it says nothing
// about whether the key is valid.
func Looks(s string) bool { return strings.HasPrefix(s, Prefix) }

// KeyID returns the public id of a well-formed key, or reports that key is
// malformed. It reads no table: a key names its own id, which is what lets a
// request be rate-limited per key before the key is looked up. A well-formed
// key is not necessarily a valid one.
func KeyID(key string) (id string, ok bool) {
	if len(key) != keyLen || !strings.HasPrefix(key, Prefix) || key[len(Prefix)+idLen] != '_' {
		return "", false
	}
	id = key[len(Prefix) : len(Prefix)+idLen]
	secret := key[len(Prefix)+idLen+1:]
	if _, err := enc.DecodeString(id); err != nil {
		return "", false
	}
	if _, err := enc.DecodeString(secret); err != nil {
		return "", false
	}
	return id, true
}

// hash is what the table stores in place of the key.
func hash(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}

// matches compares a presented key with a stored hash in constant time.
func matches(key, storedHash string) bool {
	return subtle.ConstantTimeCompare([]byte(hash(key)), []byte(storedHash)) == 1
}

// DisplayPrefix is the non-secret start of a key, shown in listings so an
// owner can tell keys apart: "agk_<id>".
func DisplayPrefix(id string) string { return Prefix + id }
