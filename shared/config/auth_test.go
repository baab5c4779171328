package config

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestAuthAndTransformInvalid(t *testing.T) {
	tests := []struct {
		name, extra string
		want        []string
	}{
		{"auth without a kind", `, "auth": {}`, []string{
			`destinations[0].auth: names no kind of authentication; set sigv4 ({"service": "execute-api", "region": "eu-west-1"}) or oauth2 ({"tokenUrl": "…", "clientSecret": "…"}), or remove auth`,
		}},
		{"sigv4 and oauth2 together", `, "auth": {"sigv4": {"service": "execute-api", "region": "eu-west-1"}, "oauth2": {"tokenUrl": "https://idp.example.com/token", "clientSecret": "c/oauth"}}`, []string{
			`destinations[0].auth: sets sigv4 and oauth2; keep exactly one kind of authentication`,
		}},
		{"sigv4 shapes", `, "auth": {"sigv4": {"service": "Execute API", "region": "europe"}}`, []string{
			`destinations[0].auth.sigv4.service: "Execute API" is not a receiver Hookfan signs for; use execute-api (API Gateway), lambda (Lambda function URLs) or vpc-lattice-svcs (VPC Lattice); to sign for another service, open an issue naming it and the receiver it fronts`,
			`destinations[0].auth.sigv4.region: "europe" is not an AWS region; use the receiver's region, such as eu-west-1 or us-east-1`,
		}},
		{"sigv4 missing fields", `, "auth": {"sigv4": {}}`, []string{
			`destinations[0].auth.sigv4.service: "" is not a receiver Hookfan signs for; use execute-api (API Gateway), lambda (Lambda function URLs) or vpc-lattice-svcs (VPC Lattice); to sign for another service, open an issue naming it and the receiver it fronts`,
			`destinations[0].auth.sigv4.region: "" is not an AWS region; use the receiver's region, such as eu-west-1 or us-east-1`,
		}},
		{"a header the signer sets", `, "auth": {"sigv4": {"service": "execute-api", "region": "eu-west-1"}}, "headers": [{"name": "Authorization", "secretName": "t"}, {"name": "X-Amz-Date", "value": "x"}]`, []string{
			`destinations[0].headers[0].name: "Authorization" cannot be set on a destination with auth.sigv4: the SigV4 signer sets it; remove the header (the receiver authenticates the lane's role)`,
			`destinations[0].headers[1].name: "X-Amz-Date" cannot be set on a destination with auth.sigv4: the SigV4 signer sets it; remove the header (the receiver authenticates the lane's role)`,
		}},
		{"resources", `, "auth": {"sigv4": {"service": "execute-api", "region": "eu-west-1", "resources": ["arn:aws:execute-api:eu-west-1:123456789012:abc/*", "arn:aws:lambda:eu-west-1:123456789012:function:f", "arn:aws:execute-api:eu-west-1:1234:abc/prod/POST/x", "nope"]}}`, []string{
			`destinations[0].auth.sigv4.resources[0]: "arn:aws:execute-api:eu-west-1:123456789012:abc/*" holds a wildcard; name the exact route or function (arn:aws:execute-api:eu-west-1:123456789012:a1b2c3d4e5/prod/POST/hooks)`,
			`destinations[0].auth.sigv4.resources[1]: "arn:aws:lambda:eu-west-1:123456789012:function:f" is a lambda ARN, not one of service execute-api; use arn:aws:execute-api:eu-west-1:123456789012:a1b2c3d4e5/prod/POST/hooks`,
			`destinations[0].auth.sigv4.resources[2]: "arn:aws:execute-api:eu-west-1:1234:abc/prod/POST/x" has no region or 12-digit account; use arn:aws:execute-api:eu-west-1:123456789012:a1b2c3d4e5/prod/POST/hooks`,
			`destinations[0].auth.sigv4.resources[3]: "nope" is not an ARN; use arn:aws:execute-api:eu-west-1:123456789012:a1b2c3d4e5/prod/POST/hooks`,
		}},
		{"resources for lattice", `, "auth": {"sigv4": {"service": "vpc-lattice-svcs", "region": "eu-west-1", "resources": ["arn:aws:vpc-lattice:eu-west-1:123456789012:service/svc-1"]}}`, []string{
			`destinations[0].auth.sigv4.resources: is set for service "vpc-lattice-svcs"; resources are granted for execute-api and lambda only (a VPC Lattice auth policy names the role itself)`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Parse([]byte(paused(tt.extra)))
			if err == nil {
				t.Fatalf("Parse accepted an invalid config: %+v", c.Destinations[0])
			}
			if diff := cmp.Diff(tt.want, strings.Split(err.Error(), "\n")); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSigV4ServiceIsADocumentedReceiver: auth.sigv4.service takes the
// documented receivers' signing names only; any other AWS signing name
// (an AWS API the lane's role would call with a sender's body) is refused,
// naming the field, the value and how to ask for another.
func TestSigV4ServiceIsADocumentedReceiver(t *testing.T) {
	const fix = ` is not a receiver Hookfan signs for; use execute-api (API Gateway), lambda (Lambda function URLs) or vpc-lattice-svcs (VPC Lattice); to sign for another service, open an issue naming it and the receiver it fronts`
	tests := []struct {
		service string
		ok      bool
	}{
		{"execute-api", true},
		{"lambda", true},
		{"vpc-lattice-svcs", true},
		{"sqs", false},
		{"dynamodb", false},
		{"sts", false},
		{"s3", false},
		{"iam", false},
		{"execute_api", false},
		{"Execute-Api", false},
		{"lambda ", false},
		{"vpc-lattice", false},
		{"apigateway", false},
		{"", false},
	}
	for _, tt := range tests {
		t.Run(tt.service, func(t *testing.T) {
			_, err := Parse([]byte(paused(`, "auth": {"sigv4": {"service": "` + tt.service + `", "region": "eu-west-1"}}`)))
			if tt.ok {
				if err != nil {
					t.Errorf("refused: %v", err)
				}
				return
			}
			want := `destinations[0].auth.sigv4.service: "` + tt.service + `"` + fix
			if err == nil || err.Error() != want {
				t.Errorf("error %v\nwant %s", err, want)
			}
		})
	}
}

func TestAuthAndTransformRoundTripThroughTheEnvironment(t *testing.T) {
	c, err := Parse([]byte(paused(`, "auth": {"sigv4": {"service": "lambda", "region": "us-gov-west-1", "resources": ["arn:aws-us-gov:lambda:us-gov-west-1:123456789012:function:receiver:live"]}}, "transform": "{text: .type}"`)))
	if err != nil {
		t.Fatal(err)
	}
	d, err := DecodeDestination("HOOKFAN_DESTINATION", EncodeDestination(c.Destinations[0]))
	if err != nil {
		t.Fatalf("DecodeDestination: %v", err)
	}
	if diff := cmp.Diff(c.Destinations[0], d); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	if s := d.SigV4(); s == nil || s.Service != "lambda" || s.Region != "us-gov-west-1" {
		t.Errorf("SigV4() = %+v", s)
	}
}
