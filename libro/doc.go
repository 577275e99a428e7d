// Package libro builds, signs and reads the SII's libros: the Libro de
// Compras y Ventas (LibroCompraVenta, LibroCV_v10.xsd), the Libro de Guías
// de Despacho (LibroGuia, LibroGuia_v10.xsd), and the Consumo de Folios of
// boletas (ConsumoFolios, ConsumoFolio_v10.xsd, the RCOF, later called
// RVD).
//
// Each kind is built from what the company already holds and returned
// signed, ready for the SII's DTEUpload:
//
//	Ventas(opts, cert, docs...)         the sales libro from signed DTEs or envelopes
//	Compras(opts, cert, compras)        the purchase libro from a table of Compra rows
//	Guias(opts, cert, guias...)         the dispatch-guide libro from signed guías (52)
//	ConsumoFolios(opts, cert, boletas...) the RCOF from signed boletas (39, 41) and their notes (61)
//
// NewVentas, NewCompras, NewGuias and NewConsumo return the same libros as
// values (Libro, LibroGuia, Consumo) before signing, and their Sign methods
// write them; Parse, ParseGuia and ParseConsumo read a file back into the
// same types, which is how the fake SII of sii/siitest reviews an upload.
//
// # Which libros are still sent
//
// Since August 2017 the Registro de Compras y Ventas replaced the Libro de
// Compras y Ventas for electronic issuers (Res. Ex. SII N° 61/2017); the
// XML is still sent in the SII's certification (SET LIBRO DE VENTAS, SET
// LIBRO DE COMPRAS), on an SII notification (TipoLibro ESPECIAL) and to
// rectify a period up to 2017-07. The Libro de Guías is sent only when the
// SII asks for it by notification, and in certification (SET LIBRO DE
// GUIAS). The RCOF is no longer sent in production since 2022-08-01 (Res.
// Ex. SII N° 53/2022: the SII answers one with reparo 250, "no es
// obligatorio"); the boleta certification still asks for the RCOF of the
// set's boletas, uploaded through DTEUpload like a libro.
//
// # Defaults for certification
//
// Options left empty take what the SII's instructions for the set de
// pruebas ask: TipoLibro ESPECIAL, TipoEnvio TOTAL, FolioNotificacion 1 for
// the Libro de Ventas and 2 for the Libro de Compras ([SII-INSTSET]), 3 for
// the Libro de Guías (so the three never share an identity), the period of
// the documents, and the Carátula's RUTs and resolution from the company
// (NroResol 0 in certification). The SII identifies a special libro by its
// company, kind, period and FolioNotificacion, and a second TOTAL for the
// same identity is refused (LNC, "Libro Cerrado"): a caller sending a libro
// again must give a new FolioNotificacion.
//
// # Amounts
//
// Amounts are whole pesos. The IVA of a purchase row is 19 % of its neto
// rounded half up on the row; the credit of IVA de uso común is the
// libro's factor de proporcionalidad times the total IVA de uso común,
// rounded the same way. A factura de compra with the IVA retained in full
// (46) is written as the SII accepts it in the purchase libro: MntIVA the
// whole IVA, OtrosImp code 15 for the same amount, and MntTotal the neto
// (no IVARetTotal, which is a sales field).
package libro
