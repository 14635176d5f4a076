// Package explore is the root of the generative explorer: it learns a port's session state
// machine black-box, compares it with the machine the specification implies, and drives long
// random and mutated sessions against it (spec chapter 32).
//
// This package is the explorer as a suite of the framework (package conformance): the process
// oracle (Launcher: one fresh worker per word, launched through internal/childproc with the
// worker command's placeholders), the methods (learning, random sessions with shrinking and
// replay files, in-session fuzzing), their findings as results CNF-EXP-*, the committed
// reference machine and the command lines (Main for `splash-conform explore`, ReplayMain for
// `splash-conform replay`). Its subpackages are the pure core, with no process I/O:
//
//   - mealy: deterministic Mealy machines, their comparison, minimization and drawings;
//   - learn: active learners (L* with Rivest–Schapire counterexample processing, and L#) over
//     a batched membership oracle, with a prefix-tree cache and a query budget;
//   - shrink: delta debugging and per-element shrinking of a failing step sequence;
//   - mutate: byte- and JSON-level frame mutators and the coverage corpus;
//   - walk: seeded random sessions kept alive by a guide machine, compared step by step;
//   - replay: the replay file of a shrunk failing session;
//   - alphabet: the abstract alphabet of a worker session, its concretizer, the output
//     abstraction, the judgement of a mutated step and the machine the specification implies.
package explore
