package auth

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/golang-jwt/jwt/v5"

	"github.com/agentgate/agentgate/pkg/agentgate"
	"github.com/agentgate/agentgate/pkg/apikey"
	"github.com/agentgate/agentgate/pkg/store/embedded"
	"github.com/agentgate/agentgate/pkg/store/storetest"
)

// The subject of the JWTs the fuzz targets start from.
const fuzzSubject = "fuzz-user"

// checkSignedByTest fails unless token is exactly an HS256 JWT whose
// signature the test recomputes with testSecret: nobody but the test holds
// the secret, so a verifier accepting anything else accepted a forgery.
func checkSignedByTest(t *testing.T, token string, p agentgate.Principal) {
	t.Helper()
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		t.Fatalf("accepted %q (%d segments) as %+v", token, len(parts), p)
	}
	mac := hmac.New(sha256.New, testSecret)
	mac.Write([]byte(parts[0] + "." + parts[1]))
	if want := base64.RawURLEncoding.EncodeToString(mac.Sum(nil)); parts[2] != want {
		t.Fatalf("accepted %q as %+v, but its signature is not the HS256 one (%s)", token, p, want)
	}
	var header struct {
		Alg string `json:"alg"`
	}
	raw, err := base64.RawURLEncoding.DecodeString(parts[0])
	if err != nil || json.Unmarshal(raw, &header) != nil || header.Alg != "HS256" {
		t.Fatalf("accepted %q as %+v, but its header %q does not say HS256", token, p, raw)
	}
	if p.Subject == "" || p.Method != agentgate.AuthJWT || p.Scope != agentgate.ScopeUser || p.KeyID != "" || p.Agent != "" {
		t.Fatalf("accepted %q as %+v", token, p)
	}
}

// fuzzJWTs mints the tokens the fuzz targets start from, valid at clock.
func fuzzJWTs(t testing.TB, now time.Time) (valid, expired, none string) {
	claims := jwt.MapClaims{"sub": fuzzSubject, "iat": now.Add(-time.Minute).Unix(), "exp": now.Add(time.Hour).Unix(), "iss": "https://id.example", "aud": "agentgate"}
	valid = mint(t, jwt.SigningMethodHS256, testSecret, claims)
	expired = mint(t, jwt.SigningMethodHS256, testSecret, with(claims, "exp", now.Add(-time.Hour).Unix()))
	none = mint(t, jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType, claims)
	return valid, expired, none
}

// jwtMessages is every message Verify may refuse with.
var jwtMessages = map[string]bool{}

func init() {
	for _, r := range []string{"expired", "a required claim is missing", "not valid yet", "issued in the future",
		"bad signature or algorithm", "wrong issuer", "wrong audience", "malformed", "rejected", "no sub claim"} {
		jwtMessages["invalid JWT: "+r] = true
	}
}

// FuzzJWTVerify feeds arbitrary strings to Verify: it must never panic, must
// refuse with EUNAUTHORIZED and one of its fixed messages (so nothing of the
// token is echoed), and may only accept HS256 tokens signed with the secret.
func FuzzJWTVerify(f *testing.F) {
	clock := storetest.NewClock()
	valid, expired, none := fuzzJWTs(f, clock.Now())
	for _, s := range []string{valid, expired, none, valid[:len(valid)-5], "", ".", "..", "a.b.c", strings.Repeat("A", 10000) + ".." + strings.Repeat("B", 10000)} {
		f.Add(s)
	}
	plain, err := NewJWTVerifier(testSecret, WithClock(clock.Now))
	if err != nil {
		f.Fatal(err)
	}
	strict, err := NewJWTVerifier(testSecret, WithClock(clock.Now), WithIssuer("https://id.example"), WithAudience("agentgate"))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, token string) {
		for _, v := range []*JWTVerifier{plain, strict} {
			p, err := v.Verify(token)
			if err != nil {
				if code := agentgate.ErrorCode(err); code != agentgate.EUNAUTHORIZED {
					t.Fatalf("Verify(%q): code %q (%v), want %q", token, code, err, agentgate.EUNAUTHORIZED)
				}
				if msg := err.Error(); !jwtMessages[msg] {
					t.Fatalf("Verify(%q): unexpected message %q", token, msg)
				}
				if p != (agentgate.Principal{}) {
					t.Fatalf("Verify(%q) refused but returned %+v", token, p)
				}
				continue
			}
			checkSignedByTest(t, token, p)
		}
	})
}

// FuzzAuthorizationHeader feeds arbitrary Authorization values through an
// Authenticator wired to a real JWT verifier and a real key service on an
// embedded store. It must never panic; a refusal is EUNAUTHORIZED (a store
// failure EUNAVAILABLE), never EINTERNAL, and does not echo the token; an
// acceptance is for exactly the key or a JWT the test issued.
func FuzzAuthorizationHeader(f *testing.F) {
	ctx := context.Background()
	clock := storetest.NewClock()
	st, err := embedded.Open(filepath.Join(f.TempDir(), "agentgate.db"), embedded.WithClock(clock.Now))
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { st.Close() })
	keys := apikey.NewService(st, clock.Now)
	const owner = "fuzz-owner"
	live, err := keys.Create(ctx, apikey.NewKey{Owner: owner, Name: "live"})
	if err != nil {
		f.Fatal(err)
	}
	revoked, err := keys.Create(ctx, apikey.NewKey{Owner: owner, Name: "revoked"})
	if err != nil {
		f.Fatal(err)
	}
	if _, err := keys.Revoke(ctx, owner, revoked.ID); err != nil {
		f.Fatal(err)
	}
	expiring, err := keys.Create(ctx, apikey.NewKey{Owner: owner, Name: "expired", Scope: agentgate.ScopeConnector, Agent: "weather", ExpiresAt: clock.Now().Add(time.Second)})
	if err != nil {
		f.Fatal(err)
	}
	clock.Advance(time.Minute) // expiring is now expired; the JWTs below stay valid

	verifier, err := NewJWTVerifier(testSecret, WithClock(clock.Now))
	if err != nil {
		f.Fatal(err)
	}
	a := &Authenticator{Keys: keys, JWT: verifier}
	valid, expired, none := fuzzJWTs(f, clock.Now())

	for _, h := range []string{
		"Bearer " + live.Key, "bearer " + live.Key, "Bearer " + revoked.Key, "Bearer " + expiring.Key,
		"Bearer " + live.Key[:len(live.Key)-1], "Bearer " + strings.ToUpper(live.Key),
		"Bearer " + valid, "Bearer " + expired, "Bearer " + none, "Bearer " + valid[:len(valid)/2],
		"", "Bearer", "Bearer  ", "Basic dXNlcjpwYXNz", "Bearer agk_", "Bearer " + strings.Repeat("x", MaxTokenLen+1),
	} {
		f.Add(h)
	}

	f.Fuzz(func(t *testing.T, header string) {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.Header["Authorization"] = []string{header}
		p, err := a.Authenticate(ctx, r)
		if err != nil {
			switch code := agentgate.ErrorCode(err); code {
			case agentgate.EUNAUTHORIZED, agentgate.EUNAVAILABLE:
			default:
				t.Fatalf("Authenticate(%q): code %q (%v), want %q or %q", header, code, err, agentgate.EUNAUTHORIZED, agentgate.EUNAVAILABLE)
			}
			if p != (agentgate.Principal{}) {
				t.Fatalf("Authenticate(%q) refused but returned %+v", header, p)
			}
			// Error texts are short words; no whitespace-free run of 24
			// characters in one can be anything but a piece of the input.
			msg := err.Error()
			for _, field := range strings.FieldsFunc(header, unicode.IsSpace) {
				if len(field) >= 24 && strings.Contains(msg, field) {
					t.Fatalf("Authenticate(%q): error %q echoes the token", header, msg)
				}
			}
			return
		}
		if p.Subject == "" {
			t.Fatalf("Authenticate(%q) accepted with an empty subject: %+v", header, p)
		}
		token, terr := BearerToken(header)
		if terr != nil {
			t.Fatalf("Authenticate(%q) accepted a header BearerToken refuses: %v", header, terr)
		}
		switch p.Method {
		case agentgate.AuthAPIKey:
			want := agentgate.Principal{Subject: owner, Method: agentgate.AuthAPIKey, Scope: agentgate.ScopeUser, KeyID: live.ID}
			if token != live.Key || p != want {
				t.Fatalf("Authenticate(%q) accepted key %q as %+v; only %q is valid, as %+v", header, token, p, live.Key, want)
			}
		case agentgate.AuthJWT:
			checkSignedByTest(t, token, p)
		default:
			t.Fatalf("Authenticate(%q): unknown method in %+v", header, p)
		}
	})
}
