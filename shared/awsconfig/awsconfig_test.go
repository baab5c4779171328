package awsconfig

import (
	"context"
	"testing"
)

func TestLoadHonoursEnvironment(t *testing.T) {
	t.Setenv("AWS_REGION", "")
	t.Setenv("AWS_DEFAULT_REGION", "")
	t.Setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:4566")
	t.Setenv("AWS_ACCESS_KEY_ID", "test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test")
	t.Setenv("AWS_CONFIG_FILE", "/nonexistent")
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent")
	cfg, err := Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Region != DefaultRegion {
		t.Errorf("Region = %q, want %q", cfg.Region, DefaultRegion)
	}
	if cfg.BaseEndpoint == nil || *cfg.BaseEndpoint != "http://127.0.0.1:4566" {
		t.Errorf("BaseEndpoint = %v, want the AWS_ENDPOINT_URL value", cfg.BaseEndpoint)
	}
	creds, err := cfg.Credentials.Retrieve(context.Background())
	if err != nil || creds.AccessKeyID != "test" {
		t.Errorf("credentials = %+v, %v; want the environment's", creds, err)
	}

	t.Setenv("AWS_REGION", "eu-west-1")
	cfg, err = Load(context.Background())
	if err != nil || cfg.Region != "eu-west-1" {
		t.Errorf("Region = %q, %v; want eu-west-1", cfg.Region, err)
	}
}
