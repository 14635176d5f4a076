package derive

import (
	"strconv"

	"github.com/splashv5/conform/impl/canonjson"
)

// Field describes one field of a [Struct], in declaration order.
type Field struct {
	// Name is the JSON key (the serde name).
	Name string
	// Default marks a field that may be absent: #[serde(default)] fields and Option fields.
	// An absent field is simply not passed to the decode callback; the caller's zero value
	// is the default.
	Default bool
}

// Struct describes a struct with #[derive(Deserialize)].
//
// The description is static; decoding a value passes a callback that receives each present
// field's index and node, so one description serves every decode without allocation.
type Struct struct {
	// Name is the Rust type name, used in messages.
	Name string
	// DenyUnknown is #[serde(deny_unknown_fields)]: an unknown key is an error rather than
	// skipped.
	DenyUnknown bool
	// Fields are the fields in declaration order (at most 64).
	Fields []Field
}

// FieldFunc decodes the field with index i (into Struct.Fields) from node v.
type FieldFunc func(i int, v *canonjson.Node) error

// Decode applies serde's struct rules to n and calls field once for every present field.
//
// An object is matched by key: exact-case keys, a repeated known key is an error
// ("duplicate field"), an unknown key is skipped or, with DenyUnknown, an error, and a
// missing field without Default is an error. Fields are visited in document order.
//
// An array is the positional form: element i is field i. Once the array runs out, the
// remaining fields must all have Default; an array longer than the field list is an error.
//
// Any other JSON kind is an error. Errors from field are returned with the field name
// prefixed to their path.
func (s *Struct) Decode(n *canonjson.Node, field FieldFunc) error {
	if n == nil {
		return invalidType(n, "struct "+s.Name)
	}
	n = canonjson.Expand(n)
	switch n.Kind {
	case canonjson.NodeObject:
		return s.decodeObject(n, field)
	case canonjson.NodeArray:
		return s.decodeArray(n, field)
	}
	return invalidType(n, "struct "+s.Name)
}

// Index returns the index of the field called name, or -1.
func (s *Struct) Index(name string) int {
	for i := range s.Fields {
		if s.Fields[i].Name == name {
			return i
		}
	}
	return -1
}

func (s *Struct) decodeObject(n *canonjson.Node, field FieldFunc) error {
	var seen uint64
	for _, m := range n.Members {
		i := s.Index(m.Key)
		if i < 0 {
			if s.DenyUnknown {
				return &Error{Reason: "unknown field `" + clip(m.Key) + "` in struct " + s.Name}
			}
			continue
		}
		bit := uint64(1) << uint(i)
		if seen&bit != 0 {
			return &Error{Reason: "duplicate field `" + clip(m.Key) + "`"}
		}
		seen |= bit
		if err := field(i, m.Value); err != nil {
			return AtField(err, m.Key)
		}
	}
	for i, f := range s.Fields {
		if !f.Default && seen&(uint64(1)<<uint(i)) == 0 {
			return &Error{Reason: "missing field `" + f.Name + "`"}
		}
	}
	return nil
}

func (s *Struct) decodeArray(n *canonjson.Node, field FieldFunc) error {
	for i, f := range s.Fields {
		if i >= len(n.Elems) {
			if !f.Default {
				return &Error{Reason: "invalid length " + strconv.Itoa(len(n.Elems)) + ", expected " + s.expecting()}
			}
			continue
		}
		if err := field(i, n.Elems[i]); err != nil {
			return AtField(err, f.Name)
		}
	}
	if len(n.Elems) > len(s.Fields) {
		return &Error{Reason: "invalid length " + strconv.Itoa(len(n.Elems)) + ", expected " + s.expecting()}
	}
	return nil
}

func (s *Struct) expecting() string {
	if len(s.Fields) == 1 {
		return "struct " + s.Name + " with 1 element"
	}
	return "struct " + s.Name + " with " + strconv.Itoa(len(s.Fields)) + " elements"
}
