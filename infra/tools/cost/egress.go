package cost

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/hookfan/hookfan/shared/config"
)

// EgressPrices are the prices of static egress (egress.staticAddresses),
// in us-east-1, kept apart from Prices so that the two models change
// independently.
var EgressPrices = struct {
	NATHour, NATGB        Price
	PublicIPv4Hour        Price
	FlowLogsIngest        Price
	InterfaceEndpointHour Price
	InterfaceEndpointGB   Price
	GatewayEndpoint       Price
}{
	NATHour:               Price{0.045, "per NAT gateway-hour, billed while it exists, traffic or not", "Amazon VPC pricing (NAT gateways)"},
	NATGB:                 Price{0.045, "per GB processed by a NAT gateway, both directions, on top of data transfer out", "Amazon VPC pricing (NAT gateways)"},
	PublicIPv4Hour:        Price{0.005, "per public IPv4 address-hour, in use or idle (an Elastic IP on a NAT gateway included), since 1 February 2024", "Amazon VPC pricing (public IPv4 addresses); AWS News Blog, \"New – AWS Public IPv4 Address Charge\""},
	FlowLogsIngest:        Price{0.50, "per GB of VPC flow logs delivered to CloudWatch Logs (vended logs, first 10 TB)", "Amazon CloudWatch pricing (vended logs)"},
	InterfaceEndpointHour: Price{0.01, "per interface endpoint-hour per zone (not used: the stack makes none)", "AWS PrivateLink pricing"},
	InterfaceEndpointGB:   Price{0.01, "per GB through an interface endpoint (first PB; not used)", "AWS PrivateLink pricing"},
	GatewayEndpoint:       Price{0, "gateway endpoints for DynamoDB and S3: no hourly or per-GB charge", "Amazon VPC pricing (gateway endpoints)"},
}

// EgressAssumed are the figures of the egress model.
var EgressAssumed = struct {
	HoursPerMonth    Figure
	NATBytesOverhead Figure
	FlowLogBytes     Figure
}{
	HoursPerMonth: Figure{730, "hours", "AWS's month for hourly prices (8,760 hours a year ÷ 12)"},
	// What a delivery sends and receives through the NAT gateway besides
	// its body: the request's headers (the signature, the Hookfan ones, a
	// destination's own), the answer's status line and headers and the
	// read cap of its body, TLS framing, and a share of a TLS handshake
	// (certificate chain included, about 5 KB) when the connection is new.
	NATBytesOverhead: Figure{3072, "bytes per delivery", "assumed: about 1 KB of headers each way and a new TLS connection every few deliveries; the record, payload and secret calls take the DynamoDB and S3 gateway endpoints, or happen once per cold start"},
	// A flow log record is about 130 bytes in the default format; a TCP
	// connection makes two at the function's interface (each direction)
	// and four at the NAT gateway's (each direction, each side) per
	// 10-minute aggregation interval, and the records of the DynamoDB
	// calls two more.
	FlowLogBytes: Figure{1040, "bytes per delivery", "assumed: 8 records of about 130 bytes, as if every delivery opened its own connection (an upper bound: reused connections share their records)"},
}

// EgressFixed is what static egress adds a month with zones availability
// zones: a NAT gateway and a public IPv4 address in each, whether any lane
// delivers or not. The gateway endpoints are free; the flow logs' volume
// follows the deliveries (EgressPerMillion).
func EgressFixed(zones int) []Line {
	p, h := EgressPrices, EgressAssumed.HoursPerMonth.Value
	z := float64(zones)
	return []Line{
		{fmt.Sprintf("NAT gateways (%d × %s/h × %s h)", zones, strconv.FormatFloat(p.NATHour.USD, 'f', -1, 64), num(h)), z * p.NATHour.USD * h},
		{fmt.Sprintf("public IPv4 addresses (%d × %s/h × %s h)", zones, strconv.FormatFloat(p.PublicIPv4Hour.USD, 'f', -1, 64), num(h)), z * p.PublicIPv4Hour.USD * h},
	}
}

// EgressPerMillion is what static egress adds per million deliveries of
// bodyKB through a static lane: the NAT gateway's processing of the
// request and the answer, and the flow logs. Data transfer out to the
// internet is billed the same on the public path, so it is not a cost of
// static egress.
func EgressPerMillion(bodyKB float64) []Line {
	p, a := EgressPrices, EgressAssumed
	natGB := million * (bodyKB*1024 + a.NATBytesOverhead.Value) / gb
	logsGB := million * a.FlowLogBytes.Value / gb
	return []Line{
		{"NAT gateway processing", natGB * p.NATGB.USD},
		{"VPC flow logs (CloudWatch Logs)", logsGB * p.FlowLogsIngest.USD},
	}
}

// EgressInterfaceEndpoints is what interface endpoints for the services a
// deliver function calls besides DynamoDB and S3 (SQS and Secrets Manager;
// it calls no CloudWatch API: its metrics are EMF lines) would cost a
// month, in zones
// zones, before their per-GB charge: the reason the stack sends those
// calls through the NAT gateways instead.
func EgressInterfaceEndpoints(zones, services int) float64 {
	return float64(zones*services) * EgressPrices.InterfaceEndpointHour.USD * EgressAssumed.HoursPerMonth.Value
}

// EgressPricedTypes are the resource types static egress adds, with the
// line that prices each or why it costs nothing (PricedTypes for the rest).
var EgressPricedTypes = map[string]string{
	"AWS::EC2::VPC":                         "no charge",
	"AWS::EC2::Subnet":                      "no charge",
	"AWS::EC2::RouteTable":                  "no charge",
	"AWS::EC2::SubnetRouteTableAssociation": "no charge",
	"AWS::EC2::Route":                       "no charge",
	"AWS::EC2::InternetGateway":             "no charge (data transfer out is billed the same on the public path)",
	"AWS::EC2::VPCGatewayAttachment":        "no charge",
	"AWS::EC2::NatGateway":                  "static egress: NAT gateways (per hour) and NAT gateway processing (per GB)",
	"AWS::EC2::EIP":                         "static egress: public IPv4 addresses (per hour, retained ones too until released)",
	"AWS::EC2::FlowLog":                     "static egress: VPC flow logs (CloudWatch Logs)",
	"AWS::EC2::VPCEndpoint":                 "no charge (gateway endpoints for DynamoDB and S3)",
	"AWS::EC2::SecurityGroup":               "no charge",
}

// egressSection renders the static egress tables for docs/cost.md.
func egressSection() string {
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	w("\n### Static egress addresses\n\n")
	w("`egress.staticAddresses`: a month, whether any lane delivers or not (by zones), then per million deliveries through a lane with `\"egress\": \"static\"` (by body size). Data transfer out is the same on either path and is not counted here.\n\n")
	w("| line item | 1 zone | 2 zones (default) | 3 zones |\n|---|---:|---:|---:|\n")
	rows := [][]Line{}
	for z := config.MinEgressZones; z <= config.MaxEgressZones; z++ {
		rows = append(rows, EgressFixed(z))
	}
	for j, l := range rows[0] {
		name, _, _ := strings.Cut(l.Item, " (")
		w("| %s |", name)
		for i := range rows {
			w(" %s |", usd(rows[i][j].USD))
		}
		w("\n")
	}
	w("| **a month** |")
	for i := range rows {
		w(" **%s** |", usd(Sum(rows[i])))
	}
	w("\n\n| per million deliveries | 1 KB | 16 KB | 256 KB |\n|---|---:|---:|---:|\n")
	sizes := []float64{1, 16, 256}
	per := make([][]Line, len(sizes))
	for i, s := range sizes {
		per[i] = EgressPerMillion(s)
	}
	for j, l := range per[0] {
		w("| %s |", l.Item)
		for i := range sizes {
			w(" %s |", usd(per[i][j].USD))
		}
		w("\n")
	}
	w("| **total** |")
	for i := range sizes {
		w(" **%s** |", usd(Sum(per[i])))
	}
	w("\n\nInterface endpoints for SQS and Secrets Manager instead of the NAT gateways would add %s a month in 2 zones before their per-GB charge; the gateway endpoints for DynamoDB and S3 the stack makes are free.\n\n",
		usd(EgressInterfaceEndpoints(config.DefaultEgressZones, 2)))
	writePrices(w, EgressPrices)
	w("\n")
	writeFigures(w, EgressAssumed)
	return b.String()
}
