package seccomp

import (
	"encoding/json"
	"errors"
	"fmt"
	"runtime"

	"github.com/opencontainers/runc/libcontainer/configs"
	"github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"
)

// ErrUnsupportedArch is returned by the conversions of a Policy for an
// architecture the allowlist was not written for.
var ErrUnsupportedArch = errors.New("seccomp: no policy for this architecture")

// DefaultErrno is what every call the policy does not name returns.
const DefaultErrno = unix.EPERM

// Policy is the seccomp allowlist for one architecture. It is immutable.
type Policy struct {
	goarch string
	rules  []rule
}

// rule gives action to the calls it names when every condition in args holds
// (libseccomp ANDs the conditions of one rule and ORs rules).
type rule struct {
	names  []string // on every architecture
	amd64  []string // x86_64 only
	action specs.LinuxSeccompAction
	errno  unix.Errno // with specs.ActErrno
	args   []specs.LinuxSeccompArg
	why    string
}

func allow(why string, names ...string) rule {
	return rule{names: names, action: specs.ActAllow, why: why}
}

func allowAMD64(why string, names ...string) rule {
	return rule{amd64: names, action: specs.ActAllow, why: why}
}

func errno(e unix.Errno, why string, names ...string) rule {
	return rule{names: names, action: specs.ActErrno, errno: e, why: why}
}

func (r rule) plusAMD64(names ...string) rule {
	r.amd64 = names
	return r
}

// namesFor returns the calls r names on goarch.
func (r rule) namesFor(goarch string) []string {
	if goarch == "amd64" {
		return append(append([]string(nil), r.names...), r.amd64...)
	}
	return r.names
}

// The architectures a policy exists for, by GOARCH.
var ociArches = map[string]specs.Arch{
	"amd64": specs.ArchX86_64,
	"arm64": specs.ArchAARCH64,
}

// Default returns the policy for the architecture apysup runs on.
func Default() *Policy { return forArch(runtime.GOARCH) }

func forArch(goarch string) *Policy {
	return &Policy{goarch: goarch, rules: policyRules()}
}

func (p *Policy) check() error {
	if _, ok := ociArches[p.goarch]; !ok {
		return fmt.Errorf("%w: GOARCH=%s", ErrUnsupportedArch, p.goarch)
	}
	return nil
}

// spec builds the OCI form; every other form derives from it.
func (p *Policy) spec() (*specs.LinuxSeccomp, error) {
	if err := p.check(); err != nil {
		return nil, err
	}
	s := &specs.LinuxSeccomp{
		DefaultAction:   specs.ActErrno,
		DefaultErrnoRet: errnoRet(DefaultErrno),
		Architectures:   []specs.Arch{ociArches[p.goarch]},
	}
	for _, r := range p.rules {
		names := r.namesFor(p.goarch)
		if len(names) == 0 {
			continue
		}
		sc := specs.LinuxSyscall{Names: names, Action: r.action, Args: append([]specs.LinuxSeccompArg(nil), r.args...)}
		if r.action == specs.ActErrno {
			sc.ErrnoRet = errnoRet(r.errno)
		}
		s.Syscalls = append(s.Syscalls, sc)
	}
	return s, nil
}

func errnoRet(e unix.Errno) *uint {
	u := uint(e)
	return &u
}

// OCI returns the policy as an OCI runtime-spec seccomp profile
// (specs.LinuxSeccomp), indented JSON with a final newline, in the order of
// the policy's groups so that two versions diff readably.
func (p *Policy) OCI() ([]byte, error) {
	s, err := p.spec()
	if err != nil {
		return nil, err
	}
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

var libcontainerActions = map[specs.LinuxSeccompAction]configs.Action{
	specs.ActAllow: configs.Allow,
	specs.ActErrno: configs.Errno,
}

var libcontainerOps = map[specs.LinuxSeccompOperator]configs.Operator{
	specs.OpEqualTo:      configs.EqualTo,
	specs.OpNotEqual:     configs.NotEqualTo,
	specs.OpMaskedEqual:  configs.MaskEqualTo,
	specs.OpGreaterThan:  configs.GreaterThan,
	specs.OpGreaterEqual: configs.GreaterThanOrEqualTo,
	specs.OpLessThan:     configs.LessThan,
	specs.OpLessEqual:    configs.LessThanOrEqualTo,
}

// Libcontainer returns the policy for libcontainer's Config.Seccomp: one
// configs.Syscall per call name and rule, exactly what runc's specconv makes
// of the OCI profile. It sets no filter flags, so the kernel's speculative
// store bypass mitigation for seccomp'd tasks stays as the host configured it.
func (p *Policy) Libcontainer() (*configs.Seccomp, error) {
	s, err := p.spec()
	if err != nil {
		return nil, err
	}
	c := &configs.Seccomp{
		DefaultAction:   configs.Errno,
		DefaultErrnoRet: s.DefaultErrnoRet,
		Architectures:   []string{p.goarch},
		Syscalls:        []*configs.Syscall{},
	}
	for _, sc := range s.Syscalls {
		act, ok := libcontainerActions[sc.Action]
		if !ok {
			return nil, fmt.Errorf("seccomp: action %s has no libcontainer form", sc.Action)
		}
		for _, name := range sc.Names {
			call := &configs.Syscall{Name: name, Action: act, ErrnoRet: sc.ErrnoRet, Args: []*configs.Arg{}}
			for _, a := range sc.Args {
				op, ok := libcontainerOps[a.Op]
				if !ok {
					return nil, fmt.Errorf("seccomp: operator %s has no libcontainer form", a.Op)
				}
				call.Args = append(call.Args, &configs.Arg{Index: a.Index, Value: a.Value, ValueTwo: a.ValueTwo, Op: op})
			}
			c.Syscalls = append(c.Syscalls, call)
		}
	}
	return c, nil
}

// Refusal is a call the policy refuses on purpose, and why.
type Refusal struct {
	Syscall string
	Reason  string
}

// Refused lists the calls refused on purpose on the architecture apysup runs
// on, each with a short reason. Every one fails with EPERM. (Calls the policy
// does not mention are refused too; these are the ones worth proving.)
func Refused() []Refusal { return refusedOn(runtime.GOARCH) }

func refusedOn(goarch string) []Refusal {
	var out []Refusal
	for _, r := range refusals {
		for _, n := range (rule{names: r.names, amd64: r.amd64}).namesFor(goarch) {
			out = append(out, Refusal{Syscall: n, Reason: r.reason})
		}
	}
	return out
}
