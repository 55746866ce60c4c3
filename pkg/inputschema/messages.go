package inputschema

import (
	"errors"
	"math/big"
	"regexp"
	"strconv"
	"strings"
)

// google/jsonschema-go reports a failure as a chain: "validating <schema>:
// validating /allOf/3: ... type: a has type "string", want "array"", the
// schemas it went through, outermost first, then what failed. An anyOf
// that failed ends its link with every alternative's own chain, a line
// each. A problem here is the end of each chain (a leaf), as the old
// library's leaves were: the path through the meta-schema means nothing to
// a template's author.

// via matches the "validating <schema>: " links at the start of a line.
var via = regexp.MustCompile(`^(?:validating \S+: )+`)

// leaves returns the messages at the ends of err's chains, and the last
// JSON pointer the chain went through ("validating /properties/city"), or ""
// when it went through none. Errors joined with errors.Join (Resolve's
// checks) are leaves of their own.
func leaves(err error) (msgs []string, where string) {
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range joined.Unwrap() {
			m, _ := leaves(e)
			msgs = append(msgs, m...)
		}
		return msgs, ""
	}
	for {
		inner := errors.Unwrap(err)
		if inner == nil {
			break
		}
		link, _ := strings.CutSuffix(err.Error(), ": "+inner.Error())
		if p, ok := strings.CutPrefix(link, "validating /"); ok {
			where = "/" + p
		}
		err = inner
	}
	lines := strings.Split(err.Error(), "\n")
	if len(lines) > 1 { // an anyOf: the alternatives' ends, not its header
		lines = lines[1:]
	}
	for _, line := range lines {
		line = via.ReplaceAllString(line, "")
		if strings.HasPrefix(line, "anyOf: did not validate") {
			continue // a nested anyOf's header; its alternatives follow
		}
		msgs = append(msgs, tidy(line))
	}
	return msgs, where
}

// The library prints the bounds of minimum and the like as %f, numbers as
// big.Rat, and null as a reflect.Value: "minimum: -1/1 is less than
// 0.000000", "exclusiveMaximum: 1/2 is ...", "type: <invalid reflect.Value>
// has type "null"".
var (
	ratio    = regexp.MustCompile(`\b\d+/\d+\b`)
	decimals = regexp.MustCompile(`\b(\d+)(?:\.0+|(\.\d*[1-9])0+)\b`)
)

// tidy writes the numbers and nulls in msg as JSON does.
func tidy(msg string) string {
	msg = ratio.ReplaceAllStringFunc(msg, func(r string) string {
		if q, ok := new(big.Rat).SetString(r); ok {
			f, _ := q.Float64()
			return strconv.FormatFloat(f, 'g', -1, 64)
		}
		return r
	})
	msg = decimals.ReplaceAllString(msg, "$1$2")
	return strings.ReplaceAll(msg, "<invalid reflect.Value>", "null")
}

// at prefixes msg with the JSON pointer where it applies, if known.
func at(pointer, msg string) string {
	if pointer == "" {
		return msg
	}
	return "at '" + pointer + "': " + msg
}
