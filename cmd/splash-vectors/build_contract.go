package main

import (
	"bytes"
	"encoding/json"

	"github.com/splashv5/conform/vectors/vectorfmt"
)

// contractInputError and contractOutputError render a violation as RUN-021 says a script sees
// it for a tool's input and for its output.
func contractInputError(path, msg string) string {
	return "input does not match its schema: " + path + ": " + msg
}

func contractOutputError(path, msg string) string {
	return "output does not match its schema: " + path + ": " + msg
}

// buildContractSchemas renders contract_schemas.json from the hand-written tables of
// cases_contract.go, whose kinds and texts come from RUN-020 and RUN-021 and the reference's
// error texts, not from running impl/schema.
func buildContractSchemas(c *checker) (string, any, *fileBuilder) {
	b := newFileBuilder(vectorfmt.ContractSchemasFile, c)
	compileG := vectorfmt.ContractGroup{Type: vectorfmt.ContractCompileType, Tests: []vectorfmt.ContractTest{}}
	for _, row := range contractCompileCases() {
		if (row.err == "") != (row.msg == "") {
			b.failf("%q: a refused schema names its kind and its message, an accepted one neither", row.comment)
		}
		n := row.bytes
		if n == 0 {
			b.checkCompact(row.comment, row.schema)
			n = len(row.schema)
		}
		compileG.Tests = append(compileG.Tests, vectorfmt.ContractTest{Case: b.newCase(row.meta, row.err),
			Schema: b.text(row.schema), SchemaBytes: &n, Message: row.msg})
	}
	b.checkCompact("the validation schema", contractValidationSchema)
	validateG := vectorfmt.ContractGroup{Type: vectorfmt.ContractValidateType, Schema: b.text(contractValidationSchema),
		Tests: []vectorfmt.ContractTest{}}
	for _, row := range contractValidateCases() {
		if (row.path == "") != (row.msg == "") {
			b.failf("%q: a violation names its path and its message, a passing value neither", row.comment)
		}
		errKind := ""
		t := vectorfmt.ContractTest{Value: b.text(row.value)}
		if row.path != "" {
			errKind = vectorfmt.ContractViolationKind
			t.ViolationPath, t.ViolationMessage = row.path, row.msg
			t.InputError, t.OutputError = contractInputError(row.path, row.msg), contractOutputError(row.path, row.msg)
		}
		if v := bytes.TrimSpace([]byte(row.value)); len(v) == 0 || (v[0] != '{' && v[0] != '[') {
			b.failf("%q: a value must be a JSON object or array, as a tool's input and output are", row.comment)
		}
		t.Case = b.newCase(row.meta, errKind)
		validateG.Tests = append(validateG.Tests, t)
	}
	doc := vectorfmt.ContractSchemas{TestGroups: []vectorfmt.ContractGroup{compileG, validateG}}
	doc.Header = b.header()
	return b.name, doc, b
}

// checkCompact records a problem unless schema is valid JSON without insignificant
// whitespace, so that its length is the length of its compact JSON.
func (b *fileBuilder) checkCompact(what, schema string) {
	var out bytes.Buffer
	if err := json.Compact(&out, []byte(schema)); err != nil || out.String() != schema {
		b.failf("%q: the schema is not compact JSON (%v)", what, err)
	}
}
