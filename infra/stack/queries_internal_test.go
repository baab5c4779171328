package stack

import "testing"

func TestPageRange(t *testing.T) {
	tests := []struct {
		from, to, total int
		want            string
	}{
		{0, 3, 3, ""},
		{0, LanesPerDashboard, LanesPerDashboard, ""},
		{0, LanesPerDashboard, LanesPerDashboard + 1, " (destinations 1-40)"},
		{LanesPerDashboard, LanesPerDashboard + 1, LanesPerDashboard + 1, " (destinations 41-41)"},
	}
	for _, tt := range tests {
		if got := pageRange(tt.from, tt.to, tt.total); got != tt.want {
			t.Errorf("pageRange(%d, %d, %d) = %q, want %q", tt.from, tt.to, tt.total, got, tt.want)
		}
	}
	if LanesPerDashboard+1 > MaxQueryLogGroups {
		t.Errorf("a page's %d lanes and the ingest log group exceed a query's %d log groups", LanesPerDashboard, MaxQueryLogGroups)
	}
}
