package billing

import (
	"context"
	"fmt"

	"github.com/dtekit/dtekit/caf"
	"github.com/dtekit/dtekit/internal/smallrsa"
	"github.com/dtekit/dtekit/store"
)

// A CAF's private key (RSASK) stamps the company's documents: whoever
// holds it can stamp unused folios. It is stored sealed under the
// key-encryption key, apart from the CAF's public document, the
// authorization the SII signed (the CAF element, copied into every TED).

// cafKeyAAD binds a sealed CAF key to its company and CAF.
func cafKeyAAD(empresaID, cafID string) []byte { return secretAAD("caf-key", empresaID, cafID) }

// sealCAF returns what the store keeps of a parsed CAF: its public
// document (the CAF element, without RSASK) and its private key sealed
// under k.
func sealCAF(k *Keyring, c *caf.CAF, empresaID, cafID string) (doc, sealedKey []byte, err error) {
	if c.PrivateKey == nil {
		return nil, nil, fmt.Errorf("billing: CAF %s of company %s: %w", cafID, empresaID, caf.ErrNoPrivateKey)
	}
	pem, err := smallrsa.MarshalPrivateKeyPEM(c.PrivateKey)
	if err != nil {
		return nil, nil, fmt.Errorf("billing: CAF %s of company %s: encoding its key: %w", cafID, empresaID, err)
	}
	if sealedKey, err = k.Seal(pem, cafKeyAAD(empresaID, cafID)); err != nil {
		return nil, nil, err
	}
	return []byte(c.ElementXML()), sealedKey, nil
}

// openCAF parses a stored CAF: its document and, when sealed apart, its
// private key, checked to be the key pair of the document's RSAPK. A CAF
// stored before keys were sealed holds the key in its document.
func openCAF(k *Keyring, rec *store.CAF) (*caf.CAF, error) {
	raw, ferr := cafBytes(string(rec.XML))
	if ferr != nil {
		return nil, ferr
	}
	c, err := caf.Parse(raw)
	if err != nil {
		return nil, err
	}
	if rec.SealedKey == nil {
		return c, nil
	}
	pem, err := k.Open(rec.SealedKey, cafKeyAAD(rec.EmpresaID, rec.ID))
	if err != nil {
		return nil, fmt.Errorf("opening the key of CAF %s: %w", rec.ID, err)
	}
	if c.PrivateKey, err = smallrsa.ParsePrivateKeyPEM(pem); err != nil {
		return nil, fmt.Errorf("reading the key of CAF %s: %w", rec.ID, err)
	}
	if err := c.CheckKeyPair(); err != nil {
		return nil, err
	}
	return c, nil
}

// sealCAFKeys seals the private key of every CAF stored with its key in
// its document (by a version that did not seal them), one CAF per
// transaction, so that an interrupted run leaves each CAF either as it was
// or sealed, and the next run finishes the others. A run that completes
// records it (store.SettingCAFKeysSealed), and later runs read nothing
// more. It reports how many CAFs it sealed; the caller then scrubs the
// replaced documents from the database's files.
func sealCAFKeys(ctx context.Context, st store.Store, k *Keyring) (int, error) {
	if _, done, err := st.Setting(ctx, store.SettingCAFKeysSealed); err != nil || done {
		return 0, err
	}
	n := 0
	for e, err := range store.Empresas(ctx, st) {
		if err != nil {
			return n, fmt.Errorf("billing: sealing CAF keys: %w", err)
		}
		recs, err := st.ListCAFs(ctx, e.ID, 0)
		if err != nil {
			return n, fmt.Errorf("billing: sealing CAF keys: %w", err)
		}
		for i := range recs {
			rec := &recs[i]
			if rec.SealedKey != nil {
				continue
			}
			c, err := openCAF(k, rec)
			if err != nil {
				return n, fmt.Errorf("billing: sealing the key of CAF %s of company %s: %w", rec.ID, e.ID, err)
			}
			if c.PrivateKey == nil {
				continue // nothing to seal (nor to stamp with)
			}
			if rec.XML, rec.SealedKey, err = sealCAF(k, c, rec.EmpresaID, rec.ID); err != nil {
				return n, err
			}
			if err := st.Write(ctx, func(ctx context.Context, tx store.Tx) error { return tx.SealCAF(ctx, rec) }); err != nil {
				return n, fmt.Errorf("billing: sealing the key of CAF %s of company %s: %w", rec.ID, e.ID, err)
			}
			n++
		}
	}
	err := st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		return tx.PutSetting(ctx, store.SettingCAFKeysSealed, "1")
	})
	if err != nil {
		return n, fmt.Errorf("billing: sealing CAF keys: %w", err)
	}
	return n, nil
}
