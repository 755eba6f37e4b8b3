package main

import (
	"flag"
	"io"
	"os"
	"testing"
)

var updateDocs = flag.Bool("update-docs", false, "rewrite docs/cli.md from the CLI definitions")

const cliDocHeader = "<!-- Generated from the CLI definitions by `make docs`; do not edit. -->\n\n"

// TestCLIDocsCurrent keeps docs/cli.md equal to what the CLI says of itself.
func TestCLIDocsCurrent(t *testing.T) {
	md, err := newApp(io.Discard, io.Discard).ToMarkdown()
	if err != nil {
		t.Fatal(err)
	}
	want := cliDocHeader + md
	const path = "../../docs/cli.md"
	if *updateDocs {
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil || string(got) != want {
		t.Fatalf("docs/cli.md is stale: run `make docs` (%v)", err)
	}
}
