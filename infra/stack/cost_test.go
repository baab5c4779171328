package stack_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hookfan/hookfan/infra/stack"
	"github.com/hookfan/hookfan/infra/tools/cost"
	"github.com/hookfan/hookfan/shared/config"
)

// readTemplates reads every template of a synthesized assembly.
func readTemplates(t *testing.T, outdir string) map[string]templateDoc {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(outdir, "*.template.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no templates in %s: %v", outdir, err)
	}
	docs := map[string]templateDoc{}
	for _, f := range files {
		docs[filepath.Base(f)], _ = readTemplate(t, f)
	}
	return docs
}

// templateCounts counts, across the parent and its nested stacks, the
// resources the cost model prices.
func templateCounts(docs map[string]templateDoc) cost.Counts {
	var c cost.Counts
	for _, doc := range docs {
		n := func(typ string) int { return len(ofType(doc.Resources, typ)) }
		c.Alarms += n("AWS::CloudWatch::Alarm")
		for _, a := range ofType(doc.Resources, "AWS::CloudWatch::Alarm") {
			c.AlarmMetrics++ // an alarm on one metric
			if queries := asSlice(a.Properties["Metrics"]); len(queries) > 0 {
				c.AlarmMetrics-- // a math expression: each metric it reads
				for _, q := range queries {
					if _, ok := q.(map[string]any)["MetricStat"]; ok {
						c.AlarmMetrics++
					}
				}
			}
		}
		c.Dashboards += n("AWS::CloudWatch::Dashboard")
		c.GeneratedSecrets += n("AWS::SecretsManager::Secret")
		c.EnsuredSecrets += n("Custom::AWS")
		c.KMSKeys += n("AWS::KMS::Key")
		c.LogGroups += n("AWS::Logs::LogGroup")
		c.Queues += n("AWS::SQS::Queue")
		c.Functions += n("AWS::Lambda::Function")
		c.EventSourceMappings += n("AWS::Lambda::EventSourceMapping")
		c.Subscriptions += n("AWS::SNS::Subscription")
		c.Topics += n("AWS::SNS::Topic")
		c.Tables += n("AWS::DynamoDB::Table")
		c.Buckets += n("AWS::S3::Bucket")
		c.DeliveryStreams += n("AWS::KinesisFirehose::DeliveryStream")
		c.MetricFilters += n("AWS::Logs::MetricFilter")
		c.APIs += n("AWS::ApiGateway::RestApi") + n("AWS::ApiGatewayV2::Api")
		c.Rules += n("AWS::Events::Rule")
		c.Schedules += n("AWS::Scheduler::Schedule")
		for _, acl := range ofType(doc.Resources, "AWS::WAFv2::WebACL") {
			c.WebACLs++
			c.WAFRules += len(asSlice(acl.Properties["Rules"]))
		}
	}
	return c
}

// checkCostCounts fails when the resources the cost model counts for cfg
// (docs/cost.md's fixed part is priced from them) differ from the
// synthesized templates'. BilledSecrets include secrets the templates only
// name, so they are not compared.
func checkCostCounts(t *testing.T, cfg *config.Config, docs map[string]templateDoc) {
	t.Helper()
	want := cost.Resources(cfg)
	want.BilledSecrets = 0
	if diff := cmp.Diff(want, templateCounts(docs)); diff != "" {
		t.Errorf("the cost model's resource counts differ from the templates (-model +templates): update infra/tools/cost.Resources and docs/cost.md (go test ./infra/tools/cost -update)\n%s", diff)
	}
	// The dashboards' free tier counts their metrics.
	var got []int
	for _, doc := range docs {
		for _, dash := range ofType(doc.Resources, "AWS::CloudWatch::Dashboard") {
			got = append(got, dashboardMetrics(dash))
		}
	}
	slices.Sort(got)
	wantMetrics := slices.Sorted(slices.Values(cost.DashboardMetrics(cfg)))
	if !slices.Equal(got, wantMetrics) {
		t.Errorf("dashboard metrics %v in the templates, the cost model counts %v: update infra/tools/cost/dashboards.go", got, wantMetrics)
	}
}

// costOptionsConfig is cost.Reference(2) with every priced option on (WAF
// with an allow-listed source, alarm e-mail, a secret the stack does not
// create, header secrets, large payloads, a lane that pauses, a paced
// lane, reconciled Stripe and GitHub sources, no point-in-time recovery,
// no detailed API metrics): TestCostModelCounts's "options", which
// TestStageServerErrorsAlarmWithoutDetailedMetrics reads too.
func costOptionsConfig(t *testing.T) *config.Config {
	t.Helper()
	options := cost.Reference(2)
	options.Sources = append(options.Sources, config.Source{
		Name: "github", Verify: config.Verify{Kind: "github", SecretName: "arn:aws:secretsmanager:eu-west-1:123456789012:secret:github-AbCdEf"},
		Limits: config.SourceLimits{AllowedIPs: []string{"192.30.252.0/22"}}, MaxBodyBytes: 1 << 20,
	})
	options.API.Type = config.APITypeREST
	options.API.WAF.Enabled = true
	options.Alarms.Email = "ops@example.com"
	options.Destinations[1].SecretName = "hookfan/destinations/legacy"
	options.Destinations[1].Headers = []config.Header{{Name: "Authorization", SecretName: "hookfan/destinations/dest-02/token"}}
	options.Destinations[1].Pause = &config.Pause{}
	options.Destinations[1].RateLimit = &config.RateLimit{PerSecond: 5}
	options.Sources[0].Reconcile = &config.Reconcile{SecretName: "hookfan/reconcile/stripe"}
	options.Sources[1].Reconcile = &config.Reconcile{SecretName: "hookfan/reconcile/github", Hook: &config.GitHubHook{Org: "acme", ID: 7}}
	off := false
	options.Dedupe.PointInTimeRecovery = &off
	options.API.DetailedMetrics = &off
	if err := options.Validate(); err != nil {
		t.Fatal(err)
	}
	return options
}

// TestCostModelCounts synthesizes the deployment docs/cost.md prices and
// one with every priced option on (WAF with an allow-listed source, alarm
// e-mail, a secret the stack does not create, header secrets, large
// payloads, a lane that pauses, a paced lane, reconciled Stripe and GitHub
// sources), and checks the model counts what the templates hold and that
// every alarm has its runbook in docs/operations.md. The 300-destination
// stack test checks the counts on its configuration too.
func TestCostModelCounts(t *testing.T) {
	if cost.LanesPerDashboard != stack.LanesPerDashboard {
		t.Fatalf("cost.LanesPerDashboard is %d, stack.LanesPerDashboard %d", cost.LanesPerDashboard, stack.LanesPerDashboard)
	}
	options := costOptionsConfig(t)
	managed := cost.Reference(1)
	managed.TopicKey = config.TopicKeyAWSManaged
	// A reconciled Stripe source publishes under SNS's AWS managed key too.
	managed.Sources[0].Reconcile = &config.Reconcile{SecretName: "hookfan/reconcile/stripe"}
	for name, cfg := range map[string]*config.Config{"reference": cost.Reference(3), "options": options, "aws-managed key": managed} {
		t.Run(name, func(t *testing.T) {
			if err := cfg.Validate(); err != nil {
				t.Fatal(err)
			}
			_, outdir := synth(t, cfg)
			docs := readTemplates(t, outdir)
			checkCostCounts(t, cfg, docs)
			checkRunbooks(t, docs)
			for _, tp := range ofType(docs["Hookfan.template.json"].Resources, "AWS::SNS::Topic") {
				if managed := strings.Contains(fmt.Sprint(tp.Properties["KmsMasterKeyId"]), "alias/aws/sns"); managed != (cfg.TopicKeyKind() == config.TopicKeyAWSManaged) {
					t.Errorf("topic key %v with topicKey %q", tp.Properties["KmsMasterKeyId"], cfg.TopicKeyKind())
				}
			}
			settings := 0
			for _, st := range ofType(docs["Hookfan.template.json"].Resources, "AWS::ApiGateway::Stage") {
				for _, x := range asSlice(st.Properties["MethodSettings"]) {
					settings++
					if got := x.(map[string]any)["MetricsEnabled"]; got != cfg.API.Detailed() {
						t.Errorf("stage method setting %v: metrics %v, want %v (api.detailedMetrics)", x, got, cfg.API.Detailed())
					}
				}
			}
			if cfg.API.Kind() == config.APITypeREST && settings == 0 {
				t.Error("no REST stage method settings found in Hookfan.template.json")
			}
			tables := 0
			for _, tb := range ofType(docs["Hookfan.template.json"].Resources, "AWS::DynamoDB::Table") {
				tables++
				spec, _ := tb.Properties["PointInTimeRecoverySpecification"].(map[string]any)
				if got := spec["PointInTimeRecoveryEnabled"]; got != cfg.Dedupe.PITR() {
					t.Errorf("record table PITR %v, want %v (dedupe.pointInTimeRecovery)", got, cfg.Dedupe.PITR())
				}
			}
			if tables != 1 {
				t.Errorf("%d record tables in Hookfan.template.json, want 1", tables)
			}
		})
	}
}

// runbookHeading is an alarm's runbook heading in docs/operations.md:
// "### `DeadLettersAlarm` (each destination)".
var runbookHeading = regexp.MustCompile("^### `([A-Za-z<>]+)`")

// alarmID reads an alarm's logical ID: the construct that holds it (a lane,
// the ingest API, the archive, a source's reconciler), the alarm's
// construct id, and the 8 hex digits of CloudFormation's hash. A source's
// alarms are named Source<Name><Kind>Alarm, <Name> the source's name in
// title case; a reconciler's Reconcile<Name><Kind>Alarm.
var alarmID = regexp.MustCompile(`^(Lane|Ingest|Archive|Reconcile)([A-Za-z0-9]+)[0-9A-F]{8}$`)

var (
	sourceAlarm    = regexp.MustCompile(`^Source[A-Z][A-Za-z0-9]*?((?:ClientErrors|Throttled|ServerErrors|IngestFailed)Alarm)$`)
	reconcileAlarm = regexp.MustCompile(`^[A-Z][A-Za-z0-9]*?((?:Missing|Skipped|Stopped|Errors)Alarm)$`)
)

// checkRunbooks fails when an alarm of the synthesized stack has no runbook
// in docs/operations.md: a heading per alarm construct, a source's alarms
// written with <Name> for the source's name.
func checkRunbooks(t *testing.T, docs map[string]templateDoc) {
	t.Helper()
	page, err := os.ReadFile("../../docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	runbooks := map[string]bool{}
	for line := range strings.SplitSeq(string(page), "\n") {
		if m := runbookHeading.FindStringSubmatch(line); m != nil {
			runbooks[m[1]] = true
		}
	}
	alarms := 0
	for name, doc := range docs {
		for id := range ofType(doc.Resources, "AWS::CloudWatch::Alarm") {
			alarms++
			m := alarmID.FindStringSubmatch(id)
			if m == nil {
				t.Errorf("%s: alarm %s: its logical ID is not <Lane|Ingest|Archive|Reconcile><construct><hash>; update checkRunbooks", name, id)
				continue
			}
			construct := sourceAlarm.ReplaceAllString(m[2], "Source<Name>$1")
			if m[1] == "Reconcile" {
				construct = "Reconcile" + reconcileAlarm.ReplaceAllString(m[2], "<Name>$1")
			}
			if !runbooks[construct] {
				t.Errorf("%s: alarm %s has no runbook in docs/operations.md: add a heading \"### `%s`\"", name, id, construct)
			}
		}
	}
	if alarms == 0 {
		t.Fatal("no alarms in the templates")
	}
}

// readTemplate reads one synthesized template and its size in bytes.
func readTemplate(t *testing.T, file string) (templateDoc, int) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var doc templateDoc
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	return doc, len(data)
}

// customResourceFunction is the logical ID prefix of CDK's AwsCustomResource
// provider: it runs at deployments only (it creates missing source
// secrets), so neither its tracing nor its platform lines follow traffic.
const customResourceFunction = "AWS679f53fac002430cb0da5b7982bd2287"

// TestDefaultsStayCheap synthesizes the default configuration (the
// deployment docs/cost.md prices) and fails on what would make it cost
// more than the page says: active tracing, the REST API, the platform's
// INFO lines, or a resource type the cost model does not price. It reads
// TestCostModelCounts's "reference" synthesis.
func TestDefaultsStayCheap(t *testing.T) {
	cfg := cost.Reference(3)
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	_, outdir := synth(t, cfg)
	docs := readTemplates(t, outdir)
	checkCostCounts(t, cfg, docs)
	types := map[string]bool{}
	for name, doc := range docs {
		for id, r := range doc.Resources {
			types[r.Type] = true
			switch r.Type {
			case "AWS::ApiGateway::RestApi":
				t.Errorf("%s: %s is a REST API; the default is the HTTP API", name, id)
			case "AWS::SNS::Topic":
				if r.Properties["TracingConfig"] != nil {
					t.Errorf("%s: topic %s traces (%v); the default is tracing off", name, id, r.Properties["TracingConfig"])
				}
			case "AWS::Lambda::Function":
				if tc, _ := r.Properties["TracingConfig"].(map[string]any); tc["Mode"] == "Active" || tc["Mode"] == "PassThrough" {
					t.Errorf("%s: function %s traces (%v); the default is tracing off", name, id, tc)
				}
				if strings.HasPrefix(id, customResourceFunction) {
					continue
				}
				lc, _ := r.Properties["LoggingConfig"].(map[string]any)
				if lc["SystemLogLevel"] != "WARN" {
					t.Errorf("%s: function %s logs the platform at %v; the default is WARN (no START/END/REPORT lines)", name, id, lc["SystemLogLevel"])
				}
			}
		}
	}
	var unpriced []string
	for typ := range types {
		if _, ok := cost.PricedTypes[typ]; !ok {
			unpriced = append(unpriced, typ)
		}
	}
	slices.Sort(unpriced)
	if len(unpriced) > 0 {
		t.Errorf("resource types the cost model does not price (add each to cost.PricedTypes with its line, or \"no charge\" and why): %v", unpriced)
	}
}
