//go:build integration

package integration

import (
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/hookfan/hookfan/infra/local/devstack"
	"github.com/hookfan/hookfan/infra/ops/console"
	"github.com/hookfan/hookfan/infra/ops/operator"
	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/dedupe"
)

// chromiumPath is Debian's chromium, which make test and make integration
// install (make chromium) where it is missing.
const chromiumPath = "/usr/bin/chromium"

// screenshotDir is where the browser test keeps its screenshots, from the
// repository's root.
const screenshotDir = "build/console-screenshots"

// TestConsoleInABrowser drives the web console in a real headless
// Chromium against the local stack: the lanes; an event that failed, its
// attempts and the receiver's answer; a replay; a DLQ redrive; a pause and
// a resume, checking after each step what the page shows and the stack's
// state behind it, and keeping a screenshot of each step.
func TestConsoleInABrowser(t *testing.T) {
	if _, err := os.Stat(chromiumPath); err != nil {
		t.Fatalf("no Chromium at %s (%v): install it with make chromium (Debian's chromium package); this test never skips", chromiumPath, err)
	}
	var fixed atomic.Bool
	rc := newReceiver(t, func(int, *http.Request) int {
		if fixed.Load() {
			return http.StatusNoContent
		}
		return http.StatusInternalServerError
	})
	rc.answer = `{"error":"card processor down <script>alert(1)</script>"}`
	e := startEnv(t, []string{destJSON("d", rc, `"retry": {"schedule": ["1s"], "jitter": 0}, "pause": {"afterFailures": 50}`)},
		map[string]*receiver{"d": rc}, func(o *devstack.Options) { o.Config.Metrics.Sink = config.SinkCloudWatch })
	first := e.send("stripe", "stripe", "payment_intent.succeeded", t.Name()+"_1", nil)
	second := e.send("stripe", "stripe", "payment_intent.succeeded", t.Name()+"_2", nil)
	lane, _ := e.stack.Topology.Lane("d")
	waitFor(t, 60*time.Second, "both events DEAD and in the DLQ", func() bool {
		r1, _ := e.record("d", first.id)
		r2, _ := e.record("d", second.id)
		return r1.Status == dedupe.StatusDead && r2.Status == dedupe.StatusDead && depth(t, lane.DLQURL) == 2
	})

	// ops console, as the command line runs it.
	login, base := startConsole(t, "--endpoint", os.Getenv("AWS_ENDPOINT_URL"), "--prefix", e.prefix, "--config", e.configFile())

	b := newBrowser(t)
	shots := 0
	shot := func(name string) {
		t.Helper()
		shots++
		b.screenshot(filepath.Join(screenshotDir, strconv.Itoa(shots)+"-"+name+".png"))
	}

	// Lanes: d is active, its DLQ holds both events.
	b.do(chromedp.Navigate(login), chromedp.WaitVisible(chromedp.ID("lane-d")))
	row := b.text("#lane-d")
	for _, want := range []string{"active", "2 dead", rc.srv.URL[:strings.LastIndex(rc.srv.URL, ":")]} {
		if !strings.Contains(row, want) {
			t.Errorf("the lanes page's row of d lacks %q: %q", want, row)
		}
	}
	if title := b.attr("footer time", "title"); !strings.Contains(title, "UTC") {
		t.Errorf("the footer's time has title %q: the console's script did not rewrite it (CSP?)", title)
	}
	shot("lanes")

	// The events that failed, and one of them: its attempts and the receiver's answer.
	b.do(chromedp.Navigate(base+"/events?state=DEAD"), chromedp.WaitVisible(chromedp.ID("events-summary")))
	if s := b.text("#events-summary"); !strings.HasPrefix(s, "2 event(s)") {
		t.Errorf("events summary %q, want 2 events", s)
	}
	shot("events-dead")
	b.do(chromedp.Click(chromedp.CSS(`a[href="/events/`+first.id+`"]`)), chromedp.WaitVisible(chromedp.ID("at-d")))
	at := b.text("#at-d")
	for _, want := range []string{"DEAD", "500", "card processor down <script>alert(1)</script>"} {
		if !strings.Contains(at, want) {
			t.Errorf("the event's record at d lacks %q: %q", want, at)
		}
	}
	if body := b.text("#event-body"); !strings.Contains(body, `"type": "payment_intent.succeeded"`) {
		t.Errorf("the event's body is not shown as indented JSON: %q", body)
	}
	shot("event-failed")

	// Replay it to d, now that the receiver is fixed.
	fixed.Store(true)
	b.do(chromedp.Click(chromedp.ID("replay-d")), chromedp.WaitVisible(chromedp.CSS(".flash")))
	if f := b.text(".flash"); !strings.Contains(f, "Done: replay") {
		t.Fatalf("after replay the page says %q", f)
	}
	waitFor(t, 30*time.Second, "the replayed event delivered", func() bool {
		r, _ := e.record("d", first.id)
		return rc.accepted(first.id) == 1 && r.Status == dedupe.StatusDelivered
	})
	b.do(chromedp.Reload(), chromedp.WaitVisible(chromedp.ID("at-d")))
	if at := b.text("#at-d"); !strings.Contains(at, "DELIVERED") {
		t.Errorf("after the replay the event's record at d shows %q", at)
	}
	shot("event-replayed")

	// Redrive d's DLQ: the other event is delivered, the replayed one is not sent twice.
	b.do(chromedp.Navigate(base+"/lanes/d"), chromedp.WaitVisible(chromedp.ID("redrive")))
	b.do(chromedp.Click(chromedp.ID("redrive")), chromedp.WaitVisible(chromedp.CSS(".flash")))
	if f := b.text(".flash"); !strings.Contains(f, "moved 2 message(s)") {
		t.Errorf("after the redrive the page says %q", f)
	}
	waitFor(t, 30*time.Second, "the redriven event delivered and the DLQ empty", func() bool {
		r, _ := e.record("d", second.id)
		return r.Status == dedupe.StatusDelivered && depth(t, lane.DLQURL) == 0
	})
	if n := rc.accepted(first.id); n != 1 {
		t.Errorf("the replayed event was delivered %d times, want once", n)
	}
	b.do(chromedp.Reload(), chromedp.WaitVisible(chromedp.ID("dlq-depth")))
	if d := b.text("#dlq-depth"); d != "0 message(s)" {
		t.Errorf("after the redrive the DLQ shows %q", d)
	}
	shot("lane-redriven")

	// Pause with a reason, then resume.
	b.do(chromedp.SendKeys(chromedp.ID("pause-reason"), "receiver maintenance"), chromedp.Click(chromedp.ID("pause")),
		chromedp.WaitVisible(chromedp.ID("resume")))
	if s := e.lane("d"); !s.IsPaused() || !strings.Contains(s.Reason, "receiver maintenance") {
		t.Errorf("after pause the lane is %+v, want paused for the reason given", s)
	}
	if facts := b.text(".facts"); !strings.Contains(facts, "paused by the operator") || !strings.Contains(facts, "receiver maintenance") {
		t.Errorf("after pause the lane page shows %q", facts)
	}
	shot("lane-paused")
	b.do(chromedp.SendKeys(chromedp.ID("resume-reason"), "maintenance over"), chromedp.Click(chromedp.ID("resume")),
		chromedp.WaitVisible(chromedp.ID("pause")))
	if s := e.lane("d"); s.IsPaused() {
		t.Errorf("after resume the lane is %+v, want active", s)
	}
	if facts := b.text(".facts"); !strings.Contains(facts, "active") {
		t.Errorf("after resume the lane page shows %q", facts)
	}
	shot("lane-resumed")

	// Every action, with the operator's identity (moto's).
	b.do(chromedp.Navigate(base+"/actions"), chromedp.WaitVisible(chromedp.CSS(".actions-log")))
	log := b.text(".actions-log")
	for _, want := range []string{"replay", "redrive", "pause", "resume", "arn:aws:"} {
		if !strings.Contains(log, want) {
			t.Errorf("the actions page lacks %q: %q", want, log)
		}
	}
	shot("actions")

	// Keyboard and a narrow window: the first Tab reaches the skip link,
	// and a phone-wide window does not scroll sideways.
	b.do(chromedp.Navigate(base+"/"), chromedp.WaitVisible(chromedp.ID("lane-d")), chromedp.KeyEvent("\t"))
	focused := browse(b, chromedp.Evaluate[string](`document.activeElement.className`))
	if focused != "skip" {
		t.Errorf("the first Tab focuses %q, want the skip link", focused)
	}
	b.do(chromedp.EmulateViewport(390, 844), chromedp.Navigate(base+"/lanes/d"), chromedp.WaitVisible(chromedp.ID("pause")))
	width := browse(b, chromedp.Evaluate[int](`document.documentElement.scrollWidth`))
	if width > 390 {
		t.Errorf("at 390 px wide the lane page is %d px wide", width)
	}
	shot("lane-narrow")
}

// configFile writes the env's configuration to a file, as ops reads it.
func (e *env) configFile() string {
	e.t.Helper()
	file := filepath.Join(e.t.TempDir(), "config.json")
	if err := os.WriteFile(file, []byte(e.cfgJSON), 0o600); err != nil {
		e.t.Fatal(err)
	}
	return file
}

// startConsole runs ops GLOBAL-FLAGS console until the test ends and
// returns the sign-in URL it printed and the console's base URL.
func startConsole(t *testing.T, global ...string) (login, base string) {
	t.Helper()
	ctx, stop := context.WithCancel(context.Background())
	var out, errOut syncBuffer
	served := make(chan int, 1)
	go func() {
		served <- operator.MainWith(ctx, append(global, "console"), &out, &errOut, console.Run)
	}()
	t.Cleanup(func() {
		stop()
		if code := <-served; code != 0 {
			t.Errorf("ops console exited %d: %s", code, errOut.String())
		}
	})
	urlRE := regexp.MustCompile(`open: (http://127\.0\.0\.1:\d+/login\?token=\S+)`)
	waitFor(t, 20*time.Second, "ops console to print its URL", func() bool {
		if m := urlRE.FindStringSubmatch(out.String()); m != nil {
			login = m[1]
		}
		return login != "" || errOut.String() != ""
	})
	if login == "" {
		t.Fatalf("ops console printed no URL: %s%s", out.String(), errOut.String())
	}
	t.Logf("ops console:\n%s", out.String())
	return login, login[:strings.Index(login, "/login")]
}

// TestConsoleOnADeployedStack: ops --stack NAME console finds the stack
// through its SSM index, as on AWS, and shows its lanes; the sign-in link
// works once.
func TestConsoleOnADeployedStack(t *testing.T) {
	rc := newReceiver(t, nil)
	e := startEnv(t, []string{destJSON("d", rc, "")}, map[string]*receiver{"d": rc})
	stack := e.prefix + "-stack"
	e.publishIndex(stack)
	login, base := startConsole(t, "--stack", stack)
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Jar: jar}
	get := func(url string) (int, string) {
		resp, err := client.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	code, page := get(login)
	if code != http.StatusOK || !strings.Contains(page, `id="lane-d"`) || !strings.Contains(page, "stack "+stack) {
		t.Fatalf("signed in: %d\n%s", code, page)
	}
	if code, _ := get(base + "/events"); code != http.StatusOK {
		t.Errorf("events page: %d", code)
	}
	again, err := http.Get(login)
	if err != nil {
		t.Fatal(err)
	}
	again.Body.Close()
	if again.StatusCode != http.StatusForbidden {
		t.Errorf("the sign-in link a second time: %d, want 403", again.StatusCode)
	}
}

// browser is a headless Chromium driven over the DevTools protocol, that
// reaches nothing but this machine's loopback.
type browser struct {
	t   *testing.T
	ctx context.Context
}

func newBrowser(t *testing.T) *browser {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromiumPath), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.Flag("disable-extensions", true), chromedp.Flag("disable-default-apps", true),
		chromedp.Flag("no-proxy-server", true),
		// Shared memory from a temporary directory, not /dev/shm: a CI
		// container's /dev/shm can be 64 MB, where the renderer crashes.
		chromedp.Flag("disable-dev-shm-usage", true),
		// Every name but the loopback's resolves to nothing: the browser reaches no other address.
		chromedp.Flag("host-resolver-rules", "MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1"),
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1280, 900),
	}
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(alloc)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	// The first call starts the browser, which lives as long as its context:
	// no deadline on it (chromedp.Run).
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start Chromium: %v", err)
	}
	return &browser{t: t, ctx: ctx}
}

// browse runs one action with a deadline and returns its value, failing the
// test on an error.
func browse[T any](b *browser, a chromedp.Action[T]) T {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, patience(b.t, 30*time.Second))
	defer cancel()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		// Say where the browser stands: its page's address and text.
		look, cancel := context.WithTimeout(b.ctx, 10*time.Second)
		defer cancel()
		where, _ := chromedp.Run(look, chromedp.Location())
		text, _ := chromedp.Run(look, chromedp.Evaluate[string](`document.body ? document.body.innerText : ""`))
		b.t.Fatalf("browser: %v\nat %s:\n%s", err, where, text)
	}
	return v
}

// do runs steps in order.
func (b *browser) do(steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	browse(b, chromedp.Steps(steps...))
}

func (b *browser) text(sel string) string {
	b.t.Helper()
	return browse(b, chromedp.Text(chromedp.CSS(sel)))
}

func (b *browser) attr(sel, name string) string {
	b.t.Helper()
	return browse(b, chromedp.AttributeValue(chromedp.CSS(sel), name)).Value
}

// screenshot writes the whole page as a PNG under the repository's root.
func (b *browser) screenshot(rel string) {
	b.t.Helper()
	png := browse(b, chromedp.FullScreenshot(100))
	path := filepath.Join("..", rel)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		b.t.Fatal(err)
	}
	if err := os.WriteFile(path, png, 0o644); err != nil {
		b.t.Fatal(err)
	}
	abs, _ := filepath.Abs(path)
	b.t.Logf("screenshot: %s", abs)
}
