package importrules

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// roomsHeader opens the table of docs/architecture.md that lists the
// service's packages, its rooms among them.
const roomsHeader = "| package | what it holds | imports of its own family |"

// roomRow is a row of that table naming a room: its first cell is the
// room's path in backquotes.
var roomRow = regexp.MustCompile("^\\| `billing/internal/([^`]+)` \\|")

// documentedRooms returns the rooms the table of doc names, in its order,
// and false when doc has no such table.
func documentedRooms(doc string) ([]string, bool) {
	_, table, ok := strings.Cut(doc, roomsHeader+"\n")
	if !ok {
		return nil, false
	}
	var rooms []string
	for line := range strings.Lines(table) {
		line = strings.TrimRight(line, "\n")
		if !strings.HasPrefix(line, "|") {
			break // the table ends at its first line that is not a row
		}
		if m := roomRow.FindStringSubmatch(line); m != nil {
			rooms = append(rooms, m[1])
		}
	}
	return rooms, true
}

// roomsReport compares the rooms on disk with those the document's table
// and billing/doc.go name (as internal/<room>): rooms missing from the
// table or the package documentation, and rows of the table for rooms that do not exist.
func roomsReport(onDisk []string, doc, billingDoc string) (missing, undescribed, stale []string, ok bool) {
	table, ok := documentedRooms(doc)
	if !ok {
		return nil, nil, nil, false
	}
	for _, r := range onDisk {
		if !slices.Contains(table, r) {
			missing = append(missing, r)
		}
		if !regexp.MustCompile(`\binternal/` + regexp.QuoteMeta(r) + `\b`).MatchString(billingDoc) {
			undescribed = append(undescribed, r)
		}
	}
	for _, r := range table {
		if !slices.Contains(onDisk, r) {
			stale = append(stale, r)
		}
	}
	return missing, undescribed, stale, true
}

// TestRoomsAreDocumented: every directory under billing/internal is a
// room with its row in the rooms table of docs/architecture.md and its
// path (internal/<room>) in billing/doc.go, and the table names no room that is gone.
func TestRoomsAreDocumented(t *testing.T) {
	t.Parallel()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command finds the module: %v", err)
	}
	root := moduleRoot(t, goBin)
	entries, err := os.ReadDir(filepath.Join(root, "billing", "internal"))
	if err != nil {
		t.Fatal(err)
	}
	var rooms []string
	for _, e := range entries {
		if e.IsDir() {
			rooms = append(rooms, e.Name())
		}
	}
	if len(rooms) == 0 {
		t.Fatal("no directory under billing/internal: the check proves nothing")
	}
	doc, err := os.ReadFile(filepath.Join(root, "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	billingDoc, err := os.ReadFile(filepath.Join(root, "billing", "doc.go"))
	if err != nil {
		t.Fatal(err)
	}
	missing, undescribed, stale, ok := roomsReport(rooms, string(doc), string(billingDoc))
	if !ok {
		t.Fatalf("docs/architecture.md has no table opening with %q", roomsHeader)
	}
	for _, r := range missing {
		t.Errorf("billing/internal/%s has no row in the rooms table of docs/architecture.md: describe the room there", r)
	}
	for _, r := range undescribed {
		t.Errorf("billing/doc.go does not name the room %s: describe it there", r)
	}
	for _, r := range stale {
		t.Errorf("the rooms table of docs/architecture.md has a row for billing/internal/%s, which does not exist", r)
	}
	t.Logf("%d rooms checked against the table and the package documentation", len(rooms))
}

// TestRoomsReportCatchesGaps feeds roomsReport a made-up table and
// package documentation, so that the test above is known to fail when
// the module's do.
func TestRoomsReportCatchesGaps(t *testing.T) {
	t.Parallel()
	doc := "# house\n\n" + roomsHeader + "\n|---|---|---|\n" +
		"| `billing` | the face | every room |\n" +
		"| `billing/internal/outbox` | events | none |\n" +
		"| `billing/internal/gone` | a room removed since | none |\n" +
		"\n| `billing/internal/inbox` | a row of another table | none |\n"
	billingDoc := "// Package billing: internal/outbox records events; internal/mailer sends mail;\n// the inbox is not named by its path.\npackage billing\n"
	missing, undescribed, stale, ok := roomsReport([]string{"inbox", "mailer", "outbox"}, doc, billingDoc)
	if !ok {
		t.Fatal("the table was not found")
	}
	if want := []string{"inbox", "mailer"}; !slices.Equal(missing, want) {
		t.Errorf("missing %v, want %v", missing, want)
	}
	if want := []string{"inbox"}; !slices.Equal(undescribed, want) {
		t.Errorf("undescribed %v, want %v", undescribed, want)
	}
	if want := []string{"gone"}; !slices.Equal(stale, want) {
		t.Errorf("stale %v, want %v", stale, want)
	}
	if _, _, _, ok := roomsReport(nil, "# no table here\n", ""); ok {
		t.Error("a document without the table passed")
	}
}
