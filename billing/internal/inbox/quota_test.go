package inbox

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/dtekit/dtekit/api"
	"github.com/dtekit/dtekit/billing/fault"
	"github.com/dtekit/dtekit/billing/internal/periodic"
	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/dte/dtetest"
	"github.com/dtekit/dtekit/intercambio"
	"github.com/dtekit/dtekit/internal/oracle"
	"github.com/dtekit/dtekit/internal/pgtest"
	"github.com/dtekit/dtekit/store"
	"github.com/dtekit/dtekit/store/postgres"
	"github.com/dtekit/dtekit/store/sqlite"
)

// measured is a store whose size on disk a test can read: the SQLite
// file with its write-ahead log, or the PostgreSQL relations of the
// inbox (pg_total_relation_size: table, indexes and TOAST).
type measured struct {
	name string
	open func(t *testing.T) (store.Store, func() int64)
}

var measuredBackends = []measured{
	{"sqlite", func(t *testing.T) (store.Store, func() int64) {
		path := filepath.Join(t.TempDir(), sqlite.FileName)
		st, err := sqlite.Open(context.Background(), path, nil)
		if err != nil {
			t.Fatal(err)
		}
		return st, oracle.SQLiteSize(t, path)
	}},
	{"postgres", func(t *testing.T) (store.Store, func() int64) {
		url := pgtest.URL(t)
		st, err := postgres.Open(context.Background(), url, nil)
		if err != nil {
			t.Fatal(err)
		}
		return st, oracle.PostgresSize(t, url, "recepciones", "recibidos", "mensajes")
	}},
}

// declareMaintenance declares the queue of the acuse job, which the
// tests leave to no worker.
func declareMaintenance(t *testing.T, st store.Store) {
	t.Helper()
	if err := st.Jobs().DeclareQueue(periodic.Queue, 0); err != nil {
		t.Fatal(err)
	}
}

// noise is n bytes of base64 text from crypto/rand: no database
// compresses it (PostgreSQL's TOAST would shrink a repeated byte to
// nothing and hide the growth).
func noise(n int) []byte {
	raw := make([]byte, n*3/4+3)
	_, _ = rand.Read(raw)
	return []byte(base64.StdEncoding.EncodeToString(raw))[:n]
}

// junkFiles are the refused files of the disk-growth test, each size
// bytes and unlike the others: bytes that are not XML, a file with a
// DOCTYPE, and a real envelope (signed) with its envelope signature
// removed and a comment as padding.
func junkFiles(t *testing.T, size int, envelope []byte) [][]byte {
	t.Helper()
	// The envelope's own signature is its last element.
	sigs := regexp.MustCompile(`<Signature[\s>]`).FindAllIndex(envelope, -1)
	end := bytes.LastIndex(envelope, []byte("</EnvioDTE>"))
	if len(sigs) != 2 || end < sigs[1][0] {
		t.Fatalf("the envelope has %d signatures, want the document's and its own", len(sigs))
	}
	unsigned := append(append([]byte(nil), envelope[:sigs[1][0]]...), envelope[end:]...)
	var out [][]byte
	for i := range 10 {
		var f []byte
		switch i % 3 {
		case 0: // not XML
			f = append([]byte("\x00\x01PK junk "), noise(size)...)
		case 1: // a DOCTYPE
			f = append([]byte(`<?xml version="1.0"?><!DOCTYPE EnvioDTE [<!ENTITY x "y">]><EnvioDTE><!-- `), noise(size)...)
			f = append(f, " --></EnvioDTE>"...)
		case 2: // no envelope signature
			cut := bytes.LastIndex(unsigned, []byte("</EnvioDTE>"))
			f = append(append([]byte(nil), unsigned[:cut]...), "<!-- "...)
			f = append(f, noise(size-len(unsigned)-10)...)
			f = append(f, " -->"...)
			f = append(f, unsigned[cut:]...)
		}
		out = append(out, f[:min(len(f), MaxFileBytes)])
	}
	return out
}

// TestRefusedFilesBounded, on both backends: ten refused files of 15 MiB
// each (not XML, a DOCTYPE, an envelope without its signature) add
// little to the database (measured on disk: the SQLite file and its log,
// PostgreSQL's relations), where each used to be kept whole (163 MB for
// the ten). Each is still recorded, with its digest, size, report and
// first PrefixBytes; the envelope's documents keep their reports and no
// bytes.
func TestRefusedFilesBounded(t *testing.T) {
	t.Parallel()
	ans := fixtureAnswers(t)
	envelope, err := dte.BuildEnvio(dte.EnvioOptions{Emisor: ans.creds.Emisor, RutReceptor: dtetest.EmisorRUT}, ans.creds.Cert, ans.factura)
	if err != nil {
		t.Fatal(err)
	}
	size := 15 << 20
	if testing.Short() {
		size = 3 << 20
	}
	files := junkFiles(t, size, envelope)
	for _, be := range measuredBackends {
		t.Run(be.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			st, disk := be.open(t)
			rm := newRoom(t, st, ans.creds, Config{})
			declareMaintenance(t, st)
			before := disk()
			var sent int64
			for i, f := range files {
				res, err := rm.ib.Intake(ctx, rm.empresa, f, Source{Origen: OrigenUpload, Filename: fmt.Sprintf("junk%d.xml", i)})
				if err != nil {
					t.Fatalf("file %d: %v", i, err)
				}
				sent += int64(len(f))
				r, err := st.GetRecepcion(ctx, rm.empresa, res.Recepcion.ID)
				if err != nil {
					t.Fatal(err)
				}
				if r.Estado != RecepcionRechazada || !r.Descartado || r.Size != int64(len(f)) || !bytes.Equal(r.XML, f[:PrefixBytes]) ||
					r.Digest != digest(f) || len(r.Report) == 0 {
					t.Errorf("file %d recorded as %s, descartado %v, size %d (sent %d), %d bytes kept, report %d bytes", i, r.Estado,
						r.Descartado, r.Size, len(f), len(r.XML), len(r.Report))
				}
				for _, d := range res.Recibidos {
					got, err := st.GetRecibido(ctx, rm.empresa, d.ID)
					if err != nil || got.Estado != Rechazado || got.XML != nil || len(got.Report) == 0 {
						t.Errorf("file %d, document %s: %+v, %v; want rechazado with its report and no bytes", i, d.ID, got, err)
					}
				}
				if i%3 == 2 && len(res.Recibidos) != 1 {
					t.Errorf("the unsigned envelope (file %d) has %d documents recorded, want 1", i, len(res.Recibidos))
				}
			}
			after := disk()
			t.Logf("%s: %d refused files, %.1f MB sent; the database went from %.1f MB to %.1f MB (+%.0f KB)", be.name, len(files),
				float64(sent)/1e6, float64(before)/1e6, float64(after)/1e6, float64(after-before)/1e3)
			// Ten prefixes and reports are well under a megabyte; a WAL
			// checkpoint or PostgreSQL's page allocation may add a few.
			if grew := after - before; grew > 8<<20 {
				t.Errorf("the database grew by %d bytes for %d refused files of %d bytes", grew, len(files), size)
			}
		})
	}
}

// TestAcuseOfRefusedFile, on both backends: the acuse of a refused file whose bytes were
// cut is built from its report, and is the very acuse the whole file
// gives (intercambio.Receive on it, as the job did before the cut); it
// names the Carátula's emitter.
func TestAcuseOfRefusedFile(t *testing.T) {
	t.Parallel()
	for _, be := range backends {
		t.Run(be.name, func(t *testing.T) {
			t.Parallel()
			testAcuseOfRefusedFile(t, be.open(t))
		})
	}
}

func testAcuseOfRefusedFile(t *testing.T, st store.Store) {
	ans := fixtureAnswers(t)
	envelope, err := dte.BuildEnvio(dte.EnvioOptions{Emisor: ans.creds.Emisor, RutReceptor: dtetest.EmisorRUT}, ans.creds.Cert, ans.factura)
	if err != nil {
		t.Fatal(err)
	}
	file := junkFiles(t, 64<<10, envelope)[2]
	ctx := context.Background()
	at := time.Date(2026, 3, 3, 9, 0, 0, 0, time.UTC)
	outgoing := &fakeOutgoing{}
	rm := newRoom(t, st, ans.creds, Config{Now: func() time.Time { return at }, Outgoing: outgoing})
	declareMaintenance(t, st)
	res, err := rm.ib.Intake(ctx, rm.empresa, file, Source{Origen: OrigenCorreo, Remitente: "dte@proveedor.cl", Filename: "x.xml"})
	if err != nil {
		t.Fatal(err)
	}
	r := res.Recepcion
	if !r.Descartado || len(r.XML) != PrefixBytes {
		t.Fatalf("the file was kept whole: descartado %v, %d bytes", r.Descartado, len(r.XML))
	}
	if err := rm.ib.acuse(ctx, acuseArgs{EmpresaID: rm.empresa, RecepcionID: r.ID}); err != nil {
		t.Fatal(err)
	}
	mails := outgoing.sent
	if len(mails) != 1 {
		t.Fatalf("%d mails queued, want the acuse", len(mails))
	}
	whole, err := intercambio.Receive(file, intercambio.Options{Empresa: dtetest.EmisorRUT, Verify: dte.VerifyOptions{Keys: ans.creds.Keys},
		CodEnvio: r.Numero, At: r.CreatedAt})
	if err != nil {
		t.Fatal(err)
	}
	want, err := whole.Acuse(ans.creds.Cert, intercambio.AnswerOptions{IdRespuesta: r.Numero, At: at})
	if err != nil {
		t.Fatal(err)
	}
	if whole.Estado != intercambio.EnvioErrorFirma {
		t.Errorf("the unsigned envelope is %v, want 2 (firma)", whole.Estado)
	}
	if !bytes.Equal(mails[0].XML, want) {
		t.Errorf("the acuse of the cut file differs from the whole file's:\n%s\nwant\n%s", mails[0].XML, want)
	}
	if !bytes.Contains(want, []byte("<RutEmisor>"+dtetest.EmisorRUT+"</RutEmisor>")) {
		t.Errorf("the acuse does not name the Carátula's emitter")
	}
}

// TestQuotaRefusesFiles, on both backends: with a quota of 3 files, the
// fourth file is refused with LIMIT_EXCEEDED and not recorded, and an
// answer too; the same file again is still answered from its record; a
// byte quota refuses the file that would cross it; once the retention
// deletes the refused files the company receives again. A company may
// lower its quota, never raise it over the operator's, and the mailbox
// is held (AdmitMail) at its mail quota.
func TestQuotaRefusesFiles(t *testing.T) {
	t.Parallel()
	ans := fixtureAnswers(t)
	for _, be := range backends {
		t.Run(be.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			now := time.Now()
			clock := func() time.Time { return now }
			rm := newRoom(t, be.open(t), ans.creds, Config{Now: func() time.Time { return clock() },
				Limits: Limits{MaxRecepciones: 10, MaxMensajes: 2}})
			declareMaintenance(t, rm.st)
			three := int64(3)
			if _, err := rm.ib.SetQuota(ctx, rm.empresa, api.RecepcionLimits{MaxRecepciones: &three}); err != nil {
				t.Fatal(err)
			}
			eleven := int64(11)
			_, err := rm.ib.SetQuota(ctx, rm.empresa, api.RecepcionLimits{MaxRecepciones: &eleven})
			if e := fault.As(err); e == nil || e.Kind != fault.KindValidation || e.Details[0].Field != "max_recepciones" {
				t.Errorf("a quota over the operator's: %v, want a validation error on max_recepciones", err)
			}
			var first []byte
			for i := range 3 {
				f := []byte(fmt.Sprintf("not xml %d", i))
				if i == 0 {
					first = f
				}
				if _, err := rm.ib.Intake(ctx, rm.empresa, f, Source{Origen: OrigenUpload}); err != nil {
					t.Fatalf("file %d: %v", i, err)
				}
			}
			_, err = rm.ib.Intake(ctx, rm.empresa, []byte("not xml 4"), Source{Origen: OrigenUpload})
			if e := fault.As(err); e == nil || e.Code != fault.LimitExceeded {
				t.Fatalf("the fourth file: %v, want LIMIT_EXCEEDED", err)
			}
			_, err = rm.ib.Reply(ctx, rm.empresa, ans.acuseB, Source{Origen: OrigenUpload})
			if !IsLimit(err) {
				t.Errorf("an answer over the quota: %v, want LIMIT_EXCEEDED", err)
			}
			if res, err := rm.ib.Intake(ctx, rm.empresa, first, Source{Origen: OrigenUpload}); err != nil || !res.Duplicate {
				t.Errorf("the first file again: %+v, %v; want its record", res, err)
			}
			q, err := rm.ib.Quota(ctx, rm.empresa)
			if err != nil || q.Uso.Recepciones != 3 || q.Vigente.MaxRecepciones != 3 || q.Operador.MaxRecepciones != 10 {
				t.Errorf("quota: %+v, %v", q, err)
			}

			// A byte quota: what the files keep so far, plus 10.
			room := q.Uso.RecepcionBytes + 10
			if _, err := rm.ib.SetQuota(ctx, rm.empresa, api.RecepcionLimits{MaxRecepcionBytes: &room}); err != nil {
				t.Fatal(err)
			}
			_, err = rm.ib.Intake(ctx, rm.empresa, []byte("not xml 5"), Source{Origen: OrigenUpload})
			if !IsLimit(err) {
				t.Errorf("a file over the byte quota: %v, want LIMIT_EXCEEDED", err)
			}

			// The mailbox: two mails read fill its quota of 2.
			if err := rm.ib.AdmitMail(ctx, rm.empresa); err != nil {
				t.Errorf("AdmitMail with no mail kept: %v", err)
			}
			for i := range 2 {
				m := &store.Mensaje{EmpresaID: rm.empresa, Digest: fmt.Sprint(i), Estado: "rechazado", CreatedAt: now.Add(-time.Hour)}
				if err := rm.st.Write(ctx, func(ctx context.Context, tx store.Tx) error { return tx.InsertMensaje(ctx, m) }); err != nil {
					t.Fatal(err)
				}
			}
			if err := rm.ib.AdmitMail(ctx, rm.empresa); !IsLimit(err) {
				t.Errorf("AdmitMail at the quota: %v, want LIMIT_EXCEEDED", err)
			}

			// The retention (1 day), 2 days later: the refused files go
			// but the last, and the mails.
			one := int64(1)
			if _, err := rm.ib.SetQuota(ctx, rm.empresa, api.RecepcionLimits{MaxRecepciones: &three, RetencionDias: &one}); err != nil {
				t.Fatal(err)
			}
			later := now.Add(48 * time.Hour)
			clock = func() time.Time { return later }
			r, m, err := rm.ib.Purge(ctx, rm.empresa)
			if err != nil || r != 2 || m != 2 {
				t.Errorf("Purge: %d files, %d mails, %v; want 2, 2", r, m, err)
			}
			if err := rm.ib.AdmitMail(ctx, rm.empresa); err != nil {
				t.Errorf("AdmitMail after the retention: %v", err)
			}
			if _, err := rm.ib.Intake(ctx, rm.empresa, []byte("not xml 6"), Source{Origen: OrigenUpload}); err != nil {
				t.Errorf("a file after the retention: %v", err)
			}
		})
	}
}

// TestQuotaConcurrent, on both backends: twelve different files at once
// against a quota of 5 files: exactly 5 are recorded and 7 refused with
// LIMIT_EXCEEDED, however the transactions interleave.
func TestQuotaConcurrent(t *testing.T) {
	t.Parallel()
	ans := fixtureAnswers(t)
	for _, be := range backends {
		t.Run(be.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			rm := newRoom(t, be.open(t), ans.creds, Config{Limits: Limits{MaxRecepciones: 5}})
			declareMaintenance(t, rm.st)
			errs := make(chan error, 12)
			for i := range 12 {
				go func() {
					_, err := rm.ib.Intake(ctx, rm.empresa, []byte(fmt.Sprintf("not xml %d", i)), Source{Origen: OrigenUpload})
					errs <- err
				}()
			}
			var ok, limited int
			for range 12 {
				switch err := <-errs; {
				case err == nil:
					ok++
				case IsLimit(err):
					limited++
				default:
					t.Errorf("a concurrent file: %v", err)
				}
			}
			u, err := rm.st.InboxUsage(ctx, rm.empresa)
			if ok != 5 || limited != 7 || err != nil || u.Recepciones != 5 {
				t.Errorf("%d recorded, %d refused, %d kept (%v); want 5, 7, 5", ok, limited, u.Recepciones, err)
			}
		})
	}
}
