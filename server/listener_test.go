package server

import (
	"net"
	"net/http"
	"testing"
	"time"
)

// TestLimitConnections: with two connections open (idle, as a slow client
// or a flood would hold them), a third client is not served until one of
// them closes (issue 20, point 11).
func TestLimitConnections(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(204) })}
	go hs.Serve(LimitConnections(ln, 2))
	defer hs.Close()
	addr := ln.Addr().String()
	var idle []net.Conn
	for range 2 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		idle = append(idle, c)
	}
	time.Sleep(50 * time.Millisecond) // let the server accept both
	quick := &http.Client{Timeout: 300 * time.Millisecond, Transport: &http.Transport{DisableKeepAlives: true}}
	if res, err := quick.Get("http://" + addr + "/"); err == nil {
		res.Body.Close()
		t.Fatalf("a third connection was served (%d) while two were open", res.StatusCode)
	}
	idle[0].Close()
	patient := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	res, err := patient.Get("http://" + addr + "/")
	if err != nil {
		t.Fatalf("after one connection closed: %v", err)
	}
	res.Body.Close()
	if res.StatusCode != 204 {
		t.Errorf("status %d, want 204", res.StatusCode)
	}
}
