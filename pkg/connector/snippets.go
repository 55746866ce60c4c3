package connector

import (
	"strings"
)

// Snippets are ready-to-use client configurations for one MCP server (the
// connector of an agent) and its key: each is what its client reads, whole.
type Snippets struct {
	// ClaudeCode is the command that adds the server to Claude Code:
	// claude mcp add --transport http <name> <url> --header "Authorization: Bearer <key>".
	ClaudeCode string `json:"claude_code"`
	// MCPJSON is Claude Code's whole .mcp.json (project scope).
	MCPJSON MCPServersFile `json:"mcp_json"`
	// Cursor is Cursor's whole mcp.json (~/.cursor/mcp.json or
	// .cursor/mcp.json).
	Cursor MCPServersFile `json:"cursor"`
	// ClaudeDesktop is Claude Desktop's whole claude_desktop_config.json: a
	// stdio server, npx mcp-remote, that reaches the remote one. The
	// header's value goes through the environment, because Claude Desktop
	// on Windows (and Cursor) split arguments at spaces.
	ClaudeDesktop MCPServersFile `json:"claude_desktop"`
}

// MCPServersFile is the file format the MCP clients share: servers by name.
type MCPServersFile struct {
	MCPServers map[string]MCPServer `json:"mcpServers"`
}

// MCPServer is one server of an MCPServersFile: a remote one (URL) or a
// local command.
type MCPServer struct {
	Type    string            `json:"type,omitempty"`
	URL     string            `json:"url,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
	Command string            `json:"command,omitempty"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
}

// NewSnippets builds the snippets for server name (an agent name: a slug,
// safe on a command line) at mcpURL with key.
func NewSnippets(name, mcpURL, key string) Snippets {
	bearer := "Bearer " + key
	remote := func(typ string) MCPServersFile {
		return MCPServersFile{MCPServers: map[string]MCPServer{name: {Type: typ, URL: mcpURL,
			Headers: map[string]string{"Authorization": bearer}}}}
	}
	return Snippets{
		ClaudeCode: strings.Join([]string{"claude", "mcp", "add", "--transport", "http", shellQuote(name), shellQuote(mcpURL),
			"--header", `"Authorization: ` + bearer + `"`}, " "),
		MCPJSON: remote("http"),
		Cursor:  remote(""),
		ClaudeDesktop: MCPServersFile{MCPServers: map[string]MCPServer{name: {Command: "npx",
			Args: []string{"-y", "mcp-remote", mcpURL, "--header", "Authorization:${AUTH_HEADER}"},
			Env:  map[string]string{"AUTH_HEADER": bearer}}}},
	}
}

// shellQuote quotes s for a POSIX shell when it holds anything but the
// characters of a plain word (a URL's own mostly are).
func shellQuote(s string) string {
	plain := s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:@%+=,", r))
	}) < 0
	if plain {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
