//go:build integration

package integration

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sns"

	"github.com/hookfan/hookfan/infra/local/devstack"
	"github.com/hookfan/hookfan/infra/local/devstate"
	"github.com/hookfan/hookfan/shared/config"
)

// TestProvisionAnotherConfigUnsubscribesTheLastOnesLanes: make dev with
// another configuration under the same prefix leaves the earlier one's
// lanes (and its archive, now off) unsubscribed: a publish reaches only
// the lanes configured now.
func TestProvisionAnotherConfigUnsubscribesTheLastOnesLanes(t *testing.T) {
	ctx := context.Background()
	parse := func(js string) *config.Config {
		t.Helper()
		cfg, err := config.Parse([]byte(js))
		if err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	first := parse(`{"sources": [{"name": "stripe", "verify": {"kind": "stripe", "secretName": "s1"}}],
	  "destinations": [{"name": "old", "url": "http://127.0.0.1:1/x", "allowPrivateNetworks": true},
	                   {"name": "kept", "url": "http://127.0.0.1:1/y", "allowPrivateNetworks": true}],
	  "archive": {"days": 1}}`)
	second := parse(`{"sources": [{"name": "stripe", "verify": {"kind": "stripe", "secretName": "s1"}}],
	  "destinations": [{"name": "kept", "url": "http://127.0.0.1:1/y", "allowPrivateNetworks": true},
	                   {"name": "new", "url": "http://127.0.0.1:1/z", "allowPrivateNetworks": true}],
	  "archive": {"days": 0}}`)
	prefix := uniquePrefix(t)
	before, err := devstack.Provision(ctx, clients, first, nil, prefix)
	if err != nil {
		t.Fatal(err)
	}
	oldLane, _ := before.Lane("old")
	after, err := devstack.Provision(ctx, clients, second, nil, prefix)
	if err != nil {
		t.Fatal(err)
	}
	gone := slices.Sorted(slices.Values(after.Unsubscribed))
	if want := []string{devstate.ArchiveQueueName(prefix), devstate.QueueName(prefix, "old")}; !slices.Equal(gone, want) {
		t.Errorf("unsubscribed %v, want %v", gone, want)
	}
	subs, err := clients.SNS.ListSubscriptionsByTopic(ctx, &sns.ListSubscriptionsByTopicInput{TopicArn: &after.TopicARN})
	if err != nil {
		t.Fatal(err)
	}
	var queues []string
	for _, s := range subs.Subscriptions {
		e := aws.ToString(s.Endpoint)
		queues = append(queues, e[strings.LastIndex(e, ":")+1:])
	}
	slices.Sort(queues)
	if want := []string{devstate.QueueName(prefix, "kept"), devstate.QueueName(prefix, "new")}; !slices.Equal(queues, want) {
		t.Errorf("the topic's subscriptions: %v, want %v", queues, want)
	}
	if _, err := clients.SNS.Publish(ctx, &sns.PublishInput{TopicArn: &after.TopicARN, Message: aws.String(`{"x":1}`)}); err != nil {
		t.Fatal(err)
	}
	kept, _ := after.Lane("kept")
	if got := queueIDs(t, kept.QueueURL, 5*time.Second); len(got) != 1 {
		t.Errorf("kept's queue got %d messages, want the one published", len(got))
	}
	if n := depth(t, oldLane.QueueURL); n != 0 {
		t.Errorf("the removed lane's queue got %d messages, want none", n)
	}
}
