package siitest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/sii"
)

// A fake that keeps its word across restarts ("dtekit serve --demo" runs
// one inside the process): Persist makes it write what it learns to a
// journal file and read it back when it starts again, so that track ids
// never repeat, an envelope keeps its documents and their review, and the
// registry of acceptances and claims still knows the documents and the
// events registered on them.
//
// The journal is a file of JSON lines, one fact each (an envelope given a
// track id, an event registered), appended and synced to disk before the
// answer that reports the fact is sent. A journal rather than a snapshot
// rewritten at every change: the fake's state only grows by such facts,
// so appending one costs the same however many came before, where a
// snapshot would be rewritten whole for every document a demo emits. A
// crash in the middle of an append leaves a last line without its end,
// which the next start drops (the answer it belonged to was never sent);
// a damaged line before the last is an error.
//
// What is not kept: the status queries counted per envelope (with
// Options.StepEvery the timeline goes on from the reception time anyway),
// seeds and tokens (a client authenticates again), scripts, faults and the
// request log (the test's own steering), SeedRCV's documents, and the
// certification reviewer's resolutions and approvals.

// journal is the open journal file.
type journal struct {
	path string
	file *os.File
	err  error // the first failed append; later facts are not written
}

// journalRecord is one line of the journal.
type journalRecord struct {
	Envelope *journalEnv   `json:"envelope,omitempty"`
	Event    *journalEvent `json:"event,omitempty"`
	// AEC and AECEnd are the registry of credit transfers' (rtc.go).
	AEC    *AECUpload  `json:"aec,omitempty"`
	AECEnd *journalAEC `json:"aec_end,omitempty"`
}

// journalEnv is an envelope as the journal keeps it: its documents are
// read again from Raw, their review results are kept in order.
type journalEnv struct {
	TrackID  string    `json:"track_id"`
	Company  string    `json:"company"`
	Sender   string    `json:"sender"`
	Boleta   bool      `json:"boleta,omitempty"`
	REST     bool      `json:"rest,omitempty"`
	Received time.Time `json:"received"`
	// Reviewed is Envelope.ReviewedAt: a review delay outlives a restart.
	Reviewed time.Time       `json:"reviewed_at,omitzero"`
	Final    string          `json:"final"`
	Steps    []string        `json:"steps"`
	Raw      []byte          `json:"raw"`
	Results  []journalResult `json:"results,omitempty"`
	Libro    *LibroReview    `json:"libro,omitempty"`
}

type journalResult struct {
	Result DocResult `json:"result"`
	Detail string    `json:"detail,omitempty"`
}

// journalEvent is an event registered on a document.
type journalEvent struct {
	Key   string       `json:"key"`
	Event sii.RCVEvent `json:"event"`
}

// Persist makes the fake keep its envelopes, track ids and registry events
// in the journal file at path (created 0600 if missing): what an earlier
// fake wrote there is read back first. Call it before Start. It returns
// an error when the journal cannot be read or opened, and refuses a
// journal damaged before its last line.
func (f *Fake) Persist(path string) error {
	data, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	good, err := f.replay(data)
	if err != nil {
		return fmt.Errorf("siitest: journal %s: %w", path, err)
	}
	file, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	// Drop a last line cut short by a crash, then append after the rest.
	if err := file.Truncate(int64(good)); err != nil {
		file.Close()
		return err
	}
	if _, err := file.Seek(int64(good), io.SeekStart); err != nil {
		file.Close()
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.journal != nil {
		f.journal.file.Close()
	}
	f.journal = &journal{path: path, file: file}
	return nil
}

// replay restores the facts of a journal and returns the length of its
// complete lines.
func (f *Fake) replay(data []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	good, line := 0, 0
	for good < len(data) {
		end := bytes.IndexByte(data[good:], '\n')
		if end < 0 {
			break // a last line cut short
		}
		line++
		var rec journalRecord
		if err := json.Unmarshal(data[good:good+end], &rec); err != nil {
			return 0, fmt.Errorf("line %d: %w", line, err)
		}
		if err := f.restore(rec); err != nil {
			return 0, fmt.Errorf("line %d: %w", line, err)
		}
		good += end + 1
	}
	return good, nil
}

// restore applies one fact. Call with f.mu held.
func (f *Fake) restore(rec journalRecord) error {
	if err := f.restoreRTC(rec); err != nil {
		return err
	}
	if ev := rec.Event; ev != nil {
		f.rcvEvents[ev.Key] = append(f.rcvEvents[ev.Key], ev.Event)
	}
	j := rec.Envelope
	if j == nil {
		return nil
	}
	n, err := strconv.ParseInt(j.TrackID, 10, 64)
	if err != nil || n <= 0 {
		return fmt.Errorf("track id %q", j.TrackID)
	}
	e := &Envelope{TrackID: j.TrackID, Company: j.Company, Sender: j.Sender, Boleta: j.Boleta, REST: j.REST, Received: j.Received,
		ReviewedAt: j.Reviewed, Final: j.Final, Steps: j.Steps, Raw: j.Raw, Libro: j.Libro}
	if j.Libro == nil && len(j.Results) > 0 {
		env, err := dte.ParseEnvio(j.Raw)
		if err != nil {
			return fmt.Errorf("envelope %s: %w", j.TrackID, err)
		}
		e.Docs = docsOf(env)
		if len(e.Docs) != len(j.Results) {
			return fmt.Errorf("envelope %s: %d documents, %d results", j.TrackID, len(e.Docs), len(j.Results))
		}
		for i, r := range j.Results {
			e.Docs[i].Result, e.Docs[i].Detail = r.Result, r.Detail
		}
	}
	if _, dup := f.byTrack[e.TrackID]; dup {
		return fmt.Errorf("track id %s twice", e.TrackID)
	}
	f.envelopes = append(f.envelopes, e)
	f.byTrack[e.TrackID] = e
	f.trackNext = max(f.trackNext, n)
	return nil
}

// journalEnvelope appends an envelope given its track id. Call with f.mu
// held.
func (f *Fake) journalEnvelope(e *Envelope) {
	if f.journal == nil {
		return
	}
	j := &journalEnv{TrackID: e.TrackID, Company: e.Company, Sender: e.Sender, Boleta: e.Boleta, REST: e.REST, Received: e.Received,
		Reviewed: e.ReviewedAt, Final: e.Final, Steps: e.Steps, Raw: e.Raw, Libro: e.Libro}
	for _, d := range e.Docs {
		j.Results = append(j.Results, journalResult{Result: d.Result, Detail: d.Detail})
	}
	f.journal.append(journalRecord{Envelope: j})
}

// journalEvent appends an event registered on the document key. Call
// with f.mu held.
func (f *Fake) journalEvent(key string, ev sii.RCVEvent) {
	if f.journal != nil {
		f.journal.append(journalRecord{Event: &journalEvent{Key: key, Event: ev}})
	}
}

// append writes one line and syncs it. After a failure the journal stops
// (a gap would make later lines lie); JournalErr reports it.
func (j *journal) append(rec journalRecord) {
	if j.err != nil {
		return
	}
	b, err := json.Marshal(rec)
	if err == nil {
		_, err = j.file.Write(append(b, '\n'))
	}
	if err == nil {
		err = j.file.Sync()
	}
	j.err = err
}

// JournalErr returns the error that stopped the journal, if any.
func (f *Fake) JournalErr() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.journal == nil {
		return nil
	}
	return f.journal.err
}

// closeJournal closes the journal file.
func (f *Fake) closeJournal() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.journal != nil {
		f.journal.file.Close()
		f.journal = nil
	}
}
