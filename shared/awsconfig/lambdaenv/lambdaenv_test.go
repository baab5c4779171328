package lambdaenv

import (
	"context"
	"os/exec"
	"strings"
	"testing"
)

func TestConfig(t *testing.T) {
	t.Setenv(EnvRegion, "eu-west-1")
	t.Setenv(EnvAccessKeyID, "AKIDEXAMPLE")
	t.Setenv(EnvSecretKey, "secret")
	t.Setenv(EnvSessionToken, "token")
	t.Setenv(EnvEndpointURL, "")
	cfg, err := Config()
	if err != nil {
		t.Fatal(err)
	}
	creds, err := cfg.Credentials.Retrieve(context.Background())
	if err != nil || creds.AccessKeyID != "AKIDEXAMPLE" || creds.SecretAccessKey != "secret" || creds.SessionToken != "token" {
		t.Errorf("credentials = %+v, %v; want the environment's", creds, err)
	}
	if cfg.Region != "eu-west-1" || cfg.BaseEndpoint != nil {
		t.Errorf("region %q, endpoint %v; want eu-west-1 and none", cfg.Region, cfg.BaseEndpoint)
	}

	t.Setenv(EnvEndpointURL, "http://localhost.localstack.cloud:4566")
	if cfg, _ = Config(); cfg.BaseEndpoint == nil || *cfg.BaseEndpoint != "http://localhost.localstack.cloud:4566" {
		t.Errorf("endpoint %v, want AWS_ENDPOINT_URL's", cfg.BaseEndpoint)
	}

	t.Setenv(EnvRegion, "")
	t.Setenv(EnvSecretKey, "")
	_, err = Config()
	if err == nil || !strings.Contains(err.Error(), EnvRegion) || !strings.Contains(err.Error(), EnvSecretKey) {
		t.Errorf("Config without region and secret key = %v, want an error naming both", err)
	}
}

// TestFunctionsLinkNoCredentialProviders keeps the SDK's default loader and
// the credential sources a function never uses out of the Lambda binaries:
// each costs every cold start its package initialisation.
func TestFunctionsLinkNoCredentialProviders(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-tags", "lambda.norpc",
		"github.com/hookfan/hookfan/functions/ingest", "github.com/hookfan/hookfan/functions/deliver").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		for _, banned := range []string{
			"github.com/aws/aws-sdk-go-v2/config",
			"github.com/aws/aws-sdk-go-v2/service/sts",
			"github.com/aws/aws-sdk-go-v2/service/sso",
			"github.com/aws/aws-sdk-go-v2/service/ssooidc",
			"github.com/aws/aws-sdk-go-v2/service/signin",
			"github.com/aws/aws-sdk-go-v2/feature/ec2/imds",
		} {
			if pkg == banned {
				t.Errorf("a function links %s", pkg)
			}
		}
	}
}

// TestFunctionsLinkNoServiceSchemas keeps the SDK service packages'
// schemas packages out of the Lambda binaries. Service releases with
// schema-based (de)serialization (DynamoDB from v1.69.0, Lambda from
// v1.109.0, SQS from v1.49.0, Secrets Manager from v1.50.0, SNS from
// v1.48.0) build every operation's and shape's schema at package
// initialisation: 2.3 ms of each deliver cold start, more than the rest
// of the SDK's initialisation together. go.mod keeps those services at
// their last release without it; an upgrade that brings the schemas back
// fails here, and docs/decisions.md says what to weigh before taking it.
func TestFunctionsLinkNoServiceSchemas(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-tags", "lambda.norpc",
		"github.com/hookfan/hookfan/functions/ingest", "github.com/hookfan/hookfan/functions/deliver").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		// CloudWatch's client (the PutMetricData sink) is at a release
		// with schemas: every binary links it (docs/decisions.md).
		if strings.HasPrefix(pkg, "github.com/aws/aws-sdk-go-v2/service/") && strings.HasSuffix(pkg, "/schemas") &&
			pkg != "github.com/aws/aws-sdk-go-v2/service/cloudwatch/schemas" {
			t.Errorf("a function links %s", pkg)
		}
	}
}
