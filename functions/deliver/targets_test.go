package main

import (
	"log/slog"
	"testing"

	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/delivery"
)

// TestBuildTargetLane: an AWS target's lane builds without a signing
// secret, its one client made for its target's region.
func TestBuildTargetLane(t *testing.T) {
	for _, d := range []config.Destination{
		{Name: "q", Type: config.TypeSQS, Target: "arn:aws:sqs:eu-west-1:210987654321:orders.fifo"},
		{Name: "b", Type: config.TypeEventBridge, Target: "arn:aws:events:us-east-1:210987654321:event-bus/default"},
		{Name: "f", Type: config.TypeLambda, Target: "arn:aws:lambda:us-east-1:123456789012:function:orders:live"},
	} {
		t.Run(d.Type, func(t *testing.T) {
			setEnv(t, delivery.EnvSecretID)
			t.Setenv(delivery.EnvDestination, config.EncodeDestination(d))
			h, err := build(slog.New(slog.DiscardHandler))
			checkBuild(t, h, err, nil)
		})
	}
}
