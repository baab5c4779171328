package stack

import (
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/jsii-runtime-go"

	"github.com/hookfan/hookfan/shared/config"
)

// What a destination's auth.sigv4 and transform add to its lane.
//
// A SigV4-signed destination needs nothing more in the lane's role: the
// receiver grants the role (execute-api:Invoke on an API Gateway route,
// lambda:InvokeFunctionUrl on a function URL, vpc-lattice-svcs:Invoke in a
// service's auth policy), so the role's ARN is in the lane's index and its
// nested stack's outputs (docs/subscribers.md#iam-signed-requests-sigv4).
//
// A destination with a transform sends a message its transform fails on
// straight to the lane's DLQ (shared/delivery/shape.go): its function may
// send to that queue only.
func (l *Lane) grantShaping() {
	if l.Destination.Transform != "" {
		l.DeadLetterQueue.GrantSendMessages(l.Role)
	}
	// auth.sigv4.resources: the receivers the role may invoke by its own
	// identity policy (another account's, an HTTP API's routes).
	if s := l.Destination.SigV4(); s != nil && len(s.Resources) > 0 {
		l.Role.AddToPrincipalPolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
			Sid:       jsii.String("InvokeTheSigV4Receiver"),
			Actions:   jsii.Strings(config.InvokeActions(s.Service)...),
			Resources: jsii.Strings(s.Resources...),
		}))
	}
}
