package connector

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"sync"
	"time"

	"github.com/agentgate/agentgate/pkg/agent"
	"github.com/agentgate/agentgate/pkg/agentgate"
	"github.com/agentgate/agentgate/pkg/web"
)

// The agent registration API: an owner's agents over HTTP, as `agentgate
// agents import` registers them from a shell.
//
//	POST   /api/agents         register a template (YAML or JSON) -> 201 new, 200 unchanged or updated
//	GET    /api/agents         the caller's agents -> {"agents": [...]}
//	GET    /api/agents/{name}  one of them
//	DELETE /api/agents/{name}  delete it, and its connector, keys and MCP exposure

type handler struct {
	svc *Service
	// chatter is nil only in route tables built to be listed, not served.
	chatter chatter
}

// AgentView is an agent as the API shows it to its owner.
type AgentView struct {
	Name      string         `json:"name"`
	Owner     string         `json:"owner"`
	Template  agent.Template `json:"template"`
	Digest    string         `json:"digest"`
	CreatedAt time.Time      `json:"createdAt"`
	UpdatedAt time.Time      `json:"updatedAt"`
	// MCPExposed and Tool say whether every user's MCP session lists the
	// agent as a tool, and under which name (null when not exposed).
	MCPExposed bool    `json:"mcp_exposed"`
	Tool       *string `json:"tool"`
	// Result is what a registration did: created, updated or unchanged.
	Result agent.ImportResult `json:"result,omitempty"`
}

func view(a agent.Agent, tools map[string]string) AgentView {
	v := AgentView{Name: a.Template.Name, Owner: a.Owner, Template: a.Template, Digest: a.Digest,
		CreatedAt: a.CreatedAt, UpdatedAt: a.UpdatedAt}
	if tool, ok := tools[a.Template.Name]; ok {
		v.MCPExposed, v.Tool = true, &tool
	}
	return v
}

// principal is the authenticated caller; the chain guarantees one.
func principal(r *http.Request) agentgate.Principal {
	p, _ := agentgate.PrincipalFrom(r.Context())
	return p
}

// problemsBody is a 400 for an invalid template: the error, and each
// problem with its path, so that a form can show them where they belong.
type problemsBody struct {
	Error    web.ErrorDetail `json:"error"`
	Problems []agent.Problem `json:"problems"`
}

func writeError(w http.ResponseWriter, r *http.Request, err error) {
	var ve *agent.ValidationError
	if errors.As(err, &ve) {
		web.WriteJSON(w, http.StatusBadRequest, problemsBody{
			Error:    web.ErrorDetail{Code: agentgate.EINVALID, Message: agentgate.ErrorMessage(err)},
			Problems: ve.Problems})
		return
	}
	web.WriteError(w, r, err)
}

// Template media types: YAML as the template file is written, or JSON.
var yamlTypes = map[string]bool{"application/yaml": true, "application/x-yaml": true, "text/yaml": true, "text/x-yaml": true}

// readTemplate reads a template from r's body, by its Content-Type: YAML
// strictly as agent.Parse reads a file, JSON strictly with the same field
// names (no Content-Type is JSON, as everywhere in the API).
func readTemplate(r *http.Request) (*agent.Template, error) {
	ct := r.Header.Get("Content-Type")
	isYAML := false
	if ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		switch {
		case (err == nil || errors.Is(err, mime.ErrInvalidMediaParameter)) && yamlTypes[mt]:
			isYAML = true
		case (err == nil || errors.Is(err, mime.ErrInvalidMediaParameter)) && mt == "application/json":
		default:
			return nil, agentgate.Errorf(agentgate.EMEDIATYPE, "Content-Type must be application/yaml or application/json, not %.64q", ct)
		}
	}
	// ReadBody reads within the cap and the deadline; it wants JSON, so
	// it is shown the request without the type already checked here.
	plain := *r
	plain.Header = r.Header.Clone()
	plain.Header.Del("Content-Type")
	body, err := web.ReadBody(&plain)
	if err != nil {
		return nil, err
	}
	if isYAML {
		return agent.Parse(body)
	}
	if len(body) > agent.MaxTemplateSize {
		return nil, &agent.ValidationError{Problems: []agent.Problem{{Message: fmt.Sprintf("larger than %d bytes", agent.MaxTemplateSize)}}}
	}
	var t agent.Template
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	dec.UseNumber() // an input schema keeps its numbers as written, as the registry reads them
	if err := dec.Decode(&t); err != nil {
		return nil, web.JSONError("template", "", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, agentgate.Errorf(agentgate.EINVALID, "template: data after the JSON object")
	}
	return &t, nil
}

// alongsideTools runs read while it reads the exposed agents' tool names:
// the two are independent, and on Lambda a request's latency is its
// sequential store round trips. read's error comes first.
func (h handler) alongsideTools(ctx context.Context, read func() error) (map[string]string, error) {
	var (
		tools    map[string]string
		toolsErr error
		wg       sync.WaitGroup
	)
	wg.Go(func() { tools, toolsErr = h.svc.Tools(ctx) })
	err := read()
	wg.Wait()
	if err != nil {
		return nil, err
	}
	return tools, toolsErr
}

func (h handler) register(w http.ResponseWriter, r *http.Request) {
	t, err := readTemplate(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	// The system agent's name is the operator's: over HTTP, only an admin
	// may register it, so that no one takes it before the operator does.
	if t.Name != "" && t.Name == h.svc.systemAgent {
		if err := h.svc.CheckAdmin(principal(r)); err != nil {
			writeError(w, r, agentgate.Errorf(agentgate.EFORBIDDEN, "agent %q is the system agent (SYSTEM_AGENT): only an admin may register it", t.Name))
			return
		}
	}
	var (
		a   agent.Agent
		res agent.ImportResult
	)
	tools, err := h.alongsideTools(r.Context(), func() (err error) {
		a, res, err = h.svc.Register(r.Context(), principal(r).Subject, t)
		return err
	})
	if err != nil {
		writeError(w, r, err)
		return
	}
	v := view(a, tools)
	v.Result = res
	status := http.StatusOK
	if res == agent.Created {
		status = http.StatusCreated
	}
	w.Header().Set("Cache-Control", "no-store")
	web.WriteJSON(w, status, v)
}

func (h handler) list(w http.ResponseWriter, r *http.Request) {
	var agents []agent.Agent
	tools, err := h.alongsideTools(r.Context(), func() (err error) {
		agents, err = h.svc.Owned(r.Context(), principal(r).Subject)
		return err
	})
	if err != nil {
		writeError(w, r, err)
		return
	}
	views := make([]AgentView, 0, len(agents))
	for _, a := range agents {
		views = append(views, view(a, tools))
	}
	w.Header().Set("Cache-Control", "no-store")
	web.WriteJSON(w, http.StatusOK, map[string]any{"agents": views})
}

func (h handler) get(w http.ResponseWriter, r *http.Request) {
	var a agent.Agent
	tools, err := h.alongsideTools(r.Context(), func() (err error) {
		a, _, err = h.svc.Authorize(r.Context(), principal(r), r.PathValue("name"), false)
		return err
	})
	if err != nil {
		writeError(w, r, err)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	web.WriteJSON(w, http.StatusOK, view(a, tools))
}

func (h handler) delete(w http.ResponseWriter, r *http.Request) {
	a, _, err := h.svc.Authorize(r.Context(), principal(r), r.PathValue("name"), false)
	if err != nil {
		writeError(w, r, err)
		return
	}
	if err := h.svc.Delete(r.Context(), a); err != nil {
		writeError(w, r, err)
		return
	}
	web.WriteJSON(w, http.StatusOK, map[string]any{"agent": a.Template.Name, "deleted": true})
}
