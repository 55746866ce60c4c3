package web

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"os"
	"reflect"
	"strconv"
	"strings"

	"github.com/agentgate/agentgate/pkg/agentgate"
)

// RequireJSON is the one Content-Type rule of every endpoint that reads a
// JSON body (the REST API, the MCP endpoint, the A2A front door): the body
// must be declared application/json (parameters such as charset allowed), or
// not declared at all. Any other type is EMEDIATYPE (415): the client meant
// something else, such as a form (curl -d) or a browser's text/plain, and
// parsing it as JSON would only produce a misleading syntax error. A missing
// Content-Type is read as JSON: it claims nothing false, the body must parse
// as JSON anyway, and plain HTTP clients and scripts often send none.
func RequireJSON(r *http.Request) error {
	ct := r.Header.Get("Content-Type")
	if ct == "" {
		return nil
	}
	mt, _, err := mime.ParseMediaType(ct)
	if (err == nil || errors.Is(err, mime.ErrInvalidMediaParameter)) && mt == "application/json" {
		return nil
	}
	return agentgate.Errorf(agentgate.EMEDIATYPE, "Content-Type must be application/json, not %.64q", ct)
}

// ReadBody reads a JSON endpoint's whole body, after RequireJSON. Every way
// reading can fail is an agentgate error: past the chain's cap (chunked
// bodies included, which the cap can only catch while they are read) is
// ETOOLARGE; a body still incomplete at the request deadline (the deadline
// step bounds reads on the connection too) is ETIMEOUT; a body cut short by
// the client is EINVALID.
func ReadBody(r *http.Request) ([]byte, error) {
	if err := RequireJSON(r); err != nil {
		return nil, err
	}
	body, err := io.ReadAll(r.Body)
	if err == nil {
		return body, nil
	}
	var maxErr *http.MaxBytesError
	switch {
	case errors.As(err, &maxErr):
		return nil, tooLarge(maxErr.Limit)
	case errors.Is(err, os.ErrDeadlineExceeded) || r.Context().Err() != nil:
		return nil, agentgate.Wrap(agentgate.ETIMEOUT, err, "the request body did not arrive within the request deadline")
	case errors.Is(err, io.ErrUnexpectedEOF):
		return nil, agentgate.Wrap(agentgate.EINVALID, err, "the request body ended before its declared Content-Length")
	}
	return nil, agentgate.Wrap(agentgate.EINVALID, err, "the request body could not be read")
}

// DecodeJSON reads r's body (ReadBody), a single JSON value, into v. Unknown
// fields, trailing data, a wrong type or a syntax error are EINVALID errors
// that say where.
func DecodeJSON(r *http.Request, v any) error {
	body, err := ReadBody(r)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return JSONError("request body", "", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		if err != nil {
			return JSONError("request body", "", err)
		}
		return agentgate.Errorf(agentgate.EINVALID, "request body has data after the JSON value")
	}
	return nil
}

// JSONError turns an error decoding what (a document: "request body",
// "params") into an EINVALID error in agentgate's words: where it went wrong
// and which JSON type was wanted there, never a Go type or the decoder's own
// text (kept as the cause, for logs). path prefixes field names ("params"
// gives "params.name"); "" leaves them bare.
func JSONError(what, path string, err error) error {
	var (
		syntaxErr *json.SyntaxError
		typeErr   *json.UnmarshalTypeError
	)
	switch {
	case errors.Is(err, io.EOF):
		return agentgate.Wrap(agentgate.EINVALID, err, what+" is empty; want a JSON object")
	case errors.As(err, &syntaxErr):
		return agentgate.Wrap(agentgate.EINVALID, err, fmt.Sprintf("%s is not valid JSON (at byte %d): %v", what, syntaxErr.Offset, syntaxErr))
	case errors.As(err, &typeErr):
		field := strings.Trim(path+"."+typeErr.Field, ".")
		if field == "" {
			field = what
		}
		return agentgate.Wrap(agentgate.EINVALID, err, fmt.Sprintf("%s: want %s, got JSON %s", field, jsonKind(typeErr.Type), valueKind(typeErr.Value)))
	case errors.Is(err, io.ErrUnexpectedEOF):
		return agentgate.Wrap(agentgate.EINVALID, err, what+" is truncated JSON")
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		return agentgate.Wrap(agentgate.EINVALID, err, "unknown field "+strings.TrimPrefix(err.Error(), "json: unknown field "))
	}
	return agentgate.Wrap(agentgate.EINVALID, err, what+" does not have the expected shape")
}

// jsonKind names the JSON type a Go type is read from.
func jsonKind(t reflect.Type) string {
	if t == nil {
		return "a different type"
	}
	switch t.Kind() {
	case reflect.Pointer:
		return jsonKind(t.Elem())
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return "integer"
	case reflect.Float32, reflect.Float64:
		return "number"
	case reflect.Slice, reflect.Array:
		return "array"
	case reflect.Map, reflect.Struct:
		return "object"
	}
	return "a different type"
}

// valueKind names the JSON type of the value a decoder refused: encoding/json
// reports a kind ("number", "string"), the MCP SDK's decoder (segmentio's,
// sharing its error type) the quoted JSON that follows.
func valueKind(v string) string {
	if raw, err := strconv.Unquote(v); err == nil && raw != "" {
		v = raw
	}
	switch {
	case v == "":
		return "value"
	case strings.HasPrefix(v, "number") || strings.ContainsAny(v[:1], "-0123456789"):
		return "number"
	case v == "bool" || v[0] == 't' || v[0] == 'f':
		return "boolean"
	case v == "string" || v[0] == '"':
		return "string"
	case v == "array" || v[0] == '[':
		return "array"
	case v == "object" || v[0] == '{':
		return "object"
	case v[0] == 'n':
		return "null"
	}
	return "value"
}
