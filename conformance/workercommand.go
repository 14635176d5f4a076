package conformance

import (
	"path/filepath"
	"strings"
)

// WorkerCommand is a worker command and its arguments, possibly holding the placeholders of
// ReferenceWorkerArgs; every runner that launches a worker substitutes them the same way.
type WorkerCommand []string

// Has reports whether any argument contains the placeholder.
func (c WorkerCommand) Has(placeholder string) bool {
	for _, a := range c {
		if strings.Contains(a, placeholder) {
			return true
		}
	}
	return false
}

// Expand returns the command with every placeholder replaced by its value in values.
func (c WorkerCommand) Expand(values map[string]string) []string {
	out := make([]string, len(c))
	for i, a := range c {
		for k, v := range values {
			a = strings.ReplaceAll(a, k, v)
		}
		out[i] = a
	}
	return out
}

// The names of the files a placeholder stands for, inside a run's scratch directory.
const (
	JournalFile      = "journal"
	EffectsFile      = "effects.jsonl"
	StoreFaultFile   = "store-fault"
	StorageKeyFile   = "storage-key"
	SecretSourceFile = "secret-source"
)

// PlaceholderValues returns the value of every placeholder for a worker whose files live in
// dir and whose journal scope is scope.
func PlaceholderValues(dir, scope string) map[string]string {
	return map[string]string{
		PlaceholderJournal:      filepath.Join(dir, JournalFile),
		PlaceholderEffects:      filepath.Join(dir, EffectsFile),
		PlaceholderScope:        scope,
		PlaceholderStoreFault:   filepath.Join(dir, StoreFaultFile),
		PlaceholderStorageKey:   filepath.Join(dir, StorageKeyFile),
		PlaceholderSecretSource: filepath.Join(dir, SecretSourceFile),
	}
}
