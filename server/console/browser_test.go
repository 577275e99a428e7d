package console

import "testing"

func (f *fixture) testBrowser(t *testing.T) { t.Skip("not yet") }
