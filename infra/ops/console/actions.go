package console

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/hookfan/hookfan/infra/ops/operator"
)

// actionTimeout bounds one action (a redrive of a long DLQ, a replay of
// many events); it runs on even if the browser goes away, so a redrive is
// never cut between its send and its delete by a closed tab.
const actionTimeout = 15 * time.Minute

// act runs one action through the operator, records it under the
// operator's identity, keeps what it said for the next page, and sends the
// browser to back (Post/Redirect/Get).
func (s *Server) act(w http.ResponseWriter, r *http.Request, sess *session, back string, a operator.Action, run func(ctx context.Context, op *operator.Operator) (string, error)) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), actionTimeout)
	defer cancel()
	var out bytes.Buffer
	op := *s.op
	op.Out, op.Progress = &out, &out
	summary, err := run(ctx, &op)
	a.At, a.Identity = s.now(), s.identity
	a.Result, a.Failed = summary, err != nil
	if err != nil {
		a.Result = err.Error()
	}
	s.addFlash(sess, flash{Text: a.Result, Failed: a.Failed})
	if s.op.Actions != nil {
		if err := s.op.Actions.Record(ctx, a); err != nil {
			s.addFlash(sess, flash{Text: "the action was done but could not be recorded: " + err.Error(), Failed: true})
		}
	}
	http.Redirect(w, r, back, http.StatusSeeOther)
}

// laneAction pauses, resumes or redrives a lane.
func (s *Server) laneAction(w http.ResponseWriter, r *http.Request, sess *session, destination, verb string) {
	if _, err := s.op.Resources.Lane(destination); err != nil {
		s.fail(w, r, sess, http.StatusNotFound, err)
		return
	}
	back := "/lanes/" + url.PathEscape(destination)
	reason := strings.TrimSpace(r.PostForm.Get("reason"))
	a := operator.Action{Kind: verb, Destination: destination, Detail: reason}
	switch verb {
	case "pause":
		if reason == "" {
			reason, a.Detail = "paused by an operator", "paused by an operator"
		}
		s.act(w, r, sess, back, a, func(ctx context.Context, op *operator.Operator) (string, error) {
			c, err := op.PauseLane(ctx, destination, reason+" ("+s.identity+")")
			if err != nil {
				return "", err
			}
			return fmt.Sprintf("pause %s: %s", destination, strings.TrimSpace(firstLine(op.Out))+changeNote(c.SwitchErr)), nil
		})
	case "resume":
		if reason == "" {
			reason, a.Detail = "resumed by an operator", "resumed by an operator"
		}
		s.act(w, r, sess, back, a, func(ctx context.Context, op *operator.Operator) (string, error) {
			if _, err := op.ResumeLane(ctx, destination, reason+" ("+s.identity+")"); err != nil {
				return "", err
			}
			return fmt.Sprintf("resume %s: %s", destination, strings.TrimSpace(firstLine(op.Out))), nil
		})
	case "redrive":
		a.Detail = "the whole DLQ"
		s.act(w, r, sess, back, a, func(ctx context.Context, op *operator.Operator) (string, error) {
			res, err := op.Redrive(ctx, destination, operator.RedriveOptions{Visibility: time.Minute, Wait: 30 * time.Second})
			summary := fmt.Sprintf("redrive %s (%s): moved %d message(s) to its queue; %d left in the DLQ", destination, res.Method, res.Moved, res.Left)
			if err != nil {
				return summary, fmt.Errorf("%s; then: %w", summary, err)
			}
			return summary, nil
		})
	default:
		s.render(w, r, sess, http.StatusNotFound, "error", "Not found", errorView{Message: "no action " + verb + " on a lane"})
	}
}

func changeNote(err error) string {
	if err != nil {
		return fmt.Sprintf(" (warning: its event source mapping is still on: %v)", err)
	}
	return ""
}

func firstLine(w interface{ Write([]byte) (int, error) }) string {
	b, ok := w.(*bytes.Buffer)
	if !ok {
		return ""
	}
	line, _, _ := strings.Cut(b.String(), "\n")
	return line
}

// replayOne replays one event to one destination.
func (s *Server) replayOne(w http.ResponseWriter, r *http.Request, sess *session, id string) {
	destination := r.PostForm.Get("destination")
	back := "/events/" + url.PathEscape(id)
	a := operator.Action{Kind: "replay", Destination: destination, Detail: "event " + id}
	s.act(w, r, sess, back, a, func(ctx context.Context, op *operator.Operator) (string, error) {
		res, err := op.Replay(ctx, operator.ReplayOptions{Destination: destination, Event: id})
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("replay %s: sent %s to %s", res.ID, id, destination), nil
	})
}

// replayMany replays the events a filter selects, at most the count the
// operator confirmed after a dry run, and never more than HardCap.
func (s *Server) replayMany(w http.ResponseWriter, r *http.Request, sess *session) {
	f := r.PostForm
	opt, err := s.replayOptions(f.Get("destination"), f.Get("since"), f.Get("until"), f.Get("source"), f.Get("type"))
	confirmed, cerr := strconv.Atoi(f.Get("max"))
	if err == nil && (cerr != nil || confirmed < 1 || confirmed > HardCap) {
		err = fmt.Errorf("confirm a count from a dry run first (1 to %d events)", HardCap)
	}
	back := "/replay?" + url.Values{"destination": {f.Get("destination")}, "since": {f.Get("since")}, "until": {f.Get("until")},
		"source": {f.Get("source")}, "type": {f.Get("type")}}.Encode()
	a := operator.Action{Kind: "replay-many", Destination: opt.Destination,
		Detail: fmt.Sprintf("since %s until %s source %q type %q, at most %d", f.Get("since"), orNow(f.Get("until")), opt.Source, opt.Type, confirmed)}
	s.act(w, r, sess, back, a, func(ctx context.Context, op *operator.Operator) (string, error) {
		if err != nil {
			return "", err
		}
		opt.Max = confirmed
		res, err := op.Replay(ctx, opt)
		summary := fmt.Sprintf("replay %s to %s: %d sent, %d not sent", res.ID, opt.Destination, len(res.Events), len(res.NotSent)+res.Unreadable)
		if res.Capped {
			summary += fmt.Sprintf("; stopped at the confirmed %d (more events are in range now)", confirmed)
		}
		if err != nil {
			return summary, fmt.Errorf("%s: %w", summary, err)
		}
		return summary, nil
	})
}

func orNow(s string) string {
	if s == "" {
		return "now"
	}
	return s
}
