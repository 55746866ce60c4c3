// Package web is agentgate's HTTP edge: JSON responses, the mapping from
// agentgate error codes to HTTP statuses, route tables and the mux every
// function serves from.
package web

import (
	"encoding/json"
	"errors"
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
	agentgate.EMEDIATYPE:    http.StatusUnsupportedMediaType,
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
	// ErrHandlerTimeout: the deadline step has answered (and logged) already.
	if err := json.NewEncoder(w).Encode(v); err != nil && !errors.Is(err, http.ErrHandlerTimeout) {
		slog.Warn("writing response", "err", err)
	}
}

// WriteError writes err as a JSON error with the status its code maps to.
// Internal errors are logged with their cause and answered with a generic
// message, so nothing internal reaches the caller.
func WriteError(w http.ResponseWriter, r *http.Request, err error) {
	code := agentgate.ErrorCode(err)
	status := Status(code)
	logFailure(r, status, code, err)
	WriteJSON(w, status, ErrorBody{Error: ErrorDetail{Code: code, Message: agentgate.ErrorMessage(err)}})
}

// logFailure logs a server-side failure (5xx) with its cause, once per
// request: once the request deadline has passed, the deadline step answers
// 504 and logs it, and what the handler says after that (often the same
// timeout, seen from a store call or a body read) reaches no one. The clock
// decides, not the context, whose timer may not have fired yet when a read
// that the same deadline ended returns.
func logFailure(r *http.Request, status int, code string, err error) {
	if status < 500 || status == http.StatusNotImplemented || pastDeadline(r.Context()) {
		return
	}
	slog.ErrorContext(r.Context(), "request failed", "method", r.Method, "path", r.URL.Path, "code", code, "err", err)
}
