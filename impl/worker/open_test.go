package worker_test

import (
	"context"
	"errors"
	"testing"

	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/journal"
	"github.com/splashv5/conform/impl/profile"
	"github.com/splashv5/conform/impl/protocol"
	"github.com/splashv5/conform/impl/worker"
	"github.com/splashv5/conform/impl/worker/workertest"
)

const noProtocol = protocol.ErrorKind(0)

// Spec: WRK-010, WRK-011, WRK-012, WRK-013, WRK-014, WRK-015, WRK-016, WRK-017, WRK-018
func TestOpenCheckOrder(t *testing.T) {
	type admissionCall struct {
		scope   string
		session string
		tools   int
	}
	cases := []struct {
		name string
		// build returns the authenticator role, the opening line and the registry.
		role      protocol.Role
		opening   func(h *workertest.Host) []byte
		tools     []string // registered tools (profile tools by name)
		token     uint64
		admitErr  error
		wantKind  worker.ErrorKind
		wantProto protocol.ErrorKind
		wantTool  string
		admitted  bool // whether admission must have been consulted
	}{
		{name: "host role is refused before the frame is examined", role: protocol.RoleHost,
			opening:  func(h *workertest.Host) []byte { return []byte("not even json") },
			wantKind: worker.ErrRequiresWorkerAuthenticator},
		{name: "tampered opening frame", role: protocol.RoleWorker,
			opening: func(h *workertest.Host) []byte {
				return h.Tampered(h.OpenSession(profileGrant(echo, 1, 0)))
			},
			wantKind: worker.ErrProtocol, wantProto: protocol.ErrInvalidAuthenticationTag},
		{name: "tampered frame with a wrong message kind fails on the tag first", role: protocol.RoleWorker,
			opening: func(h *workertest.Host) []byte {
				return h.Tampered(h.Invoke("r1", echo, text("x")))
			},
			wantKind: worker.ErrProtocol, wantProto: protocol.ErrInvalidAuthenticationTag},
		{name: "opening frame must carry sequence 1", role: protocol.RoleWorker,
			opening: func(h *workertest.Host) []byte {
				return h.SealAt(2, h.OpenSession(profileGrant(echo, 1, 0)))
			},
			wantKind: worker.ErrProtocol, wantProto: protocol.ErrUnexpectedSequence},
		{name: "first message is not open_session", role: protocol.RoleWorker,
			opening:  func(h *workertest.Host) []byte { return h.Seal(h.Invoke("r1", echo, text("x"))) },
			wantKind: worker.ErrUnexpectedOpeningMessage},
		{name: "invalid manifest", role: protocol.RoleWorker,
			opening: func(h *workertest.Host) []byte {
				g := profileGrant(echo, 1, 0)
				g.MaxCalls = 0
				return h.Seal(h.OpenSession(g))
			},
			wantKind: worker.ErrProtocol, wantProto: protocol.ErrInvalidGrant},
		{name: "first grant without adapter is named, admission not consulted", role: protocol.RoleWorker,
			opening: func(h *workertest.Host) []byte {
				return h.Seal(h.OpenSession(profileGrant(echo, 1, 0), workertest.Grant("x.missing", protocol.FormatText, 1, 0),
					workertest.Grant("y.missing", protocol.FormatText, 1, 0)))
			},
			tools: []string{echo}, admitErr: errors.New("must not be reached"),
			wantKind: worker.ErrMissingAdapter, wantTool: "x.missing"},
		{name: "admission refuses", role: protocol.RoleWorker,
			opening:  func(h *workertest.Host) []byte { return h.Seal(h.OpenSession(profileGrant(echo, 1, 0))) },
			admitErr: worker.ErrReplayedSession, wantKind: worker.ErrAdmission, admitted: true},
		{name: "zero lease", role: protocol.RoleWorker,
			opening: func(h *workertest.Host) []byte { return h.Seal(h.OpenSession(profileGrant(echo, 1, 0))) },
			token:   0, wantKind: worker.ErrInvalidJournalLease, admitted: true},
		{name: "extra adapters and zero grants are fine", role: protocol.RoleWorker,
			opening: func(h *workertest.Host) []byte { return h.Seal(h.OpenSession()) },
			token:   9, admitted: true},
		{name: "all checks pass", role: protocol.RoleWorker,
			opening: func(h *workertest.Host) []byte { return h.Seal(h.OpenSession(profileGrant(echo, 1, 0))) },
			token:   9, admitted: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h, err := workertest.NewHost("session-1")
			if err != nil {
				t.Fatal(err)
			}
			defer h.Close()
			auth, err := h.Authenticator(tc.role, canonjson.Preserve)
			if err != nil {
				t.Fatal(err)
			}
			reg := worker.NewRegistry()
			if tc.tools == nil {
				if err := profile.Register(reg, profile.Options{}); err != nil {
					t.Fatal(err)
				}
			} else {
				for _, tool := range tc.tools {
					if err := reg.Register(tool, &scripted{safety: worker.ReadOnly}); err != nil {
						t.Fatal(err)
					}
				}
			}
			j, err := journal.New(scope)
			if err != nil {
				t.Fatal(err)
			}
			var calls []admissionCall
			adm := worker.AdmissionFunc(func(_ context.Context, m protocol.CapabilityManifest, sc string) (uint64, error) {
				calls = append(calls, admissionCall{sc, m.SessionID, len(m.Grants)})
				return tc.token, tc.admitErr
			})
			s, err := worker.Open(context.Background(), auth, tc.opening(h), worker.Config{
				Journal: j, Revision: 41, Registry: reg, Admission: adm,
			})
			if (len(calls) > 0) != tc.admitted {
				t.Fatalf("admission consulted %d times, want consulted=%v", len(calls), tc.admitted)
			}
			if tc.admitted && calls[0].scope != scope {
				t.Fatalf("admission got scope %q, want %q", calls[0].scope, scope)
			}
			if tc.wantKind == 0 {
				if err != nil {
					t.Fatalf("open: %v", err)
				}
				if s.Revision() != 41 || s.Poisoned() || s.Journal().Scope() != scope {
					t.Fatalf("fresh session: revision %d poisoned %v scope %q", s.Revision(), s.Poisoned(), s.Journal().Scope())
				}
				if total, _ := s.ReconciliationsSpent(record); total != 0 {
					t.Fatalf("fresh session has %d reconciliations spent", total)
				}
				if s.Lease().Token() != tc.token {
					t.Fatalf("lease %d, want %d", s.Lease().Token(), tc.token)
				}
				return
			}
			if s != nil {
				t.Fatal("a failed open returned a session")
			}
			if !errors.Is(err, tc.wantKind) {
				t.Fatalf("error %v, want %v", err, tc.wantKind)
			}
			if tc.wantProto.Valid() && !errors.Is(err, tc.wantProto) {
				t.Fatalf("error %v, want protocol kind %v", err, tc.wantProto)
			}
			var we *worker.Error
			if errors.As(err, &we) && tc.wantTool != "" && we.Tool != tc.wantTool {
				t.Fatalf("error names tool %q, want %q", we.Tool, tc.wantTool)
			}
		})
	}
}

func TestLeaseIsOpaque(t *testing.T) {
	r := newRig(t, rigOptions{grants: []protocol.CapabilityGrant{profileGrant(echo, 1, 0)}})
	for _, s := range []string{r.session.Lease().String(), r.session.Lease().GoString()} {
		if s != "Lease(redacted)" {
			t.Fatalf("lease prints as %q", s)
		}
	}
}
