package web

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/agentgate/agentgate/pkg/agentgate"
)

// DecodeJSON reads r's body, a single JSON value, into v. Unknown fields,
// trailing data, a wrong type or a syntax error are EINVALID errors that say
// where; a body over the chain's cap is ETOOLARGE.
func DecodeJSON(r *http.Request, v any) error {
	if ct := r.Header.Get("Content-Type"); ct != "" && !strings.HasPrefix(strings.ToLower(ct), "application/json") {
		return agentgate.Errorf(agentgate.EINVALID, "Content-Type must be application/json, not %q", ct)
	}
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return decodeError(err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		if err != nil {
			return decodeError(err)
		}
		return agentgate.Errorf(agentgate.EINVALID, "request body has data after the JSON value")
	}
	return nil
}

func decodeError(err error) error {
	var (
		maxErr    *http.MaxBytesError
		syntaxErr *json.SyntaxError
		typeErr   *json.UnmarshalTypeError
	)
	switch {
	case errors.As(err, &maxErr):
		return tooLarge(maxErr.Limit)
	case errors.Is(err, io.EOF):
		return agentgate.Errorf(agentgate.EINVALID, "request body is empty; want a JSON object")
	case errors.As(err, &syntaxErr):
		return agentgate.Errorf(agentgate.EINVALID, "request body is not valid JSON (at byte %d): %v", syntaxErr.Offset, syntaxErr)
	case errors.As(err, &typeErr):
		return agentgate.Errorf(agentgate.EINVALID, "%s: want %s, got JSON %s", typeErr.Field, typeErr.Type, typeErr.Value)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return agentgate.Errorf(agentgate.EINVALID, "request body is truncated JSON")
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		return agentgate.Errorf(agentgate.EINVALID, "unknown field %s", strings.TrimPrefix(err.Error(), "json: unknown field "))
	}
	return agentgate.Wrap(agentgate.EINVALID, err, fmt.Sprintf("request body: %v", err))
}
