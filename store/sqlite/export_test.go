package sqlite

import "os"

// WholePagesForTest runs Open's page-count check on the file at path.
func WholePagesForTest(path string) error {
	info, err := os.Stat(path)
	if err != nil {
		return err
	}
	return wholePages(path, info.Size())
}
