package config

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func ordered(sources, dests string) string {
	return `{"sources": [` + sources + `], "destinations": [` + dests + `]}`
}

const (
	stripeSrc = `{"name": "stripe", "verify": {"kind": "stripe", "secretName": "s"}}`
	hmacSrc   = `{"name": "plain", "verify": {"kind": "hmac", "secretName": "p", "header": "X-Sig"}}`
	hmacJSON  = `{"name": "jsonhmac", "verify": {"kind": "hmac", "secretName": "p", "header": "X-Sig"}, "event": {"idField": "id"}}`
)

func TestOrderingValid(t *testing.T) {
	for _, cfg := range []string{
		ordered(stripeSrc, `{"name": "d", "url": "https://d.example.com", "ordering": {"key": "body:data.object.id"}}`),
		ordered(stripeSrc+","+hmacSrc, `{"name": "d", "url": "https://d.example.com", "ordering": {"key": "header:X-Order-Id"}}`),
		ordered(stripeSrc+","+hmacSrc, `{"name": "d", "url": "https://d.example.com", "filter": {"sources": ["stripe"]}, "ordering": {"key": "body:data.id"}}`),
		ordered(hmacJSON, `{"name": "d", "url": "https://d.example.com", "ordering": {"key": "body:order.id"}}`),
		// A body filter and a pause hold order (docs/configuration.md#ordering).
		ordered(stripeSrc, `{"name": "d", "url": "https://d.example.com", "ordering": {"key": "body:data.id"},
		  "filter": {"body": {"type": ["charge.refunded"]}}, "pause": {"afterFailures": 3}}`),
	} {
		if _, err := Parse([]byte(cfg)); err != nil {
			t.Errorf("Parse(%s): %v", cfg, err)
		}
	}
}

func TestOrderingInvalid(t *testing.T) {
	tests := []struct {
		name, cfg string
		want      []string
	}{
		{"no place", ordered(stripeSrc, `{"name": "d", "url": "https://d.example.com", "ordering": {"key": "data.id"}}`), []string{
			`destinations[0].ordering.key: "data.id" names no place; write "body:<dotted.path>" (a field of a JSON body, such as "body:data.object.id") or "header:<Name>" (such as "header:X-Shopify-Order-Id")`}},
		{"bad path", ordered(stripeSrc, `{"name": "d", "url": "https://d.example.com", "ordering": {"key": "body:data..id"}}`), []string{
			`destinations[0].ordering.key: "body:data..id": "data..id" is not a JSON field path; use dot-separated names of letters, digits, '_' or '-', such as "body:data.object.id"`}},
		{"bad header", ordered(stripeSrc, `{"name": "d", "url": "https://d.example.com", "ordering": {"key": "header:X Order"}}`), []string{
			`destinations[0].ordering.key: "header:X Order": "X Order" is not a valid HTTP header name; use the header's name, such as "header:X-Shopify-Order-Id"`}},
		{"unknown place", ordered(stripeSrc, `{"name": "d", "url": "https://d.example.com", "ordering": {"key": "query:id"}}`), []string{
			`destinations[0].ordering.key: "query:id" reads from "query"; the key comes from "body:<dotted.path>" or "header:<Name>"`}},
		{"body key on a non-JSON source", ordered(stripeSrc+","+hmacSrc, `{"name": "d", "url": "https://d.example.com", "ordering": {"key": "body:id"}}`), []string{
			`destinations[0].ordering.key: "body:id" reads the body, but source "plain" (kind "hmac") is not known to send JSON; set the source's event.idField or event.typeField (ingest then reads its bodies as JSON), use a "header:<Name>" key, or limit filter.sources to JSON sources`}},
		{"batching window", ordered(stripeSrc, `{"name": "d", "url": "https://d.example.com", "batchWindowSeconds": 5, "ordering": {"key": "body:id"}}`), []string{
			`destinations[0].ordering: set with batchWindowSeconds = 5; the event source mapping of a FIFO queue takes no batching window, remove batchWindowSeconds (an ordered lane's batch fills from what is waiting)`}},
		{"unknown field", ordered(stripeSrc, `{"name": "d", "url": "https://d.example.com", "ordering": {"key": "body:id", "group": "x"}}`), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.cfg))
			if err == nil {
				t.Fatal("Parse accepted it")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks\n  %s\ngot\n  %v", w, err)
				}
			}
		})
	}
}

func TestOrderingRoutesAndFilter(t *testing.T) {
	cfg, err := Parse([]byte(ordered(stripeSrc+","+hmacJSON, `
	  {"name": "a", "url": "https://a.example.com", "filter": {"sources": ["stripe"], "types": ["charge.*"]}, "ordering": {"key": "body:data.id"}},
	  {"name": "b", "url": "https://b.example.com", "filter": {"sources": ["jsonhmac"]}, "ordering": {"key": "body:data.id"}},
	  {"name": "c", "url": "https://c.example.com", "ordering": {"key": "header:X-Key"}},
	  {"name": "plain", "url": "https://p.example.com"}`)))
	if err != nil {
		t.Fatal(err)
	}
	if !cfg.AnyOrdered() || cfg.Destinations[3].Ordered() {
		t.Errorf("AnyOrdered %t, plain Ordered %t", cfg.AnyOrdered(), cfg.Destinations[3].Ordered())
	}
	want := []OrderingRoute{{Key: "body:data.id", Sources: []string{"stripe", "jsonhmac"}}, {Key: "header:X-Key"}}
	if diff := cmp.Diff(want, cfg.OrderingRoutes()); diff != "" {
		t.Errorf("OrderingRoutes (-want +got):\n%s", diff)
	}
	if got, want := cfg.OrderedSubscriptionFilter(cfg.Destinations[0]), `{"source":["stripe"],"type":[{"prefix":"charge."}],"ordering_key":["body:data.id"]}`; got != want {
		t.Errorf("OrderedSubscriptionFilter(a) = %s, want %s", got, want)
	}
	if got, want := cfg.OrderedSubscriptionFilter(cfg.Destinations[2]), `{"ordering_key":["header:X-Key"]}`; got != want {
		t.Errorf("OrderedSubscriptionFilter(c) = %s, want %s", got, want)
	}
	routes, err := DecodeOrderingRoutes("HOOKFAN_ORDERING_ROUTES", EncodeOrderingRoutes(cfg.OrderingRoutes()))
	if err != nil || !cmp.Equal(routes, want) {
		t.Errorf("DecodeOrderingRoutes(Encode) = %v, %v", routes, err)
	}
	for _, bad := range []string{`[]`, `[{"key": "nope"}]`, `[{"key": "body:a", "sources": ["Bad Name"]}]`, `[{"key": "body:a", "extra": 1}]`, `{`} {
		if _, err := DecodeOrderingRoutes("HOOKFAN_ORDERING_ROUTES", bad); err == nil || !strings.Contains(err.Error(), "HOOKFAN_ORDERING_ROUTES") {
			t.Errorf("DecodeOrderingRoutes(%s) = %v, want an error naming %s", bad, err, "HOOKFAN_ORDERING_ROUTES")
		}
	}
}

func TestGroupID(t *testing.T) {
	long := strings.Repeat("x", 130)
	tests := []struct{ source, value, want string }{
		{"stripe", "", "stripe"},
		{"stripe", "pi_123", "stripe:pi_123"},
		{"shop", "123", "shop:123"},
		{"stripe", "with space", ""},
		{"stripe", long, ""},
	}
	for _, tt := range tests {
		got := GroupID(tt.source, tt.value)
		if tt.value == "with space" || tt.value == long {
			if !strings.HasPrefix(got, "stripe#") || len(got) != len("stripe#")+43 {
				t.Errorf("GroupID(%q, %q) = %q, want stripe# and 43 characters", tt.source, tt.value, got)
			}
			continue
		}
		if got != tt.want {
			t.Errorf("GroupID(%q, %q) = %q, want %q", tt.source, tt.value, got, tt.want)
		}
	}
	first, again, other := DedupID("e1", "body:a"), DedupID("e1", "body:a"), DedupID("e1", "body:b")
	if first == other || first != again {
		t.Errorf("DedupID is not one per (event, spec): %q, %q again, %q for another spec", first, again, other)
	}
}

// FuzzGroupID: every value gets a group id SNS and SQS accept, and one
// value one id.
func FuzzGroupID(f *testing.F) {
	for _, s := range []string{"", "pi_1", "ü", strings.Repeat("a", 200), "a b", "\x00", "k:v#w"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		id := GroupID("a-source", v)
		if len(id) == 0 || len(id) > MaxGroupIDLength || !all(id, groupIDChar) {
			t.Fatalf("GroupID(%q) = %q: not a valid group id", v, id)
		}
		if id != GroupID("a-source", v) {
			t.Fatal("not stable")
		}
		if v != "" && id == GroupID("a-source", "") {
			t.Fatalf("GroupID(%q) is the keyless group", v)
		}
	})
}

// FuzzParseOrderingKey: a parsed key is one validation accepts and
// reads back the same way.
func FuzzParseOrderingKey(f *testing.F) {
	for _, s := range []string{"body:data.id", "header:X-Id", "body:", "header:", "x", "body:a..b", "query:x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		k, err := ParseOrderingKey(spec)
		if err != nil {
			return
		}
		switch k.From {
		case KeyFromBody:
			if spec != "body:"+strings.Join(k.Path, ".") {
				t.Fatalf("%q parsed to %v", spec, k)
			}
		case KeyFromHeader:
			if spec != "header:"+k.Header {
				t.Fatalf("%q parsed to %v", spec, k)
			}
		default:
			t.Fatalf("%q parsed to %v", spec, k)
		}
	})
}

// TestOrderedDerivedValues: an ordered lane keeps messages 14 days and
// leaves its redrive count room for waiting receives.
func TestOrderedDerivedValues(t *testing.T) {
	d := Destination{Name: "d", URL: "https://d.example.com", Ordering: &Ordering{Key: "body:id"}, BatchSize: 4}
	std := d
	std.Ordering = nil
	if d.Retention() != MaxRetention || std.Retention() >= MaxRetention {
		t.Errorf("retention %s ordered, %s standard", d.Retention(), std.Retention())
	}
	if got, want := d.MaxReceiveCount(), d.Attempts()*4; got != want || std.MaxReceiveCount() != std.Attempts() {
		t.Errorf("maxReceiveCount %d ordered (want %d), %d standard", got, want, std.MaxReceiveCount())
	}
}
