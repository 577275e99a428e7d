package main

import (
	"strings"
	"testing"
)

// TestCommandGroups: the four groups of commands answer alike. Each help
// form prints the group's usage on stdout (exit 0), no command prints it
// on stderr (exit 2), and an unknown command is named (exit 2). Before
// runGroup they disagreed: "dtekit intercambio help" was an unknown
// command, and only rcv took -help.
func TestCommandGroups(t *testing.T) {
	t.Parallel()
	for group, first := range map[string]string{
		"cesion":      "usage: dtekit cesion",
		"intercambio": "usage: dtekit intercambio",
		"rcv":         "usage: dtekit rcv",
		"sii":         "usage: dtekit sii",
	} {
		for _, h := range []string{"help", "-h", "-help", "--help"} {
			code, stdout, stderr := adminRun(t, group, h)
			if code != exitOK || !strings.HasPrefix(stdout, first) || stderr != "" {
				t.Errorf("dtekit %s %s: exit %d, stdout %.40q, stderr %q", group, h, code, stdout, stderr)
			}
		}
		if code, stdout, stderr := adminRun(t, group); code != exitUsage || stdout != "" || !strings.HasPrefix(stderr, first) {
			t.Errorf("dtekit %s: exit %d, stdout %q, stderr %.40q", group, code, stdout, stderr)
		}
		code, stdout, stderr := adminRun(t, group, "mandar")
		if want := "dtekit " + group + `: unknown command "mandar"` + "\n" + first; code != exitUsage || stdout != "" || !strings.HasPrefix(stderr, want) {
			t.Errorf("dtekit %s mandar: exit %d, stdout %q, stderr %.80q", group, code, stdout, stderr)
		}
	}
}
