package main

import "github.com/dtekit/dtekit/dte"

// demoRequests returns one emission request of each of the twelve types,
// dated today (fecha_emision omitted) and with names that carry ñ, accents,
// '&', '<', and both quotes, so the demo exercises escaping and ISO-8859-1
// end to end. References point at documents dated refDate.
func demoRequests(refDate string) []*dte.EmitirDTERequest {
	i := func(n int) *int { return &n }
	cliente := dte.Receptor{
		Rut:         "76086428-5",
		RazonSocial: `Comercial Ñandú & Cía. "El Buen 'Sabor'" <Ltda.>`,
		Giro:        "Venta al por mayor de alimentos",
		Direccion:   "Av. Libertador Bernardo O'Higgins 1449, of. 302",
		Comuna:      "Santiago",
		Ciudad:      "Santiago",
	}
	extranjero := dte.Receptor{
		Rut:         "55555555-5",
		RazonSocial: `Müller & Söhne "Feinkost" <GmbH>`,
		Giro:        "Importación de alimentos",
		Direccion:   "Hafenstraße 12, 20457 Hamburg",
		Ciudad:      "Hamburgo",
	}
	lineas := []dte.LineaDetalle{
		{Nombre: `Aceite de oliva "Señorío" 1 L`, Cantidad: "12", Unidad: "UN", Precio: "6490", DescuentoPct: "10"},
		{Nombre: "Café de grano tostado 'Montaña' & <Cía> 500 g", DscItem: "Tueste medio, origen Colombia", Cantidad: "6", Unidad: "UN", Precio: "8990"},
	}
	ref := func(t dte.TipoDTE, folio int64, cod int, razon string) []dte.Referencia {
		return []dte.Referencia{{TipoDocRef: dte.RefTipo(t), FolioRef: folio, FechaRef: refDate, CodigoRef: i(cod), RazonRef: razon}}
	}
	export := func() *dte.ExportData {
		return &dte.ExportData{
			TpoMoneda: "DOLAR USA", TpoCambio: "935.27", Nacionalidad: "563", ModalidadVenta: i(1),
			ClausulaVenta: "FOB", ViaTransporte: i(1), PaisRecep: "563", PaisDest: "563",
		}
	}
	expLineas := []dte.LineaDetalle{
		{Nombre: "Nueces mariposa extra light, caja 10 kg", Cantidad: "600", Unidad: "CJ", Precio: "12.5"},
		{Nombre: `Ciruelas D'Agen "sin carozo" & <secas>, caja 12,5 kg`, Cantidad: "400", Unidad: "CJ", Precio: "27.65", DescuentoPct: "2"},
	}
	exempt := []dte.LineaDetalle{
		{Nombre: "Asesoría contable 'Año 2026' & <cierre>", Cantidad: "1", Precio: "450000"},
		{Nombre: "Curso de capacitación \"Excel avanzado\"", Cantidad: "3", Unidad: "UN", Precio: "85000", DescuentoPct: "5"},
	}
	return []*dte.EmitirDTERequest{
		{TipoDTE: 33, Receptor: cliente, Detalle: append(append([]dte.LineaDetalle{}, lineas...),
			dte.LineaDetalle{IndExe: i(1), Nombre: "Arriendo de bodega sin amoblar", Cantidad: "1", Precio: "350000"}),
			DescuentosGlobales: []dte.DscRcgGlobal{{TpoMov: "D", TpoValor: "%", ValorDR: "5", GlosaDR: "Descuento cliente frecuente"}}},
		{TipoDTE: 34, Receptor: cliente, Detalle: exempt},
		{TipoDTE: 39, Receptor: dte.Receptor{Rut: "66666666-6", RazonSocial: "Consumidor final"}, IndServicio: i(3), Detalle: []dte.LineaDetalle{
			{Nombre: "Empanada de pino horneada", Cantidad: "3", Unidad: "UN", Precio: "2500"},
			{Nombre: `Bebida 'Naranja & Maracuyá' <500 ml> "light"`, Cantidad: "2", Unidad: "UN", Precio: "1200", DescuentoPct: "50"},
		}},
		{TipoDTE: 41, Receptor: dte.Receptor{Rut: "66666666-6", RazonSocial: "Consumidor final"}, IndServicio: i(3), Detalle: []dte.LineaDetalle{
			{Nombre: `Entrada museo "Niños & Niñas" <menores de 12>`, Cantidad: "2", Precio: "1500"},
			{Nombre: "Libro 'Poemas de Neruda'", Cantidad: "1", Precio: "12990"},
		}},
		{TipoDTE: 43, Receptor: dte.Receptor{Rut: "96790240-3", RazonSocial: `Viña Los Ñires & Hijos "Reserva" <S.A.>`, Giro: "Producción de vinos",
			Direccion: "Camino a Pencahue km 8, Fundo 'El Peñón'", Comuna: "Talca", Ciudad: "Talca"},
			Detalle: []dte.LineaDetalle{
				{TipoDocLiq: "33", Nombre: "Vino Carménère Reserva 750 ml, caja 6 u.", Cantidad: "40", Unidad: "CJ", Precio: "32000"},
				{TipoDocLiq: "33", Nombre: "Vino Sauvignon Blanc 'Costa' & <Valle>, caja 6 u.", Cantidad: "25", Unidad: "CJ", Precio: "28500"},
			},
			Comisiones: []dte.ComisionDTE{
				{TipoMovim: "C", Glosa: "Comisión por venta en consignación", TasaComision: "8", ValComNeto: 159400},
				{TipoMovim: "O", Glosa: "Flete a bodega de Quilicura", ValComNeto: 45000},
			}},
		{TipoDTE: 46, Receptor: dte.Receptor{Rut: "13579246-2", RazonSocial: `José Ñancupil "Huenchumán" & <Hnos.>`, Giro: "Agricultor",
			Direccion: "Parcela 12, camino a Pitrufquén", Comuna: "Freire", Ciudad: "Temuco"},
			Detalle: []dte.LineaDetalle{
				{Nombre: "Papas variedad Désirée, saco 25 kg", Cantidad: "80", Unidad: "SACO", Precio: "9500"},
				{Nombre: "Cebollas de guarda 'Valdivia', malla 20 kg", Cantidad: "40", Unidad: "MAL", Precio: "7800"},
			},
			ImpuestosRetenciones: []dte.ImpuestoRetencion{{TipoImp: 15, TasaImp: "19"}}},
		{TipoDTE: 52, Receptor: dte.Receptor{Rut: "76354771-K", RazonSocial: `Ferretería O'Brien & Cía. "Sur" <Ltda.>`, Giro: "Ferretería",
			Direccion: "Av. Pedro de Valdivia 2210", Comuna: "Concepción", Ciudad: "Concepción"},
			IndTraslado: i(1), TipoDespacho: i(2),
			Transporte: &dte.Transporte{Patente: "KXRT45", RutTransportista: "77123456-9",
				Chofer:           &dte.Chofer{Rut: "16789012-1", Nombre: "Juan Ñancucheo Pérez"},
				DireccionDestino: "Obra Los Canelos, Camino a Penco 1480", ComunaDestino: "Penco", CiudadDestino: "Penco"},
			Detalle: []dte.LineaDetalle{
				{Nombre: "Cemento especial, saco 25 kg", Cantidad: "120", Unidad: "SACO", Precio: "4290"},
				{Nombre: "Fierro estriado 10 mm x 6 m", Cantidad: "200", Unidad: "UN", Precio: "5990", DescuentoPct: "3.5"},
				{Nombre: "Alambre negro N° 18, rollo 1 kg", Cantidad: "30", Unidad: "ROL", Precio: "2100"},
			}},
		{TipoDTE: 56, Receptor: cliente, Referencias: ref(33, 1, 3, "Intereses por pago fuera de plazo"), Detalle: []dte.LineaDetalle{
			{Nombre: "Intereses por mora 'marzo' & <abril>", Cantidad: "1", Precio: "15400"},
		}},
		{TipoDTE: 61, Receptor: cliente, Referencias: ref(33, 1, 3, "Devolución parcial de mercadería"), Detalle: []dte.LineaDetalle{
			{Nombre: `Aceite de oliva "Señorío" 1 L (devolución)`, Cantidad: "2", Unidad: "UN", Precio: "6490"},
		}},
		{TipoDTE: 110, Receptor: extranjero, ExportData: export(), Detalle: expLineas,
			Referencias: []dte.Referencia{{TipoDocRef: dte.RefCodigo("DUS"), FolioRef: 6024789, FechaRef: refDate, RazonRef: "Documento único de salida"}}},
		{TipoDTE: 111, Receptor: extranjero, ExportData: export(), Referencias: ref(110, 1, 3, "Ajuste de flete 'internacional'"), Detalle: []dte.LineaDetalle{
			{Nombre: "Diferencia de flete marítimo & <seguro>", Cantidad: "1", Precio: "180.75"},
		}},
		{TipoDTE: 112, Receptor: extranjero, ExportData: export(), Referencias: ref(110, 1, 3, "Devolución de mercadería dañada"), Detalle: []dte.LineaDetalle{
			{Nombre: "Nueces mariposa extra light, caja 10 kg (devolución)", Cantidad: "5", Unidad: "CJ", Precio: "12.5"},
		}},
	}
}
