package dte

// Totals is the result of computing a request's amounts with the SII's
// rules: every line's amounts and the document's Totales. JSON names are the
// SII's XML element names; elements the document does not carry are omitted.
type Totals struct {
	Detalle []LineTotals `json:"detalle"`
	// DscRcgGlobal holds the amount each global discount or surcharge came to.
	DscRcgGlobal []GlobalTotals `json:"DscRcgGlobal,omitempty"`
	Totales      Totales        `json:"totales"`
	// OtraMoneda converts the totals of an export document to another
	// currency when export_data.tpo_cambio is given.
	OtraMoneda *OtraMoneda `json:"OtraMoneda,omitempty"`
}

// LineTotals holds the computed amounts of one detail line.
type LineTotals struct {
	NroLinDet      int     `json:"NroLinDet"`
	MontoItem      Decimal `json:"MontoItem"`
	DescuentoMonto Decimal `json:"DescuentoMonto,omitempty"`
	RecargoMonto   Decimal `json:"RecargoMonto,omitempty"`
	// IndExe is the line's exemption indicator as written in the XML
	// (1 exempt, 2 not billable), 0 for a taxable line.
	IndExe int `json:"IndExe,omitempty"`
}

// GlobalTotals is the amount of one global discount or surcharge.
type GlobalTotals struct {
	NroLinDR int     `json:"NroLinDR"`
	TpoMov   string  `json:"TpoMov"`
	Monto    Decimal `json:"Monto"`
	// IndExeDR is the bucket it applied to: 0 taxable, 1 exempt, 2 not billable.
	IndExeDR int `json:"IndExeDR,omitempty"`
}

// Totales mirrors the SII's Totales element. Amounts are integers (CLP)
// except on export documents, which may carry up to 4 decimals.
type Totales struct {
	TpoMoneda  string       `json:"TpoMoneda,omitempty"`
	MntNeto    Decimal      `json:"MntNeto,omitempty"`
	MntExe     Decimal      `json:"MntExe,omitempty"`
	TasaIVA    Decimal      `json:"TasaIVA,omitempty"`
	IVA        Decimal      `json:"IVA,omitempty"`
	ImptoReten []ImptoReten `json:"ImptoReten,omitempty"`
	IVANoRet   Decimal      `json:"IVANoRet,omitempty"`
	Comisiones *Comisiones  `json:"Comisiones,omitempty"`
	MntTotal   Decimal      `json:"MntTotal"`
	MontoNF    Decimal      `json:"MontoNF,omitempty"`
}

// ImptoReten is one additional tax or retention line of Totales.
type ImptoReten struct {
	TipoImp  int     `json:"TipoImp"`
	TasaImp  Decimal `json:"TasaImp,omitempty"`
	MontoImp Decimal `json:"MontoImp"`
	// Retencion is true when the amount is withheld (subtracted from
	// MntTotal) rather than added.
	Retencion bool `json:"-"`
}

// Comisiones is the sum of a liquidación-factura's commissions.
type Comisiones struct {
	ValComNeto Decimal `json:"ValComNeto"`
	ValComExe  Decimal `json:"ValComExe"`
	ValComIVA  Decimal `json:"ValComIVA"`
}

// OtraMoneda carries an export document's totals in a second currency.
type OtraMoneda struct {
	TpoMoneda     string  `json:"TpoMoneda"`
	TpoCambio     Decimal `json:"TpoCambio"`
	MntExeOtrMnda Decimal `json:"MntExeOtrMnda,omitempty"`
	MntTotOtrMnda Decimal `json:"MntTotOtrMnda"`
}
