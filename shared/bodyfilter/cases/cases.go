// Package cases holds the body-filter cases that both the unit tests of
// shared/bodyfilter and the integration tests (SNS MessageBody filtering on
// the emulator) run: one policy per operator, with bodies that match it and
// bodies that do not. Keeping one table makes the two implementations agree
// by construction of the test, not by copy.
package cases

// Body is one message body and whether the operator's policy matches it.
type Body struct {
	Body  string
	Match bool
}

// Case is one operator's policy and its bodies.
type Case struct {
	Operator string
	Policy   string
	Bodies   []Body
	// Looser are bodies SNS's MessageBody filtering (as the emulator
	// implements it) lets through although Match refuses them: SNS matches
	// each key of an array of objects in any element, Match within one
	// element. Looser at SNS is safe: the deliver function filters the
	// rest. The reverse (SNS dropping a body Match accepts) must never
	// happen.
	Looser []string
}

// Operators has one case per supported operator, plus nesting and arrays.
var Operators = []Case{
	{"exact string", `{"status": ["paid", "refunded"]}`, []Body{
		{`{"status": "paid"}`, true},
		{`{"status": "refunded", "amount": 1}`, true},
		{`{"status": "open"}`, false},
		{`{"status": "Paid"}`, false},
		{`{"amount": 1}`, false},
		{`{"status": ["open", "paid"]}`, true},
	}, nil},
	{"exact number", `{"amount": [100, 250.5]}`, []Body{
		{`{"amount": 100}`, true},
		{`{"amount": 100.0}`, true},
		{`{"amount": 250.5}`, true},
		{`{"amount": 101}`, false},
		{`{"amount": "100"}`, false},
		{`{"other": 100}`, false},
	}, nil},
	{"prefix", `{"id": [{"prefix": "pi_"}]}`, []Body{
		{`{"id": "pi_123"}`, true},
		{`{"id": "pi_"}`, true},
		{`{"id": "ch_123"}`, false},
		{`{"id": "PI_123"}`, false},
		{`{"name": "pi_123"}`, false},
	}, nil},
	{"numeric range", `{"amount": [{"numeric": [">=", 1000, "<", 5000]}]}`, []Body{
		{`{"amount": 1000}`, true},
		{`{"amount": 4999.99}`, true},
		{`{"amount": 5000}`, false},
		{`{"amount": 999}`, false},
		{`{"other": 2000}`, false},
	}, nil},
	{"numeric comparison", `{"amount": [{"numeric": [">", 0]}], "fee": [{"numeric": ["<=", 3]}]}`, []Body{
		{`{"amount": 1, "fee": 3}`, true},
		{`{"amount": 0.5, "fee": -1}`, true},
		{`{"amount": 0, "fee": 1}`, false},
		{`{"amount": 5, "fee": 3.5}`, false},
		{`{"amount": 5}`, false},
	}, nil},
	{"numeric equals", `{"count": [{"numeric": ["=", 3]}]}`, []Body{
		{`{"count": 3}`, true},
		{`{"count": 3.0}`, true},
		{`{"count": 4}`, false},
	}, nil},
	{"exists true", `{"refund": [{"exists": true}]}`, []Body{
		{`{"refund": {"id": "re_1"}}`, true},
		{`{"refund": "re_1"}`, true},
		{`{"refund": null}`, true},
		{`{"charge": "ch_1"}`, false},
	}, nil},
	{"exists false", `{"refund": [{"exists": false}]}`, []Body{
		{`{"charge": "ch_1"}`, true},
		{`{"refund": "re_1"}`, false},
	}, nil},
	{"anything-but strings", `{"currency": [{"anything-but": ["usd", "eur"]}]}`, []Body{
		{`{"currency": "gbp"}`, true},
		{`{"currency": "usd"}`, false},
		{`{"currency": "eur"}`, false},
		{`{"amount": 1}`, false},
	}, nil},
	{"anything-but numbers", `{"code": [{"anything-but": [200, 204]}]}`, []Body{
		{`{"code": 500}`, true},
		{`{"code": 200}`, false},
		{`{"code": 204}`, false},
		{`{"status": 500}`, false},
	}, nil},
	{"anything-but prefix", `{"type": [{"anything-but": {"prefix": "test."}}]}`, []Body{
		{`{"type": "invoice.paid"}`, true},
		{`{"type": "test.ping"}`, false},
		{`{"type": 5}`, false},
		{`{"kind": "invoice.paid"}`, false},
	}, nil},
	{"nested keys", `{"data": {"object": {"status": ["succeeded"], "amount": [{"numeric": [">=", 1000]}]}}}`, []Body{
		{`{"data": {"object": {"status": "succeeded", "amount": 1500}}}`, true},
		{`{"data": {"object": {"status": "succeeded", "amount": 999}}}`, false},
		{`{"data": {"object": {"status": "failed", "amount": 1500}}}`, false},
		{`{"data": {"status": "succeeded", "amount": 1500}}`, false},
		{`{"object": {"status": "succeeded", "amount": 1500}}`, false},
		{`{"data": null}`, false},
	}, nil},
	{"array of objects", `{"items": {"sku": ["A-1"], "qty": [{"numeric": [">", 1]}]}}`, []Body{
		{`{"items": [{"sku": "B-2", "qty": 5}, {"sku": "A-1", "qty": 2}]}`, true},
		{`{"items": [{"sku": "A-1", "qty": 1}, {"sku": "B-2", "qty": 5}]}`, false},
		{`{"items": []}`, false},
	}, []string{`{"items": [{"sku": "A-1", "qty": 1}, {"sku": "B-2", "qty": 5}]}`}},
}
