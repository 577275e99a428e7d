package oracle

import (
	"bytes"
	"encoding/xml"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// SharedXML returns every XML sample of the shared folder outside its
// schemas (the SII's official examples), by name: the seeds of a fuzz
// target that reads what the SII or a company sends.
func SharedXML(t testing.TB) map[string][]byte {
	t.Helper()
	root := filepath.Join(SharedDir(t), "sii")
	out := map[string][]byte{}
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && strings.HasPrefix(d.Name(), "schemas") {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.EqualFold(filepath.Ext(p), ".xml") {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(root, p)
			out[filepath.ToSlash(rel)] = b
		}
		return nil
	})
	if err != nil {
		t.Fatalf("oracle: reading the shared samples: %v", err)
	}
	if len(out) == 0 {
		missing(t, "no XML sample under %s", root)
	}
	return out
}

// Edit operations of EditXML.
const (
	EditText      = iota // replace the element's first text with the given text
	EditDelete           // remove the element, its content included
	EditDuplicate        // repeat the element right after itself
	EditRename           // rename the element (start and end tags)
	editOps
)

// EditXML returns doc with one structural edit, for fuzz targets that
// should reach past an XML parser: the element is the n-th start tag of
// doc (modulo their count), op (modulo the operations) is one of EditText,
// EditDelete, EditDuplicate or EditRename, and text the new text
// (escaped) or name. The result stays well-formed when doc is and the
// element's end tag is the first of its name after it (as in the SII's
// documents); doc is returned unchanged when it has no element.
func EditXML(doc []byte, n uint, op uint8, text string) []byte {
	var starts []int
	for i := 0; i+1 < len(doc); i++ {
		if doc[i] == '<' && (doc[i+1] >= 'A' && doc[i+1] <= 'Z' || doc[i+1] >= 'a' && doc[i+1] <= 'z') {
			starts = append(starts, i)
		}
	}
	if len(starts) == 0 {
		return doc
	}
	s := starts[int(n%uint(len(starts)))]
	gt := bytes.IndexByte(doc[s:], '>')
	if gt < 0 {
		return doc
	}
	gt += s
	name := doc[s+1 : gt]
	if i := bytes.IndexAny(name, " \t\r\n/"); i >= 0 {
		name = name[:i]
	}
	selfClosing := doc[gt-1] == '/'
	end := gt + 1 // just past the element
	if !selfClosing {
		closing := []byte("</" + string(name) + ">")
		j := bytes.Index(doc[gt:], closing)
		if j < 0 {
			return doc
		}
		end = gt + j + len(closing)
	}
	var esc bytes.Buffer
	_ = xml.EscapeText(&esc, []byte(text))
	out := make([]byte, 0, len(doc)+len(text)+end-s)
	switch op % editOps {
	case EditText:
		if selfClosing {
			out = append(append(append(out, doc[:gt-1]...), '>'), esc.Bytes()...)
			return append(append(append(out, "</"...), name...), append([]byte(">"), doc[gt+1:]...)...)
		}
		next := bytes.IndexByte(doc[gt+1:], '<') + gt + 1
		out = append(append(out, doc[:gt+1]...), esc.Bytes()...)
		return append(out, doc[next:]...)
	case EditDelete:
		return append(append(out, doc[:s]...), doc[end:]...)
	case EditDuplicate:
		return append(append(append(out, doc[:end]...), doc[s:end]...), doc[end:]...)
	default:
		newName := strings.Map(func(r rune) rune {
			if r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
				return r
			}
			return -1
		}, text)
		if newName == "" || newName[0] >= '0' && newName[0] <= '9' {
			newName = "X" + newName
		}
		el := slices.Clone(doc[s:end])
		el = append([]byte("<"+newName), el[1+len(name):]...)
		if !selfClosing {
			el = append(el[:len(el)-len(name)-3], "</"+newName+">"...)
		}
		return append(append(append(out, doc[:s]...), el...), doc[end:]...)
	}
}
