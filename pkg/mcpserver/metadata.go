package mcpserver

import (
	"net/http"

	"github.com/agentgate/agentgate/pkg/web"
)

// MetadataPath is where the MCP endpoint's RFC 9728 protected-resource
// metadata is served: the well-known prefix followed by the resource's path,
// which is where MCP clients look after a 401.
const MetadataPath = "/.well-known/oauth-protected-resource" + Endpoint

// MetadataURL is the metadata's URL under base.
func MetadataURL(base string) string { return base + MetadataPath }

// Metadata serves the protected-resource metadata of the MCP endpoint.
type Metadata struct {
	BaseURL              string   // configured public base URL; empty derives it from the request
	AuthorizationServers []string // OAuth authorization servers that issue tokens for it, if any
}

// Advertised reports whether the metadata is served, and pointed to from a
// 401's challenge: only when there is an authorization server to name.
func (m Metadata) Advertised() bool { return len(m.AuthorizationServers) > 0 }

// ProtectedResource is the RFC 9728 document.
type ProtectedResource struct {
	Resource               string   `json:"resource"`
	AuthorizationServers   []string `json:"authorization_servers"`
	BearerMethodsSupported []string `json:"bearer_methods_supported"`
	ResourceName           string   `json:"resource_name"`
	ResourceDocumentation  string   `json:"resource_documentation,omitempty"`
}

func (m Metadata) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "public, max-age=3600")
	web.WriteJSON(w, http.StatusOK, ProtectedResource{
		Resource:               web.BaseURL(r, m.BaseURL) + Endpoint,
		AuthorizationServers:   m.AuthorizationServers,
		BearerMethodsSupported: []string{"header"},
		ResourceName:           "agentgate MCP server (bearer: agentgate API key or JWT)",
	})
}
