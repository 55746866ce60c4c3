package auth

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/agentgate/agentgate/pkg/agentgate"
	"github.com/agentgate/agentgate/pkg/apikey"
	"github.com/agentgate/agentgate/pkg/store"
)

// fakeKeys is a KeyAuthenticator that records the keys it is asked about
// and answers with a fixed principal or error.
type fakeKeys struct {
	got  []string
	ctxs []context.Context
	p    agentgate.Principal
	err  error
}

func (f *fakeKeys) Authenticate(ctx context.Context, key string) (agentgate.Principal, error) {
	f.got = append(f.got, key)
	f.ctxs = append(f.ctxs, ctx)
	return f.p, f.err
}

// A well-formed key: prefix, 13-character id, '_', 52-character secret.
const shapedKey = "agk_abcdefghijklm_abcdefghijklmnopqrstuvwxyz234567abcdefghijklmnopqrst"

func request(headers ...string) *http.Request {
	r := httptest.NewRequest(http.MethodGet, "/v1/agents", nil)
	for _, h := range headers {
		r.Header.Add("Authorization", h)
	}
	return r
}

func TestAuthenticatorRouting(t *testing.T) {
	keyPrincipal := agentgate.Principal{Subject: "owner-1", Method: agentgate.AuthAPIKey, Scope: agentgate.ScopeConnector, KeyID: "abcdefghijklm", Agent: "weather"}
	keys := &fakeKeys{p: keyPrincipal}
	a := &Authenticator{Keys: keys, JWT: newVerifier(t, testSecret)}
	jwtToken := hs256(t, claimsAt("user-9", time.Hour))

	type ctxKey struct{}
	ctx := context.WithValue(context.Background(), ctxKey{}, "marker")

	t.Run("API key goes to Keys", func(t *testing.T) {
		keys.got, keys.ctxs = nil, nil
		p, err := a.Authenticate(ctx, request("Bearer "+shapedKey))
		if err != nil {
			t.Fatal(err)
		}
		if p != keyPrincipal {
			t.Fatalf("principal = %+v, want %+v", p, keyPrincipal)
		}
		if len(keys.got) != 1 || keys.got[0] != shapedKey {
			t.Fatalf("Keys got %q, want exactly [%q]", keys.got, shapedKey)
		}
		if keys.ctxs[0].Value(ctxKey{}) != "marker" {
			t.Fatal("Keys did not receive the caller's context")
		}
	})

	t.Run("a malformed agk_ token never reaches Keys", func(t *testing.T) {
		keys.got = nil
		// The fake would accept anything: the refusal is the form's.
		_, err := a.Authenticate(ctx, request("Bearer agk_short"))
		checkRefusal(t, err, "agk_short", "invalid API key")
		if len(keys.got) != 0 {
			t.Fatalf("Keys got %q", keys.got)
		}
	})

	t.Run("JWT goes to the verifier", func(t *testing.T) {
		keys.got = nil
		p, err := a.Authenticate(ctx, request("Bearer "+jwtToken))
		if err != nil {
			t.Fatal(err)
		}
		want := agentgate.Principal{Subject: "user-9", Method: agentgate.AuthJWT, Scope: agentgate.ScopeUser}
		if p != want {
			t.Fatalf("principal = %+v, want %+v", p, want)
		}
		if len(keys.got) != 0 {
			t.Fatalf("a JWT reached Keys: %q", keys.got)
		}
	})

	t.Run("lower-case scheme", func(t *testing.T) {
		p, err := a.Authenticate(ctx, request("bearer "+jwtToken))
		if err != nil {
			t.Fatal(err)
		}
		if p.Subject != "user-9" {
			t.Fatalf("subject = %q", p.Subject)
		}
		if _, err := a.Authenticate(ctx, request("BEARER "+jwtToken)); err != nil {
			t.Fatalf("upper-case scheme: %v", err)
		}
	})

	t.Run("surrounding spaces", func(t *testing.T) {
		if _, err := a.Authenticate(ctx, request("  Bearer   "+jwtToken+"  ")); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("bad JWT is refused by the verifier", func(t *testing.T) {
		bad := mint(t, jwt.SigningMethodHS384, testSecret, claimsAt("u", time.Hour))
		_, err := a.Authenticate(ctx, request("Bearer "+bad))
		checkRefusal(t, err, bad, "invalid JWT")
	})

	t.Run("neither key nor JWT", func(t *testing.T) {
		keys.got = nil
		for _, tok := range []string{"opaque-token-value", "a.b", "a.b.c.d", "AGK_" + shapedKey[4:]} {
			_, err := a.Authenticate(ctx, request("Bearer "+tok))
			checkRefusal(t, err, tok, "neither")
		}
		if len(keys.got) != 0 {
			t.Fatalf("Keys got %q", keys.got)
		}
	})
}

func TestAuthenticatorRefusals(t *testing.T) {
	keys := &fakeKeys{p: agentgate.Principal{Subject: "x", Method: agentgate.AuthAPIKey, Scope: agentgate.ScopeUser}}
	a := &Authenticator{Keys: keys, JWT: newVerifier(t, testSecret)}
	jwtToken := hs256(t, claimsAt("user-9", time.Hour))

	tests := []struct {
		name    string
		headers []string
		reason  string
	}{
		{"two headers", []string{"Bearer " + shapedKey, "Bearer " + jwtToken}, "more than one"},
		{"two identical headers", []string{"Bearer " + shapedKey, "Bearer " + shapedKey}, "more than one"},
		{"basic", []string{"Basic dXNlcjpwYXNzd29yZA=="}, "Bearer scheme"},
		{"basic with a key", []string{"Basic " + shapedKey}, "Bearer scheme"},
		{"token without scheme", []string{shapedKey}, "Bearer scheme"},
		{"bearer prefix glued", []string{"Bearer" + shapedKey}, "Bearer scheme"},
		{"scheme only", []string{"Bearer"}, "empty bearer token"},
		{"scheme and spaces", []string{"Bearer  "}, "empty bearer token"},
		{"empty header", []string{""}, "Bearer scheme"},
		{"tab separator", []string{"Bearer\t" + shapedKey}, "Bearer scheme"},
		{"over-long token", []string{"Bearer " + shapedKey + strings.Repeat("a", MaxTokenLen)}, "too long"},
		{"over-long JWT", []string{"Bearer " + strings.Repeat("a", MaxTokenLen-1) + ".b.c"}, "too long"},
		{"two tokens", []string{"Bearer " + shapedKey + " " + jwtToken}, "malformed"},
		{"tab inside", []string{"Bearer " + shapedKey + "\t" + jwtToken}, "malformed"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			keys.got = nil
			r := request(tc.headers...)
			_, err := a.Authenticate(context.Background(), r)
			checkRefusal(t, err, strings.Join(tc.headers, "\n"), tc.reason)
			if errors.Is(err, ErrNoCredentials) {
				t.Fatalf("a present but bad header reported as missing: %v", err)
			}
			for _, h := range tc.headers {
				if _, tok, ok := strings.Cut(h, " "); ok && len(tok) >= 8 && strings.Contains(err.Error(), strings.TrimSpace(tok)) {
					t.Fatalf("error %q echoes the token", err)
				}
			}
			if len(keys.got) != 0 {
				t.Fatalf("a refused header reached Keys with %q", keys.got)
			}
		})
	}

	t.Run("token of exactly MaxTokenLen is parsed", func(t *testing.T) {
		keys.got = nil
		tok := "agk_" + strings.Repeat("a", MaxTokenLen-4)
		// Past the length check, refused for its form as a key.
		_, err := a.Authenticate(context.Background(), request("Bearer "+tok))
		if err != apikey.ErrInvalidKey {
			t.Fatalf("err = %v, want the key form's refusal", err)
		}
		if len(keys.got) != 0 {
			t.Fatalf("Keys got %d calls, want none", len(keys.got))
		}
	})

	t.Run("no header", func(t *testing.T) {
		_, err := a.Authenticate(context.Background(), request())
		if !errors.Is(err, ErrNoCredentials) {
			t.Fatalf("err = %v, want ErrNoCredentials", err)
		}
		if agentgate.ErrorCode(err) != agentgate.EUNAUTHORIZED {
			t.Fatalf("code = %q", agentgate.ErrorCode(err))
		}
	})

	t.Run("other headers do not count", func(t *testing.T) {
		r := request()
		r.Header.Set("X-Api-Key", shapedKey)
		r.Header.Set("Proxy-Authorization", "Bearer "+jwtToken)
		if _, err := a.Authenticate(context.Background(), r); !errors.Is(err, ErrNoCredentials) {
			t.Fatalf("err = %v, want ErrNoCredentials", err)
		}
	})
}

func TestAuthenticatorNotConfigured(t *testing.T) {
	jwtToken := hs256(t, claimsAt("user-9", time.Hour))

	t.Run("keys", func(t *testing.T) {
		a := &Authenticator{JWT: newVerifier(t, testSecret)}
		_, err := a.Authenticate(context.Background(), request("Bearer "+shapedKey))
		checkRefusal(t, err, shapedKey, "API keys are not accepted")
		// JWTs still work.
		if _, err := a.Authenticate(context.Background(), request("Bearer "+jwtToken)); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("jwt", func(t *testing.T) {
		keys := &fakeKeys{p: agentgate.Principal{Subject: "x"}}
		a := &Authenticator{Keys: keys}
		_, err := a.Authenticate(context.Background(), request("Bearer "+jwtToken))
		checkRefusal(t, err, jwtToken, "JWTs are not accepted")
		if len(keys.got) != 0 {
			t.Fatalf("a JWT reached Keys: %q", keys.got)
		}
	})
	t.Run("nothing", func(t *testing.T) {
		a := &Authenticator{}
		for _, tok := range []string{shapedKey, jwtToken} {
			_, err := a.Authenticate(context.Background(), request("Bearer "+tok))
			checkRefusal(t, err, tok, "not accepted")
		}
	})
}

// A store failure behind the key check is not the caller's fault: it must
// arrive at the edge as EUNAVAILABLE (503), unchanged, not as a 401.
func TestAuthenticatorPassesStoreFailureThrough(t *testing.T) {
	cause := store.Unavailable(errors.New("table throttled"))
	keys := &fakeKeys{err: cause}
	a := &Authenticator{Keys: keys, JWT: newVerifier(t, testSecret)}
	p, err := a.Authenticate(context.Background(), request("Bearer "+shapedKey))
	if err != cause {
		t.Fatalf("err = %#v, want the Keys error unchanged", err)
	}
	if code := agentgate.ErrorCode(err); code != agentgate.EUNAVAILABLE {
		t.Fatalf("code = %q, want %q", code, agentgate.EUNAVAILABLE)
	}
	if !errors.Is(err, store.ErrUnavailable) {
		t.Fatal("error no longer matches store.ErrUnavailable")
	}
	if p != (agentgate.Principal{}) {
		t.Fatalf("principal = %+v on error", p)
	}
}

func TestBearerToken(t *testing.T) {
	for _, tc := range []struct{ header, want string }{
		{"Bearer abc", "abc"},
		{"bearer abc", "abc"},
		{"bEaReR abc", "abc"},
		{" Bearer   abc ", "abc"},
	} {
		got, err := BearerToken(tc.header)
		if err != nil || got != tc.want {
			t.Errorf("BearerToken(%q) = %q, %v; want %q", tc.header, got, err, tc.want)
		}
	}
	for _, h := range []string{"", "Bearer", "Bearer ", "Bearer \t ", "Token abc", "Bearerabc", "Bearer a b", "Bearer a\nb", "Bearer a\rb"} {
		if got, err := BearerToken(h); err == nil || agentgate.ErrorCode(err) != agentgate.EUNAUTHORIZED || got != "" {
			t.Errorf("BearerToken(%q) = %q, %v; want an EUNAUTHORIZED refusal", h, got, err)
		}
	}
}

// Identify names whom a request counts as without any store call (Keys is
// the only thing here that could make one): an API key by its id, a JWT by
// its verified sub; what fails locally is refused at once.
func TestIdentifyMakesNoStoreCall(t *testing.T) {
	keyPrincipal := agentgate.Principal{Subject: "owner-1", Method: agentgate.AuthAPIKey, Scope: agentgate.ScopeUser, KeyID: "abcdefghijklm"}
	keys := &fakeKeys{p: keyPrincipal}
	a := &Authenticator{Keys: keys, JWT: newVerifier(t, testSecret)}
	ctx := context.Background()

	subject, authenticate, err := a.Identify(request("Bearer " + shapedKey))
	if err != nil || subject != "key:abcdefghijklm" {
		t.Fatalf("API key: subject %q, err %v; want key:abcdefghijklm", subject, err)
	}
	if len(keys.got) != 0 {
		t.Fatalf("Identify reached Keys: %q", keys.got)
	}
	if p, err := authenticate(ctx); err != nil || p != keyPrincipal || len(keys.got) != 1 {
		t.Fatalf("authenticate: %+v, %v after %d Keys calls; want %+v after 1", p, err, len(keys.got), keyPrincipal)
	}

	keys.got = nil
	subject, authenticate, err = a.Identify(request("Bearer " + hs256(t, claimsAt("user-9", time.Hour))))
	if err != nil || subject != "jwt:user-9" {
		t.Fatalf("JWT: subject %q, err %v; want jwt:user-9", subject, err)
	}
	want := agentgate.Principal{Subject: "user-9", Method: agentgate.AuthJWT, Scope: agentgate.ScopeUser}
	if p, err := authenticate(ctx); err != nil || p != want {
		t.Fatalf("JWT authenticate: %+v, %v; want %+v", p, err, want)
	}

	// A JWT whose sub spells a key id does not share that key's budget.
	subject, _, _ = a.Identify(request("Bearer " + hs256(t, claimsAt("key:abcdefghijklm", time.Hour))))
	if subject == "key:abcdefghijklm" {
		t.Fatal("a JWT's subject collides with an API key's")
	}

	for name, tc := range map[string]struct{ header, reason string }{
		"malformed key": {"Bearer agk_short", "invalid API key"},
		"expired JWT":   {"Bearer " + hs256(t, claimsAt("user-9", -time.Hour)), "expired"},
		"bad JWT":       {"Bearer " + mint(t, jwt.SigningMethodHS384, testSecret, claimsAt("u", time.Hour)), "invalid JWT"},
		"neither":       {"Bearer opaque-token-value", "neither"},
		"not bearer":    {"Basic YWxpY2U6cHc=", "Bearer scheme"},
		"no header":     {"", "missing bearer token"},
	} {
		t.Run(name, func(t *testing.T) {
			keys.got = nil
			var r *http.Request
			if tc.header == "" {
				r = request()
			} else {
				r = request(tc.header)
			}
			subject, authenticate, err := a.Identify(r)
			checkRefusal(t, err, tc.header, tc.reason)
			if subject != "" || authenticate != nil || len(keys.got) != 0 {
				t.Fatalf("refusal came with subject %q, authenticate %v, %d Keys calls", subject, authenticate != nil, len(keys.got))
			}
		})
	}
}
