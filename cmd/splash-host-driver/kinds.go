package main

import (
	"errors"

	"github.com/splashv5/conform/impl/transport"
)

// kind names an error after the reference's variants: the transport's kinds, or the
// authorizer's refusals (Denied before sending, InvalidResult after receiving).
func kind(err error) string {
	if k, ok := transport.KindOf(err); ok {
		return k.String()
	}
	var d denied
	if errors.As(err, &d) {
		return "Denied"
	}
	var r invalidResult
	if errors.As(err, &r) {
		return "InvalidResult"
	}
	return err.Error()
}

type denied struct{ error }
type invalidResult struct{ error }
