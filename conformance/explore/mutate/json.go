package mutate

import (
	"errors"
	"strings"
)

// ErrNotJSON is returned (wrapped) by a JSON-level mutator given a line that is not one JSON
// value.
var ErrNotJSON = errors.New("mutate: the line is not JSON")

// node is a JSON value as written: scalars keep their exact text (numbers their spelling,
// strings their escapes, with quotes), objects their member order and repeats.
type node struct {
	kind  byte // 'o' object, 'a' array, 's' string, 'n' number, 'l' literal
	raw   string
	keys  []string // raw keys, with quotes
	items []*node
}

// parse reads one JSON value covering all of b (no surrounding space allowed but between
// tokens). It is a mutation tool's reader, not a validator: it accepts what a frame writer
// produces and refuses the rest.
func parse(b []byte) (*node, error) {
	p := &parser{b: b}
	n, err := p.value(0)
	if err != nil {
		return nil, err
	}
	p.space()
	if p.i != len(p.b) {
		return nil, ErrNotJSON
	}
	return n, nil
}

type parser struct {
	b []byte
	i int
}

const maxParseDepth = 512

func (p *parser) space() {
	for p.i < len(p.b) && strings.IndexByte(" \t\r\n", p.b[p.i]) >= 0 {
		p.i++
	}
}

func (p *parser) value(depth int) (*node, error) {
	if depth > maxParseDepth {
		return nil, ErrNotJSON
	}
	p.space()
	if p.i >= len(p.b) {
		return nil, ErrNotJSON
	}
	switch c := p.b[p.i]; {
	case c == '{':
		p.i++
		n := &node{kind: 'o'}
		p.space()
		if p.i < len(p.b) && p.b[p.i] == '}' {
			p.i++
			return n, nil
		}
		for {
			p.space()
			k, err := p.str()
			if err != nil {
				return nil, err
			}
			p.space()
			if p.i >= len(p.b) || p.b[p.i] != ':' {
				return nil, ErrNotJSON
			}
			p.i++
			v, err := p.value(depth + 1)
			if err != nil {
				return nil, err
			}
			n.keys = append(n.keys, k)
			n.items = append(n.items, v)
			p.space()
			if p.i < len(p.b) && p.b[p.i] == ',' {
				p.i++
				continue
			}
			if p.i < len(p.b) && p.b[p.i] == '}' {
				p.i++
				return n, nil
			}
			return nil, ErrNotJSON
		}
	case c == '[':
		p.i++
		n := &node{kind: 'a'}
		p.space()
		if p.i < len(p.b) && p.b[p.i] == ']' {
			p.i++
			return n, nil
		}
		for {
			v, err := p.value(depth + 1)
			if err != nil {
				return nil, err
			}
			n.items = append(n.items, v)
			p.space()
			if p.i < len(p.b) && p.b[p.i] == ',' {
				p.i++
				continue
			}
			if p.i < len(p.b) && p.b[p.i] == ']' {
				p.i++
				return n, nil
			}
			return nil, ErrNotJSON
		}
	case c == '"':
		s, err := p.str()
		return &node{kind: 's', raw: s}, err
	case c == '-' || (c >= '0' && c <= '9'):
		start := p.i
		for p.i < len(p.b) && strings.IndexByte("+-.eE0123456789", p.b[p.i]) >= 0 {
			p.i++
		}
		return &node{kind: 'n', raw: string(p.b[start:p.i])}, nil
	default:
		for _, lit := range []string{"true", "false", "null"} {
			if strings.HasPrefix(string(p.b[p.i:]), lit) {
				p.i += len(lit)
				return &node{kind: 'l', raw: lit}, nil
			}
		}
		return nil, ErrNotJSON
	}
}

// str reads a string token and returns it with its quotes, escapes untouched.
func (p *parser) str() (string, error) {
	if p.i >= len(p.b) || p.b[p.i] != '"' {
		return "", ErrNotJSON
	}
	start := p.i
	p.i++
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case '\\':
			p.i += 2
		case '"':
			p.i++
			return string(p.b[start:p.i]), nil
		default:
			p.i++
		}
	}
	return "", ErrNotJSON
}

// write appends the compact JSON text of n.
func (n *node) write(dst []byte) []byte {
	switch n.kind {
	case 'o':
		dst = append(dst, '{')
		for k := range n.items {
			if k > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, n.keys[k]...)
			dst = append(dst, ':')
			dst = n.items[k].write(dst)
		}
		return append(dst, '}')
	case 'a':
		dst = append(dst, '[')
		for k, it := range n.items {
			if k > 0 {
				dst = append(dst, ',')
			}
			dst = it.write(dst)
		}
		return append(dst, ']')
	}
	return append(dst, n.raw...)
}

// walk returns every node of the tree in pre-order, the root first.
func (n *node) walk() []*node {
	out := []*node{n}
	for _, it := range n.items {
		out = append(out, it.walk()...)
	}
	return out
}
