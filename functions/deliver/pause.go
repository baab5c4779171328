//go:build !hookfan.nopause

package main

import (
	"github.com/aws/aws-sdk-go-v2/aws"
	lambdasvc "github.com/aws/aws-sdk-go-v2/service/lambda"

	"github.com/hookfan/hookfan/shared/pausing"
)

// pauseLinked reports whether this binary links the switch of a lane's
// event source mapping: it was built without lambdaenv.NoPauseBuildTag.
const pauseLinked = true

// mappingSwitch builds the switch of the event source mapping from the
// queue queueARN to the function.
func mappingSwitch(cfg aws.Config, function, queueARN string) (pausing.Switch, error) {
	return &pausing.EventSourceMapping{API: lambdasvc.NewFromConfig(cfg), FunctionName: function, QueueARN: queueARN}, nil
}
