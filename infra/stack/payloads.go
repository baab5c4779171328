package stack

import (
	"errors"
	"fmt"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awskms"
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
	// Key encrypts the objects (the stack's data key) (required).
	Key awskms.IKey
	// RemovalPolicy; "": RETAIN (queued messages and the DLQ may still
	// refer to its objects when the stack goes).
	RemovalPolicy awscdk.RemovalPolicy
}

// PayloadBucket holds the bodies larger than one SNS message: private,
// encrypted with the stack's data key (SSE-KMS, without S3 Bucket Keys, so
// that every object written or read is a KMS call in CloudTrail),
// TLS-only, objects under payload.Prefix expiring after
// config.PayloadExpirationDays. Ingest may only put objects under the
// prefix, each deliver function only get those of its filter's sources.
type PayloadBucket struct {
	constructs.Construct
	Bucket awss3.Bucket
	Key    awskms.IKey
	// ExpirationDays is the lifecycle rule's expiration.
	ExpirationDays int
}

// NewPayloadBucket makes the payload bucket.
func NewPayloadBucket(scope constructs.Construct, id string, props *PayloadBucketProps) (*PayloadBucket, error) {
	if props == nil || props.Config == nil || props.Key == nil {
		return nil, errors.New("payload bucket: Config and Key are required")
	}
	p := &PayloadBucket{Construct: constructs.NewConstruct(scope, jsii.String(id)), Key: props.Key, ExpirationDays: props.Config.PayloadExpirationDays()}
	removal := props.RemovalPolicy
	if removal == "" {
		removal = awscdk.RemovalPolicy_RETAIN
	}
	p.Bucket = awss3.NewBucket(p.Construct, jsii.String("Bucket"), &awss3.BucketProps{
		Encryption:        awss3.BucketEncryption_KMS,
		EncryptionKey:     props.Key,
		BucketKeyEnabled:  jsii.Bool(false),
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
	suppress(p.Bucket, suppression{id: "AwsSolutions-S1", reason: reasonBodyBucketLogs})
	return p, nil
}

// reasonBodyBucketLogs is the S1 suppression of the payload and archive
// buckets, which hold every accepted body.
const reasonBodyBucketLogs = "Its objects are encrypted with the stack's own KMS key (SSE-KMS without S3 Bucket Keys), so every object written or read is a kms:GenerateDataKey or kms:Decrypt call, which CloudTrail records as a management event by default, with the caller; only the roles the stack grants the key (ingest, the lanes, the archive's Firehose stream, the operator role) and the account's key administrators can use it. Server access logs would need a second bucket and record nothing CloudTrail does not."

// objects is the ARN pattern of the objects under payload.Prefix.
func (p *PayloadBucket) objects() *string {
	return p.Bucket.ArnForObjects(jsii.String(payload.Prefix + "*"))
}

// GrantPut lets role store bodies: s3:PutObject under the prefix, and
// kms:GenerateDataKey on the key through S3; nothing else.
func (p *PayloadBucket) GrantPut(role awsiam.IRole) {
	role.AddToPrincipalPolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Actions: jsii.Strings("s3:PutObject"), Resources: &[]*string{p.objects()},
	}))
	grantKeyViaS3(role, p.Key.KeyArn(), "kms:GenerateDataKey")
	suppressObjects(role, "PutObject")
}

// grantKeyViaS3 lets role use the data key for S3 only (kms:ViaService).
func grantKeyViaS3(role awsiam.IRole, keyArn *string, actions ...string) {
	role.AddToPrincipalPolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Actions:   jsii.Strings(actions...),
		Resources: &[]*string{keyArn},
		Conditions: &map[string]any{"StringEquals": map[string]any{
			"kms:ViaService": awscdk.Fn_Join(jsii.String(""), &[]*string{jsii.String("s3."), awscdk.Aws_REGION(), jsii.String(".amazonaws.com")}),
		}},
	}))
}

// payloadPrefixes are the key prefixes a lane reads: those of its filter's
// sources (payload.SourcePrefix), or every object's (payload.Prefix) when
// the filter names no source.
func payloadPrefixes(f config.Filter) []string {
	if len(f.Sources) == 0 {
		return []string{payload.Prefix}
	}
	out := make([]string, len(f.Sources))
	for i, s := range f.Sources {
		out[i] = payload.SourcePrefix(s)
	}
	return out
}

// grantPayloadGet lets role read bodies: s3:GetObject under the prefixes
// of the buckets named by bucketArns (the payload bucket, and the archive's
// copies; a lane refers to the parent's buckets by ARN), and kms:Decrypt on
// the key through S3.
func grantPayloadGet(role awsiam.IRole, bucketArns []*string, keyArn *string, prefixes []string) {
	var resources []*string
	for _, bucketArn := range bucketArns {
		for _, prefix := range prefixes {
			resources = append(resources, awscdk.Fn_Join(jsii.String(""), &[]*string{bucketArn, jsii.String("/" + prefix + "*")}))
		}
	}
	role.AddToPrincipalPolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Actions: jsii.Strings("s3:GetObject"), Resources: &resources,
	}))
	grantKeyViaS3(role, keyArn, "kms:Decrypt")
	suppressObjects(role, "GetObject")
}

func suppressObjects(role awsiam.IRole, action string) {
	suppress(role, suppression{
		id:             "AwsSolutions-IAM5",
		reason:         fmt.Sprintf("s3:%s on the payload bucket's objects under %s (a lane: under its sources' %s<source>/) only: object keys are derived from event ids at run time, so the resource is the prefix.", action, payload.Prefix, payload.Prefix),
		appliesToRegex: []string{`/^Resource::.*\/payloads\/([a-z0-9-]+\/)?\*$/`},
	})
}
