package app

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/agentgate/agentgate/pkg/apikey"
	"github.com/agentgate/agentgate/pkg/logging"
	"github.com/agentgate/agentgate/pkg/store/storetest"
	"github.com/agentgate/agentgate/pkg/web"
)

// BenchmarkChain measures the security chain's overhead per request (request
// log, headers, body cap, deadline, rate limits, authentication, scope fence)
// around a handler that does nothing, with the store calls it makes.
func BenchmarkChain(b *testing.B) {
	prev := slog.Default()
	slog.SetDefault(logging.New(io.Discard, slog.LevelInfo))
	b.Cleanup(func() { slog.SetDefault(prev) })

	for _, be := range backends() {
		b.Run(be.name, func(b *testing.B) {
			st, _ := be.open(b)
			counted := storetest.Count(st)
			cfg := mustConfig(b, testEnv(map[string]string{
				"RATE_LIMIT_API_PER_IP":        "1000000000/1h",
				"RATE_LIMIT_API_PER_PRINCIPAL": "1000000000/1h",
			}))
			d := mustDeps(b, cfg, counted)
			noop := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
			routes := d.Chain().Wrap([]web.Route{
				{Method: "POST", Path: "/public", Handler: noop, Public: true, Class: web.ClassAPI},
				{Method: "POST", Path: "/private", Handler: noop, Class: web.ClassAPI},
			})
			h := web.RequestLog("bench", web.SecurityHeaders(web.NewMux(routes)))

			key, err := d.Keys.Create(context.Background(), apikey.NewKey{Owner: "bench"})
			if err != nil {
				b.Fatal(err)
			}
			token := mintJWT(b, jwt.SigningMethodHS256, []byte(jwtSecret), claims("bench", time.Hour))
			for _, tc := range []struct{ name, path, auth string }{
				{"public", "/public", ""},
				{"jwt", "/private", "Bearer " + token},
				{"apikey", "/private", "Bearer " + key.Key},
			} {
				b.Run(tc.name, func(b *testing.B) {
					reads, writes := counted.Reads(), counted.Writes()
					b.ReportAllocs()
					for b.Loop() {
						req := httptest.NewRequest("POST", tc.path, nil)
						if tc.auth != "" {
							req.Header.Set("Authorization", tc.auth)
						}
						rec := httptest.NewRecorder()
						h.ServeHTTP(rec, req)
						if rec.Code != http.StatusNoContent {
							b.Fatalf("status %d: %s", rec.Code, rec.Body)
						}
					}
					b.ReportMetric(float64(counted.Reads()-reads)/float64(b.N), "reads/op")
					b.ReportMetric(float64(counted.Writes()-writes)/float64(b.N), "writes/op")
				})
			}
		})
	}
}
