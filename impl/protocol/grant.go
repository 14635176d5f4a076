package protocol

import (
	"slices"
	"strconv"
	"strings"

	"github.com/splashv5/conform/impl/canonjson"
)

// Opt is an optional value, the Go form of a Rust Option: Set is false for None.
type Opt[T any] struct {
	V   T
	Set bool
}

// Some returns a set Opt holding v.
func Some[T any](v T) Opt[T] { return Opt[T]{V: v, Set: true} }

// Get returns the value and whether it is set.
func (o Opt[T]) Get() (T, bool) { return o.V, o.Set }

// ResourceSelector is one opaque resource granted to a tool. Selectors order by Kind, then by
// the bytes of ID.
type ResourceSelector struct {
	Kind ResourceKind
	ID   string
}

// Validate checks that ID is a token (field "resource selector").
func (r ResourceSelector) Validate() error {
	return ValidateToken(FieldResourceSelector, r.ID)
}

// Compare orders selectors as the reference's derived Ord does: by kind, then by ID bytes.
func (r ResourceSelector) Compare(o ResourceSelector) int {
	if r.Kind != o.Kind {
		if r.Kind < o.Kind {
			return -1
		}
		return 1
	}
	return strings.Compare(r.ID, o.ID)
}

// AppendJSON appends {"kind":...,"id":...}.
func (r ResourceSelector) AppendJSON(dst []byte) []byte {
	dst = append(dst, `{"kind":"`...)
	dst = append(dst, r.Kind.String()...)
	dst = append(dst, `","id":`...)
	dst = canonjson.AppendString(dst, r.ID)
	return append(dst, '}')
}

// NormalizeResources returns the set of selectors in rs: sorted and without duplicates, as the
// reference's BTreeSet holds them. The result is a new slice (nil for an empty set).
func NormalizeResources(rs []ResourceSelector) []ResourceSelector {
	if len(rs) == 0 {
		return nil
	}
	out := slices.Clone(rs)
	slices.SortFunc(out, ResourceSelector.Compare)
	return slices.CompactFunc(out, func(a, b ResourceSelector) bool { return a == b })
}

func resourcesNormalized(rs []ResourceSelector) bool {
	for i := 1; i < len(rs); i++ {
		if rs[i-1].Compare(rs[i]) >= 0 {
			return false
		}
	}
	return true
}

// sortedResources returns rs as a sorted set, without copying when it already is one.
func sortedResources(rs []ResourceSelector) []ResourceSelector {
	if resourcesNormalized(rs) {
		return rs
	}
	return NormalizeResources(rs)
}

// appendResources writes rs as the sorted, deduplicated JSON array of a BTreeSet without
// allocating: a sorted set is written directly, anything else by repeated selection of the
// next larger selector.
func appendResources(dst []byte, rs []ResourceSelector) []byte {
	dst = append(dst, '[')
	if resourcesNormalized(rs) {
		for i, r := range rs {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = r.AppendJSON(dst)
		}
		return append(dst, ']')
	}
	var last *ResourceSelector
	for first := true; ; first = false {
		var next *ResourceSelector
		for i := range rs {
			if last != nil && rs[i].Compare(*last) <= 0 {
				continue
			}
			if next == nil || rs[i].Compare(*next) < 0 {
				next = &rs[i]
			}
		}
		if next == nil {
			break
		}
		if !first {
			dst = append(dst, ',')
		}
		dst = next.AppendJSON(dst)
		last = next
	}
	return append(dst, ']')
}

// isSubset reports whether every selector of sub is in super.
func isSubset(sub, super []ResourceSelector) bool {
	for _, r := range sub {
		if !slices.Contains(super, r) {
			return false
		}
	}
	return true
}

// CapabilityGrant is the authority one session gives one tool. Resources is a set: the JSON
// form is sorted and deduplicated whatever the slice order, and decoding yields a normalized
// slice.
type CapabilityGrant struct {
	Tool             string
	Format           EnvelopeFormat
	MaxCalls         uint32
	MaxInputBytes    uint32
	MaxOutputBytes   uint32
	MaxCompensations uint32
	Resources        []ResourceSelector
}

// TextGrant returns a text grant for tool with the reference constructor's defaults: one call,
// 16 KiB input, 64 KiB output, no compensation, no resources.
func TextGrant(tool string) CapabilityGrant {
	return CapabilityGrant{
		Tool:           tool,
		Format:         FormatText,
		MaxCalls:       DefaultMaxCalls,
		MaxInputBytes:  DefaultMaxInputBytes,
		MaxOutputBytes: DefaultMaxOutputBytes,
	}
}

// JSONGrant is [TextGrant] with the JSON format.
func JSONGrant(tool string) CapabilityGrant {
	g := TextGrant(tool)
	g.Format = FormatJSON
	return g
}

// Validate checks, in the reference's order: the tool token, max_calls ≠ 0, both byte limits
// ≠ 0, at most 64 distinct resources, then each resource id (in sorted order).
func (g CapabilityGrant) Validate() error {
	if err := ValidateToken(FieldTool, g.Tool); err != nil {
		return err
	}
	if g.MaxCalls == 0 {
		return &Error{Kind: ErrInvalidGrant, Message: "max_calls must be greater than zero"}
	}
	if g.MaxInputBytes == 0 || g.MaxOutputBytes == 0 {
		return &Error{Kind: ErrInvalidGrant, Message: "byte limits must be greater than zero"}
	}
	rs := sortedResources(g.Resources)
	if len(rs) > MaxResourcesPerGrant {
		return &Error{Kind: ErrTooManyResources, Maximum: MaxResourcesPerGrant}
	}
	for _, r := range rs {
		if err := r.Validate(); err != nil {
			return err
		}
	}
	return g.checkEnums()
}

// checkEnums rejects enum values that no Rust value can hold; they could not be serialized.
func (g CapabilityGrant) checkEnums() error {
	if !g.Format.Valid() {
		return unencodable("envelope format " + g.Format.String())
	}
	for _, r := range g.Resources {
		if !r.Kind.Valid() {
			return unencodable("resource kind " + r.Kind.String())
		}
	}
	return nil
}

func unencodable(what string) error {
	return &Error{Kind: ErrSerialization, Message: "cannot serialize invalid " + what}
}

// AppendJSON appends the grant's JSON: all seven fields in declaration order, resources
// sorted and deduplicated, max_compensations and resources always written.
func (g CapabilityGrant) AppendJSON(dst []byte) []byte {
	dst = append(dst, `{"tool":`...)
	dst = canonjson.AppendString(dst, g.Tool)
	dst = append(dst, `,"format":"`...)
	dst = append(dst, g.Format.String()...)
	dst = append(dst, `","max_calls":`...)
	dst = strconv.AppendUint(dst, uint64(g.MaxCalls), 10)
	dst = append(dst, `,"max_input_bytes":`...)
	dst = strconv.AppendUint(dst, uint64(g.MaxInputBytes), 10)
	dst = append(dst, `,"max_output_bytes":`...)
	dst = strconv.AppendUint(dst, uint64(g.MaxOutputBytes), 10)
	dst = append(dst, `,"max_compensations":`...)
	dst = strconv.AppendUint(dst, uint64(g.MaxCompensations), 10)
	dst = append(dst, `,"resources":`...)
	dst = appendResources(dst, g.Resources)
	return append(dst, '}')
}

// Equal reports whether two grants are the same value (resources compared as sets).
func (g CapabilityGrant) Equal(o CapabilityGrant) bool {
	return g.Tool == o.Tool && g.Format == o.Format && g.MaxCalls == o.MaxCalls &&
		g.MaxInputBytes == o.MaxInputBytes && g.MaxOutputBytes == o.MaxOutputBytes &&
		g.MaxCompensations == o.MaxCompensations &&
		slices.Equal(sortedResources(g.Resources), sortedResources(o.Resources))
}

// GrantAttenuation lists optional restrictions of a grant. Unset fields keep the grant's
// value. Set Resources replaces the resource set (an empty set is allowed).
type GrantAttenuation struct {
	MaxCalls         Opt[uint32]
	MaxInputBytes    Opt[uint32]
	MaxOutputBytes   Opt[uint32]
	MaxCompensations Opt[uint32]
	Resources        Opt[[]ResourceSelector]
}

// AppendJSON appends the attenuation's JSON; unset fields are left out, so the zero value is
// {}.
func (a GrantAttenuation) AppendJSON(dst []byte) []byte {
	dst = append(dst, '{')
	n := 0
	field := func(name string) {
		if n > 0 {
			dst = append(dst, ',')
		}
		n++
		dst = append(dst, '"')
		dst = append(dst, name...)
		dst = append(dst, `":`...)
	}
	for _, f := range [...]struct {
		name string
		v    Opt[uint32]
	}{
		{"max_calls", a.MaxCalls},
		{"max_input_bytes", a.MaxInputBytes},
		{"max_output_bytes", a.MaxOutputBytes},
		{"max_compensations", a.MaxCompensations},
	} {
		if f.v.Set {
			field(f.name)
			dst = strconv.AppendUint(dst, uint64(f.v.V), 10)
		}
	}
	if a.Resources.Set {
		field("resources")
		dst = appendResources(dst, a.Resources.V)
	}
	return append(dst, '}')
}

// Attenuate returns a grant with no more authority than g, following the reference: validate
// g; take each limit from a when set; a zero calls or byte limit is InvalidGrant; a limit
// above g's is AttenuationWidensLimits; resources not a subset of g's is
// AttenuationExpandsResources; the result is validated.
func (g CapabilityGrant) Attenuate(a GrantAttenuation) (CapabilityGrant, error) {
	if err := g.Validate(); err != nil {
		return CapabilityGrant{}, err
	}
	pick := func(o Opt[uint32], cur uint32) uint32 {
		if o.Set {
			return o.V
		}
		return cur
	}
	out := CapabilityGrant{
		Tool:             g.Tool,
		Format:           g.Format,
		MaxCalls:         pick(a.MaxCalls, g.MaxCalls),
		MaxInputBytes:    pick(a.MaxInputBytes, g.MaxInputBytes),
		MaxOutputBytes:   pick(a.MaxOutputBytes, g.MaxOutputBytes),
		MaxCompensations: pick(a.MaxCompensations, g.MaxCompensations),
	}
	if out.MaxCalls == 0 || out.MaxInputBytes == 0 || out.MaxOutputBytes == 0 {
		return CapabilityGrant{}, &Error{Kind: ErrInvalidGrant, Message: "attenuated limits must be greater than zero"}
	}
	if out.MaxCalls > g.MaxCalls || out.MaxInputBytes > g.MaxInputBytes ||
		out.MaxOutputBytes > g.MaxOutputBytes || out.MaxCompensations > g.MaxCompensations {
		return CapabilityGrant{}, &Error{Kind: ErrAttenuationWidensLimits}
	}
	if a.Resources.Set {
		out.Resources = NormalizeResources(a.Resources.V)
	} else {
		out.Resources = NormalizeResources(g.Resources)
	}
	if !isSubset(out.Resources, g.Resources) {
		return CapabilityGrant{}, &Error{Kind: ErrAttenuationExpandsResources}
	}
	if err := out.Validate(); err != nil {
		return CapabilityGrant{}, err
	}
	return out, nil
}

// CapabilityManifest is the set of grants of one session. Grants keep their order.
type CapabilityManifest struct {
	ProtocolVersion uint16
	SessionID       string
	Grants          []CapabilityGrant
}

// NewCapabilityManifest returns a validated version-5 manifest.
func NewCapabilityManifest(sessionID string, grants []CapabilityGrant) (CapabilityManifest, error) {
	m := CapabilityManifest{ProtocolVersion: ProtocolVersion, SessionID: sessionID, Grants: grants}
	if err := m.Validate(); err != nil {
		return CapabilityManifest{}, err
	}
	return m, nil
}

// Validate checks, in the reference's order: the version, at most 128 grants, the session
// token, then for each grant in order its own validation and a duplicate-tool check.
func (m CapabilityManifest) Validate() error {
	if err := validateVersion(m.ProtocolVersion); err != nil {
		return err
	}
	if len(m.Grants) > MaxCapabilityGrantsPerManifest {
		return &Error{Kind: ErrTooManyGrants, Maximum: MaxCapabilityGrantsPerManifest}
	}
	if err := ValidateToken(FieldSessionID, m.SessionID); err != nil {
		return err
	}
	for i, g := range m.Grants {
		if err := g.Validate(); err != nil {
			return err
		}
		for _, prev := range m.Grants[:i] {
			if prev.Tool == g.Tool {
				return &Error{Kind: ErrDuplicateGrant, Value: g.Tool}
			}
		}
	}
	return nil
}

// Grant returns the grant for tool.
func (m CapabilityManifest) Grant(tool string) (CapabilityGrant, bool) {
	for _, g := range m.Grants {
		if g.Tool == tool {
			return g, true
		}
	}
	return CapabilityGrant{}, false
}

func (m CapabilityManifest) hasTool(tool string) bool {
	_, ok := m.Grant(tool)
	return ok
}

// AppendJSON appends {"protocol_version":...,"session_id":...,"grants":[...]}.
func (m CapabilityManifest) AppendJSON(dst []byte) []byte {
	dst = append(dst, `{"protocol_version":`...)
	dst = strconv.AppendUint(dst, uint64(m.ProtocolVersion), 10)
	dst = append(dst, `,"session_id":`...)
	dst = canonjson.AppendString(dst, m.SessionID)
	dst = append(dst, `,"grants":[`...)
	for i, g := range m.Grants {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = g.AppendJSON(dst)
	}
	return append(dst, "]}"...)
}

// Equal reports whether two manifests are the same value.
func (m CapabilityManifest) Equal(o CapabilityManifest) bool {
	return m.ProtocolVersion == o.ProtocolVersion && m.SessionID == o.SessionID &&
		slices.EqualFunc(m.Grants, o.Grants, CapabilityGrant.Equal)
}

// ManifestAttenuation restricts a manifest. AllowedTools, when set, keeps only the named
// grants (an empty set gives a manifest without grants); Grants restricts individual grants by
// tool. Both are sets/maps: the JSON form is sorted.
type ManifestAttenuation struct {
	AllowedTools Opt[[]string]
	Grants       map[string]GrantAttenuation
}

// AppendJSON appends the attenuation's JSON: allowed_tools (sorted, deduplicated) only when
// set, grants (sorted by tool) always.
func (a ManifestAttenuation) AppendJSON(dst []byte) []byte {
	dst = append(dst, '{')
	if a.AllowedTools.Set {
		dst = append(dst, `"allowed_tools":[`...)
		tools := slices.Clone(a.AllowedTools.V)
		slices.Sort(tools)
		for i, t := range slices.Compact(tools) {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = canonjson.AppendString(dst, t)
		}
		dst = append(dst, "],"...)
	}
	dst = append(dst, `"grants":{`...)
	for i, tool := range sortedKeys(a.Grants) {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = canonjson.AppendString(dst, tool)
		dst = append(dst, ':')
		dst = a.Grants[tool].AppendJSON(dst)
	}
	return append(dst, "}}"...)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// Attenuate returns a manifest with no more authority than m, following the reference: validate
// m; every restricted tool (in sorted order) must exist (UnknownTool); every allowed tool (in
// sorted order) must be a token (InvalidToken, field "tool") and exist (UnknownTool); keep the
// allowed grants in their original order and restrict each kept grant that has a restriction
// (the first error in grant order wins); restrictions of dropped tools are never applied; the
// result is validated as a new manifest for the same session.
func (m CapabilityManifest) Attenuate(a ManifestAttenuation) (CapabilityManifest, error) {
	if err := m.Validate(); err != nil {
		return CapabilityManifest{}, err
	}
	for _, tool := range sortedKeys(a.Grants) {
		if !m.hasTool(tool) {
			return CapabilityManifest{}, &Error{Kind: ErrUnknownTool, Value: tool}
		}
	}
	var allowed []string
	if a.AllowedTools.Set {
		allowed = slices.Clone(a.AllowedTools.V)
		slices.Sort(allowed)
		allowed = slices.Compact(allowed)
		for _, tool := range allowed {
			if err := ValidateToken(FieldTool, tool); err != nil {
				return CapabilityManifest{}, err
			}
			if !m.hasTool(tool) {
				return CapabilityManifest{}, &Error{Kind: ErrUnknownTool, Value: tool}
			}
		}
	}
	grants := make([]CapabilityGrant, 0, len(m.Grants))
	for _, g := range m.Grants {
		if a.AllowedTools.Set {
			if _, found := slices.BinarySearch(allowed, g.Tool); !found {
				continue
			}
		}
		if r, ok := a.Grants[g.Tool]; ok {
			ng, err := g.Attenuate(r)
			if err != nil {
				return CapabilityManifest{}, err
			}
			g = ng
		} else {
			g.Resources = NormalizeResources(g.Resources)
		}
		grants = append(grants, g)
	}
	return NewCapabilityManifest(m.SessionID, grants)
}
