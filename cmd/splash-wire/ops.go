package main

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/splashv5/conform/impl/bootstrap"
	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/ledger"
	"github.com/splashv5/conform/impl/protocol"
	"github.com/splashv5/conform/vectors/replay"
)

// command is one input line. Only the fields of its operation are used; unknown fields are
// rejected so that a misspelled field cannot be silently ignored.
type command struct {
	ID            json.RawMessage `json:"id,omitempty"`
	Op            string          `json:"op"`
	Mode          string          `json:"mode,omitempty"`
	KeyHex        string          `json:"key_hex,omitempty"`
	SessionID     *string         `json:"session_id,omitempty"`
	Role          string          `json:"role,omitempty"`
	StartSequence *uint64         `json:"start_sequence,omitempty"`
	Messages      []document      `json:"messages,omitempty"`
	Received      []string        `json:"received,omitempty"`
	Lines         []string        `json:"lines,omitempty"`
	LinesHex      []string        `json:"lines_hex,omitempty"`
	Line          *string         `json:"line,omitempty"`
	Input         *document       `json:"input,omitempty"`
	Payload       *document       `json:"payload,omitempty"`
	Grant         *document       `json:"grant,omitempty"`
	Manifest      *document       `json:"manifest,omitempty"`
	Attenuation   *document       `json:"attenuation,omitempty"`
	Hex           *string         `json:"hex,omitempty"`
	InputHex      *string         `json:"input_hex,omitempty"`
	NonceHex      *string         `json:"nonce_hex,omitempty"`
	PlanFP        *string         `json:"plan_fingerprint,omitempty"`
	PlanSteps     []string        `json:"plan_steps,omitempty"`
	StepID        *string         `json:"step_id,omitempty"`
	Tool          *string         `json:"tool,omitempty"`
}

// document is a JSON text given either as a JSON string holding the exact text, or inline
// (then its bytes are used exactly as they appear in the command).
type document []byte

// UnmarshalJSON implements both spellings.
func (d *document) UnmarshalJSON(data []byte) error {
	if len(data) > 0 && data[0] == '"' {
		var s string
		if err := json.Unmarshal(data, &s); err != nil {
			return err
		}
		*d = []byte(s)
		return nil
	}
	*d = append([]byte(nil), data...)
	return nil
}

// errorBody is the error object of a result.
type errorBody struct {
	Kind string `json:"kind"`
	// Wrapped names the cause inside a bootstrap "Protocol" or "Io" error.
	Wrapped string `json:"wrapped,omitempty"`
	Message string `json:"message"`
}

type errorOnly struct {
	ID    json.RawMessage `json:"id,omitempty"`
	Error errorBody       `json:"error"`
}

func errorResult(id json.RawMessage, kind, message string) errorOnly {
	return errorOnly{ID: id, Error: errorBody{Kind: kind, Message: message}}
}

// errorOf converts an implementation error. Implementation errors never contain key bytes.
func errorOf(err error) *errorBody {
	return &errorBody{Kind: replay.ErrorKindName(err), Wrapped: replay.WrappedKindName(err), Message: err.Error()}
}

// fail is an error raised by the oracle itself (bad command), with a fixed message.
type fail struct{ kind, message string }

func (f fail) Error() string { return f.message }

func badCommand(format string, args ...any) error {
	return fail{"BadCommand", fmt.Sprintf(format, args...)}
}

// execute runs one command line and returns its result object.
func execute(line []byte, cfg config) any {
	var c command
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil || dec.More() {
		return errorResult(nil, "BadCommand", "the line is not one JSON command object with known fields")
	}
	mode := cfg.mode
	if c.Mode != "" {
		m, err := canonjson.ParseMode(c.Mode)
		if err != nil {
			return errorResult(c.ID, "BadCommand", "mode must be preserve or lossy")
		}
		mode = m
	}
	op, ok := operations[c.Op]
	if !ok {
		return errorResult(c.ID, "BadCommand", fmt.Sprintf("unknown op %q", c.Op))
	}
	res, err := op(&c, mode, cfg)
	if err != nil {
		if f, ok := err.(fail); ok {
			return errorResult(c.ID, f.kind, f.message)
		}
		return errorOnly{ID: c.ID, Error: *errorOf(err)}
	}
	res["id"] = c.ID
	if c.ID == nil {
		delete(res, "id")
	}
	return res
}

type result = map[string]any

var operations map[string]func(*command, canonjson.Mode, config) (result, error)

func init() {
	operations = map[string]func(*command, canonjson.Mode, config) (result, error){
		"seal":               opSeal,
		"open":               opOpen,
		"decode":             opDecode,
		"decode_message":     opDecodeMessage,
		"canonical_json":     opCanonicalJSON,
		"number_class":       opNumberClass,
		"canonical_input":    opCanonicalInput,
		"grant_fingerprint":  opGrantFingerprint,
		"bootstrap_write":    opBootstrapWrite,
		"bootstrap_read":     opBootstrapRead,
		"manifest_validate":  opManifestValidate,
		"manifest_attenuate": opManifestAttenuate,
		"grant_attenuate":    opGrantAttenuate,
		// The host's durable ledger (RUN-181).
		"ledger_input_fingerprint": opLedgerInputFingerprint,
		"ledger_operation_key":     opLedgerOperationKey,
	}
}

func need[T any](p *T, field string) (T, error) {
	if p == nil {
		var zero T
		return zero, badCommand("missing field %q", field)
	}
	return *p, nil
}

// sessionKey decodes key_hex; its error never repeats the input.
func sessionKey(keyHex string) (*protocol.SessionKey, error) {
	raw, err := hex.DecodeString(keyHex)
	if err != nil {
		return nil, badCommand("key_hex must be lowercase or uppercase hex digits")
	}
	defer clear(raw)
	return protocol.NewSessionKey(raw)
}

func authenticator(c *command, mode canonjson.Mode, cfg config) (*protocol.Authenticator, protocol.Role, error) {
	sid, err := need(c.SessionID, "session_id")
	if err != nil {
		return nil, 0, err
	}
	role, ok := protocol.ParseRole(c.Role)
	if !ok {
		return nil, 0, badCommand("role must be host or worker")
	}
	key, err := sessionKey(c.KeyHex)
	if err != nil {
		return nil, 0, err
	}
	defer key.Close()
	var opts []protocol.AuthenticatorOption
	if cfg.allowNonPortable {
		opts = append(opts, protocol.AllowNonPortableNumbers())
	}
	if c.StartSequence != nil {
		if *c.StartSequence == 0 {
			return nil, 0, badCommand("start_sequence must be at least 1")
		}
		opts = append(opts, protocol.WithSequences(*c.StartSequence, *c.StartSequence))
	}
	a, err := protocol.NewAuthenticator(sid, key, role, mode, opts...)
	return a, role, err
}

func opSeal(c *command, mode canonjson.Mode, cfg config) (result, error) {
	a, role, err := authenticator(c, mode, cfg)
	if err != nil {
		return nil, err
	}
	defer a.Close()
	for i, line := range c.Received {
		if _, err := a.Open([]byte(line)); err != nil {
			return nil, fail{errorOf(err).Kind, fmt.Sprintf("received[%d] does not open: %v", i, err)}
		}
	}
	results := []any{}
	for _, raw := range c.Messages {
		m, err := protocol.DecodeMessage(raw, mode)
		if err != nil {
			results = append(results, result{"error": errorOf(err)})
			continue
		}
		f, line, err := a.Seal(m)
		if err != nil {
			results = append(results, result{"error": errorOf(err)})
			continue
		}
		results = append(results, result{
			"sequence":     f.Sequence,
			"auth_payload": string(protocol.TagInput(a.SessionID(), role, f.Sequence, f.Message)),
			"tag":          hex.EncodeToString(f.Tag[:]),
			"line":         string(line),
		})
	}
	return result{"results": results}, nil
}

func opOpen(c *command, mode canonjson.Mode, cfg config) (result, error) {
	var lines [][]byte
	switch {
	case c.Lines != nil && c.LinesHex != nil:
		return nil, badCommand("give lines or lines_hex, not both")
	case c.LinesHex != nil:
		for i, h := range c.LinesHex {
			b, err := hex.DecodeString(h)
			if err != nil {
				return nil, badCommand("lines_hex[%d] is not hex", i)
			}
			lines = append(lines, b)
		}
	default:
		for _, l := range c.Lines {
			lines = append(lines, []byte(l))
		}
	}
	a, _, err := authenticator(c, mode, cfg)
	if err != nil {
		return nil, err
	}
	defer a.Close()
	results := []any{}
	for _, l := range lines {
		f, err := a.Open(l)
		if err != nil {
			results = append(results, result{"error": errorOf(err)})
			continue
		}
		results = append(results, messageResult(f.Sequence, f.Message))
	}
	return result{"results": results}, nil
}

func messageResult(seq uint64, m protocol.Message) result {
	r := result{"message": string(m.AppendJSON(nil)), "message_type": string(m.Type()), "session_id": m.SessionID()}
	if seq != 0 {
		r["sequence"] = seq
	}
	return r
}

func opDecode(c *command, mode canonjson.Mode, _ config) (result, error) {
	line, err := need(c.Line, "line")
	if err != nil {
		return nil, err
	}
	f, err := protocol.DecodeFrame([]byte(line), mode)
	if err != nil {
		return nil, err
	}
	r := messageResult(f.Sequence, f.Message)
	r["auth_tag"] = hex.EncodeToString(f.Tag[:])
	return r, nil
}

func opDecodeMessage(c *command, mode canonjson.Mode, _ config) (result, error) {
	in, err := need(c.Input, "input")
	if err != nil {
		return nil, err
	}
	m, err := protocol.DecodeMessage(in, mode)
	if err != nil {
		return nil, err
	}
	return messageResult(0, m), nil
}

func opCanonicalJSON(c *command, mode canonjson.Mode, _ config) (result, error) {
	in, err := need(c.Input, "input")
	if err != nil {
		return nil, err
	}
	v, err := canonjson.ParseValue(in, mode)
	if err != nil {
		return nil, err
	}
	return result{"output": string(v.JSON())}, nil
}

// opNumberClass classifies one JSON number token for sending and for proof: its Preserve and
// Lossy re-serializations, whether the token as given is portable (ENC-034) and whether its
// Preserve form is Preserve-only, so that receiving it proves a text-keeping peer (ENC-053).
func opNumberClass(c *command, _ canonjson.Mode, _ config) (result, error) {
	in, err := need(c.Input, "input")
	if err != nil {
		return nil, err
	}
	v, err := canonjson.ParseValue(in, canonjson.Preserve)
	if err != nil {
		return nil, err
	}
	if v.Kind() != canonjson.KindNumber {
		return nil, badCommand("input is not a JSON number")
	}
	token := string(v.JSON())
	r := result{
		"preserve":      token,
		"portable":      canonjson.PortableNumber(string(bytes.TrimSpace(in))),
		"preserve_only": canonjson.PreserveOnlyNumber(token),
	}
	if l, err := canonjson.ParseValue(in, canonjson.Lossy); err == nil {
		r["lossy"] = string(l.JSON())
	} else {
		r["lossy_error"] = errorOf(err)
	}
	return r, nil
}

func opCanonicalInput(c *command, mode canonjson.Mode, _ config) (result, error) {
	in, err := need(c.Payload, "payload")
	if err != nil {
		return nil, err
	}
	p, err := protocol.DecodeToolPayload(in, mode)
	if err != nil {
		return nil, err
	}
	b, err := protocol.CanonicalOperationInputBytes(p)
	if err != nil {
		return nil, err
	}
	fp, err := protocol.OperationInputFingerprint(p)
	if err != nil {
		return nil, err
	}
	return result{"canonical_hex": hex.EncodeToString(b), "fingerprint": fp}, nil
}

func opGrantFingerprint(c *command, _ canonjson.Mode, _ config) (result, error) {
	in, err := need(c.Grant, "grant")
	if err != nil {
		return nil, err
	}
	g, err := protocol.DecodeCapabilityGrant(in)
	if err != nil {
		return nil, err
	}
	fp, err := g.CompensationFingerprint()
	if err != nil {
		return nil, err
	}
	return result{"fingerprint": fp, "grant": string(g.AppendJSON(nil))}, nil
}

func opBootstrapWrite(c *command, _ canonjson.Mode, _ config) (result, error) {
	sid, err := need(c.SessionID, "session_id")
	if err != nil {
		return nil, err
	}
	key, err := sessionKey(c.KeyHex)
	if err != nil {
		return nil, err
	}
	defer key.Close()
	var buf bytes.Buffer
	if err := bootstrap.Write(&buf, sid, key); err != nil {
		return nil, err
	}
	return result{"hex": hex.EncodeToString(buf.Bytes())}, nil
}

func opBootstrapRead(c *command, _ canonjson.Mode, _ config) (result, error) {
	h, err := need(c.Hex, "hex")
	if err != nil {
		return nil, err
	}
	raw, err := hex.DecodeString(h)
	if err != nil {
		return nil, badCommand("hex is not hex")
	}
	r := bytes.NewReader(raw)
	bs, err := bootstrap.Read(r)
	if err != nil {
		return nil, err
	}
	bs.Key.Close()
	return result{"session_id": bs.SessionID, "consumed": len(raw) - r.Len()}, nil
}

func opManifestValidate(c *command, _ canonjson.Mode, _ config) (result, error) {
	in, err := need(c.Manifest, "manifest")
	if err != nil {
		return nil, err
	}
	m, err := protocol.DecodeManifest(in)
	if err != nil {
		return nil, err
	}
	if err := m.Validate(); err != nil {
		return nil, err
	}
	return result{"manifest": string(m.AppendJSON(nil))}, nil
}

func opManifestAttenuate(c *command, _ canonjson.Mode, _ config) (result, error) {
	in, err := need(c.Manifest, "manifest")
	if err != nil {
		return nil, err
	}
	at, err := need(c.Attenuation, "attenuation")
	if err != nil {
		return nil, err
	}
	m, err := protocol.DecodeManifest(in)
	if err != nil {
		return nil, err
	}
	a, err := protocol.DecodeManifestAttenuation(at)
	if err != nil {
		return nil, err
	}
	r, err := m.Attenuate(a)
	if err != nil {
		return nil, err
	}
	return result{"manifest": string(r.AppendJSON(nil))}, nil
}

func opGrantAttenuate(c *command, _ canonjson.Mode, _ config) (result, error) {
	in, err := need(c.Grant, "grant")
	if err != nil {
		return nil, err
	}
	at, err := need(c.Attenuation, "attenuation")
	if err != nil {
		return nil, err
	}
	g, err := protocol.DecodeCapabilityGrant(in)
	if err != nil {
		return nil, err
	}
	a, err := protocol.DecodeGrantAttenuation(at)
	if err != nil {
		return nil, err
	}
	r, err := g.Attenuate(a)
	if err != nil {
		return nil, err
	}
	return result{"grant": string(r.AppendJSON(nil))}, nil
}

// hexField decodes a required hex field.
func hexField(p *string, field string) ([]byte, error) {
	h, err := need(p, field)
	if err != nil {
		return nil, err
	}
	b, err := hex.DecodeString(h)
	if err != nil {
		return nil, badCommand("%s must be hex digits", field)
	}
	return b, nil
}

func opLedgerInputFingerprint(c *command, _ canonjson.Mode, _ config) (result, error) {
	in, err := hexField(c.InputHex, "input_hex")
	if err != nil {
		return nil, err
	}
	return result{"fingerprint": ledger.InputFingerprint(in)}, nil
}

func opLedgerOperationKey(c *command, _ canonjson.Mode, _ config) (result, error) {
	in, err := hexField(c.InputHex, "input_hex")
	if err != nil {
		return nil, err
	}
	nonce, err := hexField(c.NonceHex, "nonce_hex")
	if err != nil {
		return nil, err
	}
	fp, err := need(c.PlanFP, "plan_fingerprint")
	if err != nil {
		return nil, err
	}
	step, err := need(c.StepID, "step_id")
	if err != nil {
		return nil, err
	}
	tool, err := need(c.Tool, "tool")
	if err != nil {
		return nil, err
	}
	key, err := ledger.Plan{Fingerprint: fp, Steps: c.PlanSteps}.OperationKey(step, tool, in, nonce)
	if err != nil {
		return nil, err
	}
	return result{"operation_key": key, "input_fingerprint": ledger.InputFingerprint(in)}, nil
}
