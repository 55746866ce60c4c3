package mcpsession

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentgate/agentgate/pkg/dispatch"
	"github.com/agentgate/agentgate/pkg/mcphttp"
	"github.com/agentgate/agentgate/pkg/store"
	"github.com/agentgate/agentgate/pkg/store/storetest"
)

var refusal = &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "Not dispatched: nothing was dispatched"}}}

// instances are two Handlers on one table, on clock: two Lambda instances
// that serve one session.
func instances(st store.Store, tool *askTool, clock func() time.Time) (*Handler, *Handler) {
	h := func() *Handler {
		return &Handler{Store: st, TTL: time.Hour, Now: clock, Unanswered: refusal, Server: tool.server}
	}
	return h(), h()
}

// TestUnansweredConsentExpires: a stream whose consent is never answered
// ends, after maxKeepAlives resumptions, with a not-dispatched result; and
// an answer that arrives after that runs nothing.
func TestUnansweredConsentExpires(t *testing.T) {
	// One clock for the session layer and the store: the stored events'
	// expiry is stamped by the one and judged by the other.
	clock := &steppingClock{now: storetest.Epoch}
	st := openStore(t, clock.Now)
	tool := &askTool{}
	h, _ := instances(st, tool, clock.Now)
	sid := startSession(t, h)
	stream, rec := callAsk(h, sid, 7, `{}`)
	if stream == "" {
		t.Fatalf("tools/call: %d %q, want the elicitation", rec.Code, rec.Body)
	}
	// Before the limit: a keep-alive with a new id.
	if body := serve(h, sid, "", stream+"_0.k3").Body.String(); !strings.HasPrefix(body, "id: "+stream+"_0.k4\nretry: ") {
		t.Fatalf("keep-alive %q", body)
	}
	// At the limit: the call ends, not dispatched.
	body := serve(h, sid, "", eventID(stream, 0, maxKeepAlives-1)).Body.String()
	if !strings.HasPrefix(body, "id: "+stream+"_1\n") || !strings.Contains(body, `"id":7`) || !strings.Contains(body, `"isError":true`) ||
		!strings.Contains(body, "nothing was dispatched") {
		t.Fatalf("final event %q", body)
	}
	// The refusal is the stream's event 1 for every later resumption.
	if again := serve(h, sid, "", stream+"_0").Body.String(); again != body {
		t.Errorf("resuming again: %q, want the same final event", again)
	}
	// A late answer is taken and ignored: the call is settled as unanswered.
	if rec := serve(h, sid, answerBody(stream, true), ""); rec.Code != http.StatusAccepted {
		t.Errorf("late answer: %d %s", rec.Code, rec.Body)
	}
	if again := serve(h, sid, "", stream+"_0").Body.String(); again != body || tool.runs.Load() != 0 {
		t.Errorf("after a late answer: %q, %d runs; want the refusal again, nothing run", again, tool.runs.Load())
	}
}

// TestAnswerSettlesOnce: the first answer to a pending call is its
// settlement; a second answer is accepted and changes nothing, and costs
// no write; an answer to a stream the session does not have is a client
// error.
func TestAnswerSettlesOnce(t *testing.T) {
	clock := func() time.Time { return storetest.Epoch }
	st := storetest.Count(openStore(t, clock))
	h, _ := instances(st, &askTool{}, clock)
	sid := startSession(t, h)
	stream, rec := callAsk(h, sid, 7, `{}`)
	if stream == "" {
		t.Fatalf("tools/call: %d %q", rec.Code, rec.Body)
	}
	if rec := serve(h, sid, answerBody(stream, true), ""); rec.Code != http.StatusAccepted {
		t.Fatalf("first answer: %d %s", rec.Code, rec.Body)
	}
	writes := st.Writes()
	if rec := serve(h, sid, answerBody(stream, false), ""); rec.Code != http.StatusAccepted || st.Writes() != writes {
		t.Errorf("second answer: %d, %d writes; want 202 and none", rec.Code, st.Writes()-writes)
	}
	sess, _ := stored(t, st, sid)
	if set := sess.Consents[stream].Settlement; set == nil || !set.Answered || !strings.Contains(string(set.Result), `"approve":true`) {
		t.Errorf("settlement %+v, want the first answer's", set)
	}
	rec = serve(h, sid, answerBody("other", true), "")
	if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), errNoStream) || st.Writes() != writes {
		t.Errorf("answer to an unknown stream: %d %s, want 400 and no write", rec.Code, rec.Body)
	}
}

// TestOldLayoutStreamFailsClosed: a stream a release before this one kept
// as event items, not in the session record, is no stream: its answer and
// its GET are refused as for an expired stream, so the client asks again,
// and nothing runs.
func TestOldLayoutStreamFailsClosed(t *testing.T) {
	clock := func() time.Time { return storetest.Epoch }
	st := openStore(t, clock)
	tool := &askTool{}
	h, _ := instances(st, tool, clock)
	sid := startSession(t, h)
	pending := `{"callId":7,"params":{"name":"ask"},"requestState":"state"}`
	answer := `{"answered":true,"result":{"action":"accept","content":{"approve":true}}}`
	for seq, data := range []string{pending, answer} {
		key := store.Key{PK: store.SessionKey(sid).PK, SK: "EVENT#old#0000000" + string(rune('0'+seq))}
		if _, err := st.Create(t.Context(), store.Item{Key: key, Data: []byte(data)}); err != nil {
			t.Fatal(err)
		}
	}
	if rec := serve(h, sid, answerBody("old", true), ""); rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), errNoStream) {
		t.Errorf("answer: %d %s, want 400 %q", rec.Code, rec.Body, errNoStream)
	}
	if rec := serve(h, sid, "", "old_0"); rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), "call the tool again") {
		t.Errorf("GET: %d %s, want 400", rec.Code, rec.Body)
	}
	if n := tool.runs.Load(); n != 0 {
		t.Errorf("%d runs, want none", n)
	}
}

// waitingConsent is a session with one consent waiting for its answer
// (the call's id 7), served by two instances on one table on clock, whose
// writes the test may hook.
func waitingConsent(t *testing.T, clock func() time.Time) (*updateHook, *askTool, *Handler, *Handler, string, string) {
	t.Helper()
	hook := &updateHook{Store: openStore(t, clock)}
	tool := &askTool{}
	h1, h2 := instances(hook, tool, clock)
	sid := startSession(t, h1)
	stream, rec := callAsk(h1, sid, 7, `{}`)
	if stream == "" {
		t.Fatalf("tools/call: %d %q, want the elicitation", rec.Code, rec.Body)
	}
	return hook, tool, h1, h2, sid, stream
}

// TestAnswersRaceFromTwoInstances: two answers to one consent, each on its
// own instance, both read the session before either writes: exactly one
// settles it, the other gets 202 and changes nothing, and the resuming GET
// runs the call with the one that counted.
func TestAnswersRaceFromTwoInstances(t *testing.T) {
	hook, tool, h1, h2, sid, stream := waitingConsent(t, func() time.Time { return storetest.Epoch })
	_, before := stored(t, hook, sid)
	hook.before = barrier(2)
	codes := make([]int, 2)
	var wg sync.WaitGroup
	for i, h := range []*Handler{h1, h2} {
		wg.Go(func() { codes[i] = serve(h, sid, answerBody(stream, i == 0), "").Code })
	}
	wg.Wait()
	hook.before = nil
	if codes[0] != http.StatusAccepted || codes[1] != http.StatusAccepted {
		t.Errorf("answers: %v, want 202 both", codes)
	}
	sess, after := stored(t, hook, sid)
	set := sess.Consents[stream].Settlement
	if after != before+1 || set == nil || !set.Answered {
		t.Fatalf("after the race: version %d (was %d), settlement %+v; want one write, one answer", after, before, set)
	}
	var won struct{ Content struct{ Approve bool } }
	if err := json.Unmarshal(set.Result, &won); err != nil {
		t.Fatal(err)
	}
	body := serve(h2, sid, "", stream+"_0").Body.String()
	if want := map[bool]string{true: "approve=true", false: "approve=false"}[won.Content.Approve]; !strings.Contains(body, want) || tool.runs.Load() != 1 {
		t.Errorf("resumed: %q after %d runs, want one run with %s, the answer that counted", body, tool.runs.Load(), want)
	}
}

// TestAnswerRacesTheExpiry: an answer and the unanswered expiry of one
// consent, each on its own instance, race; whichever writes first settles
// the call, and the other changes nothing.
func TestAnswerRacesTheExpiry(t *testing.T) {
	last := eventID("", 0, maxKeepAlives-1) // the resumption that expires the consent
	t.Run("expiry first", func(t *testing.T) {
		hook, tool, h1, h2, sid, stream := waitingConsent(t, (&steppingClock{now: storetest.Epoch}).Now)
		var expired string
		// The answer has read the session when the GET expires the consent.
		hook.before = once(func() { expired = serve(h2, sid, "", stream+last).Body.String() })
		rec := serve(h1, sid, answerBody(stream, true), "")
		sess, _ := stored(t, hook, sid)
		if set := sess.Consents[stream].Settlement; rec.Code != http.StatusAccepted || set == nil || !set.Unanswered {
			t.Errorf("answer after the expiry: %d, settlement %+v; want 202 and still unanswered", rec.Code, set)
		}
		if !strings.Contains(expired, "nothing was dispatched") || tool.runs.Load() != 0 {
			t.Errorf("the expiring GET: %q after %d runs, want the refusal and nothing run", expired, tool.runs.Load())
		}
	})
	t.Run("answer first", func(t *testing.T) {
		hook, tool, h1, h2, sid, stream := waitingConsent(t, (&steppingClock{now: storetest.Epoch}).Now)
		var answered int
		// The GET has read the session, unanswered, when the answer comes.
		hook.before = once(func() { answered = serve(h1, sid, answerBody(stream, true), "").Code })
		body := serve(h2, sid, "", stream+last).Body.String()
		if answered != http.StatusAccepted || !strings.HasPrefix(body, "id: "+stream+"_1\n") || !strings.Contains(body, "approve=true") || tool.runs.Load() != 1 {
			t.Errorf("answer %d; the expiring GET: %q after %d runs; want the call run once with the answer", answered, body, tool.runs.Load())
		}
		sess, _ := stored(t, hook, sid)
		if set := sess.Consents[stream].Settlement; set == nil || !set.Answered {
			t.Errorf("settlement %+v, want the answer", set)
		}
	})
}

// TestConcurrentConsentsAllKept: 8 tools/calls of one session, on two
// instances, each asking for consent, all read the session before any
// writes it: every one of them is kept, each with its call.
func TestConcurrentConsentsAllKept(t *testing.T) {
	clock := func() time.Time { return storetest.Epoch }
	hook := &updateHook{Store: openStore(t, clock)}
	h1, h2 := instances(hook, &askTool{}, clock)
	sid := startSession(t, h1)
	_, before := stored(t, hook, sid)
	const n = 8
	hook.before = barrier(n)
	streams := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		h := []*Handler{h1, h2}[i%2]
		wg.Go(func() {
			var rec *httptest.ResponseRecorder
			if streams[i], rec = callAsk(h, sid, 100+i, `{}`); streams[i] == "" {
				t.Errorf("call %d: %d %s", i, rec.Code, rec.Body)
			}
		})
	}
	wg.Wait()
	sess, after := stored(t, hook, sid)
	if len(sess.Consents) != n || after != before+n {
		t.Errorf("%d consents kept in %d writes, want %d in %d", len(sess.Consents), after-before, n, n)
	}
	for i, stream := range streams {
		if c, ok := sess.Consents[stream]; !ok || string(c.CallID) != strconv.Itoa(100+i) {
			t.Errorf("call %d: consent %+v", i, c)
		}
	}
}

// TestConsentCaps: a session keeps at most maxWaiting consents waiting for
// an answer, and a record of at most maxRecordBytes: a call beyond either
// is refused, saying what to do, and nothing is kept; the largest call
// the dispatch caps allow, in a session at the envelope caps, is kept; an
// answer beyond its cap is refused and settles nothing.
func TestConsentCaps(t *testing.T) {
	clock := func() time.Time { return storetest.Epoch }
	st := openStore(t, clock)
	h, _ := instances(st, &askTool{}, clock)
	sid := startSession(t, h)
	var streams []string
	for i := range maxWaiting {
		stream, rec := callAsk(h, sid, i, `{}`)
		if stream == "" {
			t.Fatalf("call %d: %d %s", i, rec.Code, rec.Body)
		}
		streams = append(streams, stream)
	}
	_, version := stored(t, st, sid)
	stream, rec := callAsk(h, sid, 99, `{}`)
	if _, after := stored(t, st, sid); stream != "" || rec.Code != http.StatusConflict || after != version ||
		!strings.Contains(rec.Body.String(), `"id":99`) || !strings.Contains(rec.Body.String(), "waits for the answers to 16 consents already") {
		t.Errorf("call beyond %d waiting: %d %s (version %d, was %d); want 409 and nothing kept", maxWaiting, rec.Code, rec.Body, after, version)
	}
	// A settled consent waits no more: there is room for another.
	if rec := serve(h, sid, answerBody(streams[0], false), ""); rec.Code != http.StatusAccepted {
		t.Fatalf("answer: %d %s", rec.Code, rec.Body)
	}
	if stream, rec := callAsk(h, sid, 100, `{}`); stream == "" {
		t.Errorf("call after an answer: %d %s", rec.Code, rec.Body)
	}

	big := `{"text":"` + strings.Repeat("x", maxRecordBytes) + `"}`
	sid = startSession(t, h)
	_, version = stored(t, st, sid)
	stream, rec = callAsk(h, sid, 1, big)
	if sess, after := stored(t, st, sid); stream != "" || rec.Code != http.StatusRequestEntityTooLarge || after != version || len(sess.Consents) != 0 ||
		!strings.Contains(rec.Body.String(), "send a smaller call") {
		t.Errorf("a call too large to keep: %d %.300s (version %d, was %d); want 413 and nothing kept", rec.Code, rec.Body, after, version)
	}

	// The largest dispatch_task instruction, with a _meta at its cap, in a
	// session whose initialize brought everything at its cap, fits.
	fill := func(n int) string { return strings.Repeat("x", n-100) }
	init := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25",` +
		`"capabilities":{"elicitation":{},"experimental":{"x":{"x":"` + fill(mcphttp.MaxCapabilitiesBytes) + `"}}},` +
		`"clientInfo":{"name":"` + fill(mcphttp.MaxClientInfoBytes) + `","version":"1"},"_meta":{"x":"` + fill(mcphttp.MaxMetaBytes) + `"}}}`
	rec = serve(h, "", init, "")
	if sid = rec.Header().Get(headerSession); sid == "" {
		t.Fatalf("initialize at the caps: %d %.300s", rec.Code, rec.Body)
	}
	rec = serve(h, sid, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ask","_meta":{"x":"`+fill(mcphttp.MaxMetaBytes)+
		`"},"arguments":{"instruction":"`+strings.Repeat("x", dispatch.MaxTextBytes)+`"}}}`, "")
	if m := streamOf.FindStringSubmatch(rec.Body.String()); m != nil {
		stream = m[1]
	} else {
		t.Errorf("the largest dispatch: %d %.300s, want it kept", rec.Code, rec.Body)
	}
	// An answer is a yes or a no, not a payload.
	huge := `{"jsonrpc":"2.0","id":"agentgate-consent-` + stream + `","result":{"action":"accept","content":{"approve":true,"x":"` + fill(2*maxSettlementBytes) + `"}}}`
	if rec := serve(h, sid, huge, ""); rec.Code != http.StatusRequestEntityTooLarge || !strings.Contains(rec.Body.String(), "a consent's answer is a yes or a no") {
		t.Errorf("an answer too large: %d %.300s, want 413", rec.Code, rec.Body)
	}
	if sess, _ := stored(t, st, sid); sess.Consents[stream].Settlement != nil {
		t.Errorf("an answer too large settled the consent: %+v", sess.Consents[stream].Settlement)
	}
}

// TestExpiredConsentIsPruned: a consent a TTL after it was asked is gone
// for its answer and its GET at once, without a write; the record drops
// it at its next write for another reason.
func TestExpiredConsentIsPruned(t *testing.T) {
	clock := storetest.NewClock()
	st := storetest.Count(openStore(t, clock.Now))
	h, _ := instances(st, &askTool{}, clock.Now)
	sid := startSession(t, h)
	old, _ := callAsk(h, sid, 1, `{}`)
	clock.Advance(50 * time.Minute)
	young, _ := callAsk(h, sid, 2, `{}`) // slides the session's TTL
	if old == "" || young == "" {
		t.Fatal("the calls asked for no consent")
	}
	clock.Advance(11 * time.Minute) // the first consent was asked 61 minutes ago
	writes := st.Writes()
	if rec := serve(h, sid, answerBody(old, true), ""); rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), errNoStream) {
		t.Errorf("answer to an expired consent: %d %s, want 400", rec.Code, rec.Body)
	}
	if rec := serve(h, sid, "", old+"_0"); rec.Code != http.StatusBadRequest {
		t.Errorf("GET of an expired consent: %d %s, want 400", rec.Code, rec.Body)
	}
	if sess, _ := stored(t, st, sid); st.Writes() != writes || len(sess.Consents) != 2 {
		t.Errorf("%d writes, %d consents kept; want none written just to prune", st.Writes()-writes, len(sess.Consents))
	}
	if rec := serve(h, sid, answerBody(young, true), ""); rec.Code != http.StatusAccepted {
		t.Fatalf("answer: %d %s", rec.Code, rec.Body)
	}
	if sess, _ := stored(t, st, sid); len(sess.Consents) != 1 || sess.Consents[young].Settlement == nil {
		t.Errorf("after a write: consents %v, want the answered one only", sess.Consents)
	}
}

// TestGETAfterSettlementReplays: every GET that resumes a settled stream,
// the first or a later one, on any instance, ends it with the call run
// with the same answer (the tool's own record makes the run count once).
func TestGETAfterSettlementReplays(t *testing.T) {
	clock := func() time.Time { return storetest.Epoch }
	st := openStore(t, clock)
	tool := &askTool{}
	h1, h2 := instances(st, tool, clock)
	sid := startSession(t, h1)
	stream, _ := callAsk(h1, sid, 7, `{}`)
	if rec := serve(h1, sid, answerBody(stream, true), ""); rec.Code != http.StatusAccepted {
		t.Fatalf("answer: %d %s", rec.Code, rec.Body)
	}
	first := serve(h1, sid, "", stream+"_0").Body.String()
	if !strings.HasPrefix(first, "id: "+stream+"_1\n") || !strings.Contains(first, `"id":7`) || !strings.Contains(first, "approve=true") {
		t.Fatalf("first GET: %q", first)
	}
	for _, last := range []string{stream + "_0", stream + "_0.k3"} {
		if again := serve(h2, sid, "", last).Body.String(); again != first {
			t.Errorf("GET after %s: %q, want %q", last, again, first)
		}
	}
	if n := tool.runs.Load(); n != 3 {
		t.Errorf("%d runs, want one a GET", n)
	}
}
