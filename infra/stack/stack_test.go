package stack_test

import (
	"debug/buildinfo"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/jsii-runtime-go"
	"github.com/google/go-cmp/cmp"

	"github.com/hookfan/hookfan/infra/stack"
	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/ddbitem"
	"github.com/hookfan/hookfan/shared/delivery"
	"github.com/hookfan/hookfan/shared/ingest"
	"github.com/hookfan/hookfan/shared/metrics"
	"github.com/hookfan/hookfan/shared/replayguard"
)

// builder compiles the functions once for every test in this package.
var builder *stack.Builder

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "hookfan-stack-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	builder, err = stack.NewBuilder(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	// Compile the functions while the first test starts jsii (Node loading
	// the CDK): the first synthesis needs both. A failed build fails that
	// synthesis, which builds again and reports it.
	go func() {
		for _, fn := range []string{"ingest", "deliver"} {
			_, _ = builder.Build(fn)
		}
	}()
	synths.dir = dir
	code := m.Run()
	if testing.Verbose() {
		fmt.Printf("infra/stack: %d syntheses for %d requests\n", synths.runs, synths.requests)
		// Each synthesis and the tests that read it: one read by a
		// single test is a candidate to fold into a shared one.
		var lines []string
		for _, s := range synths.byConfig {
			lines = append(lines, fmt.Sprintf("infra/stack: synthesis read by %s", strings.Join(s.tests, ", ")))
		}
		slices.Sort(lines)
		fmt.Println(strings.Join(lines, "\n"))
	}
	jsii.Close()
	os.RemoveAll(dir)
	os.Exit(code)
}

// testConfig is a valid configuration with n destinations that between them
// use every filter shape, imported and generated secrets, custom retry
// schedules, timeouts, concurrency caps, batch sizes and windows, with the
// archive kept 7 days.
func testConfig(t *testing.T, n int, email string) *config.Config {
	t.Helper()
	doc := map[string]any{
		"sources": []any{
			map[string]any{"name": "stripe", "verify": map[string]any{"kind": "stripe", "secretName": "hookfan/sources/stripe"}},
			map[string]any{"name": "github", "verify": map[string]any{"kind": "github", "secretName": "hookfan/sources/github"},
				"limits": map[string]any{"rateLimit": 10, "burstLimit": 20, "clientErrorAlarm": 5}},
			map[string]any{"name": "shop", "verify": map[string]any{"kind": "shopify", "secretName": "arn:aws:secretsmanager:eu-west-1:123456789012:secret:shopify-AbCdEf"}},
		},
		// The REST API, every trace and the platform's INFO lines: the
		// rich options (TestDefaultsStayCheap synthesizes the defaults).
		"api":       map[string]any{"type": "rest", "rateLimit": 50, "burstLimit": 75, "logRetentionDays": 14},
		"tracing":   "all",
		"functions": map[string]any{"systemLogLevel": "INFO"},
		// Not the default 30 days: TestArchiveAndQueries checks the
		// bucket keeps what archive.days says.
		"archive": map[string]any{"days": 7},
	}
	if email != "" {
		doc["alarms"] = map[string]any{"email": email, "oldestMessageSeconds": 900}
	}
	var dests []any
	for i := range n {
		d := map[string]any{
			"name":           fmt.Sprintf("dest-%02d", i),
			"url":            fmt.Sprintf("https://d%d.example.com/hooks", i),
			"timeoutSeconds": 5 + i%30,
			"maxConcurrency": 2 + i%10,
			"batchSize":      1 + i%10,
		}
		switch i % 4 {
		case 0:
			d["filter"] = map[string]any{"sources": []string{"stripe"}, "types": []string{"payment_intent.*", "charge.refunded"}}
		case 1:
			d["filter"] = map[string]any{"excludeTypes": []string{"ping", "installation"}}
			d["secretName"] = "hookfan/destinations/legacy"
			// An endpoint with a token in its URL: the URL from a secret.
			delete(d, "url")
			d["urlSecretName"] = fmt.Sprintf("hookfan/destinations/dest-%02d/url", i)
		case 2:
			d["retry"] = map[string]any{"schedule": []string{"1s", "10s", "1m"}, "jitter": 0}
			d["batchWindowSeconds"] = 5
			// A body-only filter SNS can evaluate: MessageBody scope.
			d["filter"] = map[string]any{"body": map[string]any{"data": map[string]any{"object": map[string]any{"status": []any{"succeeded", map[string]any{"prefix": "requires_"}}}}}}
			d["headers"] = []any{map[string]any{"name": "Authorization", "secretName": fmt.Sprintf("hookfan/destinations/dest-%02d/token", i)}, map[string]any{"name": "X-Tenant", "value": "acme"}}
		case 3:
			d["filter"] = map[string]any{"sources": []string{"github", "shop"}, "excludeTypes": []string{"test.*"}}
			// Every other one ordered (fifo_test.go): an eighth of the lanes.
			if i%8 == 3 {
				d["ordering"] = map[string]any{"key": "body:id"}
			}
		}
		dests = append(dests, d)
	}
	doc["destinations"] = dests
	data, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Parse(data)
	if err != nil {
		t.Fatalf("test config: %v", err)
	}
	return cfg
}

// synth returns cfg's stack, built under cdk-nag and synthesized, and the
// directory of its assembly; it fails the test on any unsuppressed
// finding. A synthesis costs seconds of jsii work, so each configuration
// is synthesized once for the whole package: the tests that check the
// same configuration (equal as JSON) share its stack and assembly, which
// they only read.
func synth(t *testing.T, cfg *config.Config) (*stack.Hookfan, string) {
	t.Helper()
	key, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	synths.Lock()
	s, ok := synths.byConfig[string(key)]
	if !ok {
		s = &synthesized{}
		synths.byConfig[string(key)] = s
	}
	synths.requests++
	s.tests = append(s.tests, t.Name())
	synths.Unlock()
	flags := flagsContext(t)
	s.once.Do(func() {
		outdir, err := os.MkdirTemp(synths.dir, "assembly-")
		if err != nil {
			s.err = err.Error()
			return
		}
		s.outdir = outdir
		s.h, s.err = synthInto(cfg, builder, outdir, flags)
		synths.Lock()
		synths.runs++
		synths.Unlock()
	})
	if s.err != "" {
		t.Fatal(s.err)
	}
	return s.h, s.outdir
}

// synthesized is one configuration's synthesis, shared by synth.
type synthesized struct {
	once   sync.Once
	h      *stack.Hookfan
	outdir string
	err    string   // why the synthesis failed, for every test that asks
	tests  []string // the tests that asked for it, in order
}

// synths are the syntheses so far, by configuration, under dir
// (TestMain's); requests and runs count what synth was asked and what it
// synthesized (go test -v prints both).
var synths = struct {
	sync.Mutex
	byConfig       map[string]*synthesized
	dir            string
	requests, runs int
}{byConfig: map[string]*synthesized{}}

// synthInto builds cfg's stack with b under cdk-nag and synthesizes it
// into outdir, on its own: no test shares it.
func synthInto(cfg *config.Config, b *stack.Builder, outdir string, flags *map[string]any) (*stack.Hookfan, string) {
	app := awscdk.NewApp(&awscdk.AppProps{Outdir: jsii.String(outdir), Context: flags})
	h, err := stack.New(app, "Hookfan", &stack.Props{Config: cfg, Builder: b})
	if err != nil {
		return nil, fmt.Sprintf("stack.New: %v", err)
	}
	stack.ApplyNag(app, false)
	errs, err := stack.Synth(app)
	if err != nil {
		return nil, err.Error()
	}
	if len(errs) > 0 {
		return nil, fmt.Sprintf("unsuppressed cdk-nag findings:\n%s", strings.Join(errs, "\n"))
	}
	return h, ""
}

type resource struct {
	Type           string
	Properties     map[string]any
	DeletionPolicy string
	Metadata       map[string]any
}

func templateOf(t *testing.T, s awscdk.Stack) (assertions.Template, map[string]resource) {
	t.Helper()
	tmpl := assertions.Template_FromStack(s, nil)
	raw, err := json.Marshal(*tmpl.ToJSON())
	if err != nil {
		t.Fatal(err)
	}
	var doc struct{ Resources map[string]resource }
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	return tmpl, doc.Resources
}

func ofType(res map[string]resource, typ string) map[string]resource {
	out := map[string]resource{}
	for id, r := range res {
		if r.Type == typ {
			out[id] = r
		}
	}
	return out
}

// only returns the one resource of a type.
func only(t *testing.T, res map[string]resource, typ string) (string, resource) {
	t.Helper()
	all := ofType(res, typ)
	if len(all) != 1 {
		t.Fatalf("got %d %s, want 1", len(all), typ)
	}
	for id, r := range all {
		return id, r
	}
	panic("unreachable")
}

func countTypes(res map[string]resource) map[string]int {
	out := map[string]int{}
	for _, r := range res {
		out[r.Type]++
	}
	return out
}

// refID returns the logical ID a {"Ref": id} or {"Fn::GetAtt": [id, ...]} names.
func refID(v any) string {
	m, ok := v.(map[string]any)
	if !ok {
		return ""
	}
	if r, ok := m["Ref"].(string); ok {
		return r
	}
	if g, ok := m["Fn::GetAtt"].([]any); ok && len(g) > 0 {
		s, _ := g[0].(string)
		return s
	}
	// An ARN joined from parts (as @aws-cdk/aws-apigateway:
	// logGroupDestinationArnWithoutWildcard writes the access log
	// group's): the resource it names.
	if j, ok := m["Fn::Join"].([]any); ok && len(j) == 2 {
		for _, part := range asSlice(j[1]) {
			if r := refID(part); r != "" && !strings.HasPrefix(r, "AWS::") {
				return r
			}
		}
	}
	return ""
}

func num(v any) float64 {
	f, _ := v.(float64)
	return f
}

// laneResources are the resources of one lane (its nested stack).
func wantLaneCounts(d config.Destination) map[string]int {
	want := map[string]int{
		"AWS::SQS::Queue":                 3, // queue, DLQ, subscription DLQ
		"AWS::SQS::QueuePolicy":           3, // TLS-only on each; SNS may send to queue and subscription DLQ
		"AWS::SNS::Subscription":          1,
		"AWS::Lambda::Function":           1,
		"AWS::Lambda::EventSourceMapping": 1,
		"AWS::IAM::Role":                  1,
		"AWS::IAM::Policy":                1,
		"AWS::Logs::LogGroup":             1,
		"AWS::CloudWatch::Alarm":          4,
		"AWS::SSM::Parameter":             1, // the lane's index entry
	}
	if d.SecretName == "" {
		want["AWS::SecretsManager::Secret"] = 1
	}
	if d.StaticEgress() {
		want["AWS::EC2::SecurityGroup"] = 1 // outbound only, in the egress VPC
	}
	if d.Pause != nil {
		want["AWS::IAM::Policy"]++                 // the switch policy
		want["AWS::CloudWatch::Alarm"]++           // paused
		want["AWS::Events::Rule"] = 1              // the probe schedule
		want["AWS::Lambda::Permission"] = 1        // EventBridge may invoke the function
		want["AWS::Lambda::EventInvokeConfig"] = 1 // no retries of a tick
	}
	return want
}

func TestLanes(t *testing.T) {
	for _, n := range []int{1, 3, 20} {
		t.Run(fmt.Sprintf("%d destinations", n), func(t *testing.T) {
			email := ""
			if n > 1 {
				email = "ops@example.com"
			}
			cfg := testConfig(t, n, email)
			h, _ := synth(t, cfg)
			if len(h.Lanes) != n || len(h.LaneStacks) != n {
				t.Fatalf("got %d lanes in %d stacks, want %d", len(h.Lanes), len(h.LaneStacks), n)
			}
			_, parent := templateOf(t, h.Stack)
			if got := len(ofType(parent, "AWS::CloudFormation::Stack")); got != n {
				t.Errorf("parent has %d nested stacks, want one per destination (%d)", got, n)
			}
			for i, d := range cfg.Destinations {
				_, res := templateOf(t, h.LaneStacks[i])
				checkLane(t, d, cfg, res, email != "")
			}
		})
	}
}

func checkLane(t *testing.T, d config.Destination, cfg *config.Config, res map[string]resource, alarmTopic bool) {
	t.Helper()
	if diff := cmp.Diff(wantLaneCounts(d), countTypes(res)); diff != "" {
		t.Errorf("%s: resource counts (-want +got):\n%s", d.Name, diff)
	}

	// The function and its settings.
	fnID, fn := only(t, res, "AWS::Lambda::Function")
	p := fn.Properties
	if p["Runtime"] != "provided.al2023" || p["Handler"] != "bootstrap" || !slices.Equal(anyStrings(p["Architectures"]), []string{"arm64"}) {
		t.Errorf("%s: function runtime %v handler %v architectures %v, want provided.al2023, bootstrap, arm64", d.Name, p["Runtime"], p["Handler"], p["Architectures"])
	}
	if num(p["MemorySize"]) != config.DefaultDeliverMemoryMB {
		t.Errorf("%s: memory %v, want the default %d", d.Name, p["MemorySize"], config.DefaultDeliverMemoryMB)
	}
	timeout := num(p["Timeout"])
	if timeout != d.FunctionTimeout().Seconds() {
		t.Errorf("%s: function timeout %v, want %v", d.Name, timeout, d.FunctionTimeout().Seconds())
	}
	wantTracing := map[string]any{config.TracingAll: "Active", config.TracingSampled: "PassThrough"}[cfg.TracingMode()]
	if tc, _ := p["TracingConfig"].(map[string]any); tc["Mode"] != wantTracing {
		t.Errorf("%s: tracing %v, want %v (config tracing %q)", d.Name, p["TracingConfig"], wantTracing, cfg.TracingMode())
	}
	if _, ok := p["Environment"].(map[string]any)["Variables"].(map[string]any)[delivery.EnvTracing]; ok != (cfg.TracingMode() != config.TracingOff) {
		t.Errorf("%s: %s set %v with tracing %q", d.Name, delivery.EnvTracing, ok, cfg.TracingMode())
	}
	checkLogging(t, d.Name, cfg, p)
	env := p["Environment"].(map[string]any)["Variables"].(map[string]any)
	if mode, _ := env[delivery.EnvDedupeMode].(string); mode != map[string]string{config.DedupeCheck: config.DedupeCheck}[cfg.DedupeMode()] {
		t.Errorf("%s: %s = %q with dedupe.mode %q", d.Name, delivery.EnvDedupeMode, mode, cfg.DedupeMode())
	}
	if v, ok := env[delivery.EnvTimeIndex]; ok == cfg.Dedupe.Indexed() || ok && v != delivery.TimeIndexOff {
		t.Errorf("%s: %s = %v (set %v) with dedupe.timeIndex %v", d.Name, delivery.EnvTimeIndex, v, ok, cfg.Dedupe.Indexed())
	}
	if agg, _ := env[delivery.EnvLaneMetrics].(string); (agg == config.LaneMetricsAggregate) != !cfg.Metrics.PerLane() || (agg != "" && agg != config.LaneMetricsAggregate) {
		t.Errorf("%s: %s = %q with metrics.laneDimensions %v", d.Name, delivery.EnvLaneMetrics, agg, cfg.Metrics.PerLane())
	}
	for _, k := range []string{delivery.EnvDestination, delivery.EnvTableName, delivery.EnvQueueURL, delivery.EnvSecretID, delivery.EnvRecordDays, config.EnvMetricsSink} {
		if _, ok := env[k]; !ok {
			t.Errorf("%s: environment lacks %s", d.Name, k)
		}
	}
	got, err := config.DecodeDestination(delivery.EnvDestination, env[delivery.EnvDestination].(string))
	if err != nil {
		t.Errorf("%s: %s does not decode: %v", d.Name, delivery.EnvDestination, err)
	} else if diff := cmp.Diff(d, got); diff != "" {
		t.Errorf("%s: %s round trip (-config +env):\n%s", d.Name, delivery.EnvDestination, diff)
	}
	if env[delivery.EnvRecordDays] != "30" || env[config.EnvMetricsSink] != "emf" {
		t.Errorf("%s: record days %v, sink %v", d.Name, env[delivery.EnvRecordDays], env[config.EnvMetricsSink])
	}

	// The index keeps the URL's scheme and host, never its path or query
	// (a token may be there); a URL read from a secret is named by it.
	_, param := only(t, res, "AWS::SSM::Parameter")
	var index map[string]any
	if err := json.Unmarshal([]byte(joined(param.Properties["Value"])), &index); err != nil {
		t.Fatalf("%s: index value: %v", d.Name, err)
	}
	if index["url"] != d.URLHost() || index["urlSecretName"] != d.URLSecretName || strings.Contains(fmt.Sprint(index["url"]), "/hooks") {
		t.Errorf("%s: index url %q, urlSecretName %q; want %q, %q", d.Name, index["url"], index["urlSecretName"], d.URLHost(), d.URLSecretName)
	}

	// Queues: the lane queue redrives to the DLQ; the subscription has its own DLQ.
	queues := ofType(res, "AWS::SQS::Queue")
	var queueID, dlqID, subDLQID string
	for id, q := range queues {
		if rp, ok := q.Properties["RedrivePolicy"].(map[string]any); ok {
			queueID = id
			dlqID = refID(rp["deadLetterTargetArn"])
			if got := num(rp["maxReceiveCount"]); got != float64(d.MaxReceiveCount()) {
				t.Errorf("%s: maxReceiveCount %v, want %d (from the schedule)", d.Name, got, d.MaxReceiveCount())
			}
		}
	}
	if queueID == "" || dlqID == "" {
		t.Fatalf("%s: no queue with a redrive policy", d.Name)
	}
	sub := ofType(res, "AWS::SNS::Subscription")
	for _, s := range sub {
		sp := s.Properties
		if sp["RawMessageDelivery"] != true || refID(sp["Endpoint"]) != queueID || sp["Protocol"] != "sqs" {
			t.Errorf("%s: subscription %v, want raw sqs delivery to the lane queue", d.Name, sp)
		}
		subDLQID = refID(sp["RedrivePolicy"].(map[string]any)["deadLetterTargetArn"])
		var want any
		if policy, scope := laneFilter(cfg, d); policy != "" {
			if err := json.Unmarshal([]byte(policy), &want); err != nil {
				t.Fatal(err)
			}
			if sp["FilterPolicyScope"] != scope {
				t.Errorf("%s: filter policy scope %v, want %s", d.Name, sp["FilterPolicyScope"], scope)
			}
		}
		if diff := cmp.Diff(want, sp["FilterPolicy"]); diff != "" {
			t.Errorf("%s: filter policy (-configured +template):\n%s", d.Name, diff)
		}
	}
	if subDLQID == "" || subDLQID == dlqID || subDLQID == queueID {
		t.Errorf("%s: subscription DLQ %q must be its own queue (lane DLQ %q)", d.Name, subDLQID, dlqID)
	}
	q := queues[queueID].Properties
	if got := num(q["VisibilityTimeout"]); got != d.VisibilityTimeout().Seconds() || got < config.VisibilityFactor*timeout+d.BatchWindow().Seconds() {
		t.Errorf("%s: visibility %v, want %v and at least %d × the function timeout %v + the batch window %v",
			d.Name, got, d.VisibilityTimeout().Seconds(), config.VisibilityFactor, timeout, d.BatchWindow().Seconds())
	}
	if got := num(q["MessageRetentionPeriod"]); got != d.Retention().Seconds() {
		t.Errorf("%s: retention %v, want %v (from the schedule)", d.Name, got, d.Retention().Seconds())
	}
	for _, id := range []string{dlqID, subDLQID} {
		dq := queues[id]
		if dq.DeletionPolicy != "Retain" || num(dq.Properties["MessageRetentionPeriod"]) != config.DLQRetention.Seconds() {
			t.Errorf("%s: DLQ %s deletion %q retention %v, want Retain and 14 days", d.Name, id, dq.DeletionPolicy, dq.Properties["MessageRetentionPeriod"])
		}
	}
	rap, _ := queues[dlqID].Properties["RedriveAllowPolicy"].(map[string]any)
	src := fmt.Sprint(rap["sourceQueueArns"])
	if rap["redrivePermission"] != "byQueue" || !strings.Contains(src, q["QueueName"].(string)) {
		t.Errorf("%s: DLQ RedriveAllowPolicy %v, want byQueue naming %v", d.Name, rap, q["QueueName"])
	}
	for id, qq := range queues {
		if qq.Properties["SqsManagedSseEnabled"] != true {
			t.Errorf("%s: queue %s not encrypted", d.Name, id)
		}
	}
	checkTLSOnly(t, d.Name, ofType(res, "AWS::SQS::QueuePolicy"), "Queues", []string{queueID, dlqID, subDLQID})

	// The event source mapping.
	for _, m := range ofType(res, "AWS::Lambda::EventSourceMapping") {
		mp := m.Properties
		if !slices.Equal(anyStrings(mp["FunctionResponseTypes"]), []string{"ReportBatchItemFailures"}) {
			t.Errorf("%s: FunctionResponseTypes %v", d.Name, mp["FunctionResponseTypes"])
		}
		if sc, _ := mp["ScalingConfig"].(map[string]any); num(sc["MaximumConcurrency"]) != float64(d.Concurrency()) {
			t.Errorf("%s: MaximumConcurrency %v, want %d", d.Name, mp["ScalingConfig"], d.Concurrency())
		}
		if num(mp["BatchSize"]) != float64(d.ReceiveBatch()) || num(mp["MaximumBatchingWindowInSeconds"]) != d.BatchWindow().Seconds() {
			t.Errorf("%s: batch %v window %v, want %d and %v", d.Name, mp["BatchSize"], mp["MaximumBatchingWindowInSeconds"], d.ReceiveBatch(), d.BatchWindow().Seconds())
		}
		if refID(mp["EventSourceArn"]) != queueID || refID(mp["FunctionName"]) != fnID {
			t.Errorf("%s: mapping connects %v to %v", d.Name, mp["EventSourceArn"], mp["FunctionName"])
		}
	}

	// Alarms: DLQ depth > 0, subscription DLQ depth > 0, oldest message age, function errors.
	want := map[string]float64{"ApproximateNumberOfMessagesVisible": 0, "ApproximateAgeOfOldestMessage": cfg.Alarms.OldestMessageThreshold().Seconds(), "Errors": 0}
	wantSeen := map[string]int{"ApproximateNumberOfMessagesVisible": 2, "ApproximateAgeOfOldestMessage": 1, "Errors": 1}
	if d.Pause != nil {
		want[metrics.LanePaused], wantSeen[metrics.LanePaused] = 0, 1
	}
	seen := map[string]int{}
	for id, a := range ofType(res, "AWS::CloudWatch::Alarm") {
		ap := a.Properties
		name, _ := ap["MetricName"].(string)
		seen[name]++
		if th, ok := want[name]; !ok || num(ap["Threshold"]) != th || ap["ComparisonOperator"] != "GreaterThanThreshold" {
			t.Errorf("%s: alarm %s on %s > %v", d.Name, id, name, ap["Threshold"])
		}
		if actions := anyLen(ap["AlarmActions"]); (actions > 0) != alarmTopic {
			t.Errorf("%s: alarm %s has %d actions, alarm topic configured: %v", d.Name, id, actions, alarmTopic)
		}
	}
	if diff := cmp.Diff(wantSeen, seen); diff != "" {
		t.Errorf("%s: alarms (-want +got):\n%s", d.Name, diff)
	}

	// The signing secret: generated in a whsec_-compatible form, or imported.
	secrets := ofType(res, "AWS::SecretsManager::Secret")
	for _, s := range secrets {
		g := s.Properties["GenerateSecretString"].(map[string]any)
		if g["ExcludePunctuation"] != true || num(g["PasswordLength"]) != stack.SigningSecretLength || g["SecretStringTemplate"] != nil {
			t.Errorf("%s: generated secret %v, want 32 letters and digits", d.Name, g)
		}
	}
	secretRef := env[delivery.EnvSecretID]
	switch {
	case d.SecretName != "" && secretRef != d.SecretName:
		t.Errorf("%s: %s = %v, want the imported secret's name %s", d.Name, delivery.EnvSecretID, secretRef, d.SecretName)
	case d.SecretName == "" && len(secrets) == 1 && refID(secretRef) == "":
		t.Errorf("%s: %s = %v, want the generated secret's ARN", d.Name, delivery.EnvSecretID, secretRef)
	}

	// Least privilege: exactly these actions, each on the lane's own resources.
	granted := map[string]bool{}
	for _, pol := range ofType(res, "AWS::IAM::Policy") {
		for _, st := range statements(pol.Properties["PolicyDocument"]) {
			actions := anyStrings(st["Action"])
			resource := fmt.Sprint(st["Resource"])
			switch {
			case slices.Contains(actions, "sqs:ReceiveMessage"):
				if refID(st["Resource"]) != queueID || !slices.Contains(actions, "sqs:ChangeMessageVisibility") {
					t.Errorf("%s: queue statement %v", d.Name, st)
				}
				// A lane that pauses re-queues fresh copies to its own
				// queue; an ordered one hides them in place (fifo.go).
				if slices.Contains(actions, "sqs:SendMessage") != (d.Pause != nil && !d.Ordered()) {
					t.Errorf("%s: queue statement %v; sqs:SendMessage only when a standard lane pauses", d.Name, actions)
				}
			case slices.Contains(actions, "secretsmanager:GetSecretValue"):
				ok := strings.Contains(resource, "SigningSecret") || (d.SecretName != "" && strings.Contains(resource, d.SecretName+"-??????"))
				for _, name := range d.Secrets() {
					if strings.Contains(resource, "secret:"+name+"-??????") {
						ok, granted[name] = true, true
					}
				}
				if !ok {
					t.Errorf("%s: secret statement on %s, want its own secret, a header's or its URL's", d.Name, resource)
				}
			case slices.Equal(actions, []string{"s3:GetObject"}):
				// Large payloads: read the objects under the prefix (of its
				// sources: TestLargePayloads), nothing else.
				if !cfg.LargePayloads() || !strings.Contains(resource, "/payloads/") {
					t.Errorf("%s: payload statement on %s", d.Name, resource)
				}
			case slices.Equal(actions, []string{"kms:Decrypt"}):
				// Large payloads: the data key, through S3 only.
				if !cfg.LargePayloads() || !strings.Contains(resource, "DataKey") || !strings.Contains(fmt.Sprint(st["Condition"]), "kms:ViaService") {
					t.Errorf("%s: key statement %v", d.Name, st)
				}
			case slices.Contains(actions, "dynamodb:UpdateItem"):
				// GetItem only where the lane reads: dedupe.mode check, or its pause state.
				wantActions := []string{"dynamodb:UpdateItem"}
				if cfg.DedupeMode() == config.DedupeCheck || d.Pause != nil {
					wantActions = []string{"dynamodb:GetItem", "dynamodb:UpdateItem"}
				}
				if !slices.Equal(slices.Sorted(slices.Values(actions)), wantActions) || !strings.Contains(resource, "DeliveryRecords") {
					t.Errorf("%s: table statement %v, want the actions %v", d.Name, st, wantActions)
				}
				// The lane reaches only its own records: keys "<destination>#…".
				want := map[string]any{"ForAllValues:StringLike": map[string]any{"dynamodb:LeadingKeys": []any{d.Name + "#*"}}}
				if diff := cmp.Diff(want, st["Condition"]); diff != "" {
					t.Errorf("%s: table statement condition (-want +got):\n%s", d.Name, diff)
				}
			case slices.Contains(actions, "logs:PutLogEvents"), slices.Contains(actions, "xray:PutTraceSegments"):
			case d.StaticEgress() && strings.HasPrefix(actions[0], "ec2:"): // TestStaticEgress checks them
			case d.Pause != nil && slices.Equal(actions, []string{"lambda:ListEventSourceMappings"}):
				if st["Resource"] != "*" || st["Condition"] != nil {
					t.Errorf("%s: list statement %v", d.Name, st)
				}
			case d.Pause != nil && slices.Equal(actions, []string{"lambda:UpdateEventSourceMapping"}):
				// Only the mappings of its own function.
				want := map[string]any{"StringEquals": map[string]any{"lambda:FunctionArn": map[string]any{"Fn::GetAtt": []any{fnID, "Arn"}}}}
				if diff := cmp.Diff(want, st["Condition"]); diff != "" {
					t.Errorf("%s: switch statement condition (-want +got):\n%s", d.Name, diff)
				}
				if r := joined(st["Resource"]); !strings.HasSuffix(r, ":event-source-mapping:*") {
					t.Errorf("%s: switch statement on %q, want the account's event source mappings", d.Name, r)
				}
			default:
				t.Errorf("%s: unexpected statement %v", d.Name, st)
			}
		}
	}
	for _, name := range d.Secrets() {
		if !granted[name] {
			t.Errorf("%s: the header or URL secret %s is not readable by the function", d.Name, name)
		}
	}
	checkOrderedLane(t, d, res) // fifo_test.go
}

// checkTLSOnly asserts each resource has a policy denying requests without TLS.
// checkLogging: the function logs JSON through the runtime, at the
// application level INFO (EMF lines have no level and count as INFO), and
// the platform's lines at the config's functions.systemLogLevel.
func checkLogging(t *testing.T, name string, cfg *config.Config, props map[string]any) {
	t.Helper()
	want := map[string]any{"LogFormat": "JSON", "ApplicationLogLevel": "INFO", "SystemLogLevel": cfg.Functions.SystemLog()}
	got, _ := props["LoggingConfig"].(map[string]any)
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: LoggingConfig %v, want %s %v", name, got, k, v)
		}
	}
}

func checkTLSOnly(t *testing.T, lane string, policies map[string]resource, key string, ids []string) {
	t.Helper()
	covered := map[string]bool{}
	for _, p := range policies {
		deny := false
		for _, st := range statements(p.Properties["PolicyDocument"]) {
			cond, _ := st["Condition"].(map[string]any)
			b, _ := cond["Bool"].(map[string]any)
			if st["Effect"] == "Deny" && b["aws:SecureTransport"] == "false" && st["Principal"] != nil {
				deny = true
			}
		}
		if !deny {
			continue
		}
		for _, target := range p.Properties[key].([]any) {
			covered[refID(target)] = true
		}
	}
	for _, id := range ids {
		if !covered[id] {
			t.Errorf("%s: %s has no TLS-only policy", lane, id)
		}
	}
}

func statements(doc any) []map[string]any {
	m, _ := doc.(map[string]any)
	var out []map[string]any
	for _, s := range asSlice(m["Statement"]) {
		if st, ok := s.(map[string]any); ok {
			out = append(out, st)
		}
	}
	return out
}

func asSlice(v any) []any {
	if s, ok := v.([]any); ok {
		return s
	}
	if v == nil {
		return nil
	}
	return []any{v}
}

func anyStrings(v any) []string {
	var out []string
	for _, x := range asSlice(v) {
		out = append(out, fmt.Sprint(x))
	}
	return out
}

func anyLen(v any) int { return len(asSlice(v)) }

func TestBase(t *testing.T) {
	cfg := testConfig(t, 3, "ops@example.com")
	h, _ := synth(t, cfg)
	tmpl, res := templateOf(t, h.Stack)

	// Topic: encrypted with the stack's key, TLS-only.
	topics := ofType(res, "AWS::SNS::Topic")
	if len(topics) != 2 {
		t.Fatalf("got %d topics, want the fan-out and the alarm topic", len(topics))
	}
	var topicIDs []string
	for id, tp := range topics {
		topicIDs = append(topicIDs, id)
		if refID(tp.Properties["KmsMasterKeyId"]) == "" {
			t.Errorf("topic %s is not encrypted with the stack's key: %v", id, tp.Properties["KmsMasterKeyId"])
		}
	}
	checkTLSOnly(t, "parent", ofType(res, "AWS::SNS::TopicPolicy"), "Topics", topicIDs)
	tmpl.HasResourceProperties(jsii.String("AWS::SNS::Subscription"), map[string]any{"Protocol": "email", "Endpoint": "ops@example.com"})
	tmpl.HasResourceProperties(jsii.String("AWS::KMS::Key"), map[string]any{"EnableKeyRotation": true})

	// Table.
	tables := ofType(res, "AWS::DynamoDB::Table")
	if len(tables) != 1 {
		t.Fatalf("got %d tables", len(tables))
	}
	var tableID string
	for id, tb := range tables {
		tableID = id
		p := tb.Properties
		wantProps := map[string]any{
			"BillingMode": "PAY_PER_REQUEST",
			"KeySchema":   []any{map[string]any{"AttributeName": "pk", "KeyType": "HASH"}},
			"AttributeDefinitions": []any{map[string]any{"AttributeName": "pk", "AttributeType": "S"},
				map[string]any{"AttributeName": ddbitem.TimeBucket, "AttributeType": "S"},
				map[string]any{"AttributeName": ddbitem.FirstAttemptAt, "AttributeType": "S"}},
			// The records by first attempt (ops events): sparse, keys only.
			"GlobalSecondaryIndexes": []any{map[string]any{
				"IndexName": ddbitem.TimeIndex,
				"KeySchema": []any{map[string]any{"AttributeName": ddbitem.TimeBucket, "KeyType": "HASH"},
					map[string]any{"AttributeName": ddbitem.FirstAttemptAt, "KeyType": "RANGE"}},
				"Projection": map[string]any{"ProjectionType": "KEYS_ONLY"},
			}},
			// The delivery records' and the replay records' expiry.
			"TimeToLiveSpecification":          map[string]any{"AttributeName": ddbitem.ExpiresAt, "Enabled": true},
			"PointInTimeRecoverySpecification": map[string]any{"PointInTimeRecoveryEnabled": true},
		}
		for k, want := range wantProps {
			if diff := cmp.Diff(want, p[k]); diff != "" {
				t.Errorf("table %s (-want +got):\n%s", k, diff)
			}
		}
		if tb.DeletionPolicy != "Retain" {
			t.Errorf("table deletion policy %q, want Retain", tb.DeletionPolicy)
		}
	}

	// API: regional, POST /webhooks/{source}, stage throttling, access logs, metrics.
	tmpl.HasResourceProperties(jsii.String("AWS::ApiGateway::RestApi"), map[string]any{"EndpointConfiguration": map[string]any{"Types": []any{"REGIONAL"}}, "BinaryMediaTypes": []any{"*/*"}})
	tmpl.HasResourceProperties(jsii.String("AWS::ApiGateway::Resource"), map[string]any{"PathPart": "{source}"})
	tmpl.HasResourceProperties(jsii.String("AWS::ApiGateway::Method"), map[string]any{
		"HttpMethod": "POST", "AuthorizationType": "NONE",
		"Integration":       map[string]any{"Type": "AWS_PROXY", "IntegrationHttpMethod": "POST"},
		"RequestParameters": map[string]any{"method.request.path.source": true},
	})
	for _, st := range ofType(res, "AWS::ApiGateway::Stage") {
		p := st.Properties
		// The stage default (unknown sources) and one setting per source's
		// method, each with its own throttle and detailed metrics.
		want := map[string][2]float64{"/*": {cfg.API.Rate(), float64(cfg.API.Burst())}}
		for _, s := range cfg.Sources {
			want["/~1webhooks~1"+s.Name] = [2]float64{s.Limits.Rate(cfg.API), float64(s.Limits.Burst(cfg.API))}
		}
		got := map[string][2]float64{}
		for _, x := range asSlice(p["MethodSettings"]) {
			ms := x.(map[string]any)
			got[ms["ResourcePath"].(string)] = [2]float64{num(ms["ThrottlingRateLimit"]), num(ms["ThrottlingBurstLimit"])}
			if ms["MetricsEnabled"] != true || (ms["ResourcePath"] == "/*") != (ms["HttpMethod"] == "*") {
				t.Errorf("stage method setting %v, want detailed metrics on, * for the default and POST per source", ms)
			}
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("stage throttles by resource path (-want +got):\n%s", diff)
		}
		if got["/~1webhooks~1github"] != [2]float64{10, 20} {
			t.Errorf("github's throttle %v, want its configured 10/20", got["/~1webhooks~1github"])
		}
		als, _ := p["AccessLogSetting"].(map[string]any)
		var format map[string]any
		if err := json.Unmarshal([]byte(fmt.Sprint(als["Format"])), &format); err != nil || refID(als["DestinationArn"]) == "" || format["requestId"] != "$context.requestId" {
			t.Errorf("access log setting %v: %v", als, err)
		}
		logs := res[refID(als["DestinationArn"])]
		if num(logs.Properties["RetentionInDays"]) != float64(cfg.API.LogRetention()) {
			t.Errorf("access log retention %v, want %d", logs.Properties["RetentionInDays"], cfg.API.LogRetention())
		}
		if p["TracingEnabled"] != true {
			t.Errorf("stage tracing %v", p["TracingEnabled"])
		}
	}
	for id, lg := range ofType(res, "AWS::Logs::LogGroup") {
		if lg.Properties["RetentionInDays"] == nil {
			t.Errorf("log group %s keeps logs forever", id)
		}
	}

	// Ingest: its environment and its least privilege.
	fnID := *awscdk.Stack_Of(h.Ingest.Function).GetLogicalId(h.Ingest.Function.Node().DefaultChild().(awscdk.CfnElement))
	env := res[fnID].Properties["Environment"].(map[string]any)["Variables"].(map[string]any)
	srcs, err := config.DecodeSources(ingest.EnvSources, env[ingest.EnvSources].(string))
	if err != nil {
		t.Fatalf("%s: %v", ingest.EnvSources, err)
	}
	if diff := cmp.Diff(config.IngestSources(cfg.Sources), srcs); diff != "" {
		t.Errorf("%s round trip (-config +env):\n%s", ingest.EnvSources, diff)
	}
	if env[ingest.EnvAPIType] != config.APITypeREST {
		t.Errorf("%s = %v, want %q", ingest.EnvAPIType, env[ingest.EnvAPIType], config.APITypeREST)
	}
	if refID(env[ingest.EnvTopicARN]) == "" || env[config.EnvMetricsSink] != "emf" {
		t.Errorf("ingest environment %v", env)
	}
	if want := strconv.Itoa(ingest.GCPercent); env["GOGC"] != want {
		t.Errorf("ingest GOGC = %v, want %s (ingest.GCPercent, the setting BenchmarkIngest measures)", env["GOGC"], want)
	}
	checkLogging(t, "ingest", cfg, res[fnID].Properties)
	if refID(env[ingest.EnvReplayTable]) != tableID {
		t.Errorf("%s = %v, want the table (github and shopify sources have replay protection)", ingest.EnvReplayTable, env[ingest.EnvReplayTable])
	}
	roleID := refID(res[fnID].Properties["Role"])
	var readable []string
	replayGrants := 0
	for _, pol := range ofType(res, "AWS::IAM::Policy") {
		if !slices.ContainsFunc(asSlice(pol.Properties["Roles"]), func(r any) bool { return refID(r) == roleID }) {
			continue
		}
		for _, st := range statements(pol.Properties["PolicyDocument"]) {
			actions := slices.Sorted(slices.Values(anyStrings(st["Action"]))) // minimizePolicies sorts them
			switch {
			case slices.Equal(actions, []string{"sns:Publish"}):
				if !slices.Contains(topicIDs, refID(st["Resource"])) {
					t.Errorf("ingest publishes to %v", st["Resource"])
				}
			case slices.Equal(actions, []string{"kms:Decrypt", "kms:GenerateDataKey*"}):
				if res[refID(st["Resource"])].Type != "AWS::KMS::Key" {
					t.Errorf("ingest kms on %v", st["Resource"])
				}
			case slices.Equal(actions, []string{"secretsmanager:DescribeSecret", "secretsmanager:GetSecretValue"}):
				for _, r := range asSlice(st["Resource"]) { // one statement for all secrets (minimizePolicies)
					readable = append(readable, fmt.Sprint(r))
				}
			case slices.Equal(actions, []string{"dynamodb:GetItem", "dynamodb:UpdateItem"}):
				// Replay protection: the conditional writes, and the read of
				// a copy that names no event, on the replay records only;
				// never another key.
				replayGrants++
				want := map[string]any{"ForAllValues:StringLike": map[string]any{"dynamodb:LeadingKeys": []any{replayguard.KeyPrefix + "*"}}}
				if diff := cmp.Diff(want, st["Condition"]); diff != "" || refID(st["Resource"]) != tableID {
					t.Errorf("ingest table statement on %v, condition (-want +got):\n%s", st["Resource"], diff)
				}
			case slices.Contains(actions, "logs:PutLogEvents"), slices.Contains(actions, "xray:PutTraceSegments"):
			default:
				t.Errorf("ingest: unexpected statement %v", st)
			}
		}
	}
	if replayGrants != 1 {
		t.Errorf("ingest has %d replay grants, want 1", replayGrants)
	}
	for _, s := range cfg.Sources {
		if !slices.ContainsFunc(readable, func(r string) bool { return strings.Contains(r, s.Verify.SecretName) }) {
			t.Errorf("ingest cannot read %s's secret %s (reads %v)", s.Name, s.Verify.SecretName, readable)
		}
	}
	if len(readable) != len(cfg.Sources) {
		t.Errorf("ingest reads %d secrets, want one per source (%d)", len(readable), len(cfg.Sources))
	}

	// Source secrets named by name are created empty when missing; ARNs are not.
	ensure := ofType(res, "Custom::AWS")
	if len(ensure) != 2 {
		t.Errorf("got %d ensure-secret resources, want 2 (the sources named by name)", len(ensure))
	}
	for id, e := range ensure {
		call := fmt.Sprint(e.Properties["Create"])
		if !strings.Contains(call, "CreateSecret") || !strings.Contains(call, "ResourceExistsException") || strings.Contains(call, "SecretString") {
			t.Errorf("%s: %s, want CreateSecret without a value, ignoring ResourceExistsException", id, call)
		}
	}

	// Outputs: the API, each source and the dashboard; lanes add none.
	outputs := *tmpl.FindOutputs(jsii.String("*"), nil)
	for _, id := range []string{"ApiUrl", "SourceStripeUrl", "SourceGithubUrl", "SourceShopUrl", "DashboardName", "IndexParameter", "OperatorRoleArn"} {
		if _, ok := outputs[id]; !ok {
			t.Errorf("no output %s (have %d outputs)", id, len(outputs))
		}
	}
	if want := 4 + len(cfg.Sources); len(outputs) != want {
		t.Errorf("got %d outputs, want %d (API, sources, dashboard, index, operator role)", len(outputs), want)
	}
	if url := fmt.Sprint(*outputs["SourceStripeUrl"]); !strings.Contains(url, "webhooks/stripe") {
		t.Errorf("SourceStripeUrl = %s", url)
	}

	// Dashboard: ingest by source, and per destination deliveries, latency, queue and DLQ depth.
	for _, db := range ofType(res, "AWS::CloudWatch::Dashboard") {
		body, _ := json.Marshal(db.Properties["DashboardBody"])
		for _, want := range []string{"IngestAccepted", "IngestRejected", "IngestPublishFailed", "IngestReplayBlocked", "DeliverySucceeded", "DeliveryFailed", "DeliveryDead", "DeliveryLatency", "EventAge", "ApproximateNumberOfMessagesVisible", "ApproximateAgeOfOldestMessage", "dest-00: queue and DLQ depth", "dest-02: deliveries and failures"} {
			if !strings.Contains(string(body), want) {
				t.Errorf("dashboard lacks %s", want)
			}
		}
	}
}

// starAllowed lists the only actions that may be granted on Resource "*",
// with why AWS requires it.
var starAllowed = map[string]string{
	"xray:PutTraceSegments":    "X-Ray has no resource-level permissions",
	"xray:PutTelemetryRecords": "X-Ray has no resource-level permissions",
	"cloudwatch:PutMetricData": "no resource-level permissions; limited by the cloudwatch:namespace condition",
	// The operator role's (ops pause/resume), and a pausing lane's switch.
	"lambda:ListEventSourceMappings": "no resource-level permissions",
	// The operator role's: the console's charts read the lanes' metrics.
	"cloudwatch:GetMetricData": "no resource-level permissions",
	// A lane with static egress: Lambda manages its network interfaces.
	"ec2:DescribeNetworkInterfaces": "no resource-level permissions",
	"ec2:DescribeSubnets":           "no resource-level permissions",
}

// TestNoWildcardResources checks every identity policy (IAM policies and
// roles) in every template. Resource policies are not identity statements: a
// KMS key policy's Resource "*" means the key itself, and the queue and
// topic policies' TLS denials apply to their own resource.
//
// It reads two syntheses: reconcileConfig's, with reconcilers, a lane
// that pauses, large payloads and six lanes; and testConfig's with three
// lanes, with the REST API (its account role) and every trace.
func TestNoWildcardResources(t *testing.T) {
	for _, tt := range []struct {
		name string
		cfg  *config.Config
	}{{"reconcileConfig", reconcileConfig(t)}, {"testConfig", testConfig(t, 3, "ops@example.com")}} {
		cfg := tt.cfg
		if tt.name == "testConfig" && (cfg.API.Kind() != config.APITypeREST || cfg.TracingMode() != config.TracingAll) {
			t.Fatalf("%s: api.type %q, tracing %q; want the REST API and every trace", tt.name, cfg.API.Kind(), cfg.TracingMode())
		}
		h, outdir := synth(t, cfg)
		files, _ := filepath.Glob(filepath.Join(outdir, "*.template.json"))
		putMetrics := 0
		if len(files) != 1+len(cfg.Destinations) {
			t.Fatalf("%s: got %d templates, want the parent and %d lanes", tt.name, len(files), len(cfg.Destinations))
		}
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var doc struct{ Resources map[string]resource }
			if err := json.Unmarshal(data, &doc); err != nil {
				t.Fatal(err)
			}
			for id, r := range doc.Resources {
				var docs []any
				switch r.Type {
				case "AWS::IAM::Policy":
					docs = append(docs, r.Properties["PolicyDocument"])
				case "AWS::IAM::Role":
					for _, p := range asSlice(r.Properties["Policies"]) {
						docs = append(docs, p.(map[string]any)["PolicyDocument"])
					}
					for _, m := range asSlice(r.Properties["ManagedPolicyArns"]) {
						if !strings.Contains(fmt.Sprint(m), "AmazonAPIGatewayPushToCloudWatchLogs") {
							t.Errorf("%s: %s %s: managed policy %v", tt.name, filepath.Base(f), id, m)
						}
					}
				}
				for _, d := range docs {
					for _, st := range statements(d) {
						for _, res := range asSlice(st["Resource"]) {
							s, isString := res.(string)
							if !isString || !strings.Contains(s, "*") {
								continue
							}
							for _, a := range anyStrings(st["Action"]) {
								if _, ok := starAllowed[a]; !ok || s != "*" {
									t.Errorf("%s: %s %s: %s on %q", tt.name, filepath.Base(f), id, a, s)
								}
								if a == "cloudwatch:PutMetricData" {
									putMetrics++
									if ns := fmt.Sprint(st["Condition"]); !strings.Contains(ns, "cloudwatch:namespace:Hookfan") {
										t.Errorf("%s: %s %s: PutMetricData without the namespace condition: %s", tt.name, filepath.Base(f), id, ns)
									}
								}
							}
						}
					}
				}
			}
		}
		// No function calls PutMetricData: they write EMF.
		if putMetrics != 0 || len(h.Lanes) != len(cfg.Destinations) {
			t.Errorf("%s: PutMetricData granted to %d functions, want none (they write EMF)", tt.name, putMetrics)
		}
		checkFunctionBuilds(t, outdir)
	}
}

// checkFunctionBuilds checks that every Go function of the assembly in
// outdir (ingest and each lane's deliver) was built with lambda.norpc and
// no other tag: nothing in a binary depends on the configuration. It reads
// the build information of each function asset's bootstrap, found through
// the assembly's asset manifests.
func checkFunctionBuilds(t *testing.T, outdir string) {
	t.Helper()
	manifests, _ := filepath.Glob(filepath.Join(outdir, "*.assets.json"))
	checked := map[string]bool{"ingest": false, "deliver": false}
	for _, m := range manifests {
		data, err := os.ReadFile(m)
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Files map[string]struct {
				Source struct{ Path string }
			}
		}
		if err := json.Unmarshal(data, &doc); err != nil {
			t.Fatal(err)
		}
		for hash, f := range doc.Files {
			dir := f.Source.Path
			if !filepath.IsAbs(dir) {
				dir = filepath.Join(outdir, dir)
			}
			bootstrap := filepath.Join(dir, "bootstrap")
			if _, err := os.Stat(bootstrap); err != nil {
				continue // not a Go function: a template, the Node.js rotation function
			}
			info, err := buildinfo.ReadFile(bootstrap)
			if err != nil {
				t.Fatalf("asset %s: %v", hash, err)
			}
			got := ""
			for _, s := range info.Settings {
				if s.Key == "-tags" {
					got = s.Value
				}
			}
			if got != "lambda.norpc" {
				t.Errorf("asset %s (%s): built with -tags %q, want lambda.norpc", hash, info.Path, got)
			}
			checked[filepath.Base(info.Path)] = true
		}
	}
	for fn, ok := range checked {
		if !ok {
			t.Errorf("no %s function among the assets of %s", fn, outdir)
		}
	}
}

func TestSynthesizeTwiceIsIdentical(t *testing.T) {
	cfg := testConfig(t, 3, "ops@example.com")
	// The package's synthesis of cfg, and one more with a fresh builder:
	// the functions are compiled again, so equal hashes prove the build
	// itself is reproducible.
	_, shared := synth(t, cfg)
	b, err := stack.NewBuilder(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	fresh := t.TempDir()
	if _, err := synthInto(cfg, b, fresh, flagsContext(t)); err != "" {
		t.Fatal(err)
	}
	outs := []string{shared, fresh}
	read := func(dir string) map[string]string {
		files := map[string]string{}
		for _, pattern := range []string{"*.template.json", "*.assets.json"} {
			names, _ := filepath.Glob(filepath.Join(dir, pattern))
			for _, n := range names {
				data, err := os.ReadFile(n)
				if err != nil {
					t.Fatal(err)
				}
				files[filepath.Base(n)] = string(data)
			}
		}
		return files
	}
	checkFunctionBuilds(t, outs[0])
	first, second := read(outs[0]), read(outs[1])
	if len(first) == 0 {
		t.Fatal("no templates")
	}
	if diff := cmp.Diff(first, second); diff != "" {
		t.Errorf("two syntheses differ (-first +second):\n%s", diff)
	}
	assets := func(dir string) []string {
		names, _ := filepath.Glob(filepath.Join(dir, "asset.*"))
		for i := range names {
			names[i] = filepath.Base(names[i])
		}
		return names
	}
	if diff := cmp.Diff(assets(outs[0]), assets(outs[1])); diff != "" || len(assets(outs[0])) < 2 {
		t.Errorf("asset hashes differ (-first +second):\n%s", diff)
	}
}

// TestAssemblyErrorsFailOnFindings: unsuppressed findings, deep in a
// nested stack, are listed by path, with cdk.json's feature flags (the CDK
// fails the synthesis itself and Synth reads its validation report) and
// without them (Synth reads the assembly's annotations).
func TestAssemblyErrorsFailOnFindings(t *testing.T) {
	for _, flags := range []*map[string]any{flagsContext(t), nil} {
		app := awscdk.NewApp(&awscdk.AppProps{Outdir: jsii.String(t.TempDir()), Context: flags})
		parent := awscdk.NewStack(app, jsii.String("Parent"), nil)
		nested := awscdk.NewNestedStack(parent, jsii.String("Nested"), nil)
		// An unencrypted queue without TLS enforcement or a DLQ.
		awssqs.NewQueue(nested, jsii.String("Plain"), &awssqs.QueueProps{Encryption: awssqs.QueueEncryption_UNENCRYPTED})
		stack.ApplyNag(app, false)
		errs, err := stack.Synth(app)
		if err != nil {
			t.Fatalf("flags %v: %v", flags != nil, err)
		}
		joined := strings.Join(errs, "\n")
		for _, want := range []string{"/Parent/Nested/Plain/Resource: AwsSolutions-SQS4: ", "/Parent/Nested/Plain/Resource: AwsSolutions-SQS3: "} {
			if !strings.Contains(joined, want) {
				t.Errorf("flags %v: findings lack %q:\n%s", flags != nil, want, joined)
			}
		}
	}
}

func TestEnvironmentLimit(t *testing.T) {
	var sources []any
	for i := range 40 {
		sources = append(sources, map[string]any{"name": fmt.Sprintf("source-%02d", i), "verify": map[string]any{"kind": "github", "secretName": fmt.Sprintf("hookfan/sources/%s-%02d", strings.Repeat("x", 100), i)}})
	}
	data, _ := json.Marshal(map[string]any{"sources": sources, "destinations": []any{map[string]any{"name": "d", "url": "https://d.example.com/"}}})
	cfg, err := config.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	app := awscdk.NewApp(&awscdk.AppProps{Outdir: jsii.String(t.TempDir()), Context: flagsContext(t)})
	_, err = stack.New(app, "Hookfan", &stack.Props{Config: cfg, Builder: builder})
	if err == nil || !strings.Contains(err.Error(), "4096") || !strings.Contains(err.Error(), ingest.EnvSources) {
		t.Errorf("got %v, want an error naming Lambda's 4096-byte limit and %s", err, ingest.EnvSources)
	}
}
