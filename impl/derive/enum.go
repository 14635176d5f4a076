package derive

import (
	"strconv"
	"strings"

	"github.com/splashv5/conform/impl/canonjson"
)

func variantIndex(name string, variants []string) int {
	for i, v := range variants {
		if v == name {
			return i
		}
	}
	return -1
}

func unknownVariant(name string, variants []string) error {
	return &Error{Reason: "unknown variant `" + clip(name) + "`, expected one of `" + strings.Join(variants, "`, `") + "`"}
}

// Identifier decodes a variant identifier the way serde's derived variant visitor does when
// it is asked for an identifier: the tag of an internally tagged enum, and the first element
// of the positional form of an adjacently tagged enum.
//
// Directly from serde_json only a string naming a variant is accepted. From buffered Content
// serde also accepts a non-negative integer as a variant index, so {"state":1} selects the
// second variant there.
func Identifier(n *canonjson.Node, c Context, variants []string) (int, error) {
	if n == nil {
		return 0, invalidType(n, "variant identifier")
	}
	n = canonjson.Expand(n)
	switch n.Kind {
	case canonjson.NodeString:
		if i := variantIndex(n.Text, variants); i >= 0 {
			return i, nil
		}
		return 0, unknownVariant(n.Text, variants)
	case canonjson.NodeNumber:
		if c.Buffered && isPlainUint(n.Text) {
			idx, err := strconv.ParseUint(n.Text, 10, 64)
			if err == nil {
				if idx < uint64(len(variants)) {
					return int(idx), nil
				}
				return 0, &Error{Reason: "invalid value: integer `" + clip(n.Text) + "`, expected variant index 0 <= i < " + strconv.Itoa(len(variants))}
			}
		}
	}
	return 0, invalidType(n, "variant identifier")
}

// isPlainUint reports whether a number token is a non-negative integer without fraction or
// exponent (serde_json buffers such a token as an unsigned integer when it fits u64).
func isPlainUint(tok string) bool {
	if tok == "" || tok[0] == '-' {
		return false
	}
	for i := 0; i < len(tok); i++ {
		if tok[i] < '0' || tok[i] > '9' {
			return false
		}
	}
	return true
}

// UnitEnum decodes a field whose type is an enum of unit variants (serde's externally tagged
// representation), such as EnvelopeFormat or ResourceKind, and returns the variant index.
//
// Accepted forms: the variant name as a string, or a map with exactly one key naming the
// variant whose value is null. From buffered Content the value may also be an empty map,
// because serde's Content accepts {} where it expects a unit.
func UnitEnum(n *canonjson.Node, c Context, variants []string) (int, error) {
	if n == nil {
		return 0, invalidType(n, "string or map")
	}
	n = canonjson.Expand(n)
	switch n.Kind {
	case canonjson.NodeString:
		if i := variantIndex(n.Text, variants); i >= 0 {
			return i, nil
		}
		return 0, unknownVariant(n.Text, variants)
	case canonjson.NodeObject:
		if len(n.Members) != 1 {
			return 0, &Error{Reason: "invalid value: map, expected map with a single key"}
		}
		m := n.Members[0]
		i := variantIndex(m.Key, variants)
		if i < 0 {
			return 0, unknownVariant(m.Key, variants)
		}
		v := canonjson.Expand(m.Value)
		if v.Kind == canonjson.NodeNull || (c.Buffered && v.Kind == canonjson.NodeObject && len(v.Members) == 0) {
			return i, nil
		}
		return 0, AtField(invalidType(v, "unit variant"), m.Key)
	}
	return 0, invalidType(n, "string or map")
}

// Tagged describes an internally tagged enum (#[serde(tag = "...")]).
type Tagged struct {
	// Name is the Rust type name, used in messages.
	Name string
	// Tag is the tag key, such as "type" or "state".
	Tag string
	// Variants are the serialized variant names in declaration order.
	Variants []string
}

// Split finds the variant of an internally tagged enum and returns its body together with the
// (buffered) context in which to decode the body.
//
// In object form the tag key may appear anywhere; a second tag key is an error
// ("duplicate field"), a missing one too. The body is an object holding every other member
// in document order. In array form the first element is the tag and the body is an array of
// the remaining elements. The tag value follows [Identifier]. Any other JSON kind is an
// error.
//
// Decode a struct variant's body with [Struct.Decode] and a unit variant's body with
// [UnitBody].
func (t *Tagged) Split(n *canonjson.Node, c Context) (variant int, body *canonjson.Node, bodyCtx Context, err error) {
	if n == nil {
		return 0, nil, c, invalidType(n, "internally tagged enum "+t.Name)
	}
	n = canonjson.Expand(n)
	switch n.Kind {
	case canonjson.NodeObject:
		found := false
		members := make([]canonjson.Member, 0, len(n.Members))
		for _, m := range n.Members {
			if m.Key != t.Tag {
				members = append(members, m)
				continue
			}
			if found {
				return 0, nil, c, &Error{Reason: "duplicate field `" + t.Tag + "`"}
			}
			found = true
			variant, err = Identifier(m.Value, c, t.Variants)
			if err != nil {
				return 0, nil, c, AtField(err, t.Tag)
			}
		}
		if !found {
			return 0, nil, c, &Error{Reason: "missing field `" + t.Tag + "`"}
		}
		body = &canonjson.Node{Kind: canonjson.NodeObject, Members: members}
	case canonjson.NodeArray:
		if len(n.Elems) == 0 {
			return 0, nil, c, &Error{Reason: "missing field `" + t.Tag + "`"}
		}
		variant, err = Identifier(n.Elems[0], c, t.Variants)
		if err != nil {
			return 0, nil, c, AtIndex(err, 0)
		}
		body = &canonjson.Node{Kind: canonjson.NodeArray, Elems: n.Elems[1:]}
	default:
		return 0, nil, c, invalidType(n, "internally tagged enum "+t.Name)
	}
	bodyCtx, err = c.enterBuffer(body)
	if err != nil {
		return 0, nil, c, err
	}
	return variant, body, bodyCtx, nil
}

// UnitBody checks the body of a unit variant of an internally tagged enum: an object body may
// hold anything (every member is ignored); an array body must be empty.
func UnitBody(body *canonjson.Node) error {
	if body != nil && body.Kind == canonjson.NodeArray && len(body.Elems) != 0 {
		return &Error{Reason: "invalid length " + strconv.Itoa(len(body.Elems)) + ", expected unit variant"}
	}
	return nil
}

// Adjacent describes an adjacently tagged enum (#[serde(tag = "...", content = "...")]) whose
// variants all carry content.
type Adjacent struct {
	// Name is the Rust type name, used in messages.
	Name string
	// Tag and Content are the two keys, such as "format" and "value".
	Tag, Content string
	// Variants are the serialized variant names in declaration order.
	Variants []string
	// DenyUnknown is #[serde(deny_unknown_fields)].
	DenyUnknown bool
}

// Split finds the variant and the content node of an adjacently tagged enum and returns the
// context in which to decode the content.
//
// In object form the tag and the content may come in either order; other keys are skipped
// (or rejected with DenyUnknown); a repeated tag or content key is an error, and so is a
// missing one. The tag value is decoded like a unit enum ([UnitEnum]). When the content comes
// first serde buffers it, so the returned context is buffered.
//
// In array form the array must have exactly two elements: the tag, decoded as an
// [Identifier], and the content.
func (a *Adjacent) Split(n *canonjson.Node, c Context) (variant int, content *canonjson.Node, contentCtx Context, err error) {
	if n == nil {
		return 0, nil, c, invalidType(n, "adjacently tagged enum "+a.Name)
	}
	n = canonjson.Expand(n)
	switch n.Kind {
	case canonjson.NodeObject:
		tagSeen, contentFirst := false, false
		for _, m := range n.Members {
			switch m.Key {
			case a.Tag:
				if tagSeen {
					return 0, nil, c, &Error{Reason: "duplicate field `" + a.Tag + "`"}
				}
				tagSeen = true
				variant, err = UnitEnum(m.Value, c, a.Variants)
				if err != nil {
					return 0, nil, c, AtField(err, a.Tag)
				}
			case a.Content:
				if content != nil {
					return 0, nil, c, &Error{Reason: "duplicate field `" + a.Content + "`"}
				}
				content = m.Value
				contentFirst = !tagSeen
			default:
				if a.DenyUnknown {
					return 0, nil, c, &Error{Reason: "unknown field `" + clip(m.Key) + "`, expected `" + a.Tag + "` or `" + a.Content + "`"}
				}
			}
		}
		if !tagSeen {
			return 0, nil, c, &Error{Reason: "missing field `" + a.Tag + "`"}
		}
		if content == nil {
			return 0, nil, c, &Error{Reason: "missing field `" + a.Content + "`"}
		}
		if contentFirst {
			c, err = c.enterBuffer(content)
			if err != nil {
				return 0, nil, c, AtField(err, a.Content)
			}
		}
		return variant, content, c, nil
	case canonjson.NodeArray:
		if len(n.Elems) < 2 {
			return 0, nil, c, &Error{Reason: "invalid length " + strconv.Itoa(len(n.Elems)) + ", expected adjacently tagged enum " + a.Name}
		}
		variant, err = Identifier(n.Elems[0], c, a.Variants)
		if err != nil {
			return 0, nil, c, AtIndex(err, 0)
		}
		if len(n.Elems) > 2 {
			return 0, nil, c, &Error{Reason: "invalid length " + strconv.Itoa(len(n.Elems)) + ", expected adjacently tagged enum " + a.Name}
		}
		return variant, n.Elems[1], c, nil
	}
	return 0, nil, c, invalidType(n, "adjacently tagged enum "+a.Name)
}
