package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/internal/oracle"
)

// worstDTE is the largest list item the validation gate lets a client
// make: every line, reference, text and metadata member at its limit,
// each text made of '<', which a JSON response spells in 6 bytes
// (\u003c), the most any allowed character takes.
//
//   - detalle: 1000 lines on a boleta (EnvioBOLETA_v11.xsd, Detalle
//     maxOccurs 1000), 60 on the other types (DTE_v10.xsd); each line's
//     nombre has 80 characters (NmbItem: a longer one joins dsc_item, and
//     the two then share 1000) and its dsc_item 1000 (DscItem), unidad 4;
//   - referencias: 40 (Referencia maxOccurs) with a razon_ref of 200
//     characters (contract §8);
//   - metadata: dte.MaxMetadataKeys members named by dte.MaxMetadataKey
//     characters, each value a string of dte.MaxMetadataValue bytes of
//     JSON.
//
// A boleta so made is about 6.8 MB of JSON in a list response.
func worstDTE(tipo, lines int) []byte {
	lt := func(n int) string { return strings.Repeat("<", n) }
	type line struct {
		Nombre   string      `json:"nombre"`
		DscItem  string      `json:"dsc_item"`
		Cantidad json.Number `json:"cantidad"` // numbers, as the contract has them
		Unidad   string      `json:"unidad"`
		Precio   json.Number `json:"precio"`
	}
	type ref struct {
		TipoDocRef string `json:"tipo_doc_ref"`
		FolioRef   int    `json:"folio_ref"`
		FechaRef   string `json:"fecha_ref"`
		RazonRef   string `json:"razon_ref"`
	}
	req := map[string]any{
		"tipo_dte":  tipo,
		"auto_send": false,
		"receptor": map[string]string{"rut": "76086428-5", "razon_social": lt(dte.MaxRazonSocialReceptor),
			"giro": lt(dte.MaxGiroReceptor), "direccion": lt(dte.MaxDireccionReceptor), "comuna": lt(dte.MaxComunaReceptor),
			"ciudad": lt(dte.MaxCiudadReceptor)},
	}
	det := make([]line, lines)
	for i := range det {
		det[i] = line{Nombre: lt(80), DscItem: lt(1000), Cantidad: "1", Unidad: lt(4), Precio: "1000"}
	}
	req["detalle"] = det
	refs := make([]ref, 40)
	for i := range refs {
		refs[i] = ref{TipoDocRef: "SET", FolioRef: i + 1, FechaRef: "2026-01-02", RazonRef: lt(200)}
	}
	req["referencias"] = refs
	md := map[string]string{}
	for i := range dte.MaxMetadataKeys {
		// A string of n '<' takes 6n+2 bytes of JSON.
		md[lt(dte.MaxMetadataKey-2)+fmt.Sprintf("%02d", i)] = lt((dte.MaxMetadataValue - 2) / 6)
	}
	req["metadata"] = md
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // the request itself stays small: 1 byte a '<'
	if err := enc.Encode(req); err != nil {
		panic(err)
	}
	return buf.Bytes()
}

// procStatus reads a field of /proc/PID/status in bytes (VmRSS, VmHWM).
func procStatus(pid int, field string) (int64, error) {
	f, err := os.Open(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), field+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("no %s in /proc/%d/status", field, pid)
}

// listClient lists every document, 100 a page, following the cursors
// (argv: the list URL, the API key, the documents expected). Every page
// must answer 200 with some items and total_count as expected, and the
// pages must end after all the documents, no more pages than documents;
// it prints the number of pages, or a reason on standard error and exits
// 1.
const listClient = `
import json, sys, urllib.parse, urllib.request
url, key, want = sys.argv[1], sys.argv[2], int(sys.argv[3])
n, cursor, pages = 0, "", 0
while True:
    if pages > want:
        sys.exit("more pages than documents")
    u = url + ("&cursor=" + urllib.parse.quote(cursor) if cursor else "")
    req = urllib.request.Request(u, headers={"X-Api-Key": key})
    try:
        with urllib.request.urlopen(req, timeout=120) as res:
            if res.status != 200:
                sys.exit("page %d: status %d" % (pages, res.status))
            page = json.load(res)
    except Exception as e:
        sys.exit("page %d: %s" % (pages, e))
    if page.get("total_count") != want or not page.get("items"):
        sys.exit("page %d: %d items, total_count %s; want some of %d" % (pages, len(page.get("items") or []), page.get("total_count"), want))
    n += len(page["items"])
    pages += 1
    if page.get("next_cursor") is None:
        if n != want:
            sys.exit("%d documents over the cursors, want %d" % (n, want))
        print(pages)
        break
    cursor = page["next_cursor"]
`

// TestServeListMemory fills a served demo company with the largest
// documents the gate allows and lists them from several clients at once,
// 100 a page, following the cursors, while it watches the server
// process's memory: its peak stays under 300 MB, because a page stops at
// store.MaxPageBytes (issue 20, point 2: 12 documents of 8 MiB and three
// concurrent lists took a server from 36 MB to 2.1 GB).
func TestServeListMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary with 36 maximal documents; skipped with -short")
	}
	if runtime.GOOS != "linux" {
		t.Skip("reads the server's memory from /proc")
	}
	t.Parallel()
	const (
		rounds  = 12 // each: a boleta, then two facturas
		clients = 4
		peakMax = 300 << 20
	)
	python := oracle.Tool(t, "python3")
	bin := buildDtekit(t)
	data := filepath.Join(t.TempDir(), "data")
	p := startServe(t, bin, data)
	pid := p.cmd.Process.Pid
	demo := readDemoFile(t, data)
	api := p.base + "/api/v1/billing"
	client := &http.Client{Timeout: 120 * time.Second}

	// Newest first, the list meets two facturas (together just under the
	// page budget) and then a boleta: the largest page a budget allows.
	boleta, factura := worstDTE(int(dte.BoletaElectronica), 1000), worstDTE(int(dte.FacturaElectronica), 60)
	for r := 0; r < rounds; r++ {
		for _, body := range [][]byte{boleta, factura, factura} {
			if status, b := call(t, client, "POST", api+"/dte", demo.APIKey, body); status != http.StatusCreated {
				t.Fatalf("emit: %d %.300s", status, b)
			}
		}
	}
	filled, err := procStatus(pid, "VmHWM")
	if err != nil {
		t.Fatal(err)
	}
	// Measure the listing alone: writing 5 to clear_refs resets the peak
	// (Linux 4.0 and later); where it cannot, the peak includes the fill.
	resetErr := os.WriteFile(filepath.Join("/proc", strconv.Itoa(pid), "clear_refs"), []byte("5"), 0)
	before, _ := procStatus(pid, "VmRSS")

	var sampled int64
	stop := make(chan struct{})
	sampler := make(chan struct{})
	go func() {
		defer close(sampler)
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			if rss, err := procStatus(pid, "VmRSS"); err == nil && rss > sampled {
				sampled = rss
			}
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()

	want := 3 * rounds
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	pagesSeen := make([]int, clients)
	start := time.Now()
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// The client is python3, not this race-instrumented binary:
			// decoding the 4 × 90 MB of JSON here took 30 s of CPU.
			cmd := exec.Command(python, "-c", listClient, api+"/dte?limit=100", demo.APIKey, strconv.Itoa(want))
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil {
				errs <- fmt.Errorf("client %d: %v: %s", c, err, stderr.Bytes())
				return
			}
			if pagesSeen[c], err = strconv.Atoi(strings.TrimSpace(string(out))); err != nil {
				errs <- fmt.Errorf("client %d printed %q", c, out)
			}
		}()
	}
	wg.Wait()
	close(stop)
	<-sampler
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	peak, err := procStatus(pid, "VmHWM")
	if err != nil {
		t.Fatal(err)
	}
	if resetErr != nil {
		t.Logf("clear_refs: %v; the peak includes the fill", resetErr)
	}
	mb := func(n int64) string { return fmt.Sprintf("%.0f MB", float64(n)/(1<<20)) }
	t.Logf("%d documents (%d maximal boletas); %d clients listed them in %v, pages per client %v", want, rounds, clients,
		time.Since(start).Round(time.Millisecond), pagesSeen)
	t.Logf("server RSS: peak %s while filling, %s before listing; peak while listing %s (VmHWM), %s sampled",
		mb(filled), mb(before), mb(peak), mb(sampled))
	if peak > peakMax || sampled > peakMax {
		t.Errorf("the server's memory peaked at %s while listing (sampled %s); it must stay under %s", mb(peak), mb(sampled), mb(peakMax))
	}
	p.stop(t)
}
