package dte

import (
	"strconv"
	"testing"
)

// benchFactura returns a 60-line factura: every line with a decimal
// quantity, every third with a discount, every fifth with a surcharge, every
// seventh exempt, plus two global discounts and an additional tax.
func benchFactura() *EmitirDTERequest {
	r := &EmitirDTERequest{
		TipoDTE:  FacturaElectronica,
		Receptor: Receptor{Rut: "76086428-5", RazonSocial: "Cliente SpA"},
	}
	for i := 0; i < 60; i++ {
		l := LineaDetalle{
			Nombre:   "producto " + strconv.Itoa(i),
			Cantidad: Decimal(strconv.Itoa(i%9+1) + ".5"),
			Precio:   Decimal(strconv.Itoa(990 + 37*i)),
		}
		if i%3 == 0 {
			l.DescuentoPct = "12.5"
		}
		if i%5 == 0 {
			l.RecargoPct = "3"
		}
		if i%7 == 0 {
			one := 1
			l.IndExe = &one
		} else if i%11 == 0 {
			c := 27
			l.CodImpAdic = &c
		}
		r.Detalle = append(r.Detalle, l)
	}
	r.DescuentosGlobales = []DscRcgGlobal{
		{TpoMov: "D", TpoValor: "%", ValorDR: "5"},
		{TpoMov: "D", TpoValor: "$", ValorDR: "1000", IndExeDR: func() *int { v := 1; return &v }()},
	}
	return r
}

func BenchmarkTotals(b *testing.B) {
	r := benchFactura()
	if _, err := ComputeTotals(r); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ComputeTotals(r); err != nil {
			b.Fatal(err)
		}
	}
}
