package explore

import (
	"github.com/splashv5/conform/conformance"
	"github.com/splashv5/conform/conformance/explore/alphabet"
)

// allNeeds are the needs of the bundled reference worker: every symbol of the alphabet and
// every probe.
var allNeeds = []alphabet.Need{alphabet.NeedDurable, alphabet.NeedCancel, alphabet.NeedCompensation, alphabet.NeedStoreFault,
	alphabet.NeedTypedJSON, alphabet.NeedSecret, alphabet.NeedEffectFence}

// needPlaceholders names, per need, the placeholders of the worker command it cannot run
// without: a journal that outlives a process, the store-fault file, the effect log.
var needPlaceholders = map[alphabet.Need][]string{
	alphabet.NeedDurable:      {conformance.PlaceholderJournal},
	alphabet.NeedCompensation: {conformance.PlaceholderJournal},
	alphabet.NeedStoreFault:   {conformance.PlaceholderJournal, conformance.PlaceholderStoreFault},
	alphabet.NeedEffectFence:  {conformance.PlaceholderJournal, conformance.PlaceholderEffects},
}

// servableNeeds returns the needs of ns that cmd can serve, and for each one left out the
// placeholder it lacks, as the worker suite skips the checks a command's placeholders cannot
// serve: a store fault the worker is never told about would read as a worker that ignores it.
func servableNeeds(ns []alphabet.Need, cmd conformance.WorkerCommand) (kept []alphabet.Need, dropped map[alphabet.Need]string) {
	for _, n := range ns {
		missing := ""
		for _, p := range needPlaceholders[n] {
			if !cmd.Has(p) {
				missing = p
				break
			}
		}
		if missing == "" {
			kept = append(kept, n)
			continue
		}
		if dropped == nil {
			dropped = map[alphabet.Need]string{}
		}
		dropped[n] = missing
	}
	return kept, dropped
}
