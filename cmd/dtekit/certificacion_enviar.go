package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/dtekit/dtekit/certificacion"
	"github.com/dtekit/dtekit/sii"
)

// Error codes of "dtekit certificacion enviar" and "estado".
const (
	codeUploadRefused = "UPLOAD_REFUSED" // the SII refused an envelope or libro at upload
	codeSIIPending    = "SII_PENDING"    // some uploads have no final state yet
	codeNotApproved   = "NOT_APPROVED"   // a final state other than EPR without reparos or rechazos, or LOK
)

const enviarUsage = `usage: dtekit certificacion enviar --dir DIR --cert CERT.p12 [--cert-password-file FILE]
                  [--env certificacion|produccion] [--url BASE] [--timeout 30s]

Uploads every envelope and libro of a folder written by "dtekit certificacion
generar", in the manifest's order (the sets' envelopes, then the libros and the
RCOF), to the SII of the certification environment, or to BASE (default
$DTEKIT_SII_URL, for example "dtekit sii fake"). Each track id is written into
DIR/manifest.json as soon as the SII gives it; a file that already has one is
not sent again, so a run stopped half-way is resumed by running it again. Then
run "dtekit certificacion estado --dir DIR".

A libro the SII refused (a final state other than LOK; for the RCOF, other
than EPR or RPR), or whose upload got no answer, is signed again with the
certificate as a new attempt and sent: the next FolioNotificacion no libro of
the folder used (the SII closes a libro's identity after one TOTAL), the
RCOF's next SecEnvio. The new file sits beside the old one (…-intento2.xml)
and manifest.json keeps the earlier attempts.

The certificate must be one the SII allows to send for the company (the
manifest's rut_emisor). On success the portal's table (set, número de atención,
file, track id, date, state) is printed. On failure the exit status is 1 with a
line and its code: FILE_UNREADABLE (the folder or its manifest), UPLOAD_REFUSED
(the SII's status and text), SII_AUTH_FAILED, SII_UNAVAILABLE,
CERTIFICATE_PASSWORD or INVALID_CERTIFICATE. A wrong command line exits 2.
`

const estadoUsage = `usage: dtekit certificacion estado --dir DIR --cert CERT.p12 [--cert-password-file FILE]
                  [--esperar 0s] [--intervalo 10s] [--env …] [--url BASE] [--timeout 30s]

Asks the SII for the state of every file "dtekit certificacion enviar" uploaded
from DIR whose state is not final yet, records each answer in
DIR/manifest.json, and prints the table the portal asks for when declaring
progress: set, número de atención, file, track id, date and state. --esperar
keeps asking every --intervalo until every state is final or that time is up.

The exit status is 0 when every file is final and approved (an envelope EPR
with 0 reparos and 0 rechazos, a libro LOK; the RCOF's RPR with reparo 250 is
what the SII answers every RCOF since 2022-08). Otherwise it is 1 with a line
and its code: SII_PENDING (some states are not final: ask again later),
NOT_APPROVED (a final state with reparos or rejections: read the SII's mail and
emit the case again), FILE_UNREADABLE, SII_AUTH_FAILED or SII_UNAVAILABLE. A
wrong command line exits 2.
`

// runCertificacionSII implements "dtekit certificacion enviar" and
// "estado".
func runCertificacionSII(ctx context.Context, env *cmdEnv, name string, args []string) int {
	cmd := "certificacion " + name
	usage := enviarUsage
	if name == "estado" {
		usage = estadoUsage
	}
	fs := newFlagSet(env, cmd)
	var conn siiConn
	defURL := ""
	if env.getenv != nil {
		defURL = env.getenv(siiURLEnv)
	}
	conn.define(fs, defURL)
	dir := fs.String("dir", "", "the folder written by dtekit certificacion generar")
	var esperar, intervalo *time.Duration
	if name == "estado" {
		esperar = fs.Duration("esperar", 0, "keep asking until every state is final, at most this long")
		intervalo = fs.Duration("intervalo", 10*time.Second, "pause between rounds of questions")
	}
	pos, code, ok := parseFlags(env, fs, usage, args, "dir", "cert")
	if !ok {
		return code
	}
	if len(pos) != 0 {
		return usageError(env, cmd, "unexpected arguments %q", pos)
	}
	if esperar != nil && (*esperar < 0 || *intervalo <= 0) {
		return usageError(env, cmd, "--esperar must not be negative and --intervalo must be positive")
	}
	if _, err := certificacion.ReadManifest(*dir); err != nil {
		return report(env, cmd, false, newError(codeFileUnreadable, "--dir "+*dir, err))
	}
	client, code, ok := conn.openClient(env, fs, cmd)
	if !ok {
		return code
	}
	failed := func(err error) int {
		code := codeSIIUnavailable
		var ae *sii.AuthError
		var re *certificacion.UploadRefusedError
		switch {
		case errors.As(err, &ae):
			code = codeSIIAuth
		case errors.As(err, &re):
			code = codeUploadRefused
		case !sii.IsRetryable(err):
			code = codeFileUnreadable
		}
		return report(env, cmd, false, newError(code, "--dir "+*dir, err))
	}
	var (
		m   *certificacion.Manifest
		err error
	)
	if name == "enviar" {
		m, err = certificacion.Enviar(ctx, client, *dir, nil)
	} else {
		rounds := 1
		if *esperar > 0 {
			rounds += int(*esperar / *intervalo)
		}
		m, err = certificacion.Estado(ctx, client, *dir, certificacion.Poll{Interval: *intervalo, Rounds: rounds})
	}
	if m != nil {
		fmt.Fprint(env.stdout, certificacion.Tabla(m))
	}
	if err != nil {
		return failed(err)
	}
	if name == "estado" {
		var pending, bad []string
		for _, u := range m.Uploads() {
			e := *u.Envio
			switch {
			case e == nil || !e.Final:
				pending = append(pending, u.File)
			case !u.Aprobado():
				bad = append(bad, fmt.Sprintf("%s (%s)", u.File, e.Estado))
			}
		}
		switch {
		case len(bad) > 0:
			return report(env, cmd, false, newError(codeNotApproved, "--dir "+*dir, fmt.Errorf("not approved: %s", strings.Join(bad, ", "))))
		case len(pending) > 0:
			return report(env, cmd, false, newError(codeSIIPending, "--dir "+*dir, fmt.Errorf("no final state yet for %s; ask again later", strings.Join(pending, ", "))))
		}
	}
	return exitOK
}
