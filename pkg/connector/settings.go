package connector

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/agentgate/agentgate/pkg/agentgate"
	"github.com/agentgate/agentgate/pkg/store"
	"github.com/agentgate/agentgate/pkg/web"
)

// The MCP URL is where MCP clients reach agentgate's MCP server: what the
// connector snippets point to. An admin may set it (a custom domain in
// front of API Gateway); unset, it is derived from each request.
const (
	mcpURLSetting = "mcp-url"
	mcpPath       = "/mcp" // mcpserver.Endpoint; mcpserver builds on this package, not the reverse

	// SourceSetting and SourceDerived say where an MCP URL came from.
	SourceSetting = "setting"
	SourceDerived = "derived"
)

// mcpURLRule is what CheckMCPURL asks for, in its refusals.
const mcpURLRule = "must be an absolute https:// URL (http:// only on a loopback host: localhost, 127.0.0.1, [::1]) whose path ends in /mcp, without credentials, query or fragment"

// CheckMCPURL checks an MCP URL an admin sets.
func CheckMCPURL(raw string) error {
	bad := func() error {
		return agentgate.Errorf(agentgate.EINVALID, "url: %s; got %.200q", mcpURLRule, raw)
	}
	if raw == "" {
		return agentgate.Errorf(agentgate.EINVALID, "url: required; it %s", mcpURLRule)
	}
	if len(raw) > 2048 {
		return agentgate.Errorf(agentgate.EINVALID, "url: longer than 2048 bytes")
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || u.User != nil || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" ||
		strings.ContainsAny(raw, " \t\r\n\"'\\`$") || !strings.HasSuffix(u.Path, mcpPath) {
		return bad()
	}
	switch u.Scheme {
	case "https":
		return nil
	case "http":
		if loopback(u.Hostname()) {
			return nil
		}
	}
	return bad()
}

func loopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

// mcpURLRecord is the MCP URL setting as stored.
type mcpURLRecord struct {
	URL       string    `json:"url"`
	UpdatedBy string    `json:"updatedBy"`
	UpdatedAt time.Time `json:"updatedAt"`
}

// MCPURL returns the MCP URL and where it comes from: the admins' setting,
// or derived from r (the API's public base URL, configured or API
// Gateway's domain and stage or the listen address, and /mcp).
func (s *Service) MCPURL(ctx context.Context, r *http.Request) (u, source string, err error) {
	it, err := s.store.Get(ctx, store.DeploymentSettingKey(mcpURLSetting))
	if errors.Is(err, store.ErrNotFound) {
		return web.BaseURL(r, s.baseURL) + mcpPath, SourceDerived, nil
	} else if err != nil {
		return "", "", err
	}
	var rec mcpURLRecord
	if err := json.Unmarshal(it.Data, &rec); err != nil {
		return "", "", fmt.Errorf("decoding the MCP URL setting: %w", err)
	}
	return rec.URL, SourceSetting, nil
}

// SetMCPURL sets the MCP URL, for admin p.
func (s *Service) SetMCPURL(ctx context.Context, p agentgate.Principal, u string) error {
	if err := s.CheckAdmin(p); err != nil {
		return err
	}
	if err := CheckMCPURL(u); err != nil {
		return err
	}
	data, err := json.Marshal(mcpURLRecord{URL: u, UpdatedBy: p.Subject, UpdatedAt: s.now().UTC()})
	if err != nil {
		return err
	}
	_, err = s.store.Put(ctx, store.Item{Key: store.DeploymentSettingKey(mcpURLSetting), Kind: "setting", Data: data})
	return err
}

// ClearMCPURL removes the setting, for admin p: the URL is derived again.
func (s *Service) ClearMCPURL(ctx context.Context, p agentgate.Principal) error {
	if err := s.CheckAdmin(p); err != nil {
		return err
	}
	return s.store.Delete(ctx, store.DeploymentSettingKey(mcpURLSetting))
}

// CheckAdmin refuses a principal that is not an admin: a user credential
// whose subject ADMIN_SUBJECTS lists.
func (s *Service) CheckAdmin(p agentgate.Principal) error {
	if p.Scope == agentgate.ScopeUser && p.Subject != "" && slices.Contains(s.admins, p.Subject) {
		return nil
	}
	return agentgate.Errorf(agentgate.EFORBIDDEN, "only an admin (ADMIN_SUBJECTS) may do this")
}
