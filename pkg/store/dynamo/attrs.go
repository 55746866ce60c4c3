package dynamo

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/agentgate/agentgate/pkg/store"
)

// recordFields are the attributes Put and Update rewrite: everything but the
// key, the version (bumped, not set) and the counter (Add's alone). An
// optional one the new item lacks is removed, so a Put without an index key
// really takes the item out of that index.
var recordFields = []string{
	store.AttrKind, store.AttrData,
	store.AttrGSI1PK, store.AttrGSI1SK, store.AttrGSI2PK, store.AttrGSI2SK,
	store.AttrTTL,
}

// indexSchema says where ix keeps its keys. Index1 and Index2 are
// store.Indexes in order.
func indexSchema(ix store.Index) store.IndexSchema {
	if ix == store.Primary {
		return store.IndexSchema{PK: store.AttrPK, SK: store.AttrSK}
	}
	return store.Indexes[ix-1]
}

func str(s string) types.AttributeValue { return &types.AttributeValueMemberS{Value: s} }

func num(n int64) types.AttributeValue {
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(n, 10)}
}

func keyAttrs(k store.Key) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{store.AttrPK: str(k.PK), store.AttrSK: str(k.SK)}
}

// recordAttrs returns the attributes that hold it: its key, kind and data,
// and those of the index keys and expiry it has. An unset index key is left
// out rather than stored empty, because DynamoDB rejects empty strings in
// index keys (and an item without them is simply not in the index); no
// expiry is left out because TTL ignores items without the attribute.
func recordAttrs(it store.Item) map[string]types.AttributeValue {
	data := it.Data
	if data == nil {
		data = []byte{} // the SDK sends a nil B as no value, which is rejected
	}
	av := keyAttrs(it.Key)
	av[store.AttrKind] = str(it.Kind)
	av[store.AttrData] = &types.AttributeValueMemberB{Value: data}
	for i, k := range []store.IndexKey{it.Index1, it.Index2} {
		if !k.IsZero() {
			av[store.Indexes[i].PK] = str(k.PK)
			av[store.Indexes[i].SK] = str(k.SK)
		}
	}
	if ttl := store.ExpiryEpoch(it.ExpiresAt); ttl > 0 {
		av[store.AttrTTL] = num(ttl)
	}
	return av
}

// decode is the inverse of recordAttrs plus the store-maintained version
// and counter. Every attribute is written by this package only, so a missing
// or malformed one reads as its zero value.
func decode(av map[string]types.AttributeValue) store.Item {
	it := store.Item{
		Key:     store.Key{PK: stringOf(av[store.AttrPK]), SK: stringOf(av[store.AttrSK])},
		Kind:    stringOf(av[store.AttrKind]),
		Version: numberOf(av[store.AttrVersion]),
		Count:   numberOf(av[store.AttrCount]),
	}
	if b, ok := av[store.AttrData].(*types.AttributeValueMemberB); ok {
		it.Data = b.Value
	}
	for i, k := range []*store.IndexKey{&it.Index1, &it.Index2} {
		*k = store.IndexKey{PK: stringOf(av[store.Indexes[i].PK]), SK: stringOf(av[store.Indexes[i].SK])}
	}
	if ttl := numberOf(av[store.AttrTTL]); ttl > 0 {
		it.ExpiresAt = time.Unix(ttl, 0).UTC()
	}
	if at := numberOf(av[store.AttrCountAt]); at > 0 {
		it.CountedAt = time.UnixMilli(at).UTC()
	}
	return it
}

// expired applies the store's one TTL rule to a raw item: DynamoDB deletes
// expired items lazily (up to days late) and dynalite never does.
func expired(av map[string]types.AttributeValue, now time.Time) bool {
	return store.Expired(numberOf(av[store.AttrTTL]), now)
}

func stringOf(v types.AttributeValue) string {
	if s, ok := v.(*types.AttributeValueMemberS); ok {
		return s.Value
	}
	return ""
}

func numberOf(v types.AttributeValue) int64 {
	if n, ok := v.(*types.AttributeValueMemberN); ok {
		i, _ := strconv.ParseInt(n.Value, 10, 64)
		return i
	}
	return 0
}

// expr collects the placeholders of one request's expressions. Every
// attribute name goes through a placeholder because several of ours are
// reserved words (data, ttl), and placeholders are registered only when used
// because DynamoDB rejects a request that defines one its expressions do not
// mention.
type expr struct {
	names  map[string]string
	values map[string]types.AttributeValue
}

// name returns the placeholder of attribute attr.
func (e *expr) name(attr string) string {
	if e.names == nil {
		e.names = map[string]string{}
	}
	e.names["#"+attr] = attr
	return "#" + attr
}

// value returns a new placeholder bound to v.
func (e *expr) value(v types.AttributeValue) string {
	if e.values == nil {
		e.values = map[string]types.AttributeValue{}
	}
	p := fmt.Sprintf(":v%d", len(e.values))
	e.values[p] = v
	return p
}

// condition is a write's condition, built with the write's expr.
type condition func(e *expr, now time.Time) string

// The conditions below are the TTL rule (store.Expired) written for the
// server, evaluated against the item as it is at the moment of the write. A
// comparison with a missing attribute is false, and an absent item has no
// attributes at all, so live holds for it too.

// live holds for an item that has not expired, or does not exist.
func (e *expr) live(now time.Time) string {
	return or(e.missing(store.AttrTTL), e.ttlIs(">", now))
}

// liveItem holds for an item that exists and has not expired.
func (e *expr) liveItem(now time.Time) string {
	return "(attribute_exists(" + e.name(store.AttrPK) + ") AND " + e.live(now) + ")"
}

// absentOrExpiring holds where there is no item, or a live one that has an
// expiry: the items Add may give an expiry with if_not_exists without
// making a permanent item expire.
func (e *expr) absentOrExpiring(now time.Time) string {
	return or(e.missing(store.AttrPK), e.ttlIs(">", now))
}

// gone holds where there is no live item: none at all, or an expired one.
func (e *expr) gone(now time.Time) string {
	return or(e.missing(store.AttrPK), e.ttlIs("<=", now))
}

func (e *expr) missing(attr string) string { return "attribute_not_exists(" + e.name(attr) + ")" }

// ttlIs compares the item's expiry with now in whole seconds, as
// store.Expired does.
func (e *expr) ttlIs(op string, now time.Time) string {
	return e.name(store.AttrTTL) + " " + op + " " + e.value(num(now.Unix()))
}

func or(a, b string) string { return "(" + a + " OR " + b + ")" }

// ifNotExists is the SET action that gives attr the value n unless the
// item has it already.
func (e *expr) ifNotExists(attr string, n int64) string {
	a := e.name(attr)
	return a + " = if_not_exists(" + a + ", " + e.value(num(n)) + ")"
}

// setRecord returns the update expression that makes an item's record fields
// those of it and adds 1 to its version (starting from 0 on a new item),
// leaving the counter alone.
func (e *expr) setRecord(it store.Item) string {
	attrs := recordAttrs(it)
	var set, remove []string
	for _, field := range recordFields {
		if v, ok := attrs[field]; ok {
			set = append(set, e.name(field)+" = "+e.value(v))
		} else {
			remove = append(remove, e.name(field))
		}
	}
	u := "SET " + strings.Join(set, ", ") + " ADD " + e.name(store.AttrVersion) + " " + e.value(num(1))
	if len(remove) > 0 {
		u += " REMOVE " + strings.Join(remove, ", ")
	}
	return u
}
