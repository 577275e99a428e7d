package server

import (
	"context"
	"strings"
	"testing"

	"github.com/dtekit/dtekit/billing/fault"
)

// Authenticate, which the console signs in with, resolves every
// credential the API accepts to the same principal, and refuses the
// others as unauthorized (never an internal error).
func TestAuthenticate(t *testing.T) {
	t.Parallel()
	f := newFixture(t, billingtestSQLite(t), RateLimit{PerSecond: -1})
	ctx := context.Background()
	for _, c := range []struct {
		cred                   string
		empresa                string
		write, admin, operator bool
	}{
		{f.A.writeKey, f.A.id, true, false, false}, {f.A.readKey, f.A.id, false, false, false},
		{f.A.adminTok, f.A.id, true, true, false}, {f.A.userTok, f.A.id, true, false, false}, {f.B.readKey, f.B.id, false, false, false},
		// The operator's token is an admin of its company and the operator.
		{f.A.operTok, f.A.id, true, true, true},
	} {
		p, err := f.srv.Authenticate(ctx, c.cred)
		if err != nil || p.EmpresaID != c.empresa || p.Write != c.write || p.Admin != c.admin || p.Operator != c.operator {
			t.Errorf("%.12s…: %+v %v", c.cred, p, err)
		}
	}
	for _, bad := range []string{"", "dtk_nope", "no-es-nada", f.A.adminTok + "x", strings.Repeat("a", maxCredentialLen+1)} {
		if p, err := f.srv.Authenticate(ctx, bad); p != nil || fault.KindOf(err) != fault.KindUnauthorized {
			t.Errorf("%.20q: %+v %v, want unauthorized", bad, p, err)
		}
	}
}
