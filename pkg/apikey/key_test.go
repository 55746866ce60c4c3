package apikey

import (
	"crypto/sha256"
	"encoding/base32"
	"encoding/hex"
	"strings"
	"testing"
)

// lowerBase32 is the key alphabet, spelled out independently of the package.
var lowerBase32 = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

func TestKeyFormat(t *testing.T) {
	key, id := generate()
	if !strings.HasPrefix(key, "agk_") || Prefix != "agk_" {
		t.Fatalf("key %q does not start with agk_", key)
	}
	// agk_ + 13 (64-bit id) + _ + 52 (256-bit secret)
	if len(key) != 4+13+1+52 {
		t.Fatalf("len(key) = %d, want 70", len(key))
	}
	if key[4:17] != id {
		t.Fatalf("key %q does not carry its id %q after the prefix", key, id)
	}
	if key[17] != '_' {
		t.Fatalf("key %q: separator is %q, want '_'", key, key[17])
	}
	idRaw, err := lowerBase32.DecodeString(id)
	if err != nil || len(idRaw) != 8 {
		t.Fatalf("id %q decodes to %d bytes (%v), want 8", id, len(idRaw), err)
	}
	secret, err := lowerBase32.DecodeString(key[18:])
	if err != nil {
		t.Fatalf("secret %q is not lower-case base32: %v", key[18:], err)
	}
	if len(secret) != 32 {
		t.Fatalf("secret decodes to %d bytes, want 32 (256 bits)", len(secret))
	}
	for _, c := range key[4:] {
		if !strings.ContainsRune("abcdefghijklmnopqrstuvwxyz234567_", c) {
			t.Fatalf("key %q has %q outside the lower-case base32 alphabet", key, c)
		}
	}
	if got, ok := KeyID(key); !ok || got != id {
		t.Fatalf("KeyID(generated key) = %q, %v; want %q, true", got, ok, id)
	}
	if !Looks(key) {
		t.Fatal("Looks(generated key) = false")
	}
	if DisplayPrefix(id) != "agk_"+id || !strings.HasPrefix(key, DisplayPrefix(id)) {
		t.Fatalf("DisplayPrefix(%q) = %q, not the start of %q", id, DisplayPrefix(id), key)
	}
}

func TestKeysDiffer(t *testing.T) {
	const n = 1000
	keys, ids, secrets := map[string]bool{}, map[string]bool{}, map[string]bool{}
	for range n {
		key, id := generate()
		keys[key], ids[id], secrets[key[18:]] = true, true, true
	}
	if len(keys) != n || len(ids) != n || len(secrets) != n {
		t.Fatalf("%d keys gave %d distinct keys, %d ids, %d secrets", n, len(keys), len(ids), len(secrets))
	}
	// Randomness, crudely: over 1000 secrets each bit position of the first
	// byte should be set in roughly half of them.
	var ones [8]int
	for s := range secrets {
		b, _ := lowerBase32.DecodeString(s)
		for i := range 8 {
			ones[i] += int(b[0]>>i) & 1
		}
	}
	for i, c := range ones {
		if c < 350 || c > 650 {
			t.Fatalf("bit %d of the secret's first byte set in %d of %d keys", i, c, n)
		}
	}
}

func TestParseRejects(t *testing.T) {
	key, _ := generate()
	id, secret := key[4:17], key[18:]
	swap := func(s string, i int, c string) string { return s[:i] + c + s[i+1:] }
	bad := map[string]string{
		"empty":                 "",
		"prefix only":           "agk_",
		"one short":             key[:len(key)-1],
		"one long":              key + "a",
		"wrong prefix":          "agx_" + key[4:],
		"upper-case prefix":     "AGK_" + key[4:],
		"no prefix, same len":   "xxxx" + key[4:],
		"hyphen separator":      "agk_" + id + "-" + secret,
		"dot separator":         "agk_" + id + "." + secret,
		"separator moved":       "agk_" + id[:12] + "_" + id[12:] + secret,
		"upper-case id":         "agk_" + strings.ToUpper(id) + "_" + secret,
		"upper-case secret":     "agk_" + id + "_" + strings.ToUpper(secret),
		"digit 0 in id":         "agk_" + swap(id, 0, "0") + "_" + secret,
		"digit 1 in secret":     "agk_" + id + "_" + swap(secret, 5, "1"),
		"digit 8 in secret":     "agk_" + id + "_" + swap(secret, 51, "8"),
		"padding in secret":     "agk_" + id + "_" + swap(secret, 51, "="),
		"base64 char in id":     "agk_" + swap(id, 3, "+") + "_" + secret,
		"underscore in secret":  "agk_" + id + "_" + swap(secret, 10, "_"),
		"multi-byte, same len":  "agk_" + id + "_" + secret[:50] + "é",
		"NUL in secret":         "agk_" + id + "_" + swap(secret, 0, "\x00"),
		"space in id":           "agk_" + swap(id, 6, " ") + "_" + secret,
		"id and secret swapped": "agk_" + secret + "_" + id,
	}
	for name, k := range bad {
		if got, ok := KeyID(k); ok {
			t.Errorf("%s: KeyID(%q) = %q, true; want a rejection", name, k, got)
		}
	}
	if _, ok := KeyID(key); !ok {
		t.Fatal("the unmodified key no longer parses")
	}
}

func TestHash(t *testing.T) {
	key, _ := generate()
	sum := sha256.Sum256([]byte(key))
	want := hex.EncodeToString(sum[:])
	got := hash(key)
	if got != want {
		t.Fatalf("hash = %q, want hex SHA-256 %q", got, want)
	}
	if len(got) != 64 || strings.ToLower(got) != got {
		t.Fatalf("hash %q is not 64 lower-case hex digits", got)
	}
	if strings.Contains(got, key[18:]) {
		t.Fatal("hash contains the secret")
	}
	if !matches(key, got) {
		t.Fatal("matches(key, hash(key)) = false")
	}
	other, _ := generate()
	for _, h := range []string{hash(other), "", got[:63], strings.ToUpper(got), got + "0"} {
		if matches(key, h) {
			t.Fatalf("matches(key, %q) = true", h)
		}
	}
	last := "a"
	if key[len(key)-1] == 'a' {
		last = "b"
	}
	if matches(key[:len(key)-1]+last, got) {
		t.Fatal("a key differing in its last character matches")
	}
}
