// Package awsprofile opens agentgate's DynamoDB store with the AWS SDK's
// whole configuration chain: environment, shared config and credentials
// files, profiles, SSO, assumed roles, the EC2 metadata service. That is
// what agentgate's own commands need on a developer's machine or a server.
//
// The Lambda functions do not use it: their credentials are in the
// environment, and the chain's packages would cost each function about 2
// MB and several milliseconds of every cold start (dynamo.Open reads the
// environment alone). A test in package deploy keeps the chain out of
// their binaries.
package awsprofile

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/feature/ec2/imds"

	"github.com/agentgate/agentgate/pkg/store/dynamo"
)

// Open loads the AWS configuration the usual way and returns a store on
// c.Table. For a loopback endpoint (a local emulator such as dynalite) it
// does not ask the EC2 metadata service for credentials, which would only
// stall off EC2, and supplies placeholders if none are configured (see
// dynamo.FromConfig); c.Getenv is not used: the SDK reads the environment
// itself.
func Open(ctx context.Context, c dynamo.Config, opts ...dynamo.Option) (*dynamo.Store, error) {
	var loadOpts []func(*config.LoadOptions) error
	if c.Region != "" {
		loadOpts = append(loadOpts, config.WithRegion(c.Region))
	}
	local := dynamo.IsLoopback(c.Endpoint)
	if local {
		loadOpts = append(loadOpts, config.WithEC2IMDSClientEnableState(imds.ClientDisabled))
	}
	cfg, err := config.LoadDefaultConfig(ctx, loadOpts...)
	if err != nil {
		return nil, fmt.Errorf("dynamo: loading the AWS configuration: %w", err)
	}
	if local {
		if _, err := cfg.Credentials.Retrieve(ctx); err != nil {
			cfg.Credentials = nil // FromConfig's placeholders
		}
	}
	return dynamo.FromConfig(cfg, c, opts...)
}
