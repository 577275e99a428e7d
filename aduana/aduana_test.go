package aduana_test

import (
	"testing"

	"github.com/dtekit/dtekit/aduana"
)

// The expected names below are copied by hand from the rows of
// ../shared/sii/aduana/*.csv (code, then the column named), never produced
// by the package.

// named is a code and the name (or short name) its table gives it; ok
// false means the table does not list the code.
type named struct {
	code int
	want string
	ok   bool
}

// checkNames runs lookup over cases.
func checkNames(t *testing.T, table string, lookup func(int) (string, bool), cases []named) {
	t.Helper()
	for _, c := range cases {
		got, ok := lookup(c.code)
		if ok != c.ok || got != c.want {
			t.Errorf("%s(%d) = %q, %v; want %q, %v", table, c.code, got, ok, c.want, c.ok)
		}
	}
}

func TestPais(t *testing.T) {
	checkNames(t, "Pais", aduana.Pais, []named{
		{225, "ESTADOS UNIDOS DE AMÉRICA", true}, // name; short_name is U.S.A.
		{997, "CHILE", true},
		{563, "ALEMANIA", true},
		{101, "SENEGAL", true},                            // the first row
		{322, "PALESTINA", true},                          // the newer reading of a disputed code (old: YEMEN)
		{910, "ZONA FRANCA ARICA, ZONA INDUSTRIAL", true}, // a quoted name with a comma
		{999, "OTROS (PAÍS DESCONOCIDO)", true},
		{100, "", false},
		{400, "", false},
		{0, "", false},
		{-225, "", false},
	})
}

func TestPuerto(t *testing.T) {
	checkNames(t, "Puerto", aduana.Puerto, []named{
		{905, "VALPARAÍSO", true},
		{906, "SAN ANTONIO", true},
		{592, "HAMBURGO", true},
		{111, "MONTREAL", true}, // the first row
		{112, "COSTA DEL PACÍFICO, OTROS NO ESPECIFICADOS", true},
		{938, "PUERTO ANDINO", true}, // renamed from CUTTER COVE
		{997, "OTROS PUERTOS CHILENOS", true},
		{100, "", false},
		{9999, "", false},
	})
}

func TestViaTransporte(t *testing.T) {
	checkNames(t, "ViaTransporte", aduana.ViaTransporte, []named{
		{1, "MARITIMA, FLUVIAL Y LACUSTRE", true},
		{4, "AEREO", true},
		{7, "CARRETERO / TERRESTRE", true},
		{9, "TENDIDO ELECTRICO (AEREO, SUBTERRANEO)", true},
		{11, "COURIER/AEREO", true},
		{2, "", false}, // an obsolete ZOFRI code the table leaves out
		{12, "", false},
	})
}

func TestModalidadVenta(t *testing.T) {
	checkNames(t, "ModalidadVenta", aduana.ModalidadVenta, []named{
		{1, "A FIRME", true},
		{2, "BAJO CONDICION", true},
		{4, "EN CONSIGNACION CON UN MINIMO A FIRME", true},
		{9, "SIN PAGO", true},
		{5, "", false},
	})
}

func TestClausulaVenta(t *testing.T) {
	checkNames(t, "ClausulaVenta", aduana.ClausulaVenta, []named{
		{1, "CIF", true},
		{5, "FOB", true},
		{6, "S/CL", true},
		{7, "FCA", true}, // FCA in two sources, "FCA (disputed)" in the table
		{8, "OTROS", true},
		{9, "DDP", true},
		{10, "FCA", true}, // FCA in three sources
		{12, "CIP", true},
		{18, "DAP", true},
		{13, "", false},
		{0, "", false},
	})
}

// withSigla adapts a lookup that returns a short name and a name.
func withSigla(f func(int) (string, string, bool), pick int) func(int) (string, bool) {
	return func(code int) (string, bool) {
		s, n, ok := f(code)
		if pick == 0 {
			return s, ok
		}
		return n, ok
	}
}

func TestFormaPagoExportacion(t *testing.T) {
	checkNames(t, "FormaPagoExportacion sigla", withSigla(aduana.FormaPagoExportacion, 0), []named{
		{1, "COB1", true},
		{11, "ACRED", true},
		{21, "S/PAGO", true},
		{32, "ANTICIPO", true},
		{80, "S/PAGO/COB", true},
		{3, "", false},
	})
	checkNames(t, "FormaPagoExportacion description", withSigla(aduana.FormaPagoExportacion, 1), []named{
		{1, "COBRANZA HASTA 1 AÑO", true},
		{12, "CREDITO DE BANCOS Y ORG. FINANCIEROS MAS DE 1 AÑO", true},
		{32, "PAGO ANTICIPADO A LA FECHA DE EMBARQUE", true},
		{50, "ANTICIPO Y COBRANZA", true},
		{99, "", false},
	})
}

func TestUnidadMedida(t *testing.T) {
	checkNames(t, "UnidadMedida sigla", withSigla(aduana.UnidadMedida, 0), []named{
		{1, "TMB", true},
		{6, "KN", true},
		{10, "U", true},
		{16, "MCUB", true},
		{99, "S.U.M", true},
		{21, "", false}, // a ZOFRI-only code the table leaves out
	})
	checkNames(t, "UnidadMedida name", withSigla(aduana.UnidadMedida, 1), []named{
		{6, "KILOGRAMO NETO", true},
		{9, "LITRO", true},
		{16, "METRO CÚBICO", true},
		{99, "SIN UNIDAD DE MEDIDA", true},
		{0, "", false},
	})
}

func TestTipoBulto(t *testing.T) {
	checkNames(t, "TipoBulto sigla", withSigla(aduana.TipoBulto, 0), []named{
		{1, "POLVO", true},
		{22, "CAJA DE CARTON", true},
		{73, "CONT20", true},
		{99, "S/EMBALAR", true},
		{0, "", false}, // SIN EMBALAR in one source; the schema's codes are positive
		{30, "", false},
	})
	checkNames(t, "TipoBulto name", withSigla(aduana.TipoBulto, 1), []named{
		{4, "GRANEL LÍQUIDO", true},
		{22, "CAJAS DE CARTÓN, LATA O DE CUALQUIER OTRO MATERIAL EXCEPTO MADERA", true},
		{46, "CUÑETES", true},
		{80, "PALLETS, TABLEROS", true},
		{98, "NO EXISTE BULTO", true},
		{95, "", false},
	})
}

func TestMoneda(t *testing.T) {
	for _, c := range []struct {
		name string
		code int
		iso  string
		ok   bool
	}{
		{"DOLAR USA", 13, "USD", true},
		{"EURO", 142, "EUR", true},
		{"PESO CL", 200, "CLP", true},
		{"PESO", 1, "ARS", true},          // the schema's name for the Argentine peso
		{"CRUZEIRO REAL", 5, "BRL", true}, // the schema's name; Aduana now writes REAL BR
		{"MARCO AL", 30, "", true},        // gone, still in the schema
		{"OTRAS MONEDAS", 900, "XXX", true},
		{"REAL BR", 0, "", false},   // Aduana's abbreviation, not the schema's name
		{"WON KR", 0, "", false},    // a code with no schema name
		{"dolar usa", 0, "", false}, // names are written as the schema writes them
		{"", 0, "", false},
	} {
		code, iso, ok := aduana.Moneda(c.name)
		if code != c.code || iso != c.iso || ok != c.ok {
			t.Errorf("Moneda(%q) = %d, %q, %v; want %d, %q, %v", c.name, code, iso, ok, c.code, c.iso, c.ok)
		}
	}
}
