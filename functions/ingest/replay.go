//go:build !hookfan.noreplay

package main

import (
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/hookfan/hookfan/shared/ingest"
	"github.com/hookfan/hookfan/shared/replayguard"
)

// replayLinked reports whether this binary links replay protection's
// store: it was built without lambdaenv.NoReplayBuildTag.
const replayLinked = true

// replayStore builds replay protection's store in table.
func replayStore(cfg aws.Config, table string) (ingest.ReplayGuard, error) {
	return replayguard.NewDynamoDB(dynamodb.NewFromConfig(cfg), table), nil
}
