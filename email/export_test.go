package email

import (
	"context"

	"github.com/emersion/go-imap/v2"
)

// BodyForTest runs the bounded body fetch of Unprocessed on its own, so that
// a test can give it a bound below a message's size, as a server that
// under-reports sizes would.
func (m *Mailbox) BodyForTest(ctx context.Context, uid uint32, maxSize int64) (raw []byte, tooLarge bool, err error) {
	err = m.op(ctx, "body for test", func(context.Context) error {
		var err error
		raw, err = m.body(imap.UID(uid), maxSize)
		if err == errOverLimit {
			tooLarge, err = true, nil
		}
		return err
	})
	return raw, tooLarge, err
}
