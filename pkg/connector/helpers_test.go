package connector_test

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/agentgate/agentgate/pkg/agentgate"
	"github.com/agentgate/agentgate/pkg/app/apptest"
	"github.com/agentgate/agentgate/pkg/store/dynamo/dynalite"
)

func TestMain(m *testing.M) {
	code := m.Run()
	dynalite.Stop() // started by the dynamodb stacks
	os.Exit(code)
}

// answer is an HTTP answer, its JSON body decoded.
type answer struct {
	status int
	header http.Header
	raw    []byte
	body   map[string]any
}

// message is the answer's error message, if it is an error.
func (a answer) message() string {
	if e, ok := a.body["error"].(map[string]any); ok {
		s, _ := e["message"].(string)
		return s
	}
	return ""
}

func (a answer) decode(t *testing.T, v any) {
	t.Helper()
	if err := json.Unmarshal(a.raw, v); err != nil {
		t.Fatalf("decoding %s: %v", a.raw, err)
	}
}

// call sends one request to the instance at base, with token as bearer (""
// for none) and body as JSON unless ctype says otherwise.
func call(t *testing.T, base, token, method, path string, body any, ctype ...string) answer {
	t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		data, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		rd = strings.NewReader(string(data))
	}
	req, err := http.NewRequestWithContext(t.Context(), method, base+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if rd != nil {
		ct := "application/json"
		if len(ctype) > 0 {
			ct = ctype[0]
		}
		req.Header.Set("Content-Type", ct)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	a := answer{status: res.StatusCode, header: res.Header, raw: raw}
	_ = json.Unmarshal(raw, &a.body)
	return a
}

// want fails unless a has status.
func want(t *testing.T, what string, a answer, status int) answer {
	t.Helper()
	if a.status != status {
		t.Fatalf("%s: %d %s, want %d", what, a.status, a.raw, status)
	}
	return a
}

// echoTemplate is the example template as YAML, renamed and pointed at the
// stack's sample agent; public false keeps its card private.
func echoTemplate(t *testing.T, s *apptest.Stack, name string, public bool) string {
	t.Helper()
	data, err := os.ReadFile("../../examples/agents/echo.yaml")
	if err != nil {
		t.Fatal(err)
	}
	y := string(data)
	y = strings.Replace(y, "name: sample-echo", "name: "+name, 1)
	y = strings.Replace(y, "endpoint: http://127.0.0.1:9090/", "endpoint: "+sampleEndpoint(t, s), 1)
	if !public {
		y = strings.Replace(y, "public_card: true", "public_card: false", 1)
	}
	return y
}

// sampleEndpoint is the stack's sample agent's A2A endpoint.
func sampleEndpoint(t *testing.T, s *apptest.Stack) string {
	t.Helper()
	a, err := s.Deps.Agents.Get(t.Context(), s.AgentID)
	if err != nil {
		t.Fatal(err)
	}
	return a.Template.Endpoint
}

// register registers echoTemplate(name) for token's owner and returns the
// answer.
func register(t *testing.T, s *apptest.Stack, base, token, name string, public bool) answer {
	t.Helper()
	return call(t, base, token, "POST", "/api/agents", echoTemplate(t, s, name, public), "application/yaml")
}

// mint mints a connector key for name and returns its secret.
func mint(t *testing.T, base, token, name string) (string, answer) {
	t.Helper()
	a := want(t, "mint "+name, call(t, base, token, "POST", "/api/agents/"+name+"/connector/key", nil), http.StatusCreated)
	k, _ := a.body["key"].(string)
	if !strings.HasPrefix(k, "agk_") {
		t.Fatalf("minted %s", a.raw)
	}
	return k, a
}

var user = agentgate.ScopeUser
