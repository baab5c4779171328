package operator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	lambdasvc "github.com/aws/aws-sdk-go-v2/service/lambda"
	lambdatypes "github.com/aws/aws-sdk-go-v2/service/lambda/types"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
	ssmtypes "github.com/aws/aws-sdk-go-v2/service/ssm/types"

	"github.com/hookfan/hookfan/infra/local/devstate"
	"github.com/hookfan/hookfan/infra/stack/stackindex"
	"github.com/hookfan/hookfan/shared/archive"
	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/ingest"
	"github.com/hookfan/hookfan/shared/metrics"
	"github.com/hookfan/hookfan/shared/payload"
	"github.com/hookfan/hookfan/shared/reconcile"
	"github.com/hookfan/hookfan/shared/replayguard"
	"github.com/hookfan/hookfan/shared/secrets"
)

// Reconciler runs a source's reconciliation: the package itself on the
// local stack (*reconcile.Reconciler), the deployed reconcile function on
// a deployed one (FunctionReconciler).
type Reconciler interface {
	Handle(ctx context.Context, inv reconcile.Invocation) (reconcile.Report, error)
}

// DefaultReconcileSince is how far back ops reconcile lists without
// --since.
const DefaultReconcileSince = 24 * time.Hour

// Reconcile reconciles a source with its provider from since (the
// watermark less the overlap when zero) and prints what the run found:
// listed, present, missing, brought in or redelivered, out of the
// lookback. A run that stopped is printed, then returned as an error.
func (o *Operator) Reconcile(ctx context.Context, source string, since time.Time, dryRun bool) (reconcile.Report, error) {
	if o.Reconciler == nil {
		return reconcile.Report{}, fmt.Errorf("no source of %s reconciles with its provider: add a reconcile block to a stripe or github source (docs/configuration.md)", o.Resources.Where)
	}
	rep, err := o.Reconciler.Handle(ctx, reconcile.Invocation{Source: source, Since: since, DryRun: dryRun})
	if err != nil {
		return rep, err
	}
	o.printReport(rep)
	if rep.Stopped != "" {
		return rep, fmt.Errorf("reconcile %s stopped (%s); the watermark was left where it was, and the next run covers the window again", source, rep.Stopped)
	}
	return rep, nil
}

func (o *Operator) printReport(rep reconcile.Report) {
	mode := ""
	if rep.DryRun {
		mode = " (dry run: nothing brought in)"
	}
	o.printf("reconcile %s%s: %s to %s\n", rep.Source, mode, stamp(rep.Since), stamp(rep.Until))
	row := func(name string, n int, note string) {
		if note != "" {
			note = "  " + note
		}
		o.printf("  %-17s %6d%s\n", name, n, note)
	}
	row("listed", rep.Listed, "at the provider, in the window")
	row("present", rep.Present, "Hookfan has them")
	row("missing", rep.Missing, "")
	switch {
	case rep.Kind == "github":
		row("redelivered", rep.Redelivered, "asked of GitHub; they come back through ingest")
	default:
		row("brought in", rep.BroughtIn, "published, marked reconciled")
	}
	row("out of retention", rep.OutOfRetention, "missing but older than the lookback: not brought in")
	if rep.Unwanted > 0 {
		row("unwanted", rep.Unwanted, "no destination takes them")
	}
	if rep.Skipped > 0 {
		row("skipped", rep.Skipped, "see the reasons")
	}
	if len(rep.Reasons) > 0 {
		o.printf("  reasons:\n")
		for _, r := range rep.Reasons {
			o.printf("    %s\n", r)
		}
	}
	switch {
	case !rep.Watermark.IsZero():
		o.printf("  watermark: %s\n", stamp(rep.Watermark))
	case rep.Stopped != "":
		o.printf("  stopped: %s; the watermark did not move\n", rep.Stopped)
	}
}

// InvokeAPI is what FunctionReconciler asks Lambda.
type InvokeAPI interface {
	Invoke(ctx context.Context, in *lambdasvc.InvokeInput, optFns ...func(*lambdasvc.Options)) (*lambdasvc.InvokeOutput, error)
}

// FunctionReconciler invokes a deployed stack's reconcile function of the
// source, named by its index parameter (stackindex.ReconcileParameter),
// and reads the report it answers.
type FunctionReconciler struct {
	SSM    ParameterAPI
	Lambda InvokeAPI
	Stack  string
}

// Handle invokes the source's reconcile function.
func (f FunctionReconciler) Handle(ctx context.Context, inv reconcile.Invocation) (reconcile.Report, error) {
	name := stackindex.ReconcileParameter(f.Stack, inv.Source)
	out, err := f.SSM.GetParameter(ctx, &ssm.GetParameterInput{Name: &name})
	var missing *ssmtypes.ParameterNotFound
	if errors.As(err, &missing) {
		return reconcile.Report{}, fmt.Errorf("source %q of stack %s does not reconcile (no parameter %s): give it a reconcile block and deploy", inv.Source, f.Stack, name)
	}
	if err != nil {
		return reconcile.Report{}, fmt.Errorf("read %s: %w", name, err)
	}
	var r stackindex.Reconciler
	if err := json.Unmarshal([]byte(aws.ToString(out.Parameter.Value)), &r); err != nil || r.FunctionName == "" {
		return reconcile.Report{}, fmt.Errorf("parameter %s is not a reconcile function's index (%v)", name, err)
	}
	payload, err := json.Marshal(inv)
	if err != nil {
		return reconcile.Report{}, err
	}
	res, err := f.Lambda.Invoke(ctx, &lambdasvc.InvokeInput{FunctionName: &r.FunctionName, Payload: payload, InvocationType: lambdatypes.InvocationTypeRequestResponse})
	if err != nil {
		return reconcile.Report{}, fmt.Errorf("invoke %s: %w", r.FunctionName, err)
	}
	if res.FunctionError != nil {
		return reconcile.Report{}, fmt.Errorf("%s failed (%s): %s", r.FunctionName, aws.ToString(res.FunctionError), strings.TrimSpace(string(res.Payload)))
	}
	var rep reconcile.Report
	if err := json.Unmarshal(res.Payload, &rep); err != nil {
		return rep, fmt.Errorf("%s answered %q, not a report: %w", r.FunctionName, truncateText(string(res.Payload), 200), err)
	}
	return rep, nil
}

func truncateText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// TopicLister finds the local stack's topics by name.
type TopicLister interface {
	ListTopics(ctx context.Context, in *sns.ListTopicsInput, optFns ...func(*sns.Options)) (*sns.ListTopicsOutput, error)
}

// topicARN finds the topic called name on the emulator.
func topicARN(ctx context.Context, api TopicLister, name string) (string, error) {
	in := &sns.ListTopicsInput{}
	for {
		out, err := api.ListTopics(ctx, in)
		if err != nil {
			return "", fmt.Errorf("list topics: %w", err)
		}
		for _, t := range out.Topics {
			if arn := aws.ToString(t.TopicArn); strings.HasSuffix(arn, ":"+name) {
				return arn, nil
			}
		}
		if out.NextToken == nil {
			return "", fmt.Errorf("no topic %s on the emulator: has the local stack (make dev) run there with this config?", name)
		}
		in.NextToken = out.NextToken
	}
}

// LocalReconciler builds the local stack's reconciliation as make dev
// runs it: the config's reconciled sources, ingest's publish path on the
// emulator's topics, the record table. nil when no source reconciles.
func LocalReconciler(ctx context.Context, awsCfg aws.Config, cfg *config.Config, prefix string) (*reconcile.Reconciler, error) {
	if len(cfg.Reconciled()) == 0 {
		return nil, nil
	}
	snsClient := sns.NewFromConfig(awsCfg)
	topic, err := topicARN(ctx, snsClient, devstate.TopicName(prefix))
	if err != nil {
		return nil, err
	}
	res := ingest.Resources{TopicARN: topic, ReplayTable: devstate.TableName(prefix)}
	if cfg.AnyOrdered() {
		if res.OrderedTopicARN, err = topicARN(ctx, snsClient, devstate.OrderedTopicName(prefix)); err != nil {
			return nil, err
		}
	}
	ddb := dynamodb.NewFromConfig(awsCfg)
	cache := secrets.NewCache(secretsmanager.NewFromConfig(awsCfg))
	c := ingest.Clients{Publisher: snsClient, Secrets: cache, Metrics: metrics.NewEMF(io.Discard), Logger: slog.New(slog.DiscardHandler),
		Replay: replayguard.NewDynamoDB(ddb, devstate.TableName(prefix))}
	if cfg.LargePayloads() {
		res.PayloadBucket = devstate.PayloadBucketName(prefix)
		if cfg.Archive.Enabled() {
			res.ArchiveBucket = devstate.ArchiveBucketName(prefix)
		}
		c.Payloads = &payload.S3{API: archive.NewS3Client(awsCfg), Bucket: res.PayloadBucket, Archive: res.ArchiveBucket}
	}
	h, err := ingest.Assemble(ingest.FunctionEnv(cfg, res), c)
	if err != nil {
		return nil, err
	}
	table := devstate.TableName(prefix)
	return reconcile.Assemble(cfg, reconcile.Clients{
		Secrets: cache, Records: &reconcile.DynamoDBRecords{API: ddb, Table: table}, Publisher: h,
		Watermarks: &reconcile.DynamoDBWatermarks{API: ddb, Table: table},
	})
}
