package schema

import "testing"

// The compile error texts rendered from the kind table's templates.
func TestErrorTexts(t *testing.T) {
	for _, c := range []struct {
		err  *Error
		want string
	}{
		{&Error{Kind: ErrExpectedObject, Path: "$.a"}, "$.a: schema must be an object"},
		{&Error{Kind: ErrInvalidKeyword, Path: "$", Keyword: "minimum", Message: "must be a number"}, "$: invalid minimum: must be a number"},
		{&Error{Kind: ErrUnsupportedKeyword, Path: "$.b", Keyword: "oneOf"}, "$.b: unsupported schema keyword oneOf"},
		{&Error{Kind: ErrTooDeep, Path: "$", Maximum: 16}, "schema exceeds depth limit of 16"},
		{&Error{Kind: ErrTooLarge, Maximum: 32768}, "schema exceeds byte limit of 32768"},
		{&Error{Kind: 99}, "ErrorKind(99)"},
	} {
		if got := c.err.Error(); got != c.want {
			t.Errorf("Error() = %q, want %q", got, c.want)
		}
	}
}
