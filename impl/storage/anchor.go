package storage

import (
	"context"
	"encoding/binary"
	"fmt"
)

// Encoded anchor state: u64be(floor) || u64be(fence) || commitment (absent, or 32 bytes).
const (
	anchorStateBytes = 16
	commitmentBytes  = 32
)

// AnchorState is the rollback-protected state a durable backend keeps per record key: the
// revision floor, the commitment to the record at the floor (nil exactly when the floor is
// 0) and the fencing token.
type AnchorState struct {
	Floor      uint64
	Fence      uint64
	Commitment *[32]byte
}

// AppendAnchor appends the encoding of st to out: the floor and the fence as 8-byte
// big-endian integers, then the commitment when there is one.
func AppendAnchor(out []byte, st AnchorState) []byte {
	out = binary.BigEndian.AppendUint64(out, st.Floor)
	out = binary.BigEndian.AppendUint64(out, st.Fence)
	if st.Commitment != nil {
		out = append(out, st.Commitment[:]...)
	}
	return out
}

// ParseAnchor decodes an anchor encoded by AppendAnchor (nil = the initial state). A value
// of the wrong length is a plain error for the backend to wrap; a commitment that does not
// agree with the floor is ErrUnexpectedRecordCommitment or ErrMissingRecordCommitment.
func ParseAnchor(v []byte) (AnchorState, error) {
	if v == nil {
		return AnchorState{}, nil
	}
	if len(v) != anchorStateBytes && len(v) != anchorStateBytes+commitmentBytes {
		return AnchorState{}, fmt.Errorf("anchor state holds %d bytes, want %d or %d", len(v), anchorStateBytes, anchorStateBytes+commitmentBytes)
	}
	st := AnchorState{Floor: binary.BigEndian.Uint64(v), Fence: binary.BigEndian.Uint64(v[8:])}
	hasCommitment := len(v) > anchorStateBytes
	switch {
	case st.Floor == 0 && hasCommitment:
		return AnchorState{}, &Error{Kind: ErrUnexpectedRecordCommitment}
	case st.Floor != 0 && !hasCommitment:
		return AnchorState{}, &Error{Kind: ErrMissingRecordCommitment}
	case hasCommitment:
		c := [32]byte(v[anchorStateBytes:])
		st.Commitment = &c
	}
	return st, nil
}

// RollbackAnchor is a linearizable authority, outside the rollback domain of a local file,
// that holds the anchor state of record keys (an etcd cluster, for example). Local file
// backends anchored on it detect the restoration of an older copy of their file.
//
// LoadAnchor returns the current state (the zero state when never written). SwapAnchor
// replaces it with replacement only if it still equals expected, atomically, and reports
// whether it did. ReserveFence and EstablishFence follow the Backend rules for the fence.
type RollbackAnchor interface {
	LoadAnchor(ctx context.Context, key RecordKey) (AnchorState, error)
	SwapAnchor(ctx context.Context, key RecordKey, expected, replacement AnchorState) (bool, error)
	ReserveFence(ctx context.Context, key RecordKey) (uint64, error)
	EstablishFence(ctx context.Context, key RecordKey, token uint64) error
}

// LoadedRecord is what every durable backend returns for a record it read at revision rev
// under an anchor with the given floor and commitment: a copy of data (never nil), after the
// check that a record at the floor is the one the commitment names
// (ErrRecordCommitmentMismatch).
func LoadedRecord(key RecordKey, rev, floor uint64, commitment *[32]byte, data []byte) (*StoredRecord, error) {
	data = append([]byte{}, data...)
	if rev == floor && commitment != nil && RecordCommitment(key, rev, data) != *commitment {
		return nil, &Error{Kind: ErrRecordCommitmentMismatch}
	}
	return &StoredRecord{Revision: rev, Bytes: data}, nil
}
