// Command sampleagent serves the deterministic A2A agent of package
// sampleagent, for trying agentgate against a real agent:
//
//	sampleagent --addr 127.0.0.1:9090
//
// Its JSON-RPC endpoint is http://ADDR/ and its card is at
// http://ADDR/.well-known/agent-card.json. Logs are JSON on stderr.
package main

import (
	"flag"
	"log/slog"
	"net/http"
	"os"
	"time"

	"github.com/agentgate/agentgate/pkg/logging"
	"github.com/agentgate/agentgate/pkg/sampleagent"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:9090", "address to listen on")
	url := flag.String("url", "", "endpoint URL the agent card advertises (default: the origin the card is fetched from)")
	flag.Parse()

	logger := logging.New(os.Stderr, slog.LevelInfo)
	agent := sampleagent.New(sampleagent.Options{URL: *url, Logger: logger})
	srv := &http.Server{Addr: *addr, Handler: agent.Handler(), ReadHeaderTimeout: 10 * time.Second}
	logger.Info("sampleagent listening", "addr", *addr)
	err := srv.ListenAndServe()
	logger.Error("sampleagent stopped", "err", err)
	os.Exit(1)
}
