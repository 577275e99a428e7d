package libro

import (
	"time"

	"github.com/dtekit/dtekit/dte"
)

// Schema files and root elements of the three kinds.
const (
	// SchemaCompraVenta is the schema of LibroCompraVenta.
	SchemaCompraVenta = "LibroCV_v10.xsd"
	// SchemaGuia is the schema of LibroGuia.
	SchemaGuia = "LibroGuia_v10.xsd"
	// SchemaConsumo is the schema of ConsumoFolios.
	SchemaConsumo = "ConsumoFolio_v10.xsd"
	// RootCompraVenta, RootGuia and RootConsumo are the root elements.
	RootCompraVenta = "LibroCompraVenta"
	RootGuia        = "LibroGuia"
	RootConsumo     = "ConsumoFolios"
)

// Values of the Carátula.
const (
	// OperacionVenta and OperacionCompra are the TipoOperacion of a
	// LibroCompraVenta.
	OperacionVenta  = "VENTA"
	OperacionCompra = "COMPRA"
	// LibroMensual, LibroEspecial and LibroRectifica are the TipoLibro
	// values (a LibroGuia is always ESPECIAL).
	LibroMensual   = "MENSUAL"
	LibroEspecial  = "ESPECIAL"
	LibroRectifica = "RECTIFICA"
	// EnvioTotal is the TipoEnvio this package writes: the whole period in
	// one file, ResumenPeriodo and Detalle. The others (PARCIAL, FINAL,
	// AJUSTE) are read by Parse.
	EnvioTotal = "TOTAL"
)

// Libro is a LibroCompraVenta: the Libro de Ventas or de Compras.
type Libro struct {
	// ID is EnvioLibro's ID attribute, which the signature references.
	ID string
	// Schema is the schema file the root's xsi:schemaLocation names
	// (SchemaCompraVenta when written by this package; "" when a file read
	// by Parse lacks it).
	Schema   string
	Caratula Caratula
	// ResumenSegmento and ResumenPeriodo hold the totals per document
	// type; nil when the element is absent (this package writes only
	// ResumenPeriodo).
	ResumenSegmento []Totales
	ResumenPeriodo  []Totales
	// Detalle holds one row per document.
	Detalle []Detalle
	// TmstFirma is the signing time (Chile local time).
	TmstFirma time.Time
}

// Caratula is the cover of a libro. TipoOperacion and CodAutRec belong to
// the LibroCompraVenta only.
type Caratula struct {
	RutEmisorLibro string
	RutEnvia       string
	// PeriodoTributario is the period, YYYY-MM.
	PeriodoTributario string
	FchResol          string
	NroResol          int
	TipoOperacion     string
	TipoLibro         string
	TipoEnvio         string
	// NroSegmento numbers a PARCIAL envío (0 when absent).
	NroSegmento int
	// FolioNotificacion is the SII notification a special libro answers
	// (0 when absent).
	FolioNotificacion int64
	// CodAutRec authorises a RECTIFICA.
	CodAutRec string
}

// Totales is one TotalesPeriodo (or TotalesSegmento) row: the totals of
// one document type. Counters left at 0 are not written.
type Totales struct {
	TpoDoc int
	// TotDoc counts the documents, annulled ones included; TotAnulado
	// counts those annulled before being sent, whose amounts are not
	// totalled.
	TotDoc     int
	TotAnulado int
	TotMntExe  int64
	TotMntNeto int64
	TotMntIVA  int64
	// TotIVANoRec totals the IVA not recoverable, one entry per code.
	TotIVANoRec []TotIVANoRec
	// TotOpIVAUsoComun counts the rows with IVA de uso común,
	// TotIVAUsoComun totals it; FctProp is the libro's factor de
	// proporcionalidad and TotCredIVAUsoComun the credit it gives.
	TotOpIVAUsoComun   int
	TotIVAUsoComun     int64
	FctProp            dte.Decimal
	TotCredIVAUsoComun int64
	// TotOtrosImp totals the other taxes, one entry per code.
	TotOtrosImp []TotOtrosImp
	// TotOpIVARetTotal/TotIVARetTotal and the Parcial pair count and total
	// the IVA retained (sales).
	TotOpIVARetTotal   int
	TotIVARetTotal     int64
	TotOpIVARetParcial int
	TotIVARetParcial   int64
	TotMntTotal        int64
}

// TotIVANoRec totals the IVA not recoverable of one code.
type TotIVANoRec struct {
	CodIVANoRec    int
	TotOpIVANoRec  int
	TotMntIVANoRec int64
}

// TotOtrosImp totals one other tax.
type TotOtrosImp struct {
	CodImp    int
	TotMntImp int64
}

// Detalle is one document of a LibroCompraVenta. Amounts left at 0 are
// not written, except MntTotal, which every row that is not annulled
// carries, and MntIVA, written with every MntNeto.
type Detalle struct {
	TpoDoc int
	NroDoc int64
	// Anulado is true for a folio annulled before being sent (written "A").
	Anulado bool
	// TasaImp is the IVA rate, in percent.
	TasaImp dte.Decimal
	// FchDoc is the document's date, YYYY-MM-DD.
	FchDoc string
	// RUTDoc and RznSoc are the counterpart: the receptor in sales, the
	// supplier in purchases.
	RUTDoc string
	RznSoc string
	// TpoDocRef and FolioDocRef name the document a note modifies.
	TpoDocRef   int
	FolioDocRef int64
	MntExe      int64
	MntNeto     int64
	MntIVA      int64
	IVANoRec    []IVANoRec
	IVAUsoComun int64
	OtrosImp    []OtroImp
	// IVARetTotal and IVARetParcial are the IVA retained (sales).
	IVARetTotal   int64
	IVARetParcial int64
	MntTotal      int64
}

// IVANoRec is IVA not recoverable of one code (1 to 4, 9; 4 is "entrega
// gratuita").
type IVANoRec struct {
	CodIVANoRec int
	MntIVANoRec int64
}

// OtroImp is one other tax of a row.
type OtroImp struct {
	CodImp  int
	TasaImp dte.Decimal
	MntImp  int64
}

// LibroGuia is a Libro de Guías de Despacho.
type LibroGuia struct {
	// ID is EnvioLibro's ID attribute.
	ID string
	// Schema is the schema file xsi:schemaLocation names.
	Schema   string
	Caratula Caratula
	// ResumenSegmento and ResumenPeriodo are nil when absent (this
	// package writes only ResumenPeriodo).
	ResumenSegmento *ResumenGuias
	ResumenPeriodo  *ResumenGuias
	Detalle         []DetalleGuia
	TmstFirma       time.Time
}

// Values of DetalleGuia.Anulado.
const (
	// AnuladoAntes is a folio annulled before the guía was sent.
	AnuladoAntes = 1
	// AnuladoDespues is a guía annulled after it was sent.
	AnuladoDespues = 2
	// RecibidaParcial is a guía whose goods were received in part (its
	// amounts unchanged).
	RecibidaParcial = 3
)

// ResumenGuias totals a Libro de Guías.
type ResumenGuias struct {
	// TotFolAnulado counts Anulado 1, TotGuiaAnulada Anulado 2.
	TotFolAnulado  int
	TotGuiaAnulada int
	// TotGuiaVenta counts the guías of a sale (TpoOper 1) not annulled,
	// TotMntGuiaVta totals their MntTotal.
	TotGuiaVenta     int
	TotMntGuiaVta    int64
	TotMntModificado int64
	// TotTraslado counts and totals the other kinds of transfer, one entry
	// per kind (2 to 9).
	TotTraslado []TotTraslado
}

// TotTraslado counts the guías of one kind of transfer that is not a
// sale.
type TotTraslado struct {
	TpoTraslado int
	CantGuia    int
	MntGuia     int64
}

// DetalleGuia is one guía of the libro.
type DetalleGuia struct {
	Folio int64
	// Anulado is AnuladoAntes, AnuladoDespues, RecibidaParcial or 0. A row
	// annulled (1 or 2) carries only its folio and this mark.
	Anulado int
	// TpoOper is the guía's IndTraslado (1 sale … 7 return; 8 and 9,
	// export transfers, have no TpoOper).
	TpoOper int
	FchDoc  string
	RUTDoc  string
	RznSoc  string
	MntNeto int64
	TasaImp dte.Decimal
	IVA     int64
	// MntTotal is written on every row not annulled.
	MntTotal      int64
	MntModificado int64
	// TpoDocRef, FolioDocRef and FchDocRef name the invoice of a guía
	// invoiced in the period.
	TpoDocRef   int
	FolioDocRef int64
	FchDocRef   string
}

// Consumo is a ConsumoFolios: the RCOF of a day's boletas.
type Consumo struct {
	// ID is DocumentoConsumoFolios' ID attribute.
	ID string
	// Schema is the schema file xsi:schemaLocation names.
	Schema   string
	Caratula CaratulaConsumo
	Resumen  []ResumenConsumo
}

// CaratulaConsumo is the cover of a ConsumoFolios.
type CaratulaConsumo struct {
	RutEmisor string
	RutEnvia  string
	FchResol  string
	NroResol  int
	// FchInicio and FchFinal bound the days reported (the same day for a
	// daily report).
	FchInicio string
	FchFinal  string
	// Correlativo numbers a report within its day (0: absent, read as 1).
	Correlativo int
	// SecEnvio is 1 the first time; a corrected report is sent again
	// whole with the next SecEnvio.
	SecEnvio     int
	TmstFirmaEnv time.Time
}

// ResumenConsumo totals one document type (39, 41 or 61).
type ResumenConsumo struct {
	TipoDocumento int
	MntNeto       int64
	MntIva        int64
	TasaIVA       dte.Decimal
	MntExento     int64
	MntTotal      int64
	// FoliosEmitidos counts the documents issued, FoliosAnulados the
	// folios annulled at the SII, FoliosUtilizados both.
	FoliosEmitidos   int
	FoliosAnulados   int
	FoliosUtilizados int
	RangoUtilizados  []Rango
	RangoAnulados    []Rango
}

// Rango is a run of consecutive folios, both ends included.
type Rango struct {
	Inicial, Final int64
}
