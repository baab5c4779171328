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

// TestFunctionsLinkNoCloudWatch keeps the CloudWatch client, and the
// PutMetricData sink built on it, out of every function binary
// (functions/...): the functions write their metrics as EMF lines, which
// CloudWatch Logs extracts, and the client's package initialisation would
// cost every cold start 0.55-0.8 ms (docs/decisions.md). The local stack
// keeps its PutMetricData sink in its own process.
func TestFunctionsLinkNoCloudWatch(t *testing.T) {
	mains, err := exec.Command("go", "list", "-f", "{{if eq .Name \"main\"}}{{.ImportPath}}{{end}}", "github.com/hookfan/hookfan/functions/...").Output()
	if err != nil {
		t.Fatalf("go list the functions: %v", err)
	}
	functions := strings.Fields(string(mains))
	if len(functions) < 3 {
		t.Fatalf("functions/... holds the mains %v, want ingest, deliver and reconcile at least", functions)
	}
	for _, fn := range functions {
		out, err := exec.Command("go", "list", "-deps", "-tags", "lambda.norpc", fn).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", fn, err)
		}
		for _, pkg := range strings.Fields(string(out)) {
			if pkg == "github.com/hookfan/hookfan/shared/metrics/putmetricdata" ||
				pkg == "github.com/aws/aws-sdk-go-v2/service/cloudwatch" || strings.HasPrefix(pkg, "github.com/aws/aws-sdk-go-v2/service/cloudwatch/") {
				t.Errorf("%s links %s", fn, pkg)
			}
		}
	}
}
