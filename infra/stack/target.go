package stack

import (
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/jsii-runtime-go"

	"github.com/hookfan/hookfan/shared/config"
)

// grantTarget lets the lane's role deliver to its AWS target, and only to
// it: the action of its kind (config.TargetKind.Action) on the target's exact ARN (a queue, a bus, a
// function or one of its aliases or versions), in any account. A target in
// another account also needs the owner's resource policy naming the role
// (a queue policy, a bus policy, a function's resource-based policy), and
// a queue encrypted with a customer managed key the key's
// kms:GenerateDataKey and kms:Decrypt: the docs give both. An https lane
// gets nothing here.
func (l *Lane) grantTarget() {
	d := l.Destination
	kind, ok := config.LookupTargetKind(d.Type)
	if !ok {
		return
	}
	l.Role.AddToPrincipalPolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Sid:       jsii.String("DeliverToTarget"),
		Actions:   jsii.Strings(kind.Action),
		Resources: jsii.Strings(d.Target),
	}))
}

// laneSecretID is the signing secret's id the lane's function reads: its
// ARN, or the name it was configured by (a partial ARN is ambiguous when
// the name ends in a hyphen and six characters); "" for an AWS target,
// which has no secret.
func laneSecretID(l *Lane) string {
	switch d := l.Destination; {
	case l.Secret == nil:
		return ""
	case d.SecretName != "" && !isSecretARN(d.SecretName):
		return d.SecretName
	default:
		return *l.Secret.SecretArn()
	}
}
