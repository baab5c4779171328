//go:build hookfan.nopause

package main

import (
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/hookfan/hookfan/shared/awsconfig/lambdaenv"
	"github.com/hookfan/hookfan/shared/pausing"
)

// pauseLinked reports whether this binary links the switch of a lane's
// event source mapping: it was built without lambdaenv.NoPauseBuildTag.
const pauseLinked = false

// mappingSwitch refuses: this binary was built with lambdaenv.NoPauseBuildTag.
func mappingSwitch(aws.Config, string, string) (pausing.Switch, error) {
	return nil, fmt.Errorf("the destination pauses, but this binary was built with -tags %s, without the switch of its event source mapping; "+
		"build it without that tag (the stack's builder does when a destination has pause)", lambdaenv.NoPauseBuildTag)
}
