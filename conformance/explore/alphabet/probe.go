package alphabet

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/splashv5/conform/impl/bootstrap"
	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/protocol"
)

// Probe symbols reach what the learned alphabet leaves out: other tools of the conformance
// adapter profile, inputs at and over every limit, numbers, secrets, repeated dispatches and
// compensations in the journal's own scope, bad bootstraps, replayed sessions and frames a
// sealer refuses to make. They are never learned (learning stays over Symbols); random sessions
// mix them with the alphabet's symbols and judge each session against the reference worker
// run the same way (spec 32.4, EXP-019).

// More needs a probe may require. NeedTypedJSON and NeedSecret are declared like the others;
// NeedEffects and NeedSecretSource follow from the worker command's placeholders.
const (
	NeedTypedJSON    Need = "typed-json"
	NeedSecret       Need = "secret"
	NeedEffects      Need = "effects"
	NeedSecretSource Need = "secret-source"
	// NeedEffectFence: the durable tool shows the session's fencing token to the effect log and
	// takes wait_ms (PRF-034, PRF-035).
	NeedEffectFence Need = "effect-fence"
)

// The probe symbols.
const (
	// Openings: the first frame of a process, each with its own manifest.
	OpenProbe           Name = "open_probe"             // baseline grants plus the other profile tools
	OpenProbeCancel     Name = "open_probe_cancel"      // both slow tools
	OpenSmallOutput     Name = "open_small_output"      // the durable grant with max_output_bytes 16
	OpenNoCompensation  Name = "open_no_compensation"   // the durable grant with max_compensations 0
	OpenSecretBare      Name = "open_secret_bare"       // the secret tool granted without selectors
	OpenSecretOtherKind Name = "open_secret_other_kind" // a file_root selector with the secret's id
	OpenSecretOtherID   Name = "open_secret_other_id"   // a secret selector with another id
	OpenSecretElsewhere Name = "open_secret_elsewhere"  // the selector granted to the echo only
	OpenVersion4        Name = "open_version_4"         // a manifest of protocol_version 4

	// Invocations.
	InvokeAtLimit     Name = "invoke_at_limit"         // an echo input exactly max_input_bytes long
	InvokeReflected   Name = "invoke_reflected_role"   // an invoke tagged with the worker as sender
	InvokeVersion4    Name = "invoke_version_4"        // an invoke of protocol_version 4, tagged
	InvokeJSON        Name = "invoke_json"             // the JSON echo with an object
	InvokeJSONOver    Name = "invoke_json_output_over" // a JSON echo whose output exceeds its grant
	InvokeJSONScalar  Name = "invoke_json_scalar"      // a JSON payload that is a number
	InvokeJSONDeep    Name = "invoke_json_deep"        // a JSON payload 33 levels deep
	InvokeUndeclared  Name = "invoke_undeclared"       // a tool that declares no invocation safety
	InvokeTyped       Name = "invoke_typed"            // conf.json.typed, a valid input
	InvokeTypedBad    Name = "invoke_typed_bad"        // conf.json.typed, members of the wrong type
	InvokeTypedZero   Name = "invoke_typed_zero"       // conf.json.typed, repeat 0 (no output)
	InvokeTypedBurst  Name = "invoke_typed_burst"      // three typed invokes under max_calls 2
	DispatchTyped     Name = "dispatch_typed"          // dispatch_operation for conf.json.typed
	InvokeSecret      Name = "invoke_secret"           // conf.secret.sign
	InvokeNumbers     Name = "invoke_numbers"          // a JSON echo of numbers only a text-keeping host writes
	InvokeLossyNumber Name = "invoke_lossy_number"     // a JSON echo of a number a lossy writer also writes
	InvokeSlowShort   Name = "invoke_slow_short"       // the cancellable slow tool for 1.5 s
	InvokeUncoopShort Name = "invoke_uncooperative"    // the uncooperative slow tool for 0.3 s
	LineOverCap       Name = "line_over_cap"           // 1 MiB and one byte without a line feed

	// Durable probes.
	DispatchAgain      Name = "dispatch_again"   // the last dispatch again, exactly
	DispatchNumbers    Name = "dispatch_numbers" // a dispatch whose value holds such numbers
	ReconcileBurst     Name = "reconcile_burst"  // 17 reconciliations of the last operation
	Compensate         Name = "compensate"       // a compensation of the last operation, new key
	CompensateAgain    Name = "compensate_again" // the last compensation again, exactly
	CompensateBadFP    Name = "compensate_bad_fingerprint"
	StoreFaultAfterOne Name = "store_fault_after_one" // the store fails every write but the next
	RestartSameSession Name = "restart_same_session"  // a fresh process admitted under the same session id
	RestartBadVersion  Name = "restart_bad_bootstrap" // a fresh process given a bootstrap of version 2
	RestartBadHeader   Name = "restart_bad_header"    // a fresh process given only a bad bootstrap header
	Pause              Name = "pause"                 // the host sends nothing for a while
	DispatchHeld       Name = "dispatch_held"         // a dispatch whose adapter waits 3 s
	Supersede          Name = "supersede"             // a newer worker on the journal opens and echoes
	SupersedeReconcile Name = "supersede_reconcile"   // a newer worker opens and reconciles the last operation
)

// Probe describes a probe symbol.
type Probe struct {
	// Name is the symbol.
	Name Name
	// Opening says that the probe is the first frame of a process.
	Opening bool
	// Ends says that the reference worker ends the process on it in the sessions it is drawn
	// in; it steers random sessions only, never a judgement.
	Ends bool
	// Terminal says that nothing may follow it: what it shows, the worker shows while its
	// input stays open.
	Terminal bool
	// Numbers says that its payload holds numbers only a text-keeping host writes: it is left
	// out of a port explored in the lossy number model.
	Numbers bool
	// Needs lists what the worker must declare.
	Needs []Need
	// Spec lists the requirement IDs the probe exercises.
	Spec []string
}

// Probes are the probe symbols.
var Probes = []Probe{
	{Name: OpenProbe, Opening: true, Spec: []string{"WRK-011", "AUZ-001"}},
	{Name: OpenProbeCancel, Opening: true, Needs: []Need{NeedCancel}, Spec: []string{"CAN-023"}},
	{Name: OpenSmallOutput, Opening: true, Needs: []Need{NeedDurable}, Spec: []string{"WRK-049"}},
	{Name: OpenNoCompensation, Opening: true, Needs: []Need{NeedDurable, NeedCompensation}, Spec: []string{"AUZ-013"}},
	{Name: OpenSecretBare, Opening: true, Needs: []Need{NeedSecret}, Spec: []string{"SEC-003"}},
	{Name: OpenSecretOtherKind, Opening: true, Needs: []Need{NeedSecret}, Spec: []string{"SEC-003"}},
	{Name: OpenSecretOtherID, Opening: true, Needs: []Need{NeedSecret}, Spec: []string{"SEC-003"}},
	{Name: OpenSecretElsewhere, Opening: true, Needs: []Need{NeedSecret}, Spec: []string{"SEC-008"}},
	{Name: OpenVersion4, Opening: true, Ends: true, Spec: []string{"MSG-001"}},

	{Name: InvokeAtLimit, Spec: []string{"AUZ-010"}},
	{Name: InvokeReflected, Ends: true, Spec: []string{"FRM-028"}},
	{Name: InvokeVersion4, Ends: true, Spec: []string{"MSG-001"}},
	{Name: InvokeJSON, Spec: []string{"PRF-004"}},
	{Name: InvokeJSONOver, Ends: true, Spec: []string{"AUZ-021"}},
	{Name: InvokeJSONScalar, Ends: true, Spec: []string{"MSG-035"}},
	{Name: InvokeJSONDeep, Ends: true, Spec: []string{"MSG-036"}},
	{Name: InvokeUndeclared, Ends: true, Spec: []string{"WRK-030"}},
	{Name: InvokeTyped, Needs: []Need{NeedTypedJSON}, Spec: []string{"WRK-005", "PRF-031"}},
	{Name: InvokeTypedBad, Ends: true, Needs: []Need{NeedTypedJSON}, Spec: []string{"WRK-005", "PRF-032"}},
	{Name: InvokeTypedZero, Ends: true, Needs: []Need{NeedTypedJSON}, Spec: []string{"WRK-005", "PRF-025"}},
	{Name: InvokeTypedBurst, Ends: true, Needs: []Need{NeedTypedJSON}, Spec: []string{"AUZ-008"}},
	{Name: DispatchTyped, Ends: true, Needs: []Need{NeedTypedJSON}, Spec: []string{"WRK-005"}},
	{Name: InvokeSecret, Needs: []Need{NeedSecret}, Spec: []string{"SEC-003", "SEC-007", "SEC-009", "SEC-010"}},
	{Name: InvokeNumbers, Numbers: true, Spec: []string{"ENC-053", "WRK-048"}},
	{Name: InvokeLossyNumber, Ends: true, Numbers: true, Spec: []string{"ENC-053", "WRK-048"}},
	{Name: InvokeSlowShort, Needs: []Need{NeedCancel}, Spec: []string{"CAN-006", "CAN-016"}},
	{Name: InvokeUncoopShort, Needs: []Need{NeedCancel}, Spec: []string{"CAN-015"}},
	{Name: LineOverCap, Ends: true, Terminal: true, Spec: []string{"FRM-032"}},

	{Name: DispatchAgain, Needs: []Need{NeedDurable}, Spec: []string{"WRK-041", "WRK-049"}},
	{Name: DispatchNumbers, Numbers: true, Needs: []Need{NeedDurable}, Spec: []string{"WRK-048", "ENC-054"}},
	{Name: ReconcileBurst, Ends: true, Needs: []Need{NeedDurable}, Spec: []string{"WRK-061"}},
	{Name: Compensate, Needs: []Need{NeedDurable, NeedCompensation}, Spec: []string{"WRK-050", "AUZ-013", "JRN-021"}},
	{Name: CompensateAgain, Needs: []Need{NeedDurable, NeedCompensation}, Spec: []string{"WRK-051"}},
	{Name: CompensateBadFP, Ends: true, Needs: []Need{NeedDurable, NeedCompensation}, Spec: []string{"AUZ-013"}},
	{Name: StoreFaultAfterOne, Needs: []Need{NeedDurable, NeedStoreFault}, Spec: []string{"WRK-042", "WRK-052", "WRK-071"}},
	{Name: RestartSameSession, Needs: []Need{NeedDurable}, Spec: []string{"WRK-094"}},
	{Name: RestartBadVersion, Ends: true, Spec: []string{"BOOT-002", "WRK-092"}},
	{Name: RestartBadHeader, Ends: true, Terminal: true, Spec: []string{"BOOT-006"}},
	{Name: Pause, Spec: []string{"CAN-015", "CAN-016"}},
	{Name: DispatchHeld, Needs: []Need{NeedDurable, NeedEffectFence}, Spec: []string{"PRF-034", "STO-073"}},
	{Name: Supersede, Needs: []Need{NeedDurable}, Spec: []string{"STO-071", "WRK-070", "WRK-083"}},
	{Name: SupersedeReconcile, Needs: []Need{NeedDurable, NeedEffectFence}, Spec: []string{"STO-072", "STO-073", "WRK-082"}},
}

// LookupProbe returns the probe named n.
func LookupProbe(n Name) (Probe, bool) {
	i := slices.IndexFunc(Probes, func(p Probe) bool { return p.Name == n })
	if i < 0 {
		return Probe{}, false
	}
	return Probes[i], true
}

// ProbesFor returns the probes a worker with the given needs admits, leaving out the number
// probes when numbers is false.
func ProbesFor(numbers bool, needs ...Need) []Probe {
	var out []Probe
	for _, p := range Probes {
		ok := numbers || !p.Numbers
		for _, n := range p.Needs {
			ok = ok && slices.Contains(needs, n)
		}
		if ok {
			out = append(out, p)
		}
	}
	return out
}

// Quiet reports whether the reference worker answers the accepted symbol n with nothing, so
// that its step ends after a quiet period rather than at an answer.
func Quiet(n Name) bool {
	switch n {
	case OpenBaseline, OpenCancellable, OpenAgain, InvokeSlow, StoreFault, Restart,
		InvokeSlowShort, InvokeUncoopShort, StoreFaultAfterOne, RestartSameSession, Pause, DispatchHeld:
		return true
	}
	p, ok := LookupProbe(n)
	return ok && p.Opening && !p.Ends
}

// Opening reports whether n opens a session in a fresh process.
func Opening(n Name) bool {
	if n == OpenBaseline || n == OpenCancellable || n == OpenAgain {
		return true
	}
	p, ok := LookupProbe(n)
	return ok && p.Opening
}

// Limits of the probe grants.
const (
	probeJSONOutput = 256 // the JSON echo's max_output_bytes: less than its input limit
	probeTypedCalls = 2   // conf.json.typed's max_calls
	smallOutput     = 16  // open_small_output's durable max_output_bytes
	slowShortMillis = "1500"
	uncoopMillis    = "300"
	reconcileBurst  = 17 // one more than the reference worker's per-tool reconciliation budget
	heldMillis      = 3000
	// HeldPause is how long a driver waits, after a newer worker acted, for the held adapter.
	HeldPause = 4 * time.Second
)

// The tools of the profile the probes use.
const (
	toolJSONEcho      = "conf.json.echo"
	toolUndeclared    = "conf.text.undeclared"
	toolTyped         = "conf.json.typed"
	toolSecret        = "conf.secret.sign"
	toolUncooperative = "conf.slow.uncooperative"
	// SecretID is the identifier of the profile's stub secret (PRF-028): no error may name it
	// (SEC-007).
	SecretID = "conf.secret.stub"
	// StubSecret is the profile's stub secret (PRF-028): public bytes a port must never write.
	StubSecret = "splash-conformance-stub-secret!!"
)

// Files a probe asks the driver to write before its step.
const (
	FileStoreFault   = "store-fault"
	FileSecretSource = "secret-source"
)

// FileWrite is a file a driver writes before it sends the probe's line.
type FileWrite struct {
	// File is FileStoreFault or FileSecretSource.
	File string
	// Data is the file's content.
	Data []byte
}

// preserveOnly holds numbers only a host that keeps number text writes (ENC-053).
const preserveOnly = `{"a":0.10,"b":1e2,"c":2.5e-3,"d":99999999999999999999,"e":-9223372036854775809,` +
	`"f":1e400,"g":3.14159265358979323846264338327950288,"h":0.000001}`

// lossyWritten holds a number that is not portable but that a lossy writer writes too.
const lossyWritten = `[1.4651248189898814e+246]`

// SetScope sets the journal scope the worker is started with, which compensations name.
func (s *Session) SetScope(scope string) { s.scope = scope }

// jsonPayload parses a JSON literal of the probes with number text kept.
func jsonPayload(text string) (protocol.ToolPayload, error) {
	v, err := canonjson.ParseValue([]byte(text), canonjson.Preserve)
	if err != nil {
		return protocol.ToolPayload{}, fmt.Errorf("%w: %w", ErrConcretize, err)
	}
	return protocol.JSONPayload(v), nil
}

// probeGrants returns the grants of a probe opening.
func (s *Session) probeGrants(n Name) []protocol.CapabilityGrant {
	stub := protocol.ResourceSelector{Kind: protocol.ResourceSecret, ID: SecretID}
	secret := func(rs ...protocol.ResourceSelector) protocol.CapabilityGrant {
		g := grant(toolSecret, protocol.FormatText)
		g.Resources = rs
		return g
	}
	echo := grant(toolTextEcho, protocol.FormatText)
	switch n {
	case OpenProbeCancel:
		return []protocol.CapabilityGrant{grant(toolCancellable, protocol.FormatText), grant(toolUncooperative, protocol.FormatText)}
	case OpenSmallOutput:
		d := s.durableGrant(false)
		d.MaxOutputBytes = smallOutput
		return []protocol.CapabilityGrant{echo, d}
	case OpenNoCompensation:
		return []protocol.CapabilityGrant{echo, s.durableGrant(false)}
	case OpenSecretBare:
		return []protocol.CapabilityGrant{echo, secret()}
	case OpenSecretOtherKind:
		return []protocol.CapabilityGrant{echo, secret(protocol.ResourceSelector{Kind: protocol.ResourceFileRoot, ID: SecretID})}
	case OpenSecretOtherID:
		return []protocol.CapabilityGrant{echo, secret(protocol.ResourceSelector{Kind: protocol.ResourceSecret, ID: SecretID + ".x"})}
	case OpenSecretElsewhere:
		echo.Resources = []protocol.ResourceSelector{stub}
		return []protocol.CapabilityGrant{echo, secret()}
	}
	out := []protocol.CapabilityGrant{echo}
	if s.has(NeedDurable) {
		out = append(out, s.durableGrant(s.has(NeedCompensation)))
	}
	j := grant(toolJSONEcho, protocol.FormatJSON)
	j.MaxOutputBytes = probeJSONOutput
	out = append(out, j, grant(toolUndeclared, protocol.FormatText))
	if s.has(NeedTypedJSON) {
		t := grant(toolTyped, protocol.FormatJSON)
		t.MaxCalls = probeTypedCalls
		out = append(out, t)
	}
	if s.has(NeedSecret) {
		out = append(out, secret(protocol.ResourceSelector{Kind: protocol.ResourceFileRoot, ID: "conf.root"}, stub))
	}
	return out
}

// durableInForce returns the durable grant of the open session, if it granted one.
func (s *Session) durableInForce() (protocol.CapabilityGrant, bool) {
	i := slices.IndexFunc(s.granted, func(g protocol.CapabilityGrant) bool { return g.Tool == toolDurable })
	if i < 0 {
		return s.durableGrant(s.has(NeedCompensation)), false
	}
	return s.granted[i], true
}

// versioned returns line with its message's protocol_version changed to 4 and tagged again.
func (s *Session) versioned(line []byte) ([]byte, error) {
	return s.Retag(line, func(m []byte) []byte {
		return bytes.Replace(m, []byte(`"protocol_version":5`), []byte(`"protocol_version":4`), 1)
	})
}

// concretizeProbe returns the action of a probe symbol.
func (s *Session) concretizeProbe(p Probe) (Action, error) {
	var line []byte
	var err error
	seal := func(m protocol.Message) {
		if err == nil {
			var l []byte
			l, err = s.seal(m)
			line = append(line, l...)
		}
	}
	sealLines := func(ms ...protocol.Message) {
		for i, m := range ms {
			if i > 0 && err == nil {
				line = append(line, '\n')
			}
			seal(m)
		}
	}
	invoke := func(tool string, payload protocol.ToolPayload) protocol.InvokeMessage {
		return s.invocation(s.nextID(), tool, payload)
	}
	jsonInvoke := func(tool, text string) {
		payload, perr := jsonPayload(text)
		if perr != nil {
			err = perr
			return
		}
		seal(invoke(tool, payload))
	}
	switch p.Name {
	case OpenProbe, OpenProbeCancel, OpenSmallOutput, OpenNoCompensation, OpenSecretBare, OpenSecretOtherKind, OpenSecretOtherID, OpenSecretElsewhere, OpenVersion4:
		gs := s.probeGrants(p.Name)
		seal(protocol.OpenSessionMessage{Manifest: protocol.CapabilityManifest{ProtocolVersion: protocol.ProtocolVersion, SessionID: s.id, Grants: gs}})
		if err == nil && p.Name == OpenVersion4 {
			line, err = s.versioned(line)
		}
		if !s.opened {
			s.opened, s.granted = true, gs
			s.kind = protocol.BaselineSession
			if p.Name == OpenProbeCancel {
				s.kind = protocol.CancellableSession
			}
		}
	case InvokeAtLimit:
		seal(invoke(toolTextEcho, protocol.TextPayload(strings.Repeat("x", grantInput))))
	case InvokeReflected:
		tool, payload := s.quickTool()
		seal(invoke(tool, payload))
		if err == nil {
			line, err = s.retag(line, protocol.RoleWorker, func(m []byte) []byte { return m })
		}
	case InvokeVersion4:
		tool, payload := s.quickTool()
		seal(invoke(tool, payload))
		if err == nil {
			line, err = s.versioned(line)
		}
	case InvokeJSON:
		jsonInvoke(toolJSONEcho, `{"probe":["explore",true,null]}`)
	case InvokeJSONOver:
		jsonInvoke(toolJSONEcho, `["`+strings.Repeat("y", 2*probeJSONOutput)+`"]`)
	case InvokeJSONScalar:
		jsonInvoke(toolJSONEcho, `"explore"`)
	case InvokeJSONDeep:
		jsonInvoke(toolJSONEcho, strings.Repeat("[", 32)+"1"+strings.Repeat("]", 32))
	case InvokeUndeclared:
		seal(invoke(toolUndeclared, protocol.TextPayload("explore")))
	case InvokeTyped:
		jsonInvoke(toolTyped, `{"repeat":2,"text":"ab"}`)
	case InvokeTypedBad:
		jsonInvoke(toolTyped, `{"repeat":2,"text":"ab","extra":1}`)
	case InvokeTypedZero:
		jsonInvoke(toolTyped, `{"repeat":0,"text":"ab"}`)
	case InvokeTypedBurst:
		var ms []protocol.Message
		for range probeTypedCalls + 1 {
			payload, perr := jsonPayload(`["ab",1]`)
			if perr != nil {
				return Action{}, perr
			}
			ms = append(ms, invoke(toolTyped, payload))
		}
		sealLines(ms...)
	case DispatchTyped:
		payload, perr := jsonPayload(`{"repeat":2,"text":"ab"}`)
		if perr != nil {
			return Action{}, perr
		}
		seal(protocol.DispatchOperationMessage{Request: protocol.OperationDispatchRequest{
			ProtocolVersion: protocol.ProtocolVersion, SessionID: s.id, RequestID: s.nextID(), Tool: toolTyped,
			OperationKey: "op-typed-" + strconv.Itoa(s.requests), Payload: payload}})
	case InvokeSecret:
		seal(invoke(toolSecret, protocol.TextPayload("explore")))
	case InvokeNumbers:
		jsonInvoke(toolJSONEcho, preserveOnly)
	case InvokeLossyNumber:
		jsonInvoke(toolJSONEcho, lossyWritten)
	case InvokeSlowShort, InvokeUncoopShort:
		tool, wait := toolCancellable, slowShortMillis
		if p.Name == InvokeUncoopShort {
			tool, wait = toolUncooperative, uncoopMillis
		}
		seal(invoke(tool, protocol.TextPayload(wait)))
		if err == nil && s.current == "" {
			s.current, s.currentTool = s.lastID, tool
		}
	case LineOverCap:
		return Action{Line: bytes.Repeat([]byte{'x'}, protocol.MaxWireFrameBytes+1), NoNewline: true}, nil
	case DispatchAgain:
		if s.lastDispatch == nil {
			return s.concretizeDispatch(recordInput())
		}
		d := *s.lastDispatch
		d.SessionID, d.RequestID = s.id, s.nextID()
		seal(protocol.DispatchOperationMessage{Request: d})
	case DispatchNumbers:
		payload, perr := jsonPayload(`{"value":` + preserveOnly + `}`)
		if perr != nil {
			return Action{}, perr
		}
		return s.concretizeDispatch(payload)
	case ReconcileBurst:
		key := s.operation
		if key == "" {
			key = "op-none"
		}
		var ms []protocol.Message
		for range reconcileBurst {
			ms = append(ms, protocol.ReconcileOperationMessage{Request: protocol.OperationReconcileRequest{
				ProtocolVersion: protocol.ProtocolVersion, SessionID: s.id, RequestID: s.nextID(), Tool: toolDurable, OperationKey: key}})
		}
		sealLines(ms...)
	case Compensate, CompensateBadFP:
		g, _ := s.durableInForce()
		fp, ferr := g.CompensationFingerprint()
		if ferr != nil {
			return Action{}, fmt.Errorf("%w: %w", ErrConcretize, ferr)
		}
		if p.Name == CompensateBadFP {
			g.MaxInputBytes++
			if fp, ferr = g.CompensationFingerprint(); ferr != nil {
				return Action{}, fmt.Errorf("%w: %w", ErrConcretize, ferr)
			}
		}
		key := s.operation
		if key == "" {
			key = "op-none"
		}
		c := protocol.OperationCompensationRequest{
			ProtocolVersion: protocol.ProtocolVersion, SessionID: s.id, RequestID: s.nextID(), Tool: toolDurable,
			OperationKey: key, CompensationKey: "cmp-" + strconv.Itoa(s.requests), TenantScope: s.scope,
			GrantFingerprint: fp, Payload: recordInput()}
		if p.Name == Compensate {
			s.lastCompensation = &c
		}
		seal(protocol.CompensateOperationMessage{Request: c})
	case CompensateAgain:
		if s.lastCompensation == nil {
			return s.concretizeProbe(Probe{Name: Compensate})
		}
		c := *s.lastCompensation
		c.SessionID, c.RequestID = s.id, s.nextID()
		seal(protocol.CompensateOperationMessage{Request: c})
	case StoreFaultAfterOne:
		return Action{Fault: StoreFault, Write: &FileWrite{File: FileStoreFault, Data: []byte("1\n")}}, nil
	case RestartSameSession:
		s.boot = Restart
		return Action{Fault: Restart}, nil
	case RestartBadVersion, RestartBadHeader:
		s.boot = p.Name
		return Action{Fault: Restart}, nil
	case Pause:
		return Action{Pause: 2 * time.Second}, nil
	case DispatchHeld:
		payload, perr := jsonPayload(`{"value":"explore","wait_ms":` + strconv.Itoa(heldMillis) + `}`)
		if perr != nil {
			return Action{}, perr
		}
		return s.concretizeDispatch(payload)
	case Supersede:
		return Action{Supersede: []Name{OpenProbe, Invoke}}, nil
	case SupersedeReconcile:
		return Action{Supersede: []Name{OpenProbe, Reconcile}, Pause: HeldPause}, nil
	default:
		return Action{}, fmt.Errorf("%w: no rule for probe %q", ErrConcretize, p.Name)
	}
	if err != nil {
		return Action{}, err
	}
	return Action{Line: line}, nil
}

// Fork returns the session of a newer worker on the same journal: its own id, key and
// sequences, the worker's scope, and the last operation and dispatch, so that it names the
// same operation. The caller keeps and closes key.
func (s *Session) Fork(id string, key *protocol.SessionKey, mode canonjson.Mode) (*Session, error) {
	f, err := NewSession(id, key, mode, s.needs...)
	if err != nil {
		return nil, err
	}
	f.scope, f.operation, f.lastDispatch, f.requests = s.scope, s.operation, s.lastDispatch, s.requests
	return f, nil
}

// concretizeDispatch dispatches payload to the durable tool under a fresh operation key.
func (s *Session) concretizeDispatch(payload protocol.ToolPayload) (Action, error) {
	s.operation = "op-" + strconv.Itoa(s.requests+1)
	d := protocol.OperationDispatchRequest{ProtocolVersion: protocol.ProtocolVersion, SessionID: s.id, RequestID: s.nextID(),
		Tool: toolDurable, OperationKey: s.operation, Payload: payload}
	s.lastDispatch = &d
	line, err := s.seal(protocol.DispatchOperationMessage{Request: d})
	if err != nil {
		return Action{}, err
	}
	return Action{Line: line}, nil
}

// writeBootstrap writes the bootstrap of a fresh process: the session's, or the bad one a
// restart probe asked for.
func (s *Session) writeBootstrap(w io.Writer) error {
	variant := s.boot
	s.boot = ""
	if variant != RestartBadVersion && variant != RestartBadHeader {
		return bootstrap.Write(w, s.id, s.key)
	}
	var b bytes.Buffer
	if err := bootstrap.Write(&b, s.id, s.key); err != nil {
		return err
	}
	raw := b.Bytes()
	defer clear(raw)
	raw[len(bootstrap.Magic)] = bootstrap.Version + 1
	if variant == RestartBadHeader {
		// The header alone: a worker that checks each part as it reads refuses the version
		// at once; one that waits for the whole bootstrap waits for bytes that never come.
		raw = raw[:len(bootstrap.Magic)+2]
	}
	_, err := w.Write(raw)
	return err
}
