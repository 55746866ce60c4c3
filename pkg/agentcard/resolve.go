package agentcard

import (
	"context"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// MaxCardSize bounds the card Resolve reads. Our own cards are a few KB;
// a megabyte is room for any honest card and a cap on a hostile one.
const MaxCardSize = 1 << 20

// StatusError is Resolve's error for a card request answered with another
// status than 200, so that a caller (a status check) can tell a missing
// card from an unavailable one.
type StatusError struct {
	URL        string
	StatusCode int
	Status     string
	// Body is the start of the response body, for the error message.
	Body string
}

func (e *StatusError) Error() string {
	msg := fmt.Sprintf("agent card %s: %s", e.URL, e.Status)
	if e.Body != "" {
		msg += ": " + e.Body
	}
	return msg
}

// Resolve fetches the A2A v1.0 card at cardURL, sending header with the
// request (credentials, for the authenticated card), and returns it as
// a2a-go's card, ready for a2aclient.NewFromCard. client nil means
// http.DefaultClient; ctx bounds the request.
//
// It exists because a2a-go v2.3.1's own resolver cannot read a spec-correct
// card: its default parser (encoding/json into a2a.AgentCard) rejects the
// spec's securityRequirements shape, {"schemes":{"x":{"list":[]}}}. Resolve
// reads the card with Parse, which reads that shape (specScopes).
func Resolve(ctx context.Context, client *http.Client, cardURL string, header http.Header) (*a2a.AgentCard, error) {
	if client == nil {
		client = http.DefaultClient
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, cardURL, nil)
	if err != nil {
		return nil, fmt.Errorf("agent card %s: %w", cardURL, err)
	}
	if header != nil {
		req.Header = header.Clone()
	}
	if req.Header.Get("Accept") == "" {
		req.Header.Set("Accept", "application/json")
	}
	if req.Header.Get(VersionHeader) == "" {
		req.Header.Set(VersionHeader, ProtocolVersion) // the v1.0 card, not the v0.3 form
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("agent card: %w", err) // the *url.Error names the URL
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		start, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return nil, &StatusError{URL: cardURL, StatusCode: resp.StatusCode, Status: resp.Status,
			Body: strings.TrimSpace(string(start))}
	}
	ct := resp.Header.Get("Content-Type")
	if mt, _, err := mime.ParseMediaType(ct); err != nil || (mt != "application/json" && !strings.HasSuffix(mt, "+json")) {
		return nil, fmt.Errorf("agent card %s: Content-Type %q, want application/json", cardURL, ct)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxCardSize+1))
	if err != nil {
		return nil, fmt.Errorf("agent card %s: reading: %w", cardURL, err)
	}
	if len(body) > MaxCardSize {
		return nil, fmt.Errorf("agent card %s: larger than %d bytes", cardURL, MaxCardSize)
	}
	card, err := Parse(body)
	if err != nil {
		return nil, fmt.Errorf("agent card %s: %w", cardURL, err)
	}
	return card, nil
}

// Parse reads an A2A card: the v1.0 card in its JSON (the spec's) form,
// or, when that fails, the v0.3 form (FormV03, or any v0.3 card), read as
// v0.3 and converted. Unknown fields are ignored, as a card from a newer
// minor version may have some; a v1.0 card without the fields the spec
// requires is an error. Parse has the signature of a2a-go's
// agentcard.Parser, so it can also serve as the CardParser of a2a-go's own
// agentcard.Resolver, which asks for the card without naming a version
// and so gets FormV03.
func Parse(data []byte) (*a2a.AgentCard, error) {
	card, err := parseV1(data)
	if err != nil {
		card, errV03 := parseV03(data)
		if errV03 != nil {
			return nil, fmt.Errorf("parsing agent card: %w", err)
		}
		return card, nil
	}
	if err := checkRequired(card); err != nil {
		return nil, fmt.Errorf("invalid agent card: %w", err)
	}
	return card, nil
}

// checkRequired fails unless c has the fields the v1.0 spec requires.
func checkRequired(c *a2a.AgentCard) error {
	for _, f := range []struct {
		name    string
		missing bool
	}{
		{"name", c.Name == ""},
		{"description", c.Description == ""},
		{"supported interfaces", len(c.SupportedInterfaces) == 0},
		{"version", c.Version == ""},
		{"default input modes", len(c.DefaultInputModes) == 0},
		{"default output modes", len(c.DefaultOutputModes) == 0},
		{"skills", len(c.Skills) == 0},
	} {
		if f.missing {
			return fmt.Errorf("%s: required", f.name)
		}
	}
	for i, in := range c.SupportedInterfaces {
		if in == nil || in.URL == "" || in.ProtocolBinding == "" {
			return fmt.Errorf("supported interfaces[%d]: url and protocolBinding required", i)
		}
	}
	return nil
}
