package store

import (
	"time"

	"github.com/agentgate/agentgate/pkg/agentgate"
)

// ExpiryEpoch returns the TTL attribute value for t: epoch seconds rounded up,
// so that an item never expires before t. Zero t gives 0 (no expiry).
func ExpiryEpoch(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	s := t.Unix()
	if t.Nanosecond() > 0 {
		s++
	}
	return s
}

// Expired reports whether an item whose TTL attribute is epoch is gone at now.
// DynamoDB deletes such items lazily, up to days later, and emulators never do,
// so every read of both stores goes through this one rule.
func Expired(epoch int64, now time.Time) bool {
	return epoch > 0 && now.Unix() >= epoch
}

// CheckKey rejects keys the table cannot hold.
func CheckKey(k Key) error {
	if k.PK == "" || k.SK == "" {
		return agentgate.Errorf(agentgate.EINVALID, "store: key needs both a partition and a sort key (got %q, %q)", k.PK, k.SK)
	}
	if len(k.PK) > 2048 || len(k.SK) > 1024 {
		return agentgate.Errorf(agentgate.EINVALID, "store: key too long")
	}
	return nil
}

// CheckItem rejects items the table cannot hold.
func CheckItem(it Item) error {
	if err := CheckKey(it.Key); err != nil {
		return err
	}
	for _, ix := range []IndexKey{it.Index1, it.Index2} {
		if ix.PK != "" && ix.SK == "" {
			return agentgate.Errorf(agentgate.EINVALID, "store: index key %q needs a sort key", ix.PK)
		}
		if len(ix.PK) > 2048 || len(ix.SK) > 1024 {
			return agentgate.Errorf(agentgate.EINVALID, "store: index key too long")
		}
	}
	// DynamoDB's item limit is 400 KB; leave room for keys and attributes.
	if len(it.Data) > 350*1024 {
		return agentgate.Errorf(agentgate.EINVALID, "store: item data is %d bytes, over 350 KiB", len(it.Data))
	}
	return nil
}

// CheckQuery validates q and returns its effective page size.
func CheckQuery(q Query) (int, error) {
	if q.PK == "" {
		return 0, agentgate.Errorf(agentgate.EINVALID, "store: query needs a partition key")
	}
	if q.Index < Primary || q.Index > Index2 {
		return 0, agentgate.Errorf(agentgate.EINVALID, "store: unknown index %d", q.Index)
	}
	switch {
	case q.Limit < 0 || q.Limit > MaxLimit:
		return 0, agentgate.Errorf(agentgate.EINVALID, "store: page size %d outside 1..%d", q.Limit, MaxLimit)
	case q.Limit == 0:
		return DefaultLimit, nil
	}
	return q.Limit, nil
}

// ErrBadCursor is returned for a cursor this store did not issue.
var ErrBadCursor = &agentgate.Error{Code: agentgate.EINVALID, Message: "invalid page cursor"}
