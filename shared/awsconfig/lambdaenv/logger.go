package lambdaenv

import (
	"io"
	"log/slog"
	"os"

	"github.com/aws/aws-lambda-go/lambdacontext"
)

// EnvLogFormat is the function's log format; the stack deploys the
// functions with JSON.
const EnvLogFormat = "AWS_LAMBDA_LOG_FORMAT"

// Logger is the logger of every Hookfan process — the functions, the
// local stack running them, the local subscriber — writing JSON lines to
// standard output. Inside Lambda with the JSON log format it is the
// runtime's handler, which adds the request id and honours the function's
// application log level; elsewhere JSONLogger, with the same keys.
func Logger() *slog.Logger {
	if os.Getenv(EnvLogFormat) == "JSON" {
		return lambdacontext.NewLogger()
	}
	return JSONLogger(os.Stdout)
}

// JSONLogger logs JSON lines to w under the keys of Lambda's JSON log
// format (timestamp, level, message), so a line reads the same deployed
// and locally.
func JSONLogger(w io.Writer) *slog.Logger {
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{ReplaceAttr: lambdacontext.ReplaceAttr}))
}
