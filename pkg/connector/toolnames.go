package connector

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strconv"
	"strings"
)

// ToolPrefix starts the MCP tool name of every exposed agent.
const ToolPrefix = "chat_with_"

// maxSlug bounds a slug, well inside MCP's 128 characters of a tool name
// with the prefix and a suffix.
const maxSlug = 64

// ToolNames maps each exposed agent name to its MCP tool name,
// "chat_with_<slug>", from one deterministic function over the whole set:
//
//   - the slug is the name sanitised (Slug): lower-case ASCII letters,
//     digits and underscores, letters with diacritics, Greek and Cyrillic
//     transliterated, anything else a separator;
//   - a name whose tool name is unique in the set and not reserved keeps
//     it, so exposing or hiding other agents does not rename it;
//   - names that share a slug, whose slug is empty, or whose tool name is
//     in reserved (the built-in MCP tool names) all get a short suffix, the
//     start of the SHA-256 of the name, lengthened until it is unique.
//
// The answer depends only on the set (not its order or duplicates), so
// every instance names the same set the same way.
func ToolNames(exposed []string, reserved []string) map[string]string {
	names := slices.Clone(exposed)
	slices.Sort(names)
	names = slices.Compact(names)
	isReserved := make(map[string]bool, len(reserved))
	for _, r := range reserved {
		isReserved[r] = true
	}
	slugs := make(map[string]string, len(names))
	count := map[string]int{}
	for _, n := range names {
		s := Slug(n)
		slugs[n] = s
		count[s]++
	}
	out := make(map[string]string, len(names))
	taken := map[string]bool{}
	var suffixed []string
	for _, n := range names {
		s := slugs[n]
		tool := ToolPrefix + s
		if s == "" || count[s] > 1 || isReserved[tool] {
			suffixed = append(suffixed, n)
			continue
		}
		out[n], taken[tool] = tool, true
	}
	for _, n := range suffixed {
		base := slugs[n]
		if base == "" {
			base = "agent"
		}
		sum := sha256.Sum256([]byte(n))
		h := hex.EncodeToString(sum[:])
		tool := ""
		for l := 6; l <= len(h); l += 2 {
			if t := ToolPrefix + base + "_" + h[:l]; !taken[t] && !isReserved[t] {
				tool = t
				break
			}
		}
		for i := 2; tool == ""; i++ { // a SHA-256 collision: never, but total
			if t := ToolPrefix + base + "_" + h[:6] + "_" + strconv.Itoa(i); !taken[t] && !isReserved[t] {
				tool = t
			}
		}
		out[n], taken[tool] = tool, true
	}
	return out
}

// Slug sanitises an agent name for a tool name: lower-case ASCII letters
// and digits kept, letters with diacritics and Greek and Cyrillic letters
// transliterated ("Café" is "cafe", "Привет" is "privet"), every other run
// of characters one underscore, none at either end, at most 64 characters.
// A name with nothing to keep (all CJK, say) is "".
func Slug(name string) string {
	var b strings.Builder
	sep := false
	put := func(s string) {
		if sep && b.Len() > 0 {
			b.WriteByte('_')
		}
		sep = false
		b.WriteString(s)
	}
	for _, r := range strings.ToLower(name) {
		switch {
		case 'a' <= r && r <= 'z', '0' <= r && r <= '9':
			put(string(r))
		default:
			if t, ok := translit[r]; ok {
				if t != "" {
					put(t)
				}
				continue
			}
			sep = true
		}
	}
	s := b.String()
	if len(s) > maxSlug {
		s = strings.TrimRight(s[:maxSlug], "_")
	}
	return s
}

// translit spells letters outside ASCII in ASCII: Latin letters with
// diacritics and ligatures, Greek, Cyrillic. Keys are lower case (Slug
// lowers first).
var translit = func() map[rune]string {
	m := map[rune]string{}
	for _, g := range []struct{ from, to string }{
		{"àáâãäåāăąǎ", "a"}, {"çćĉċč", "c"}, {"ďđ", "d"}, {"ð", "d"},
		{"èéêëēĕėęě", "e"}, {"ĝğġģ", "g"}, {"ĥħ", "h"}, {"ìíîïĩīĭįıǐ", "i"},
		{"ĵ", "j"}, {"ķ", "k"}, {"ĺļľŀł", "l"}, {"ñńņňŉ", "n"},
		{"òóôõöøōŏőǒ", "o"}, {"ŕŗř", "r"}, {"śŝşšș", "s"}, {"ţťŧț", "t"},
		{"ùúûüũūŭůűųǔ", "u"}, {"ŵ", "w"}, {"ýÿŷ", "y"}, {"źżž", "z"},
		// Greek
		{"αά", "a"}, {"β", "v"}, {"γ", "g"}, {"δ", "d"}, {"εέ", "e"}, {"ζ", "z"},
		{"ηή", "i"}, {"ιίϊΐ", "i"}, {"κ", "k"}, {"λ", "l"}, {"μ", "m"}, {"ν", "n"},
		{"ξ", "x"}, {"οό", "o"}, {"π", "p"}, {"ρ", "r"}, {"σς", "s"}, {"τ", "t"},
		{"υύϋΰ", "y"}, {"φ", "f"}, {"ωώ", "o"},
		// Cyrillic
		{"а", "a"}, {"б", "b"}, {"в", "v"}, {"гґ", "g"}, {"д", "d"}, {"её", "e"},
		{"з", "z"}, {"иі", "i"}, {"й", "y"}, {"к", "k"}, {"л", "l"}, {"м", "m"},
		{"н", "n"}, {"о", "o"}, {"п", "p"}, {"р", "r"}, {"с", "s"}, {"т", "t"},
		{"у", "u"}, {"ф", "f"}, {"ы", "y"}, {"э", "e"}, {"ъь", ""},
	} {
		for _, r := range g.from {
			m[r] = g.to
		}
	}
	for r, s := range map[rune]string{
		'æ': "ae", 'œ': "oe", 'ß': "ss", 'þ': "th", 'ĳ': "ij",
		'θ': "th", 'χ': "ch", 'ψ': "ps",
		'ж': "zh", 'х': "kh", 'ц': "ts", 'ч': "ch", 'ш': "sh", 'щ': "shch",
		'ю': "yu", 'я': "ya", 'ї': "yi", 'є': "ye",
	} {
		m[r] = s
	}
	return m
}()
