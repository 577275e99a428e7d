// Command vector reproduces the TED example of the SII's certification
// manual with the public API of packages caf and ted, as an ordinary
// program that sets no GODEBUG. It reads the vector file given as its only
// argument (../shared/sii/vectors/ted-instructivo.md), prints the TED it
// builds on standard output, and on standard error reports whether
// crypto/rsa itself accepts the 512-bit CAF key (it must not: the test that
// runs this program proves that the default minimum key size was in force).
package main

import (
	"crypto"
	"crypto/rsa"
	"crypto/sha1"
	"fmt"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/dtekit/dtekit/caf"
	"github.com/dtekit/dtekit/ted"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "vector:", err)
		os.Exit(1)
	}
}

func run() error {
	if len(os.Args) != 2 {
		return fmt.Errorf("usage: vector ted-instructivo.md")
	}
	md, err := os.ReadFile(os.Args[1])
	if err != nil {
		return err
	}
	blocks := regexp.MustCompile("(?s)```\n(.*?)\n```").FindAllStringSubmatch(string(md), -1)
	if len(blocks) < 2 {
		return fmt.Errorf("%s: expected the DD and key code blocks", os.Args[1])
	}
	dd, key := blocks[0][1], blocks[1][1]
	i, j := strings.Index(dd, "<CAF "), strings.Index(dd, "</CAF>")
	if i < 0 || j < i {
		return fmt.Errorf("no CAF element in the vector's DD")
	}
	file := "<AUTORIZACION>" + dd[i:j+len("</CAF>")] + "<RSASK>" + key + "</RSASK></AUTORIZACION>"
	c, err := caf.Parse([]byte(file))
	if err != nil {
		return err
	}
	santiago, err := time.LoadLocation("America/Santiago")
	if err != nil {
		return err
	}
	out, err := ted.Build(ted.DD{
		RE: "97975000-5", TD: 33, F: 27, FE: "2003-09-08",
		RR: "8414240-9", RSR: "JORGE GONZALEZ LTDA", MNT: "502946", IT1: "Cajon AFECTO",
		CAF: c, TSTED: time.Date(2003, 9, 8, 12, 28, 31, 0, santiago),
	}, nil)
	if err != nil {
		return err
	}
	h := sha1.Sum([]byte("x"))
	_, stdErr := rsa.SignPKCS1v15(nil, c.PrivateKey, crypto.SHA1, h[:])
	fmt.Fprintf(os.Stderr, "crypto/rsa accepts 512-bit keys: %v\n", stdErr == nil)
	_, err = os.Stdout.Write(out)
	return err
}
