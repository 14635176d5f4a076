// Package alphabet is the abstract alphabet of a worker session for the explorer (spec chapter
// 32): the host inputs as data, the concretizer that turns an abstract input into the exact
// bytes a worker reads (sealed by impl/protocol, so no second copy of the wire rules exists),
// the abstraction of what the worker does in answer, and the machine the specification implies
// for an alphabet, derived from the worker rules of impl/protocol. The probes (probe.go) are
// symbols that random sessions add and the learner never uses.
//
// Nothing here starts a process: a driver writes the bytes Concretize returns and hands what it
// read back to Abstract.
package alphabet

import (
	"fmt"
	"slices"

	"github.com/splashv5/conform/impl/protocol"
)

// Need names an optional capability a worker declares; a symbol that requires one is left out
// of the alphabet of a worker that lacks it.
type Need string

// The needs a symbol may require.
const (
	NeedDurable      Need = "durable"
	NeedCancel       Need = "cancel"
	NeedCompensation Need = "compensation"
	NeedStoreFault   Need = "store-fault"
)

// Name is an abstract input: the name of a symbol. It is the input type of learned machines.
type Name string

// The symbols of the worker alphabet.
const (
	OpenBaseline    Name = "open_baseline"    // open_session granting the ordinary profile tools
	OpenCancellable Name = "open_cancellable" // open_session granting only the slow tools
	Invoke          Name = "invoke"           // a quick invoke under a fresh request id
	InvokeSlow      Name = "invoke_slow"      // a long conf.slow.cancellable invoke, fresh id
	InvokeReusedID  Name = "invoke_reused_id" // an invoke under the last request id used
	InvokeOverLimit Name = "invoke_over_limit"
	InvokeBadTag    Name = "invoke_bad_tag"   // a well-formed invoke whose tag is wrong
	InvokeWrongSeq  Name = "invoke_wrong_seq" // an invoke sealed one sequence number ahead
	InvokeForged    Name = "invoke_forged"    // an invoke for another session id, tagged
	ResultFromHost  Name = "result_from_host" // a worker-only message kind sent by the host
	OpenAgain       Name = "open_again"       // open_session after the session opened
	CancelCurrent   Name = "cancel_current"   // cancel naming the running invocation
	CancelFinished  Name = "cancel_finished"  // cancel naming the last completed invocation
	CancelUnknown   Name = "cancel_unknown"   // cancel naming a request id never used
	CloseSession    Name = "close_session"    // close_session for this session
	EndOfInput      Name = "end_of_input"     // the host closes the worker's input
	Dispatch        Name = "dispatch"         // dispatch_operation of a fresh operation key
	Reconcile       Name = "reconcile"        // reconcile_operation of the last operation key
	CompensateScope Name = "compensate_wrong_scope"
	StoreFault      Name = "store_fault" // the store fails its next operation
	Restart         Name = "restart"     // the worker process is replaced on the same journal
)

// Symbol describes one abstract input.
type Symbol struct {
	// Name is the abstract input.
	Name Name
	// Message is the message kind of the frame the symbol sends; empty for an input that is
	// not a frame (end of input, a store fault, a restart).
	Message protocol.MessageType
	// Variant says how the frame departs from the well-formed one ("" when it does not).
	Variant string
	// Spec lists the requirement IDs the symbol exercises.
	Spec []string
	// Needs lists what the worker must declare for the symbol to be used.
	Needs []Need
	// Simulated says that Expected can derive the symbol's behaviour from the worker rules; the
	// behaviour of the other symbols is taken from learning the reference worker.
	Simulated bool
}

// Symbols is the whole worker alphabet, in its fixed order.
var Symbols = []Symbol{
	{Name: OpenBaseline, Message: protocol.TypeOpenSession, Spec: []string{"WRK-011", "WRK-012", "CAN-023"}, Simulated: true},
	{Name: OpenCancellable, Message: protocol.TypeOpenSession, Spec: []string{"CAN-023"}, Needs: []Need{NeedCancel}, Simulated: true},
	{Name: Invoke, Message: protocol.TypeInvoke, Spec: []string{"WRK-022", "WRK-023", "CAN-004", "CAN-005", "CAN-014"}, Simulated: true},
	{Name: InvokeSlow, Message: protocol.TypeInvoke, Variant: "slow tool", Spec: []string{"CAN-004", "CAN-005"}, Needs: []Need{NeedCancel}, Simulated: true},
	{Name: InvokeReusedID, Message: protocol.TypeInvoke, Variant: "reused request id", Spec: []string{"AUZ-005", "AUZ-007", "WRK-030"}, Simulated: true},
	{Name: InvokeOverLimit, Message: protocol.TypeInvoke, Variant: "input over the grant's limit", Spec: []string{"AUZ-008", "AUZ-010", "WRK-030"}, Simulated: true},
	{Name: InvokeBadTag, Message: protocol.TypeInvoke, Variant: "bad tag", Spec: []string{"FRM-025", "WRK-021"}, Simulated: true},
	{Name: InvokeWrongSeq, Message: protocol.TypeInvoke, Variant: "wrong sequence", Spec: []string{"FRM-026", "WRK-021"}, Simulated: true},
	{Name: InvokeForged, Message: protocol.TypeInvoke, Variant: "forged session", Spec: []string{"FRM-027", "WRK-021"}, Simulated: true},
	{Name: ResultFromHost, Message: protocol.TypeResult, Variant: "worker-only kind", Spec: []string{"WRK-022", "CAN-011"}, Simulated: true},
	{Name: OpenAgain, Message: protocol.TypeOpenSession, Variant: "after opening", Spec: []string{"WRK-022", "CAN-011"}, Simulated: true},
	{Name: CancelCurrent, Message: protocol.TypeCancel, Spec: []string{"CAN-006", "CAN-007", "CAN-008", "CAN-012", "CAN-016", "CAN-022"}, Needs: []Need{NeedCancel}, Simulated: true},
	{Name: CancelFinished, Message: protocol.TypeCancel, Variant: "finished invocation", Spec: []string{"CAN-007", "CAN-012"}, Needs: []Need{NeedCancel}, Simulated: true},
	{Name: CancelUnknown, Message: protocol.TypeCancel, Variant: "unknown invocation", Spec: []string{"CAN-006", "CAN-007", "CAN-008"}, Needs: []Need{NeedCancel}, Simulated: true},
	{Name: CloseSession, Message: protocol.TypeCloseSession, Spec: []string{"CAN-009", "CAN-010", "CAN-022", "CAN-024"}, Simulated: true},
	{Name: EndOfInput, Spec: []string{"WRK-092", "CAN-013"}, Simulated: true},
	{Name: Dispatch, Message: protocol.TypeDispatchOperation, Spec: []string{"WRK-022", "WRK-040", "CAN-023"}, Needs: []Need{NeedDurable}},
	{Name: Reconcile, Message: protocol.TypeReconcileOperation, Spec: []string{"WRK-060", "WRK-061", "CAN-023"}, Needs: []Need{NeedDurable}},
	{Name: CompensateScope, Message: protocol.TypeCompensateOperation, Variant: "wrong journal scope", Spec: []string{"JRN-008", "WRK-050", "CAN-023"}, Needs: []Need{NeedDurable, NeedCompensation}, Simulated: true},
	{Name: StoreFault, Variant: "store fault", Spec: []string{"WRK-092"}, Needs: []Need{NeedDurable, NeedStoreFault}},
	{Name: Restart, Variant: "process restart", Spec: []string{"WRK-094"}, Needs: []Need{NeedDurable}},
}

// Lookup returns the symbol named n.
func Lookup(n Name) (Symbol, bool) {
	i := slices.IndexFunc(Symbols, func(s Symbol) bool { return s.Name == n })
	if i < 0 {
		return Symbol{}, false
	}
	return Symbols[i], true
}

// For returns the names of the symbols a worker with the given needs admits, in the
// alphabet's order.
func For(needs ...Need) []Name {
	var out []Name
	for _, s := range Symbols {
		ok := true
		for _, n := range s.Needs {
			ok = ok && slices.Contains(needs, n)
		}
		if ok {
			out = append(out, s.Name)
		}
	}
	return out
}

// Check returns an error naming the first name that is not a symbol of the alphabet or that
// is listed twice.
func Check(names []Name) error {
	for k, n := range names {
		if _, ok := Lookup(n); !ok {
			return fmt.Errorf("alphabet: unknown symbol %q", n)
		}
		if slices.Index(names, n) != k {
			return fmt.Errorf("alphabet: symbol %q listed twice", n)
		}
	}
	return nil
}
