// Command agentcard is the agentcard Lambda function (see pkg/agentcard). It only wires: it
// hands package agentcard's builder to core.Main, so that its binary links its own
// function's code and the core every function shares, nothing more.
package main

import (
	"github.com/agentgate/agentgate/pkg/agentcard"
	"github.com/agentgate/agentgate/pkg/core"
)

func main() {
	core.Main("agentcard", agentcard.BuildFunction)
}
