//go:build unix

package logstore

import (
	"errors"
	"fmt"
	"syscall"
	"time"
)

func flock(fd, how int) error {
	for {
		err := syscall.Flock(fd, how)
		if err != syscall.EINTR {
			return err
		}
	}
}

// lock takes the exclusive lock on the open file that other processes honour, waiting up to
// the lock timeout, and returns its release. When the wait times out, the waiting goroutine
// releases the lock as soon as it gets it, and the next lock waits for that first.
func (b *Backend) lock() (unlock func(), err error) {
	if b.pending != nil {
		select {
		case <-b.pending:
			b.pending = nil
		case <-time.After(b.timeout):
			return nil, fmt.Errorf("the log file's lock was not released within %v", b.timeout)
		}
	}
	fd := int(b.f.Fd())
	release := func() { _ = flock(fd, syscall.LOCK_UN) }
	err = flock(fd, syscall.LOCK_EX|syscall.LOCK_NB)
	if err == nil {
		return release, nil
	}
	if !errors.Is(err, syscall.EWOULDBLOCK) {
		return nil, err
	}
	done := make(chan error, 1)
	go func() { done <- flock(fd, syscall.LOCK_EX) }()
	timer := time.NewTimer(b.timeout)
	defer timer.Stop()
	select {
	case err := <-done:
		if err != nil {
			return nil, err
		}
		return release, nil
	case <-timer.C:
		pending := make(chan struct{})
		b.pending = pending
		go func() {
			if <-done == nil {
				release()
			}
			close(pending)
		}()
		return nil, fmt.Errorf("another process held the log file's lock for more than %v", b.timeout)
	}
}
