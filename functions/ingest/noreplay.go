//go:build hookfan.noreplay

package main

import (
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/hookfan/hookfan/shared/awsconfig/lambdaenv"
	"github.com/hookfan/hookfan/shared/ingest"
)

// replayLinked reports whether this binary links replay protection's
// store: it was built without lambdaenv.NoReplayBuildTag.
const replayLinked = false

// replayStore refuses: this binary was built with lambdaenv.NoReplayBuildTag.
func replayStore(aws.Config, string) (ingest.ReplayGuard, error) {
	return nil, fmt.Errorf("a source has replay protection, but this binary was built with -tags %s, without its store; "+
		"build it without that tag (the stack's builder does when a source has replay protection)", lambdaenv.NoReplayBuildTag)
}
