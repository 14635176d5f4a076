// Package learn infers a deterministic Mealy machine black-box over a membership oracle that
// answers whole input words, each from the system's initial state (in the explorer, each word
// runs in a fresh worker process): L* with Rivest–Schapire counterexample processing (Learn)
// and L# (LearnLSharp), which asks fewer queries.
//
// Queries go through a prefix-tree cache (a word whose answer is known, or a prefix of a known
// word, is never asked again), are gathered into batches that an oracle may run in parallel, and
// are counted against a budget. The cache also checks that the oracle is deterministic: an
// answer that contradicts an earlier one on a common prefix ends learning with a
// *NondeterminismError instead of looping. Equivalence is approximated by the W-method or the
// Wp-method with a number of extra states and by seeded random walks.
package learn

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
)

// Oracle answers membership queries. For every word of a batch, it runs the word from the
// system's initial state and answers the output word, of the same length. The words of one
// batch are independent and may run in parallel.
type Oracle[I, O comparable] interface {
	Query(ctx context.Context, words [][]I) ([][]O, error)
}

// OracleFunc adapts a function to Oracle.
type OracleFunc[I, O comparable] func(ctx context.Context, words [][]I) ([][]O, error)

// Query calls f.
func (f OracleFunc[I, O]) Query(ctx context.Context, words [][]I) ([][]O, error) {
	return f(ctx, words)
}

// Parallel returns an oracle that answers each word of a batch with run, on at most n
// goroutines at once (n < 1 means 1). The first error cancels the rest of the batch.
func Parallel[I, O comparable](n int, run func(ctx context.Context, word []I) ([]O, error)) Oracle[I, O] {
	n = max(n, 1)
	return OracleFunc[I, O](func(ctx context.Context, words [][]I) ([][]O, error) {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		out := make([][]O, len(words))
		errs := make([]error, len(words))
		next := make(chan int)
		var wg sync.WaitGroup
		for range min(n, len(words)) {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for k := range next {
					out[k], errs[k] = run(ctx, words[k])
					if errs[k] != nil {
						cancel()
					}
				}
			}()
		}
	feed:
		for k := range words {
			select {
			case next <- k:
			case <-ctx.Done():
				break feed
			}
		}
		close(next)
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			return nil, err
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		return out, nil
	})
}

// ErrBudget is returned (wrapped) when learning would send more membership queries than the
// budget allows.
var ErrBudget = errors.New("learn: query budget exhausted")

// ErrNondeterministic is matched by errors.Is on a *NondeterminismError.
var ErrNondeterministic = errors.New("learn: the system answers the same input word differently")

// ErrOracle is returned (wrapped) when the oracle answers a word with an output word of another
// length, or an equivalence oracle's counterexample is not one.
var ErrOracle = errors.New("learn: oracle misbehaves")

// NondeterminismError reports two answers of the system that disagree on a common prefix: Word
// was answered First earlier and Second now (both cut to Word's length).
type NondeterminismError[I, O comparable] struct {
	Word          []I
	First, Second []O
}

// Error describes the word and both answers.
func (e *NondeterminismError[I, O]) Error() string {
	return fmt.Sprintf("learn: the system is not deterministic: input word %v was answered %v, then %v", e.Word, e.First, e.Second)
}

// Is matches ErrNondeterministic.
func (e *NondeterminismError[I, O]) Is(target error) bool { return target == ErrNondeterministic }

// node is one node of the prefix-tree cache: the output of the last input of the word that
// leads to it.
type node[I, O comparable] struct {
	out      O
	children map[I]*node[I, O]
}

// Stats counts the work of a learning run.
type Stats struct {
	// Queries is the number of words sent to the oracle, and Symbols their total length.
	Queries, Symbols int
	// EquivalenceQueries is the part of Queries sent while looking for counterexamples.
	EquivalenceQueries int
	// Batches is the number of calls of the oracle.
	Batches int
	// CacheHits counts words answered by the cache without asking the oracle.
	CacheHits int
	// Rounds is the number of hypotheses built; Counterexamples the number that were wrong.
	Rounds, Counterexamples int
}

// Queries is the cached, batched and budgeted membership oracle that the learner and the
// equivalence oracles share.
type Queries[I, O comparable] struct {
	oracle      Oracle[I, O]
	root        *node[I, O]
	batch       int
	budget      int
	equivalence bool
	stats       Stats
	sink        func(O) (O, bool)
}

// NewQueries returns a cache over oracle that sends at most batch words per call (0: 64) and at
// most budget words in all (0: no bound).
func NewQueries[I, O comparable](oracle Oracle[I, O], batch, budget int) *Queries[I, O] {
	if batch <= 0 {
		batch = 64
	}
	return &Queries[I, O]{oracle: oracle, root: &node[I, O]{}, batch: batch, budget: budget}
}

// WithSink declares the system's sink outputs: when sink(o) reports true for an output o,
// every later output of the same word is the returned one, so the cache answers any extension
// of a word that reached o without asking (a worker process that ended answers nothing more).
// An oracle answer that contradicts the declaration fails with ErrOracle. It returns q.
func (q *Queries[I, O]) WithSink(sink func(O) (O, bool)) *Queries[I, O] {
	q.sink = sink
	return q
}

// Stats returns the counts so far.
func (q *Queries[I, O]) Stats() Stats { return q.stats }

// lookup returns the cached answer of word.
func (q *Queries[I, O]) lookup(word []I) ([]O, bool) {
	n := q.root
	out := make([]O, 0, len(word))
	for _, x := range word {
		c, ok := n.children[x]
		if !ok {
			return nil, false
		}
		out = append(out, c.out)
		n = c
		if q.sink != nil {
			if after, ok := q.sink(c.out); ok {
				for len(out) < len(word) {
					out = append(out, after)
				}
				return out, true
			}
		}
	}
	return out, true
}

// insert stores an answer, checking it against what the cache knows.
func (q *Queries[I, O]) insert(word []I, out []O) error {
	if q.sink != nil {
		for k, o := range out {
			after, ok := q.sink(o)
			if !ok {
				continue
			}
			for j := k + 1; j < len(out); j++ {
				if out[j] != after {
					return fmt.Errorf("%w: word %v was answered %v after the sink output %v at %d", ErrOracle, word, out[j], o, k)
				}
			}
			break
		}
	}
	n := q.root
	for k, x := range word {
		c, ok := n.children[x]
		if !ok {
			if n.children == nil {
				n.children = map[I]*node[I, O]{}
			}
			c = &node[I, O]{out: out[k]}
			n.children[x] = c
		} else if c.out != out[k] {
			first, _ := q.lookup(word[:k+1])
			return &NondeterminismError[I, O]{Word: slices.Clone(word[:k+1]), First: first, Second: slices.Clone(out[:k+1])}
		}
		n = c
	}
	return nil
}

// Ask answers every word, from the cache where it can and from the oracle for the rest. Words
// that are prefixes of other words asked in the same call are not sent on their own.
func (q *Queries[I, O]) Ask(ctx context.Context, words [][]I) ([][]O, error) {
	var pending [][]I
	for _, w := range words {
		if _, ok := q.lookup(w); ok {
			q.stats.CacheHits++
			continue
		}
		pending = append(pending, w)
	}
	// Longest first; a word that is a prefix of one already kept is answered by it.
	slices.SortStableFunc(pending, func(a, b []I) int { return len(b) - len(a) })
	kept := &node[I, O]{}
	var send [][]I
	for _, w := range pending {
		n, fresh := kept, false
		for _, x := range w {
			c, ok := n.children[x]
			if !ok {
				if n.children == nil {
					n.children = map[I]*node[I, O]{}
				}
				c = &node[I, O]{}
				n.children[x] = c
				fresh = true
			}
			n = c
		}
		if fresh {
			send = append(send, w)
		}
	}
	for len(send) > 0 {
		chunk := send[:min(q.batch, len(send))]
		send = send[len(chunk):]
		if q.budget > 0 && q.stats.Queries+len(chunk) > q.budget {
			return nil, fmt.Errorf("%w: %d queries sent, %d more needed, budget %d", ErrBudget, q.stats.Queries, len(chunk)+len(send), q.budget)
		}
		answers, err := q.oracle.Query(ctx, chunk)
		if err != nil {
			return nil, err
		}
		if len(answers) != len(chunk) {
			return nil, fmt.Errorf("%w: %d answers to %d words", ErrOracle, len(answers), len(chunk))
		}
		q.stats.Batches++
		for k, w := range chunk {
			if len(answers[k]) != len(w) {
				return nil, fmt.Errorf("%w: word %v of length %d answered with %d outputs", ErrOracle, w, len(w), len(answers[k]))
			}
			q.stats.Queries++
			q.stats.Symbols += len(w)
			if q.equivalence {
				q.stats.EquivalenceQueries++
			}
			if err := q.insert(w, answers[k]); err != nil {
				return nil, err
			}
		}
	}
	out := make([][]O, len(words))
	for k, w := range words {
		out[k], _ = q.lookup(w)
	}
	return out, nil
}
