package protocol

import (
	"strconv"

	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/derive"
)

// Frame is an authenticated, sequence-numbered message (the reference's
// AuthenticatedWorkerMessage). Its JSON is {"sequence":N,"message":{...},"auth_tag":"<hex64>"}.
type Frame struct {
	Sequence uint64
	Message  Message
	Tag      [AuthTagBytes]byte
}

// AppendJSON appends the frame's JSON: sequence, message, then the tag as 64 lowercase hex
// characters. It does not allocate when dst has room.
func (f Frame) AppendJSON(dst []byte) []byte {
	dst = append(dst, `{"sequence":`...)
	dst = strconv.AppendUint(dst, f.Sequence, 10)
	dst = append(dst, `,"message":`...)
	if f.Message != nil {
		dst = f.Message.AppendJSON(dst)
	} else {
		dst = append(dst, "null"...)
	}
	dst = append(dst, `,"auth_tag":"`...)
	dst = AppendHex(dst, f.Tag[:])
	return append(dst, '"', '}')
}

// ValidateSyntax runs the frame checks that need no key, in the reference's order: a zero
// sequence is InvalidSequence, then the message must validate. (The tag is already bytes; on
// decode its hex form is checked after these.)
func (f Frame) ValidateSyntax() error {
	if f.Sequence == 0 {
		return &Error{Kind: ErrInvalidSequence}
	}
	if f.Message == nil {
		return &Error{Kind: ErrSerialization, Message: "frame has no message"}
	}
	return f.Message.Validate()
}

// EncodeFrame validates the frame's syntax and returns its JSON line (without a newline),
// which must fit MaxWireFrameBytes (WireFrameTooLarge otherwise). This is the reference's
// AuthenticatedWorkerMessage::to_json_line; it does not compute or check the tag.
func EncodeFrame(f Frame) ([]byte, error) {
	if err := f.ValidateSyntax(); err != nil {
		return nil, err
	}
	b := f.AppendJSON(nil)
	if len(b) > MaxWireFrameBytes {
		return nil, &Error{Kind: ErrWireFrameTooLarge, Actual: uint64(len(b)), Maximum: MaxWireFrameBytes}
	}
	return b, nil
}

// DecodeFrame decodes one frame line as the reference's
// AuthenticatedWorkerMessage::from_json_line does, in its order: a line longer than
// MaxWireFrameBytes is WireFrameTooLarge; parse and shape errors are Serialization; a zero
// sequence is InvalidSequence; the message must validate; the tag must be 64 lowercase hex
// characters (InvalidAuthenticationTag). It neither verifies the tag nor checks the sequence
// order; the authenticator does. mode is the serde_json number model of the decoding process.
func DecodeFrame(line []byte, mode canonjson.Mode) (Frame, error) {
	f, _, err := decodeFrame(line, mode, "", nil)
	return f, err
}

// decodeFrame is DecodeFrame that also returns, when it is known without writing it, the
// message's JSON as f.Message.AppendJSON would write it, in place in line (otherwise nil).
// session and box are decodeFrameFast's.
func decodeFrame(line []byte, mode canonjson.Mode, session string, box *InvokeMessage) (f Frame, message []byte, err error) {
	if err := checkMode(mode); err != nil {
		return Frame{}, nil, err
	}
	if len(line) > MaxWireFrameBytes {
		return Frame{}, nil, &Error{Kind: ErrWireFrameTooLarge, Actual: uint64(len(line)), Maximum: MaxWireFrameBytes}
	}
	if f, message, ok := decodeFrameFast(line, mode, session, box); ok {
		return f, message, nil
	}
	f, err = decodeFrameGeneral(line, mode)
	return f, nil, err
}

// decodeFrameGeneral is DecodeFrame for every line: the parser, then the field tables of the
// frame and its message, then the frame checks. mode is valid and line within the limit.
func decodeFrameGeneral(line []byte, mode canonjson.Mode) (Frame, error) {
	n, p, err := parseDocument(line, mode)
	if err != nil {
		return Frame{}, err
	}
	f, tag, err := decodeFrameNode(n, derive.Context{Mode: mode})
	releaseParser(p) // f holds no node of the tree
	if err != nil {
		return Frame{}, SerializationError(err)
	}
	if err := f.ValidateSyntax(); err != nil {
		return Frame{}, err
	}
	if f.Tag, err = ParseAuthTag(tag); err != nil {
		return Frame{}, err
	}
	return f, nil
}

func decodeFrameNode(n *canonjson.Node, c derive.Context) (Frame, string, error) {
	var f Frame
	var tag string
	err := frameStruct.Decode(n, func(i int, v *canonjson.Node) error {
		var err error
		switch i {
		case 0:
			f.Sequence, err = derive.U64(v, c)
		case 1:
			f.Message, err = DecodeMessageNode(v, c)
		case 2:
			tag, err = derive.String(v)
		}
		return err
	})
	return f, tag, err
}
