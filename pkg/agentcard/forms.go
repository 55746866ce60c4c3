package agentcard

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"
	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"github.com/a2aproject/a2a-go/v2/a2apb/v1/pbconv"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
)

// VersionHeader is the request header in which an A2A client names the
// protocol version it speaks (A2A v1.0, "Service parameters").
const VersionHeader = "A2A-Version"

// Form is one of the JSON forms a card is served in.
type Form int

const (
	// FormV03 is the form v0.3 clients read: the v1.0 card with the v0.3
	// fields added where those clients look for them (url,
	// preferredTransport, protocolVersion, additionalInterfaces, security,
	// and security schemes with their v0.3 "type"), as a2a-go's own v0.3
	// compatibility producer writes it. It is valid against the v0.3
	// schema, and every v1.0 field is there too, for a v1.0 client that
	// does not say its version; but the v1.0 schema, which allows no
	// unknown field, rejects it.
	FormV03 Form = iota
	// FormV1 is the A2A v1.0 card, ProtoJSON, valid against the strict
	// v1.0 schema.
	FormV1
)

// FormFor picks the card form for a request's A2A-Version header. A
// client that names version 1.0 or later gets the v1.0 card. One that
// names none is taken for a v0.3 client, as the A2A v1.0 specification
// tells servers to take a request without the header: @a2a-js/sdk 0.3 and
// the ADK built on it send none, while @a2a-js/sdk 1.x and
// agentcard.Resolve send "1.0".
func FormFor(version string) Form {
	major, _, _ := strings.Cut(strings.TrimSpace(version), ".")
	if n, err := strconv.Atoi(major); err == nil && n >= 1 {
		return FormV1
	}
	return FormV03
}

// MarshalForm returns c, as Build made it, in form f: compact JSON, the
// same bytes for the same card (its ETag depends on them).
func MarshalForm(c *a2apb.AgentCard, f Form) ([]byte, error) {
	if f == FormV1 {
		return Marshal(c)
	}
	card, err := pbconv.FromProtoAgentCard(c)
	if err != nil {
		return nil, fmt.Errorf("converting agent card: %w", err)
	}
	// a2av0's producer writes the union form from a2a-go's card type; it
	// is a2asrv.AgentCardJSONProducer by construction.
	producer := a2av0.NewStaticAgentCardProducer(card).(a2asrv.AgentCardJSONProducer)
	indented, err := producer.CardJSON(context.Background())
	if err != nil {
		return nil, fmt.Errorf("marshaling the v0.3 agent card: %w", err)
	}
	// a2a-go's card type leaves false capabilities out, and a v0.3 client
	// reads a missing one as "maybe": the ADK streams unless streaming is
	// false. The capabilities are written as the v1.0 card has them, every
	// one said.
	// The card is decoded whole (numbers kept as written), so that the
	// encoder below writes every string anew, unescaped.
	var fields map[string]any
	dec := json.NewDecoder(bytes.NewReader(indented))
	dec.UseNumber()
	if err := dec.Decode(&fields); err != nil {
		return nil, fmt.Errorf("reading the v0.3 agent card: %w", err)
	}
	caps := c.GetCapabilities()
	fields["capabilities"] = map[string]bool{
		"streaming": caps.GetStreaming(), "pushNotifications": caps.GetPushNotifications(), "extendedAgentCard": caps.GetExtendedAgentCard(),
	}
	// Sorted keys, compact: the same bytes every time; "<token>" as it
	// is, not escaped for HTML.
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(fields); err != nil {
		return nil, fmt.Errorf("marshaling the v0.3 agent card: %w", err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
