// Command askproxy is the askproxy Lambda function (see pkg/askproxy). It only wires: it
// hands package askproxy's builder to core.Main, so that its binary links its own
// function's code and the core every function shares, nothing more.
package main

import (
	"github.com/agentgate/agentgate/pkg/askproxy"
	"github.com/agentgate/agentgate/pkg/core"
)

func main() {
	core.Main("askproxy", askproxy.BuildFunction)
}
