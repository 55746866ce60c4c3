package a2acall_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/agentgate/agentgate/pkg/a2acall"
	"github.com/agentgate/agentgate/pkg/agentgate"
	"github.com/agentgate/agentgate/pkg/sampleagent"
)

// startAgent serves a fresh sample agent and returns its endpoint URL.
func startAgent(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(sampleagent.New(sampleagent.Options{Logger: slog.New(slog.DiscardHandler)}).Handler())
	t.Cleanup(srv.Close)
	return srv.URL + "/"
}

// serve starts a server that answers every request with h.
func serve(t *testing.T, h http.HandlerFunc) string {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL + "/"
}

func message(text string) *a2a.Message {
	return a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(text))
}

// check fails the test unless err has the code and its caller-safe message
// contains want.
func check(t *testing.T, err error, code, want string) {
	t.Helper()
	if agentgate.ErrorCode(err) != code || !strings.Contains(agentgate.ErrorMessage(err), want) {
		t.Fatalf("error %v (code %q, message %q); want code %q, message containing %q",
			err, agentgate.ErrorCode(err), agentgate.ErrorMessage(err), code, want)
	}
}

func TestClosedPortIsUnavailable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	endpoint := "http://" + ln.Addr().String() + "/"
	ln.Close()
	client := a2acall.New(a2acall.Options{})

	begin := time.Now()
	_, err = client.Send(t.Context(), endpoint, message("echo hi"))
	check(t, err, agentgate.EUNAVAILABLE, "agent unreachable: connection refused")
	if elapsed := time.Since(begin); elapsed > time.Second {
		t.Fatalf("took %s", elapsed)
	}
	if msg := agentgate.ErrorMessage(err); strings.Contains(msg, "127.0.0.1") {
		t.Fatalf("message %q shows the address", msg)
	}
	check(t, client.Ping(t.Context(), endpoint), agentgate.EUNAVAILABLE, "agent unreachable")
}

func TestBadAnswers(t *testing.T) {
	var redirected atomic.Int64
	elsewhere := serve(t, func(http.ResponseWriter, *http.Request) { redirected.Add(1) })
	tests := []struct {
		name   string
		answer http.HandlerFunc
		code   string
		want   string
	}{
		{"garbage", func(w http.ResponseWriter, _ *http.Request) {
			w.Write([]byte("<html>hello</html>"))
		}, agentgate.EAGENT, "not valid A2A JSON-RPC"},
		{"JSON-RPC but not A2A", func(w http.ResponseWriter, _ *http.Request) {
			w.Write([]byte(`{"jsonrpc":"2.0","id":"1","result":{"answer":42}}`))
		}, agentgate.EAGENT, "not valid A2A JSON-RPC"},
		{"oversized", func(w http.ResponseWriter, _ *http.Request) {
			w.Write([]byte(`{"jsonrpc":"2.0","id":"1","result":{"task":{"id":"` + strings.Repeat("x", 2<<20) + `"}}}`))
		}, agentgate.EAGENT, "exceeds 1048576 bytes"},
		{"5xx without JSON-RPC", func(w http.ResponseWriter, _ *http.Request) {
			http.Error(w, "upstream down", http.StatusServiceUnavailable)
		}, agentgate.EUNAVAILABLE, "agent unreachable: HTTP 503 Service Unavailable"},
		{"5xx with a JSON-RPC error", func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(http.StatusInternalServerError)
			w.Write([]byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"model overloaded"}}`))
		}, agentgate.EAGENT, "agent error: model overloaded"},
		{"4xx", func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(http.StatusUnauthorized)
		}, agentgate.EAGENT, "the agent answered HTTP 401 Unauthorized"},
		{"redirect", func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, elsewhere, http.StatusTemporaryRedirect)
		}, agentgate.EAGENT, "the agent answered HTTP 307 Temporary Redirect"},
		{"long error message", func(w http.ResponseWriter, _ *http.Request) {
			w.Write([]byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"` + strings.Repeat("é", 1000) + `"}}`))
		}, agentgate.EAGENT, strings.Repeat("é", 250) + "…"},
	}
	client := a2acall.New(a2acall.Options{})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := client.Send(t.Context(), serve(t, tt.answer), message("echo hi"))
			check(t, err, tt.code, tt.want)
		})
	}
	if n := redirected.Load(); n != 0 {
		t.Fatalf("the redirect was followed %d times", n)
	}
}

func TestJSONRPCErrorIsTheAgents(t *testing.T) {
	endpoint := startAgent(t)
	_, err := a2acall.New(a2acall.Options{}).GetTask(t.Context(), endpoint, "no-such-task")
	check(t, err, agentgate.EAGENT, "task not found")
	// A proxy can relay the agent's own JSON-RPC error.
	var answered *a2a.Error
	if !errors.As(err, &answered) || !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Fatalf("%v does not carry the agent's *a2a.Error", err)
	}
}

func TestDeadline(t *testing.T) {
	// Reading the request lets the server notice the client hang up.
	hanging := serve(t, func(_ http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		<-r.Context().Done()
	})
	client := a2acall.New(a2acall.Options{Timeout: 100 * time.Millisecond})

	calls := map[string]func() error{
		"GetTask": func() error { _, err := client.GetTask(t.Context(), hanging, "t1"); return err },
		"Send":    func() error { _, err := client.Send(t.Context(), hanging, message("echo hi")); return err },
		"Ping":    func() error { return client.Ping(t.Context(), hanging) },
		"SendBlocking, caller's deadline": func() error {
			ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
			defer cancel()
			_, err := client.SendBlocking(ctx, hanging, message("echo hi"))
			return err
		},
	}
	for name, call := range calls {
		t.Run(name, func(t *testing.T) {
			begin := time.Now()
			check(t, call(), agentgate.ETIMEOUT, "did not answer in time")
			if elapsed := time.Since(begin); elapsed > time.Second {
				t.Fatalf("took %s", elapsed)
			}
		})
	}
}

func TestSendBlockingTakesTheCallersDeadline(t *testing.T) {
	endpoint := startAgent(t)
	client := a2acall.New(a2acall.Options{Timeout: 100 * time.Millisecond})

	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	r, err := client.SendBlocking(ctx, endpoint, message("slow 0.3"))
	if err != nil || r.State != a2a.TaskStateCompleted {
		t.Fatalf("with a 5 s deadline: %+v, %v", r, err)
	}
	// When the task took its state is the agent's word, kept for the record.
	if task := r.Answer.(*a2a.Task); task.Status.Timestamp == nil || r.StatusTime.IsZero() || !r.StatusTime.Equal(*task.Status.Timestamp) {
		t.Errorf("status time %v, the agent said %v", r.StatusTime, task.Status.Timestamp)
	}

	// Without a deadline of its own, the per-call timeout applies.
	_, err = client.SendBlocking(context.Background(), endpoint, message("slow 0.3"))
	check(t, err, agentgate.ETIMEOUT, "did not answer in time")

	// Send does not wait for the work, so the short timeout is no obstacle.
	if r, err := client.Send(context.Background(), endpoint, message("slow 0.3")); err != nil || r.State.Terminal() {
		t.Fatalf("Send: %+v, %v", r, err)
	}
}

func TestPing(t *testing.T) {
	client := a2acall.New(a2acall.Options{})
	if err := client.Ping(t.Context(), startAgent(t)); err != nil {
		t.Fatal(err)
	}
	garbage := serve(t, func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("OK")) })
	check(t, client.Ping(t.Context(), garbage), agentgate.EAGENT, "not valid A2A JSON-RPC")
}

func TestInvalidEndpoint(t *testing.T) {
	client := a2acall.New(a2acall.Options{})
	for _, endpoint := range []string{"", "agent.example.com", "ftp://agent.example.com/", "http://"} {
		_, err := client.GetTask(t.Context(), endpoint, "t1")
		check(t, err, agentgate.EINVALID, "not an http(s) URL")
	}
}
