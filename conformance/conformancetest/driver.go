package conformancetest

import (
	"bufio"
	"encoding/json"
	"os"
	"strings"
)

// DriverCommand is a command line of the host-driver contract (spec chapter 30), as a
// misbehaving test driver reads it.
type DriverCommand struct {
	ID       uint64          `json:"id"`
	Op       string          `json:"op"`
	Command  []string        `json:"command"`
	Manifest json.RawMessage `json:"manifest"`
}

// ServeDriver is the command loop of a misbehaving test driver: it reads commands from
// standard input, answers hello with the feature invoke, and hands every other command to
// handle with an encoder of outcome lines. handle returns done to end the loop with code. It
// returns 2 on a line that is not a command and 0 at the end of input.
func ServeDriver(handle func(c DriverCommand, out *json.Encoder) (code int, done bool)) int {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<16), 1<<22)
	out := json.NewEncoder(os.Stdout)
	for in.Scan() {
		var c DriverCommand
		if json.Unmarshal(in.Bytes(), &c) != nil {
			return 2
		}
		if c.Op == "hello" {
			_ = out.Encode(map[string]any{"id": c.ID, "ok": true, "features": []string{"invoke"}})
			continue
		}
		if code, done := handle(c, out); done {
			return code
		}
	}
	return 0
}

// Flood writes lines of 64 KiB of b to standard output until the write fails, and returns 0.
func Flood(b byte) int {
	line := []byte(strings.Repeat(string(b), 1<<16) + "\n")
	for {
		if _, err := os.Stdout.Write(line); err != nil {
			return 0
		}
	}
}
