package storage

import (
	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/derive"
)

// envelope is the decoded form of a stored envelope before any semantic
// check.
type envelope struct {
	formatVersion uint8
	keyID         string
	revision      uint64
	payload       string
	authTag       string
}

// Envelope field names, in declaration order.
var envelopeFields = [5]string{"format_version", "key_id", "revision", "payload", "auth_tag"}

// envelopeShape is the reference's envelope type as serde derives it: all five fields
// required, unknown fields denied, an object or the positional array form.
var envelopeShape = derive.Struct{
	Name:        "StoredEnvelope",
	DenyUnknown: true,
	Fields: []derive.Field{
		{Name: envelopeFields[0]}, {Name: envelopeFields[1]}, {Name: envelopeFields[2]},
		{Name: envelopeFields[3]}, {Name: envelopeFields[4]},
	},
}

// decodeEnvelope parses data with the strict JSON reader of the wire core and decodes it
// with serde's struct rules (derive): format_version an unsigned integer up to 255,
// revision one up to 2^64-1, the other fields strings. The envelope holds no free-form
// number, so the number model does not change what is accepted.
func decodeEnvelope(data []byte) (envelope, bool) {
	root, err := canonjson.Parse(data)
	if err != nil {
		return envelope{}, false
	}
	var env envelope
	c := derive.Context{Mode: canonjson.Preserve}
	err = envelopeShape.Decode(root, func(i int, v *canonjson.Node) error {
		var err error
		switch i {
		case 0:
			env.formatVersion, err = derive.U8(v, c)
		case 1:
			env.keyID, err = derive.String(v)
		case 2:
			env.revision, err = derive.U64(v, c)
		case 3:
			env.payload, err = derive.String(v)
		case 4:
			env.authTag, err = derive.String(v)
		}
		return err
	})
	return env, err == nil
}
