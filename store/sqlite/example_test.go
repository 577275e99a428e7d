package sqlite_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/store"
	"github.com/dtekit/dtekit/store/sqlite"
)

// sendArgs is a background job: submit one document.
type sendArgs struct {
	EmpresaID string `json:"empresa_id"`
	DTEID     string `json:"dte_id"`
}

func (sendArgs) Kind() string { return "example.send" }

// Open a store, take a folio and record a document in one transaction
// together with the job that follows it, then let the runner work the job.
func Example() {
	dir, err := os.MkdirTemp("", "dtekit-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()
	s, err := sqlite.Open(ctx, filepath.Join(dir, sqlite.FileName), &sqlite.Options{
		Jobs: store.JobsConfig{PollInterval: 50 * time.Millisecond},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()

	sent := make(chan string, 1)
	s.Jobs().Register(store.Worker{
		Kind:  sendArgs{}.Kind(),
		Retry: []time.Duration{time.Second, 10 * time.Second, time.Minute},
		Work: func(ctx context.Context, job *store.Job) error {
			args, err := store.DecodeArgs[sendArgs](job)
			if err != nil {
				return err
			}
			d, err := s.GetDTE(ctx, args.EmpresaID, args.DTEID)
			if err != nil {
				return err
			}
			sent <- fmt.Sprintf("sending tipo %d folio %d", d.TipoDTE, d.Folio)
			return nil
		},
	})

	e := &store.Empresa{Rut: "76086428-5", RazonSocial: "Ejemplo SpA", Ambiente: "certificacion"}
	err = s.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		if err := tx.InsertEmpresa(ctx, e); err != nil {
			return err
		}
		return tx.InsertCAF(ctx, &store.CAF{EmpresaID: e.ID, TipoDTE: 33, FolioDesde: 1, FolioHasta: 100, Ambiente: "certificacion", IsActive: true})
	})
	if err != nil {
		log.Fatal(err)
	}

	err = s.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		caf, folio, err := tx.TakeFolio(ctx, e.ID, 33)
		if err != nil {
			return err
		}
		d := &store.DTE{EmpresaID: e.ID, TipoDTE: 33, Folio: folio, CAFID: caf.ID, Estado: string(dte.EstadoFirmado)}
		if err := tx.InsertDTE(ctx, d); err != nil {
			return err
		}
		// Committed with the document, or not at all.
		_, err = tx.Enqueue(ctx, sendArgs{EmpresaID: e.ID, DTEID: d.ID}, &store.JobOpts{UniqueByArgs: true})
		return err
	})
	if err != nil {
		log.Fatal(err)
	}

	if err := s.Jobs().Start(ctx); err != nil {
		log.Fatal(err)
	}
	fmt.Println(<-sent)
	cafs, _ := s.ListCAFs(ctx, e.ID, 33)
	fmt.Println("folios left:", cafs[0].FoliosDisponibles())
	// Output:
	// sending tipo 33 folio 1
	// folios left: 99
}
