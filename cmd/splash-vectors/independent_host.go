package main

import (
	"encoding/binary"
	"encoding/hex"
	"strconv"

	"lukechampine.com/blake3"
)

// This file derives the host runtime's idempotency keys from the byte layout of RUN-003 and
// RUN-005 with the general-purpose BLAKE3 package, never through impl/host.

// hostSession and hostNonce are the pinned session number S and the fixed 16-byte host nonce
// of every host scenario.
const (
	hostSession = 7
	hostNonce   = "0123456789abcdef"
)

// indNonceLabel is hex(BLAKE3("splash-capability-session-nonce-v1" || u64be(S) ||
// u64be(len(N)) || N)).
func indNonceLabel(s uint64, nonce string) string {
	var buf []byte
	buf = append(buf, "splash-capability-session-nonce-v1"...)
	buf = binary.BigEndian.AppendUint64(buf, s)
	buf = binary.BigEndian.AppendUint64(buf, uint64(len(nonce)))
	buf = append(buf, nonce...)
	sum := blake3.Sum256(buf)
	return hex.EncodeToString(sum[:])
}

// indIdempotencyKey is "splash-" || nonce label || "-" || decimal(q) for the scenario nonce.
func indIdempotencyKey(q uint64) string {
	return "splash-" + indNonceLabel(hostSession, hostNonce) + "-" + strconv.FormatUint(q, 10)
}
