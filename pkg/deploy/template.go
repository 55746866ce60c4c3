// Package deploy reads agentgate's deployment, the SAM template that
// `sam build && sam deploy` turn into a stack. Its tests check template.yaml
// against the code: the functions and how they build, their routes, the
// table's schema and what each function may do to it.
package deploy

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"os"

	"github.com/awslabs/goformation/v7/cloudformation"
	"github.com/awslabs/goformation/v7/intrinsics"
)

// Load parses the SAM template at path with goformation, as the SAM transform
// would see it: the Globals section is applied to the resources it covers.
// goformation parses Globals but does not apply them.
//
// Intrinsic functions are kept, not resolved. goformation's resolver turns a
// Ref into its parameter's Default (nil without one, and for any resource),
// GetAtt into nil and an unresolved ${...} in a Sub into "", which would erase
// what a value refers to. Instead every intrinsic stays in the template as
// goformation's own encoding of it, the string cloudformation.Ref,
// cloudformation.GetAtt or cloudformation.Sub return, so a value can be
// compared with, say, cloudformation.Ref("Table"), and Intrinsic decodes it.
func Load(path string) (*cloudformation.Template, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	raw, err := intrinsics.ProcessYAML(data, &intrinsics.ProcessorOptions{
		IntrinsicHandlerOverrides: cloudformation.EncoderIntrinsics,
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	applyGlobals(doc)
	if raw, err = json.Marshal(doc); err != nil {
		return nil, err
	}
	var t cloudformation.Template
	if err := json.Unmarshal(raw, &t); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &t, nil
}

// applyGlobals merges each section of Globals (Function, HttpApi, ...) into
// the Properties of every AWS::Serverless::<section> resource, by the SAM
// rules: a resource's own value wins over a global one, maps are merged and
// lists are concatenated, global entries first.
func applyGlobals(doc map[string]any) {
	globals, _ := doc["Globals"].(map[string]any)
	resources, _ := doc["Resources"].(map[string]any)
	for section, g := range globals {
		for _, r := range resources {
			res, _ := r.(map[string]any)
			if res == nil || res["Type"] != "AWS::Serverless::"+section {
				continue
			}
			props, _ := res["Properties"].(map[string]any)
			res["Properties"] = mergeGlobal(g, props)
		}
	}
}

func mergeGlobal(global, local any) any {
	switch g := global.(type) {
	case map[string]any:
		l, ok := local.(map[string]any)
		if !ok && local != nil {
			return local
		}
		merged := maps.Clone(g)
		for k, v := range l {
			merged[k] = mergeGlobal(g[k], v)
		}
		return merged
	case []any:
		if l, ok := local.([]any); ok {
			return append(append([]any{}, g...), l...)
		}
	}
	if local == nil {
		return global
	}
	return local
}

// Intrinsic decodes a value Load kept as an intrinsic function call, such as
// {"Ref": "Table"}, into the function's name and argument. ok is false for a
// literal.
func Intrinsic(s string) (name string, arg any, ok bool) {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return "", nil, false
	}
	var call map[string]any
	if json.Unmarshal(b, &call) != nil || len(call) != 1 {
		return "", nil, false
	}
	for name, arg := range call {
		return name, arg, true
	}
	return "", nil, false
}
