package stack_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hookfan/hookfan/infra/tools/cost"
	"github.com/hookfan/hookfan/shared/config"
)

// egressTestConfig has one lane with static egress (on port 8443, its
// token endpoint on 9443) and one on the public path, under top (the
// egress section).
func egressTestConfig(t *testing.T, top string) *config.Config {
	t.Helper()
	cfg, err := config.Parse([]byte(`{
	  "sources": [{"name": "stripe", "verify": {"kind": "stripe", "secretName": "hookfan/sources/stripe"}}],
	  "destinations": [
	    {"name": "bank", "url": "https://in.bank.example:8443/in", "egress": "static",
	     "auth": {"oauth2": {"tokenUrl": "https://idp.bank.example:9443/oauth2/token", "clientSecret": "hookfan/bank/oauth"}}},
	    {"name": "plain", "url": "https://b.example.com/hooks"}
	  ],
	  "egress": ` + top + `
	}`))
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// TestStaticEgress synthesizes three zones of static egress (once, under
// cdk-nag: synth fails on any finding) and checks the VPC, its NAT
// gateways and retained Elastic IPs, the flow logs and endpoints, the
// outputs and index, and that only the static lane's function is in the
// VPC, with its security group and network-interface permissions.
func TestStaticEgress(t *testing.T) {
	// Three zones in the smallest range egress.cidr takes.
	cfg := egressTestConfig(t, `{"staticAddresses": true, "zones": 3, "cidr": "172.20.0.0/22"}`)
	h, outdir := synth(t, cfg)
	_, parent := templateOf(t, h.Stack)
	_, bank := templateOf(t, h.LaneStacks[0])
	_, plain := templateOf(t, h.LaneStacks[1])

	t.Run("lanes", func(t *testing.T) {
		checkLane(t, cfg.Destinations[0], cfg, bank, false)
		checkLane(t, cfg.Destinations[1], cfg, plain, false)
	})

	t.Run("VPC, subnets and zones", func(t *testing.T) {
		_, vpc := only(t, parent, "AWS::EC2::VPC")
		if got := vpc.Properties["CidrBlock"]; got != "172.20.0.0/22" {
			t.Errorf("VPC range %v", got)
		}
		subnets := ofType(parent, "AWS::EC2::Subnet")
		if len(subnets) != 6 {
			t.Fatalf("%d subnets, want a public and a private one in each of 3 zones", len(subnets))
		}
		zones := map[string]int{}
		public := 0
		for id, s := range subnets {
			zones[fmt.Sprint(s.Properties["AvailabilityZone"])]++
			if s.Properties["MapPublicIpOnLaunch"] == true {
				t.Errorf("%s gives public addresses on launch", id)
			}
			if strings.Contains(id, "Nat") {
				public++
				if s.Properties["CidrBlock"] == nil || !strings.HasSuffix(fmt.Sprint(s.Properties["CidrBlock"]), "/28") {
					t.Errorf("NAT subnet %s: %v, want a /28", id, s.Properties["CidrBlock"])
				}
			}
		}
		if public != 3 {
			t.Errorf("%d public (NAT) subnets, want 3", public)
		}
		// Three distinct zones, each picked from the region's at deploy
		// time (an environment-agnostic stack would otherwise get two).
		if len(zones) != 3 {
			t.Errorf("subnets in %d zones, want 3: %v", len(zones), zones)
		}
		for z := range zones {
			if !strings.Contains(z, "Fn::Select") || !strings.Contains(z, "Fn::GetAZs") {
				t.Errorf("zone %s, want Fn::Select of Fn::GetAZs", z)
			}
		}
		if n := len(ofType(parent, "AWS::EC2::InternetGateway")); n != 1 {
			t.Errorf("%d internet gateways, want 1", n)
		}
	})

	t.Run("one NAT gateway per zone, each with a retained Elastic IP", func(t *testing.T) {
		eips := ofType(parent, "AWS::EC2::EIP")
		nats := ofType(parent, "AWS::EC2::NatGateway")
		if len(eips) != 3 || len(nats) != 3 {
			t.Fatalf("%d Elastic IPs and %d NAT gateways, want 3 each", len(eips), len(nats))
		}
		for id, e := range eips {
			if e.DeletionPolicy != "Retain" {
				t.Errorf("EIP %s: DeletionPolicy %q, want Retain", id, e.DeletionPolicy)
			}
		}
		raw := rawResources(t, outdir, "Hookfan.template.json")
		used := map[string]bool{}
		for id, n := range nats {
			alloc := refID(n.Properties["AllocationId"])
			if _, ok := eips[alloc]; !ok {
				t.Errorf("NAT gateway %s: allocation %v is not one of the stack's EIPs", id, n.Properties["AllocationId"])
			}
			used[alloc] = true
			if !strings.Contains(refID(n.Properties["SubnetId"]), "Nat") {
				t.Errorf("NAT gateway %s in %v, want a public (Nat) subnet", id, n.Properties["SubnetId"])
			}
		}
		for id := range eips {
			if raw[id]["UpdateReplacePolicy"] != "Retain" {
				t.Errorf("EIP %s: UpdateReplacePolicy %v, want Retain", id, raw[id]["UpdateReplacePolicy"])
			}
		}
		if len(used) != 3 {
			t.Errorf("the NAT gateways use %d distinct addresses, want 3", len(used))
		}
	})

	t.Run("flow logs and free gateway endpoints only", func(t *testing.T) {
		_, fl := only(t, parent, "AWS::EC2::FlowLog")
		if fl.Properties["TrafficType"] != "ALL" || fl.Properties["ResourceType"] != "VPC" {
			t.Errorf("flow log %v", fl.Properties)
		}
		logs := refID(fl.Properties["LogGroupName"])
		if g, ok := parent[logs]; !ok || g.Properties["RetentionInDays"] == nil {
			t.Errorf("flow log group %s without a retention: %+v", logs, g)
		}
		var services []string
		for id, ep := range ofType(parent, "AWS::EC2::VPCEndpoint") {
			if ep.Properties["VpcEndpointType"] != "Gateway" {
				t.Errorf("endpoint %s is %v: interface endpoints are billed by the hour", id, ep.Properties["VpcEndpointType"])
			}
			services = append(services, fmt.Sprint(ep.Properties["ServiceName"]))
		}
		slices.Sort(services)
		if len(services) != 2 || !strings.Contains(services[0], "dynamodb") || !strings.Contains(services[1], "s3") {
			t.Errorf("endpoints %v, want DynamoDB's and S3's", services)
		}
	})

	t.Run("outputs and index", func(t *testing.T) {
		tmpl := readEgressTemplate(t, outdir, "Hookfan.template.json")
		out, ok := tmpl.Outputs["EgressAddresses"]
		if !ok {
			t.Fatalf("no EgressAddresses output; outputs %v", slices.Sorted(mapsKeys(tmpl.Outputs)))
		}
		if v := fmt.Sprint(out["Value"]); strings.Count(v, "PublicIp") != 3 {
			t.Errorf("EgressAddresses = %s, want the three EIPs' PublicIp", v)
		}
		index := stackIndexValue(t, parent)
		if strings.Count(index, "PublicIp") != 3 || !strings.Contains(index, `egressAddresses\":[`) {
			t.Errorf("stack index %s, want egressAddresses with the three PublicIps", index)
		}
		for i, want := range []string{`"egress":"static"`, `"egress":"public"`} {
			res := []map[string]resource{bank, plain}[i]
			_, p := only(t, res, "AWS::SSM::Parameter")
			if v := fmt.Sprint(p.Properties["Value"]); !strings.Contains(v, want) {
				t.Errorf("%s index %s, want %s", cfg.Destinations[i].Name, v, want)
			}
		}
	})

	t.Run("only the static lane is in the VPC", func(t *testing.T) {
		_, fn := only(t, bank, "AWS::Lambda::Function")
		vc, ok := fn.Properties["VpcConfig"].(map[string]any)
		if !ok {
			t.Fatalf("the static lane's function has no VpcConfig")
		}
		if n := anyLen(vc["SubnetIds"]); n != 3 {
			t.Errorf("in %d subnets, want the 3 private ones", n)
		}
		sgID, sg := only(t, bank, "AWS::EC2::SecurityGroup")
		if got := refID(asSlice(vc["SecurityGroupIds"])[0]); got != sgID {
			t.Errorf("security group %s, want %s", got, sgID)
		}
		if sg.Properties["SecurityGroupIngress"] != nil {
			t.Errorf("ingress rules %v, want none", sg.Properties["SecurityGroupIngress"])
		}
		var ports []float64
		for _, r := range asSlice(sg.Properties["SecurityGroupEgress"]) {
			rule := r.(map[string]any)
			if rule["IpProtocol"] != "tcp" || rule["FromPort"] != rule["ToPort"] || rule["CidrIp"] != "0.0.0.0/0" {
				t.Errorf("egress rule %v", rule)
			}
			ports = append(ports, num(rule["FromPort"]))
		}
		slices.Sort(ports)
		// 443 (the AWS APIs), the url's port and the token endpoint's.
		if diff := cmp.Diff([]float64{443, 8443, 9443}, ports); diff != "" {
			t.Errorf("egress ports (-want +got):\n%s", diff)
		}
		_, plainFn := only(t, plain, "AWS::Lambda::Function")
		if plainFn.Properties["VpcConfig"] != nil {
			t.Errorf("the public lane's function is in the VPC: %v", plainFn.Properties["VpcConfig"])
		}
		for id, fn := range ofType(parent, "AWS::Lambda::Function") {
			if fn.Properties["VpcConfig"] != nil {
				t.Errorf("%s (ingest or a custom resource) is in the VPC", id)
			}
		}
	})

	t.Run("network-interface permissions, inline and scoped", func(t *testing.T) {
		sids := map[string]map[string]any{}
		for _, p := range ofType(bank, "AWS::IAM::Policy") {
			for _, st := range statements(p.Properties["PolicyDocument"]) {
				if sid, _ := st["Sid"].(string); sid != "" {
					sids[sid] = st
				}
			}
		}
		for _, r := range ofType(bank, "AWS::IAM::Role") {
			if r.Properties["ManagedPolicyArns"] != nil {
				t.Errorf("managed policies %v", r.Properties["ManagedPolicyArns"])
			}
		}
		if st := sids["DescribeNetworkInterfaces"]; st == nil || st["Resource"] != "*" {
			t.Errorf("describe statement %v", st)
		}
		create := sids["CreateNetworkInterfaces"]
		if create == nil {
			t.Fatal("no CreateNetworkInterfaces statement")
		}
		res := fmt.Sprint(create["Resource"])
		if n := anyLen(create["Resource"]); n != 5 || !strings.Contains(res, "network-interface/*") || strings.Count(res, ":subnet/") != 3 || !strings.Contains(res, ":security-group/") {
			t.Errorf("create on %d resources %s, want the interfaces, the lane's security group and its 3 subnets", n, res)
		}
		manage := sids["ManageNetworkInterfaces"]
		if manage == nil || !strings.Contains(fmt.Sprint(manage["Resource"]), "network-interface/*") || anyLen(manage["Resource"]) != 1 {
			t.Errorf("manage statement %v", manage)
		}
		for _, p := range ofType(plain, "AWS::IAM::Policy") {
			if strings.Contains(fmt.Sprint(p.Properties["PolicyDocument"]), "ec2:") {
				t.Errorf("the public lane's role has EC2 actions: %v", p.Properties["PolicyDocument"])
			}
		}
	})

	t.Run("no wildcard resources", func(t *testing.T) {
		checkWildcards(t, outdir)
	})

	t.Run("every type priced", func(t *testing.T) {
		for _, res := range []map[string]resource{parent, bank, plain} {
			for typ := range countTypes(res) {
				_, priced := cost.PricedTypes[typ]
				_, egress := cost.EgressPricedTypes[typ]
				if !priced && !egress {
					t.Errorf("%s is priced nowhere (cost.PricedTypes, cost.EgressPricedTypes)", typ)
				}
			}
		}
	})
}

// TestStaticEgressOwnAddresses: allocation ids brought by the
// configuration are used as given; the stack allocates none.
func TestStaticEgressOwnAddresses(t *testing.T) {
	cfg := egressTestConfig(t, `{"staticAddresses": true, "allocationIds": ["eipalloc-0123456789abcdef0", "eipalloc-89abcdef"]}`)
	h, outdir := synth(t, cfg)
	_, parent := templateOf(t, h.Stack)
	if _, vpc := only(t, parent, "AWS::EC2::VPC"); vpc.Properties["CidrBlock"] != config.DefaultEgressCIDR {
		t.Errorf("VPC range %v, want the default %s", vpc.Properties["CidrBlock"], config.DefaultEgressCIDR)
	}
	if n := len(ofType(parent, "AWS::EC2::EIP")); n != 0 {
		t.Errorf("%d EIPs allocated, want none", n)
	}
	var ids []string
	for _, n := range ofType(parent, "AWS::EC2::NatGateway") {
		ids = append(ids, fmt.Sprint(n.Properties["AllocationId"]))
	}
	slices.Sort(ids)
	if diff := cmp.Diff([]string{"eipalloc-0123456789abcdef0", "eipalloc-89abcdef"}, ids); diff != "" {
		t.Errorf("NAT gateways' allocations (-want +got):\n%s", diff)
	}
	out := readEgressTemplate(t, outdir, "Hookfan.template.json").Outputs["EgressAddresses"]
	if v := fmt.Sprint(out["Value"]); !strings.Contains(v, "eipalloc-0123456789abcdef0") || !strings.Contains(fmt.Sprint(out["Description"]), "allocation ids") {
		t.Errorf("EgressAddresses %v", out)
	}
}

// TestNoEgressNoVPC: without static addresses the stack has no network
// resources at all.
func TestNoEgressNoVPC(t *testing.T) {
	cfg := testConfig(t, 1, "")
	h, _ := synth(t, cfg)
	_, parent := templateOf(t, h.Stack)
	for _, typ := range []string{"AWS::EC2::VPC", "AWS::EC2::NatGateway", "AWS::EC2::EIP", "AWS::EC2::FlowLog"} {
		if n := len(ofType(parent, typ)); n != 0 {
			t.Errorf("%d %s without static egress", n, typ)
		}
	}
}

type egressTemplate struct {
	Resources map[string]map[string]any
	Outputs   map[string]map[string]any
}

func readEgressTemplate(t *testing.T, outdir, name string) egressTemplate {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(outdir, name))
	if err != nil {
		t.Fatal(err)
	}
	var doc egressTemplate
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

func rawResources(t *testing.T, outdir, name string) map[string]map[string]any {
	return readEgressTemplate(t, outdir, name).Resources
}

// stackIndexValue is the stack's own index parameter's value, as JSON text.
func stackIndexValue(t *testing.T, parent map[string]resource) string {
	t.Helper()
	for _, p := range ofType(parent, "AWS::SSM::Parameter") {
		if strings.Contains(fmt.Sprint(p.Properties["Name"]), "/stack") {
			data, _ := json.Marshal(p.Properties["Value"])
			return string(data)
		}
	}
	t.Fatal("no stack index parameter")
	return ""
}

// checkWildcards is TestNoWildcardResources's rule on every template in
// outdir: an identity statement names Resource "*" only for the actions
// that AWS grants no other way (starAllowed).
func checkWildcards(t *testing.T, outdir string) {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(outdir, "*.template.json"))
	for _, f := range files {
		var doc struct{ Resources map[string]resource }
		data, _ := os.ReadFile(f)
		if err := json.Unmarshal(data, &doc); err != nil {
			t.Fatal(err)
		}
		for id, r := range doc.Resources {
			if r.Type != "AWS::IAM::Policy" {
				continue
			}
			for _, st := range statements(r.Properties["PolicyDocument"]) {
				for _, res := range asSlice(st["Resource"]) {
					if s, ok := res.(string); ok && strings.Contains(s, "*") {
						for _, a := range anyStrings(st["Action"]) {
							if _, ok := starAllowed[a]; !ok || s != "*" {
								t.Errorf("%s %s: %s on %q", filepath.Base(f), id, a, s)
							}
						}
					}
				}
			}
		}
	}
}
