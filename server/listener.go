package server

import (
	"net"
	"sync"
)

// DefaultMaxConnections is the cap on open connections LimitConnections
// is given by dtekit serve unless the operator chooses another.
const DefaultMaxConnections = 1024

// LimitConnections returns a listener that keeps at most n connections
// of l open at once: Accept waits for one to close before it accepts
// another, so a flood of idle connections queues in the kernel's backlog
// instead of taking a goroutine and a buffer each. An n below 1 means 1.
func LimitConnections(l net.Listener, n int) net.Listener {
	return &limitListener{Listener: l, slots: make(chan struct{}, max(1, n)), done: make(chan struct{})}
}

type limitListener struct {
	net.Listener
	slots     chan struct{}
	done      chan struct{}
	closeOnce sync.Once
}

func (l *limitListener) Accept() (net.Conn, error) {
	select {
	case l.slots <- struct{}{}:
	case <-l.done:
		return nil, net.ErrClosed
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.slots
		return nil, err
	}
	return &limitConn{Conn: c, release: func() { <-l.slots }}, nil
}

func (l *limitListener) Close() error {
	l.closeOnce.Do(func() { close(l.done) })
	return l.Listener.Close()
}

// limitConn gives its slot back once, when it is closed.
type limitConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}
