package agentcard_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentgate/agentgate/pkg/agentcard"
	"github.com/agentgate/agentgate/pkg/agentgate"
	"github.com/agentgate/agentgate/pkg/app/apptest"
)

// The installed base of A2A clients, as npm packages pinned in the repo's
// package.json (installed by `make deps`, npm ci, from package-lock.json):
// each testdata script drives the front door with one of them.
const (
	jsA2AV1  = "a2a-js-v1"   // npm:@a2a-js/sdk@1.3.0, the A2A v1.0 SDK
	jsA2AV03 = "@a2a-js/sdk" // 0.3.x, the A2A v0.3 SDK (and the one ADK uses)
	jsADK    = "@google/adk" // 2.0.0, Google's Agent Development Kit
)

// jsRequest is one HTTP request a script's SDK made, as its recorder saw it
// (testdata/jsclient_common.mjs).
type jsRequest struct {
	Method            string  `json:"method"`
	Path              string  `json:"path"`
	A2AVersion        *string `json:"a2aVersion"`
	Authorization     bool    `json:"authorization"`
	RPC               string  `json:"rpc"`
	ReturnImmediately *bool   `json:"returnImmediately"`
	Blocking          *bool   `json:"blocking"`
	Status            int     `json:"status"`
	Answer            string  `json:"answer"`
}

// jsTaskRun is a send and the polls that followed until the task ended.
type jsTaskRun struct {
	TaskID    string `json:"taskId"`
	SendState string `json:"sendState"`
	State     string `json:"state"`
	Text      string `json:"text"`
	Polls     int    `json:"polls"`
}

// jsV1Card is what a2a_js_v1.mjs reports of a card it resolved.
type jsV1Card struct {
	Name       string `json:"name"`
	Interfaces []struct {
		URL             string `json:"url"`
		ProtocolBinding string `json:"protocolBinding"`
		ProtocolVersion string `json:"protocolVersion"`
	} `json:"interfaces"`
	Streaming *bool `json:"streaming"`
}

// jsV03Card is what a2a_js_v03.mjs reports of a card it resolved.
type jsV03Card struct {
	Name               string                     `json:"name"`
	URL                string                     `json:"url"`
	PreferredTransport string                     `json:"preferredTransport"`
	ProtocolVersion    string                     `json:"protocolVersion"`
	SecuritySchemes    map[string]json.RawMessage `json:"securitySchemes"`
	Security           []map[string][]string      `json:"security"`
	Streaming          *bool                      `json:"streaming"`
}

type jsV1Result struct {
	SDK             string      `json:"sdk"`
	ProtocolVersion string      `json:"protocolVersion"`
	Endpoint        string      `json:"endpoint"`
	Card            jsV1Card    `json:"card"`
	AuthCard        jsV1Card    `json:"authCard"`
	Blocking        jsTaskRun   `json:"blocking"`
	Polling         jsTaskRun   `json:"polling"`
	Requests        []jsRequest `json:"requests"`
}

type jsV03Result struct {
	SDK           string      `json:"sdk"`
	Endpoint      string      `json:"endpoint"`
	Card          jsV03Card   `json:"card"`
	A2AClientCard jsV03Card   `json:"a2aClientCard"`
	Factory       jsTaskRun   `json:"factory"`
	A2AClient     jsTaskRun   `json:"a2aClient"`
	Requests      []jsRequest `json:"requests"`
}

type jsADKResult struct {
	SDK    string `json:"sdk"`
	A2ASDK string `json:"a2aSdk"`
	Events []struct {
		Author       string  `json:"author"`
		Text         string  `json:"text"`
		ErrorMessage *string `json:"errorMessage"`
	} `json:"events"`
	Final struct {
		Author string `json:"author"`
		Text   string `json:"text"`
		TaskID string `json:"taskId"`
	} `json:"final"`
	Requests []jsRequest `json:"requests"`
}

// TestJSClients: the A2A clients already in use, unchanged, as their
// READMEs tell users to call an agent, through the front door to the
// sample agent, on each store:
//
//   - @a2a-js/sdk 1.3.0 (A2A v1.0): ClientFactory from the interface URL
//     (the public card at its relative location, A2A-Version: 1.0), a
//     blocking SendMessage, GetTask; and a polling client from the
//     authenticated card.
//   - @a2a-js/sdk 0.3.x (A2A v0.3): ClientFactory from the interface URL
//     (the v0.3-readable card, no A2A-Version header), a blocking
//     message/send, tasks/get; and A2AClient from the card URL it derives
//     itself, with a non-blocking message/send and tasks/get.
//   - @google/adk 2.0.0: RemoteA2AAgent given the interface URL and a
//     ClientFactory that sends the key, run by an InMemoryRunner; it sends
//     one blocking message/send and takes the task it gets back as the
//     answer.
//
// Every SDK sends the key on every request (ADK's own card request
// excepted: it has no option for it), and each reads "desserts" back from
// "reverse stressed".
func TestJSClients(t *testing.T) {
	node, root := requireJSClients(t)
	for _, backend := range apptest.Backends {
		t.Run(backend, func(t *testing.T) {
			s := apptest.New(t, backend, nil)
			base := s.Serve()
			key := s.Key("alice", agentgate.ScopeUser)
			door := agentcard.FrontDoorPath(s.AgentID)
			iface := base + door
			// Where a client that resolves .well-known/agent-card.json
			// against the interface URL, which has no trailing slash,
			// looks: next to "a2a", not below it.
			sibling := path.Dir(door) + "/.well-known/agent-card.json"
			below := door + "/.well-known/agent-card.json"

			t.Run("a2a-js-1.3.0", func(t *testing.T) {
				before := s.Sample.Received()
				var res jsV1Result
				runJSClient(t, node, root, "a2a_js_v1.mjs", iface, key, &res)
				if res.SDK != "@a2a-js/sdk@1.3.0" || res.ProtocolVersion != "1.0" || res.Endpoint != iface {
					t.Errorf("sdk %s spoke %q to %s; want A2A 1.0 to the front door %s", res.SDK, res.ProtocolVersion, res.Endpoint, iface)
				}
				for name, c := range map[string]jsV1Card{"public card": res.Card, "authenticated card": res.AuthCard} {
					checkV1Card(t, name, c, iface)
				}
				checkRun(t, "blocking SendMessage", res.Blocking, "TASK_STATE_COMPLETED", "desserts", "TASK_STATE_COMPLETED")
				checkRun(t, "returnImmediately SendMessage", res.Polling, "TASK_STATE_COMPLETED", "waited 1.5s", "TASK_STATE_SUBMITTED", "TASK_STATE_WORKING")
				checkRequests(t, res.Requests, door, []string{sibling, agentcard.CardPath(s.AgentID)}, []string{"SendMessage", "GetTask"}, func(r jsRequest) bool {
					return r.A2AVersion != nil && *r.A2AVersion == "1.0"
				}, "A2A-Version: 1.0")
				if got := s.Sample.Received() - before; got != 2 {
					t.Errorf("the agent received %d messages, want 2", got)
				}
			})

			t.Run("a2a-js-0.3", func(t *testing.T) {
				before := s.Sample.Received()
				var res jsV03Result
				runJSClient(t, node, root, "a2a_js_v03.mjs", iface, key, &res)
				if !strings.HasPrefix(res.SDK, "@a2a-js/sdk@0.3.") || res.Endpoint != iface {
					t.Errorf("sdk %s called %s; want a 0.3 SDK calling the front door %s", res.SDK, res.Endpoint, iface)
				}
				for name, c := range map[string]jsV03Card{"ClientFactory's card": res.Card, "A2AClient's card": res.A2AClientCard} {
					checkV03Card(t, name, c, iface)
				}
				checkRun(t, "ClientFactory message/send", res.Factory, "completed", "desserts", "completed")
				checkRun(t, "A2AClient non-blocking message/send", res.A2AClient, "completed", "waited 1.5s", "submitted", "working")
				checkRequests(t, res.Requests, door, []string{sibling, below}, []string{"message/send", "tasks/get"}, func(r jsRequest) bool {
					return r.A2AVersion == nil
				}, "no A2A-Version header")
				if got := s.Sample.Received() - before; got != 2 {
					t.Errorf("the agent received %d messages, want 2", got)
				}
			})

			t.Run("adk-2.0.0", func(t *testing.T) {
				before := s.Sample.Received()
				var res jsADKResult
				runJSClient(t, node, root, "adk_remote.mjs", iface, key, &res)
				if res.SDK != "@google/adk@2.0.0" || !strings.HasPrefix(res.A2ASDK, "@a2a-js/sdk@0.3.") {
					t.Errorf("sdk %s on %s; want ADK 2.0.0 on a 0.3 A2A SDK", res.SDK, res.A2ASDK)
				}
				for _, ev := range res.Events {
					if ev.ErrorMessage != nil {
						t.Errorf("ADK event of %s with an error: %s", ev.Author, *ev.ErrorMessage)
					}
				}
				if res.Final.Author != "sample_echo" || res.Final.Text != "desserts" || res.Final.TaskID == "" {
					t.Errorf("final event %+v, want sample_echo's \"desserts\" from a task", res.Final)
				}
				// ADK fetches the card itself, without credentials: the
				// public card. Its one call is a blocking message/send.
				var cards, sends int
				for _, r := range res.Requests {
					switch {
					case r.Method == "GET" && r.Path == sibling && r.Status == 200:
						cards++
					case r.Method == "POST" && r.Path == door && r.RPC == "message/send" && r.Authorization && r.Blocking != nil && *r.Blocking && r.Status == 200:
						sends++
					default:
						t.Errorf("unexpected request %+v", r)
					}
				}
				if cards != 1 || sends != 1 {
					t.Errorf("%d card fetches at %s and %d blocking message/send, want 1 and 1: %+v", cards, sibling, sends, res.Requests)
				}
				if got := s.Sample.Received() - before; got != 1 {
					t.Errorf("the agent received %d messages, want 1", got)
				}
			})
		})
	}
}

// checkV1Card checks a v1.0 card as a2a-js 1.3.0 parsed it: the front door
// for A2A 1.0 and for 0.3, both JSON-RPC, and no streaming.
func checkV1Card(t *testing.T, name string, c jsV1Card, iface string) {
	t.Helper()
	var versions []string
	for _, i := range c.Interfaces {
		if i.URL != iface || i.ProtocolBinding != "JSONRPC" {
			t.Errorf("%s: interface %+v, want JSONRPC at %s", name, i, iface)
		}
		versions = append(versions, i.ProtocolVersion)
	}
	if !slices.Equal(versions, []string{"1.0", "0.3"}) {
		t.Errorf("%s: interfaces for protocol versions %v, want [1.0 0.3]", name, versions)
	}
	if c.Name != "sample-echo" || c.Streaming == nil || *c.Streaming {
		t.Errorf("%s: name %q, streaming %v; want sample-echo, streaming false", name, c.Name, c.Streaming)
	}
}

// checkV03Card checks a card as a2a-js 0.3 read it: url, preferredTransport,
// protocolVersion and a v0.3 bearer scheme, and no streaming.
func checkV03Card(t *testing.T, name string, c jsV03Card, iface string) {
	t.Helper()
	if c.Name != "sample-echo" || c.URL != iface || c.PreferredTransport != "JSONRPC" || c.ProtocolVersion != "0.3" {
		t.Errorf("%s: name %q, url %q, preferredTransport %q, protocolVersion %q; want sample-echo, %s, JSONRPC, 0.3",
			name, c.Name, c.URL, c.PreferredTransport, c.ProtocolVersion, iface)
	}
	if c.Streaming == nil || *c.Streaming {
		t.Errorf("%s: streaming %v, want false", name, c.Streaming)
	}
	var scheme struct{ Type, Scheme string }
	if err := json.Unmarshal(c.SecuritySchemes[agentcard.BearerAuth], &scheme); err != nil || scheme.Type != "http" || !strings.EqualFold(scheme.Scheme, "bearer") {
		t.Errorf("%s: securitySchemes %s, want a v0.3 %s scheme {type: http, scheme: bearer}", name, mustJSON(c.SecuritySchemes), agentcard.BearerAuth)
	}
	if !slices.ContainsFunc(c.Security, func(req map[string][]string) bool { _, ok := req[agentcard.BearerAuth]; return ok }) {
		t.Errorf("%s: security %v, want a requirement of %s", name, c.Security, agentcard.BearerAuth)
	}
}

// checkRun checks a send and its polls: the task ended in state with text,
// and the send's own answer was in one of sendStates.
func checkRun(t *testing.T, name string, r jsTaskRun, state, text string, sendStates ...string) {
	t.Helper()
	if r.TaskID == "" || r.State != state || r.Text != text {
		t.Errorf("%s: task %q ended %s with %q, want %s with %q", name, r.TaskID, r.State, r.Text, state, text)
	}
	if !slices.Contains(sendStates, r.SendState) {
		t.Errorf("%s: the send answered with a task in state %s, want one of %v", name, r.SendState, sendStates)
	}
}

// checkRequests checks every request a script made: a GET of one of cards
// or a POST of one of methods to the front door door, each with the key,
// header as ok says, and answered 200; every card fetched.
func checkRequests(t *testing.T, reqs []jsRequest, door string, cards, methods []string, ok func(jsRequest) bool, header string) {
	t.Helper()
	fetched := map[string]bool{}
	for _, r := range reqs {
		good := r.Authorization && r.Status == 200 && ok(r)
		switch r.Method {
		case "GET":
			good = good && slices.Contains(cards, r.Path)
			fetched[r.Path] = true
		case "POST":
			good = good && r.Path == door && slices.Contains(methods, r.RPC)
		default:
			good = false
		}
		if !good {
			t.Errorf("request %+v; want GET of %v or POST of %v to %s, with the key and %s, answered 200", r, cards, methods, door, header)
		}
	}
	for _, c := range cards {
		if !fetched[c] {
			t.Errorf("the card at %s was never fetched", c)
		}
	}
}

// requireJSClients returns node and the repository root, where
// node_modules holds the packages pinned in package.json. With CI=true a
// missing node or package fails the test; elsewhere it skips it.
func requireJSClients(t *testing.T) (node, root string) {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	missing := func(msg string) {
		t.Helper()
		msg += "; run make deps (npm ci)"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	node, err = exec.LookPath("node")
	if err != nil {
		missing("node is not installed")
	}
	var pkg struct{ DevDependencies map[string]string }
	if err := readJSON(filepath.Join(root, "package.json"), &pkg); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{jsA2AV1, jsA2AV03, jsADK} {
		pinned, ok := pkg.DevDependencies[name]
		if !ok {
			t.Fatalf("package.json pins no %s", name)
		}
		if i := strings.LastIndex(pinned, "@"); strings.HasPrefix(pinned, "npm:") && i > 0 {
			pinned = pinned[i+1:] // npm:@a2a-js/sdk@1.3.0
		}
		var installed struct{ Version string }
		if err := readJSON(filepath.Join(root, "node_modules", filepath.FromSlash(name), "package.json"), &installed); err != nil {
			missing(name + " is not installed")
		} else if installed.Version != pinned {
			missing(name + " " + installed.Version + " is installed, package.json pins " + pinned)
		}
	}
	return node, root
}

// runJSClient runs testdata/script with node against the front door at
// iface with key, requires it to exit 0, and decodes the JSON it prints
// last into res.
func runJSClient(t *testing.T, node, root, script, iface, key string, res any) {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), node, filepath.Join("pkg", "agentcard", "testdata", script))
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "A2A_URL="+iface, "A2A_KEY="+key)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s: %v\nstdout: %s\nstderr: %s", script, err, stdout.String(), stderr.String())
	}
	out := bytes.TrimSpace(stdout.Bytes())
	if i := bytes.LastIndexByte(out, '\n'); i >= 0 {
		out = out[i+1:]
	}
	if err := json.Unmarshal(out, res); err != nil {
		t.Fatalf("%s printed %q: %v\nstderr: %s", script, stdout.String(), err, stderr.String())
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("%s printed: %s\nstderr: %s", script, out, stderr.String())
		}
	})
}

func readJSON(name string, v any) error {
	b, err := os.ReadFile(name)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
