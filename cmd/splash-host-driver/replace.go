package main

// retire stops the running worker before a new start replaces it (HDR-053): its process group
// is killed and its pipes released, without a frame; an invocation it was running is
// abandoned, its fate unknown.
func (s *session) retire() {
	if s == nil || fault == "keepold" {
		return
	}
	if s.mux != nil {
		s.mux.Abandon()
	}
	_, _ = s.proc.Terminate()
}
