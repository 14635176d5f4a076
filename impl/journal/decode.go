package journal

import (
	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/derive"
	"github.com/splashv5/conform/impl/protocol"
)

// FromJSON loads a journal (JRN-005): the raw length is checked first
// (OperationJournalTooLarge), then the JSON is parsed and decoded with the reference's serde
// rules under the number mode m (any failure is a Serialization error), then the journal is
// validated structurally.
func FromJSON(data []byte, m canonjson.Mode) (*Journal, error) {
	if len(data) > protocol.MaxWorkerOperationJournalBytes {
		return nil, &protocol.Error{Kind: protocol.ErrOperationJournalTooLarge, Actual: uint64(len(data)), Maximum: protocol.MaxWorkerOperationJournalBytes}
	}
	root, err := canonjson.Parse(data)
	if err != nil {
		return nil, serialization(err)
	}
	j := &Journal{}
	if err := decodeJournal(root, derive.Context{Mode: m}, j); err != nil {
		return nil, serialization(err)
	}
	if err := j.ensureValid(); err != nil {
		return nil, err
	}
	return j, nil
}

// FromJSONForScope loads a journal with FromJSON and then checks its scope with ValidateScope.
func FromJSONForScope(data []byte, scope string, m canonjson.Mode) (*Journal, error) {
	j, err := FromJSON(data, m)
	if err != nil {
		return nil, err
	}
	if err := j.ValidateScope(scope); err != nil {
		return nil, err
	}
	return j, nil
}

// serialization reports a parse or decode failure as the reference's Serialization error.
func serialization(err error) error {
	if _, ok := err.(*protocol.Error); ok {
		return err
	}
	return &protocol.Error{Kind: protocol.ErrSerialization, Message: err.Error()}
}

var (
	journalShape = derive.Struct{
		Name:        "WorkerOperationJournal",
		DenyUnknown: true,
		Fields:      []derive.Field{{Name: "format_version"}, {Name: "scope"}, {Name: "records"}},
	}
	recordShape = derive.Struct{
		Name:        "WorkerOperationRecord",
		DenyUnknown: true,
		Fields: []derive.Field{
			{Name: "tool"}, {Name: "operation_key"}, {Name: "input_fingerprint"}, {Name: "state"},
			{Name: "compensation", Default: true},
		},
	}
	compensationShape = derive.Struct{
		Name:        "WorkerCompensationRecord",
		DenyUnknown: true,
		Fields: []derive.Field{
			{Name: "compensation_key"}, {Name: "input_fingerprint"}, {Name: "grant_fingerprint"}, {Name: "state"},
		},
	}
)

func decodeJournal(n *canonjson.Node, c derive.Context, j *Journal) error {
	return journalShape.Decode(n, func(i int, v *canonjson.Node) error {
		var err error
		switch i {
		case 0:
			j.formatVersion, err = derive.U8(v, c)
		case 1:
			j.scope, err = derive.String(v)
		case 2:
			j.records = j.records[:0]
			err = derive.Seq(v, func(_ int, e *canonjson.Node) error {
				var r Record
				if err := decodeRecord(e, c, &r); err != nil {
					return err
				}
				j.records = append(j.records, r)
				return nil
			})
		}
		return err
	})
}

func decodeRecord(n *canonjson.Node, c derive.Context, r *Record) error {
	return recordShape.Decode(n, func(i int, v *canonjson.Node) error {
		var err error
		switch i {
		case 0:
			r.Tool, err = derive.String(v)
		case 1:
			r.OperationKey, err = derive.String(v)
		case 2:
			r.InputFingerprint, err = derive.String(v)
		case 3:
			r.State, err = decodeState(v, c)
		case 4:
			r.Compensation = nil
			if !derive.IsNull(v) {
				var cr CompensationRecord
				if err = decodeCompensation(v, c, &cr); err == nil {
					r.Compensation = &cr
				}
			}
		}
		return err
	})
}

func decodeCompensation(n *canonjson.Node, c derive.Context, cr *CompensationRecord) error {
	return compensationShape.Decode(n, func(i int, v *canonjson.Node) error {
		var err error
		switch i {
		case 0:
			cr.CompensationKey, err = derive.String(v)
		case 1:
			cr.InputFingerprint, err = derive.String(v)
		case 2:
			cr.GrantFingerprint, err = derive.String(v)
		case 3:
			cr.State, err = decodeState(v, c)
		}
		return err
	})
}

// decodeState decodes the internally tagged WorkerOperationState (the statuses plus pending)
// with the protocol package's serde rules; validation happens later.
func decodeState(n *canonjson.Node, c derive.Context) (protocol.OperationStatus, error) {
	return protocol.DecodeOperationStateNode(n, c)
}
