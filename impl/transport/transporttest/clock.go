// Package transporttest holds test doubles for the transport package's injected edges.
package transporttest

import (
	"sync"
	"time"

	"github.com/splashv5/conform/impl/transport"
)

// ManualClock is a transport.Clock (and a runtime clock through Now) that moves only when a
// test calls Advance. It starts at a fixed instant, so tests are reproducible.
type ManualClock struct {
	mu     sync.Mutex
	now    time.Time
	timers []*manualTimer
}

type manualTimer struct {
	c       *ManualClock
	at      time.Time
	f       func()
	stopped bool
	fired   bool
}

// NewManualClock returns a clock set to 2023-11-14 22:13:20 UTC (Unix 1,700,000,000).
func NewManualClock() *ManualClock { return &ManualClock{now: time.Unix(1_700_000_000, 0)} }

// Now returns the clock's current time.
func (c *ManualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// AfterFunc schedules f for when the clock reaches now+d.
func (c *ManualClock) AfterFunc(d time.Duration, f func()) transport.Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &manualTimer{c: c, at: c.now.Add(d), f: f}
	c.timers = append(c.timers, t)
	return t
}

// Stop cancels the timer; it reports false when the timer already fired or was stopped.
func (t *manualTimer) Stop() bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	if t.fired || t.stopped {
		return false
	}
	t.stopped = true
	return true
}

// Advance moves the clock by d and runs, in the caller's goroutine and in scheduling order,
// every timer that became due.
func (c *ManualClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	var due []*manualTimer
	for _, t := range c.timers {
		if !t.fired && !t.stopped && !t.at.After(c.now) {
			t.fired = true
			due = append(due, t)
		}
	}
	c.mu.Unlock()
	for _, t := range due {
		t.f()
	}
}
