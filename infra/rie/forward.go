package rie

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	cwtypes "github.com/aws/aws-sdk-go-v2/service/cloudwatch/types"

	"github.com/hookfan/hookfan/shared/metrics/putmetricdata"
)

// maxLine is the longest log line the forwarder reads: CloudWatch Logs'
// largest event (1 MB). A longer line is dropped, and reported.
const maxLine = 1 << 20

// putTimeout bounds each PutMetricData call to the emulator.
const putTimeout = 10 * time.Second

// putChunk keeps each call well inside PutMetricData's 1,000 metrics.
const putChunk = 500

// Forwarder does for a function run under the RIE what CloudWatch Logs
// does with a function's logs in AWS: it reads every Embedded Metric
// Format line the function writes and puts its metrics, with
// PutMetricData, on the emulator's CloudWatch (build the client with
// putmetricdata.NewClient, which speaks a protocol emulators understand).
// The deployed functions write EMF only; an emulator reads no EMF, so a
// harness that reads their metrics back from it forwards them.
//
// It is an io.Writer for the RIE's output (Start's tee). Write only
// parses: the calls are made in the Forwarder's own goroutine, so that
// the process's output reaches the other writers (Function.Logs) as fast
// as without it. Ordinary lines are skipped; nothing is silently lost: an
// invalid EMF document, a line past maxLine and a failed call are kept
// for Err. Close it once the process is gone.
type Forwarder struct {
	api putmetricdata.API

	mu      sync.Mutex
	wake    *sync.Cond // pending grew, or closed
	line    []byte     // the part of a line written so far
	long    bool       // the current line passed maxLine: dropped at its end
	pending [][]Datum  // each EMF line's data, to put in order
	closed  bool
	errs    []error
	put     int           // data put
	done    chan struct{} // closed when run returns
}

// NewForwarder returns a Forwarder putting on api; its goroutine runs
// until Close.
func NewForwarder(api putmetricdata.API) *Forwarder {
	f := &Forwarder{api: api, done: make(chan struct{})}
	f.wake = sync.NewCond(&f.mu)
	go f.run()
	return f
}

// Write reads p's complete lines and queues each EMF document's metrics.
// It never fails: a writer's error would stop the process's output.
func (f *Forwarder) Write(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := len(p)
	if f.closed {
		f.errs = append(f.errs, fmt.Errorf("%d bytes written after Close, not read", n))
		return n, nil
	}
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		part := p
		if i >= 0 {
			part = p[:i]
		}
		if !f.long && len(f.line)+len(part) > maxLine {
			f.long, f.line = true, nil
		}
		if !f.long {
			f.line = append(f.line, part...)
		}
		if i < 0 {
			break
		}
		p = p[i+1:]
		if f.long {
			f.errs = append(f.errs, fmt.Errorf("a log line longer than %d bytes, dropped", maxLine))
		} else {
			f.queue(f.line)
		}
		f.line, f.long = f.line[:0], false
	}
	return n, nil
}

// Close reads a last line written without its newline (the process
// ended), waits until every queued metric is put, and returns Err.
func (f *Forwarder) Close() error {
	f.mu.Lock()
	if !f.closed {
		if len(f.line) > 0 && !f.long {
			f.queue(f.line)
		}
		f.line, f.long, f.closed = nil, false, true
		f.wake.Signal()
	}
	f.mu.Unlock()
	<-f.done
	return f.Err()
}

// Err is every problem so far: invalid EMF documents, overlong lines and
// failed calls.
func (f *Forwarder) Err() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return errors.Join(f.errs...)
}

// Put is the number of data (a metric under one dimension set) put so far.
func (f *Forwarder) Put() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.put
}

// queue parses one line and queues its metrics; f.mu is held.
func (f *Forwarder) queue(line []byte) {
	data, isEMF, err := ParseEMF(line)
	if !isEMF {
		return
	}
	if err != nil {
		f.errs = append(f.errs, fmt.Errorf("invalid EMF line %.200q: %w", line, err))
		return
	}
	f.pending = append(f.pending, data)
	f.wake.Signal()
}

// run puts the queued lines' metrics, in order, until Close has been
// called and nothing is left.
func (f *Forwarder) run() {
	defer close(f.done)
	f.mu.Lock()
	defer f.mu.Unlock()
	for {
		for len(f.pending) == 0 && !f.closed {
			f.wake.Wait()
		}
		if len(f.pending) == 0 {
			return
		}
		data := f.pending[0]
		f.pending = f.pending[1:]
		f.mu.Unlock()
		n, err := f.putData(data)
		f.mu.Lock()
		f.put += n
		if err != nil {
			f.errs = append(f.errs, err)
		}
	}
}

// putData calls PutMetricData once per namespace and chunk, in order,
// and returns how many data it put.
func (f *Forwarder) putData(data []Datum) (put int, err error) {
	for len(data) > 0 {
		ns := data[0].Namespace
		n := 1
		for n < len(data) && n < putChunk && data[n].Namespace == ns {
			n++
		}
		in := &cloudwatch.PutMetricDataInput{Namespace: aws.String(ns), MetricData: make([]cwtypes.MetricDatum, 0, n)}
		for _, d := range data[:n] {
			in.MetricData = append(in.MetricData, metricDatum(d))
		}
		ctx, cancel := context.WithTimeout(context.Background(), putTimeout)
		_, err := f.api.PutMetricData(ctx, in)
		cancel()
		if err != nil {
			return put, fmt.Errorf("put %d metrics of namespace %s: %w", n, ns, err)
		}
		put += n
		data = data[n:]
	}
	return put, nil
}

// metricDatum is d as PutMetricData takes it: one value as Value, several
// as Values (each counted once, as CloudWatch Logs counts an EMF array).
func metricDatum(d Datum) cwtypes.MetricDatum {
	m := cwtypes.MetricDatum{MetricName: aws.String(d.Name), Unit: d.Unit, Timestamp: aws.Time(d.Time)}
	if len(d.Values) == 1 {
		m.Value = aws.Float64(d.Values[0])
	} else {
		m.Values = d.Values
	}
	if d.Resolution != 0 {
		m.StorageResolution = aws.Int32(d.Resolution)
	}
	for _, dim := range d.Dimensions {
		m.Dimensions = append(m.Dimensions, cwtypes.Dimension{Name: aws.String(dim.Name), Value: aws.String(dim.Value)})
	}
	return m
}
