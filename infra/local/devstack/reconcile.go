package devstack

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/hookfan/hookfan/shared/reconcile"
)

// newReconciler builds the reconciliation of the sources that have a
// reconcile block, as the deployed reconcile function does: the same
// package, ingest's publish path, the record table for the records and
// the watermarks; nil when no source has the block.
func (s *Stack) newReconciler() (*reconcile.Reconciler, error) {
	if len(s.opts.Config.Reconciled()) == 0 {
		return nil, nil
	}
	sink, err := s.newSink()
	if err != nil {
		return nil, err
	}
	ddb, table := s.opts.Clients.DynamoDB, s.Topology.TableName
	return reconcile.Assemble(s.opts.Config, reconcile.Clients{
		HTTP:       reconcile.NewHTTPClient(reconcile.DefaultHTTPTimeout),
		Secrets:    s.newSecretCache(),
		Records:    &reconcile.DynamoDBRecords{API: ddb, Table: table},
		Publisher:  s.Ingest,
		Watermarks: &reconcile.DynamoDBWatermarks{API: ddb, Table: table},
		Metrics:    sink,
		Logger:     s.opts.Log.With("function", "reconcile"),
		Now:        s.opts.ReconcileNow,
	})
}

// reconcileSchedule runs one source's reconciliation every its every, as
// the deployed schedule does, until ctx is done.
type reconcileSchedule struct {
	r      *reconcile.Reconciler
	source string
	every  time.Duration
	log    *slog.Logger
}

func (rs reconcileSchedule) run(ctx context.Context) {
	tick := time.NewTicker(rs.every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			// The run logs its report; a stop is logged there too.
			if _, err := rs.r.Run(ctx, rs.source, reconcile.Options{}); err != nil && !errors.Is(err, reconcile.ErrStopped) {
				rs.log.Error("reconcile", slog.String("source", rs.source), slog.String("error", err.Error()))
			}
		}
	}
}
