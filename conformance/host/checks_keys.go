package host

import (
	"fmt"
	"math"
	"math/bits"

	"github.com/splashv5/conform/impl/protocol"
)

// keyLaunches is how many workers CNF-HBOOT-06 starts.
const keyLaunches = 12

// keyChecks judge where session keys come from: a fixed seed, a counter or a clock gives keys
// that repeat or that differ in a few bits only.
func keyChecks() []*Check {
	return []*Check{
		{ID: "CNF-HBOOT-06", Level: must, Requirements: []string{"FRM-041", "TRN-093", "HDR-020"}, Features: []string{FeatureInvoke},
			Title:       fmt.Sprintf("session keys are unpredictable: %d launches give distinct keys that pass a simple randomness test", keyLaunches),
			Unreachable: unreachableKey,
			Run: func(t *T) {
				var keys [][protocol.SessionKeyBytes]byte
				for range keyLaunches {
					t.RenewDeadline()
					w := t.session(echoGrant())
					raw, err := w.boot.Key.ExposeSecret()
					if err != nil {
						t.Internal(err)
					}
					keys = append(keys, raw)
				}
				if why := predictable(keys); why != "" {
					t.Failf("keys drawn from a cryptographic random source (FRM-041, TRN-093)", why)
				}
			}},
	}
}

// predictable says why keys do not look independently random, or returns "". Every two keys
// must differ in about half their bits (a counter or a shared seed with a small change fails,
// a repeated key fails), and the ones over all the keys must be about half the bits (a key of
// mostly zeros fails). Each bound is at least 8 standard deviations from its mean, so a random
// source fails it with probability below 10^-12.
func predictable(keys [][protocol.SessionKeyBytes]byte) string {
	const keyBits = 8 * protocol.SessionKeyBytes
	for i := range keys {
		for j := range i {
			d := 0
			for k := range keys[i] {
				d += bits.OnesCount8(keys[i][k] ^ keys[j][k])
			}
			if d < keyBits/4 || d > keyBits*3/4 {
				return fmt.Sprintf("keys %d and %d differ in %d of %d bits", j+1, i+1, d, keyBits)
			}
		}
	}
	ones := 0
	for _, k := range keys {
		for _, b := range k {
			ones += bits.OnesCount8(b)
		}
	}
	n := float64(len(keys) * keyBits)
	if dev := math.Abs(float64(ones)-n/2) / (math.Sqrt(n) / 2); dev > 8 {
		return fmt.Sprintf("%d of %.0f key bits are ones (%.1f standard deviations off)", ones, n, dev)
	}
	return ""
}
