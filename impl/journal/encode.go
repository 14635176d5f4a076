package journal

import (
	"strconv"

	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/protocol"
)

// appendJSON writes the journal as serde_json writes the reference type: fields in
// declaration order, compact, and every record's compensation written (null when absent).
func (j *Journal) appendJSON(dst []byte) []byte {
	dst = append(dst, `{"format_version":`...)
	dst = strconv.AppendUint(dst, uint64(j.formatVersion), 10)
	dst = append(dst, `,"scope":`...)
	dst = canonjson.AppendString(dst, j.scope)
	dst = append(dst, `,"records":[`...)
	for i := range j.records {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendRecord(dst, &j.records[i])
	}
	return append(dst, "]}"...)
}

func appendRecord(dst []byte, r *Record) []byte {
	dst = append(dst, `{"tool":`...)
	dst = canonjson.AppendString(dst, r.Tool)
	dst = append(dst, `,"operation_key":`...)
	dst = canonjson.AppendString(dst, r.OperationKey)
	dst = append(dst, `,"input_fingerprint":`...)
	dst = canonjson.AppendString(dst, r.InputFingerprint)
	dst = append(dst, `,"state":`...)
	dst = r.State.AppendJSON(dst)
	dst = append(dst, `,"compensation":`...)
	if c := r.Compensation; c == nil {
		dst = append(dst, "null"...)
	} else {
		dst = append(dst, `{"compensation_key":`...)
		dst = canonjson.AppendString(dst, c.CompensationKey)
		dst = append(dst, `,"input_fingerprint":`...)
		dst = canonjson.AppendString(dst, c.InputFingerprint)
		dst = append(dst, `,"grant_fingerprint":`...)
		dst = canonjson.AppendString(dst, c.GrantFingerprint)
		dst = append(dst, `,"state":`...)
		dst = c.State.AppendJSON(dst)
		dst = append(dst, '}')
	}
	return append(dst, '}')
}

// recordLen returns the serialized length of a record, using the journal's scratch buffer.
func (j *Journal) recordLen(r *Record) int {
	j.scratch = appendRecord(j.scratch[:0], r)
	return len(j.scratch)
}

// stateLen returns the serialized length of a state, using the journal's scratch buffer.
func (j *Journal) stateLen(s protocol.OperationStatus) int {
	j.scratch = s.AppendJSON(j.scratch[:0])
	return len(j.scratch)
}
