package mcpserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentgate/agentgate/pkg/agentgate"
	"github.com/agentgate/agentgate/pkg/app/apptest"
	"github.com/agentgate/agentgate/pkg/mcphttp"
	"github.com/agentgate/agentgate/pkg/mcpserver"
	"github.com/agentgate/agentgate/pkg/store"
	"github.com/agentgate/agentgate/pkg/web"
)

// These tests send what no SDK client would, over raw HTTP, to both
// protocol generations, and check that every refusal has the right status,
// the right JSON-RPC code, the id that was sent (or none), and a message in
// agentgate's words.

// wire is a raw HTTP client of one stack's MCP endpoint.
type wire struct {
	t        *testing.T
	url, key string
}

func newWire(t *testing.T, s *apptest.Stack) wire {
	return wire{t: t, url: s.Serve() + mcpserver.Endpoint, key: s.Key("alice", agentgate.ScopeUser)}
}

// reply is an HTTP answer, and its JSON-RPC error if it is one.
type reply struct {
	status int
	header http.Header
	body   string
	id     json.RawMessage
	code   int64
	msg    string
}

// do sends req with alice's key and reads the answer.
func (c wire) do(req *http.Request) reply {
	c.t.Helper()
	req.Header.Set("Authorization", "Bearer "+c.key)
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	r := reply{status: resp.StatusCode, header: resp.Header, body: string(body)}
	var answer struct {
		ID    json.RawMessage `json:"id"`
		Error *struct {
			Code    int64  `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &answer) == nil && answer.Error != nil {
		r.id, r.code, r.msg = answer.ID, answer.Error.Code, answer.Error.Message
	}
	return r
}

// post sends body as generation version speaks (at 2026-07-28 with the
// version header; on a legacy session with its id), with extra headers in
// pairs.
func (c wire) post(version, sid string, body io.Reader, headers ...string) reply {
	c.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, c.url, body)
	req.Header.Set("Content-Type", "application/json")
	if version == mcpserver.Version20260728 {
		req.Header.Set("Mcp-Protocol-Version", version)
	} else if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
		req.Header.Set("Mcp-Protocol-Version", version)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		if headers[i+1] == "" {
			req.Header.Del(headers[i])
		} else {
			req.Header.Set(headers[i], headers[i+1])
		}
	}
	return c.do(req)
}

// meta2026 is the _meta a 2026-07-28 request carries.
const meta2026 = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"wire","version":"1"}}`

// call sends a request with id, method and params (an object's members,
// without braces), and the headers a 2026-07-28 request needs; name is the
// tool's, for tools/call.
func (c wire) call(version, sid, id, method, params, name string, headers ...string) reply {
	c.t.Helper()
	if version == mcpserver.Version20260728 {
		headers = append([]string{"Mcp-Method", method, "Mcp-Name", name}, headers...)
		params = strings.TrimPrefix(params+","+meta2026, ",")
	}
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":%q,"params":{%s}}`, id, method, params)
	return c.post(version, sid, strings.NewReader(body), headers...)
}

const initParams = `"protocolVersion":"2025-11-25","clientInfo":{"name":"wire","version":"1"},"capabilities":{"elicitation":{}}`

// session starts a legacy session and returns its id ("" at 2026-07-28,
// which has none).
func (c wire) session(version string) string {
	c.t.Helper()
	if version == mcpserver.Version20260728 {
		return ""
	}
	r := c.call(version, "", "1", "initialize", initParams, "")
	sid := r.header.Get("Mcp-Session-Id")
	if r.status != 200 || sid == "" {
		c.t.Fatalf("initialize: %d %s", r.status, r.body)
	}
	if r := c.post(version, sid, strings.NewReader(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)); r.status != 202 {
		c.t.Fatalf("initialized: %d %s", r.status, r.body)
	}
	return sid
}

// goInternals are the marks of Go's own words in a message.
var goInternals = []string{"Go struct", "Go value", "unmarshal", "mcp.", "jsonrpc2", "float64", "interface {}", "store:", "wireDecode"}

// noGoInternals fails t if message shows any of goInternals.
func noGoInternals(t *testing.T, where, message string) {
	t.Helper()
	if i := slices.IndexFunc(goInternals, func(m string) bool { return strings.Contains(message, m) }); i >= 0 {
		t.Errorf("%s: %q shows Go internals (%q)", where, message, goInternals[i])
	}
}

// refused checks a JSON-RPC refusal: status, code, the id it names, and a
// message that says want, in agentgate's words.
func (r reply) refused(t *testing.T, status int, code int64, id, want string) {
	t.Helper()
	if r.status != status || r.code != code || !strings.Contains(r.msg, want) {
		t.Errorf("got %d %d %q, want %d %d saying %q (body %.300s)", r.status, r.code, r.msg, status, code, want, r.body)
	}
	if got := strings.TrimSpace(string(r.id)); got != id {
		t.Errorf("answered with id %s, want %s", got, id)
	}
	noGoInternals(t, "refusal", r.msg)
}

// TestChunkedOversizeIs413: a body over 1 MiB without Content-Length is
// the same 413, with the same JSON-RPC error, as with it, in both
// generations (it was a 500 on the legacy path).
func TestChunkedOversizeIs413(t *testing.T) {
	c := newWire(t, apptest.New(t, "embedded", nil))
	for _, version := range generations {
		t.Run(version, func(t *testing.T) {
			sid := c.session(version)
			big := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":"` + strings.Repeat("c", 1<<20) + `"}}`
			// A reader of unknown length: the client sends it chunked.
			r := c.post(version, sid, io.MultiReader(strings.NewReader(big)))
			r.refused(t, http.StatusRequestEntityTooLarge, web.RPCInvalidRequest, "null", fmt.Sprintf("over the %d-byte limit", web.DefaultMaxBody))
			// With its Content-Length, the chain refuses it before reading:
			// the same JSON-RPC answer.
			r = c.post(version, sid, strings.NewReader(big))
			r.refused(t, http.StatusRequestEntityTooLarge, web.RPCInvalidRequest, "null", fmt.Sprintf("over the %d-byte limit", web.DefaultMaxBody))
		})
	}
}

// TestWhatASessionKeepsIsCapped: initialize with 900 KB of capabilities,
// or logging/setLevel with a 360 KB level, was a 503 blaming the store
// (which refused the item); they are 400s that say the limit, before
// anything is stored. A level is one of the spec's eight.
func TestWhatASessionKeepsIsCapped(t *testing.T) {
	c := newWire(t, apptest.New(t, "embedded", nil))
	v := mcpserver.Version20251125
	huge := strings.Repeat("x", 900<<10)
	for name, tc := range map[string]struct{ params, want string }{
		// Under experimental, which a session keeps (unknown members it drops).
		"capabilities": {`"protocolVersion":"2025-11-25","clientInfo":{"name":"wire","version":"1"},"capabilities":{"experimental":{"x":{"y":"` + huge + `"}}}`,
			fmt.Sprintf("over the limit of %d", mcphttp.MaxCapabilitiesBytes)},
		"client info": {`"protocolVersion":"2025-11-25","clientInfo":{"name":"` + huge[:20<<10] + `","version":"1"},"capabilities":{}`,
			fmt.Sprintf("params.clientInfo is %d bytes, over the limit of %d", 20<<10+len(`{"name":"","version":"1"}`), mcphttp.MaxClientInfoBytes)},
		"_meta": {`"protocolVersion":"2025-11-25","clientInfo":{"name":"wire","version":"1"},"capabilities":{},"_meta":{"x":"` + huge[:100<<10] + `"}`,
			fmt.Sprintf("params._meta is %d bytes, over the limit of %d", 100<<10+len(`{"x":""}`), mcphttp.MaxMetaBytes)},
	} {
		t.Run("initialize with oversized "+name, func(t *testing.T) {
			r := c.call(v, "", "7", "initialize", tc.params, "")
			r.refused(t, http.StatusBadRequest, web.RPCInvalidParams, "7", tc.want)
			if sid := r.header.Get("Mcp-Session-Id"); sid != "" {
				t.Errorf("a session %q was started", sid)
			}
		})
	}

	sid := c.session(v)
	levels := "debug, info, notice, warning, error, critical, alert, emergency"
	c.call(v, sid, "8", "logging/setLevel", `"level":"`+huge[:360<<10]+`"`, "").refused(t, http.StatusBadRequest, web.RPCInvalidParams, "8", levels)
	c.call(v, sid, "9", "logging/setLevel", `"level":"verbose"`, "").refused(t, http.StatusBadRequest, web.RPCInvalidParams, "9", `"verbose" is not a logging level`)
	if r := c.call(v, sid, "10", "logging/setLevel", `"level":"warning"`, ""); r.status != 200 || r.msg != "" {
		t.Errorf("a valid level: %d %s", r.status, r.body)
	}
}

// TestUnknownStreamIsAClientError: Last-Event-ID naming a stream the
// session does not have polled for 2 s and ended in a 503 blaming the
// store; it is a 400 at once. A real stream whose result is not there yet
// still gets keep-alives.
func TestUnknownStreamIsAClientError(t *testing.T) {
	s := apptest.New(t, "embedded", nil)
	c := newWire(t, s)
	v := mcpserver.Version20251125
	sid := c.session(v)
	get := func(last string) (reply, time.Duration) {
		req, _ := http.NewRequest(http.MethodGet, c.url, nil)
		req.Header.Set("Mcp-Session-Id", sid)
		req.Header.Set("Mcp-Protocol-Version", v)
		req.Header.Set("Last-Event-ID", last)
		start := time.Now()
		r := c.do(req)
		return r, time.Since(start)
	}

	r, took := get("bm9zdWNoc3RyZWFtMDAwMA_0")
	r.refused(t, http.StatusBadRequest, web.RPCInvalidRequest, "null", "names no stream of this session")
	if took >= time.Second {
		t.Errorf("the refusal took %v; it must not wait for events", took)
	}
	r, _ = get(strings.Repeat("s", 4096) + "_0")
	r.refused(t, http.StatusBadRequest, web.RPCInvalidRequest, "null", "not an event id of this server")

	// A real stream: a consent-gated dispatch, whose answer has not come.
	call := c.call(v, sid, "11", "tools/call", fmt.Sprintf(`"name":"dispatch_task","arguments":{"agentId":%q,"instruction":"echo hi"}`, s.AgentID), "")
	eventID, _, _ := strings.Cut(strings.TrimPrefix(call.body, "id: "), "\n")
	if call.status != 200 || !strings.Contains(call.body, "elicitation/create") || eventID == "" {
		t.Fatalf("dispatch_task: %d %s", call.status, call.body)
	}
	r, _ = get(eventID)
	if r.status != 200 || r.header.Get("Content-Type") != "text/event-stream" || !strings.HasPrefix(r.body, "id: "+eventID+".k1\n") {
		t.Errorf("resuming a real stream: %d %q, want a keep-alive", r.status, r.body)
	}
}

// TestGoInternalsStayInside: requests that used to be answered with Go's
// own words (type and field names, "store: key too long") are answered
// with what is wrong, in both generations.
func TestGoInternalsStayInside(t *testing.T) {
	s := apptest.New(t, "embedded", nil)
	c := newWire(t, s)
	for _, version := range generations {
		t.Run(version, func(t *testing.T) {
			sid := c.session(version)
			post := func(body string) reply { return c.post(version, sid, strings.NewReader(body)) }
			post(`{"jsonrpc":"2.0","id":1e400,"method":"tools/list"}`).
				refused(t, 400, web.RPCInvalidRequest, "null", `"id" must be a string or an integer, without a fraction or an exponent`)
			post(`{"jsonrpc":"2.0","id":1,"method":"tools/list"`).refused(t, 400, web.RPCParseError, "null", "not valid JSON")
			post(`[{"jsonrpc":"2.0","id":1,"method":"tools/list"}]`).refused(t, 400, web.RPCInvalidRequest, "null", "batches are not supported")
			c.call(version, sid, "2", "tools/list", `"cursor":5`, "").
				refused(t, 400, web.RPCInvalidParams, "2", "params.cursor: want string, got JSON number")
			c.call(version, sid, "3", "resources/read", `"uri":["agentgate://agents"]`, "agentgate://agents").
				refused(t, 400, web.RPCInvalidParams, "3", "params.uri: want string, got JSON array")
			c.call(version, sid, `"four"`, "tools/call", `"name":"get_execution_result","arguments":"t-1"`, "get_execution_result").
				refused(t, 400, web.RPCInvalidParams, `"four"`, "params.arguments must be a JSON object")
			c.call(version, sid, "5", "tools/call", `"name":"dispatch_task","arguments":{},"inputResponses":[]`, "dispatch_task").
				refused(t, 400, web.RPCInvalidParams, "5", "params.inputResponses: want object, got JSON array")

			// Ids and names too long for a table key, as tool arguments.
			tool := func(name, args string) string {
				r := c.call(version, sid, "6", "tools/call", fmt.Sprintf(`"name":%q,"arguments":%s`, name, args), name)
				var out struct {
					Result *mcp.CallToolResult `json:"result"`
				}
				if r.status != 200 || json.Unmarshal([]byte(r.body), &out) != nil || out.Result == nil || !out.Result.IsError {
					t.Fatalf("%s: %d %.300s, want a tool error", name, r.status, r.body)
				}
				text := out.Result.Content[0].(*mcp.TextContent).Text
				noGoInternals(t, name, text)
				if len(r.body) > 2000 {
					t.Errorf("%s: a %d-byte answer echoes the input", name, len(r.body))
				}
				return text
			}
			long := strings.Repeat("t", 200<<10)
			if got := tool("get_execution_result", `{"taskId":"`+long+`"}`); !strings.Contains(got, "taskId: longer than 128 bytes") {
				t.Errorf("200 KB taskId: %q", got)
			}
			if got := tool("dispatch_task", `{"agentId":"sample-echo","instruction":"echo","taskId":"`+long+`"}`); !strings.Contains(got, "taskId: longer than 128 bytes") {
				t.Errorf("dispatch_task with a 200 KB taskId: %q", got)
			}
			if got := tool("dispatch_task", `{"agentId":"`+long+`","instruction":"echo"}`); !strings.Contains(got, "agentId: longer than 128 bytes") {
				t.Errorf("dispatch_task with a 200 KB agentId: %q", got)
			}
			if got := tool("list_recent_executions", `{"agentId":"`+long+`"}`); !strings.Contains(got, "no agent by that name") {
				t.Errorf("list_recent_executions with a 200 KB agentId: %q", got)
			}
			// An integer to the input schema, not to the tool's input.
			if got := tool("list_recent_executions", `{"limit":1e30}`); got != "arguments.limit: want integer, got JSON number" {
				t.Errorf("list_recent_executions with limit 1e30: %q", got)
			}
		})
	}

	// A session id no session of this server can have.
	r := c.call(mcpserver.Version20251125, strings.Repeat("s", 8<<10), "1", "tools/list", "", "")
	r.refused(t, 400, web.RPCInvalidRequest, "null", "Mcp-Session-Id is 8192 bytes, over the limit of 128")
	r = c.call(mcpserver.Version20251125, "no such session", "1", "tools/list", "", "")
	r.refused(t, 400, web.RPCInvalidRequest, "null", "only contain visible ASCII")
}

// TestIDsComeBackUnchanged: 9223372036854775808 was answered as
// -9223372036854775808. An id that an SDK cannot hold exactly is refused,
// naming no id; one it can comes back as sent.
func TestIDsComeBackUnchanged(t *testing.T) {
	c := newWire(t, apptest.New(t, "embedded", nil))
	for _, version := range generations {
		t.Run(version, func(t *testing.T) {
			sid := c.session(version)
			for _, id := range []string{"9223372036854775808", "9007199254740993", "-9223372036854775809"} {
				c.call(version, sid, id, "tools/list", "", "").
					refused(t, 400, web.RPCInvalidRequest, "null", fmt.Sprintf("outside ±%d", web.MaxRPCInt))
			}
			c.call(version, sid, "1.5", "tools/list", "", "").refused(t, 400, web.RPCInvalidRequest, "null", "without a fraction")
			c.call(version, sid, `"`+strings.Repeat("i", web.MaxRPCIDLen+1)+`"`, "tools/list", "", "").
				refused(t, 400, web.RPCInvalidRequest, "null", fmt.Sprintf("over the limit of %d", web.MaxRPCIDLen))
			for _, id := range []string{"9007199254740991", "-9007199254740991", `"` + strings.Repeat("i", web.MaxRPCIDLen) + `"`} {
				r := c.call(version, sid, id, "tools/list", "", "")
				if r.status != 200 || !strings.HasPrefix(r.body, `{"jsonrpc":"2.0","id":`+id+`,"result":`) {
					t.Errorf("id %.40s: %d %.200s, want answered with the id sent", id, r.status, r.body)
				}
			}
		})
	}
	// initialize too, which a legacy session answers itself.
	c.call(mcpserver.Version20251125, "", "9223372036854775808", "initialize", initParams, "").
		refused(t, 400, web.RPCInvalidRequest, "null", "outside")
}

// TestMCPContentType: the MCP endpoint follows web.RequireJSON, as every
// JSON endpoint does: another type is 415 naming application/json, in both
// generations (the SDK said so in plain text at 2026-07-28, the legacy path
// tried to parse a form as JSON-RPC); no type is read as JSON.
func TestMCPContentType(t *testing.T) {
	c := newWire(t, apptest.New(t, "embedded", nil))
	for _, version := range generations {
		t.Run(version, func(t *testing.T) {
			sid := c.session(version)
			for _, ct := range []string{"application/x-www-form-urlencoded", "text/plain"} {
				c.call(version, sid, "1", "tools/list", "", "", "Content-Type", ct).
					refused(t, http.StatusUnsupportedMediaType, web.RPCInvalidRequest, "null", "Content-Type must be application/json, not "+fmt.Sprintf("%q", ct))
			}
			if r := c.call(version, sid, "2", "tools/list", "", "", "Content-Type", ""); r.status != 200 || !strings.Contains(r.body, "dispatch_task") {
				t.Errorf("no Content-Type: %d %.300s, want read as JSON", r.status, r.body)
			}
		})
	}
	if r := c.call(mcpserver.Version20251125, "", "3", "initialize", initParams, "", "Content-Type", ""); r.status != 200 || r.header.Get("Mcp-Session-Id") == "" {
		t.Errorf("initialize without Content-Type: %d %.300s", r.status, r.body)
	}
}

// TestSDKPlainTextRefusalsAreJSONRPC: what the SDK refuses at 2026-07-28
// with http.Error (here: a POST with Last-Event-ID) is answered as a
// JSON-RPC error with the status the SDK chose.
func TestSDKPlainTextRefusalsAreJSONRPC(t *testing.T) {
	c := newWire(t, apptest.New(t, "embedded", nil))
	r := c.call(mcpserver.Version20260728, "", "4", "tools/list", "", "", "Last-Event-ID", "x_0")
	r.refused(t, http.StatusBadRequest, web.RPCInvalidRequest, "4", "can't send Last-Event-ID for POST request")
	if ct := r.header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q, want application/json", ct)
	}
}

// corruptRecords is a store whose task records read, while on, with an
// answer that is not an agent's answer.
type corruptRecords struct {
	store.Store
	on atomic.Bool
}

func (c *corruptRecords) Get(ctx context.Context, k store.Key) (store.Item, error) {
	it, err := c.Store.Get(ctx, k)
	if err == nil && c.on.Load() && strings.HasPrefix(k.PK, "EXEC#") {
		var rec map[string]any
		if jerr := json.Unmarshal(it.Data, &rec); jerr != nil {
			return it, jerr
		}
		rec["answer"] = "not an answer"
		it.Data, err = json.Marshal(rec)
	}
	return it, err
}

// TestDispatchInternalErrorStaysInside: dispatch_task returned raw errors,
// which the SDK copies into the tool result (here, a task record whose
// answer does not decode, read by a replay of the consent: "cannot
// unmarshal string into Go struct field"). The caller reads agentgate's
// words.
func TestDispatchInternalErrorStaysInside(t *testing.T) {
	s := apptest.New(t, "embedded", nil)
	st := &corruptRecords{}
	srv := httptest.NewServer(s.Wrap(func(inner store.Store) store.Store { st.Store = inner; return st }))
	t.Cleanup(srv.Close)
	cs := mrtr(t, srv.URL, s.Key("alice", agentgate.ScopeUser))
	args := map[string]any{"agentId": s.AgentID, "instruction": "echo corrupt", "taskId": "corrupt-1"}
	state := ask(t, cs, args)
	if out, _ := retry(t, cs, args, state); !out.Dispatched {
		t.Fatalf("the first answer: %+v", out)
	}
	st.on.Store(true)
	out, res := retry(t, cs, args, state)
	text := res.Content[0].(*mcp.TextContent).Text
	if out.Dispatched || !res.IsError || !strings.Contains(text, "an internal error stopped this call") {
		t.Errorf("corrupt task record: %+v %q", out, text)
	}
	noGoInternals(t, "result", text)
	noGoInternals(t, "reason", out.Reason)
}
