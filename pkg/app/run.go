package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"

	"github.com/agentgate/agentgate/pkg/logging"
	"github.com/agentgate/agentgate/pkg/store"
	"github.com/agentgate/agentgate/pkg/store/dynamo"
	"github.com/agentgate/agentgate/pkg/store/embedded"
)

// OpenStore opens the store cfg selects: DynamoDB when a table is named,
// otherwise the embedded store at cfg.DataPath.
func OpenStore(ctx context.Context, cfg Config) (store.Store, error) {
	// Each branch returns its own nil on error, never a typed nil in the
	// interface.
	if cfg.UsesDynamoDB() {
		st, err := dynamo.Open(ctx, dynamo.Config{Table: cfg.TableName, Region: cfg.Region, Endpoint: cfg.DynamoEndpoint})
		if err != nil {
			return nil, err
		}
		return st, nil
	}
	st, err := embedded.Open(cfg.DataPath)
	if err != nil {
		return nil, err
	}
	return st, nil
}

// FunctionHandler builds the handler of the function called name for Lambda.
// On Lambda the table is required: an embedded store in an instance's /tmp
// would silently split state between instances.
func FunctionHandler(ctx context.Context, name string, cfg Config) (http.Handler, error) {
	fn, ok := Lookup(name)
	if !ok {
		return nil, fmt.Errorf("unknown function %q", name)
	}
	if !cfg.UsesDynamoDB() {
		return nil, errors.New("TABLE_NAME is not set: a Lambda function needs the DynamoDB table (the embedded store is for agentgate serve)")
	}
	st, err := OpenStore(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("opening the store: %w", err)
	}
	d, err := NewDeps(cfg, st)
	if err != nil {
		return nil, err
	}
	if fn.asks {
		d.Ask.Announce(ctx)
	}
	return Handler(d, fn), nil
}

// MustFunction is a function's main: it configures logging from the
// environment and returns the function's handler, or logs why it cannot and
// exits, which Lambda reports as an init error.
func MustFunction(name string) http.Handler {
	cfg, err := ConfigFromEnv(os.Getenv)
	slog.SetDefault(logging.New(os.Stderr, cfg.LogLevel).With("function", name))
	var h http.Handler
	if err == nil {
		h, err = FunctionHandler(context.Background(), name, cfg)
	}
	if err != nil {
		slog.Error("cannot start", "err", err)
		os.Exit(1)
	}
	return h
}
