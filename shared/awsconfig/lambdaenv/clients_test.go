package lambdaenv

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestFunctionsLinkEveryClient: one binary per function serves every
// configuration, whatever build tags it is built with: ingest links S3
// (large payloads) and DynamoDB (replay protection), deliver S3 and Lambda
// (pausing lanes). None links CloudWatch (TestFunctionsLinkNoCloudWatch).
func TestFunctionsLinkEveryClient(t *testing.T) {
	const sdk = "github.com/aws/aws-sdk-go-v2/service/"
	for _, tt := range []struct {
		function string
		want     []string
	}{
		{"ingest", []string{"sns", "secretsmanager", "s3", "dynamodb"}},
		{"deliver", []string{"dynamodb", "sqs", "secretsmanager", "s3", "lambda"}},
	} {
		for _, tags := range []string{"lambda.norpc", "lambda.norpc,hookfan.nopayloads,hookfan.nopause,hookfan.noreplay,hookfan.cloudwatch"} {
			out, err := exec.Command("go", "list", "-deps", "-tags", tags, "github.com/hookfan/hookfan/functions/"+tt.function).Output()
			if err != nil {
				t.Fatalf("go list -tags %s: %v", tags, err)
			}
			linked := strings.Fields(string(out))
			for _, svc := range tt.want {
				if !slices.Contains(linked, sdk+svc) {
					t.Errorf("%s built with -tags %s does not link %s%s", tt.function, tags, sdk, svc)
				}
			}
		}
	}
}
