package sii

import (
	"fmt"
	"net/url"
	"strings"
)

// Environment names one of the SII's two environments.
type Environment string

// The SII's environments.
const (
	// Certificacion is the test environment (maullin, apicert, pangal).
	Certificacion Environment = "certificacion"
	// Produccion is the real one (palena, api, rahue).
	Produccion Environment = "produccion"
)

// Endpoints holds the base URLs (scheme and host, optionally a path prefix,
// no trailing slash needed) of the SII services. The paths of each service
// are fixed by the protocol and appended by the client.
type Endpoints struct {
	// Classic serves CrSeed.jws, GetTokenFromSeed.jws, QueryEstUp.jws,
	// QueryEstDte.jws and services/QueryEstDteAv under /DTEWS.
	Classic string
	// Upload serves /cgi_dte/UPL/DTEUpload (the same host as Classic at
	// the SII).
	Upload string
	// BoletaAPI serves the boleta seed, token and status calls under
	// /recursos/v1.
	BoletaAPI string
	// BoletaUpload serves the boleta upload, /recursos/v1/boleta.electronica.envio.
	BoletaUpload string
	// RCV serves the registry of acceptances and claims
	// (registroreclamodteservice), under PathRCVCert in certificación and
	// PathRCV in producción (ws2.sii.cl and ws1.sii.cl at the SII).
	RCV string
	// RCVAuth serves the seed and token services (CrSeed.jws,
	// GetTokenFromSeed.jws under /DTEWS) whose token the RCV accepts. At
	// the SII it is palena.sii.cl in both environments: the certification
	// registry has refused certification tokens since about 2021 (a
	// third-party finding, LibreDTE issue #72, not the SII's manual).
	RCVAuth string
}

// EndpointsFor returns the SII's own addresses for env.
func EndpointsFor(env Environment) (Endpoints, error) {
	switch env {
	case Certificacion:
		return Endpoints{
			Classic:      "https://maullin.sii.cl",
			Upload:       "https://maullin.sii.cl",
			BoletaAPI:    "https://apicert.sii.cl",
			BoletaUpload: "https://pangal.sii.cl",
			RCV:          "https://ws2.sii.cl",
			RCVAuth:      "https://palena.sii.cl",
		}, nil
	case Produccion:
		return Endpoints{
			Classic:      "https://palena.sii.cl",
			Upload:       "https://palena.sii.cl",
			BoletaAPI:    "https://api.sii.cl",
			BoletaUpload: "https://rahue.sii.cl",
			RCV:          "https://ws1.sii.cl",
			RCVAuth:      "https://palena.sii.cl",
		}, nil
	}
	return Endpoints{}, fmt.Errorf("sii: unknown environment %q (want %q or %q)", env, Certificacion, Produccion)
}

// SingleHost returns Endpoints that send every service to one base URL, as
// a test server such as sii/siitest's fake serves them.
func SingleHost(base string) Endpoints {
	return Endpoints{Classic: base, Upload: base, BoletaAPI: base, BoletaUpload: base, RCV: base, RCVAuth: base}
}

// Service paths, fixed by the protocol.
const (
	PathSeed        = "/DTEWS/CrSeed.jws"
	PathToken       = "/DTEWS/GetTokenFromSeed.jws"
	PathEstUp       = "/DTEWS/QueryEstUp.jws"
	PathEstDte      = "/DTEWS/QueryEstDte.jws"
	PathEstDteAv    = "/DTEWS/services/QueryEstDteAv"
	PathUpload      = "/cgi_dte/UPL/DTEUpload"
	PathBoletaSeed  = "/recursos/v1/boleta.electronica.semilla"
	PathBoletaToken = "/recursos/v1/boleta.electronica.token"
	PathBoletaEnvio = "/recursos/v1/boleta.electronica.envio"
	PathBoletaDTE   = "/recursos/v1/boleta.electronica"
	// PathRCV and PathRCVCert are the registry of acceptances and claims
	// in producción and certificación.
	PathRCV     = "/WSREGISTRORECLAMODTE/registroreclamodteservice"
	PathRCVCert = "/WSREGISTRORECLAMODTECERT/registroreclamodteservice"
)

// withDefaults fills empty fields from def and checks every URL.
func (e Endpoints) withDefaults(def Endpoints) (Endpoints, error) {
	fill := func(name string, v *string, d string) error {
		if *v == "" {
			*v = d
		}
		u, err := url.Parse(*v)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("sii: Endpoints.%s %q is not an http(s) base URL", name, *v)
		}
		*v = strings.TrimRight(*v, "/")
		return nil
	}
	for _, f := range []struct {
		name string
		v    *string
		d    string
	}{{"Classic", &e.Classic, def.Classic}, {"Upload", &e.Upload, def.Upload},
		{"BoletaAPI", &e.BoletaAPI, def.BoletaAPI}, {"BoletaUpload", &e.BoletaUpload, def.BoletaUpload},
		{"RCV", &e.RCV, def.RCV}, {"RCVAuth", &e.RCVAuth, def.RCVAuth}} {
		if err := fill(f.name, f.v, f.d); err != nil {
			return Endpoints{}, err
		}
	}
	return e, nil
}
