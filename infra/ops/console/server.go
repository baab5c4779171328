// Package console is Hookfan's operator console (ops console): a web
// server on a loopback address that shows the stack's lanes, events and
// DLQs and acts on them (replay, redrive, pause, resume) through the same
// operator package as the ops command line. Its pages are server-rendered
// html/template with a small embedded stylesheet and script; nothing is
// loaded from elsewhere.
//
// It is locked to its operator: it listens on loopback only; it refuses a
// request whose Host is not a loopback name (DNS rebinding); the one-time
// token of the URL it prints is exchanged for an HttpOnly, SameSite=Strict
// session cookie; every action is a POST that must carry the page's Origin
// and the session's CSRF token; --read-only refuses every action; and
// every response carries a strict Content-Security-Policy (scripts and
// styles from the console itself only, no inline script).
package console

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/hookfan/hookfan/infra/ops/operator"
)

// CSP is the Content-Security-Policy of every response: nothing but the
// console's own script, stylesheet and images; no inline script, no
// plugins, no framing, forms posting to the console only.
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
	"form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// CookieName starts the session cookie's name, which ends with the
// console's port: browsers keep cookies by host, not port, so two consoles
// on one machine must not overwrite each other's.
const CookieName = "hookfan_console"

func cookieName(r *http.Request) string {
	_, port, _ := net.SplitHostPort(r.Host)
	return CookieName + "_" + port
}

// csrfField is the form field carrying the session's CSRF token.
const csrfField = "csrf"

// Options configure a console.
type Options struct {
	// Operator reads and acts on the stack (required).
	Operator *operator.Operator
	// ReadOnly refuses every action.
	ReadOnly bool
	// Identity is the operator's AWS identity, as actions are recorded
	// under it; New asks Operator.Identity when empty.
	Identity string
	// Now replaces the clock, for tests.
	Now func() time.Time
}

// Server is a console: an http.Handler.
type Server struct {
	op       *operator.Operator
	readOnly bool
	identity string
	now      func() time.Time
	pages    pages

	mu       sync.Mutex
	token    string // the one-time login token; "" once used
	sessions map[string]*session
}

// session is a logged-in browser.
type session struct {
	csrf  string
	flash []flash // what the last actions did, shown once on the next page
}

type flash struct {
	Text   string
	Failed bool
}

// New makes a console with a fresh one-time token (Token).
func New(ctx context.Context, o Options) (*Server, error) {
	if o.Operator == nil {
		return nil, errors.New("console: no operator")
	}
	s := &Server{op: o.Operator, readOnly: o.ReadOnly, identity: o.Identity, now: o.Now, token: randomToken(), sessions: map[string]*session{}}
	if s.now == nil {
		s.now = time.Now
	}
	if s.identity == "" {
		if o.Operator.Identity == nil {
			return nil, errors.New("console: no way to tell the operator's AWS identity, which every action is recorded under")
		}
		id, err := o.Operator.Identity(ctx)
		if err != nil {
			return nil, err
		}
		s.identity = id
	}
	var err error
	if s.pages, err = parsePages(); err != nil {
		return nil, err
	}
	return s, nil
}

// Token is the one-time token the printed URL carries.
func (s *Server) Token() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.token
}

// LoginURL is the URL to print for a console listening at addr.
func (s *Server) LoginURL(addr string) string {
	return "http://" + addr + "/login?token=" + url.QueryEscape(s.Token())
}

func randomToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // never fails (crypto/rand panics on an unusable source)
	return base64.RawURLEncoding.EncodeToString(b)
}

// CheckListen refuses a listen address that is not a loopback address
// (operator.CheckLoopback): the console is reachable from this machine only.
func CheckListen(addr string) error { return operator.CheckLoopback(addr) }

// loopbackHost reports whether a request's Host names this machine's
// loopback: a page of another site whose name resolves to 127.0.0.1 (DNS
// rebinding) sends its own name, and is refused.
func loopbackHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

// ServeHTTP applies the console's locks, then routes.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", CSP)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	// same-origin, not no-referrer: under no-referrer a browser sends a
	// form's POST with Origin "null", which the action check refuses.
	h.Set("Referrer-Policy", "same-origin")
	h.Set("Cache-Control", "no-store")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
	if !loopbackHost(r.Host) {
		http.Error(w, "refused: this console answers only to a loopback host name (localhost, 127.0.0.1, [::1]); a page that reached it under another name is refused (DNS rebinding)", http.StatusMisdirectedRequest)
		return
	}
	if strings.HasPrefix(r.URL.Path, "/assets/") {
		serveAsset(w, r)
		return
	}
	if r.URL.Path == "/login" {
		s.login(w, r)
		return
	}
	sess := s.session(r)
	if sess == nil {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(http.StatusUnauthorized)
		io.WriteString(w, "not signed in: open the URL ops console printed (its token works once; run ops console again for a new one)\n")
		return
	}
	switch r.Method {
	case http.MethodGet, http.MethodHead:
	case http.MethodPost:
		if err := s.checkAction(r, sess); err != nil {
			http.Error(w, "refused: "+err.Error(), http.StatusForbidden)
			return
		}
	default:
		w.Header().Set("Allow", "GET, HEAD, POST")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	s.route(w, r, sess)
}

// login exchanges the one-time token for a session cookie.
func (s *Server) login(w http.ResponseWriter, r *http.Request) {
	given := r.URL.Query().Get("token")
	s.mu.Lock()
	ok := s.token != "" && subtle.ConstantTimeCompare([]byte(given), []byte(s.token)) == 1
	var id string
	if ok {
		s.token = "" // once
		id = randomToken()
		s.sessions[id] = &session{csrf: randomToken()}
	}
	s.mu.Unlock()
	if !ok {
		http.Error(w, "refused: this sign-in link is wrong or was used already; run ops console again for a new one", http.StatusForbidden)
		return
	}
	http.SetCookie(w, &http.Cookie{Name: cookieName(r), Value: id, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

func (s *Server) session(r *http.Request) *session {
	c, err := r.Cookie(cookieName(r))
	if err != nil || c.Value == "" {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sessions[c.Value]
}

// checkAction admits a POST: from a page of this console (its Origin),
// carrying the session's CSRF token, and not on a read-only console.
func (s *Server) checkAction(r *http.Request, sess *session) error {
	if s.readOnly {
		return errors.New("this console is read-only (ops console --read-only): it takes no action")
	}
	origin := r.Header.Get("Origin")
	if origin == "" || origin != "http://"+r.Host {
		return fmt.Errorf("an action must come from this console's own page (Origin %q is not http://%s)", origin, r.Host)
	}
	r.Body = http.MaxBytesReader(nil, r.Body, 64<<10)
	if err := r.ParseForm(); err != nil {
		return fmt.Errorf("unreadable form: %v", err)
	}
	if subtle.ConstantTimeCompare([]byte(r.PostForm.Get(csrfField)), []byte(sess.csrf)) != 1 {
		return errors.New("the form's CSRF token is missing or wrong (reload the page and try again)")
	}
	return nil
}

func (s *Server) addFlash(sess *session, f flash) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sess.flash = append(sess.flash, f)
}

func (s *Server) takeFlash(sess *session) []flash {
	s.mu.Lock()
	defer s.mu.Unlock()
	f := sess.flash
	sess.flash = nil
	return f
}

// Serve listens on addr (a loopback address: CheckListen), prints the
// sign-in URL to out, and serves until ctx ends.
func (s *Server) Serve(ctx context.Context, addr string, out io.Writer) error {
	if err := CheckListen(addr); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", addr, err)
	}
	srv := &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	mode := ""
	if s.readOnly {
		mode = " (read-only)"
	}
	fmt.Fprintf(out, "console of %s%s as %s\nopen: %s\n(the link works once; Ctrl-C stops the console)\n", s.op.Resources.Where, mode, s.identity, s.LoginURL(ln.Addr().String()))
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		shut, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		return srv.Shutdown(shut)
	}
}

// Run is the ops console command (operator.ConsoleFunc): a console on
// listen, its URL printed to out, until ctx ends.
func Run(ctx context.Context, op *operator.Operator, listen string, readOnly bool, out io.Writer) error {
	s, err := New(ctx, Options{Operator: op, ReadOnly: readOnly})
	if err != nil {
		return err
	}
	return s.Serve(ctx, listen, out)
}
