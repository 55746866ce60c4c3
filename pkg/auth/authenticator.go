package auth

import (
	"context"
	"net/http"
	"strings"

	"github.com/agentgate/agentgate/pkg/agentgate"
	"github.com/agentgate/agentgate/pkg/apikey"
)

// KeyAuthenticator checks API keys (apikey.Service).
type KeyAuthenticator interface {
	Authenticate(ctx context.Context, key string) (agentgate.Principal, error)
}

// Authenticator reads "Authorization: Bearer <token>" and accepts an API key
// or, when a JWT verifier is configured, an HS256 JWT.
type Authenticator struct {
	Keys KeyAuthenticator // nil: API keys are not accepted
	JWT  *JWTVerifier     // nil: JWTs are not accepted
}

// MaxTokenLen bounds what is parsed at all; real tokens are far shorter.
const MaxTokenLen = 8 << 10

// ErrNoCredentials is returned when the request carries no bearer token.
var ErrNoCredentials = &agentgate.Error{Code: agentgate.EUNAUTHORIZED, Message: "missing bearer token: send Authorization: Bearer <API key or JWT>"}

// Rate-limit subjects name what kind of credential they come from, so that
// a JWT whose sub happens to spell a key id never shares that key's budget.
const (
	keySubject = "key:" // + the API key's id
	jwtSubject = "jwt:" // + the JWT's verified sub
)

// Authenticate returns the principal r acts for. Every refusal is
// EUNAUTHORIZED with a message that never repeats the token.
func (a *Authenticator) Authenticate(ctx context.Context, r *http.Request) (agentgate.Principal, error) {
	_, authenticate, err := a.Identify(r)
	if err != nil {
		return agentgate.Principal{}, err
	}
	return authenticate(ctx)
}

// Identify is authentication in two steps, for a caller that must know whom
// to count before the store has said who it is: the security chain runs its
// per-principal rate limit concurrently with the key read rather than after
// it.
//
// Identify itself makes no store call. It checks the Authorization header
// and the token's form and, for a JWT, verifies it completely; any failure
// is the refusal, at once. It returns the token's rate-limit subject: an API
// key's id ("key:<id>", which the key carries in clear), a JWT's verified sub
// ("jwt:<sub>"). The returned authenticate finishes the check: for an API key
// it reads the key (one store call; a store failure is EUNAVAILABLE, not a
// refusal), for a JWT it has nothing left to do.
func (a *Authenticator) Identify(r *http.Request) (subject string, authenticate func(context.Context) (agentgate.Principal, error), err error) {
	values := r.Header.Values("Authorization")
	if len(values) == 0 {
		return "", nil, ErrNoCredentials
	}
	if len(values) > 1 {
		return "", nil, agentgate.Errorf(agentgate.EUNAUTHORIZED, "more than one Authorization header")
	}
	token, err := BearerToken(values[0])
	if err != nil {
		return "", nil, err
	}
	switch {
	case apikey.Looks(token):
		if a.Keys == nil {
			return "", nil, agentgate.Errorf(agentgate.EUNAUTHORIZED, "API keys are not accepted here")
		}
		id, ok := apikey.KeyID(token)
		if !ok {
			return "", nil, apikey.ErrInvalidKey
		}
		return keySubject + id, func(ctx context.Context) (agentgate.Principal, error) {
			return a.Keys.Authenticate(ctx, token)
		}, nil
	case strings.Count(token, ".") == 2:
		if a.JWT == nil {
			return "", nil, agentgate.Errorf(agentgate.EUNAUTHORIZED, "JWTs are not accepted here")
		}
		p, err := a.JWT.Verify(token)
		if err != nil {
			return "", nil, err
		}
		return jwtSubject + p.Subject, func(context.Context) (agentgate.Principal, error) { return p, nil }, nil
	}
	return "", nil, agentgate.Errorf(agentgate.EUNAUTHORIZED, "bearer token is neither an agentgate API key nor a JWT")
}

// BearerToken extracts the token of an RFC 6750 "Bearer" Authorization value.
func BearerToken(header string) (string, error) {
	header = strings.TrimSpace(header)
	if strings.EqualFold(header, "Bearer") {
		return "", agentgate.Errorf(agentgate.EUNAUTHORIZED, "empty bearer token")
	}
	scheme, token, ok := strings.Cut(header, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", agentgate.Errorf(agentgate.EUNAUTHORIZED, "Authorization must use the Bearer scheme")
	}
	token = strings.TrimSpace(token)
	switch {
	case token == "":
		return "", agentgate.Errorf(agentgate.EUNAUTHORIZED, "empty bearer token")
	case len(token) > MaxTokenLen:
		return "", agentgate.Errorf(agentgate.EUNAUTHORIZED, "bearer token too long")
	case strings.ContainsAny(token, " \t\r\n"):
		return "", agentgate.Errorf(agentgate.EUNAUTHORIZED, "malformed bearer token")
	}
	return token, nil
}
