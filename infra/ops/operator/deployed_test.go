package operator

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
	ssmtypes "github.com/aws/aws-sdk-go-v2/service/ssm/types"
	"github.com/google/go-cmp/cmp"

	"github.com/hookfan/hookfan/infra/stack/stackindex"
	"github.com/hookfan/hookfan/shared/config"
)

// fakeSSM holds parameters by name and pages GetParametersByPath by two.
type fakeSSM map[string]string

func (f fakeSSM) GetParameter(_ context.Context, in *ssm.GetParameterInput, _ ...func(*ssm.Options)) (*ssm.GetParameterOutput, error) {
	v, ok := f[*in.Name]
	if !ok {
		return nil, &ssmtypes.ParameterNotFound{}
	}
	return &ssm.GetParameterOutput{Parameter: &ssmtypes.Parameter{Name: in.Name, Value: aws.String(v)}}, nil
}

func (f fakeSSM) GetParametersByPath(_ context.Context, in *ssm.GetParametersByPathInput, _ ...func(*ssm.Options)) (*ssm.GetParametersByPathOutput, error) {
	var names []string
	for n := range f {
		if rest, ok := strings.CutPrefix(n, *in.Path); ok && !strings.Contains(rest, "/") {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	start := 0
	if in.NextToken != nil {
		start, _ = strconv.Atoi(*in.NextToken)
	}
	out := &ssm.GetParametersByPathOutput{}
	for _, n := range names[start:min(start+2, len(names))] {
		out.Parameters = append(out.Parameters, ssmtypes.Parameter{Name: aws.String(n), Value: aws.String(f[n])})
	}
	if start+2 < len(names) {
		out.NextToken = aws.String(strconv.Itoa(start + 2))
	}
	return out, nil
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestDeployedResolve(t *testing.T) {
	f := fakeSSM{
		stackindex.StackParameter("Prod"): jsonOf(t, stackindex.Stack{TableName: "records", ArchiveBucket: "archive", ArchiveDays: 30, DestinationsPath: stackindex.DestinationsPath("Prod")}),
		// Another stack's lanes are not Prod's.
		stackindex.LaneParameter("Prod-2", "x"): jsonOf(t, stackindex.Lane{Destination: "x", QueueURL: "q", DLQURL: "d"}),
		// Its reconciling sources, and another stack's.
		stackindex.ReconcileParameter("Prod", "stripe"):  "{}",
		stackindex.ReconcileParameter("Prod", "github"):  "{}",
		stackindex.ReconcileParameter("Prod", "shopify"): "{}",
		stackindex.ReconcileParameter("Prod-2", "other"): "{}",
	}
	for _, d := range []string{"orders", "billing", "audit"} {
		f[stackindex.LaneParameter("Prod", d)] = jsonOf(t, stackindex.Lane{Destination: d, QueueURL: "https://sqs/" + d, QueueARN: "arn:" + d,
			DLQURL: "https://sqs/" + d + "-dlq", DLQARN: "arn:" + d + "-dlq", Filter: config.Filter{Sources: []string{"stripe"}}})
	}
	res, err := Deployed{SSM: f, Stack: "Prod", Region: "eu-west-1"}.Resolve(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, l := range res.Lanes {
		names = append(names, l.Destination)
	}
	got := []any{res.Where, res.Table, res.ArchiveBucket, res.ArchiveDays, names, res.Lanes[2].DLQARN, res.Lanes[2].Filter.Sources, res.Sources, res.Reconciling}
	want := []any{"stack Prod in eu-west-1", "records", "archive", 30, []string{"audit", "billing", "orders"}, "arn:orders-dlq", []string{"stripe"}, []string{"stripe"},
		[]string{"github", "shopify", "stripe"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("resources (-want +got):\n%s", diff)
	}

	for name, tt := range map[string]struct {
		ssm  fakeSSM
		want string
	}{
		"no such stack": {fakeSSM{}, `no Hookfan stack "Prod" in eu-west-1: its index parameter /hookfan/Prod/stack does not exist`},
		"not an index":  {fakeSSM{"/hookfan/Prod/stack": "hello"}, "parameter /hookfan/Prod/stack is not a Hookfan stack index"},
		"a bad lane": {fakeSSM{"/hookfan/Prod/stack": `{"tableName":"t"}`, "/hookfan/Prod/destinations/a": `{"destination":"a"}`},
			"parameter /hookfan/Prod/destinations/a is not a Hookfan lane index"},
	} {
		if _, err := (Deployed{SSM: tt.ssm, Stack: "Prod", Region: "eu-west-1"}).Resolve(context.Background()); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: got %v, want %q", name, err, tt.want)
		}
	}
}

// TestDeployedResolveFilterParameter: a lane whose filter is too long to
// share its parameter with the lane's names keeps it in a parameter of its
// own (filterParameter), which the operator reads; one it cannot read fails
// the command rather than replay everything to the lane.
func TestDeployedResolveFilterParameter(t *testing.T) {
	filter := config.Filter{Sources: []string{"stripe"}, Types: []string{"customer.subscription.created", "invoice.*"}}
	f := fakeSSM{
		stackindex.StackParameter("Prod"):           jsonOf(t, stackindex.Stack{TableName: "records", DestinationsPath: stackindex.DestinationsPath("Prod")}),
		stackindex.LaneParameter("Prod", "billing"): `{"destination":"billing","queueUrl":"q","dlqUrl":"d","filter":null,"filterParameter":"/hookfan/Prod/filters/billing"}`,
		"/hookfan/Prod/filters/billing":             jsonOf(t, filter),
	}
	res, err := Deployed{SSM: f, Stack: "Prod", Region: "eu-west-1"}.Resolve(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(filter, res.Lanes[0].Filter); diff != "" {
		t.Errorf("filter (-want +got):\n%s", diff)
	}

	delete(f, "/hookfan/Prod/filters/billing")
	_, err = Deployed{SSM: f, Stack: "Prod", Region: "eu-west-1"}.Resolve(context.Background())
	if want := "/hookfan/Prod/filters/billing"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("filter parameter missing: got %v, want an error naming %s", err, want)
	}
}
