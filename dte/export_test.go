package dte

// EnvioFastPath reports whether BuildEnvio reads data in one strict scan
// and steps over it when it digests the SetDTE.
func EnvioFastPath(data []byte) bool {
	var s envScan
	_, _, _, fast, err := s.document(data, DefaultSetID)
	return err == nil && fast
}
