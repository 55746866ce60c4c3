package lambdahttp

import "testing"

// TestTuning: on Lambda the soft limit is 80% of the function's memory and
// GOGC goes up under it; outside Lambda, or when the operator set
// GOMEMLIMIT or GOGC, the runtime's own settings stand.
func TestTuning(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  map[string]string
		want memorySettings
	}{
		{"not on Lambda", nil, memorySettings{}},
		{"256 MB", map[string]string{"AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "256"}, memorySettings{limit: 214748364, gcPercent: 400}},
		{"GOMEMLIMIT set", map[string]string{"AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "256", "GOMEMLIMIT": "100MiB"}, memorySettings{}},
		{"GOGC set", map[string]string{"AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "1024", "GOGC": "50"}, memorySettings{limit: 858993459}},
		{"nonsense size", map[string]string{"AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "lots"}, memorySettings{}},
	} {
		if got := tuning(func(k string) string { return tc.env[k] }); got != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
	}
}
