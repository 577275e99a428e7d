package siitest

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/libro"
)

// This file is the fake's certification reviewer: what the SII checks when
// a company declares its progress on a set of tests ("Declarar avance",
// sii-wave3-notes §6.1 step 4 and §6.6) and answers by mail (SETMAIL) SOK
// or SRH with reparo lines. The fake does not know the set file: it checks
// what the uploads alone show.
//
// For a set of documents, over the envelopes declared:
//
//   - each declared track id is an envelope of the company that ended EPR
//     with every document accepted (0 reparos, 0 rechazos);
//   - an EnvioBOLETA counts only when it came through DTEUpload: the
//     reviewer does not see the boleta REST API's envelopes, so their
//     cases are missing ("El Documento no está en el envío", [torn]);
//   - every case 1..Casos has exactly one document whose first reference
//     is the set's: TpoDocRef SET, a FolioRef, FchRef the document's date,
//     no CodRef or CodRef 1, and RazonRef "CASO <atención>-<k>"; on a
//     boleta CodRef SET and RazonRef "CASO-<k>" without TpoDocRef, FolioRef
//     or FchRef (HED-3-211 otherwise);
//   - the cases come in the set's order ("en el mismo orden en que le
//     fueron entregados", [SII-INSTSET] §II);
//   - a note's second reference names, by type, folio and date, an earlier
//     case of the same set, with CodRef 1, 2 or 3.
//
// For a libro set, the declared upload is a libro of the company that
// ended LOK with TipoLibro ESPECIAL and the TipoOperacion the set asks
// (VENTA, COMPRA; none for guías); a Libro de Ventas is refused until a
// SET BASICO or SET FACTURA EXENTA of the company was reviewed SOK ("No
// Tiene un SET Basico Aprobado", [dte-chile]).

// Avance is one set's declaration of progress.
type Avance struct {
	// Company is the applicant's RUT.
	Company string
	// Set is the set's name as the SII's file writes it ("SET BASICO",
	// "SET LIBRO DE VENTAS"; the boleta set has its own portal, any name).
	Set string
	// Atencion is the set's número de atención; "" for the boleta set,
	// whose cases are "CASO-<k>".
	Atencion string
	// Casos is the number of cases of a set of documents (0 for a libro
	// set).
	Casos int
	// Libro is the TipoOperacion of a libro set: "VENTA", "COMPRA", or
	// "GUIA" for the Libro de Guías; "" for a set of documents.
	Libro string
	// TrackIDs are the uploads declared for the set.
	TrackIDs []string
}

// SetMail is the reviewer's answer.
type SetMail struct {
	// Estado is "SOK" (SET DE PRUEBA CORRECTO) or "SRH" (rejected).
	Estado string
	// Reparos are the reasons of an SRH, one line each.
	Reparos []string
}

var (
	reCasoSet    = regexp.MustCompile(`^CASO (\d+)-(\d+)$`)
	reCasoBoleta = regexp.MustCompile(`^CASO-(\d+)$`)
)

// DeclararAvance reviews a declaration of progress as the SII's
// certification reviewer does (see the rules above) and returns its mail.
// A set reviewed SOK is remembered for the company (the Libro de Ventas
// needs a basic set approved).
func (f *Fake) DeclararAvance(a Avance) SetMail {
	f.mu.Lock()
	defer f.mu.Unlock()
	var p problems
	company := strings.ToUpper(a.Company)
	if len(a.TrackIDs) == 0 {
		p.add("no se declaro ningun envio")
	}
	if a.Libro != "" {
		f.avanceLibro(&p, a, company)
	} else {
		f.avanceDocs(&p, a, company)
	}
	if len(p) > 0 {
		return SetMail{Estado: "SRH", Reparos: p}
	}
	if f.approved[company] == nil {
		f.approved[company] = map[string]bool{}
	}
	f.approved[company][strings.ToUpper(a.Set)] = true
	return SetMail{Estado: "SOK"}
}

// avanceLibro reviews a libro set's declaration. Call with f.mu held.
func (f *Fake) avanceLibro(p *problems, a Avance, company string) {
	if a.Libro == libro.OperacionVenta {
		ok := f.approved[company]
		if !ok["SET BASICO"] && !ok["SET FACTURA EXENTA"] {
			p.add("No Tiene un SET Basico Aprobado")
		}
	}
	for _, t := range a.TrackIDs {
		e := f.lookupTrack(t)
		switch {
		case e == nil || !strings.EqualFold(e.Company, company):
			p.add("el envio %s no es de la empresa %s", t, company)
		case e.Libro == nil || (a.Libro == "GUIA") != (e.Libro.Root == libro.RootGuia) || e.Libro.Root == libro.RootConsumo:
			p.add("el envio %s no es un libro de %s", t, strings.ToLower(a.Libro))
		case e.Final != "LOK":
			p.add("el libro del envio %s no fue aceptado (%s)", t, e.Final)
		case e.Libro.TipoLibro != libro.LibroEspecial:
			p.add("el libro del envio %s es %s; el set pide un libro ESPECIAL", t, e.Libro.TipoLibro)
		case a.Libro != "GUIA" && e.Libro.TipoOperacion != a.Libro:
			p.add("el libro del envio %s es de %s; el set pide %s", t, e.Libro.TipoOperacion, a.Libro)
		}
	}
}

// setDoc is a document of a declared envelope, with its case number.
type setDoc struct {
	d     *Doc
	track string
	k     int
}

// avanceDocs reviews a set of documents. Call with f.mu held.
func (f *Fake) avanceDocs(p *problems, a Avance, company string) {
	boletaSet := a.Atencion == ""
	var docs []setDoc
	for _, t := range a.TrackIDs {
		e := f.lookupTrack(t)
		switch {
		case e == nil || !strings.EqualFold(e.Company, company):
			p.add("el envio %s no es de la empresa %s", t, company)
			continue
		case e.Libro != nil:
			p.add("el envio %s es un libro, no un envio de documentos", t)
			continue
		case e.REST:
			continue // the reviewer does not see the boleta REST API
		case e.Final != "EPR":
			p.add("el envio %s no fue procesado (%s)", t, e.Final)
			continue
		}
		for i := range e.Docs {
			d := &e.Docs[i]
			if d.Result != Accepted {
				p.add("el envio %s tiene el documento tipo %d folio %d %s", t, d.Tipo, d.Folio, map[DocResult]string{Reparo: "con reparos", Rejected: "rechazado"}[d.Result])
			}
			k, mine := f.caseOf(p, d, a.Atencion, boletaSet)
			if mine {
				docs = append(docs, setDoc{d: d, track: t, k: k})
			}
		}
	}
	byK := map[int]*setDoc{}
	last := 0
	for i := range docs {
		sd := &docs[i]
		switch {
		case sd.k < 1 || sd.k > a.Casos:
			p.add("%s: no es un caso del set (tiene %d)", caseName(a.Atencion, sd.k), a.Casos)
			continue
		case byK[sd.k] != nil:
			p.add("%s: mas de un documento (folios %d y %d)", caseName(a.Atencion, sd.k), byK[sd.k].d.Folio, sd.d.Folio)
			continue
		}
		byK[sd.k] = sd
		if sd.k < last {
			p.add("%s: los documentos no estan en el orden del set", caseName(a.Atencion, sd.k))
		}
		last = sd.k
	}
	for k := 1; k <= a.Casos; k++ {
		sd := byK[k]
		if sd == nil {
			p.add("%s: El Documento no esta en el envio", caseName(a.Atencion, k))
			continue
		}
		if sd.d.Tipo == 56 || sd.d.Tipo == 61 || sd.d.Tipo == 111 || sd.d.Tipo == 112 {
			noteRef(p, a.Atencion, sd, byK)
		}
	}
}

// caseName writes a case as the SII names it: "CASO 414175-1", or
// "CASO-1" in the boleta set.
func caseName(atencion string, k int) string {
	if atencion == "" {
		return "CASO-" + strconv.Itoa(k)
	}
	return "CASO " + atencion + "-" + strconv.Itoa(k)
}

// caseOf reads the set reference of a document: its case number, and
// whether it belongs to the declared set (its RazonRef names the set's
// atención). A malformed set reference of the set is a problem.
func (f *Fake) caseOf(p *problems, d *Doc, atencion string, boletaSet bool) (int, bool) {
	if len(d.refs) == 0 {
		if !boletaSet {
			return 0, false // a document of no set: another set's envelope share
		}
		p.add("el documento tipo %d folio %d no tiene la referencia al set", d.Tipo, d.Folio)
		return 0, false
	}
	r := d.refs[0]
	if boletaSet {
		m := reCasoBoleta.FindStringSubmatch(r.RazonRef)
		switch {
		case r.TipoDocRef.Codigo != dte.RefCodigoSET || m == nil:
			p.add("boleta folio %d: la primera referencia debe ser CodRef SET con RazonRef CASO-<n>, no %q", d.Folio, r.RazonRef)
			return 0, false
		case r.FolioRef != 0 || r.FolioRefTexto != "" || r.FechaRef != "":
			p.add("boleta folio %d: la referencia al set no lleva TpoDocRef, FolioRef ni FchRef (HED-3-211)", d.Folio)
		}
		k, _ := strconv.Atoi(m[1])
		return k, true
	}
	m := reCasoSet.FindStringSubmatch(r.RazonRef)
	if r.TipoDocRef.Codigo != dte.RefCodigoSET || m == nil || m[1] != atencion {
		return 0, false
	}
	k, _ := strconv.Atoi(m[2])
	switch {
	case r.FolioRef == 0 && r.FolioRefTexto == "":
		p.add("%s: la referencia al set no tiene FolioRef", caseName(atencion, k))
	case r.FechaRef != d.Fecha:
		p.add("%s: FchRef %s de la referencia al set no es la fecha del documento (%s)", caseName(atencion, k), r.FechaRef, d.Fecha)
	case r.CodigoRef != nil && *r.CodigoRef != 1:
		p.add("%s: la referencia al set lleva CodRef %d", caseName(atencion, k), *r.CodigoRef)
	}
	return k, true
}

// noteRef checks a note's second reference: an earlier case of the set,
// by type, folio and date, with CodRef 1, 2 or 3.
func noteRef(p *problems, atencion string, sd *setDoc, byK map[int]*setDoc) {
	name := caseName(atencion, sd.k)
	if len(sd.d.refs) < 2 {
		p.add("%s: la nota no referencia el documento que modifica", name)
		return
	}
	r := sd.d.refs[1]
	if r.CodigoRef == nil || *r.CodigoRef < 1 || *r.CodigoRef > 3 {
		p.add("%s: la referencia al documento modificado no tiene CodRef 1, 2 o 3", name)
	}
	for j := 1; j < sd.k; j++ {
		o := byK[j]
		if o != nil && int(r.TipoDocRef.Tipo) == o.d.Tipo && r.FolioRef == o.d.Folio && r.FechaRef == o.d.Fecha {
			return
		}
	}
	p.add("%s: la referencia (tipo %s folio %d fecha %s) no es un caso anterior del set", name, r.TipoDocRef, r.FolioRef, r.FechaRef)
}
