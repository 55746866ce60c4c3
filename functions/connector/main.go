// Command connector is the connector Lambda function (see pkg/connector). It only wires: it
// hands package connector's builder to core.Main, so that its binary links its own
// function's code and the core every function shares, nothing more.
package main

import (
	"github.com/agentgate/agentgate/pkg/connector"
	"github.com/agentgate/agentgate/pkg/core"
)

func main() {
	core.Main("connector", connector.BuildFunction)
}
