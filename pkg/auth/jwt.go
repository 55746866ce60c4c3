// Package auth establishes who a request acts for: HS256 JWTs and API keys
// presented as "Authorization: Bearer <token>".
package auth

import (
	"errors"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/agentgate/agentgate/pkg/agentgate"
)

// MinSecretLen is the shortest JWT secret accepted: HS256 wants a key at
// least as long as its 256-bit output.
const MinSecretLen = 32

// DefaultLeeway is the clock skew allowed on exp, nbf and iat.
const DefaultLeeway = 30 * time.Second

// JWTVerifier verifies HS256 JWTs signed with one shared secret.
type JWTVerifier struct {
	secret []byte
	parser *jwt.Parser
}

// JWTOption tunes a JWTVerifier.
type JWTOption func(*jwtConfig)

type jwtConfig struct {
	leeway   time.Duration
	now      func() time.Time
	issuer   string
	audience string
}

// WithLeeway sets the allowed clock skew.
func WithLeeway(d time.Duration) JWTOption { return func(c *jwtConfig) { c.leeway = d } }

// WithClock sets the verifier's clock (tests).
func WithClock(now func() time.Time) JWTOption { return func(c *jwtConfig) { c.now = now } }

// WithIssuer requires the iss claim to equal iss.
func WithIssuer(iss string) JWTOption { return func(c *jwtConfig) { c.issuer = iss } }

// WithAudience requires the aud claim to contain aud.
func WithAudience(aud string) JWTOption { return func(c *jwtConfig) { c.audience = aud } }

// NewJWTVerifier returns a verifier for secret, which must be at least
// MinSecretLen bytes.
func NewJWTVerifier(secret []byte, opts ...JWTOption) (*JWTVerifier, error) {
	if len(secret) < MinSecretLen {
		return nil, agentgate.Errorf(agentgate.EINVALID, "the JWT secret must be at least %d bytes", MinSecretLen)
	}
	cfg := jwtConfig{leeway: DefaultLeeway, now: time.Now}
	for _, o := range opts {
		o(&cfg)
	}
	popts := []jwt.ParserOption{
		// Pinning the algorithm rejects "none" and RS/HS confusion (an RS256
		// token "verified" with the HMAC secret as its public key).
		jwt.WithValidMethods([]string{jwt.SigningMethodHS256.Alg()}),
		jwt.WithExpirationRequired(),
		jwt.WithIssuedAt(),
		jwt.WithLeeway(cfg.leeway),
		jwt.WithTimeFunc(cfg.now),
		jwt.WithStrictDecoding(),
	}
	if cfg.issuer != "" {
		popts = append(popts, jwt.WithIssuer(cfg.issuer))
	}
	if cfg.audience != "" {
		popts = append(popts, jwt.WithAudience(cfg.audience))
	}
	return &JWTVerifier{secret: secret, parser: jwt.NewParser(popts...)}, nil
}

// Verify checks token and returns the principal named by its sub claim.
// Every failure is an EUNAUTHORIZED error whose message says what was wrong
// without echoing the token.
func (v *JWTVerifier) Verify(token string) (agentgate.Principal, error) {
	var claims jwt.RegisteredClaims
	_, err := v.parser.ParseWithClaims(token, &claims, func(t *jwt.Token) (any, error) {
		// WithValidMethods already checked alg; checking the method's type
		// too costs nothing and keeps this function safe on its own.
		if _, ok := t.Method.(*jwt.SigningMethodHMAC); !ok {
			return nil, jwt.ErrTokenSignatureInvalid
		}
		return v.secret, nil
	})
	if err != nil {
		return agentgate.Principal{}, agentgate.Errorf(agentgate.EUNAUTHORIZED, "invalid JWT: %s", jwtReason(err))
	}
	if claims.Subject == "" {
		return agentgate.Principal{}, agentgate.Errorf(agentgate.EUNAUTHORIZED, "invalid JWT: no sub claim")
	}
	return agentgate.Principal{Subject: claims.Subject, Method: agentgate.AuthJWT, Scope: agentgate.ScopeUser}, nil
}

// jwtReason names a verification failure in a few caller-safe words.
func jwtReason(err error) string {
	for _, r := range []struct {
		err    error
		reason string
	}{
		{jwt.ErrTokenExpired, "expired"},
		{jwt.ErrTokenRequiredClaimMissing, "a required claim is missing"},
		{jwt.ErrTokenNotValidYet, "not valid yet"},
		{jwt.ErrTokenUsedBeforeIssued, "issued in the future"},
		{jwt.ErrTokenSignatureInvalid, "bad signature or algorithm"},
		{jwt.ErrTokenUnverifiable, "bad signature or algorithm"},
		{jwt.ErrTokenInvalidIssuer, "wrong issuer"},
		{jwt.ErrTokenInvalidAudience, "wrong audience"},
		{jwt.ErrTokenMalformed, "malformed"},
	} {
		if errors.Is(err, r.err) {
			return r.reason
		}
	}
	return "rejected"
}
