package sampleagent

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// A playbook turns a message's input text into the task's output. An error
// ends the task failed, with the error's text as its status message.
type playbook struct {
	name        string
	description string
	example     string
	run         func(ctx context.Context, input string) (string, error)
}

// Bounds of the slow playbook, in seconds.
const (
	slowDefault = 2
	slowMax     = 20
)

// playbooks is the agent's whole repertoire; its card lists one skill for
// each. echo comes first: it is the fallback for text that names no playbook.
var playbooks = []playbook{
	{"echo", "Returns the input text unchanged.", "echo hello", echo},
	{"word-count", "Returns the number of words in the input.", "word-count one two three", wordCount},
	{"reverse", "Returns the input with its characters in reverse order.", "reverse stressed", reverse},
	{"slow", fmt.Sprintf("Waits N seconds (the input, default %d, at most %d), then says so. Can be canceled.", slowDefault, slowMax), "slow 5", slow},
	{"fail", "Ends the task failed, with the input as the failure message.", "fail out of coffee", fail},
}

// choose picks the playbook for a message and the input it runs on. The
// message metadata "playbook" names it, and all the text is the input;
// otherwise a first word naming a playbook does, and the rest of the text is
// the input; otherwise the text is echoed. An unknown name in metadata is an
// error rather than an echo, since the caller meant a playbook.
func choose(metadata map[string]any, text string) (playbook, string, error) {
	if v, ok := metadata["playbook"]; ok {
		name, _ := v.(string)
		if p, ok := find(name); ok {
			return p, text, nil
		}
		return playbook{}, "", fmt.Errorf("unknown playbook %q", name)
	}
	trimmed := strings.TrimSpace(text)
	if words := strings.Fields(trimmed); len(words) > 0 {
		if p, ok := find(words[0]); ok {
			return p, strings.TrimSpace(trimmed[len(words[0]):]), nil
		}
	}
	return playbooks[0], text, nil
}

func find(name string) (playbook, bool) {
	i := slices.IndexFunc(playbooks, func(p playbook) bool { return p.name == name })
	if i < 0 {
		return playbook{}, false
	}
	return playbooks[i], true
}

func echo(_ context.Context, input string) (string, error) { return input, nil }

func wordCount(_ context.Context, input string) (string, error) {
	return strconv.Itoa(len(strings.Fields(input))), nil
}

func reverse(_ context.Context, input string) (string, error) {
	r := []rune(input)
	slices.Reverse(r)
	return string(r), nil
}

// slow waits the number of seconds in its input (fractions allowed, so tests
// stay quick) and returns early with ctx's error when the task is canceled.
func slow(ctx context.Context, input string) (string, error) {
	seconds := float64(slowDefault)
	if input != "" {
		n, err := strconv.ParseFloat(input, 64)
		if err != nil || !(n >= 0) { // !(n >= 0) also rejects NaN
			return "", fmt.Errorf("slow wants a number of seconds, not %q", input)
		}
		seconds = min(n, slowMax)
	}
	d := time.Duration(seconds * float64(time.Second))
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return "", ctx.Err()
	case <-t.C:
		return fmt.Sprintf("waited %s", d), nil
	}
}

func fail(_ context.Context, input string) (string, error) {
	if input == "" {
		input = "failed as asked"
	}
	return "", errors.New(input)
}
