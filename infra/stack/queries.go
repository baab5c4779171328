package stack

import (
	"errors"
	"fmt"

	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
)

// MaxQueryLogGroups is how many log groups one Logs Insights query reads:
// a page's lanes and the ingest log group fit (LanesPerDashboard + 1).
const MaxQueryLogGroups = 50

// EventIDPlaceholder is what an operator replaces with an event id (or a
// provider's event id) in the event-trail query.
const EventIDPlaceholder = "REPLACE_WITH_EVENT_ID"

// QueryFolder is the Logs Insights console folder of a stack's queries.
func QueryFolder(stackName string) string { return "Hookfan/" + stackName }

// Logs Insights queries over the functions' JSON log lines (the fields the
// ingest and deliver functions write; docs/operations.md#logs).
const (
	eventTrailQuery = `fields @timestamp, @log, source, type, outcome, status, code, destination, attempt, latency_ms, retry_in_s, error, provider_event_id, message_id
| filter id = "` + EventIDPlaceholder + `" or provider_event_id = "` + EventIDPlaceholder + `"
| sort @timestamp asc
| limit 1000`
	failuresQuery = `filter ispresent(destination) and outcome in ["failed", "dead", "gone", "not_attempted", "malformed"]
| stats count(*) as failures by destination, status, outcome
| sort failures desc
| limit 1000`
	unauthorizedQuery = `filter status = 401
| stats count(*) as rejected by source, code
| sort rejected desc
| limit 1000`
)

// InsightsQueriesProps configures one page of saved queries. Nil fields get
// defaults.
type InsightsQueriesProps struct {
	// Folder is the queries' folder in the Logs Insights console (required).
	Folder string
	// IngestLogGroup names the ingest function's log group (required).
	IngestLogGroup *string
	// Lanes are the destinations whose deliver logs this page's queries
	// read, at most MaxQueryLogGroups-1.
	Lanes []LaneNames
	// Range names the lanes in the queries' names when the stack has more
	// than one page, such as " (destinations 41-80)"; "": none.
	Range string
	// Unauthorized also saves the 401s query (once per stack).
	Unauthorized bool
}

// InsightsQueries are CloudWatch Logs Insights query definitions saved with
// the stack: one event's trail from ingest to every destination, failures
// by destination and status, and (once) 401s by source and code.
type InsightsQueries struct {
	constructs.Construct
	EventTrail awslogs.CfnQueryDefinition
	// Failures is nil for a page without lanes.
	Failures awslogs.CfnQueryDefinition
	// Unauthorized is nil unless asked for.
	Unauthorized awslogs.CfnQueryDefinition
}

// NewInsightsQueries saves one page of queries.
func NewInsightsQueries(scope constructs.Construct, id string, props *InsightsQueriesProps) (*InsightsQueries, error) {
	if props == nil || props.Folder == "" || props.IngestLogGroup == nil {
		return nil, errors.New("insights queries: Folder and IngestLogGroup are required")
	}
	if len(props.Lanes) > MaxQueryLogGroups-1 {
		return nil, fmt.Errorf("insights queries: %d lanes and the ingest log group are more than the %d log groups a query reads", len(props.Lanes), MaxQueryLogGroups)
	}
	q := &InsightsQueries{Construct: constructs.NewConstruct(scope, jsii.String(id))}
	// The L1 resource takes the query as written (the L2 QueryString
	// builds one from parts).
	define := func(id, name, query string, groups []*string) awslogs.CfnQueryDefinition {
		names := make([]any, len(groups))
		for i, g := range groups {
			names[i] = g
		}
		return awslogs.NewCfnQueryDefinition(q.Construct, jsii.String(id), &awslogs.CfnQueryDefinitionProps{
			Name:          jsii.String(props.Folder + "/" + name),
			QueryString:   jsii.String(query),
			LogGroupNames: &names,
		})
	}
	deliver := make([]*string, len(props.Lanes))
	for i, l := range props.Lanes {
		deliver[i] = l.LogGroup
	}
	q.EventTrail = define("EventTrail", "event trail"+props.Range, eventTrailQuery, append([]*string{props.IngestLogGroup}, deliver...))
	if len(deliver) > 0 {
		q.Failures = define("Failures", "delivery failures by destination and status"+props.Range, failuresQuery, deliver)
	}
	if props.Unauthorized {
		q.Unauthorized = define("Unauthorized", "401s by source and code", unauthorizedQuery, []*string{props.IngestLogGroup})
	}
	return q, nil
}

// pageRange names the destinations from (0-based) to to (exclusive) of
// total, when total spans more than one page.
func pageRange(from, to, total int) string {
	if total <= LanesPerDashboard {
		return ""
	}
	return fmt.Sprintf(" (destinations %d-%d)", from+1, to)
}
