// Package importrules keeps the arrows of docs/architecture.md true: which
// dtekit package may import which other dtekit package.
//
// The rules are data, in rules_test.go: one entry per arrow, each with the
// sentence that justifies it, and a short list of named exceptions. The
// package's test lists the module with `go list` and fails on every import
// a rule forbids, naming the importing package, the import and the rule.
// It also fails on a package that no rule places in the house, and on a
// rule or exception that no longer matches any package, so the table, the
// document and the code change together. The package has no code of its
// own; run it with
//
//	go test ./internal/importrules/
package importrules
