// Package web is agentgate's HTTP edge: JSON responses, the mapping from
// agentgate error codes to HTTP statuses, route tables and the mux every
// function serves from.
package web

import (
	"encoding/json"
	"log/slog"
	"net/http"

	"github.com/agentgate/agentgate/pkg/agentgate"
)

// statuses maps error codes to HTTP statuses. Only this package knows HTTP.
var statuses = map[string]int{
	agentgate.EINVALID:      http.StatusBadRequest,
	agentgate.ENOTFOUND:     http.StatusNotFound,
	agentgate.ECONFLICT:     http.StatusConflict,
	agentgate.EUNAUTHORIZED: http.StatusUnauthorized,
	agentgate.EFORBIDDEN:    http.StatusForbidden,
	agentgate.ETOOLARGE:     http.StatusRequestEntityTooLarge,
	agentgate.ERATELIMITED:  http.StatusTooManyRequests,
	agentgate.ETIMEOUT:      http.StatusGatewayTimeout,
	agentgate.EUNAVAILABLE:  http.StatusServiceUnavailable,
	agentgate.EAGENT:        http.StatusBadGateway,
	agentgate.ENOTIMPL:      http.StatusNotImplemented,
	agentgate.EINTERNAL:     http.StatusInternalServerError,
}

// Status returns the HTTP status for an error code.
func Status(code string) int {
	if s, ok := statuses[code]; ok {
		return s
	}
	return http.StatusInternalServerError
}

// ErrorBody is the JSON shape of every error response.
type ErrorBody struct {
	Error ErrorDetail `json:"error"`
}

// ErrorDetail says what went wrong, in words safe to show the caller.
type ErrorDetail struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// WriteJSON writes v as a JSON response with the given status.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	if err := json.NewEncoder(w).Encode(v); err != nil {
		slog.Warn("writing response", "err", err)
	}
}

// WriteError writes err as a JSON error with the status its code maps to.
// Internal errors are logged with their cause and answered with a generic
// message, so nothing internal reaches the caller.
func WriteError(w http.ResponseWriter, r *http.Request, err error) {
	code := agentgate.ErrorCode(err)
	status := Status(code)
	if status >= 500 && status != http.StatusNotImplemented {
		slog.ErrorContext(r.Context(), "request failed", "method", r.Method, "path", r.URL.Path, "code", code, "err", err)
	}
	WriteJSON(w, status, ErrorBody{Error: ErrorDetail{Code: code, Message: agentgate.ErrorMessage(err)}})
}

// WriteRPCError answers a JSON-RPC 2.0 error (id nil when the request's
// is unknown) with an HTTP status: the JSON-RPC endpoints (MCP, the A2A
// front door) say what is wrong in both.
func WriteRPCError(w http.ResponseWriter, status int, id any, code int64, message string) {
	WriteJSON(w, status, map[string]any{
		"jsonrpc": "2.0", "id": id,
		"error": map[string]any{"code": code, "message": message},
	})
}
