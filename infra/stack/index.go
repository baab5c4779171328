package stack

import (
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
// destination lane, each a JSON object:
//
//	/hookfan/<stack>/stack                     the API URL, topic, table, dashboards
//	/hookfan/<stack>/destinations/<name>       one lane: queue, DLQ, function, secret
//
// One lane is one GetParameter call; every lane is GetParametersByPath on
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

// LaneIndexFields are the keys of a lane's parameter value (the JSON of
// stackindex.Lane, which the operator command reads); StackIndexFields the
// stack's (stackindex.Stack).
var (
	LaneIndexFields  = stackindex.Fields(stackindex.Lane{})
	StackIndexFields = stackindex.Fields(stackindex.Stack{})
)

// newLaneIndex writes a lane's parameter and its nested stack's outputs
// (shown with the nested stack in the CloudFormation console).
func newLaneIndex(scope constructs.Construct, lane *Lane, stackName string) awsssm.StringParameter {
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
		// The principal a receiver grants for auth.sigv4 (shape.go).
		"roleArn":   lane.Role.RoleArn(),
		"logGroup":  lane.LogGroup.LogGroupName(),
		"secretId":  secretID,
		"secretArn": secretArn,
		// An AWS target's type and ARN ("" and "https" for a webhook).
		"type":   d.TargetType(),
		"target": d.Target,
		// The filter as configured (a replay sends a lane only what it selects).
		"filter": filterValue(d.Filter),
		// The pause rule in force and the retention its bound counts over
		// (the operator command pauses and resumes by them).
		"pause":            pauseValue(d),
		"retentionSeconds": int(d.Retention().Seconds()),
		"egress":           egressPath(d),
		// An ordered lane's key spec, "" on a standard lane (fifo.go): the
		// operator command groups what it sends a FIFO queue by it.
		"orderingKey": orderingKey(d),
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
	return p
}

// newStackIndex writes the stack's own parameter.
func newStackIndex(scope constructs.Construct, h *Hookfan, dashboards []*string) awsssm.StringParameter {
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
