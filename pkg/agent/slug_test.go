package agent

import (
	"regexp"
	"strings"
	"testing"
)

// TestIsSlugIsThePattern: isSlug accepts exactly what the pattern it
// replaces, ^[a-z0-9][a-z0-9-]{0,62}$, matches.
func TestIsSlugIsThePattern(t *testing.T) {
	pattern := regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,62}$`)
	cases := []string{"", "a", "0", "-", "-a", "a-", "echo", "sample-echo", "Echo", "ec ho", "ec_ho", "écho", "a\n",
		strings.Repeat("a", 62), strings.Repeat("a", 63), strings.Repeat("a", 64), "9-" + strings.Repeat("b", 61), "a/b", "a.b"}
	for c := range 256 {
		cases = append(cases, string(rune(c)), "x"+string(rune(c)))
	}
	for _, s := range cases {
		if got, want := isSlug(s), pattern.MatchString(s); got != want {
			t.Errorf("isSlug(%q) = %v, the pattern says %v", s, got, want)
		}
	}
}
