//go:build linux

// The Lambda Runtime Interface Emulator runs only on Linux.

package functions_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/aws/aws-lambda-go/events"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentgate/agentgate/pkg/agent"
	"github.com/agentgate/agentgate/pkg/apikey"
	"github.com/agentgate/agentgate/pkg/app/apptest"
	"github.com/agentgate/agentgate/pkg/mcpserver"
	"github.com/agentgate/agentgate/pkg/sampleagent"
	"github.com/agentgate/agentgate/pkg/store/dynamo"
	"github.com/agentgate/agentgate/pkg/store/dynamo/dynalite"
)

// TestMCPDispatchUnderLambda proves that the MCP function needs no memory
// shared between requests, on the real Lambda runtime rather than an
// in-process handler: the mcp bootstrap runs under two emulators (two Lambda
// instances, each serving one invocation at a time) on one dynalite table,
// behind a test gateway that does what API Gateway's HTTP API does (payload
// 2.0), and the official Go MCP client dispatches a task through it with
// consent and polls it to completion, once statelessly (2026-07-28, MRTR
// consent) and once in a session (2025-11-25: the session in the table, the
// consent an elicitation on the tools/call SSE stream, the result fetched by
// a GET with Last-Event-ID). The gateway hands requests to whichever
// instance is free, so consecutive requests of one session alternate
// between the two processes.
func TestMCPDispatchUnderLambda(t *testing.T) {
	// The user takes a moment to approve: longer than the consent stream's
	// retry hint tells a 2025-11-25 client to wait before it resumes (a
	// fraction of a second), and well within the 2 s a resuming GET waits
	// for a result. So the GET that resumes the stream is already waiting
	// on one instance when the answer reaches the other, as with a human.
	const thinking = 700 * time.Millisecond

	rie := findRIE(t)
	db := dynalite.Start(t)
	table := db.NewTable(t)

	bootstrap := buildBootstrap(t, t.TempDir(), "functions/mcp")
	env := lambdaEnv(db, table, "mcp", map[string]string{
		"MCP_SERVER_ENABLED": "true",
		"CONSENT_SECRET":     "consent-secret-for-the-emulator-test-0123",
		// The sample agent listens on loopback, which the default policy
		// (public addresses only) refuses.
		"AGENT_NETWORK": "local",
		// Every request comes from one address and one principal.
		"RATE_LIMIT_MCP_PER_IP":        "off",
		"RATE_LIMIT_MCP_PER_PRINCIPAL": "off",
	})
	instances := []*instance{
		{name: "A", fn: startRIE(t, rie, bootstrap, env)},
		{name: "B", fn: startRIE(t, rie, bootstrap, env)},
	}

	// The sample agent, and the agent and key the function will find in
	// the table, written by this process through a store client of its own.
	sample := sampleagent.New(sampleagent.Options{})
	agentSrv := httptest.NewServer(sample.Handler())
	t.Cleanup(agentSrv.Close)
	ctx := t.Context()
	st, err := dynamo.Open(ctx, dynamo.Config{Table: table, Endpoint: db.Endpoint(), Region: "us-east-1"})
	if err != nil {
		t.Fatal(err)
	}
	tmpl, err := agent.ParseFile("../examples/agents/echo.yaml")
	if err != nil {
		t.Fatal(err)
	}
	tmpl.Endpoint = agentSrv.URL + "/"
	if _, _, err := agent.NewRegistry(st, nil).Import(ctx, "owner", tmpl); err != nil {
		t.Fatal(err)
	}
	key, err := apikey.NewService(st, nil).Create(ctx, apikey.NewKey{Owner: "alice"})
	if err != nil {
		t.Fatal(err)
	}

	gw := newGateway(t, instances)

	for _, version := range []string{mcpserver.Version20260728, mcpserver.Version20251125} {
		t.Run(version, func(t *testing.T) {
			first := gw.mark()
			received := sample.Received()
			var asked atomic.Int64
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()
			cs := apptest.MCPClient(t, gw.URL, key.Key, version, func(req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				asked.Add(1)
				time.Sleep(thinking)
				return apptest.Approve(req)
			})

			_, names := apptest.ToolNames(t, cs)
			if want := []string{"ask_docs", "dispatch_task", "get_agent_activity_summary", "get_execution_result", "list_recent_executions"}; !slices.Equal(names, want) {
				t.Errorf("tools %v, want %v", names, want)
			}

			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "dispatch_task",
				Arguments: map[string]any{"agentId": "sample-echo", "instruction": "reverse lambda"}})
			if err != nil {
				t.Fatalf("dispatch_task: %v", err)
			}
			var out mcpserver.DispatchOutput
			structured(t, res, &out)
			if !out.Dispatched || out.TaskID == "" || res.IsError {
				t.Fatalf("dispatch_task: %+v %v", out, res.Content)
			}

			deadline := time.Now().Add(15 * time.Second)
			var done mcpserver.ExecutionResultOutput
			for {
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "get_execution_result", Arguments: map[string]any{"taskId": out.TaskID}})
				if err != nil {
					t.Fatalf("get_execution_result: %v", err)
				}
				if res.IsError {
					t.Fatalf("get_execution_result: %v", res.Content)
				}
				structured(t, res, &done)
				if done.Done || time.Now().After(deadline) {
					break
				}
				time.Sleep(50 * time.Millisecond)
			}
			if done.Status != "completed" || done.Result != "adbmal" {
				t.Errorf("execution %+v, want completed with %q", done, "adbmal")
			}
			if n := asked.Load(); n != 1 {
				t.Errorf("the consent question was asked %d times, want once", n)
			}
			if n := sample.Received() - received; n != 1 {
				t.Errorf("the agent received %d messages, want 1", n)
			}
			if err := cs.Close(); err != nil {
				t.Errorf("closing the session: %v", err)
			}

			hops := gw.since(first)
			for _, h := range hops {
				t.Log(h)
			}
			checkHops(t, version, hops)
		})
	}
}

// checkHops checks what only a multi-instance, invocation-per-request
// deployment shows: both instances served the client (for 2025-11-25, both
// served requests of the one session, so the session lived in the table);
// every response carried its own invocation's Lambda request id; and the
// transport was the version's: JSON only at 2026-07-28, an SSE stream
// carrying the elicitation and a resuming GET with Last-Event-ID at
// 2025-11-25.
func checkHops(t *testing.T, version string, hops []hop) {
	t.Helper()
	served := map[string]int{}
	sessionServed := map[string]int{}
	var resumed, elicited int
	for _, h := range hops {
		served[h.instance]++
		if h.session != "" {
			sessionServed[h.instance]++
		}
		if h.requestID != h.responseID {
			t.Errorf("%s: X-Request-Id %q, want the invocation's Lambda request id %q", h, h.responseID, h.requestID)
		}
		if h.base64 {
			t.Errorf("%s: the function answered base64; MCP's JSON and SSE are text", h)
		}
		if h.method == http.MethodGet && h.lastEventID != "" {
			resumed++
			if h.status != http.StatusOK || h.contentType != "text/event-stream" {
				t.Errorf("%s: a resuming GET answered %d %s, want 200 text/event-stream", h, h.status, h.contentType)
			}
		}
		if h.contentType == "text/event-stream" && strings.Contains(h.body, `"method":"elicitation/create"`) {
			elicited++
		}
	}
	if served["A"] == 0 || served["B"] == 0 {
		t.Errorf("requests per instance %v: want both instances used", served)
	}
	// The instances that served the consent round: the tools/call that
	// asked, and what brought the answer (a retried tools/call at
	// 2026-07-28; at 2025-11-25 the answer's POST and the resuming GET).
	var consent []string
	for _, h := range hops {
		if h.rpc == "tools/call dispatch_task" || h.rpc == "answer" || h.lastEventID != "" {
			consent = append(consent, h.instance)
		}
	}
	if !slices.Contains(consent, "A") || !slices.Contains(consent, "B") {
		t.Errorf("the consent round ran on instances %v: want it spread over both", consent)
	}
	switch version {
	case mcpserver.Version20260728:
		for _, h := range hops {
			if h.session != "" || h.lastEventID != "" || h.contentType == "text/event-stream" {
				t.Errorf("%s: a stateless client used a session or a stream", h)
			}
		}
	case mcpserver.Version20251125:
		if sessionServed["A"] == 0 || sessionServed["B"] == 0 {
			t.Errorf("session requests per instance %v: want both instances to serve the one session", sessionServed)
		}
		if elicited != 1 {
			t.Errorf("%d SSE responses carried the consent elicitation, want 1", elicited)
		}
		if resumed == 0 {
			t.Error("no GET with Last-Event-ID: the result was not fetched by resuming the stream")
		}
		// The handoff through the table: a resuming GET waits on one
		// instance while the other takes the answer, runs the call and
		// stores its result, and the GET delivers that result.
		handoff := false
		for _, a := range hops {
			for _, g := range hops {
				if a.rpc == "answer" && g.lastEventID != "" && g.instance != a.instance &&
					g.start.Before(a.start) && g.end.After(a.end) && strings.Contains(g.body, `"result"`) {
					handoff = true
				}
			}
		}
		if !handoff {
			t.Error("no resuming GET delivered the result of an answer taken meanwhile by the other instance")
		}
	}
	t.Logf("%s: %d requests, per instance %v, of the session %v, %d resuming GETs", version, len(hops), served, sessionServed, resumed)
}

var structured = apptest.Structured

// instance is one emulator: one Lambda instance of the function.
type instance struct {
	name string
	fn   function
}

// gateway stands in for API Gateway's HTTP API with a Lambda proxy
// integration (payload format 2.0): each HTTP request becomes one
// invocation of a free instance, and the function's response becomes the
// HTTP response, whole. Nothing streams (the adapter buffers the response,
// and an HTTP API integration returns one payload), so an SSE stream
// reaches the client only once the invocation has ended: which is why the
// function ends its streams after one event.
type gateway struct {
	*httptest.Server
	t    *testing.T
	pool chan *instance // the instances not serving an invocation

	mu       sync.Mutex
	hops     []hop
	inflight int // requests being served now
}

// hop is one request through the gateway, as the test checks it.
type hop struct {
	method, rpc         string // HTTP method; the JSON-RPC method, or "answer" for a client's response
	session             string // Mcp-Session-Id sent
	lastEventID         string
	instance            string
	status              int
	contentType         string
	base64              bool
	body                string // the response's
	requestID           string // the invocation's Lambda request id
	responseID          string // X-Request-Id answered
	start, end          time.Time
	sessionSet, headers string // Mcp-Session-Id answered; the response's header names
	concurrent          int    // requests in the gateway when this one arrived, itself included
	waited              bool   // no instance was free when it arrived
}

func (h hop) String() string {
	s := strings.TrimSpace(h.method + " " + h.rpc)
	s += fmt.Sprintf(" on %s -> %d %s (%v", h.instance, h.status, h.contentType, h.end.Sub(h.start).Round(time.Millisecond))
	if h.session != "" {
		s += ", in a session"
	}
	if h.lastEventID != "" {
		s += ", Last-Event-ID " + h.lastEventID
	}
	if h.sessionSet != "" {
		s += ", session started"
	}
	if h.concurrent > 1 {
		s += fmt.Sprintf(", %d concurrent", h.concurrent)
	}
	if h.waited {
		s += ", waited for an instance"
	}
	return s + ", headers " + h.headers + ")"
}

func newGateway(t *testing.T, instances []*instance) *gateway {
	g := &gateway{t: t, pool: make(chan *instance, len(instances))}
	for _, in := range instances {
		g.pool <- in
	}
	g.Server = httptest.NewServer(http.HandlerFunc(g.serve))
	t.Cleanup(g.Close)
	return g
}

// mark and since delimit the hops of a subtest.
func (g *gateway) mark() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.hops)
}

func (g *gateway) since(i int) []hop {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.hops[i:])
}

func (g *gateway) serve(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var b [16]byte
	_, _ = rand.Read(b[:])
	id := hex.EncodeToString(b[:])
	event := toEvent(r, body, id)
	g.mu.Lock()
	g.inflight++
	concurrent := g.inflight
	g.mu.Unlock()
	defer func() {
		g.mu.Lock()
		g.inflight--
		g.mu.Unlock()
	}()

	// The invocation runs to its end even if the client goes away, as on
	// Lambda; only then is the instance free again. An emulator takes one
	// invocation at a time (a second one at once makes it log
	// "ReserveFailed: AlreadyReserved", panic and exit), so the client's
	// concurrent requests (the answer to an elicitation while the GET
	// that resumes the stream waits for it) need the other instance.
	var in *instance
	waited := false
	select {
	case in = <-g.pool:
	default:
		waited = true
		in = <-g.pool
	}
	resp, err := in.fn.invokeEvent(context.WithoutCancel(r.Context()), event, id)
	g.pool <- in
	if err != nil {
		g.t.Errorf("%s %s on instance %s: %v", r.Method, r.URL.Path, in.name, err)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadGateway)
		io.WriteString(w, `{"message":"Internal Server Error"}`)
		return
	}

	out := []byte(resp.Body)
	if resp.IsBase64Encoded {
		if out, err = base64.StdEncoding.DecodeString(resp.Body); err != nil {
			g.t.Errorf("%s %s: undecodable base64 body: %v", r.Method, r.URL.Path, err)
		}
	}
	var headerNames []string
	for k, v := range resp.Headers {
		w.Header().Set(k, v)
		headerNames = append(headerNames, k)
	}
	for k, vs := range resp.MultiValueHeaders {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
		headerNames = append(headerNames, k+"[]")
	}
	for _, c := range resp.Cookies {
		w.Header().Add("Set-Cookie", c)
	}
	slices.Sort(headerNames)
	w.WriteHeader(resp.StatusCode)
	w.Write(out)

	g.mu.Lock()
	defer g.mu.Unlock()
	g.hops = append(g.hops, hop{
		method: r.Method, rpc: rpcMethod(body),
		session: r.Header.Get("Mcp-Session-Id"), lastEventID: r.Header.Get("Last-Event-ID"),
		instance: in.name, status: resp.StatusCode, contentType: w.Header().Get("Content-Type"),
		base64: resp.IsBase64Encoded, body: string(out),
		requestID: id, responseID: w.Header().Get("X-Request-Id"),
		start: start, end: time.Now(),
		sessionSet: w.Header().Get("Mcp-Session-Id"), headers: strings.Join(headerNames, ","),
		concurrent: concurrent, waited: waited,
	})
}

// toEvent is the event API Gateway's HTTP API sends for r: header names in
// lower case, repeated headers joined with commas, cookies apart, the body
// as text unless it is not UTF-8, the caller's address in the request
// context.
func toEvent(r *http.Request, body []byte, id string) events.APIGatewayV2HTTPRequest {
	headers := map[string]string{"host": r.Host}
	var cookies []string
	for k, vs := range r.Header {
		if k == "Cookie" {
			for _, v := range vs {
				cookies = append(cookies, strings.Split(v, "; ")...)
			}
			continue
		}
		headers[strings.ToLower(k)] = strings.Join(vs, ",")
	}
	e := events.APIGatewayV2HTTPRequest{
		Version:        "2.0",
		RouteKey:       r.Method + " " + r.URL.Path,
		RawPath:        r.URL.EscapedPath(),
		RawQueryString: r.URL.RawQuery,
		Cookies:        cookies,
		Headers:        headers,
		Body:           string(body),
		RequestContext: events.APIGatewayV2HTTPRequestContext{
			RouteKey:   r.Method + " " + r.URL.Path,
			AccountID:  "123456789012",
			APIID:      "gateway",
			DomainName: r.Host,
			Stage:      "$default",
			RequestID:  "apigw-" + id,
			Time:       time.Now().UTC().Format("02/Jan/2006:15:04:05 -0700"),
			TimeEpoch:  time.Now().UnixMilli(),
			HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{
				Method:    r.Method,
				Path:      r.URL.Path,
				Protocol:  r.Proto,
				SourceIP:  sourceIP(r.RemoteAddr),
				UserAgent: r.UserAgent(),
			},
		},
	}
	if !utf8.Valid(body) {
		e.Body, e.IsBase64Encoded = base64.StdEncoding.EncodeToString(body), true
	}
	return e
}

func sourceIP(addr string) string {
	if host, _, err := net.SplitHostPort(addr); err == nil {
		return host
	}
	return addr
}

// rpcMethod names a POSTed JSON-RPC message: its method (and for
// tools/call the tool), or "answer" for a response to the server's request.
func rpcMethod(body []byte) string {
	var m struct {
		Method string          `json:"method"`
		Result json.RawMessage `json:"result"`
		Error  json.RawMessage `json:"error"`
		Params struct {
			Name string `json:"name"`
		} `json:"params"`
	}
	switch {
	case json.Unmarshal(body, &m) != nil:
		return ""
	case m.Method == "" && (m.Result != nil || m.Error != nil):
		return "answer"
	case m.Method == "tools/call":
		return m.Method + " " + m.Params.Name
	}
	return m.Method
}

// invokeEvent invokes the function with event under the Lambda request id
// id, as invoke does, and returns an error, not a test failure: the gateway
// calls it off the test goroutine.
func (f function) invokeEvent(ctx context.Context, event events.APIGatewayV2HTTPRequest, id string) (events.APIGatewayV2HTTPResponse, error) {
	data, err := json.Marshal(event)
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, 35*time.Second) // the function's 30 s, and some
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, f.url, bytes.NewReader(data))
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	req.Header.Set("X-Amzn-RequestId", id)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	var resp events.APIGatewayV2HTTPResponse
	if err := json.Unmarshal(raw, &resp); err != nil || resp.StatusCode == 0 {
		// A function error: the emulator answers its errorMessage.
		return resp, fmt.Errorf("emulator answered %s: %s (%v)", res.Status, raw, err)
	}
	return resp, nil
}
