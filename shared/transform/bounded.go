package transform

import (
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/itchyny/gojq"
)

// How an expression is bounded in memory (budget.go says how much).
//
// gojq checks its context before each instruction, and so each step is
// charged (evaluation.Done); but one instruction can call an operator or a
// builtin that builds a string, an array or an object of any size in one
// go ("x" * 4e8; tojson of an array that holds one large array many
// times), with no check until it returns. So before the expression is
// compiled, its syntax tree is rewritten: each such operator and builtin
// is preceded by a check, a function registered with gojq.WithFunction
// that receives the operands and the evaluation (as the hidden variable
// $__hf), charges what the operation is about to build, and fails past
// the budget; the operation itself is then gojq's own:
//
//	L + R          → _hf_op(L; R; "+"; $__hf) | .[0] + .[1]
//	"a\(x)"        → "a" + (x | _hf_tostring($__hf))
//	tojson         → _hf_tojson($__hf)            (encode.go, bounded)
//	join($s)       → _hf_pre("join"; $__hf) | join($s)  (and the like)
//	L = R, L |= f  → (reduce path(L) … _hf_path …) as $__hf_ | L = R
//
// An expression may not redefine the names this rewrites, nor use the
// names it adds ($__hf…, _hf_…): Compile refuses it.

// budgetVar is the hidden variable that carries the evaluation.
const budgetVar = "$__hf"

// reservedPrefixes are the names of the rewrite's own functions and
// variables.
var reservedPrefixes = []string{"_hf_", "$__hf"}

// checkedBuiltins are the builtins preceded by _hf_pre (name/arity).
var checkedBuiltins = map[string]bool{
	"join/1": true, "ascii_downcase/0": true, "ascii_upcase/0": true, "explode/0": true, "implode/0": true,
	"split/1": true, "add/0": true, "flatten/0": true, "flatten/1": true,
	"sort/0": true, "unique/0": true, "min/0": true, "max/0": true, "group_by/1": true, "unique_by/1": true,
	"sort_by/1": true, "min_by/1": true, "max_by/1": true, "contains/1": true, "inside/1": true,
	"indices/1": true, "index/1": true, "rindex/1": true, "bsearch/1": true,
	"test/1": true, "test/2": true, "match/1": true, "match/2": true, "capture/1": true, "capture/2": true,
	"scan/1": true, "scan/2": true, "split/2": true, "splits/1": true, "splits/2": true,
	"sub/2": true, "sub/3": true, "gsub/2": true, "gsub/3": true,
}

// argChecked are the checked builtins whose check needs their first
// argument (a separator, a needle, a regular expression): it is wrapped,
// so that an argument yielding several values still runs the builtin once
// per value.
var argChecked = map[string]bool{
	"join/1": true, "split/1": true, "indices/1": true, "index/1": true, "rindex/1": true,
	"contains/1": true, "inside/1": true, "bsearch/1": true,
	"test/1": true, "test/2": true, "match/1": true, "match/2": true, "capture/1": true, "capture/2": true,
	"scan/1": true, "scan/2": true, "split/2": true, "splits/1": true, "splits/2": true,
	"sub/2": true, "sub/3": true, "gsub/2": true, "gsub/3": true,
}

// replacedBuiltins are replaced by a bounded function of the rewrite.
var replacedBuiltins = map[string]string{
	"tostring/0": "_hf_tostring", "tojson/0": "_hf_tojson", "fromjson/0": "_hf_fromjson",
}

// rewrite bounds q in place (see above), or says why it cannot.
func rewrite(q *gojq.Query) error {
	r := &rewriter{}
	if err := r.query(q); err != nil {
		return err
	}
	return nil
}

type rewriter struct{}

func budgetRef() *gojq.Query { return funcQ(budgetVar) }

func funcQ(name string, args ...*gojq.Query) *gojq.Query {
	return &gojq.Query{Term: &gojq.Term{Type: gojq.TermTypeFunc, Func: &gojq.Func{Name: name, Args: args}}}
}

func strQ(s string) *gojq.Query {
	return &gojq.Query{Term: &gojq.Term{Type: gojq.TermTypeString, Str: &gojq.String{Str: s}}}
}

func pipe(l, r *gojq.Query) *gojq.Query { return &gojq.Query{Left: l, Op: gojq.OpPipe, Right: r} }

func indexQ(i int) *gojq.Query {
	return &gojq.Query{Term: &gojq.Term{Type: gojq.TermTypeIndex, Index: &gojq.Index{Start: &gojq.Query{Term: &gojq.Term{Type: gojq.TermTypeNumber, Number: fmt.Sprint(i)}}}}}
}

// wrapQ makes a term of a query.
func wrapQ(q *gojq.Query) *gojq.Term { return &gojq.Term{Type: gojq.TermTypeQuery, Query: q} }

// clone copies a rewritten query (the compiler changes some nodes as it
// compiles them, so none may be used twice).
func clone(q *gojq.Query) (*gojq.Query, error) {
	return gojq.Parse(q.String())
}

func reserved(name string) bool {
	for _, p := range reservedPrefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

func (r *rewriter) query(q *gojq.Query) error {
	if q == nil {
		return nil
	}
	for _, fd := range q.FuncDefs {
		key := fmt.Sprintf("%s/%d", fd.Name, len(fd.Args))
		if _, ok := replacedBuiltins[key]; ok || checkedBuiltins[key] || reserved(fd.Name) {
			return fmt.Errorf("defines %s, a name the transform keeps for its bounded builtins; use another name", key)
		}
		for _, a := range fd.Args {
			if reserved(a) {
				return fmt.Errorf("uses the reserved name %s; use another name", a)
			}
		}
		if err := r.query(fd.Body); err != nil {
			return err
		}
	}
	for _, p := range q.Patterns {
		if err := r.pattern(p); err != nil {
			return err
		}
	}
	if q.Term != nil {
		return r.term(q.Term)
	}
	if err := r.query(q.Left); err != nil {
		return err
	}
	if err := r.query(q.Right); err != nil {
		return err
	}
	switch q.Op {
	case gojq.OpAdd, gojq.OpSub, gojq.OpMul, gojq.OpDiv, gojq.OpMod,
		gojq.OpEq, gojq.OpNe, gojq.OpLt, gojq.OpLe, gojq.OpGt, gojq.OpGe:
		// _hf_op(L; R; op; $__hf) | .[0] op .[1]
		check := funcQ("_hf_op", q.Left, q.Right, strQ(q.Op.String()), budgetRef())
		*q = *pipe(check, &gojq.Query{Left: indexQ(0), Op: q.Op, Right: indexQ(1)})
	case gojq.OpUpdateAdd, gojq.OpUpdateSub, gojq.OpUpdateMul, gojq.OpUpdateDiv, gojq.OpUpdateMod, gojq.OpUpdateAlt:
		// L op= R is R as $x | L |= (. op $x), as gojq compiles it, with
		// the operator checked.
		ops := map[gojq.Operator]gojq.Operator{gojq.OpUpdateAdd: gojq.OpAdd, gojq.OpUpdateSub: gojq.OpSub,
			gojq.OpUpdateMul: gojq.OpMul, gojq.OpUpdateDiv: gojq.OpDiv, gojq.OpUpdateMod: gojq.OpMod, gojq.OpUpdateAlt: gojq.OpAlt}
		op := ops[q.Op]
		update := &gojq.Query{Left: &gojq.Query{Term: &gojq.Term{Type: gojq.TermTypeIdentity}}, Op: op, Right: funcQ("$__hf_x")}
		if op != gojq.OpAlt {
			check := funcQ("_hf_op", update.Left, update.Right, strQ(op.String()), budgetRef())
			update = pipe(check, &gojq.Query{Left: indexQ(0), Op: op, Right: indexQ(1)})
		}
		modify := &gojq.Query{Left: q.Left, Op: gojq.OpModify, Right: update}
		if err := r.guardPaths(modify); err != nil {
			return err
		}
		*q = gojq.Query{Left: q.Right, Op: gojq.OpPipe, Patterns: []*gojq.Pattern{{Name: "$__hf_x"}}, Right: modify}
	case gojq.OpAssign, gojq.OpModify:
		return r.guardPaths(q)
	}
	return nil
}

// guardPaths precedes an assignment (=, |=) whose sides are rewritten with
// a check of its paths: an index far past an array's end would allocate
// the array in one step.
func (r *rewriter) guardPaths(q *gojq.Query) error {
	{
		paths, err := clone(q.Left)
		if err != nil {
			return err
		}
		check, err := gojq.Parse(fmt.Sprintf(". as $__hf_in | reduce path(%s) as $__hf_p (null; $__hf_in | _hf_path($__hf_p; %s))", paths, budgetVar))
		if err != nil {
			return err
		}
		orig := &gojq.Query{Left: q.Left, Op: q.Op, Right: q.Right}
		*q = gojq.Query{Left: check, Op: gojq.OpPipe, Patterns: []*gojq.Pattern{{Name: "$__hf_"}}, Right: orig}
	}
	return nil
}

func (r *rewriter) pattern(p *gojq.Pattern) error {
	if p == nil {
		return nil
	}
	if reserved(p.Name) {
		return fmt.Errorf("uses the reserved name %s; use another name", p.Name)
	}
	for _, a := range p.Array {
		if err := r.pattern(a); err != nil {
			return err
		}
	}
	for _, o := range p.Object {
		if reserved(o.Key) {
			return fmt.Errorf("uses the reserved name %s; use another name", o.Key)
		}
		if err := r.str(o.KeyString); err != nil {
			return err
		}
		if err := r.query(o.KeyQuery); err != nil {
			return err
		}
		if err := r.pattern(o.Val); err != nil {
			return err
		}
	}
	return nil
}

func (r *rewriter) index(x *gojq.Index) error {
	if x == nil {
		return nil
	}
	if err := r.str(x.Str); err != nil {
		return err
	}
	if err := r.query(x.Start); err != nil {
		return err
	}
	return r.query(x.End)
}

// str rewrites an interpolated string's parts in place.
func (r *rewriter) str(s *gojq.String) error {
	if s == nil {
		return nil
	}
	for _, q := range s.Queries {
		if err := r.query(q); err != nil {
			return err
		}
	}
	return nil
}

// interpolate is the query an interpolated string compiles to, each part
// converted by conv (tostring, or a format) under a check, joined with a
// checked +.
func (r *rewriter) interpolate(s *gojq.String, conv func() *gojq.Query) *gojq.Query {
	var out *gojq.Query
	for _, part := range s.Queries {
		var q *gojq.Query
		if part.Term != nil && part.Term.Type == gojq.TermTypeString && part.Term.Str != nil && part.Term.Str.Queries == nil {
			q = part
		} else {
			q = pipe(part, conv())
		}
		if out == nil {
			out = q
			continue
		}
		check := funcQ("_hf_op", out, q, strQ("+"), budgetRef())
		out = pipe(check, &gojq.Query{Left: indexQ(0), Op: gojq.OpAdd, Right: indexQ(1)})
	}
	if out == nil {
		return strQ("")
	}
	return out
}

func (r *rewriter) term(t *gojq.Term) error {
	if err := r.termBody(t); err != nil {
		return err
	}
	for _, s := range t.SuffixList {
		if err := r.index(s.Index); err != nil {
			return err
		}
	}
	return nil
}

func (r *rewriter) termBody(t *gojq.Term) error {
	switch t.Type {
	case gojq.TermTypeIndex:
		return r.index(t.Index)
	case gojq.TermTypeFunc:
		return r.call(t)
	case gojq.TermTypeObject:
		for _, kv := range t.Object.KeyVals {
			if reserved(kv.Key) {
				return fmt.Errorf("uses the reserved name %s; use another name", kv.Key)
			}
			if err := r.str(kv.KeyString); err != nil {
				return err
			}
			if kv.KeyString != nil && kv.KeyString.Queries != nil {
				kv.KeyQuery, kv.KeyString = r.interpolate(kv.KeyString, tostringQ), nil
			}
			if err := r.query(kv.KeyQuery); err != nil {
				return err
			}
			if err := r.query(kv.Val); err != nil {
				return err
			}
		}
	case gojq.TermTypeArray:
		return r.query(t.Array.Query)
	case gojq.TermTypeUnary:
		return r.term(t.Unary.Term)
	case gojq.TermTypeFormat:
		if err := r.str(t.Str); err != nil {
			return err
		}
		format := t.Format
		conv := func() *gojq.Query {
			return pipe(funcQ("_hf_format", strQ(format), budgetRef()), &gojq.Query{Term: &gojq.Term{Type: gojq.TermTypeFormat, Format: format}})
		}
		if t.Str == nil {
			*t = *wrapQ(conv())
			return nil
		}
		*t = *wrapQ(r.interpolate(t.Str, conv))
	case gojq.TermTypeString:
		if err := r.str(t.Str); err != nil {
			return err
		}
		if t.Str.Queries != nil {
			suffixes := t.SuffixList
			*t = *wrapQ(r.interpolate(t.Str, tostringQ))
			t.SuffixList = suffixes
		}
	case gojq.TermTypeIf:
		for _, q := range []*gojq.Query{t.If.Cond, t.If.Then, t.If.Else} {
			if err := r.query(q); err != nil {
				return err
			}
		}
		for _, e := range t.If.Elif {
			if err := r.query(e.Cond); err != nil {
				return err
			}
			if err := r.query(e.Then); err != nil {
				return err
			}
		}
	case gojq.TermTypeTry:
		if err := r.query(t.Try.Body); err != nil {
			return err
		}
		return r.query(t.Try.Catch)
	case gojq.TermTypeReduce:
		for _, q := range []*gojq.Query{t.Reduce.Query, t.Reduce.Start, t.Reduce.Update} {
			if err := r.query(q); err != nil {
				return err
			}
		}
		for _, p := range t.Reduce.Patterns {
			if err := r.pattern(p); err != nil {
				return err
			}
		}
	case gojq.TermTypeForeach:
		for _, q := range []*gojq.Query{t.Foreach.Query, t.Foreach.Start, t.Foreach.Update, t.Foreach.Extract} {
			if err := r.query(q); err != nil {
				return err
			}
		}
		for _, p := range t.Foreach.Patterns {
			if err := r.pattern(p); err != nil {
				return err
			}
		}
	case gojq.TermTypeLabel:
		return r.query(t.Label.Body)
	case gojq.TermTypeQuery:
		return r.query(t.Query)
	}
	return nil
}

func tostringQ() *gojq.Query { return funcQ("_hf_tostring", budgetRef()) }

// call rewrites a function call whose builtin builds without checks.
func (r *rewriter) call(t *gojq.Term) error {
	f := t.Func
	if reserved(f.Name) {
		return fmt.Errorf("uses the reserved name %s; use another name", f.Name)
	}
	for _, a := range f.Args {
		if err := r.query(a); err != nil {
			return err
		}
	}
	key := fmt.Sprintf("%s/%d", f.Name, len(f.Args))
	suffixes := t.SuffixList
	switch {
	case key == "add/1":
		// add(f) is [f] | add.
		arr := &gojq.Query{Term: &gojq.Term{Type: gojq.TermTypeArray, Array: &gojq.Array{Query: f.Args[0]}}}
		*t = *wrapQ(pipe(arr, pipe(funcQ("_hf_pre", strQ("add/0"), budgetRef()), funcQ("add"))))
	case key == "setpath/2":
		f.Args[0] = funcQ("_hf_path", f.Args[0], budgetRef())
		return nil
	case replacedBuiltins[key] != "":
		*t = *wrapQ(funcQ(replacedBuiltins[key], budgetRef()))
	case argChecked[key]:
		f.Args[0] = funcQ("_hf_arg", strQ(key), budgetRef(), f.Args[0])
		return nil
	case checkedBuiltins[key]:
		orig := &gojq.Query{Term: &gojq.Term{Type: gojq.TermTypeFunc, Func: f}}
		*t = *wrapQ(pipe(funcQ("_hf_pre", strQ(key), budgetRef()), orig))
	default:
		return nil
	}
	t.SuffixList = suffixes
	return nil
}

// boundedFunctions are the rewrite's functions, for gojq.Compile.
func boundedFunctions() []gojq.CompilerOption {
	return []gojq.CompilerOption{
		gojq.WithFunction("_hf_op", 4, 4, hfOp),
		gojq.WithFunction("_hf_tostring", 1, 1, hfToString),
		gojq.WithFunction("_hf_tojson", 1, 1, hfToJSON),
		gojq.WithFunction("_hf_fromjson", 1, 1, hfFromJSON),
		gojq.WithFunction("_hf_format", 2, 2, hfFormat),
		gojq.WithFunction("_hf_pre", 2, 2, hfPre),
		gojq.WithFunction("_hf_arg", 3, 3, hfArg),
		gojq.WithFunction("_hf_path", 2, 2, hfPath),
	}
}

func evalOf(v any) *evaluation {
	ev, _ := v.(*evaluation)
	return ev
}

// Go sizes charged for what a builtin builds.
const (
	costSlot = 16 // an array element or boxed scalar
	costPair = 64 // an object entry
)

// shallow is what a copy of v's top level costs (the parts it shares
// are not copied).
func shallow(v any) int64 {
	switch v := v.(type) {
	case string:
		return int64(len(v)) + costString
	case []any:
		return int64(len(v))*costSlot + costArray
	case map[string]any:
		return int64(len(v))*costPair + costObject
	}
	return costSlot
}

// nodes counts v's values as a walk visits them (a shared part once per
// reference), stopping past limit.
func nodes(v any, limit int64) int64 {
	var n int64
	var walk func(any)
	walk = func(v any) {
		if n > limit {
			return
		}
		n++
		switch v := v.(type) {
		case []any:
			for _, x := range v {
				walk(x)
			}
		case map[string]any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	walk(v)
	return n
}

// walked charges a builtin that walks v (compares, sorts, flattens): one
// step per value it visits.
func walked(ev *evaluation, what string, vs ...any) error {
	limit := ev.left() / walkCost
	var n int64
	for _, v := range vs {
		n += nodes(v, limit)
		if n > limit {
			return ev.charge(math.MaxInt64/2, what)
		}
	}
	return ev.charge(n*walkCost, what)
}

func hfOp(_ any, args []any) any {
	l, r, op, ev := args[0], args[1], args[2].(string), evalOf(args[3])
	if ev == nil {
		return fmt.Errorf("internal: %s without its evaluation", op)
	}
	var err error
	switch op {
	case "+":
		err = ev.charge(addSize(l, r), "+")
	case "*":
		err = ev.charge(mulSize(l, r, ev), "*")
	case "/":
		if s, ok := l.(string); ok {
			if sep, ok := r.(string); ok {
				err = ev.charge(splitSize(s, sep), "/")
			}
		}
	case "-":
		if la, ok := l.([]any); ok {
			if ra, ok := r.([]any); ok {
				err = walked(ev, "-", l, r)
				if err == nil {
					err = ev.charge(int64(len(la))*int64(len(ra))*walkCost/16+shallow(la), "-")
				}
			}
		}
	default: // comparisons, %
		switch l.(type) {
		case []any, map[string]any:
			err = walked(ev, op, l, r)
		}
	}
	if err != nil {
		return err
	}
	return []any{l, r}
}

func addSize(l, r any) int64 {
	switch l := l.(type) {
	case string:
		if r, ok := r.(string); ok {
			return int64(len(l)) + int64(len(r)) + costString
		}
	case []any:
		if r, ok := r.([]any); ok {
			return (int64(len(l))+int64(len(r)))*costSlot + costArray
		}
	case map[string]any:
		if r, ok := r.(map[string]any); ok {
			return (int64(len(l))+int64(len(r)))*costPair + costObject
		}
	}
	return costSlot
}

func mulSize(l, r any, ev *evaluation) int64 {
	s, ok := l.(string)
	n, isNum := number(r)
	if !ok {
		s, ok = r.(string)
		n, isNum = number(l)
	}
	if ok && isNum {
		if n <= 0 || math.IsNaN(n) {
			return 0
		}
		total := float64(len(s)) * n
		if total > float64(math.MaxInt64/2) {
			return -1
		}
		return int64(total) + costString
	}
	lo, lok := l.(map[string]any)
	ro, rok := r.(map[string]any)
	if lok && rok {
		// A deep merge copies each merged level of both.
		return (nodes(lo, ev.left()/costPair) + nodes(ro, ev.left()/costPair)) * costPair
	}
	return costSlot
}

func number(v any) (float64, bool) {
	switch v := v.(type) {
	case int:
		return float64(v), true
	case float64:
		return v, true
	case *big.Int:
		f, _ := new(big.Float).SetInt(v).Float64()
		return f, true
	case json.Number:
		f, err := v.Float64()
		return f, err == nil
	}
	return 0, false
}

func splitSize(s, sep string) int64 {
	var pieces int64
	if sep == "" {
		pieces = int64(utf8.RuneCountInString(s))
	} else {
		pieces = int64(strings.Count(s, sep)) + 1
	}
	return pieces*(costSlot+costString) + costArray
}

// hfToString is tostring, encoded within what is left of the budget.
func hfToString(v any, args []any) any {
	if s, ok := v.(string); ok {
		return s
	}
	return hfToJSON(v, args)
}

func hfToJSON(v any, args []any) any {
	ev := evalOf(args[0])
	if ev == nil {
		return fmt.Errorf("internal: tojson without its evaluation")
	}
	b, err := encodeBounded(v, int(min(ev.left(), math.MaxInt32)), ev)
	if err == errFull {
		return ev.charge(math.MaxInt64/2, "tojson")
	}
	if err != nil {
		return err
	}
	if err := ev.charge(int64(len(b))+costString, "tojson"); err != nil {
		return err
	}
	return string(b)
}

// hfFromJSON is fromjson through the bounded decoder.
func hfFromJSON(v any, args []any) any {
	ev := evalOf(args[0])
	s, ok := v.(string)
	if ev == nil || !ok {
		return fmt.Errorf("fromjson cannot be applied to: %s", typeName(v))
	}
	out, err := decode([]byte(s), ev)
	if err != nil {
		if _, bound := err.(*boundError); bound {
			return err
		}
		return fmt.Errorf("fromjson: %s", strings.Replace(err.Error(), "the body", "the string", 1))
	}
	return out
}

// formatGrowth is how many output bytes a format writes per input byte,
// at most.
var formatGrowth = map[string]int64{
	"@text": 1, "@json": 1, "@html": 6, "@uri": 3, "@urid": 1, "@csv": 2, "@tsv": 2, "@sh": 4,
	"@base64": 2, "@base64d": 1, "@base32": 2, "@base32d": 1,
}

// hfFormat charges a format's output before it is written: its input
// (encoded, for one that is not a string) times the format's growth.
func hfFormat(v any, args []any) any {
	format, _ := args[0].(string)
	ev := evalOf(args[1])
	if ev == nil {
		return fmt.Errorf("internal: %s without its evaluation", format)
	}
	growth, ok := formatGrowth[format]
	if !ok {
		growth = 6
	}
	n, err := encodedLen(v, ev)
	if err != nil {
		return err
	}
	if err := ev.charge(n*growth+costString, format); err != nil {
		return err
	}
	return v
}

// encodedLen is v's length as a string, or as JSON: a walk that stops at
// what is left of the budget.
func encodedLen(v any, ev *evaluation) (int64, error) {
	if s, ok := v.(string); ok {
		return int64(len(s)), nil
	}
	b, err := encodeBounded(v, int(min(ev.left(), math.MaxInt32)), ev)
	if err == errFull {
		return 0, ev.charge(math.MaxInt64/2, "the formatted value")
	}
	return int64(len(b)), err
}

// hfPre charges what a builtin is about to build or walk, before it runs,
// and passes its input on.
func hfPre(v any, args []any) any {
	key, _ := args[0].(string)
	if err := check(key, v, nil, evalOf(args[1])); err != nil {
		return err
	}
	return v
}

// hfArg is hfPre for a builtin whose check needs its first argument: it
// passes the argument on.
func hfArg(v any, args []any) any {
	key, _ := args[0].(string)
	if err := check(key, v, args[2], evalOf(args[1])); err != nil {
		return err
	}
	return args[2]
}

// check charges what the builtin key is about to build or walk from its
// input v and first argument arg.
func check(key string, v, arg any, ev *evaluation) error {
	if ev == nil {
		return fmt.Errorf("internal: %s without its evaluation", key)
	}
	name := key[:strings.IndexByte(key, '/')]
	var err error
	switch key {
	case "join/1":
		err = ev.charge(joinSize(v, arg), name)
	case "ascii_downcase/0", "ascii_upcase/0":
		err = ev.charge(shallow(v), name)
	case "explode/0":
		if s, ok := v.(string); ok {
			err = ev.charge(int64(len(s))*(costSlot+8)+costArray, name)
		}
	case "implode/0":
		if a, ok := v.([]any); ok {
			err = ev.charge(int64(len(a))*utf8.UTFMax+costString, name)
		}
	case "split/1":
		if s, ok := v.(string); ok {
			if sep, ok := arg.(string); ok {
				err = ev.charge(splitSize(s, sep), name)
			}
		}
	case "add/0":
		err = ev.charge(addAllSize(v), name)
	case "flatten/0", "flatten/1":
		err = walked(ev, name, v)
		if err == nil {
			err = ev.charge(nodes(v, ev.left()/costSlot)*costSlot, name)
		}
	case "test/1", "test/2", "match/1", "match/2", "capture/1", "capture/2", "scan/1", "scan/2",
		"split/2", "splits/1", "splits/2", "sub/2", "sub/3", "gsub/2", "gsub/3":
		err = ev.charge(matchSize(key, v, arg, ev), name)
	case "indices/1", "index/1", "rindex/1":
		err = ev.charge(indicesSize(v, arg), name)
		if err == nil {
			err = walked(ev, name, v, arg)
		}
	case "contains/1", "inside/1", "bsearch/1":
		err = walked(ev, name, v, arg)
	default: // sort, unique, min, max, group_by, …
		err = walked(ev, name, v)
		if err == nil {
			err = ev.charge(shallow(v), name)
		}
	}
	return err
}

func joinSize(v, sep any) int64 {
	a, ok := v.([]any)
	if !ok {
		return costSlot
	}
	s, _ := sep.(string)
	n := int64(len(a))*int64(len(s)) + costString
	for _, x := range a {
		switch x := x.(type) {
		case string:
			n += int64(len(x))
		default:
			n += 32 // a number, a boolean or null as text
		}
	}
	return n
}

func addAllSize(v any) int64 {
	a, ok := v.([]any)
	if !ok {
		return costSlot
	}
	var n int64
	for _, x := range a {
		n += shallow(x)
	}
	// Each + copies what it has so far: the sum of the prefixes, at most
	// len × the total; gojq adds strings and arrays in place, so twice the
	// total covers it.
	return 2*n + costSlot
}

func indicesSize(v, needle any) int64 {
	if s, ok := v.(string); ok {
		if sub, ok := needle.(string); ok && sub != "" {
			return int64(strings.Count(s, sub)+1)*costSlot*2 + costArray
		}
		return costArray
	}
	if a, ok := v.([]any); ok {
		return int64(len(a))*costSlot*2 + costArray
	}
	return costSlot
}

// costMatch is what one regular-expression match object costs (its
// offset, length, string and captures' header).
const costMatch = 640

// matchSize charges a regular-expression builtin for the matches it
// builds: one object per match (with flag g, every match), or a string
// per piece for split and sub.
func matchSize(key string, v, re any, ev *evaluation) int64 {
	s, ok := v.(string)
	if !ok {
		return costSlot
	}
	if strings.HasPrefix(key, "test/") {
		return costSlot
	}
	pattern, _ := re.(string)
	rx, err := regexp.Compile(pattern)
	count := int64(len(s)) + 1
	if err == nil {
		count = countMatches(rx, s, ev.left()/costMatch+1)
	}
	groups := int64(1)
	if err == nil {
		groups += int64(rx.NumSubexp())
	}
	n := count*(costMatch+groups*costPair) + costArray
	if strings.HasPrefix(key, "sub/") || strings.HasPrefix(key, "gsub/") {
		// The result is rebuilt piece by piece.
		n += 2 * int64(len(s)) * count / max(count, 1)
	}
	return n
}

// countMatches counts rx's matches in s, up to limit.
func countMatches(rx *regexp.Regexp, s string, limit int64) int64 {
	var n int64
	for pos := 0; pos <= len(s) && n < limit; {
		loc := rx.FindStringIndex(s[pos:])
		if loc == nil {
			break
		}
		n++
		if loc[1] == loc[0] {
			_, w := utf8.DecodeRuneInString(s[pos+loc[1]:])
			pos += loc[1] + max(w, 1)
		} else {
			pos += loc[1]
		}
	}
	return n
}

// maxIndexWithin is the largest array index a path may name: an index
// past an array's end makes the array that long in one step.
func hfPath(v any, args []any) any {
	ev := evalOf(args[1])
	path, ok := args[0].([]any)
	if ev == nil {
		return fmt.Errorf("internal: a path without its evaluation")
	}
	if !ok {
		return args[0] // gojq says what is wrong with it
	}
	cur := v
	for _, c := range path {
		switch c := c.(type) {
		case string:
			m, _ := cur.(map[string]any)
			cur = m[c]
		case map[string]any: // a slice
			cur = nil
		default:
			f, ok := number(c)
			if !ok {
				return args[0]
			}
			a, _ := cur.([]any)
			if f >= float64(len(a)) {
				if err := ev.charge(int64(min(f+1, float64(math.MaxInt64/4)))*costSlot, "setting index "+fmt.Sprint(c)); err != nil {
					return err
				}
			}
			if i := int(f); i >= 0 && i < len(a) {
				cur = a[i]
			} else {
				cur = nil
			}
		}
	}
	return args[0]
}

// typeName is v's jq type.
func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case int, float64, *big.Int, json.Number:
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return "value"
}
