package dynamo

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"

	"github.com/agentgate/agentgate/pkg/store"
)

// conditionFailed reports whether a conditional write was refused because
// its condition did not hold, which every caller turns into a store error of
// its own (ErrConflict, ErrNotFound, or another attempt).
func conditionFailed(err error) bool {
	var ccf *types.ConditionalCheckFailedException
	return errors.As(err, &ccf)
}

// fail turns the error of operation op into the store's vocabulary. A
// failed condition is a lost race (ErrConflict). Anything else is the
// backend failing (ErrUnavailable) unless DynamoDB refused the request
// itself.
func fail(op string, err error) error {
	switch {
	case err == nil:
		return nil
	case conditionFailed(err):
		return store.ErrConflict
	}
	err = fmt.Errorf("dynamo: %s: %w", op, err)
	if refused(err) {
		return err
	}
	return store.Unavailable(err)
}

// refused reports whether DynamoDB answered err and refused the request as
// such: a malformed request or denied access, where sending it again cannot
// help, so it is reported as the bug or misconfiguration it is (and reads
// as agentgate.EINTERNAL). Everything else means the table cannot serve right
// now: throttling and server faults; a missing table, which is a broken
// deployment rather than a missing record; and every failure without an
// answer at all, such as transport errors, missing credentials and the
// caller's deadline.
func refused(err error) bool {
	var (
		api        smithy.APIError
		throughput *types.ProvisionedThroughputExceededException
		throttled  *types.ThrottlingException
		limited    *types.RequestLimitExceeded
		internal   *types.InternalServerError
		noTable    *types.ResourceNotFoundException
		status     interface{ HTTPStatusCode() int }
	)
	switch {
	case !errors.As(err, &api),
		errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded),
		errors.As(err, &throughput), errors.As(err, &throttled), errors.As(err, &limited),
		errors.As(err, &internal), errors.As(err, &noTable),
		api.ErrorFault() == smithy.FaultServer,
		errors.As(err, &status) && status.HTTPStatusCode() >= 500:
		return false
	}
	return true
}
