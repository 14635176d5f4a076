package worker

// Point names a place in a durable flow at which a fault can be injected. The points are the
// persistence points of the worker-runtime chapter, seen from just after each one.
type Point uint8

// The fault points.
const (
	// PointAdmissionPersisted: a new dispatch or compensation record is durable as pending and
	// the adapter has not run yet.
	PointAdmissionPersisted Point = iota + 1
	// PointAdapterReturned: the adapter of a dispatch or compensation returned a status that
	// is not yet persisted.
	PointAdapterReturned
	// PointObservationPersisted: the observed status of a dispatch or compensation is durable
	// and the answer is not yet sealed.
	PointObservationPersisted
	// PointReconciliationPersisted: a reconciliation's observation is durable and the answer
	// is not yet sealed.
	PointReconciliationPersisted
)

var pointNames = [...]string{"", "after-admission", "after-adapter", "after-observation", "after-reconciliation"}

// String returns the point's name, such as "after-admission".
func (p Point) String() string {
	if int(p) < len(pointNames) && p > 0 {
		return pointNames[p]
	}
	return "point?"
}

// ParsePoint returns the point with the given name.
func ParsePoint(name string) (Point, bool) {
	for i, n := range pointNames {
		if i > 0 && n == name {
			return Point(i), true
		}
	}
	return 0, false
}

// Faults injects deliberate misbehaviour for the crash and mutation tests of the conformance
// suite. A nil *Faults, or the zero value, injects nothing (WRK-095).
type Faults struct {
	// At, when set, is called each time a flow reaches a point. A crash test blocks here and
	// kills the process.
	At func(Point)
}

func (f *Faults) at(p Point) {
	if f != nil && f.At != nil {
		f.At(p)
	}
}
