// Package dynamo is the store.Store on Amazon DynamoDB, agentgate's table in
// production; tests run it against dynalite (package dynamo/dynalite).
//
// It is the only package that imports the AWS SDK: everything it returns is
// in store's vocabulary, so nothing above knows which store it runs on.
//
// Consistency: Get and queries of the table itself read consistently, so a
// session or consent written by one Lambda instance is seen by the next
// request on another. Queries of the secondary indexes cannot be consistent
// (DynamoDB offers only eventually consistent reads on a GSI), so a listing
// may miss a write from a moment ago.
//
// Expiry: DynamoDB's TTL deletes expired items lazily, up to days late, so
// every read and every condition here applies store.Expired itself, with the
// store's clock; the table's TTL only reclaims the space.
package dynamo

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/credentials/endpointcreds"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/agentgate/agentgate/pkg/store"
)

// Store is a store.Store on one DynamoDB table. It is safe for concurrent
// use.
type Store struct {
	db    *dynamodb.Client
	table string
	now   func() time.Time
}

var _ store.Store = (*Store)(nil)

// Option configures a Store.
type Option func(*Store)

// WithClock sets the store's notion of now, which decides expiry and
// CountedAt. Tests use it to move time without waiting.
func WithClock(now func() time.Time) Option {
	return func(s *Store) { s.now = now }
}

// New returns a store on table, reached through client.
func New(client *dynamodb.Client, table string, opts ...Option) *Store {
	s := &Store{db: client, table: table, now: time.Now}
	for _, o := range opts {
		o(s)
	}
	return s
}

// Config says which table to open.
type Config struct {
	Table    string // default store.DefaultTable
	Region   string // optional; otherwise AWS_REGION
	Endpoint string // optional DynamoDB endpoint, such as a local dynalite
	// Getenv reads the environment (nil: os.Getenv).
	Getenv func(string) string
}

func (c Config) getenv(key string) string {
	if c.Getenv == nil {
		return os.Getenv(key)
	}
	return c.Getenv(key)
}

// localRegion is the region placeholder for a loopback endpoint, which
// ignores it but still has requests signed for some region.
const localRegion = "us-east-1"

// Open returns a store on c.Table with the AWS configuration a Lambda
// function's environment holds, and nothing else: the region (AWS_REGION,
// or AWS_DEFAULT_REGION) and the execution role's credentials, which
// Lambda puts in AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and
// AWS_SESSION_TOKEN (or, where a platform serves them from an endpoint,
// AWS_CONTAINER_CREDENTIALS_FULL_URI or _RELATIVE_URI).
//
// Why not the SDK's whole configuration chain (config.LoadDefaultConfig):
// the chain's packages (shared files, SSO, STS, their clients and endpoint
// tables) cost a Lambda function about 2 MB of binary and several
// milliseconds of every cold start, in package initialization alone, to
// find credentials that are in the environment anyway. A developer's
// machine needs the chain (profiles, SSO): package dynamo/awsprofile opens
// the store with it, for agentgate's own commands.
//
// A loopback Endpoint is a local emulator such as dynalite, which ignores
// credentials and region but still needs requests signed: without any in
// the environment Open supplies placeholders. For any other endpoint it
// does not, since made-up credentials would only hide a broken deployment.
func Open(ctx context.Context, c Config, opts ...Option) (*Store, error) {
	cfg := aws.Config{Region: c.Region}
	if cfg.Region == "" {
		cfg.Region = c.getenv("AWS_REGION")
	}
	if cfg.Region == "" {
		cfg.Region = c.getenv("AWS_DEFAULT_REGION")
	}
	creds, err := environmentCredentials(c)
	if err != nil {
		return nil, err
	}
	cfg.Credentials = creds
	return FromConfig(cfg, c, opts...)
}

// environmentCredentials are the credentials in the environment: static
// keys, or a container credentials endpoint (refreshed before they
// expire). None is an error, but for a loopback endpoint (FromConfig
// supplies placeholders).
func environmentCredentials(c Config) (aws.CredentialsProvider, error) {
	if id, secret := c.getenv("AWS_ACCESS_KEY_ID"), c.getenv("AWS_SECRET_ACCESS_KEY"); id != "" && secret != "" {
		return credentials.NewStaticCredentialsProvider(id, secret, c.getenv("AWS_SESSION_TOKEN")), nil
	}
	endpoint := c.getenv("AWS_CONTAINER_CREDENTIALS_FULL_URI")
	if rel := c.getenv("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI"); endpoint == "" && rel != "" {
		endpoint = "http://169.254.170.2" + rel
	}
	if endpoint != "" {
		return aws.NewCredentialsCache(endpointcreds.New(endpoint, func(o *endpointcreds.Options) {
			o.AuthorizationToken = c.getenv("AWS_CONTAINER_AUTHORIZATION_TOKEN")
			if file := c.getenv("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE"); file != "" {
				o.AuthorizationTokenProvider = tokenFile(file)
			}
		})), nil
	}
	if IsLoopback(c.Endpoint) {
		return nil, nil
	}
	return nil, errors.New("dynamo: no AWS credentials in the environment (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_CONTAINER_CREDENTIALS_FULL_URI): on Lambda the function's role provides them")
}

// tokenFile reads the container credentials endpoint's authorization token
// from a file, anew for each refresh (the platform rotates it).
type tokenFile string

func (f tokenFile) GetToken() (string, error) {
	b, err := os.ReadFile(string(f))
	if err != nil {
		return "", fmt.Errorf("dynamo: reading AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE: %w", err)
	}
	return strings.TrimSpace(string(b)), nil
}

// FromConfig returns a store on c.Table, reached with cfg, c.Endpoint and
// c.Region overriding cfg's. For a loopback endpoint, a missing region or
// missing credentials get placeholders (see Open).
func FromConfig(cfg aws.Config, c Config, opts ...Option) (*Store, error) {
	if c.Region != "" {
		cfg.Region = c.Region
	}
	if IsLoopback(c.Endpoint) {
		if cfg.Region == "" {
			cfg.Region = localRegion
		}
		if cfg.Credentials == nil {
			cfg.Credentials = credentials.NewStaticCredentialsProvider("local", "local", "")
		}
	}
	if cfg.Region == "" {
		return nil, errors.New("dynamo: no AWS region configured (set AWS_REGION)")
	}
	client := dynamodb.NewFromConfig(cfg, func(o *dynamodb.Options) {
		if c.Endpoint != "" {
			o.BaseEndpoint = aws.String(c.Endpoint)
		}
	})
	table := c.Table
	if table == "" {
		table = store.DefaultTable
	}
	return New(client, table, opts...), nil
}

// IsLoopback reports whether endpoint is a URL on this machine: a local
// emulator, which needs signed requests but no real credentials.
func IsLoopback(endpoint string) bool {
	u, err := url.Parse(endpoint)
	if err != nil {
		return false
	}
	host := u.Hostname()
	ip := net.ParseIP(host)
	return host == "localhost" || ip != nil && ip.IsLoopback()
}

// EnsureTable creates the table if it does not exist, with the schema in
// package store, and waits until it is ACTIVE. It is meant for a local
// dynalite; in AWS the template creates the table, and also enables TTL,
// which dynalite cannot do (it has no UpdateTimeToLive), so this does not
// try.
func (s *Store) EnsureTable(ctx context.Context) error {
	_, err := s.db.CreateTable(ctx, tableSchema(s.table))
	var exists *types.ResourceInUseException
	if err != nil && !errors.As(err, &exists) {
		return fail("EnsureTable", err)
	}
	waiter := dynamodb.NewTableExistsWaiter(s.db, func(o *dynamodb.TableExistsWaiterOptions) {
		o.MinDelay, o.MaxDelay = 50*time.Millisecond, 5*time.Second
	})
	err = waiter.Wait(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(s.table)}, 5*time.Minute)
	return fail("EnsureTable", err)
}

// tableSchema is the table as package store describes it.
func tableSchema(table string) *dynamodb.CreateTableInput {
	in := &dynamodb.CreateTableInput{
		TableName:   aws.String(table),
		BillingMode: types.BillingModePayPerRequest,
		KeySchema:   keySchema(store.AttrPK, store.AttrSK),
	}
	for _, ix := range append([]store.IndexSchema{indexSchema(store.Primary)}, store.Indexes...) {
		for _, attr := range []string{ix.PK, ix.SK} {
			in.AttributeDefinitions = append(in.AttributeDefinitions, types.AttributeDefinition{
				AttributeName: aws.String(attr), AttributeType: types.ScalarAttributeTypeS,
			})
		}
		if ix.Name != "" {
			in.GlobalSecondaryIndexes = append(in.GlobalSecondaryIndexes, types.GlobalSecondaryIndex{
				IndexName:  aws.String(ix.Name),
				KeySchema:  keySchema(ix.PK, ix.SK),
				Projection: &types.Projection{ProjectionType: types.ProjectionTypeAll},
			})
		}
	}
	return in
}

func keySchema(pk, sk string) []types.KeySchemaElement {
	return []types.KeySchemaElement{
		{AttributeName: aws.String(pk), KeyType: types.KeyTypeHash},
		{AttributeName: aws.String(sk), KeyType: types.KeyTypeRange},
	}
}

// Close does nothing: the SDK client holds no resources that need
// releasing.
func (s *Store) Close() error { return nil }
