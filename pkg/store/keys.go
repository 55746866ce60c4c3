package store

import (
	"strconv"
	"strings"
	"time"
)

// The key layout of every record kind in the one table. Keys are built here
// and nowhere else, so the layout can be read (and changed) in one place.
//
//	record kind          PK                                   SK                      GSI1 (owner/caller)                 GSI2 (agent)                  TTL
//	agent                AGENT#<name>                         AGENT                   AGENTS / <name>                     -                             -
//	connector config     AGENT#<name>                         CONNECTOR               -                                   -                             -
//	MCP session          SESSION#<id>                         SESSION                 -                                   -                             sliding
//	pending consent      CONSENT#<id>                         CONSENT                 -                                   -                             yes (chat turns)
//	dedup entry          DEDUP#<scope>#<caller>#<id>          DEDUP                   -                                   -                             yes (24 h)
//	running count        AGENT#<name>                         RUNNING                 -                                   -                             -
//	execution            EXEC#<origin>#<scope>#<id>           EXEC                    CALLER#<caller> / EXEC#<t>#<ref>    AGENT#<name> / EXEC#<t>#<ref> retention
//	task not sent yet    EXEC#mcp#<caller>#<taskId>           EXEC                    -                                   -                             24 h
//	API key              APIKEY#<keyId>                       APIKEY                  OWNER#<owner> / APIKEY#<t>#<id>     CONNECTOR#<agent> / <t>#<id>  optional
//	setting              SETTINGS#<owner>                     <setting name>          -                                   -                             -
//	deployment setting   SETTINGS                             <setting name>          -                                   -                             -
//	MCP exposure set     EXPOSURE                             MCP                     -                                   -                             -
//	rate-limit window    RATE#<class>#<subject>#<window>      RATE                    -                                   -                             window end
//
// A dispatch_task's record is its execution's from the consent question on
// (execution/dispatch.go): unlisted, with no index keys, until it starts.
//
// Every caller-supplied component is escaped ('%' and '#'), so that no value
// can reach into another record's key space.

// Sort keys of singleton records.
const (
	skAgent     = "AGENT"
	skConnector = "CONNECTOR"
	skSession   = "SESSION"
	skConsent   = "CONSENT"
	skDedup     = "DEDUP"
	skExecution = "EXEC"
	skRunning   = "RUNNING"
	skAPIKey    = "APIKEY"
	skRate      = "RATE"
)

var escaper = strings.NewReplacer("%", "%25", "#", "%23")

// esc makes a caller-supplied value safe to join with '#'.
func esc(s string) string { return escaper.Replace(s) }

// join escapes every part but the first (a fixed record-kind tag) and joins
// them with '#'.
func join(kind string, parts ...string) string {
	var b strings.Builder
	b.WriteString(kind)
	for _, p := range parts {
		b.WriteByte('#')
		b.WriteString(esc(p))
	}
	return b.String()
}

// AgentKey is where an agent's registration lives.
func AgentKey(name string) Key { return Key{PK: join("AGENT", name), SK: skAgent} }

// AgentsIndex places an agent in the listing of all agents.
func AgentsIndex(name string) IndexKey { return IndexKey{PK: "AGENTS", SK: esc(name)} }

// AllAgents is the GSI1 partition that lists every agent.
const AllAgents = "AGENTS"

// ConnectorKey is where an agent's connector configuration lives.
func ConnectorKey(agent string) Key { return Key{PK: join("AGENT", agent), SK: skConnector} }

// SessionKey is where a legacy MCP session record lives, with the consent
// streams it waits for (pkg/mcpsession).
func SessionKey(id string) Key { return Key{PK: join("SESSION", id), SK: skSession} }

// ConsentKey is where a pending consent lives.
func ConsentKey(id string) Key { return Key{PK: join("CONSENT", id), SK: skConsent} }

// DedupKey is where the idempotency entry of id lives, per scope (for
// example "task" or "message:<agent>") and caller.
func DedupKey(scope, caller, id string) Key {
	return Key{PK: join("DEDUP", scope, caller, id), SK: skDedup}
}

// ExecutionKey is where an execution record lives. Its id is unique within
// origin and scope: the A2A front door keys executions by agent and the
// agent's task id, MCP by caller and the caller's taskId.
func ExecutionKey(origin, scope, id string) Key {
	return Key{PK: join("EXEC", origin, scope, id), SK: skExecution}
}

// RunningKey is the counter of an agent's executions that have not reached
// a terminal state.
func RunningKey(agent string) Key { return Key{PK: join("AGENT", agent), SK: skRunning} }

// SortTime lays out t for index sort keys: UTC, fixed width, milliseconds,
// so that string order is time order. (time.RFC3339Nano is not: it drops
// trailing zeros and sorts 12:00:00.5Z before 12:00:00Z.)
func SortTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// ExecutionByCaller places an execution in its caller's listing, newest last
// in sort order (query Descending for newest first). at is SortTime of the
// execution's creation.
func ExecutionByCaller(caller, at, id string) IndexKey {
	return IndexKey{PK: join("CALLER", caller), SK: join("EXEC", at, id)}
}

// ExecutionByAgent places an execution in its agent's listing.
func ExecutionByAgent(agent, at, id string) IndexKey {
	return IndexKey{PK: join("AGENT", agent), SK: join("EXEC", at, id)}
}

// CallerPartition and AgentPartition name the index partitions above.
func CallerPartition(caller string) string { return join("CALLER", caller) }
func AgentPartition(agent string) string   { return join("AGENT", agent) }

// APIKeyKey is where an API key's record (its hash, never its secret) lives.
func APIKeyKey(keyID string) Key { return Key{PK: join("APIKEY", keyID), SK: skAPIKey} }

// APIKeyByOwner places a key in its owner's listing.
func APIKeyByOwner(owner, at, keyID string) IndexKey {
	return IndexKey{PK: OwnerPartition(owner), SK: join("APIKEY", at, keyID)}
}

// OwnerPartition names an owner's GSI1 partition.
func OwnerPartition(owner string) string { return join("OWNER", owner) }

// APIKeyByConnector places a connector-scope key in its agent's listing.
func APIKeyByConnector(agent, at, keyID string) IndexKey {
	return IndexKey{PK: ConnectorPartition(agent), SK: esc(at) + "#" + esc(keyID)}
}

// ConnectorPartition names an agent's connector-key GSI2 partition.
func ConnectorPartition(agent string) string { return join("CONNECTOR", agent) }

// SettingKey is where one of an owner's settings lives.
func SettingKey(owner, name string) Key { return Key{PK: join("SETTINGS", owner), SK: esc(name)} }

// DeploymentSettingKey is where one of the deployment's own settings lives
// (the MCP URL): one per deployment, not per owner. Its PK has no '#', so no
// owner's SettingKey can reach it.
func DeploymentSettingKey(name string) Key { return Key{PK: "SETTINGS", SK: esc(name)} }

// ExposureKey is the one record that lists the agents exposed as MCP tools:
// a single small item, read whole by every MCP instance and updated by
// compare-and-set.
func ExposureKey() Key { return Key{PK: "EXPOSURE", SK: "MCP"} }

// RateKey is the counter of one rate-limit window. window is the window's
// start in epoch seconds, so a new window is a new item and an expired one is
// never counted again.
func RateKey(class, subject string, window int64) Key {
	return Key{PK: join("RATE", class, subject, strconv.FormatInt(window, 10)), SK: skRate}
}

// Volatile reports whether the item at k may live in a single-process
// store's memory rather than on its disk: a rate-limit window, counted on
// every request, which ends with its window anyway and whose loss on a
// restart costs nothing but a fresh budget.
func Volatile(k Key) bool { return k.SK == skRate }
