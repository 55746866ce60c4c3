package deploy_test

import (
	"debug/buildinfo"
	"debug/elf"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/awslabs/goformation/v7/cloudformation"
	"github.com/awslabs/goformation/v7/cloudformation/dynamodb"
	"github.com/awslabs/goformation/v7/cloudformation/serverless"

	"github.com/agentgate/agentgate/pkg/app"
	"github.com/agentgate/agentgate/pkg/core"
	"github.com/agentgate/agentgate/pkg/deploy"
	"github.com/agentgate/agentgate/pkg/store"
	"github.com/agentgate/agentgate/pkg/web"
)

// root is the module root, where template.yaml lives and sam build runs.
const root = "../.."

var loadTemplate = sync.OnceValues(func() (*cloudformation.Template, error) {
	return deploy.Load(filepath.Join(root, "template.yaml"))
})

func load(t *testing.T) *cloudformation.Template {
	t.Helper()
	tpl, err := loadTemplate()
	if err != nil {
		t.Fatalf("parsing template.yaml: %v", err)
	}
	return tpl
}

// function returns f's AWS::Serverless::Function, Globals applied.
func function(t *testing.T, f app.Function) *serverless.Function {
	t.Helper()
	fn, err := load(t).GetServerlessFunctionWithName(f.LogicalID)
	if err != nil {
		t.Fatalf("%s (function %s): %v", f.LogicalID, f.Name, err)
	}
	return fn
}

// only returns the logical ID of the one resource in rs.
func only[R any](t *testing.T, kind string, rs map[string]R) string {
	t.Helper()
	if len(rs) != 1 {
		t.Fatalf("template.yaml has %d %s resources, want 1: %v", len(rs), kind, slices.Sorted(maps.Keys(rs)))
	}
	for id := range rs {
		return id
	}
	return ""
}

// show renders a template value for messages and comparisons, an intrinsic
// as its JSON ({"Ref":"Table"}) rather than goformation's encoding.
func show(v string) string {
	if name, arg, ok := deploy.Intrinsic(v); ok {
		b, _ := json.Marshal(map[string]any{name: arg})
		return string(b)
	}
	return v
}

func str(p *string) string {
	if p == nil {
		return "<unset>"
	}
	return *p
}

// codeDir returns the directory fn's CodeUri names, which must hold the
// Makefile sam build runs.
func codeDir(t *testing.T, fn *serverless.Function) string {
	t.Helper()
	if fn.CodeUri == nil || fn.CodeUri.String == nil {
		t.Fatal("CodeUri must be a local directory")
	}
	dir := filepath.Join(root, *fn.CodeUri.String)
	if _, err := os.Stat(filepath.Join(dir, "Makefile")); err != nil {
		t.Fatalf("CodeUri %s: %v", *fn.CodeUri.String, err)
	}
	return dir
}

func TestFunctions(t *testing.T) {
	tpl := load(t)
	var want []string
	for _, f := range app.Functions {
		want = append(want, f.LogicalID)
	}
	if got := slices.Sorted(maps.Keys(tpl.GetAllServerlessFunctionResources())); !slices.Equal(got, slices.Sorted(slices.Values(want))) {
		t.Errorf("AWS::Serverless::Function resources = %v, want app.Functions' %v", got, want)
	}
	tableRef := cloudformation.Ref(only(t, "AWS::DynamoDB::Table", tpl.GetAllDynamoDBTableResources()))

	for _, f := range app.Functions {
		t.Run(f.LogicalID, func(t *testing.T) {
			fn := function(t, f)
			if got := str(fn.Runtime); got != "provided.al2023" {
				t.Errorf("Runtime = %s, want provided.al2023", got)
			}
			if !slices.Equal(fn.Architectures, []string{"arm64"}) {
				t.Errorf("Architectures = %v, want [arm64]", fn.Architectures)
			}
			if got := str(fn.Handler); got != "bootstrap" {
				t.Errorf("Handler = %s, want bootstrap", got)
			}
			if got := fn.AWSCloudFormationMetadata["BuildMethod"]; got != "makefile" {
				t.Errorf("Metadata.BuildMethod = %v, want makefile", got)
			}
			// A Lambda function refuses to start without TABLE_NAME.
			if fn.Environment == nil || fn.Environment.Variables["TABLE_NAME"] != tableRef {
				t.Errorf("TABLE_NAME must be %s", show(tableRef))
			}
			// sam build runs make build-<LogicalId> in (a copy of) CodeUri.
			dryRun := exec.Command("make", "-n", "build-"+f.LogicalID, "ARTIFACTS_DIR="+t.TempDir())
			dryRun.Dir = codeDir(t, fn)
			if out, err := dryRun.CombinedOutput(); err != nil {
				t.Errorf("the Makefile in CodeUri has no target build-%s: %v\n%s", f.LogicalID, err, out)
			}
		})
	}
}

// TestFunctionsBuild builds each function as sam build does and checks that
// the result is the function's main package as a static linux/arm64 binary.
func TestFunctionsBuild(t *testing.T) {
	t.Parallel()
	info, ok := debug.ReadBuildInfo()
	if !ok {
		t.Fatal("no build info")
	}
	for _, f := range app.Functions {
		t.Run(f.Name, func(t *testing.T) {
			t.Parallel()
			// As sam build: make in CodeUri, ARTIFACTS_DIR in the environment.
			artifacts := t.TempDir()
			build := exec.Command("make", "build-"+f.LogicalID)
			build.Dir = codeDir(t, function(t, f))
			build.Env = append(os.Environ(), "ARTIFACTS_DIR="+artifacts)
			if out, err := build.CombinedOutput(); err != nil {
				t.Fatalf("make build-%s: %v\n%s", f.LogicalID, err, out)
			}
			bootstrap := filepath.Join(artifacts, "bootstrap")
			checkLambdaBinary(t, bootstrap)
			if fi, err := os.Stat(bootstrap); err != nil || fi.Size() > maxBootstrap {
				t.Errorf("bootstrap: %v, %d bytes, over the ceiling of %d", err, fi.Size(), maxBootstrap)
			} else {
				t.Logf("bootstrap: %d bytes", fi.Size())
			}

			bi, err := buildinfo.ReadFile(bootstrap)
			if err != nil {
				t.Fatal(err)
			}
			if want := info.Main.Path + "/" + f.Dir; bi.Path != want {
				t.Errorf("bootstrap is %s, want %s", bi.Path, want)
			}
			settings := map[string]string{}
			for _, s := range bi.Settings {
				settings[s.Key] = s.Value
			}
			for k, want := range map[string]string{"GOOS": "linux", "GOARCH": "arm64", "CGO_ENABLED": "0", "-tags": "lambda.norpc"} {
				if settings[k] != want {
					t.Errorf("bootstrap built with %s=%q, want %q", k, settings[k], want)
				}
			}
		})
	}
}

// maxBootstrap is the most a function's bootstrap may weigh: 15 MB, a
// function's own code and the core.
const maxBootstrap = 15_000_000

// checkLambdaBinary fails unless path is an arm64 ELF binary without a
// program interpreter: static, as provided.al2023 runs it, no libc assumed.
func checkLambdaBinary(t *testing.T, path string) {
	t.Helper()
	bin, err := elf.Open(path)
	if err != nil {
		t.Fatalf("bootstrap: %v", err)
	}
	defer bin.Close()
	if bin.Machine != elf.EM_AARCH64 {
		t.Errorf("bootstrap is for %v, want EM_AARCH64", bin.Machine)
	}
	for _, p := range bin.Progs {
		if p.Type == elf.PT_INTERP {
			t.Errorf("bootstrap is dynamically linked (has PT_INTERP)")
		}
	}
}

type route struct{ Method, Path string }

func TestRoutes(t *testing.T) {
	tpl := load(t)
	apiRef := cloudformation.Ref(only(t, "AWS::Serverless::HttpApi", tpl.GetAllServerlessHttpApiResources()))
	declaredBy := map[route]string{}
	for _, f := range app.Functions {
		fn := function(t, f)
		got := map[route]bool{}
		for _, name := range slices.Sorted(maps.Keys(fn.Events)) {
			ev := fn.Events[name]
			var api *serverless.Function_HttpApiEvent
			if ev.Properties != nil {
				api = ev.Properties.HttpApiEvent
			}
			if ev.Type != "HttpApi" || api == nil {
				t.Errorf("%s event %s: want an HttpApi event with ApiId, Method and Path only, got type %s", f.LogicalID, name, ev.Type)
				continue
			}
			if api.ApiId == nil || *api.ApiId != apiRef {
				t.Errorf("%s event %s: ApiId = %s, want %s", f.LogicalID, name, show(str(api.ApiId)), show(apiRef))
			}
			r := route{strings.ToUpper(str(api.Method)), str(api.Path)}
			if other, dup := declaredBy[r]; dup {
				t.Errorf("%s %s is declared by both %s and %s", r.Method, r.Path, other, f.LogicalID)
			}
			declaredBy[r] = f.LogicalID
			got[r] = true
		}

		want := map[route]bool{}
		// Every route the code can serve, optional ones included: the
		// template routes the protected-resource metadata, which the MCP
		// function answers 404 while no authorization server is set.
		every := app.Deps{Services: core.Services{Config: app.Config{AuthorizationServers: []string{"https://auth.example"}}}}
		for _, r := range f.Routes(every) {
			want[route{r.APIGatewayMethod(), r.APIGatewayPath()}] = true
		}
		for r := range want {
			if !got[r] {
				t.Errorf("%s serves %s %s, but template.yaml does not route it to %s", f.Name, r.Method, r.Path, f.LogicalID)
			}
		}
		for r := range got {
			if !want[r] {
				t.Errorf("template.yaml routes %s %s to %s, which has no such route", r.Method, r.Path, f.LogicalID)
			}
		}
	}
}

func TestTable(t *testing.T) {
	tpl := load(t)
	id := only(t, "AWS::DynamoDB::Table", tpl.GetAllDynamoDBTableResources())
	table, _ := tpl.GetDynamoDBTableWithName(id)

	keySchema := func(pk, sk string) string { return fmt.Sprintf("[%s HASH, %s RANGE]", pk, sk) }
	showKeys := func(ks []dynamodb.Table_KeySchema) string {
		parts := make([]string, len(ks))
		for i, k := range ks {
			parts[i] = k.AttributeName + " " + k.KeyType
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}

	if got, want := showKeys(table.KeySchema), keySchema(store.AttrPK, store.AttrSK); got != want {
		t.Errorf("%s KeySchema = %s, want %s", id, got, want)
	}

	wantAttrs := []string{store.AttrPK + " S", store.AttrSK + " S"}
	for _, ix := range store.Indexes {
		wantAttrs = append(wantAttrs, ix.PK+" S", ix.SK+" S")
	}
	var gotAttrs []string
	for _, a := range table.AttributeDefinitions {
		gotAttrs = append(gotAttrs, a.AttributeName+" "+a.AttributeType)
	}
	if slices.Sort(gotAttrs); !slices.Equal(gotAttrs, slices.Sorted(slices.Values(wantAttrs))) {
		t.Errorf("%s AttributeDefinitions = %v, want %v", id, gotAttrs, wantAttrs)
	}

	wantIndexes := map[string]string{}
	for _, ix := range store.Indexes {
		wantIndexes[ix.Name] = keySchema(ix.PK, ix.SK) + " ALL"
	}
	gotIndexes := map[string]string{}
	for _, ix := range table.GlobalSecondaryIndexes {
		projection := "<unset>"
		if ix.Projection != nil {
			projection = str(ix.Projection.ProjectionType)
		}
		gotIndexes[ix.IndexName] = showKeys(ix.KeySchema) + " " + projection
	}
	if !reflect.DeepEqual(gotIndexes, wantIndexes) {
		t.Errorf("%s GlobalSecondaryIndexes = %v, want %v (keys, projection)", id, gotIndexes, wantIndexes)
	}

	if got := str(table.BillingMode); got != "PAY_PER_REQUEST" {
		t.Errorf("%s BillingMode = %s, want PAY_PER_REQUEST", id, got)
	}
	if ttl := table.TimeToLiveSpecification; ttl == nil || !ttl.Enabled || str(ttl.AttributeName) != store.AttrTTL {
		t.Errorf("%s TimeToLiveSpecification must be enabled on %q", id, store.AttrTTL)
	}
	if pitr := table.PointInTimeRecoverySpecification; pitr == nil || pitr.PointInTimeRecoveryEnabled == nil || !*pitr.PointInTimeRecoveryEnabled {
		t.Errorf("%s must have point-in-time recovery enabled", id)
	}
}

// secretName matches environment variable names that hold credentials.
func secretName(name string) bool {
	name = strings.ToUpper(name)
	for _, s := range []string{"SECRET", "PASSWORD", "TOKEN", "PRIVATE", "CREDENTIAL", "API_KEY"} {
		if strings.Contains(name, s) {
			return true
		}
	}
	return false
}

func TestSecrets(t *testing.T) {
	tpl := load(t)
	for name, p := range tpl.Parameters {
		if strings.Contains(name, "Secret") && (p.NoEcho == nil || !*p.NoEcho || p.Default != nil) {
			t.Errorf("parameter %s must be NoEcho with no Default", name)
		}
	}

	// A secret reaches a function only as a Ref to a NoEcho parameter (or a
	// dynamic reference), never as a literal in the template.
	for _, f := range app.Functions {
		fn := function(t, f)
		if fn.Environment == nil {
			continue
		}
		for k, v := range fn.Environment.Variables {
			if !secretName(k) {
				continue
			}
			if name, arg, ok := deploy.Intrinsic(v); ok && name == "Ref" {
				if p, ok := tpl.Parameters[fmt.Sprint(arg)]; ok && p.NoEcho != nil && *p.NoEcho {
					continue
				}
			}
			if strings.HasPrefix(v, "{{resolve:secretsmanager:") || strings.HasPrefix(v, "{{resolve:ssm-secure:") {
				continue
			}
			if _, _, ok := deploy.Intrinsic(v); !ok {
				v = "a literal" // not repeated in the test log
			}
			t.Errorf("%s: %s is %s; a secret must be a Ref to a NoEcho parameter", f.LogicalID, k, show(v))
		}
	}

	// The MCP server stays off unless the operator turns it on.
	mcp, _ := app.Lookup("mcp")
	fn := function(t, mcp)
	var v string
	if fn.Environment != nil {
		v = fn.Environment.Variables["MCP_SERVER_ENABLED"]
	}
	name, arg, _ := deploy.Intrinsic(v)
	p, isParam := tpl.Parameters[fmt.Sprint(arg)]
	if name != "Ref" || !isParam || p.Default != "false" {
		t.Errorf("%s: MCP_SERVER_ENABLED = %s, want a Ref to a parameter with Default \"false\"", mcp.LogicalID, show(v))
	}
}

// statement is an IAM policy statement in comparable form.
type statement struct {
	Effect    string
	Action    []string // sorted
	Resource  []string // sorted, intrinsics shown as JSON
	Condition string   // JSON, "" if none
}

// statements returns fn's IAM statements. It fails unless fn's permissions
// are all inline policy documents: a SAM policy template (DynamoDBCrudPolicy,
// ...), a managed policy or a Role of its own would grant what this test
// cannot see.
//
// goformation decodes a Policies list into each form it may take (names,
// documents, SAM templates), ignoring errors, so every form comes back
// partly filled in: entry i is a document only if it has a Statement and is
// no managed policy name.
func statements(t *testing.T, id string, fn *serverless.Function) []statement {
	t.Helper()
	p := fn.Policies
	if fn.Role != nil || p == nil || p.String != nil || p.IAMPolicyDocument != nil || p.IAMPolicyDocumentArray == nil {
		t.Fatalf("%s: Policies must be a list of inline policy documents, and no Role", id)
	}
	var out []statement
	for i, doc := range *p.IAMPolicyDocumentArray {
		managed := p.StringArray != nil && i < len(*p.StringArray) && (*p.StringArray)[i] != ""
		if managed || len(doc.Statement) == 0 || str(doc.Version) != "2012-10-17" {
			t.Fatalf("%s: policy %d must be a document with Version 2012-10-17 and a Statement (no SAM policy template, no managed policy)", id, i)
		}
		for _, s := range doc.Statement {
			out = append(out, parseStatement(t, id, s))
		}
	}
	return out
}

func parseStatement(t *testing.T, id string, v any) statement {
	t.Helper()
	m, _ := v.(map[string]any)
	list := func(key string) []string {
		var out []string
		switch x := m[key].(type) {
		case string:
			out = []string{show(x)}
		case []any:
			for _, e := range x {
				out = append(out, show(fmt.Sprint(e)))
			}
		}
		slices.Sort(out)
		return out
	}
	s := statement{Effect: fmt.Sprint(m["Effect"]), Action: list("Action"), Resource: list("Resource")}
	if c, ok := m["Condition"]; ok {
		b, _ := json.Marshal(c)
		s.Condition = string(b)
	}
	for k := range m {
		if !slices.Contains([]string{"Effect", "Action", "Resource", "Condition", "Sid"}, k) {
			t.Errorf("%s: statement has %s; only Effect, Action, Resource and Condition are expected", id, k)
		}
	}
	return s
}

func TestTableAccess(t *testing.T) {
	tableID := only(t, "AWS::DynamoDB::Table", load(t).GetAllDynamoDBTableResources())
	table := show(cloudformation.GetAtt(tableID, "Arn"))
	indexes := show(cloudformation.Sub("${" + tableID + ".Arn}/index/*"))
	crud := statement{
		Effect:   "Allow",
		Action:   []string{"dynamodb:DeleteItem", "dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:Query", "dynamodb:UpdateItem"},
		Resource: slices.Sorted(slices.Values([]string{table, indexes})),
	}
	// askproxy keeps only rate-limit windows: items whose partition key
	// starts like store.RateKey's.
	ratePrefix, _, _ := strings.Cut(store.RateKey("class", "subject", 0).PK, "#")
	rateOnly := statement{
		Effect:    "Allow",
		Action:    []string{"dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:UpdateItem"},
		Resource:  []string{table},
		Condition: `{"ForAllValues:StringLike":{"dynamodb:LeadingKeys":["` + ratePrefix + `#*"]}}`,
	}
	want := map[string][]statement{
		"mcp":       {crud},
		"agentcard": {crud},
		"connector": {crud},
		"askproxy":  {rateOnly},
	}
	for _, f := range app.Functions {
		w, ok := want[f.Name]
		if !ok {
			t.Errorf("no expected permissions for function %s: add them to this test", f.Name)
			continue
		}
		if got := statements(t, f.LogicalID, function(t, f)); !reflect.DeepEqual(got, w) {
			t.Errorf("%s policy statements:\n got %+v\nwant %+v", f.LogicalID, got, w)
		}
	}
}

// TestNoBroadAccess holds whatever TestTableAccess expects to item-level
// DynamoDB actions: no Scan, no batch or transactional writes, no table
// management, no wildcards, and no IAM resources besides the functions'.
func TestNoBroadAccess(t *testing.T) {
	tpl := load(t)
	allowed := []string{"dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem", "dynamodb:Query"}
	for id, r := range tpl.Resources {
		if strings.HasPrefix(r.AWSCloudFormationType(), "AWS::IAM::") {
			t.Errorf("%s: %s grants permissions outside the functions' Policies", id, r.AWSCloudFormationType())
		}
	}
	for _, f := range app.Functions {
		for _, s := range statements(t, f.LogicalID, function(t, f)) {
			if s.Effect != "Allow" {
				continue
			}
			for _, a := range s.Action {
				if !slices.Contains(allowed, a) {
					t.Errorf("%s may %s; allowed are only %v", f.LogicalID, a, allowed)
				}
			}
		}
	}
}

// TestAllowedOrigins: every function that serves an MCP route (web.Route.MCP)
// reads ALLOWED_ORIGINS from one stack parameter that allows no browser
// origin by default, and a function without one does not get it.
func TestAllowedOrigins(t *testing.T) {
	tpl := load(t)
	for _, f := range app.Functions {
		serves := slices.ContainsFunc(f.Routes(app.Deps{Services: core.Services{Config: app.Config{MCPEnabled: true}}}), func(r web.Route) bool { return r.MCP })
		fn := function(t, f)
		var v string
		if fn.Environment != nil {
			v = fn.Environment.Variables["ALLOWED_ORIGINS"]
		}
		if !serves {
			if v != "" {
				t.Errorf("%s serves no MCP route but has ALLOWED_ORIGINS = %s", f.LogicalID, show(v))
			}
			continue
		}
		name, arg, _ := deploy.Intrinsic(v)
		p, isParam := tpl.Parameters[fmt.Sprint(arg)]
		if name != "Ref" || !isParam || p.Default != "" || p.AllowedPattern == nil {
			t.Errorf("%s serves MCP routes: ALLOWED_ORIGINS = %s, want a Ref to a parameter with Default \"\" and an AllowedPattern", f.LogicalID, show(v))
		}
	}
}

// TestPublicRoutesAreThrottled: every public route that spends a rate-limit
// budget and takes a body (askproxy's MCP endpoint and docs Q&A) has a
// route throttle of its own in the API, for all callers together, besides
// the per-IP limit of the chain.
func TestPublicRoutesAreThrottled(t *testing.T) {
	for _, f := range app.Functions {
		fn := function(t, f)
		for _, r := range f.Routes(app.Deps{Services: core.Services{Config: app.Config{MCPEnabled: true}}}) {
			if !r.Public || r.Class == "" || r.Method != http.MethodPost {
				continue
			}
			var settings *serverless.Function_RouteSettings
			for _, ev := range fn.Events {
				if api := ev.Properties.HttpApiEvent; api != nil && str(api.Path) == r.APIGatewayPath() && strings.EqualFold(str(api.Method), r.Method) {
					settings = api.RouteSettings
				}
			}
			if settings == nil || settings.ThrottlingRateLimit == nil || settings.ThrottlingBurstLimit == nil ||
				*settings.ThrottlingRateLimit <= 0 || *settings.ThrottlingBurstLimit <= 0 {
				t.Errorf("%s %s %s: public and paid for, but has no route throttle (RouteSettings) in template.yaml", f.LogicalID, r.Method, r.Path)
			}
		}
	}
}

// mustNotLink lists, per function, import paths (or path prefixes ending in
// "/") its binary must not link: another function's code, and never the
// embedded store (bbolt), the local server, gRPC and protobuf (several MB
// each; nothing here speaks gRPC, and no card or message needs protobuf's
// types), the AWS SDK's configuration chain, or a package whose init is
// slow (slowInit). Each function's main hands its own package's builder to
// core.Main; an import that drags in another function's code shows here
// first.
var mustNotLink = map[string][]string{
	"*": append([]string{"go.etcd.io/bbolt", mod + "/pkg/store/embedded", mod + "/pkg/app", mod + "/pkg/sampleagent", "testing",
		"google.golang.org/grpc", "google.golang.org/protobuf",
		// The AWS SDK's configuration chain: a function's credentials are in
		// its environment (dynamo.Open).
		"github.com/aws/aws-sdk-go-v2/config", mod + "/pkg/store/dynamo/awsprofile"}, slowInit...),
	"askproxy": {"github.com/a2aproject/", mod + "/pkg/dispatch", mod + "/pkg/a2acall", mod + "/pkg/mcpserver",
		mod + "/pkg/agentcard", mod + "/pkg/connector"},
	"agentcard": {mod + "/pkg/mcpserver", mod + "/pkg/connector", mod + "/pkg/askproxy", mod + "/pkg/docsqa",
		"github.com/modelcontextprotocol/go-sdk/mcp"},
	"connector": {mod + "/pkg/mcpserver", mod + "/pkg/agentcard", mod + "/pkg/askproxy", mod + "/pkg/docsqa",
		"github.com/modelcontextprotocol/go-sdk/mcp"},
	"mcp": {mod + "/pkg/agentcard"},
}

// slowInit lists packages whose init costs every cold start more than the
// whole INIT budget allows: santhosh-tekuri/jsonschema compiles the
// meta-schemas of five drafts at init (9-13 ms, 1.7 MB). Input schemas go
// through pkg/inputschema instead; the library stays in tests only.
var slowInit = []string{"github.com/santhosh-tekuri/jsonschema/v6"}

const mod = "github.com/agentgate/agentgate"

// TestFunctionsLinkOnlyTheirOwnCode: no function's binary links a package
// it must not (mustNotLink), by the import graph go list reports for its
// main package as make builds it.
func TestFunctionsLinkOnlyTheirOwnCode(t *testing.T) {
	t.Parallel()
	for _, f := range app.Functions {
		t.Run(f.Name, func(t *testing.T) {
			t.Parallel()
			deps := linked(t, f.Dir, "-tags", "lambda.norpc")
			if !slices.Contains(deps, mod+"/pkg/core") {
				t.Fatalf("./%s does not start through pkg/core: %d packages", f.Dir, len(deps))
			}
			notLinked(t, f.Name, deps, slices.Concat(mustNotLink["*"], mustNotLink[f.Name]))
		})
	}
}

// TestServeLinksNoSlowInit: the agentgate command, which serves every
// function in one process (agentgate serve), starts as fast as they do.
func TestServeLinksNoSlowInit(t *testing.T) {
	t.Parallel()
	deps := linked(t, "cmd/agentgate")
	if !slices.Contains(deps, mod+"/pkg/app") {
		t.Fatalf("./cmd/agentgate does not link pkg/app: %d packages", len(deps))
	}
	notLinked(t, "agentgate", deps, slowInit)
}

// linked returns the packages the main package in dir links, as go list
// -deps reports them for a Lambda build (linux/arm64, no cgo).
func linked(t *testing.T, dir string, flags ...string) []string {
	t.Helper()
	list := exec.Command("go", slices.Concat([]string{"list", "-deps"}, flags, []string{"./" + dir})...)
	list.Dir = filepath.Join("..", "..")
	list.Env = append(os.Environ(), "GOOS=linux", "GOARCH=arm64", "CGO_ENABLED=0")
	out, err := list.Output()
	if err != nil {
		t.Fatalf("go list -deps ./%s: %v", dir, err)
	}
	return strings.Fields(string(out))
}

// notLinked reports each banned path (or prefix ending in "/") that deps,
// what binary name links, has.
func notLinked(t *testing.T, name string, deps, banned []string) {
	t.Helper()
	for _, b := range banned {
		for _, p := range deps {
			if p == b || (strings.HasSuffix(b, "/") && strings.HasPrefix(p, b)) || strings.HasPrefix(p, b+"/") {
				t.Errorf("%s links %s (banned: %s)", name, p, b)
				break
			}
		}
	}
}
