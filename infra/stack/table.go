package stack

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/hookfan/hookfan/shared/ddbitem"
)

// NewRecordTable makes the delivery-record table with ddbitem's key schema:
// on demand, TTL on ddbitem.ExpiresAt, point-in-time recovery, retained on removal (it is what keeps a
// redriven message from being delivered twice). Ingest keeps its replay
// records there too, under keys "replay:<source>:<digest>" (shared/replayguard)
// that no deliver role's key condition matches.
func NewRecordTable(scope constructs.Construct, id string) awsdynamodb.Table {
	return awsdynamodb.NewTable(scope, jsii.String(id), &awsdynamodb.TableProps{
		PartitionKey:        &awsdynamodb.Attribute{Name: jsii.String(ddbitem.PartitionKey), Type: awsdynamodb.AttributeType_STRING},
		BillingMode:         awsdynamodb.BillingMode_PAY_PER_REQUEST,
		TimeToLiveAttribute: jsii.String(ddbitem.ExpiresAt),
		PointInTimeRecoverySpecification: &awsdynamodb.PointInTimeRecoverySpecification{
			PointInTimeRecoveryEnabled: jsii.Bool(true),
		},
		Encryption:    awsdynamodb.TableEncryption_DEFAULT,
		RemovalPolicy: awscdk.RemovalPolicy_RETAIN,
	})
}
