package worker

import (
	"regexp"
	"slices"

	"github.com/splashv5/conform/conformance"
)

// Need is what a check requires from the worker command.
type Need = conformance.Need

// The needs a check can declare. NeedJournal, NeedEffects, NeedStoreFault, NeedStorageKey and
// NeedSecretSource are declared by the placeholders {journal}, {effects}, {store-fault},
// {storage-key} and {secret-source} in the worker command; the others are
// assumed unless --without lists them.
const (
	// NeedJournal: the worker keeps its operation journal in the file given by {journal}, so
	// that a restarted worker sees the journal of the previous one.
	NeedJournal Need = "journal"
	// NeedEffects: the worker's conformance profile writes its effect log to the file given
	// by {effects} (PRF-002), which the runner reads to count effects.
	NeedEffects Need = "effects"
	// NeedDurable: the worker serves durable dispatch and reconciliation for
	// conf.durable.record.
	NeedDurable Need = "durable"
	// NeedCompensation: the worker serves compensation for conf.durable.record.
	NeedCompensation Need = "compensation"
	// NeedCancel: the worker runs the cancellable driver of chapter 14 for the slow tools.
	NeedCancel Need = "cancel"
	// NeedStoreFault: the worker's test mode offers the store fault trigger of PRF-021 at the
	// file given by {store-fault}: while the file exists, journal writes fail.
	NeedStoreFault Need = "store-fault"
	// NeedTypedJSON: the worker's profile registers conf.json.typed, the tool built on its
	// typed JSON adapter helper (PRF-031). A worker written against the profile before the
	// tool was added declares it missing.
	NeedTypedJSON Need = "typed-json"
	// NeedSecret: the worker's profile registers conf.secret.sign, the tool that uses the stub
	// secret through its capability secret broker (PRF-028). A worker written against the
	// profile before the tool was added declares it missing.
	NeedSecret Need = "secret"
	// NeedStorageKey: the worker takes its storage key from the file given by {storage-key},
	// so the runner can look for the key in every output (WRK-093).
	NeedStorageKey Need = "storage-key"
	// NeedSecretSource: the worker's profile offers the secret source of PRF-033 at the file
	// given by {secret-source}, which chooses what the secret tool's provider returns.
	NeedSecretSource Need = "secret-source"
	// NeedEffectFence: the worker gives the durable tool its session's fencing token, which
	// the profile's effect log keeps per operation key (PRF-034, PRF-035). A worker written
	// against the profile before this was added declares it missing.
	NeedEffectFence Need = "effect-fence"
)

// AllNeeds lists every need in documentation order.
var AllNeeds = []Need{NeedJournal, NeedEffects, NeedDurable, NeedCompensation, NeedCancel, NeedStoreFault, NeedTypedJSON, NeedSecret,
	NeedStorageKey, NeedSecretSource, NeedEffectFence}

// ParseNeed returns the need with the given name.
func ParseNeed(name string) (Need, bool) {
	for _, n := range AllNeeds {
		if string(n) == name {
			return n, true
		}
	}
	return "", false
}

// Check is one check of the worker suite: the framework's check, run in the worker suite's T.
type Check = conformance.Check[*T]

// exits is the body of the many checks that open a worker, send it something and expect it to
// end: it opens the worker with open, lets send (when not nil) send to it and expects the
// worker to exit with status code, for why.
func exits(code int, why string, open func(*T) *Worker, send func(w *Worker)) func(*T) {
	return func(t *T) {
		w := open(t)
		if send != nil {
			send(w)
		}
		w.expectExit(code, why)
	}
}

// Area is one area of the catalog: its name (the AREA of its check IDs), what it covers and
// the constructor of its checks.
type Area struct {
	Name, Description string
	Checks            func() []*Check
}

// Areas lists the check areas in catalog order. It is the one list the catalog is built from:
// each area's checks come from its constructor, in a file of its own (checks_<area>.go).
var Areas = []Area{
	{"BOOT", "private-pipe bootstrap", BootChecks},
	{"OPEN", "session opening and manifest limits", OpenChecks},
	{"FRAME", "framing, authentication and the JSON-line transport", FrameChecks},
	{"AUTHZ", "authorization of invocations", AuthzChecks},
	{"OUTPUT", "validation of adapter output", OutputChecks},
	{"PROFILE", "conformance profile adapters", ProfileChecks},
	{"DURABLE", "durable dispatch, journal and reconciliation", DurableChecks},
	{"COMP", "compensation", CompChecks},
	{"CANCEL", "cooperative cancellation", CancelChecks},
	{"SECRET", "the capability secret broker and the secret tool", SecretChecks},
	{"NUMBER", "number-model interoperability", NumberChecks},
	{"DECODE", "decoding of legal spellings and of illegal ones a lenient decoder accepts", DecodeChecks},
	{"PROC", "process behaviour, diagnostics and key hygiene", ProcChecks},
}

// Reasons why no deliberate fault of the reference worker can make a check fail.
const (
	unreachableAdapter = "checks the output of the profile adapters, which the runtime's fault hook " +
		"does not alter; an adapter bug fails this check directly"
	unreachableAcceptance = "checks that valid traffic is accepted and answered; every fault of the " +
		"catalog makes a worker accept too much or answer wrongly, and one that refused valid traffic " +
		"would fail the acceptance checks of every area at once"
	unreachableLibrary = "the rule is enforced by shared library code (impl/bootstrap, impl/jsonline, " +
		"impl/protocol) that the worker's fault hook does not alter; that code has its own tests and vectors"
	unreachableNumberMode = "the number model is configuration (--number-mode lossy), not a fault; " +
		"TestNumberChecksSeeTheLossyModel runs these checks against a lossy worker"
)

var idPattern = regexp.MustCompile(`^CNF-[A-Z]+-[0-9]{2}$`)

// catalog is every check, area by area in the order of Areas and by ID within an area.
var catalog = buildCatalog()

func buildCatalog() conformance.Catalog[*T] {
	var all conformance.Catalog[*T]
	for _, a := range Areas {
		all = append(all, conformance.SortedCatalog(a.Checks())...)
	}
	return all
}

// Catalog returns every check, ordered by area (in the order of Areas) and then by ID.
func Catalog() conformance.Catalog[*T] { return slices.Clone(catalog) }

// Lookup returns the check with the given ID.
func Lookup(id string) (*Check, bool) { return catalog.Lookup(id) }

// CatalogEntries returns the digest entries of the worker suite's catalog.
func CatalogEntries() []conformance.CatalogEntry { return catalog.Entries() }

// Suite describes the worker suite: its version and catalog digest.
func Suite() conformance.SuiteInfo { return conformance.NewSuiteInfo("worker", CatalogEntries()) }
