package app

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/agentgate/agentgate/pkg/agentgate"
	"github.com/agentgate/agentgate/pkg/apikey"
	"github.com/agentgate/agentgate/pkg/store"
	"github.com/agentgate/agentgate/pkg/store/dynamo"
	"github.com/agentgate/agentgate/pkg/web"
)

func mintJWT(t testing.TB, method jwt.SigningMethod, key any, claims jwt.MapClaims) string {
	t.Helper()
	s, err := jwt.NewWithClaims(method, claims).SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func claims(sub string, exp time.Duration) jwt.MapClaims {
	return jwt.MapClaims{"sub": sub, "exp": time.Now().Add(exp).Unix(), "iat": time.Now().Unix()}
}

type request struct {
	method, path, auth, body string
	remote, xff              string
}

func do(h http.Handler, rq request) *httptest.ResponseRecorder {
	var body *strings.Reader
	if rq.body != "" {
		body = strings.NewReader(rq.body)
	} else {
		body = strings.NewReader("")
	}
	req := httptest.NewRequest(rq.method, "http://agentgate.example"+rq.path, body)
	if rq.body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if rq.auth != "" {
		req.Header.Set("Authorization", rq.auth)
	}
	if rq.remote != "" {
		req.RemoteAddr = rq.remote
	}
	if rq.xff != "" {
		req.Header.Set("X-Forwarded-For", rq.xff)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func errorOf(t testing.TB, rec *httptest.ResponseRecorder) web.ErrorDetail {
	t.Helper()
	var body web.ErrorBody
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
		t.Fatalf("error body is not JSON: %v: %s", err, rec.Body)
	}
	return body.Error
}

// keysFor makes the keys the authentication cases use.
type testKeys struct{ user, revoked, expired, connector, unknown string }

func makeKeys(t *testing.T, st store.Store) testKeys {
	ctx := context.Background()
	svc := apikey.NewService(st, nil)
	mk := func(svc *apikey.Service, nk apikey.NewKey) apikey.Created {
		c, err := svc.Create(ctx, nk)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	var k testKeys
	k.user = mk(svc, apikey.NewKey{Owner: "alice"}).Key
	rev := mk(svc, apikey.NewKey{Owner: "alice", Name: "to revoke"})
	if _, err := svc.Revoke(ctx, "alice", rev.ID); err != nil {
		t.Fatal(err)
	}
	k.revoked = rev.Key
	// A key made two hours ago that expired an hour ago.
	past := apikey.NewService(st, func() time.Time { return time.Now().Add(-2 * time.Hour) })
	k.expired = mk(past, apikey.NewKey{Owner: "alice", ExpiresAt: time.Now().Add(-time.Hour)}).Key
	k.connector = mk(svc, apikey.NewKey{Owner: "alice", Scope: agentgate.ScopeConnector, Agent: "echo"}).Key
	// Well-formed, never issued: swap the secret of a real key.
	k.unknown = k.user[:len(k.user)-4] + "aaaa"
	return k
}

func TestChainThroughTheFunctions(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			st, _ := b.open(t)
			h := Handler(mustDeps(t, mustConfig(t, testEnv(nil)), st), Functions...)
			keys := makeKeys(t, st)
			rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
			if err != nil {
				t.Fatal(err)
			}
			bearer := func(s string) string { return "Bearer " + s }
			valid := mintJWT(t, jwt.SigningMethodHS256, []byte(jwtSecret), claims("alice", time.Hour))

			tests := []struct {
				name     string
				rq       request
				status   int
				code     string
				contains string // in the error message
				www      string // WWW-Authenticate, when a 401
			}{
				{"no credentials", request{method: "GET", path: "/api/keys"}, 401, agentgate.EUNAUTHORIZED, "missing bearer token", "Bearer"},
				// No authorization server is configured: no metadata to point at.
				{"no credentials on MCP", request{method: "POST", path: "/mcp"}, 401, agentgate.EUNAUTHORIZED, "missing", "Bearer"},
				{"basic auth", request{method: "GET", path: "/api/keys", auth: "Basic YWxpY2U6cHc="}, 401, agentgate.EUNAUTHORIZED, "Bearer scheme", `Bearer error="invalid_token"`},
				{"user key", request{method: "GET", path: "/api/keys", auth: bearer(keys.user)}, 200, "", "", ""},
				{"valid JWT", request{method: "GET", path: "/api/keys", auth: bearer(valid)}, 200, "", "", ""},
				{"expired JWT", request{method: "GET", path: "/api/keys", auth: bearer(mintJWT(t, jwt.SigningMethodHS256, []byte(jwtSecret), claims("alice", -time.Hour)))}, 401, agentgate.EUNAUTHORIZED, "expired", `Bearer error="invalid_token"`},
				{"JWT without exp", request{method: "GET", path: "/api/keys", auth: bearer(mintJWT(t, jwt.SigningMethodHS256, []byte(jwtSecret), jwt.MapClaims{"sub": "alice"}))}, 401, agentgate.EUNAUTHORIZED, "claim is missing", ""},
				{"JWT alg none", request{method: "GET", path: "/api/keys", auth: bearer(mintJWT(t, jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType, claims("alice", time.Hour)))}, 401, agentgate.EUNAUTHORIZED, "algorithm", ""},
				{"JWT RS256", request{method: "GET", path: "/api/keys", auth: bearer(mintJWT(t, jwt.SigningMethodRS256, rsaKey, claims("alice", time.Hour)))}, 401, agentgate.EUNAUTHORIZED, "algorithm", ""},
				{"JWT HS512", request{method: "GET", path: "/api/keys", auth: bearer(mintJWT(t, jwt.SigningMethodHS512, []byte(jwtSecret), claims("alice", time.Hour)))}, 401, agentgate.EUNAUTHORIZED, "algorithm", ""},
				{"JWT wrong secret", request{method: "GET", path: "/api/keys", auth: bearer(mintJWT(t, jwt.SigningMethodHS256, []byte("another-secret-0123456789-abcdefghij"), claims("alice", time.Hour)))}, 401, agentgate.EUNAUTHORIZED, "signature", ""},
				{"unknown key", request{method: "GET", path: "/api/keys", auth: bearer(keys.unknown)}, 401, agentgate.EUNAUTHORIZED, "invalid API key", ""},
				{"malformed key", request{method: "GET", path: "/api/keys", auth: bearer("agk_short")}, 401, agentgate.EUNAUTHORIZED, "invalid API key", ""},
				{"revoked key", request{method: "GET", path: "/api/keys", auth: bearer(keys.revoked)}, 401, agentgate.EUNAUTHORIZED, "revoked", ""},
				{"expired key", request{method: "GET", path: "/api/keys", auth: bearer(keys.expired)}, 401, agentgate.EUNAUTHORIZED, "expired", ""},
				{"connector key fenced out of the owner APIs", request{method: "GET", path: "/api/keys", auth: bearer(keys.connector)}, 403, agentgate.EFORBIDDEN, "connector credential", ""},
				// Past the scope fence, the MCP server itself refuses a key
				// whose agent ("echo" here) is not registered: 403, not the
				// fence's 403 for a route the scope may not call.
				{"connector key reaches the MCP endpoint", request{method: "POST", path: "/mcp", auth: bearer(keys.connector),
					body: `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`}, 403, "", "agent of this connector key is gone", ""},
				{"oversize body", request{method: "POST", path: "/api/keys", auth: bearer(keys.user), body: `{"name":"` + strings.Repeat("x", 2048) + `"}`}, 413, agentgate.ETOOLARGE, "1024-byte limit", ""},
				{"malformed JSON", request{method: "POST", path: "/api/keys", auth: bearer(keys.user), body: `{"name":`}, 400, agentgate.EINVALID, "truncated", ""},
				{"unknown field", request{method: "POST", path: "/api/keys", auth: bearer(keys.user), body: `{"nmae":"x"}`}, 400, agentgate.EINVALID, `unknown field "nmae"`, ""},
				{"wrong method", request{method: "PATCH", path: "/api/keys", auth: bearer(keys.user)}, 405, "method_not_allowed", "", ""},
				{"no metadata without an authorization server", request{method: "GET", path: "/.well-known/oauth-protected-resource/mcp"}, 404, agentgate.ENOTFOUND, "", ""},
			}
			for _, tc := range tests {
				t.Run(tc.name, func(t *testing.T) {
					rec := do(h, tc.rq)
					if rec.Code != tc.status {
						t.Fatalf("status %d, want %d: %s", rec.Code, tc.status, rec.Body)
					}
					if tc.code != "" {
						got := errorOf(t, rec)
						if got.Code != tc.code || !strings.Contains(got.Message, tc.contains) {
							t.Fatalf("error %+v, want code %q with %q", got, tc.code, tc.contains)
						}
						if strings.Contains(rec.Body.String(), tc.rq.auth[min(len(tc.rq.auth), 7):]) && tc.rq.auth != "" {
							t.Fatal("the response echoes the credential")
						}
					}
					if tc.code == "" && !strings.Contains(rec.Body.String(), tc.contains) {
						t.Fatalf("body %s, want it to say %q", rec.Body, tc.contains)
					}
					if tc.www != "" && rec.Header().Get("WWW-Authenticate") != tc.www {
						t.Fatalf("WWW-Authenticate %q, want %q", rec.Header().Get("WWW-Authenticate"), tc.www)
					}
					if tc.status == 401 && tc.www == "" && !strings.HasPrefix(rec.Header().Get("WWW-Authenticate"), "Bearer") {
						t.Fatalf("401 without a Bearer challenge: %q", rec.Header().Get("WWW-Authenticate"))
					}
				})
			}
		})
	}
}

func TestRateLimitIsSharedAcrossInstances(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			sa, sb := b.open(t)
			cfg := mustConfig(t, testEnv(map[string]string{
				"RATE_LIMIT_PUBLIC_PER_IP":     "3/1m",
				"MCP_AUTHORIZATION_SERVERS":    "https://auth.example",
				"RATE_LIMIT_API_PER_PRINCIPAL": "2/1m",
			}))
			instA := Handler(mustDeps(t, cfg, sa), Functions...)
			instB := Handler(mustDeps(t, cfg, sb), Functions...)
			meta := request{method: "GET", path: "/.well-known/oauth-protected-resource/mcp", remote: "198.51.100.7:4000"}

			for i, h := range []http.Handler{instA, instB, instA} {
				if rec := do(h, meta); rec.Code != 200 {
					t.Fatalf("request %d within budget: %d %s", i+1, rec.Code, rec.Body)
				}
			}
			rec := do(instB, meta)
			if rec.Code != 429 || errorOf(t, rec).Code != agentgate.ERATELIMITED {
				t.Fatalf("4th request across two instances: %d %s, want 429", rec.Code, rec.Body)
			}
			if ra := rec.Header().Get("Retry-After"); ra == "" || ra == "0" {
				t.Fatalf("Retry-After %q", ra)
			}
			// A forged X-Forwarded-For does not buy a new budget...
			forged := meta
			forged.xff = "203.0.113.99"
			if rec := do(instA, forged); rec.Code != 429 {
				t.Fatalf("forged X-Forwarded-For changed the limited IP: %d", rec.Code)
			}
			// ...while a different source address (API Gateway's sourceIp) has its own.
			other := meta
			other.remote = "198.51.100.8:4000"
			if rec := do(instA, other); rec.Code != 200 {
				t.Fatalf("another client IP: %d", rec.Code)
			}

			// Per principal: alice's budget of 2 holds across instances and IPs.
			auth := "Bearer " + mintJWT(t, jwt.SigningMethodHS256, []byte(jwtSecret), claims("alice", time.Hour))
			for i, rq := range []request{{remote: "192.0.2.1:1"}, {remote: "192.0.2.2:1"}, {remote: "192.0.2.3:1"}} {
				rq.method, rq.path, rq.auth = "GET", "/api/keys", auth
				h := []http.Handler{instA, instB, instA}[i]
				rec := do(h, rq)
				if want := []int{200, 200, 429}[i]; rec.Code != want {
					t.Fatalf("alice's request %d: %d, want %d: %s", i+1, rec.Code, want, rec.Body)
				}
			}
		})
	}
}

func TestRevokedKeyIsRefusedOnTheNextRequestEverywhere(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			sa, sb := b.open(t)
			cfg := mustConfig(t, testEnv(nil))
			instA := Handler(mustDeps(t, cfg, sa), Functions...)
			instB := Handler(mustDeps(t, cfg, sb), Functions...)
			jwtAuth := "Bearer " + mintJWT(t, jwt.SigningMethodHS256, []byte(jwtSecret), claims("bob", time.Hour))

			rec := do(instA, request{method: "POST", path: "/api/keys", auth: jwtAuth, body: `{"name":"ci","expiresIn":"24h"}`})
			if rec.Code != 201 || rec.Header().Get("Cache-Control") != "no-store" {
				t.Fatalf("create: %d %v %s", rec.Code, rec.Header(), rec.Body)
			}
			var created apikey.Created
			if err := json.Unmarshal(rec.Body.Bytes(), &created); err != nil || !strings.HasPrefix(created.Key, apikey.Prefix) || created.ExpiresAt == nil {
				t.Fatalf("created %+v (%v)", created, err)
			}
			keyAuth := "Bearer " + created.Key
			for range 2 {
				if rec := do(instB, request{method: "GET", path: "/api/keys", auth: keyAuth}); rec.Code != 200 {
					t.Fatalf("new key on the other instance: %d %s", rec.Code, rec.Body)
				}
			}
			// The listing shows use, and never a secret or hash. Uses are
			// written at most once a minute per key and instance (the first
			// at once), so the second may still be waiting.
			rec = do(instA, request{method: "GET", path: "/api/keys", auth: jwtAuth})
			body := readAll(t, rec.Body)
			var list struct{ Keys []apikey.Info }
			if err := json.Unmarshal([]byte(body), &list); err != nil || len(list.Keys) != 1 {
				t.Fatalf("list: %s (%v)", body, err)
			}
			if k := list.Keys[0]; k.UseCount < 1 || k.UseCount > 2 || k.LastUsedAt == nil || k.Name != "ci" || k.Prefix != apikey.DisplayPrefix(created.ID) {
				t.Fatalf("listed key %+v", k)
			}
			if strings.Contains(body, created.Key[len(apikey.DisplayPrefix(created.ID)):]) || strings.Contains(body, "hash") {
				t.Fatalf("listing leaks the secret or hash: %s", body)
			}

			// Another owner cannot revoke it, and learns nothing.
			other := "Bearer " + mintJWT(t, jwt.SigningMethodHS256, []byte(jwtSecret), claims("mallory", time.Hour))
			if rec := do(instA, request{method: "DELETE", path: "/api/keys/" + created.ID, auth: other}); rec.Code != 404 {
				t.Fatalf("another owner's revoke: %d", rec.Code)
			}
			if rec := do(instA, request{method: "DELETE", path: "/api/keys/" + created.ID, auth: jwtAuth}); rec.Code != 200 {
				t.Fatalf("revoke: %d %s", rec.Code, rec.Body)
			}
			rec = do(instB, request{method: "GET", path: "/api/keys", auth: keyAuth})
			if rec.Code != 401 || !strings.Contains(errorOf(t, rec).Message, "revoked") {
				t.Fatalf("revoked key on the other instance: %d %s", rec.Code, rec.Body)
			}
		})
	}
}

// stuckStore never answers a Query until the request gives up.
type stuckStore struct{ store.Store }

func (s stuckStore) Query(ctx context.Context, q store.Query) (store.Page, error) {
	<-ctx.Done()
	return store.Page{}, store.Unavailable(ctx.Err())
}

func TestDeadlineEndsASlowRequestWithAClearError(t *testing.T) {
	st, _ := backends()[0].open(t)
	cfg := mustConfig(t, testEnv(map[string]string{"REQUEST_TIMEOUT": "300ms"}))
	h := Handler(mustDeps(t, cfg, stuckStore{st}), Functions...)
	auth := "Bearer " + mintJWT(t, jwt.SigningMethodHS256, []byte(jwtSecret), claims("alice", time.Hour))
	rec := do(h, request{method: "GET", path: "/api/keys", auth: auth})
	if rec.Code != 504 || errorOf(t, rec).Code != agentgate.ETIMEOUT {
		t.Fatalf("got %d %s, want 504 timeout", rec.Code, rec.Body)
	}
	if _, err := ConfigFromEnv(testEnv(map[string]string{"REQUEST_TIMEOUT": "30s"})); err == nil {
		t.Fatal("a request timeout at or above API Gateway's 29 s was accepted")
	}
}

func TestStoreFailureDuringAuthenticationIs503(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			st, _ := b.open(t)
			keys := makeKeys(t, st)
			broken := st
			if b.name == "embedded" {
				st.Close()
			} else {
				s, err := dynamo.Open(context.Background(), dynamo.Config{Table: "t", Endpoint: "http://127.0.0.1:1", Region: "us-east-1"})
				if err != nil {
					t.Fatal(err)
				}
				broken = s
			}
			h := Handler(mustDeps(t, mustConfig(t, testEnv(nil)), broken), Functions...)
			rec := do(h, request{method: "GET", path: "/api/keys", auth: "Bearer " + keys.user})
			if rec.Code != 503 || errorOf(t, rec).Code != agentgate.EUNAVAILABLE || rec.Header().Get("WWW-Authenticate") != "" {
				t.Fatalf("got %d %v %s, want 503 without a challenge", rec.Code, rec.Header(), rec.Body)
			}
		})
	}
}

func TestMCPServerIsOffUnlessEnabled(t *testing.T) {
	st, _ := backends()[0].open(t)
	off := Handler(mustDeps(t, mustConfig(t, testEnv(map[string]string{"MCP_SERVER_ENABLED": ""})), st), Functions...)
	on := Handler(mustDeps(t, mustConfig(t, testEnv(map[string]string{"MCP_AUTHORIZATION_SERVERS": "https://auth.example"})), st), Functions...)
	for _, rq := range []request{
		{method: "GET", path: "/health/mcp"},
		{method: "POST", path: "/mcp"},
		{method: "GET", path: "/mcp"},
		{method: "DELETE", path: "/mcp"},
		{method: "GET", path: "/.well-known/oauth-protected-resource/mcp"},
	} {
		rec := do(off, rq)
		if rec.Code != 404 || errorOf(t, rec).Code != agentgate.ENOTFOUND || rec.Header().Get("WWW-Authenticate") != "" {
			t.Errorf("disabled %s %s: %d %v", rq.method, rq.path, rec.Code, rec.Header())
		}
	}
	if rec := do(on, request{method: "GET", path: "/health/mcp"}); rec.Code != 200 {
		t.Fatalf("enabled health: %d", rec.Code)
	}
	rec := do(on, request{method: "GET", path: "/.well-known/oauth-protected-resource/mcp"})
	var meta map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &meta); err != nil || meta["resource"] != "http://agentgate.example/mcp" ||
		fmt.Sprint(meta["authorization_servers"]) != "[https://auth.example]" {
		t.Fatalf("metadata %d %s", rec.Code, rec.Body)
	}
	// With an authorization server to name, a 401 points at the metadata.
	rec = do(on, request{method: "POST", path: "/mcp"})
	if want := `Bearer resource_metadata="http://agentgate.example/.well-known/oauth-protected-resource/mcp"`; rec.Code != 401 || rec.Header().Get("WWW-Authenticate") != want {
		t.Fatalf("401 challenge %d %q, want %q", rec.Code, rec.Header().Get("WWW-Authenticate"), want)
	}
	// The other functions do not depend on the MCP switch.
	if rec := do(off, request{method: "GET", path: "/health/connector"}); rec.Code != 200 {
		t.Fatalf("connector health with MCP off: %d", rec.Code)
	}
}

func TestConfigRejectsBadValues(t *testing.T) {
	for name, env := range map[string]map[string]string{
		"short secret":   {"A2A_JWT_SECRET": "short"},
		"bad bool":       {"MCP_SERVER_ENABLED": "yes please"},
		"bad body cap":   {"MAX_BODY_BYTES": "-1"},
		"bad rate limit": {"RATE_LIMIT_MCP_PER_IP": "lots"},
		"bad network":    {"AGENT_NETWORK": "everywhere"},
		"ask endpoint":   {"ASK_ENDPOINT": "ftp://docs.example/ask"},
		"ask timeout":    {"ASK_TIMEOUT": "1m"},
		"ask zero":       {"ASK_TIMEOUT": "0s"},
		"ask limit":      {"ASK_MAX_CONCURRENT": "0"},
		"ask not number": {"ASK_MAX_CONCURRENT": "many"},
	} {
		_, err := ConfigFromEnv(testEnv(env))
		if err == nil {
			t.Errorf("%s: accepted", name)
			continue
		}
		for k := range env {
			if !strings.Contains(err.Error(), k) {
				t.Errorf("%s: error %q does not name %s", name, err, k)
			}
		}
		if strings.Contains(err.Error(), "short") && name == "short secret" && strings.Contains(err.Error(), "\"short\"") {
			t.Errorf("error repeats the secret: %v", err)
		}
	}
}

// TestAskEndpointIsAnnouncedOnce: ask_docs pointed at ASK_ENDPOINT says so
// in one record (FunctionHandler and Serve announce it at start), naming the
// endpoint without its query, which may hold a token; on the built-in Q&A
// it says nothing.
func TestAskEndpointIsAnnouncedOnce(t *testing.T) {
	var logs bytes.Buffer
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewJSONHandler(&logs, nil)))
	t.Cleanup(func() { slog.SetDefault(prev) })
	for _, endpoint := range []string{"", "https://docs.example/ask?token=s3cret"} {
		logs.Reset()
		cfg := mustConfig(t, testEnv(map[string]string{"ASK_ENDPOINT": endpoint}))
		d, err := NewDeps(cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		d.Ask.Announce(t.Context())
		n := strings.Count(logs.String(), "ASK_ENDPOINT")
		switch {
		case endpoint == "" && n != 0:
			t.Errorf("built-in Q&A announced: %s", logs.String())
		case endpoint != "" && (n != 1 || !strings.Contains(logs.String(), `"upstream":"https://docs.example/ask"`) || strings.Contains(logs.String(), "s3cret")):
			t.Errorf("ASK_ENDPOINT announced %d times: %s", n, logs.String())
		}
	}
}
