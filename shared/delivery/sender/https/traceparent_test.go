package https

import "testing"

func TestTraceParent(t *testing.T) {
	for _, tc := range []struct {
		xray, want string
		ok         bool
	}{
		{"Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1", "00-5759e988bd862e3fe1be46a994272793-53995c3f42cd8ad8-01", true},
		{"Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=0", "00-5759e988bd862e3fe1be46a994272793-53995c3f42cd8ad8-00", true},
		// Lambda's own header adds a Lineage field: ignored.
		{"Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1;Lineage=1:a87bb23b:0", "00-5759e988bd862e3fe1be46a994272793-53995c3f42cd8ad8-01", true},
		{"", "", false},
		{"Root=1-5759e988-bd862e3fe1be46a994272793;Sampled=1", "", false},
		{"Root=2-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8", "", false},
		{"Root=1-5759E988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8", "", false},
		{"Root=1-00000000-000000000000000000000000;Parent=53995c3f42cd8ad8", "", false},
		{"Root=1-5759e988-bd862e3fe1be46a994272793;Parent=0000000000000000", "", false},
	} {
		got, ok := TraceParent(tc.xray)
		if got != tc.want || ok != tc.ok {
			t.Errorf("TraceParent(%q) = %q, %v; want %q, %v", tc.xray, got, ok, tc.want, tc.ok)
		}
	}
}
