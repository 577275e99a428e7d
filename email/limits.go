package email

import "errors"

// Limits bound what [Parse] reads and keeps from one message. A zero (or
// negative) field takes its default from [DefaultLimits].
type Limits struct {
	// MaxMessageBytes bounds the raw message; a longer one is refused
	// with ErrTooLarge after reading one byte past the bound. Default 25 MiB.
	MaxMessageBytes int64
	// MaxParts bounds the MIME parts of the whole tree, containers
	// included; one more is refused with ErrTooManyParts. Default 100.
	MaxParts int
	// MaxDepth bounds the nesting of multipart and message/rfc822
	// containers; a deeper one is refused with ErrTooDeep. Default 8.
	MaxDepth int
	// MaxAttachmentBytes bounds one attachment (or one zip entry) once
	// decoded; a larger one is skipped with a warning. Default 10 MiB.
	MaxAttachmentBytes int64
	// MaxAttachments bounds the attachments kept, zip entries included;
	// the rest are skipped with a warning. Default 20.
	MaxAttachments int
	// MaxZipEntries bounds the entries of one zip archive; an archive with
	// more is refused whole, with a warning. Default 50.
	MaxZipEntries int
	// MaxZipBytes bounds the uncompressed bytes taken from all the zip
	// archives of one message; an archive that would pass it is refused
	// whole, with a warning. Default 20 MiB.
	MaxZipBytes int64
}

// DefaultLimits returns the limits a zero Limits stands for: 25 MiB per
// message, 100 parts, 8 levels, 10 MiB per decoded attachment, 20
// attachments, 50 entries per zip and 20 MiB uncompressed from zips.
func DefaultLimits() Limits {
	return Limits{
		MaxMessageBytes:    25 << 20,
		MaxParts:           100,
		MaxDepth:           8,
		MaxAttachmentBytes: 10 << 20,
		MaxAttachments:     20,
		MaxZipEntries:      50,
		MaxZipBytes:        20 << 20,
	}
}

// withDefaults fills the zero fields of l from DefaultLimits.
func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	if l.MaxMessageBytes <= 0 {
		l.MaxMessageBytes = d.MaxMessageBytes
	}
	if l.MaxParts <= 0 {
		l.MaxParts = d.MaxParts
	}
	if l.MaxDepth <= 0 {
		l.MaxDepth = d.MaxDepth
	}
	if l.MaxAttachmentBytes <= 0 {
		l.MaxAttachmentBytes = d.MaxAttachmentBytes
	}
	if l.MaxAttachments <= 0 {
		l.MaxAttachments = d.MaxAttachments
	}
	if l.MaxZipEntries <= 0 {
		l.MaxZipEntries = d.MaxZipEntries
	}
	if l.MaxZipBytes <= 0 {
		l.MaxZipBytes = d.MaxZipBytes
	}
	return l
}

// The errors Parse refuses a whole message with. Each is returned wrapped
// with the detail (and, past the top-level header, the MIME part path in
// IMAP's numbering, e.g. "part 1.3"), so test them with errors.Is.
var (
	// ErrTooLarge: the message is longer than Limits.MaxMessageBytes.
	ErrTooLarge = errors.New("email: message too large")
	// ErrTooManyParts: the message has more than Limits.MaxParts parts.
	ErrTooManyParts = errors.New("email: too many MIME parts")
	// ErrTooDeep: containers nest deeper than Limits.MaxDepth.
	ErrTooDeep = errors.New("email: MIME nesting too deep")
	// ErrMalformed: the header or the MIME structure cannot be read.
	ErrMalformed = errors.New("email: malformed message")
)
