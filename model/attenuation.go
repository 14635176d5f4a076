package model

import "sort"

// This file models capability attenuation as a lattice. A grant's authority is four numeric
// limits and a set of resource selectors; one authority is below another (Leq) when every limit
// is at most the other's and every selector is also the other's. Attenuation may only move down
// the lattice, and composing two attenuations is the same as attenuating once by their meet.
// The model decides, without looking at the implementation, which attenuations succeed and why
// the others fail.

// Limit names one of the four numeric limits of a grant.
type Limit int

// The four limits, in the grant's field order.
const (
	LimitCalls Limit = iota
	LimitInputBytes
	LimitOutputBytes
	LimitCompensations
	NumLimits
)

// Selector is an opaque resource selector: a kind (0 to 3, in sort order) and an id.
type Selector struct {
	Kind int
	ID   string
}

// SelectorSet is a set of selectors.
type SelectorSet map[Selector]bool

// NewSelectorSet returns the set of the given selectors.
func NewSelectorSet(ss ...Selector) SelectorSet {
	out := SelectorSet{}
	for _, s := range ss {
		out[s] = true
	}
	return out
}

// SubsetOf reports whether every selector of s is in o.
func (s SelectorSet) SubsetOf(o SelectorSet) bool {
	for k := range s {
		if !o[k] {
			return false
		}
	}
	return true
}

// Intersect returns the selectors in both s and o.
func (s SelectorSet) Intersect(o SelectorSet) SelectorSet {
	out := SelectorSet{}
	for k := range s {
		if o[k] {
			out[k] = true
		}
	}
	return out
}

// Equal reports whether s and o hold the same selectors.
func (s SelectorSet) Equal(o SelectorSet) bool { return len(s) == len(o) && s.SubsetOf(o) }

// Sorted returns the selectors by kind, then id.
func (s SelectorSet) Sorted() []Selector {
	out := make([]Selector, 0, len(s))
	for k := range s {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Kind != out[j].Kind {
			return out[i].Kind < out[j].Kind
		}
		return out[i].ID < out[j].ID
	})
	return out
}

// Authority is the lattice value of one grant.
type Authority struct {
	Tool      string
	Format    string
	Limits    [NumLimits]uint64
	Resources SelectorSet
}

// Leq reports a ⊑ b: same tool and format, every limit at most b's, resources a subset.
func (a Authority) Leq(b Authority) bool {
	if a.Tool != b.Tool || a.Format != b.Format {
		return false
	}
	for i := range a.Limits {
		if a.Limits[i] > b.Limits[i] {
			return false
		}
	}
	return a.Resources.SubsetOf(b.Resources)
}

// Equal reports whether a and b are the same authority.
func (a Authority) Equal(b Authority) bool { return a.Leq(b) && b.Leq(a) }

// OptLimit is a limit a restriction may or may not set.
type OptLimit struct {
	V   uint64
	Set bool
}

// Restriction is a grant attenuation: each limit and the resource set may be replaced.
type Restriction struct {
	Limits       [NumLimits]OptLimit
	Resources    SelectorSet
	SetResources bool
}

// Meet returns the restriction that is at least as strict as both r and o: for each limit the
// smaller of the set values, and the intersection of the resource sets that are set. Unset
// fields are the top of the lattice.
func (r Restriction) Meet(o Restriction) Restriction {
	out := Restriction{}
	for i := range r.Limits {
		a, b := r.Limits[i], o.Limits[i]
		switch {
		case a.Set && b.Set:
			out.Limits[i] = OptLimit{V: min(a.V, b.V), Set: true}
		case a.Set:
			out.Limits[i] = a
		default:
			out.Limits[i] = b
		}
	}
	switch {
	case r.SetResources && o.SetResources:
		out.Resources, out.SetResources = r.Resources.Intersect(o.Resources), true
	case r.SetResources:
		out.Resources, out.SetResources = r.Resources, true
	case o.SetResources:
		out.Resources, out.SetResources = o.Resources, true
	}
	return out
}

// Outcome is the model's verdict on an attenuation.
type Outcome int

// The verdicts. The order of the checks is: zero limit, widening, expanding.
const (
	// Attenuated: the attenuation succeeds.
	Attenuated Outcome = iota
	// ZeroLimit: the resulting calls, input or output limit would be 0.
	ZeroLimit
	// Widens: a resulting limit would exceed the parent's.
	Widens
	// Expands: the resulting resources would not be a subset of the parent's.
	Expands
	// UnknownTool: a manifest attenuation names a tool the manifest does not grant.
	UnknownTool
	// InvalidTool: an allowed tool is not a token.
	InvalidTool
)

var outcomeNames = [...]string{"Attenuated", "ZeroLimit", "Widens", "Expands", "UnknownTool", "InvalidTool"}

// String names the outcome.
func (o Outcome) String() string { return outcomeNames[o] }

// Attenuate applies r to a valid parent p: each limit is r's when set and p's otherwise, the
// resources are r's when set and p's otherwise; then zero calls, input or output limits give
// ZeroLimit, a limit above p's gives Widens, resources outside p's give Expands.
func Attenuate(p Authority, r Restriction) (Authority, Outcome) {
	out := Authority{Tool: p.Tool, Format: p.Format, Resources: p.Resources}
	for i := range out.Limits {
		out.Limits[i] = p.Limits[i]
		if r.Limits[i].Set {
			out.Limits[i] = r.Limits[i].V
		}
	}
	if out.Limits[LimitCalls] == 0 || out.Limits[LimitInputBytes] == 0 || out.Limits[LimitOutputBytes] == 0 {
		return Authority{}, ZeroLimit
	}
	for i := range out.Limits {
		if out.Limits[i] > p.Limits[i] {
			return Authority{}, Widens
		}
	}
	if r.SetResources {
		out.Resources = r.Resources
	}
	if !out.Resources.SubsetOf(p.Resources) {
		return Authority{}, Expands
	}
	return out, Attenuated
}

// ManifestAuthority is the lattice value of a manifest: its grants in order.
type ManifestAuthority struct {
	Session string
	Grants  []Authority
}

// Leq reports m ⊑ n: same session, and the grants of m are, in n's relative order, each below
// n's grant for the same tool.
func (m ManifestAuthority) Leq(n ManifestAuthority) bool {
	if m.Session != n.Session {
		return false
	}
	j := 0
	for _, g := range m.Grants {
		for j < len(n.Grants) && n.Grants[j].Tool != g.Tool {
			j++
		}
		if j == len(n.Grants) || !g.Leq(n.Grants[j]) {
			return false
		}
		j++
	}
	return true
}

// ManifestRestriction is a manifest attenuation: an optional set of tools to keep and
// restrictions by tool.
type ManifestRestriction struct {
	Allowed    map[string]bool
	SetAllowed bool
	Grants     map[string]Restriction
}

// AttenuateManifest applies r to a valid manifest m. It returns the verdict and, for a
// failure, the tool it concerns. Restricted tools must all exist (checked in ascending order);
// allowed tools must be tokens and exist (ascending order); the kept grants, in m's order, are
// attenuated by their restrictions and the first failure wins; restrictions of dropped tools
// are never applied.
func AttenuateManifest(m ManifestAuthority, r ManifestRestriction) (ManifestAuthority, Outcome, string) {
	has := map[string]bool{}
	for _, g := range m.Grants {
		has[g.Tool] = true
	}
	for _, tool := range sortedKeys(r.Grants) {
		if !has[tool] {
			return ManifestAuthority{}, UnknownTool, tool
		}
	}
	if r.SetAllowed {
		for _, tool := range sortedKeys(r.Allowed) {
			if !IsToken(tool) {
				return ManifestAuthority{}, InvalidTool, tool
			}
			if !has[tool] {
				return ManifestAuthority{}, UnknownTool, tool
			}
		}
	}
	out := ManifestAuthority{Session: m.Session}
	for _, g := range m.Grants {
		if r.SetAllowed && !r.Allowed[g.Tool] {
			continue
		}
		if res, ok := r.Grants[g.Tool]; ok {
			ng, verdict := Attenuate(g, res)
			if verdict != Attenuated {
				return ManifestAuthority{}, verdict, g.Tool
			}
			g = ng
		}
		out.Grants = append(out.Grants, g)
	}
	return out, Attenuated, ""
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
