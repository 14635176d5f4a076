// Package errkind is the module's one error idiom. A package lists its failure rules as
// constants of a Kind and describes them in one Table (variant name, message, text template);
// its error type embeds the Kind and renders its data with Kind.Expand, or is Error when it
// carries only a detail and a cause. The Kind supplies String, Error, errors.Is matching and
// the variant name, which Name finds for any error of the module with one errors.As. The
// package imports nothing of the module, so every layer may use it.
package errkind

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Entry describes one kind.
type Entry struct {
	Name    string // the reference's variant name; an entry without one is not a kind
	Message string // the kind's error text after the table's prefix; "" means the name
	Detail  string // a template of an error's text, which Kind.Expand fills
	Doc     string // for a reader: what Name and Message leave out; no text shows it
}

// Table describes every kind of one Space.
type Table struct {
	Type        string  // the kind type's name, for a value that is not a kind: "ErrorKind(99)"
	Prefix      string  // starts the Error text of every kind: "protocol: "
	NameInError bool    // puts the variant name and ": " between the prefix and the message
	Kinds       []Entry // indexed by the kind's value; the zero kind and gaps stay empty
}

// Space is a package's set of kinds: a zero-size type whose Table describes them.
type Space interface {
	Table() *Table
}

// Kind is one failure rule of the space S. It is an error and an errors.Is target, which an
// error type embedding it (as its Kind field) matches too.
type Kind[S Space] uint16

func (k Kind[S]) entry() (Entry, bool) {
	var s S
	t := s.Table()
	if int(k) < len(t.Kinds) && t.Kinds[k].Name != "" {
		return t.Kinds[k], true
	}
	return Entry{}, false
}

// Valid reports whether k is one of the table's kinds.
func (k Kind[S]) Valid() bool {
	_, ok := k.entry()
	return ok
}

// String returns the variant name, or "Type(n)" for a value that is not a kind.
func (k Kind[S]) String() string {
	if e, ok := k.entry(); ok {
		return e.Name
	}
	var s S
	return s.Table().Type + "(" + strconv.Itoa(int(k)) + ")"
}

// Expand returns the kind's Detail template with {} replaced by the kind's Error text and
// each {name} by the value that follows name in fields, as fmt.Sprint writes it; a name
// missing from fields stays as it is. A kind without a template, and a value that is not a
// kind, give Error.
func (k Kind[S]) Expand(fields ...any) string {
	e, ok := k.entry()
	if !ok || e.Detail == "" {
		return k.Error()
	}
	template := e.Detail
	var b strings.Builder
	for {
		i := strings.IndexByte(template, '{')
		j := strings.IndexByte(template[i+1:], '}')
		if i < 0 || j < 0 {
			return b.String() + template
		}
		b.WriteString(template[:i])
		b.WriteString(field(k, template[i+1:i+1+j], fields))
		template = template[i+2+j:]
	}
}

// field returns the text of placeholder name for Expand.
func field[S Space](k Kind[S], name string, fields []any) string {
	if name == "" {
		return k.Error()
	}
	for i := 0; i+1 < len(fields); i += 2 {
		if fields[i] == name {
			return fmt.Sprint(fields[i+1])
		}
	}
	return "{" + name + "}"
}

// KindName returns the variant name, like String; it makes every kind, and every error that
// embeds one, a Named.
func (k Kind[S]) KindName() string { return k.String() }

// Error returns the table's prefix and the kind's message (after its name and ": " when the
// table says NameInError), or the prefix and the name when it has no message.
func (k Kind[S]) Error() string {
	var s S
	t := s.Table()
	e, ok := k.entry()
	switch {
	case !ok || e.Message == "":
		return t.Prefix + k.String()
	case t.NameInError:
		return t.Prefix + e.Name + ": " + e.Message
	}
	return t.Prefix + e.Message
}

// Is reports whether target is this kind.
func (k Kind[S]) Is(target error) bool {
	t, ok := target.(Kind[S])
	return ok && t == k
}

// kindOf returns k; through embedding, it lets Of find the kind of an error of the space.
func (k Kind[S]) kindOf() Kind[S] { return k }

// Error is an error of space S that carries no more than its kind, a detail and a cause. Its
// text is the kind's Error, then ": " and Detail when set, then ": " and the cause's text.
type Error[S Space] struct {
	Kind[S]
	Detail string
	Err    error
}

// Error returns the kind's text followed by the detail and the cause.
func (e *Error[S]) Error() string {
	msg := e.Kind.Error()
	if e.Detail != "" {
		msg += ": " + e.Detail
	}
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Unwrap returns the cause.
func (e *Error[S]) Unwrap() error { return e.Err }

// Named is implemented by every Kind and every error that embeds one.
type Named interface {
	error
	KindName() string
}

// Name returns the variant name of the outermost kind in err's chain, whatever its package.
func Name(err error) (string, bool) {
	var n Named
	if errors.As(err, &n) {
		return n.KindName(), true
	}
	return "", false
}

// Of returns the outermost kind of space S in err's chain.
func Of[S Space](err error) (Kind[S], bool) {
	var c interface{ kindOf() Kind[S] }
	if errors.As(err, &c) {
		return c.kindOf(), true
	}
	return 0, false
}

// All returns every kind of space S in value order.
func All[S Space]() []Kind[S] {
	var s S
	var out []Kind[S]
	for i, e := range s.Table().Kinds {
		if e.Name != "" {
			out = append(out, Kind[S](i))
		}
	}
	return out
}

// Parse returns the first kind of space S whose variant name is name.
func Parse[S Space](name string) (Kind[S], bool) {
	for _, k := range All[S]() {
		if k.String() == name {
			return k, true
		}
	}
	return 0, false
}
