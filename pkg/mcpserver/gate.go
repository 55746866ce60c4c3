package mcpserver

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentgate/agentgate/pkg/agentgate"
	"github.com/agentgate/agentgate/pkg/dispatch"
	"github.com/agentgate/agentgate/pkg/store"
)

// The consent gate. Every tool that hands work to an agent (dispatch_task,
// ask, run_playbook, chat_with_<slug>) describes the call as a handing and
// runs it through handing.run: one policy (REQUIRE_DISPATCH_CONSENT), one
// question, one signed state bound to the caller, the tool and a digest of
// the arguments, one record that lets the first answer decide (the task's
// own for dispatch_task, handing.asked; a consent record for the rest), in
// both protocol generations (MRTR, or pkg/mcpsession's elicitation on the
// tools/call stream). No tool sends anything to an agent but through
// handing.send, which only run calls.

// output is what a tool that hands work to an agent answers with. Each
// such output says whether the work was handed over ("dispatched", the one
// required field) and if not why ("reason"); every other field is optional,
// so that a refusal made without knowing the tool (pkg/mcpsession's unanswered
// consent) fits the schema of each.
type output[T any] interface {
	*T
	refuse(reason string) // not handed over, because of reason
	replay()              // a stored result: nothing was sent this time
	handed() bool         // whether the work reached the agent
	result() *mcp.CallToolResult
}

// handing is one call of a tool that hands work to an agent: what the user
// is asked about, and how the work is handed over once they say yes.
type handing[Out any, P output[Out]] struct {
	tool  string
	agent string // its name
	// taskID is the caller's idempotency key, for a tool that takes one
	// (dispatch_task); the consent state binds it.
	taskID string
	// digest identifies the arguments: an answer counts only for the
	// arguments it was asked about.
	digest string
	// question asks the user (the text follows it, clipped); text is what
	// goes to the agent, audited by its length and digest only.
	question, text string
	// base is the output's part that every answer carries (the agent, the
	// taskId, the playbook).
	base Out
	// asked and answered, if set, keep the consent in the work's own
	// record (dispatch_task's: its execution, keyed by caller and taskId,
	// which is also the once-only claim; see pkg/dispatch/taskrecord.go)
	// rather than in a consent record: asked records the question and
	// returns it (ask), or, for work handed over already, that first
	// output (done, without asking again); answered settles question ask
	// with the user's answer (refusal "" is yes), handing the work over on
	// a yes, and says whether the output was decided before (replayed).
	asked    func(ctx context.Context) (ask int64, done *Out, err error)
	answered func(ctx context.Context, ask int64, refusal string) (out Out, replayed bool, err error)
	// do hands the work over, and names the outcome for the audit
	// (dispatched, replayed). once, when not "", is the consent's id: the
	// consent record's claim (accepted, under a lease) makes the send
	// once-only, and once names the message.
	do func(ctx context.Context, once string) (Out, string, error)
}

// consentState returns the claims of the consent state a call answers with,
// verified for p and tool, or nil when the call answers no question.
func (s *Server) consentState(req *mcp.CallToolRequest, p agentgate.Principal, tool string) (*consentClaims, error) {
	if req.Params.RequestState == "" && len(req.Params.InputResponses) == 0 {
		return nil, nil
	}
	c, err := s.signer.verify(req.Params.RequestState, stateCaller(p), tool)
	if err != nil {
		return nil, err
	}
	return &c, nil
}

// run gates the handing: without consent required it is sent at once; an
// answer (claims, from consentState) settles its question; a repeat of work
// done is answered with its first result; anything else asks the user.
func (h handing[Out, P]) run(ctx context.Context, s *Server, req *mcp.CallToolRequest, p agentgate.Principal, claims *consentClaims) (*mcp.CallToolResult, Out, error) {
	if claims != nil && (claims.Digest != h.digest || claims.TaskID != h.taskID) {
		return h.refuse(ctx, p, "bad_state", agentgate.ErrorMessage(errBadState))
	}
	switch {
	case !s.requireConsent:
		return h.send(ctx, p, "") // a taskId's dedup answers a repeat
	case claims != nil && h.answered != nil:
		return h.answerRecord(ctx, req, p, *claims)
	case claims != nil:
		return h.answer(ctx, s, req, p, *claims)
	}
	return h.ask(ctx, s, req, p)
}

// ask records a pending consent and asks the client's user for it.
func (h handing[Out, P]) ask(ctx context.Context, s *Server, req *mcp.CallToolRequest, p agentgate.Principal) (*mcp.CallToolResult, Out, error) {
	if !canElicit(req) {
		return h.refuse(ctx, p, "no_elicitation",
			"this client cannot ask its user for consent (it declares no elicitation capability), and agentgate dispatches only with consent")
	}
	claims := consentClaims{Caller: stateCaller(p), Tool: h.tool, Digest: h.digest, TaskID: h.taskID, Expires: s.now().Add(ConsentTTL).UnixMilli()}
	var err error
	if h.asked != nil {
		var done *Out
		claims.Ask, done, err = h.asked(ctx)
		switch {
		case agentgate.ErrorCode(err) == agentgate.ECONFLICT:
			return h.refuse(ctx, p, "conflict", agentgate.ErrorMessage(err))
		case err == nil && done != nil:
			// A repeat of work handed over already: its first result,
			// with no second consent and no second dispatch.
			h.audit(ctx, "dispatch", p, "replayed")
			return P(done).result(), *done, nil
		}
	} else {
		claims.ID, err = s.consents.create(ctx, consentRecord{Caller: p.Subject, Agent: h.agent, Tool: h.tool, TaskID: h.taskID, Digest: h.digest})
	}
	if err != nil {
		return h.refuse(ctx, p, "store_error", "the consent request could not be recorded: "+agentgate.ErrorMessage(err))
	}
	state, err := s.signer.sign(claims)
	if err != nil {
		return h.fail(ctx, p, err)
	}
	h.audit(ctx, "consent_requested", p, "pending")
	return askInput[Out](ctx, h.consentRequest(), state)
}

// canElicit reports whether the client of req can ask its user: it
// declares the elicitation capability.
func canElicit(req *mcp.CallToolRequest) bool {
	caps := req.ClientCapabilities()
	return caps != nil && caps.Elicitation != nil
}

// consentRequest is the question the user sees: what, to whom, and a
// single yes/no field (a flat schema, as elicitation requires).
func (h handing[Out, P]) consentRequest() *mcp.ElicitParams {
	text := h.text
	if len(text) > 500 {
		text = strings.ToValidUTF8(text[:500], "") + "…"
	}
	return &mcp.ElicitParams{
		Mode:    "form",
		Message: h.question + "\n\n" + text,
		RequestedSchema: map[string]any{
			"type": "object",
			"properties": map[string]any{
				"approve": map[string]any{"type": "boolean", "title": "Send it",
					"description": "Yes sends it to the agent; no sends nothing."},
			},
			"required": []string{"approve"},
		},
	}
}

// answer settles a consent with the user's answer, once: the first answer
// decides, and a replay of the same state gets the settled result. The
// consent record is also the send's once-only claim: the yes moves it to
// accepted under a lease, and another answer meanwhile waits for the
// result, or, once a sender that died has let the lease run out, takes the
// claim over and sends.
func (h handing[Out, P]) answer(ctx context.Context, s *Server, req *mcp.CallToolRequest, p agentgate.Principal, claims consentClaims) (*mcp.CallToolResult, Out, error) {
	for wait := dispatch.FirstPoll; ; {
		rec, version, err := s.consents.get(ctx, claims.ID)
		if err != nil {
			return h.refuse(ctx, p, "consent_unavailable", agentgate.ErrorMessage(err))
		}
		switch {
		case rec.State == consentSettled:
			var settled Out
			if err := json.Unmarshal(rec.Result, &settled); err != nil {
				return h.fail(ctx, p, err)
			}
			P(&settled).replay()
			h.audit(ctx, "consent_replayed", p, outcome(P(&settled).handed()))
			return P(&settled).result(), settled, nil
		case rec.State == consentAccepted && s.now().Before(rec.LeaseUntil):
			// Another request took the yes and is sending.
			var ok bool
			if wait, ok = dispatch.Pause(ctx, wait); !ok {
				return h.refuse(ctx, p, "consent_unavailable", "this consent's answer is still being acted on; retry later")
			}
			continue
		case rec.State == consentPending:
			reason, code := decide(req.Params.InputResponses[consentKey])
			if code != "accepted" {
				settled := h.base
				P(&settled).refuse(reason)
				if err := s.settle(ctx, claims.ID, version, rec, settled); errors.Is(err, store.ErrConflict) {
					continue // answered concurrently: read what was decided
				} else if err != nil {
					return h.refuse(ctx, p, "consent_unavailable", agentgate.ErrorMessage(err))
				}
				h.audit(ctx, "consent_refused", p, code)
				return P(&settled).result(), settled, nil
			}
		}
		// A yes to a pending consent, or one whose sender let its lease
		// run out: claim the send.
		rec.State, rec.LeaseUntil = consentAccepted, s.now().Add(dispatch.Lease)
		if err := s.consents.transition(ctx, claims.ID, version, rec); errors.Is(err, store.ErrConflict) {
			continue
		} else if err != nil {
			return h.refuse(ctx, p, "consent_unavailable", agentgate.ErrorMessage(err))
		}
		h.audit(ctx, "consent_accepted", p, "accepted")
		res, settled, err := h.send(ctx, p, claims.ID)
		if err == nil {
			// A failed settle loses only the replay: a repeat after the
			// lease sends again.
			if err := s.settle(context.WithoutCancel(ctx), claims.ID, version+1, rec, settled); err != nil {
				slog.WarnContext(ctx, "mcp: settling a consent failed", "error", err.Error())
			}
		}
		return res, settled, err
	}
}

// answerRecord settles a consent kept in the work's own record (asked,
// answered): the first answer decides, and a replay, or a later answer to
// the same question, gets the settled result.
func (h handing[Out, P]) answerRecord(ctx context.Context, req *mcp.CallToolRequest, p agentgate.Principal, claims consentClaims) (*mcp.CallToolResult, Out, error) {
	reason, code := decide(req.Params.InputResponses[consentKey])
	refusal := ""
	if code != "accepted" {
		refusal = reason
	}
	out, replayed, err := h.answered(ctx, claims.Ask, refusal)
	switch {
	case agentgate.ErrorCode(err) == agentgate.ECONFLICT:
		return h.refuse(ctx, p, "conflict", agentgate.ErrorMessage(err))
	case agentgate.ErrorCode(err) == agentgate.ENOTFOUND:
		return h.refuse(ctx, p, "consent_unavailable", agentgate.ErrorMessage(err))
	case agentgate.ErrorCode(err) == agentgate.EINTERNAL:
		return h.fail(ctx, p, err)
	case err != nil:
		return h.refuse(ctx, p, "dispatch_failed", agentgate.ErrorMessage(err))
	case replayed:
		P(&out).replay()
		h.audit(ctx, "consent_replayed", p, outcome(P(&out).handed()))
	case refusal != "":
		h.audit(ctx, "consent_refused", p, code)
	default:
		h.audit(ctx, "consent_accepted", p, "accepted")
		h.audit(ctx, "dispatch", p, "dispatched")
	}
	return P(&out).result(), out, nil
}

// send hands the work over (do) and audits it; a failure is a refusal that
// says why.
func (h handing[Out, P]) send(ctx context.Context, p agentgate.Principal, once string) (*mcp.CallToolResult, Out, error) {
	out, outcomeName, err := h.do(ctx, once)
	if err != nil {
		return h.refuse(ctx, p, "dispatch_failed", agentgate.ErrorMessage(err))
	}
	h.audit(ctx, "dispatch", p, outcomeName)
	return P(&out).result(), out, nil
}

// refuse answers a handing that did not happen, and audits why.
func (h handing[Out, P]) refuse(ctx context.Context, p agentgate.Principal, code, reason string) (*mcp.CallToolResult, Out, error) {
	return refusal[Out, P](ctx, p, h.tool, h.agent, h.taskID, h.base, code, reason)
}

// fail answers a call that agentgate could not complete (fail).
func (h handing[Out, P]) fail(ctx context.Context, p agentgate.Principal, err error) (*mcp.CallToolResult, Out, error) {
	return failure[Out, P](ctx, p, h.tool, h.agent, h.taskID, h.base, err)
}

// audit logs a consent or dispatch event of the handing.
func (h handing[Out, P]) audit(ctx context.Context, event string, p agentgate.Principal, outcome string) {
	audit(ctx, event, p, h.tool, h.agent, h.taskID, h.text, outcome)
}

// refusal answers a call of tool that handed nothing to agentName: out,
// refused with reason; the audit log says why (code).
func refusal[Out any, P output[Out]](ctx context.Context, p agentgate.Principal, tool, agentName, taskID string, out Out, code, reason string) (*mcp.CallToolResult, Out, error) {
	P(&out).refuse(reason)
	slog.InfoContext(ctx, "audit", "event", "dispatch_refused", "tool", tool, "caller", p.Subject, "agent", agentName,
		"task_id", taskID, "outcome", code)
	return P(&out).result(), out, nil
}

// failure answers a call that agentgate could not complete. A tool's error
// would reach the caller as its text (the SDK copies it into the result),
// so the cause goes to the log and the caller reads agentgate's words.
func failure[Out any, P output[Out]](ctx context.Context, p agentgate.Principal, tool, agentName, taskID string, out Out, err error) (*mcp.CallToolResult, Out, error) {
	slog.ErrorContext(ctx, "mcp: a tool failed", "tool", tool, "task_id", taskID, "error", err.Error())
	return refusal[Out, P](ctx, p, tool, agentName, taskID, out, "internal_error", "an internal error stopped this call; try again later")
}

// audit logs a consent or dispatch event: who, which tool and agent, which
// task, what happened, and of what was sent only its length and digest.
func audit(ctx context.Context, event string, p agentgate.Principal, tool, agentName, taskID, text, outcome string) {
	sum := sha256.Sum256([]byte(text))
	slog.InfoContext(ctx, "audit", "event", event, "tool", tool, "caller", p.Subject, "agent", agentName,
		"task_id", taskID, "outcome", outcome,
		"instruction_bytes", len(text), "instruction_sha256", hex.EncodeToString(sum[:]))
}

// decide reads the user's answer: accepted only for an explicit
// approve: true; every other answer is a refusal with its own reason.
func decide(answer mcp.InputResponse) (reason, code string) {
	r, ok := answer.(*mcp.ElicitResult)
	switch {
	case !ok || r == nil:
		return "the consent answer is missing or is not an elicitation result; nothing was dispatched", "malformed"
	case r.Action == "decline":
		return "the user declined; nothing was dispatched", "declined"
	case r.Action == "cancel":
		return "the user dismissed the consent request; nothing was dispatched", "canceled"
	case r.Action != "accept":
		return fmt.Sprintf("the consent answer's action %q is not accept, decline or cancel; nothing was dispatched", r.Action), "malformed"
	}
	switch approve, ok := r.Content["approve"].(bool); {
	case !ok:
		return "the consent answer has no yes/no approve field; nothing was dispatched", "malformed"
	case !approve:
		return "the user answered no; nothing was dispatched", "declined"
	}
	return "", "accepted"
}

// settle stores a consent's final result, for replays.
func (s *Server) settle(ctx context.Context, id string, version int64, rec consentRecord, out any) error {
	data, err := json.Marshal(out)
	if err != nil {
		return err
	}
	rec.State, rec.Result = consentSettled, data
	return s.consents.transition(ctx, id, version, rec)
}

// stateCaller is who a requestState is bound to: the subject and the kind
// of credential, so that a state asked through one of a user's credentials
// does not count through a connector key of theirs, or the other way round.
func stateCaller(p agentgate.Principal) string {
	return p.Scope + ":" + p.Agent + ":" + p.Subject
}

func outcome(handed bool) string {
	if handed {
		return "dispatched"
	}
	return "refused"
}
