package operator

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awscfg "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	lambdasvc "github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	"github.com/aws/smithy-go/logging"

	"github.com/hookfan/hookfan/infra/local/devstate"
	"github.com/hookfan/hookfan/shared/archive"
	"github.com/hookfan/hookfan/shared/awsconfig"
	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/dedupe"
	"github.com/hookfan/hookfan/shared/pacing"
	"github.com/hookfan/hookfan/shared/pausing"
	"github.com/hookfan/hookfan/shared/payload"
	"github.com/hookfan/hookfan/shared/reconcile"
)

// Usage is the command's help.
const Usage = `usage: ops [flags] COMMAND [arguments]

Commands:
  status EVENT                 the event at every destination: its delivery record (state,
                               attempts with their history, next attempt) and whether it is in the DLQ;
                               EVENT is a Hookfan event id (evt_…), source:provider-event-id, or the
                               provider's event id alone (tried under each source; exit 1 if none has it)
  events [--since TIME]        recent events, newest first, with each destination's state (read
      [--until TIME]           from the records' time index, the window only); TIME as for replay,
      [--source S] [--type T]  --since default 1h; --state keeps events with a record in that state
      [--destination D] [--state S] [--max N] [--after CURSOR]   (FAILED, DEAD…); --after: the next page
  dlq DESTINATION [--max N]    how many messages the destination's DLQ holds, and a page of them
                               (event, source, type, last error), read without consuming them
  redrive DESTINATION          move the destination's DLQ back to its queue (SQS's move task, or
      [--copy] [--rate N]      message by message where the endpoint lacks it, or with --copy);
      [--visibility D] [--wait D]  safe to interrupt and run again
  replay --destination D       send archived events to D again, delivered even if delivered before
      (--event EVENT | --since TIME [--until TIME] [--source S] [--type T])
      [--dry-run] [--ignore-filter] [--id REPLAY-ID]
                               TIME: RFC 3339, a date, or a duration before now (2h)
  lanes                        every lane: active or paused, since when, by whom and why
  lane DESTINATION             one lane: its mode, pause rule, failure counts, probes, the pause
                               spent within its retention, its event source mapping and queues
  pause DESTINATION            pause a lane by hand (its event source mapping off; probes do not
      [--reason TEXT]          resume it) until resume, or its bound (pause.maxPause)
  resume DESTINATION           resume a paused lane (its event source mapping on)
      [--reason TEXT]
  console [--listen ADDR]      the web console: lanes, events, DLQs, replay, redrive, pause and
      [--read-only]            resume in a browser; serves on a loopback address (default
                               127.0.0.1:0, a free port), prints one URL with a one-time token,
                               opens nothing; --read-only refuses every action
  pace DESTINATION             lower a paced lane's rate for a while, without a deploy; it
      (--per-second N | --per-minute N) --for D   returns to rateLimit by itself after D
      | --clear                (at most 168h); --clear ends it now
  reconcile SOURCE             ask the source's provider what it sent since TIME (default: the
      [--since TIME] [--dry-run]   watermark less the overlap) and bring in what never reached Hookfan;
                               prints listed, present, missing, brought in or redelivered, and out of
                               the lookback; --dry-run brings nothing in; TIME as for replay

Which stack (default: the local stack of make dev):
  --stack NAME [--region R]    a deployed stack, found through its index in SSM Parameter Store
                               (/hookfan/NAME/stack, named by the stack's IndexParameter output)
  --config FILE --prefix P     the local stack's config (infra/local/dev.json) and prefix (hookfan-dev),
  --endpoint URL               on the emulator at URL (default AWS_ENDPOINT_URL, else the one
  --state-dir DIR              make dev recorded in DIR, infra/local/.state)
`

// Global flags pick the stack.
type Global struct {
	Stack, Region                       string
	ConfigFile, Prefix, Endpoint, State string
}

// Main runs the command line and returns the exit status: 0 done, 1
// failed, 2 a command line that cannot be run.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return MainWith(ctx, args, stdout, stderr, nil)
}

// ConsoleFunc serves the web console (infra/ops/console, which imports
// this package) on listen until ctx ends.
type ConsoleFunc func(ctx context.Context, op *Operator, listen string, readOnly bool, stdout io.Writer) error

// MainWith is Main with the console command served by console (the ops
// binary's main passes it; nil: the command says where it is served).
func MainWith(ctx context.Context, args []string, stdout, stderr io.Writer, console ConsoleFunc) int {
	err := run(ctx, args, stdout, stderr, console)
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		fmt.Fprint(stdout, Usage)
		return 0
	case errors.Is(err, ErrUsage):
		fmt.Fprintf(stderr, "ops: %v (ops --help lists the commands)\n", err)
		return 2
	default:
		fmt.Fprintf(stderr, "ops: %v\n", err)
		return 1
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer, console ConsoleFunc) error {
	var g Global
	fs := flag.NewFlagSet("ops", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&g.Stack, "stack", "", "a deployed stack's name")
	fs.StringVar(&g.Region, "region", "", "the deployed stack's region (default: the AWS configuration's)")
	fs.StringVar(&g.ConfigFile, "config", "infra/local/dev.json", "the local stack's config")
	fs.StringVar(&g.Prefix, "prefix", devstate.DefaultPrefix, "the local stack's resource prefix")
	fs.StringVar(&g.Endpoint, "endpoint", os.Getenv("AWS_ENDPOINT_URL"), "the local stack's emulator")
	fs.StringVar(&g.State, "state-dir", devstate.DefaultStateDir, "where make dev records its emulator")
	if err := fs.Parse(args); err != nil {
		return flagError(err)
	}
	if fs.NArg() == 0 {
		return usagef("no command")
	}
	command, rest := fs.Arg(0), fs.Args()[1:]
	build, ok := commands[command]
	if !ok {
		return usagef("unknown command %q", command)
	}
	c := build(command)
	if command == "console" {
		c = consoleCommand(console)
	}
	positional, err := parseInterleaved(c.flags, rest)
	if err != nil {
		return err
	}
	if err := c.check(positional); err != nil {
		return err
	}
	op, err := Build(ctx, g, stdout, stderr)
	if err != nil {
		return err
	}
	err = c.run(ctx, op, positional)
	if a, ok := commandAction(command, c.flags, positional, rest); ok {
		op.recordAction(ctx, a, err, stderr)
	}
	return err
}

// commandAction is the action a command line takes, for the action log
// the console shows beside its own: every command that changes the stack
// (pause, resume, pace, redrive, replay, reconcile), unless it is a dry
// run. Detail is the command line as typed.
func commandAction(command string, fs *flag.FlagSet, positional, line []string) (Action, bool) {
	if f := fs.Lookup("dry-run"); f != nil && f.Value.String() == "true" {
		return Action{}, false
	}
	a := Action{Kind: command, Detail: "ops " + command + " " + strings.Join(line, " ")}
	switch command {
	case "pause", "resume", "pace", "redrive":
		a.Destination = positional[0]
	case "replay":
		a.Destination = fs.Lookup("destination").Value.String()
	case "reconcile":
	default:
		return Action{}, false
	}
	return a, true
}

// recordAction records a command line's action under the operator's
// identity: done, or failed with its error. A log that cannot be written
// is said on stderr; the action stands.
func (op *Operator) recordAction(ctx context.Context, a Action, err error, stderr io.Writer) {
	if op.Actions == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	a.At, a.Result = op.now(), "done (from the command line)"
	if err != nil {
		a.Result, a.Failed = err.Error(), true
	}
	a.Identity = "unknown"
	if op.Identity != nil {
		id, ierr := op.Identity(ctx)
		if ierr != nil {
			fmt.Fprintf(stderr, "ops: %v; the action is recorded without it\n", ierr)
		} else {
			a.Identity = id
		}
	}
	if rerr := op.Actions.Record(ctx, a); rerr != nil {
		fmt.Fprintf(stderr, "ops: the action was done but could not be recorded in the action log: %v\n", rerr)
	}
}

// command is one command: its flags, a check of its arguments (run before
// connecting to anything), and what it runs.
type command struct {
	flags *flag.FlagSet
	check func(args []string) error
	run   func(ctx context.Context, op *Operator, args []string) error
}

// commands is the table of commands: each name, and what builds the
// command given its name. run dispatches through it, and a test ties its
// names to the ones Usage lists.
var commands = map[string]func(name string) command{
	"events":  func(string) command { return eventsCommand() },
	"console": func(string) command { return consoleCommand(nil) },
	"status": func(name string) command {
		return command{
			flags: newFlags(name),
			check: func(args []string) error {
				if len(args) != 1 {
					return usagef("%s takes one EVENT", name)
				}
				return checkEventArg(args[0])
			},
			run: func(ctx context.Context, op *Operator, args []string) error {
				_, err := op.Status(ctx, args[0])
				return err
			},
		}
	},
	"dlq": func(name string) command {
		fs := newFlags(name)
		limit := fs.Int("max", DefaultDLQPage, "messages to list")
		return command{
			flags: fs,
			check: func(args []string) error {
				if len(args) != 1 {
					return usagef("%s takes one DESTINATION", name)
				}
				if *limit < 1 {
					return usagef("--max %d: list at least 1", *limit)
				}
				return nil
			},
			run: func(ctx context.Context, op *Operator, args []string) error {
				_, err := op.DLQ(ctx, args[0], *limit)
				return err
			},
		}
	},
	"redrive": func(name string) command {
		fs := newFlags(name)
		var o RedriveOptions
		fs.BoolVar(&o.Copy, "copy", false, "copy message by message even where a move task is available")
		fs.IntVar(&o.Rate, "rate", 0, "a move task's messages per second (default: as fast as SQS moves them)")
		fs.DurationVar(&o.Visibility, "visibility", time.Minute, "how long a message being copied stays hidden")
		fs.DurationVar(&o.Wait, "wait", 5*time.Minute, "how long to wait for DLQ messages held in flight")
		return command{
			flags: fs,
			check: func(args []string) error {
				switch {
				case len(args) != 1:
					return usagef("%s takes one DESTINATION", name)
				case o.Rate < 0 || o.Rate > 500:
					return usagef("--rate %d: SQS moves 1 to 500 messages per second", o.Rate)
				case o.Visibility < time.Second || o.Visibility > 12*time.Hour:
					return usagef("--visibility %s: use 1s to 12h", o.Visibility)
				case o.Wait < 0:
					return usagef("--wait %s: use 0 or more", o.Wait)
				}
				return nil
			},
			run: func(ctx context.Context, op *Operator, args []string) error {
				_, err := op.Redrive(ctx, args[0], o)
				return err
			},
		}
	},
	"lanes": func(name string) command {
		return command{
			flags: newFlags(name),
			check: func(args []string) error {
				if len(args) != 0 {
					return usagef("%s takes no arguments", name)
				}
				return nil
			},
			run: func(ctx context.Context, op *Operator, _ []string) error {
				_, err := op.Lanes(ctx)
				return err
			},
		}
	},
	"lane": func(name string) command {
		return command{
			flags: newFlags(name),
			check: oneDestination(name),
			run: func(ctx context.Context, op *Operator, args []string) error {
				_, err := op.Lane(ctx, args[0])
				return err
			},
		}
	},
	"pause": func(name string) command {
		fs := newFlags(name)
		reason := fs.String("reason", "paused by an operator", "why, as the lane records it")
		return command{
			flags: fs,
			check: oneDestination(name),
			run: func(ctx context.Context, op *Operator, args []string) error {
				_, err := op.PauseLane(ctx, args[0], *reason)
				return err
			},
		}
	},
	"pace": func(name string) command {
		fs := newFlags(name)
		perSecond := fs.Int("per-second", 0, "the rate in force: N requests a second")
		perMinute := fs.Int("per-minute", 0, "or N requests a minute")
		forD := fs.Duration("for", 0, "how long the override lasts (at most 168h)")
		clear := fs.Bool("clear", false, "end the override in force now")
		return command{
			flags: fs,
			check: func(args []string) error {
				if err := oneDestination(name)(args); err != nil {
					return err
				}
				if *clear {
					if *perSecond != 0 || *perMinute != 0 || *forD != 0 {
						return usagef("--clear takes no rate and no --for")
					}
					return nil
				}
				switch {
				case (*perSecond != 0) == (*perMinute != 0):
					return usagef("give one of --per-second N and --per-minute N (or --clear)")
				case *perSecond < 0 || *perMinute < 0:
					return usagef("the rate must be at least 1")
				case *forD <= 0 || *forD > MaxPaceFor:
					return usagef("--for %s: give how long the override lasts, 1s to %s (it ends by itself)", *forD, MaxPaceFor)
				}
				return nil
			},
			run: func(ctx context.Context, op *Operator, args []string) error {
				if *clear {
					_, err := op.ClearPace(ctx, args[0])
					return err
				}
				in := PaceInput{N: *perSecond, Per: time.Second, For: *forD}
				if *perMinute != 0 {
					in.N, in.Per = *perMinute, time.Minute
				}
				_, err := op.PaceLane(ctx, args[0], in)
				return err
			},
		}
	},
	"resume": func(name string) command {
		fs := newFlags(name)
		reason := fs.String("reason", "resumed by an operator", "why, as the lane records it")
		return command{
			flags: fs,
			check: oneDestination(name),
			run: func(ctx context.Context, op *Operator, args []string) error {
				_, err := op.ResumeLane(ctx, args[0], *reason)
				return err
			},
		}
	},
	"reconcile": func(name string) command {
		fs := newFlags(name)
		since := fs.String("since", "", "list from this time (default: the watermark less the overlap)")
		dryRun := fs.Bool("dry-run", false, "list and compare; bring nothing in, leave the watermark")
		parse := func(now time.Time) (time.Time, error) {
			if *since == "" {
				return time.Time{}, nil
			}
			return ParseTime(*since, now)
		}
		return command{
			flags: fs,
			check: func(args []string) error {
				if len(args) != 1 {
					return usagef("%s takes one SOURCE", name)
				}
				_, err := parse(time.Now())
				return err
			},
			run: func(ctx context.Context, op *Operator, args []string) error {
				t, err := parse(op.now())
				if err != nil {
					return err
				}
				_, err = op.Reconcile(ctx, args[0], t, *dryRun)
				return err
			},
		}
	},
	"replay": func(name string) command {
		fs := newFlags(name)
		var o ReplayOptions
		var since, until string
		fs.StringVar(&o.Destination, "destination", "", "the destination to replay to (required)")
		fs.StringVar(&o.Event, "event", "", "one event: evt_… or source:provider-event-id")
		fs.StringVar(&since, "since", "", "events received from this time")
		fs.StringVar(&until, "until", "", "and before this time (default now)")
		fs.StringVar(&o.Source, "source", "", "only this source")
		fs.StringVar(&o.Type, "type", "", "only this type, or prefix (invoice.*)")
		fs.BoolVar(&o.DryRun, "dry-run", false, "print what would be replayed; send nothing")
		fs.BoolVar(&o.IgnoreFilter, "ignore-filter", false, "also send events the destination's filter does not select")
		fs.StringVar(&o.ID, "id", "", "resume an earlier replay under its id")
		times := func(now time.Time) (err error) {
			if since != "" {
				if o.Since, err = ParseTime(since, now); err != nil {
					return err
				}
			}
			if until != "" {
				if o.Until, err = ParseTime(until, now); err != nil {
					return err
				}
			}
			return nil
		}
		return command{
			flags: fs,
			check: func(args []string) error {
				if len(args) != 0 {
					return usagef("%s takes flags only; unexpected %q", name, args[0])
				}
				if o.Destination == "" {
					return usagef("%s needs --destination", name)
				}
				if err := times(time.Now()); err != nil {
					return err
				}
				return o.check()
			},
			run: func(ctx context.Context, op *Operator, args []string) error {
				if err := times(op.now()); err != nil {
					return err
				}
				_, err := op.Replay(ctx, o)
				return err
			},
		}
	},
}

// consoleCommand is the console command line; serve runs the console.
func consoleCommand(serve ConsoleFunc) command {
	fs := newFlags("console")
	listen := fs.String("listen", "127.0.0.1:0", "the loopback address to serve on (port 0: a free one)")
	readOnly := fs.Bool("read-only", false, "refuse every action: look, do not touch")
	return command{
		flags: fs,
		check: func(args []string) error {
			if len(args) != 0 {
				return usagef("console takes flags only; unexpected %q", args[0])
			}
			if serve == nil {
				return usagef("the console is served by the ops command (go run ./infra/ops console, or make console)")
			}
			return CheckLoopback(*listen)
		},
		run: func(ctx context.Context, op *Operator, _ []string) error {
			return serve(ctx, op, *listen, *readOnly, op.Out)
		},
	}
}

// CheckLoopback refuses a listen address that is not on a loopback
// address: the console is reachable from this machine only.
func CheckLoopback(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return usagef("--listen %q: want host:port on a loopback address, such as 127.0.0.1:0 (%v)", addr, err)
	}
	if host == "localhost" {
		return nil
	}
	if ip, err := netip.ParseAddr(host); err == nil && ip.IsLoopback() {
		return nil
	}
	return usagef("--listen %q: the console listens on a loopback address only (127.0.0.1, [::1] or localhost), so that nothing but this machine reaches it; to use it from another machine, forward a port over SSH (ssh -L 8080:127.0.0.1:PORT host)", addr)
}

// oneDestination checks that a command got exactly one DESTINATION.
func oneDestination(command string) func([]string) error {
	return func(args []string) error {
		if len(args) != 1 {
			return usagef("%s takes one DESTINATION", command)
		}
		return nil
	}
}

func newFlags(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return fs
}

// parseInterleaved parses flags that may come before, between or after the
// positional arguments.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, flagError(err)
		}
		if fs.NArg() == 0 {
			return positional, nil
		}
		positional = append(positional, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

func flagError(err error) error {
	if errors.Is(err, flag.ErrHelp) {
		return err
	}
	return usagef("%v", err)
}

// Build connects to the stack the global flags name: a deployed stack
// (--stack, through its SSM index, with the AWS configuration's credentials
// and region) or the local stack (its emulator and prefix).
func Build(ctx context.Context, g Global, stdout, stderr io.Writer) (*Operator, error) {
	var awsCfg aws.Config
	var sqsClient *sqs.Client
	var resolver Resolver
	var switchFor func(Lane) pausing.Switch
	var reconciler Reconciler
	var err error
	if g.Stack != "" {
		opts := []func(*awscfg.LoadOptions) error{awscfg.WithLogger(logging.Nop{})}
		if g.Region != "" {
			opts = append(opts, awscfg.WithRegion(g.Region))
		}
		if awsCfg, err = awsconfig.Load(ctx, opts...); err != nil {
			return nil, err
		}
		sqsClient = sqs.NewFromConfig(awsCfg)
		resolver = Deployed{SSM: ssm.NewFromConfig(awsCfg), Stack: g.Stack, Region: awsCfg.Region}
		functions := lambdasvc.NewFromConfig(awsCfg)
		reconciler = FunctionReconciler{SSM: ssm.NewFromConfig(awsCfg), Lambda: functions, Stack: g.Stack}
		switchFor = func(l Lane) pausing.Switch {
			return &pausing.EventSourceMapping{API: functions, FunctionName: l.FunctionName, QueueARN: l.QueueARN}
		}
	} else {
		endpoint := g.Endpoint
		if endpoint == "" {
			s, ok, err := devstate.ReadEmulatorState(g.State)
			if err != nil {
				return nil, err
			}
			if !ok {
				return nil, fmt.Errorf("no emulator recorded in %s: start the local stack (make dev), or name one with --endpoint, or a deployed stack with --stack", g.State)
			}
			endpoint = s.URL
		}
		cfg, err := config.LoadFile(g.ConfigFile)
		if err != nil {
			return nil, err
		}
		for k, v := range map[string]string{"AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test"} {
			if os.Getenv(k) == "" {
				os.Setenv(k, v) // emulators accept any credentials
			}
		}
		if awsCfg, err = awsconfig.Load(ctx, awscfg.WithBaseEndpoint(endpoint), awscfg.WithLogger(logging.Nop{})); err != nil {
			return nil, err
		}
		sqsClient = sqs.NewFromConfig(awsCfg)
		resolver = Local{SQS: sqsClient, Config: cfg, Prefix: g.Prefix, Endpoint: endpoint}
		queues := sqsClient
		switchFor = func(l Lane) pausing.Switch { return devstate.TagSwitch{SQS: queues, QueueURL: l.QueueURL} }
		r, err := LocalReconciler(ctx, awsCfg, cfg, g.Prefix)
		if err != nil {
			return nil, err
		}
		if r != nil {
			reconciler = r
		}
	}
	res, err := resolver.Resolve(ctx)
	if err != nil {
		return nil, err
	}
	ddb := dynamodb.NewFromConfig(awsCfg)
	op := &Operator{
		Resources: res, SQS: sqsClient, Records: dedupe.NewDynamoDB(ddb, res.Table),
		LaneStore: pausing.NewDynamoDB(ddb, res.Table), PaceStore: pacing.NewDynamoDB(ddb, res.Table), Switch: switchFor, Recent: RecentReader(ddb, res),
		Reconciler: reconciler, Out: stdout, Progress: stderr,
	}
	op.Metrics, op.Actions = awsconfig.NewCloudWatch(awsCfg), ActionTable{API: ddb, Table: res.Table}
	if len(res.Reconciling) > 0 {
		op.Watermarks = &reconcile.DynamoDBWatermarks{API: ddb, Table: res.Table}
	}
	identities := sts.NewFromConfig(awsCfg)
	op.Identity = func(ctx context.Context) (string, error) {
		out, err := identities.GetCallerIdentity(ctx, &sts.GetCallerIdentityInput{})
		if err != nil {
			return "", fmt.Errorf("who am I (STS GetCallerIdentity): %w", err)
		}
		return aws.ToString(out.Arn), nil
	}
	s3Client := archive.NewS3Client(awsCfg)
	if res.ArchiveBucket != "" {
		op.Archive = archive.NewReader(s3Client, res.ArchiveBucket)
	}
	if res.PayloadBucket != "" {
		op.Payloads = &payload.S3{API: s3Client, Bucket: res.PayloadBucket, Archive: res.ArchiveBucket}
	}
	return op, nil
}
