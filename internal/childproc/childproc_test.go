package childproc

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestCaptureKeepsHeadAndTail(t *testing.T) {
	c := NewCapture(4, 4)
	for _, p := range []string{"abc", "defgh", "ijklmn"} {
		if n, err := c.Write([]byte(p)); n != len(p) || err != nil {
			t.Fatalf("Write(%q) = %d, %v", p, n, err)
		}
	}
	if got, want := c.Excerpt(), "abcd\n[… 6 bytes left out …]\nklmn"; got != want {
		t.Fatalf("excerpt %q, want %q", got, want)
	}
	short := NewCapture(4, 4)
	_, _ = short.Write([]byte("abcdef"))
	if got := short.Excerpt(); got != "abcdef" {
		t.Fatalf("overlapping head and tail give %q, want the whole stream", got)
	}
	headOnly := NewCapture(3, 0)
	_, _ = headOnly.Write([]byte("abcdef"))
	if got := headOnly.Head(); got != "abc" {
		t.Fatalf("head-only capture keeps %q", got)
	}
	tailOnly := NewCapture(0, 3)
	_, _ = tailOnly.Write([]byte("ab\xffdef"))
	if got := tailOnly.Tail(); got != "def" {
		t.Fatalf("tail-only capture keeps %q", got)
	}
}

func TestCaptureConsumeTeesObservesAndEnds(t *testing.T) {
	var tee bytes.Buffer
	var seen int
	c := NewCapture(2, 2)
	c.Tee = &tee
	c.Observe = func(p []byte) { seen += len(p) }
	c.Consume(strings.NewReader("hello world"))
	select {
	case <-c.Done():
	default:
		t.Fatal("Done is open after Consume returned")
	}
	if tee.String() != "hello world" || seen != len("hello world") {
		t.Fatalf("tee %q, observed %d bytes", tee.String(), seen)
	}
}

func TestClassify(t *testing.T) {
	if e := Classify(nil); e.Exited || e.Signaled || e.Code != -1 {
		t.Fatalf("nil state: %+v", e)
	}
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no POSIX shell")
	}
	cmd := exec.Command(sh, "-c", "exit 3")
	_ = cmd.Run()
	if e := Classify(cmd.ProcessState); !e.Exited || e.Code != 3 || e.Signaled || e.ShellStatus() != 3 {
		t.Fatalf("exit 3: %+v", e)
	}
	cmd = exec.Command(sh, "-c", "kill -9 $$")
	_ = cmd.Run()
	if e := Classify(cmd.ProcessState); e.Exited || !e.Signaled || e.Signal != "killed" || e.ShellStatus() != 137 || e.Code != -1 {
		t.Fatalf("SIGKILL: %+v", e)
	}
}

func TestKillGroupEndsTheGroup(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil || !Exists(os.Getpid()) {
		t.Skip("no POSIX shell or no signals")
	}
	cmd := exec.Command(sh, "-c", "sleep 60 & echo $!; wait")
	SetGroup(cmd)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	child, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	if !Alive(child) || !GroupExists(cmd.Process.Pid) {
		t.Fatal("the group's child is not running")
	}
	ended, err := KillGroupAndWait(cmd.Process.Pid, done, time.Now().Add(10*time.Second))
	if err != nil || !ended {
		t.Fatalf("KillGroupAndWait: ended %v, %v", ended, err)
	}
	<-done
	if !AwaitEnd(child, nil, time.Now().Add(10*time.Second)) || !Ended(child) {
		t.Fatal("the group's child outlived the kill")
	}
	for deadline := time.Now().Add(10 * time.Second); GroupExists(cmd.Process.Pid); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("GroupExists still sees the group after the kill")
		}
	}
	if err := KillGroup(cmd.Process.Pid); err != nil {
		t.Fatalf("killing a group that is gone: %v", err)
	}
	if AwaitEnd(0, make(chan struct{}), time.Time{}) {
		t.Fatal("AwaitEnd with a zero deadline and an open channel reports an end")
	}
}

func TestBuildAndModuleRoot(t *testing.T) {
	root, err := ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := ModuleRootFrom(filepath.Join(root, "internal", "childproc")); !ok {
		t.Fatal("no module root above this package")
	}
	if _, ok := ModuleRootFrom(t.TempDir()); ok {
		t.Fatal("a module root above a temporary directory")
	}
	err = Build(root, "./no/such/package", filepath.Join(t.TempDir(), "x"))
	if err == nil || !strings.Contains(err.Error(), "./no/such/package") {
		t.Fatalf("building a missing package: %v", err)
	}
}

// TestDieWithParentEndsTheChild runs this test binary as a helper that starts a child with
// DieWithParent, in its own process group, and exits at once: the child is killed with it.
func TestDieWithParentEndsTheChild(t *testing.T) {
	if os.Getenv("CHILDPROC_HELPER") == "die-with-parent" {
		cmd := exec.Command("sleep", "60")
		SetGroup(cmd)
		DieWithParent(cmd)
		if err := cmd.Start(); err != nil {
			os.Exit(2)
		}
		fmt.Println(cmd.Process.Pid, GroupExists(cmd.Process.Pid))
		os.Exit(0)
	}
	if _, err := exec.LookPath("sleep"); err != nil || runtime.GOOS != "linux" {
		t.Skip("no sleep program, or a system that cannot tie a child to its parent")
	}
	helper := exec.Command(os.Args[0], "-test.run=^TestDieWithParentEndsTheChild$")
	helper.Env = append(os.Environ(), "CHILDPROC_HELPER=die-with-parent")
	out, err := helper.Output()
	if err != nil {
		t.Fatalf("helper: %v", err)
	}
	var pid int
	var group bool
	if _, err := fmt.Sscan(string(out), &pid, &group); err != nil || !group {
		t.Fatalf("helper printed %q: want the child's pid and its process group", out)
	}
	if !AwaitEnd(pid, nil, time.Now().Add(10*time.Second)) {
		_ = KillGroup(pid)
		t.Fatal("the child outlived the process that started it")
	}
}
