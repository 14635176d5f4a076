package transport_test

import (
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"strings"
	"testing"

	"github.com/splashv5/conform/impl/journal"
	"github.com/splashv5/conform/impl/profile"
	"github.com/splashv5/conform/impl/protocol"
	"github.com/splashv5/conform/impl/transport"
	"github.com/splashv5/conform/impl/transport/inprocess"
	"github.com/splashv5/conform/impl/worker"
)

// memoryPersister is a journal persister that keeps the journal in memory.
type memoryPersister struct{ revision uint64 }

func (p *memoryPersister) Persist(_ context.Context, _ *journal.Journal, expected uint64, _ worker.Lease) (uint64, error) {
	p.revision = expected + 1
	return p.revision, nil
}

// inProcessFixture opens a worker session of the conformance profile in process, granting
// conf.text.echo (4 calls) and conf.text.fail, and returns the host authenticator that opened
// it.
func inProcessFixture(t *testing.T) (*protocol.Authenticator, *worker.Session) {
	t.Helper()
	host, workerAuth := authPair(t, testSession)
	m, err := protocol.NewCapabilityManifest(testSession, []protocol.CapabilityGrant{
		grant(profile.ToolTextEcho, protocol.FormatText, 4), grant(profile.ToolTextFail, protocol.FormatText, 4),
	})
	if err != nil {
		t.Fatal(err)
	}
	reg := worker.NewRegistry()
	if err := profile.Register(reg, profile.Options{Effects: profile.NewEffectLog(nil, nil)}); err != nil {
		t.Fatal(err)
	}
	return host, openInProcess(t, host, workerAuth, m, reg)
}

// openInProcess opens a worker session for m over reg with a frame host sealed.
func openInProcess(t *testing.T, host, workerAuth *protocol.Authenticator, m protocol.CapabilityManifest, reg *worker.Registry) *worker.Session {
	t.Helper()
	_, line := seal(t, host, protocol.OpenSessionMessage{Manifest: m})
	j, err := journal.New("tenant-a")
	if err != nil {
		t.Fatal(err)
	}
	s, err := worker.Open(context.Background(), workerAuth, line, worker.Config{Journal: j, Registry: reg,
		Admission: worker.AdmissionFunc(func(context.Context, protocol.CapabilityManifest, string) (uint64, error) { return 1, nil })})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func profileInvocation(t *testing.T, requestID, tool, text string) protocol.ToolInvocation {
	t.Helper()
	inv, err := protocol.NewToolInvocation(testSession, requestID, tool, protocol.TextPayload(text))
	if err != nil {
		t.Fatal(err)
	}
	return inv
}

// Spec: TRN-030
// Construction checks the role, then the session of the opened worker session.
func TestInProcessConstruction(t *testing.T) {
	host, s := inProcessFixture(t)
	_, worker := authPair(t, testSession)
	_, err := inprocess.New(worker, s, &memoryPersister{})
	wantKind(t, err, transport.ErrRequiresHostAuthenticator)
	other, _ := authPair(t, "session-2")
	_, err = inprocess.New(other, s, &memoryPersister{})
	wantKind(t, err, transport.ErrSessionMismatch)
	if _, err := inprocess.New(host, s, &memoryPersister{}); err != nil {
		t.Fatal(err)
	}
}

// Spec: TRN-031, TRN-032
// A dispatch crosses the authenticated boundary and returns the adapter's result; a refused
// frame is Worker and does not poison; Discard poisons and no adapter is reached afterwards.
func TestInProcessDispatch(t *testing.T) {
	host, s := inProcessFixture(t)
	tr, err := inprocess.New(host, s, &memoryPersister{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := tr.Dispatch(profileInvocation(t, "r1", profile.ToolTextEcho, "hello"), testDeadline)
	if err != nil || res.RequestID != "r1" || res.Payload.Text != "hello" {
		t.Fatalf("echo: %+v, %v", res, err)
	}
	_, err = tr.Dispatch(profileInvocation(t, "r2", profile.ToolTextFail, "x"), testDeadline)
	wantKind(t, err, transport.ErrWorker)
	if tr.Poisoned() {
		t.Fatal("a worker refusal poisoned the in-process transport")
	}
	// The host's outgoing sequence advanced for the refused frame, and the worker's incoming
	// one too, so the session goes on.
	res, err = tr.Dispatch(profileInvocation(t, "r3", profile.ToolTextEcho, "again"), testDeadline)
	if err != nil || res.Payload.Text != "again" {
		t.Fatalf("echo after refusal: %+v, %v", res, err)
	}
	// A seal failure is Protocol and does not poison either.
	bad := profileInvocation(t, "r4", profile.ToolTextEcho, "x")
	bad.SessionID = "session-2"
	_, err = tr.Dispatch(bad, testDeadline)
	wantKind(t, err, transport.ErrProtocol)
	tr.Discard()
	_, err = tr.Dispatch(profileInvocation(t, "r5", profile.ToolTextEcho, "x"), testDeadline)
	wantKind(t, err, transport.ErrPoisoned)
	if s.Manifest().SessionID != testSession {
		t.Fatal("session changed")
	}
}

// Spec: TRN-033
// The in-process transport's documentation says plainly that it isolates nothing.
func TestInProcessDocumentationDisclaimsIsolation(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "inprocess/inprocess.go", nil, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	var doc string
	for _, d := range f.Decls {
		if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.TYPE && g.Doc != nil {
			if ts := g.Specs[0].(*ast.TypeSpec); ts.Name.Name == "Transport" {
				doc = strings.Join(strings.Fields(g.Doc.Text()), " ")
			}
		}
	}
	for _, want := range []string{"isolates nothing", "not a sandbox", "full authority of the host process"} {
		if !strings.Contains(doc, want) {
			t.Errorf("inprocess.Transport documentation lacks %q:\n%s", want, doc)
		}
	}
}
