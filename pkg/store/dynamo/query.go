package dynamo

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/agentgate/agentgate/pkg/store"
)

// Query reads one page. Expired items are dropped by a filter, which
// DynamoDB applies after Limit, so a page may come up short of Limit with
// more to follow. Queries of the table read consistently, like Get (a
// resuming stream replays the events another instance has just written);
// the secondary indexes only offer eventually consistent reads.
func (s *Store) Query(ctx context.Context, q store.Query) (store.Page, error) {
	limit, err := store.CheckQuery(q)
	if err != nil {
		return store.Page{}, err
	}
	ix := indexSchema(q.Index)
	start, err := decodeCursor(q, ix)
	if err != nil {
		return store.Page{}, err
	}
	var e expr
	keyCond := e.name(ix.PK) + " = " + e.value(str(q.PK))
	if q.SKPrefix != "" {
		keyCond += " AND begins_with(" + e.name(ix.SK) + ", " + e.value(str(q.SKPrefix)) + ")"
	}
	filter := e.live(s.now())
	in := &dynamodb.QueryInput{
		TableName:                 aws.String(s.table),
		KeyConditionExpression:    aws.String(keyCond),
		FilterExpression:          aws.String(filter),
		ExpressionAttributeNames:  e.names,
		ExpressionAttributeValues: e.values,
		ExclusiveStartKey:         start,
		Limit:                     aws.Int32(int32(limit)),
		ScanIndexForward:          aws.Bool(!q.Descending),
		ConsistentRead:            aws.Bool(q.Index == store.Primary),
	}
	if ix.Name != "" {
		in.IndexName = aws.String(ix.Name)
	}
	out, err := s.db.Query(ctx, in)
	if err != nil {
		return store.Page{}, fail("Query", err)
	}
	page := store.Page{Items: make([]store.Item, 0, len(out.Items)), Next: encodeCursor(out.LastEvaluatedKey)}
	for _, av := range out.Items {
		page.Items = append(page.Items, decode(av))
	}
	return page, nil
}

// A cursor is DynamoDB's LastEvaluatedKey: the key attributes of the last
// item read (the table's, plus the index's on an index), all strings, as
// base64url JSON. It is opaque to callers but not secret: it names a key
// they were just shown.

func encodeCursor(last map[string]types.AttributeValue) string {
	if len(last) == 0 {
		return ""
	}
	keys := make(map[string]string, len(last))
	for name, v := range last {
		keys[name] = stringOf(v)
	}
	b, _ := json.Marshal(keys) // a map of strings always marshals
	return base64.RawURLEncoding.EncodeToString(b)
}

// decodeCursor returns the ExclusiveStartKey of q's cursor, or ErrBadCursor
// if q could not have issued it. Checking the key names, the partition and
// the prefix here makes a foreign cursor an invalid argument rather than a
// ValidationException from DynamoDB.
func decodeCursor(q store.Query, ix store.IndexSchema) (map[string]types.AttributeValue, error) {
	if q.Cursor == "" {
		return nil, nil
	}
	var keys map[string]string
	raw, err := base64.RawURLEncoding.DecodeString(q.Cursor)
	if err != nil || json.Unmarshal(raw, &keys) != nil {
		return nil, store.ErrBadCursor
	}
	names := []string{store.AttrPK, store.AttrSK}
	if q.Index != store.Primary {
		names = append(names, ix.PK, ix.SK)
	}
	if len(keys) != len(names) || keys[ix.PK] != q.PK || !strings.HasPrefix(keys[ix.SK], q.SKPrefix) {
		return nil, store.ErrBadCursor
	}
	start := make(map[string]types.AttributeValue, len(names))
	for _, name := range names {
		v, ok := keys[name]
		if !ok || v == "" {
			return nil, store.ErrBadCursor
		}
		start[name] = str(v)
	}
	return start, nil
}
