package dynamo

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/agentgate/agentgate/pkg/agentgate"
	"github.com/agentgate/agentgate/pkg/store"
)

// dynalite never throttles or fails, so the mapping of those errors is
// checked here, on errors shaped as the SDK returns them.
func TestFail(t *testing.T) {
	op := func(err error) error {
		return &smithy.OperationError{ServiceID: "DynamoDB", OperationName: "GetItem", Err: err}
	}
	for _, tc := range []struct {
		err  error
		want string
	}{
		{op(&types.ConditionalCheckFailedException{}), agentgate.ECONFLICT},
		{op(&types.ProvisionedThroughputExceededException{}), agentgate.EUNAVAILABLE},
		{op(&types.ThrottlingException{}), agentgate.EUNAVAILABLE},
		{op(&types.RequestLimitExceeded{}), agentgate.EUNAVAILABLE},
		{op(&types.InternalServerError{}), agentgate.EUNAVAILABLE},
		{op(&types.ResourceNotFoundException{}), agentgate.EUNAVAILABLE},
		{op(&smithy.GenericAPIError{Code: "ServiceUnavailable", Fault: smithy.FaultServer}), agentgate.EUNAVAILABLE},
		{op(&smithyhttp.ResponseError{
			Response: &smithyhttp.Response{Response: &http.Response{StatusCode: http.StatusBadGateway}},
			Err:      &smithy.GenericAPIError{Code: "UnknownError"},
		}), agentgate.EUNAVAILABLE},
		{op(&net.OpError{Op: "dial", Err: errors.New("connection refused")}), agentgate.EUNAVAILABLE},
		{op(fmt.Errorf("sending: %w", context.DeadlineExceeded)), agentgate.EUNAVAILABLE},
		{op(&smithy.GenericAPIError{Code: "ValidationException", Fault: smithy.FaultClient}), agentgate.EINTERNAL},
		{op(&smithy.GenericAPIError{Code: "AccessDeniedException"}), agentgate.EINTERNAL},
	} {
		err := fail("Get", tc.err)
		if got := agentgate.ErrorCode(err); got != tc.want {
			t.Errorf("fail(%v) = %v (%s), want %s", tc.err, err, got, tc.want)
		}
		if tc.want == agentgate.EUNAVAILABLE && !errors.Is(err, tc.err) {
			t.Errorf("fail(%v) = %v lost its cause", tc.err, err)
		}
	}
	if fail("Get", nil) != nil {
		t.Error("fail(nil) != nil")
	}
	if !errors.Is(fail("Create", op(&types.ConditionalCheckFailedException{})), store.ErrConflict) {
		t.Error("a failed condition is not ErrConflict")
	}
}

func TestIsLoopback(t *testing.T) {
	for endpoint, want := range map[string]bool{
		"http://127.0.0.1:8000": true,
		"http://localhost:4567": true,
		"http://[::1]:8000":     true,
		"":                      false,
		"https://dynamodb.eu-west-1.amazonaws.com": false,
		"http://10.0.0.1:8000":                     false,
		"http://localhost.example.com":             false,
	} {
		if got := IsLoopback(endpoint); got != want {
			t.Errorf("IsLoopback(%q) = %v", endpoint, got)
		}
	}
}
