// Package pattern matches the bounded name tokens that manifests, grants,
// run and call ids, keys and provider profiles admit: one character of a
// first class, then up to a bound of characters of a second class.
//
// The same check as a regular expression (`^[a-z][a-z0-9_]{0,63}$`) costs
// more than it looks: Go's regexp unrolls a bounded repeat into one node per
// repetition, so the twenty such expressions the project checks compiled in
// 12-24 ms at every start of every apysup process (the CLI, the client of
// `run --server`), a quarter of `apysup --version`. A Token is a pair of
// 256-entry tables built in microseconds; its String is the regular
// expression it is equivalent to, which error messages quote, and the tests
// hold every Token the project uses to that expression.
//
// The package owns matching only; what a name means stays with its owner.
package pattern
