package operator

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	lambdasvc "github.com/aws/aws-sdk-go-v2/service/lambda"

	"github.com/hookfan/hookfan/infra/local/fakeprovider"
	"github.com/hookfan/hookfan/infra/stack/stackindex"
	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/ingest"
	"github.com/hookfan/hookfan/shared/reconcile"
)

type opSecrets map[string]string

func (s opSecrets) Value(_ context.Context, name string) (string, error) { return s[name], nil }

type noRecords struct{}

func (noRecords) Present(context.Context, []string) (map[string]bool, error) { return nil, nil }

type countPublisher struct{ n int }

func (p *countPublisher) PublishReconciled(context.Context, ingest.Reconciled) (ingest.Published, error) {
	p.n++
	return ingest.Published{}, nil
}

// TestReconcileCommand: ops reconcile prints the run's counts; a dry run
// brings nothing in.
func TestReconcileCommand(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	fake := &fakeprovider.Stripe{Key: "rk", Now: func() time.Time { return now }}
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	fake.NewEvent("invoice.paid", now.Add(-2*time.Hour), nil)
	fake.NewEvent("invoice.paid", now.Add(-30*time.Hour), nil)
	cfg, err := config.Parse([]byte(`{"sources": [{"name": "stripe", "verify": {"kind": "stripe", "secretName": "s"},
		"reconcile": {"lookback": "24h", "secretName": "k", "apiUrl": "` + srv.URL + `"}}],
		"destinations": [{"name": "d", "url": "https://d.example.com/h"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	pub := &countPublisher{}
	r, err := reconcile.Assemble(cfg, reconcile.Clients{Secrets: opSecrets{"k": "rk"}, Records: noRecords{}, Publisher: pub,
		Watermarks: &reconcile.MemoryWatermarks{}, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	op := &Operator{Resources: Resources{Where: "test"}, Reconciler: r, Out: &out, Now: func() time.Time { return now }}

	if _, err := op.Reconcile(context.Background(), "stripe", now.Add(-48*time.Hour), true); err != nil {
		t.Fatal(err)
	}
	want := `reconcile stripe (dry run: nothing brought in): 2026-11-29T12:00:00.000Z to 2026-12-01T11:58:00.000Z
  listed                 2  at the provider, in the window
  present                0  Hookfan has them
  missing                2
  brought in             0  published, marked reconciled
  out of retention       1  missing but older than the lookback: not brought in
`
	if out.String() != want || pub.n != 0 {
		t.Errorf("dry run printed (published %d):\n%s\nwant:\n%s", pub.n, out.String(), want)
	}
	out.Reset()
	if _, err := op.Reconcile(context.Background(), "stripe", time.Time{}, false); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "  brought in             1  published, marked reconciled\n") || !strings.Contains(out.String(), "  watermark: 2026-12-01T11:58:00.000Z\n") || pub.n != 1 {
		t.Errorf("run printed (published %d):\n%s", pub.n, out.String())
	}

	// Stopped: printed, then an error (exit 1).
	fake.Key = "other"
	out.Reset()
	if _, err := op.Reconcile(context.Background(), "stripe", time.Time{}, false); err == nil || !strings.Contains(out.String(), "stopped: unauthorized; the watermark did not move") {
		t.Errorf("stopped run: %v\n%s", err, out.String())
	}
	if code := Main(context.Background(), []string{"reconcile"}, &out, &out); code != 2 {
		t.Errorf("reconcile without a source: exit %d", code)
	}
	if code := Main(context.Background(), []string{"reconcile", "stripe", "--since", "yesterday"}, &out, &out); code != 2 {
		t.Errorf("reconcile --since yesterday: exit %d", code)
	}
}

type fakeInvoke struct {
	in  *lambdasvc.InvokeInput
	out *lambdasvc.InvokeOutput
}

func (f *fakeInvoke) Invoke(_ context.Context, in *lambdasvc.InvokeInput, _ ...func(*lambdasvc.Options)) (*lambdasvc.InvokeOutput, error) {
	f.in = in
	return f.out, nil
}

// TestFunctionReconciler: on a deployed stack, ops reconcile invokes the
// source's reconcile function named in the index, with the invocation,
// and reads its report.
func TestFunctionReconciler(t *testing.T) {
	since := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	ssm := fakeSSM{stackindex.ReconcileParameter("Hookfan", "stripe"): jsonOf(t, stackindex.Reconciler{Source: "stripe", FunctionName: "Hookfan-ReconcileStripe"})}
	fn := &fakeInvoke{out: &lambdasvc.InvokeOutput{Payload: []byte(`{"source":"stripe","listed":3,"missing":1,"broughtIn":1}`)}}
	f := FunctionReconciler{SSM: ssm, Lambda: fn, Stack: "Hookfan"}
	rep, err := f.Handle(context.Background(), reconcile.Invocation{Source: "stripe", Since: since, DryRun: true})
	if err != nil || rep.Listed != 3 || rep.BroughtIn != 1 {
		t.Fatalf("report %+v, %v", rep, err)
	}
	var inv reconcile.Invocation
	if err := json.Unmarshal(fn.in.Payload, &inv); err != nil || aws.ToString(fn.in.FunctionName) != "Hookfan-ReconcileStripe" || !inv.Since.Equal(since) || !inv.DryRun || inv.Source != "stripe" {
		t.Errorf("invoked %s with %s (%v)", aws.ToString(fn.in.FunctionName), fn.in.Payload, err)
	}
	if _, err := f.Handle(context.Background(), reconcile.Invocation{Source: "github"}); err == nil || !strings.Contains(err.Error(), "does not reconcile") {
		t.Errorf("unknown source: %v", err)
	}
	fn.out = &lambdasvc.InvokeOutput{FunctionError: aws.String("Unhandled"), Payload: []byte(`{"errorMessage":"boom"}`)}
	if _, err := f.Handle(context.Background(), reconcile.Invocation{Source: "stripe"}); err == nil || !strings.Contains(err.Error(), "boom") {
		t.Errorf("function error: %v", err)
	}
}
