package askproxy

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentgate/agentgate/pkg/config"
)

// BenchmarkAskDocs is a warm ask_docs call, by the go-sdk client over
// Streamable HTTP (2026-07-28, stateless) to askproxy's handler, against a
// local upstream: an httptest server with a fixed answer (the adapter's own
// cost, loopback HTTP included), and the built-in docs Q&A (what a default
// deployment does per question).
//
//	go test -run '^$' -bench AskDocs -benchmem ./pkg/askproxy/
func BenchmarkAskDocs(b *testing.B) {
	fixed := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"state":"SUCCEEDED","answer":"Run make test.","session_id":98765432109876543210,"citations":[{"title":"README.md › agentgate","url":"README.md#agentgate"}]}`)
	}))
	b.Cleanup(fixed.Close)
	epochClock := func() time.Time { return epoch }
	for _, up := range []struct {
		name string
		svc  *Service
	}{
		{"upstream=httptest", New(config.Ask{Endpoint: fixed.URL}, epochClock)},
		{"upstream=builtin", New(config.Ask{}, epochClock)},
	} {
		b.Run(up.name, func(b *testing.B) {
			srv := httptest.NewServer(Handler(up.svc.Server("bench")))
			b.Cleanup(srv.Close)
			c := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
			cs, err := c.Connect(b.Context(), &mcp.StreamableClientTransport{Endpoint: srv.URL}, &mcp.ClientSessionOptions{ProtocolVersion: "2026-07-28"})
			if err != nil {
				b.Fatal(err)
			}
			defer cs.Close()
			params := &mcp.CallToolParams{Name: AskDocsTool, Arguments: map[string]any{"question": "How do I run the tests?"}}
			call := func() {
				res, err := cs.CallTool(b.Context(), params)
				if err != nil || res.IsError {
					b.Fatalf("ask_docs: %v %+v", err, res)
				}
			}
			call() // warm: connections, the built-in index
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				call()
			}
		})
	}
}
