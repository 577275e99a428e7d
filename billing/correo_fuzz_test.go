package billing

import (
	"encoding/json"
	"net"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/dtekit/dtekit/api"
)

// FuzzCorreoSettings: the mail settings a company PUTs are outside input
// that leads to a connection. Whatever the JSON, reading and checking it
// (checkCorreo, the one check of PUT /empresa/correo, under the default
// policy and under one that allows loopback and any port) answers settings or
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
	strict := &MailConfig{}                                 // the operator's default
	open := &MailConfig{AllowLoopback: true, AnyPort: true} // tests and local trials
	f.Fuzz(func(t *testing.T, data []byte) {
		var in, in2 api.CorreoSettings
		if json.Unmarshal(data, &in) != nil {
			return
		}
		_ = json.Unmarshal(data, &in2)
		// Under the default policy, what is accepted names no loopback,
		// private or link-local address and only a mail port.
		if strict.checkCorreo(&in2) == nil {
			for name, srv := range map[string]*api.CorreoServidor{"smtp": in2.SMTP, "imap": in2.IMAP} {
				if srv == nil {
					continue
				}
				if ip := net.ParseIP(strings.Trim(srv.Host, "[]")); ip != nil && (ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsUnspecified()) {
					t.Fatalf("%s: the default policy accepted the host %q", name, srv.Host)
				}
				if !slices.Contains(DefaultMailPorts, srv.Port) {
					t.Fatalf("%s: the default policy accepted the port %d", name, srv.Port)
				}
				for _, v := range []string{srv.Usuario, srv.Password, srv.Carpeta, srv.CarpetaProcesados} {
					if strings.ContainsFunc(v, unicode.IsControl) {
						t.Fatalf("%s: accepted a control character in %q", name, v)
					}
				}
			}
		}
		if open.checkCorreo(&in) != nil {
			return
		}
		switch in.EnviarDTE {
		case api.EnviarAlAceptar, api.EnviarAlFirmar, api.EnviarNunca:
		default:
			t.Fatalf("accepted enviar_dte %q", in.EnviarDTE)
		}
		if in.AcuseAutomatico == nil {
			t.Fatal("acuse_automatico left unset")
		}
		if (in.SMTP != nil || in.IMAP != nil) && (in.Direccion == "" || len(in.Direccion) > 254) {
			t.Fatalf("accepted servers with the address %q", in.Direccion)
		}
		for name, srv := range map[string]*api.CorreoServidor{"smtp": in.SMTP, "imap": in.IMAP} {
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
