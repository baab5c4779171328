package stack_test

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hookfan/hookfan/infra/stack"
	"github.com/hookfan/hookfan/shared/config"
)

// CloudFormation's quotas on one template (a nested stack's included).
const (
	maxResources  = 500
	maxOutputs    = 200
	maxParameters = 200
	maxMappings   = 200
	maxBytes      = 1 << 20 // a template uploaded to S3, as the CDK does
	// CloudWatch's quotas on one dashboard.
	maxWidgets          = 500
	maxDashboardMetrics = 2500
)

type templateDoc struct {
	Resources  map[string]resource
	Outputs    map[string]any
	Parameters map[string]any
	Mappings   map[string]any
}

// joined renders a CloudFormation string value (a literal or an Fn::Join)
// with each reference replaced by a placeholder of a deployed value's
// typical length.
func joined(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case map[string]any:
		if j, ok := x["Fn::Join"].([]any); ok && len(j) == 2 {
			var b strings.Builder
			for i, part := range asSlice(j[1]) {
				if i > 0 {
					b.WriteString(fmt.Sprint(j[0]))
				}
				b.WriteString(joined(part))
			}
			return b.String()
		}
	}
	return strings.Repeat("x", 64)
}

// TestThreeHundredDestinationsFitCloudFormation synthesizes 300
// destinations (three sources, alarm e-mail, cdk-nag on) and checks every
// template against CloudFormation's quotas, every dashboard against
// CloudWatch's, and that each lane is described by its own parameter.
func TestThreeHundredDestinationsFitCloudFormation(t *testing.T) {
	const n = 300
	cfg := testConfig(t, n, "ops@example.com")
	start := time.Now()
	h, outdir := synth(t, cfg)
	t.Logf("%d destinations: stack built, checked by cdk-nag and synthesized in %s", n, time.Since(start).Round(100*time.Millisecond))
	pages := (n + stack.LanesPerDashboard - 1) / stack.LanesPerDashboard
	if len(h.LaneStacks) != n || len(h.LaneDashboards) != pages-1 {
		t.Fatalf("got %d lane stacks and %d further dashboards, want %d and %d", len(h.LaneStacks), len(h.LaneDashboards), n, pages-1)
	}

	files, _ := filepath.Glob(filepath.Join(outdir, "*.template.json"))
	if len(files) != 1+n+pages-1 {
		t.Fatalf("got %d templates, want the parent, %d lanes and %d dashboard pages", len(files), n, pages-1)
	}
	docs := map[string]templateDoc{}
	var parent string
	largest := map[string]int{}
	var total int
	for _, f := range files {
		doc, size := readTemplate(t, f)
		name := filepath.Base(f)
		docs[name] = doc
		total += size
		if len(doc.Resources) >= maxResources || len(doc.Outputs) > maxOutputs || len(doc.Parameters) > maxParameters || len(doc.Mappings) > maxMappings || size > maxBytes {
			t.Errorf("%s: %d resources, %d outputs, %d parameters, %d mappings, %d bytes: over a CloudFormation quota",
				name, len(doc.Resources), len(doc.Outputs), len(doc.Parameters), len(doc.Mappings), size)
		}
		kind := "lane"
		switch {
		case !strings.Contains(name, ".nested."):
			kind, parent = "parent", name
		case strings.Contains(name, "Dashboard"):
			kind = "dashboard page"
		}
		if size > largest[kind] {
			largest[kind] = size
		}
		if kind == "parent" {
			t.Logf("parent %s: %d resources, %d outputs, %d parameters, %d bytes", name, len(doc.Resources), len(doc.Outputs), len(doc.Parameters), size)
		}
		if kind == "dashboard page" {
			t.Logf("dashboard page %s: %d resources, %d parameters, %d bytes", name, len(doc.Resources), len(doc.Parameters), size)
		}
	}
	t.Logf("largest lane template %d bytes, largest dashboard page %d bytes; %d templates, %d bytes in all", largest["lane"], largest["dashboard page"], len(files), total)

	p := docs[parent]
	if got := len(ofType(p.Resources, "AWS::CloudFormation::Stack")); got != n+pages-1 {
		t.Errorf("parent has %d nested stacks, want %d", got, n+pages-1)
	}
	if got := h.ParentResources(); got != len(p.Resources) {
		t.Errorf("ParentResources() = %d, the template has %d", got, len(p.Resources))
	}
	t.Logf("this configuration (3 sources, alarm e-mail) holds at most %d destinations", h.MostDestinations())
	if want := 4 + len(cfg.Sources); len(p.Outputs) != want {
		t.Errorf("parent has %d outputs, want %d: lanes must add none", len(p.Outputs), want)
	}

	// Every dashboard: widgets and metrics within CloudWatch's quotas.
	dashboards := 0
	for name, doc := range docs {
		for id, db := range ofType(doc.Resources, "AWS::CloudWatch::Dashboard") {
			dashboards++
			body := joined(db.Properties["DashboardBody"])
			var parsed struct {
				Widgets []struct {
					Properties struct{ Metrics []any }
				}
			}
			if err := json.Unmarshal([]byte(body), &parsed); err != nil {
				t.Fatalf("%s %s: dashboard body: %v", name, id, err)
			}
			metrics := 0
			for _, w := range parsed.Widgets {
				metrics += len(w.Properties.Metrics)
			}
			if len(parsed.Widgets) > maxWidgets || metrics > maxDashboardMetrics {
				t.Errorf("%s %s: %d widgets and %d metrics, over CloudWatch's %d and %d", name, id, len(parsed.Widgets), metrics, maxWidgets, maxDashboardMetrics)
			}
			if name == parent {
				t.Logf("overview dashboard: %d widgets, %d metrics, body about %d bytes", len(parsed.Widgets), metrics, len(body))
			}
		}
	}
	if dashboards != pages {
		t.Errorf("got %d dashboards, want %d (%d destinations each)", dashboards, pages, stack.LanesPerDashboard)
	}

	// Each lane: its resources and its index parameter; alarms in all.
	alarms := len(ofType(p.Resources, "AWS::CloudWatch::Alarm"))
	names := map[string]bool{}
	for i, d := range cfg.Destinations {
		doc := docs[laneTemplate(t, docs, h, i)]
		alarms += len(ofType(doc.Resources, "AWS::CloudWatch::Alarm"))
		_, param := only(t, doc.Resources, "AWS::SSM::Parameter")
		name := fmt.Sprint(param.Properties["Name"])
		if name != stack.LaneParameterName("Hookfan", d.Name) || names[name] {
			t.Errorf("%s: index parameter %q, want %q (once)", d.Name, name, stack.LaneParameterName("Hookfan", d.Name))
		}
		names[name] = true
		var value map[string]any
		if err := json.Unmarshal([]byte(joined(param.Properties["Value"])), &value); err != nil {
			t.Fatalf("%s: index value: %v", d.Name, err)
		}
		if keys := slices.Sorted(mapsKeys(value)); !slices.Equal(keys, slices.Sorted(slices.Values(stack.LaneIndexFields))) {
			t.Errorf("%s: index keys %v, want %v", d.Name, keys, stack.LaneIndexFields)
		}
		// The URL's scheme and host only: a path or query may carry a token.
		if value["destination"] != d.Name || value["url"] != d.URLHost() || value["urlSecretName"] != d.URLSecretName ||
			strings.Contains(fmt.Sprint(value["url"]), "/hooks") {
			t.Errorf("%s: index %v", d.Name, value)
		}
		if i == 0 || i == n-1 {
			checkLane(t, d, cfg, doc.Resources, true)
		}
	}
	t.Logf("%d alarms (%d per destination, 4 per source, 2 on ingest, 2 for the archive)", alarms, 4)
	checkCostCounts(t, cfg, docs)
	if alarms != 4*n+4*len(cfg.Sources)+2+2 {
		t.Errorf("got %d alarms, want %d", alarms, 4*n+4*len(cfg.Sources)+2+2)
	}

	// Saved queries: an event trail and a failures query per page, each
	// within a query's log groups, together reading every lane; one 401s.
	trails, failures, unauthorized, lanesRead := 0, 0, 0, 0
	for name, doc := range docs {
		for id, q := range ofType(doc.Resources, "AWS::Logs::QueryDefinition") {
			groups := len(asSlice(q.Properties["LogGroupNames"]))
			if groups > stack.MaxQueryLogGroups {
				t.Errorf("%s %s: %d log groups, more than a query reads", name, id, groups)
			}
			switch qn := fmt.Sprint(q.Properties["Name"]); {
			case strings.Contains(qn, "/event trail"):
				trails++
			case strings.Contains(qn, "/delivery failures"):
				failures++
				lanesRead += groups
			case strings.HasSuffix(qn, "/401s by source and code"):
				unauthorized++
			}
		}
	}
	if trails != pages || failures != pages || unauthorized != 1 || lanesRead != n {
		t.Errorf("queries: %d trails, %d failure queries reading %d lanes, %d 401 queries; want %d, %d reading %d, 1", trails, failures, lanesRead, unauthorized, pages, pages, n)
	}
	filtered := 0
	for _, d := range cfg.Destinations {
		if d.Filter.FilterPolicy() != "" {
			filtered++
		}
	}
	if filtered <= stack.SNSFilterPoliciesPerTopic {
		t.Errorf("the test should pass SNS's %d filter policies per topic (has %d) to show the warning", stack.SNSFilterPoliciesPerTopic, filtered)
	}
	_ = config.DefaultMaxConcurrency
}

// laneTemplate finds the template file of lane i.
func laneTemplate(t *testing.T, docs map[string]templateDoc, h *stack.Hookfan, i int) string {
	t.Helper()
	prefix := "Hookfan" + strings.ReplaceAll(*h.LaneStacks[i].Node().Id(), "-", "")
	for name := range docs {
		if strings.HasPrefix(name, prefix) && strings.HasSuffix(name, ".nested.template.json") && len(name) == len(prefix)+8+len(".nested.template.json") {
			return name
		}
	}
	t.Fatalf("no template for lane %d (%s…)", i, prefix)
	return ""
}
