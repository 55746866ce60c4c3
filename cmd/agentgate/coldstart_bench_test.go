package main

import (
	"bytes"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// BenchmarkServeColdStart measures how long `agentgate serve` takes from
// exec to its first answered MCP request (tools/list at 2026-07-28 on
// /mcp, with an API key, on the embedded store), against a bare go-sdk
// server (testdata/bareserver: one tool, stateless) answering the same
// request (issue 13, goal 5: at most 1.5x). Both are built as release
// binaries (-trimpath -ldflags='-s -w') before the timer starts; each
// iteration starts each once, in turn, so that the machine's load weighs on
// both alike, and polls every millisecond until the answer comes.
//
// It reports the median start of each (agentgate-ms, bare-ms) and their
// ratio (x-bare); ns/op is the two starts together.
//
// go test -run '^$' -bench ServeColdStart -benchtime 20x ./cmd/agentgate/
func BenchmarkServeColdStart(b *testing.B) {
	dir := b.TempDir()
	agentgate, bare := filepath.Join(dir, "agentgate"), filepath.Join(dir, "bare")
	for bin, pkg := range map[string]string{agentgate: ".", bare: "./testdata/bareserver"} {
		if out, err := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", bin, pkg).CombinedOutput(); err != nil {
			b.Fatalf("go build %s: %v\n%s", pkg, err, out)
		}
	}
	data := filepath.Join(dir, "agentgate.db")
	out, err := exec.Command(agentgate, "keys", "create", "--owner", "bench", "--data", data).Output()
	if err != nil {
		b.Fatalf("keys create: %v", err)
	}
	var key struct{ Key string }
	if err := json.Unmarshal(out, &key); err != nil || key.Key == "" {
		b.Fatalf("keys create printed %q: %v", out, err)
	}

	var ag, ba []time.Duration
	for b.Loop() {
		ag = append(ag, coldStart(b, func(addr string) *exec.Cmd {
			return exec.Command(agentgate, "serve", "--addr", addr, "--agents=", "--sample-agent=", "--data", data)
		}, "/mcp", key.Key))
		ba = append(ba, coldStart(b, func(addr string) *exec.Cmd { return exec.Command(bare, addr) }, "/", ""))
	}
	agMedian, baMedian := median(ag), median(ba)
	b.ReportMetric(float64(agMedian)/1e6, "agentgate-ms")
	b.ReportMetric(float64(baMedian)/1e6, "bare-ms")
	b.ReportMetric(float64(agMedian)/float64(baMedian), "x-bare")
}

// coldStart starts the server start makes on a free loopback port and
// returns the time from exec to its first 200 answer to tools/list at
// path.
func coldStart(b *testing.B, start func(addr string) *exec.Cmd, path, token string) time.Duration {
	b.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	cmd := start(addr)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + b.TempDir()}
	client := &http.Client{Timeout: time.Second}
	began := time.Now()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() {
		cmd.Process.Kill()
		cmd.Wait()
	}()
	for time.Since(began) < 30*time.Second {
		if answered(client, "http://"+addr+path, token) {
			return time.Since(began)
		}
		time.Sleep(time.Millisecond)
	}
	b.Fatalf("%s answered no tools/list within 30 s", cmd.Path)
	return 0
}

// toolsList is a 2026-07-28 tools/list, which needs no session.
var toolsList = []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{` +
	`"io.modelcontextprotocol/protocolVersion":"2026-07-28",` +
	`"io.modelcontextprotocol/clientInfo":{"name":"bench","version":"1"},` +
	`"io.modelcontextprotocol/clientCapabilities":{}}}}`)

// answered reports whether url answers tools/list with 200.
func answered(client *http.Client, url, token string) bool {
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(toolsList))
	if err != nil {
		return false
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "tools/list")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := client.Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}
