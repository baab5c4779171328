package stack

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsssm"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/hookfan/hookfan/infra/stack/stackindex"
	"github.com/hookfan/hookfan/shared/config"
)

// The stack's index in SSM Parameter Store: where an operator (or an
// operator command) finds what a deployment is made of without reading
// CloudFormation. One String parameter for the stack and one per
// destination lane (two for a lane with a long filter), each a JSON object:
//
//	/hookfan/<stack>/stack                     the API URL, topic, table, dashboards
//	/hookfan/<stack>/destinations/<name>       one lane: queue, DLQ, function, secret
//	/hookfan/<stack>/filters/<name>            a long filter, which the lane's names
//
// One lane is one GetParameter call (two with a long filter); every lane is GetParametersByPath on
// /hookfan/<stack>/destinations/ (ten per page). Standard parameters are
// free. A lane's parameter lives in the lane's nested stack, so it counts
// against nothing in the parent, and goes with the lane.

// IndexPrefix is the path under which a stack's parameters live.
func IndexPrefix(stackName string) string { return stackindex.Prefix(stackName) }

// StackParameterName names the stack's own parameter.
func StackParameterName(stackName string) string { return stackindex.StackParameter(stackName) }

// LaneParameterName names a destination lane's parameter.
func LaneParameterName(stackName, destination string) string {
	return stackindex.LaneParameter(stackName, destination)
}

// FilterParameterName names the parameter holding a destination's filter
// when it does not fit the lane's.
func FilterParameterName(stackName, destination string) string {
	return stackindex.FilterParameter(stackName, destination)
}

// LaneIndexFields are the keys of a lane's parameter value (the JSON of
// stackindex.Lane, which the operator command reads); StackIndexFields the
// stack's (stackindex.Stack).
var (
	LaneIndexFields  = stackindex.Fields(stackindex.Lane{})
	StackIndexFields = stackindex.Fields(stackindex.Stack{})
)

// MaxStandardParameter is the most characters SSM takes in a Standard
// parameter's value; a lane's index (and its filter parameter) must fit it
// once CloudFormation has filled in the names.
const MaxStandardParameter = 4096

// The longest a lane index's deploy-time values can be, by AWS's limits on
// the names: a queue's 80 characters, a function's and a role's 64 (a role
// CDK makes has the path "/"), a log group's and a secret's 512 (a
// secret's ARN adds "-" and six random characters). Regions, partitions
// and URL suffixes have no published limit: 20, 16 and 20 are longer than
// any there is (ap-southeast-7, aws-us-gov, amazonaws.com.cn).
const (
	worstRegion, worstPartition, worstURLSuffix, accountLength = 20, 16, 20, 12

	worstQueueURL  = len("https://sqs.") + worstRegion + 1 + worstURLSuffix + 1 + accountLength + 1 + 80
	worstSecretARN = len("arn:") + worstPartition + len(":secretsmanager:") + worstRegion + 1 + accountLength + len(":secret:") + 512 + len("-AbCdEf")
)

func worstARN(service, resource string, name int) int {
	return len("arn:") + worstPartition + 1 + len(service) + 1 + worstRegion + 1 + accountLength + 1 + len(resource) + name
}

// laneIndexWorst bounds each deploy-time value of a lane's index, by key.
var laneIndexWorst = map[string]int{
	"queueUrl": worstQueueURL, "dlqUrl": worstQueueURL, "subscriptionDlqUrl": worstQueueURL,
	"queueArn": worstARN("sqs", "", 80), "dlqArn": worstARN("sqs", "", 80), "subscriptionDlqArn": worstARN("sqs", "", 80),
	"functionName": 64, "functionArn": worstARN("lambda", "function:", 64),
	"roleArn":  len("arn:") + worstPartition + len(":iam::") + accountLength + len(":role/") + 64,
	"logGroup": 512, "secretId": worstSecretARN, "secretArn": worstSecretARN,
}

// worstLength is the length of value's JSON with every deploy-time value
// as long as AWS allows it to be (laneIndexWorst): an upper bound on the
// parameter CloudFormation writes.
func worstLength(value map[string]any) int {
	bounded := make(map[string]any, len(value))
	for k, v := range value {
		if s, ok := v.(*string); ok && s != nil {
			v = *s
		}
		if s, ok := v.(string); ok && *awscdk.Token_IsUnresolved(jsii.String(s)) {
			n, ok := laneIndexWorst[k]
			if !ok {
				panic("stack: the lane index's deploy-time value " + k + " has no bound in laneIndexWorst")
			}
			v = strings.Repeat("x", n)
		}
		bounded[k] = v
	}
	b, err := json.Marshal(bounded)
	if err != nil {
		panic(err)
	}
	return len(b)
}

// newLaneIndex writes a lane's parameter and its nested stack's outputs
// (shown with the nested stack in the CloudFormation console). The filter
// is in the parameter when it fits (it always does but for long filters:
// the rest takes up to about 3.4 KB once deployed); otherwise it has a
// Standard parameter of its own, FilterParameterName, which the lane's
// index names (filterParameter) in its place. destination is the
// destination's field path (destinations[i]), for errors.
func newLaneIndex(scope constructs.Construct, lane *Lane, stackName, destination string) (awsssm.StringParameter, error) {
	d := lane.Destination
	secretID, secretArn := laneSecretID(lane), jsii.String("")
	if lane.Secret != nil {
		secretArn = lane.Secret.SecretArn()
	}
	value := map[string]any{
		"destination": d.Name,
		// The scheme and host only: a path or query may carry a token,
		// and the index is readable more widely than the secrets.
		"url":                d.URLHost(),
		"urlSecretName":      d.URLSecretName,
		"queueUrl":           lane.Queue.QueueUrl(),
		"queueArn":           lane.Queue.QueueArn(),
		"dlqUrl":             lane.DeadLetterQueue.QueueUrl(),
		"dlqArn":             lane.DeadLetterQueue.QueueArn(),
		"subscriptionDlqUrl": lane.SubscriptionDeadLetterQueue.QueueUrl(),
		"subscriptionDlqArn": lane.SubscriptionDeadLetterQueue.QueueArn(),
		"functionName":       lane.Function.FunctionName(),
		"functionArn":        lane.Function.FunctionArn(),
		// The principal a receiver grants for auth.sigv4 (shared/delivery/sender/https).
		"roleArn":   lane.Role.RoleArn(),
		"logGroup":  lane.LogGroup.LogGroupName(),
		"secretId":  secretID,
		"secretArn": secretArn,
		// An AWS target's type and ARN ("" and "https" for a webhook).
		"type":   d.TargetType(),
		"target": d.Target,
		// The filter as configured (a replay sends a lane only what it
		// selects), or null and the parameter that holds it.
		"filter":          filterValue(d.Filter),
		"filterParameter": "",
		// The pause rule in force and the retention its bound counts over
		// (the operator command pauses and resumes by them).
		"pause":            pauseValue(d),
		"retentionSeconds": int(d.Retention().Seconds()),
		"egress":           egressPath(d),
		// An ordered lane's key spec, "" on a standard lane (fifo.go): the
		// operator command groups what it sends a FIFO queue by it.
		"orderingKey": orderingKey(d),
		// The rate limit as configured, {} when the lane is not paced
		// (ops lanes shows it beside the rate in force).
		"rateLimit": rateLimitValue(d),
	}
	if worstLength(value) > MaxStandardParameter {
		filter, err := json.Marshal(value["filter"])
		if err != nil {
			return nil, err
		}
		if len(filter) > MaxStandardParameter {
			return nil, fmt.Errorf("%s.filter (destination %q): %d characters as JSON, more than the %d an SSM Standard parameter holds (the lane's index keeps it there); shorten the filter (fewer types, or prefixes such as \"customer.subscription.*\")",
				destination, d.Name, len(filter), MaxStandardParameter)
		}
		name := FilterParameterName(stackName, d.Name)
		awsssm.NewStringParameter(scope, jsii.String("Filter"), &awsssm.StringParameterProps{
			ParameterName: jsii.String(name),
			Description:   jsii.String("Hookfan lane of destination " + d.Name + ": its filter (JSON), too long to share the lane's parameter with its names"),
			StringValue:   jsii.String(string(filter)),
			Tier:          awsssm.ParameterTier_STANDARD,
		})
		value["filter"], value["filterParameter"] = nil, name
	}
	if n := worstLength(value); n > MaxStandardParameter {
		return nil, fmt.Errorf("%s (destination %q): the lane's index parameter could take %d characters once CloudFormation fills in its names, more than the %d an SSM Standard parameter holds (its configured values: %s); shorten them",
			destination, d.Name, n, MaxStandardParameter, literalLengths(value))
	}
	p := awsssm.NewStringParameter(scope, jsii.String("Index"), &awsssm.StringParameterProps{
		ParameterName: jsii.String(LaneParameterName(stackName, d.Name)),
		Description:   jsii.String("Hookfan lane of destination " + d.Name + ": its queue, DLQs, function and signing secret (JSON)"),
		StringValue:   awscdk.Stack_Of(scope).ToJsonString(value, nil),
		Tier:          awsssm.ParameterTier_STANDARD,
	})
	out := func(id, desc string, v *string) {
		awscdk.NewCfnOutput(scope, jsii.String(id), &awscdk.CfnOutputProps{Value: v, Description: jsii.String(desc)})
	}
	out("DlqUrl", "DLQ of destination "+d.Name+" (redrive from the SQS console)", lane.DeadLetterQueue.QueueUrl())
	if lane.Secret != nil {
		out("SecretArn", "Signing secret of destination "+d.Name+" (subscribers verify with whsec_<value>)", lane.Secret.SecretArn())
	}
	out("IndexParameter", "SSM parameter describing this lane", p.ParameterName())
	out("RoleArn", "Role of destination "+d.Name+"'s deliver function: the principal a receiver grants for auth.sigv4 (execute-api:Invoke, lambda:InvokeFunctionUrl)", lane.Role.RoleArn())
	out(laneNamesOutput, "The names a dashboard page graphs and its queries read: function, queue, DLQ, subscription DLQ, log group", joinedNames(lane))
	return p, nil
}

// literalLengths lists the lengths of the index's string values written
// from the configuration (the names CloudFormation fills in aside), for an
// error: key=length, longest first.
func literalLengths(value map[string]any) string {
	type kv struct {
		k string
		n int
	}
	var all []kv
	for k, v := range value {
		if s, ok := v.(string); ok && s != "" && !*awscdk.Token_IsUnresolved(jsii.String(s)) {
			all = append(all, kv{k, len(s)})
		}
	}
	slices.SortFunc(all, func(a, b kv) int { return cmp.Or(b.n-a.n, strings.Compare(a.k, b.k)) })
	parts := make([]string, len(all))
	for i, x := range all {
		parts[i] = fmt.Sprintf("%s=%d", x.k, x.n)
	}
	return strings.Join(parts, ", ")
}

// newStackIndex writes the stack's own parameter; timeIndex is whether the
// record table has its time index (dedupe.timeIndex).
func newStackIndex(scope constructs.Construct, h *Hookfan, dashboards []*string, timeIndex bool) awsssm.StringParameter {
	stackName := *h.Stack.StackName()
	value := map[string]any{
		"apiUrl":           h.Ingest.URL(),
		"apiType":          h.Ingest.Type,
		"topicArn":         h.Topic.TopicArn(),
		"tableName":        h.Table.TableName(),
		"dashboards":       dashboards,
		"destinationsPath": stackindex.DestinationsPath(stackName),
		// The event archive ("" and 0 when config.archive.days is 0).
		"archiveBucket": "",
		"archiveDays":   0,
	}
	if h.Archive != nil {
		value["archiveBucket"] = h.Archive.Bucket.BucketName()
		value["archiveDays"] = h.Archive.Days
	}
	// The large bodies ("" and 0 without them), which the operator writes
	// again before their messages return to a queue, and the operator's role.
	value["payloadBucket"], value["payloadDays"] = "", 0
	if h.Payloads != nil {
		value["payloadBucket"], value["payloadDays"] = h.Payloads.Bucket.BucketName(), h.Payloads.ExpirationDays
	}
	value["operatorRoleArn"] = h.Operator.Role.RoleArn()
	// Whether ops events reads the time index or scans the table.
	value["timeIndex"] = timeIndex
	value["egressAddresses"] = []*string{}
	if h.Egress != nil {
		value["egressAddresses"] = h.Egress.Shown()
	}
	return awsssm.NewStringParameter(scope, jsii.String("Index"), &awsssm.StringParameterProps{
		ParameterName: jsii.String(StackParameterName(stackName)),
		Description:   jsii.String("Hookfan stack " + stackName + ": API URL, topic, table, dashboards, and where each lane's parameter is (JSON)"),
		StringValue:   h.Stack.ToJsonString(value, nil),
		Tier:          awsssm.ParameterTier_STANDARD,
	})
}

// rateLimitValue renders a destination's rateLimit for its index
// parameter, with config.RateLimit's keys; an empty object (no rate) when
// the lane is not paced.
func rateLimitValue(d config.Destination) map[string]any {
	r := d.RateLimit
	if r == nil {
		return map[string]any{}
	}
	return map[string]any{"perSecond": r.PerSecond, "perMinute": r.PerMinute, "burst": r.Burst, "adaptive": r.Adaptive}
}

// pauseValue renders a destination's pause rule for its index parameter,
// with stackindex.LanePause's keys.
func pauseValue(d config.Destination) map[string]any {
	p := stackindex.PauseOf(d)
	return map[string]any{
		"enabled": p.Enabled, "afterFailures": p.AfterFailures, "failureRate": p.FailureRate, "windowSeconds": p.WindowSeconds,
		"minAttempts": p.MinAttempts, "probeEverySeconds": p.ProbeEverySeconds, "maxPauseSeconds": p.MaxPauseSeconds,
	}
}

// filterValue renders a destination's filter for its index parameter, with
// the keys and values of its configuration (an empty object: everything).
func filterValue(f config.Filter) map[string]any {
	v := map[string]any{}
	list := func(key string, values []string) {
		if len(values) > 0 {
			items := make([]any, len(values))
			for i, s := range values {
				items[i] = s
			}
			v[key] = items
		}
	}
	list("sources", f.Sources)
	list("types", f.Types)
	list("excludeTypes", f.ExcludeTypes)
	return v
}
