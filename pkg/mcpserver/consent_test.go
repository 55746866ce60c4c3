package mcpserver

import (
	"strings"
	"testing"
	"time"

	"github.com/agentgate/agentgate/pkg/store/storetest"
)

func TestSignerVerify(t *testing.T) {
	now := storetest.Epoch
	s := signer{secret: []byte(strings.Repeat("k", MinConsentSecret)), now: func() time.Time { return now }}
	claims := consentClaims{ID: "c1", Caller: "user::alice", Tool: dispatchTool, Digest: "d", TaskID: "t", Expires: now.Add(ConsentTTL).UnixMilli()}
	token, err := s.sign(claims)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := s.verify(token, "user::alice", dispatchTool); err != nil || got != claims {
		t.Fatalf("verify a good token: %+v, %v", got, err)
	}
	other := signer{secret: []byte(strings.Repeat("x", MinConsentSecret)), now: s.now}
	forged, _ := other.sign(claims)
	body, mac, _ := strings.Cut(strings.TrimPrefix(token, tokenPrefix), ".")
	for name, tc := range map[string]struct{ token, caller, tool string }{
		"another deployment's secret": {forged, "user::alice", dispatchTool},
		"another caller":              {token, "user::bob", dispatchTool},
		"alice's connector key":       {token, "connector:sample-echo:alice", dispatchTool},
		"another tool":                {token, "user::alice", "other_tool"},
		"no prefix":                   {strings.TrimPrefix(token, tokenPrefix), "user::alice", dispatchTool},
		"body changed":                {tokenPrefix + body + "A." + mac, "user::alice", dispatchTool},
		"mac dropped":                 {tokenPrefix + body, "user::alice", dispatchTool},
		"empty":                       {"", "user::alice", dispatchTool},
	} {
		if _, err := s.verify(tc.token, tc.caller, tc.tool); err != errBadState {
			t.Errorf("%s: %v, want errBadState", name, err)
		}
	}
	now = now.Add(ConsentTTL + time.Millisecond)
	if _, err := s.verify(token, "user::alice", dispatchTool); err == nil || !strings.Contains(err.Error(), "expired") {
		t.Errorf("an expired token: %v", err)
	}
}
