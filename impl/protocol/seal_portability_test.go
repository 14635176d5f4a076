package protocol

import (
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/splashv5/conform/impl/canonjson"
)

// randomPayloadValue returns an array of random records whose numbers include, now and
// then, tokens the two number models write differently.
func randomPayloadValue(r *rand.Rand) canonjson.Value {
	tokens := []string{"1", "-7", "0.5", "12.375", "1e+16", "1.5e-7", "-0.0", "100.0", "18446744073709551615",
		"1e2", "1.50", "-0", "12345678901234567890", "1E5", "0.30000000000000004", "-9223372036854775809"}
	floats := []float64{0.1, 1.0 / 3, 0.1 + 0.2, 1e23, 5e-324, math.Copysign(0, -1), 123456789.12345679, 2.5, 1e-7}
	strs := []string{"", "a", "1e2", `"1.50`, `\`, "x\"-0", "é"}
	var value func(depth int) canonjson.Value
	value = func(depth int) canonjson.Value {
		switch k := r.IntN(12); {
		case k < 3:
			v, err := canonjson.NumberToken(tokens[r.IntN(len(tokens))], canonjson.Preserve)
			if err != nil {
				panic(err)
			}
			return v
		case k < 5:
			v, _ := canonjson.Float(floats[r.IntN(len(floats))] * float64(1+r.IntN(3)))
			return v
		case k == 5:
			v, _ := canonjson.Float(math.Float64frombits(r.Uint64() & 0x7fefffffffffffff))
			return v
		case k == 6:
			return canonjson.Int(r.Int64() >> r.IntN(64))
		case k < 9 || depth > 3:
			return canonjson.String(strs[r.IntN(len(strs))])
		case k == 9:
			elems := make([]canonjson.Value, r.IntN(4))
			for i := range elems {
				elems[i] = value(depth + 1)
			}
			return canonjson.Array(elems...)
		default:
			ents := make([]canonjson.Entry, r.IntN(4))
			for i := range ents {
				ents[i] = canonjson.Entry{Key: strs[r.IntN(len(strs))], Value: value(depth + 1)}
			}
			return canonjson.Object(ents...)
		}
	}
	elems := make([]canonjson.Value, 1+r.IntN(4))
	for i := range elems {
		elems[i] = value(1)
	}
	return canonjson.Array(elems...)
}

// withPayload returns m with its payload replaced by p.
func withPayload(m Message, p ToolPayload) Message {
	switch m := m.(type) {
	case InvokeMessage:
		m.Invocation.Payload = p
		return m
	case ResultMessage:
		m.Result.Payload = p
		return m
	case DispatchOperationMessage:
		m.Request.Payload = p
		return m
	case CompensateOperationMessage:
		m.Request.Payload = p
		return m
	case OperationResultMessage:
		m.Result.Status.Payload = p
		return m
	case CompensationResultMessage:
		m.Result.Status.Payload = p
		return m
	case ReconciledOperationMessage:
		m.Result.Status.Payload = p
		return m
	}
	return m
}

// The Sealer checks payload numbers while it writes them. Its verdict and the reported
// token must be those of the byte scan of the whole written message (the rule the check
// replaced), and a message it accepts must seal to the very line a sealer that does not
// check writes, for every message kind with a payload, for payload trees and for
// received (deferred) payloads.
//
// Spec: ENC-037, ENC-054, FRM-022
func TestSealPortabilityMatchesByteScan(t *testing.T) {
	templates := payloadMessageTemplates
	key, err := NewSessionKey(bytes.Repeat([]byte{7}, SessionKeyBytes))
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(13, 14))
	refused := 0
	const rounds = 4000
	for i := range rounds {
		v := randomPayloadValue(r)
		text := `{"format":"json","value":` + string(v.JSON()) + `}`
		m, err := DecodeMessage([]byte(strings.Replace(templates[i%len(templates)], "PAYLOAD", text, 1)), canonjson.Preserve)
		if err != nil {
			t.Fatalf("%s: %v", text, err)
		}
		if i%2 == 0 {
			m = withPayload(m, JSONPayload(v))
		}
		strict, err := NewAuthenticator("session-1", key, RoleHost, canonjson.Preserve)
		if err != nil {
			t.Fatal(err)
		}
		loose, err := NewAuthenticator("session-1", key, RoleHost, canonjson.Preserve, AllowNonPortableNumbers())
		if err != nil {
			t.Fatal(err)
		}
		_, line, err := strict.SealAppend([]byte("x"), m)
		_, want, looseErr := loose.SealAppend([]byte("x"), m)
		if looseErr != nil {
			t.Fatalf("%s: unchecked seal: %v", m.AppendJSON(nil), looseErr)
		}
		oracle := checkPortableJSON(m.AppendJSON(nil))
		if isDurableOutcome(m) {
			oracle = nil // sealed whatever its numbers (ENC-054)
		}
		var got, wantErr *NonPortableNumberError
		switch {
		case oracle == nil && err != nil:
			t.Fatalf("%s: sealing failed with %v; the byte scan accepts it", m.AppendJSON(nil), err)
		case oracle == nil && !bytes.Equal(line, want):
			t.Fatalf("sealed line\n%s\nwant\n%s", line, want)
		case oracle != nil && (!errors.As(err, &got) || !errors.As(oracle, &wantErr) || got.Token != wantErr.Token):
			t.Fatalf("%s: sealing gave %v; the byte scan gives %v", m.AppendJSON(nil), err, oracle)
		case oracle != nil:
			refused++
			if string(line) != "x" || strict.NextOutgoing() != 1 {
				t.Fatalf("refused seal returned %q and moved the sequence to %d", line, strict.NextOutgoing())
			}
		}
	}
	if refused < rounds/10 || refused > rounds*9/10 {
		t.Fatalf("%d of %d payloads refused; the generator no longer mixes both", refused, rounds)
	}
}

// The payload slot is found only at the end of a message written with a null payload:
// `"value":null` followed by nothing but closing braces. Anything else makes the sealer
// write the message as it is and scan its bytes.
func TestPayloadSlot(t *testing.T) {
	for _, tc := range []struct {
		msg         string
		at, closing int
	}{
		{`{"a":{"format":"json","value":null}}`, 30, 2},
		{`"value":null`, 8, 0},
		{`{"value":null}`, 9, 1},
		{`{"value":null,"b":1}`, -1, 0}, // not the last member
		{`{"value":"null"}`, -1, 0},     // a string, not the placeholder
		{`{"value":nul}`, -1, 0},        // not the placeholder
		{`{"value":null}}x`, -1, 0},     // something after the braces
		{`{"values":null}`, -1, 0},      // another member name
		{`null}`, -1, 0},                // too short to hold the member
	} {
		at, closing := payloadSlot([]byte(tc.msg))
		if at != tc.at || at >= 0 && closing != tc.closing {
			t.Errorf("payloadSlot(%s) = %d, %d; want %d, %d", tc.msg, at, closing, tc.at, tc.closing)
		}
	}
}

// An object whose first key is "$serde_json::private::Number" is not portable (a Preserve
// reader takes it for a number), so sealing refuses it wherever it sits in the payload,
// and the sequence is not consumed.
//
// Spec: ENC-034, ENC-037
func TestSealRefusesPrivateNumberObject(t *testing.T) {
	private := canonjson.Object(canonjson.Entry{Key: "$serde_json::private::Number", Value: canonjson.String("1")})
	for _, payload := range []canonjson.Value{
		private,
		canonjson.Array(canonjson.Uint(1), private),
		canonjson.Object(canonjson.Entry{Key: "a", Value: canonjson.Array(private)}),
	} {
		host, _ := testAuthPair(t)
		inv, err := NewToolInvocation("session-1", "request-1", "json.tool", JSONPayload(payload))
		if err != nil {
			t.Fatal(err)
		}
		_, _, err = host.Seal(InvokeMessage{Invocation: inv})
		var npe *NonPortableNumberError
		if !errors.As(err, &npe) || npe.Token != canonjson.PrivateNumberObject || !strings.Contains(err.Error(), "private::Number") {
			t.Fatalf("Seal(%s) = %v, want NonPortableNumber for the private-number object", payload.JSON(), err)
		}
		if host.NextOutgoing() != 1 {
			t.Fatal("a refused seal consumed a sequence number")
		}
		if err := checkPortableJSON(payload.JSON()); !errors.As(err, &npe) || npe.Token != canonjson.PrivateNumberObject {
			t.Fatalf("the byte scan missed the private-number object in %s: %v", payload.JSON(), err)
		}
	}
	// The key elsewhere than first is an ordinary key.
	ok := canonjson.Object(canonjson.Entry{Key: "#", Value: canonjson.Uint(1)}, canonjson.Entry{Key: "$serde_json::private::Number", Value: canonjson.String("1")})
	if err := checkPortableJSON(ok.JSON()); err != nil {
		t.Fatalf("%s: %v", ok.JSON(), err)
	}
}
