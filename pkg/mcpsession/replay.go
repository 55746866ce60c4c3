package mcpsession

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/agentgate/agentgate/pkg/agentgate"
	"github.com/agentgate/agentgate/pkg/web"
)

// Replay is agentgate's own, not go-sdk's EventStore. The SDK reads an
// EventStore only inside its StreamableHTTPHandler, for a session that
// handler holds in this process's memory: a GET on any other instance is a
// 404, "session not found", before any store is asked. Its replay sends
// what After yields and ends, or answers 400 in plain text; this one waits
// for a result not stored yet, sends keep-alives with new ids, expires an
// unanswered consent, and answers in JSON-RPC with the statuses below. The
// SDK's event ids are <stream>_<n> with exactly one '_' (ours are base64url,
// with '_' inside, and keep-alives add .k<n>), it stores an empty priming
// event first and then exactly what it sends, where here nothing sent is
// stored: the session record keeps the pending call behind event 0 and the
// answer that settles it, set only where none is (a compare-and-set that
// EventStore has no way to make), and the GET runs the call it settles.

// retryAfter is the reconnection delay the SSE streams suggest. The answer
// POST keeps the answer before it returns, so a client that comes back
// this soon usually finds it; one that comes back earlier waits in get's
// poll. It sets the latency of a legacy consented dispatch.
const retryAfter = 100 * time.Millisecond

// resumeWait bounds how long a resuming GET waits for a result before it
// ends with a keep-alive event, and resumePoll how often it looks.
const (
	resumeWait = 2 * time.Second
	resumePoll = 100 * time.Millisecond
)

// get resumes a stream after Last-Event-ID: once the pending call is
// settled (answered, or expired) it sends the call's result (finish), and
// otherwise, after a short wait, a keep-alive event with
// a new id, so that the client comes back (the official clients give up
// after a few resumptions without a new event id, and drop their whole
// connection on any error status here). A table failure is a keep-alive
// too, for a while. Neither waits forever: after maxKeepAlives, an
// unanswered consent is closed as refused, and a table still failing is
// a 503. An id of a stream the session does not have (never had, or has
// expired) is the client's mistake, and nothing will ever arrive on it:
// 400 at once, as the go-sdk answers a stream it cannot replay (404 would
// tell the client that its session is gone).
func (h *Handler) get(w http.ResponseWriter, r *http.Request) {
	last := r.Header.Get("Last-Event-ID")
	if last == "" {
		// No server-initiated stream: agentgate sends nothing unasked.
		// Both official clients open one after initialize and take 405
		// as "no such stream".
		w.Header().Set("Allow", "POST, DELETE")
		web.WriteRPCError(w, http.StatusMethodNotAllowed, nil, jsonrpc.CodeInvalidRequest, "GET without Last-Event-ID: this server opens no standalone stream")
		return
	}
	stream, seq, keep, ok := parseEventID(last)
	if !ok {
		web.WriteRPCError(w, http.StatusBadRequest, nil, jsonrpc.CodeInvalidRequest, "Last-Event-ID is not an event id of this server")
		return
	}
	ctx := r.Context()
	sid := r.Header.Get(headerSession)
	keepAlive := func(err error) {
		if err != nil && keep >= maxKeepAlives {
			writeStoreError(w, r, nil, err)
			return
		}
		startSSE(w)
		writeEvent(w, eventID(stream, seq, keep+1), retryAfter, nil)
	}
	sess, version, err := h.lookup(ctx, sid)
	deadline := h.Now().Add(resumeWait)
	for {
		if agentgate.ErrorCode(err) == agentgate.EUNAVAILABLE {
			keepAlive(err)
			return
		} else if err != nil {
			failSession(w, r, nil, err)
			return
		}
		c, ok := sess.consentOf(stream, h.Now())
		switch {
		case !ok:
			web.WriteRPCError(w, http.StatusBadRequest, nil, jsonrpc.CodeInvalidRequest,
				"Last-Event-ID names no stream of this session: it is unknown or has expired; call the tool again")
			return
		case seq > 0:
			// Event 1, the call's result, is the stream's last: nothing
			// follows it. A client that resumes after it anyway is kept
			// waiting for a while, as for a result, and then told.
			if keep < 2*maxKeepAlives {
				if agentgate.Sleep(ctx, resumeWait) {
					keepAlive(nil)
				}
				return
			}
			web.WriteRPCFailure(w, r, nil, agentgate.Errorf(agentgate.EUNAVAILABLE,
				"this stream's result was sent already; look it up with get_execution_result"))
			return
		case c.Settlement != nil:
			h.finish(w, r, sid, sess, stream, c)
			return
		case h.Now().Before(deadline):
			if !agentgate.Sleep(ctx, resumePoll) {
				return
			}
			sess, version, err = h.lookup(ctx, sid)
			continue
		case keep+1 < maxKeepAlives:
			keepAlive(nil)
			return
		}
		// Unanswered for about a minute: the consent expires, unless an
		// answer has just settled the call, which the write finds.
		var settled consent
		err = h.modify(ctx, sid, sess, version, func(rec *sessionRecord) (bool, error) {
			c, ok := rec.consentOf(stream, h.Now())
			if !ok || c.Settlement != nil {
				settled = c
				return false, nil
			}
			c.Settlement = &settlement{Unanswered: true}
			rec.Consents[stream] = c
			settled = c
			return true, nil
		})
		if err == nil && settled.Settlement != nil {
			h.finish(w, r, sid, sess, stream, settled)
			return
		} else if err == nil {
			// Gone meanwhile: the next turn says so.
			sess, version, err = h.lookup(ctx, sid)
		}
	}
}

// finish ends the stream with its result, event 1: the pending call
// settled as its settlement says (settle). Once a GET acts on an answer,
// the client going away does not cut the call short: the request's
// deadline still bounds it.
func (h *Handler) finish(w http.ResponseWriter, r *http.Request, sid string, sess sessionRecord, stream string, c consent) {
	ctx := context.WithoutCancel(r.Context())
	if deadline, ok := r.Context().Deadline(); ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, deadline)
		defer cancel()
	}
	event, err := h.settle(ctx, r, sid, sess, c.pendingCall, *c.Settlement)
	if err != nil {
		web.WriteRPCFailure(w, r, nil, err)
		return
	}
	startSSE(w)
	writeEvent(w, eventID(stream, 1, 0), 0, event)
}

// maxKeepAlives bounds how many times a resuming GET ends without the
// result: about a minute of waiting for an answer.
const maxKeepAlives = 25

// Event ids are <stream>_<seq>, and for keep-alives <stream>_<seq>.k<n>
// (still after seq, but new, so that clients count them as progress).
func eventID(stream string, seq, keep int) string {
	id := stream + "_" + strconv.Itoa(seq)
	if keep > 0 {
		id += ".k" + strconv.Itoa(keep)
	}
	return id
}

func parseEventID(id string) (stream string, seq, keep int, ok bool) {
	i := strings.LastIndexByte(id, '_') // stream ids are base64url, which has '_' too
	if i <= 0 || !isStreamID(id[:i]) {
		return "", 0, 0, false
	}
	stream, rest := id[:i], id[i+1:]
	n, k, hasKeep := strings.Cut(rest, ".k")
	seq, err := strconv.Atoi(n)
	if err != nil || seq < 0 || seq > 1 {
		return "", 0, 0, false
	}
	if hasKeep {
		if keep, err = strconv.Atoi(k); err != nil || keep < 0 {
			return "", 0, 0, false
		}
	}
	return stream, seq, keep, true
}

// maxStreamIDLen bounds a stream id a client names; agentgate's are 22
// characters (NewID).
const maxStreamIDLen = 64

// isStreamID reports whether s could be a stream id of this server:
// base64url, not too long. Anything else names no stream, and never
// reaches the table.
func isStreamID(s string) bool {
	return s != "" && len(s) <= maxStreamIDLen && !strings.ContainsFunc(s, func(c rune) bool {
		return !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_')
	})
}
