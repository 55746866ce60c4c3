package dynamo

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// env is an environment of the given variables only.
func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

// TestOpenReadsTheLambdaEnvironment: Open finds the region and the
// credentials where Lambda puts them, in the order a function expects, and
// nowhere else.
func TestOpenReadsTheLambdaEnvironment(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name                 string
		c                    Config
		region, key, session string
	}{
		{"lambda role", Config{Getenv: env(map[string]string{
			"AWS_REGION": "eu-west-1", "AWS_DEFAULT_REGION": "us-west-2",
			"AWS_ACCESS_KEY_ID": "AKIDROLE", "AWS_SECRET_ACCESS_KEY": "secret", "AWS_SESSION_TOKEN": "token",
		})}, "eu-west-1", "AKIDROLE", "token"},
		{"default region", Config{Getenv: env(map[string]string{
			"AWS_DEFAULT_REGION": "us-west-2", "AWS_ACCESS_KEY_ID": "AKID", "AWS_SECRET_ACCESS_KEY": "secret",
		})}, "us-west-2", "AKID", ""},
		{"region given", Config{Region: "ap-south-1", Getenv: env(map[string]string{
			"AWS_REGION": "eu-west-1", "AWS_ACCESS_KEY_ID": "AKID", "AWS_SECRET_ACCESS_KEY": "secret",
		})}, "ap-south-1", "AKID", ""},
		{"loopback, nothing set", Config{Endpoint: "http://127.0.0.1:8000", Getenv: env(nil)}, localRegion, "local", ""},
		{"loopback, keys set", Config{Endpoint: "http://localhost:8000", Getenv: env(map[string]string{
			"AWS_ACCESS_KEY_ID": "AKID", "AWS_SECRET_ACCESS_KEY": "secret",
		})}, localRegion, "AKID", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Open(ctx, tc.c)
			if err != nil {
				t.Fatal(err)
			}
			o := s.db.Options()
			creds, err := o.Credentials.Retrieve(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if o.Region != tc.region || creds.AccessKeyID != tc.key || creds.SessionToken != tc.session {
				t.Errorf("region %q, key %q, session %q; want %q, %q, %q", o.Region, creds.AccessKeyID, creds.SessionToken, tc.region, tc.key, tc.session)
			}
			if tc.c.Endpoint != "" && (o.BaseEndpoint == nil || *o.BaseEndpoint != tc.c.Endpoint) {
				t.Errorf("endpoint %v, want %s", o.BaseEndpoint, tc.c.Endpoint)
			}
		})
	}
}

// TestOpenRefusesWhatIsMissing: without credentials or a region, and not on
// a local emulator, Open says what to set rather than make requests that
// fail later.
func TestOpenRefusesWhatIsMissing(t *testing.T) {
	for _, tc := range []struct {
		name string
		vars map[string]string
		want string
	}{
		{"no credentials", map[string]string{"AWS_REGION": "eu-west-1"}, "AWS_ACCESS_KEY_ID"},
		{"a key without its secret", map[string]string{"AWS_REGION": "eu-west-1", "AWS_ACCESS_KEY_ID": "AKID"}, "AWS_ACCESS_KEY_ID"},
		{"no region", map[string]string{"AWS_ACCESS_KEY_ID": "AKID", "AWS_SECRET_ACCESS_KEY": "secret"}, "AWS_REGION"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Open(context.Background(), Config{Endpoint: "https://dynamodb.eu-west-1.amazonaws.com", Getenv: env(tc.vars)})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Open: %v, want an error naming %s", err, tc.want)
			}
		})
	}
}

// TestOpenFromContainerCredentials: where the platform serves the role's
// credentials from an endpoint, Open fetches them from there, with the
// authorization token from its file, and refreshes them before they
// expire.
func TestOpenFromContainerCredentials(t *testing.T) {
	tokenPath := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenPath, []byte("tok-1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var auths []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auths = append(auths, r.Header.Get("Authorization"))
		json.NewEncoder(w).Encode(map[string]string{
			"AccessKeyId": "AKIDCONTAINER", "SecretAccessKey": "secret", "Token": "session",
			"Expiration": time.Now().Add(time.Hour).UTC().Format(time.RFC3339),
		})
	}))
	defer srv.Close()
	s, err := Open(context.Background(), Config{Getenv: env(map[string]string{
		"AWS_REGION":                             "eu-west-1",
		"AWS_CONTAINER_CREDENTIALS_FULL_URI":     srv.URL + "/creds",
		"AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE": tokenPath,
	})})
	if err != nil {
		t.Fatal(err)
	}
	creds, err := s.db.Options().Credentials.Retrieve(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if creds.AccessKeyID != "AKIDCONTAINER" || creds.SessionToken != "session" || !creds.CanExpire {
		t.Errorf("credentials %+v, want the endpoint's, expiring", creds)
	}
	if len(auths) != 1 || auths[0] != "tok-1" {
		t.Errorf("the endpoint saw Authorization %q, want the token file's tok-1 once", auths)
	}
}
