package console

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/hookfan/hookfan/infra/ops/operator"
	"github.com/hookfan/hookfan/shared/dedupe"
	"github.com/hookfan/hookfan/shared/pausing"
)

// EventsPage is how many events a page of the events view lists.
const EventsPage = 50

// route dispatches a signed-in request.
func (s *Server) route(w http.ResponseWriter, r *http.Request, sess *session) {
	p := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	post := r.Method == http.MethodPost
	switch {
	case r.URL.Path == "/" && !post:
		s.lanesPage(w, r, sess)
	case len(p) == 2 && p[0] == "lanes" && !post:
		s.lanePage(w, r, sess, p[1])
	case len(p) == 3 && p[0] == "lanes" && post:
		s.laneAction(w, r, sess, p[1], p[2])
	case r.URL.Path == "/events" && !post:
		s.eventsPage(w, r, sess)
	case len(p) == 2 && p[0] == "events" && !post:
		s.eventPage(w, r, sess, p[1])
	case len(p) == 3 && p[0] == "events" && p[2] == "replay" && post:
		s.replayOne(w, r, sess, p[1])
	case r.URL.Path == "/reconcile" && !post:
		s.reconcilePage(w, r, sess)
	case r.URL.Path == "/actions" && !post:
		s.actionsPage(w, r, sess)
	case r.URL.Path == "/replay" && !post:
		s.replayPage(w, r, sess)
	case r.URL.Path == "/replay" && post:
		s.replayMany(w, r, sess)
	default:
		s.render(w, r, sess, http.StatusNotFound, "error", "Not found", errorView{Message: "There is no page at " + r.URL.Path + "."})
	}
}

// base is what every page's layout shows.
type base struct {
	Title, Where, Identity, CSRF string
	ReadOnly                     bool
	Flash                        []flash
	Nav                          string
	Now                          time.Time
}

// view is a page's data: the layout's and the page's own.
type view struct {
	base
	Page any
}

func (s *Server) render(w http.ResponseWriter, r *http.Request, sess *session, status int, page, title string, data any) {
	v := view{base: base{Title: title, Where: s.op.Resources.Where, Identity: s.identity, CSRF: sess.csrf, ReadOnly: s.readOnly,
		Flash: s.takeFlash(sess), Nav: page, Now: s.now()}, Page: data}
	var buf bytes.Buffer
	if err := s.pages[page].Execute(&buf, v); err != nil {
		slog.Error("console: render", "page", page, "error", err)
		http.Error(w, "the page could not be drawn: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		_, _ = w.Write(buf.Bytes())
	}
}

// fail shows an error page (the operator's error text, escaped).
func (s *Server) fail(w http.ResponseWriter, r *http.Request, sess *session, status int, err error) {
	s.render(w, r, sess, status, "error", "Error", errorView{Message: err.Error()})
}

type errorView struct{ Message string }

// laneRow is a lane as the lanes page shows it.
type laneRow struct {
	operator.LaneView
	Chart    chartView
	ChartErr string
	// FailureRate is the last hour's failed share, "" without attempts.
	FailureRate string
	OldestAge   string
}

func (s *Server) laneRow(ctx context.Context, v operator.LaneView) laneRow {
	row := laneRow{LaneView: v, OldestAge: "no data"}
	c, err := s.op.DeliveryChart(ctx, v.Destination)
	if err != nil {
		row.ChartErr = err.Error()
		return row
	}
	row.Chart = newChart(c)
	if rate, ok := c.FailureRate(); ok {
		row.FailureRate = fmt.Sprintf("%.0f%%", rate*100)
	}
	if c.HasOldestAge {
		row.OldestAge = c.OldestAge.String()
	}
	return row
}

func (s *Server) lanesPage(w http.ResponseWriter, r *http.Request, sess *session) {
	views, err := s.op.LaneViews(r.Context())
	if err != nil {
		s.fail(w, r, sess, http.StatusBadGateway, err)
		return
	}
	rows := make([]laneRow, len(views))
	for i, v := range views {
		rows[i] = s.laneRow(r.Context(), v)
	}
	s.render(w, r, sess, http.StatusOK, "lanes", "Lanes", rows)
}

// lanePageView is one lane's page.
type lanePageView struct {
	Lane    laneRow
	DLQ     operator.DLQPage
	DLQErr  string
	Actions []operator.Action
}

func (s *Server) lanePage(w http.ResponseWriter, r *http.Request, sess *session, destination string) {
	v, err := s.op.LaneView(r.Context(), destination)
	if err != nil {
		s.fail(w, r, sess, http.StatusNotFound, err)
		return
	}
	page := lanePageView{Lane: s.laneRow(r.Context(), v)}
	if page.DLQ, err = s.op.DLQPageView(r.Context(), destination, operator.DefaultDLQPage); err != nil {
		page.DLQErr = err.Error()
	}
	all, err := s.actions(r.Context())
	if err != nil {
		s.addFlash(sess, flash{Text: err.Error(), Failed: true})
	}
	for _, a := range all {
		if a.Destination == destination {
			page.Actions = append(page.Actions, a)
		}
	}
	s.render(w, r, sess, http.StatusOK, "lane", "Lane "+destination, page)
}

func (s *Server) reconcilePage(w http.ResponseWriter, r *http.Request, sess *session) {
	views, err := s.op.ReconcileViews(r.Context())
	if err != nil {
		s.fail(w, r, sess, http.StatusBadGateway, err)
		return
	}
	s.render(w, r, sess, http.StatusOK, "reconcile", "Reconciliation", views)
}

// actionsShown is how far back the actions page reaches.
const actionsShown = 7 * 24 * time.Hour

func (s *Server) actions(ctx context.Context) ([]operator.Action, error) {
	if s.op.Actions == nil {
		return nil, nil
	}
	return s.op.Actions.Since(ctx, s.now().Add(-actionsShown))
}

func (s *Server) actionsPage(w http.ResponseWriter, r *http.Request, sess *session) {
	all, err := s.actions(r.Context())
	if err != nil {
		s.fail(w, r, sess, http.StatusBadGateway, err)
		return
	}
	s.render(w, r, sess, http.StatusOK, "actions", "Actions", all)
}

// eventsView is the events page: its filter, and a page of events.
type eventsView struct {
	Source, Type, Destination, State string
	Since, Until                     string
	Lanes                            []operator.Lane
	States                           []dedupe.Status
	Events                           []operator.RecentEvent
	// InWindow counts the window's events from this page on; IndexItems
	// and RecordsRead are what the page read.
	InWindow, IndexItems, RecordsRead int
	// NoTimeIndex is operator.NoTimeIndex when the stack has no time
	// index and the window was found by a scan of the table; "" otherwise.
	NoTimeIndex       string
	FirstURL, NextURL string
	Paged             bool
	From, To          time.Time
	Error             string
}

var states = []dedupe.Status{dedupe.StatusInProgress, dedupe.StatusDelivered, dedupe.StatusFailed, dedupe.StatusDead, dedupe.StatusGone}

func (s *Server) eventsPage(w http.ResponseWriter, r *http.Request, sess *session) {
	q := r.URL.Query()
	v := eventsView{Source: q.Get("source"), Type: q.Get("type"), Destination: q.Get("destination"), State: q.Get("state"),
		Since: q.Get("since"), Until: q.Get("until"), Lanes: s.op.Resources.Lanes, States: states}
	if v.Since == "" {
		v.Since = "1h"
	}
	now := s.now()
	opt := operator.EventsOptions{Source: v.Source, Type: v.Type, Destination: v.Destination, State: dedupe.Status(v.State), Max: EventsPage, After: q.Get("after")}
	var err error
	if opt.Since, err = operator.ParseTime(v.Since, now); err == nil && v.Until != "" {
		opt.Until, err = operator.ParseTime(v.Until, now)
	}
	if err == nil && v.State != "" && !validState(v.State) {
		err = fmt.Errorf("state %q: use one of %v", v.State, states)
	}
	if err != nil {
		v.Error = err.Error()
		s.render(w, r, sess, http.StatusBadRequest, "events", "Events", v)
		return
	}
	v.From, v.To = opt.Since, opt.Until
	if v.To.IsZero() {
		v.To = now
	}
	if v.Destination != "" {
		if l, err := s.op.Resources.Lane(v.Destination); err == nil {
			v.Lanes = []operator.Lane{l}
		}
	}
	page, err := s.op.ListEvents(r.Context(), opt)
	if err != nil {
		v.Error = err.Error()
		s.render(w, r, sess, http.StatusBadGateway, "events", "Events", v)
		return
	}
	v.Events, v.InWindow, v.IndexItems, v.RecordsRead = page.Events, page.InWindow, page.IndexItems, page.RecordsRead
	if page.Scanned {
		v.NoTimeIndex = operator.NoTimeIndex
	}
	pageURL := func(after string) string {
		c := url.Values{}
		for k, vs := range q {
			c[k] = vs
		}
		c.Del("after")
		if after != "" {
			c.Set("after", after)
		}
		return "/events?" + c.Encode()
	}
	if opt.After != "" {
		v.Paged, v.FirstURL = true, pageURL("")
	}
	if page.Next != "" {
		v.NextURL = pageURL(page.Next)
	}
	s.render(w, r, sess, http.StatusOK, "events", "Events", v)
}

func validState(s string) bool {
	for _, st := range states {
		if string(st) == s {
			return true
		}
	}
	return false
}

// eventView is one event's page.
type eventView struct {
	Status operator.EventStatus
	Body   operator.Body
	// Shown is the body as shown: JSON indented, text as is, other bytes
	// as a hex dump; Kind says which.
	Shown, Kind string
	Lanes       []operator.Lane
}

func (s *Server) eventPage(w http.ResponseWriter, r *http.Request, sess *session, id string) {
	st, body, err := s.op.EventView(r.Context(), id)
	if errors.Is(err, operator.ErrNoSuchEvent) || errors.Is(err, operator.ErrUsage) {
		s.fail(w, r, sess, http.StatusNotFound, err)
		return
	}
	v := eventView{Status: st, Body: body, Lanes: s.op.Resources.Lanes}
	if err != nil {
		s.addFlash(sess, flash{Text: err.Error(), Failed: true})
	}
	v.Shown, v.Kind = showBody(body.Bytes)
	s.render(w, r, sess, http.StatusOK, "event", "Event "+st.ID, v)
}

// showBody renders a body for reading: JSON indented, UTF-8 text as it
// is, anything else as a hex dump. The template escapes every byte of it.
func showBody(b []byte) (shown, kind string) {
	if len(b) == 0 {
		return "", "empty"
	}
	var out bytes.Buffer
	if json.Valid(b) && json.Indent(&out, b, "", "  ") == nil {
		return out.String(), "JSON"
	}
	if (operator.Body{Bytes: b}).Text() {
		return string(b), "text"
	}
	return hex.Dump(b), fmt.Sprintf("binary, %d bytes", len(b))
}

// replayView is the replay-many page: the filter, and a dry run's count.
type replayView struct {
	Destination, Since, Until, Source, Type string
	Lanes                                   []operator.Lane
	// RunSince and RunUntil are the counted window, fixed: the replay
	// the count confirms covers the same events.
	RunSince, RunUntil string
	Counted            bool
	Count              int
	Capped             bool
	Cap                int
	Error              string
}

// HardCap is the most events one replay-many sends.
const HardCap = 1000

func (s *Server) replayPage(w http.ResponseWriter, r *http.Request, sess *session) {
	q := r.URL.Query()
	v := replayView{Destination: q.Get("destination"), Since: q.Get("since"), Until: q.Get("until"), Source: q.Get("source"), Type: q.Get("type"),
		Lanes: s.op.Resources.Lanes, Cap: HardCap}
	if q.Get("count") == "" {
		s.render(w, r, sess, http.StatusOK, "replay", "Replay many", v)
		return
	}
	opt, err := s.replayOptions(v.Destination, v.Since, v.Until, v.Source, v.Type)
	if err == nil {
		opt.DryRun, opt.Max = true, HardCap+1
		if opt.Until.IsZero() {
			opt.Until = s.now()
		}
		v.RunSince, v.RunUntil = opt.Since.UTC().Format(time.RFC3339Nano), opt.Until.UTC().Format(time.RFC3339Nano)
		quiet := *s.op
		quiet.Out, quiet.Progress = &bytes.Buffer{}, nil
		var res operator.ReplayResult
		res, err = quiet.Replay(r.Context(), opt)
		v.Counted, v.Count, v.Capped = err == nil, len(res.Events), res.Capped || len(res.Events) > HardCap
	}
	status := http.StatusOK
	if err != nil {
		v.Error, status = err.Error(), http.StatusBadRequest
	}
	s.render(w, r, sess, status, "replay", "Replay many", v)
}

func (s *Server) replayOptions(destination, since, until, source, typ string) (operator.ReplayOptions, error) {
	opt := operator.ReplayOptions{Destination: destination, Source: source, Type: typ}
	if destination == "" {
		return opt, errors.New("choose the destination to replay to")
	}
	if since == "" {
		return opt, errors.New("give the time the replay starts from (since)")
	}
	var err error
	if opt.Since, err = operator.ParseTime(since, s.now()); err != nil {
		return opt, err
	}
	if until != "" {
		if opt.Until, err = operator.ParseTime(until, s.now()); err != nil {
			return opt, err
		}
	}
	return opt, nil
}

// funcs are the templates' helpers.
var funcs = template.FuncMap{
	"iso": func(t time.Time) string { return t.UTC().Format(time.RFC3339) },
	"utc": func(t time.Time) string {
		if t.IsZero() {
			return "-"
		}
		return t.UTC().Format("2006-01-02 15:04:05 UTC")
	},
	"ms": func(d time.Duration) int64 { return d.Milliseconds() },
	// answerText is a receiver's answer as the body is shown (showBody).
	"answerText": func(b []byte) string {
		shown, _ := showBody(b)
		return shown
	},
	"stateClass": func(s dedupe.Status) string {
		switch s {
		case dedupe.StatusDelivered:
			return "ok"
		case dedupe.StatusFailed, dedupe.StatusInProgress:
			return "warn"
		case dedupe.StatusDead, dedupe.StatusGone:
			return "bad"
		}
		return "none"
	},
	"laneWord": laneWord,
	"answer":   operator.Answer,
	"record":   func(ev operator.RecentEvent, dest string) dedupe.Record { return ev.Records[dest] },
	"has": func(ev operator.RecentEvent, dest string) bool {
		_, ok := ev.Records[dest]
		return ok
	},
	"paused":   func(st pausing.State) bool { return st.IsPaused() },
	"sel":      func(a, b string) bool { return a == b },
	"add":      func(a, b int) int { return a + b },
	"stateStr": func(s dedupe.Status) string { return string(s) },
}

// laneWord is a lane's state in words.
func laneWord(st pausing.State) string {
	if st.IsPaused() {
		return "paused by the " + string(st.By)
	}
	return "active"
}
