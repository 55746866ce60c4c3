package connector

import (
	"net/http"
	"strconv"
	"time"

	"github.com/agentgate/agentgate/pkg/agentgate"
	"github.com/agentgate/agentgate/pkg/apikey"
	"github.com/agentgate/agentgate/pkg/web"
)

// KeysRoutes is the user API keys API. The chain in front has authenticated
// the caller with a user-scope credential; every key it touches is the
// caller's own.
//
//	POST   /api/keys       create: {"name"?, "expiresAt"? | "expiresIn"?} -> 201, the secret once
//	GET    /api/keys       list own keys: ?limit=&cursor= -> {"keys": [...], "nextCursor"?}
//	DELETE /api/keys/{id}  revoke -> 200 with the key's info
func KeysRoutes(keys *apikey.Service) []web.Route {
	h := keysHandler{keys: keys}
	return []web.Route{
		{Method: http.MethodPost, Path: "/api/keys", Handler: http.HandlerFunc(h.create)},
		{Method: http.MethodGet, Path: "/api/keys", Handler: http.HandlerFunc(h.list)},
		{Method: http.MethodDelete, Path: "/api/keys/{id}", Handler: http.HandlerFunc(h.revoke)},
	}
}

type keysHandler struct{ keys *apikey.Service }

// createKeyRequest is the body of POST /api/keys.
type createKeyRequest struct {
	Name      string     `json:"name"`
	ExpiresAt *time.Time `json:"expiresAt"`
	ExpiresIn string     `json:"expiresIn"` // a Go duration such as "720h"
}

// owner is the authenticated caller; the chain guarantees one.
func owner(r *http.Request) string {
	p, _ := agentgate.PrincipalFrom(r.Context())
	return p.Subject
}

func (h keysHandler) create(w http.ResponseWriter, r *http.Request) {
	var req createKeyRequest
	if err := web.DecodeJSON(r, &req); err != nil {
		web.WriteError(w, r, err)
		return
	}
	nk := apikey.NewKey{Owner: owner(r), Name: req.Name}
	switch {
	case req.ExpiresAt != nil && req.ExpiresIn != "":
		web.WriteError(w, r, agentgate.Errorf(agentgate.EINVALID, "give expiresAt or expiresIn, not both"))
		return
	case req.ExpiresAt != nil:
		nk.ExpiresAt = *req.ExpiresAt
	case req.ExpiresIn != "":
		d, err := time.ParseDuration(req.ExpiresIn)
		if err != nil || d <= 0 {
			web.WriteError(w, r, agentgate.Errorf(agentgate.EINVALID, "expiresIn: want a positive duration such as \"720h\", got %q", req.ExpiresIn))
			return
		}
		nk.ExpiresIn = d
	}
	created, err := h.keys.Create(r.Context(), nk)
	if err != nil {
		web.WriteError(w, r, err)
		return
	}
	// The only response that ever carries a key's secret: keep it out of
	// every cache.
	w.Header().Set("Cache-Control", "no-store")
	web.WriteJSON(w, http.StatusCreated, created)
}

// keyList is the body of GET /api/keys.
type keyList struct {
	Keys       []apikey.Info `json:"keys"`
	NextCursor string        `json:"nextCursor,omitempty"`
}

func (h keysHandler) list(w http.ResponseWriter, r *http.Request) {
	limit := 0
	if v := r.URL.Query().Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 100 {
			web.WriteError(w, r, agentgate.Errorf(agentgate.EINVALID, "limit: want a number from 1 to 100, got %q", v))
			return
		}
		limit = n
	}
	infos, next, err := h.keys.List(r.Context(), owner(r), r.URL.Query().Get("cursor"), limit)
	if err != nil {
		web.WriteError(w, r, err)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	web.WriteJSON(w, http.StatusOK, keyList{Keys: infos, NextCursor: next})
}

func (h keysHandler) revoke(w http.ResponseWriter, r *http.Request) {
	info, err := h.keys.Revoke(r.Context(), owner(r), r.PathValue("id"))
	if err != nil {
		web.WriteError(w, r, err)
		return
	}
	web.WriteJSON(w, http.StatusOK, info)
}
