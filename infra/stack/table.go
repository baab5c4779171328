package stack

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/hookfan/hookfan/shared/ddbitem"
)

// NewRecordTable makes the delivery-record table with ddbitem's key schema:
// on demand, TTL on ddbitem.ExpiresAt, point-in-time recovery unless
// dedupe.pointInTimeRecovery is false, retained on removal (it is what keeps a
// redriven message from being delivered twice). Ingest keeps its replay
// records there too, under keys "replay:<source>:<digest>" (shared/replayguard)
// that no deliver role's key condition matches. Its one index, ddbitem.TimeIndex,
// lists the delivery records by first attempt for ops events and the console;
// with dedupe.timeIndex false (index false) the table has none.
func NewRecordTable(scope constructs.Construct, id string, pitr, index bool) awsdynamodb.Table {
	t := awsdynamodb.NewTable(scope, jsii.String(id), &awsdynamodb.TableProps{
		PartitionKey:        &awsdynamodb.Attribute{Name: jsii.String(ddbitem.PartitionKey), Type: awsdynamodb.AttributeType_STRING},
		BillingMode:         awsdynamodb.BillingMode_PAY_PER_REQUEST,
		TimeToLiveAttribute: jsii.String(ddbitem.ExpiresAt),
		PointInTimeRecoverySpecification: &awsdynamodb.PointInTimeRecoverySpecification{
			PointInTimeRecoveryEnabled: jsii.Bool(pitr),
		},
		Encryption:    awsdynamodb.TableEncryption_DEFAULT,
		RemovalPolicy: awscdk.RemovalPolicy_RETAIN,
	})
	// The delivery records by first attempt (shared/dedupe's time index):
	// sparse, keys only, written once per record (docs/decisions.md).
	if index {
		t.AddGlobalSecondaryIndex(&awsdynamodb.GlobalSecondaryIndexProps{
			IndexName:      jsii.String(ddbitem.TimeIndex),
			PartitionKey:   &awsdynamodb.Attribute{Name: jsii.String(ddbitem.TimeBucket), Type: awsdynamodb.AttributeType_STRING},
			SortKey:        &awsdynamodb.Attribute{Name: jsii.String(ddbitem.FirstAttemptAt), Type: awsdynamodb.AttributeType_STRING},
			ProjectionType: awsdynamodb.ProjectionType_KEYS_ONLY,
		})
	}
	if !pitr {
		suppress(t, suppression{id: "AwsSolutions-DDB3", reason: "Point-in-time recovery is off by the configuration (dedupe.pointInTimeRecovery false): the records expire within dedupe.recordDays and a lost table costs duplicate deliveries of redriven messages, not events."})
	}
	return t
}
