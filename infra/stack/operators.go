package stack

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awskms"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssns"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/hookfan/hookfan/infra/stack/stackindex"
	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/ddbitem"
	"github.com/hookfan/hookfan/shared/payload"
	"github.com/hookfan/hookfan/shared/reconcilejob"
)

// OperatorRoleProps configures the operator role. Nil fields are parts the
// stack does not have.
type OperatorRoleProps struct {
	// Config names who may assume the role (config.Operators) (required).
	Config   *config.Config
	Table    awsdynamodb.ITable
	Payloads *PayloadBucket
	Archive  *Archive
	Key      awskms.IKey
}

// OperatorRole is the role the operator command runs under on a deployed
// stack (and an operator's console session for a DLQ redrive): the one
// principal, besides SNS, that may send to a lane's queue, and so the only
// one that can inject a signed delivery or set the replay attribute. Each
// lane's queue policies give it the queue calls (guardQueues); its own
// policy gives the rest of what ops does: read the stack's index, read and
// write delivery and lane records, read the archive, read and write the
// large bodies (with the data key), turn a lane's event source mapping
// off and on, and read the lanes' metrics (the console's charts).
type OperatorRole struct {
	constructs.Construct
	Role awsiam.Role
}

// NewOperatorRole makes the role, assumable by config.operators.principals
// (default: the account, so any of its principals whose own policy allows
// sts:AssumeRole on the role).
func NewOperatorRole(scope constructs.Construct, id string, props *OperatorRoleProps) *OperatorRole {
	o := &OperatorRole{Construct: constructs.NewConstruct(scope, jsii.String(id))}
	var principals []awsiam.IPrincipal
	for _, arn := range props.Config.Operators.Principals {
		principals = append(principals, awsiam.NewArnPrincipal(jsii.String(arn)))
	}
	if len(principals) == 0 {
		principals = append(principals, awsiam.NewAccountRootPrincipal())
	}
	o.Role = awsiam.NewRole(o.Construct, jsii.String("Role"), &awsiam.RoleProps{
		AssumedBy:   awsiam.NewCompositePrincipal(principals...),
		Description: jsii.String("Hookfan operator: ops redrive, replay, pause and resume; the only principal besides SNS that may send to a lane's queue"),
	})
	stack := awscdk.Stack_Of(o.Construct)
	allow := func(actions []string, resources ...*string) {
		o.Role.AddToPrincipalPolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
			Actions: jsii.Strings(actions...), Resources: &resources,
		}))
	}
	index := stack.FormatArn(&awscdk.ArnComponents{Service: jsii.String("ssm"), Resource: jsii.String("parameter"),
		ResourceName: jsii.String(stackindex.Prefix(*stack.StackName())[1:] + "*")})
	allow([]string{"ssm:GetParameter", "ssm:GetParametersByPath"}, index)
	allow([]string{"dynamodb:GetItem", "dynamodb:BatchGetItem", "dynamodb:UpdateItem"}, props.Table.TableArn()) // BatchGetItem: ops events' page
	if props.Config.Dedupe.Indexed() {
		allow([]string{"dynamodb:Query"}, jsii.String(*props.Table.TableArn()+"/index/"+ddbitem.TimeIndex)) // ops events' window
	} else {
		allow([]string{"dynamodb:Scan"}, props.Table.TableArn()) // ops events' window, without the index: the whole table
	}
	if props.Archive != nil {
		allow([]string{"s3:ListBucket"}, props.Archive.Bucket.BucketArn())
		allow([]string{"s3:GetObject"}, props.Archive.Bucket.ArnForObjects(jsii.String("*")))
	}
	if props.Payloads != nil {
		allow([]string{"s3:GetObject", "s3:PutObject"}, props.Payloads.objects())
	}
	if props.Key != nil {
		grantKeyViaS3(o.Role, props.Key.KeyArn(), "kms:Decrypt", "kms:GenerateDataKey")
	}
	mappings := stack.FormatArn(&awscdk.ArnComponents{
		Service: jsii.String("lambda"), Resource: jsii.String("event-source-mapping"), ResourceName: jsii.String("*"),
		ArnFormat: awscdk.ArnFormat_COLON_RESOURCE_NAME,
	})
	allow([]string{"lambda:ListEventSourceMappings"}, jsii.String("*"))
	// The console's charts: deliveries and failures by lane, the queues' oldest message.
	allow([]string{"cloudwatch:GetMetricData"}, jsii.String("*"))
	allow([]string{"lambda:UpdateEventSourceMapping"}, mappings)
	suppress(o.Role, suppression{
		id: "AwsSolutions-IAM5",
		reason: "The operator reads the stack's index parameters under /hookfan/<stack>/*, the archive's objects (keys Firehose generates) and the payload objects under " + payload.Prefix +
			" (keys derived from event ids); lambda:ListEventSourceMappings and cloudwatch:GetMetricData (the console's charts) have no resource-level permissions, and ops pause/resume updates the mapping of any lane, whose ids are known only at run time.",
		appliesToRegex: []string{`/^Resource::arn:<AWS::Partition>:ssm:.*:parameter\/hookfan\/.*\*$/`, `/^Resource::.*\/\*$/`, `/^Resource::\*$/`,
			`/^Resource::arn:<AWS::Partition>:lambda:<AWS::Region>:<AWS::AccountId>:event-source-mapping:\*$/`},
	})
	return o
}

// guardTopic lets only ingest publish to the fan-out topic: a message
// published there reaches every lane's queue through its subscription,
// attributes and all (the replay attribute among them). The reconcilers
// of sources whose missing events are published (Stripe) publish through
// ingest's own path, and are named beside it.
func guardTopic(topic awssns.Topic, ingest awsiam.IRole, reconcilers []*Reconciler) {
	publishers := []*string{ingest.RoleArn()}
	for _, r := range reconcilers {
		if reconcilejob.Publishes(r.Source) {
			publishers = append(publishers, r.Role.RoleArn())
		}
	}
	topic.AddToResourcePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Sid:        jsii.String("OnlyIngestPublishes"),
		Effect:     awsiam.Effect_DENY,
		Principals: &[]awsiam.IPrincipal{awsiam.NewAnyPrincipal()},
		Actions:    jsii.Strings("sns:Publish"),
		Resources:  &[]*string{topic.TopicArn()},
		Conditions: &map[string]any{"ArnNotEquals": map[string]any{"aws:PrincipalArn": oneOrList(publishers)}},
	}))
}

// oneOrList is a condition's value: the one ARN alone, or the list.
func oneOrList(arns []*string) any {
	if len(arns) == 1 {
		return arns[0]
	}
	return arns
}
