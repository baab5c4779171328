package operator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
	ssmtypes "github.com/aws/aws-sdk-go-v2/service/ssm/types"

	"github.com/hookfan/hookfan/infra/stack/stackindex"
	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/pausing"
)

// ParameterAPI is what the deployed resolver asks SSM.
type ParameterAPI interface {
	GetParameter(ctx context.Context, in *ssm.GetParameterInput, optFns ...func(*ssm.Options)) (*ssm.GetParameterOutput, error)
	GetParametersByPath(ctx context.Context, in *ssm.GetParametersByPathInput, optFns ...func(*ssm.Options)) (*ssm.GetParametersByPathOutput, error)
}

// Deployed resolves a deployed stack's resources from its index in SSM
// Parameter Store (infra/stack/stackindex; the stack's IndexParameter
// output names it): the stack's parameter for the table and the archive,
// one parameter per destination for its queues and filter (a long filter
// in a parameter of its own, which the lane's names).
type Deployed struct {
	SSM    ParameterAPI
	Stack  string
	Region string // for messages
}

// Resolve reads the stack's index.
func (r Deployed) Resolve(ctx context.Context) (Resources, error) {
	res := Resources{Where: fmt.Sprintf("stack %s in %s", r.Stack, r.Region)}
	name := stackindex.StackParameter(r.Stack)
	out, err := r.SSM.GetParameter(ctx, &ssm.GetParameterInput{Name: &name})
	var missing *ssmtypes.ParameterNotFound
	if errors.As(err, &missing) {
		return res, fmt.Errorf("no Hookfan stack %q in %s: its index parameter %s does not exist (check --stack and --region; the stack's IndexParameter output names it)", r.Stack, r.Region, name)
	}
	if err != nil {
		return res, fmt.Errorf("read %s: %w", name, err)
	}
	var st stackindex.Stack
	if err := json.Unmarshal([]byte(aws.ToString(out.Parameter.Value)), &st); err != nil || st.TableName == "" {
		return res, fmt.Errorf("parameter %s is not a Hookfan stack index (%v); was it written by this version's stack?", name, err)
	}
	res.Table, res.ArchiveBucket, res.ArchiveDays = st.TableName, st.ArchiveBucket, st.ArchiveDays
	res.PayloadBucket, res.PayloadDays = st.PayloadBucket, st.PayloadDays
	res.EgressAddresses = st.EgressAddresses
	res.Unindexed = !st.Indexed()
	path := st.DestinationsPath
	if path == "" {
		path = stackindex.DestinationsPath(r.Stack)
	}
	in := &ssm.GetParametersByPathInput{Path: &path}
	for {
		page, err := r.SSM.GetParametersByPath(ctx, in)
		if err != nil {
			return res, fmt.Errorf("read the lanes under %s: %w", path, err)
		}
		for _, p := range page.Parameters {
			var l stackindex.Lane
			if err := json.Unmarshal([]byte(aws.ToString(p.Value)), &l); err != nil || l.Destination == "" || l.QueueURL == "" || l.DLQURL == "" {
				return res, fmt.Errorf("parameter %s is not a Hookfan lane index (%v)", aws.ToString(p.Name), err)
			}
			if l.FilterParameter != "" {
				if l.Filter, err = r.filter(ctx, l.FilterParameter); err != nil {
					return res, fmt.Errorf("lane %s: %w", l.Destination, err)
				}
			}
			ln := Lane{Destination: l.Destination, Filter: l.Filter, OrderingKey: l.OrderingKey, QueueURL: l.QueueURL, QueueARN: l.QueueARN, DLQURL: l.DLQURL, DLQARN: l.DLQARN,
				FunctionName: l.FunctionName, Retention: time.Duration(l.RetentionSeconds) * time.Second, Egress: l.Egress,
				Target: target(l.URL, l.Target, l.URLSecretName)}
			if rule, pauses := l.Pause.Rule(); pauses {
				ln.Pause = &pausing.Rule{PauseRule: rule, Retention: ln.Retention}
			}
			if pace, paced := (config.Destination{RateLimit: l.RateLimit}).Pace(); paced && pace.N > 0 {
				ln.Pace = &pace
			}
			res.Lanes = append(res.Lanes, ln)
		}
		if page.NextToken == nil {
			break
		}
		in.NextToken = page.NextToken
	}
	slices.SortFunc(res.Lanes, func(a, b Lane) int { return strings.Compare(a.Destination, b.Destination) })
	// The reconciling sources: one parameter each, named by the source.
	rin := &ssm.GetParametersByPathInput{Path: aws.String(stackindex.ReconcilePath(r.Stack))}
	for {
		page, err := r.SSM.GetParametersByPath(ctx, rin)
		if err != nil {
			return res, fmt.Errorf("read the reconciling sources under %s: %w", aws.ToString(rin.Path), err)
		}
		for _, p := range page.Parameters {
			res.Reconciling = append(res.Reconciling, strings.TrimPrefix(aws.ToString(p.Name), aws.ToString(rin.Path)))
		}
		if page.NextToken == nil {
			break
		}
		rin.NextToken = page.NextToken
	}
	slices.Sort(res.Reconciling)
	for _, l := range res.Lanes {
		res.Sources = append(res.Sources, l.Filter.Sources...)
	}
	slices.Sort(res.Sources)
	res.Sources = slices.Compact(res.Sources)
	return res, nil
}

// filter reads a lane's filter from the parameter of its own that a long
// one is written to (stackindex.FilterParameter).
func (r Deployed) filter(ctx context.Context, name string) (config.Filter, error) {
	var f config.Filter
	out, err := r.SSM.GetParameter(ctx, &ssm.GetParameterInput{Name: &name})
	if err != nil {
		return f, fmt.Errorf("read its filter from %s: %w", name, err)
	}
	if err := json.Unmarshal([]byte(aws.ToString(out.Parameter.Value)), &f); err != nil {
		return f, fmt.Errorf("parameter %s is not a Hookfan lane filter (%v)", name, err)
	}
	return f, nil
}
