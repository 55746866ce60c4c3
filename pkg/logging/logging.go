// Package logging sets up agentgate's structured JSON logs: one slog logger
// whose records carry the request id from the context and never a secret.
package logging

import (
	"context"
	"io"
	"log/slog"
	"strings"
)

type requestIDKey struct{}

// WithRequestID returns ctx carrying the request id that every log record
// made with it will show.
func WithRequestID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, requestIDKey{}, id)
}

// RequestID returns the request id in ctx, or "".
func RequestID(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}

// ParseLevel reads a level name (debug, info, warn, error); anything else is info.
func ParseLevel(s string) slog.Level {
	var l slog.Level
	if err := l.UnmarshalText([]byte(strings.TrimSpace(s))); err != nil {
		return slog.LevelInfo
	}
	return l
}

// New returns a JSON logger writing to w at level.
func New(w io.Writer, level slog.Level) *slog.Logger {
	h := slog.NewJSONHandler(w, &slog.HandlerOptions{Level: level, ReplaceAttr: redact})
	return slog.New(contextHandler{h})
}

// Redacted is what a sensitive attribute's value is replaced with.
const Redacted = "[REDACTED]"

// sensitive lists attribute-name fragments whose values are never logged,
// whatever a caller passes: a second line of defence behind the rule that
// code does not log credentials in the first place.
var sensitive = []string{"authorization", "cookie", "secret", "password", "token", "apikey", "api_key", "jwt", "credential"}

// IsSensitive reports whether an attribute (or header) name names a secret.
func IsSensitive(name string) bool {
	n := strings.ToLower(name)
	for _, s := range sensitive {
		if strings.Contains(n, s) {
			return true
		}
	}
	return false
}

func redact(_ []string, a slog.Attr) slog.Attr {
	if a.Value.Kind() != slog.KindGroup && IsSensitive(a.Key) {
		return slog.String(a.Key, Redacted)
	}
	return a
}

// contextHandler adds the context's request id to every record.
type contextHandler struct{ slog.Handler }

func (h contextHandler) Handle(ctx context.Context, r slog.Record) error {
	if id := RequestID(ctx); id != "" {
		r.AddAttrs(slog.String("request_id", id))
	}
	return h.Handler.Handle(ctx, r)
}

func (h contextHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return contextHandler{h.Handler.WithAttrs(as)}
}

func (h contextHandler) WithGroup(name string) slog.Handler {
	return contextHandler{h.Handler.WithGroup(name)}
}
