package lambdaenv

import (
	"context"

	"github.com/hookfan/hookfan/shared/payload"
)

// Build tags that leave a feature's AWS client out of a Lambda binary. An
// SDK service package initialises its endpoint tables at every cold start
// whether or not a client is built, so a function links only the clients
// its configuration calls. The default build links every feature (a
// binary built by hand serves any configuration); the stack's builder adds
// a tag when the configuration does not use the feature. A binary built
// with a tag refuses, at start, a configuration that needs the feature,
// naming the tag.
const (
	// NoPayloadsBuildTag leaves out the S3 store of large bodies (both
	// functions): set when no source's maxBodyBytes exceeds one SNS
	// message.
	NoPayloadsBuildTag = "hookfan.nopayloads"
	// NoPauseBuildTag leaves out the switch of a lane's event source
	// mapping and its Lambda client (deliver): set when no destination
	// pauses.
	NoPauseBuildTag = "hookfan.nopause"
	// NoReplayBuildTag leaves out the DynamoDB store of replay protection
	// (ingest): set when no source has replay protection.
	NoReplayBuildTag = "hookfan.noreplay"
)

// Payloads is the store of bodies larger than one SNS message, as the
// functions use it: ingest puts, deliver gets (payload.S3 in AWS).
type Payloads interface {
	Put(ctx context.Context, source, eventID string, body []byte) (payload.Reference, error)
	Get(ctx context.Context, ref payload.Reference) ([]byte, error)
}
