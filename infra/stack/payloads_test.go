package stack_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/google/go-cmp/cmp"

	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/ingest"
	"github.com/hookfan/hookfan/shared/metrics"
)

// payloadsConfig is testConfig's 4 destinations, no alarm e-mail, with
// the stripe source taking bodies up to the REST ceiling (large
// payloads), dest-01 pausing and an operator principal: TestLargePayloads,
// TestOperatorRoleGuardsTheQueues and TestTimeIndexSwitch (the index on)
// read its synthesis.
func payloadsConfig(t *testing.T) *config.Config {
	t.Helper()
	cfg := testConfig(t, 4, "")
	cfg.Sources[0].MaxBodyBytes = config.MaxBodyBytesREST
	cfg.Destinations[1].Pause = &config.Pause{}
	cfg.Operators.Principals = []string{"arn:aws:iam::123456789012:role/oncall"}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// TestLargePayloads synthesizes (under cdk-nag) a stack whose stripe
// source takes bodies up to the REST ceiling: the payload bucket is
// private, encrypted with the data key, TLS-only and expires its objects
// after the derived lifecycle; ingest may only put objects under the
// prefix (and its copy into the archive), each lane only get those of its
// filter's sources; both functions are told the bucket; the data key is
// granted to exactly the roles that write or read bodies.
func TestLargePayloads(t *testing.T) {
	cfg := payloadsConfig(t)
	h, outdir := synth(t, cfg)
	if h.Payloads == nil {
		t.Fatal("no payload bucket")
	}
	checkFunctionBuilds(t, outdir)
	_, parent := templateOf(t, h.Stack)
	bucketID := *h.Stack.GetLogicalId(h.Payloads.Bucket.Node().DefaultChild().(awscdk.CfnElement))
	keyID := *h.Stack.GetLogicalId(h.DataKey.Node().DefaultChild().(awscdk.CfnElement))
	archiveID := *h.Stack.GetLogicalId(h.Archive.Bucket.Node().DefaultChild().(awscdk.CfnElement))
	roleID := func(r awscdk.Resource) string {
		return *h.Stack.GetLogicalId(r.Node().DefaultChild().(awscdk.CfnElement))
	}
	ingestRole, operatorRole, streamRole := roleID(h.Ingest.Role), roleID(h.Operator.Role), roleID(h.Archive.StreamRole)
	bucket := parent[bucketID]
	bp := bucket.Properties
	t.Run("bucket", func(t *testing.T) {
		if bucket.DeletionPolicy != "Retain" {
			t.Errorf("deletion policy %q, want Retain (queued messages may still refer to objects)", bucket.DeletionPolicy)
		}
		enc := fmt.Sprint(bp["BucketEncryption"])
		if want := "map[ServerSideEncryptionConfiguration:[map[BucketKeyEnabled:false ServerSideEncryptionByDefault:map[KMSMasterKeyID:map[Fn::GetAtt:[" + keyID + " Arn]] SSEAlgorithm:aws:kms]]]]"; enc != want {
			t.Errorf("encryption %s, want SSE-KMS with the data key, no bucket key (%s)", enc, want)
		}
		key := parent[keyID]
		if key.Properties["EnableKeyRotation"] != true || key.DeletionPolicy != "Retain" {
			t.Errorf("data key %v (deletion %q), want rotation on and retained with the buckets", key.Properties, key.DeletionPolicy)
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
		// Every S3 grant in the parent on the payload bucket, or on the
		// archive's copies of large bodies, by role.
		want := map[string][]string{
			ingestRole:   {"s3:PutObject on " + archiveID + "/payloads/*, " + bucketID + "/payloads/*"},
			operatorRole: {"s3:GetObject,s3:PutObject on " + bucketID + "/payloads/*"},
		}
		got := map[string][]string{}
		for role, sts := range roleStatements(parent) {
			for _, st := range sts {
				if strings.HasPrefix(st, "s3:") && (strings.Contains(st, bucketID) || strings.Contains(st, "/payloads/")) {
					got[role] = append(got[role], st)
				}
			}
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("S3 grants on the bodies by role (-want +got):\n%s", diff)
		}
		found := false
		for _, fn := range ofType(parent, "AWS::Lambda::Function") {
			envBlock, _ := fn.Properties["Environment"].(map[string]any)
			env, _ := envBlock["Variables"].(map[string]any)
			if _, ingest := env[ingest.EnvSources]; !ingest {
				continue
			}
			found = true
			if refID(env[config.EnvPayloadBucket]) != bucketID || refID(env[config.EnvPayloadArchiveBucket]) != archiveID {
				t.Errorf("ingest %s = %v, %s = %v; want the payload bucket and the archive's", config.EnvPayloadBucket, env[config.EnvPayloadBucket],
					config.EnvPayloadArchiveBucket, env[config.EnvPayloadArchiveBucket])
			}
		}
		if !found {
			t.Error("no ingest function")
		}
	})
	t.Run("lanes get their sources' objects only", func(t *testing.T) {
		for i, d := range cfg.Destinations {
			_, res := templateOf(t, h.LaneStacks[i])
			checkLane(t, d, cfg, res, false)
			// In the payload bucket, then the archive's copies.
			var want []string
			for _, bucket := range []string{"<bucket>", "<archive>"} {
				if len(d.Filter.Sources) == 0 {
					want = append(want, bucket+"/payloads/*")
				}
				for _, src := range d.Filter.Sources {
					want = append(want, bucket+"/payloads/"+src+"/*")
				}
			}
			var got []string
			for _, sts := range roleStatements(res) {
				for _, st := range sts {
					action, targets, _ := strings.Cut(st, " on ")
					if !strings.HasPrefix(action, "s3:") {
						continue
					}
					for _, target := range strings.Split(targets, ", ") {
						bucket, prefix, _ := strings.Cut(target, "/")
						switch {
						case strings.HasPrefix(bucket, "referencetoHookfanPayloadsBucket"):
							bucket = "<bucket>"
						case strings.HasPrefix(bucket, "referencetoHookfanArchiveBucket"):
							bucket = "<archive>"
						}
						got = append(got, action+" on "+bucket+"/"+prefix)
					}
				}
			}
			for i := range want {
				want[i] = "s3:GetObject on " + want[i]
			}
			slices.Sort(got)
			slices.Sort(want)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s (sources %v): S3 grants (-want +got):\n%s", d.Name, d.Filter.Sources, diff)
			}
			_, fn := only(t, res, "AWS::Lambda::Function")
			env := fn.Properties["Environment"].(map[string]any)["Variables"].(map[string]any)
			if env[config.EnvPayloadBucket] == nil || env[config.EnvPayloadArchiveBucket] == nil {
				t.Errorf("%s: %s = %v, %s = %v; want both buckets", d.Name, config.EnvPayloadBucket, env[config.EnvPayloadBucket], config.EnvPayloadArchiveBucket, env[config.EnvPayloadArchiveBucket])
			}
		}
	})
	t.Run("the data key is granted to who writes or reads bodies", func(t *testing.T) {
		via := " if kms:ViaService s3"
		want := map[string]string{
			ingestRole:   "kms:GenerateDataKey" + via,
			streamRole:   "kms:Decrypt,kms:GenerateDataKey" + via,
			operatorRole: "kms:Decrypt,kms:GenerateDataKey" + via,
		}
		got := map[string]string{}
		collect := func(prefix string, res map[string]resource) {
			for role, sts := range roleStatements(res) {
				for _, st := range sts {
					if strings.HasPrefix(st, "kms:") && (strings.Contains(st, " on DataKey") || strings.Contains(st, " on referencetoHookfanDataKey")) {
						if got[prefix+role] != "" {
							t.Errorf("%s%s: a second data key grant %s", prefix, role, st)
						}
						got[prefix+role] = strings.Split(st, " on ")[0] + via
						if !strings.HasSuffix(st, via) {
							t.Errorf("%s%s: %s, want it through S3 only", prefix, role, st)
						}
					}
				}
			}
		}
		collect("", parent)
		for i, d := range cfg.Destinations {
			_, res := templateOf(t, h.LaneStacks[i])
			laneRole := *h.LaneStacks[i].GetLogicalId(h.Lanes[i].Role.Node().DefaultChild().(awscdk.CfnElement))
			want[d.Name+"/"+laneRole] = "kms:Decrypt" + via
			collect(d.Name+"/", res)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("data key grants by role (-want +got):\n%s", diff)
		}
		// The key's own policy is CDK's default (the account, so that the
		// grants above are what decides), and names no other principal.
		pol := fmt.Sprint(parent[keyID].Properties["KeyPolicy"])
		if strings.Count(pol, "Principal:") != 1 || !strings.Contains(pol, ":root") {
			t.Errorf("data key policy %s, want the account's statement only", pol)
		}
	})
	t.Run("every source's IngestFailed alarm counts payload_store_failed", func(t *testing.T) {
		// The store is the deployment's: a source at the default limit
		// stores a binary body too large inline, and answers 503
		// payload_store_failed when S3 fails.
		for source, id := range map[string]string{"stripe": "Stripe", "github": "Github", "shop": "Shop"} {
			a := alarmWithID(t, parent, "IngestSource"+id+"IngestFailedAlarm")
			var reasons []string
			for _, q := range asSlice(a.Properties["Metrics"]) {
				if stat, ok := q.(map[string]any)["MetricStat"].(map[string]any); ok {
					if m := stat["Metric"].(map[string]any); m["MetricName"] == metrics.IngestRejected {
						reasons = append(reasons, dims(m["Dimensions"])[metrics.DimReason])
					}
				}
			}
			if !slices.Contains(reasons, ingest.CodePayloadStoreFailed) {
				t.Errorf("%s: IngestFailed reads IngestRejected for %v, not payload_store_failed", source, reasons)
			}
		}
	})
}

// roleStatements renders every IAM policy statement of a template by the
// role it is attached to: "action,action on resource[, resource] [if
// condition]", resources with their literal parts ("Bucket/payloads/*"),
// sorted.
func roleStatements(res map[string]resource) map[string][]string {
	out := map[string][]string{}
	for _, p := range ofType(res, "AWS::IAM::Policy") {
		for _, r := range asSlice(p.Properties["Roles"]) {
			role := refID(r)
			for _, st := range statements(p.Properties["PolicyDocument"]) {
				actions := anyStrings(st["Action"])
				slices.Sort(actions)
				var targets []string
				for _, r := range asSlice(st["Resource"]) {
					targets = append(targets, resourceText(r))
				}
				line := strings.Join(actions, ",") + " on " + strings.Join(targets, ", ")
				if cond, ok := st["Condition"].(map[string]any); ok {
					if eq, ok := cond["StringEquals"].(map[string]any); ok && strings.Contains(fmt.Sprint(eq["kms:ViaService"]), "s3.") {
						line += " if kms:ViaService s3"
					}
				}
				out[role] = append(out[role], line)
			}
		}
	}
	for _, l := range out {
		slices.Sort(l)
	}
	return out
}

// resourceText renders a policy resource: a string as it is, a reference
// by its logical ID, a join of both by its parts.
func resourceText(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case map[string]any:
		if j, ok := x["Fn::Join"].([]any); ok && len(j) == 2 {
			var b strings.Builder
			for _, part := range asSlice(j[1]) {
				b.WriteString(resourceText(part))
			}
			return b.String()
		}
		return refID(x)
	}
	return fmt.Sprint(v)
}
