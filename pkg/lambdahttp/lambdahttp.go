// Package lambdahttp runs an agentgate http.Handler as a Lambda function
// behind an API Gateway HTTP API (payload format 2.0). It is, with the store,
// the only code that knows it runs on AWS.
package lambdahttp

import (
	"context"
	"net/http"
	"os"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-lambda-go/lambdacontext"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"

	"github.com/agentgate/agentgate/pkg/logging"
)

// Handler turns h into a Lambda handler for HTTP API v2 events. Each request's
// context carries the Lambda request id (for the logs) and the invocation's
// deadline.
func Handler(h http.Handler) func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
	return httpadapter.NewV2(withRequestID(h)).ProxyWithContext
}

// Start serves h until the Lambda runtime stops the process, with the
// collector set for the function's memory size (Tune).
func Start(h http.Handler) {
	Tune(os.Getenv)
	lambda.Start(Handler(h))
}

func withRequestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if lc, ok := lambdacontext.FromContext(r.Context()); ok && lc.AwsRequestID != "" {
			r = r.WithContext(logging.WithRequestID(r.Context(), lc.AwsRequestID))
		}
		next.ServeHTTP(w, r)
	})
}
