//go:build unix

package app_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentgate/agentgate/pkg/agentgate"
	"github.com/agentgate/agentgate/pkg/app/apptest"
	"github.com/agentgate/agentgate/pkg/deploy"
	"github.com/agentgate/agentgate/pkg/lambdahttp"
	"github.com/agentgate/agentgate/pkg/logging"
	"github.com/agentgate/agentgate/pkg/mcpserver"
)

// BenchmarkCPUVersusBareSDK measures the server CPU time of one tools/call
// (list_recent_executions, which needs no agent) through agentgate's whole
// stack — the security chain with rate limits on (limits too high to refuse
// anything) and API key authentication, the MCP server, the embedded store
// — against a bare go-sdk server with one tool of the same name, input and
// output types, behind mcp.NewStreamableHTTPHandler (Stateless at
// 2026-07-28; with in-memory sessions at 2025-11-25; JSONResponse in both,
// as agentgate answers a call that needs no consent), for each protocol
// version, driven by the same go-sdk client loop (issue 13, goal 3: at most
// 1.0x the bare SDK's).
//
// Each server runs in a process of its own (this test binary re-executed
// into TestCPUBenchServer), and the figure is that process's user+system
// CPU time (getrusage RUSAGE_SELF) across the timed loop divided by the
// calls: every goroutine the request touches, the HTTP server's, the SDK's,
// the store's, the GC's and the runtime's, none of the client's. The server
// process collects its garbage before the loop, so each figure starts on a
// clean heap; GC work still owed when the loop ends is not counted (a few
// calls' worth at most). The server's idle background (the sample agent,
// tickers) is in it too, but is a few microseconds a second.
//
// agentgate runs as deployed: its garbage collector set for the MCP
// function's memory size in template.yaml (lambdahttp.Tune, which every
// function applies at start); the bare server runs as a bare go-sdk server
// does, with the runtime's defaults. That comparison is the goal's ratio.
// A third server, bare-tuned, is the bare one with agentgate's collector
// settings, so that the ratio with like-for-like settings is measured too:
// what agentgate's own work costs, apart from the collector's tuning.
//
// <version>/<side> report server-cpu-ns/op, each server alone;
// <version>/interleaved calls the three in turn (one call to each per
// iteration, all processes measured over the same interval, so that the
// rest of the machine's load weighs on each alike) and reports their
// figures, x-bare, agentgate's over the bare SDK's (the goal's ratio), and
// x-bare-tuned, agentgate's over the tuned bare server's.
// ns/op is the client's wall time, B/op and allocs/op the client's
// allocations: none of them the goal's figure. -count 10 | benchstat for
// stable figures.
//
// go test -cpuprofile profiles the client. With
// AGENTGATE_CPU_BENCH_PROFILE=<dir> each server process writes, for
// the timed loop only, <side>-<version>.cpu.pprof and the heap profiles
// <side>-<version>.allocs-{start,end}.pprof (compare with go tool pprof
// -sample_index=alloc_space -diff_base start end).
func BenchmarkCPUVersusBareSDK(b *testing.B) {
	sides := []string{"bare", "bare-tuned", "agentgate"}
	for _, version := range []string{mcpserver.Version20260728, mcpserver.Version20251125} {
		servers := map[string]*cpuServer{}
		for _, side := range sides {
			servers[side] = startCPUServer(b, side, version)
		}
		for _, side := range sides {
			b.Run(version+"/"+side, func(b *testing.B) {
				srv := servers[side]
				call := srv.caller(b, version)
				srv.control(b, "start")
				for b.Loop() {
					call()
				}
				b.ReportMetric(float64(srv.control(b, "stop"))/float64(b.N), "server-cpu-ns/op")
			})
		}
		// Both at once, a call to each per iteration, so that whatever else
		// the machine runs weighs on both figures alike: the ratio of the
		// goal.
		b.Run(version+"/interleaved", func(b *testing.B) {
			calls := make([]func(), len(sides))
			for i, side := range sides {
				calls[i] = servers[side].caller(b, version)
			}
			for _, side := range sides {
				servers[side].control(b, "start")
			}
			for b.Loop() {
				for _, call := range calls {
					call()
				}
			}
			cpu := map[string]float64{}
			for _, side := range sides {
				cpu[side] = float64(servers[side].control(b, "stop")) / float64(b.N)
				b.ReportMetric(cpu[side], side+"-cpu-ns/op")
			}
			ag := cpu["agentgate"]
			b.ReportMetric(ag/cpu["bare"], "x-bare")
			b.ReportMetric(ag/cpu["bare-tuned"], "x-bare-tuned")
			b.Logf("%s: agentgate %.0f ns server CPU per tools/call, bare go-sdk %.0f ns (%.2fx), bare go-sdk with agentgate's GC settings %.0f ns (%.2fx)",
				version, ag, cpu["bare"], ag/cpu["bare"], cpu["bare-tuned"], ag/cpu["bare-tuned"])
		})
	}
}

// caller connects the go-sdk client to s at version and returns a
// tools/call of list_recent_executions, warmed up.
func (s *cpuServer) caller(b *testing.B, version string) func() {
	cs := apptest.MCPClient(b, s.url, s.token, version, nil)
	call := func() {
		res, err := cs.CallTool(b.Context(), &mcp.CallToolParams{Name: "list_recent_executions", Arguments: map[string]any{}})
		if err != nil || res.IsError {
			b.Fatalf("list_recent_executions: %v %v", err, res)
		}
	}
	for range 50 { // caches, pools, lazily built servers
		call()
	}
	return call
}

// Environment of the server process.
const (
	cpuServerEnv  = "AGENTGATE_CPU_BENCH_SERVER"  // side/version
	cpuProfileEnv = "AGENTGATE_CPU_BENCH_PROFILE" // a directory for profiles
)

// cpuServer is a server process of BenchmarkCPUVersusBareSDK.
type cpuServer struct {
	url, ctl, token string
}

// startCPUServer starts side's server at version in a process of its own,
// stopped when tb ends.
func startCPUServer(tb testing.TB, side, version string) *cpuServer {
	tb.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCPUBenchServer$", "-test.count=1", "-test.timeout=0")
	cmd.Env = append(os.Environ(), cpuServerEnv+"="+side+"/"+version)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		tb.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	var stderr lockedOutput
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	exited := make(chan struct{})
	tb.Cleanup(func() {
		stdin.Close() // the server process's cue to stop
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
	})
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if l, ok := strings.CutPrefix(sc.Text(), "cpubench "); ok {
				lines <- l
			} else {
				stderr.Write([]byte(sc.Text() + "\n"))
			}
		}
		io.Copy(io.Discard, stdout)
		cmd.Wait()
		close(exited)
	}()
	select {
	case l := <-lines:
		f := strings.Fields(l)
		if len(f) < 2 {
			tb.Fatalf("server process said %q", l)
		}
		s := &cpuServer{url: f[0], ctl: f[1]}
		if len(f) > 2 {
			s.token = f[2]
		}
		return s
	case <-exited:
		tb.Fatalf("%s server process at %s exited: %s", side, version, stderr.String())
	case <-time.After(2 * time.Minute):
		tb.Fatalf("%s server process at %s did not start: %s", side, version, stderr.String())
	}
	return nil
}

// control sends the server process "start" (collect garbage, note the CPU
// time, start profiling) or "stop" (stop profiling), and returns the CPU
// time in ns since the last start.
func (s *cpuServer) control(tb testing.TB, what string) int64 {
	tb.Helper()
	resp, err := http.Post(s.ctl+"/"+what, "", nil)
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	var ns int64
	if err := json.NewDecoder(resp.Body).Decode(&ns); err != nil || resp.StatusCode != http.StatusOK {
		tb.Fatalf("%s: %d %v", what, resp.StatusCode, err)
	}
	return ns
}

// TestCPUBenchServer is the server process of BenchmarkCPUVersusBareSDK
// (skipped otherwise): it serves side's MCP endpoint at version on a
// loopback port, and a control endpoint on another, prints both (and the
// API key, for agentgate) and serves until its standard input closes.
func TestCPUBenchServer(t *testing.T) {
	side, version, ok := strings.Cut(os.Getenv(cpuServerEnv), "/")
	if !ok {
		t.Skip("the server process of BenchmarkCPUVersusBareSDK")
	}
	// As BenchmarkChain: records formatted, at the deployed level, and
	// dropped (TestMain would keep every debug record in memory).
	slog.SetDefault(logging.New(io.Discard, slog.LevelInfo))

	if side != "bare" {
		tuneAsDeployed(t)
	}
	var h http.Handler
	var token string
	switch side {
	case "agentgate":
		// Rate limits on, at the default windows, too high to refuse
		// anything (apptest turns them off).
		on := "1000000000/1m"
		s := apptest.New(t, "embedded", map[string]string{
			"RATE_LIMIT_MCP_PER_IP": on, "RATE_LIMIT_MCP_PER_PRINCIPAL": on,
			"RATE_LIMIT_API_PER_IP": on, "RATE_LIMIT_API_PER_PRINCIPAL": on,
		})
		token = s.Key("bench", agentgate.ScopeUser)
		h = s.Instance()
	case "bare", "bare-tuned":
		srv := mcp.NewServer(&mcp.Implementation{Name: "bare", Version: "1.0.0"}, nil)
		mcp.AddTool(srv, &mcp.Tool{Name: "list_recent_executions", Description: "Lists recent tasks."},
			func(context.Context, *mcp.CallToolRequest, mcpserver.ListExecutionsInput) (*mcp.CallToolResult, mcpserver.ListExecutionsOutput, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "0 tasks."}}},
					mcpserver.ListExecutionsOutput{Executions: []mcpserver.ExecutionView{}}, nil
			})
		mux := http.NewServeMux()
		mux.Handle(mcpserver.Endpoint, mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
			&mcp.StreamableHTTPOptions{Stateless: version >= mcpserver.Version20260728, JSONResponse: true}))
		h = mux
	default:
		t.Fatalf("unknown side %q", side)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()

	name := filepath.Join(os.Getenv(cpuProfileEnv), side+"-"+version)
	var mu sync.Mutex
	var started int64
	var profile *os.File
	ctl := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		var ns int64
		switch r.URL.Path {
		case "/start":
			runtime.GC()
			if os.Getenv(cpuProfileEnv) != "" {
				writeProfile(t, "allocs", name+".allocs-start.pprof")
				f, err := os.Create(name + ".cpu.pprof")
				if err != nil {
					t.Error(err)
				} else if err := pprof.StartCPUProfile(f); err != nil {
					t.Error(err)
				} else {
					profile = f
				}
			}
			started = cpuTime()
		case "/stop":
			ns = cpuTime() - started
			if profile != nil {
				pprof.StopCPUProfile()
				profile.Close()
				profile = nil
				writeProfile(t, "allocs", name+".allocs-end.pprof")
			}
		default:
			http.NotFound(w, r)
			return
		}
		json.NewEncoder(w).Encode(ns)
	}))
	defer ctl.Close()

	fmt.Printf("cpubench %s %s %s\n", srv.URL, ctl.URL, token) // MCPClient adds mcpserver.Endpoint
	io.Copy(io.Discard, os.Stdin)
}

// tuneAsDeployed sets this process's garbage collector as a deployed
// function's: lambdahttp.Tune for the MCP function's memory size in
// template.yaml (GOMEMLIMIT and GOGC set in the environment still win, as
// they do on Lambda).
func tuneAsDeployed(tb testing.TB) {
	tpl, err := deploy.Load("../../template.yaml")
	if err != nil {
		tb.Fatal(err)
	}
	fn, err := tpl.GetServerlessFunctionWithName("McpFunction")
	if err != nil || fn.MemorySize == nil {
		tb.Fatalf("template.yaml: McpFunction's MemorySize: %v", err)
	}
	lambdahttp.Tune(func(key string) string {
		if key == "AWS_LAMBDA_FUNCTION_MEMORY_SIZE" {
			return fmt.Sprint(*fn.MemorySize)
		}
		return os.Getenv(key)
	})
}

// cpuTime is the process's user and system CPU time so far, in ns.
func cpuTime() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(err) // EFAULT or EINVAL: neither can be
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

func writeProfile(tb testing.TB, name, path string) {
	f, err := os.Create(path)
	if err != nil {
		tb.Error(err)
		return
	}
	defer f.Close()
	if err := pprof.Lookup(name).WriteTo(f, 0); err != nil {
		tb.Error(err)
	}
}

// lockedOutput collects a server process's output for a failure message.
type lockedOutput struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (o *lockedOutput) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.Write(p)
}

func (o *lockedOutput) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.String()
}
