package email

import (
	"archive/zip"
	"bytes"
	"errors"
	"fmt"
	"path"
	"strings"
)

// A zip entry that declares more than maxZipRatio times its compressed
// size, past minRatioBytes, is taken for a bomb before anything is inflated.
// Documents compress about 5 to 20 times; zeros, a thousand times.
const (
	maxZipRatio   = 200
	minRatioBytes = 1 << 20
)

// unzip replaces a zip attachment by its entries. An archive over any bound
// (entries, declared or actual uncompressed bytes, ratio) is refused whole
// with one warning: nothing is inflated past the bounds, and nothing of a
// refused archive is kept.
func (p *parser) unzip(partPath, name string, data []byte) {
	where := fmt.Sprintf("%s: zip %q", partName(partPath), name)
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		p.warnf("%s skipped: not a readable zip archive: %v", where, err)
		return
	}
	if len(zr.File) > p.lim.MaxZipEntries {
		p.warnf("%s refused: %d entries, more than %d", where, len(zr.File), p.lim.MaxZipEntries)
		return
	}
	budget := p.lim.MaxZipBytes - p.zipBytes
	var declared uint64
	for _, f := range zr.File {
		if f.UncompressedSize64 <= uint64(p.lim.MaxAttachmentBytes) {
			declared += f.UncompressedSize64 // larger ones are skipped below
		}
		if f.UncompressedSize64 > minRatioBytes && f.UncompressedSize64/max(f.CompressedSize64, 1) > maxZipRatio {
			p.warnf("%s refused as a zip bomb: entry %q declares %d bytes from %d compressed", where, cleanText(f.Name), f.UncompressedSize64, f.CompressedSize64)
			return
		}
	}
	if declared > uint64(budget) {
		p.warnf("%s refused as a zip bomb: it declares %d bytes uncompressed, more than the %d left of %d for this message's zips", where, declared, budget, p.lim.MaxZipBytes)
		return
	}
	var kept []Attachment
	var taken int64
	for _, f := range zr.File {
		if strings.HasSuffix(f.Name, "/") {
			continue // a directory
		}
		entry := entryName(f.Name)
		if entry == "" {
			p.warnf("%s: entry %q skipped: no usable name", where, cleanText(f.Name))
			continue
		}
		if f.Flags&0x1 != 0 {
			p.warnf("%s: entry %q skipped: encrypted", where, entry)
			continue
		}
		if len(p.msg.Attachments)+len(kept) >= p.lim.MaxAttachments {
			p.warnf("%s: entry %q skipped: more than %d attachments", where, entry, p.lim.MaxAttachments)
			continue
		}
		if f.UncompressedSize64 > uint64(p.lim.MaxAttachmentBytes) {
			p.warnf("%s: entry %q skipped: %d bytes uncompressed, more than %d", where, entry, f.UncompressedSize64, p.lim.MaxAttachmentBytes)
			continue
		}
		limit := min(p.lim.MaxAttachmentBytes, budget-taken)
		rc, err := f.Open()
		if err != nil {
			p.warnf("%s: entry %q skipped: %v", where, entry, err)
			continue
		}
		content, err := readAtMost(rc, limit)
		rc.Close()
		if errors.Is(err, errOverLimit) || errors.Is(err, zip.ErrFormat) {
			// The entry inflates past what it declared (archive/zip stops
			// there with ErrFormat) or past what is left: the archive
			// lies, so none of it is trusted.
			p.warnf("%s refused as a zip bomb: entry %q inflates past the %d bytes it declares or the %d it may take", where, entry, f.UncompressedSize64, limit)
			// What was inflated counts against the message's budget,
			// so many lying archives cannot inflate it many times over.
			p.zipBytes += taken + int64(len(content))
			return
		}
		if err != nil {
			p.warnf("%s: entry %q skipped: %v", where, entry, err)
			continue
		}
		taken += int64(len(content))
		kept = append(kept, Attachment{Filename: name + "/" + entry, ContentType: typeForName(entry), Data: content})
	}
	p.zipBytes += taken
	p.msg.Attachments = append(p.msg.Attachments, kept...)
}

// entryName cleans a zip entry's path: forward slashes, no "..", no leading
// slash, no control characters; "" when nothing is left.
func entryName(name string) string {
	name = cleanText(strings.ReplaceAll(name, `\`, "/"))
	name = strings.TrimPrefix(path.Clean("/"+name), "/")
	if name == "" || name == "." {
		return ""
	}
	return truncateUTF8(name, 255)
}
