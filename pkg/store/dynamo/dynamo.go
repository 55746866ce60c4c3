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
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/feature/ec2/imds"
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
	Region   string // optional; otherwise the SDK's usual sources (AWS_REGION, profile)
	Endpoint string // optional DynamoDB endpoint, such as a local dynalite
}

// localRegion is the region placeholder for a loopback endpoint, which
// ignores it but still has requests signed for some region.
const localRegion = "us-east-1"

// Open loads the AWS configuration the usual way (environment, shared
// files, the Lambda role) and returns a store on c.Table.
//
// A loopback Endpoint is a local emulator such as dynalite, which ignores
// credentials and region but still needs requests signed: when none are
// configured Open supplies placeholders, and it does not ask the EC2
// metadata service for credentials, which would only stall off EC2. For any
// other endpoint it does neither, since made-up credentials would only hide
// a broken deployment.
func Open(ctx context.Context, c Config, opts ...Option) (*Store, error) {
	local := isLoopback(c.Endpoint)
	var loadOpts []func(*config.LoadOptions) error
	if c.Region != "" {
		loadOpts = append(loadOpts, config.WithRegion(c.Region))
	}
	if local {
		loadOpts = append(loadOpts, config.WithEC2IMDSClientEnableState(imds.ClientDisabled))
	}
	cfg, err := config.LoadDefaultConfig(ctx, loadOpts...)
	if err != nil {
		return nil, fmt.Errorf("dynamo: loading the AWS configuration: %w", err)
	}
	if local {
		if cfg.Region == "" {
			cfg.Region = localRegion
		}
		if _, err := cfg.Credentials.Retrieve(ctx); err != nil {
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

// isLoopback reports whether endpoint is a URL on this machine.
func isLoopback(endpoint string) bool {
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
