package config

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/hookfan/hookfan/shared/message"
	"github.com/hookfan/hookfan/shared/provider"
)

// Ordering makes a destination an ordered lane: an SNS FIFO subscription
// to an SQS FIFO queue, delivering the events of one key in the order
// ingest accepted them (docs/configuration.md#ordering).
type Ordering struct {
	// Key says where an event carries its key: "body:<dotted.path>", a
	// string or number in a JSON body, or "header:<Name>", a request
	// header the provider sends.
	Key string `json:"key"`
}

// The two places an ordering key is read from.
const (
	KeyFromBody   = "body"
	KeyFromHeader = "header"
)

// OrderingKey is a parsed Ordering.Key.
type OrderingKey struct {
	// From is KeyFromBody or KeyFromHeader.
	From string
	// Path is the body key's dotted path, split (From == KeyFromBody).
	Path []string
	// Header is the header's name (From == KeyFromHeader).
	Header string
}

// ParseOrderingKey parses an ordering key spec, "body:<dotted.path>" or
// "header:<Name>". Its error says what is wrong and how to write it.
func ParseOrderingKey(spec string) (OrderingKey, error) {
	from, rest, ok := strings.Cut(spec, ":")
	switch {
	case !ok:
		return OrderingKey{}, fmt.Errorf("%q names no place; write \"body:<dotted.path>\" (a field of a JSON body, such as \"body:data.object.id\") or \"header:<Name>\" (such as \"header:X-Shopify-Order-Id\")", spec)
	case from == KeyFromBody:
		if !isFieldPath(rest) {
			return OrderingKey{}, fmt.Errorf("%q: %q is not a JSON field path; use dot-separated names of letters, digits, '_' or '-', such as \"body:data.object.id\"", spec, rest)
		}
		return OrderingKey{From: KeyFromBody, Path: strings.Split(rest, ".")}, nil
	case from == KeyFromHeader:
		if !isHeaderName(rest) {
			return OrderingKey{}, fmt.Errorf("%q: %q is not a valid HTTP header name; use the header's name, such as \"header:X-Shopify-Order-Id\"", spec, rest)
		}
		return OrderingKey{From: KeyFromHeader, Header: rest}, nil
	default:
		return OrderingKey{}, fmt.Errorf("%q reads from %q; the key comes from \"body:<dotted.path>\" or \"header:<Name>\"", spec, from)
	}
}

// Ordered reports whether the destination is an ordered (FIFO) lane.
func (d Destination) Ordered() bool { return d.Ordering != nil }

// AnyOrdered reports whether some destination is ordered: the stack then
// has the FIFO topic, and ingest publishes every event to it too.
func (c Config) AnyOrdered() bool {
	return slices.ContainsFunc(c.Destinations, Destination.Ordered)
}

// OrderingRoute is what ingest needs of one ordering key spec: the spec,
// and the sources whose events the ordered destinations using it receive
// (nil: every source). Ingest publishes an event to the FIFO topic once
// per route that takes its source, with the group id the route's key gives
// and the message attribute AttrOrderingKey set to Key; each ordered
// destination's subscription takes only its own key's copies.
type OrderingRoute struct {
	Key     string   `json:"key"`
	Sources []string `json:"sources,omitempty"`
}

// AttrOrderingKey is the FIFO topic's message attribute naming the key
// spec a copy was grouped by; an ordered subscription's filter policy
// matches its destination's spec (the message codec's name).
const AttrOrderingKey = message.AttrOrderingKey

// OrderingRoutes are the distinct key specs of the ordered destinations,
// in the order they first appear, each with the union of their sources
// (nil when one of them takes every source).
func (c Config) OrderingRoutes() []OrderingRoute {
	var out []OrderingRoute
	all := map[string]bool{}
	for _, d := range c.Destinations {
		if !d.Ordered() {
			continue
		}
		i := slices.IndexFunc(out, func(r OrderingRoute) bool { return r.Key == d.Ordering.Key })
		if i < 0 {
			out = append(out, OrderingRoute{Key: d.Ordering.Key})
			i = len(out) - 1
		}
		if len(d.Filter.Sources) == 0 || all[d.Ordering.Key] {
			all[d.Ordering.Key] = true
			out[i].Sources = nil
			continue
		}
		for _, s := range d.Filter.Sources {
			if !slices.Contains(out[i].Sources, s) {
				out[i].Sources = append(out[i].Sources, s)
			}
		}
	}
	return out
}

// Takes reports whether the route's destinations receive events of source.
func (r OrderingRoute) Takes(source string) bool {
	return len(r.Sources) == 0 || slices.Contains(r.Sources, source)
}

// OrderedSubscriptionFilter is the filter policy of an ordered
// destination's FIFO subscription (MessageAttributes scope): its
// destination's key spec, and the source and type filter as on a standard
// lane. A body filter is never given to SNS here (the scope holds one
// kind of policy, and the key's attribute needs this one): the deliver
// function applies it, acknowledging what it drops without a POST.
func (c *Config) OrderedSubscriptionFilter(d Destination) (policy string) {
	f := d.Filter
	f.Body = nil
	p := f.FilterPolicy()
	key := mustJSON(map[string][]string{AttrOrderingKey: {d.Ordering.Key}})
	if p == "" {
		return key
	}
	// {"source":…,"type":…} and {"ordering_key":[…]} merged: both are
	// objects of distinct keys.
	return p[:len(p)-1] + "," + key[1:]
}

// The FIFO limits of a group id and a deduplication id.
const (
	MaxGroupIDLength = 128
	MaxDedupIDLength = 128
)

// GroupID is the MessageGroupId of an event of source whose key has value
// (what the key's place holds, as text); "" value means the event carries
// no key, and all such events of a source share the group named by the
// source alone. A value is kept readable ("<source>:<value>") when the id
// fits 128 characters and holds only what group ids accept (letters,
// digits and ASCII punctuation); otherwise it is "<source>#" and the
// unpadded base64url SHA-256 of the value, so any value has one stable
// group. Source names hold no ':' or '#', so the three forms never meet.
func GroupID(source, value string) string {
	if value == "" {
		return source
	}
	id := source + ":" + value
	if len(id) <= MaxGroupIDLength && all(value, groupIDChar) {
		return id
	}
	sum := sha256.Sum256([]byte(value))
	return source + "#" + base64.RawURLEncoding.EncodeToString(sum[:])
}

// DedupID is the MessageDeduplicationId of an event's copy published for
// key spec: the same for a provider's retry of the event (same id), and
// distinct per spec, so the copies for two specs are not taken for one
// another. Base64url of a SHA-256: 43 characters.
func DedupID(eventID, spec string) string {
	sum := sha256.Sum256([]byte(spec + "\n" + eventID))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// groupIDChar accepts what SNS and SQS take in a MessageGroupId:
// alphanumerics and ASCII punctuation.
func groupIDChar(c byte) bool {
	return c > ' ' && c < 0x7f
}

// jsonBodied reports whether a source's bodies are JSON, so that a body
// key can be read in them: its kind's (provider.Kind.Body; a body that is
// not JSON where the provider only defaults to JSON carries no key and
// its event goes to the source's keyless group).
func (s Source) jsonBodied() bool {
	if k, ok := provider.Lookup(s.Verify.Kind); ok && k.Body != "" {
		return true
	}
	// The generic kinds read JSON when told where the id or type is.
	return s.Event.IDField != "" || s.Event.TypeField != ""
}

// validate checks the ordering block of a destination on its own.
func (o *Ordering) validate(p *problems, at string, d *Destination) {
	if _, err := ParseOrderingKey(o.Key); err != nil {
		p.add(at+".key", "%v", err)
	}
	if d.BatchWindowSeconds != 0 {
		p.add(at, "set with batchWindowSeconds = %d; the event source mapping of a FIFO queue takes no batching window, remove batchWindowSeconds (an ordered lane's batch fills from what is waiting)", d.BatchWindowSeconds)
	}
}

// validateOrdering checks each ordered destination against the sources
// it receives: a body key needs JSON bodies.
func (c *Config) validateOrdering(p *problems) {
	for i, d := range c.Destinations {
		if !d.Ordered() {
			continue
		}
		k, err := ParseOrderingKey(d.Ordering.Key)
		if err != nil || k.From != KeyFromBody {
			continue
		}
		for _, s := range c.Sources {
			if len(d.Filter.Sources) > 0 && !slices.Contains(d.Filter.Sources, s.Name) {
				continue
			}
			if !s.jsonBodied() {
				p.add(fmt.Sprintf("destinations[%d].ordering.key", i), "%q reads the body, but source %q (kind %q) is not known to send JSON; set the source's event.idField or event.typeField (ingest then reads its bodies as JSON), use a \"header:<Name>\" key, or limit filter.sources to JSON sources", d.Ordering.Key, s.Name, s.Verify.Kind)
			}
		}
	}
}

// EncodeOrderingRoutes renders routes for ingest's environment.
func EncodeOrderingRoutes(r []OrderingRoute) string { return mustJSON(r) }

// DecodeOrderingRoutes reads and checks the routes handed to ingest in its
// environment variable name.
func DecodeOrderingRoutes(name, data string) ([]OrderingRoute, error) {
	var r []OrderingRoute
	if err := decodeStrict([]byte(data), &r, name); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	var p problems
	for i, route := range r {
		if _, err := ParseOrderingKey(route.Key); err != nil {
			p.add(fmt.Sprintf("%s[%d].key", name, i), "%v", err)
		}
		for j, s := range route.Sources {
			if !isName(s) {
				p.add(fmt.Sprintf("%s[%d].sources[%d]", name, i, j), "%q is not a source name", s)
			}
		}
	}
	if len(r) == 0 {
		p.add(name, "no route; the stack renders one per ordering key spec when some destination is ordered")
	}
	if len(p) > 0 {
		return nil, errors.Join(p...)
	}
	return r, nil
}

// MaxFIFOReceiveCount is SQS's ceiling for a redrive policy's
// maxReceiveCount.
const MaxFIFOReceiveCount = 1000

// orderedReceiveCount is an ordered lane's maxReceiveCount. On a FIFO
// queue an event waiting behind a failed event of its key in a batch is
// handed back unsent, and SQS counts that receive all the same: an event
// shares a batch with at most Batch()-1 events before it in its group,
// each failing at most Attempts() times, so Attempts() × Batch() receives
// leave it its own attempts (an event given up, on its way to the DLQ,
// holds none back). The deliver function numbers an ordered
// lane's attempts by its delivery record, not by the receive count
// (shared/delivery/ordered.go), and releases a message whose attempts are
// spent until SQS moves it to the DLQ.
//
// A paced ordered lane gets SQS's ceiling instead: a message its rate limit
// holds in place spends a receive per hold, and the receives above
// Attempts() × Batch() are the pacing holds' room (PacingRoom; see
// docs/decisions.md#paced-ordered-lanes).
func (d Destination) orderedReceiveCount() int {
	if _, paced := d.Pace(); paced {
		return MaxFIFOReceiveCount
	}
	return min(MaxFIFOReceiveCount, d.Attempts()*d.ReceiveBatch())
}

// PacedOrderedRoom is the most receives a paced ordered lane's attempts
// may need (Attempts() × Batch()), so that at least half of
// MaxFIFOReceiveCount is left for pacing holds.
const PacedOrderedRoom = MaxFIFOReceiveCount / 2

// PacingRoom is how many receives of a paced ordered lane's message are
// its rate limit's to spend on holds: MaxFIFOReceiveCount less the
// receives its attempts may need; 0 on any other lane.
func (d Destination) PacingRoom() int {
	if _, paced := d.Pace(); !paced || !d.Ordered() {
		return 0
	}
	return MaxFIFOReceiveCount - d.Attempts()*d.ReceiveBatch()
}

// Value reads an event's key: the header's first value (headers gives a
// header's values by name, in any case), or the string or number at the
// body's path (a number as written). "" when the event carries none (the
// header absent or blank, the body not JSON, the path missing or holding
// another kind of value): the event then goes to its source's keyless
// group. headers may be nil for a body key.
func (k OrderingKey) Value(headers func(name string) []string, body []byte) string {
	if k.From == KeyFromHeader {
		if headers == nil {
			return ""
		}
		if v := headers(k.Header); len(v) > 0 {
			return strings.TrimSpace(v[0])
		}
		return ""
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var doc any
	if dec.Decode(&doc) != nil {
		return ""
	}
	for _, name := range k.Path {
		obj, ok := doc.(map[string]any)
		if !ok {
			return ""
		}
		if doc, ok = obj[name]; !ok {
			return ""
		}
	}
	switch v := doc.(type) {
	case string:
		return v
	case json.Number:
		return v.String()
	}
	return ""
}

// orderedRetention is an ordered lane's queue retention: SQS's 14 days,
// whatever the schedule. An event may wait behind earlier events of its
// key, each spending up to its whole schedule, before its own attempts
// begin, and an expired message is lost silently; retention costs
// nothing. (A FIFO queue's DLQ counts its own 14 days from the move, so
// the DLQ keeps the message its full retention after it.)
const orderedRetention = MaxRetention
