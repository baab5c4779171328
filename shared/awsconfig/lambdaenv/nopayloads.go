//go:build hookfan.nopayloads

package lambdaenv

import (
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
)

// PayloadsLinked reports whether this binary links the S3 store of large
// bodies: it was built without NoPayloadsBuildTag.
const PayloadsLinked = false

// PayloadStore refuses: this binary was built with NoPayloadsBuildTag.
func PayloadStore(aws.Config, string, string) (Payloads, error) {
	return nil, fmt.Errorf("payload bucket set, but this binary was built with -tags %s, without the S3 store of large bodies; "+
		"build it without that tag (the stack's builder does when a source's maxBodyBytes exceeds one SNS message)", NoPayloadsBuildTag)
}
