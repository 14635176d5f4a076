package host

import "time"

// Outcome is one outcome line of a host driver (HDR-003), as the host suite reads it.
type Outcome = outcomeLine

// Raw returns the outcome line as the driver wrote it.
func (o outcomeLine) Raw() []byte { return o.raw }

// DriverClient is a running host driver, the leader of its own process group, for runners
// other than the host suite (conformance/interop): the same client the host checks use.
type DriverClient struct{ d *driver }

// ErrDriverSilent is returned by Await when no outcome came before the deadline.
var ErrDriverSilent = errDriverSilent

// StartDriverClient starts the driver command argv with environment env in working directory
// dir ("" is the caller's) as the leader of its own process group.
func StartDriverClient(argv, env []string, dir string) (*DriverClient, error) {
	d, err := startDriverIn(argv, env, dir)
	if err != nil {
		return nil, err
	}
	return &DriverClient{d: d}, nil
}

// Send writes one command line (its id is set here) and returns the id.
func (c *DriverClient) Send(cmd map[string]any) (uint64, error) { return c.d.send(cmd) }

// Await returns the outcome of command id, waiting until deadline (ErrDriverSilent when none
// came); an outcome for another command, a line that is not an outcome or the end of the
// driver's output is an error.
func (c *DriverClient) Await(id uint64, deadline time.Time) (Outcome, error) {
	return c.d.await(id, deadline)
}

// Exited is closed once the driver process has exited.
func (c *DriverClient) Exited() <-chan struct{} { return c.d.exited }

// Kill kills the driver's whole process group and reaps the driver.
func (c *DriverClient) Kill() { c.d.kill() }

// Texts returns the driver's kept standard error and outcome lines (each bounded).
func (c *DriverClient) Texts() (stderr, output string) { return c.d.texts() }

// Pid returns the driver's process id, which is also its process group id.
func (c *DriverClient) Pid() int { return c.d.cmd.Process.Pid }
