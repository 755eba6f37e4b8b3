package apysup_test

import (
	"context"
	"fmt"
	"log"

	"github.com/apysup/apysup"
	"github.com/apysup/apysup/broker/handlers"
	"github.com/apysup/apysup/plan"
)

// A script as bytes, natively, under the empty Plan and the default
// limits. In a program, apysup.Init() is the first call in main (here
// TestMain makes it).
func Example() {
	res, err := apysup.Run(context.Background(), apysup.Request{Source: []byte("print(6*7)")})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Status, res.ExitCode, len(res.Receipts))
	fmt.Print(res.Stdout)
	// Output:
	// ok 0 0
	// 42
}

// The guest's output as it prints it: Output receives each chunk while
// the script runs (here, passed on as it comes); the Result holds it
// whole afterwards.
func Example_output() {
	res, err := apysup.Run(context.Background(), apysup.Request{
		Source: []byte("import sys\nprint('working')\nprint('almost', file=sys.stderr)\nprint('done')\n"),
		Output: func(stream string, chunk []byte) {
			if stream == "stdout" {
				fmt.Print(string(chunk))
			}
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Status, res.Stderr == "almost\n")
	// Output:
	// working
	// done
	// ok true
}

// A Plan from a manifest, its handlers, and a script that calls the one
// capability it grants: one receipt, bound to the Plan by digest.
func Example_plan() {
	m, err := plan.ParseManifest([]byte(`{"schema_version": "apysup.manifest.v1", "max_calls": 4,
	 "capabilities": [{"name": "weather.get", "version": "1", "effect": "read", "playback": "live",
	   "handler": {"kind": "builtin", "id": "echo", "version": "1"},
	   "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}},
	   "python": {"module": "weather", "function": "get"}}],
	 "grants": [{"capability": "weather.get", "policy": {"arguments": {"properties": {"city": {"enum": ["Paris"]}}}}}]}`))
	if err != nil {
		log.Fatal(err)
	}
	p, err := m.Seal(handlers.Checker{})
	if err != nil {
		log.Fatal(err)
	}
	hs, closer, err := handlers.Build(m, handlers.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer closer.Close()

	res, err := apysup.Run(context.Background(), apysup.Request{
		Plan: p, Handlers: hs,
		Source: []byte(`import weather
print(weather.get(city="Paris"))
try:
    weather.get(city="Oslo")
except Exception as e:
    print(e.error_code)
`),
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Print(res.Stdout)
	for _, r := range res.Receipts {
		fmt.Println(r.CallID, r.Capability, r.Outcome, r.PlanSHA256 == p.Identity())
	}
	// Output:
	// {'echo': {'city': 'Paris'}}
	// grant_denied
	// main:program:1 weather.get ok true
}

// A long-lived Supervisor keeps the backend, and here one sandbox started
// ahead of each run, across runs.
func ExampleSupervisor() {
	s := apysup.New(apysup.Config{NativePool: 1})
	defer s.Close()
	for _, src := range []string{"print('first')", "import sys\nprint('second')\nsys.exit(3)"} {
		res, err := s.Run(context.Background(), apysup.Request{Source: []byte(src)})
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(res.Status, res.ExitCode, res.Stdout[:len(res.Stdout)-1])
	}
	// Output:
	// ok 0 first
	// error 3 second
}
