// Package dynalite runs dynalite, a Node implementation of the DynamoDB API,
// for tests of the DynamoDB store and of anything built on it.
//
// One server is started per test binary, on first use, and every test gets
// tables of its own on it. Tables are created from the Table resource of
// template.yaml, not from the store's schema constants, so that a template
// that disagrees with the code fails the contract tests instead of the
// first deployment.
//
// dynalite is the npm package pinned in the module's package.json
// (install it with `npm ci` at the module root). Without it, or without
// node, tests skip, except in CI (CI=true), where they fail.
package dynalite

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	cfn "github.com/awslabs/goformation/v7/cloudformation/dynamodb"

	"github.com/agentgate/agentgate/pkg/deploy"
	"github.com/agentgate/agentgate/pkg/store/dynamo"
)

// Server is a running dynalite.
type Server struct {
	endpoint string
	client   *dynamodb.Client
	table    dynamodb.CreateTableInput // the template's Table, without a name
	cmd      *exec.Cmd
	exited   chan struct{} // closed when the process has been waited for
	output   bytes.Buffer  // its stdout and stderr, for failure messages
}

var (
	once   sync.Once
	shared *Server
	failed error
	tables atomic.Int64
)

// missingError says that node or dynalite is not installed, which skips
// rather than fails tests outside CI.
type missingError struct{ error }

func (m missingError) Error() string {
	return m.error.Error() + " (install Node.js, then run `npm ci` at the module root)"
}

// Start returns the test binary's dynalite, starting it on first use.
func Start(tb testing.TB) *Server {
	tb.Helper()
	once.Do(func() { shared, failed = start() })
	var missing missingError
	switch {
	case errors.As(failed, &missing) && os.Getenv("CI") != "true":
		tb.Skipf("dynalite: %v", failed)
	case failed != nil:
		tb.Fatalf("dynalite: %v", failed)
	}
	return shared
}

// Stop ends the server, if one was started. Call it from TestMain after
// m.Run. A test binary that exits without calling it takes the server with
// it on Linux (see procAttr); elsewhere the process is left running.
func Stop() {
	if shared != nil {
		_ = shared.cmd.Process.Kill()
		<-shared.exited
	}
}

// Endpoint is the server's URL, for dynamo.Config.Endpoint or
// AWS_ENDPOINT_URL_DYNAMODB.
func (s *Server) Endpoint() string { return s.endpoint }

// Client is a DynamoDB client for the server, for tests that look at a table
// directly.
func (s *Server) Client() *dynamodb.Client { return s.client }

// NewTable creates a table of its own for tb, as template.yaml declares the
// agentgate table, and deletes it when tb ends.
func (s *Server) NewTable(tb testing.TB) string {
	tb.Helper()
	name := fmt.Sprintf("agentgate-test-%d", tables.Add(1))
	in := s.table
	in.TableName = aws.String(name)
	if _, err := s.client.CreateTable(tb.Context(), &in); err != nil {
		tb.Fatalf("dynalite: creating table %s: %v", name, err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if _, err := s.client.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: in.TableName}); err != nil {
			tb.Errorf("dynalite: deleting table %s: %v", name, err)
		}
	})
	if err := waitActive(tb.Context(), s.client, name); err != nil {
		tb.Fatalf("dynalite: table %s: %v", name, err)
	}
	return name
}

// Store returns a store on a new table (see NewTable) whose clock is now.
func (s *Server) Store(tb testing.TB, now func() time.Time) *dynamo.Store {
	tb.Helper()
	return dynamo.New(s.client, s.NewTable(tb), dynamo.WithClock(now))
}

// waitActive waits for a new table to leave CREATING, which even with
// --createTableMs 0 takes dynalite a moment.
func waitActive(ctx context.Context, client *dynamodb.Client, table string) error {
	waiter := dynamodb.NewTableExistsWaiter(client, func(o *dynamodb.TableExistsWaiterOptions) {
		o.MinDelay, o.MaxDelay = 10*time.Millisecond, 100*time.Millisecond
	})
	return waiter.Wait(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(table)}, 10*time.Second)
}

func start() (*Server, error) {
	root, err := moduleRoot()
	if err != nil {
		return nil, err
	}
	table, err := templateTable(filepath.Join(root, "template.yaml"))
	if err != nil {
		return nil, err
	}
	node, err := exec.LookPath("node")
	if err != nil {
		return nil, missingError{err}
	}
	cli := filepath.Join(root, "node_modules", "dynalite", "cli.js")
	if _, err := os.Stat(cli); err != nil {
		return nil, missingError{err}
	}
	// Code under test that loads the AWS configuration itself must not
	// stall probing the EC2 metadata service for credentials.
	os.Setenv("AWS_EC2_METADATA_DISABLED", "true")

	// The free port found by listen can be taken before dynalite binds it;
	// then dynalite exits and another port is tried.
	for range 3 {
		var s *Server
		if s, err = launch(node, filepath.Join(root, "pkg", "store", "dynamo", "dynalite", "keepalive.cjs"), cli); err == nil {
			s.table = table
			return s, nil
		}
	}
	return nil, err
}

// launch starts dynalite on a free loopback port and waits until it
// answers.
func launch(node, keepalive, cli string) (*Server, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	s := &Server{endpoint: "http://127.0.0.1:" + port, exited: make(chan struct{})}
	s.cmd = exec.Command(node, "--require", keepalive, cli, "--host", "127.0.0.1", "--port", port,
		"--createTableMs", "0", "--deleteTableMs", "0", "--updateTableMs", "0")
	s.cmd.Stdout, s.cmd.Stderr = &s.output, &s.output
	s.cmd.SysProcAttr = procAttr()
	if err := s.cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %v: %w", s.cmd.Args, err)
	}
	go func() {
		_ = s.cmd.Wait()
		close(s.exited)
	}()
	// dynalite ignores credentials and region but the SDK needs them to
	// sign requests.
	s.client = dynamodb.New(dynamodb.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(s.endpoint),
		Credentials:  credentials.NewStaticCredentialsProvider("dynalite", "dynalite", ""),
	})
	deadline := time.After(15 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_, err := s.client.ListTables(ctx, &dynamodb.ListTablesInput{}, func(o *dynamodb.Options) { o.RetryMaxAttempts = 1 })
		cancel()
		if err == nil {
			return s, nil
		}
		select {
		case <-s.exited:
			return nil, fmt.Errorf("dynalite exited (%v): %s", s.cmd.ProcessState, s.output.String())
		case <-deadline:
			_ = s.cmd.Process.Kill()
			<-s.exited
			return nil, fmt.Errorf("dynalite did not answer at %s: %v", s.endpoint, err)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func freePort() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return strconv.Itoa(l.Addr().(*net.TCPAddr).Port), nil
}

// moduleRoot finds the directory of go.mod above the working directory
// (a test runs in its package's directory).
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}

// templateTable reads the Table resource of the SAM template at path as a
// CreateTable request: its keys, attribute definitions, secondary indexes
// and billing mode, read with the same loader the template checks use; TTL, point-in-
// time recovery and encryption are not part of CreateTable (and dynalite
// has none of them).
func templateTable(path string) (dynamodb.CreateTableInput, error) {
	tpl, err := deploy.Load(path)
	if err != nil {
		return dynamodb.CreateTableInput{}, fmt.Errorf("parsing %s: %w", path, err)
	}
	t, err := tpl.GetDynamoDBTableWithName("Table")
	if err != nil {
		return dynamodb.CreateTableInput{}, fmt.Errorf("%s: %w", path, err)
	}
	in := dynamodb.CreateTableInput{
		BillingMode: types.BillingMode(aws.ToString(t.BillingMode)),
		KeySchema:   keySchema(t.KeySchema),
	}
	for _, a := range t.AttributeDefinitions {
		in.AttributeDefinitions = append(in.AttributeDefinitions, types.AttributeDefinition{
			AttributeName: aws.String(a.AttributeName),
			AttributeType: types.ScalarAttributeType(a.AttributeType),
		})
	}
	for _, g := range t.GlobalSecondaryIndexes {
		ix := types.GlobalSecondaryIndex{IndexName: aws.String(g.IndexName), KeySchema: keySchema(g.KeySchema)}
		if g.Projection != nil {
			ix.Projection = &types.Projection{
				ProjectionType:   types.ProjectionType(aws.ToString(g.Projection.ProjectionType)),
				NonKeyAttributes: g.Projection.NonKeyAttributes,
			}
		}
		in.GlobalSecondaryIndexes = append(in.GlobalSecondaryIndexes, ix)
	}
	return in, nil
}

func keySchema(ks []cfn.Table_KeySchema) []types.KeySchemaElement {
	var out []types.KeySchemaElement
	for _, k := range ks {
		out = append(out, types.KeySchemaElement{AttributeName: aws.String(k.AttributeName), KeyType: types.KeyType(k.KeyType)})
	}
	return out
}
