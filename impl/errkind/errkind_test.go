package errkind_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/splashv5/conform/impl/errkind"
)

type space struct{}

func (space) Table() *errkind.Table { return &table }

type kind = errkind.Kind[space]

const (
	kindA kind = iota + 1
	kindB
	kindC kind = 5
)

var table = errkind.Table{Type: "TestKind", Prefix: "test: ", Kinds: []errkind.Entry{
	kindA: {Name: "Alpha"},
	kindB: {Name: "Beta", Message: "beta went wrong"},
	kindC: {Name: "Gamma", Detail: "gamma {n}"},
}}

type other struct{}

func (other) Table() *errkind.Table { return &otherTable }

var otherTable = errkind.Table{Type: "OtherKind", Prefix: "other: ", NameInError: true, Kinds: []errkind.Entry{
	1: {Name: "Alpha", Message: "alpha went wrong"},
	2: {Name: "Beta"},
}}

type testError struct {
	errkind.Kind[space]
	Err error
}

func (e *testError) Error() string { return "wrapped " + e.Kind.String() }

func (e *testError) Unwrap() error { return e.Err }

func TestKindTexts(t *testing.T) {
	for _, c := range []struct {
		k          kind
		name, text string
		valid      bool
	}{
		{kindA, "Alpha", "test: Alpha", true},
		{kindB, "Beta", "test: beta went wrong", true},
		{kindC, "Gamma", "test: Gamma", true},
		{0, "TestKind(0)", "test: TestKind(0)", false},
		{3, "TestKind(3)", "test: TestKind(3)", false},
		{99, "TestKind(99)", "test: TestKind(99)", false},
	} {
		if got := c.k.String(); got != c.name {
			t.Errorf("String of %d = %q, want %q", uint16(c.k), got, c.name)
		}
		if got := c.k.Error(); got != c.text {
			t.Errorf("Error of %d = %q, want %q", uint16(c.k), got, c.text)
		}
		if got := c.k.Valid(); got != c.valid {
			t.Errorf("Valid of %d = %v, want %v", uint16(c.k), got, c.valid)
		}
	}
}

func TestNameInError(t *testing.T) {
	for k, want := range map[errkind.Kind[other]]string{1: "other: Alpha: alpha went wrong", 2: "other: Beta", 3: "other: OtherKind(3)"} {
		if got := k.Error(); got != want {
			t.Errorf("Error of %d = %q, want %q", uint16(k), got, want)
		}
	}
}

func TestMatchingAndNaming(t *testing.T) {
	inner := &testError{Kind: kindB}
	err := fmt.Errorf("context: %w", &testError{Kind: kindA, Err: inner})
	if !errors.Is(err, kindA) || !errors.Is(err, kindB) {
		t.Fatal("errors.Is does not find both kinds of the chain")
	}
	if errors.Is(err, kindC) {
		t.Fatal("errors.Is matched a kind the chain does not carry")
	}
	if errors.Is(err, errkind.Kind[other](1)) {
		t.Fatal("a kind of another space with the same value matched")
	}
	if name, ok := errkind.Name(err); !ok || name != "Alpha" {
		t.Fatalf("Name = %q, %v; want the outermost kind Alpha", name, ok)
	}
	if k, ok := errkind.Of[space](err); !ok || k != kindA {
		t.Fatalf("Of = %v, %v; want Alpha", k, ok)
	}
	if _, ok := errkind.Of[other](err); ok {
		t.Fatal("Of found a kind of another space")
	}
	if k, ok := errkind.Of[space](fmt.Errorf("bare: %w", kindC)); !ok || k != kindC {
		t.Fatalf("Of of a bare kind = %v, %v; want Gamma", k, ok)
	}
	if _, ok := errkind.Name(errors.New("plain")); ok {
		t.Fatal("Name named an error without a kind")
	}
}

func TestAllAndParse(t *testing.T) {
	all := errkind.All[space]()
	if len(all) != 3 || all[0] != kindA || all[1] != kindB || all[2] != kindC {
		t.Fatalf("All = %v", all)
	}
	if k, ok := errkind.Parse[space]("Gamma"); !ok || k != kindC {
		t.Fatalf("Parse(Gamma) = %v, %v", k, ok)
	}
	if _, ok := errkind.Parse[space]("Delta"); ok {
		t.Fatal("Parse accepted an unknown name")
	}
}

func TestExpand(t *testing.T) {
	defer func(d string) { table.Kinds[kindC].Detail = d }(table.Kinds[kindC].Detail)
	for template, want := range map[string]string{
		"plain":              "plain",
		"a {x} b {yy}":       "a <x> b 7",
		"{x}{yy}":            "<x>7",
		"{}: {x}":            "test: Gamma: <x>",
		"{missing} stays":    "{missing} stays",
		"open { never shut":  "open { never shut",
		"shut } never {open": "shut } never {open",
	} {
		table.Kinds[kindC].Detail = template
		if got := kindC.Expand("x", "<x>", "yy", 7); got != want {
			t.Errorf("Expand(%q) = %q, want %q", template, got, want)
		}
	}
	if got := kindB.Expand("x", 1); got != "test: beta went wrong" {
		t.Errorf("Expand of a kind without a template = %q", got)
	}
	if got := kind(9).Expand(); got != "test: TestKind(9)" {
		t.Errorf("Expand of a value that is not a kind = %q", got)
	}
}

func TestGenericError(t *testing.T) {
	cause := errors.New("the cause")
	for _, c := range []struct {
		err  *errkind.Error[space]
		want string
	}{
		{&errkind.Error[space]{Kind: kindA}, "test: Alpha"},
		{&errkind.Error[space]{Kind: kindB, Detail: `"v"`}, `test: beta went wrong: "v"`},
		{&errkind.Error[space]{Kind: kindB, Err: cause}, "test: beta went wrong: the cause"},
		{&errkind.Error[space]{Kind: kindC, Detail: "d", Err: cause}, "test: Gamma: d: the cause"},
	} {
		if got := c.err.Error(); got != c.want {
			t.Errorf("Error() = %q, want %q", got, c.want)
		}
	}
	err := fmt.Errorf("outer: %w", &errkind.Error[space]{Kind: kindA, Err: &testError{Kind: kindB, Err: cause}})
	if !errors.Is(err, kindA) || !errors.Is(err, kindB) || !errors.Is(err, cause) {
		t.Fatal("errors.Is does not see the kind, the cause's kind and the cause")
	}
	var ge *errkind.Error[space]
	if !errors.As(err, &ge) || ge.Kind != kindA {
		t.Fatal("errors.As does not find the generic error")
	}
	if name, ok := errkind.Name(err); !ok || name != "Alpha" {
		t.Fatalf("Name = %q, %v; want Alpha", name, ok)
	}
}
