package e2e_test

import (
	"bytes"
	"os/exec"
	"testing"
)

// The documentation example (docs/examples/host-e2e) runs against the reference worker and
// prints exactly the documented steps, so the example in the host guide cannot rot.
//
// Spec: RUN-122, RUN-150, RUN-151, TRN-043, TRN-050, TRN-093, PRF-016, CAN-024
func TestDocsExampleHostEndToEnd(t *testing.T) {
	cmd := exec.Command(exampleBinary, "-worker", workerBinary)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("example: %v\nstdout:\n%s\nstderr:\n%s", err, out, stderr.Bytes())
	}
	const want = `script: suspended on promise 1
host: claimed operation 1: conf.slow.cancellable("20"), attempt 1
host: invoke request-1 sent to example-session
host: stream chunk 1: request-1 is running
worker: result "done 20"
script: value "done 20, checked by the script"
host: worker exited with status 0
audit: {"event_sequence":1,"sequence":0,"tool":"conf.slow.cancellable","input_bytes":20,"output_bytes":20,"outcome":"streamed"}
audit: {"event_sequence":2,"sequence":0,"tool":"conf.slow.cancellable","input_bytes":2,"output_bytes":7,"outcome":"allowed"}
`
	if string(out) != want {
		t.Fatalf("example printed:\n%s\nwant:\n%s", out, want)
	}
}
