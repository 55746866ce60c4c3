// Package config is agentgate's configuration: what a function or the
// local server reads from its environment, each value checked at start-up.
// It imports nothing heavy, so every function can read it and link only
// its own code.
package config

import (
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/agentgate/agentgate/pkg/auth"
	"github.com/agentgate/agentgate/pkg/logging"
	"github.com/agentgate/agentgate/pkg/netguard"
	"github.com/agentgate/agentgate/pkg/ratelimit"
	"github.com/agentgate/agentgate/pkg/store"
	"github.com/agentgate/agentgate/pkg/web"
)

// Version is agentgate's version, set at build time with
// -ldflags "-X github.com/agentgate/agentgate/pkg/config.Version=...".
var Version = "dev"

// DefaultLimits are the rate limits unless RATE_LIMIT_<CLASS>_PER_IP or
// _PER_PRINCIPAL say otherwise.
var DefaultLimits = map[string]web.Limits{
	web.ClassMCP:    {PerIP: ratelimit.Rule{Limit: 600, Window: time.Minute}, PerPrincipal: ratelimit.Rule{Limit: 600, Window: time.Minute}},
	web.ClassAPI:    {PerIP: ratelimit.Rule{Limit: 300, Window: time.Minute}, PerPrincipal: ratelimit.Rule{Limit: 300, Window: time.Minute}},
	web.ClassPublic: {PerIP: ratelimit.Rule{Limit: 60, Window: time.Minute}},
}

// Config is what a function or the local server reads from its environment.
type Config struct {
	// TableName selects the DynamoDB store (TABLE_NAME). Empty selects the
	// embedded store at DataPath.
	TableName string
	// DynamoEndpoint overrides the DynamoDB endpoint
	// (AWS_ENDPOINT_URL_DYNAMODB), for dynalite or DynamoDB Local.
	DynamoEndpoint string
	// Region is the AWS region (AWS_REGION). When empty, a function reads
	// AWS_DEFAULT_REGION, and agentgate's commands the SDK's whole chain
	// (profiles).
	Region string
	// DataPath is the embedded store's file (AGENTGATE_DATA).
	DataPath string
	// LogLevel is LOG_LEVEL.
	LogLevel slog.Level

	// JWTSecret verifies caller JWTs (A2A_JWT_SECRET); empty accepts no JWT.
	// Never logged: Config has no String method that would print it, and
	// LogValue hides it.
	JWTSecret   string
	JWTIssuer   string // JWT_ISSUER: required iss, if set
	JWTAudience string // JWT_AUDIENCE: required aud, if set
	// MCPEnabled is MCP_SERVER_ENABLED: the MCP function answers 404 on
	// every route unless it is true.
	MCPEnabled bool
	// MaxBody caps request bodies (MAX_BODY_BYTES).
	MaxBody int64
	// Timeout is each request's deadline (REQUEST_TIMEOUT), below API
	// Gateway's 30 s.
	Timeout time.Duration
	// Limits are the rate limits by class.
	Limits map[string]web.Limits
	// PublicBaseURL is the API's public base URL (PUBLIC_BASE_URL), for
	// links the API hands out; empty derives it from each request.
	PublicBaseURL string
	// AuthorizationServers lists OAuth authorization servers for the MCP
	// protected-resource metadata (MCP_AUTHORIZATION_SERVERS, comma-separated).
	AuthorizationServers []string
	// AllowedOrigins are the browser origins that may call the MCP
	// endpoints (ALLOWED_ORIGINS, comma-separated, e.g.
	// https://app.example.com); requests without Origin (clients that are
	// not browsers) are not affected. Unset allows no browser origin.
	AllowedOrigins []string
	// LoopbackOrigins also allows http://localhost, 127.0.0.1 and [::1]
	// origins on any port. Not read from the environment: `agentgate serve`
	// sets it, since only a local server may trust pages on the user's own
	// machine.
	LoopbackOrigins bool
	// Clock is every service's notion of now (nil: time.Now). Not read from
	// the environment: a test that runs agentgate on a fixed clock sets it
	// and opens the store on the same one, so that nothing compares a time
	// from one clock with a time from another.
	Clock func() time.Time
	// AgentNetwork says which addresses agent endpoints may have, checked
	// when an agent is registered and again on every connection
	// (AGENT_NETWORK): "public" (the default), "vpc" (private addresses
	// too, for agents in the same VPC) or "local" (loopback and private
	// too; `agentgate serve` uses it, a function on AWS must not, since the
	// Lambda runtime API listens on loopback). Link-local addresses, the
	// instance metadata service among them, are never allowed.
	AgentNetwork netguard.Policy

	// ConsentSecret signs MCP consent state (CONSENT_SECRET, at least 32
	// bytes); required when the MCP server is on and consent is required.
	ConsentSecret string
	// RequireConsent gates every MCP dispatch on the user's yes
	// (REQUIRE_DISPATCH_CONSENT, default true). Turn it off only for
	// trusted, non-interactive deployments.
	RequireConsent bool
	// MCPTools, MCPResources and MCPPrompts are the MCP allow-lists
	// (MCP_TOOLS, MCP_RESOURCES, MCP_PROMPTS: comma-separated names, or
	// "none"); nil allows everything.
	MCPTools, MCPResources, MCPPrompts []string

	// AdminSubjects are the subjects (JWT sub, key owner) that may change
	// deployment settings such as the MCP URL (ADMIN_SUBJECTS,
	// comma-separated); none when unset.
	AdminSubjects []string
	// SystemAgent names the agent that can never be exposed as an MCP
	// tool (SYSTEM_AGENT); none when unset.
	SystemAgent string

	// Ask configures ask_docs and get_agent_requirements, in the askproxy
	// function and the MCP server alike.
	Ask Ask
}

// Ask is where ask_docs' answers come from, and its limits.
type Ask struct {
	// Endpoint is the docs Q&A service ask_docs proxies (ASK_ENDPOINT);
	// empty: the built-in docs Q&A.
	Endpoint string
	// Timeout bounds one upstream call (ASK_TIMEOUT); 0: askproxy's
	// default (25 s).
	Timeout time.Duration
	// GuideURL is the agent-compatibility guide get_agent_requirements
	// fetches (ASK_GUIDE_URL).
	GuideURL string
	// MaxConcurrent bounds the questions one process asks at once
	// (ASK_MAX_CONCURRENT); 0: askproxy's default (8).
	MaxConcurrent int
}

// MaxAskTimeout is the longest ASK_TIMEOUT: API Gateway ends a request at
// 30 s whatever the function is doing.
const MaxAskTimeout = 28 * time.Second

// MinConsentSecret is the shortest CONSENT_SECRET, in bytes (the MCP
// server checks the same).
const MinConsentSecret = 32

// Check refuses an Ask configuration askproxy cannot run with, naming the
// setting.
func (a Ask) Check() error {
	if a.Endpoint != "" {
		u, err := url.Parse(a.Endpoint)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return fmt.Errorf("ASK_ENDPOINT: %q is not an http(s) URL", a.Endpoint)
		}
	}
	if a.Timeout < 0 || a.Timeout > MaxAskTimeout {
		return fmt.Errorf("ASK_TIMEOUT: must be above 0 and at most %s (API Gateway ends a request at 30 s)", MaxAskTimeout)
	}
	if a.MaxConcurrent < 0 {
		return fmt.Errorf("ASK_MAX_CONCURRENT: must be positive")
	}
	return nil
}

// DefaultTable is the table name used with a DynamoDB endpoint and no
// TABLE_NAME (a local dynalite).
const DefaultTable = store.DefaultTable

// DefaultDataPath is where the local server keeps its embedded store.
var DefaultDataPath = filepath.Join(".agentgate", "agentgate.db")

// FromEnv reads Config with getenv (os.Getenv in production, a map in
// tests). A value that does not parse is an error naming the variable, so a
// misconfigured function fails at start-up rather than on a request.
func FromEnv(getenv func(string) string) (Config, error) {
	c := Config{
		TableName:      getenv("TABLE_NAME"),
		DynamoEndpoint: getenv("AWS_ENDPOINT_URL_DYNAMODB"),
		Region:         getenv("AWS_REGION"),
		DataPath:       getenv("AGENTGATE_DATA"),
		LogLevel:       logging.ParseLevel(getenv("LOG_LEVEL")),
		JWTSecret:      getenv("A2A_JWT_SECRET"),
		JWTIssuer:      getenv("JWT_ISSUER"),
		JWTAudience:    getenv("JWT_AUDIENCE"),
		PublicBaseURL:  strings.TrimRight(getenv("PUBLIC_BASE_URL"), "/"),
		ConsentSecret:  getenv("CONSENT_SECRET"),
		RequireConsent: true,
		MaxBody:        web.DefaultMaxBody,
		Timeout:        web.DefaultTimeout,
		Limits:         map[string]web.Limits{},
	}
	if c.DataPath == "" {
		c.DataPath = DefaultDataPath
	}
	var errs []error
	readVar(getenv, "MAX_BODY_BYTES", &c.MaxBody, &errs, positive(func(v string) (int64, error) { return strconv.ParseInt(v, 10, 64) }))
	readVar(getenv, "REQUEST_TIMEOUT", &c.Timeout, &errs, func(v string) (time.Duration, error) {
		d, err := time.ParseDuration(v)
		if err == nil && (d <= 0 || d >= 29*time.Second) {
			err = errors.New("must be above 0 and below API Gateway's 29 s")
		}
		return d, err
	})
	if c.JWTSecret != "" && len(c.JWTSecret) < auth.MinSecretLen {
		errs = append(errs, fmt.Errorf("A2A_JWT_SECRET: must be at least %d bytes", auth.MinSecretLen))
	}
	if v := getenv("MCP_SERVER_ENABLED"); v != "" {
		b, err := strconv.ParseBool(v)
		errs = append(errs, named("MCP_SERVER_ENABLED", err))
		c.MCPEnabled = b
	}
	if v := getenv("REQUIRE_DISPATCH_CONSENT"); v != "" {
		b, err := strconv.ParseBool(v)
		errs = append(errs, named("REQUIRE_DISPATCH_CONSENT", err))
		c.RequireConsent = b
	}
	if c.ConsentSecret != "" && len(c.ConsentSecret) < MinConsentSecret {
		errs = append(errs, fmt.Errorf("CONSENT_SECRET: must be at least %d bytes", MinConsentSecret))
	}
	c.MCPTools, c.MCPResources, c.MCPPrompts = allowList(getenv("MCP_TOOLS")), allowList(getenv("MCP_RESOURCES")), allowList(getenv("MCP_PROMPTS"))
	if v := getenv("AGENT_NETWORK"); v != "" {
		p, err := AgentNetwork(v)
		errs = append(errs, named("AGENT_NETWORK", err))
		c.AgentNetwork = p
	}
	c.Ask.Endpoint, c.Ask.GuideURL = strings.TrimSpace(getenv("ASK_ENDPOINT")), strings.TrimSpace(getenv("ASK_GUIDE_URL"))
	readVar(getenv, "ASK_TIMEOUT", &c.Ask.Timeout, &errs, positive(time.ParseDuration))
	readVar(getenv, "ASK_MAX_CONCURRENT", &c.Ask.MaxConcurrent, &errs, positive(strconv.Atoi))
	if err := c.Ask.Check(); err != nil {
		errs = append(errs, err)
	}
	c.AuthorizationServers = commaList(getenv("MCP_AUTHORIZATION_SERVERS"))
	c.AdminSubjects = commaList(getenv("ADMIN_SUBJECTS"))
	c.SystemAgent = strings.TrimSpace(getenv("SYSTEM_AGENT"))
	for _, o := range commaList(getenv("ALLOWED_ORIGINS")) {
		origin, err := web.ParseOrigin(o)
		errs = append(errs, named("ALLOWED_ORIGINS", err))
		if err == nil {
			c.AllowedOrigins = append(c.AllowedOrigins, origin)
		}
	}
	for class, def := range DefaultLimits {
		l := def
		for _, r := range []struct {
			suffix string
			rule   *ratelimit.Rule
		}{{"PER_IP", &l.PerIP}, {"PER_PRINCIPAL", &l.PerPrincipal}} {
			name := "RATE_LIMIT_" + strings.ToUpper(class) + "_" + r.suffix
			if v := getenv(name); v != "" {
				rule, err := ratelimit.ParseRule(v)
				errs = append(errs, named(name, err))
				*r.rule = rule
			}
		}
		c.Limits[class] = l
	}
	return c, errors.Join(errs...)
}

// allowList reads an MCP allow-list: unset allows all (nil), "none" nothing.
func allowList(v string) []string {
	if strings.TrimSpace(v) == "none" {
		return []string{}
	}
	return commaList(v)
}

// commaList reads a comma-separated list, blanks around items and empty
// items dropped; nil when there are none.
func commaList(v string) []string {
	var items []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			items = append(items, s)
		}
	}
	return items
}

// AgentNetwork returns the policy an AGENT_NETWORK value names.
func AgentNetwork(name string) (netguard.Policy, error) {
	switch name {
	case "public":
		return netguard.Policy{}, nil
	case "vpc":
		return netguard.Policy{AllowPrivate: true}, nil
	case "local":
		return netguard.Policy{AllowPrivate: true, AllowLoopback: true}, nil
	}
	return netguard.Policy{}, fmt.Errorf("%q is not one of public, vpc, local", name)
}

// readVar parses the variable name into dst, if it is set; a value that
// does not parse is an error naming the variable.
func readVar[T any](getenv func(string) string, name string, dst *T, errs *[]error, parse func(string) (T, error)) {
	v := getenv(name)
	if v == "" {
		return
	}
	got, err := parse(v)
	*errs = append(*errs, named(name, err))
	*dst = got
}

// positive refuses what parse returns if it is not above zero.
func positive[T int | int64 | time.Duration](parse func(string) (T, error)) func(string) (T, error) {
	return func(v string) (T, error) {
		n, err := parse(v)
		if err == nil && n <= 0 {
			err = errors.New("must be positive")
		}
		return n, err
	}
}

func named(name string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %w", name, err)
}

// LogValue keeps secrets out of any log record that includes a Config.
func (c Config) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("table", c.TableName),
		slog.String("dynamodb_endpoint", c.DynamoEndpoint),
		slog.String("data", c.DataPath),
		slog.Bool("jwt_configured", c.JWTSecret != ""),
		slog.Bool("mcp_enabled", c.MCPEnabled),
		slog.Bool("dispatch_consent", c.RequireConsent),
		slog.Bool("agent_network_loopback", c.AgentNetwork.AllowLoopback),
		slog.Bool("agent_network_vpc", c.AgentNetwork.AllowPrivate),
		slog.Any("allowed_origins", c.AllowedOrigins),
		slog.Bool("loopback_origins", c.LoopbackOrigins),
		slog.Int("admin_subjects", len(c.AdminSubjects)),
		slog.String("system_agent", c.SystemAgent),
		slog.Int64("max_body", c.MaxBody),
		slog.Duration("timeout", c.Timeout),
	)
}

// UsesDynamoDB reports whether the configuration selects the DynamoDB store.
func (c Config) UsesDynamoDB() bool { return c.TableName != "" }
