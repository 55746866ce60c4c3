package mcpsession

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentgate/agentgate/pkg/agentgate"
	"github.com/agentgate/agentgate/pkg/store"
	"github.com/agentgate/agentgate/pkg/web"
)

// sessionRecord is a legacy session's table item.
type sessionRecord struct {
	Subject   string                 `json:"subject"`
	Scope     string                 `json:"scope"`
	Agent     string                 `json:"agent,omitempty"`
	State     mcp.ServerSessionState `json:"state"`
	CreatedAt time.Time              `json:"createdAt"`
	LastSeen  time.Time              `json:"lastSeen"`
	// Consents are the session's consent streams, by stream id: each
	// tools/call waiting for the client's answer, and what settled it
	// (consent.go). They live in the record, which every request of the
	// session reads anyway, so that asking, answering and resuming read
	// nothing else; an entry goes when it expires (consent.Expires), from
	// the next write of the record.
	Consents map[string]consent `json:"consents,omitempty"`
}

// consentOf returns the stream's consent, unless it is absent or expired.
func (rec sessionRecord) consentOf(stream string, now time.Time) (consent, bool) {
	c, ok := rec.Consents[stream]
	if !ok || !now.Before(c.Expires) {
		return consent{}, false
	}
	return c, true
}

// waiting counts the consents that wait for an answer.
func (rec sessionRecord) waiting(now time.Time) int {
	n := 0
	for _, c := range rec.Consents {
		if c.Settlement == nil && now.Before(c.Expires) {
			n++
		}
	}
	return n
}

// errNoSession is a session that is missing, expired or someone else's:
// the client's cue to start a new one.
var errNoSession = agentgate.Errorf(agentgate.ENOTFOUND, "session not found or expired; initialize a new session")

// maxSessionIDLen bounds Mcp-Session-Id. agentgate's ids are 22
// characters; a much longer one is no session of this server (and would
// not even make a table key).
const maxSessionIDLen = 128

// lookup reads the session sid and checks that it is the caller's. It
// returns an EINVALID error for a missing or malformed id, errNoSession, a
// store error, or the record and its version.
func (h *Handler) lookup(ctx context.Context, sid string) (sessionRecord, int64, error) {
	if err := checkID(sid); err != nil {
		return sessionRecord{}, 0, err
	}
	it, err := h.read(ctx, store.SessionKey(sid))
	if errors.Is(err, store.ErrNotFound) {
		return sessionRecord{}, 0, errNoSession
	} else if err != nil {
		return sessionRecord{}, 0, err
	}
	var rec sessionRecord
	if err := json.Unmarshal(it.Data, &rec); err != nil {
		return sessionRecord{}, 0, fmt.Errorf("decoding session: %w", err)
	}
	p := principal(ctx)
	if rec.Subject != p.Subject || rec.Scope != p.Scope || rec.Agent != p.Agent {
		// Someone else's session does not exist, as far as this caller knows.
		return sessionRecord{}, 0, errNoSession
	}
	return rec, it.Version, nil
}

// checkID refuses a missing or malformed session id (EINVALID).
func checkID(sid string) error {
	switch {
	case sid == "":
		return agentgate.Errorf(agentgate.EINVALID, "Mcp-Session-Id is required; initialize first")
	case len(sid) > maxSessionIDLen:
		return agentgate.Errorf(agentgate.EINVALID, "Mcp-Session-Id is %d bytes, over the limit of %d: it is no session of this server; initialize a new session", len(sid), maxSessionIDLen)
	case strings.ContainsFunc(sid, func(c rune) bool { return c < 0x21 || c > 0x7e }):
		// The spec's rule for session ids: visible ASCII only.
		return agentgate.Errorf(agentgate.EINVALID, "Mcp-Session-Id may only contain visible ASCII characters; initialize a new session")
	}
	return nil
}

// load is lookup answering its failures (failSession).
func (h *Handler) load(w http.ResponseWriter, r *http.Request, sid string) (sessionRecord, int64, bool) {
	rec, version, err := h.lookup(r.Context(), sid)
	if err != nil {
		failSession(w, r, nil, err)
		return sessionRecord{}, 0, false
	}
	return rec, version, true
}

// failSession answers a failed lookup or change (modify) of the session,
// for the request id: 400 for a missing or malformed session id, 404 for
// no session, 409 and 413 for a consent the session cannot keep (elicit),
// 503 for a store failure (never 404, which would end the client's
// session).
func failSession(w http.ResponseWriter, r *http.Request, id any, err error) {
	switch agentgate.ErrorCode(err) {
	case agentgate.EINVALID, agentgate.ENOTFOUND, agentgate.ECONFLICT, agentgate.ETOOLARGE:
		web.WriteRPCFailure(w, r, id, err)
	default:
		writeStoreError(w, r, id, err)
	}
}

// Bounds on what a session record keeps, so that it stays a table item
// (the store takes 350 KiB of data, DynamoDB 400 KB an item): at most
// maxWaiting consents waiting for an answer, and at most maxRecordBytes
// encoded, counting maxSettlementBytes of room for each waiting consent's
// answer, so that an answer always fits. The rest of the record is capped
// where the client sends it (mcphttp: clientInfo, capabilities, _meta,
// about 80 KiB together); a dispatch_task's instruction is at most 32 KiB
// (dispatch.MaxTextBytes), so that several such calls wait at once.
const (
	maxWaiting         = 16
	maxRecordBytes     = 300 << 10
	maxSettlementBytes = 4 << 10
)

// maxWriteAttempts bounds the compare-and-set attempts of one write of the
// record (modify). A conflict means another request of the session wrote
// it: each attempt that loses lets one other win, so this is more than the
// writers a session has at once (its waiting consents' calls and answers).
const maxWriteAttempts = 2*maxWaiting + 4

// save slides the session's TTL: on a write at most every quarter TTL, so
// that most requests cost one read, no write, and in one attempt, for a
// conflict means that a concurrent request wrote, and slid, it already.
func (h *Handler) save(ctx context.Context, sid string, rec sessionRecord, version int64) error {
	if h.Now().Sub(rec.LastSeen) < h.TTL/4 {
		return nil
	}
	err := h.write(ctx, sid, rec, version)
	if errors.Is(err, store.ErrConflict) {
		return nil
	}
	return err
}

// modify changes the session record by compare-and-set, starting from rec
// at version (lookup's): change edits the record and says whether there is
// anything to write. If another request of the session wrote the record
// meanwhile, modify reads it again and applies change to that, up to
// maxWriteAttempts times; change's error ends it, unwritten. So no write
// of one request undoes another's, and only contention costs calls beyond
// the one write.
func (h *Handler) modify(ctx context.Context, sid string, rec sessionRecord, version int64, change func(*sessionRecord) (bool, error)) error {
	for attempt := 1; ; attempt++ {
		rec.Consents = maps.Clone(rec.Consents) // change may edit it; the caller's stays as read
		if ok, err := change(&rec); !ok || err != nil {
			return err
		}
		err := h.write(ctx, sid, rec, version)
		if !errors.Is(err, store.ErrConflict) {
			return err
		}
		if attempt == maxWriteAttempts {
			return agentgate.Wrap(agentgate.EUNAVAILABLE, err, "this session's record is being written by too many requests at once; retry shortly")
		}
		if rec, version, err = h.lookup(ctx, sid); err != nil {
			return err
		}
	}
}

// write stores the record at version with a fresh TTL, without the
// consents that have expired (a write to make anyway is when they go;
// none is made for them). It refuses a record over maxRecordBytes
// (ETOOLARGE), counting room for the waiting consents' answers.
func (h *Handler) write(ctx context.Context, sid string, rec sessionRecord, version int64) error {
	now := h.Now().UTC()
	rec.LastSeen = now
	rec.Consents = maps.Clone(rec.Consents)
	maps.DeleteFunc(rec.Consents, func(_ string, c consent) bool { return !now.Before(c.Expires) })
	data, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	if size := len(data) + rec.waiting(now)*maxSettlementBytes; size > maxRecordBytes {
		return agentgate.Errorf(agentgate.ETOOLARGE, "this session would keep %d bytes, over the limit of %d: the calls waiting for consent are kept with it until answered, with room for their answers; answer the consents it waits for first, or send a smaller call", size, maxRecordBytes)
	}
	_, err = h.Store.Update(ctx, store.Item{Key: store.SessionKey(sid), Kind: "mcp-session", Data: data, Version: version, ExpiresAt: now.Add(h.TTL)})
	return err
}
