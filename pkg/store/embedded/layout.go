package embedded

import (
	"bytes"
	"encoding/json"
	"strings"
	"time"

	"github.com/agentgate/agentgate/pkg/store"
)

// The file holds three buckets. "items" maps (PK, SK) to the item's record;
// "gsi1" and "gsi2" map (index PK, index SK, PK, SK) to nothing, so a listing
// walks index keys in order and loads each item from "items". Index entries
// are written in the same transaction as their item, so they never go stale.
var buckets = [...][]byte{
	store.Primary: []byte("items"),
	store.Index1:  []byte(store.IndexName1),
	store.Index2:  []byte(store.IndexName2),
}

// Keys are tuples of strings encoded so that bytewise order of the encoding is
// the order of the tuples, component by component, each compared bytewise as
// DynamoDB compares string keys. Each component is written with 0x00 escaped
// as 0x00 0xFF and ends with 0x00 0x01: the terminator sorts below every byte
// a longer component could continue with, so "a" < "a\x00" < "a\x01" < "b",
// and no component can run into the next. A length prefix would be simpler
// but would sort short sort keys first.

// appendEscaped appends s with its 0x00 bytes escaped and no terminator: the
// encoding of every component that starts with s starts with this.
func appendEscaped(b []byte, s string) []byte {
	if strings.IndexByte(s, 0) < 0 {
		return append(b, s...)
	}
	for i := range len(s) {
		if s[i] == 0 {
			b = append(b, 0, 0xFF)
		} else {
			b = append(b, s[i])
		}
	}
	return b
}

// appendPart appends s as one complete key component.
func appendPart(b []byte, s string) []byte {
	return append(appendEscaped(b, s), 0, 1)
}

// splitKey decodes an encoded key into its components; ok is false if raw is
// not a well-formed encoding.
func splitKey(raw []byte) (parts []string, ok bool) {
	var part []byte
	for i := 0; i < len(raw); i++ {
		if raw[i] != 0 {
			part = append(part, raw[i])
			continue
		}
		if i++; i == len(raw) {
			return nil, false
		}
		switch raw[i] {
		case 0xFF:
			part = append(part, 0)
		case 0x01:
			parts = append(parts, string(part))
			part = part[:0]
		default:
			return nil, false
		}
	}
	return parts, len(part) == 0 && len(parts) > 0
}

// arity is the number of components of a key in the bucket of index ix.
func arity(ix store.Index) int {
	if ix == store.Primary {
		return 2
	}
	return 4
}

// encodeKey encodes a tuple of components.
func encodeKey(parts ...string) []byte {
	n := 0
	for _, p := range parts {
		n += len(p) + 2
	}
	b := make([]byte, 0, n)
	for _, p := range parts {
		b = appendPart(b, p)
	}
	return b
}

func itemKey(k store.Key) []byte { return encodeKey(k.PK, k.SK) }

func indexKey(ix store.IndexKey, k store.Key) []byte { return encodeKey(ix.PK, ix.SK, k.PK, k.SK) }

// keyOf returns the item key named by the last two components of a key from
// any bucket.
func keyOf(parts []string) store.Key {
	return store.Key{PK: parts[len(parts)-2], SK: parts[len(parts)-1]}
}

// record is an item as stored, without its key (which is the bucket key).
// The expiry is kept as the TTL epoch seconds DynamoDB keeps, so that both
// stores round and expire items by the same rule (store.Expired).
type record struct {
	Kind      string         `json:"kind,omitempty"`
	Data      []byte         `json:"data,omitempty"`
	Index1    store.IndexKey `json:"gsi1,omitzero"`
	Index2    store.IndexKey `json:"gsi2,omitzero"`
	TTL       int64          `json:"ttl,omitempty"`
	Version   int64          `json:"v"`
	Count     int64          `json:"n,omitempty"`
	CountedAt time.Time      `json:"nat,omitzero"`
}

// successor returns it as the record that replaces cur (nil: no live item):
// the next version, with cur's counter carried over.
func successor(cur *record, it store.Item) record {
	r := record{
		Kind:    it.Kind,
		Data:    it.Data,
		Index1:  it.Index1,
		Index2:  it.Index2,
		TTL:     store.ExpiryEpoch(it.ExpiresAt),
		Version: 1,
	}
	if cur != nil {
		r.Version = cur.Version + 1
		r.Count, r.CountedAt = cur.Count, cur.CountedAt
	}
	return r
}

// decodeRecord decodes a stored value; a nil value (no such key) gives nil.
func decodeRecord(v []byte) (*record, error) {
	if v == nil {
		return nil, nil
	}
	r := new(record)
	if err := json.Unmarshal(v, r); err != nil {
		return nil, err
	}
	return r, nil
}

// live reports whether r is an item that exists at now: neither absent nor
// past its expiry.
func (r *record) live(now time.Time) bool {
	return r != nil && !store.Expired(r.TTL, now)
}

// placements returns r's index keys, one per index bucket; a nil record is in
// no index.
func (r *record) placements() [2]store.IndexKey {
	if r == nil {
		return [2]store.IndexKey{}
	}
	return [2]store.IndexKey{r.Index1, r.Index2}
}

func (r *record) item(k store.Key) store.Item {
	it := store.Item{
		Key:       k,
		Kind:      r.Kind,
		Data:      r.Data,
		Index1:    r.Index1,
		Index2:    r.Index2,
		Version:   r.Version,
		Count:     r.Count,
		CountedAt: r.CountedAt,
	}
	if r.TTL > 0 {
		it.ExpiresAt = time.Unix(r.TTL, 0).UTC()
	}
	return it
}

// prefixEnd returns the smallest key above every key that starts with p, or
// nil if there is none.
func prefixEnd(p []byte) []byte {
	for i := len(p) - 1; i >= 0; i-- {
		if p[i] < 0xFF {
			end := bytes.Clone(p[:i+1])
			end[i]++
			return end
		}
	}
	return nil
}
