package logging

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
)

func TestRecordsCarryRequestIDAndNoSecrets(t *testing.T) {
	var buf bytes.Buffer
	log := New(&buf, slog.LevelDebug)
	ctx := WithRequestID(context.Background(), "req-123")
	log.InfoContext(ctx, "authenticated",
		"authorization", "Bearer agk_live_supersecret",
		"jwt_secret", "s3cr3t-value",
		slog.Group("req", "api_key", "agk_x", "path", "/mcp"),
		"owner", "alice")

	out := buf.String()
	for _, leak := range []string{"supersecret", "s3cr3t-value", "agk_x"} {
		if strings.Contains(out, leak) {
			t.Fatalf("log leaked %q: %s", leak, out)
		}
	}
	var rec map[string]any
	if err := json.Unmarshal(buf.Bytes(), &rec); err != nil {
		t.Fatalf("log line is not JSON: %v: %s", err, out)
	}
	if rec["request_id"] != "req-123" || rec["owner"] != "alice" || rec["authorization"] != Redacted {
		t.Fatalf("unexpected record: %v", rec)
	}
	if grp, _ := rec["req"].(map[string]any); grp["path"] != "/mcp" || grp["api_key"] != Redacted {
		t.Fatalf("group not redacted field by field: %v", rec["req"])
	}
}

func TestParseLevel(t *testing.T) {
	for in, want := range map[string]slog.Level{"debug": slog.LevelDebug, "WARN": slog.LevelWarn, "error": slog.LevelError, "": slog.LevelInfo, "loud": slog.LevelInfo} {
		if got := ParseLevel(in); got != want {
			t.Errorf("ParseLevel(%q) = %v, want %v", in, got, want)
		}
	}
}
