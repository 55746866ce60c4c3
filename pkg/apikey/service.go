package apikey

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/agentgate/agentgate/pkg/agentgate"
	"github.com/agentgate/agentgate/pkg/store"
)

// record is a key as stored: never the key itself.
type record struct {
	ID        string     `json:"id"`
	Owner     string     `json:"owner"`
	Name      string     `json:"name,omitempty"`
	Scope     string     `json:"scope"`
	Agent     string     `json:"agent,omitempty"`
	Hash      string     `json:"hash"`
	CreatedAt time.Time  `json:"createdAt"`
	ExpiresAt *time.Time `json:"expiresAt,omitempty"`
	RevokedAt *time.Time `json:"revokedAt,omitempty"`
}

// Info is what an owner may see of a key: everything but its secret and hash.
type Info struct {
	ID         string     `json:"id"`
	Prefix     string     `json:"prefix"`
	Name       string     `json:"name,omitempty"`
	Scope      string     `json:"scope"`
	Agent      string     `json:"agent,omitempty"`
	CreatedAt  time.Time  `json:"createdAt"`
	LastUsedAt *time.Time `json:"lastUsedAt,omitempty"`
	UseCount   int64      `json:"useCount"`
	ExpiresAt  *time.Time `json:"expiresAt,omitempty"`
	RevokedAt  *time.Time `json:"revokedAt,omitempty"`
	Revoked    bool       `json:"revoked"`
	Expired    bool       `json:"expired"`
}

// Created is a new key: its Info and, this once, its secret.
type Created struct {
	Info
	Key string `json:"key"`
}

// NewKey describes a key to create.
type NewKey struct {
	Owner     string
	Name      string
	Scope     string // agentgate.ScopeUser (default) or agentgate.ScopeConnector
	Agent     string // required for ScopeConnector
	ExpiresAt time.Time
	// ExpiresIn, if set instead of ExpiresAt, is the key's lifetime from
	// its creation, by the service's clock.
	ExpiresIn time.Duration
}

// MaxNameLen bounds a key's name.
const MaxNameLen = 100

// Service manages keys in the table.
type Service struct {
	store store.Store
	now   func() time.Time
	uses  uses // key uses not yet written (Authenticate)
}

// NewService returns a Service on st. now is the clock (nil: time.Now).
func NewService(st store.Store, now func() time.Time) *Service {
	if now == nil {
		now = time.Now
	}
	return &Service{store: st, now: now}
}

// Create issues a key. The returned Created.Key is the only copy of the
// secret there will ever be.
func (s *Service) Create(ctx context.Context, nk NewKey) (Created, error) {
	if err := validate(&nk, s.now()); err != nil {
		return Created{}, err
	}
	key, id := generate()
	rec := record{ID: id, Owner: nk.Owner, Name: nk.Name, Scope: nk.Scope, Agent: nk.Agent,
		Hash: hash(key), CreatedAt: s.now().UTC().Truncate(time.Millisecond)}
	if !nk.ExpiresAt.IsZero() {
		exp := nk.ExpiresAt.UTC()
		rec.ExpiresAt = &exp
	}
	item, err := s.item(rec)
	if err != nil {
		return Created{}, err
	}
	if item, err = s.store.Create(ctx, item); err != nil {
		return Created{}, err // a 64-bit id collision is ErrConflict: astronomically rare, safe to surface
	}
	return Created{Info: rec.info(item, s.now()), Key: key}, nil
}

func validate(nk *NewKey, now time.Time) error {
	if nk.Scope == "" {
		nk.Scope = agentgate.ScopeUser
	}
	switch {
	case nk.Owner == "":
		return agentgate.Errorf(agentgate.EINVALID, "owner: required")
	case len(nk.Name) > MaxNameLen:
		return agentgate.Errorf(agentgate.EINVALID, "name: at most %d characters", MaxNameLen)
	case nk.Scope != agentgate.ScopeUser && nk.Scope != agentgate.ScopeConnector:
		return agentgate.Errorf(agentgate.EINVALID, "scope: must be %q or %q", agentgate.ScopeUser, agentgate.ScopeConnector)
	case nk.Scope == agentgate.ScopeConnector && nk.Agent == "":
		return agentgate.Errorf(agentgate.EINVALID, "agent: required for a connector key")
	case nk.Scope == agentgate.ScopeUser && nk.Agent != "":
		return agentgate.Errorf(agentgate.EINVALID, "agent: only a connector key names an agent")
	case !nk.ExpiresAt.IsZero() && nk.ExpiresIn != 0:
		return agentgate.Errorf(agentgate.EINVALID, "expiresIn: give it or expiresAt, not both")
	case nk.ExpiresIn < 0:
		return agentgate.Errorf(agentgate.EINVALID, "expiresIn: must be positive")
	case !nk.ExpiresAt.IsZero() && !nk.ExpiresAt.After(now):
		return agentgate.Errorf(agentgate.EINVALID, "expiresAt: must be in the future")
	}
	if nk.ExpiresIn > 0 {
		nk.ExpiresAt, nk.ExpiresIn = now.Add(nk.ExpiresIn), 0
	}
	return nil
}

func (s *Service) item(rec record) (store.Item, error) {
	data, err := json.Marshal(rec)
	if err != nil {
		return store.Item{}, err
	}
	at := store.SortTime(rec.CreatedAt)
	it := store.Item{Key: store.APIKeyKey(rec.ID), Kind: "apikey", Data: data,
		Index1: store.APIKeyByOwner(rec.Owner, at, rec.ID)}
	if rec.Scope == agentgate.ScopeConnector {
		it.Index2 = store.APIKeyByConnector(rec.Agent, at, rec.ID)
	}
	return it, nil
}

func decode(it store.Item) (record, error) {
	var rec record
	if err := json.Unmarshal(it.Data, &rec); err != nil {
		return record{}, fmt.Errorf("decoding API key %s: %w", it.PK, err)
	}
	return rec, nil
}

func (r record) info(it store.Item, now time.Time) Info {
	in := Info{ID: r.ID, Prefix: DisplayPrefix(r.ID), Name: r.Name, Scope: r.Scope, Agent: r.Agent,
		CreatedAt: r.CreatedAt, UseCount: it.Count, ExpiresAt: r.ExpiresAt, RevokedAt: r.RevokedAt,
		Revoked: r.RevokedAt != nil, Expired: r.ExpiresAt != nil && !now.Before(*r.ExpiresAt)}
	if !it.CountedAt.IsZero() {
		t := it.CountedAt.UTC()
		in.LastUsedAt = &t
	}
	return in
}

// List returns a page of owner's keys, newest first.
func (s *Service) List(ctx context.Context, owner, cursor string, limit int) ([]Info, string, error) {
	page, err := s.store.Query(ctx, store.Query{Index: store.Index1, PK: store.OwnerPartition(owner),
		SKPrefix: "APIKEY#", Limit: limit, Cursor: cursor, Descending: true})
	if err != nil {
		return nil, "", err
	}
	infos := make([]Info, 0, len(page.Items))
	now := s.now()
	for _, it := range page.Items {
		rec, err := decode(it)
		if err != nil {
			return nil, "", err
		}
		infos = append(infos, rec.info(it, now))
	}
	return infos, page.Next, nil
}

// Revoke revokes owner's key id. Revoking a revoked key is not an error; a
// key of another owner is ENOTFOUND, as if it did not exist. The next request
// with the key fails on every instance: nothing caches a key.
func (s *Service) Revoke(ctx context.Context, owner, id string) (Info, error) {
	for {
		it, err := s.store.Get(ctx, store.APIKeyKey(id))
		if errors.Is(err, store.ErrNotFound) {
			return Info{}, agentgate.Errorf(agentgate.ENOTFOUND, "no API key %q", id)
		} else if err != nil {
			return Info{}, err
		}
		rec, err := decode(it)
		if err != nil {
			return Info{}, err
		}
		if rec.Owner != owner {
			return Info{}, agentgate.Errorf(agentgate.ENOTFOUND, "no API key %q", id)
		}
		if rec.RevokedAt != nil {
			return rec.info(it, s.now()), nil
		}
		now := s.now().UTC()
		rec.RevokedAt = &now
		next, err := s.item(rec)
		if err != nil {
			return Info{}, err
		}
		next.Version = it.Version
		saved, err := s.store.Update(ctx, next)
		if errors.Is(err, store.ErrConflict) {
			continue // revoked or changed concurrently: look again
		}
		if err != nil {
			return Info{}, err
		}
		return rec.info(saved, now), nil
	}
}

// Authenticate checks a presented key and returns the principal it acts for.
// It costs one consistent read, always: nothing caches a key, so a
// revocation holds on the very next request on every instance. Unknown,
// malformed, revoked and expired keys are all EUNAUTHORIZED; a store failure
// is EUNAVAILABLE, never a refusal.
//
// Use accounting (the key item's Count and CountedAt: use count and last
// use) is batched so that it adds no round trip: the uses a key gets on this
// instance are kept in memory and written, with one Add of their number, at
// most once per UseWriteInterval, by a request of that key. That write runs
// concurrently with the read and carries the current use too, before the read
// has judged it; so a refused presentation of a key's id can count as a use,
// at most once per interval and instance. Uses not yet written when an
// instance ends are lost: at most an interval's worth per instance.
func (s *Service) Authenticate(ctx context.Context, key string) (agentgate.Principal, error) {
	id, ok := KeyID(key)
	if !ok {
		return agentgate.Principal{}, ErrInvalidKey
	}
	earlier, due := s.uses.take(id, s.now())
	var wrote chan error
	if due {
		wrote = make(chan error, 1)
		go func() {
			// MustExist: a use of an unknown id must not create an item.
			_, err := s.store.Add(ctx, store.APIKeyKey(id), earlier+1, store.AddOptions{MustExist: true})
			wrote <- err
		}()
	}
	it, err := s.store.Get(ctx, store.APIKeyKey(id))
	var p agentgate.Principal
	switch {
	case errors.Is(err, store.ErrNotFound):
		s.uses.forget(id) // keeps made-up ids out of the accounting
		err = ErrInvalidKey
	case err == nil:
		p, err = s.judge(key, id, it)
	}
	var accepted int64
	if err == nil {
		accepted = 1
	}
	if !due {
		s.uses.add(id, accepted)
		return p, err
	}
	// Waited for, so that the write ends within the request (on Lambda
	// nothing runs between invocations); it overlapped the read, so the wait
	// adds no round trip.
	if werr := <-wrote; werr != nil && !errors.Is(werr, store.ErrNotFound) {
		// Accounting must not turn a valid key away: the uses wait for the
		// next write.
		slog.WarnContext(ctx, "recording API key use", "key_id", id, "err", werr)
		s.uses.add(id, earlier+accepted)
	}
	return p, err
}

// ErrInvalidKey refuses a malformed, unknown or wrong key, alike: the caller
// learns nothing of which.
var ErrInvalidKey = agentgate.Errorf(agentgate.EUNAUTHORIZED, "invalid API key")

// judge checks a presented key against its stored item.
func (s *Service) judge(key, id string, it store.Item) (agentgate.Principal, error) {
	rec, err := decode(it)
	if err != nil {
		return agentgate.Principal{}, err
	}
	switch {
	case !matches(key, rec.Hash):
		return agentgate.Principal{}, ErrInvalidKey
	case rec.RevokedAt != nil:
		return agentgate.Principal{}, agentgate.Errorf(agentgate.EUNAUTHORIZED, "API key revoked")
	case rec.ExpiresAt != nil && !s.now().Before(*rec.ExpiresAt):
		return agentgate.Principal{}, agentgate.Errorf(agentgate.EUNAUTHORIZED, "API key expired")
	}
	return agentgate.Principal{Subject: rec.Owner, Method: agentgate.AuthAPIKey, Scope: rec.Scope, KeyID: id, Agent: rec.Agent}, nil
}
