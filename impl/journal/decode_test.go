package journal_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/journal"
	"github.com/splashv5/conform/impl/protocol"
)

const (
	fp      = inputFingerprint
	grantFP = releaseFingerprint
)

// jr builds a journal document from records.
func jr(version, sc string, records ...string) string {
	return `{"format_version":` + version + `,"scope":"` + sc + `","records":[` + strings.Join(records, ",") + `]}`
}

// rec builds a record; comp is the raw compensation value ("null" or an object).
func rec(tool, key, fingerprint, state, comp string) string {
	return `{"tool":"` + tool + `","operation_key":"` + key + `","input_fingerprint":"` + fingerprint + `","state":` + state + `,"compensation":` + comp + `}`
}

// cmp builds a compensation record.
func cmp(key, input, grant, state string) string {
	return `{"compensation_key":"` + key + `","input_fingerprint":"` + input + `","grant_fingerprint":"` + grant + `","state":` + state + `}`
}

const (
	pending   = `{"state":"pending"}`
	running   = `{"state":"running"}`
	cancelled = `{"state":"cancelled"}`
	succeeded = `{"state":"succeeded","payload":{"format":"json","value":{"total":42}}}`
)

func records(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = rec("calc", fmt.Sprintf("op-%d", i), fp, pending, "null")
	}
	return out
}

// Spec: JRN-003, JRN-004, JRN-005, JRN-006
func TestLoadNegatives(t *testing.T) {
	sixtyFive := records(65)
	badFirst := append([]string{rec("Calc", "op-x", fp, pending, "null")}, records(65)...)
	cases := []struct {
		name  string
		input string
		want  protocol.ErrorKind
		check func(t *testing.T, pe *protocol.Error)
	}{
		{"version 1", jr("1", "tenant"), protocol.ErrUnsupportedOperationJournalVersion, func(t *testing.T, pe *protocol.Error) {
			if pe.Actual != 1 {
				t.Fatalf("actual %d", pe.Actual)
			}
		}},
		{"version 3", jr("3", "tenant"), protocol.ErrUnsupportedOperationJournalVersion, nil},
		{"version before scope", jr("1", "Bad Scope"), protocol.ErrUnsupportedOperationJournalVersion, nil},
		{"version beyond u8", jr("256", "tenant"), protocol.ErrSerialization, nil},
		{"version as a string", jr(`"2"`, "tenant"), protocol.ErrSerialization, nil},
		{"bad scope", jr("2", "Tenant"), protocol.ErrInvalidToken, func(t *testing.T, pe *protocol.Error) {
			if pe.Field != protocol.FieldJournalScope || pe.Value != "Tenant" {
				t.Fatalf("field %q value %q", pe.Field, pe.Value)
			}
		}},
		{"empty scope", jr("2", ""), protocol.ErrInvalidToken, nil},
		{"scope before record count", jr("2", "T", sixtyFive...), protocol.ErrInvalidToken, nil},
		{"65 records", jr("2", "tenant", sixtyFive...), protocol.ErrTooManyWorkerOperations, func(t *testing.T, pe *protocol.Error) {
			if pe.Maximum != 64 {
				t.Fatalf("maximum %d", pe.Maximum)
			}
		}},
		{"record count before records", jr("2", "tenant", badFirst...), protocol.ErrTooManyWorkerOperations, nil},
		{"tool token", jr("2", "tenant", rec("Calc", "K", "x", pending, "null")), protocol.ErrInvalidToken, func(t *testing.T, pe *protocol.Error) {
			if pe.Field != protocol.FieldTool {
				t.Fatalf("field %q", pe.Field)
			}
		}},
		{"key token before fingerprint", jr("2", "tenant", rec("calc", "K", "x", pending, "null")), protocol.ErrInvalidToken, func(t *testing.T, pe *protocol.Error) {
			if pe.Field != protocol.FieldOperationKey {
				t.Fatalf("field %q", pe.Field)
			}
		}},
		{"uppercase fingerprint", jr("2", "tenant", rec("calc", "k", strings.ToUpper(fp), pending, "null")), protocol.ErrInvalidOperationFingerprint, nil},
		{"short fingerprint", jr("2", "tenant", rec("calc", "k", fp[:63], pending, "null")), protocol.ErrInvalidOperationFingerprint, nil},
		{"fingerprint before state", jr("2", "tenant", rec("calc", "k", "zz", `{"state":"failed","message":""}`, "null")), protocol.ErrInvalidOperationFingerprint, nil},
		{"empty failure message", jr("2", "tenant", rec("calc", "k", fp, `{"state":"failed","message":""}`, "null")), protocol.ErrInvalidOperationFailure, nil},
		{"failure message too long", jr("2", "tenant", rec("calc", "k", fp, `{"state":"failed","message":"`+strings.Repeat("m", 4097)+`"}`, "null")), protocol.ErrOperationFailureTooLarge, nil},
		{"scalar succeeded payload", jr("2", "tenant", rec("calc", "k", fp, `{"state":"succeeded","payload":{"format":"json","value":5}}`, "null")), protocol.ErrInvalidJsonEnvelope, nil},
		{"state before compensation", jr("2", "tenant", rec("calc", "k", fp, `{"state":"failed","message":""}`, cmp("x", "y", "z", pending))), protocol.ErrInvalidOperationFailure, nil},
		{"compensation on pending", jr("2", "tenant", rec("calc", "k", fp, pending, cmp("cmp-1", fp, grantFP, pending))), protocol.ErrCompensationRequiresSucceededOperation, func(t *testing.T, pe *protocol.Error) {
			if pe.Value != "k" || pe.State != protocol.StatePending {
				t.Fatalf("value %q state %v", pe.Value, pe.State)
			}
		}},
		{"compensation on running", jr("2", "tenant", rec("calc", "k", fp, running, cmp("cmp-1", fp, grantFP, pending))), protocol.ErrCompensationRequiresSucceededOperation, nil},
		{"compensation on cancelled", jr("2", "tenant", rec("calc", "k", fp, cancelled, cmp("cmp-1", fp, grantFP, pending))), protocol.ErrCompensationRequiresSucceededOperation, nil},
		{"compensation on failed", jr("2", "tenant", rec("calc", "k", fp, `{"state":"failed","message":"m"}`, cmp("cmp-1", fp, grantFP, pending))), protocol.ErrCompensationRequiresSucceededOperation, nil},
		{"succeeded check before compensation fields", jr("2", "tenant", rec("calc", "k", fp, pending, cmp("X", "y", "z", pending))), protocol.ErrCompensationRequiresSucceededOperation, nil},
		{"compensation key token", jr("2", "tenant", rec("calc", "k", fp, succeeded, cmp("CMP-1", "y", "z", pending))), protocol.ErrInvalidToken, func(t *testing.T, pe *protocol.Error) {
			if pe.Field != protocol.FieldCompensationKey {
				t.Fatalf("field %q", pe.Field)
			}
		}},
		{"compensation key prefix", jr("2", "tenant", rec("calc", "k", fp, succeeded, cmp("undo-1", "y", "z", pending))), protocol.ErrInvalidCompensationKey, nil},
		{"compensation input fingerprint", jr("2", "tenant", rec("calc", "k", fp, succeeded, cmp("cmp-1", "y", "z", pending))), protocol.ErrInvalidOperationFingerprint, nil},
		{"compensation grant fingerprint", jr("2", "tenant", rec("calc", "k", fp, succeeded, cmp("cmp-1", fp, grantFP+"0", pending))), protocol.ErrInvalidCompensationGrantFingerprint, nil},
		{"compensation state", jr("2", "tenant", rec("calc", "k", fp, succeeded, cmp("cmp-1", fp, grantFP, `{"state":"failed","message":""}`))), protocol.ErrInvalidOperationFailure, nil},
		{"duplicate key", jr("2", "tenant", rec("calc", "k", fp, pending, "null"), rec("echo", "k", fp, running, "null")), protocol.ErrDuplicateOperationKey, func(t *testing.T, pe *protocol.Error) {
			if pe.Value != "k" {
				t.Fatalf("value %q", pe.Value)
			}
		}},
		{"record checks before duplicate key", jr("2", "tenant", rec("calc", "k", fp, pending, "null"), rec("echo", "k", "bad", running, "null")), protocol.ErrInvalidOperationFingerprint, nil},
		{"unknown journal field", `{"format_version":2,"scope":"tenant","records":[],"extra":1}`, protocol.ErrSerialization, nil},
		{"unknown record field", jr("2", "tenant", `{"tool":"calc","operation_key":"k","input_fingerprint":"`+fp+`","state":{"state":"pending"},"compensation":null,"note":""}`), protocol.ErrSerialization, nil},
		{"unknown compensation field", jr("2", "tenant", rec("calc", "k", fp, succeeded, `{"compensation_key":"cmp-1","input_fingerprint":"`+fp+`","grant_fingerprint":"`+grantFP+`","state":{"state":"pending"},"x":null}`)), protocol.ErrSerialization, nil},
		{"duplicate journal field", `{"format_version":2,"scope":"tenant","scope":"tenant","records":[]}`, protocol.ErrSerialization, nil},
		{"duplicate record field", jr("2", "tenant", `{"tool":"calc","tool":"calc","operation_key":"k","input_fingerprint":"`+fp+`","state":{"state":"pending"}}`), protocol.ErrSerialization, nil},
		{"missing records", `{"format_version":2,"scope":"tenant"}`, protocol.ErrSerialization, nil},
		{"missing state", jr("2", "tenant", `{"tool":"calc","operation_key":"k","input_fingerprint":"`+fp+`"}`), protocol.ErrSerialization, nil},
		{"null records", `{"format_version":2,"scope":"tenant","records":null}`, protocol.ErrSerialization, nil},
		{"unknown state", jr("2", "tenant", rec("calc", "k", fp, `{"state":"done"}`, "null")), protocol.ErrSerialization, nil},
		{"state name is case-sensitive", jr("2", "tenant", rec("calc", "k", fp, `{"state":"Pending"}`, "null")), protocol.ErrSerialization, nil},
		{"succeeded without payload", jr("2", "tenant", rec("calc", "k", fp, `{"state":"succeeded"}`, "null")), protocol.ErrSerialization, nil},
		{"compensation as a string", jr("2", "tenant", rec("calc", "k", fp, succeeded, `"cmp-1"`)), protocol.ErrSerialization, nil},
		{"trailing characters", jr("2", "tenant") + "x", protocol.ErrSerialization, nil},
		{"empty input", "", protocol.ErrSerialization, nil},
		{"invalid UTF-8", `{"format_version":2,"scope":"tenant","records":[` + "\xff" + `]}`, protocol.ErrSerialization, nil},
		{"byte order mark", "\xef\xbb\xbf" + jr("2", "tenant"), protocol.ErrSerialization, nil},
		{"raw size first", strings.Repeat(" ", protocol.MaxWorkerOperationJournalBytes+1), protocol.ErrOperationJournalTooLarge, func(t *testing.T, pe *protocol.Error) {
			if pe.Actual != 262145 || pe.Maximum != 262144 {
				t.Fatalf("actual %d maximum %d", pe.Actual, pe.Maximum)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, mode := range []canonjson.Mode{canonjson.Preserve, canonjson.Lossy} {
				j, err := journal.FromJSON([]byte(c.input), mode)
				if j != nil {
					t.Fatalf("%v: a journal was returned with error %v", mode, err)
				}
				var pe *protocol.Error
				if !errors.As(err, &pe) || pe.Kind != c.want {
					t.Fatalf("%v: got %v, want %v", mode, err, c.want)
				}
				if k, ok := protocol.KindOf(err); !ok || k != c.want {
					t.Fatalf("%v: KindOf %v %v", mode, k, ok)
				}
				if c.check != nil {
					c.check(t, pe)
				}
			}
		})
	}
}

// Spec: JRN-005, JRN-006
func TestLoadSizeBoundaries(t *testing.T) {
	// Padding with whitespace reaches exactly 262,144 raw bytes, which is allowed.
	doc := jr("2", "tenant", rec("calc", "k", fp, pending, "null"))
	padded := doc + strings.Repeat(" ", protocol.MaxWorkerOperationJournalBytes-len(doc))
	if _, err := journal.FromJSON([]byte(padded), canonjson.Preserve); err != nil {
		t.Fatalf("exactly at the bound: %v", err)
	}
	_, err := journal.FromJSON([]byte(padded+" "), canonjson.Preserve)
	wantKind(t, err, protocol.ErrOperationJournalTooLarge)

	// In the lossy number mode 1e2 is re-written as 100.0, so a journal under the raw bound can
	// exceed it once re-serialized; that is the last structural check.
	var b strings.Builder
	b.WriteString("[1e2")
	for b.Len() < 200000 {
		b.WriteString(",1e2")
	}
	b.WriteString("]")
	state := `{"state":"succeeded","payload":{"format":"json","value":` + b.String() + `}}`
	doc = jr("2", "tenant", rec("calc", "k", fp, state, "null"))
	if len(doc) > protocol.MaxWorkerOperationJournalBytes {
		t.Fatalf("test document too large: %d", len(doc))
	}
	_, err = journal.FromJSON([]byte(doc), canonjson.Lossy)
	var pe *protocol.Error
	if !errors.As(err, &pe) || pe.Kind != protocol.ErrOperationJournalTooLarge || pe.Actual <= uint64(len(doc)) {
		t.Fatalf("lossy: got %v", err)
	}
	// The text-preserving mode keeps 1e2 and the journal loads.
	if _, err := journal.FromJSON([]byte(doc), canonjson.Preserve); err != nil {
		t.Fatalf("preserve: %v", err)
	}
}

// Spec: JRN-001, JRN-002, JRN-023
func TestCanonicalRoundTrips(t *testing.T) {
	docs := []string{
		jr("2", "tenant"),
		vector8,
		jr("2", "t",
			rec("echo", "op-1", fp, running, "null"),
			rec("echo", "op-2", fp, cancelled, "null"),
			rec("echo", "op-3", fp, `{"state":"failed","message":"quote\" back\\ ctl\u0001\u001f tab\t nl\n é😀 <>&/ `+"\u2028"+`"}`, "null"),
			rec("echo", "op-4", fp, `{"state":"succeeded","payload":{"format":"text","value":"héllo"}}`,
				cmp("cmp-", fp, grantFP, `{"state":"succeeded","payload":{"format":"text","value":"undone"}}`)),
			rec("calc", "op-5", fp, `{"state":"succeeded","payload":{"format":"json","value":{"":[],"B":null,"a":[1,-42,1.5,1e+16,18446744073709551615,{"z":false}],"é":"x"}}}`,
				cmp("cmp-x", fp, grantFP, `{"state":"failed","message":"could not undo"}`)),
			rec("calc", "op-6", fp, `{"state":"succeeded","payload":{"format":"json","value":[]}}`, cmp("cmp-y", fp, grantFP, cancelled)),
			rec("calc", "op-7", fp, `{"state":"succeeded","payload":{"format":"json","value":{}}}`, cmp("cmp-z", fp, grantFP, running)),
		),
	}
	for i, doc := range docs {
		for _, mode := range []canonjson.Mode{canonjson.Preserve, canonjson.Lossy} {
			j, err := journal.FromJSON([]byte(doc), mode)
			if err != nil {
				t.Fatalf("doc %d %v: %v", i, mode, err)
			}
			got := toJSON(t, j)
			if string(got) != doc {
				t.Fatalf("doc %d %v:\n got %s\nwant %s", i, mode, got, doc)
			}
			again, err := journal.FromJSON(got, mode)
			if err != nil || !again.Equal(j) {
				t.Fatalf("doc %d %v: reload %v", i, mode, err)
			}
			if j.Size() != len(doc) {
				t.Fatalf("doc %d: Size %d, want %d", i, j.Size(), len(doc))
			}
		}
	}
}

// Spec: JRN-002, JRN-003, JRN-004
func TestNonCanonicalInputs(t *testing.T) {
	canonical := jr("2", "tenant", rec("calc", "k", fp, succeeded, "null"))
	cases := []struct{ name, input, want string }{
		{"whitespace", " \n{ \"format_version\" : 2 ,\r\n\t\"scope\":\"tenant\", \"records\" : [ " + rec("calc", "k", fp, succeeded, "null") + " ] } \n", canonical},
		{"fields in another order", `{"records":[{"state":` + succeeded + `,"compensation":null,"input_fingerprint":"` + fp + `","operation_key":"k","tool":"calc"}],"scope":"tenant","format_version":2}`, canonical},
		{"missing compensation loads as null", jr("2", "tenant", `{"tool":"calc","operation_key":"k","input_fingerprint":"`+fp+`","state":`+succeeded+`}`), canonical},
		{"state members in another order, extra members ignored", jr("2", "tenant", rec("calc", "k", fp, `{"note":[1,2],"payload":{"value":{"total":42},"format":"json"},"state":"succeeded"}`, "null")), canonical},
		{"unit state ignores extra members", jr("2", "tenant", rec("calc", "k", fp, `{"state":"pending","payload":5}`, "null")), jr("2", "tenant", rec("calc", "k", fp, pending, "null"))},
		{"escaped spellings", `{"format_version":2,"scope":"ten\u0061nt","records":[{"tool":"calc","operation_key":"k","input_fingerprint":"` + fp + `","state":{"state":"succeeded","payload":{"format":"text","value":"\u00e9\/"}},"compensation":null}]}`,
			jr("2", "tenant", rec("calc", "k", fp, `{"state":"succeeded","payload":{"format":"text","value":"é/"}}`, "null"))},
		{"payload object keys sorted", jr("2", "tenant", rec("calc", "k", fp, `{"state":"succeeded","payload":{"format":"json","value":{"b":1,"a":2,"B":3}}}`, "null")),
			jr("2", "tenant", rec("calc", "k", fp, `{"state":"succeeded","payload":{"format":"json","value":{"B":3,"a":2,"b":1}}}`, "null"))},
		{"positional journal", `[2,"tenant",[]]`, jr("2", "tenant")},
		{"positional record without compensation", jr("2", "tenant", `["calc","k","`+fp+`",`+succeeded+`]`), canonical},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			j, err := journal.FromJSON([]byte(c.input), canonjson.Preserve)
			if err != nil {
				t.Fatal(err)
			}
			if got := toJSON(t, j); string(got) != c.want {
				t.Fatalf("\n got %s\nwant %s", got, c.want)
			}
		})
	}
}

// Spec: JRN-008
func TestLoadForScope(t *testing.T) {
	doc := []byte(jr("2", "tenant-a"))
	if _, err := journal.FromJSONForScope(doc, "tenant-a", canonjson.Preserve); err != nil {
		t.Fatal(err)
	}
	_, err := journal.FromJSONForScope(doc, "tenant-b", canonjson.Preserve)
	var pe *protocol.Error
	if !errors.As(err, &pe) || pe.Kind != protocol.ErrOperationJournalScopeMismatch || pe.ExpectedText != "tenant-b" || pe.ActualText != "tenant-a" {
		t.Fatalf("got %v", err)
	}
	_, err = journal.FromJSONForScope(doc, "", canonjson.Preserve)
	if !errors.As(err, &pe) || pe.Kind != protocol.ErrInvalidToken || pe.Field != protocol.FieldJournalScope {
		t.Fatalf("got %v", err)
	}
	// Loading errors come before the scope check.
	_, err = journal.FromJSONForScope([]byte(jr("1", "tenant-a")), "tenant-b", canonjson.Preserve)
	wantKind(t, err, protocol.ErrUnsupportedOperationJournalVersion)
}
