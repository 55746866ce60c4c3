package app

import (
	"context"
	"fmt"
	"net/http"

	"github.com/agentgate/agentgate/pkg/core"
	"github.com/agentgate/agentgate/pkg/store"
	"github.com/agentgate/agentgate/pkg/store/dynamo"
	"github.com/agentgate/agentgate/pkg/store/dynamo/awsprofile"
	"github.com/agentgate/agentgate/pkg/store/embedded"
)

// OpenStore opens the store cfg selects: DynamoDB when a table is named
// (with the AWS SDK's whole configuration chain: profiles, SSO, as a
// developer's machine needs), otherwise the embedded store at
// cfg.DataPath.
func OpenStore(ctx context.Context, cfg Config) (store.Store, error) {
	// Each branch returns its own nil on error, never a typed nil in the
	// interface.
	if cfg.UsesDynamoDB() {
		st, err := awsprofile.Open(ctx, dynamo.Config{Table: cfg.TableName, Region: cfg.Region, Endpoint: cfg.DynamoEndpoint})
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

// FunctionHandler builds the function called name as it runs on Lambda:
// on cfg's DynamoDB table, with its own services only (its package's
// BuildFunction, which its main package hands to core.Main).
func FunctionHandler(ctx context.Context, name string, cfg Config) (http.Handler, error) {
	fn, ok := Lookup(name)
	if !ok {
		return nil, fmt.Errorf("unknown function %q", name)
	}
	return core.LambdaHandler(ctx, cfg, fn.Lambda)
}
