package app

import "github.com/agentgate/agentgate/pkg/config"

// Config is agentgate's configuration (package config), which app's
// callers build and read.
type Config = config.Config

// ConfigFromEnv reads Config with getenv (config.FromEnv).
func ConfigFromEnv(getenv func(string) string) (Config, error) { return config.FromEnv(getenv) }

// Settings app's callers use, as package config defines them.
var (
	// DefaultLimits are the rate limits unless the environment says
	// otherwise.
	DefaultLimits = config.DefaultLimits
	// DefaultDataPath is where the local server keeps its embedded store.
	DefaultDataPath = config.DefaultDataPath
	// AgentNetwork returns the policy an AGENT_NETWORK value names.
	AgentNetwork = config.AgentNetwork
)

// DefaultTable is the table name used with a DynamoDB endpoint and no
// TABLE_NAME (a local dynalite).
const DefaultTable = config.DefaultTable
