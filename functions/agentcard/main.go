// Command agentcard is the agentcard Lambda function: A2A agent cards and the A2A front door (see pkg/agentcard).
// It only wires: package app builds the handler, package lambdahttp serves it.
package main

import (
	"github.com/agentgate/agentgate/pkg/app"
	"github.com/agentgate/agentgate/pkg/lambdahttp"
)

func main() {
	lambdahttp.Start(app.MustFunction("agentcard"))
}
