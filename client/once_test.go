package client

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/dtekit/dtekit/api"
)

// TestCreationNotResentAfterNetworkError: a creation whose route does not
// read the Idempotency-Key (a customer) is sent once when the connection
// drops, since the server may have created it; a read over the same
// failure is retried.
func TestCreationNotResentAfterNetworkError(t *testing.T) {
	t.Parallel()
	var posts, gets atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := gets.Load()
		if r.Method == http.MethodPost {
			posts.Add(1)
		} else {
			n = gets.Add(1)
		}
		if r.Method == http.MethodPost || n == 1 {
			conn, _, _ := w.(http.Hijacker).Hijack()
			conn.Close()
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"id":"c1","rut":"76086428-5"}`))
	}))
	defer srv.Close()
	c, _ := newTestClient(t, srv, RetryPolicy{})
	var r Response
	if _, err := c.Catalog.CreateCliente(WithResponse(context.Background(), &r), api.ClienteInput{Rut: "76086428-5", RazonSocial: "Andes"}); err == nil {
		t.Fatal("the dropped creation succeeded")
	}
	if posts.Load() != 1 || r.Attempts != 1 {
		t.Errorf("the creation was sent %d times (%d attempts), want once", posts.Load(), r.Attempts)
	}
	got, err := c.Catalog.GetCliente(WithResponse(context.Background(), &r), "c1")
	if err != nil || got.ID != "c1" || gets.Load() != 2 || r.Attempts != 2 {
		t.Errorf("the read: %+v, %v after %d requests (%d attempts), want success at the second", got, err, gets.Load(), r.Attempts)
	}
}
