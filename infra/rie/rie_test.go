package rie

import (
	"strings"
	"testing"
	"time"
)

func TestParentPID(t *testing.T) {
	if got, err := parentPID("4242 (boot strap (x)) S 17 4242 4242 0 -1"); err != nil || got != 17 {
		t.Errorf("parentPID = %d, %v; want 17", got, err)
	}
	if _, err := parentPID("garbage"); err == nil {
		t.Error("parentPID of garbage succeeded")
	}
}

func TestEnv(t *testing.T) {
	t.Setenv("AWS_CA_BUNDLE", "/etc/ssl/bundle.pem")
	env := Env("deliver", "http://127.0.0.1:1", 20*time.Second, map[string]string{"HOOKFAN_TABLE_NAME": "hookfan-deliveries", "AWS_REGION": "eu-west-1"})
	for _, want := range []string{"AWS_REGION=eu-west-1", "AWS_ENDPOINT_URL=http://127.0.0.1:1", "HOOKFAN_TABLE_NAME=hookfan-deliveries",
		"AWS_LAMBDA_FUNCTION_NAME=deliver", "AWS_LAMBDA_FUNCTION_TIMEOUT=20"} {
		if !strings.Contains("\n"+strings.Join(env, "\n")+"\n", "\n"+want+"\n") {
			t.Errorf("environment lacks %s", want)
		}
	}
	if strings.Contains(strings.Join(env, "\n"), "AWS_CA_BUNDLE") {
		t.Error("the machine's environment leaks into the function's")
	}
}
