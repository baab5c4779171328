package stack_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/jsii-runtime-go"
	"github.com/google/go-cmp/cmp"

	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/ddbitem"
)

// TestOperatorRoleGuardsTheQueues: the stack makes an operator role,
// assumable by operators.principals and output with the index, and each
// lane's queue denies SendMessage to everyone but SNS from the fan-out
// topic, the operator role and (a lane that pauses) its own function; the
// operator role gets the queue and DLQ calls ops redrive, ops replay and a
// console DLQ redrive make; only ingest may publish to the topic. It reads
// payloadsConfig's synthesis, and testConfig's with one destination.
func TestOperatorRoleGuardsTheQueues(t *testing.T) {
	cfg := payloadsConfig(t)
	if len(cfg.Operators.Principals) != 1 || cfg.Destinations[1].Pause == nil || cfg.Destinations[0].Pause != nil {
		t.Fatalf("operators.principals %v, dest-01 pausing %v, dest-00 %v: want one principal, one lane that pauses beside one that does not",
			cfg.Operators.Principals, cfg.Destinations[1].Pause != nil, cfg.Destinations[0].Pause != nil)
	}
	h, _ := synth(t, cfg)
	tmpl, parent := templateOf(t, h.Stack)
	operatorID := *h.Stack.GetLogicalId(h.Operator.Role.Node().DefaultChild().(awscdk.CfnElement))
	ingestID := *h.Stack.GetLogicalId(h.Ingest.Role.Node().DefaultChild().(awscdk.CfnElement))

	// Who may assume it: exactly the configured principal.
	trust := statements(parent[operatorID].Properties["AssumeRolePolicyDocument"])
	if len(trust) != 1 || fmt.Sprint(trust[0]["Principal"]) != "map[AWS:arn:aws:iam::123456789012:role/oncall]" || trust[0]["Action"] != "sts:AssumeRole" {
		t.Errorf("operator role trust %v, want the configured role only", trust)
	}
	// Output and in the index.
	outputs := *tmpl.FindOutputs(jsii.String("OperatorRoleArn"), nil)
	if got := fmt.Sprint(outputs["OperatorRoleArn"]); !strings.Contains(got, operatorID) {
		t.Errorf("output OperatorRoleArn %s, want the role's ARN", got)
	}
	index := fmt.Sprint(parent[*h.Stack.GetLogicalId(h.Index.Node().DefaultChild().(awscdk.CfnElement))].Properties["Value"])
	if !strings.Contains(index, `"operatorRoleArn":" map[Fn::GetAtt:[`+operatorID+` Arn]]`) {
		t.Errorf("stack index %s, want operatorRoleArn", index)
	}
	// Its own policy: the index, records, mappings; no SQS (the queues'
	// policies give that, lane by lane), nothing on the topic.
	query, metrics := false, false
	for _, st := range roleStatements(parent)[operatorID] {
		// The console's charts read CloudWatch (no resource-level permissions).
		metrics = metrics || strings.Contains(st, "cloudwatch:GetMetricData") && strings.HasSuffix(st, " on *")
		if strings.HasPrefix(st, "sqs:") || strings.HasPrefix(st, "sns:") || strings.Contains(st, "dynamodb:Scan") {
			t.Errorf("operator role's own policy grants %s", st)
		}
		// ops events queries the time index, never scans the table.
		query = query || strings.HasPrefix(st, "dynamodb:Query on ") && strings.HasSuffix(st, "/index/"+ddbitem.TimeIndex)
	}
	if !query {
		t.Errorf("operator role's own policy %v: no dynamodb:Query on the time index", roleStatements(parent)[operatorID])
	}
	if !metrics {
		t.Errorf("operator role's own policy %v: no cloudwatch:GetMetricData for the console's charts", roleStatements(parent)[operatorID])
	}

	// Only ingest publishes to the fan-out topic.
	topicID, _ := topicOf(t, parent)
	denied := false
	for _, p := range ofType(parent, "AWS::SNS::TopicPolicy") {
		if !slices.ContainsFunc(asSlice(p.Properties["Topics"]), func(r any) bool { return refID(r) == topicID }) {
			continue
		}
		for _, st := range statements(p.Properties["PolicyDocument"]) {
			if st["Effect"] == "Deny" && st["Action"] == "sns:Publish" && fmt.Sprint(st["Principal"]) == "map[AWS:*]" &&
				fmt.Sprint(st["Condition"]) == fmt.Sprintf("map[ArnNotEquals:map[aws:PrincipalArn:map[Fn::GetAtt:[%s Arn]]]]", ingestID) {
				denied = true
			}
		}
	}
	if !denied {
		t.Error("the fan-out topic does not deny sns:Publish to everyone but ingest")
	}

	for i, d := range cfg.Destinations {
		_, res := templateOf(t, h.LaneStacks[i])
		queueID := *h.LaneStacks[i].GetLogicalId(h.Lanes[i].Queue.Node().DefaultChild().(awscdk.CfnElement))
		dlqID := *h.LaneStacks[i].GetLogicalId(h.Lanes[i].DeadLetterQueue.Node().DefaultChild().(awscdk.CfnElement))
		roleID := *h.LaneStacks[i].GetLogicalId(h.Lanes[i].Role.Node().DefaultChild().(awscdk.CfnElement))
		byQueue := map[string][]map[string]any{}
		for _, p := range ofType(res, "AWS::SQS::QueuePolicy") {
			for _, q := range asSlice(p.Properties["Queues"]) {
				byQueue[refID(q)] = append(byQueue[refID(q)], statements(p.Properties["PolicyDocument"])...)
			}
		}
		find := func(queue, sid string) map[string]any {
			for _, st := range byQueue[queue] {
				if st["Sid"] == sid {
					return st
				}
			}
			t.Errorf("%s: no statement %s on %s", d.Name, sid, queue)
			return map[string]any{}
		}
		deny := find(queueID, "OnlySNSAndTheOperatorSend")
		cond, _ := deny["Condition"].(map[string]any)["ArnNotEquals"].(map[string]any)
		var senders []string
		for _, s := range asSlice(cond["aws:PrincipalArn"]) {
			if r := resourceText(s); strings.HasPrefix(r, "referencetoHookfanOperatorRole") {
				senders = append(senders, "operator")
			} else {
				senders = append(senders, r)
			}
		}
		wantSenders := []string{"operator"}
		if d.Pause != nil {
			wantSenders = append(wantSenders, roleID)
		}
		if deny["Effect"] != "Deny" || deny["Action"] != "sqs:SendMessage" || fmt.Sprint(deny["Principal"]) != "map[AWS:*]" ||
			!strings.Contains(fmt.Sprint(cond["aws:SourceArn"]), "Topic") || !cmp.Equal(wantSenders, senders) {
			t.Errorf("%s: queue's send guard %v; want a deny to all but %v and SNS from the topic", d.Name, deny, wantSenders)
		}
		// SNS's own allow is still there, conditioned on the topic.
		snsAllowed := false
		for _, st := range byQueue[queueID] {
			if st["Effect"] == "Allow" && fmt.Sprint(st["Principal"]) == "map[Service:sns.amazonaws.com]" && strings.Contains(fmt.Sprint(st["Condition"]), "aws:SourceArn") {
				snsAllowed = true
			}
		}
		if !snsAllowed {
			t.Errorf("%s: the queue no longer lets SNS send from the topic", d.Name)
		}
		checkOperatorAllow(t, d.Name, find(queueID, "TheOperatorSends"), []string{"sqs:GetQueueAttributes", "sqs:SendMessage"})
		checkOperatorAllow(t, d.Name, find(dlqID, "TheOperatorRedrives"), []string{"sqs:CancelMessageMoveTask", "sqs:ChangeMessageVisibility", "sqs:DeleteMessage",
			"sqs:GetQueueAttributes", "sqs:ListMessageMoveTasks", "sqs:ReceiveMessage", "sqs:StartMessageMoveTask"})
		// SQS's redrive policy moves messages into the DLQ without a
		// SendMessage: nothing there denies it.
		for _, st := range byQueue[dlqID] {
			if st["Effect"] == "Deny" && strings.Contains(fmt.Sprint(st["Action"]), "SendMessage") {
				t.Errorf("%s: the DLQ denies %v", d.Name, st)
			}
		}
	}

	// Without operators.principals, the account assumes it (its principals'
	// own policies decide who).
	cfg = testConfig(t, 1, "")
	h, _ = synth(t, cfg)
	_, parent = templateOf(t, h.Stack)
	operatorID = *h.Stack.GetLogicalId(h.Operator.Role.Node().DefaultChild().(awscdk.CfnElement))
	doc, _ := json.Marshal(parent[operatorID].Properties["AssumeRolePolicyDocument"])
	if !strings.Contains(string(doc), `":root"`) || strings.Count(string(doc), "sts:AssumeRole") != 1 {
		t.Errorf("default trust %s, want the account root", doc)
	}
}

func checkOperatorAllow(t *testing.T, lane string, st map[string]any, actions []string) {
	t.Helper()
	got := anyStrings(st["Action"])
	slices.Sort(got)
	if st["Effect"] != "Allow" || !strings.Contains(fmt.Sprint(st["Principal"]), "OperatorRole") || !cmp.Equal(actions, got) {
		t.Errorf("%s: operator statement %v, want %v for the operator role", lane, st, actions)
	}
}

// TestTimeIndexSwitch: with dedupe.timeIndex (default true) the record
// table has its time index, the operator role queries it and never scans,
// the stack's index says so and no lane's function is told otherwise;
// with false the table has no index (nor its keys' definitions), the role
// may Scan the table and has no Query, the index says "timeIndex": false
// and every lane's function gets HOOKFAN_TIME_INDEX=off. With the index
// it reads payloadsConfig's synthesis, without it costSwitchesConfig's.
func TestTimeIndexSwitch(t *testing.T) {
	for _, tt := range []struct {
		indexed bool
		cfg     func(*testing.T) *config.Config
	}{{true, payloadsConfig}, {false, costSwitchesConfig}} {
		indexed := tt.indexed
		t.Run(fmt.Sprint("timeIndex ", indexed), func(t *testing.T) {
			cfg := tt.cfg(t)
			if cfg.Dedupe.Indexed() != indexed {
				t.Fatalf("dedupe.timeIndex %v, want %v", cfg.Dedupe.Indexed(), indexed)
			}
			h, _ := synth(t, cfg)
			_, parent := templateOf(t, h.Stack)
			tables := ofType(parent, "AWS::DynamoDB::Table")
			if len(tables) != 1 {
				t.Fatalf("%d tables", len(tables))
			}
			for _, tb := range tables {
				gsis := fmt.Sprint(tb.Properties["GlobalSecondaryIndexes"])
				attrs := fmt.Sprint(tb.Properties["AttributeDefinitions"])
				if strings.Contains(gsis, ddbitem.TimeIndex) != indexed || strings.Contains(attrs, ddbitem.TimeBucket) != indexed {
					t.Errorf("table indexes %s, attributes %s; want the time index: %v", gsis, attrs, indexed)
				}
			}
			operatorID := *h.Stack.GetLogicalId(h.Operator.Role.Node().DefaultChild().(awscdk.CfnElement))
			tableID := *h.Stack.GetLogicalId(h.Table.Node().DefaultChild().(awscdk.CfnElement))
			var query, scan []string
			for _, st := range roleStatements(parent)[operatorID] {
				if strings.Contains(st, "dynamodb:Query") {
					query = append(query, st)
				}
				if strings.Contains(st, "dynamodb:Scan") {
					scan = append(scan, st)
				}
			}
			wantQuery := "dynamodb:Query on " + tableID + "/index/" + ddbitem.TimeIndex
			wantScan := "dynamodb:Scan on " + tableID
			if indexed && (len(scan) != 0 || len(query) != 1 || !strings.HasSuffix(query[0], "/index/"+ddbitem.TimeIndex)) {
				t.Errorf("operator role with the index: Query %v, Scan %v; want %s alone", query, scan, wantQuery)
			}
			if !indexed && (len(query) != 0 || len(scan) != 1 || strings.Contains(scan[0], "/index/")) {
				t.Errorf("operator role without the index: Query %v, Scan %v; want %s alone", query, scan, wantScan)
			}
			index := fmt.Sprint(parent[*h.Stack.GetLogicalId(h.Index.Node().DefaultChild().(awscdk.CfnElement))].Properties["Value"])
			if want := fmt.Sprintf(`"timeIndex":%v`, indexed); !strings.Contains(index, want) {
				t.Errorf("stack index %s, want %s", index, want)
			}
			for i, lane := range h.Lanes {
				_, res := templateOf(t, h.LaneStacks[i])
				fnID := *h.LaneStacks[i].GetLogicalId(lane.Function.Node().DefaultChild().(awscdk.CfnElement))
				env := res[fnID].Properties["Environment"].(map[string]any)["Variables"].(map[string]any)
				v, ok := env["HOOKFAN_TIME_INDEX"]
				if ok == indexed || ok && v != "off" {
					t.Errorf("lane %s: HOOKFAN_TIME_INDEX %v (set %v), want off only without the index", lane.Destination.Name, v, ok)
				}
			}
		})
	}
}
