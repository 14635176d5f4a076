package main

import (
	"errors"

	"github.com/splashv5/conform/impl/host"
	"github.com/splashv5/conform/impl/transport"
	"github.com/splashv5/conform/impl/workflow"
)

// kind names an error after the reference's variants: the transport's kinds, the
// authorizer's and the ledger's refusals (Denied before sending, InvalidResult after
// receiving), or the ledger's and step engine's own variants.
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
	var l *host.LedgerError
	if errors.As(err, &l) {
		return l.Kind.String()
	}
	var w *workflow.Error
	if errors.As(err, &w) {
		return w.Kind.String()
	}
	return err.Error()
}

type denied struct{ error }
type invalidResult struct{ error }
