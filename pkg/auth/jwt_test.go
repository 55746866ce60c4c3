package auth

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/agentgate/agentgate/pkg/agentgate"
	"github.com/agentgate/agentgate/pkg/store/storetest"
)

// testSecret is exactly MinSecretLen bytes.
var testSecret = []byte("0123456789abcdef0123456789abcdef")

// testNow is the verifiers' fixed clock in these tests.
var testNow = storetest.Epoch

func fixedClock() time.Time { return testNow }

// mint signs claims with method and key; the test fails if signing does.
func mint(t testing.TB, method jwt.SigningMethod, key any, claims jwt.MapClaims) string {
	t.Helper()
	tok, err := jwt.NewWithClaims(method, claims).SignedString(key)
	if err != nil {
		t.Fatalf("signing a %s test token: %v", method.Alg(), err)
	}
	return tok
}

// hs256 signs claims with the test secret.
func hs256(t testing.TB, claims jwt.MapClaims) string {
	return mint(t, jwt.SigningMethodHS256, testSecret, claims)
}

// claimsAt returns sub and exp claims, exp being testNow+ttl.
func claimsAt(sub string, ttl time.Duration) jwt.MapClaims {
	return jwt.MapClaims{"sub": sub, "exp": testNow.Add(ttl).Unix()}
}

// with returns a copy of c with more claims set (or removed, for nil).
func with(c jwt.MapClaims, kv ...any) jwt.MapClaims {
	out := jwt.MapClaims{}
	for k, v := range c {
		out[k] = v
	}
	for i := 0; i < len(kv); i += 2 {
		k := kv[i].(string)
		if kv[i+1] == nil {
			delete(out, k)
			continue
		}
		out[k] = kv[i+1]
	}
	return out
}

func b64(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }

func newVerifier(t testing.TB, secret []byte, opts ...JWTOption) *JWTVerifier {
	t.Helper()
	v, err := NewJWTVerifier(secret, append([]JWTOption{WithClock(fixedClock)}, opts...)...)
	if err != nil {
		t.Fatalf("NewJWTVerifier: %v", err)
	}
	return v
}

// checkRefusal asserts err is an EUNAUTHORIZED refusal whose message
// contains want and does not echo token (or any long part of it).
func checkRefusal(t testing.TB, err error, token, want string) {
	t.Helper()
	if err == nil {
		t.Fatalf("accepted, want a refusal mentioning %q", want)
	}
	if code := agentgate.ErrorCode(err); code != agentgate.EUNAUTHORIZED {
		t.Fatalf("error code = %q (%v), want %q", code, err, agentgate.EUNAUTHORIZED)
	}
	msg := agentgate.ErrorMessage(err)
	if !strings.Contains(msg, want) {
		t.Errorf("message %q does not mention %q", msg, want)
	}
	checkNoEcho(t, err, token)
}

// checkNoEcho fails if the error's text repeats the token or one of its
// segments (short strings are skipped: they occur in any English text).
func checkNoEcho(t testing.TB, err error, token string) {
	t.Helper()
	text := err.Error() + "\n" + agentgate.ErrorMessage(err)
	for _, s := range append([]string{token}, strings.Split(token, ".")...) {
		if len(s) >= 8 && strings.Contains(text, s) {
			t.Fatalf("error %q echoes the token (or a segment %q of it)", text, s)
		}
	}
}

func TestNewJWTVerifierSecretLength(t *testing.T) {
	for _, n := range []int{0, 1, 16, MinSecretLen - 1} {
		_, err := NewJWTVerifier(make([]byte, n))
		if agentgate.ErrorCode(err) != agentgate.EINVALID {
			t.Errorf("secret of %d bytes: err = %v, want EINVALID", n, err)
		}
	}
	for _, n := range []int{MinSecretLen, 64} {
		if _, err := NewJWTVerifier(make([]byte, n)); err != nil {
			t.Errorf("secret of %d bytes: %v", n, err)
		}
	}
	if MinSecretLen != 32 {
		t.Errorf("MinSecretLen = %d, want 32 (the HS256 output size)", MinSecretLen)
	}
}

func TestJWTVerify(t *testing.T) {
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKIXPublicKey(&rsaKey.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	publicPEM := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})

	valid := claimsAt("user-1", time.Hour)
	otherSecret := []byte("fedcba9876543210fedcba9876543210")

	// An RS256 header over an HMAC signature keyed with the RSA public key:
	// the classic algorithm confusion. A verifier that let the token pick its
	// algorithm, and whose key material is that PEM, would accept it.
	confused := jwt.NewWithClaims(jwt.SigningMethodHS256, valid)
	confused.Header["alg"] = "RS256"
	confusedToken, err := confused.SignedString(publicPEM)
	if err != nil {
		t.Fatal(err)
	}

	noneToken := mint(t, jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType, valid)
	validToken := hs256(t, valid)
	parts := strings.Split(validToken, ".")

	tests := []struct {
		name   string
		token  string
		secret []byte      // verifier secret; nil: testSecret
		opts   []JWTOption // more verifier options
		want   string      // accepted subject; "" means refused
		reason string      // for a refusal: text the message must contain
	}{
		{name: "valid", token: validToken, want: "user-1"},
		{name: "valid with iat and nbf now", token: hs256(t, with(valid, "iat", testNow.Unix(), "nbf", testNow.Unix())), want: "user-1"},
		{name: "expired beyond leeway", token: hs256(t, claimsAt("u", -31*time.Second)), reason: "expired"},
		{name: "expired long ago", token: hs256(t, claimsAt("u", -24*time.Hour)), reason: "expired"},
		{name: "expired within leeway", token: hs256(t, claimsAt("u", -29*time.Second)), want: "u"},
		{name: "expired beyond custom leeway", token: hs256(t, claimsAt("u", -6*time.Second)), opts: []JWTOption{WithLeeway(5 * time.Second)}, reason: "expired"},
		{name: "missing exp", token: hs256(t, jwt.MapClaims{"sub": "u"}), reason: "required claim is missing"},
		{name: "nbf beyond skew", token: hs256(t, with(valid, "nbf", testNow.Add(31*time.Second).Unix())), reason: "not valid yet"},
		{name: "nbf within skew", token: hs256(t, with(valid, "nbf", testNow.Add(29*time.Second).Unix())), want: "user-1"},
		{name: "iat beyond skew", token: hs256(t, with(valid, "iat", testNow.Add(31*time.Second).Unix())), reason: "issued in the future"},
		{name: "iat within skew", token: hs256(t, with(valid, "iat", testNow.Add(29*time.Second).Unix())), want: "user-1"},
		{name: "wrong secret", token: mint(t, jwt.SigningMethodHS256, otherSecret, valid), reason: "bad signature"},
		{name: "tampered payload", token: parts[0] + "." + b64(`{"sub":"admin","exp":`+strconv.FormatInt(testNow.Add(time.Hour).Unix(), 10)+`}`) + "." + parts[2], reason: "bad signature"},
		{name: "signature stripped", token: parts[0] + "." + parts[1] + ".", reason: "bad signature"},
		{name: "alg none", token: noneToken, reason: "bad signature or algorithm"},
		{name: "alg none with the real signature", token: b64(`{"alg":"none","typ":"JWT"}`) + "." + parts[1] + "." + parts[2], reason: "bad signature or algorithm"},
		{name: "HS384 same secret", token: mint(t, jwt.SigningMethodHS384, testSecret, valid), reason: "bad signature or algorithm"},
		{name: "HS512 same secret", token: mint(t, jwt.SigningMethodHS512, testSecret, valid), reason: "bad signature or algorithm"},
		// The verifier below holds the PEM as its HMAC secret: the control
		// case proves the same bytes work as HS256, so the refusal of the
		// RS256-labelled twin is the algorithm pin at work.
		{name: "HS256 keyed with the PEM (control)", token: mint(t, jwt.SigningMethodHS256, publicPEM, valid), secret: publicPEM, want: "user-1"},
		{name: "RS/HS confusion", token: confusedToken, secret: publicPEM, reason: "bad signature or algorithm"},
		{name: "RS/HS confusion, test secret", token: confusedToken, reason: "bad signature or algorithm"},
		{name: "RS256 properly signed", token: mint(t, jwt.SigningMethodRS256, rsaKey, valid), reason: "bad signature or algorithm"},
		{name: "RS256 properly signed, PEM verifier", token: mint(t, jwt.SigningMethodRS256, rsaKey, valid), secret: publicPEM, reason: "bad signature or algorithm"},
		{name: "missing sub", token: hs256(t, jwt.MapClaims{"exp": testNow.Add(time.Hour).Unix()}), reason: "no sub claim"},
		{name: "empty sub", token: hs256(t, with(valid, "sub", "")), reason: "no sub claim"},
		{name: "sub not a string", token: hs256(t, with(valid, "sub", 42)), reason: "malformed"},
		{name: "exp not a number", token: hs256(t, with(valid, "exp", "tomorrow")), reason: "malformed"},
		{name: "empty string", token: "", reason: "malformed"},
		{name: "one segment", token: "abcdefghijklmnop", reason: "malformed"},
		{name: "two segments", token: parts[0] + "." + parts[1], reason: "malformed"},
		{name: "four segments", token: validToken + ".abcdefgh", reason: "malformed"},
		{name: "dots only", token: "..", reason: "malformed"},
		{name: "header not base64", token: "!!!!!!!!." + parts[1] + "." + parts[2], reason: "malformed"},
		{name: "header not JSON", token: b64("not json at all") + "." + parts[1] + "." + parts[2], reason: "malformed"},
		{name: "payload not JSON", token: parts[0] + "." + b64("not json at all") + "." + parts[2], reason: "malformed"},
		{name: "padded segment (strict decoding)", token: parts[0] + "." + base64.URLEncoding.EncodeToString([]byte(`{"sub":"u","exp":1}`)) + "." + parts[2], reason: "malformed"},
		{name: "unicode", token: "ünï.cødé.✓✓✓✓✓✓✓✓", reason: "malformed"},

		// Issuer and audience, when configured, are enforced.
		{name: "issuer and audience match", token: hs256(t, with(valid, "iss", "https://id.example", "aud", "agentgate")),
			opts: []JWTOption{WithIssuer("https://id.example"), WithAudience("agentgate")}, want: "user-1"},
		{name: "audience among several", token: hs256(t, with(valid, "aud", []string{"other", "agentgate"})),
			opts: []JWTOption{WithAudience("agentgate")}, want: "user-1"},
		{name: "wrong issuer", token: hs256(t, with(valid, "iss", "https://evil.example")),
			opts: []JWTOption{WithIssuer("https://id.example")}, reason: "wrong issuer"},
		{name: "missing issuer", token: validToken,
			opts: []JWTOption{WithIssuer("https://id.example")}, reason: "required claim is missing"},
		{name: "wrong audience", token: hs256(t, with(valid, "aud", "someone-else")),
			opts: []JWTOption{WithAudience("agentgate")}, reason: "wrong audience"},
		{name: "missing audience", token: validToken,
			opts: []JWTOption{WithAudience("agentgate")}, reason: "required claim is missing"},
		{name: "issuer not required unless configured", token: hs256(t, with(valid, "iss", "anyone", "aud", "anything")), want: "user-1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			secret := tc.secret
			if secret == nil {
				secret = testSecret
			}
			v := newVerifier(t, secret, tc.opts...)
			p, err := v.Verify(tc.token)
			if tc.want == "" {
				checkRefusal(t, err, tc.token, tc.reason)
				if p != (agentgate.Principal{}) {
					t.Errorf("refusal returned a non-zero principal %+v", p)
				}
				return
			}
			if err != nil {
				t.Fatalf("Verify: %v", err)
			}
			want := agentgate.Principal{Subject: tc.want, Method: agentgate.AuthJWT, Scope: agentgate.ScopeUser}
			if p != want {
				t.Fatalf("principal = %+v, want %+v", p, want)
			}
		})
	}
}

// TestJWTVerifyUsesClock checks the verifier reads its clock on every call,
// not once at construction.
func TestJWTVerifyUsesClock(t *testing.T) {
	now := testNow
	v, err := NewJWTVerifier(testSecret, WithClock(func() time.Time { return now }))
	if err != nil {
		t.Fatal(err)
	}
	tok := hs256(t, claimsAt("u", time.Minute))
	if _, err := v.Verify(tok); err != nil {
		t.Fatalf("fresh token: %v", err)
	}
	now = now.Add(time.Minute + DefaultLeeway + time.Second)
	_, err = v.Verify(tok)
	checkRefusal(t, err, tok, "expired")
}
