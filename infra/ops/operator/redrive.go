package operator

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/hookfan/hookfan/shared/message"
)

// Redrive options.
type RedriveOptions struct {
	// Copy moves the messages one by one (receive, send, delete) even where
	// StartMessageMoveTask is available.
	Copy bool
	// Rate caps a move task's messages per second (0: SQS's default, as
	// fast as it can).
	Rate int
	// Visibility hides each message while it is copied (default 60s); a
	// copy interrupted before its delete shows again after it.
	Visibility time.Duration
	// Wait is how long to wait for DLQ messages held in flight (by an
	// interrupted earlier run, or a peek) to show again (default 5m).
	Wait time.Duration
}

// RedriveResult is what a redrive moved.
type RedriveResult struct {
	Destination string
	// Method is "move task" (SQS's StartMessageMoveTask) or "copy".
	Method string
	Moved  int
	// Left is what the DLQ still holds when the redrive ends.
	Left int
	// Lost are the messages left in the DLQ because their bodies exist
	// nowhere any more (each error names the event, its age and the fix).
	Lost []error
}

// Redrive moves a destination's DLQ back to its queue, where each message
// gets a full new retry schedule; events already delivered are recognised
// by their delivery record and not sent again. It uses SQS's
// StartMessageMoveTask (following a task already running rather than
// starting another) and, where the endpoint does not implement it, copies
// the messages: receive, send with every attribute, delete only after the
// send succeeded. Interrupted and run again, a copy loses nothing (an
// unsent message is still in the DLQ) and doubles no delivery (a message
// sent but not yet deleted is sent again, and its second copy finds the
// event's record DELIVERED, or its lease held, and is acknowledged).
//
// A stack with a payload bucket is always copied: each message whose body
// is in S3 has that body written again before it is sent (restoreBody), so
// its object lives as long as the message's new life can last; a move task
// cannot do that. A message whose body exists nowhere stays in the DLQ and
// the redrive fails naming it.
func (o *Operator) Redrive(ctx context.Context, destination string, opt RedriveOptions) (RedriveResult, error) {
	l, err := o.Resources.Lane(destination)
	if err != nil {
		return RedriveResult{}, err
	}
	res := RedriveResult{Destination: destination}
	if !opt.Copy && o.Payloads != nil {
		o.progressf("redrive %s: %s keeps large bodies in S3; copying the messages one by one, each large body written again first (a move task cannot)\n", destination, o.Resources.Where)
		opt.Copy = true
	}
	if !opt.Copy {
		res.Method = "move task"
		moved, err := o.moveTask(ctx, l, opt)
		if err == nil {
			res.Moved = moved
			return o.redriveDone(ctx, l, res)
		}
		var unsupported *moveUnsupportedError
		if !errors.As(err, &unsupported) {
			return res, err
		}
		// One calm line: the SDK's error says nothing an operator acts on.
		o.progressf("redrive %s: this endpoint has no SQS move task (StartMessageMoveTask; emulators such as moto lack it), so redrive copies the messages one by one, as --copy does\n", destination)
	}
	res.Method = "copy"
	res.Moved, res.Lost, err = o.copyDLQ(ctx, l, opt)
	if err != nil {
		return res, err
	}
	res, err = o.redriveDone(ctx, l, res)
	if err == nil && len(res.Lost) > 0 {
		err = fmt.Errorf("%d message(s) left in the DLQ of %s:\n%w", len(res.Lost), destination, errors.Join(res.Lost...))
	}
	return res, err
}

func (o *Operator) redriveDone(ctx context.Context, l Lane, res RedriveResult) (RedriveResult, error) {
	d, err := o.depth(ctx, l.DLQURL)
	if err != nil {
		return res, err
	}
	res.Left = d.total()
	o.printf("redrive %s (%s): moved %d message(s) from its DLQ to its queue; %d left in the DLQ\n", res.Destination, res.Method, res.Moved, res.Left)
	return res, nil
}

// moveUnsupportedError is the answer of an endpoint without message move
// tasks (moto answers 500 without an API error; LocalStack versions
// without them answer 501 or an error coded NotImplemented).
type moveUnsupportedError struct{ cause error }

func (e *moveUnsupportedError) Error() string {
	return "message move tasks unsupported: " + e.cause.Error()
}
func (e *moveUnsupportedError) Unwrap() error { return e.cause }

func moveUnsupported(err error) bool {
	var api smithy.APIError
	if errors.As(err, &api) {
		switch api.ErrorCode() {
		case "NotImplemented", "NotImplementedException", "InternalFailure":
			return true
		}
		return false
	}
	var resp *smithyhttp.ResponseError
	return errors.As(err, &resp) && (resp.HTTPStatusCode() == http.StatusNotImplemented || resp.HTTPStatusCode() == http.StatusInternalServerError)
}

// noRetry makes one attempt: an endpoint without move tasks answers 500,
// which the SDK would otherwise retry.
func noRetry(o *sqs.Options) { o.RetryMaxAttempts = 1 }

// moveTask starts (or follows a running) StartMessageMoveTask and reports
// its progress until it ends.
func (o *Operator) moveTask(ctx context.Context, l Lane, opt RedriveOptions) (int, error) {
	list, err := o.SQS.ListMessageMoveTasks(ctx, &sqs.ListMessageMoveTasksInput{SourceArn: &l.DLQARN, MaxResults: aws.Int32(1)}, noRetry)
	if err != nil {
		if moveUnsupported(err) {
			return 0, &moveUnsupportedError{err}
		}
		return 0, fmt.Errorf("list move tasks of %s: %w", l.DLQARN, err)
	}
	running := len(list.Results) > 0 && aws.ToString(list.Results[0].Status) == "RUNNING"
	if running {
		o.progressf("redrive %s: a move task is already running; following it\n", l.Destination)
	} else {
		in := &sqs.StartMessageMoveTaskInput{SourceArn: &l.DLQARN, DestinationArn: &l.QueueARN}
		if opt.Rate > 0 {
			in.MaxNumberOfMessagesPerSecond = aws.Int32(int32(opt.Rate))
		}
		if _, err := o.SQS.StartMessageMoveTask(ctx, in, noRetry); err != nil {
			if moveUnsupported(err) {
				return 0, &moveUnsupportedError{err}
			}
			return 0, fmt.Errorf("start a move task from %s: %w", l.DLQARN, err)
		}
	}
	for {
		o.pause(ctx, o.progressEvery())
		if ctx.Err() != nil {
			return 0, fmt.Errorf("stopped following the move task, which goes on in SQS (run redrive again to follow it): %w", ctx.Err())
		}
		list, err := o.SQS.ListMessageMoveTasks(ctx, &sqs.ListMessageMoveTasksInput{SourceArn: &l.DLQARN, MaxResults: aws.Int32(1)})
		if err != nil {
			return 0, fmt.Errorf("follow the move task: %w", err)
		}
		if len(list.Results) == 0 {
			return 0, errors.New("follow the move task: SQS lists none")
		}
		t := list.Results[0]
		moved := int(t.ApproximateNumberOfMessagesMoved)
		switch status := aws.ToString(t.Status); status {
		case "COMPLETED":
			return moved, nil
		case "RUNNING":
			o.progressf("redrive %s: moved %d of %d\n", l.Destination, moved, aws.ToInt64(t.ApproximateNumberOfMessagesToMove))
		default:
			return moved, fmt.Errorf("the move task ended %s after moving %d: %s", status, moved, aws.ToString(t.FailureReason))
		}
	}
}

// copyDLQ moves the DLQ's messages one by one: receive, send to the queue
// with the same body and every attribute, and delete from the DLQ only
// after the send succeeded. It waits (up to opt.Wait) for messages held in
// flight to show again, so an interrupted earlier run's are moved too. A
// message whose body is lost is left in the DLQ, hidden for the rest of
// the run, and returned in lost.
func (o *Operator) copyDLQ(ctx context.Context, l Lane, opt RedriveOptions) (moved int, lost []error, err error) {
	visibility, wait := opt.Visibility, opt.Wait
	if visibility <= 0 {
		visibility = time.Minute
	}
	if wait <= 0 {
		wait = 5 * time.Minute
	}
	start, err := o.depth(ctx, l.DLQURL)
	if err != nil {
		return 0, nil, err
	}
	refused := map[string]bool{} // message ids whose bodies are lost
	lastReport := o.now()
	var waitingSince time.Time // when the DLQ last showed nothing while holding messages
	for ctx.Err() == nil {
		out, err := o.SQS.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{
			QueueUrl: &l.DLQURL, MaxNumberOfMessages: 10, WaitTimeSeconds: 1,
			VisibilityTimeout:     int32(visibility / time.Second),
			MessageAttributeNames: []string{"All"},
			// An ordered lane's copies keep their message group.
			MessageSystemAttributeNames: []sqstypes.MessageSystemAttributeName{sqstypes.MessageSystemAttributeNameMessageGroupId},
		})
		if err != nil {
			if ctx.Err() != nil {
				break
			}
			return moved, lost, fmt.Errorf("receive from the DLQ (%d moved so far; run redrive again to move the rest): %w", moved, err)
		}
		for i, m := range out.Messages {
			if ctx.Err() != nil {
				// Interrupted: what was received but not begun shows again now.
				o.release(context.WithoutCancel(ctx), l.DLQURL, receipts(out.Messages[i:]))
				break
			}
			if refused[aws.ToString(m.MessageId)] {
				continue // shown again: it stays hidden until the run ends
			}
			// Finish a message once begun: an interrupt between its send and
			// its delete would leave a second copy.
			err := o.copyOne(context.WithoutCancel(ctx), l, m)
			if errors.Is(err, errBodyLost) {
				refused[aws.ToString(m.MessageId)] = true
				lost = append(lost, err)
				o.progressf("redrive %s: %v\n", l.Destination, err)
				continue
			}
			if err != nil {
				if i+1 < len(out.Messages) {
					o.release(context.WithoutCancel(ctx), l.DLQURL, receipts(out.Messages[i+1:]))
				}
				return moved, lost, fmt.Errorf("%w (%d moved so far; run redrive again to move the rest)", err, moved)
			}
			moved++
		}
		if now := o.now(); now.Sub(lastReport) >= o.progressEvery() {
			o.progressf("redrive %s: moved %d of about %d\n", l.Destination, moved, start.total())
			lastReport = now
		}
		if len(out.Messages) > len(refusedIn(out.Messages, refused)) {
			waitingSince = time.Time{}
			continue
		}
		d, err := o.depth(ctx, l.DLQURL)
		if err != nil {
			return moved, lost, err
		}
		if d.total() <= len(refused) {
			return moved, lost, nil
		}
		first := waitingSince.IsZero()
		if first {
			waitingSince = o.now()
		}
		if o.now().Sub(waitingSince) > wait {
			o.progressf("redrive %s: %d message(s) still held in flight in the DLQ after %s; run redrive again later to move them\n", l.Destination, d.total()-len(refused), wait)
			return moved, lost, nil
		}
		if d.Visible == 0 {
			if now := o.now(); first || now.Sub(lastReport) >= o.progressEvery() {
				o.progressf("redrive %s: waiting for %d message(s) held in flight (an interrupted run, or a peek) to show again\n", l.Destination, d.InFlight+d.Delayed)
				lastReport = now
			}
			o.pause(ctx, time.Second)
		}
	}
	o.progressf("redrive %s: interrupted after moving %d; run it again to move the rest (nothing is lost or sent twice)\n", l.Destination, moved)
	return moved, lost, ctx.Err()
}

// refusedIn lists the messages of a receive already refused this run.
func refusedIn(msgs []sqstypes.Message, refused map[string]bool) []sqstypes.Message {
	var out []sqstypes.Message
	for _, m := range msgs {
		if refused[aws.ToString(m.MessageId)] {
			out = append(out, m)
		}
	}
	return out
}

func receipts(msgs []sqstypes.Message) []*string {
	out := make([]*string, len(msgs))
	for i, m := range msgs {
		out[i] = m.ReceiptHandle
	}
	return out
}

// copyOne sends a DLQ message to the queue and then deletes it; a body
// stored in S3 is written again first (restoreBody).
func (o *Operator) copyOne(ctx context.Context, l Lane, m sqstypes.Message) error {
	ev := decoded(m)
	if _, err := o.restoreBody(ctx, stored{id: ev.ID, receivedAt: ev.ReceivedAt, ref: ev.Encoding == message.Stored,
		body: ev.Body, outcome: "it is not sent and stays in the DLQ of " + l.Destination + " (delete it there once the provider has sent the event again)"}); err != nil {
		return err
	}
	// The message goes back as it is, body and attributes, as the console's
	// redrive moves it: one the deliverer refused as malformed too.
	in := &sqs.SendMessageInput{QueueUrl: &l.QueueURL, MessageBody: m.Body, MessageAttributes: m.MessageAttributes}
	l.redriveGroup(in, m) // ordered.go
	if _, err := o.SQS.SendMessage(ctx, in); err != nil {
		return fmt.Errorf("send message %s to the queue (it stays in the DLQ): %w", aws.ToString(m.MessageId), err)
	}
	if _, err := o.SQS.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: &l.DLQURL, ReceiptHandle: m.ReceiptHandle}); err != nil {
		return fmt.Errorf("delete message %s from the DLQ after sending it (its copy in the DLQ will be sent again and acknowledged as a duplicate): %w", aws.ToString(m.MessageId), err)
	}
	return nil
}
