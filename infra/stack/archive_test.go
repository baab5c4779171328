package stack_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/google/go-cmp/cmp"

	"github.com/hookfan/hookfan/infra/stack"
	"github.com/hookfan/hookfan/infra/stack/stackindex"
	"github.com/hookfan/hookfan/shared/archive"
	"github.com/hookfan/hookfan/shared/config"
)

// TestArchiveAndQueries checks the archive (bucket, Firehose stream, SNS
// subscription with its role and DLQ) and the saved Logs Insights queries,
// with the archive kept 7 days, and that archive.days 0 builds no archive.
func TestArchiveAndQueries(t *testing.T) {
	cfg := testConfig(t, 3, "ops@example.com")
	if days := cfg.Archive.RetentionDays(); days != 7 {
		t.Fatalf("testConfig keeps the archive %d days, want 7", days)
	}
	h, _ := synth(t, cfg)
	if h.Archive == nil || len(h.Queries) != 1 {
		t.Fatal("no archive or queries")
	}
	_, res := templateOf(t, h.Stack)

	// The bucket: encrypted with the data key, private, TLS-only, expiring
	// after archive.days, retained.
	bucketID, bucket := only(t, res, "AWS::S3::Bucket")
	bp := bucket.Properties
	enc := fmt.Sprint(bp["BucketEncryption"])
	rules, _ := json.Marshal(bp["LifecycleConfiguration"])
	dataKey := *h.Stack.GetLogicalId(h.DataKey.Node().DefaultChild().(awscdk.CfnElement))
	if enc != "map[ServerSideEncryptionConfiguration:[map[BucketKeyEnabled:false ServerSideEncryptionByDefault:map[KMSMasterKeyID:map[Fn::GetAtt:["+dataKey+" Arn]] SSEAlgorithm:aws:kms]]]]" || bucket.DeletionPolicy != "Retain" ||
		!strings.Contains(string(rules), `"ExpirationInDays":7`) || !strings.Contains(string(rules), `"DaysAfterInitiation":1`) {
		t.Errorf("bucket: encryption %s, deletion %q, lifecycle %s", enc, bucket.DeletionPolicy, rules)
	}
	wantBlock := map[string]any{"BlockPublicAcls": true, "BlockPublicPolicy": true, "IgnorePublicAcls": true, "RestrictPublicBuckets": true}
	if diff := cmp.Diff(wantBlock, bp["PublicAccessBlockConfiguration"]); diff != "" {
		t.Errorf("public access block (-want +got):\n%s", diff)
	}
	checkTLSOnlyBucket(t, ofType(res, "AWS::S3::BucketPolicy"), bucketID)

	// The stream: encrypted, writing the shared layout, gzip, newline-delimited.
	streamID, stream := only(t, res, "AWS::KinesisFirehose::DeliveryStream")
	sp := stream.Properties
	dest := sp["ExtendedS3DestinationConfiguration"].(map[string]any)
	got := []any{
		fmt.Sprint(sp["DeliveryStreamEncryptionConfigurationInput"]), sp["DeliveryStreamType"], refID(dest["BucketARN"]),
		dest["Prefix"], dest["ErrorOutputPrefix"], dest["CompressionFormat"], fmt.Sprint(dest["ProcessingConfiguration"]),
		num(dest["BufferingHints"].(map[string]any)["IntervalInSeconds"]),
		fmt.Sprint(dest["EncryptionConfiguration"]),
	}
	want := []any{
		"map[KeyType:AWS_OWNED_CMK]", "DirectPut", bucketID, archive.FirehosePrefix, archive.FirehoseErrorPrefix, "GZIP",
		"map[Enabled:true Processors:[map[Type:AppendDelimiterToRecord]]]", float64(stack.ArchiveBufferSeconds),
		"map[KMSEncryptionConfig:map[AWSKMSKeyARN:map[Fn::GetAtt:[" + dataKey + " Arn]]]]",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("stream (-want +got):\n%s", diff)
	}
	if archive.MaxBuffering.Seconds() < stack.ArchiveBufferSeconds {
		t.Errorf("readers widen their window by %s, less than the stream's buffering %ds", archive.MaxBuffering, stack.ArchiveBufferSeconds)
	}
	streamRole := refID(dest["RoleARN"])

	// The subscription: every message, not raw, through its own role, with a DLQ.
	var sub map[string]any
	for _, s := range ofType(res, "AWS::SNS::Subscription") {
		if s.Properties["Protocol"] == "firehose" {
			sub = s.Properties
		}
	}
	if sub == nil {
		t.Fatal("no firehose subscription")
	}
	topicID, _ := topicOf(t, res)
	dlqID := refID(sub["RedrivePolicy"].(map[string]any)["deadLetterTargetArn"])
	subRole := refID(sub["SubscriptionRoleArn"])
	if refID(sub["TopicArn"]) != topicID || refID(sub["Endpoint"]) != streamID || sub["RawMessageDelivery"] != false || sub["FilterPolicy"] != nil || dlqID == "" || subRole == "" {
		t.Errorf("archive subscription %v", sub)
	}
	dlq := res[dlqID]
	if dlq.Properties["SqsManagedSseEnabled"] != true || dlq.DeletionPolicy != "Retain" || num(dlq.Properties["MessageRetentionPeriod"]) != config.DLQRetention.Seconds() {
		t.Errorf("archive DLQ %+v", dlq)
	}
	checkTLSOnly(t, "archive", ofType(res, "AWS::SQS::QueuePolicy"), "Queues", []string{dlqID})
	alarmed := false
	for _, a := range ofType(res, "AWS::CloudWatch::Alarm") {
		if strings.Contains(fmt.Sprint(a.Properties["Dimensions"]), dlqID) && anyLen(a.Properties["AlarmActions"]) == 1 {
			alarmed = true
		}
	}
	if !alarmed {
		t.Error("no alarm with an action on the archive DLQ")
	}

	// Least privilege: each role trusts one service and holds only these.
	trust := map[string]string{streamRole: "firehose.amazonaws.com", subRole: "sns.amazonaws.com"}
	for id, svc := range trust {
		doc := fmt.Sprint(res[id].Properties["AssumeRolePolicyDocument"])
		if !strings.Contains(doc, svc) || strings.Count(doc, "Service:") != 1 {
			t.Errorf("role %s trusts %s, want %s only", id, doc, svc)
		}
	}
	wantGrants := map[string][]string{
		streamRole: {
			"kms:Decrypt,kms:GenerateDataKey on " + dataKey,
			"logs:CreateLogStream,logs:PutLogEvents on " + refID(dest["CloudWatchLoggingOptions"].(map[string]any)["LogGroupName"]),
			"s3:AbortMultipartUpload,s3:GetObject,s3:PutObject on " + bucketID + "/*",
			"s3:GetBucketLocation,s3:ListBucket,s3:ListBucketMultipartUploads on " + bucketID,
		},
		subRole: {"firehose:DescribeDeliveryStream,firehose:ListTagsForDeliveryStream,firehose:PutRecord,firehose:PutRecordBatch on " + streamID},
	}
	for role, want := range wantGrants {
		if diff := cmp.Diff(want, grants(res, role)); diff != "" {
			t.Errorf("role %s grants (-want +got):\n%s", role, diff)
		}
	}

	// Queries: the trail over ingest and every lane, failures over the
	// lanes, 401s over ingest; in the stack's folder.
	queries := ofType(res, "AWS::Logs::QueryDefinition")
	ingestLogs := *h.Stack.GetLogicalId(h.Ingest.LogGroup.Node().DefaultChild().(awscdk.CfnElement))
	names := map[string][]string{}
	for _, q := range queries {
		var groups []string
		for _, g := range asSlice(q.Properties["LogGroupNames"]) {
			if id := refID(g); id == ingestLogs {
				groups = append(groups, "ingest")
			} else {
				groups = append(groups, fmt.Sprint(g))
			}
		}
		names[fmt.Sprint(q.Properties["Name"])] = groups
		if s := fmt.Sprint(q.Properties["QueryString"]); strings.HasPrefix(s, "display") {
			t.Errorf("query %v starts with display: %s", q.Properties["Name"], s)
		}
	}
	if len(names) != 3 {
		t.Fatalf("queries %v, want 3", names)
	}
	trail := names["Hookfan/Hookfan/event trail"]
	failures := names["Hookfan/Hookfan/delivery failures by destination and status"]
	unauthorized := names["Hookfan/Hookfan/401s by source and code"]
	if len(trail) != 4 || trail[0] != "ingest" || len(failures) != 3 || slices.Contains(failures, "ingest") || !slices.Equal(unauthorized, []string{"ingest"}) {
		t.Errorf("query log groups: trail %v, failures %v, 401s %v", trail, failures, unauthorized)
	}
	for _, q := range queries {
		s := fmt.Sprint(q.Properties["QueryString"])
		switch {
		case strings.HasSuffix(fmt.Sprint(q.Properties["Name"]), "event trail"):
			if !strings.Contains(s, `id = "`+stack.EventIDPlaceholder+`"`) || !strings.Contains(s, "sort @timestamp asc") {
				t.Errorf("trail query %s", s)
			}
		case strings.HasSuffix(fmt.Sprint(q.Properties["Name"]), "401s by source and code"):
			if !strings.Contains(s, "status = 401") || !strings.Contains(s, "by source, code") {
				t.Errorf("401 query %s", s)
			}
		default:
			if !strings.Contains(s, "by destination, status") {
				t.Errorf("failure query %s", s)
			}
		}
	}

	// The stack's index names the archive (the operator command reads it),
	// and each lane's its filter.
	var index map[string]any
	for _, p := range ofType(res, "AWS::SSM::Parameter") {
		if p.Properties["Name"] == stackindex.StackParameter("Hookfan") {
			if err := json.Unmarshal([]byte(joined(p.Properties["Value"])), &index); err != nil {
				t.Fatal(err)
			}
		}
	}
	if keys := slices.Sorted(mapsKeys(index)); !slices.Equal(keys, slices.Sorted(slices.Values(stack.StackIndexFields))) {
		t.Errorf("stack index keys %v, want %v", keys, stack.StackIndexFields)
	}
	if index["archiveDays"] != float64(7) || index["archiveBucket"] == "" {
		t.Errorf("stack index archive: %v, %v", index["archiveBucket"], index["archiveDays"])
	}
	_, lres := templateOf(t, h.LaneStacks[0])
	_, lp := only(t, lres, "AWS::SSM::Parameter")
	var lane stackindex.Lane
	if err := json.Unmarshal([]byte(joined(lp.Properties["Value"])), &lane); err != nil {
		t.Fatalf("lane index: %v", err)
	}
	if diff := cmp.Diff(cfg.Destinations[0].Filter, lane.Filter); diff != "" || lane.Destination != cfg.Destinations[0].Name {
		t.Errorf("lane index of %s: filter (-config +index):\n%s", lane.Destination, diff)
	}

	// archive.days 0 (lanesConfig's): no archive at all.
	off := lanesConfig(t)
	if off.Archive.Days == nil || *off.Archive.Days != 0 {
		t.Fatalf("lanesConfig's archive.days %v, want 0", off.Archive.Days)
	}
	h0, _ := synth(t, off)
	_, res0 := templateOf(t, h0.Stack)
	counts := countTypes(res0)
	if h0.Archive != nil || counts["AWS::S3::Bucket"] != 0 || counts["AWS::KinesisFirehose::DeliveryStream"] != 0 {
		t.Errorf("archive.days 0 built %d buckets and %d streams", counts["AWS::S3::Bucket"], counts["AWS::KinesisFirehose::DeliveryStream"])
	}
	for _, p := range ofType(res0, "AWS::SSM::Parameter") {
		if v := joined(p.Properties["Value"]); !strings.Contains(v, `"archiveBucket":""`) || !strings.Contains(v, `"archiveDays":0`) {
			t.Errorf("archive.days 0: stack index %s", v)
		}
	}
}

// TestArchiveDeliveryFreshnessAlarm: Firehose's writes to the archive
// bucket can fail (the bucket's or the data key's policy, a disabled
// key) after SNS handed it the events; it retries them for 24 hours and
// then drops them, and replays miss them. An alarm fires when the oldest
// record not yet written is older than 15 minutes (DeliveryToS3.
// DataFreshness, the maximum over five minutes): a healthy stream writes
// every 60 s, and an idle one publishes nothing, which is fine.
func TestArchiveDeliveryFreshnessAlarm(t *testing.T) {
	h, _ := synth(t, testConfig(t, 3, "ops@example.com"))
	_, res := templateOf(t, h.Stack)
	streamID, _ := only(t, res, "AWS::KinesisFirehose::DeliveryStream")
	topicID := *awscdk.Stack_Of(h.AlarmTopic).GetLogicalId(h.AlarmTopic.Node().DefaultChild().(awscdk.CfnElement))
	p := alarmWithID(t, res, "ArchiveDeliveryFreshnessAlarm").Properties
	got := []any{p["Namespace"], p["MetricName"], p["Statistic"], p["Period"], p["ComparisonOperator"], p["Threshold"], p["EvaluationPeriods"], p["TreatMissingData"], p["Dimensions"]}
	want := []any{"AWS/Firehose", "DeliveryToS3.DataFreshness", "Maximum", 300.0, "GreaterThanThreshold", 900.0, 1.0, "notBreaching",
		[]any{map[string]any{"Name": "DeliveryStreamName", "Value": map[string]any{"Ref": streamID}}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("archive freshness alarm (-want +got):\n%s", diff)
	}
	if want := float64(stack.ArchiveStaleSeconds); p["Threshold"] != want || want < 10*stack.ArchiveBufferSeconds {
		t.Errorf("threshold %v s, stack.ArchiveStaleSeconds %v s: want it and at least ten of the stream's %d s buffering intervals, so a healthy stream never raises it", p["Threshold"], want, stack.ArchiveBufferSeconds)
	}
	for _, k := range []string{"AlarmActions", "OKActions"} {
		if acts := asSlice(p[k]); len(acts) != 1 || refID(acts[0]) != topicID {
			t.Errorf("archive freshness alarm: %s %v, want the alarm topic %s", k, p[k], topicID)
		}
	}
}

// grants lists a role's identity statements as "actions on resource".
func grants(res map[string]resource, roleID string) []string {
	var out []string
	for _, p := range ofType(res, "AWS::IAM::Policy") {
		if !slices.ContainsFunc(asSlice(p.Properties["Roles"]), func(r any) bool { return refID(r) == roleID }) {
			continue
		}
		for _, st := range statements(p.Properties["PolicyDocument"]) {
			actions := anyStrings(st["Action"])
			slices.Sort(actions)
			target := refID(st["Resource"])
			if j, ok := st["Resource"].(map[string]any)["Fn::Join"]; ok && strings.HasSuffix(fmt.Sprint(j), "/*]]") {
				target += "/*"
			}
			out = append(out, strings.Join(actions, ",")+" on "+target)
		}
	}
	slices.Sort(out)
	return out
}

// topicOf returns the fan-out topic (the one with the archive subscription's
// peers: the lanes subscribe by ARN from their nested stacks).
func topicOf(t *testing.T, res map[string]resource) (string, resource) {
	t.Helper()
	for id, r := range ofType(res, "AWS::SNS::Topic") {
		if fmt.Sprint(r.Properties["DisplayName"]) == "Hookfan events" {
			return id, r
		}
	}
	t.Fatal("no fan-out topic")
	return "", resource{}
}

// checkTLSOnlyBucket asserts a bucket policy denies requests without TLS on
// the bucket and its objects.
func checkTLSOnlyBucket(t *testing.T, policies map[string]resource, bucketID string) {
	t.Helper()
	for _, p := range policies {
		if refID(p.Properties["Bucket"]) != bucketID {
			continue
		}
		for _, st := range statements(p.Properties["PolicyDocument"]) {
			if st["Effect"] == "Deny" && strings.Contains(fmt.Sprint(st["Condition"]), "aws:SecureTransport:false") && len(asSlice(st["Resource"])) == 2 {
				return
			}
		}
	}
	t.Errorf("bucket %s has no TLS-only policy", bucketID)
}
