package explore

import "github.com/splashv5/conform/conformance/explore/alphabet"

// allNeeds are the needs of the bundled reference worker: every symbol of the alphabet.
var allNeeds = []alphabet.Need{alphabet.NeedDurable, alphabet.NeedCancel, alphabet.NeedCompensation, alphabet.NeedStoreFault}
