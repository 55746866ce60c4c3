package apptest

import (
	"bufio"
	"context"
	"io"
	"testing"
	"time"
)

// Background runs run (a server such as `agentgate serve`) until the test
// ends, then cancels its context and waits for it to return, which must be
// without an error. It returns what run writes to out, line by line (the
// channel closes after run returns; run never blocks on its output, read or
// not), and run's result.
func Background(t testing.TB, run func(ctx context.Context, out io.Writer) error) (<-chan string, <-chan error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done, result := make(chan error, 1), make(chan error, 1)
	go func() {
		err := run(ctx, pw)
		pw.Close()
		done <- err
		result <- err
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("returned %v after shutdown", err)
			}
		case <-time.After(15 * time.Second):
			t.Error("did not stop within 15 s of shutdown")
		}
	})
	return lines(ctx, pr), result
}

// lines delivers r's lines in order, however many a reader has left
// unread, so that the writer never blocks; once ctx ends the rest is
// dropped.
func lines(ctx context.Context, r io.Reader) <-chan string {
	in, out := make(chan string), make(chan string)
	go func() {
		defer close(in)
		for sc := bufio.NewScanner(r); sc.Scan(); {
			in <- sc.Text()
		}
	}()
	go func() {
		defer close(out)
		var queue []string
		for in != nil || len(queue) > 0 {
			var send chan<- string
			var next string
			if len(queue) > 0 {
				send, next = out, queue[0]
			}
			select {
			case l, ok := <-in:
				if !ok {
					in = nil
					continue
				}
				queue = append(queue, l)
			case send <- next:
				queue = queue[1:]
			case <-ctx.Done():
				if in != nil {
					for range in { // keep the writer unblocked until it is done
					}
				}
				return
			}
		}
	}()
	return out
}
