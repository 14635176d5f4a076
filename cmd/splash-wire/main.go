// Command splash-wire is a line-oriented oracle over the Go reference implementation of the
// Splash worker protocol v5 wire core, meant for testing ports in other languages.
//
// It reads one JSON command per line on standard input and writes one JSON result per line
// on standard output, in order. A command names its operation in "op"; see docs/splash-wire.md
// for every operation, its fields and examples. A failing operation yields
// {"error":{"kind":"<reference variant name>","message":"…"}}; messages never contain key
// material. A command may carry an "id" of any JSON type, which is echoed in its result.
//
//	splash-wire [-mode preserve|lossy] [-allow-nonportable]
//
// -mode selects the number model used to decode and re-serialize (default preserve, the
// model the Go reference receives in); a command may override it with "mode".
// -allow-nonportable lets seal emit numbers that are not portable between the two models,
// to play one specific reference build; by default such a seal fails with NonPortableNumber.
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/splashv5/conform/impl/canonjson"
)

// MaxCommandBytes bounds one command line (without its line feed): room for a 1 MiB frame
// or message written as a JSON string, with escaping.
const MaxCommandBytes = 4<<20 + 64<<10

func main() {
	os.Exit(run(os.Stdin, os.Stdout, os.Args[1:]))
}

// config is the command-line configuration.
type config struct {
	mode             canonjson.Mode
	allowNonPortable bool
}

// run processes commands from stdin until end of input. It returns 0, or 2 for a usage
// error, or 1 if writing the results failed. Failing commands do not change the status:
// their failure is their result.
func run(stdin io.Reader, stdout io.Writer, args []string) int {
	fs := flag.NewFlagSet("splash-wire", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	modeName := fs.String("mode", "preserve", "number mode: preserve or lossy")
	allow := fs.Bool("allow-nonportable", false, "allow seal to emit non-portable numbers")
	if err := fs.Parse(args); err != nil || fs.NArg() != 0 {
		writeUsage(stdout, err)
		return 2
	}
	mode, err := canonjson.ParseMode(*modeName)
	if err != nil {
		writeUsage(stdout, err)
		return 2
	}
	cfg := config{mode: mode, allowNonPortable: *allow}
	in := bufio.NewReaderSize(stdin, 64<<10)
	out := bufio.NewWriter(stdout)
	for {
		line, tooLong, err := readLine(in)
		if len(line) > 0 || tooLong {
			var res any
			if tooLong {
				res = errorResult(nil, "CommandTooLarge", fmt.Sprintf("command line exceeds %d bytes", MaxCommandBytes))
			} else {
				res = execute(line, cfg)
			}
			if werr := writeJSON(out, res); werr != nil {
				return 1
			}
			if werr := out.Flush(); werr != nil {
				return 1
			}
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return 0
			}
			_ = writeJSON(out, errorResult(nil, "Io", "reading standard input failed"))
			_ = out.Flush()
			return 1
		}
	}
}

func writeUsage(w io.Writer, err error) {
	msg := "usage: splash-wire [-mode preserve|lossy] [-allow-nonportable]"
	if err != nil && !errors.Is(err, flag.ErrHelp) {
		msg = err.Error() + "; " + msg
	}
	_ = writeJSON(w, errorResult(nil, "Usage", msg))
}

// readLine reads one line without its line feed (and without a trailing carriage return),
// never buffering more than MaxCommandBytes of it. An over-long line is consumed to its end
// and reported with tooLong.
func readLine(r *bufio.Reader) (line []byte, tooLong bool, err error) {
	for {
		chunk, isPrefix, e := r.ReadLine()
		if e != nil {
			return line, tooLong, e
		}
		if !tooLong {
			if len(line)+len(chunk) > MaxCommandBytes {
				tooLong, line = true, nil
			} else {
				line = append(line, chunk...)
			}
		}
		if !isPrefix {
			return line, tooLong, nil
		}
	}
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}
