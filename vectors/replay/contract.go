package replay

import (
	"errors"
	"fmt"
	"io/fs"
	"strconv"

	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/host"
	"github.com/splashv5/conform/impl/schema"
	"github.com/splashv5/conform/vectors/vectorfmt"
)

func replayContractSchemas(fsys fs.FS, fr *fileRun) error {
	var doc vectorfmt.ContractSchemas
	if err := vectorfmt.Load(fsys, vectorfmt.ContractSchemasFile, &doc); err != nil {
		return err
	}
	return replayGroups(fr, doc.TestGroups, func(g *vectorfmt.ContractGroup) ([]vectorfmt.ContractTest, func(*vectorfmt.ContractTest) (*vectorfmt.Case, []string), error) {
		switch g.Type {
		case vectorfmt.ContractCompileType:
			return g.Tests, func(t *vectorfmt.ContractTest) (*vectorfmt.Case, []string) { return &t.Case, checkContractCompile(t) }, nil
		case vectorfmt.ContractValidateType:
			s, err := compileContractSchema(textOf(g.Schema))
			if err != nil {
				return nil, nil, fmt.Errorf("group schema: %v", err)
			}
			return g.Tests, func(t *vectorfmt.ContractTest) (*vectorfmt.Case, []string) {
				return &t.Case, checkContractValidate(s, t)
			}, nil
		}
		return nil, nil, fmt.Errorf("unknown group type %q", g.Type)
	})
}

func compileContractSchema(text string) (*schema.Schema, error) {
	v, err := canonjson.ParseValue([]byte(text), canonjson.Preserve)
	if err != nil {
		return nil, err
	}
	return schema.Compile(v)
}

func checkContractCompile(t *vectorfmt.ContractTest) []string {
	if t.Schema == nil || t.SchemaBytes == nil {
		return []string{"the test has no schema or no schema_bytes"}
	}
	v, err := canonjson.ParseValue([]byte(textOf(t.Schema)), canonjson.Preserve)
	if err != nil {
		return []string{"the schema is not JSON: " + err.Error()}
	}
	problems := compare("schema_bytes", strconv.Itoa(*t.SchemaBytes), strconv.Itoa(len(v.JSON())))
	_, err = schema.Compile(v)
	if p, done := judge(&t.Case, err); done {
		problems = append(problems, p...)
		if err != nil && len(p) == 0 {
			problems = append(problems, compare("message", t.Message, err.Error())...)
		}
	}
	return problems
}

// checkContractValidate validates the test's value against s, then renders the verdict the
// way a script sees it: as the input of a tool whose input schema is s, and as the output of a
// tool whose output schema is s.
func checkContractValidate(s *schema.Schema, t *vectorfmt.ContractTest) []string {
	if t.Value == nil {
		return []string{"the test has no value"}
	}
	v, err := canonjson.ParseValue([]byte(textOf(t.Value)), canonjson.Preserve)
	if err != nil {
		return []string{"the value is not JSON: " + err.Error()}
	}
	in, out, err := renderContractVerdict(s, v)
	if err != nil {
		return []string{err.Error()}
	}
	verr := s.Validate(v)
	if t.Result != vectorfmt.Invalid {
		if verr != nil || in != "" || out != "" {
			return []string{fmt.Sprintf("expected the value to pass, got %v; input %q; output %q", verr, in, out)}
		}
		return nil
	}
	var viol *schema.Violation
	if !errors.As(verr, &viol) {
		return []string{fmt.Sprintf("expected a violation, got %v", verr)}
	}
	p := compare("error", t.Error, vectorfmt.ContractViolationKind)
	p = append(p, compare("violation_path", t.ViolationPath, viol.Path)...)
	p = append(p, compare("violation_message", t.ViolationMessage, viol.Message)...)
	p = append(p, compare("input_error", t.InputError, in)...)
	return append(p, compare("output_error", t.OutputError, out)...)
}

// renderContractVerdict calls two tools of a fresh runtime with v: one whose input schema is
// s and one whose output schema is s and whose handler returns v; the other schema of each is
// the empty schema. It returns the Denied messages of the two calls ("" for a call that
// succeeds).
func renderContractVerdict(s *schema.Schema, v canonjson.Value) (in, out string, err error) {
	contractEmpty, err := canonjson.ParseValue([]byte(`{}`), canonjson.Preserve)
	if err != nil {
		return "", "", err
	}
	rt, err := host.New(host.Config{})
	if err != nil {
		return "", "", fmt.Errorf("runtime: %v", err)
	}
	inC, err := schema.NewContract(s.Source(), contractEmpty)
	if err != nil {
		return "", "", fmt.Errorf("input contract: %v", err)
	}
	outC, err := schema.NewContract(contractEmpty, s.Source())
	if err != nil {
		return "", "", fmt.Errorf("output contract: %v", err)
	}
	echo := func(host.JSONToolRequest) (canonjson.Value, error) { return contractEmpty, nil }
	if err := rt.RegisterValidatedJSONTool(host.JSONPolicy("contract.input"), host.Metadata{}, inC, echo); err != nil {
		return "", "", fmt.Errorf("register: %v", err)
	}
	give := func(host.JSONToolRequest) (canonjson.Value, error) { return v, nil }
	if err := rt.RegisterValidatedJSONTool(host.JSONPolicy("contract.output"), host.Metadata{}, outC, give); err != nil {
		return "", "", fmt.Errorf("register: %v", err)
	}
	if in, err = deniedText(rt.CallJSON("contract.input", string(v.JSON()))); err != nil {
		return "", "", err
	}
	if out, err = deniedText(rt.CallJSON("contract.output", `{}`)); err != nil {
		return "", "", err
	}
	return in, out, nil
}

// deniedText returns the message of a Denied tool error, "" for a success, and an error for
// any other failure.
func deniedText(_ string, err error) (string, error) {
	if err == nil {
		return "", nil
	}
	var te *host.ToolError
	if !errors.As(err, &te) || te.Kind != host.ToolDenied {
		return "", fmt.Errorf("expected a Denied tool error, got %v", err)
	}
	return te.Message, nil
}
