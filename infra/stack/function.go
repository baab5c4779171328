package stack

import (
	"fmt"
	"slices"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/hookfan/hookfan/shared/config"
)

// ApplicationLogLevel is both functions' application log level. It must
// stay INFO or lower: Lambda files the EMF lines, which carry no level, as
// INFO, and a higher level would drop the metrics with them.
const ApplicationLogLevel = awslambda.ApplicationLogLevel_INFO

// MaxEnvironmentBytes is Lambda's limit on all environment variables of a
// function together (keys and values).
const MaxEnvironmentBytes = 4096

// tokenBudget is what an unresolved value (an ARN, URL or name CloudFormation
// fills in at deploy time) is assumed to take in the environment. ARNs and
// queue URLs of CDK-named resources stay well under it.
const tokenBudget = 256

// functionParts is what newFunction makes: the function, its own role (no
// managed policies) and its own log group with a retention.
type functionParts struct {
	Function awslambda.Function
	Role     awsiam.Role
	LogGroup awslogs.LogGroup
}

type functionSpec struct {
	description string
	code        awslambda.Code
	memoryMB    float64
	timeout     awscdk.Duration
	env         map[string]string
	retention   awslogs.RetentionDays
	// tracing is the function's X-Ray mode (tracingModes).
	tracing awslambda.Tracing
	// systemLogLevel is the config's functions.systemLogLevel.
	systemLogLevel string
}

// tracingModes maps the config's tracing to the ingest function's and the
// deliver functions' X-Ray modes. With "sampled", ingest samples (Lambda's
// rate, or the REST stage's decision under X-Ray's sampling rules), the
// topic passes its trace header to each queue (the AWSTraceHeader system
// attribute) and a deliver function traces only what was sampled upstream.
func tracingModes(mode string) (ingest, deliver awslambda.Tracing) {
	switch mode {
	case config.TracingSampled:
		return awslambda.Tracing_ACTIVE, awslambda.Tracing_PASS_THROUGH
	case config.TracingAll:
		return awslambda.Tracing_ACTIVE, awslambda.Tracing_ACTIVE
	}
	return awslambda.Tracing_DISABLED, awslambda.Tracing_DISABLED
}

// systemLogLevels maps functions.systemLogLevel to CDK's enum.
var systemLogLevels = map[string]awslambda.SystemLogLevel{
	config.SystemLogWarn:  awslambda.SystemLogLevel_WARN,
	config.SystemLogInfo:  awslambda.SystemLogLevel_INFO,
	config.SystemLogDebug: awslambda.SystemLogLevel_DEBUG,
}

// newFunction makes a Go function on PROVIDED_AL2023 / ARM_64 with its own
// role, whose only policy is what the caller grants plus writing to its own
// log group, with the tracing and system log level the spec gives.
func newFunction(scope constructs.Construct, spec functionSpec) (*functionParts, error) {
	if err := checkEnvironment(*scope.Node().Path(), spec.env); err != nil {
		return nil, err
	}
	logs := awslogs.NewLogGroup(scope, jsii.String("Logs"), &awslogs.LogGroupProps{
		Retention: spec.retention,
		// Kept when the function goes: the last logs of a removed lane are
		// what explains it, and the retention bounds their cost.
		RemovalPolicy: awscdk.RemovalPolicy_RETAIN,
	})
	role := awsiam.NewRole(scope, jsii.String("Role"), &awsiam.RoleProps{
		AssumedBy:   awsiam.NewServicePrincipal(jsii.String("lambda.amazonaws.com"), nil),
		Description: jsii.String(spec.description),
	})
	logs.GrantWrite(role)
	env := make(map[string]*string, len(spec.env))
	for k, v := range spec.env {
		env[k] = jsii.String(v)
	}
	fn := awslambda.NewFunction(scope, jsii.String("Function"), &awslambda.FunctionProps{
		Description:  jsii.String(spec.description),
		Runtime:      awslambda.Runtime_PROVIDED_AL2023(),
		Architecture: awslambda.Architecture_ARM_64(),
		Handler:      jsii.String("bootstrap"),
		Code:         spec.code,
		MemorySize:   jsii.Number(spec.memoryMB),
		Timeout:      spec.timeout,
		Environment:  &env,
		Role:         role,
		LogGroup:     logs,
		Tracing:      spec.tracing,
		// JSON lines with the request id, through the runtime's logger
		// (lambdaenv.Logger, which the mains use).
		LoggingFormat:         awslambda.LoggingFormat_JSON,
		ApplicationLogLevelV2: ApplicationLogLevel,
		// WARN by default: no platform.start/report lines (ops status and
		// the delivery records are the audit trail).
		SystemLogLevelV2: systemLogLevels[spec.systemLogLevel],
	})
	if spec.tracing != awslambda.Tracing_ACTIVE {
		suppress(fn, suppression{id: "Serverless-LambdaTracing", reason: "Tracing follows the config's tracing (off by default: X-Ray would bill a trace per request and per delivery); \"sampled\" and \"all\" turn it on (docs/configuration.md)."})
	}
	suppress(role, suppression{id: "AwsSolutions-IAM5", reason: reasonXRay, appliesTo: []string{"Resource::*"}})
	return &functionParts{Function: fn, Role: role, LogGroup: logs}, nil
}

// checkEnvironment fails synthesis with a clear message when a function's
// environment would exceed Lambda's 4 KB.
func checkEnvironment(path string, env map[string]string) error {
	total := 0
	keys := make([]string, 0, len(env))
	for k, v := range env {
		n := len(v)
		if *awscdk.Token_IsUnresolved(jsii.String(v)) {
			n = tokenBudget
		}
		total += len(k) + n
		keys = append(keys, fmt.Sprintf("%s=%d", k, len(k)+n))
	}
	if total > MaxEnvironmentBytes {
		slices.Sort(keys)
		return fmt.Errorf("%s: the function's environment would take about %d bytes, more than Lambda's %d (%s); shorten the configuration it carries (fewer or shorter source and destination settings)", path, total, MaxEnvironmentBytes, strings.Join(keys, ", "))
	}
	return nil
}

// retentionDays maps the retentions config accepts to CDK's enum.
func retentionDays(days int) (awslogs.RetentionDays, error) {
	enum := []awslogs.RetentionDays{
		awslogs.RetentionDays_ONE_DAY, awslogs.RetentionDays_THREE_DAYS, awslogs.RetentionDays_FIVE_DAYS,
		awslogs.RetentionDays_ONE_WEEK, awslogs.RetentionDays_TWO_WEEKS, awslogs.RetentionDays_ONE_MONTH,
		awslogs.RetentionDays_TWO_MONTHS, awslogs.RetentionDays_THREE_MONTHS, awslogs.RetentionDays_FOUR_MONTHS,
		awslogs.RetentionDays_FIVE_MONTHS, awslogs.RetentionDays_SIX_MONTHS, awslogs.RetentionDays_ONE_YEAR,
		awslogs.RetentionDays_THIRTEEN_MONTHS, awslogs.RetentionDays_EIGHTEEN_MONTHS, awslogs.RetentionDays_TWO_YEARS,
		awslogs.RetentionDays_THREE_YEARS, awslogs.RetentionDays_FIVE_YEARS, awslogs.RetentionDays_SIX_YEARS,
		awslogs.RetentionDays_SEVEN_YEARS, awslogs.RetentionDays_EIGHT_YEARS, awslogs.RetentionDays_NINE_YEARS,
		awslogs.RetentionDays_TEN_YEARS,
	}
	days0 := []int{1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653}
	i := slices.Index(days0, days)
	if i < 0 {
		return "", fmt.Errorf("api.logRetentionDays: %d is not a CloudWatch Logs retention", days)
	}
	return enum[i], nil
}
