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

// Authenticate returns the principal r acts for. Every refusal is
// EUNAUTHORIZED with a message that never repeats the token.
func (a *Authenticator) Authenticate(ctx context.Context, r *http.Request) (agentgate.Principal, error) {
	values := r.Header.Values("Authorization")
	if len(values) == 0 {
		return agentgate.Principal{}, ErrNoCredentials
	}
	if len(values) > 1 {
		return agentgate.Principal{}, agentgate.Errorf(agentgate.EUNAUTHORIZED, "more than one Authorization header")
	}
	token, err := BearerToken(values[0])
	if err != nil {
		return agentgate.Principal{}, err
	}
	switch {
	case apikey.Looks(token):
		if a.Keys == nil {
			return agentgate.Principal{}, agentgate.Errorf(agentgate.EUNAUTHORIZED, "API keys are not accepted here")
		}
		return a.Keys.Authenticate(ctx, token)
	case strings.Count(token, ".") == 2:
		if a.JWT == nil {
			return agentgate.Principal{}, agentgate.Errorf(agentgate.EUNAUTHORIZED, "JWTs are not accepted here")
		}
		return a.JWT.Verify(token)
	}
	return agentgate.Principal{}, agentgate.Errorf(agentgate.EUNAUTHORIZED, "bearer token is neither an agentgate API key nor a JWT")
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
