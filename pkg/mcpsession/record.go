package mcpsession

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
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

// load is lookup answering its failures (failLookup).
func (h *Handler) load(w http.ResponseWriter, r *http.Request, sid string) (sessionRecord, int64, bool) {
	rec, version, err := h.lookup(r.Context(), sid)
	if err != nil {
		failLookup(w, r, err)
		return sessionRecord{}, 0, false
	}
	return rec, version, true
}

// failLookup answers a lookup's error: 400 for a missing or malformed
// session id, 404 for no session, 503 for a store failure (never 404, which
// would end the client's session).
func failLookup(w http.ResponseWriter, r *http.Request, err error) {
	switch agentgate.ErrorCode(err) {
	case agentgate.EINVALID, agentgate.ENOTFOUND:
		web.WriteRPCFailure(w, r, nil, err)
	default:
		writeStoreError(w, r, nil, err)
	}
}

// save stores the session with a fresh TTL. The TTL slides on a write at
// most every quarter TTL, so that most requests cost one read, no write.
func (h *Handler) save(ctx context.Context, sid string, rec sessionRecord, version int64, force bool) error {
	now := h.Now().UTC()
	if !force && now.Sub(rec.LastSeen) < h.TTL/4 {
		return nil
	}
	rec.LastSeen = now
	data, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	_, err = h.Store.Update(ctx, store.Item{Key: store.SessionKey(sid), Kind: "mcp-session", Data: data, Version: version, ExpiresAt: now.Add(h.TTL)})
	if errors.Is(err, store.ErrConflict) && !force {
		return nil // a concurrent request slid it already
	}
	return err
}
