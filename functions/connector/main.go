// Command connector is the connector Lambda function: the owner and key APIs (see pkg/connector).
// It only wires: package app builds the handler, package lambdahttp serves it.
package main

import (
	"github.com/agentgate/agentgate/pkg/app"
	"github.com/agentgate/agentgate/pkg/lambdahttp"
)

func main() {
	lambdahttp.Start(app.MustFunction("connector"))
}
