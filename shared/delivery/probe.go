package delivery

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/delivery/sender"
	"github.com/hookfan/hookfan/shared/metrics"
	"github.com/hookfan/hookfan/shared/pausing"
)

// The probe: a synthetic event, signed like every delivery, that a paused
// lane's destination must answer 2xx for the lane to resume. It is not an
// event of the queue, so probing never spends a real message's receives.
const (
	// ProbeType is the probe's hookfan-type and body "type".
	ProbeType = "hookfan.probe"
	// ProbeSource is the probe's hookfan-source.
	ProbeSource = "hookfan"
	// probeIDPrefix starts a probe's webhook-id: every probe has its own.
	probeIDPrefix = "probe_"
)

// ProbeBody is the JSON body of a probe.
type ProbeBody struct {
	Type        string    `json:"type"`
	Destination string    `json:"destination"`
	PausedAt    time.Time `json:"paused_at"`
	Reason      string    `json:"reason"`
	Probe       int       `json:"probe"`
}

// TickEvent is the scheduled event that drives a lane's probe: the
// EventBridge rule's constant input, {"hookfan": "tick"}.
type TickEvent struct {
	Hookfan string `json:"hookfan"`
}

// TickInput is TickEvent.Hookfan of a tick.
const TickInput = "tick"

// maxTickEvent bounds what is read as a tick: an SQS batch is far larger.
const maxTickEvent = 256

// Invoke is the deliver function's entry point: the SQS batches of its
// event source mapping, and the ticks of its probe schedule.
func (h *Handler) Invoke(ctx context.Context, payload json.RawMessage) (any, error) {
	if len(payload) <= maxTickEvent {
		var t TickEvent
		if json.Unmarshal(payload, &t) == nil && t.Hookfan == TickInput {
			return h.Tick(ctx)
		}
	}
	var ev events.SQSEvent
	if err := json.Unmarshal(payload, &ev); err != nil {
		return nil, fmt.Errorf("deliver: the event is neither an SQS batch nor a tick: %w", err)
	}
	return h.Handle(ctx, ev)
}

// TickReport is what a tick answers: the lane's mode after it, and the
// probe's outcome when one was sent.
type TickReport struct {
	Destination string `json:"destination"`
	Mode        string `json:"mode"`
	ProbeStatus int    `json:"probe_status,omitempty"`
	Change      string `json:"change,omitempty"`
}

// ModeUnknown is a tick report's mode when the lane's state could not be
// read.
const ModeUnknown = "UNKNOWN"

// ErrNoPause means a tick reached a lane that does not pause.
var ErrNoPause = errors.New("the destination has no pause settings")

// Tick runs the lane's scheduled step (pausing.Controller.Tick): a paused lane gets
// one probe and resumes when it is answered 2xx. It records the LanePaused
// gauge every time, so the alarm sees a paused lane as long as it lasts.
func (h *Handler) Tick(ctx context.Context) (TickReport, error) {
	if h.lane == nil {
		return TickReport{}, fmt.Errorf("tick %s: %w", h.dest.Name, ErrNoPause)
	}
	res, err := h.lane.Tick(ctx, h.probe)
	paused := res.State.IsPaused() && res.Change.Kind != pausing.Resuming
	rep := TickReport{Destination: h.dest.Name, Mode: string(pausing.Active), Change: string(res.Change.Kind)}
	gauge := 0.0
	if paused {
		rep.Mode, gauge = string(pausing.Paused), 1
	}
	if res.Unread {
		// The lane's state is unknown: no gauge (a 0 would clear the
		// PausedAlarm of a lane still paused); the tick's error fails the
		// invocation, which the function's errors alarm counts.
		rep.Mode = ModeUnknown
	}
	if res.Probe != nil {
		rep.ProbeStatus = res.Probe.Status
	}
	h.laneChanged(ctx, res.Change)
	if res.Change.Kind != pausing.Resuming && !res.Unread {
		h.metrics.add(metrics.LanePaused, metrics.Count, gauge)
	}
	attrs := []any{"outcome", "tick", "mode", rep.Mode}
	if res.Probe != nil {
		attrs = append(attrs, "probe_ok", res.Probe.OK, "status", res.Probe.Status)
		if res.Probe.Error != "" {
			attrs = append(attrs, "probe_error", res.Probe.Error)
		}
	}
	switch res.Reconciled {
	case "off":
		attrs = append(attrs, "reconciled", "the event source mapping was on while the lane is paused; turned off")
	case "on":
		attrs = append(attrs, "reconciled", "the event source mapping was off while the lane is active; turned on")
	}
	if res.Busy {
		attrs = append(attrs, "busy", "another probe is running")
	}
	level := slog.LevelInfo
	if err != nil {
		attrs = append(attrs, "error", err.Error())
		level = slog.LevelWarn
	}
	h.log.Log(ctx, level, LogMessage, attrs...)
	if ferr := h.metrics.m.Flush(ctx); ferr != nil {
		h.log.WarnContext(ctx, LogMessage, "outcome", "metrics_not_published", "error", ferr.Error())
	}
	return rep, err
}

// probe sends one probe through the lane's sender, as an event (an https
// lane's: signed with the lane's secret, with the destination's headers,
// to its URL), within the destination's timeout.
func (h *Handler) probe(ctx context.Context, s pausing.State) pausing.ProbeResult {
	now := h.now()
	body, err := json.Marshal(ProbeBody{Type: ProbeType, Destination: h.dest.Name, PausedAt: s.PausedAt.UTC(), Reason: s.Reason, Probe: s.Probes})
	if err != nil {
		return pausing.ProbeResult{At: now, Error: "not sent: " + err.Error()}
	}
	msg := Message{
		ID: probeIDPrefix + h.dest.Name + "_" + strconv.FormatInt(now.UnixMilli(), 10), Source: ProbeSource, Type: ProbeType,
		ContentType: "application/json", Body: body, Attempt: s.Probes, ReceivedAt: now,
	}
	timeout := h.dest.Timeout()
	if deadline, ok := ctx.Deadline(); ok {
		timeout = min(timeout, time.Until(deadline))
	}
	msg = h.shapeProbe(ctx, msg)
	res := h.sendProbe(ctx, msg.delivery(timeout))
	return pausing.ProbeResult{At: h.now(), OK: res.Verdict() == sender.Delivered, Status: res.Status, Error: res.Describe()}
}

// ProbeMargin is added to the destination's timeout for the time a probe
// holds the lane's probe lease (pausing.Options.ProbeTimeout): signing and
// the writes around the POST.
const ProbeMargin = 5 * time.Second

// ProbeTimeout is how long one probe of d's lane may run.
func ProbeTimeout(d config.Destination) time.Duration { return d.Timeout() + ProbeMargin }

// sendProbe sends the probe: on a batched lane as a batch of one, the
// envelope its destination parses.
func (h *Handler) sendProbe(ctx context.Context, d sender.Delivery) sender.Result {
	bs, ok := h.batchProbe()
	if !ok {
		return h.sender.Send(ctx, d)
	}
	if res := bs.SendBatch(ctx, []sender.Delivery{d}); len(res) == 1 {
		return res[0]
	}
	return sender.Result{Err: errors.New("the sender answered no result for the probe")}
}
