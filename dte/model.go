package dte

import (
	"encoding/json"
	"fmt"
	"strconv"
)

// The types in this file mirror the JSON objects of the REST contract (§2)
// field for field, with the contract's Spanish names. The same types serve
// SDK users and the reference server.
//
// Optional numbers are pointers (*int) or Decimal, whose zero value "" means
// absent, so an omitted field and an explicit zero stay distinguishable.
// Optional text fields are plain strings: the empty string means absent.

// EmitirDTERequest is the emission request of contract §2.3.
type EmitirDTERequest struct {
	TipoDTE      TipoDTE `json:"tipo_dte"`
	FechaEmision string  `json:"fecha_emision,omitempty"`
	// ClienteID names a cliente of the company's catalog whose data fill
	// the receptor's empty fields. The reference server resolves it
	// before validation; dte itself only carries it.
	ClienteID            string              `json:"cliente_id,omitempty"`
	Receptor             Receptor            `json:"receptor"`
	Detalle              []LineaDetalle      `json:"detalle"`
	Comisiones           []ComisionDTE       `json:"comisiones,omitempty"`
	ImpuestosRetenciones []ImpuestoRetencion `json:"impuestos_retenciones,omitempty"`
	Referencias          []Referencia        `json:"referencias,omitempty"`
	IndTraslado          *int                `json:"ind_traslado,omitempty"`
	TipoDespacho         *int                `json:"tipo_despacho,omitempty"`
	IndServicio          *int                `json:"ind_servicio,omitempty"`
	DescuentosGlobales   []DscRcgGlobal      `json:"descuentos_globales,omitempty"`
	AutoSend             *bool               `json:"auto_send,omitempty"`
	ExportData           *ExportData         `json:"export_data,omitempty"`
	// Transporte is the transport of the goods the document moves
	// (Encabezado/Transporte): a dtekit extension of the contract, which
	// Res. Ex. SII 154/2025 makes required on guías from 2026-05-01 (see
	// docs/guias-transporte.md and the package documentation).
	Transporte *Transporte    `json:"transporte,omitempty"`
	Metadata   map[string]any `json:"metadata,omitempty"`
}

// Receptor is the document's recipient (contract §2.3).
type Receptor struct {
	Rut         string `json:"rut"`
	RazonSocial string `json:"razon_social"`
	Giro        string `json:"giro,omitempty"`
	Direccion   string `json:"direccion,omitempty"`
	Comuna      string `json:"comuna,omitempty"`
	Ciudad      string `json:"ciudad,omitempty"`
}

// LineaDetalle is one detail line (contract §2.3).
type LineaDetalle struct {
	// ProductoID names a producto of the company's catalog whose nombre,
	// precio, unidad and exemption fill the line's empty fields. The
	// reference server resolves it before validation; dte itself only
	// carries it.
	ProductoID   string  `json:"producto_id,omitempty"`
	TipoDocLiq   string  `json:"tipo_doc_liq,omitempty"`
	IndExe       *int    `json:"ind_exe,omitempty"`
	CodImpAdic   *int    `json:"cod_imp_adic,omitempty"`
	Nombre       string  `json:"nombre"`
	DscItem      string  `json:"dsc_item,omitempty"`
	Cantidad     Decimal `json:"cantidad,omitempty"`
	Unidad       string  `json:"unidad,omitempty"`
	Precio       Decimal `json:"precio,omitempty"`
	MontoItem    Decimal `json:"monto_item,omitempty"`
	DescuentoPct Decimal `json:"descuento_pct,omitempty"`
	RecargoPct   Decimal `json:"recargo_pct,omitempty"`
	// Retenedor marks a line of a document whose issuer is the agent that
	// retains the tax (Detalle/Retenedor/IndAgente "R"): the factura de
	// compra (46) that retains the whole IVA (sii-wave3-notes §6.3). It is
	// the SDK's (the certification kit sets it); the REST contract has no
	// field for it.
	Retenedor bool `json:"-"`
}

// ComisionDTE is a commission or other movement of a liquidación-factura
// (type 43, contract §2.3).
type ComisionDTE struct {
	TipoMovim    string  `json:"tipo_movim"`
	Glosa        string  `json:"glosa"`
	TasaComision Decimal `json:"tasa_comision,omitempty"`
	ValComNeto   int64   `json:"val_com_neto"`
	ValComExe    int64   `json:"val_com_exe"`
	ValComIVA    *int64  `json:"val_com_iva,omitempty"`
}

// ImpuestoRetencion is an additional tax or a retention (contract §2.3).
type ImpuestoRetencion struct {
	TipoImp  int     `json:"tipo_imp"`
	TasaImp  Decimal `json:"tasa_imp,omitempty"`
	MontoImp *int64  `json:"monto_imp,omitempty"`
}

// Referencia is a reference to another document (contract §2.3).
type Referencia struct {
	// DTEID names one of the company's documents whose type, folio and
	// date fill the reference's empty fields. The reference server
	// resolves it before validation; dte itself only carries it.
	DTEID      string     `json:"dte_id,omitempty"`
	TipoDocRef TipoDocRef `json:"tipo_doc_ref"`
	FolioRef   int64      `json:"folio_ref"`
	// FolioRefTexto is a FolioRef that is not a number, which the schema
	// allows (a string of 1 to 18 characters): the SET reference of a
	// certification case carries the case ("414175-1",
	// sii-wave3-notes §6.3). It is only for a free-code TipoDocRef such as
	// "SET", with FolioRef 0, and is written as the XML's FolioRef. The
	// SDK sets it; the REST API does not read it.
	FolioRefTexto string `json:"-"`
	FechaRef      string `json:"fecha_ref"`
	CodigoRef     *int   `json:"codigo_ref,omitempty"`
	RazonRef      string `json:"razon_ref"`
}

// TipoDocRef is the type of a referenced document: an SII document type code
// (sent as a JSON integer, e.g. 33) or a free code (sent as a JSON string, e.g.
// "SET", "MIC", "DUS", "AWB"). It is written back the way it was read.
type TipoDocRef struct {
	// Tipo is the numeric code when the reference was given as an integer.
	Tipo TipoDTE
	// Codigo is the text code when the reference was given as a string.
	Codigo string
}

// RefTipo returns a numeric document-type reference.
func RefTipo(t TipoDTE) TipoDocRef { return TipoDocRef{Tipo: t} }

// RefCodigoSET is the free code of the reference to the SII's set of test
// cases that every certification document carries. On a boleta (39, 41)
// that reference is written as the boleta schema has it: CodRef SET and
// RazonRef, without TpoDocRef, FolioRef or FchRef.
const RefCodigoSET = "SET"

// RefCodigo returns a free-code reference such as "SET".
func RefCodigo(code string) TipoDocRef { return TipoDocRef{Codigo: code} }

// String returns the value written in the XML's TpoDocRef.
func (r TipoDocRef) String() string {
	if r.Codigo != "" {
		return r.Codigo
	}
	if r.Tipo == 0 {
		return ""
	}
	return strconv.Itoa(int(r.Tipo))
}

// IsZero reports whether the reference type is absent.
func (r TipoDocRef) IsZero() bool { return r.Tipo == 0 && r.Codigo == "" }

// MarshalJSON writes an integer for a numeric type and a string for a code.
func (r TipoDocRef) MarshalJSON() ([]byte, error) {
	if r.Codigo != "" {
		return json.Marshal(r.Codigo)
	}
	if r.Tipo == 0 {
		return []byte("null"), nil
	}
	return json.Marshal(int(r.Tipo))
}

// UnmarshalJSON reads an integer or a string.
func (r *TipoDocRef) UnmarshalJSON(b []byte) error {
	*r = TipoDocRef{}
	if string(b) == "null" {
		return nil
	}
	if len(b) > 0 && b[0] == '"' {
		return json.Unmarshal(b, &r.Codigo)
	}
	var n int
	if err := json.Unmarshal(b, &n); err != nil {
		return fmt.Errorf("tipo_doc_ref must be an integer document type or a string code")
	}
	r.Tipo = TipoDTE(n)
	return nil
}

// DscRcgGlobal is a global discount or surcharge (contract §2.3).
type DscRcgGlobal struct {
	NroLinDR *int    `json:"nro_lin_dr,omitempty"`
	TpoMov   string  `json:"tpo_mov"`
	TpoValor string  `json:"tpo_valor"`
	ValorDR  Decimal `json:"valor_dr"`
	GlosaDR  string  `json:"glosa_dr,omitempty"`
	IndExeDR *int    `json:"ind_exe_dr,omitempty"`
}

// ExportData carries the customs and currency data of export documents
// 110, 111 and 112 (contract §2.3).
type ExportData struct {
	TpoMoneda         string  `json:"tpo_moneda"`
	TpoCambio         Decimal `json:"tpo_cambio,omitempty"`
	MntExport         Decimal `json:"mnt_export,omitempty"`
	Nacionalidad      string  `json:"nacionalidad,omitempty"`
	NumID             string  `json:"num_id,omitempty"`
	TipoDocID         *int    `json:"tipo_doc_id,omitempty"`
	FormaPagoExp      *int    `json:"forma_pago_exp,omitempty"`
	ModalidadVenta    *int    `json:"modalidad_venta,omitempty"`
	ClausulaVenta     string  `json:"clausula_venta,omitempty"`
	TotalClausula     Decimal `json:"total_clausula,omitempty"`
	ViaTransporte     *int    `json:"via_transporte,omitempty"`
	PuertoEmbarque    string  `json:"puerto_embarque,omitempty"`
	PuertoDesembarque string  `json:"puerto_desembarque,omitempty"`
	Tara              *int64  `json:"tara,omitempty"`
	UnidadTara        *int    `json:"unidad_tara,omitempty"`
	PesoBruto         Decimal `json:"peso_bruto,omitempty"`
	UnidadPesoBruto   *int    `json:"unidad_peso_bruto,omitempty"`
	PesoNeto          Decimal `json:"peso_neto,omitempty"`
	UnidadPesoNeto    *int    `json:"unidad_peso_neto,omitempty"`
	TipoBulto         string  `json:"tipo_bulto,omitempty"`
	TotalBultos       *int64  `json:"total_bultos,omitempty"`
	Marcas            string  `json:"marcas,omitempty"`
	MntFlete          Decimal `json:"mnt_flete,omitempty"`
	MntSeguro         Decimal `json:"mnt_seguro,omitempty"`
	PaisRecep         string  `json:"pais_recep,omitempty"`
	PaisDest          string  `json:"pais_dest,omitempty"`
}

// Transporte is the transport of the goods a document moves: the vehicle,
// the carrier, the driver and where the goods go, as the SII's
// Encabezado/Transporte holds them (Patente, RUTTrans, Chofer, DirDest,
// CmnaDest, CiudadDest). The kind of transfer is the request's
// ind_traslado. A dtekit extension of contract §2.3 (recorded in the
// server's OpenAPI document).
type Transporte struct {
	// Patente is the vehicle's plate (at most 8 characters).
	Patente string `json:"patente,omitempty"`
	// RutTransportista is the carrier's RUT: the company that moves the
	// goods (the emisor itself when it moves them in its own vehicle).
	RutTransportista string `json:"rut_transportista,omitempty"`
	// Chofer is the driver.
	Chofer *Chofer `json:"chofer,omitempty"`
	// DireccionDestino, ComunaDestino and CiudadDestino are where the
	// goods go (at most 70, 20 and 20 characters).
	DireccionDestino string `json:"direccion_destino,omitempty"`
	ComunaDestino    string `json:"comuna_destino,omitempty"`
	CiudadDestino    string `json:"ciudad_destino,omitempty"`
}

// Chofer is the driver of the vehicle that moves the goods; the schema
// needs both fields when a driver is given.
type Chofer struct {
	Rut    string `json:"rut"`
	Nombre string `json:"nombre"`
}

// Emisor is the issuing company: the fields of contract §2.6 plus what the
// SII needs in every document header (activity codes, SII branch code).
type Emisor struct {
	ID               string `json:"id,omitempty"`
	Rut              string `json:"rut"`
	RazonSocial      string `json:"razon_social"`
	Giro             string `json:"giro"`
	Direccion        string `json:"direccion"`
	Comuna           string `json:"comuna"`
	Ciudad           string `json:"ciudad"`
	Ambiente         string `json:"ambiente"`
	FechaResolucion  string `json:"fecha_resolucion"`
	NumeroResolucion int    `json:"numero_resolucion"`
	InboundEmail     string `json:"inbound_email,omitempty"`
	InboundStatus    string `json:"inbound_status,omitempty"`
	// Acteco lists the company's SII economic activity codes (at least one,
	// at most four are written in each document).
	Acteco []int `json:"acteco,omitempty"`
	// SucursalSII is the SII branch code (CdgSIISucur), when the company has one.
	SucursalSII *int `json:"sucursal_sii,omitempty"`
	// OficinaSII is the SII office printed under the red box, e.g. "SANTIAGO CENTRO".
	OficinaSII string `json:"oficina_sii,omitempty"`
}

// The ambiente values of contract §2.6.
const (
	AmbienteCertificacion = "certificacion"
	AmbienteProduccion    = "produccion"
)
