package agentcard

import (
	"encoding/base64"
	"errors"
	"fmt"
	"maps"

	a2av03 "github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/agentgate/agentgate/pkg/agentgate"
)

// Conversions between A2A v0.3's protocol objects (a2a-go's a2a package,
// module v0.3) and v1.0's (a2a-go/v2's a2a), for the v0.3 front door: a
// v0.3 request is converted to v1.0 for the one handler, and its answer
// back to v0.3.

// dataPartWrapped marks, in a v0.3 data part's metadata, a v1.0 data part
// whose value is not an object: v0.3 allows only objects, so the value is
// carried as {"value": v}. It is a2a-go's convention (its v0.3 binding and
// clients wrap and unwrap so), followed here both ways.
const dataPartWrapped = "data_part_compat"

// v03States maps v1.0's task states to v0.3's names; v0.3's "unknown" has
// no v1.0 state and reads as unspecified.
var v03States = map[a2a.TaskState]a2av03.TaskState{
	a2a.TaskStateSubmitted:     a2av03.TaskStateSubmitted,
	a2a.TaskStateWorking:       a2av03.TaskStateWorking,
	a2a.TaskStateInputRequired: a2av03.TaskStateInputRequired,
	a2a.TaskStateAuthRequired:  a2av03.TaskStateAuthRequired,
	a2a.TaskStateCompleted:     a2av03.TaskStateCompleted,
	a2a.TaskStateCanceled:      a2av03.TaskStateCanceled,
	a2a.TaskStateFailed:        a2av03.TaskStateFailed,
	a2a.TaskStateRejected:      a2av03.TaskStateRejected,
}

// stateToV03 is s's v0.3 name; unspecified is "unknown", v0.3's state for
// a task whose state cannot be told.
func stateToV03(s a2a.TaskState) a2av03.TaskState {
	if v, ok := v03States[s]; ok {
		return v
	}
	return a2av03.TaskStateUnknown
}

// v03Roles maps v1.0's message roles to v0.3's, and v1Roles back; any
// other role is unspecified ("", the zero value), in either generation.
var (
	v03Roles = map[a2a.MessageRole]a2av03.MessageRole{
		a2a.MessageRoleUser:  a2av03.MessageRoleUser,
		a2a.MessageRoleAgent: a2av03.MessageRoleAgent,
	}
	v1Roles = map[a2av03.MessageRole]a2a.MessageRole{
		a2av03.MessageRoleUser:  a2a.MessageRoleUser,
		a2av03.MessageRoleAgent: a2a.MessageRoleAgent,
	}
)

// messageFromV03 converts a v0.3 message to v1.0. Its only error is a part
// it cannot convert (see partFromV03).
func messageFromV03(m *a2av03.Message) (*a2a.Message, error) {
	if m == nil {
		return nil, nil
	}
	out := &a2a.Message{
		ID: m.ID, ContextID: m.ContextID, TaskID: a2a.TaskID(m.TaskID), Role: v1Roles[m.Role],
		Extensions: m.Extensions, Metadata: m.Metadata,
	}
	for _, id := range m.ReferenceTasks {
		out.ReferenceTasks = append(out.ReferenceTasks, a2a.TaskID(id))
	}
	for i, p := range m.Parts {
		cp, err := partFromV03(p)
		if err != nil {
			return nil, fmt.Errorf("parts[%d]: %w", i, err)
		}
		out.Parts = append(out.Parts, cp)
	}
	return out, nil
}

func messageToV03(m *a2a.Message) *a2av03.Message {
	if m == nil {
		return nil
	}
	out := &a2av03.Message{
		ID: m.ID, ContextID: m.ContextID, TaskID: a2av03.TaskID(m.TaskID), Role: v03Roles[m.Role],
		Extensions: m.Extensions, Metadata: m.Metadata, Parts: partsToV03(m.Parts),
	}
	for _, id := range m.ReferenceTasks {
		out.ReferenceTasks = append(out.ReferenceTasks, a2av03.TaskID(id))
	}
	return out
}

// partFromV03 converts a v0.3 part (text, file or data) to v1.0. A file's
// bytes must be base64, as v0.3 says.
func partFromV03(p a2av03.Part) (*a2a.Part, error) {
	switch p := p.(type) {
	case a2av03.TextPart:
		return &a2a.Part{Content: a2a.Text(p.Text), Metadata: p.Metadata}, nil
	case a2av03.DataPart:
		var value any = p.Data
		meta := p.Metadata
		if wrapped, _ := meta[dataPartWrapped].(bool); wrapped {
			value = p.Data["value"]
			meta = maps.Clone(meta)
			delete(meta, dataPartWrapped)
			if len(meta) == 0 {
				meta = nil
			}
		}
		return &a2a.Part{Content: a2a.Data{Value: value}, Metadata: meta}, nil
	case a2av03.FilePart:
		switch f := p.File.(type) {
		case a2av03.FileBytes:
			raw, err := base64.StdEncoding.DecodeString(f.Bytes)
			if err != nil {
				return nil, agentgate.Errorf(agentgate.EINVALID, "file.bytes: not base64: %v", err)
			}
			return &a2a.Part{Content: a2a.Raw(raw), MediaType: f.MimeType, Filename: f.Name, Metadata: p.Metadata}, nil
		case a2av03.FileURI:
			return &a2a.Part{Content: a2a.URL(f.URI), MediaType: f.MimeType, Filename: f.Name, Metadata: p.Metadata}, nil
		}
		return nil, agentgate.Errorf(agentgate.EINVALID, "file: neither bytes nor uri")
	}
	return nil, agentgate.Errorf(agentgate.EINVALID, "unknown part kind %T", p)
}

func partsToV03(parts a2a.ContentParts) a2av03.ContentParts {
	var out a2av03.ContentParts
	for _, p := range parts {
		out = append(out, partToV03(p))
	}
	return out
}

// partToV03 converts a v1.0 part to v0.3: raw bytes and URLs are file
// parts, a value that is not an object is wrapped (dataPartWrapped). A
// text or data part's media type and filename have no place in v0.3.
func partToV03(p *a2a.Part) a2av03.Part {
	meta := func(f a2av03.FileMeta) a2av03.FileMeta { f.MimeType, f.Name = p.MediaType, p.Filename; return f }
	switch c := p.Content.(type) {
	case a2a.Text:
		return a2av03.TextPart{Text: string(c), Metadata: p.Metadata}
	case a2a.Raw:
		return a2av03.FilePart{File: a2av03.FileBytes{FileMeta: meta(a2av03.FileMeta{}), Bytes: base64.StdEncoding.EncodeToString(c)}, Metadata: p.Metadata}
	case a2a.URL:
		return a2av03.FilePart{File: a2av03.FileURI{FileMeta: meta(a2av03.FileMeta{}), URI: string(c)}, Metadata: p.Metadata}
	case a2a.Data:
		if obj, ok := c.Value.(map[string]any); ok {
			return a2av03.DataPart{Data: obj, Metadata: p.Metadata}
		}
		m := maps.Clone(p.Metadata)
		if m == nil {
			m = map[string]any{}
		}
		m[dataPartWrapped] = true
		return a2av03.DataPart{Data: map[string]any{"value": c.Value}, Metadata: m}
	}
	// A part without content: nothing to carry but its metadata.
	return a2av03.TextPart{Metadata: p.Metadata}
}

func artifactToV03(a *a2a.Artifact) *a2av03.Artifact {
	return &a2av03.Artifact{
		ID: a2av03.ArtifactID(a.ID), Name: a.Name, Description: a.Description,
		Extensions: a.Extensions, Metadata: a.Metadata, Parts: partsToV03(a.Parts),
	}
}

func taskToV03(t *a2a.Task) *a2av03.Task {
	if t == nil {
		return nil
	}
	out := &a2av03.Task{
		ID: a2av03.TaskID(t.ID), ContextID: t.ContextID, Metadata: t.Metadata,
		Status: a2av03.TaskStatus{State: stateToV03(t.Status.State), Message: messageToV03(t.Status.Message), Timestamp: t.Status.Timestamp},
	}
	for _, a := range t.Artifacts {
		if a != nil {
			out.Artifacts = append(out.Artifacts, artifactToV03(a))
		}
	}
	for _, m := range t.History {
		if m != nil {
			out.History = append(out.History, messageToV03(m))
		}
	}
	return out
}

// sendFromV03 converts v0.3 message/send params to v1.0's SendMessage
// request. v0.3's blocking, false, is v1.0's returnImmediately; left out,
// it is v0.3's default, blocking, as v1.0's is.
func sendFromV03(p *a2av03.MessageSendParams) (*a2a.SendMessageRequest, error) {
	msg, err := messageFromV03(p.Message)
	if err != nil {
		return nil, fmt.Errorf("message.%w", err)
	}
	req := &a2a.SendMessageRequest{Message: msg, Metadata: p.Metadata}
	if c := p.Config; c != nil {
		req.Config = &a2a.SendMessageConfig{
			AcceptedOutputModes: c.AcceptedOutputModes,
			HistoryLength:       c.HistoryLength,
			ReturnImmediately:   c.Blocking != nil && !*c.Blocking,
		}
		if pc := c.PushConfig; pc != nil {
			req.Config.PushConfig = &a2a.PushConfig{ID: pc.ID, URL: pc.URL, Token: pc.Token}
			if msg != nil {
				req.Config.PushConfig.TaskID = msg.TaskID
			}
			if auth := pc.Auth; auth != nil {
				req.Config.PushConfig.Auth = &a2a.PushAuthInfo{Credentials: auth.Credentials}
				if len(auth.Schemes) > 0 {
					req.Config.PushConfig.Auth.Scheme = auth.Schemes[0]
				}
			}
		}
	}
	return req, nil
}

// resultToV03 converts SendMessage's answer, a task or a message, to v0.3.
func resultToV03(r a2a.SendMessageResult) (a2av03.SendMessageResult, error) {
	switch r := r.(type) {
	case *a2a.Task:
		if r != nil {
			return taskToV03(r), nil
		}
	case *a2a.Message:
		if r != nil {
			return messageToV03(r), nil
		}
	}
	return nil, a2av03.NewError(a2av03.ErrInvalidAgentResponse, "the agent answered with neither a task nor a message")
}

// v03Errors maps v1.0's A2A errors to v0.3's, which carry the same codes.
// v1.0's extension-required (-32008) and version-not-supported (-32009)
// have no v0.3 error; the front door answers the latter before the binding.
var v03Errors = []struct{ v1, v03 error }{
	{a2a.ErrParseError, a2av03.ErrParseError},
	{a2a.ErrInvalidRequest, a2av03.ErrInvalidRequest},
	{a2a.ErrMethodNotFound, a2av03.ErrMethodNotFound},
	{a2a.ErrInvalidParams, a2av03.ErrInvalidParams},
	{a2a.ErrInternalError, a2av03.ErrInternalError},
	{a2a.ErrServerError, a2av03.ErrServerError},
	{a2a.ErrTaskNotFound, a2av03.ErrTaskNotFound},
	{a2a.ErrTaskNotCancelable, a2av03.ErrTaskNotCancelable},
	{a2a.ErrPushNotificationNotSupported, a2av03.ErrPushNotificationNotSupported},
	{a2a.ErrUnsupportedOperation, a2av03.ErrUnsupportedOperation},
	{a2a.ErrUnsupportedContentType, a2av03.ErrUnsupportedContentType},
	{a2a.ErrInvalidAgentResponse, a2av03.ErrInvalidAgentResponse},
	{a2a.ErrExtendedCardNotConfigured, a2av03.ErrAuthenticatedExtendedCardNotConfigured},
	{a2a.ErrUnauthenticated, a2av03.ErrUnauthenticated},
	{a2a.ErrUnauthorized, a2av03.ErrUnauthorized},
}

// errToV03 converts the handler's error, a v1.0 A2A error, to the v0.3
// error with the same code and message, which v0.3's binding answers with.
// Any other error is an internal error; its message is kept, as v1.0's
// binding keeps it.
func errToV03(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	var a2aErr *a2a.Error
	if errors.As(err, &a2aErr) {
		msg = a2aErr.Error()
	}
	for _, e := range v03Errors {
		if errors.Is(err, e.v1) {
			return a2av03.NewError(e.v03, msg)
		}
	}
	return a2av03.NewError(a2av03.ErrInternalError, msg)
}
