package childproc

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// procState returns the state letter of process pid from /proc (R, S, Z, X, …), and false
// when it cannot be read (no such process, or no /proc).
func procState(pid int) (byte, bool) {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	// The state follows the command name, which is in parentheses and may hold any byte.
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 || i+2 >= len(stat) {
		return 0, true
	}
	return stat[i+2], true
}

// Alive reports whether process pid exists and is not a zombie. Where /proc cannot be read, a
// zombie counts as alive.
func Alive(pid int) bool {
	if !Exists(pid) {
		return false
	}
	state, ok := procState(pid)
	return !ok || state != 'Z'
}

// Ended reports whether process pid has ended: it is gone, or a zombie its parent has not
// reaped yet. Where /proc is not available, a zombie cannot be told from a running process, so
// it counts as running until its parent reaps it.
func Ended(pid int) bool {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		return !Exists(pid)
	}
	state, ok := procState(pid)
	return !ok || state == 'Z' || state == 'X'
}

// GroupAlive reports whether a process of group pgid still runs (zombies do not count). It
// reads /proc, so it answers false where there is none.
func GroupAlive(pgid int) bool {
	want := strconv.Itoa(pgid)
	dirs, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, d := range dirs {
		stat, err := os.ReadFile(d)
		if err != nil {
			continue
		}
		i := bytes.LastIndexByte(stat, ')')
		if i < 0 {
			continue
		}
		fields := strings.Fields(string(stat[i+1:]))
		if len(fields) > 2 && fields[0] != "Z" && fields[2] == want {
			return true
		}
	}
	return false
}
