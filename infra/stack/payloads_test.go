package stack_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/google/go-cmp/cmp"

	"github.com/hookfan/hookfan/shared/config"
)

// TestLargePayloads synthesizes (under cdk-nag) a stack whose stripe
// source takes bodies up to the REST ceiling: the payload bucket is
// private, encrypted, TLS-only and expires its objects after the derived
// lifecycle; ingest may only put objects under the prefix, each lane only
// get them; both functions are told the bucket.
func TestLargePayloads(t *testing.T) {
	cfg := testConfig(t, 2, "")
	cfg.Sources[0].MaxBodyBytes = config.MaxBodyBytesREST
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	outdir := t.TempDir()
	h, _ := synth(t, cfg, builder, outdir)
	if h.Payloads == nil {
		t.Fatal("no payload bucket")
	}
	checkFunctionBuilds(t, outdir)
	_, parent := templateOf(t, h.Stack)
	bucketID := *h.Stack.GetLogicalId(h.Payloads.Bucket.Node().DefaultChild().(awscdk.CfnElement))
	bucket := parent[bucketID]
	bp := bucket.Properties
	t.Run("bucket", func(t *testing.T) {
		if bucket.DeletionPolicy != "Retain" {
			t.Errorf("deletion policy %q, want Retain (queued messages may still refer to objects)", bucket.DeletionPolicy)
		}
		enc := fmt.Sprint(bp["BucketEncryption"])
		if !strings.Contains(enc, "AES256") {
			t.Errorf("encryption %s, want SSE-S3", enc)
		}
		want := map[string]any{"BlockPublicAcls": true, "BlockPublicPolicy": true, "IgnorePublicAcls": true, "RestrictPublicBuckets": true}
		if diff := cmp.Diff(want, bp["PublicAccessBlockConfiguration"]); diff != "" {
			t.Errorf("public access block (-want +got):\n%s", diff)
		}
		// Nothing left behind past the lifecycle: every object under the
		// prefix expires after the queue's retention plus the DLQ's 14
		// days, plus a day.
		rules := asSlice(bp["LifecycleConfiguration"].(map[string]any)["Rules"])
		if len(rules) != 1 {
			t.Fatalf("lifecycle rules %v, want one", rules)
		}
		r := rules[0].(map[string]any)
		days := cfg.PayloadExpirationDays()
		if r["Prefix"] != "payloads/" || num(r["ExpirationInDays"]) != float64(days) || r["Status"] != "Enabled" || num(r["AbortIncompleteMultipartUpload"].(map[string]any)["DaysAfterInitiation"]) != 1 {
			t.Errorf("lifecycle rule %v, want payloads/ expiring after %d days", r, days)
		}
		longest := 0.0
		for _, d := range cfg.Destinations {
			longest = max(longest, d.Retention().Hours()/24)
		}
		if float64(days) < longest+config.DLQRetention.Hours()/24 {
			t.Errorf("lifecycle %d days is shorter than the queue's %.1f days plus the DLQ's 14", days, longest)
		}
		var pol resource
		for _, bpol := range ofType(parent, "AWS::S3::BucketPolicy") {
			if refID(bpol.Properties["Bucket"]) == bucketID {
				pol = bpol
			}
		}
		tls := false
		for _, st := range statements(pol.Properties["PolicyDocument"]) {
			cond, _ := st["Condition"].(map[string]any)
			b, _ := cond["Bool"].(map[string]any)
			tls = tls || (st["Effect"] == "Deny" && b["aws:SecureTransport"] == "false")
		}
		if !tls || refID(pol.Properties["Bucket"]) != bucketID {
			t.Errorf("bucket policy %v, want a TLS-only deny on the bucket", pol.Properties)
		}
	})
	t.Run("ingest puts under the prefix only", func(t *testing.T) {
		var puts []string
		for _, pol := range ofType(parent, "AWS::IAM::Policy") {
			for _, st := range statements(pol.Properties["PolicyDocument"]) {
				actions := anyStrings(st["Action"])
				if !strings.Contains(fmt.Sprint(st["Resource"]), bucketID) {
					continue // the archive's bucket, its own tests
				}
				if slices.ContainsFunc(actions, func(a string) bool { return strings.HasPrefix(a, "s3:") }) {
					puts = append(puts, fmt.Sprint(actions, st["Resource"]))
					if !slices.Equal(actions, []string{"s3:PutObject"}) || !strings.Contains(fmt.Sprint(st["Resource"]), "/payloads/*") || !strings.Contains(fmt.Sprint(st["Resource"]), bucketID) {
						t.Errorf("S3 statement %v", st)
					}
				}
			}
		}
		if len(puts) != 1 {
			t.Errorf("S3 statements in the parent %v, want ingest's one", puts)
		}
		found := false
		for _, fn := range ofType(parent, "AWS::Lambda::Function") {
			envBlock, _ := fn.Properties["Environment"].(map[string]any)
			env, _ := envBlock["Variables"].(map[string]any)
			if _, ingest := env[config.EnvSources]; !ingest {
				continue
			}
			found = true
			if refID(env[config.EnvPayloadBucket]) != bucketID {
				t.Errorf("ingest %s = %v, want the bucket", config.EnvPayloadBucket, env[config.EnvPayloadBucket])
			}
		}
		if !found {
			t.Error("no ingest function")
		}
	})
	t.Run("lanes get under the prefix only", func(t *testing.T) {
		for i, d := range cfg.Destinations {
			_, res := templateOf(t, h.LaneStacks[i])
			checkLane(t, d, cfg, res, false)
			gets := 0
			for _, pol := range ofType(res, "AWS::IAM::Policy") {
				for _, st := range statements(pol.Properties["PolicyDocument"]) {
					if slices.Equal(anyStrings(st["Action"]), []string{"s3:GetObject"}) {
						gets++
					}
				}
			}
			_, fn := only(t, res, "AWS::Lambda::Function")
			env := fn.Properties["Environment"].(map[string]any)["Variables"].(map[string]any)
			if gets != 1 || env[config.EnvPayloadBucket] == nil {
				t.Errorf("%s: %d GetObject statements, %s = %v; want one and the bucket", d.Name, gets, config.EnvPayloadBucket, env[config.EnvPayloadBucket])
			}
		}
	})
}
