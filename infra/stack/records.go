package stack

import (
	"github.com/aws/jsii-runtime-go"

	"github.com/hookfan/hookfan/shared/config"
)

// recordActions are the DynamoDB calls a lane's function makes on its own
// records: conditional UpdateItems always (dedupe.mode lease claims and
// finishes with them, check finishes with one); GetItem only where it
// reads, in dedupe.mode check (the read before the POST) or when the lane
// pauses (its pause state). A lease claim refused by DynamoDB carries the
// record (ALL_OLD), so lease mode reads nothing.
func recordActions(cfg *config.Config, pauses bool) *[]*string {
	if cfg.DedupeMode() == config.DedupeCheck || pauses {
		return jsii.Strings("dynamodb:GetItem", "dynamodb:UpdateItem")
	}
	return jsii.Strings("dynamodb:UpdateItem")
}
