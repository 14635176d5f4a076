package fakeworker

import (
	"bytes"
	"encoding/json"
	"io"
	"os"

	"github.com/splashv5/conform/impl/protocol"
)

// HoldFlag is the fake-worker argument that makes it stop reading its standard input in the
// middle of the host's compensate_operation frame, so that the host is still writing the frame
// when the runner kills it (CNF-HCOMP-01, WFL-022, HDR-043).
const HoldFlag = "--hold-compensation"

// Markers of a compensate_operation frame line: the message type comes before the request,
// whose payload comes after its whole binding (chapter 2's member order).
var (
	compensationType  = []byte(`"type":"` + string(protocol.TypeCompensateOperation) + `"`)
	compensationInput = []byte(`,"payload":`)
)

// MaxWatched bounds the bytes of one line a LineWatch keeps: the binding before the payload.
const MaxWatched = 4 << 10

// LineWatch follows a stream of frame lines and keeps the start of the line being written.
type LineWatch struct{ cur []byte }

// Feed takes the next bytes of the stream.
func (l *LineWatch) Feed(p []byte) {
	if i := bytes.LastIndexByte(p, '\n'); i >= 0 {
		l.cur, p = l.cur[:0], p[i+1:]
	}
	l.cur = append(l.cur, p[:min(len(p), MaxWatched-len(l.cur))]...)
}

// Held returns the unfinished line up to its payload when it is a compensate_operation frame
// whose binding has arrived, else nil.
func (l *LineWatch) Held() []byte {
	t := bytes.Index(l.cur, compensationType)
	if t < 0 {
		return nil
	}
	p := bytes.Index(l.cur[t:], compensationInput)
	if p < 0 {
		return nil
	}
	return l.cur[:t+p]
}

// HeldBinding is what the start of a held compensate_operation line names.
type HeldBinding struct {
	Message struct {
		Request struct {
			SessionID       string `json:"session_id"`
			Tool            string `json:"tool"`
			OperationKey    string `json:"operation_key"`
			CompensationKey string `json:"compensation_key"`
			TenantScope     string `json:"tenant_scope"`
		} `json:"request"`
	} `json:"message"`
}

// DecodeHeld reads the binding from the start of a held line (LineWatch.held), which ends
// just before the payload.
func DecodeHeld(start []byte) (HeldBinding, error) {
	var b HeldBinding
	err := json.Unmarshal(append(bytes.Clone(start), "}}}"...), &b)
	return b, err
}

// holdInput is the fake worker's relay of its standard input under HoldFlag: it forwards
// pending (read while the pipe was shrunk, shrinkInput), then what it reads, a page at a time,
// and stops reading for good once the line being written is a compensate_operation frame whose
// binding arrived: the host is then blocked writing the rest of the frame. It reports whether
// it stopped so (held) rather than at the end of the input or of out.
func holdInput(out io.Writer, in io.Reader, pending []byte) (held bool) {
	var watch LineWatch
	forward := func(p []byte) (more bool) {
		watch.Feed(p)
		_, err := out.Write(p)
		held = err == nil && watch.Held() != nil
		return err == nil && !held
	}
	if len(pending) > 0 && !forward(pending) {
		return held
	}
	buf := make([]byte, os.Getpagesize())
	for {
		n, err := in.Read(buf)
		if n > 0 && !forward(buf[:n]) {
			return held
		}
		if err != nil {
			return false
		}
	}
}
