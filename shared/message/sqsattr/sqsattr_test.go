package sqsattr_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/google/go-cmp/cmp"

	"github.com/hookfan/hookfan/shared/message"
	"github.com/hookfan/hookfan/shared/message/sqsattr"
)

// TestRoundTrip: every fixture's attributes, with extra ones of each data
// type, survive both of SQS's shapes, and decode the same from each.
func TestRoundTrip(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "testdata", "messages", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("fixtures: %v, %v", files, err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".json"), func(t *testing.T) {
			b, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			var f struct {
				Message           string
				MessageAttributes message.Attributes
			}
			if err := json.Unmarshal(b, &f); err != nil {
				t.Fatal(err)
			}
			attrs := f.MessageAttributes
			attrs["n"] = message.Attribute{Type: "Number", Value: "42"}
			attrs["bin"] = message.Attribute{Type: "Binary", Value: "AP8="}
			want, err := message.Decode(f.Message, attrs)
			if err != nil {
				t.Fatal(err)
			}

			sdk, err := sqsattr.ToSQS(attrs)
			if err != nil {
				t.Fatal(err)
			}
			if got := sdk["bin"].BinaryValue; string(got) != "\x00\xff" || sdk["bin"].StringValue != nil {
				t.Errorf("binary attribute sent as %q / %v", got, sdk["bin"].StringValue)
			}
			if diff := cmp.Diff(attrs, sqsattr.FromSQS(sdk)); diff != "" {
				t.Errorf("through the SDK's shape (-want +got):\n%s", diff)
			}
			lambda := sqsattr.ToLambda(attrs)
			if diff := cmp.Diff(attrs, sqsattr.FromLambda(lambda)); diff != "" {
				t.Errorf("through the Lambda event's shape (-want +got):\n%s", diff)
			}
			got, err := message.Decode(f.Message, sqsattr.FromLambda(lambda))
			if err != nil || !cmp.Equal(want, got) {
				t.Errorf("decoded from the Lambda event: %+v, %v; want %+v", got, err, want)
			}
		})
	}
}

func TestFromLambdaWithoutDataType(t *testing.T) {
	got := sqsattr.FromLambda(map[string]events.SQSMessageAttribute{
		"s": {StringValue: aws.String("v")}, "b": {BinaryValue: []byte("hi")}, "none": {DataType: "String"},
	})
	want := message.Attributes{"s": {Type: "String", Value: "v"}, "b": {Type: "Binary", Value: "aGk="}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if got := sqsattr.FromSQS(map[string]sqstypes.MessageAttributeValue{"s": {StringValue: aws.String("v")}}); got["s"].Type != "String" {
		t.Errorf("FromSQS without a data type: %v", got)
	}
}

func TestToSQSRefusesBadBinary(t *testing.T) {
	_, err := sqsattr.ToSQS(message.Attributes{"b": {Type: "Binary", Value: "%%"}})
	if err == nil || !strings.Contains(err.Error(), "attribute b: binary value is not base64") {
		t.Errorf("error = %v", err)
	}
}
