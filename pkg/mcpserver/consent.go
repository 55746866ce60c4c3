package mcpserver

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/agentgate/agentgate/pkg/agentgate"
	"github.com/agentgate/agentgate/pkg/mcpsession"
	"github.com/agentgate/agentgate/pkg/store"
)

// Consent is a human's yes before any work reaches an agent (gate.go). The
// gate fails closed: no answer, a "no", a dismissed prompt, an answer that
// does not parse, or a state that does not verify, and nothing is sent.
//
// Asking and answering are two requests that may land on two instances,
// with a cold start between them. What carries the question across is:
//
//   - the requestState (MRTR, 2026-07-28), or our pending elicitation
//     record (legacy sessions): a signed token naming the consent, bound to
//     the caller, the tool and a digest of the arguments, with an expiry;
//   - a record in the table that makes the answer count once: a replay
//     after success returns the stored result and dispatches nothing. For
//     dispatch_task it is the task's own record (pkg/dispatch/taskrecord.go),
//     and the token names the question by the record's version; for the
//     other tools, a consent record keyed by the token's id.

// ConsentTTL is how long a consent question stays answerable.
const ConsentTTL = 10 * time.Minute

// MinConsentSecret is the shortest HMAC secret accepted.
const MinConsentSecret = 32

// consentKey names the elicitation among a request's input requests: the
// session layer's, since it carries the answer to the retried call.
const consentKey = mcpsession.ConsentKey

// consentClaims are what a requestState says, signed.
type consentClaims struct {
	ID      string `json:"id"`            // the consent record, of a tool that keeps one
	Ask     int64  `json:"ask,omitempty"` // or the question, in the work's own record (handing.asked)
	Caller  string `json:"sub"`           // who was asked
	Tool    string `json:"tool"`          // which tool asked
	Digest  string `json:"args"`          // the arguments asked about
	TaskID  string `json:"task"`          // the taskId the dispatch will use
	Expires int64  `json:"exp"`           // Unix milliseconds
}

// signer makes and checks requestStates.
type signer struct {
	secret []byte
	now    func() time.Time
}

// tokenPrefix versions the token format and the MAC's domain.
const tokenPrefix = "agc1."

func (s signer) sign(c consentClaims) (string, error) {
	payload, err := json.Marshal(c)
	if err != nil {
		return "", err
	}
	body := base64.RawURLEncoding.EncodeToString(payload)
	return tokenPrefix + body + "." + base64.RawURLEncoding.EncodeToString(s.mac(body)), nil
}

func (s signer) mac(body string) []byte {
	m := hmac.New(sha256.New, s.secret)
	m.Write([]byte(tokenPrefix + body))
	return m.Sum(nil)
}

// errBadState is every way a requestState can fail to verify; callers see
// one reason, so that the answer does not help forge one.
var errBadState = agentgate.Errorf(agentgate.EINVALID, "the consent state is invalid: it was altered, is from another deployment, or is not for this request; call the tool again to be asked anew")

// verify checks token's MAC and expiry and that it was issued to caller for
// tool, and returns its claims.
func (s signer) verify(token, caller, tool string) (consentClaims, error) {
	body, mac, ok := strings.Cut(strings.TrimPrefix(token, tokenPrefix), ".")
	if !strings.HasPrefix(token, tokenPrefix) || !ok {
		return consentClaims{}, errBadState
	}
	got, err := base64.RawURLEncoding.DecodeString(mac)
	if err != nil || !hmac.Equal(got, s.mac(body)) {
		return consentClaims{}, errBadState
	}
	payload, err := base64.RawURLEncoding.DecodeString(body)
	if err != nil {
		return consentClaims{}, errBadState
	}
	var c consentClaims
	if err := json.Unmarshal(payload, &c); err != nil {
		return consentClaims{}, errBadState
	}
	if c.Caller != caller || c.Tool != tool {
		return consentClaims{}, errBadState
	}
	if s.now().UnixMilli() > c.Expires {
		return consentClaims{}, agentgate.Errorf(agentgate.EINVALID, "the consent request expired before it was answered; call the tool again to be asked anew")
	}
	return c, nil
}

// Consent record states.
const (
	consentPending  = "pending"  // asked, not answered
	consentAccepted = "accepted" // approved; the send is claimed, under a lease
	consentSettled  = "settled"  // answered for good: Result is the tool's result
)

// consentRecord is a consent's table item.
type consentRecord struct {
	State  string `json:"state"`
	Caller string `json:"caller"`
	Agent  string `json:"agent"`
	Tool   string `json:"tool,omitempty"`
	TaskID string `json:"taskId,omitempty"`
	Digest string `json:"digest"`
	// LeaseUntil bounds an accepted consent's claim on the send: a sender
	// that died holds it off until then.
	LeaseUntil time.Time       `json:"leaseUntil,omitzero"`
	Result     json.RawMessage `json:"result,omitempty"` // the tool's output, once settled
}

// consents keeps consent records in the table.
type consents struct {
	store store.Store
	ttl   time.Duration // how long a settled answer is replayed
	now   func() time.Time
}

// create records a new pending consent and returns its id.
func (c consents) create(ctx context.Context, rec consentRecord) (string, error) {
	id, err := mcpsession.NewID()
	if err != nil {
		return "", err
	}
	rec.State = consentPending
	data, err := json.Marshal(rec)
	if err != nil {
		return "", err
	}
	_, err = c.store.Create(ctx, store.Item{Key: store.ConsentKey(id), Kind: "consent", Data: data, ExpiresAt: c.now().Add(c.ttl)})
	return id, err
}

func (c consents) get(ctx context.Context, id string) (consentRecord, int64, error) {
	it, err := c.store.Get(ctx, store.ConsentKey(id))
	if errors.Is(err, store.ErrNotFound) {
		return consentRecord{}, 0, agentgate.Errorf(agentgate.ENOTFOUND, "the consent request is unknown or has expired; call the tool again to be asked anew")
	} else if err != nil {
		return consentRecord{}, 0, err
	}
	var rec consentRecord
	if err := json.Unmarshal(it.Data, &rec); err != nil {
		return consentRecord{}, 0, fmt.Errorf("decoding consent %s: %w", id, err)
	}
	return rec, it.Version, nil
}

// transition moves the consent at version to rec; ErrConflict if another
// answer moved it first.
func (c consents) transition(ctx context.Context, id string, version int64, rec consentRecord) error {
	data, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	_, err = c.store.Update(ctx, store.Item{Key: store.ConsentKey(id), Kind: "consent", Data: data, Version: version, ExpiresAt: c.now().Add(c.ttl)})
	return err
}
