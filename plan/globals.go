package plan

import "fmt"

// MaxGlobals bounds the global names one capability presents.
const MaxGlobals = 16

// validatePythonGlobals checks the global names of a projection: each a
// public identifier, no keyword, no builtin (a global named open or print
// would change what every script means), none listed twice. That no two
// capabilities claim one global is the Registry's check (pythonNames).
func validatePythonGlobals(p *PythonProjection) []error {
	if p.Globals == nil {
		return nil
	}
	var errs []error
	add := func(code, path, format string, args ...any) {
		errs = append(errs, &Error{Code: code, Path: path, Message: fmt.Sprintf(format, args...)})
	}
	if len(p.Globals) == 0 && p.Module == "" && p.Function == "" {
		add(CodeInvalidPython, "globals", "a projection needs a module and function, or at least one global")
	}
	if len(p.Globals) > MaxGlobals {
		add(CodeInvalidPython, "globals", "at most %d globals", MaxGlobals)
	}
	seen := make(map[string]bool, len(p.Globals))
	for i, g := range p.Globals {
		path := fmt.Sprintf("globals[%d]", i)
		switch {
		case !pythonIdentifier.MatchString(g) || pythonKeywords[g]:
			add(CodeInvalidPython, path, "global must be a public Python identifier matching %s, not a keyword", pythonIdentifier)
		case pythonBuiltins[g]:
			add(CodePythonCollision, path, "global %q would shadow a Python builtin", g)
		case seen[g]:
			add(CodePythonCollision, path, "global %q is listed twice", g)
		}
		seen[g] = true
	}
	return errs
}
