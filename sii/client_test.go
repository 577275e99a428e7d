package sii_test

import (
	"bytes"
	"context"
	"errors"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/dte/dtetest"
	"github.com/dtekit/dtekit/sii"
	"github.com/dtekit/dtekit/sii/siitest"
)

var trackRE = regexp.MustCompile(`^[0-9]{10}$`)

// TestHappyEnvioDTE uploads an EnvioDTE (checked by the fake with xmllint
// and the official XSDs), walks getEstUp through SOK, CRT, FOK, PDR to EPR
// and confirms the document with getEstDte; the fake's log shows how the
// upload was sent.
func TestHappyEnvioDTE(t *testing.T) {
	r := newRig(t, siitest.Options{Schema: xmllintSchema(t)}, func(c *sii.Config) { c.Referer = "https://example.cl" })
	ctx := context.Background()
	env, docs := r.envelope(33, 33)
	res, err := r.client.Upload(ctx, dtetest.EmisorRUT, env)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != 0 || !trackRE.MatchString(res.TrackID) || !strings.HasPrefix(res.TrackID, "000000") {
		t.Fatalf("upload: STATUS %d TRACKID %q, want 0 and a zero-padded 10-digit track id (errors %v)", res.Status, res.TrackID, res.Errors)
	}
	if o := sii.UploadOutcome(res); o.Estado != dte.EstadoProcesando {
		t.Errorf("UploadOutcome = %+v, want procesando", o)
	}
	if res.RutSender != dtetest.SignerRUT || res.RutCompany != dtetest.EmisorRUT {
		t.Errorf("RUTSENDER %q RUTCOMPANY %q", res.RutSender, res.RutCompany)
	}
	for i, want := range []string{"SOK", "CRT", "FOK", "PDR", "EPR"} {
		s, err := r.client.EnvelopeStatus(ctx, dtetest.EmisorRUT, res.TrackID)
		if err != nil {
			t.Fatal(err)
		}
		if s.Estado != want || s.TrackID != res.TrackID || s.NumAtencion == "" {
			t.Fatalf("poll %d: ESTADO %q TRACKID %q NUM_ATENCION %q, want %s", i+1, s.Estado, s.TrackID, s.NumAtencion, want)
		}
		o := sii.EnvelopeOutcome(s, 33)
		wantEstado := dte.EstadoProcesando
		if want == "EPR" {
			wantEstado = dte.EstadoAceptado
			c, _ := s.CountsFor(33)
			if c != (sii.TypeCounts{Tipo: 33, Informados: 2, Aceptados: 2}) {
				t.Errorf("EPR counts %+v, want 2 informados, 2 aceptados", c)
			}
		}
		if o.Estado != wantEstado {
			t.Errorf("poll %d (%s): outcome %s, want %s", i+1, want, o.Estado, wantEstado)
		}
	}
	ds, err := r.client.DocumentStatus(ctx, query(docs[0], "76086428-5"))
	if err != nil {
		t.Fatal(err)
	}
	if ds.Estado != "DOK" || ds.ErrCode != "0" || sii.DocumentOutcome(ds).Estado != dte.EstadoAceptado {
		t.Errorf("getEstDte = %+v, want DOK", ds)
	}
	// A query with the wrong amount: DNK.
	q := query(docs[1], "76086428-5")
	q.Monto++
	if ds, err := r.client.DocumentStatus(ctx, q); err != nil || ds.Estado != "DNK" {
		t.Errorf("getEstDte with a wrong amount = %+v, %v; want DNK", ds, err)
	}

	// What reached the fake.
	ups := r.fake.Requests(siitest.Upload)
	if len(ups) != 1 {
		t.Fatalf("%d uploads recorded, want 1", len(ups))
	}
	up := ups[0]
	if want := []string{"rutSender", "dvSender", "rutCompany", "dvCompany", "archivo"}; strings.Join(up.Fields, ",") != strings.Join(want, ",") {
		t.Errorf("multipart fields %v, want %v", up.Fields, want)
	}
	if up.ContentLength <= 0 || up.Chunked {
		t.Errorf("Content-Length %d chunked %v, want an explicit length", up.ContentLength, up.Chunked)
	}
	if ua := up.Header.Get("User-Agent"); ua != sii.DefaultUserAgent {
		t.Errorf("User-Agent %q", ua)
	}
	for h, want := range map[string]string{"Accept-Language": "es-cl", "Cache-Control": "no-cache", "Referer": "https://example.cl",
		"Cookie": "TOKEN=" + up.Token} {
		if got := up.Header.Get(h); got != want {
			t.Errorf("%s: %q, want %q", h, got, want)
		}
	}
	if len(up.Token) != 13 {
		t.Errorf("token %q is not the fake's 13-character token", up.Token)
	}
	e, _ := r.fake.Envelope(res.TrackID)
	if !bytes.HasPrefix(e.Raw, []byte(`<?xml version="1.0" encoding="ISO-8859-1"?>`)) {
		t.Errorf("archivo starts %q, want the ISO-8859-1 declaration", e.Raw[:50])
	}
	if !bytes.Equal(e.Raw, env) {
		t.Error("the fake received different envelope bytes")
	}
	// One seed, one token for everything.
	if n := len(r.fake.Requests(siitest.Seed)); n != 1 {
		t.Errorf("%d getSeed calls, want 1 (token reused)", n)
	}
	for _, q := range r.fake.Requests(siitest.EstUp) {
		if q.Token != up.Token {
			t.Errorf("getEstUp used token %q, upload %q", q.Token, up.Token)
		}
	}
}

// TestHappyEnvioBOLETA sends an EnvioBOLETA through the REST API and
// follows it to EPR.
func TestHappyEnvioBOLETA(t *testing.T) {
	r := newRig(t, siitest.Options{Schema: xmllintSchema(t)}, nil)
	ctx := context.Background()
	env, docs := r.envelope(39, 39)
	res, err := r.client.Upload(ctx, dtetest.EmisorRUT, env)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Boleta || res.Estado != "REC" || res.Status != 0 || res.TrackID == "" {
		t.Fatalf("boleta upload = %+v, want REC with a track id", res)
	}
	if o := sii.UploadOutcome(res); o.Estado != dte.EstadoProcesando {
		t.Errorf("UploadOutcome = %+v", o)
	}
	if len(r.fake.Requests(siitest.Upload)) != 0 || len(r.fake.Requests(siitest.BoletaUpload)) != 1 {
		t.Error("the EnvioBOLETA did not go (only) to the REST upload")
	}
	var last *sii.EnvelopeStatus
	for i := 0; i < 5; i++ {
		s, err := r.client.BoletaEnvelopeStatus(ctx, dtetest.EmisorRUT, res.TrackID)
		if err != nil {
			t.Fatal(err)
		}
		if i < 4 && (!s.Pending || sii.EnvelopeOutcome(s, 39).Estado != dte.EstadoProcesando) {
			t.Errorf("poll %d: %+v, want pending", i+1, s)
		}
		last = s
	}
	if last.Estado != "EPR" || last.Pending {
		t.Fatalf("final boleta status %+v", last)
	}
	if o := sii.EnvelopeOutcome(last, 39); o.Estado != dte.EstadoAceptado {
		t.Errorf("outcome %+v, want aceptado", o)
	}
	ds, err := r.client.BoletaStatus(ctx, query(docs[0], "66666666-6"))
	if err != nil || ds.Estado != "DOK" {
		t.Errorf("boleta status = %+v, %v; want DOK", ds, err)
	}
	if _, err := r.client.BoletaEnvelopeStatus(ctx, dtetest.EmisorRUT, "999999"); !errors.Is(err, sii.ErrNotFound) {
		t.Errorf("unknown track: %v, want ErrNotFound", err)
	}
	// The REST token is separate from the SOAP one and was fetched once.
	if n := len(r.fake.Requests(siitest.BoletaToken)); n != 1 {
		t.Errorf("%d boleta token requests, want 1", n)
	}
	if n := len(r.fake.Requests(siitest.Token)); n != 0 {
		t.Errorf("%d SOAP token requests for a boleta flow, want 0", n)
	}
}

// TestUploadStatuses provokes every documented STATUS and checks its
// mapping.
func TestUploadStatuses(t *testing.T) {
	tamper := func(env []byte, from, to string) []byte {
		if !bytes.Contains(env, []byte(from)) {
			t.Fatalf("envelope lacks %q", from)
		}
		return bytes.Replace(env, []byte(from), []byte(to), 1)
	}
	cases := []struct {
		name   string
		status int
		estado dte.Estado
		opts   siitest.Options
		setup  func(r *rig, env []byte) []byte
	}{
		{"0 received", 0, dte.EstadoProcesando, siitest.Options{}, nil},
		{"1 no permission", 1, dte.EstadoRechazado, siitest.Options{}, func(r *rig, env []byte) []byte {
			r.fake.Withdraw(dtetest.SignerRUT, dtetest.EmisorRUT)
			return env
		}},
		{"2 size", 2, dte.EstadoRechazado, siitest.Options{MaxUpload: 2000}, nil},
		{"3 truncated", 3, dte.EstadoEnviando, siitest.Options{}, func(r *rig, env []byte) []byte {
			r.fake.Inject(siitest.Upload, siitest.Fault{Kind: siitest.FaultStatus, Code: "3"})
			return env
		}},
		{"5 not authenticated", 5, dte.EstadoEnviando, siitest.Options{}, nil},
		{"6 company not authorised", 6, dte.EstadoRechazado, siitest.Options{}, func(r *rig, env []byte) []byte {
			r.fake.Deauthorize(dtetest.EmisorRUT)
			return env
		}},
		{"7 schema", 7, dte.EstadoRechazado, siitest.Options{}, func(r *rig, env []byte) []byte {
			return tamper(env, "<NroResol>0</NroResol>", "<NroResol>cero</NroResol>")
		}},
		{"8 signature", 8, dte.EstadoRechazado, siitest.Options{}, func(r *rig, env []byte) []byte {
			return tamper(env, "<TmstFirmaEnv>2", "<TmstFirmaEnv>1")
		}},
		{"9 system locked", 9, dte.EstadoEnviando, siitest.Options{}, func(r *rig, env []byte) []byte {
			r.fake.Inject(siitest.Upload, siitest.Fault{Kind: siitest.FaultStatus, Code: "9"})
			return env
		}},
		{"99 already received", 99, dte.EstadoEnviando, siitest.Options{}, func(r *rig, env []byte) []byte {
			r.fake.Inject(siitest.Upload, siitest.Fault{Kind: siitest.FaultStatus, Code: "99"})
			return env
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			adjust := func(c *sii.Config) {}
			if tc.status == 5 {
				adjust = func(c *sii.Config) { c.UserAgent = "Go-http-client/1.1" }
			}
			r := newRig(t, tc.opts, adjust)
			env, _ := r.envelope(33)
			if tc.setup != nil {
				env = tc.setup(r, env)
			}
			res, err := r.client.Upload(context.Background(), dtetest.EmisorRUT, env)
			if err != nil {
				t.Fatal(err)
			}
			if res.Status != tc.status {
				t.Fatalf("STATUS %d, want %d (errors %v)", res.Status, tc.status, res.Errors)
			}
			if (res.TrackID != "") != (tc.status == 0) {
				t.Errorf("TRACKID %q with STATUS %d", res.TrackID, res.Status)
			}
			o := sii.UploadOutcome(res)
			if o.Estado != tc.estado || o.Code != strconv.Itoa(tc.status) {
				t.Errorf("outcome %+v, want %s with code %d", o, tc.estado, tc.status)
			}
			switch tc.status {
			case 5:
				if !o.RefreshToken {
					t.Error("STATUS 5 does not ask for a token refresh")
				}
				// One refresh and one retry, no more.
				if n := len(r.fake.Requests(siitest.Upload)); n != 2 {
					t.Errorf("%d uploads for a persistent STATUS 5, want 2", n)
				}
				if n := len(r.fake.Requests(siitest.Token)); n != 2 {
					t.Errorf("%d token requests, want 2", n)
				}
				if res.RutSender != "0-0" || res.Timestamp != "0 0" {
					t.Errorf("unauthenticated answer RUTSENDER %q TIMESTAMP %q", res.RutSender, res.Timestamp)
				}
			case 7:
				if len(res.Errors) == 0 {
					t.Error("STATUS 7 without DETAIL/ERROR lines")
				}
			case 99:
				if !o.Reconcile {
					t.Error("STATUS 99 does not ask for reconciliation")
				}
			}
		})
	}
}
