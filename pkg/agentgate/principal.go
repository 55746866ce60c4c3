package agentgate

import "context"

// Scopes of a credential. A user credential (JWT or user API key) acts for its
// owner everywhere; a connector key acts only for one agent, through the MCP
// connector tools.
const (
	ScopeUser      = "user"
	ScopeConnector = "connector"
)

// Authentication methods.
const (
	AuthJWT    = "jwt"
	AuthAPIKey = "apikey"
)

// Principal is who a request acts for, as established by authentication.
type Principal struct {
	Subject string // the owner or user id (JWT sub, key owner)
	Method  string // AuthJWT or AuthAPIKey
	Scope   string // ScopeUser or ScopeConnector
	KeyID   string // public id of the API key used, if any
	Agent   string // for ScopeConnector: the one agent the key may reach
}

type principalKey struct{}

// WithPrincipal returns ctx carrying p.
func WithPrincipal(ctx context.Context, p Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// PrincipalFrom returns the principal in ctx, if the request was authenticated.
func PrincipalFrom(ctx context.Context) (Principal, bool) {
	p, ok := ctx.Value(principalKey{}).(Principal)
	return p, ok
}
