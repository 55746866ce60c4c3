package web

import "net/http"

// Health is a function's liveness route. It is deliberately shallow: a deep
// check would cost a table read on every probe; store failures surface as 503
// on the routes that use the store.
func Health(function, version string) http.Handler {
	body := map[string]string{"status": "ok", "function": function, "version": version}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		WriteJSON(w, http.StatusOK, body)
	})
}

// HealthPath is where function name answers its health route.
func HealthPath(function string) string { return "/health/" + function }
