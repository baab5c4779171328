package stack

import (
	"fmt"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awss3"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/payload"
)

// PayloadBucketProps configures the payload bucket.
type PayloadBucketProps struct {
	// Config gives the lifecycle (config.PayloadExpirationDays) (required).
	Config *config.Config
	// RemovalPolicy; "": RETAIN (queued messages and the DLQ may still
	// refer to its objects when the stack goes).
	RemovalPolicy awscdk.RemovalPolicy
}

// PayloadBucket holds the bodies larger than one SNS message: private,
// encrypted (SSE-S3), TLS-only, objects under payload.Prefix expiring after
// config.PayloadExpirationDays. Ingest may only put objects under the
// prefix, each deliver function only get them.
type PayloadBucket struct {
	constructs.Construct
	Bucket awss3.Bucket
	// ExpirationDays is the lifecycle rule's expiration.
	ExpirationDays int
}

// NewPayloadBucket makes the payload bucket.
func NewPayloadBucket(scope constructs.Construct, id string, props *PayloadBucketProps) *PayloadBucket {
	p := &PayloadBucket{Construct: constructs.NewConstruct(scope, jsii.String(id)), ExpirationDays: props.Config.PayloadExpirationDays()}
	removal := props.RemovalPolicy
	if removal == "" {
		removal = awscdk.RemovalPolicy_RETAIN
	}
	p.Bucket = awss3.NewBucket(p.Construct, jsii.String("Bucket"), &awss3.BucketProps{
		Encryption:        awss3.BucketEncryption_S3_MANAGED,
		EnforceSSL:        jsii.Bool(true),
		BlockPublicAccess: awss3.BlockPublicAccess_BLOCK_ALL(),
		ObjectOwnership:   awss3.ObjectOwnership_BUCKET_OWNER_ENFORCED,
		// A provider's retry overwrites its object; no versions pile up.
		Versioned: jsii.Bool(false),
		LifecycleRules: &[]*awss3.LifecycleRule{{
			Id:                                  jsii.String("expire-payloads"),
			Enabled:                             jsii.Bool(true),
			Prefix:                              jsii.String(payload.Prefix),
			Expiration:                          awscdk.Duration_Days(jsii.Number(float64(p.ExpirationDays))),
			AbortIncompleteMultipartUploadAfter: awscdk.Duration_Days(jsii.Number(1)),
		}},
		RemovalPolicy: removal,
	})
	suppress(p.Bucket, suppression{id: "AwsSolutions-S1", reason: fmt.Sprintf("The payload bucket holds webhook bodies for at most %d days, written by the ingest function and read by the deliver functions through their own roles only; every request is in CloudTrail (data events can be enabled for audits), and server access logs would need a second bucket of their own for no reader.", p.ExpirationDays)})
	return p
}

// objects is the ARN pattern of the objects under payload.Prefix.
func (p *PayloadBucket) objects() *string {
	return p.Bucket.ArnForObjects(jsii.String(payload.Prefix + "*"))
}

// GrantPut lets role store bodies: s3:PutObject under the prefix, nothing else.
func (p *PayloadBucket) GrantPut(role awsiam.IRole) {
	role.AddToPrincipalPolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Actions: jsii.Strings("s3:PutObject"), Resources: &[]*string{p.objects()},
	}))
	suppressObjects(role, "PutObject")
}

// grantGet lets role read bodies: s3:GetObject under the prefix of the
// bucket named by bucketArn (a lane refers to the parent's bucket by ARN).
func grantPayloadGet(role awsiam.IRole, bucketArn *string) {
	role.AddToPrincipalPolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Actions:   jsii.Strings("s3:GetObject"),
		Resources: &[]*string{awscdk.Fn_Join(jsii.String(""), &[]*string{bucketArn, jsii.String("/" + payload.Prefix + "*")})},
	}))
	suppressObjects(role, "GetObject")
}

func suppressObjects(role awsiam.IRole, action string) {
	suppress(role, suppression{
		id:             "AwsSolutions-IAM5",
		reason:         fmt.Sprintf("s3:%s on the payload bucket's objects under %s only: object keys are derived from event ids at run time, so the resource is the prefix.", action, payload.Prefix),
		appliesToRegex: []string{`/^Resource::.*\/payloads\/\*$/`},
	})
}
