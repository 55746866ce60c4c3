package connector_test

import (
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/agentgate/agentgate/pkg/app"
	"github.com/agentgate/agentgate/pkg/connector"
)

func TestSlug(t *testing.T) {
	for name, want := range map[string]string{
		"sample-echo":                    "sample_echo",
		"weather2":                       "weather2",
		"Echo Text!":                     "echo_text",
		"--a--b--":                       "a_b",
		"Café Crème":                     "cafe_creme",
		"Straße":                         "strasse",
		"Łódź":                           "lodz",
		"Ærø":                            "aero",
		"Привет мир":                     "privet_mir",
		"Ελλάδα":                         "ellada",
		"日本語":                            "",
		"bot 日本":                         "bot",
		"日本 bot 語 two":                   "bot_two",
		"emoji 🤖 agent":                  "emoji_agent",
		strings.Repeat("abcdefghij", 10): strings.Repeat("abcdefghij", 6) + "abcd",
	} {
		if got := connector.Slug(name); got != want {
			t.Errorf("Slug(%q) = %q, want %q", name, got, want)
		}
	}
}

// toolName is what MCP allows a tool's name to be.
var toolName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,128}$`)

func checkNames(t *testing.T, exposed, reserved []string, got map[string]string) {
	t.Helper()
	distinct := slices.Compact(slices.Sorted(slices.Values(exposed)))
	if len(got) != len(distinct) {
		t.Fatalf("ToolNames(%q) named %d agents, want %d: %v", exposed, len(got), len(distinct), got)
	}
	seen := map[string]string{}
	for _, n := range distinct {
		tool, ok := got[n]
		switch {
		case !ok:
			t.Errorf("%q has no tool", n)
		case !strings.HasPrefix(tool, connector.ToolPrefix) || !toolName.MatchString(tool):
			t.Errorf("%q: tool %q is not chat_with_ and a valid MCP tool name", n, tool)
		case slices.Contains(reserved, tool):
			t.Errorf("%q: tool %q is reserved", n, tool)
		case seen[tool] != "":
			t.Errorf("%q and %q share tool %q", n, seen[tool], tool)
		}
		seen[tool] = n
	}
}

func TestToolNames(t *testing.T) {
	reserved := app.ReservedTools()

	t.Run("plain names keep their slug", func(t *testing.T) {
		got := connector.ToolNames([]string{"sample-echo", "weather", "a1"}, reserved)
		want := map[string]string{"sample-echo": "chat_with_sample_echo", "weather": "chat_with_weather", "a1": "chat_with_a1"}
		if !maps.Equal(got, want) {
			t.Fatalf("got %v, want %v", got, want)
		}
	})

	t.Run("collisions get a short hash suffix, every one of them", func(t *testing.T) {
		exposed := []string{"a-b", "a_b", "A B", "other"}
		got := connector.ToolNames(exposed, reserved)
		checkNames(t, exposed, reserved, got)
		suffixed := regexp.MustCompile(`^chat_with_a_b_[0-9a-f]{6}$`)
		for _, n := range []string{"a-b", "a_b", "A B"} {
			if !suffixed.MatchString(got[n]) {
				t.Errorf("%q: %q, want chat_with_a_b_ and six hex digits", n, got[n])
			}
		}
		if got["other"] != "chat_with_other" {
			t.Errorf("a name without a collision got %q", got["other"])
		}
	})

	t.Run("unicode names", func(t *testing.T) {
		exposed := []string{"Café", "cafe-bot", "Привет", "日本", "中文", "🤖"}
		got := connector.ToolNames(exposed, reserved)
		checkNames(t, exposed, reserved, got)
		if got["Café"] != "chat_with_cafe" || got["Привет"] != "chat_with_privet" || got["cafe-bot"] != "chat_with_cafe_bot" {
			t.Errorf("transliterated: %v", got)
		}
		// Nothing to keep: "agent" and a suffix, distinct for each.
		for _, n := range []string{"日本", "中文", "🤖"} {
			if !regexp.MustCompile(`^chat_with_agent_[0-9a-f]{6}$`).MatchString(got[n]) {
				t.Errorf("%q: %q, want chat_with_agent_ and a suffix", n, got[n])
			}
		}
	})

	t.Run("a name that sanitises to a reserved name", func(t *testing.T) {
		res := append(slices.Clone(reserved), "chat_with_help", "chat_with_dispatch_task")
		exposed := []string{"help", "Help!", "dispatch-task", "list-agents"}
		got := connector.ToolNames(exposed, res)
		checkNames(t, exposed, res, got)
		for _, n := range []string{"help", "Help!", "dispatch-task"} {
			if strings.Count(got[n], "_") < 3 || !strings.HasPrefix(got[n], "chat_with_") {
				t.Errorf("%q: %q, want a suffixed name", n, got[n])
			}
		}
		// A suffixed name that is itself reserved moves on to a longer one.
		sum := connector.ToolNames([]string{"help"}, res)["help"]
		res2 := append(slices.Clone(res), sum)
		if again := connector.ToolNames([]string{"help"}, res2)["help"]; again == sum || !strings.HasPrefix(again, "chat_with_help_") || slices.Contains(res2, again) {
			t.Errorf("with %q reserved too: %q", sum, again)
		}
		// The built-in names: no agent name gives one of them.
		for _, b := range reserved {
			if strings.HasPrefix(b, connector.ToolPrefix) {
				t.Errorf("built-in tool %q starts with %q", b, connector.ToolPrefix)
			}
		}
	})

	t.Run("a suffixed name never takes another agent's plain name", func(t *testing.T) {
		// "x-y" and "x_y" collide; whatever suffix they get, an agent whose
		// plain slug is that suffixed name keeps it and the colliders move on.
		first := connector.ToolNames([]string{"x-y", "x_y"}, nil)
		plain := strings.TrimPrefix(first["x-y"], connector.ToolPrefix) // x_y_<hash>
		exposed := []string{"x-y", "x_y", strings.ReplaceAll(plain, "_", "-")}
		got := connector.ToolNames(exposed, nil)
		checkNames(t, exposed, nil, got)
		if got[exposed[2]] != first["x-y"] {
			t.Errorf("the plain name %q went to %q, not to %q", first["x-y"], got, exposed[2])
		}
	})

	t.Run("stable for a given set", func(t *testing.T) {
		exposed := []string{"b", "a-b", "a_b", "Привет", "日本", "c", "a-b"}
		want := connector.ToolNames(exposed, reserved)
		for i := range 20 {
			shuffled := slices.Clone(exposed)
			for j := range shuffled {
				k := (j*7 + i*3) % len(shuffled)
				shuffled[j], shuffled[k] = shuffled[k], shuffled[j]
			}
			if got := connector.ToolNames(shuffled, reserved); !maps.Equal(got, want) {
				t.Fatalf("order %q: %v, want %v", shuffled, got, want)
			}
		}
		// Adding or removing agents that collide with nobody renames no one.
		more := connector.ToolNames(append(slices.Clone(exposed), "zeta", "weather"), reserved)
		for n, tool := range want {
			if more[n] != tool {
				t.Errorf("%q was %q, is %q once unrelated agents are exposed", n, tool, more[n])
			}
		}
		if len(connector.ToolNames(nil, reserved)) != 0 {
			t.Error("no agents, yet tools")
		}
	})

	t.Run("long names", func(t *testing.T) {
		long := strings.Repeat("a", 63)
		exposed := []string{long, long + "-1", long + "-2", strings.Repeat("日本", 40) + "x"}
		got := connector.ToolNames(exposed, reserved)
		checkNames(t, exposed, reserved, got)
	})
}
