//go:build !failpoints

package main

// failpoint is nil in release builds: the journal's boundaries cost
// nothing extra. Builds with -tags failpoints replace it (failpoint_on.go)
// for the fault campaign.
var failpoint func(name string)
