// Package cases holds the body-filter cases that the unit tests of
// shared/bodyfilter and the integration tests (through the local stack)
// both run: one policy per operator, with bodies that match it and bodies
// that do not, arrays under every operator.
//
// The expected results come from SNS's documentation (the Amazon SNS
// Developer Guide, "Amazon SNS message filtering" and the pages under it),
// never from an emulator: moto 5.2.1 matches "exists": true on a null
// value and crashes on a prefix against an array (docs/local.md). Each
// case names the section its rules come from; a comment marks a body whose
// result is our reading where the documentation is silent, and says which.
package cases

// Body is one message body and whether the operator's policy matches it.
type Body struct {
	Body  string
	Match bool
}

// Case is one operator's policy and its bodies.
type Case struct {
	Operator string
	// Doc is the section of SNS's documentation the bodies' results
	// follow.
	Doc    string
	Policy string
	Bodies []Body
	// Absent is whether the policy matches a body (with other properties)
	// holding none of the policy's keys.
	Absent bool
}

// Operators has one case per supported operator, plus nesting and arrays.
var Operators = []Case{
	// Exact matching compares strings case-sensitively ("Filter policy
	// constraints": string matching); a key matches when at least one of
	// the body's values at it matches one listed ("Subscription filter
	// policies"), which the example policies show on a body array.
	{"exact string", "String value matching › Exact matching", `{"status": ["paid", "refunded"]}`, []Body{
		{`{"status": "paid"}`, true},
		{`{"status": "refunded", "amount": 1}`, true},
		{`{"status": "open"}`, false},
		{`{"status": "Paid"}`, false},
		{`{"amount": 1}`, false},
		{`{"status": ["open", "paid"]}`, true},
		{`{"status": ["open", "Paid"]}`, false},
		{`{"status": []}`, false},
		{`{"status": null}`, false},
		{`{"status": {"value": "paid"}}`, false},
	}, false},
	// A number is compared as a number (3.015e2 equals 301.5 in the
	// documentation's example), within ±1e9 and to five decimal places
	// ("Filter policy constraints": numeric matching).
	{"exact number", "Numeric value matching › Exact matching", `{"amount": [100, 250.5]}`, []Body{
		{`{"amount": 100}`, true},
		{`{"amount": 100.0}`, true},
		{`{"amount": 1e2}`, true},
		{`{"amount": 250.5}`, true},
		{`{"amount": 101}`, false},
		{`{"amount": "100"}`, false},
		{`{"other": 100}`, false},
		{`{"amount": [1, 100]}`, true},
		{`{"amount": [101, 99]}`, false},
		// Our reading of "five digits of accuracy after the decimal point":
		// what differs past the fifth decimal is equal.
		{`{"amount": 100.000001}`, true},
		{`{"amount": 100.00001}`, false},
	}, false},
	// A prefix matches a string value beginning with it, case-sensitively;
	// an array matches when one element does. The array bodies are the
	// ones moto 5.2.1 answers with a 500.
	{"prefix", "String value matching › Prefix matching", `{"id": [{"prefix": "pi_"}]}`, []Body{
		{`{"id": "pi_123"}`, true},
		{`{"id": "pi_"}`, true},
		{`{"id": "ch_123"}`, false},
		{`{"id": "PI_123"}`, false},
		{`{"name": "pi_123"}`, false},
		{`{"id": ["ch_1", "pi_9"]}`, true},
		{`{"id": ["ch_1", "cus_9"]}`, false},
		{`{"id": 5}`, false},
	}, false},
	// A suffix matches a string value ending with it, case-sensitively.
	{"suffix", "String value matching › Suffix matching", `{"email": [{"suffix": "@example.com"}]}`, []Body{
		{`{"email": "ops@example.com"}`, true},
		{`{"email": "ops@example.org"}`, false},
		{`{"email": "ops@EXAMPLE.COM"}`, false},
		{`{"email": ["a@example.org", "b@example.com"]}`, true},
		{`{"email": ["a@example.org"]}`, false},
		{`{"mail": "ops@example.com"}`, false},
	}, false},
	// equals-ignore-case matches a string value equal to it but for case.
	{"equals-ignore-case", "String value matching › Equals-ignore-case matching", `{"status": [{"equals-ignore-case": "paid"}]}`, []Body{
		{`{"status": "paid"}`, true},
		{`{"status": "PAID"}`, true},
		{`{"status": "Paid "}`, false},
		{`{"status": ["open", "Paid"]}`, true},
		{`{"status": ["open"]}`, false},
		{`{"status": 1}`, false},
	}, false},
	{"numeric range", "Numeric value matching › Value range matching", `{"amount": [{"numeric": [">=", 1000, "<", 5000]}]}`, []Body{
		{`{"amount": 1000}`, true},
		{`{"amount": 4999.99}`, true},
		{`{"amount": 5000}`, false},
		{`{"amount": 999}`, false},
		{`{"other": 2000}`, false},
		{`{"amount": [10, 2000]}`, true},
		{`{"amount": [10, 6000]}`, false},
		{`{"amount": "2000"}`, false},
	}, false},
	{"numeric comparison", "Numeric value matching › Value range matching", `{"amount": [{"numeric": [">", 0]}], "fee": [{"numeric": ["<=", 3]}]}`, []Body{
		{`{"amount": 1, "fee": 3}`, true},
		{`{"amount": 0.5, "fee": -1}`, true},
		{`{"amount": 0, "fee": 1}`, false},
		{`{"amount": 5, "fee": 3.5}`, false},
		{`{"amount": 5}`, false},
		{`{"amount": [0, 2], "fee": [5, 1]}`, true},
		{`{"amount": [0, -2], "fee": 1}`, false},
		// Outside the ±1e9 SNS compares ("Filter policy constraints"):
		// our reading is that such a value compares with no number.
		{`{"amount": 2000000000, "fee": 1}`, false},
	}, false},
	{"numeric equals", "Numeric value matching › Exact matching", `{"count": [{"numeric": ["=", 3]}]}`, []Body{
		{`{"count": 3}`, true},
		{`{"count": 3.0}`, true},
		{`{"count": 3e0}`, true},
		{`{"count": 4}`, false},
		{`{"count": [4, 3]}`, true},
		{`{"count": [4, 5]}`, false},
		{`{"count": 3.000001}`, true},
	}, false},
	// "exists": true needs the key to hold a non-null, non-empty value, and
	// exists works on leaf nodes only: an object is no leaf.
	{"exists true", "Key matching", `{"refund": [{"exists": true}]}`, []Body{
		{`{"refund": "re_1"}`, true},
		{`{"refund": 0}`, true},
		{`{"refund": false}`, true},
		{`{"refund": ["re_1"]}`, true},
		{`{"refund": null}`, false},
		{`{"refund": ""}`, false},
		{`{"refund": []}`, false},
		{`{"refund": {"id": "re_1"}}`, false},
		{`{"charge": "ch_1"}`, false},
		// Our reading: an array holds a value when an element is one.
		{`{"refund": [null, ""]}`, false},
		{`{"refund": [null, "re_1"]}`, true},
	}, false},
	// "exists": false matches where the property is not there: our reading
	// counts a key holding no value (null, "", []) as not there, as
	// "exists": true does not count it as there. An object is no leaf:
	// neither holds. A body with no properties matches nothing (the page's
	// note: exists false needs at least one property present).
	{"exists false", "Key matching", `{"refund": [{"exists": false}]}`, []Body{
		{`{"charge": "ch_1"}`, true},
		{`{"refund": "re_1"}`, false},
		{`{"refund": ["re_1"]}`, false},
		{`{"refund": null}`, true},
		{`{"refund": ""}`, true},
		{`{"refund": []}`, true},
		{`{"refund": {"id": "re_1"}}`, false},
		{`{}`, false},
	}, true},
	// anything-but matches a value none of the listed ones; the body array
	// ["rugby", "baseball"] matches because it holds a value not listed
	// (the page's example). The page also says String.Array attributes
	// match only when no element is listed: the two disagree, which is why
	// anything-but never goes to SNS (bodyfilter.Filter.SNSSafe).
	{"anything-but strings", "String value matching › Anything-but matching", `{"currency": [{"anything-but": ["usd", "eur"]}]}`, []Body{
		{`{"currency": "gbp"}`, true},
		{`{"currency": "usd"}`, false},
		{`{"currency": "eur"}`, false},
		{`{"amount": 1}`, false},
		{`{"currency": ["usd", "gbp"]}`, true},
		{`{"currency": ["usd", "eur"]}`, false},
		{`{"currency": []}`, false},
		// Our reading: string anything-but compares strings only.
		{`{"currency": 5}`, false},
		{`{"currency": null}`, false},
	}, false},
	// The body [100, 50] matches anything-but [100, 500] (the page's
	// example): it holds a value not listed.
	{"anything-but numbers", "Numeric value matching › Anything-but matching", `{"code": [{"anything-but": [200, 204]}]}`, []Body{
		{`{"code": 500}`, true},
		{`{"code": 200}`, false},
		{`{"code": 204}`, false},
		{`{"status": 500}`, false},
		{`{"code": [200, 500]}`, true},
		{`{"code": [200, 204]}`, false},
		{`{"code": "500"}`, false},
		{`{"code": 200.000001}`, false},
	}, false},
	{"anything-but prefix", "String value matching › Anything-but matching (with a prefix)", `{"type": [{"anything-but": {"prefix": "test."}}]}`, []Body{
		{`{"type": "invoice.paid"}`, true},
		{`{"type": "test.ping"}`, false},
		{`{"type": 5}`, false},
		{`{"kind": "invoice.paid"}`, false},
		{`{"type": ["test.ping", "invoice.paid"]}`, true},
		{`{"type": ["test.a", "test.b"]}`, false},
	}, false},
	// Payload-based filtering nests keys through the body's objects; the
	// conditions at a leaf are the ones above.
	{"nested keys", "Filter policy constraints › payload-based filtering", `{"data": {"object": {"status": ["succeeded"], "amount": [{"numeric": [">=", 1000]}]}}}`, []Body{
		{`{"data": {"object": {"status": "succeeded", "amount": 1500}}}`, true},
		{`{"data": {"object": {"status": ["failed", "succeeded"], "amount": [1, 1500]}}}`, true},
		{`{"data": {"object": {"status": "succeeded", "amount": 999}}}`, false},
		{`{"data": {"object": {"status": "failed", "amount": 1500}}}`, false},
		{`{"data": {"status": "succeeded", "amount": 1500}}`, false},
		{`{"object": {"status": "succeeded", "amount": 1500}}`, false},
		{`{"data": null}`, false},
	}, false},
	// Under an array of objects the documentation shows no rule; Hookfan
	// matches nested keys within one element, the strictest reading, and
	// so never gives SNS a policy it could read more strictly.
	{"array of objects", "Filter policy constraints › payload-based filtering", `{"items": {"sku": ["A-1"], "qty": [{"numeric": [">", 1]}]}}`, []Body{
		{`{"items": [{"sku": "B-2", "qty": 5}, {"sku": "A-1", "qty": 2}]}`, true},
		{`{"items": [{"sku": "A-1", "qty": 1}, {"sku": "B-2", "qty": 5}]}`, false},
		{`{"items": [{"sku": ["B-2", "A-1"], "qty": [0, 3]}]}`, true},
		{`{"items": []}`, false},
	}, false},
	// A nested "exists": false holds where the parent is missing or holds
	// no object: the property is not in the body ("Key matching").
	{"nested exists false", "Key matching", `{"data": {"refund": [{"exists": false}]}}`, []Body{
		{`{"other": 1}`, true},
		{`{"data": null}`, true},
		{`{"data": {"refund": null}}`, true},
		{`{"data": {"refund": "re_1"}}`, false},
		{`{"data": [{"refund": "re_1"}]}`, false},
		{`{"data": [{"refund": "re_1"}, {"charge": "ch_1"}]}`, true},
	}, true},
}
