package stack

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssecretsmanager"
	"github.com/aws/aws-cdk-go/awscdk/v2/customresources"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/hookfan/hookfan/shared/config"
)

// completeARN matches a secret ARN that ends in Secrets Manager's suffix.
var completeARN = regexp.MustCompile(`^arn:aws[a-z-]*:secretsmanager:[a-z0-9-]+:[0-9]{12}:secret:.+-[A-Za-z0-9]{6}$`)

// awsCustomResourceSingleton is the construct ID of the CDK's AwsCustomResource function.
const awsCustomResourceSingleton = "AWS679f53fac002430cb0da5b7982bd2287"

func isSecretARN(s string) bool { return strings.HasPrefix(s, "arn:") }

// SourceSecretsProps configures SourceSecrets.
type SourceSecretsProps struct {
	// Sources are the configured sources (required).
	Sources []config.Source
	// LogRetention of the helper function's logs (required).
	LogRetention awslogs.RetentionDays
}

// SourceSecrets makes sure every source secret the configuration names by
// name exists, without ever touching one that does: on each deploy a
// CloudFormation custom resource calls CreateSecret with no value and
// ignores ResourceExistsException. A created secret is empty until its value
// is set (docs/providers.md#the-three-steps-for-every-provider); until then ingest answers 401 for the
// source (fail closed). The stack never deletes or overwrites a source
// secret: the provider's signing secret outlives any deployment. Secrets
// named by ARN are taken to exist.
type SourceSecrets struct {
	constructs.Construct
	// Secrets maps a source name to its secret.
	Secrets map[string]awssecretsmanager.ISecret
	// Ensure maps a source name to the custom resource that creates its
	// secret when missing (absent for secrets named by ARN).
	Ensure map[string]customresources.AwsCustomResource
}

// NewSourceSecrets references the sources' secrets and creates missing ones empty.
func NewSourceSecrets(scope constructs.Construct, id string, props *SourceSecretsProps) *SourceSecrets {
	s := &SourceSecrets{
		Construct: constructs.NewConstruct(scope, jsii.String(id)),
		Secrets:   map[string]awssecretsmanager.ISecret{},
		Ensure:    map[string]customresources.AwsCustomResource{},
	}
	var names []string
	for _, src := range props.Sources {
		name := src.Verify.SecretName
		s.Secrets[src.Name] = importSecret(s.Construct, "Secret-"+src.Name, name)
		if !isSecretARN(name) {
			names = append(names, src.Name)
		}
	}
	if len(names) == 0 {
		return s
	}

	// One role and one log group for the CDK-provided custom resource
	// function, so it gets neither managed policies nor unbounded logs.
	logs := awslogs.NewLogGroup(s.Construct, jsii.String("EnsureLogs"), &awslogs.LogGroupProps{
		Retention:     props.LogRetention,
		RemovalPolicy: awscdk.RemovalPolicy_DESTROY,
	})
	role := awsiam.NewRole(s.Construct, jsii.String("EnsureRole"), &awsiam.RoleProps{
		AssumedBy:   awsiam.NewServicePrincipal(jsii.String("lambda.amazonaws.com"), nil),
		Description: jsii.String("Hookfan: creates missing source secrets (empty) at deploy time"),
	})
	logs.GrantWrite(role)
	stack := awscdk.Stack_Of(s.Construct)
	for _, src := range props.Sources {
		name := src.Verify.SecretName
		if isSecretARN(name) {
			continue
		}
		call := &customresources.AwsSdkCall{
			Service: jsii.String("SecretsManager"),
			Action:  jsii.String("CreateSecret"),
			Parameters: map[string]any{
				"Name":        name,
				"Description": fmt.Sprintf("Hookfan source %s (%s): set the provider's signing secret with put-secret-value (docs/providers.md#the-three-steps-for-every-provider)", src.Name, src.Verify.Kind),
			},
			IgnoreErrorCodesMatching: jsii.String("ResourceExistsException"),
			PhysicalResourceId:       customresources.PhysicalResourceId_Of(jsii.String(name)),
		}
		arn := stack.FormatArn(&awscdk.ArnComponents{
			Service:      jsii.String("secretsmanager"),
			Resource:     jsii.String("secret"),
			ResourceName: jsii.String(name + "-??????"),
			ArnFormat:    awscdk.ArnFormat_COLON_RESOURCE_NAME,
		})
		s.Ensure[src.Name] = customresources.NewAwsCustomResource(s.Construct, jsii.String("Ensure-"+src.Name), &customresources.AwsCustomResourceProps{
			OnCreate: call,
			OnUpdate: call,
			Policy: customresources.AwsCustomResourcePolicy_FromStatements(&[]awsiam.PolicyStatement{
				awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
					Actions:   jsii.Strings("secretsmanager:CreateSecret"),
					Resources: jsii.Strings(*arn),
				}),
			}),
			Role:                role,
			LogGroup:            logs,
			InstallLatestAwsSdk: jsii.Bool(false),
			Timeout:             awscdk.Duration_Minutes(jsii.Number(2)),
			MemorySize:          jsii.Number(128),
			// Deleting the stack leaves the provider's secret in place.
			RemovalPolicy: awscdk.RemovalPolicy_RETAIN,
		})
	}
	// The CDK-provided function behind every AwsCustomResource is a
	// stack-level singleton, outside this construct.
	// If a CDK upgrade renames it, its findings fail synthesis visibly.
	if fn := stack.Node().TryFindChild(jsii.String(awsCustomResourceSingleton)); fn != nil {
		suppress(fn,
			suppression{id: "Serverless-LambdaTracing", reason: "The CDK-provided AwsCustomResource function runs once per deployment for CloudFormation; tracing it adds nothing an operator uses."},
			suppression{id: "Serverless-LambdaDLQ", reason: "Invoked by CloudFormation for the custom resource, which reports failures to the deployment itself."},
		)
	}
	return s
}
