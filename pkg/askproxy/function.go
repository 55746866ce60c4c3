package askproxy

import (
	"github.com/agentgate/agentgate/pkg/config"
	"github.com/agentgate/agentgate/pkg/core"
)

// Function is the askproxy function on s, serving svc.
func Function(s core.Services, svc *Service) core.Function {
	return core.Function{Name: "askproxy", Routes: Routes(core.Health("askproxy"), svc, config.Version), Start: svc.Announce}
}

// BuildFunction is the askproxy function's builder for core.Main: its own Service.
func BuildFunction(s core.Services) (core.Function, error) {
	return Function(s, New(s.Config.Ask, s.Now)), nil
}
