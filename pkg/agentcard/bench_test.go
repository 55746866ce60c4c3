package agentcard_test

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/agentgate/agentgate/pkg/agentcard"
	"github.com/agentgate/agentgate/pkg/agentgate"
	"github.com/agentgate/agentgate/pkg/app/apptest"
	"github.com/agentgate/agentgate/pkg/logging"
	"github.com/agentgate/agentgate/pkg/store"
	"github.com/agentgate/agentgate/pkg/store/dynamo/dynalite"
	"github.com/agentgate/agentgate/pkg/store/storetest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	dynalite.Stop() // started by the benchmark's dynamodb stack
	os.Exit(code)
}

// BenchmarkFrontDoor measures the A2A front door end to end (chain, agent
// lookup, dedup, the call to the sample agent, the execution record), with
// the store calls per request:
//
//   - send: SendMessage with a new messageId;
//   - replay: SendMessage with a messageId already answered (no agent call);
//   - get-task: GetTask of a running task (one agent call, a record update);
//   - card: the agent card.
//
// Rate limits are off (each would add one write per request and rule).
func BenchmarkFrontDoor(b *testing.B) {
	prev := slog.Default()
	slog.SetDefault(logging.New(io.Discard, slog.LevelInfo))
	b.Cleanup(func() { slog.SetDefault(prev) })
	for _, backend := range apptest.Backends {
		b.Run(backend, func(b *testing.B) {
			s := apptest.New(b, backend, nil)
			var counted *storetest.Counting
			srv := httptest.NewServer(s.Wrap(func(st store.Store) store.Store { counted = storetest.Count(st); return counted }))
			b.Cleanup(srv.Close)
			auth := "Bearer " + s.Key("alice", agentgate.ScopeUser)
			post := func(body string) map[string]any {
				req, _ := http.NewRequest(http.MethodPost, srv.URL+agentcard.FrontDoorPath(s.AgentID), strings.NewReader(body))
				req.Header.Set("Authorization", auth)
				req.Header.Set("Content-Type", "application/json")
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				defer resp.Body.Close()
				var out map[string]any
				if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || out["result"] == nil {
					b.Fatalf("front door: %v %v", out, err)
				}
				return out
			}
			send := func(id, text string) map[string]any {
				return post(fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"configuration":{"returnImmediately":true},"message":{"messageId":%q,"role":"ROLE_USER","parts":[{"text":%q}]}}}`, id, text))
			}
			// A task that keeps running, for GetTask.
			running := send("bench-slow", "slow 20")["result"].(map[string]any)["task"].(map[string]any)["id"].(string)
			send("bench-replay", "echo replay")

			i := 0
			for _, tc := range []struct {
				name string
				op   func()
			}{
				{"send", func() { i++; send(fmt.Sprint("bench-", i), "echo bench") }},
				{"replay", func() { send("bench-replay", "echo replay") }},
				{"get-task", func() { post(fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":%q}}`, running)) }},
				{"card", func() {
					req, _ := http.NewRequest(http.MethodGet, srv.URL+agentcard.CardPath(s.AgentID), nil)
					req.Header.Set("Authorization", auth)
					resp, err := http.DefaultClient.Do(req)
					if err != nil || resp.StatusCode != 200 {
						b.Fatalf("card: %v %v", resp, err)
					}
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}},
			} {
				b.Run(tc.name, func(b *testing.B) {
					reads, writes := counted.Reads(), counted.Writes()
					b.ReportAllocs()
					for b.Loop() {
						tc.op()
					}
					b.ReportMetric(float64(counted.Reads()-reads)/float64(b.N), "reads/op")
					b.ReportMetric(float64(counted.Writes()-writes)/float64(b.N), "writes/op")
				})
			}
		})
	}
}
