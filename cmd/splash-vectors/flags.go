package main

// flagNotes explains every flag a test may carry. A file's "notes" object holds the entries
// of the flags its tests use.
var flagNotes = map[string]string{
	// Recovery of a restored step engine (ledger.json).
	"LedgerRecovery": "A step engine restored from a stored ledger resumes under an explicit recovery policy.",
	// Store sequences (storage.json).
	"StoreSequence":     "A sequence of operations on one authenticated store over a fresh, empty backend.",
	"StorageCommitment": "The record commitment a rollback anchor keeps for one stored envelope.",
	// Script evaluator (scripts.json).
	"ScriptSource":   "Source admission and the lexical rules: what is rejected before anything runs, and where.",
	"ScriptGrammar":  "The statements, expressions and precedence of the script subset.",
	"ScriptValue":    "What an expression evaluates to: operators, equality, conditions, scopes, functions, indexing.",
	"ScriptRecovery": "Catchable errors: try/catch, uncaught diagnostics and error values.",
	"ScriptTool":     "The mod.tool binding: host calls, their input text, promises and failures.",
	"ScriptJSON":     "to_json and parse_json at the script's bounded JSON boundary.",
	"ScriptLimit":    "An evaluation stopped by a bound of section 20.8.",

	// JSON contract schemas (contract_schemas.json).
	"ContractCompile": "A contract schema compiled on its own (RUN-020): accepted, or refused with the reference's " +
		"SchemaError variant and its exact text.",
	"ContractValidation": "A value validated against a compiled contract schema (RUN-021): it passes, or the first " +
		"violation's path and message, rendered as a tool's input and output refusal.",
	"SchemaKeyOrder": "A schema's keys are checked in byte order, not in the order of the text: the first offending " +
		"key in byte order is the one reported.",

	// Provenance.
	"ReferenceAnchor": "Verbatim output recorded by running the Rust reference (serde_json 1.0.150, " +
		"both feature modes); an anchor that does not come from the Go implementation. The anchors " +
		"are listed in docs/reference-anchors.md.",
	"Boundary": "Exercises the exact edge of a limit (the last accepted or first rejected size, " +
		"length, depth or count).",
	"LargeInput": "Input or output with a run of at least 4,096 identical bytes (boundary tests near a size " +
		"limit); such runs are stored as {\"parts\":[...]} objects in the file.",

	// Canonical JSON writer and reader.
	"Whitespace":         "Insignificant whitespace around or between tokens.",
	"KeyOrder":           "Object members are written sorted by the raw UTF-8 bytes of their keys.",
	"DuplicateKey":       "A payload object repeats a key; the last occurrence wins.",
	"EscapedKey":         "A key is spelled with escapes; matching uses the decoded text.",
	"StringEscape":       "String escaping on input or output.",
	"Unicode":            "Non-ASCII text, written back raw as UTF-8.",
	"Surrogate":          "\\u escapes of UTF-16 surrogates: pairs combine, lone halves are rejected.",
	"ControlCharacter":   "A raw control byte (0x00-0x1F) inside a string is rejected.",
	"InvalidUtf8":        "The input bytes are not valid UTF-8 (given as hex).",
	"ByteOrderMark":      "A leading UTF-8 byte order mark is rejected.",
	"TrailingCharacters": "Non-whitespace after the top-level value is rejected.",
	"Syntax":             "Malformed JSON structure or literal.",
	"NumberGrammar":      "A number token outside the RFC 8259 grammar is rejected.",
	"Integer":            "Integer tokens and the 64-bit integer ranges.",
	"BigInteger":         "An integer outside the u64/i64 ranges: kept as text in preserve mode, a float in lossy mode.",
	"Float":              "A number with a fraction or exponent.",
	"Exponent":           "Exponent spelling: preserve mode writes 'e' and an explicit sign; lossy mode re-lays out the value.",
	"TrailingZeros":      "Trailing zeros of a fraction: kept in preserve mode, dropped in lossy mode.",
	"NegativeZero":       "Negative zero: -0 is 0 in preserve mode and -0.0 in lossy mode; -0.0 stays -0.0.",
	"FloatLayout":        "The shortest-digits float layout (positional for exponents -5..15, otherwise exponent form with 'e+'/'e-').",
	"LossyRounding":      "The lossy reader's conversion is not correctly rounded; the expected value reproduces the reference's drift.",
	"OutOfRange":         "A magnitude beyond binary64: rejected in lossy mode, kept in preserve mode; underflow becomes zero.",
	"ModeDependent":      "The expected outcome differs between preserve and lossy mode.",
	"PeerProof":          "Frames the peer sent are opened first; a payload number no Lossy writer writes proves a text-keeping peer (ENC-053).",
	"DurableOutcome":     "A durable answer (operation_result, reconciled_operation, compensation_result), sealed whatever its numbers (ENC-054).",
	"PrivateNumberKey":   "The $serde_json::private::Number object quirk of preserve mode.",
	"RecursionLimit":     "The reader's whole-document nesting limit (127 levels accepted, 128 rejected).",
	"Scalar":             "A scalar or null at the top level.",

	// Payload validation.
	"PayloadEnvelope": "A json payload must be an object or an array.",
	"PayloadDepth":    "The payload depth rule: the root is depth 1 and scalars count as a level; more than 32 is rejected.",

	// Message decoding.
	"CanonicalForm":     "Already canonical input; the output equals the input.",
	"Reencoding":        "Non-canonical but equivalent input; the output is the canonical re-serialization.",
	"UnknownField":      "An unknown member in a structure that ignores it: accepted and dropped from the output.",
	"DenyUnknownFields": "An unknown member in a structure that denies unknown fields: rejected.",
	"MissingField":      "A required member is missing.",
	"DefaultField":      "A member with a declared default is missing and takes its default.",
	"NullField":         "A member given null.",
	"DuplicateField":    "A structure or enum body repeats a member: rejected.",
	"PositionalArray":   "A structure given in positional (array) form.",
	"TagPosition":       "An enum tag ('type', 'state', 'format') appears after other members.",
	"UnknownVariant":    "An enum string that is not one of the exact snake_case spellings.",
	"IntegerField":      "An integer-typed field given a fraction, exponent, string, negative or out-of-range value.",
	"Version":           "The protocol_version field.",
	"Token":             "The identifier-token grammar (1..128 bytes of a-z, 0-9, '.', '_', '-').",
	"Validation":        "A semantic check run after decoding (message validation).",
	"HeaderOnly":        "invoke and result validate the header only; their payload is not checked at decode time.",
	"MessageKind":       "Covers one of the twelve message kinds.",
	"SizeLimit":         "The 1 MiB limit on a message, frame line or tag input.",

	// Frames.
	"Seal":            "Sealing: the tag input, tag and frame line for a message.",
	"SequenceAdvance": "Several frames from one sealer or opener; sequences advance by one per success.",
	"StateUnchanged":  "A failed seal or open does not consume a sequence number; a following valid frame still succeeds.",
	"NonPortable":     "A payload number that is not a fixed point of both modes.",
	"Tamper":          "One byte of a valid frame line was changed.",
	"TamperSequence":  "The change is in the sequence number.",
	"TamperType":      "The change is in the message type tag.",
	"TamperFieldName": "The change is in a member name.",
	"TamperValue":     "The change is in a field value other than the payload.",
	"TamperPayload":   "The change is in the payload.",
	"TamperTag":       "The change is in the auth_tag hex.",
	"TamperStructure": "The change is in JSON punctuation.",
	"WrongKey":        "The frame was sealed with another key.",
	"ReflectedRole":   "The frame was sealed by the opener's own role and reflected back.",
	"Replay":          "A frame that was already opened is presented again.",
	"SequenceGap":     "A frame that skips ahead or lies in the past.",
	"WrongSession":    "The frame was sealed for, or names, another session.",
	"TagEncoding":     "The auth_tag is not exactly 64 lowercase hex digits.",
	"FrameShape":      "The frame object itself is malformed (missing, duplicate or mistyped member).",
	"Leniency":        "A non-canonical frame text whose decoded message re-serializes to the tagged canonical form: accepted.",

	// Bootstrap.
	"Bootstrap": "The private-pipe bootstrap preamble.",
	"Truncated": "The stream ends before the preamble is complete.",
	"Trailing":  "Bytes follow the preamble; the reader consumes exactly the preamble.",

	// Manifests and attenuation.
	"CheckOrder":       "Several rules are broken; the first check in the prescribed order decides the error.",
	"Limit":            "A structural count limit (grants, resources).",
	"Dedup":            "Repeated set elements are deduplicated before counting and writing.",
	"DroppedTool":      "A restriction on a tool removed by allowed_tools is only existence-checked, never applied.",
	"Widening":         "The attenuation would widen a limit or add a resource.",
	"EmptySet":         "An explicitly empty set.",
	"Identity":         "The empty attenuation returns the parent unchanged.",
	"GrantFields":      "Every grant field enters the fingerprint.",
	"TextPayload":      "A text payload.",
	"JSONPayload":      "A json payload.",
	"CompensationKey":  "The compensation key rule (a token starting with 'cmp-').",
	"GrantFingerprint": "The grant_fingerprint field rule (exactly 64 lowercase hex digits).",
	"FailureMessage":   "The failed-status message rule (1..4096 bytes).",
	"Cancellation":     "The cancellation id must differ from its target request id.",

	// Session authorizer.
	"Authorize":            "Ordinary authorization of an invocation.",
	"Dispatch":             "Authorization of a durable operation dispatch.",
	"Reconciliation":       "Authorization of, or a response to, an operation reconciliation.",
	"Compensation":         "A compensation request, response or journal record.",
	"Cancel":               "Authorization of a cancellation or validation of its result.",
	"Result":               "Validation of an ordinary tool result.",
	"OperationResult":      "Validation of an operation, reconciliation or compensation status.",
	"Budget":               "Per-tool call or compensation budget accounting.",
	"SharedCallBudget":     "Ordinary and durable dispatch charge the same per-tool call budget.",
	"SharedNamespace":      "Request, dispatch, reconciliation, compensation and cancellation ids share one namespace.",
	"CompensationIdentity": "The compensation identity (tool, keys, scope, fingerprints) decides whether the budget is charged.",
	"CancellationOutcome":  "One cell of the cancellation outcome table, or what an accepted outcome changes.",
	"DuplicateResult":      "A second response for an id that already has an accepted response.",
	"Provenance":           "An authorization token used with an authorizer other than the one that issued it.",
	"IdCapacity":           "The bound of 1,024 reserved ids per authorizer.",
	"Repeat":               "A step is run many times (its repeat count), with {n} in its input replaced by 1, 2, ...",
	"FailureAtomic":        "A failed step is followed by steps that prove it changed nothing.",
	"InvalidManifest":      "The manifest is invalid, so creating the authorizer fails.",

	// Operation journal.
	"Admission":      "Admission of a dispatch or a compensation into the journal.",
	"TransitionCell": "One cell of the state transition table (stored state, observed state).",
	"GrantRecheck":   "A stored state is re-checked against the grant of the current authorization.",
	"PayloadEquality": "Succeeded payloads are compared by format and structural value in the number mode; " +
		"failed messages byte for byte.",
	"JournalBound":     "The bounds of 64 records and 262,144 serialized bytes.",
	"Scope":            "The journal scope and the tenant scope of compensations.",
	"JournalShape":     "The JSON shape of a journal, record, compensation or state object.",
	"RoundTrip":        "A loaded journal is written back in canonical form.",
	"WireStatus":       "Observed statuses are wire statuses; pending is not one.",
	"InputFingerprint": "The input_fingerprint field rule (exactly 64 lowercase hex digits).",

	// Storage envelopes.
	"StorageSeal":   "Sealing a record: the envelope bytes and the keyed BLAKE3 record tag.",
	"StorageOpen":   "Loading a stored envelope through the authenticated store.",
	"RecordKey":     "The record namespace and name rules.",
	"KeyId":         "The storage key identifier rules.",
	"Base64":        "The payload's unpadded standard base64 text.",
	"EnvelopeShape": "The JSON shape and number spelling of the envelope.",
	"TagCheck":      "The record tag: its hex form and its verification.",
	"Rollback":      "The backend revision against its revision floor and the envelope revision.",
	"KeyRotation":   "A record written under a verification-only key of the keyring.",
	"ZeroKey":       "The all-zero storage key, which storage accepts.",

	// Capability secret broker.
	"SecretBinding":  "A (tool, secret identifier) binding: both parts must be tokens, the tool checked first.",
	"BrokerBound":    "A broker holds at most 128 distinct bindings; a repeated binding is refused before the bound.",
	"SecretValue":    "A secret value the provider returns holds 1 to 65,536 bytes; the broker refuses an empty or longer one before its callback runs.",
	"SelectorKind":   "Only a selector of kind secret grants a secret; the same id under another kind grants nothing.",
	"SelectorId":     "A secret selector grants only its exact id: no prefix, extension or other spelling.",
	"ActiveGrant":    "The resolution is judged by the one grant given, the invoked tool's, never by another tool's.",
	"ProviderFailed": "The provider fails after every check passed; the broker reports Provider and keeps no cause.",
}
