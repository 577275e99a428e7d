// Package api holds the models of dtekit's REST API (contract 0.2.0):
// every request, response and read model the server speaks, the one page
// type every list returns, the typed states of each state machine with
// its transition table, and the options of each list.
//
// It is to the billing service and the server what rivertype is to River:
// the shared vocabulary, light enough for a program that only calls a
// running server. It imports the standard library and dte's document
// model, nothing that talks to a network, reads a database, sends mail or
// renders a PDF (a test checks its dependencies). The service's rooms
// build these types directly, and the server encodes them as they are: a
// field's JSON name is the contract's.
//
// The stable error codes and the error type are billing/fault's, beside
// this package.
package api
