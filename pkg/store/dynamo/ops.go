package dynamo

import (
	"context"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/agentgate/agentgate/pkg/store"
)

// Get reads consistently, so that a write made through another Lambda
// instance a moment ago is seen.
func (s *Store) Get(ctx context.Context, key store.Key) (store.Item, error) {
	if err := store.CheckKey(key); err != nil {
		return store.Item{}, err
	}
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName:      aws.String(s.table),
		Key:            keyAttrs(key),
		ConsistentRead: aws.Bool(true),
	})
	switch {
	case err != nil:
		return store.Item{}, fail("Get", err)
	case out.Item == nil || expired(out.Item, s.now()):
		return store.Item{}, store.ErrNotFound
	}
	return decode(out.Item), nil
}

// Create writes the whole item, so an expired item it replaces leaves
// nothing behind (no counter, no index keys).
func (s *Store) Create(ctx context.Context, it store.Item) (store.Item, error) {
	if err := store.CheckItem(it); err != nil {
		return store.Item{}, err
	}
	created, err := s.create(ctx, it, s.now())
	return created, fail("Create", err)
}

// create puts it as a new item with version 1 where there is no live item.
func (s *Store) create(ctx context.Context, it store.Item, now time.Time) (store.Item, error) {
	av := recordAttrs(it)
	av[store.AttrVersion] = num(1)
	if err := s.putGone(ctx, av, now); err != nil {
		return store.Item{}, err
	}
	return decode(av), nil // exactly what a Get will return
}

// putGone writes the item av where there is no live item at its key.
func (s *Store) putGone(ctx context.Context, av map[string]types.AttributeValue, now time.Time) error {
	var e expr
	cond := e.gone(now)
	_, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{
		TableName:                 aws.String(s.table),
		Item:                      av,
		ConditionExpression:       aws.String(cond),
		ExpressionAttributeNames:  e.names,
		ExpressionAttributeValues: e.values,
	})
	return err
}

// Put updates rather than replaces the item, so that its counter survives
// and its version keeps counting up. An expired item must lend the new one
// neither, so the update is conditioned on the item being live (or absent)
// and an expired one is replaced as Create would.
func (s *Store) Put(ctx context.Context, it store.Item) (store.Item, error) {
	if err := store.CheckItem(it); err != nil {
		return store.Item{}, err
	}
	now := s.now()
	var out store.Item
	update := func() (err error) {
		out, err = s.updateRecord(ctx, it, now, (*expr).live)
		return err
	}
	err := reviving(update, func() (err error) {
		out, err = s.create(ctx, it, now)
		return err
	}, update)
	return out, fail("Put", err)
}

// Update is a compare-and-set on the version. Like Put it leaves the
// counter alone.
func (s *Store) Update(ctx context.Context, it store.Item) (store.Item, error) {
	if err := store.CheckItem(it); err != nil {
		return store.Item{}, err
	}
	out, err := s.updateRecord(ctx, it, s.now(), func(e *expr, now time.Time) string {
		return e.name(store.AttrVersion) + " = " + e.value(num(it.Version)) + " AND " + e.live(now)
	})
	if conditionFailed(err) {
		// DynamoDB does not say which part of the condition failed, and
		// dynalite ignores ReturnValuesOnConditionCheckFailure, so a read
		// (on this failure path only) tells a missing item from a version
		// that moved on.
		if _, err := s.Get(ctx, it.Key); err != nil {
			return store.Item{}, err
		}
		return store.Item{}, store.ErrConflict
	}
	return out, fail("Update", err)
}

// updateRecord rewrites the record fields of the item at it.Key where cond
// holds, and returns the item as stored.
func (s *Store) updateRecord(ctx context.Context, it store.Item, now time.Time, cond condition) (store.Item, error) {
	var e expr
	update := e.setRecord(it)
	c := cond(&e, now)
	out, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 aws.String(s.table),
		Key:                       keyAttrs(it.Key),
		UpdateExpression:          aws.String(update),
		ConditionExpression:       aws.String(c),
		ExpressionAttributeNames:  e.names,
		ExpressionAttributeValues: e.values,
		ReturnValues:              types.ReturnValueAllNew,
	})
	if err != nil {
		return store.Item{}, err
	}
	return decode(out.Attributes), nil
}

// Delete is unconditional: deleting an absent or expired item is a no-op.
func (s *Store) Delete(ctx context.Context, key store.Key) error {
	if err := store.CheckKey(key); err != nil {
		return err
	}
	_, err := s.db.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(s.table), Key: keyAttrs(key)})
	return fail("Delete", err)
}

// Add is an atomic ADD in one request in the common cases: a counter that
// exists, and a new one.
//
// Only an item Add creates may get opts.ExpiresAt. The update sets it with
// if_not_exists, which would give a permanent item one too, so an update
// that sets an expiry is conditioned on the item being absent or already
// expiring; a permanent item fails that condition and the fallback, and is
// then counted by an update that leaves the expiry alone.
func (s *Store) Add(ctx context.Context, key store.Key, delta int64, opts store.AddOptions) (int64, error) {
	if err := store.CheckKey(key); err != nil {
		return 0, err
	}
	now := s.now()
	if opts.MustExist {
		// Nothing is created, so opts.ExpiresAt does not apply.
		n, err := s.add(ctx, key, delta, now, 0, (*expr).liveItem)
		if conditionFailed(err) {
			return 0, store.ErrNotFound
		}
		return n, fail("Add", err)
	}
	ttl := store.ExpiryEpoch(opts.ExpiresAt)
	cond := (*expr).live
	if ttl > 0 {
		cond = (*expr).absentOrExpiring
	}
	var n int64
	err := reviving(func() (err error) {
		n, err = s.add(ctx, key, delta, now, ttl, cond)
		return err
	}, func() error {
		av := keyAttrs(key)
		av[store.AttrVersion] = num(1)
		av[store.AttrCount] = num(delta)
		av[store.AttrCountAt] = num(now.UnixMilli())
		if ttl > 0 {
			av[store.AttrTTL] = num(ttl)
		}
		if err := s.putGone(ctx, av, now); err != nil {
			return err
		}
		n = delta
		return nil
	}, func() (err error) {
		n, err = s.add(ctx, key, delta, now, 0, (*expr).liveItem)
		return err
	})
	return n, fail("Add", err)
}

// add adds delta to the count of the item at key where cond holds, sets
// CountedAt, sets the expiry to ttl if the item has none (ttl 0 leaves it
// alone), and returns the new count. An item it creates gets version 1, as
// Create's do; an existing one keeps its version, so counting never breaks
// a concurrent compare-and-set.
func (s *Store) add(ctx context.Context, key store.Key, delta int64, now time.Time, ttl int64, cond condition) (int64, error) {
	var e expr
	update := "ADD " + e.name(store.AttrCount) + " " + e.value(num(delta)) +
		" SET " + e.name(store.AttrCountAt) + " = " + e.value(num(now.UnixMilli())) +
		", " + e.ifNotExists(store.AttrVersion, 1)
	if ttl > 0 {
		update += ", " + e.ifNotExists(store.AttrTTL, ttl)
	}
	c := cond(&e, now)
	out, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 aws.String(s.table),
		Key:                       keyAttrs(key),
		UpdateExpression:          aws.String(update),
		ConditionExpression:       aws.String(c),
		ExpressionAttributeNames:  e.names,
		ExpressionAttributeValues: e.values,
		ReturnValues:              types.ReturnValueUpdatedNew,
	})
	if err != nil {
		return 0, err
	}
	return numberOf(out.Attributes[store.AttrCount]), nil
}

// maxRevivals bounds reviving. Every round that fails has lost a race to
// another writer of the same key, so a few rounds are plenty; the bound only
// keeps a pathological case from spinning.
const maxRevivals = 4

// reviving runs write, whose condition fails when an expired item is in the
// way (or, for Add, a permanent one). Then fresh writes a new item in its
// place, conditioned on there being no live item; when that fails too,
// another writer has just made a live item, and retry writes to it. It
// returns the last attempt's error, in which a failed condition (all rounds
// lost) reads as ErrConflict.
func reviving(write, fresh, retry func() error) error {
	err := write()
	for range maxRevivals {
		if !conditionFailed(err) {
			return err
		}
		if err = fresh(); !conditionFailed(err) {
			return err
		}
		err = retry()
	}
	return err
}
