//go:build integration && linux

package integration

import (
	"context"
	"encoding/binary"
	"io"
	"net"
	"net/http"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// A receiver stamps each request with the time its bytes reached the
// receiving socket, as the kernel saw them (SO_TIMESTAMPNS), not the time
// the test process got round to running its handler. The two differ on a
// busy machine: every process here shares two cores, and a receiver
// stalled for 300 ms reads requests that arrived 200 ms apart within a few
// milliseconds of each other. A destination's rate limit sees the
// arrivals; so do the pacing tests.

// rxListener enables receive timestamps on every connection it accepts.
type rxListener struct{ net.Listener }

func (l rxListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return c, nil
	}
	raw, err := tc.SyscallConn()
	if err != nil {
		return c, nil
	}
	var serr error
	if err := raw.Control(func(fd uintptr) {
		serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1)
	}); err != nil || serr != nil {
		return c, nil
	}
	return &rxConn{TCPConn: tc, raw: raw}, nil
}

// rxConn reads with recvmsg and keeps the kernel's receive time of the
// last bytes read.
type rxConn struct {
	*net.TCPConn
	raw  syscall.RawConn
	last atomic.Int64 // unix nanoseconds; 0 before the first stamped read
	oob  [128]byte
}

func (c *rxConn) Read(p []byte) (int, error) {
	var (
		n, oobn int
		rerr    error
	)
	err := c.raw.Read(func(fd uintptr) bool {
		n, oobn, _, _, rerr = unix.Recvmsg(int(fd), p, c.oob[:], 0)
		return rerr != unix.EAGAIN
	})
	if err == nil {
		err = rerr
	}
	if err != nil {
		return 0, err
	}
	if n == 0 && len(p) > 0 {
		return 0, io.EOF
	}
	if msgs, perr := unix.ParseSocketControlMessage(c.oob[:oobn]); perr == nil {
		for _, m := range msgs {
			// A struct timespec of two 64-bit words on the 64-bit
			// platforms the tests run on.
			if m.Header.Level == unix.SOL_SOCKET && m.Header.Type == unix.SCM_TIMESTAMPNS && len(m.Data) >= 16 {
				sec, nsec := binary.NativeEndian.Uint64(m.Data[0:]), binary.NativeEndian.Uint64(m.Data[8:])
				c.last.Store(int64(sec)*1e9 + int64(nsec))
			}
		}
	}
	return n, nil
}

type rxConnKey struct{}

// stampArrivals makes srv's listener stamp arrivals (before Start).
func stampArrivals(srv *http.Server, l net.Listener) net.Listener {
	srv.ConnContext = func(ctx context.Context, c net.Conn) context.Context {
		if rc, ok := c.(*rxConn); ok {
			return context.WithValue(ctx, rxConnKey{}, rc)
		}
		return ctx
	}
	return rxListener{l}
}

// arrival is when r's bytes reached the receiving socket: the kernel's
// stamp of the last segment read before its handler ran, or now when the
// connection keeps none.
func arrival(r *http.Request) time.Time {
	if c, ok := r.Context().Value(rxConnKey{}).(*rxConn); ok {
		if ns := c.last.Load(); ns != 0 {
			return time.Unix(0, ns)
		}
	}
	return time.Now()
}
