package pacing_test

import (
	"testing"

	"github.com/hookfan/hookfan/shared/pacing"
	"github.com/hookfan/hookfan/shared/pacing/pacingtest"
)

func TestMemoryKeepsTheContract(t *testing.T) {
	pacingtest.Run(t, pacing.NewMemory(), pacingtest.Lanes("dest"), pacingtest.Options{})
}
