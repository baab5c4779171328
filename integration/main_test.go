//go:build integration

// Package integration holds the end-to-end tests: every promise of the
// design checked over the real AWS wire protocols against an emulator.
// They start moto_server on a free loopback port unless AWS_ENDPOINT_URL
// points at a running emulator (LocalStack, say). When CI is set and no
// emulator can be had they fail; they never skip.
package integration

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/hookfan/hookfan/infra/local/devstack"
	"github.com/hookfan/hookfan/shared/awsconfig"
)

var (
	awsCfg  aws.Config
	clients devstack.Clients
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	// Starting the emulator and provisioning take seconds on an idle
	// machine; a loaded one is given minutes.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	for k, v := range map[string]string{"AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test", "AWS_REGION": "us-east-1"} {
		if os.Getenv(k) == "" {
			os.Setenv(k, v)
		}
	}
	if os.Getenv("AWS_ENDPOINT_URL") == "" {
		logDir, _ := os.MkdirTemp("", "hookfan-moto-")
		emu, err := devstack.StartMoto(ctx, filepath.Join(logDir, "moto.log"))
		if err != nil {
			fmt.Fprintf(os.Stderr, "integration: no AWS emulator: %v\n", err)
			return 1 // fail, never skip: these tests are the proof of the design
		}
		defer emu.Stop()
		os.Setenv("AWS_ENDPOINT_URL", emu.URL)
		fmt.Fprintf(os.Stderr, "integration: moto_server at %s (log %s)\n", emu.URL, logDir)
	}
	var err error
	awsCfg, err = awsconfig.Load(ctx)
	if err != nil {
		fmt.Fprintf(os.Stderr, "integration: %v\n", err)
		return 1
	}
	clients = devstack.NewClients(awsCfg)
	return m.Run()
}

// uniquePrefix names one test's resources so tests share the emulator safely.
func uniquePrefix(t *testing.T) string {
	t.Helper()
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return "hf-" + hex.EncodeToString(b)
}
