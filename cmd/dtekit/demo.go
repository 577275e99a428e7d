package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/dte/dtetest"
	"github.com/dtekit/dtekit/pdf"
)

const demoUsage = `usage: dtekit demo [--out DIR]

Generates test credentials (a test "SII" authority, CAFs for the twelve types,
a signing certificate as PKCS#12 in modern and legacy encryption), emits one
document of each type, prints each one as a letter PDF (and the boletas and
facturas also on 80 mm paper), packs an EnvioDTE and an EnvioBOLETA, verifies
every XML file as "dtekit verify" does, and writes everything to DIR (default
./dtekit-demo), then prints follow-up commands that use those files. Nothing
is sent anywhere; the credentials are for tests only (the certificate's
password is in DIR/cert-password.txt). When DIR already holds a demo, its
files are first moved to DIR/previous/<time>/, where they still verify with
their own authority key.
`

// runDemo implements "dtekit demo".
func runDemo(ctx context.Context, env *cmdEnv, args []string) int {
	fs := newFlagSet(env, "demo")
	out := fs.String("out", "dtekit-demo", "output directory")
	pos, code, ok := parseFlags(env, fs, demoUsage, args)
	if !ok {
		return code
	}
	if len(pos) != 0 {
		return usageError(env, "demo", "unexpected arguments %q", pos)
	}
	if err := demo(ctx, env, *out, time.Now()); err != nil {
		fmt.Fprintf(env.stderr, "dtekit demo: %s\n", errLine(err))
		return 1
	}
	return 0
}

// demo does the work of runDemo at the instant now.
func demo(ctx context.Context, env *cmdEnv, dir string, now time.Time) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if prev, err := demoMoveAside(dir, now); err != nil {
		return err
	} else if prev != "" {
		fmt.Fprintf(env.stdout, "dtekit demo: %s held an earlier demo; its files (with the credentials that verify them) are now in %s\n", dir, prev)
	}
	creds, err := dtetest.NewWith(dtetest.Options{Now: now})
	if err != nil {
		return err
	}
	write := func(name string, data []byte) (string, error) {
		p := filepath.Join(dir, name)
		return p, writeFileAtomic(p, data, true)
	}
	emisorJSON, _ := json.MarshalIndent(creds.Emisor, "", "  ")
	files := []struct {
		name string
		data []byte
	}{
		{"emisor.json", append(emisorJSON, '\n')},
		{"cert.p12", creds.P12},
		{"cert-legacy.p12", creds.P12Legacy},
		{"cert-password.txt", []byte(creds.Password + "\n")},
		{"test-sii-authority.pub.pem", creds.AuthorityPEM},
	}
	for _, t := range dte.Tipos() {
		files = append(files, struct {
			name string
			data []byte
		}{fmt.Sprintf("CAF-%d.xml", t), creds.CAFFiles[t]})
	}
	for _, f := range files {
		if _, err := write(f.name, f.data); err != nil {
			return err
		}
	}

	em, err := creds.Emitter(func() time.Time { return now })
	if err != nil {
		return err
	}
	refDate := dte.ChileTime(now).AddDate(0, 0, -3).Format("2006-01-02")
	// The documents are packed as emitted (dte.BuildEnvioEmitted): this
	// process wrote and sealed them, so the envelope steps over each
	// without scanning it again.
	var boletas, others []*dte.Emitted
	fmt.Fprintf(env.stdout, "dtekit demo: writing to %s\n", dir)
	for _, req := range demoRequests(refDate) {
		reqJSON, _ := json.MarshalIndent(req, "", "  ")
		if _, err := write(fmt.Sprintf("request-%d.json", req.TipoDTE), append(reqJSON, '\n')); err != nil {
			return err
		}
		res, err := em.Emit(ctx, req)
		if err != nil {
			return fmt.Errorf("emitting tipo %d: %w", req.TipoDTE, err)
		}
		p, err := write(fmt.Sprintf("DTE-%d-%d.xml", res.Tipo, res.Folio), res.XML)
		if err != nil {
			return err
		}
		if err := demoVerify(env, p, res.XML, creds); err != nil {
			return err
		}
		if err := demoPDFs(dir, res.XML, creds.Emisor); err != nil {
			return fmt.Errorf("printing tipo %d: %w", res.Tipo, err)
		}
		if res.Tipo.IsBoleta() {
			boletas = append(boletas, res)
		} else {
			others = append(others, res)
		}
	}
	for _, e := range []struct {
		name string
		docs []*dte.Emitted
	}{{"EnvioDTE.xml", others}, {"EnvioBOLETA.xml", boletas}} {
		xml, err := dte.BuildEnvioEmitted(dte.EnvioOptions{Emisor: creds.Emisor, At: now}, creds.Cert, e.docs...)
		if err != nil {
			return fmt.Errorf("building %s: %w", e.name, err)
		}
		p, err := write(e.name, xml)
		if err != nil {
			return err
		}
		if err := demoVerify(env, p, xml, creds); err != nil {
			return err
		}
	}
	fmt.Fprintf(env.stdout, "dtekit demo: 12 documents and 2 envelopes written and verified in %s (with their PDFs)\n", dir)
	// The follow-up commands, runnable as printed: the globs match only
	// the documents and envelopes (not the CAFs), and the emit command uses
	// the demo's own factura request (dated today by default, within the
	// new CAF's validity) with the next free folio.
	pem := filepath.Join(dir, "test-sii-authority.pub.pem")
	fmt.Fprintf(env.stdout, "  verify again:  dtekit verify --trust %s %s %s\n",
		pem, filepath.Join(dir, "DTE-*.xml"), filepath.Join(dir, "Envio*.xml"))
	fmt.Fprintf(env.stdout, "  emit your own: dtekit emit --emisor %s --caf %s --cert %s --cert-password-file %s --trust %s --folio 2 --out %s %s\n",
		filepath.Join(dir, "emisor.json"), filepath.Join(dir, "CAF-33.xml"), filepath.Join(dir, "cert.p12"),
		filepath.Join(dir, "cert-password.txt"), pem, dir, filepath.Join(dir, "request-33.json"))
	fmt.Fprintf(env.stdout, "  print it:      dtekit pdf --trust %s --emisor %s %s\n",
		pem, filepath.Join(dir, "emisor.json"), filepath.Join(dir, "DTE-33-2.xml"))
	return nil
}

// demoPatterns are the patterns of the files a demo writes in its folder,
// and of the documents its printed commands add there.
var demoPatterns = []string{"emisor.json", "cert.p12", "cert-legacy.p12", "cert-password.txt", "test-sii-authority.pub.pem",
	"CAF-*.xml", "request-*.json", "DTE-*.xml", "DTE-*.pdf", "Envio*.xml"}

// demoMoveAside moves an earlier demo's files out of dir, into
// dir/previous/<time>, and returns that folder ("" when dir holds no
// demo). A new demo makes new credentials, which would not verify the
// documents of the earlier one; moved aside together, the earlier files
// keep verifying with their own authority, and the new demo's printed
// commands (folio 2, DTE-*.xml) work as printed.
func demoMoveAside(dir string, now time.Time) (string, error) {
	if _, err := os.Stat(filepath.Join(dir, "emisor.json")); errors.Is(err, fs.ErrNotExist) {
		return "", nil
	} else if err != nil {
		return "", err
	}
	prev := filepath.Join(dir, "previous", now.UTC().Format("20060102T150405.000Z"))
	if err := os.MkdirAll(prev, 0o755); err != nil {
		return "", err
	}
	for _, pat := range demoPatterns {
		names, err := filepath.Glob(filepath.Join(dir, pat))
		if err != nil {
			return "", err
		}
		for _, n := range names {
			if err := os.Rename(n, filepath.Join(prev, filepath.Base(n))); err != nil {
				return "", fmt.Errorf("moving an earlier demo's file aside: %w", err)
			}
		}
	}
	return prev, nil
}

// demoVerify verifies one written file and prints its report.
func demoVerify(env *cmdEnv, path string, data []byte, creds *dtetest.Creds) error {
	rep, err := dte.Verify(data, creds.Keys)
	if rep != nil {
		printReport(env.stdout, path, rep)
	}
	if err != nil {
		return fmt.Errorf("%s does not verify: %w", path, err)
	}
	return nil
}

// demoPDFs renders a signed document as PDF: letter paper for every type,
// 80 mm paper where that format applies.
func demoPDFs(dir string, signed []byte, emisor dte.Emisor) error {
	doc, err := dte.ParseDTE(signed)
	if err != nil {
		return err
	}
	opts := pdf.OptionsFor(emisor)
	for _, f := range []pdf.Format{pdf.Carta, pdf.Termica80} {
		if !f.Applies(doc.Tipo) {
			continue
		}
		opts.Format = f
		b, err := pdf.RenderBytes(doc, opts)
		if err != nil {
			return err
		}
		name := fmt.Sprintf("DTE-%d-%d-%s.pdf", doc.Tipo, doc.Folio, f)
		if err := writeFileAtomic(filepath.Join(dir, name), b, true); err != nil {
			return err
		}
	}
	return nil
}
