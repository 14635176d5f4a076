package main

import (
	"encoding/binary"
	"encoding/hex"

	"lukechampine.com/blake3"

	"github.com/splashv5/conform/vectors/vectorfmt"
)

// storeSeq is one sequence of operations on an authenticated store over a fresh, empty
// backend, with the outcome of each written from the rules of sections 10.1, 10.3, 10.5 and
// 10.7: the store starts with key07 active under stoKID, and steps that name no record key
// address (stoNS, stoName).
type storeSeq struct {
	meta
	steps []vectorfmt.StoreStep
}

func stText(s string) *vectorfmt.Text {
	t := vectorfmt.Text(s)
	return &t
}

// Step builders. The record key is the test's unless at() names another.
func stLoad(e vectorfmt.StoreExpect) vectorfmt.StoreStep {
	return vectorfmt.StoreStep{Op: vectorfmt.StoreOpLoad, Expect: e}
}

func stCreate(payload string, e vectorfmt.StoreExpect) vectorfmt.StoreStep {
	return vectorfmt.StoreStep{Op: vectorfmt.StoreOpCreate, Payload: stText(payload), Expect: e}
}

func stReplace(expected uint64, payload string, e vectorfmt.StoreExpect) vectorfmt.StoreStep {
	return vectorfmt.StoreStep{Op: vectorfmt.StoreOpReplace, Expected: u64p(expected), Payload: stText(payload), Expect: e}
}

func stCreateFenced(token uint64, payload string, e vectorfmt.StoreExpect) vectorfmt.StoreStep {
	return vectorfmt.StoreStep{Op: vectorfmt.StoreOpCreateFenced, Token: u64p(token), Payload: stText(payload), Expect: e}
}

func stReplaceFenced(expected, token uint64, payload string, e vectorfmt.StoreExpect) vectorfmt.StoreStep {
	return vectorfmt.StoreStep{Op: vectorfmt.StoreOpReplaceFenced, Expected: u64p(expected), Token: u64p(token), Payload: stText(payload), Expect: e}
}

func stReserve(e vectorfmt.StoreExpect) vectorfmt.StoreStep {
	return vectorfmt.StoreStep{Op: vectorfmt.StoreOpReserveFence, Expect: e}
}

func stFence(e vectorfmt.StoreExpect) vectorfmt.StoreStep {
	return vectorfmt.StoreStep{Op: vectorfmt.StoreOpCurrentFence, Expect: e}
}

func stKey(op, id string, key [32]byte, e vectorfmt.StoreExpect) vectorfmt.StoreStep {
	return vectorfmt.StoreStep{Op: op, KeyID: id, KeyHex: hex.EncodeToString(key[:]), Expect: e}
}

func stRetire(id string, e vectorfmt.StoreExpect) vectorfmt.StoreStep {
	return vectorfmt.StoreStep{Op: vectorfmt.StoreOpRetireKey, KeyID: id, Expect: e}
}

// at makes a step address another record key.
func at(ns, name string, s vectorfmt.StoreStep) vectorfmt.StoreStep {
	s.Namespace, s.Name = ns, name
	return s
}

// Expectations.
var stDone = vectorfmt.StoreExpect{}

func stAbsent() vectorfmt.StoreExpect { return vectorfmt.StoreExpect{Absent: true} }

func stRecord(rev uint64, payload, keyID string) vectorfmt.StoreExpect {
	return vectorfmt.StoreExpect{Revision: u64p(rev), Payload: stText(payload), KeyID: keyID}
}

func stWritten(rev uint64, keyID string) vectorfmt.StoreExpect {
	return vectorfmt.StoreExpect{Revision: u64p(rev), KeyID: keyID}
}

func stFenceIs(f uint64) vectorfmt.StoreExpect { return vectorfmt.StoreExpect{Fence: u64p(f)} }

func stErr(kind string) vectorfmt.StoreExpect { return vectorfmt.StoreExpect{Error: kind} }

// stConflict is a WriteConflict with the current revision (0 for absent) and floor.
func stConflict(actual, floor uint64) vectorfmt.StoreExpect {
	e := vectorfmt.StoreExpect{Error: "WriteConflict", Floor: u64p(floor)}
	if actual == 0 {
		e.ActualAbsent = true
	} else {
		e.Actual = u64p(actual)
	}
	return e
}

func stFencingRequired(current uint64) vectorfmt.StoreExpect {
	return vectorfmt.StoreExpect{Error: "Backend", Cause: "FencingRequired", CurrentFence: u64p(current)}
}

func stFenceRejected(current, supplied uint64) vectorfmt.StoreExpect {
	return vectorfmt.StoreExpect{Error: "Backend", Cause: "FencingTokenRejected", CurrentFence: u64p(current), SuppliedFence: u64p(supplied)}
}

func storeSequenceCases() []storeSeq {
	const v2 = "storage-v2"
	key08 := fill32(0x08)
	big := 262145
	return []storeSeq{
		{meta{"a never-written record loads as no record, and its fence is 0 however often it is read", flags("StoreSequence"), reqs("STO-025", "STO-041")}, []vectorfmt.StoreStep{
			stLoad(stAbsent()), stFence(stFenceIs(0)), stFence(stFenceIs(0)), stLoad(stAbsent()),
		}},
		{meta{"create is revision 1, each replace adds one, and a load returns the last write", flags("StoreSequence"), reqs("STO-022", "STO-050")}, []vectorfmt.StoreStep{
			stCreate("a", stWritten(1, stoKID)), stLoad(stRecord(1, "a", stoKID)),
			stReplace(1, "b", stWritten(2, stoKID)), stReplace(2, "c", stWritten(3, stoKID)), stLoad(stRecord(3, "c", stoKID)),
		}},
		{meta{"a second create and a stale replace conflict with the current revision and floor and change nothing", flags("StoreSequence", "StateUnchanged"), reqs("STO-021", "STO-050", "STO-051")}, []vectorfmt.StoreStep{
			stCreate("a", stWritten(1, stoKID)), stCreate("x", stConflict(1, 1)), stReplace(2, "y", stConflict(1, 1)),
			stReplace(0, "z", stConflict(1, 1)), stLoad(stRecord(1, "a", stoKID)),
		}},
		{meta{"replacing an absent record conflicts with an absent revision and floor 0", flags("StoreSequence"), reqs("STO-021", "STO-050")}, []vectorfmt.StoreStep{
			stReplace(1, "a", stConflict(0, 0)), stLoad(stAbsent()),
		}},
		{meta{"a payload over 262,144 bytes is refused before the revision is compared", flags("StoreSequence", "CheckOrder"), reqs("STO-051")}, []vectorfmt.StoreStep{
			stCreate("a", stWritten(1, stoKID)),
			{Op: vectorfmt.StoreOpReplace, Expected: u64p(7), PayloadBytes: &big, Expect: stErr("PayloadTooLarge")},
			stLoad(stRecord(1, "a", stoKID)),
		}},
		{meta{"once a fence is reserved, a plain write is refused by the backend with the token, and nothing changes", flags("StoreSequence", "StateUnchanged"), reqs("STO-024", "STO-054")}, []vectorfmt.StoreStep{
			stReserve(stFenceIs(1)), stFence(stFenceIs(1)), stCreate("a", stFencingRequired(1)), stLoad(stAbsent()), stFence(stFenceIs(1)),
		}},
		{meta{"fenced writes: the reserved token writes, a lower one is rejected, 0 is invalid, a higher unreserved one becomes current and the current one is accepted", flags("StoreSequence"), reqs("STO-027", "STO-053", "STO-054")}, []vectorfmt.StoreStep{
			stReserve(stFenceIs(1)), stCreateFenced(1, "a", stWritten(1, stoKID)), stReserve(stFenceIs(2)),
			stReplaceFenced(1, 1, "b", stFenceRejected(2, 1)),
			stReplaceFenced(1, 0, "b", vectorfmt.StoreExpect{Error: "Backend", Cause: "InvalidFencingToken"}),
			stLoad(stRecord(1, "a", stoKID)),
			stReplaceFenced(1, 5, "c", stWritten(2, stoKID)), stFence(stFenceIs(5)),
			stReplaceFenced(2, 5, "d", stWritten(3, stoKID)), stFence(stFenceIs(5)), stLoad(stRecord(3, "d", stoKID)),
			stReserve(stFenceIs(6)),
		}},
		{meta{"a fenced write establishes its token first, so the fence moves even when the write then fails", flags("StoreSequence"), reqs("STO-053")}, []vectorfmt.StoreStep{
			{Op: vectorfmt.StoreOpCreateFenced, Token: u64p(3), PayloadBytes: &big, Expect: stErr("PayloadTooLarge")}, stFence(stFenceIs(3)), stLoad(stAbsent()),
			stReplaceFenced(1, 4, "a", stConflict(0, 0)), stFence(stFenceIs(4)),
			stCreate("a", stFencingRequired(4)),
		}},
		{meta{"operations on one record key leave another's record, floor and fence as they were", flags("StoreSequence"), reqs("STO-030")}, []vectorfmt.StoreStep{
			stCreate("a", stWritten(1, stoKID)), at(stoNS, "other", stReserve(stFenceIs(1))), at(stoNS, "other", stCreateFenced(1, "x", stWritten(1, stoKID))),
			at(stoNS, "other", stReplaceFenced(1, 1, "y", stWritten(2, stoKID))),
			stFence(stFenceIs(0)), stLoad(stRecord(1, "a", stoKID)), stReplace(1, "b", stWritten(2, stoKID)),
			at(stoNS, "other", stLoad(stRecord(2, "y", stoKID))),
		}},
		{meta{"an invalid record key is refused before any state is touched, namespace first", flags("StoreSequence", "CheckOrder"), reqs("STO-001", "STO-031")}, []vectorfmt.StoreStep{
			at("Bad", stoName, stCreate("a", stErr("InvalidNamespace"))),
			at("Bad", "a/b", stReserve(stErr("InvalidNamespace"))),
			at(stoNS, "a/b", stReserve(stErr("InvalidName"))),
			at(stoNS, "a/b", stLoad(stErr("InvalidName"))),
			stFence(stFenceIs(0)), stLoad(stAbsent()),
		}},
		{meta{"a backend's answer is checked: a stored floor other than the new revision, and a conflict whose revision and floor break STO-040, are refused; a consistent conflict is a WriteConflict with the backend's revision and floor", flags("StoreSequence"), reqs("STO-052")}, []vectorfmt.StoreStep{
			stCreate("a", stWritten(1, stoKID)),
			answered(stReplace(1, "b", vectorfmt.StoreExpect{Error: "RevisionFloorMismatch", Actual: u64p(2), Floor: u64p(5)}), vectorfmt.StoreBackendOutcome{Stored: true, Floor: 5}),
			answered(stReplace(1, "c", vectorfmt.StoreExpect{Error: "RevisionFloorMismatch", Actual: u64p(3), Floor: u64p(2)}), vectorfmt.StoreBackendOutcome{Actual: u64p(3), Floor: 2}),
			answered(stReplace(1, "d", vectorfmt.StoreExpect{Error: "RollbackDetected", Actual: u64p(1), Floor: u64p(2)}), vectorfmt.StoreBackendOutcome{Actual: u64p(1), Floor: 2}),
			answered(stReplace(1, "e", stConflict(2, 2)), vectorfmt.StoreBackendOutcome{Actual: u64p(2), Floor: 2}),
			answered(stReplace(1, "f", stConflict(0, 0)), vectorfmt.StoreBackendOutcome{ActualAbsent: true, Floor: 0}),
			stLoad(stRecord(1, "a", stoKID)),
		}},
		{meta{"keyring: writes use the active key, the active key and an unknown id cannot be retired, a retired key's records no longer verify", flags("StoreSequence", "KeyRotation"), reqs("STO-005", "STO-006")}, []vectorfmt.StoreStep{
			stCreate("a", stWritten(1, stoKID)),
			stKey(vectorfmt.StoreOpRotateKey, v2, key08, stDone),
			at(stoNS, "other", stCreate("b", stWritten(1, v2))),
			stLoad(stRecord(1, "a", stoKID)),
			stKey(vectorfmt.StoreOpAddReadKey, stoKID, key07, stErr("DuplicateKeyId")),
			stRetire(v2, stErr("ActiveKeyCannotBeRetired")),
			stRetire("storage-v9", stErr("UnknownKeyId")),
			stRetire(stoKID, stDone),
			stLoad(stErr("UnknownKeyId")),
			at(stoNS, "other", stLoad(stRecord(1, "b", v2))),
		}},
	}
}

// indRecordCommitment computes the record commitment of STO-063 from its definition:
// BLAKE3 over the domain, lp(namespace), lp(name), u64be(revision) and lp(envelope).
func indRecordCommitment(namespace, name string, revision uint64, envelope []byte) string {
	lp := func(dst, b []byte) []byte { return append(binary.BigEndian.AppendUint64(dst, uint64(len(b))), b...) }
	msg := []byte("splash-storage/anchored-sqlite-record/v1")
	msg = lp(msg, []byte(namespace))
	msg = lp(msg, []byte(name))
	msg = binary.BigEndian.AppendUint64(msg, revision)
	msg = lp(msg, envelope)
	sum := blake3.Sum256(msg)
	return hex.EncodeToString(sum[:])
}

// commitmentCase is one record commitment.
type commitmentCase struct {
	meta
	namespace, name string
	revision        uint64
	envelope        string
}

func storageCommitmentCases() []commitmentCase {
	env := stoEnvelope(key07, stoKID, 1, []byte("hello"))
	return []commitmentCase{
		{meta{"the commitment of a sealed envelope at revision 1", flags("StorageCommitment"), reqs("STO-063")}, stoNS, stoName, 1, env},
		{meta{"the same envelope under another name commits differently", flags("StorageCommitment"), reqs("STO-063")}, stoNS, "other", 1, env},
		{meta{"the same envelope at another revision commits differently", flags("StorageCommitment"), reqs("STO-063")}, stoNS, stoName, 2, env},
		{meta{"empty envelope bytes at the largest revision", flags("StorageCommitment", "Boundary"), reqs("STO-063")}, "a", "b", 18446744073709551615, ""},
	}
}

// answered makes the backend answer a write step with out instead of writing.
func answered(s vectorfmt.StoreStep, out vectorfmt.StoreBackendOutcome) vectorfmt.StoreStep {
	s.BackendAnswers = &out
	return s
}
