package web

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentgate/agentgate/pkg/agentgate"
)

// goInternals are the marks of Go's own words in a message: type and field
// names, the decoders' phrasing.
var goInternals = []string{"Go struct", "Go value", "unmarshal", "float64", "interface {}", "reflect", "*json.", "web."}

func assertNoGoInternals(t *testing.T, where, message string) {
	t.Helper()
	if i := slices.IndexFunc(goInternals, func(m string) bool { return strings.Contains(message, m) }); i >= 0 {
		t.Errorf("%s: message %q shows Go internals (%q)", where, message, goInternals[i])
	}
}

// TestContentTypeRule: one rule for every JSON body: application/json (with
// parameters) or nothing; anything else is 415 naming the expected type.
func TestContentTypeRule(t *testing.T) {
	for ct, ok := range map[string]bool{
		"":                                  true,
		"application/json":                  true,
		"Application/JSON; charset=utf-8":   true,
		"application/x-www-form-urlencoded": false, // curl -d
		"text/plain":                        false, // a browser's simple request
		"application/jsonp":                 false,
		"multipart/form-data; boundary=x":   false,
	} {
		req := httptest.NewRequest("POST", "/", strings.NewReader(`{}`))
		if ct != "" {
			req.Header.Set("Content-Type", ct)
		}
		err := DecodeJSON(req, &struct{}{})
		if ok {
			if err != nil {
				t.Errorf("Content-Type %q: %v, want accepted", ct, err)
			}
			continue
		}
		rec := httptest.NewRecorder()
		WriteError(rec, req, err)
		got := readErrorBody(t, rec)
		if rec.Code != http.StatusUnsupportedMediaType || got.Code != agentgate.EMEDIATYPE ||
			!strings.Contains(got.Message, "must be application/json") || !strings.Contains(got.Message, fmt.Sprintf("%q", ct)) {
			t.Errorf("Content-Type %q: %d %+v, want 415 naming application/json and the type sent", ct, rec.Code, got)
		}
	}
}

// TestReadBodyChunkedOverCap: a body over the cap without Content-Length
// (chunked) is caught while it is read, and is the same 413 as a declared
// one, for every reader of JSON bodies.
func TestReadBodyChunkedOverCap(t *testing.T) {
	h := chained(&Chain{MaxBody: 64}, func(w http.ResponseWriter, r *http.Request) {
		body, err := ReadBody(r)
		if err != nil {
			WriteRPCFailure(w, r, nil, err)
			return
		}
		w.Write(body)
	})
	req := httptest.NewRequest("POST", "/x", io.MultiReader(strings.NewReader(strings.Repeat("x", 65))))
	req.ContentLength = -1
	rec := serve(t, h, req)
	var answer struct {
		Error struct {
			Code    int64  `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &answer); err != nil {
		t.Fatalf("not JSON: %q", rec.Body)
	}
	if rec.Code != http.StatusRequestEntityTooLarge || answer.Error.Code != RPCInvalidRequest || !strings.Contains(answer.Error.Message, "64-byte limit") {
		t.Fatalf("chunked oversize: %d %s", rec.Code, rec.Body)
	}
}

// TestJSONErrorNamesJSONTypes: a type mismatch names the field and the JSON
// types wanted and given, never a Go type.
func TestJSONErrorNamesJSONTypes(t *testing.T) {
	type inner struct{ N int }
	var v struct {
		Inner inner             `json:"inner"`
		List  []string          `json:"list"`
		Map   map[string]string `json:"map"`
		Count uint8             `json:"count"`
	}
	for body, want := range map[string]string{
		`{"inner":"x"}`:        "params.inner: want object, got JSON string",
		`{"list":{}}`:          "params.list: want array, got JSON object",
		`{"map":[1]}`:          "params.map: want object, got JSON array",
		`{"count":300}`:        "params.count: want integer, got JSON number",
		`{"inner":{"N":true}}`: "params.inner.N: want integer, got JSON boolean",
		`[1]`:                  "params: want object, got JSON array",
	} {
		err := JSONError("params", "params", json.Unmarshal([]byte(body), &v))
		if agentgate.ErrorCode(err) != agentgate.EINVALID || agentgate.ErrorMessage(err) != want {
			t.Errorf("%s: %q, want %q", body, agentgate.ErrorMessage(err), want)
		}
		assertNoGoInternals(t, body, agentgate.ErrorMessage(err))
	}
	// The MCP SDK's decoder reports the refused JSON itself, quoted.
	sdkErr := &json.UnmarshalTypeError{Value: `"1e30"`, Type: reflect.TypeFor[int](), Field: "limit", Struct: "mcpserver.ListExecutionsInput"}
	if got := agentgate.ErrorMessage(JSONError("arguments", "arguments", sdkErr)); got != "arguments.limit: want integer, got JSON number" {
		t.Errorf("the SDK's decoding error: %q", got)
	}
}

// TestParseRPC: what an SDK would answer in Go's words, or answer with
// another id, is refused first, in agentgate's words, with the JSON-RPC
// code it is; a message that can be answered exactly goes through with its
// id as sent.
func TestParseRPC(t *testing.T) {
	bad := []struct {
		body, want string
		code       int64
		keepsID    bool
	}{
		{`{"jsonrpc":"2.0","id":1e400,"method":"ping"}`, "without a fraction or an exponent", RPCInvalidRequest, false},
		{`{"jsonrpc":"2.0","id":1.5,"method":"ping"}`, "without a fraction or an exponent", RPCInvalidRequest, false},
		{`{"jsonrpc":"2.0","id":9223372036854775808,"method":"ping"}`, "outside ±9007199254740991", RPCInvalidRequest, false},
		{`{"jsonrpc":"2.0","id":9007199254740992,"method":"ping"}`, "outside ±9007199254740991", RPCInvalidRequest, false},
		{`{"jsonrpc":"2.0","id":true,"method":"ping"}`, "a string or an integer", RPCInvalidRequest, false},
		{`{"jsonrpc":"2.0","id":"` + strings.Repeat("i", MaxRPCIDLen+1) + `","method":"ping"}`, fmt.Sprintf("over the limit of %d", MaxRPCIDLen), RPCInvalidRequest, false},
		{`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, "batches are not supported", RPCInvalidRequest, false},
		{`hello`, "not valid JSON (at byte 1)", RPCParseError, false},
		{`{"jsonrpc":"2.0","id":1,"method":"ping"`, "not valid JSON (at byte 39)", RPCParseError, false},
		{`"just a string"`, "want a JSON object", RPCInvalidRequest, false},
		{``, "empty", RPCInvalidRequest, false},
		{`{"id":1,"method":"ping"}`, `"jsonrpc" must be "2.0"`, RPCInvalidRequest, true},
		{`{"jsonrpc":"2.0","id":1,"method":7}`, `"method" must be a non-empty string`, RPCInvalidRequest, true},
		{`{"jsonrpc":"2.0","id":1}`, `needs a "method"`, RPCInvalidRequest, true},
		{`{"jsonrpc":"2.0","id":1,"method":"ping","params":[1]}`, `"params" must be a JSON object`, RPCInvalidParams, true},
	}
	for _, tc := range bad {
		msg, err := ParseRPC([]byte(tc.body))
		var fault *RPCFault
		if !errors.As(err, &fault) || fault.Code != tc.code || agentgate.ErrorCode(err) != agentgate.EINVALID ||
			!strings.Contains(agentgate.ErrorMessage(err), tc.want) {
			t.Errorf("%.60s: %v, want JSON-RPC %d saying %q", tc.body, err, tc.code, tc.want)
			continue
		}
		assertNoGoInternals(t, tc.body, agentgate.ErrorMessage(err))
		if got := string(msg.ID); tc.keepsID != (got == "1") {
			t.Errorf("%.60s: id %q kept with the refusal; want kept: %v", tc.body, got, tc.keepsID)
		}
	}

	for body, want := range map[string]RPCMessage{
		`{"jsonrpc":"2.0","id":9007199254740991,"method":"tools/list"}`:             {ID: json.RawMessage(`9007199254740991`), Method: "tools/list"},
		`{"jsonrpc":"2.0","id":-9007199254740991,"method":"ping","params":{}}`:      {ID: json.RawMessage(`-9007199254740991`), Method: "ping", Params: json.RawMessage(`{}`)},
		`{"jsonrpc":"2.0","id":"abc","result":{}}`:                                  {ID: json.RawMessage(`"abc"`), Response: true},
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`:                    {Method: "notifications/initialized"},
		` {"jsonrpc":"2.0","id":null,"method":"notifications/initialized"} ` + "\n": {Method: "notifications/initialized"},
	} {
		got, err := ParseRPC([]byte(body))
		if err != nil || string(got.ID) != string(want.ID) || got.Method != want.Method || got.Response != want.Response ||
			string(got.Params) != string(want.Params) {
			t.Errorf("%s: %+v %v, want %+v", body, got, err, want)
		}
	}
}

// TestShortBodyTimesOutLoggedOnce is a body shorter than its
// Content-Length, on a real connection: it used to hang until the client
// gave up (net/http reads what is left of a body before it answers, and
// nothing bounded the read), and was then logged twice (the deadline's 504,
// then the handler's read error, written to a response that was over).
// Now the read ends at the request deadline, the 504 goes out at once, and
// one failure is logged.
func TestShortBodyTimesOutLoggedOnce(t *testing.T) {
	failures := &failureCounter{Handler: slog.NewTextHandler(io.Discard, nil)}
	prev := slog.Default()
	slog.SetDefault(slog.New(failures))
	t.Cleanup(func() { slog.SetDefault(prev) })

	handled := make(chan struct{})
	h := chained(&Chain{Timeout: 300 * time.Millisecond}, func(w http.ResponseWriter, r *http.Request) {
		defer close(handled)
		if _, err := ReadBody(r); err != nil {
			WriteRPCFailure(w, r, nil, err)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
	srv := httptest.NewServer(h)
	defer srv.Close()

	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprint(conn, "POST /x HTTP/1.1\r\nHost: agentgate.test\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"a\":")
	start := time.Now()
	conn.SetReadDeadline(start.Add(10 * time.Second)) // the client giving up
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer before the client gave up (%v): %v", time.Since(start), err)
	}
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusGatewayTimeout || !strings.Contains(string(body), agentgate.ETIMEOUT) {
		t.Fatalf("short body: %d %s, want 504 timeout", resp.StatusCode, body)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("the answer took %v, for a 300ms deadline", took)
	}
	select {
	case <-handled:
	case <-time.After(5 * time.Second):
		t.Fatal("the handler is still blocked reading the body")
	}
	time.Sleep(50 * time.Millisecond) // let a (wrong) late log land before counting
	if n := failures.n.Load(); n != 1 {
		t.Errorf("logged %d failures, want 1", n)
	}
}

// failureCounter counts the "request failed" records logged through it.
type failureCounter struct {
	slog.Handler
	n atomic.Int32
}

func (c *failureCounter) Handle(_ context.Context, r slog.Record) error {
	if r.Message == "request failed" {
		c.n.Add(1)
	}
	return nil
}
