package certificacion_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/dtekit/dtekit/caf"
	"github.com/dtekit/dtekit/certificacion"
	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/dte/dtetest"
	"github.com/dtekit/dtekit/internal/oracle"
)

var (
	credsOnce sync.Once
	credsVal  *dtetest.Creds
	credsErr  error
)

// creds is one set of test credentials (a CAF of every type, folios
// 1-1000) shared by the package's tests.
func creds(tb testing.TB) *dtetest.Creds {
	tb.Helper()
	credsOnce.Do(func() { credsVal, credsErr = dtetest.NewWith(dtetest.Options{Now: testAt}) })
	if credsErr != nil {
		tb.Fatalf("dtetest: %v", credsErr)
	}
	return credsVal
}

func allCAFs(c *dtetest.Creds, skip ...dte.TipoDTE) []*caf.CAF {
	var out []*caf.CAF
outer:
	for _, t := range dte.Tipos() {
		for _, s := range skip {
			if s == t {
				continue outer
			}
		}
		out = append(out, c.CAFs[t])
	}
	return out
}

// setFile reads one of the SII's set files kept in ../shared/sii/sets.
func setFile(tb testing.TB, name string) []byte {
	tb.Helper()
	b, err := os.ReadFile(oracle.SharedFile(tb, "sii", "sets", name))
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// setFiles are the set files in ../shared/sii/sets (007-boletas.csv is a
// spreadsheet transcription of the pre-2020 boleta set, not an SII file;
// the kit reads it too, see boletascsv.go).
var setFiles = []string{"001-basico.txt", "002-ventas.txt", "003-compras.txt", "004-factura_exenta.txt",
	"005-guia_despacho.txt", "006-libro_guias.txt", "007-boletas.csv", "008-factura_compra.txt", "009-set_exportacion_1.txt",
	"010-set_exportacion_2.txt", "boleta-SetPruebaBE-reconstructed.txt"}

// testAt is the instant every test emits at.
var testAt = time.Date(2026, 3, 2, 10, 30, 0, 0, dte.SantiagoLocation())

var (
	generatedMu sync.Mutex
	generated   = map[string]*certificacion.Result{}
)

// generate returns the result of the set file name, generated once for
// the package's tests.
func generate(tb testing.TB, name string) *certificacion.Result {
	tb.Helper()
	return generateOnce(tb, name, func() []byte { return setFile(tb, name) })
}

// generateOnce returns the result of the set file text data gives,
// generated once under key for the package's tests (Generate is
// deterministic at testAt, and no test changes a result).
func generateOnce(tb testing.TB, key string, data func() []byte) *certificacion.Result {
	tb.Helper()
	generatedMu.Lock()
	defer generatedMu.Unlock()
	if r := generated[key]; r != nil {
		return r
	}
	r := generateData(tb, key, data())
	generated[key] = r
	return r
}

// generateData parses a set file's text and generates it at testAt with a
// CAF of every type; what names it in a failure.
func generateData(tb testing.TB, what string, data []byte) *certificacion.Result {
	tb.Helper()
	plan, err := certificacion.Parse(data)
	if err != nil {
		tb.Fatalf("%s: %v", what, err)
	}
	c := creds(tb)
	res, err := certificacion.Generate(context.Background(), plan, certificacion.Config{
		Emisor: c.Emisor, Cert: c.Cert, CAFs: allCAFs(c), TrustedKeys: c.Keys, Now: func() time.Time { return testAt }, URLBoletas: testURLBoletas})
	if err != nil {
		tb.Fatalf("%s: %v", what, err)
	}
	return res
}

// docsByCase returns a result's documents by case id.
func docsByCase(tb testing.TB, r *certificacion.Result) map[string]*dte.Document {
	tb.Helper()
	out := map[string]*dte.Document{}
	for _, s := range r.Sets {
		for _, d := range s.Docs {
			doc, err := dte.ParseDTE(d.Emitted.XML)
			if err != nil {
				tb.Fatalf("case %s: %v", d.Case.ID, err)
			}
			out[d.Case.ID] = doc
		}
	}
	return out
}

// golden is a case's totals worked out by hand ("" for an element the
// document does not carry).
type golden struct {
	id                    string
	tipo                  dte.TipoDTE
	neto, exe, iva, total dte.Decimal
	// dsc are the line discounts (DescuentoMonto per line, "" for none);
	// globals the global movements' amounts.
	dsc, globals []dte.Decimal
	retenido     dte.Decimal // ImptoReten 15
}

// goldenTotals are every case of every set file, computed by hand with
// the SII's rules (sii-domain-notes §2: half-up rounding, IVA 19 % on the
// neto once, boleta neto = round(gross / 1.19) and IVA by difference,
// discount amounts whole units, MntImpType; export totals 0 when the
// payment form is SIN PAGO) and the case semantics of sii-wave3-notes
// §6.3 (annul = the document again, text correction = 0, return = the
// original price, modifica monto = new value × the original quantity).
var goldenTotals = map[string][]golden{
	"001-basico.txt": {
		// 123 × 923 = 113529; 53 × 1473 = 78069; neto 191598;
		// IVA 191598 × 0.19 = 36403.62 → 36404; total 228002.
		{id: "414175-1", tipo: 33, neto: "191598", iva: "36404", total: "228002"},
		// 235 × 1926 = 452610, 4 % = 18104.4 → 18104, 434506;
		// 161 × 990 = 159390, 5 % = 7969.5 → 7970, 151420; neto 585926;
		// IVA 111325.94 → 111326; total 697252.
		{id: "414175-2", tipo: 33, neto: "585926", iva: "111326", total: "697252", dsc: []dte.Decimal{"18104", "7970"}},
		// 24 × 1937 = 46488; 149 × 2975 = 443275; neto 489763; exempt
		// 1 × 34705; IVA 93054.97 → 93055; total 489763 + 34705 + 93055 = 617523.
		{id: "414175-3", tipo: 33, neto: "489763", exe: "34705", iva: "93055", total: "617523"},
		// 81 × 1672 = 135432; 35 × 1405 = 49175; afecto 184607; global 6 %
		// = 11076.42 → 11076; neto 173531; exempt 2 × 6767 = 13534;
		// IVA 32970.89 → 32971; total 173531 + 13534 + 32971 = 220036.
		{id: "414175-4", tipo: 33, neto: "173531", exe: "13534", iva: "32971", total: "220036", globals: []dte.Decimal{"11076"}},
		// CORRIGE GIRO: one line without amounts.
		{id: "414175-5", tipo: 61, total: "0"},
		// DEVOLUCION of case 2 at its prices and discounts: 86 × 1926 =
		// 165636, 4 % = 6625.44 → 6625, 159011; 109 × 990 = 107910, 5 % =
		// 5395.5 → 5396, 102514; neto 261525; IVA 49689.75 → 49690; total 311215.
		{id: "414175-6", tipo: 61, neto: "261525", iva: "49690", total: "311215", dsc: []dte.Decimal{"6625", "5396"}},
		// ANULA FACTURA of case 3: its totals.
		{id: "414175-7", tipo: 61, neto: "489763", exe: "34705", iva: "93055", total: "617523"},
		// ANULA the zero-amount credit note of case 5.
		{id: "414175-8", tipo: 56, total: "0"},
	},
	"004-factura_exenta.txt": {
		// 12 × 6991 = 83892, exempt.
		{id: "414178-1", tipo: 34, exe: "83892", total: "83892"},
		// MODIFICA MONTO: the new value for the original 12 hours: 12 × 874 = 10488.
		{id: "414178-2", tipo: 61, exe: "10488", total: "10488"},
		// 360368 + 262001 = 622369.
		{id: "414178-3", tipo: 34, exe: "622369", total: "622369"},
		{id: "414178-4", tipo: 61, total: "0"},
		{id: "414178-5", tipo: 56, total: "0"},
		// 350414 + 239579 = 589993.
		{id: "414178-6", tipo: 34, exe: "589993", total: "589993"},
		// 1 × 175207; 1 × 47916.
		{id: "414178-7", tipo: 61, exe: "175207", total: "175207"},
		{id: "414178-8", tipo: 56, exe: "47916", total: "47916"},
	},
	"005-guia_despacho.txt": {
		// Traslado interno: quantities only, no value.
		{id: "428551-1", tipo: 52, neto: "0", iva: "0", total: "0"},
		// 202 × 4416 = 892032; 383 × 1263 = 483729; neto 1375761;
		// IVA 261394.59 → 261395; total 1637156.
		{id: "428551-2", tipo: 52, neto: "1375761", iva: "261395", total: "1637156"},
		// 124 × 1506 = 186744; 248 × 3481 = 863288; neto 1050032;
		// IVA 199506.08 → 199506; total 1249538.
		{id: "428551-3", tipo: 52, neto: "1050032", iva: "199506", total: "1249538"},
	},
	"008-factura_compra.txt": {
		// 1179 × 8887 = 10477773; 43 × 4964 = 213452; neto 10691225;
		// IVA 2031332.75 → 2031333, retained in full: total = neto.
		{id: "481566-1", tipo: 46, neto: "10691225", iva: "2031333", total: "10691225", retenido: "2031333"},
		// Return at the invoice's prices: 393 × 8887 = 3492591; 14 × 4964
		// = 69496; neto 3562087; IVA 676796.53 → 676797, retained.
		{id: "481566-2", tipo: 61, neto: "3562087", iva: "676797", total: "3562087", retenido: "676797"},
		{id: "481566-3", tipo: 56, neto: "3562087", iva: "676797", total: "3562087", retenido: "676797"},
	},
	"009-set_exportacion_1.txt": {
		// 377 × 128 = 48256 EUR, + flete 460.59 + seguro 127.61 as global
		// surcharges = 48844.2; COBRANZA pays: total = exempt.
		{id: "493307-1", tipo: 110, exe: "48844.2", total: "48844.2", globals: []dte.Decimal{"460.59", "127.61"}},
		// Return: 126 × 128 = 16128, no surcharges.
		{id: "493307-2", tipo: 112, exe: "16128", total: "16128"},
		{id: "493307-3", tipo: 111, exe: "16128", total: "16128"},
	},
	"010-set_exportacion_2.txt": {
		// 78 + 10 % line surcharge (7.8 → 8, a whole unit) = 86; SIN PAGO: total 0.
		{id: "493308-1", tipo: 110, exe: "86", total: "0"},
		// 884 × 178 = 157352, 5 % = 7867.6 → 7868, 149484; 228 × 119 = 27132;
		// lines 176616; + commission 11 % × 4702.98 = 517.3278 → 517.33,
		// + flete 3686.34 + seguro 2889.47 = 183709.14; SIN PAGO: total 0.
		{id: "493308-2", tipo: 110, exe: "183709.14", total: "0", dsc: []dte.Decimal{"7868", ""}, globals: []dte.Decimal{"517.33", "3686.34", "2889.47"}},
		// 235 USD, no payment form: total 235.
		{id: "493308-3", tipo: 110, exe: "235", total: "235"},
	},
	"007-boletas.csv": {
		// Boletas: prices with IVA, neto = round(gross / 1.19), IVA by difference.
		// 12 × 170 + 20 × 1050 = 2040 + 21000 = 23040; 19361.34 → 19361; IVA 3679.
		{id: "1", tipo: 39, neto: "19361", iva: "3679", total: "23040"},
		// 29 × 2990 = 86710; 72865.55 → 72866; IVA 13844.
		{id: "2", tipo: 39, neto: "72866", iva: "13844", total: "86710"},
		// 90 × 300 + 13 × 840 = 27000 + 10920 = 37920; 31865.55 → 31866; IVA 6054.
		{id: "3", tipo: 39, neto: "31866", iva: "6054", total: "37920"},
		// afecto 12 × 1500 = 18000 → 15126.05 → 15126, IVA 2874; exempt
		// 2 × 2590 + 1 × 5000 = 10180; total 28180.
		{id: "4", tipo: 39, neto: "15126", exe: "10180", iva: "2874", total: "28180"},
		// 12 × 1690 = 20280; 17042.02 → 17042; IVA 3238.
		{id: "5", tipo: 39, neto: "17042", iva: "3238", total: "20280"},
		// afecto 5 × 25 = 125 → 105.04 → 105, IVA 20; exempt 20000; total 20125.
		{id: "6", tipo: 39, neto: "105", exe: "20000", iva: "20", total: "20125"},
		// 5 × 340 = 1700; 1428.57 → 1429; IVA 271.
		{id: "7", tipo: 39, neto: "1429", iva: "271", total: "1700"},
		// 5 × 3178 + 38 × 150 = 15890 + 5700 = 21590; 18142.86 → 18143; IVA 3447.
		{id: "8", tipo: 39, neto: "18143", iva: "3447", total: "21590"},
		// 10 × 290 + 5 × 250 + 3 × 790 + 2 × 1190 + 3500 = 2900 + 1250 + 2370
		// + 2380 + 3500 = 12400; 10420.17 → 10420; IVA 1980.
		{id: "9", tipo: 39, neto: "10420", iva: "1980", total: "12400"},
		// 3.8 Kg × 710 = 2698; 2267.23 → 2267; IVA 431.
		{id: "10", tipo: 39, neto: "2267", iva: "431", total: "2698"},
		// Credit notes: each taxable line of the boleta at its net amount,
		// round(gross / 1.19), then IVA = round(neto × 0.19) as on any note.
		// ANULA boleta 1: 2040 / 1.19 = 1714.29 → 1714; 21000 / 1.19 =
		// 17647.06 → 17647; neto 19361; IVA 3678.59 → 3679; total 23040.
		{id: "NC-1", tipo: 61, neto: "19361", iva: "3679", total: "23040"},
		// ANULA boleta 3: 27000 / 1.19 = 22689.08 → 22689; 10920 / 1.19 =
		// 9176.47 → 9176; neto 31865; IVA 6054.35 → 6054; total 37919 (a
		// peso under the boleta's 37920: see netOfBoleta).
		{id: "NC-3", tipo: 61, neto: "31865", iva: "6054", total: "37919"},
		// ANULA boleta 5: 20280 / 1.19 = 17042.02 → 17042; IVA 3237.98 → 3238; 20280.
		{id: "NC-5", tipo: 61, neto: "17042", iva: "3238", total: "20280"},
		// Rebajar 40 on boleta 7: 40 % of 5 = 2 × 340 = 680; 571.43 → 571;
		// IVA 108.49 → 108; total 679.
		{id: "NC-7", tipo: 61, neto: "571", iva: "108", total: "679"},
		// Rebajar 40 on boleta 10: 40 % of 3.8 = 1.52 Kg × 710 = 1079.2;
		// 906.89 → 907; IVA 172.33 → 172; total 1079.
		{id: "NC-10", tipo: 61, neto: "907", iva: "172", total: "1079"},
	},
	"boleta-SetPruebaBE-reconstructed.txt": {
		// Prices with IVA: 19900 + 9900 = 29800; neto 29800 / 1.19 =
		// 25042.02 → 25042; IVA 29800 − 25042 = 4758.
		{id: "1", tipo: 39, neto: "25042", iva: "4758", total: "29800"},
		// 17 × 120 = 2040; 1714.29 → 1714; IVA 326.
		{id: "2", tipo: 39, neto: "1714", iva: "326", total: "2040"},
		// 2 × 1500 + 2 × 550 = 4100; 3445.38 → 3445; IVA 655.
		{id: "3", tipo: 39, neto: "3445", iva: "655", total: "4100"},
		// afecto 8 × 1590 = 12720, exempt 2 × 1000 = 2000; 12720 / 1.19 =
		// 10689.08 → 10689; IVA 2031; total 14720.
		{id: "4", tipo: 39, neto: "10689", exe: "2000", iva: "2031", total: "14720"},
		// 5 × 700 = 3500; 2941.18 → 2941; IVA 559.
		{id: "5", tipo: 39, neto: "2941", iva: "559", total: "3500"},
	},
}

// TestGoldenTotals checks every case of every set file against its
// hand-computed totals, as written in the signed XML.
func TestGoldenTotals(t *testing.T) {
	for _, name := range setFiles {
		want, emits := goldenTotals[name]
		t.Run(name, func(t *testing.T) {
			res := generate(t, name)
			docs := docsByCase(t, res)
			if !emits {
				if len(docs) != 0 {
					t.Fatalf("a libro set emitted %d documents", len(docs))
				}
				return
			}
			if len(docs) != len(want) {
				t.Errorf("%d documents, want %d", len(docs), len(want))
			}
			for _, g := range want {
				d := docs[g.id]
				if d == nil {
					t.Errorf("case %s: not emitted", g.id)
					continue
				}
				tt := d.Totales
				if d.Tipo != g.tipo || tt.MntNeto != g.neto || tt.MntExe != g.exe || tt.IVA != g.iva || tt.MntTotal != g.total {
					t.Errorf("case %s: tipo %d neto %q exe %q iva %q total %q; want tipo %d neto %q exe %q iva %q total %q",
						g.id, d.Tipo, tt.MntNeto, tt.MntExe, tt.IVA, tt.MntTotal, g.tipo, g.neto, g.exe, g.iva, g.total)
				}
				for i, want := range g.dsc {
					if i >= len(d.Detalle) || d.Detalle[i].DescuentoMonto != want {
						t.Errorf("case %s line %d: DescuentoMonto %+v, want %q", g.id, i+1, d.Detalle, want)
					}
				}
				if len(d.DescuentosGlobales) != len(g.globals) {
					t.Errorf("case %s: %d global movements, want %d", g.id, len(d.DescuentosGlobales), len(g.globals))
				}
				var ret dte.Decimal
				for _, r := range tt.ImptoReten {
					if r.TipoImp == 15 {
						ret = r.MontoImp
					}
				}
				if ret != g.retenido {
					t.Errorf("case %s: IVA retained %q, want %q", g.id, ret, g.retenido)
				}
			}
			// The global movements' amounts, from the emitter's totals.
			for _, s := range res.Sets {
				for _, d := range s.Docs {
					for _, g := range want {
						if g.id != d.Case.ID {
							continue
						}
						for i, amt := range g.globals {
							if i >= len(d.Emitted.Totals.DscRcgGlobal) || d.Emitted.Totals.DscRcgGlobal[i].Monto != amt {
								t.Errorf("case %s: global movements %+v, want %v", g.id, d.Emitted.Totals.DscRcgGlobal, g.globals)
							}
						}
					}
				}
			}
		})
	}
}

// refWant is what a case's references must say.
type refWant struct {
	id     string
	refTo  string // the case its second reference names, "" for none
	codRef int
}

var referenceCases = map[string][]refWant{
	"001-basico.txt": {{"414175-1", "", 0}, {"414175-2", "", 0}, {"414175-3", "", 0}, {"414175-4", "", 0},
		{"414175-5", "414175-1", 2}, {"414175-6", "414175-2", 3}, {"414175-7", "414175-3", 1}, {"414175-8", "414175-5", 1}},
	"004-factura_exenta.txt": {{"414178-1", "", 0}, {"414178-2", "414178-1", 3}, {"414178-3", "", 0}, {"414178-4", "414178-3", 2},
		{"414178-5", "414178-4", 1}, {"414178-6", "", 0}, {"414178-7", "414178-6", 3}, {"414178-8", "414178-6", 3}},
	"005-guia_despacho.txt":     {{"428551-1", "", 0}, {"428551-2", "", 0}, {"428551-3", "", 0}},
	"008-factura_compra.txt":    {{"481566-1", "", 0}, {"481566-2", "481566-1", 3}, {"481566-3", "481566-2", 1}},
	"009-set_exportacion_1.txt": {{"493307-1", "", 0}, {"493307-2", "493307-1", 3}, {"493307-3", "493307-2", 1}},
	"010-set_exportacion_2.txt": {{"493308-1", "", 0}, {"493308-2", "", 0}, {"493308-3", "", 0}},
	// The pre-2020 boleta set's notes: Anular on boletas 1, 3 and 5,
	// Rebajar on 7 and 10.
	"007-boletas.csv": {{"NC-1", "1", 1}, {"NC-3", "3", 1}, {"NC-5", "5", 1}, {"NC-7", "7", 3}, {"NC-10", "10", 3}},
}

// TestReferences checks every case's references: the SET reference first
// (RazonRef "CASO <id>"; on boletas CodRef SET and "CASO-<n>"), and on
// notes the document of the named case (type, folio, date) with the
// CodRef its reason gives (hand-written above from the set files).
func TestReferences(t *testing.T) {
	for name, wants := range referenceCases {
		t.Run(name, func(t *testing.T) {
			docs := docsByCase(t, generate(t, name))
			for _, w := range wants {
				d := docs[w.id]
				if d == nil || len(d.Referencias) == 0 {
					t.Fatalf("case %s: no document or no reference", w.id)
				}
				r0 := d.Referencias[0]
				// FolioRef is the case id, as sii-wave3-notes §6.3 recommends.
				if r0.TipoDocRef.Codigo != "SET" || r0.RazonRef != "CASO "+w.id || r0.FolioRef != 0 || r0.FolioRefTexto != w.id || r0.FechaRef != d.FechaEmision || r0.CodigoRef != nil {
					t.Errorf("case %s: first reference %+v, want SET, folio %s, %s, CASO %s", w.id, r0, w.id, d.FechaEmision, w.id)
				}
				if !contains(d.Raw, "<TpoDocRef>SET</TpoDocRef><FolioRef>"+w.id+"</FolioRef>") {
					t.Errorf("case %s: the XML's SET reference does not carry FolioRef %s", w.id, w.id)
				}
				var notes []dte.Referencia
				var customs []int
				for _, r := range d.Referencias[1:] {
					if r.TipoDocRef.Tipo.Valid() {
						notes = append(notes, r)
					} else {
						customs = append(customs, int(r.TipoDocRef.Tipo))
					}
				}
				// The export cases' REFERENCIA lines: MIC 810, RESOLUCION
				// SNA 812, DUS 807, AWB 809; the hotel's guest (case
				// 493308-3, NACIONALIDAD) the passport, 813.
				wantCustoms := map[string][]int{"493307-1": {810}, "493308-1": {812}, "493308-2": {807, 809}, "493308-3": {813}}[w.id]
				if len(customs) != len(wantCustoms) || (len(customs) > 0 && !equal(fmtInts(customs), fmtInts(wantCustoms))) {
					t.Errorf("case %s: customs references %v, want %v", w.id, customs, wantCustoms)
				}
				if w.refTo == "" {
					if len(notes) != 0 {
						t.Errorf("case %s: unexpected document references %+v", w.id, notes)
					}
					continue
				}
				to := docs[w.refTo]
				if len(notes) != 1 {
					t.Fatalf("case %s: %d document references, want 1", w.id, len(notes))
				}
				r := notes[0]
				if r.TipoDocRef.Tipo != to.Tipo || r.FolioRef != to.Folio || r.FechaRef != to.FechaEmision || r.CodigoRef == nil || *r.CodigoRef != w.codRef {
					t.Errorf("case %s: reference %+v, want tipo %d folio %d %s CodRef %d", w.id, r, to.Tipo, to.Folio, to.FechaEmision, w.codRef)
				}
				if d.Receptor.Rut != to.Receptor.Rut && !to.Tipo.IsBoleta() { // a boleta's buyer is anonymous
					t.Errorf("case %s: receptor %s, the document it names went to %s", w.id, d.Receptor.Rut, to.Receptor.Rut)
				}
			}
		})
	}
	t.Run("boletas", func(t *testing.T) {
		docs := docsByCase(t, generate(t, "boleta-SetPruebaBE-reconstructed.txt"))
		for n := 1; n <= 5; n++ {
			d := docs[string(rune('0'+n))]
			if d == nil || len(d.Referencias) != 1 {
				t.Fatalf("boleta case %d: %+v", n, d)
			}
			if r := d.Referencias[0]; r.TipoDocRef.Codigo != "SET" || r.RazonRef != "CASO-"+string(rune('0'+n)) {
				t.Errorf("boleta case %d: reference %+v", n, r)
			}
			if !containsAll(d.Raw, "<Referencia><NroLinRef>1</NroLinRef><CodRef>SET</CodRef><RazonRef>CASO-") {
				t.Errorf("boleta case %d: the reference is not in the boleta form", n)
			}
		}
		// The exempt item of case 4 and the unit of case 5.
		if l := docs["4"].Detalle; len(l) != 2 || l[1].IndExe != 1 || l[0].IndExe != 0 {
			t.Errorf("boleta case 4: lines %+v, want item 2 exempt", l)
		}
		if l := docs["5"].Detalle; len(l) != 1 || l[0].Unidad != "Kg" {
			t.Errorf("boleta case 5: lines %+v, want unit Kg", l)
		}
	})
}

func containsAll(b []byte, subs ...string) bool {
	for _, s := range subs {
		if !contains(b, s) {
			return false
		}
	}
	return true
}

func contains(b []byte, s string) bool { return len(s) == 0 || indexOf(b, s) >= 0 }

func indexOf(b []byte, s string) int {
	for i := 0; i+len(s) <= len(b); i++ {
		if string(b[i:i+len(s)]) == s {
			return i
		}
	}
	return -1
}

// TestCaseContent checks what the set asks beyond totals: item names in
// order as given (accents and "B&W" kept), guías' transfer kinds and the
// traslado's receptor, the exempt lines, the factura de compra's
// retention code on every line, the export data as customs codes.
func TestCaseContent(t *testing.T) {
	basic := docsByCase(t, generate(t, "001-basico.txt"))
	names := func(d *dte.Document) []string {
		var out []string
		for _, l := range d.Detalle {
			out = append(out, l.Nombre)
		}
		return out
	}
	for id, want := range map[string][]string{
		"414175-1": {"Cajón AFECTO", "Relleno AFECTO"},
		"414175-2": {"Pañuelo AFECTO", "ITEM 2 AFECTO"},
		"414175-3": {"Pintura B&W AFECTO", "ITEM 2 AFECTO", "ITEM 3 SERVICIO EXENTO"},
		"414175-5": {"Cajón AFECTO"},
		"414175-6": {"Pañuelo AFECTO", "ITEM 2 AFECTO"},
	} {
		if got := names(basic[id]); !equal(got, want) {
			t.Errorf("case %s: items %q, want %q", id, got, want)
		}
	}
	if l := basic["414175-3"].Detalle[2]; l.IndExe != 1 {
		t.Errorf("case 414175-3: the SERVICIO EXENTO line is not exempt: %+v", l)
	}
	if g := basic["414175-4"].DescuentosGlobales; len(g) != 1 || g[0].TpoMov != "D" || g[0].TpoValor != "%" || g[0].ValorDR != "6" {
		t.Errorf("case 414175-4: global discount %+v, want D 6 %%", g)
	}
	exenta := docsByCase(t, generate(t, "004-factura_exenta.txt"))
	if got := names(exenta["414178-6"]); !equal(got, []string{"CAPACITACION USO CIGUEÑALES", "CAPACITACION USO PLC's CNC"}) {
		t.Errorf("case 414178-6: items %q", got)
	}
	if l := exenta["414178-1"].Detalle[0]; l.Unidad != "Hora" {
		t.Errorf("case 414178-1: unit %q, want Hora", l.Unidad)
	}
	guias := docsByCase(t, generate(t, "005-guia_despacho.txt"))
	c := creds(t)
	for id, w := range map[string][2]int{"428551-1": {5, 0}, "428551-2": {1, 2}, "428551-3": {1, 1}} {
		d := guias[id]
		if d.IndTraslado == nil || *d.IndTraslado != w[0] || (w[1] != 0) != (d.TipoDespacho != nil) || (d.TipoDespacho != nil && *d.TipoDespacho != w[1]) {
			t.Errorf("case %s: IndTraslado %v TipoDespacho %v, want %v", id, d.IndTraslado, d.TipoDespacho, w)
		}
	}
	if r := guias["428551-1"].Receptor; r.Rut != c.Emisor.Rut {
		t.Errorf("traslado interno to %s, want the emisor %s", r.Rut, c.Emisor.Rut)
	}
	if guias["428551-2"].Receptor.Rut == guias["428551-3"].Receptor.Rut || basic["414175-1"].Receptor.Rut == basic["414175-2"].Receptor.Rut {
		t.Error("two facturas or guías share a receptor RUT")
	}
	compra := docsByCase(t, generate(t, "008-factura_compra.txt"))
	for _, id := range []string{"481566-1", "481566-2", "481566-3"} {
		for i, l := range compra[id].Detalle {
			if len(l.CodImpAdic) != 1 || l.CodImpAdic[0] != 15 || l.IndAgente != "R" {
				t.Errorf("case %s line %d: CodImpAdic %v, IndAgente %q; want 15 (IVA retained in full) by the agent R", id, i+1, l.CodImpAdic, l.IndAgente)
			}
		}
		if !contains(compra[id].Raw, "<IndExe>") && !contains(compra[id].Raw, "<NroLinDet>1</NroLinDet><Retenedor><IndAgente>R</IndAgente></Retenedor><NmbItem>") {
			t.Errorf("case %s: the retention agent's indicator is not where the schema puts it", id)
		}
	}
	exp1 := docsByCase(t, generate(t, "009-set_exportacion_1.txt"))
	x := exp1["493307-1"].Export
	// Codes from the customs tables (../shared/sii/aduana): EURO, COBRANZA 2,
	// BAJO CONDICION 2, CIF 1, CARRETERO / TERRESTRE 7, CALDERA 918,
	// SIDNEY 811, U 10, KN 6, PALLETS 80, AUSTRALIA 406.
	if x == nil || x.TpoMoneda != "EURO" || deref(x.FormaPagoExp) != 2 || deref(x.ModalidadVenta) != 2 || x.ClausulaVenta != "1" ||
		deref(x.ViaTransporte) != 7 || x.PuertoEmbarque != "918" || x.PuertoDesembarque != "811" || deref(x.UnidadTara) != 10 ||
		deref(x.UnidadPesoBruto) != 6 || deref(x.UnidadPesoNeto) != 6 || x.TipoBulto != "80" || x.PaisRecep != "406" || x.PaisDest != "406" ||
		x.MntFlete != "460.59" || x.MntSeguro != "127.61" || x.TotalClausula != "1662.39" {
		t.Errorf("case 493307-1: export data %+v", x)
	}
	exp2 := docsByCase(t, generate(t, "010-set_exportacion_2.txt"))
	if d := exp2["493308-1"]; deref(d.IndServicio) != 3 || deref(d.Export.FormaPagoExp) != 21 {
		t.Errorf("case 493308-1: IndServicio %v FmaPagExp %v, want 3 and 21 (SIN PAGO)", d.IndServicio, d.Export.FormaPagoExp)
	}
	if d := exp2["493308-3"]; deref(d.IndServicio) != 4 || d.Export.Nacionalidad != "517" {
		t.Errorf("case 493308-3: IndServicio %v nacionalidad %q, want 4 (hotel) and 517 (ESPAÑA)", d.IndServicio, d.Export.Nacionalidad)
	}
}

func deref(p *int) int {
	if p == nil {
		return 0
	}
	return *p
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestMissingCAF asks for a set whose types lack CAFs: one error naming
// every missing type, before anything is signed.
func TestMissingCAF(t *testing.T) {
	plan, err := certificacion.Parse(setFile(t, "001-basico.txt"))
	if err != nil {
		t.Fatal(err)
	}
	c := creds(t)
	_, err = certificacion.Generate(context.Background(), plan, certificacion.Config{
		Emisor: c.Emisor, Cert: c.Cert, CAFs: allCAFs(c, 56, 61), TrustedKeys: c.Keys, Now: func() time.Time { return testAt }})
	var me *certificacion.MissingCAFError
	if !errors.As(err, &me) {
		t.Fatalf("got %v, want a MissingCAFError", err)
	}
	if len(me.Missing) != 2 || me.Missing[0].Tipo != 56 || me.Missing[0].Need != 1 || me.Missing[1].Tipo != 61 || me.Missing[1].Need != 3 {
		t.Errorf("missing %+v, want 56 (1 case) and 61 (3 cases)", me.Missing)
	}
}

func fmtInts(n []int) []string {
	out := make([]string, len(n))
	for i, v := range n {
		out[i] = fmt.Sprint(v)
	}
	return out
}

// TestEnvelopes checks one envelope per emitting set, addressed as a set
// envelope must be (sii-wave3-notes §6.3: RutReceptor 60803000-K, NroResol
// 0, the emisor's FchResol), carrying the set's documents in case order;
// the boleta set in one EnvioBOLETA; the libro sets with none.
func TestEnvelopes(t *testing.T) {
	c := creds(t)
	for _, name := range setFiles {
		res := generate(t, name)
		for _, s := range res.Sets {
			if !s.Set.Kind.Emits() {
				if s.Envelope != nil {
					t.Errorf("%s: the libro set %s has an envelope", name, s.Set.Name)
				}
				continue
			}
			env, err := dte.ParseEnvio(s.Envelope)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			cr := env.Caratula
			if cr.RutReceptor != "60803000-K" || cr.NroResol != 0 || cr.FchResol != c.Emisor.FechaResolucion || cr.RutEmisor != c.Emisor.Rut {
				t.Errorf("%s: carátula %+v", name, cr)
			}
			if env.Boleta != (s.Set.Kind == certificacion.SetBoleta) {
				t.Errorf("%s: EnvioBOLETA %v for a %s set", name, env.Boleta, s.Set.Kind)
			}
			if len(env.Documentos) != len(s.Set.Cases) {
				t.Fatalf("%s: %d documents in the envelope, %d cases", name, len(env.Documentos), len(s.Set.Cases))
			}
			for i, d := range env.Documentos {
				if d.ID != s.Docs[i].Emitted.ID {
					t.Errorf("%s: document %d is %s, case %s is %s", name, i+1, d.ID, s.Docs[i].Case.ID, s.Docs[i].Emitted.ID)
				}
			}
		}
	}
}

// TestSamples checks the printed samples' names and copies: one PDF per
// document in upload order, plus the cedible copy on 33, 34, 46 and the
// guías that are sales, never on notes, exports, boletas or the traslado
// interno.
func TestSamples(t *testing.T) {
	c := creds(t)
	for name, want := range map[string][]string{
		"005-guia_despacho.txt":     {"001-T52F1-tributario.pdf", "002-T52F2-tributario.pdf", "003-T52F2-cedible.pdf", "004-T52F3-tributario.pdf", "005-T52F3-cedible.pdf"},
		"008-factura_compra.txt":    {"001-T46F1-tributario.pdf", "002-T46F1-cedible.pdf", "003-T61F1-tributario.pdf", "004-T56F1-tributario.pdf"},
		"009-set_exportacion_1.txt": {"001-T110F1-tributario.pdf", "002-T112F1-tributario.pdf", "003-T111F1-tributario.pdf"},
	} {
		samples, err := generate(t, name).Samples(c.Emisor)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, s := range samples {
			got = append(got, s.Name)
			if len(s.PDF) == 0 || len(s.PDF) > 500<<10 {
				t.Errorf("%s: %s is %d bytes (the SII takes at most 500 KB)", name, s.Name, len(s.PDF))
			}
		}
		if !equal(got, want) {
			t.Errorf("%s: samples %q, want %q", name, got, want)
		}
	}
}

// testURLBoletas is where the test company's customers check their
// boletas: printed on the boleta samples.
const testURLBoletas = "www.comercializadora-prueba.cl/boletas"
