package config

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hookfan/hookfan/shared/netguard"
)

// egressConfig renders a config with a top-level egress (top, "" for none)
// and one destination carrying extra settings.
func egressConfig(top, extra string) string {
	doc := `{"sources": [{"name": "s", "verify": {"kind": "github", "secretName": "s"}}],
	  "destinations": [{"name": "d", "url": "https://d.example.com"` + extra + `}]`
	if top != "" {
		doc += `, "egress": ` + top
	}
	return doc + `}`
}

func TestEgressInvalid(t *testing.T) {
	tests := []struct {
		name, top, extra string
		want             []string
	}{
		{"static lane without addresses", ``, `, "egress": "static"`, []string{
			`destinations[0].egress: "static" but the stack has no static addresses; set "egress": {"staticAddresses": true} at the top level, or remove egress from d`,
		}},
		{"unknown path", `{"staticAddresses": true}`, `, "egress": "nat"`, []string{
			`destinations[0].egress: "nat" is not an egress path; use "public" (default: Lambda's changing addresses) or "static" (the stack's Elastic IPs, with egress.staticAddresses)`,
		}},
		{"zones without addresses", `{"zones": 2}`, ``, []string{
			`egress.zones: 2 set without staticAddresses; set "staticAddresses": true or remove zones`,
		}},
		{"zones out of range", `{"staticAddresses": true, "zones": 4}`, ``, []string{
			`egress.zones: 4 is out of range; use 1 to 3 availability zones, one NAT gateway and Elastic IP each (default 2)`,
		}},
		{"negative zones", `{"staticAddresses": true, "zones": -1}`, ``, []string{
			`egress.zones: -1 is out of range; use 1 to 3 availability zones, one NAT gateway and Elastic IP each (default 2)`,
		}},
		{"ids without addresses", `{"allocationIds": ["eipalloc-0123456789abcdef0"]}`, ``, []string{
			`egress.allocationIds: set without staticAddresses; set "staticAddresses": true or remove allocationIds`,
		}},
		{"ids not matching zones", `{"staticAddresses": true, "zones": 2, "allocationIds": ["eipalloc-0123456789abcdef0"]}`, ``, []string{
			`egress.allocationIds: 1 allocation ids for 2 zones; give one Elastic IP per zone (each NAT gateway needs its own), or set zones to 1`,
		}},
		{"too many ids", `{"staticAddresses": true, "allocationIds": ["eipalloc-00000001", "eipalloc-00000002", "eipalloc-00000003", "eipalloc-00000004"]}`, ``, []string{
			`egress.allocationIds: 4 allocation ids; the egress VPC spans at most 3 zones, one Elastic IP each`,
		}},
		{"bad and duplicate ids", `{"staticAddresses": true, "allocationIds": ["eipalloc-0123456789abcdef0", "203.0.113.7", "eipalloc-0123456789abcdef0"]}`, ``, []string{
			`egress.allocationIds[1]: "203.0.113.7" is not an Elastic IP allocation id; use the AllocationId of an address in the stack's region and account (eipalloc- and 8 or 17 hex digits, from aws ec2 describe-addresses)`,
			`egress.allocationIds[2]: "eipalloc-0123456789abcdef0" is listed twice (also allocationIds[0]); each zone's NAT gateway needs its own address`,
		}},
		{"metadata in allowCidrs", ``, `, "allowCidrs": ["10.20.0.0/16", "169.254.169.254/32", "fd00:ec2::254/128"]`, []string{
			`destinations[0].allowCidrs[1]: 169.254.169.254/32 overlaps 169.254.0.0/16, a link-local address (the instance metadata service lives there), which deliveries never reach; list only the private ranges of your receivers`,
			`destinations[0].allowCidrs[2]: fd00:ec2::254/128 overlaps fd00:ec2::254/128, the instance metadata service's IPv6 address, which deliveries never reach; list only the private ranges of your receivers`,
		}},
		{"bad allowCidrs entries", ``, `, "allowCidrs": ["10.20.0.1/16", "10.0.0.0/8", "10.0.0.0/8", "8.8.8.0/24", "10.0.0.0"]`, []string{
			`destinations[0].allowCidrs[0]: 10.20.0.1/16 has host bits set; write the block as 10.20.0.0/16`,
			`destinations[0].allowCidrs[2]: 10.0.0.0/8 is listed twice (also allowCidrs[1]); keep one`,
			`destinations[0].allowCidrs[3]: 8.8.8.0/24 is not inside one private range (such as 10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16, 100.64.0.0/10 or fc00::/7); public addresses are reachable already: list only private ranges`,
			`destinations[0].allowCidrs[4]: "10.0.0.0" is not a CIDR block; write it as 10.20.0.0/16 or fd12:3456::/48`,
		}},
		{"cidr without addresses", `{"cidr": "10.50.0.0/20"}`, ``, []string{
			`egress.cidr: "10.50.0.0/20" set without staticAddresses; set "staticAddresses": true or remove cidr`,
		}},
		{"cidr not a block", `{"staticAddresses": true, "cidr": "10.50.0.0"}`, ``, []string{
			`egress.cidr: "10.50.0.0" is not an IPv4 CIDR block; use a private /16 to /22 such as 10.198.0.0/20`,
		}},
		{"cidr with host bits", `{"staticAddresses": true, "cidr": "10.50.0.1/20"}`, ``, []string{
			`egress.cidr: 10.50.0.1/20 has host bits set; write the block as 10.50.0.0/20`,
		}},
		{"cidr too small", `{"staticAddresses": true, "cidr": "10.50.0.0/24"}`, ``, []string{
			`egress.cidr: 10.50.0.0/24 is a /24; use /16 to /22 (a VPC holds at most a /16; three zones' subnets need a /22)`,
		}},
		{"cidr public", `{"staticAddresses": true, "cidr": "8.8.0.0/16"}`, ``, []string{
			`egress.cidr: 8.8.0.0/16 is not inside 10.0.0.0/8, 172.16.0.0/12 or 192.168.0.0/16; use a private block`,
		}},
		{"allowCidrs overlapping the VPC", `{"staticAddresses": true}`, `, "allowCidrs": ["10.198.4.0/24"], "egress": "static"`, []string{
			`destinations[0].allowCidrs[0]: 10.198.4.0/24 overlaps the egress VPC's own range 10.198.0.0/20; a receiver is reached through a network that does not overlap it: set egress.cidr to another block`,
		}},
		{"empty allowCidrs", ``, `, "allowCidrs": []`, []string{
			`destinations[0].allowCidrs: empty list; list the private ranges the destination may reach (e.g. ["10.20.0.0/16"]) or remove allowCidrs`,
		}},
		{"allowCidrs with allowPrivateNetworks", ``, `, "allowCidrs": ["10.20.0.0/16"], "allowPrivateNetworks": true`, []string{
			`destinations[0].allowCidrs: set together with allowPrivateNetworks, which opens every private range (and the metadata service); keep allowCidrs and remove allowPrivateNetworks (it is for local development)`,
		}},
		{"URL outside allowCidrs", ``, `, "url": "https://10.30.0.5/hooks", "allowCidrs": ["10.20.0.0/16"]`, []string{
			`destinations[0].url: host 10.30.0.5 is a private-use address, in none of the destination's allowCidrs; use a public host or one inside the ranges allowCidrs lists`,
		}},
		{"metadata URL with allowCidrs", ``, `, "url": "https://169.254.169.254/latest", "allowCidrs": ["10.20.0.0/16"]`, []string{
			`destinations[0].url: host 169.254.169.254 is a link-local address (the instance metadata service lives there), never reachable whatever allowCidrs lists; use a public host or one inside the ranges allowCidrs lists`,
		}},
		{"http with allowCidrs", ``, `, "url": "http://10.20.0.5/hooks", "allowCidrs": ["10.20.0.0/16"]`, []string{
			`destinations[0].url: "http://10.20.0.5/hooks" uses http; deliveries must use https (http is accepted only with allowPrivateNetworks, for local development)`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := egressConfig(tt.top, tt.extra)
			if strings.Contains(tt.extra, `"url"`) {
				doc = strings.Replace(doc, `"url": "https://d.example.com", `, ``, 1)
			}
			c, err := Parse([]byte(doc))
			if err == nil {
				t.Fatalf("Parse accepted an invalid config: %+v %+v", c.Egress, c.Destinations[0])
			}
			if diff := cmp.Diff(tt.want, strings.Split(err.Error(), "\n")); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}

func TestEgressValid(t *testing.T) {
	tests := []struct {
		name, top, extra string
		zones            int
		static           []string
	}{
		{"none", ``, ``, 0, nil},
		{"addresses, no lane yet", `{"staticAddresses": true}`, ``, 2, nil},
		{"static lane", `{"staticAddresses": true, "zones": 3}`, `, "egress": "static"`, 3, []string{"d"}},
		{"public lane said so", `{"staticAddresses": true, "zones": 1}`, `, "egress": "public"`, 1, nil},
		{"own range", `{"staticAddresses": true, "cidr": "172.20.0.0/22"}`, `, "egress": "static", "allowCidrs": ["10.198.0.0/20"]`, 2, []string{"d"}},
		{"own addresses", `{"staticAddresses": true, "allocationIds": ["eipalloc-0123456789abcdef0", "eipalloc-89abcdef"]}`, `, "egress": "static"`, 2, []string{"d"}},
		{"allowCidrs", ``, `, "allowCidrs": ["10.20.0.0/16", "fd12:3456::/48"]`, 0, nil},
		{"private literal in allowCidrs", ``, `, "url": "https://10.20.0.5/hooks", "allowCidrs": ["10.20.0.0/16"]`, 0, nil},
		{"private name with allowCidrs", `{"staticAddresses": true}`, `, "url": "https://hooks.corp.internal/in", "allowCidrs": ["10.20.0.0/16"], "egress": "static"`, 2, []string{"d"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := egressConfig(tt.top, tt.extra)
			if strings.Contains(tt.extra, `"url"`) {
				doc = strings.Replace(doc, `"url": "https://d.example.com", `, ``, 1)
			}
			c, err := Parse([]byte(doc))
			if err != nil {
				t.Fatal(err)
			}
			if got := c.Egress.ZoneCount(); got != tt.zones {
				t.Errorf("ZoneCount = %d, want %d", got, tt.zones)
			}
			if diff := cmp.Diff(tt.static, c.StaticLanes()); diff != "" {
				t.Errorf("StaticLanes (-want +got):\n%s", diff)
			}
			// The deliver function reads the same destination back.
			d, err := DecodeDestination("HOOKFAN_DESTINATION", EncodeDestination(c.Destinations[0]))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(c.Destinations[0], d); diff != "" {
				t.Errorf("round trip (-config +env):\n%s", diff)
			}
		})
	}
}

// TestDestinationCheckURL: a URL read from its secret at run time obeys
// the destination's allowCidrs as a configured one does.
func TestDestinationCheckURL(t *testing.T) {
	d := Destination{Name: "d", URLSecretName: "u", AllowCIDRs: []string{"10.20.0.0/16"}}
	if err := d.CheckURL("https://10.20.1.2/t/tok"); err != nil {
		t.Errorf("inside: %v", err)
	}
	for _, raw := range []string{"https://10.21.1.2/t/tok", "https://169.254.169.254/t/tok", "http://10.20.1.2/t/tok"} {
		if err := d.CheckURL(raw); err == nil {
			t.Errorf("CheckURL(%s) passed", raw)
		} else if strings.Contains(err.Error(), "tok") {
			t.Errorf("CheckURL(%s) quotes the URL: %v", raw, err)
		}
	}
}

// TestCheckURLRefusalIsTyped: a host the address guard refuses comes back
// as the guard's *netguard.RefusedError, so the deliver function records
// it; other problems do not.
func TestCheckURLRefusalIsTyped(t *testing.T) {
	d := Destination{Name: "d", URLSecretName: "u", AllowCIDRs: []string{"10.20.0.0/16"}}
	for raw, host := range map[string]string{
		"https://10.21.1.2/t/tok":         "10.21.1.2",
		"https://169.254.169.254/t/tok":   "169.254.169.254",
		"https://localhost/t/tok":         "localhost",
		"http://10.21.1.2/t/tok":          "10.21.1.2", // and http
		"https://[::ffff:10.1.1.1]/t/tok": "::ffff:10.1.1.1",
	} {
		var refused *netguard.RefusedError
		if err := d.CheckURL(raw); !errors.As(err, &refused) || refused.Host != host {
			t.Errorf("CheckURL(%s) = %v (%T), want a refusal of %s", raw, err, err, host)
		}
	}
	for _, raw := range []string{"http://10.20.1.2/t/tok", "ftp://10.20.1.2/", "https://h.example/#frag"} {
		var refused *netguard.RefusedError
		if err := d.CheckURL(raw); err == nil || errors.As(err, &refused) {
			t.Errorf("CheckURL(%s) = %v, want a problem that is no address refusal", raw, err)
		}
	}
}

// TestEgressPorts: a static lane's security group opens 443, the url's
// port and the token endpoint's, each once; a URL read from its secret
// must use one of them, on a static lane only.
func TestEgressPorts(t *testing.T) {
	oauth := func(token string) *Auth { return &Auth{OAuth2: &OAuth2{TokenURL: token, ClientSecret: "o"}} }
	tests := []struct {
		name string
		d    Destination
		want []int
	}{
		{"default port", Destination{URL: "https://in.example/x"}, []int{443}},
		{"url's own port", Destination{URL: "https://in.example:8443/x"}, []int{443, 8443}},
		{"token endpoint's port", Destination{URL: "https://in.example/x", Auth: oauth("https://idp.example:8443/token")}, []int{443, 8443}},
		{"both, deduplicated", Destination{URL: "https://in.example:8443/x", Auth: oauth("https://idp.example:8443/token")}, []int{443, 8443}},
		{"both, distinct", Destination{URL: "https://in.example:9443/x", Auth: oauth("https://idp.example:8443/token")}, []int{443, 9443, 8443}},
		{"url from a secret", Destination{URLSecretName: "u", Auth: oauth("https://idp.example:8443/token")}, []int{443, 8443}},
		{"explicit 443", Destination{URL: "https://in.example:443/x", Auth: oauth("https://idp.example/token")}, []int{443}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, tt.d.EgressPorts()); diff != "" {
			t.Errorf("%s: EgressPorts (-want +got):\n%s", tt.name, diff)
		}
	}

	static := Destination{Name: "d", URLSecretName: "u", Egress: EgressStatic, Auth: oauth("https://idp.example:8443/token")}
	for _, raw := range []string{"https://in.example/t/tok", "https://in.example:443/t/tok", "https://in.example:8443/t/tok"} {
		if err := static.CheckURL(raw); err != nil {
			t.Errorf("static, %s: %v", raw, err)
		}
	}
	var port *PortError
	err := static.CheckURL("https://in.example:9443/t/tok")
	if !errors.As(err, &port) || port.Port != 9443 || !slices.Equal(port.Open, []int{443, 8443}) {
		t.Fatalf("static, port 9443: %v, want a *PortError", err)
	}
	want := "the URL's port 9443 is not open in the static lane's security group, which lets out TCP 443, 8443 only (443, and the ports of url and auth.oauth2.tokenUrl); store a URL on one of them"
	if err.Error() != want || strings.Contains(err.Error(), "in.example") {
		t.Errorf("error %q, want %q", err, want)
	}
	public := static
	public.Egress = ""
	if err := public.CheckURL("https://in.example:9443/t/tok"); err != nil {
		t.Errorf("public path, port 9443: %v", err)
	}
}

// TestURLPortRange: a url or tokenUrl whose port is no TCP port is refused
// (the security group could not open it).
func TestURLPortRange(t *testing.T) {
	_, err := Parse([]byte(egressConfig(`{"staticAddresses": true}`, `, "egress": "static", "auth": {"oauth2": {"tokenUrl": "https://idp.example:70000/token", "clientSecret": "o"}}`)))
	want := `destinations[0].auth.oauth2.tokenUrl: "https://idp.example:70000/token" has port 70000; use a TCP port from 1 to 65535`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("error %v, want %q", err, want)
	}
	if _, err := Parse([]byte(egressConfig(`{"staticAddresses": true}`, `, "egress": "static", "auth": {"oauth2": {"tokenUrl": "https://idp.example:8443/token", "clientSecret": "o"}}`))); err != nil {
		t.Errorf("a token endpoint on 8443: %v", err)
	}
}

// TestLoopbackAllowCidrsAreLocal: a loopback range in allowCidrs marks the
// configuration as made for the local stack (the CDK app refuses it
// unless acknowledged); a private range does not.
func TestLoopbackAllowCidrsAreLocal(t *testing.T) {
	c, err := Parse([]byte(egressConfig(``, `, "allowCidrs": ["127.0.0.1/32"]`)))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{`destinations[0] ("d") lists a loopback range in allowCidrs (in Lambda, loopback is the runtime API's)`}
	if diff := cmp.Diff(want, c.LocalDestinations()); diff != "" {
		t.Errorf("LocalDestinations (-want +got):\n%s", diff)
	}
	c, _ = Parse([]byte(egressConfig(``, `, "allowCidrs": ["10.20.0.0/16"]`)))
	if got := c.LocalDestinations(); len(got) != 0 {
		t.Errorf("LocalDestinations = %v, want none", got)
	}
}
