package billing

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"context"
	"encoding/base64"
	"fmt"
	"hash/crc32"
	"io"
	"net"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dtekit/dtekit/api"
)

// hostileMessages are messages a mailbox may hold that must be refused in
// bounded time and memory, each recorded with why.
func hostileMessages(t *testing.T, to string) map[string][]byte {
	t.Helper()
	head := func(subject, ctype string) string {
		return fmt.Sprintf("From: atacante@example.net\r\nTo: %s\r\nSubject: %s\r\nMessage-ID: <%s@example.net>\r\nMIME-Version: 1.0\r\nContent-Type: %s\r\n\r\n",
			to, subject, strings.ReplaceAll(subject, " ", "-"), ctype)
	}
	out := map[string][]byte{}
	// Larger than the rig's 2 MiB bound: never downloaded.
	big := head("grande", "text/plain") + strings.Repeat("A", 3<<20)
	out["grande"] = []byte(big)
	// 10,000 MIME parts.
	var b strings.Builder
	b.WriteString(head("partes", `multipart/mixed; boundary="b"`))
	for range 10000 {
		b.WriteString("--b\r\nContent-Type: text/plain\r\n\r\nx\r\n")
	}
	b.WriteString("--b--\r\n")
	out["partes"] = []byte(b.String())
	// Nesting 1,000 deep.
	b.Reset()
	b.WriteString(head("anidado", `multipart/mixed; boundary="n0"`))
	for i := range 1000 {
		fmt.Fprintf(&b, "--n%d\r\nContent-Type: multipart/mixed; boundary=\"n%d\"\r\n\r\n", i, i+1)
	}
	out["anidado"] = []byte(b.String())
	// A zip bomb: 200 MiB of zeros in one entry.
	zb := zipBomb(t, "EnvioDTE.xml", 200)
	b.Reset()
	b.WriteString(head("bomba", `multipart/mixed; boundary="z"`))
	b.WriteString("--z\r\nContent-Type: application/zip; name=\"dte.zip\"\r\nContent-Disposition: attachment; filename=\"dte.zip\"\r\nContent-Transfer-Encoding: base64\r\n\r\n")
	enc := base64Lines(zb)
	b.WriteString(enc)
	b.WriteString("\r\n--z--\r\n")
	out["bomba"] = []byte(b.String())
	return out
}

// zipBomb returns a zip file whose one entry, name, inflates to mib MiB of
// zeros. Deflating 200 MiB takes minutes under the race detector, so the
// entry's stream is put together by hand: one MiB of zeros deflated once,
// ended by a sync flush (so the stream is byte-aligned and no later block
// refers back into it), repeated mib times, then an empty final block.
// What a reader meets is the same as from deflating the whole: a valid
// entry whose declared and real sizes are mib MiB.
func zipBomb(t *testing.T, name string, mib int) []byte {
	t.Helper()
	zero := make([]byte, 1<<20)
	var chunk bytes.Buffer
	fw, err := flate.NewWriter(&chunk, flate.BestCompression)
	if err != nil {
		t.Fatal(err)
	}
	fw.Write(zero)
	fw.Flush()
	sum := crc32.NewIEEE()
	var stream bytes.Buffer
	for range mib {
		stream.Write(chunk.Bytes())
		sum.Write(zero)
	}
	// An empty final block with fixed Huffman codes: BFINAL=1, BTYPE=01,
	// then the end-of-block code (seven zero bits).
	stream.Write([]byte{0x03, 0x00})
	var zb bytes.Buffer
	zw := zip.NewWriter(&zb)
	w, err := zw.CreateRaw(&zip.FileHeader{Name: name, Method: zip.Deflate, CRC32: sum.Sum32(),
		CompressedSize64: uint64(stream.Len()), UncompressedSize64: uint64(mib) << 20})
	if err != nil {
		t.Fatal(err)
	}
	w.Write(stream.Bytes())
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return zb.Bytes()
}

// TestZipBomb checks the hand-made bomb against the standard reader: it
// opens, and its entry inflates to exactly the size declared, all zeros,
// with a matching checksum (archive/zip checks the CRC at EOF).
func TestZipBomb(t *testing.T) {
	t.Parallel()
	const mib = 3
	zb := zipBomb(t, "x", mib)
	zr, err := zip.NewReader(bytes.NewReader(zb), int64(len(zb)))
	if err != nil {
		t.Fatal(err)
	}
	if len(zr.File) != 1 || zr.File[0].UncompressedSize64 != mib<<20 {
		t.Fatalf("the bomb's entries: %+v", zr.File)
	}
	rc, err := zr.File[0].Open()
	if err != nil {
		t.Fatal(err)
	}
	data, err := io.ReadAll(rc)
	if err != nil {
		t.Fatalf("inflating the bomb: %v", err)
	}
	if len(data) != mib<<20 || bytes.Count(data, []byte{0}) != len(data) {
		t.Fatalf("the bomb inflates to %d bytes, not %d zeros", len(data), mib<<20)
	}
}

// TestHostileMail: a mailbox holding an oversized message, 10,000 parts,
// deep nesting and a zip bomb is read in bounded time and memory: each is
// refused and recorded with why, flagged, and the good message after them
// is still taken.
func TestHostileMail(t *testing.T) {
	r := newMailRig(t, backends[0], func(m *MailConfig) { m.Limits.MaxMessageBytes = 2 << 20 })
	ctx := context.Background()
	for _, m := range hostileMessages(t, r.userB.Address) {
		r.srv.Append(r.userB, m)
	}
	_, env := r.emitToB(t, false)
	good := []byte("From: " + r.userA.Address + "\r\nTo: " + r.userB.Address + "\r\nSubject: DTE\r\nMessage-ID: <bueno@empresa-a.cl>\r\nMIME-Version: 1.0\r\n" +
		"Content-Type: multipart/mixed; boundary=\"g\"\r\n\r\n--g\r\nContent-Type: application/xml\r\nContent-Disposition: attachment; filename=\"EnvioDTE.xml\"\r\nContent-Transfer-Encoding: base64\r\n\r\n" +
		base64Lines(env) + "\r\n--g--\r\n")
	r.srv.Append(r.userB, good)

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	start := time.Now()
	res, err := r.s.Mail.Poll(ctx, r.b.ID)
	took := time.Since(start)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if res.Leidos != 1 || res.Rechazados != 4 {
		t.Errorf("the read: %+v, want 1 read and 4 refused", res)
	}
	if took > 20*time.Second {
		t.Errorf("the read took %s", took)
	}
	// The bomb's 200 MiB and the big message's 3 MiB are never held:
	// the heap grows by far less than the bomb.
	if grew := int64(after.HeapAlloc) - int64(before.HeapAlloc); grew > 64<<20 {
		t.Errorf("the heap grew by %d MiB", grew>>20)
	}
	page, err := r.s.Mail.ListMensajes(ctx, r.b.ID, api.MensajeListParams{ListParams: api.ListParams{Limit: 10}})
	if err != nil {
		t.Fatal(err)
	}
	refused := 0
	for _, m := range page.Data {
		if m.Estado == "rechazado" {
			refused++
			if m.Detalle == "" {
				t.Errorf("message %q refused without a reason", m.Subject)
			}
		}
	}
	if refused != 4 {
		t.Errorf("%d messages recorded refused, want 4: %+v", refused, page.Data)
	}
	recs, err := r.s.Received.List(ctx, r.b.ID, api.RecibidoListParams{})
	if err != nil || recs.TotalCount != 1 {
		t.Errorf("B's inbox after the read: %+v, %v", recs, err)
	}
	again, err := r.s.Mail.Poll(ctx, r.b.ID)
	if err != nil || again.Leidos+again.Rechazados+again.Repetidos != 0 {
		t.Errorf("a second read: %+v, %v; want nothing left", again, err)
	}
}

// base64Lines encodes b in base64 lines of 76 characters.
func base64Lines(b []byte) string {
	enc := base64.StdEncoding.EncodeToString(b)
	var out strings.Builder
	for len(enc) > 76 {
		out.WriteString(enc[:76] + "\r\n")
		enc = enc[76:]
	}
	out.WriteString(enc)
	return out.String()
}

// TestMailboxThatHangs: one company's IMAP server accepts and never
// answers; the periodic read still takes the other company's mail at
// once (each mailbox is read by a job of its own).
func TestMailboxThatHangs(t *testing.T) {
	r := newMailRig(t, backends[0])
	ctx := context.Background()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close() // held open, silent, until the test ends
		}
	}()
	// A (the older company, visited first) reads from the silent server.
	hang := r.settings(t, r.userA)
	host, port, _ := net.SplitHostPort(ln.Addr().String())
	hang.IMAP.Host, hang.IMAP.Port = host, atoi(port)
	if _, err := r.s.Mail.UpdateSettings(ctx, r.emp.ID, hang); err != nil {
		t.Fatal(err)
	}
	_, env := r.emitToB(t, false)
	r.srv.Append(r.userB, []byte("From: "+r.userA.Address+"\r\nTo: "+r.userB.Address+"\r\nSubject: DTE\r\nMessage-ID: <uno@empresa-a.cl>\r\nMIME-Version: 1.0\r\n"+
		"Content-Type: multipart/mixed; boundary=\"g\"\r\n\r\n--g\r\nContent-Type: application/xml\r\nContent-Disposition: attachment; filename=\"EnvioDTE.xml\"\r\nContent-Transfer-Encoding: base64\r\n\r\n"+
		base64Lines(env)+"\r\n--g--\r\n"))
	start := time.Now()
	if err := r.s.mailer.PollAll(ctx); err != nil {
		t.Fatal(err)
	}
	for {
		page, err := r.s.Received.List(ctx, r.b.ID, api.RecibidoListParams{})
		if err != nil {
			t.Fatal(err)
		}
		if page.TotalCount == 1 {
			break
		}
		if time.Since(start) > 15*time.Second {
			t.Fatalf("B's mail not read %s after the tick, behind A's silent mailbox", time.Since(start))
		}
		time.Sleep(50 * time.Millisecond)
	}
	if took := time.Since(start); took > 15*time.Second {
		t.Fatalf("B's mail read %s after the tick, behind A's silent mailbox", took)
	}
	t.Logf("B's mail read %s after the tick", time.Since(start).Round(time.Millisecond))
}

func atoi(s string) int { n, _ := strconv.Atoi(s); return n }
