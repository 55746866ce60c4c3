// Command trivial is the baseline of BenchmarkLambdaInit: a Go Lambda
// function that links aws-lambda-go and nothing else, and answers every
// API Gateway event with an empty 200. Its INIT is what the runtime, the
// emulator and process start cost before any of agentgate's code.
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
)

func main() {
	lambda.Start(func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
		return events.APIGatewayV2HTTPResponse{StatusCode: 200, Headers: map[string]string{"Content-Type": "application/json"}, Body: "{}"}, nil
	})
}
