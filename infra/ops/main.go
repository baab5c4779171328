// Command ops is Hookfan's operator command: status, events, dlq,
// redrive, replay, lanes, lane, pause, resume, pace, reconcile and the web
// console, against a deployed stack (--stack NAME) or the local stack of
// make dev (the default). go run ./infra/ops --help lists the commands.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/hookfan/hookfan/infra/ops/console"
	"github.com/hookfan/hookfan/infra/ops/operator"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := operator.MainWith(ctx, os.Args[1:], os.Stdout, os.Stderr, console.Run)
	stop()
	os.Exit(code)
}
