package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"

	"github.com/dtekit/dtekit/dte"
)

const totalsUsage = `usage: dtekit totals REQUEST.json

Reads an emission request (contract §2.3; "-" reads standard input),
validates it and prints every detail line's MontoItem, DescuentoMonto and
RecargoMonto and the document's Totales as JSON, with the SII's element
names; elements the document does not carry are left out.

On an invalid request it prints the contract's error envelope
({"code":"VALIDATION_ERROR","details":[...]}) on standard output and exits 1.
Besides the validation codes, details may carry INVALID_JSON (malformed
JSON), UNKNOWN_FIELD (a field the contract doesn't define, often a typo) and
INVALID_TYPE (e.g. a string where an integer belongs).
`

// maxRequestJSONBytes bounds the request read by the CLI: what dte.DecodeRequest accepts.
const maxRequestJSONBytes = dte.MaxRequestBytes

// runTotals implements "dtekit totals".
func runTotals(ctx context.Context, env *cmdEnv, args []string) int {
	const cmd = "totals"
	fs := newFlagSet(env, cmd)
	pos, code, ok := parseFlags(env, fs, totalsUsage, args)
	if !ok {
		return code
	}
	if len(pos) != 1 {
		return usageError(env, cmd, "want one REQUEST.json argument (or - for standard input), got %d", len(pos))
	}
	data, err := readRequestInput(ctx, env, pos[0])
	if err != nil {
		return report(env, cmd, true, newError(codeFileUnreadable, "", err))
	}
	req, verr := decodeRequest(data)
	if verr == nil {
		verr = validateDecodedRequest(req)
	}
	var tot *dte.Totals
	if verr == nil {
		var err error
		if tot, err = dte.ComputeTotals(req); err != nil {
			if !errors.As(err, &verr) {
				verr = &dte.ValidationError{Details: []dte.FieldError{{Code: dte.CodeInvalidValue, Message: err.Error()}}}
			}
		}
	}
	if verr != nil {
		return reportValidation(env, cmd, pos[0], true, verr)
	}
	if err := totalsWriteJSON(env.stdout, tot); err != nil {
		return report(env, cmd, false, newError(codeOutputFailed, "standard output", err))
	}
	return exitOK
}

// validateDecodedRequest runs the contract validation (dte.Validate, which
// takes today's date in Chile for the fecha_emision checks).
func validateDecodedRequest(r *dte.EmitirDTERequest) *dte.ValidationError {
	err := r.Validate()
	if err == nil {
		return nil
	}
	var ve *dte.ValidationError
	if errors.As(err, &ve) {
		return ve
	}
	return &dte.ValidationError{Details: []dte.FieldError{{Code: dte.CodeInvalidValue, Message: err.Error()}}}
}

// decodeRequest decodes an emission request strictly with dte.DecodeRequest
// (unknown fields and wrong JSON types are errors, not silently ignored).
func decodeRequest(data []byte) (*dte.EmitirDTERequest, *dte.ValidationError) {
	req, err := dte.DecodeRequest(bytes.NewReader(data))
	if err == nil {
		return req, nil
	}
	if ve, ok := dte.AsValidationError(err); ok {
		return nil, ve
	}
	return nil, &dte.ValidationError{Details: []dte.FieldError{{Code: dte.CodeInvalidJSON, Message: err.Error()}}}
}

// readRequestInput reads the request file, or standard input for "-",
// refusing anything larger than maxRequestJSONBytes.
func readRequestInput(ctx context.Context, env *cmdEnv, path string) ([]byte, error) {
	return readInput(ctx, env, path, maxRequestJSONBytes)
}

// totalsWriteJSON writes v as indented JSON without HTML escaping.
func totalsWriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}
