package devstate

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/google/go-cmp/cmp"

	"github.com/hookfan/hookfan/shared/config"
)

// TestOutsidersDoNotLinkTheLocalRuntime: the operator command and the
// sender find the local stack through this package, not by linking the
// runtime that provisions and runs it.
func TestOutsidersDoNotLinkTheLocalRuntime(t *testing.T) {
	const runtime = "github.com/hookfan/hookfan/infra/local/devstack"
	for _, cmd := range []string{"github.com/hookfan/hookfan/infra/ops", "github.com/hookfan/hookfan/events/send"} {
		out, err := exec.Command("go", "list", "-deps", cmd).Output()
		if err != nil {
			t.Fatalf("go list %s: %v", cmd, err)
		}
		deps := strings.Fields(string(out))
		for _, pkg := range deps {
			if pkg == runtime {
				t.Errorf("%s links %s", cmd, runtime)
			}
		}
		if !strings.Contains(string(out), "github.com/hookfan/hookfan/infra/local/devstate\n") {
			t.Errorf("%s does not link devstate: %q", cmd, deps)
		}
	}
}

func TestNames(t *testing.T) {
	got := []string{TableName("p"), TopicName("p"), QueueName("p", "d"), DLQName("p", "d"), SubscriptionDLQName("p", "d"),
		ArchiveBucketName("p"), ArchiveQueueName("p"), DestinationSecretName("p", config.Destination{Name: "d"}),
		DestinationSecretName("p", config.Destination{Name: "d", SecretName: "mine"})}
	want := []string{"p-deliveries", "p-events", "p-d", "p-d-dlq", "p-d-sub-dlq", "p-archive", "p-archive", "p/destinations/d", "mine"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("names (-want +got):\n%s", diff)
	}
}

func TestReadEmulatorState(t *testing.T) {
	dir := t.TempDir()
	if _, ok, err := ReadEmulatorState(dir); ok || err != nil {
		t.Errorf("no state file: ok %v, error %v; want neither", ok, err)
	}
	record := `{"url": "http://127.0.0.1:5000", "pid": 42, "log": "infra/local/.state/moto.log", "started_at": "2026-12-01T10:00:00Z"}`
	if err := os.WriteFile(filepath.Join(dir, EmulatorStateFile), []byte(record), 0o600); err != nil {
		t.Fatal(err)
	}
	s, ok, err := ReadEmulatorState(dir)
	want := EmulatorState{URL: "http://127.0.0.1:5000", PID: 42, Log: "infra/local/.state/moto.log", StartedAt: time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)}
	if !ok || err != nil || s != want {
		t.Errorf("read %+v, %v, %v; want %+v", s, ok, err, want)
	}
}

// tags is a queue's tags, as the emulator keeps them.
type tags map[string]string

func (q tags) ListQueueTags(_ context.Context, _ *sqs.ListQueueTagsInput, _ ...func(*sqs.Options)) (*sqs.ListQueueTagsOutput, error) {
	return &sqs.ListQueueTagsOutput{Tags: q}, nil
}

func (q tags) TagQueue(_ context.Context, in *sqs.TagQueueInput, _ ...func(*sqs.Options)) (*sqs.TagQueueOutput, error) {
	for k, v := range in.Tags {
		q[k] = v
	}
	return &sqs.TagQueueOutput{}, nil
}

// TestTagSwitch: a queue without the tag is enabled, as a new mapping is;
// Disable and Enable set the tag the pollers read.
func TestTagSwitch(t *testing.T) {
	ctx := context.Background()
	q := tags{}
	s := TagSwitch{SQS: q, QueueURL: "http://q"}
	for _, step := range []struct {
		do   func(context.Context) error
		want bool
		tag  string
	}{
		{nil, true, ""},
		{s.Disable, false, MappingDisabled},
		{s.Enable, true, MappingEnabled},
	} {
		if step.do != nil {
			if err := step.do(ctx); err != nil {
				t.Fatal(err)
			}
		}
		if on, err := s.Enabled(ctx); on != step.want || err != nil || q[MappingTag] != step.tag {
			t.Errorf("enabled %v (%v), tag %q; want %v, %q", on, err, q[MappingTag], step.want, step.tag)
		}
	}
}
