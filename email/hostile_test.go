package email_test

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/dtekit/dtekit/email"
	"github.com/dtekit/dtekit/email/emailtest"
)

// bounded runs f and reports how long it took and how many bytes the
// process allocated meanwhile (TotalAlloc counts every allocation, so it
// bounds the peak from above). These tests do not run in parallel.
func bounded(t *testing.T, f func()) (time.Duration, uint64) {
	t.Helper()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	start := time.Now()
	f()
	elapsed := time.Since(start)
	runtime.ReadMemStats(&after)
	return elapsed, after.TotalAlloc - before.TotalAlloc
}

// repeatReader yields pattern over and over, n bytes in all, without ever
// holding more than one pattern.
type repeatReader struct {
	pattern []byte
	off     int
	n       int64
}

func (r *repeatReader) Read(b []byte) (int, error) {
	if r.n <= 0 {
		return 0, io.EOF
	}
	if int64(len(b)) > r.n {
		b = b[:r.n]
	}
	k := 0
	for k < len(b) {
		c := copy(b[k:], r.pattern[r.off:])
		k += c
		r.off = (r.off + c) % len(r.pattern)
	}
	r.n -= int64(k)
	return k, nil
}

const mib = 1 << 20

// TestParseRefusesAGigabyteAttachment streams a 1 GB attachment from a
// generator: Parse stops one byte past 25 MiB, fast, allocating a small
// multiple of the bound and nowhere near the gigabyte.
func TestParseRefusesAGigabyteAttachment(t *testing.T) {
	head := "From: a@b.cl\r\nSubject: big\r\nMIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=B\r\n\r\n" +
		"--B\r\nContent-Type: application/xml\r\nContent-Disposition: attachment; filename=big.xml\r\nContent-Transfer-Encoding: base64\r\n\r\n"
	gen := &repeatReader{pattern: []byte(strings.Repeat("QUFB", 19) + "\r\n"), n: 1 << 30}
	r := io.MultiReader(strings.NewReader(head), gen, strings.NewReader("\r\n--B--\r\n"))

	var err error
	elapsed, alloc := bounded(t, func() {
		_, err = email.Parse(ctxFor(t, 30*time.Second), r, email.Limits{})
	})
	if !errors.Is(err, email.ErrTooLarge) {
		t.Fatalf("Parse of a 1 GB message = %v, want ErrTooLarge", err)
	}
	if want := "more than 26214400 bytes"; !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not say %q", err, want)
	}
	read := int64(1<<30) - gen.n + int64(len(head))
	t.Logf("1 GB attachment: %v after reading %d bytes, %d MiB allocated: %v", elapsed, read, alloc/mib, err)
	if read > 26*mib {
		t.Errorf("read %d bytes of a message bounded at 25 MiB", read)
	}
	if alloc > 4*25*mib {
		t.Errorf("allocated %d MiB to refuse a message bounded at 25 MiB", alloc/mib)
	}
	if elapsed > 5*time.Second {
		t.Errorf("took %v to refuse it", elapsed)
	}
}

// TestParseStopsAMessageThatNeverEnds: a header line that never ends and
// a body that never ends both stop at the size bound.
func TestParseStopsAMessageThatNeverEnds(t *testing.T) {
	for name, r := range map[string]func() io.Reader{
		"header": func() io.Reader {
			return io.MultiReader(strings.NewReader("Subject: "), &repeatReader{pattern: []byte("a"), n: 1 << 62})
		},
		"body": func() io.Reader {
			return io.MultiReader(strings.NewReader("Subject: x\r\n\r\n"), &repeatReader{pattern: []byte("line\r\n"), n: 1 << 62})
		},
	} {
		t.Run(name, func(t *testing.T) {
			var err error
			elapsed, alloc := bounded(t, func() {
				_, err = email.Parse(ctxFor(t, 30*time.Second), r(), email.Limits{MaxMessageBytes: 4 * mib})
			})
			t.Logf("endless %s: %v, %d MiB allocated: %v", name, elapsed, alloc/mib, err)
			if !errors.Is(err, email.ErrTooLarge) || !strings.Contains(err.Error(), "more than 4194304 bytes") {
				t.Fatalf("Parse = %v, want ErrTooLarge past 4194304 bytes", err)
			}
			if alloc > 4*4*mib || elapsed > 5*time.Second {
				t.Errorf("%v and %d MiB to stop at 4 MiB", elapsed, alloc/mib)
			}
		})
	}
}

// trickleReader gives one byte of an endless message every interval.
type trickleReader struct {
	interval time.Duration
	n        int
}

func (r *trickleReader) Read(b []byte) (int, error) {
	time.Sleep(r.interval)
	if len(b) == 0 {
		return 0, nil
	}
	b[0] = "Subject: slow\r\n\r\n"[min(r.n, 16)]
	r.n++
	return 1, nil
}

// blockingReader blocks until released, like a connection that went silent.
type blockingReader struct{ release chan struct{} }

func (r blockingReader) Read([]byte) (int, error) {
	<-r.release
	return 0, io.EOF
}

// TestParseHonoursTheDeadline: a source that trickles, and one that blocks
// for ever, are both cut at ctx's deadline.
func TestParseHonoursTheDeadline(t *testing.T) {
	block := blockingReader{release: make(chan struct{})}
	defer close(block.release)
	for name, r := range map[string]io.Reader{
		"trickle": &trickleReader{interval: 5 * time.Millisecond},
		"block":   block,
	} {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
			defer cancel()
			start := time.Now()
			_, err := email.Parse(ctx, r, email.Limits{})
			elapsed := time.Since(start)
			t.Logf("%s: %v: %v", name, elapsed, err)
			if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "reading the message") {
				t.Fatalf("Parse = %v, want the deadline while reading the message", err)
			}
			if elapsed > 2*time.Second {
				t.Errorf("returned %v after a 200ms deadline", elapsed)
			}
		})
	}
}

// TestParseRefusesTenThousandParts: the 101st part ends it.
func TestParseRefusesTenThousandParts(t *testing.T) {
	var b strings.Builder
	b.WriteString("From: a@b.cl\r\nContent-Type: multipart/mixed; boundary=B\r\n\r\n")
	for i := range 10000 {
		fmt.Fprintf(&b, "--B\r\nContent-Type: text/plain\r\n\r\npart %d\r\n", i)
	}
	b.WriteString("--B--\r\n")
	var err error
	elapsed, alloc := bounded(t, func() {
		_, err = email.Parse(ctxFor(t, 30*time.Second), strings.NewReader(b.String()), email.Limits{})
	})
	t.Logf("10,000 parts (%d bytes): %v, %d KiB allocated: %v", b.Len(), elapsed, alloc>>10, err)
	if !errors.Is(err, email.ErrTooManyParts) {
		t.Fatalf("Parse = %v, want ErrTooManyParts", err)
	}
	// The top-level message is part one of the count: its 100th child is
	// the 101st part.
	if want := "part 100 is past the limit of 100 parts"; !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not say %q", err, want)
	}
	if elapsed > 2*time.Second || alloc > 32*mib {
		t.Errorf("%v and %d MiB to refuse it", elapsed, alloc/mib)
	}
}

// TestParseRefusesDeepNesting: 1,000 nested multiparts, and 1,000 nested
// forwarded messages, stop at the ninth level.
func TestParseRefusesDeepNesting(t *testing.T) {
	var multi strings.Builder
	multi.WriteString("From: a@b.cl\r\n")
	for i := range 1000 {
		fmt.Fprintf(&multi, "Content-Type: multipart/mixed; boundary=b%d\r\n\r\n--b%d\r\n", i, i)
	}
	multi.WriteString("Content-Type: application/xml\r\n\r\n<x/>\r\n")
	for i := 999; i >= 0; i-- {
		fmt.Fprintf(&multi, "--b%d--\r\n", i)
	}
	var fwd strings.Builder
	fwd.WriteString("From: a@b.cl\r\n")
	for range 1000 {
		fwd.WriteString("Content-Type: message/rfc822\r\n\r\nFrom: c@d.cl\r\n")
	}
	fwd.WriteString("Content-Type: application/xml\r\n\r\n<x/>\r\n")

	for name, raw := range map[string]string{"multipart": multi.String(), "message/rfc822": fwd.String()} {
		t.Run(name, func(t *testing.T) {
			var err error
			elapsed, alloc := bounded(t, func() {
				_, err = email.Parse(ctxFor(t, 30*time.Second), strings.NewReader(raw), email.Limits{})
			})
			t.Logf("1,000 deep %s: %v, %d KiB allocated: %v", name, elapsed, alloc>>10, err)
			if !errors.Is(err, email.ErrTooDeep) || !strings.Contains(err.Error(), "nested deeper than 8 levels") {
				t.Fatalf("Parse = %v, want ErrTooDeep past 8 levels", err)
			}
			if elapsed > 2*time.Second || alloc > 32*mib {
				t.Errorf("%v and %d MiB to refuse it", elapsed, alloc/mib)
			}
		})
	}
	// Eight levels are allowed: the bound is not off by one.
	var ok strings.Builder
	ok.WriteString("From: a@b.cl\r\n")
	for i := range 8 {
		fmt.Fprintf(&ok, "Content-Type: multipart/mixed; boundary=b%d\r\n\r\n--b%d\r\n", i, i)
	}
	ok.WriteString("Content-Type: application/xml\r\n\r\n<x/>\r\n")
	for i := 7; i >= 0; i-- {
		fmt.Fprintf(&ok, "--b%d--\r\n", i)
	}
	msg, err := email.Parse(ctxFor(t, 10*time.Second), strings.NewReader(ok.String()), email.Limits{})
	if err != nil {
		t.Fatalf("8 levels: %v", err)
	}
	if len(msg.Attachments) != 1 || msg.Attachments[0].Filename != "part-1.1.1.1.1.1.1.1.xml" {
		t.Fatalf("8 levels kept %+v, want the XML at part 1.1.1.1.1.1.1.1", names(msg))
	}
}

// zeros is a reader of n zero bytes.
func zeros(n int64) io.Reader { return &repeatReader{pattern: make([]byte, 4096), n: n} }

// deflated compresses n zero bytes, returning the stream and its CRC.
func deflated(t *testing.T, n int64) ([]byte, uint32) {
	t.Helper()
	var buf bytes.Buffer
	w, err := flate.NewWriter(&buf, flate.BestSpeed)
	if err != nil {
		t.Fatal(err)
	}
	h := crc32.NewIEEE()
	if _, err := io.Copy(io.MultiWriter(w, h), zeros(n)); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), h.Sum32()
}

// rawZip writes one entry whose header declares size bytes, whatever the
// stream holds.
func rawZip(t *testing.T, name string, stream []byte, crc uint32, size uint64) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, err := zw.CreateRaw(&zip.FileHeader{
		Name: name, Method: zip.Deflate, CRC32: crc,
		CompressedSize64: uint64(len(stream)), UncompressedSize64: size,
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(stream); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func plainZip(t *testing.T, entries map[string][]byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for name, data := range entries {
		w, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(data); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// withZip composes a message carrying the zip and, after it, an XML that
// must survive the zip's refusal.
func withZip(t *testing.T, zipData []byte) []byte {
	t.Helper()
	raw, _, err := email.Compose(email.Draft{
		From: "a@b.cl", To: "c@d.cl", Subject: "zip",
		Attachments: []email.Attachment{
			{Filename: "docs.zip", Data: zipData},
			{Filename: "after.xml", Data: []byte("<ok/>")},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// TestParseRefusesZipBombs: each bomb is refused with a warning naming it,
// nothing of it is kept, the attachment after it is, and the work stays
// bounded in time and memory however much the archive claims or holds.
func TestParseRefusesZipBombs(t *testing.T) {
	if testing.Short() {
		t.Skip("compresses 100 MB of zeros")
	}
	stream, crc := deflated(t, 100*mib) // 100 MiB of zeros in about 100 KiB
	random := make([]byte, 600<<10)
	if _, err := rand.Read(random); err != nil {
		t.Fatal(err)
	}
	many := map[string][]byte{}
	for i := range 60 {
		many[fmt.Sprintf("doc%02d.xml", i)] = []byte("<x/>")
	}
	cases := []struct {
		name string
		zip  []byte
		lim  email.Limits
		want string
	}{
		{"claims 10 GB", rawZip(t, "zeros.xml", stream, crc, 10<<30), email.Limits{},
			`zip "docs.zip" refused as a zip bomb: entry "zeros.xml" declares 10737418240 bytes from`},
		{"100 MB honestly declared", rawZip(t, "zeros.xml", stream, crc, 100*mib), email.Limits{},
			`zip "docs.zip" refused as a zip bomb: entry "zeros.xml" declares 104857600 bytes from`},
		{"100 MB declared as 1 KB", rawZip(t, "zeros.xml", stream, crc, 1024), email.Limits{},
			`zip "docs.zip" refused as a zip bomb: entry "zeros.xml" inflates past the 1024 bytes it declares`},
		{"60 entries", plainZip(t, many), email.Limits{},
			`zip "docs.zip" refused: 60 entries, more than 50`},
		{"total over MaxZipBytes", plainZip(t, map[string][]byte{"a.pdf": random, "b.pdf": random}), email.Limits{MaxZipBytes: mib},
			`zip "docs.zip" refused as a zip bomb: it declares 1228800 bytes uncompressed, more than the 1048576 left`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			raw := withZip(t, c.zip)
			var msg *email.Message
			var err error
			elapsed, alloc := bounded(t, func() {
				msg, err = email.Parse(ctxFor(t, 30*time.Second), bytes.NewReader(raw), c.lim)
			})
			if err != nil {
				t.Fatalf("Parse: %v (a zip bomb is a warning, not an error)", err)
			}
			t.Logf("%s (zip %d bytes): %v, %d MiB allocated; warnings %q", c.name, len(c.zip), elapsed, alloc/mib, msg.Warnings)
			if len(msg.Warnings) != 1 || !strings.Contains(msg.Warnings[0], c.want) {
				t.Fatalf("warnings %q, want one saying %q", msg.Warnings, c.want)
			}
			if !strings.HasPrefix(msg.Warnings[0], "part 2: ") {
				t.Errorf("warning %q does not name part 2", msg.Warnings[0])
			}
			if got := names(msg); len(got) != 1 || got[0] != "after.xml" {
				t.Fatalf("kept %q, want only after.xml", got)
			}
			if alloc > 40*mib || elapsed > 5*time.Second {
				t.Errorf("%v and %d MiB to refuse a bomb", elapsed, alloc/mib)
			}
		})
	}
}

// TestUnprocessedNeverDownloadsAHugeMessage: a 40 MiB message in the
// mailbox comes back TooLarge from its size alone, its body not sent by
// the server, and the small message after it is still read.
func TestUnprocessedNeverDownloadsAHugeMessage(t *testing.T) {
	srv := emailtest.Start(t, alice, bob)
	ctx := ctxFor(t, 30*time.Second)
	huge := append([]byte("From: a@b.cl\r\nSubject: huge\r\n\r\n"), bytes.Repeat([]byte(strings.Repeat("x", 78)+"\r\n"), 40*mib/80)...)
	srv.Append(bob, huge)
	small, _, err := email.Compose(testDraft("pequeño"))
	if err != nil {
		t.Fatal(err)
	}
	srv.Append(bob, small)

	mb, err := email.DialIMAP(ctx, srv.IMAPConfig(bob))
	if err != nil {
		t.Fatal(err)
	}
	defer mb.Close()
	before := srv.IMAPBytesSent()
	var got []email.Fetched
	elapsed, alloc := bounded(t, func() {
		got, err = mb.Unprocessed(ctx, 10, 25*mib)
	})
	sent := srv.IMAPBytesSent() - before
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("40 MiB message listed in %v: server sent %d bytes, %d MiB allocated", elapsed, sent, alloc/mib)
	if len(got) != 2 {
		t.Fatalf("Unprocessed = %d messages, want 2", len(got))
	}
	if !got[0].TooLarge || got[0].Raw != nil || got[0].Size != int64(len(huge)) {
		t.Errorf("huge message: TooLarge %v, Raw %d bytes, Size %d; want TooLarge, no body, size %d", got[0].TooLarge, len(got[0].Raw), got[0].Size, len(huge))
	}
	if got[1].TooLarge || !bytes.Equal(got[1].Raw, small) {
		t.Errorf("the small message after it was not read whole")
	}
	// The small message is about 3 KB; the huge one would be 40 MiB.
	if sent > 64<<10 {
		t.Errorf("the server sent %d bytes: the huge body was downloaded", sent)
	}
}

// TestBodyFetchIsBoundedWhateverTheSize: the body fetch asks for at most
// maxSize+1 bytes, so a server that under-reported a message's size still
// sends no more than that, and the message comes back TooLarge.
func TestBodyFetchIsBoundedWhateverTheSize(t *testing.T) {
	srv := emailtest.Start(t, alice, bob)
	ctx := ctxFor(t, 30*time.Second)
	big := append([]byte("Subject: 100 KiB\r\n\r\n"), bytes.Repeat([]byte("0123456789\r\n"), 100<<10/12)...)
	srv.Append(bob, big)
	mb, err := email.DialIMAP(ctx, srv.IMAPConfig(bob))
	if err != nil {
		t.Fatal(err)
	}
	defer mb.Close()
	before := srv.IMAPBytesSent()
	raw, tooLarge, err := mb.BodyForTest(ctx, 1, 100)
	sent := srv.IMAPBytesSent() - before
	if err != nil || !tooLarge || raw != nil {
		t.Fatalf("body with maxSize 100 of a %d-byte message = %d bytes, tooLarge %v, %v; want tooLarge", len(big), len(raw), tooLarge, err)
	}
	t.Logf("the server sent %d bytes for a %d-byte message with maxSize 100", sent, len(big))
	if sent > 2<<10 {
		t.Errorf("the server sent %d bytes: the fetch was not cut at 101", sent)
	}
	raw, tooLarge, err = mb.BodyForTest(ctx, 1, int64(len(big)))
	if err != nil || tooLarge || !bytes.Equal(raw, big) {
		t.Fatalf("body with maxSize = its size: %d bytes, tooLarge %v, %v; want it whole", len(raw), tooLarge, err)
	}
}
