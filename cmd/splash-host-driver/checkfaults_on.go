//go:build splashfaults

package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"regexp"
	"sync"
	"unicode/utf8"

	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/jsonline"
	"github.com/splashv5/conform/impl/protocol"
	"github.com/splashv5/conform/impl/transport"
)

// The deliberate faults of this file emulate host ports that get an authorizer or decoder rule
// wrong in their own code; the reference driver cannot get them wrong through the libraries it
// calls, so each fault is a small stand-in for such a port.

// indexTag matches a state tag given as a variant index (ENC-051).
var indexTag = regexp.MustCompile(`"state":[0-9]`)

// workerOutput returns the worker's output as the host reads it. Under the state-index fault a
// line whose state tag is a variant index reaches the host as garbage: a decoder that accepts
// only the string form. Under readall the same filter is the fault: it reads each whole line
// before the host's 1 MiB bound sees any of it, as a port that bounds a line only once it has
// it. The filter starts at the first read, so that a session that never
// reads through it (a cancellable one) leaves the output alone.
func workerOutput(r io.Reader) io.Reader {
	if fault != "state-index" && fault != "readall" {
		return r
	}
	return &indexRefuser{src: r}
}

// indexRefuser is the state-index fault's filter.
type indexRefuser struct {
	src  io.Reader
	once sync.Once
	pr   *io.PipeReader
}

func (f *indexRefuser) Read(p []byte) (int, error) {
	f.once.Do(func() {
		pr, pw := io.Pipe()
		f.pr = pr
		go func() {
			br := bufio.NewReader(f.src)
			for {
				line, err := br.ReadBytes('\n')
				if indexTag.Match(line) {
					line = []byte("{\"state index refused\"}\n")
				}
				if _, werr := pw.Write(line); werr != nil || err != nil {
					pw.CloseWithError(err)
					return
				}
			}
		}()
	})
	return f.pr.Read(p)
}

// earlyCalls counts the invoke commands per session and tool for the budget-early fault.
var earlyCalls = map[*session]map[string]uint32{}

// chargeEarly is the budget-early fault: every invoke command counts against its tool's
// max_calls before it is authorized, so a refused invocation spends budget (AUZ-007, AUZ-008).
func (s *session) chargeEarly(tool string) error {
	if fault != "budget-early" {
		return nil
	}
	if earlyCalls[s] == nil {
		earlyCalls[s] = map[string]uint32{}
	}
	earlyCalls[s][tool]++
	for _, g := range s.auth.Manifest().Grants {
		if g.Tool == tool && earlyCalls[s][tool] > g.MaxCalls {
			return errors.New("call budget spent")
		}
	}
	return nil
}

// pastLimit is the overlimit fault: an invocation the authorizer refuses because the session's
// 1,024 identities are used is sent anyway (AUZ-006); and the utf16 fault: one refused for its
// size is sent when it fits counted in UTF-16 code units (AUZ-010).
func (s *session) pastLimit(inv protocol.ToolInvocation, err error) (json.RawMessage, bool) {
	if (fault != "overlimit" || !errors.Is(err, protocol.ErrSessionRequestLimitExceeded)) && !fitsInUnits(inv.Payload, err) {
		return nil, false
	}
	res, err := s.frames.Dispatch(inv, s.deadline)
	if err != nil {
		return nil, false
	}
	return res.Payload.AppendJSON(nil), true
}

// frameChannel returns the channel an ordinary session's frames are read from: ch, or under
// charcount one that reads the worker's output out (unread so far) itself and bounds a line by
// its characters, not its bytes (FRM-003), as a port that measures the line as a string does.
func frameChannel(ch *transport.Channel, out io.Reader) transport.FrameChannel {
	if fault != "charcount" {
		return ch
	}
	return &charChannel{Channel: ch, r: bufio.NewReader(out)}
}

// charChannel is the charcount fault's channel: it writes through Channel and reads itself.
type charChannel struct {
	*transport.Channel
	r *bufio.Reader
}

// errTooManyChars is the charcount fault's refusal of a line of more than jsonline.MaxLineBytes
// characters.
var errTooManyChars = errors.New("line over the limit, counted in characters")

// Receive reads one line, refused once it holds more than jsonline.MaxLineBytes characters
// however many bytes it holds, and decodes it.
func (c *charChannel) Receive() (protocol.Frame, error) {
	var line []byte
	chars := 0
	for {
		chunk, err := c.r.ReadSlice('\n')
		line = append(line, chunk...)
		if chars += utf8.RuneCount(chunk); chars > jsonline.MaxLineBytes+1 {
			return protocol.Frame{}, errTooManyChars
		}
		if err == nil {
			break
		}
		if err != bufio.ErrBufferFull {
			return protocol.Frame{}, err
		}
	}
	return protocol.DecodeFrame(bytes.TrimSuffix(line, []byte("\n")), canonjson.Preserve)
}
