package canonjson

// slab hands out small slices carved from a few large chunks, so that the many short slices
// of a document (its nodes, the children of its containers, the elements and entries of its
// values) cost a handful of allocations instead of one each. Every slice it returns has its
// capacity equal to its length, so appending to one never writes into a neighbour.
//
// Chunks grow geometrically, from firstChunk elements up to maxChunk, so the memory a slab
// holds is at most about twice what it handed out (plus one maxChunk). A slab can be reset
// and its chunks reused; the caller must then overwrite every element it takes.
type slab[T any] struct {
	chunks [][]T // every chunk allocated so far, in order
	cur    int   // index into chunks of the chunk being carved; -1 before the first
	free   []T   // the unused tail of the chunk being carved (chunks[cur], or the reserved one)
	total  int   // elements in all chunks, the reserved one included
}

const (
	firstChunk = 16
	maxChunk   = 4096
)

// reserve makes an empty slab start with one chunk of exactly n elements, for a one-shot
// caller that knows how many it will take. That chunk is not listed in chunks (which would
// cost an allocation of its own), so reset does not keep it.
func (s *slab[T]) reserve(n int) {
	if s.total != 0 || n <= 0 {
		return
	}
	s.free = make([]T, n)
	s.total = n
}

// take returns the next n elements. They are zero unless the slab was reset since they were
// last handed out.
func (s *slab[T]) take(n int) []T {
	if n > len(s.free) {
		s.advance(n)
	}
	out := s.free[:n:n]
	s.free = s.free[n:]
	return out
}

// one returns a pointer to the next element.
func (s *slab[T]) one() *T {
	if len(s.free) == 0 {
		s.advance(1)
	}
	e := &s.free[0]
	s.free = s.free[1:]
	return e
}

// advance makes free hold at least n elements: the next kept chunk that is large enough,
// or a new one.
func (s *slab[T]) advance(n int) {
	if s.chunks == nil {
		s.cur = -1
	}
	for s.cur+1 < len(s.chunks) {
		s.cur++
		if c := s.chunks[s.cur]; len(c) >= n {
			s.free = c
			return
		}
	}
	size := min(max(s.total, firstChunk), maxChunk)
	c := make([]T, max(size, n))
	s.chunks = append(s.chunks, c)
	s.total += len(c)
	s.cur = len(s.chunks) - 1
	s.free = c
}

// reset makes every chunk available again, keeping the first chunks up to keep elements in
// all and dropping the rest.
func (s *slab[T]) reset(keep int) {
	kept := 0
	for i, c := range s.chunks {
		if kept+len(c) > keep {
			clear(s.chunks[i:])
			s.chunks = s.chunks[:i]
			break
		}
		kept += len(c)
	}
	s.total = kept
	s.cur = -1
	s.free = nil
}
