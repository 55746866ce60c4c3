//go:build linux

package functions_test

import (
	"fmt"
	"net/http"
	"slices"
	"testing"

	"github.com/agentgate/agentgate/pkg/app"
	"github.com/agentgate/agentgate/pkg/store/dynamo/dynalite"
	"github.com/agentgate/agentgate/pkg/web"
)

// BenchmarkLambdaInit measures each function's INIT phase under the Lambda
// Runtime Interface Emulator, as the emulator reports it (INIT REPORT
// durationMs: from the bootstrap's exec to its first request for work),
// beside a trivial Go function's (testdata/trivial: aws-lambda-go and
// nothing else), which is what the runtime, the emulator and a process
// start cost on this machine (issue 13, goal 5). Each iteration starts
// every bootstrap once, one after the other, so that the machine's load
// weighs on all alike, and invokes its health route.
//
// It reports, per function, the median INIT (<name>-init-ms) and its excess
// over the trivial function's median (<name>-over-trivial-ms), and the
// trivial function's (trivial-init-ms); ns/op is all the starts together.
//
// go test -run '^$' -bench LambdaInit -benchtime 10x ./functions/
func BenchmarkLambdaInit(b *testing.B) {
	rie := findRIE(b)
	db := dynalite.Start(b)
	table := db.NewTable(b)
	bin := b.TempDir()
	type subject struct{ name, dir, bootstrap string }
	subjects := []subject{{name: "trivial", dir: "functions/testdata/trivial"}}
	for _, f := range app.Functions {
		subjects = append(subjects, subject{name: f.Name, dir: f.Dir})
	}
	for i := range subjects {
		subjects[i].bootstrap = buildBootstrap(b, bin, subjects[i].dir)
	}

	inits := map[string][]float64{}
	for b.Loop() {
		for _, s := range subjects {
			fn := startRIE(b, rie, s.bootstrap, lambdaEnv(db, table, s.name, map[string]string{
				"MCP_SERVER_ENABLED": "true",
				"CONSENT_SECRET":     "consent-secret-for-the-emulator-test-0123",
			}))
			if resp, _ := fn.invoke(b, http.MethodGet, web.HealthPath(s.name)); resp.StatusCode != http.StatusOK {
				b.Fatalf("%s: health answered %d: %s", s.name, resp.StatusCode, resp.Body)
			}
			ms, ok := fn.initDuration()
			if !ok {
				b.Fatalf("%s: the emulator reported no INIT duration:\n%s", s.name, fn.log.String())
			}
			inits[s.name] = append(inits[s.name], ms)
			fn.stop()
		}
	}
	trivial := medianOf(inits["trivial"])
	b.ReportMetric(trivial, "trivial-init-ms")
	for _, s := range subjects[1:] {
		m := medianOf(inits[s.name])
		b.ReportMetric(m, s.name+"-init-ms")
		b.ReportMetric(m-trivial, s.name+"-over-trivial-ms")
	}
	b.Log(fmt.Sprint(inits))
}

func medianOf(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}
