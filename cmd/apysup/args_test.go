package main

import (
	"io"
	"slices"
	"strings"
	"testing"
)

func TestPermuteArgs(t *testing.T) {
	app := newApp(io.Discard, io.Discard)
	cases := []struct{ in, want string }{
		{"plan seal m.json --json", "plan seal --json m.json"},
		{"plan seal --json m.json", "plan seal --json m.json"},
		{"plan prelude m.json --surface direct", "plan prelude --surface direct m.json"},
		{"plan prelude m.json --surface=direct --parent p", "plan prelude --surface=direct --parent p m.json"},
		{"receipts verify r.json --plan m.json --json", "receipts verify --plan m.json --json r.json"},
		{"events verify r.json --plan m.json", "events verify --plan m.json r.json"},
		{"plan seal --json -- -odd.json", "plan seal --json -- -odd.json"},
		{"plan seal m.json -- --json", "plan seal -- m.json --json"},
		{"approvals approve ID --socket s", "approvals approve --socket s ID"},
		// run: everything after SCRIPT is the script's, and after -c CODE the code's.
		{"run s.py --json", "run s.py --json"},
		{"run --json --plan m.json s.py a --timeout 1s", "run --json --plan m.json s.py a --timeout 1s"},
		{"run --json -- s.py --json", "run --json -- s.py --json"},
		{"run --json -c CODE --json a", "run --json -c CODE -- --json a"},
		{"run -c=CODE a", "run -c=CODE -- a"},
		{"run --plan m.json - --json", "run --plan m.json - --json"},
		{"--help", "--help"},
		{"nosuch m.json --json", "nosuch m.json --json"},
	}
	for _, tc := range cases {
		got := permuteArgs(app, append([]string{"apysup"}, strings.Fields(tc.in)...))[1:]
		if !slices.Equal(got, strings.Fields(tc.want)) {
			t.Errorf("%s: got %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestFlagsAfterArguments runs the commands of the README's tour with
// their flags in either place.
func TestFlagsAfterArguments(t *testing.T) {
	const m = "../../examples/plan.json"
	for _, pair := range [][2][]string{
		{{"plan", "seal", "--json", m}, {"plan", "seal", m, "--json"}},
		{{"plan", "prelude", "--surface", "direct", m}, {"plan", "prelude", m, "--surface", "direct"}},
	} {
		before, _, c1 := run(t, pair[0]...)
		after, errOut, c2 := run(t, pair[1]...)
		if c1 != 0 || c2 != 0 || before != after {
			t.Errorf("%v: exit %d/%d: %s\n%q\n%q", pair[1], c1, c2, errOut, before, after)
		}
	}
}
