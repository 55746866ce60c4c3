package deploy_test

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/awslabs/goformation/v7/cloudformation"

	"github.com/agentgate/agentgate/pkg/deploy"
)

// TestLoad pins down what the template tests rely on: Globals applied by the
// SAM rules, and intrinsics kept as written, a Ref to a parameter without a
// Default included.
func TestLoad(t *testing.T) {
	const src = `
Transform: AWS::Serverless-2016-10-31
Parameters:
  Secret: {Type: String, NoEcho: true}
Globals:
  Function:
    Runtime: provided.al2023
    Layers: [global]
    Environment: {Variables: {A: global, B: global}}
Resources:
  Fn:
    Type: AWS::Serverless::Function
    Properties:
      Runtime: provided.al2
      Layers: [local]
      Environment: {Variables: {B: !Ref Secret, C: !Sub "${Fn.Arn}/x"}}
      Policies:
        - Statement:
            - {Effect: Allow, Action: "s3:GetObject", Resource: !GetAtt Fn.Arn}
`
	path := filepath.Join(t.TempDir(), "template.yaml")
	if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	tpl, err := deploy.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	fn, err := tpl.GetServerlessFunctionWithName("Fn")
	if err != nil {
		t.Fatal(err)
	}
	if *fn.Runtime != "provided.al2" {
		t.Errorf("Runtime = %s; the function's own value must win", *fn.Runtime)
	}
	if want := []string{"global", "local"}; !reflect.DeepEqual(fn.Layers, want) {
		t.Errorf("Layers = %v, want %v (lists concatenate, global first)", fn.Layers, want)
	}
	want := map[string]string{"A": "global", "B": cloudformation.Ref("Secret"), "C": cloudformation.Sub("${Fn.Arn}/x")}
	if !reflect.DeepEqual(fn.Environment.Variables, want) {
		t.Errorf("Variables = %v, want %v (maps merge, the function's entries win)", fn.Environment.Variables, want)
	}
	stmt := (*fn.Policies.IAMPolicyDocumentArray)[0].Statement[0].(map[string]any)
	if name, arg, ok := deploy.Intrinsic(stmt["Resource"].(string)); !ok || name != "Fn::GetAtt" || !reflect.DeepEqual(arg, []any{"Fn", "Arn"}) {
		t.Errorf("Resource = %v %v %v, want Fn::GetAtt [Fn Arn]", name, arg, ok)
	}
	if _, _, ok := deploy.Intrinsic("provided.al2023"); ok {
		t.Error("a literal decoded as an intrinsic")
	}
}
