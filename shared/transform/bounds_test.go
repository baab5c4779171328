package transform

import (
	"bytes"
	"context"
	"errors"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// bounded reports whether err is an event's failure at the memory bound
// with the reason want. The tests compile with testTimeout, so the wall
// clock never decides: the memory bound is counted, and reached the same
// way on a busy machine as on an idle one.
func bounded(err error, want string) bool {
	return errors.Is(err, ErrEvent) && strings.Contains(err.Error(), want)
}

// testTimeout keeps the time bound out of the way of the memory bound's
// tests.
const testTimeout = 5 * time.Minute

// hostile are expressions that, unbounded, build far more than the
// deliver function's memory from a small body (issue #31), with variants.
var hostile = []struct{ name, expr, want string }{
	{"shared rows", `[range(6000)] as $a | [range(6000)] | map($a)`, "memory bound"},
	{"string repeat", `"x" * 4e8`, "* needs"},
	{"string doubling", `reduce range(29) as $i ("x"; .+.)`, "+ needs"},
	{"array recursion", `def f: [f]; f`, "memory bound"},
	{"arithmetic recursion", `def f: 1 + f; f`, "memory bound"},
	// Variants.
	{"doubling by update", `reduce range(40) as $i ({a: "x"}; .a += .a)`, "+ needs"},
	{"doubling arrays", `reduce range(40) as $i ([1]; . + .)`, "+ needs"},
	{"shared tree to json", `reduce range(60) as $i (0; [., .]) | tojson`, "memory bound"},
	{"shared tree flattened", `reduce range(60) as $i (0; [., .]) | flatten | length`, "memory bound"},
	{"shared tree compared", `reduce range(60) as $i (0; [., .]) | . == .`, "memory bound"},
	{"shared tree interpolated", `reduce range(60) as $i (0; [., .]) | "\(.)" | length`, "memory bound"},
	{"shared tree as text", `reduce range(60) as $i (0; [., .]) | @base64 | length`, "memory bound"},
	{"far index", `null | .[100000000] = 1`, "setting index"},
	{"far index by setpath", `null | setpath([100000000]; 1)`, "setting index"},
	{"collect forever", `[range(1e9)] | length`, "memory bound"},
	{"repeat in an array", `[limit(1e8; repeat("xxxxxxxx"))] | length`, "memory bound"},
	{"explode a large string", `("x" * 1000000) | explode | length`, "explode needs"},
	{"split into characters", `("x" * 1000000) / "" | length`, "/ needs"},
	{"matches of a large string", `("x" * 1000000) | [match(""; "g")] | length`, "match needs"},
	{"join of a shared array", `[range(6000)] as $a | [range(1000) | $a | tostring] | join(",") | length`, "memory bound"},
}

func TestHostileExpressionsEndDead(t *testing.T) {
	for _, tt := range hostile {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Compile(tt.expr, WithTimeout(testTimeout))
			if err != nil {
				t.Fatalf("Compile: %v", err)
			}
			_, err = p.Apply(context.Background(), []byte(`{}`))
			if !bounded(err, tt.want) {
				t.Fatalf("Apply = %v, want ErrEvent with %q", err, tt.want)
			}
		})
	}
}

// tinyValues is a body of n bytes or so made of empty objects or zeros.
func tinyValues(n int, elem string) []byte {
	var b bytes.Buffer
	b.WriteByte('[')
	for b.Len() < n-len(elem)-2 {
		if b.Len() > 1 {
			b.WriteByte(',')
		}
		b.WriteString(elem)
	}
	b.WriteByte(']')
	return b.Bytes()
}

func TestLargeBodyEndsDeadWithItsReason(t *testing.T) {
	p, err := Compile(`{n: length}`)
	if err != nil {
		t.Fatal(err)
	}
	for _, elem := range []string{"{}", "0"} {
		_, err := p.Apply(context.Background(), tinyValues(4_500_000, elem))
		if !errors.Is(err, ErrEvent) || !strings.Contains(err.Error(), "too large to transform within the memory bound") {
			t.Fatalf("Apply(4.5 MB of %s) = %v, want the body too large", elem, err)
		}
	}
	// The same expression still transforms the source's smaller events.
	out, err := p.Apply(context.Background(), tinyValues(10_000, "0"))
	if err != nil || !strings.HasPrefix(string(out), `{"n":`) {
		t.Fatalf("Apply(10 kB) = %s, %v", out, err)
	}
	// A larger function takes it.
	big, err := Compile(`{n: length}`, WithBudget(Budget(3008, 1)), WithTimeout(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := big.Apply(context.Background(), tinyValues(4_500_000, "0")); err != nil {
		t.Fatalf("Apply(4.5 MB) with 3008 MB for one event: %v", err)
	}
}

func TestBudget(t *testing.T) {
	for _, tt := range []struct {
		mb, conc int
		want     int64
	}{{128, 10, 64 << 20 / 10}, {1024, 10, 512 << 20 / 10}, {128, 1, 64 << 20}, {0, 0, 64 << 20 / 10}, {128, 1000, MinBudget}} {
		if got := Budget(tt.mb, tt.conc); got != tt.want {
			t.Errorf("Budget(%d, %d) = %d, want %d", tt.mb, tt.conc, got, tt.want)
		}
	}
}

// TestTenHostileAtOnce runs ten of each hostile case at once, as a batch
// does: each ends with its reason.
func TestTenHostileAtOnce(t *testing.T) {
	for _, tt := range hostile[:5] {
		p, err := Compile(tt.expr, WithTimeout(testTimeout))
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		errs := make([]error, 10)
		for i := range errs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, errs[i] = p.Apply(context.Background(), []byte(`{}`))
			}()
		}
		wg.Wait()
		for _, err := range errs {
			if !bounded(err, tt.want) {
				t.Fatalf("%s: Apply = %v, want %q", tt.name, err, tt.want)
			}
		}
	}
}

// TestHostileChargesStayWithinTheBudget: what the budget counted for each
// hostile case, when it stopped, is the budget at most (the last step
// may pass it by its own charge), a recursion is stopped within
// budget/StepCost steps, and what the case allocated in all, garbage
// included (runtime.MemStats.TotalAlloc, the same however busy the
// machine), is within the budget too: the accounting that keeps ten of
// them under half the function's memory (the peak heap itself is
// measured in BenchmarkTransformBounds).
func TestHostileChargesStayWithinTheBudget(t *testing.T) {
	budget := Budget(DefaultMemoryMB, DefaultConcurrency)
	for _, tt := range hostile {
		p, err := Compile(tt.expr, WithTimeout(testTimeout), WithBudget(budget))
		if err != nil {
			t.Fatal(err)
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		used, steps, err := Charged(p, []byte(`{}`))
		runtime.ReadMemStats(&after)
		if !bounded(err, tt.want) {
			t.Errorf("%s: %v, want %q", tt.name, err, tt.want)
		}
		if used > budget+StepCost || steps > budget/StepCost+1 {
			t.Errorf("%s: charged %d bytes in %d steps; want at most %d bytes, %d steps", tt.name, used, steps, budget+StepCost, budget/StepCost+1)
		}
		// Under -race, pools drop values at random: allocations differ.
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > uint64(budget) && !raceEnabled {
			t.Errorf("%s: allocated %s in all, past the budget of %s", tt.name, size(int64(alloc)), size(budget))
		}
	}
}

// TestInterruptedIsNotTheEvents: when the caller's context ends during a
// transform (the invocation's deadline), Apply says so with ErrInterrupted,
// which does not match ErrEvent: the event is not given up for it.
func TestInterruptedIsNotTheEvents(t *testing.T) {
	p, err := Compile(`[range(1e6)] | length`, WithBudget(1<<30))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	steps := 0
	stepHook = func() {
		if steps++; steps == 1000 {
			cancel()
		}
	}
	defer func() { stepHook = nil }()
	_, err = p.Apply(ctx, []byte(`{}`))
	if !errors.Is(err, ErrInterrupted) || errors.Is(err, ErrEvent) {
		t.Fatalf("err %v; want ErrInterrupted, not ErrEvent", err)
	}
	// The transform's own time bound is still the event's.
	stepHook = nil
	q, err := Compile(`def f: f; f`, WithBudget(1<<40), WithTimeout(time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := q.Apply(context.Background(), []byte(`{}`)); !errors.Is(err, ErrEvent) {
		t.Fatalf("own timeout: err %v; want ErrEvent", err)
	}
}
