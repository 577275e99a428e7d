package certificacion

// ParseManifest is parseManifest, for the fuzz target.
var ParseManifest = parseManifest
