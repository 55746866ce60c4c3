package connector

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/agentgate/agentgate/pkg/agent"
	"github.com/agentgate/agentgate/pkg/agentgate"
	"github.com/agentgate/agentgate/pkg/dispatch"
	"github.com/agentgate/agentgate/pkg/web"
)

// The connector API of one agent, its chat and its MCP exposure, and the
// MCP URL setting.
//
//	GET    /api/agents/{name}/connector            owner: the configuration, key info, MCP URL
//	PUT    /api/agents/{name}/connector            owner: {"enabled"?, "exposed_playbooks"?}
//	POST   /api/agents/{name}/connector/key        owner: mint or regenerate the key -> 201, secret once, snippets
//	DELETE /api/agents/{name}/connector/key        owner: revoke it
//	GET    /api/agents/{name}/connector/playbooks  owner, or the agent's current connector key
//	POST   /api/agents/{name}/chat                 owner, or the agent's current connector key
//	GET    /api/agents/{name}/mcp-exposed          owner: {"exposed", "tool"}
//	PUT    /api/agents/{name}/mcp-exposed          owner: {"exposed": bool}
//	GET    /api/settings/mcp-url                   admin: {"url", "mcp_url_source"}
//	PUT    /api/settings/mcp-url                   admin: {"url"}
//	DELETE /api/settings/mcp-url                   admin: back to the derived URL

// chatter is dispatch.Service's Chat.
type chatter interface {
	Chat(ctx context.Context, c dispatch.Chat) (dispatch.Reply, error)
}

// ConnectorView is GET /api/agents/{name}/connector.
type ConnectorView struct {
	Agent            string   `json:"agent"`
	Enabled          bool     `json:"enabled"`
	ExposedPlaybooks []string `json:"exposed_playbooks"` // null: every user_invocable playbook
	Key              *KeyInfo `json:"key"`
	MCPURL           string   `json:"mcp_url"`
	MCPURLSource     string   `json:"mcp_url_source"`
}

func (h handler) connectorView(w http.ResponseWriter, r *http.Request, status int, c Config) {
	k, err := h.svc.Key(r.Context(), c)
	if err != nil {
		web.WriteError(w, r, err)
		return
	}
	u, src, err := h.svc.MCPURL(r.Context(), r)
	if err != nil {
		web.WriteError(w, r, err)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	web.WriteJSON(w, status, ConnectorView{Agent: c.Agent, Enabled: c.Enabled, ExposedPlaybooks: c.ExposedPlaybooks,
		Key: k, MCPURL: u, MCPURLSource: src})
}

// owned is the agent the request names, if the caller owns it (or, with
// connectorKey, is its current connector key).
func (h handler) owned(w http.ResponseWriter, r *http.Request, connectorKey bool) (agent.Agent, Config, bool) {
	a, c, err := h.svc.Authorize(r.Context(), principal(r), r.PathValue("name"), connectorKey)
	if err != nil {
		web.WriteError(w, r, err)
		return agent.Agent{}, Config{}, false
	}
	return a, c, true
}

func (h handler) getConnector(w http.ResponseWriter, r *http.Request) {
	if _, c, ok := h.owned(w, r, false); ok {
		h.connectorView(w, r, http.StatusOK, c)
	}
}

// putConnectorRequest is the body of PUT /api/agents/{name}/connector.
// ExposedPlaybooks is raw so that null (every user_invocable playbook) is
// told from absent (unchanged).
type putConnectorRequest struct {
	Enabled          *bool           `json:"enabled"`
	ExposedPlaybooks json.RawMessage `json:"exposed_playbooks"`
}

func (h handler) putConnector(w http.ResponseWriter, r *http.Request) {
	a, _, ok := h.owned(w, r, false)
	if !ok {
		return
	}
	var req putConnectorRequest
	if err := web.DecodeJSON(r, &req); err != nil {
		web.WriteError(w, r, err)
		return
	}
	ch := ConfigChange{Enabled: req.Enabled}
	if len(req.ExposedPlaybooks) > 0 {
		ch.SetPlaybooks = true
		if string(req.ExposedPlaybooks) != "null" {
			if err := json.Unmarshal(req.ExposedPlaybooks, &ch.ExposedPlaybooks); err != nil {
				web.WriteError(w, r, agentgate.Errorf(agentgate.EINVALID, "exposed_playbooks: want null (every user_invocable playbook) or an array of playbook names"))
				return
			}
			if ch.ExposedPlaybooks == nil {
				ch.ExposedPlaybooks = []string{}
			}
		}
	}
	c, err := h.svc.Configure(r.Context(), a, ch)
	if err != nil {
		web.WriteError(w, r, err)
		return
	}
	h.connectorView(w, r, http.StatusOK, c)
}

// MintedKey is the answer to POST /api/agents/{name}/connector/key: the one
// time the key's secret is shown.
type MintedKey struct {
	Key          string   `json:"key"`
	Prefix       string   `json:"prefix"`
	Snippets     Snippets `json:"snippets"`
	MCPURL       string   `json:"mcp_url"`
	MCPURLSource string   `json:"mcp_url_source"`
}

func (h handler) mintKey(w http.ResponseWriter, r *http.Request) {
	a, _, ok := h.owned(w, r, false)
	if !ok {
		return
	}
	// The URL first: a key is not minted for an answer that cannot be
	// given.
	u, src, err := h.svc.MCPURL(r.Context(), r)
	if err != nil {
		web.WriteError(w, r, err)
		return
	}
	created, _, err := h.svc.MintKey(r.Context(), a)
	if err != nil {
		web.WriteError(w, r, err)
		return
	}
	// The only answer that carries a connector key's secret.
	w.Header().Set("Cache-Control", "no-store")
	web.WriteJSON(w, http.StatusCreated, MintedKey{Key: created.Key, Prefix: created.Prefix,
		Snippets: NewSnippets(a.Template.Name, u, created.Key), MCPURL: u, MCPURLSource: src})
}

func (h handler) revokeKey(w http.ResponseWriter, r *http.Request) {
	a, _, ok := h.owned(w, r, false)
	if !ok {
		return
	}
	c, err := h.svc.RevokeKey(r.Context(), a)
	if err != nil {
		web.WriteError(w, r, err)
		return
	}
	h.connectorView(w, r, http.StatusOK, c)
}

// PlaybookView is a playbook as the connector offers it.
type PlaybookView struct {
	Name        string         `json:"name"`
	Description string         `json:"description"`
	InputSchema map[string]any `json:"input_schema"`
	Automation  bool           `json:"automation"`
}

func (h handler) playbooks(w http.ResponseWriter, r *http.Request) {
	a, c, ok := h.owned(w, r, true)
	if !ok {
		return
	}
	out := []PlaybookView{}
	for _, p := range Playbooks(a, c) {
		out = append(out, PlaybookView{Name: p.Name, Description: p.Description, InputSchema: p.InputSchema, Automation: p.Automation})
	}
	w.Header().Set("Cache-Control", "no-store")
	web.WriteJSON(w, http.StatusOK, map[string]any{"playbooks": out})
}

// chatRequest is the body of POST /api/agents/{name}/chat.
type chatRequest struct {
	Message   string `json:"message"`
	ContextID string `json:"context_id"`
}

// chatMargin is kept before the request's deadline so that a chat that
// times out answers with its own error, which names the task to follow,
// rather than the deadline step's.
func chatMargin(left time.Duration) time.Duration { return min(time.Second, left/10) }

func (h handler) chat(w http.ResponseWriter, r *http.Request) {
	a, _, ok := h.owned(w, r, true)
	if !ok {
		return
	}
	var req chatRequest
	if err := web.DecodeJSON(r, &req); err != nil {
		web.WriteError(w, r, err)
		return
	}
	if err := dispatch.CheckChat(req.Message, req.ContextID); err != nil {
		web.WriteError(w, r, err)
		return
	}
	ctx := r.Context()
	if deadline, ok := ctx.Deadline(); ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, deadline.Add(-chatMargin(time.Until(deadline))))
		defer cancel()
	}
	reply, err := h.chatter.Chat(ctx, dispatch.Chat{Agent: a, Caller: principal(r), Message: req.Message, ContextID: req.ContextID})
	if err != nil {
		web.WriteError(w, r, err)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	web.WriteJSON(w, http.StatusOK, reply)
}

// ExposureView is the answer of /api/agents/{name}/mcp-exposed.
type ExposureView struct {
	Exposed bool    `json:"exposed"`
	Tool    *string `json:"tool"`
}

func exposureView(tool string) ExposureView {
	if tool == "" {
		return ExposureView{}
	}
	return ExposureView{Exposed: true, Tool: &tool}
}

// exposable is owned, for the exposure routes: the system agent is 403
// whoever asks.
func (h handler) exposable(w http.ResponseWriter, r *http.Request) (agent.Agent, bool) {
	if err := h.svc.CheckExposable(r.PathValue("name")); err != nil {
		web.WriteError(w, r, err)
		return agent.Agent{}, false
	}
	a, _, ok := h.owned(w, r, false)
	return a, ok
}

func (h handler) getExposed(w http.ResponseWriter, r *http.Request) {
	a, ok := h.exposable(w, r)
	if !ok {
		return
	}
	_, tool, err := h.svc.Exposure(r.Context(), a.Template.Name)
	if err != nil {
		web.WriteError(w, r, err)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	web.WriteJSON(w, http.StatusOK, exposureView(tool))
}

func (h handler) putExposed(w http.ResponseWriter, r *http.Request) {
	a, ok := h.exposable(w, r)
	if !ok {
		return
	}
	var req struct {
		Exposed *bool `json:"exposed"`
	}
	if err := web.DecodeJSON(r, &req); err != nil {
		web.WriteError(w, r, err)
		return
	}
	if req.Exposed == nil {
		web.WriteError(w, r, agentgate.Errorf(agentgate.EINVALID, "exposed: required, true or false"))
		return
	}
	tool, err := h.svc.SetExposed(r.Context(), a, *req.Exposed)
	if err != nil {
		web.WriteError(w, r, err)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	web.WriteJSON(w, http.StatusOK, exposureView(tool))
}

// MCPURLView is the answer of /api/settings/mcp-url.
type MCPURLView struct {
	URL          string `json:"url"`
	MCPURLSource string `json:"mcp_url_source"`
}

func (h handler) mcpURL(w http.ResponseWriter, r *http.Request) {
	u, src, err := h.svc.MCPURL(r.Context(), r)
	if err != nil {
		web.WriteError(w, r, err)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	web.WriteJSON(w, http.StatusOK, MCPURLView{URL: u, MCPURLSource: src})
}

func (h handler) putMCPURL(w http.ResponseWriter, r *http.Request) {
	if err := h.svc.CheckAdmin(principal(r)); err != nil {
		web.WriteError(w, r, err)
		return
	}
	var req struct {
		URL *string `json:"url"`
	}
	if err := web.DecodeJSON(r, &req); err != nil {
		web.WriteError(w, r, err)
		return
	}
	if req.URL == nil {
		web.WriteError(w, r, agentgate.Errorf(agentgate.EINVALID, "url: required; it %s", mcpURLRule))
		return
	}
	if err := h.svc.SetMCPURL(r.Context(), principal(r), strings.TrimSpace(*req.URL)); err != nil {
		web.WriteError(w, r, err)
		return
	}
	h.mcpURL(w, r)
}

func (h handler) deleteMCPURL(w http.ResponseWriter, r *http.Request) {
	if err := h.svc.ClearMCPURL(r.Context(), principal(r)); err != nil {
		web.WriteError(w, r, err)
		return
	}
	h.mcpURL(w, r)
}
