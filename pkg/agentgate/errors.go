// Package agentgate holds the domain vocabulary every part of agentgate shares:
// the error codes that travel from the store to the HTTP edge.
//
// Following github.com/benbjohnson/wtf, an error carries a code that says what
// kind of failure it is; only the HTTP edge (package web) turns codes into
// statuses, so the store and the services never think in HTTP.
package agentgate

import (
	"errors"
	"fmt"
)

// Error codes. They are strings so they read well in logs and JSON bodies.
const (
	EINVALID      = "invalid"      // the caller sent something malformed
	ENOTFOUND     = "not_found"    // no such thing (or it expired)
	ECONFLICT     = "conflict"     // a lost race or a duplicate: re-read and decide
	EUNAUTHORIZED = "unauthorized" // no or bad credentials
	EFORBIDDEN    = "forbidden"    // authenticated, not allowed
	ETOOLARGE     = "too_large"    // request body over the cap
	ERATELIMITED  = "rate_limited" // budget spent for this window
	ETIMEOUT      = "timeout"      // the request deadline passed
	EUNAVAILABLE  = "unavailable"  // a dependency (the table, an agent) failed; retry later
	EAGENT        = "agent_error"  // the agent answered, with an error
	ENOTIMPL      = "not_implemented"
	EMEDIATYPE    = "unsupported_media_type" // a body of a type the endpoint does not read
	EINTERNAL     = "internal"               // a bug
)

// Error is an error with a code. Message is safe to show to the caller; Err, if
// set, is the underlying cause, kept for logs and errors.Is/As.
type Error struct {
	Code    string
	Message string
	Err     error
}

func (e *Error) Error() string {
	switch {
	case e.Err != nil && e.Message != "":
		return e.Message + ": " + e.Err.Error()
	case e.Err != nil:
		return e.Err.Error()
	}
	return e.Message
}

func (e *Error) Unwrap() error { return e.Err }

// Errorf returns an *Error with the given code and a formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Wrap returns an *Error with the given code and message around cause.
func Wrap(code string, cause error, message string) *Error {
	return &Error{Code: code, Message: message, Err: cause}
}

// ErrorCode returns the code of the first *Error in err's chain, EINTERNAL for
// any other non-nil error, and "" for nil.
func ErrorCode(err error) string {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return EINTERNAL
}

// ErrorMessage returns the caller-safe message of the first *Error in err's
// chain; for any other error it returns a generic text, so that internal
// details never reach a response.
func ErrorMessage(err error) string {
	var e *Error
	if errors.As(err, &e) && e.Message != "" {
		return e.Message
	}
	return "internal error"
}
