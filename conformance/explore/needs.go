package explore

import "github.com/splashv5/conform/conformance/explore/alphabet"

// allNeeds are the needs of the bundled reference worker: every symbol of the alphabet and
// every probe.
var allNeeds = []alphabet.Need{alphabet.NeedDurable, alphabet.NeedCancel, alphabet.NeedCompensation, alphabet.NeedStoreFault,
	alphabet.NeedTypedJSON, alphabet.NeedSecret, alphabet.NeedEffectFence}
