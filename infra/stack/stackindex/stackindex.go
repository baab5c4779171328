// Package stackindex is the layout of a deployed stack's index in SSM
// Parameter Store, shared by the CDK code that writes it (infra/stack) and
// the operator command that reads it (infra/ops), without the CDK:
//
//	/hookfan/<stack>/stack                  Stack: the API, topic, table, dashboards, archive
//	/hookfan/<stack>/destinations/<name>    Lane: one destination's queue, DLQ, function, secret
//
// Each parameter is a String holding the JSON of its type.
package stackindex

import (
	"reflect"
	"strings"
	"time"

	"github.com/hookfan/hookfan/shared/config"
)

// Prefix is the path under which a stack's parameters live.
func Prefix(stackName string) string { return "/hookfan/" + stackName + "/" }

// StackParameter names the stack's own parameter.
func StackParameter(stackName string) string { return Prefix(stackName) + "stack" }

// DestinationsPath is the path of the lanes' parameters.
func DestinationsPath(stackName string) string { return Prefix(stackName) + "destinations/" }

// LaneParameter names a destination lane's parameter.
func LaneParameter(stackName, destination string) string {
	return DestinationsPath(stackName) + destination
}

// FilterParameter names the parameter holding a destination's filter, when
// it is too long to share the lane's parameter with the lane's names (the
// lane's FilterParameter says so).
func FilterParameter(stackName, destination string) string {
	return Prefix(stackName) + "filters/" + destination
}

// Stack is the stack parameter's value.
type Stack struct {
	APIURL           string   `json:"apiUrl"`
	APIType          string   `json:"apiType"`
	TopicARN         string   `json:"topicArn"`
	TableName        string   `json:"tableName"`
	Dashboards       []string `json:"dashboards"`
	DestinationsPath string   `json:"destinationsPath"`
	// ArchiveBucket is "" and ArchiveDays 0 when the archive is off.
	ArchiveBucket string `json:"archiveBucket"`
	ArchiveDays   int    `json:"archiveDays"`
	// PayloadBucket holds the bodies larger than one SNS message, kept
	// PayloadDays; "" and 0 when no source takes them. The operator writes
	// a body there again before its message goes back to a queue.
	PayloadBucket string `json:"payloadBucket"`
	PayloadDays   int    `json:"payloadDays"`
	// OperatorRole is the role that may send to the lanes' queues (redrive,
	// replay): the operator command is run under it.
	OperatorRole string `json:"operatorRoleArn"`
	// EgressAddresses are the public addresses the lanes with egress
	// "static" deliver from (or, with allocation ids brought by the
	// configuration, those ids); empty without static addresses.
	EgressAddresses []string `json:"egressAddresses"`
	// TimeIndex is false when the record table has no time index
	// (dedupe.timeIndex false): the operator then scans the table for
	// events. Absent (nil) in an index written before the switch, when
	// the table had it: Indexed.
	TimeIndex *bool `json:"timeIndex"`
}

// Indexed reports whether the stack's record table has its time index.
func (s Stack) Indexed() bool { return s.TimeIndex == nil || *s.TimeIndex }

// Lane is a destination lane's parameter value.
type Lane struct {
	Destination string `json:"destination"`
	// URL is the destination's scheme and host (https://host[:port]),
	// never its path or query; "" when URLSecretName holds the URL.
	URL                string `json:"url"`
	URLSecretName      string `json:"urlSecretName"`
	QueueURL           string `json:"queueUrl"`
	QueueARN           string `json:"queueArn"`
	DLQURL             string `json:"dlqUrl"`
	DLQARN             string `json:"dlqArn"`
	SubscriptionDLQURL string `json:"subscriptionDlqUrl"`
	SubscriptionDLQARN string `json:"subscriptionDlqArn"`
	FunctionName       string `json:"functionName"`
	FunctionARN        string `json:"functionArn"`
	// RoleARN is the deliver function's role: the principal a receiver
	// grants for auth.sigv4.
	RoleARN   string `json:"roleArn"`
	LogGroup  string `json:"logGroup"`
	SecretID  string `json:"secretId"`
	SecretARN string `json:"secretArn"`
	// Type is the destination's type (https, sqs, eventbridge, lambda)
	// and Target an AWS target's ARN ("" for https).
	Type   string `json:"type"`
	Target string `json:"target"`
	// Filter is the destination's filter as configured, unless
	// FilterParameter names the parameter holding it (a long filter, the
	// JSON of a config.Filter): then Filter is null.
	Filter          config.Filter `json:"filter"`
	FilterParameter string        `json:"filterParameter"`
	// Pause is the lane's pause rule in force, and RetentionSeconds its
	// queue's retention, over which the rule's bound is counted (the
	// operator command pauses and resumes by them).
	Pause            LanePause `json:"pause"`
	RetentionSeconds int       `json:"retentionSeconds"`
	// Egress is "static" when the lane delivers from the stack's
	// EgressAddresses, "public" otherwise.
	Egress string `json:"egress"`
	// OrderingKey is an ordered lane's ordering.key ("" on a standard
	// lane): replays to its FIFO queue are grouped by it.
	OrderingKey string `json:"orderingKey,omitempty"`
	// RateLimit is the lane's rateLimit as configured; an empty object
	// (no rate), or absent in an index written before pacing, when the
	// lane is not paced (ops lanes shows it beside the rate in force).
	RateLimit *config.RateLimit `json:"rateLimit"`
}

// LanePause is a lane's pause rule with its defaults applied; Enabled is
// false, and the rest zero, when the destination does not pause.
type LanePause struct {
	Enabled           bool    `json:"enabled"`
	AfterFailures     int     `json:"afterFailures"`
	FailureRate       float64 `json:"failureRate"`
	WindowSeconds     int     `json:"windowSeconds"`
	MinAttempts       int     `json:"minAttempts"`
	ProbeEverySeconds int     `json:"probeEverySeconds"`
	MaxPauseSeconds   int     `json:"maxPauseSeconds"`
}

// PauseOf is d's pause rule as the index holds it.
func PauseOf(d config.Destination) LanePause {
	r, ok := d.PauseRule()
	if !ok {
		return LanePause{}
	}
	return LanePause{Enabled: true, AfterFailures: r.AfterFailures, FailureRate: r.FailureRate, WindowSeconds: int(r.Window.Seconds()),
		MinAttempts: r.MinAttempts, ProbeEverySeconds: int(r.ProbeEvery.Seconds()), MaxPauseSeconds: int(r.MaxPause.Seconds())}
}

// Rule is the pause rule back; false when the lane does not pause.
func (p LanePause) Rule() (config.PauseRule, bool) {
	if !p.Enabled {
		return config.PauseRule{}, false
	}
	s := func(n int) time.Duration { return time.Duration(n) * time.Second }
	return config.PauseRule{AfterFailures: p.AfterFailures, FailureRate: p.FailureRate, Window: s(p.WindowSeconds),
		MinAttempts: p.MinAttempts, ProbeEvery: s(p.ProbeEverySeconds), MaxPause: s(p.MaxPauseSeconds)}, true
}

// Fields lists the JSON keys of v's struct type, in field order.
func Fields(v any) []string {
	t := reflect.TypeOf(v)
	keys := make([]string, 0, t.NumField())
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		keys = append(keys, name)
	}
	return keys
}

// ReconcilePath is the path of the reconcile functions' parameters.
func ReconcilePath(stackName string) string { return Prefix(stackName) + "reconcile/" }

// ReconcileParameter names the parameter of a source's reconcile
// function: /hookfan/<stack>/reconcile/<source>, holding a Reconciler.
func ReconcileParameter(stackName, source string) string {
	return ReconcilePath(stackName) + source
}

// Reconciler is a reconcile function's parameter value: the function
// ops reconcile invokes with a reconcile.Invocation (it answers a
// reconcile.Report).
type Reconciler struct {
	Source       string `json:"source"`
	FunctionName string `json:"functionName"`
	// LogGroup is the function's log group (its run lines), EverySeconds
	// its schedule's period; absent in a parameter written before them.
	LogGroup     string `json:"logGroup,omitempty"`
	EverySeconds int    `json:"everySeconds,omitempty"`
}
