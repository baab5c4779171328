package stack

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
)

// lambdaTag leaves aws-lambda-go's RPC mode (the go1.x runtime's) out of
// every Lambda binary.
const lambdaTag = "lambda.norpc"

// lambdaBuildFlags are the flags every Lambda binary is built with besides
// its tags. They make the build reproducible (no paths, no build id, no VCS
// stamp), so an unchanged function keeps its asset hash and is not
// redeployed.
var lambdaBuildFlags = []string{"-trimpath", "-buildvcs=false", "-ldflags", "-s -w -buildid="}

// lambdaBuildEnv selects the Lambda target: PROVIDED_AL2023 on ARM_64.
var lambdaBuildEnv = []string{"CGO_ENABLED=0", "GOOS=linux", "GOARCH=arm64"}

// Builder compiles the Lambda functions during synthesis, so `cdk deploy`
// alone is enough. Each function is built once per Builder into its own
// directory holding only `bootstrap`, which becomes the function's asset.
type Builder struct {
	// ModuleDir is the Go module root (the directory holding go.mod).
	ModuleDir string
	// OutDir receives one directory per function.
	OutDir string

	mu    sync.Mutex
	built map[string]string
}

// NewBuilder finds the module root from the working directory and builds into
// outDir (default: build/cdk under the module root).
func NewBuilder(outDir string) (*Builder, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return nil, fmt.Errorf("find the Go module: go env GOMOD: %w", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return nil, fmt.Errorf("find the Go module: run the CDK app from inside the hookfan module")
	}
	root := filepath.Dir(gomod)
	if outDir == "" {
		outDir = filepath.Join(root, "build", "cdk")
	}
	return &Builder{ModuleDir: root, OutDir: outDir}, nil
}

// Build compiles ./functions/<name> and returns the directory holding its
// bootstrap binary. The build is the same whatever the configuration: one
// asset per function serves every lane, so a change to one destination
// rebuilds and redeploys nothing else.
func (b *Builder) Build(name string) (string, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if dir, ok := b.built[name]; ok {
		return dir, nil
	}
	dir := filepath.Join(b.OutDir, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("build %s: %w", name, err)
	}
	// Build next to the target and rename, so a concurrent synthesis never
	// hashes a half-written binary.
	tmp, err := os.CreateTemp(b.OutDir, name+".*.tmp")
	if err != nil {
		return "", fmt.Errorf("build %s: %w", name, err)
	}
	tmp.Close()
	defer os.Remove(tmp.Name())

	args := append([]string{"build", "-tags", lambdaTag}, lambdaBuildFlags...)
	args = append(args, "-o", tmp.Name(), "./functions/"+name)
	cmd := exec.Command("go", args...)
	cmd.Dir = b.ModuleDir
	cmd.Env = append(os.Environ(), lambdaBuildEnv...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("build function %s (go %s): %w\n%s", name, strings.Join(args, " "), err, stderr.String())
	}
	if err := os.Chmod(tmp.Name(), 0o755); err != nil {
		return "", fmt.Errorf("build %s: %w", name, err)
	}
	if err := os.Rename(tmp.Name(), filepath.Join(dir, "bootstrap")); err != nil {
		return "", fmt.Errorf("build %s: %w", name, err)
	}
	if b.built == nil {
		b.built = map[string]string{}
	}
	b.built[name] = dir
	return dir, nil
}
