package worker

import (
	"regexp"
	"slices"
	"strings"
	"time"

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

// Check is one conformance check.
type Check struct {
	// ID is the permanent identifier, CNF-AREA-NN.
	ID string
	// Level is MUST or SHOULD.
	Level conformance.Level
	// Requirements are the spec requirement IDs the check proves.
	Requirements []string
	// Title is a one-line description of the expected behaviour.
	Title string
	// Needs lists what the worker must offer for the check to run.
	Needs []Need
	// Unreachable, when set, says why no deliberate fault of the reference worker can make
	// this check fail (the mutation harness accepts it instead of a killing fault).
	Unreachable string
	// Timeout, when set, overrides the run's per-check time limit (it is a lower bound: the
	// check gets at least this much).
	Timeout time.Duration
	// run performs the check.
	run func(t *T)
}

// Area returns the AREA part of the check's ID.
func (c *Check) Area() string {
	parts := strings.Split(c.ID, "-")
	if len(parts) != 3 {
		return ""
	}
	return parts[1]
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

func buildCatalog() []*Check {
	var all []*Check
	for _, a := range Areas {
		checks := slices.Clone(a.Checks())
		slices.SortStableFunc(checks, func(x, y *Check) int { return strings.Compare(x.ID, y.ID) })
		all = append(all, checks...)
	}
	return all
}

// Catalog returns every check, ordered by area (in the order of Areas) and then by ID.
func Catalog() []*Check { return slices.Clone(catalog) }

// Lookup returns the check with the given ID.
func Lookup(id string) (*Check, bool) {
	for _, c := range catalog {
		if c.ID == id {
			return c, true
		}
	}
	return nil, false
}

// Select returns the checks of the catalog that pattern selects (conformance.Select).
func Select(checks []*Check, pattern string) ([]*Check, error) {
	return conformance.Select(checks, pattern, (*Check).Entry)
}

// Entry returns what the catalog digest covers of the check.
func (c *Check) Entry() conformance.CatalogEntry {
	return conformance.CatalogEntry{ID: c.ID, Level: c.Level, Requirements: slices.Clone(c.Requirements)}
}
