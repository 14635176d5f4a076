package childproc

import "time"

// AwaitEnd waits until done is closed, or (for pid > 0) until process pid is dead though
// perhaps not yet reaped, or until deadline passes, whichever comes first. It reports whether
// the end came before the deadline. A zero deadline does not wait.
func AwaitEnd(pid int, done <-chan struct{}, deadline time.Time) bool {
	for {
		if pid > 0 && !Alive(pid) {
			return true
		}
		wait := time.Until(deadline)
		if wait <= 0 {
			select {
			case <-done:
				return true
			default:
				return false
			}
		}
		if pid > 0 {
			wait = min(wait, time.Millisecond)
		}
		timer := time.NewTimer(wait)
		select {
		case <-done:
			timer.Stop()
			return true
		case <-timer.C:
		}
	}
}

// KillGroupAndWait kills the process group led by pid and waits for its end as AwaitEnd does:
// until done is closed or the leader is dead, at most until deadline.
func KillGroupAndWait(pid int, done <-chan struct{}, deadline time.Time) (ended bool, err error) {
	err = KillGroup(pid)
	return AwaitEnd(pid, done, deadline), err
}
