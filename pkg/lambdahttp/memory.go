package lambdahttp

import (
	"runtime/debug"
	"strconv"
)

// Garbage collection for a function's memory size. The Go runtime does not
// know how much memory a Lambda function has, so by default it collects
// whenever the heap doubles (GOGC=100) and is blind to the function's limit:
// at agentgate's heap of a few MB that is a collection every few requests,
// each billed CPU time at a fraction of a vCPU. A soft memory limit a little
// under the function's size lets the heap grow into memory that is paid for
// anyway, and a higher GOGC collects less often until the limit comes near.
const (
	// memoryShare is the part of the function's memory the Go heap may
	// use before the collector works harder; the rest is the runtime's,
	// the stacks' and the binary's.
	memoryShare = 0.8
	// gcPercent is GOGC under the soft limit.
	gcPercent = 400
)

// memorySettings is what Tune sets: the soft memory limit in bytes and
// GOGC, or zero for what it leaves alone.
type memorySettings struct {
	limit     int64
	gcPercent int
}

// tuning returns the settings for the environment getenv reads: nothing
// outside Lambda, nothing that GOMEMLIMIT or GOGC already decide (the
// operator's word wins), and nothing for a memory size that does not parse.
func tuning(getenv func(string) string) memorySettings {
	mb, err := strconv.ParseInt(getenv("AWS_LAMBDA_FUNCTION_MEMORY_SIZE"), 10, 64)
	if err != nil || mb <= 0 {
		return memorySettings{}
	}
	var s memorySettings
	if getenv("GOMEMLIMIT") == "" {
		s.limit = int64(float64(mb<<20) * memoryShare)
	}
	if getenv("GOGC") == "" && s.limit > 0 {
		s.gcPercent = gcPercent
	}
	return s
}

// Tune sets the collector for the function's memory size
// (AWS_LAMBDA_FUNCTION_MEMORY_SIZE), unless GOMEMLIMIT or GOGC are set.
func Tune(getenv func(string) string) {
	s := tuning(getenv)
	if s.limit > 0 {
		debug.SetMemoryLimit(s.limit)
	}
	if s.gcPercent > 0 {
		debug.SetGCPercent(s.gcPercent)
	}
}
