package certificacion

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
)

// This file writes the folder's guides: LEEME.md, the whole certification
// of the factura family in the order the portal asks for it, and
// LEEME-BOLETAS.md, the boleta certification, which has a portal of its
// own and fewer stages. Both are rendered from manifest.json, so the track
// ids and states "enviar" and "estado" record appear in them (SaveManifest
// renders them again). The portal addresses and steps are those of
// sii-wave3-notes §6.1 and §6.4 (certification environment: maullin).

// Portal addresses of the certification (sii-wave3-notes §6.1, §6.4, §7).
const (
	urlEntrada      = "https://www.sii.cl/factura_electronica/factura_mercado/postulacion.htm"
	urlPostulacion  = "https://maullin.sii.cl/cvc_cgi/dte/pe_ingrut"
	urlDatosEmpresa = "https://maullin.sii.cl/cvc_cgi/dte/pe_construccion_dte"
	urlFolios       = "https://maullin.sii.cl/cvc_cgi/dte/of_solicita_folios"
	urlUpload       = "https://maullin.sii.cl/cgi_dte/UPL/DTEauth?1"
	urlAvance       = "https://maullin.sii.cl/cvc_cgi/dte/pe_avance1"
	urlAvance4      = "https://maullin.sii.cl/cvc_cgi/dte/pe_avance4"
	urlAvance7      = "https://maullin.sii.cl/cvc_cgi/dte/pe_avance7"
	urlIntercambio  = "https://www4.sii.cl/pfeInternet"
	urlMuestras     = "https://www4.sii.cl/pdfdteInternet"
	urlBoletaSet    = "https://www4.sii.cl/certBolElectDteInternet/?SET=1"
	urlBoletaRev    = "https://www4.sii.cl/certBolElectDteInternet/?SET=2"
	urlBoletaBase   = "https://www4.sii.cl/certBolElectDteInternet/"
)

var reShellSafe = regexp.MustCompile(`^[A-Za-z0-9_./:=@%+,-]+$`)

// q quotes a command-line argument for a POSIX shell when it needs it.
func q(s string) string {
	if reShellSafe.MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// carpeta is the folder as the commands name it.
func (m *Manifest) carpeta() string {
	if m.Invocacion != nil && m.Invocacion.Carpeta != "" {
		return q(m.Invocacion.Carpeta)
	}
	return "CARPETA"
}

// certArgs are the certificate's flags of the commands.
func (m *Manifest) certArgs() string {
	inv := m.Invocacion
	if inv == nil || inv.Cert == "" {
		return "--cert CERT.p12 --cert-password-file CLAVE.txt"
	}
	s := "--cert " + q(inv.Cert)
	if inv.CertPasswordFile != "" {
		s += " --cert-password-file " + q(inv.CertPasswordFile)
	}
	return s
}

// trustArgs are the --trust flags (test CAFs only).
func (m *Manifest) trustArgs() string {
	var b strings.Builder
	if m.Invocacion != nil {
		for _, t := range m.Invocacion.Trust {
			b.WriteString(" --trust " + q(t))
		}
	}
	return b.String()
}

// simulacionCmd is the command that makes the simulación's folder beside
// this one.
func (m *Manifest) simulacionCmd() (cmd, dir string) {
	inv := m.Invocacion
	dir = "CARPETA-simulacion"
	emisor, cafs := "EMISOR.json", " --caf CAF-33.xml --caf CAF-34.xml --caf CAF-52.xml --caf CAF-56.xml --caf CAF-61.xml"
	if inv != nil && inv.Carpeta != "" {
		dir = filepath.Clean(inv.Carpeta) + "-simulacion"
	}
	if inv != nil && inv.Emisor != "" {
		emisor = inv.Emisor
	}
	if inv != nil && len(inv.CAFs) > 0 {
		cafs = ""
		for _, c := range inv.CAFs {
			cafs += " --caf " + q(c)
		}
	}
	return fmt.Sprintf("dtekit certificacion simulacion --emisor %s %s%s%s --out %s", q(emisor), m.certArgs(), cafs, m.trustArgs(), q(dir)), dir
}

// estadoDe returns the track id, date and state of an upload for the
// guides' tables.
func estadoDe(u Upload) (track, fecha, estado string) {
	e := *u.Envio
	if e == nil {
		return "", "", "sin enviar"
	}
	track, fecha, estado = e.TrackID, e.Fecha, orDash(e.Estado)
	if len(fecha) >= 10 {
		fecha = fecha[:10]
	}
	switch {
	case e.Enviando:
		estado = "sin respuesta del SII (enviar manda un nuevo intento)"
	case e.Estado == "EPR":
		estado = fmt.Sprintf("EPR (%d aceptados, %d reparos, %d rechazos)", e.Aceptados, e.Reparos, e.Rechazados)
	case e.TrackID != "" && e.Estado == "":
		estado = "enviado: consulte el estado"
	}
	if e.Final && !u.Aprobado() {
		estado += " ⚠ no aprobado"
	} else if u.Aprobado() {
		estado += " ✓"
	}
	return track, fecha, estado
}

// hasBoletas reports whether the folder has the boleta set.
func (m *Manifest) hasBoletas() bool {
	for _, s := range m.Sets {
		if s.Kind == string(SetBoleta) {
			return true
		}
	}
	return false
}

// hasBoletaNotas reports whether the folder has the credit notes on
// boletas of 007-boletas.csv.
func (m *Manifest) hasBoletaNotas() bool {
	for _, s := range m.Sets {
		if s.Kind == string(SetBoletaNotas) {
			return true
		}
	}
	return false
}

// Leeme returns the LEEME.md of a folder, in Spanish (the language of the
// SII's portal): the whole certification in the order the portal asks for
// it, with the commands that do each step, the files to upload, what to
// type in each field, and the track ids and states manifest.json holds.
func Leeme(m *Manifest) string {
	if m.Simulacion {
		return leemeSimulacion(m)
	}
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	dir, cert := m.carpeta(), m.certArgs()
	w("# Certificación SII del emisor %s: la guía completa, en orden", m.RutEmisor)
	w("")
	w("Esta carpeta tiene los documentos, envíos, libros y muestras del set de pruebas. Siga los pasos en orden; cada comando se puede copiar tal como está. Los comandos `enviar` y `estado` anotan el número de envío (track id) y el estado de cada archivo en `manifest.json` y vuelven a escribir esta guía con ellos.")
	w("")
	w("Todos los documentos tienen fecha de emisión **%s**: súbalos ese mismo día (una fecha de más de 3 días da el reparo DTE-1-650). Los sets deben enviarse dentro de 2 meses desde su descarga. **No vuelva a descargar el set**: una descarga nueva reemplaza la anterior y los envíos se revisan contra la última.", m.Fecha)
	leemeAvisos(w, m)
	w("")
	w("## Paso 0. Antes de esta carpeta (ya hecho si llegó hasta aquí)")
	w("")
	w("Todas las páginas del proceso se abren desde %s (sii.cl → Factura electrónica → Sistema de facturación de mercado → Postulación y certificación), con el certificado digital de un usuario autorizado por la empresa; las direcciones de abajo son las de cada paso en el ambiente de certificación (maullin).", urlEntrada)
	w("")
	w("1. Postulación: %s, con el RUT de la empresa; elija los tipos de documento.", urlPostulacion)
	w("2. Datos de la empresa para los documentos (giro sin abreviaturas, dirección, fecha de resolución; número de resolución 0 en certificación): %s. La `fecha_resolucion` de su EMISOR.json debe ser la de esa página (un par distinto da CRT-3-19).", urlDatosEmpresa)
	w("3. Folios (CAF) de cada tipo, en el ambiente de certificación: %s.", urlFolios)
	w("4. El archivo de set `SIISetDePruebas<RUT>.txt` y `dtekit certificacion generar`, que escribió esta carpeta.")
	w("")
	w("## Paso 1. Subir los envíos y los libros")
	w("")
	w("```sh")
	w("dtekit certificacion enviar --dir %s %s", dir, cert)
	w("```")
	w("")
	w("Sube por DTEUpload, en este orden, cada envío y después cada libro (la Consumo de Folios también), y anota cada track id. Si se corta, vuelva a ejecutarlo: lo que ya tiene track id no se vuelve a subir. A mano, lo mismo se hace en %s (ambiente de certificación): en esa página indique el RUT de la empresa, elija el archivo y envíelo, un archivo a la vez, en el orden de la tabla; la página responde con el número de envío (track id), que se anota en la tabla.", urlUpload)
	w("")
	w("| # | set o libro | número de atención | archivo | track id | fecha | estado |")
	w("|---|---|---|---|---|---|---|")
	for i, u := range m.Uploads() {
		track, fecha, estado := estadoDe(u)
		w("| %d | %s | %s | `%s` | %s | %s | %s |", i+1, u.Set, orDash(u.Atencion), u.File, track, fecha, estado)
	}
	for _, s := range m.Sets {
		if s.Kind == string(SetFacturaGuias) {
			w("")
			w("`%s` no es un caso del set: son las facturas que facturan las guías que el SET LIBRO DE GUIAS da por facturadas (el Libro de Guías las nombra). Súbalo antes del Libro de Guías y no lo declare en el avance.", s.Envelope)
		}
	}
	w("")
	w("## Paso 2. Esperar el estado de cada archivo")
	w("")
	w("```sh")
	w("dtekit certificacion estado --dir %s %s --esperar 10m", dir, cert)
	w("```")
	w("")
	w("Cada envío debe quedar **EPR con 0 reparos y 0 rechazos** y cada libro **LOK** (la Consumo de Folios queda RPR con el reparo 250, \"no es obligatorio\", y así se acepta). Un caso con reparos se emite de nuevo con un folio nuevo (`generar` en una carpeta nueva al lado de esta empieza sobre los folios ya usados); un libro rechazado lo vuelve a firmar y subir `enviar`, con el siguiente FolioNotificacion.")
	w("")
	w("## Paso 3. Declarar el avance del set de pruebas")
	w("")
	w("En %s (\"Declarar avance\") elija el set de pruebas; la página siguiente (pe_avance2) pide, por cada set, el **número de envío** (track id) y la **fecha** del envío. Escriba los de la tabla del paso 1:", urlAvance)
	w("")
	w("| set | número de atención | número de envío (track id) | fecha |")
	w("|---|---|---|---|")
	for _, u := range m.Uploads() {
		if u.Libro {
			continue
		}
		track, fecha, _ := estadoDe(u)
		if u.Atencion == "" {
			continue
		}
		w("| %s | %s | %s | %s |", u.Set, u.Atencion, orDash(track), orDash(fecha))
	}
	w("")
	w("El SII responde por correo \"SOK – SET DE PRUEBA CORRECTO\" o \"SRH\" con los reparos, y el estado del set pasa de POR REALIZAR a EN REVISION y a REVISADO CONFORME. Si el estado no cambia, vuelva a entrar a la declaración de avance: ahí se actualiza.")
	if len(m.Libros) > 0 {
		w("")
		w("Los libros ya están subidos (paso 1: el SII los recibe y responde LOK sin esperar). Lo que debe esperar es su **declaración**: declare el Libro de Ventas **después** de que el SET BASICO quede REVISADO CONFORME (antes, el SII responde \"No Tiene un SET Basico Aprobado\"); los demás libros, con su track id, junto con su set:")
		w("")
		w("| libro | set | número de atención | número de envío (track id) | fecha |")
		w("|---|---|---|---|---|")
		for _, u := range m.Uploads() {
			if !u.Libro || u.RCOF {
				continue
			}
			track, fecha, _ := estadoDe(u)
			w("| `%s` | %s | %s | %s | %s |", u.File, u.Set, orDash(u.Atencion), orDash(track), orDash(fecha))
		}
		w("")
		w("El SII identifica cada libro por empresa, período y FolioNotificacion, y rechaza un segundo envío de la misma identidad (LNC, \"Libro Cerrado\"): por eso `enviar` firma cada nuevo intento con el siguiente FolioNotificacion y lo deja junto al anterior (…-intento2.xml). Declare el track id del último intento.")
	}
	if len(m.Pendientes) > 0 {
		w("")
		w("Libros que no están en esta carpeta (genere la carpeta con el archivo de set completo):")
		w("")
		for _, p := range m.Pendientes {
			w("- %s", p)
		}
	}
	if m.hasBoletas() {
		w("")
		w("El set de boletas tiene su propio portal y sus propios pasos: vea `%s`.", LeemeBoletasFile)
	}
	sim, simDir := m.simulacionCmd()
	w("")
	w("## Paso 4. Simulación")
	w("")
	w("Cuando el set de pruebas esté REVISADO CONFORME, emita la simulación: entre 10 y 100 documentos como los de la operación real de la empresa, sin la referencia al SET, de cada tipo que la empresa tiene autorizado, en un solo envío con 0 reparos. La carpeta de la simulación queda al lado de esta; sus folios empiezan después de los que usó esta carpeta (el comando los lee de los `manifest.json` de las carpetas vecinas y lo dice).")
	w("")
	w("```sh")
	w("%s", sim)
	w("dtekit certificacion enviar --dir %s %s", q(simDir), cert)
	w("dtekit certificacion estado --dir %s %s --esperar 10m", q(simDir), cert)
	w("```")
	w("")
	w("Luego declare su avance en %s con el track id y la fecha que imprime `estado` (y que quedan en el LEEME.md de esa carpeta).", urlAvance)
	w("")
	w("## Paso 5. Intercambio")
	w("")
	w("En %s descargue el EnvioDTE que el SII le envía (un XML) y respóndalo con los tres archivos que pide: el acuse de recibo del envío, el resultado comercial de cada documento y el recibo de mercaderías (Ley 19.983):", urlIntercambio)
	w("")
	w("```sh")
	w("dtekit certificacion intercambio --dir %s %s%s ENVIO-DEL-SII.xml", dir, cert, m.trustArgs())
	w("```")
	w("")
	w("Los tres archivos quedan en `%s/` (RecepcionEnvio-N.xml, ResultadoDTE-N.xml, EnvioRecibos-N.xml); súbalos en la misma página, uno en cada campo.", IntercambioDir)
	if len(m.Intercambio) > 0 {
		w("")
		w("Respuestas ya escritas:")
		w("")
		for _, f := range m.Intercambio {
			w("- `%s`", f)
		}
	}
	w("")
	w("## Paso 6. Muestras impresas")
	w("")
	w("En %s suba los PDF de esta lista, en este orden (uno por documento; los tipos con copia cedible llevan el ejemplar tributario y el cedible), y además uno de cada tipo de la simulación (su carpeta `muestras/`). Están impresos desde el XML firmado exacto, así que el timbre coincide con el documento que aceptó el SII. El SII agrega los archivos subidos en vez de reemplazarlos: borre los que suba por error. La revisión toma hasta 7 días hábiles.", urlMuestras)
	w("")
	for _, p := range m.Muestras {
		w("- `%s`", p)
	}
	w("")
	w("## Paso 7. Declaración de cumplimiento")
	w("")
	w("Con las muestras aprobadas, avance de paso en %s y firme la declaración de cumplimiento en %s (y la página siguiente, pe_avance8). La firma el **representante legal**: declara los procedimientos de custodia de los CAF, control de folios, respaldo, envío, intercambio, cuadratura y contingencia. El SII emite luego la resolución que autoriza a la empresa en producción.", urlAvance4, urlAvance7)
	w("")
	w("## Decisiones del kit donde el set admite dos lecturas")
	w("")
	for _, d := range decisiones {
		w("- %s", d)
	}
	w("")
	w("## Casos")
	w("")
	w("| set | caso | tipo | folio | monto total | archivo |")
	w("|---|---|---|---|---|---|")
	for _, s := range m.Sets {
		for _, c := range s.Cases {
			w("| %s | %s | %d | %d | %s | `%s` |", s.Name, c.CaseID, c.TipoDTE, c.Folio, c.MontoTotal, c.File)
		}
	}
	return b.String()
}

// decisiones are the readings the kit chose where the set's text allows
// two, in the words of LEEME.md.
var decisiones = []string{
	"Cada documento del set lleva como primera referencia TpoDocRef SET, FolioRef el caso (`<atención>-<n>`) y RazonRef `CASO <atención>-<n>`; la boleta, CodRef SET y RazonRef `CASO-<n>`.",
	"Cada factura va a un receptor distinto (\"utilice RUT distintos para las distintas facturas\").",
	"Factura de compra (46): cada línea lleva el código de retención 15 (IVA retenido total, 19 %) y el indicador de agente retenedor (Retenedor/IndAgente R), y el total es el neto; sus notas, también.",
	"Exportación: las REFERENCIA del caso (DUS, AWB, MIC, RESOLUCION SNA) van con folio 1 y la fecha del documento; el servicio de hotel (el caso con NACIONALIDAD) lleva IndServicio 4 y la referencia 813 (pasaporte) del huésped; las mercaderías llevan los pesos y bultos en el bloque de Aduana (peso neto y bruto: la suma de las cantidades de las líneas, en la unidad que da el set; tara: una unidad por bulto, TOTAL BULTOS), y FLETE y SEGURO en Aduana y como recargos globales.",
	"Libro de Guías: la guía que el set da por facturada en el período se enlaza a la factura que la factura, que el kit emite (al mismo cliente, con las mismas líneas, refiriendo a la guía) en un envío aparte; la guía anulada va con Anulado 2 (anulada después de enviada).",
	"Consumo de Folios: el IVA de cada tipo es el neto total por la tasa (19 %, redondeo al peso), no la suma de los IVA de cada boleta, y el total es neto + IVA + exento.",
	"Simulación: todos sus documentos llevan la fecha del día en que se genera (una fecha de más de 3 días da el reparo DTE-1-650 y la simulación debe quedar con 0 reparos); genérela el día en que la sube.",
	"`007-boletas.csv` (la planilla de LibreDTE con el set de boletas anterior a 2020, `Folio;IndExe;NmbItem;QtyItem;UnmdItem;PrcItem;Anular;Rebajar`) no es un archivo del SII: sirve para ensayar. Cada Folio es una boleta (caso `<Folio>`), IndExe 1 un ítem exento, y los precios incluyen IVA. Anular 1 es una nota de crédito (61) que anula la boleta (CodRef 1, \"ANULA BOLETA\", todas sus líneas); Rebajar N es una nota de crédito que rebaja el ítem de esa fila en N % de su cantidad al precio de la boleta (CodRef 3, \"SE REBAJA EN UN N%\"; 40 de 5 unidades son 2), no en N unidades: así lo emite el ejemplo `examples/029-set_boleta.php` de LibreDTE/libredte-lib-core, de donde viene la planilla. Las notas van en un EnvioDTE aparte (un EnvioBOLETA solo lleva boletas) y a un receptor identificado (la boleta es a 66666666-6, que solo una boleta puede nombrar); cada línea afecta va como 1 unidad por su monto neto, round(cantidad × precio / 1,19), con la cantidad y el precio con IVA en su descripción (los precios de dte son pesos enteros y dte no tiene MntBruto), por lo que una nota que anula puede diferir en un peso del total de la boleta.",
	"Simulación: cubre cada tipo para el que la empresa tiene CAF (facturas, exenta, guía, notas de crédito y débito, factura de compra, exportación), excepto boletas (certificación aparte) y liquidación-factura.",
}

// leemeAvisos writes the warnings of the set file, the sets not generated
// and the folios skipped.
func leemeAvisos(w func(string, ...any), m *Manifest) {
	for _, l := range []struct {
		title, intro string
		items        []string
	}{
		{"Líneas del archivo de set que el kit no entendió", "El kit generó todos los casos que pudo leer y dejó de lado estas líneas. Léalas contra el texto del set y revise que el documento del caso cumpla lo que piden:", m.Advertencias},
		{"Sets no generados", "", m.NoGenerados},
		{"Folios ya usados", "", m.FoliosSaltados},
	} {
		if len(l.items) == 0 {
			continue
		}
		w("")
		w("### %s", l.title)
		w("")
		if l.intro != "" {
			w("%s", l.intro)
			w("")
		}
		for _, it := range l.items {
			w("- %s", it)
		}
	}
}

// leemeSimulacion is the LEEME.md of the simulación's folder.
func leemeSimulacion(m *Manifest) string {
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	dir, cert := m.carpeta(), m.certArgs()
	w("# Simulación de la certificación SII del emisor %s", m.RutEmisor)
	w("")
	w("Documentos como los de la operación real, sin la referencia al SET, en un solo envío, con fecha %s. Es el paso 4 de la guía de la carpeta del set de pruebas.", m.Fecha)
	leemeAvisos(w, m)
	w("")
	w("```sh")
	w("dtekit certificacion enviar --dir %s %s", dir, cert)
	w("dtekit certificacion estado --dir %s %s --esperar 10m", dir, cert)
	w("```")
	w("")
	w("| # | envío | archivo | track id | fecha | estado |")
	w("|---|---|---|---|---|---|")
	for i, u := range m.Uploads() {
		track, fecha, estado := estadoDe(u)
		w("| %d | %s | `%s` | %s | %s | %s |", i+1, u.Set, u.File, track, fecha, estado)
	}
	w("")
	w("Cuando quede EPR con 0 reparos y 0 rechazos, declare el avance de la simulación en %s con el track id y la fecha. Para las muestras impresas (paso 6) suba un PDF de cada tipo de `muestras/`.", urlAvance)
	w("")
	w("| documento | tipo | folio | monto total | archivo |")
	w("|---|---|---|---|---|")
	for _, s := range m.Sets {
		for _, c := range s.Cases {
			w("| %s | %d | %d | %s | `%s` |", c.CaseID, c.TipoDTE, c.Folio, c.MontoTotal, c.File)
		}
	}
	return b.String()
}

// LeemeBoletas returns the guide of the boleta certification, or "" when
// the folder has no boleta set: its own portal, one EnvioBOLETA and the
// RCOF through DTEUpload, the revision asked with the track id, the
// declaration (sii-wave3-notes §6.1 and §6.4).
func LeemeBoletas(m *Manifest) string {
	if !m.hasBoletas() {
		return ""
	}
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	dir, cert := m.carpeta(), m.certArgs()
	nBoletas := 0
	for _, s := range m.Sets {
		if s.Kind == string(SetBoleta) {
			nBoletas += len(s.Cases)
		}
	}
	w("# Certificación de boleta electrónica del emisor %s", m.RutEmisor)
	w("")
	w("La boleta se certifica aparte de la factura, en su propio portal y con menos pasos. El set es el mismo para todos (5 casos, sin número de atención).")
	w("")
	if m.hasBoletaNotas() {
		w("**Esta carpeta viene de `007-boletas.csv`**, una transcripción del set de boletas anterior a 2020 (la planilla de LibreDTE), no del set que entrega el portal: sirve para ensayar, no para certificar. Sus notas de crédito (columnas Anular y Rebajar) van en su propio envío (EnvioDTE), que `enviar` también sube y que no se declara: el set actual no las pide. Cómo lee el kit esas columnas está en las decisiones de `LEEME.md`.")
		w("")
		for _, s := range m.Sets {
			if s.Kind == string(SetBoletaNotas) && s.Envelope != "" {
				w("- `%s`: %d notas de crédito.", s.Envelope, len(s.Cases))
			}
		}
		w("")
	}
	w("1. Pida el set en %s (\"SET DE BOLETA ELECTRÓNICA AFECTA\"; pide un correo del proveedor de software). Esta carpeta ya tiene sus %d boletas.", urlBoletaSet, nBoletas)
	w("2. Suba el envío de boletas y la Consumo de Folios por DTEUpload (no por la API REST de boletas: el revisor del set no ve esos envíos):")
	w("")
	w("```sh")
	w("dtekit certificacion enviar --dir %s %s", dir, cert)
	w("dtekit certificacion estado --dir %s %s --esperar 10m", dir, cert)
	w("```")
	w("")
	w("| archivo | track id | fecha | estado |")
	w("|---|---|---|---|")
	for _, u := range m.Uploads() {
		if !strings.Contains(u.File, "EnvioBOLETA") && !u.RCOF {
			continue
		}
		track, fecha, estado := estadoDe(u)
		w("| `%s` | %s | %s | %s |", u.File, orDash(track), orDash(fecha), estado)
	}
	w("")
	w("   El envío de boletas debe quedar EPR con 0 reparos; la Consumo de Folios queda RPR con el reparo 250 (\"no es obligatorio desde agosto 2022\"), que la certificación acepta.")
	w("3. Pida la revisión en %s con el track id del envío de boletas. El SII responde V°B° o los reparos.", urlBoletaRev)
	var boletas []string
	for _, p := range m.Muestras {
		if strings.Contains(p, "-T39F") || strings.Contains(p, "-T41F") {
			boletas = append(boletas, p)
		}
	}
	w("4. Las muestras de las boletas imprimen bajo el timbre la dirección donde sus clientes consultan las boletas (`--url-boletas`), que debe funcionar y guardar las boletas 3 meses: %s.", strings.Join(quoteAll(boletas), ", "))
	w("5. Con el V°B°, firme la declaración de cumplimiento en %s.", urlBoletaBase)
	return b.String()
}

func quoteAll(s []string) []string {
	out := make([]string, len(s))
	for i, x := range s {
		out[i] = "`" + x + "`"
	}
	return out
}
