package billing

import (
	"encoding/json"
	"net"
	"strings"
	"testing"
)

// FuzzCorreoSettings: the mail settings a company PUTs are outside input
// that leads to a connection. Whatever the JSON, reading and checking it
// (checkCorreo, the one check of PUT /empresa/correo) answers settings or
// a refusal, never a panic, and settings it accepts are ones the mail
// room can use: an address with every server, each server a host without
// separators, a port from 1 to 65535, a known security mode ("none" only
// to a loopback host), bounded credentials and folders only on IMAP, and
// the defaults filled in.
func FuzzCorreoSettings(f *testing.F) {
	for _, seed := range []string{
		`{"direccion":"dte@empresa.cl","smtp":{"host":"smtp.empresa.cl","port":587,"usuario":"dte@empresa.cl","password":"x"},` +
			`"imap":{"host":"imap.empresa.cl","port":993,"seguridad":"tls","usuario":"dte","password":"y","carpeta":"INBOX","carpeta_procesados":"DTE"},` +
			`"enviar_dte":"firmado","acuse_automatico":false}`,
		`{"direccion":"a@b.cl","imap":{"host":"127.0.0.1","port":143,"seguridad":"none"}}`,
		`{"direccion":"a@b.cl","smtp":{"host":"10.0.0.1","port":25,"seguridad":"none"}}`,
		`{"smtp":{"host":"smtp.b.cl","port":0}}`,
		`{"direccion":"a@b.cl","smtp":{"host":"a b:25","port":65536,"carpeta":"INBOX"}}`,
		`{"direccion":"a@b.cl\r\nBcc: x@y.cl","imap":{"host":"[::1]","port":993,"usuario":"u\r\nA1 LOGOUT"}}`,
		`{"direccion":"","enviar_dte":"siempre"}`, `{}`, `null`, `[]`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var in CorreoSettings
		if json.Unmarshal(data, &in) != nil {
			return
		}
		if checkCorreo(&in) != nil {
			return
		}
		switch in.EnviarDTE {
		case EnviarAlAceptar, EnviarAlFirmar, EnviarNunca:
		default:
			t.Fatalf("accepted enviar_dte %q", in.EnviarDTE)
		}
		if in.AcuseAutomatico == nil {
			t.Fatal("acuse_automatico left unset")
		}
		if (in.SMTP != nil || in.IMAP != nil) && (in.Direccion == "" || len(in.Direccion) > 254) {
			t.Fatalf("accepted servers with the address %q", in.Direccion)
		}
		for name, srv := range map[string]*CorreoServidor{"smtp": in.SMTP, "imap": in.IMAP} {
			if srv == nil {
				continue
			}
			if srv.Host == "" || len(srv.Host) > 253 || srv.Port < 1 || srv.Port > 65535 {
				t.Fatalf("%s: accepted %q port %d", name, srv.Host, srv.Port)
			}
			if strings.ContainsAny(srv.Host, " /:@") {
				t.Fatalf("%s: accepted the host %q", name, srv.Host)
			}
			switch srv.Seguridad {
			case "tls", "starttls":
			case "none":
				if ip := net.ParseIP(srv.Host); (ip == nil || !ip.IsLoopback()) && srv.Host != "localhost" {
					t.Fatalf("%s: accepted no encryption to %q", name, srv.Host)
				}
			default:
				t.Fatalf("%s: accepted seguridad %q", name, srv.Seguridad)
			}
			if len(srv.Usuario) > 254 || len(srv.Password) > 1024 || len(srv.Carpeta) > 200 || len(srv.CarpetaProcesados) > 200 {
				t.Fatalf("%s: accepted fields over their bounds", name)
			}
			if name == "smtp" && (srv.Carpeta != "" || srv.CarpetaProcesados != "") {
				t.Fatal("smtp: accepted folders")
			}
		}
	})
}
