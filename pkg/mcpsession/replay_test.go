package mcpsession

import "testing"

func TestEventIDs(t *testing.T) {
	for _, tc := range []struct {
		stream    string
		seq, keep int
		id        string
	}{
		{"abc", 0, 0, "abc_0"},
		{"a_b-c", 1, 0, "a_b-c_1"}, // base64url ids contain '_'
		{"a_b", 0, 7, "a_b_0.k7"},
	} {
		if got := eventID(tc.stream, tc.seq, tc.keep); got != tc.id {
			t.Errorf("eventID(%q, %d, %d) = %q, want %q", tc.stream, tc.seq, tc.keep, got, tc.id)
		}
		stream, seq, keep, ok := parseEventID(tc.id)
		if !ok || stream != tc.stream || seq != tc.seq || keep != tc.keep {
			t.Errorf("parseEventID(%q) = %q %d %d %v", tc.id, stream, seq, keep, ok)
		}
	}
	for _, bad := range []string{"", "_0", "abc", "abc_x", "abc_2", "abc_-1", "abc_0.kx", "abc_0.k-1"} {
		if _, _, _, ok := parseEventID(bad); ok {
			t.Errorf("parseEventID(%q) accepted", bad)
		}
	}
}
