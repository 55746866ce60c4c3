package agent

// maxSlugLen is the longest name an agent or a playbook may have.
const maxSlugLen = 63

// isSlug reports whether s is a name an agent or a playbook may have: 1 to
// 63 lower-case ASCII letters, digits and hyphens, starting with a letter or
// a digit. It becomes a URL path segment and part of a table key. (Checked
// by hand rather than with the equivalent regexp, ^[a-z0-9][a-z0-9-]{0,62}$,
// whose compiled program, its repetition unrolled, cost every function's
// cold start about a millisecond.)
func isSlug(s string) bool {
	if len(s) == 0 || len(s) > maxSlugLen || s[0] == '-' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}
