package model_test

import (
	"bytes"
	"testing"

	"pgregory.net/rapid"

	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/protocol"
	"github.com/splashv5/conform/model"
)

const (
	sessionOne = "session-1"
	sessionTwo = "session-2"
	keySeven   = "k7"
	keyEight   = "k8"
)

func sessionKey(t *rapid.T, id string) *protocol.SessionKey {
	b := byte(7)
	if id == keyEight {
		b = 8
	}
	k, err := protocol.NewSessionKey(bytes.Repeat([]byte{b}, protocol.SessionKeyBytes))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// party is one real authenticator (possibly used through its split halves)
// next to its model.
type party struct {
	name  string
	real  *protocol.Authenticator
	seal  func(protocol.Message) (protocol.Frame, []byte, error)
	open  func([]byte) (protocol.Frame, error)
	out   func() uint64
	in    func() uint64
	model *model.AuthSide
}

func newParty(t *rapid.T, name, role, session, key string, nextOut, nextIn uint64, split bool) *party {
	r := protocol.RoleHost
	if role == model.RoleWorker {
		r = protocol.RoleWorker
	}
	a, err := protocol.NewAuthenticator(session, sessionKey(t, key), r, canonjson.Preserve,
		protocol.WithSequences(nextOut, nextIn))
	if err != nil {
		t.Fatal(err)
	}
	p := &party{name: name, real: a, model: model.NewAuthSide(role, session, key, nextOut, nextIn)}
	if split {
		s, o := a.Split()
		p.seal, p.open, p.out, p.in = s.Seal, o.Open, s.NextOutgoing, o.NextIncoming
	} else {
		p.seal, p.open, p.out, p.in = a.Seal, a.Open, a.NextOutgoing, a.NextIncoming
	}
	return p
}

// flight is a frame line on its way, with the model's view of it and the
// line as it was sealed.
type flight struct {
	line     []byte
	frame    model.AuthFrame
	pristine []byte
}

// outcome names a result like the model does: "" or the variant name.
func outcome(t *rapid.T, err error) string {
	if err == nil {
		return ""
	}
	k, ok := protocol.KindOf(err)
	if !ok {
		t.Fatalf("error outside the protocol kinds: %v", err)
	}
	return k.String()
}

// message builds a valid message of the sender's usual kind naming session.
func message(t *rapid.T, role, session, text string) protocol.Message {
	if role == model.RoleHost {
		inv, err := protocol.NewToolInvocation(session, "request-1", "text.echo", protocol.TextPayload(text))
		if err != nil {
			t.Fatal(err)
		}
		return protocol.InvokeMessage{Invocation: inv}
	}
	res, err := protocol.NewToolResult(session, "request-1", protocol.TextPayload(text))
	if err != nil {
		t.Fatal(err)
	}
	return protocol.ResultMessage{Result: res}
}

type authMachine struct {
	host, worker     *party
	outsiders        []*party // other session or other key
	toWorker, toHost []flight
}

func (m *authMachine) check(t *rapid.T) {
	for _, p := range append([]*party{m.host, m.worker}, m.outsiders...) {
		if p.out() != p.model.NextOut || p.in() != p.model.NextIn {
			t.Fatalf("%s counters out=%d in=%d, model out=%d in=%d",
				p.name, p.out(), p.in(), p.model.NextOut, p.model.NextIn)
		}
	}
}

// seal seals a message naming msgSession from p and queues it on q.
func (m *authMachine) seal(t *rapid.T, p *party, msgSession string, q *[]flight) {
	text := rapid.StringMatching(`[a-z]{1,12}`).Draw(t, "text")
	_, line, err := p.seal(message(t, p.model.Role, msgSession, text))
	frame, want := p.model.Seal(msgSession)
	if got := outcome(t, err); got != want {
		t.Fatalf("%s seal: got %q, model %q", p.name, got, want)
	}
	if err == nil {
		*q = append(*q, flight{line: line, frame: frame, pristine: line})
	}
}

func (m *authMachine) deliver(t *rapid.T, q []flight, to *party, label string) {
	if len(q) == 0 {
		t.Skip("nothing in flight")
	}
	fl := q[rapid.IntRange(0, len(q)-1).Draw(t, label)]
	f, err := to.open(fl.line)
	want := to.model.Open(fl.frame)
	if got := outcome(t, err); got != want {
		t.Fatalf("%s opens %+v: got %q (%v), model %q", to.name, fl.frame, got, err, want)
	}
	if err != nil && f.Message != nil {
		t.Fatal("a failed open yielded a message")
	}
}

// tamper changes one byte of a queued line so that its canonical content or
// its tag differs: a tag hex digit becomes another hex digit, or a letter of
// the text payload becomes another letter.
func tamper(t *rapid.T, fl flight) flight {
	line := append([]byte(nil), fl.line...)
	if rapid.Bool().Draw(t, "in tag") {
		start := bytes.LastIndex(line, []byte(`"auth_tag":"`)) + len(`"auth_tag":"`)
		i := start + rapid.IntRange(0, 63).Draw(t, "tag digit")
		const hexDigits = "0123456789abcdef"
		repl := hexDigits[rapid.IntRange(0, 15).Draw(t, "hex")]
		if repl == line[i] {
			repl = hexDigits[(bytes.IndexByte([]byte(hexDigits), repl)+1)%16]
		}
		line[i] = repl
	} else {
		start := bytes.Index(line, []byte(`"value":"`)) + len(`"value":"`)
		end := start + bytes.IndexByte(line[start:], '"')
		i := rapid.IntRange(start, end-1).Draw(t, "text letter")
		line[i] = 'a' + (line[i]-'a'+byte(rapid.IntRange(1, 25).Draw(t, "shift")))%26
	}
	// A second change can restore the sealed bytes; only then is the frame
	// intact again.
	frame := fl.frame
	frame.Intact = bytes.Equal(line, fl.pristine)
	return flight{line: line, frame: frame, pristine: fl.pristine}
}

// startCounters draws a starting sequence: the normal 1, or close to the end
// of the sequence space so exhaustion is reachable.
func startCounters(t *rapid.T, label string) uint64 {
	return rapid.SampledFrom([]uint64{1, 2, model.MaxSequence - 3, model.MaxSequence - 1, model.MaxSequence}).Draw(t, label)
}

// The real authenticator pair and the model agree on every outcome and
// counter under random sealing, delivery in any order, replay, reflection,
// tampering, frames of another session or key, and messages naming another
// session.
//
// Spec: FRM-008, FRM-019, FRM-021, FRM-023, FRM-024, FRM-025, FRM-026, FRM-027, FRM-028
func TestAuthenticatorMatchesModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		split := rapid.Bool().Draw(t, "split")
		hostOut := startCounters(t, "host out")
		workerOut := startCounters(t, "worker out")
		workerIn, hostIn := hostOut, workerOut
		if !rapid.Bool().Draw(t, "aligned") {
			workerIn, hostIn = startCounters(t, "worker in"), startCounters(t, "host in")
		}
		m := &authMachine{
			host:   newParty(t, "host", model.RoleHost, sessionOne, keySeven, hostOut, hostIn, split),
			worker: newParty(t, "worker", model.RoleWorker, sessionOne, keySeven, workerOut, workerIn, split),
			outsiders: []*party{
				newParty(t, "host of session-2", model.RoleHost, sessionTwo, keySeven, workerIn, 1, false),
				newParty(t, "host with key 8", model.RoleHost, sessionOne, keyEight, workerIn, 1, false),
				newParty(t, "worker of session-2", model.RoleWorker, sessionTwo, keySeven, hostIn, 1, false),
			},
		}
		t.Repeat(map[string]func(*rapid.T){
			"":             m.check,
			"host seals":   func(t *rapid.T) { m.seal(t, m.host, sessionOne, &m.toWorker) },
			"worker seals": func(t *rapid.T) { m.seal(t, m.worker, sessionOne, &m.toHost) },
			"seal naming another session": func(t *rapid.T) {
				p := rapid.SampledFrom([]*party{m.host, m.worker}).Draw(t, "sealer")
				var sink []flight
				m.seal(t, p, sessionTwo, &sink)
			},
			"worker opens (any order, replays)": func(t *rapid.T) { m.deliver(t, m.toWorker, m.worker, "index") },
			"host opens (any order, replays)":   func(t *rapid.T) { m.deliver(t, m.toHost, m.host, "index") },
			"reflect to the sender": func(t *rapid.T) {
				if rapid.Bool().Draw(t, "to host") {
					m.deliver(t, m.toWorker, m.host, "index")
				} else {
					m.deliver(t, m.toHost, m.worker, "index")
				}
			},
			"tamper": func(t *rapid.T) {
				q := &m.toWorker
				if rapid.Bool().Draw(t, "host-bound") {
					q = &m.toHost
				}
				if len(*q) == 0 {
					t.Skip("nothing to tamper with")
				}
				fl := (*q)[rapid.IntRange(0, len(*q)-1).Draw(t, "victim")]
				*q = append(*q, tamper(t, fl))
			},
			"outsider seals": func(t *rapid.T) {
				p := rapid.SampledFrom(m.outsiders).Draw(t, "outsider")
				q := &m.toWorker
				if p.model.Role == model.RoleWorker {
					q = &m.toHost
				}
				m.seal(t, p, p.model.Session, q)
			},
			"key holder tags any sequence": func(t *rapid.T) {
				// Tagged with the right key, sender and session at a chosen
				// sequence (possibly 2^64-1); the message names this session
				// or session-2, which only UnknownSession can catch.
				seq := rapid.SampledFrom([]uint64{m.worker.in(), 1, m.worker.in() + 1, model.MaxSequence}).Draw(t, "sequence")
				if seq == 0 {
					seq = 1
				}
				msgSession := rapid.SampledFrom([]string{sessionOne, sessionTwo}).Draw(t, "message session")
				msg := message(t, model.RoleHost, msgSession, "x")
				tag, err := protocol.ComputeTag(sessionKey(t, keySeven), sessionOne, protocol.RoleHost, seq, msg)
				if err != nil {
					t.Fatal(err)
				}
				line, err := protocol.EncodeFrame(protocol.Frame{Sequence: seq, Message: msg, Tag: tag})
				if err != nil {
					t.Fatal(err)
				}
				m.toWorker = append(m.toWorker, flight{line: line, pristine: line, frame: model.AuthFrame{
					Sender: model.RoleHost, Session: sessionOne, Key: keySeven,
					MessageSession: msgSession, Sequence: seq, Intact: true,
				}})
			},
		})
	})
}

// The model itself: a fixed scenario with hand-derived outcomes.
func TestAuthModelScenario(t *testing.T) {
	p := model.NewAuthPair(sessionOne, keySeven)
	f1, e := p.Host.Seal(sessionOne)
	f2, _ := p.Host.Seal(sessionOne)
	if e != "" || f1.Sequence != 1 || f2.Sequence != 2 || p.Host.NextOut != 3 {
		t.Fatal("host seals 1 and 2")
	}
	steps := []struct {
		side *model.AuthSide
		f    model.AuthFrame
		want string
	}{
		{p.Worker, f2, "UnexpectedSequence"},     // gap
		{p.Worker, f1, ""},                       // in order
		{p.Worker, f1, "UnexpectedSequence"},     // replay
		{p.Host, f2, "InvalidAuthenticationTag"}, // reflection
		{p.Worker, model.AuthFrame{Sender: "host", Session: sessionOne, Key: keySeven, MessageSession: sessionOne, Sequence: 2}, "InvalidAuthenticationTag"},
		{p.Worker, model.AuthFrame{Sender: "host", Session: sessionOne, Key: keySeven, MessageSession: sessionTwo, Sequence: 9, Intact: true}, "UnknownSession"},
		{p.Worker, f2, ""},
	}
	for i, s := range steps {
		if got := s.side.Open(s.f); got != s.want {
			t.Fatalf("step %d: %q, want %q", i, got, s.want)
		}
	}
	if p.Worker.NextIn != 3 || p.Worker.NextOut != 1 || p.Host.NextIn != 1 {
		t.Fatal("counters")
	}
	if _, e := p.Worker.Seal(sessionTwo); e != "UnknownSession" || p.Worker.NextOut != 1 {
		t.Fatal("foreign seal")
	}
	end := model.NewAuthSide(model.RoleHost, sessionOne, keySeven, model.MaxSequence-1, model.MaxSequence)
	if f, e := end.Seal(sessionOne); e != "" || f.Sequence != model.MaxSequence-1 {
		t.Fatal("2^64-2 is sealable")
	}
	if _, e := end.Seal(sessionOne); e != "SequenceExhausted" || end.NextOut != model.MaxSequence {
		t.Fatal("2^64-1 is not")
	}
	last := model.AuthFrame{Sender: model.RoleWorker, Session: sessionOne, Key: keySeven, MessageSession: sessionOne, Sequence: model.MaxSequence, Intact: true}
	if e := end.Open(last); e != "SequenceExhausted" || end.NextIn != model.MaxSequence {
		t.Fatalf("open at 2^64-1: %q", e)
	}
}
