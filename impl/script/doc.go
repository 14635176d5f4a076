// Package script is a small, bounded evaluator for the subset of canonical Splash source that
// the host capability runtime's documented examples use: `use mod.tool`, `use mod.std.assert`,
// `let`, literals, operators, `if`, `fn` and calls, `try … catch …`, `assert`, `parse_json` and
// `to_json`, and the four `mod.tool` methods with `.await()`.
//
// Source is parsed and compiled to a stack bytecode, then run by a Machine. Everything a script
// does to the outside world goes through the Host interface. Awaiting a pending promise
// suspends the evaluation: Eval or Resume returns an Evaluation with Suspended set, and the
// host later calls Resume with the promise's outcome. The suspended state is plain data; no
// goroutine is involved.
//
// A failing operation raises a catchable error: `try` catches it, otherwise the failing
// expression yields an error value, a Diagnostic is recorded and execution goes on. Exceeding a
// bound (instructions, deadline, string size, heap, operand stack, call frames) is an
// uncatchable stop that ends the evaluation. Source outside the subset is rejected with a
// *SyntaxError naming the construct.
package script
