package operator

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	cwtypes "github.com/aws/aws-sdk-go-v2/service/cloudwatch/types"

	"github.com/hookfan/hookfan/shared/metrics"
)

// WatermarkReader reads a reconciling source's watermark
// (reconcile.DynamoDBWatermarks).
type WatermarkReader interface {
	Load(ctx context.Context, source string) (time.Time, error)
}

// ReconcileRun is what one reconciliation run found, as its metrics say.
type ReconcileRun struct {
	At                                                  time.Time
	Listed, Missing, BroughtIn, OutOfRetention, Skipped float64
	Stopped                                             bool
}

// ReconcileView is a reconciling source: its watermark (where the last
// complete run ended) and its runs of the last ReconcileHours, newest first.
type ReconcileView struct {
	Source    string
	Watermark time.Time
	Runs      []ReconcileRun
}

// ReconcileHours is how far back the console lists reconciliation runs.
const ReconcileHours = 24

// reconcilePeriod groups a run's metrics: runs are at least 15 minutes
// apart (reconcile.every), and a run's points are written at its end.
const reconcilePeriod = 5 * time.Minute

// ReconcileViews reads each reconciling source's watermark and its runs of
// the last ReconcileHours from CloudWatch (the Reconcile metrics by
// Source, a run every reconcilePeriod at most).
func (o *Operator) ReconcileViews(ctx context.Context) ([]ReconcileView, error) {
	var out []ReconcileView
	for _, source := range o.Resources.Reconciling {
		v := ReconcileView{Source: source}
		if o.Watermarks != nil {
			w, err := o.Watermarks.Load(ctx, source)
			if err != nil {
				return out, fmt.Errorf("source %s: %w", source, err)
			}
			v.Watermark = w
		}
		if o.Metrics != nil {
			runs, err := o.reconcileRuns(ctx, source)
			if err != nil {
				return out, err
			}
			v.Runs = runs
		}
		out = append(out, v)
	}
	return out, nil
}

func (o *Operator) reconcileRuns(ctx context.Context, source string) ([]ReconcileRun, error) {
	end := o.now().UTC().Truncate(reconcilePeriod).Add(reconcilePeriod)
	start := end.Add(-ReconcileHours * time.Hour)
	dims := []cwtypes.Dimension{{Name: aws.String(metrics.DimSource), Value: aws.String(source)}}
	var queries []cwtypes.MetricDataQuery
	for _, q := range []struct{ id, name string }{{"listed", metrics.ReconcileListed}, {"missing", metrics.ReconcileMissing},
		{"brought", metrics.ReconcileBroughtIn}, {"old", metrics.ReconcileOutOfRetention}, {"skipped", metrics.ReconcileSkipped},
		{"stopped", metrics.ReconcileStopped}} {
		queries = append(queries, cwtypes.MetricDataQuery{Id: aws.String(q.id), MetricStat: &cwtypes.MetricStat{
			Metric: &cwtypes.Metric{Namespace: aws.String(metrics.Namespace), MetricName: aws.String(q.name), Dimensions: dims},
			Period: aws.Int32(int32(reconcilePeriod / time.Second)), Stat: aws.String("Sum")}})
	}
	runs := map[time.Time]*ReconcileRun{}
	in := &cloudwatch.GetMetricDataInput{StartTime: &start, EndTime: &end, MetricDataQueries: queries}
	for {
		res, err := o.Metrics.GetMetricData(ctx, in)
		if err != nil {
			return nil, fmt.Errorf("read %s's reconcile metrics from CloudWatch: %w", source, err)
		}
		for _, r := range res.MetricDataResults {
			for i, t := range r.Timestamps {
				if i >= len(r.Values) {
					break
				}
				run := runs[t]
				if run == nil {
					run = &ReconcileRun{At: t}
					runs[t] = run
				}
				v := r.Values[i]
				switch aws.ToString(r.Id) {
				case "listed":
					run.Listed += v
				case "missing":
					run.Missing += v
				case "brought":
					run.BroughtIn += v
				case "old":
					run.OutOfRetention += v
				case "skipped":
					run.Skipped += v
				case "stopped":
					run.Stopped = run.Stopped || v > 0
				}
			}
		}
		if res.NextToken == nil {
			break
		}
		in.NextToken = res.NextToken
	}
	out := make([]ReconcileRun, 0, len(runs))
	for _, r := range runs {
		out = append(out, *r)
	}
	slices.SortFunc(out, func(a, b ReconcileRun) int { return b.At.Compare(a.At) })
	return out, nil
}
