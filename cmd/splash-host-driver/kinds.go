package main

import "github.com/splashv5/conform/impl/errkind"

// kind names an error after the reference's variants: the outermost error kind in its chain
// (a transport, ledger or step engine kind), or the driver's own refusals of the authorizer
// and the ledger (Denied before sending, InvalidResult after receiving). An error of no kind
// is named by its text.
func kind(err error) string {
	if name, ok := errkind.Name(err); ok {
		return name
	}
	return err.Error()
}

// denied is a refusal before anything was sent.
type denied struct{ error }

// KindName returns "Denied".
func (denied) KindName() string { return "Denied" }

// invalidResult is a refusal of what the worker answered.
type invalidResult struct{ error }

// KindName returns "InvalidResult".
func (invalidResult) KindName() string { return "InvalidResult" }
