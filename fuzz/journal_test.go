package fuzz

import (
	"bytes"
	"testing"

	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/journal"
	"github.com/splashv5/conform/impl/protocol"
)

// journalHandSeeds are journals from reference anchor A8 (docs/reference-anchors.md) and from the
// journal's load cases: every state, compensations, alternative encodings and rejected
// documents.
var journalHandSeeds = []string{
	`{"format_version":2,"scope":"tenant","records":[]}`,
	`{"format_version":2,"scope":"tenant-release","records":[{"tool":"release.publish","operation_key":"release-42-add","input_fingerprint":"47a67a884b85e9385cedfd6cb717c9ff4f361ac2fee1f2085096df0902e4936d","state":{"state":"succeeded","payload":{"format":"json","value":{"total":42}}},"compensation":{"compensation_key":"cmp-undo-1","input_fingerprint":"5cc121e4a0ce2f79ae6b83397eb4f81a66bf12a9b1fe5836835a8118de24d578","grant_fingerprint":"b4586b43cee35f3490e1be033cf424c5d927417c4e5af7cd685123764a8c8be9","state":{"state":"pending"}}}]}`,
	`{"format_version":2,"scope":"t","records":[{"tool":"echo","operation_key":"a","input_fingerprint":"47a67a884b85e9385cedfd6cb717c9ff4f361ac2fee1f2085096df0902e4936d","state":{"state":"running"},"compensation":null},{"tool":"echo","operation_key":"b","input_fingerprint":"47a67a884b85e9385cedfd6cb717c9ff4f361ac2fee1f2085096df0902e4936d","state":{"state":"failed","message":"q\" \\ \u0001 é"}}]}`,
	`{"format_version":2,"scope":"t","records":[{"tool":"c","operation_key":"k","input_fingerprint":"47a67a884b85e9385cedfd6cb717c9ff4f361ac2fee1f2085096df0902e4936d","state":{"state":"succeeded","payload":{"format":"text","value":"x"}},"compensation":{"compensation_key":"cmp-","input_fingerprint":"47a67a884b85e9385cedfd6cb717c9ff4f361ac2fee1f2085096df0902e4936d","grant_fingerprint":"b4586b43cee35f3490e1be033cf424c5d927417c4e5af7cd685123764a8c8be9","state":{"state":"cancelled"}}}]}`,
	`{"format_version":2,"scope":"t","records":[{"tool":"c","operation_key":"k","input_fingerprint":"47a67a884b85e9385cedfd6cb717c9ff4f361ac2fee1f2085096df0902e4936d","state":{"payload":{"value":{"b":[1.50,1e2,-0,18446744073709551616],"a":{}},"format":"json"},"state":"succeeded","x":1}}]}`,
	`[2,"t",[["c","k","47a67a884b85e9385cedfd6cb717c9ff4f361ac2fee1f2085096df0902e4936d",["succeeded",["json",[1]]],null]]]`,
	`{"format_version":1,"scope":"tenant","records":[]}`,
	`{"format_version":2,"scope":"Tenant","records":[]}`,
	`{"format_version":2,"scope":"t","records":[],"extra":true}`,
	`{"format_version":2,"scope":"t","records":[{"tool":"c","operation_key":"k","input_fingerprint":"47A67A884B85E9385CEDFD6CB717C9FF4F361AC2FEE1F2085096DF0902E4936D","state":{"state":"pending"}}]}`,
	`{"format_version":2,"scope":"t","records":[{"tool":"c","operation_key":"k","input_fingerprint":"47a67a884b85e9385cedfd6cb717c9ff4f361ac2fee1f2085096df0902e4936d","state":{"state":"pending"},"compensation":{"compensation_key":"cmp-1","input_fingerprint":"47a67a884b85e9385cedfd6cb717c9ff4f361ac2fee1f2085096df0902e4936d","grant_fingerprint":"b4586b43cee35f3490e1be033cf424c5d927417c4e5af7cd685123764a8c8be9","state":{"state":"pending"}}}]}`,
	`{"format_version":2,"scope":"t","records":[{"tool":"c","operation_key":"k","input_fingerprint":"47a67a884b85e9385cedfd6cb717c9ff4f361ac2fee1f2085096df0902e4936d","state":{"state":"pending"}},{"tool":"d","operation_key":"k","input_fingerprint":"47a67a884b85e9385cedfd6cb717c9ff4f361ac2fee1f2085096df0902e4936d","state":{"state":"cancelled"}}]}`,
}

// FuzzJournalDecode checks the journal loader on arbitrary input in both number modes: it never
// panics; every failure is a typed protocol error; and a journal that loads serializes within
// the size bound to bytes that load to an equal journal and serialize identically. The seeds
// are the hand seeds above and journals built from the payloads, grant fingerprints and
// operation statuses of the vectors (journalSeeds).
//
// Spec: JRN-003, JRN-005, JRN-006, JRN-007, JRN-023, ERR-017
func FuzzJournalDecode(f *testing.F) {
	for _, s := range journalHandSeeds {
		f.Add([]byte(s))
	}
	addSeeds(f, journalSeeds(f))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, mode := range []canonjson.Mode{canonjson.Preserve, canonjson.Lossy} {
			j, err := journal.FromJSON(data, mode)
			if err != nil {
				if j != nil {
					t.Fatalf("%v: journal returned with error %v", mode, err)
				}
				if _, ok := protocol.KindOf(err); !ok {
					t.Fatalf("%v: untyped error %v", mode, err)
				}
				continue
			}
			out, err := j.ToJSON()
			if err != nil {
				t.Fatalf("%v: a loaded journal does not serialize: %v", mode, err)
			}
			if len(out) > protocol.MaxWorkerOperationJournalBytes || j.Size() != len(out) {
				t.Fatalf("%v: serialized %d bytes, Size %d", mode, len(out), j.Size())
			}
			back, err := journal.FromJSON(out, mode)
			if err != nil {
				t.Fatalf("%v: re-serialized journal does not load: %v\n%s", mode, err, out)
			}
			if !back.Equal(j) {
				t.Fatalf("%v: reloaded journal differs\n%s", mode, out)
			}
			again, err := back.ToJSON()
			if err != nil || !bytes.Equal(again, out) {
				t.Fatalf("%v: second serialization differs: %v\n%s\n%s", mode, err, out, again)
			}
		}
	})
}
