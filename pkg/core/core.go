// Package core is what every agentgate function stands on: the
// configuration, the store, API keys, authentication and the rate limiter,
// the security chain in front of each route, and how a function starts on
// Lambda. It imports no function's code, so that each function's binary
// links its own code and this, nothing more (functions/<name>/main.go calls
// Main with its own package's builder).
package core

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"time"

	"github.com/agentgate/agentgate/pkg/apikey"
	"github.com/agentgate/agentgate/pkg/auth"
	"github.com/agentgate/agentgate/pkg/config"
	"github.com/agentgate/agentgate/pkg/lambdahttp"
	"github.com/agentgate/agentgate/pkg/logging"
	"github.com/agentgate/agentgate/pkg/ratelimit"
	"github.com/agentgate/agentgate/pkg/store"
	"github.com/agentgate/agentgate/pkg/store/dynamo"
	"github.com/agentgate/agentgate/pkg/web"
)

// Services are what every function shares, built once per process.
type Services struct {
	Config  config.Config
	Store   store.Store
	Keys    *apikey.Service
	Authn   web.Authenticator
	Limiter web.Limiter
	// Now is every service's clock: Config.Clock, or time.Now.
	Now func() time.Time
}

// New builds the services on st as cfg says.
func New(cfg config.Config, st store.Store) (Services, error) {
	now := cfg.Clock
	if now == nil {
		now = time.Now
	}
	s := Services{Config: cfg, Store: st, Keys: apikey.NewService(st, now), Limiter: ratelimit.New(st, now), Now: now}
	a := &auth.Authenticator{Keys: s.Keys}
	if cfg.JWTSecret != "" {
		opts := []auth.JWTOption{auth.WithClock(now)}
		if cfg.JWTIssuer != "" {
			opts = append(opts, auth.WithIssuer(cfg.JWTIssuer))
		}
		if cfg.JWTAudience != "" {
			opts = append(opts, auth.WithAudience(cfg.JWTAudience))
		}
		v, err := auth.NewJWTVerifier([]byte(cfg.JWTSecret), opts...)
		if err != nil {
			return Services{}, err
		}
		a.JWT = v
	}
	s.Authn = a
	return s, nil
}

// Chain is the security chain the configuration describes.
func (s Services) Chain() *web.Chain {
	return &web.Chain{
		MaxBody: s.Config.MaxBody,
		Timeout: s.Config.Timeout,
		Limiter: s.Limiter,
		Limits:  s.Config.Limits,
		Authn:   s.Authn,

		AllowedOrigins:  s.Config.AllowedOrigins,
		LoopbackOrigins: s.Config.LoopbackOrigins,
	}
}

// Health is the handler of a function's health route.
func Health(name string) http.Handler { return web.Health(name, config.Version) }

// Function is one function as built: its routes (health first), before
// the chain.
type Function struct {
	Name   string
	Routes []web.Route
	// ResourceMetadata, if set, names the protected-resource metadata a
	// 401 points to ("" when the function advertises none).
	ResourceMetadata func(r *http.Request) string
	// Start, if set, runs once when the function starts serving: what it
	// has to say about its configuration, for example.
	Start func(ctx context.Context)
}

// Wrap returns f's routes behind the security chain.
func (s Services) Wrap(f Function) []web.Route {
	chain := s.Chain()
	chain.ResourceMetadata = f.ResourceMetadata
	return chain.Wrap(f.Routes)
}

// Handler serves the routes of fns on one mux, behind the request log and
// the security headers.
func (s Services) Handler(fns ...Function) http.Handler {
	var tables [][]web.Route
	name := "agentgate"
	for _, f := range fns {
		tables = append(tables, s.Wrap(f))
	}
	if len(fns) == 1 {
		name = fns[0].Name
	}
	return web.RequestLog(name, web.SecurityHeaders(web.NewMux(tables...)))
}

// Builder builds a function on the shared services.
type Builder func(Services) (Function, error)

// LambdaHandler builds the function for Lambda, on cfg's DynamoDB table.
// On Lambda the table is required: an embedded store in an instance's /tmp
// would silently split state between instances.
func LambdaHandler(ctx context.Context, cfg config.Config, build Builder) (http.Handler, error) {
	if !cfg.UsesDynamoDB() {
		return nil, errors.New("TABLE_NAME is not set: a Lambda function needs the DynamoDB table (the embedded store is for agentgate serve)")
	}
	st, err := dynamo.Open(ctx, dynamo.Config{Table: cfg.TableName, Region: cfg.Region, Endpoint: cfg.DynamoEndpoint})
	if err != nil {
		return nil, fmt.Errorf("opening the store: %w", err)
	}
	s, err := New(cfg, st)
	if err != nil {
		return nil, err
	}
	f, err := build(s)
	if err != nil {
		return nil, err
	}
	if f.Start != nil {
		f.Start(ctx)
	}
	return s.Handler(f), nil
}

// Main is a function's main: it reads the configuration from the
// environment, sets up logging and the collector, builds the function and
// serves it until the Lambda runtime stops the process. A function that
// cannot start logs why and exits, which Lambda reports as an init error.
func Main(name string, build Builder) {
	cfg, err := config.FromEnv(os.Getenv)
	slog.SetDefault(logging.New(os.Stderr, cfg.LogLevel).With("function", name))
	var h http.Handler
	if err == nil {
		h, err = LambdaHandler(context.Background(), cfg, build)
	}
	if err != nil {
		slog.Error("cannot start", "err", err)
		os.Exit(1)
	}
	lambdahttp.Start(h)
}
