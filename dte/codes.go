package dte

// DetailCode is the stable code of one problem with one field: the
// `details[].code` of the contract's error envelope (§7), under the top-level
// code VALIDATION_ERROR. Clients may switch on the values; DetailCodes lists
// them all.
type DetailCode string

// Validation detail codes. Each FieldError returned by Validate or
// ComputeTotals carries one of these in its Code. A field gets at most one
// detail from Validate: the first rule it breaks, in the order the rules are
// listed for it.
const (
	// CodeRequired: a required field is absent, zero or blank (only
	// whitespace). Also used for per-type requirements: referencias on notes
	// 56/61/111/112, export_data on 110–112, ind_traslado on 52, tipo_doc_liq
	// on every line of 43, at least one detail line.
	CodeRequired DetailCode = "REQUIRED"

	// CodeInvalidValue: the value is not one of the field's allowed values,
	// such as tipo_dte 35, tpo_mov "X", ind_exe 2, a currency that is not in
	// the SII's TipMonType list or an additional-tax code the SII doesn't know.
	CodeInvalidValue DetailCode = "INVALID_VALUE"

	// CodeInvalidFormat: the text is not in the field's format: a number that
	// is not a plain decimal ("1e3", "12,5"), a date that is not a real
	// YYYY-MM-DD date, a RUT that is not digits plus a check digit, or an
	// export code that must be numeric.
	CodeInvalidFormat DetailCode = "INVALID_FORMAT"

	// CodeInvalidRUT: a well-formed RUT whose módulo-11 check digit does not
	// match its body (the contract's INVALID_RUT).
	CodeInvalidRUT DetailCode = "INVALID_RUT"

	// CodeInvalidDecimals: a number has more decimal places than the field
	// allows: prices and amounts of CLP documents are integers, quantities
	// and export prices carry up to 6 places, export amounts 4, percentages
	// and global discount values 2. Trailing zeros don't count ("10.50" has
	// one place).
	CodeInvalidDecimals DetailCode = "INVALID_DECIMALS"

	// CodeOutOfRange: a number or date outside the field's range: a quantity
	// under 0.000001, a percentage over 100, a negative price, an amount
	// beyond the SII's 18 digits, a date outside 2000-01-01…2050-12-31 or a
	// fecha_emision later than today in Chile.
	CodeOutOfRange DetailCode = "OUT_OF_RANGE"

	// CodeTooLong: a text has more characters than the field holds.
	CodeTooLong DetailCode = "TOO_LONG"

	// CodeTooMany: a list has more elements than the SII's schema allows (60
	// detail lines, 1000 on boletas; 40 references; 20 global discounts,
	// commissions or taxes).
	CodeTooMany DetailCode = "TOO_MANY"

	// CodeNotAllowed: the field is not allowed on this tipo_dte (comisiones
	// outside 43, export_data outside 110–112, ind_traslado outside 52, ...),
	// or is never allowed (export_data.tipo_doc_id).
	CodeNotAllowed DetailCode = "NOT_ALLOWED"

	// CodeNotLatin1: a text holds a character that ISO-8859-1, the encoding
	// of the SII's XML, cannot represent (emoji, curly quotes, "€", CJK, or
	// invalid UTF-8).
	CodeNotLatin1 DetailCode = "NOT_LATIN1"

	// CodeInvalidCharacter: a text holds a control character. Only dsc_item
	// may contain line feeds and tabs; carriage returns are never accepted
	// (they don't survive XML parsing and would break the signature).
	CodeInvalidCharacter DetailCode = "INVALID_CHARACTER"

	// CodeDuplicate: a value that must be unique within its list repeats
	// (descuentos_globales nro_lin_dr, impuestos_retenciones tipo_imp),
	// or a JSON member appears twice in one object of the request.
	CodeDuplicate DetailCode = "DUPLICATE"
)

// Detail codes of decoding problems, reported by DecodeRequest before any
// validation rule runs.
const (
	// CodeInvalidJSON: the body is not one well-formed JSON value (syntax
	// error, empty body, truncated text, or data after the request object).
	// The message gives the line and column.
	CodeInvalidJSON DetailCode = "INVALID_JSON"

	// CodeUnknownField: an object holds a member the contract does not define
	// (names are matched exactly, so "Fecha_Emision" is unknown too). The
	// detail's field is the member's path; usually a typo.
	CodeUnknownField DetailCode = "UNKNOWN_FIELD"

	// CodeInvalidType: a value has the wrong JSON type for its field, such as
	// a string where an integer belongs or a fraction in an integer field.
	CodeInvalidType DetailCode = "INVALID_TYPE"

	// CodeTooLarge: the body is larger than MaxRequestBytes.
	CodeTooLarge DetailCode = "TOO_LARGE"
)

// DetailCodes returns every detail code the dte package reports, in a fixed
// order: the validation codes, then the decoding codes. The slice is new on
// each call.
func DetailCodes() []DetailCode {
	return []DetailCode{
		CodeRequired,
		CodeInvalidValue,
		CodeInvalidFormat,
		CodeInvalidRUT,
		CodeInvalidDecimals,
		CodeOutOfRange,
		CodeTooLong,
		CodeTooMany,
		CodeNotAllowed,
		CodeNotLatin1,
		CodeInvalidCharacter,
		CodeDuplicate,
		CodeInvalidJSON,
		CodeUnknownField,
		CodeInvalidType,
		CodeTooLarge,
	}
}
