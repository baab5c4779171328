//go:build integration

package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// docBlock is one fenced code block of a docs page.
type docBlock struct {
	lang, code string
	line       int
}

var fence = regexp.MustCompile("(?ms)^```([a-z]*)\n(.*?)^```\n")

func docBlocks(t *testing.T, page string) []docBlock {
	t.Helper()
	raw, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	var out []docBlock
	for _, m := range fence.FindAllSubmatchIndex(raw, -1) {
		out = append(out, docBlock{lang: string(raw[m[2]:m[3]]), code: string(raw[m[4]:m[5]]),
			line: bytes.Count(raw[:m[0]], []byte("\n")) + 1})
	}
	return out
}

// The names the snippets leave to their reader (seen, enqueue), and what
// serves the Go snippet's handler, around each snippet.
const (
	goSnippetHead = `package main

import (
	"encoding/json"
	"io"
	"log"
	"net/http"
	"os"
	"sync"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

var _, _, _, _, _ = io.EOF, log.Fatal, os.Getenv, json.Valid, time.Now

var (
	mu  sync.Mutex
	ids = map[string]bool{}
)

func seen(id string) bool {
	mu.Lock()
	defer mu.Unlock()
	was := ids[id]
	ids[id] = true
	return was
}

func enqueue(string, []byte) {}

func main() {
`
	goSnippetTail = `
	log.Fatal(http.ListenAndServe(os.Getenv("ADDR"), nil))
}
`
	jsSnippetHead = `const ids = new Set();
function seen(id) { const was = ids.has(id); ids.add(id); return was; }
function enqueue() {}
`
)

// TestSubscriberSnippetsVerifyARealDelivery runs every code block of
// docs/subscribers.md this machine can run (Go, and Node's node:crypto one)
// as a server, and sends it a delivery the local stack made: it must
// accept it (202), know it again (204), and refuse it with one byte of the
// body changed or without its signature (401). The Python block is
// compiled only: it needs standardwebhooks from PyPI, which this machine
// cannot reach, and the test says so rather than pretend.
func TestSubscriberSnippetsVerifyARealDelivery(t *testing.T) {
	t.Parallel()
	blocks := docBlocks(t, "../docs/subscribers.md")
	type server struct {
		name string
		cmd  *exec.Cmd
		url  string
		// batch: the snippet reads a batched destination's envelope
		// (docs/subscribers.md#batches), and is sent a batch.
		batch bool
	}
	var servers []server
	rc := newReceiver(t, nil)
	secret := rc.secrets[0]
	dir := t.TempDir()
	langs := map[string]int{}
	for i, b := range blocks {
		langs[b.lang]++
		name := fmt.Sprintf("docs/subscribers.md:%d (%s)", b.line, b.lang)
		addr := freeAddr(t)
		switch b.lang {
		case "go":
			file := filepath.Join(dir, fmt.Sprintf("go%d", i), "main.go")
			if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(file, []byte(goSnippetHead+b.code+goSnippetTail), 0o600); err != nil {
				t.Fatal(err)
			}
			bin := filepath.Join(dir, fmt.Sprintf("go%d", i), "snippet")
			if out, err := exec.Command("go", "build", "-o", bin, file).CombinedOutput(); err != nil {
				t.Fatalf("%s does not build: %v\n%s", name, err, out)
			}
			cmd := exec.Command(bin)
			cmd.Env = append(os.Environ(), "ADDR="+addr, "HOOKFAN_SECRET="+secret)
			servers = append(servers, server{name: name, cmd: cmd, url: "http://" + addr + "/hooks", batch: strings.Contains(b.code, "`json:\"events\"`")})
		case "js":
			file := filepath.Join(dir, fmt.Sprintf("snippet%d.js", i))
			if err := os.WriteFile(file, []byte(jsSnippetHead+b.code), 0o600); err != nil {
				t.Fatal(err)
			}
			_, port, _ := net.SplitHostPort(addr)
			cmd := exec.Command("node", file)
			cmd.Env = append(os.Environ(), "PORT="+port, "HOOKFAN_SECRET="+secret)
			servers = append(servers, server{name: name, cmd: cmd, url: "http://" + addr + "/hooks"})
		case "python":
			file := filepath.Join(dir, fmt.Sprintf("snippet%d.py", i))
			if err := os.WriteFile(file, []byte("import os\n"+b.code), 0o600); err != nil {
				t.Fatal(err)
			}
			if out, err := exec.Command("python3", "-m", "py_compile", file).CombinedOutput(); err != nil {
				t.Errorf("%s does not compile: %v\n%s", name, err, out)
			}
			t.Logf("%s: compiled, not run: it needs standardwebhooks from PyPI, which this machine cannot reach", name)
		case "json":
			if !json.Valid([]byte(b.code)) {
				t.Errorf("%s is not valid JSON", name)
			}
		default:
			t.Errorf("%s: a code block in a language this test does not know; teach it to run or to explain why not", name)
		}
	}
	if langs["go"] == 0 || langs["js"] == 0 {
		t.Fatalf("docs/subscribers.md has %d Go and %d JavaScript blocks; this test expects at least one of each", langs["go"], langs["js"])
	}
	for _, s := range servers {
		var out syncBuffer
		s.cmd.Stdout, s.cmd.Stderr = &out, &out
		if err := s.cmd.Start(); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		t.Cleanup(func() {
			_ = s.cmd.Process.Kill()
			_ = s.cmd.Wait()
			if t.Failed() {
				t.Logf("%s printed:\n%s", s.name, out.String())
			}
		})
	}

	// One real delivery, as the local stack sent it, and one batch of two
	// events from a batched lane signed with the same secret.
	brc := newReceiver(t, nil)
	brc.secrets = rc.secrets
	e := startEnv(t, []string{destJSON("d", rc, ""), destJSON("db", brc, `"batch": {"maxEvents": 10, "windowSeconds": 2}`)},
		map[string]*receiver{"d": rc, "db": brc})
	ev := e.send("stripe", "stripe", "payment_intent.succeeded", "evt_snippets_1", nil)
	waitFor(t, 60*time.Second, "the delivery", func() bool { return rc.accepted(ev.id) == 1 })
	d := rc.deliveries()[0]
	if !d.verified {
		t.Fatal("the harness's own receiver did not verify the delivery")
	}
	e.send("stripe", "stripe", "payment_intent.succeeded", "evt_snippets_2", nil)
	waitFor(t, 60*time.Second, "the batches", func() bool { return len(acceptedItems(t, brc)) == 2 })
	bd := brc.deliveries()[0]
	if !bd.verified || bd.header.Get("hookfan-batch-size") == "" {
		t.Fatalf("the harness's own receiver did not verify the batch, or it is no batch: %v", bd.header)
	}

	post := func(url string, h http.Header, body []byte) (int, error) {
		req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
		req.Header = h.Clone()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0, err
		}
		resp.Body.Close()
		return resp.StatusCode, nil
	}
	for _, s := range servers {
		d := d
		if s.batch {
			d = bd
		}
		tampered := bytes.Clone(d.body)
		tampered[len(tampered)/2] ^= 0x01
		unsigned := d.header.Clone()
		unsigned.Del("webhook-signature")
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		for {
			if _, err := post(s.url, unsigned, d.body); err == nil {
				break
			}
			if ctx.Err() != nil {
				t.Fatalf("%s never listened on %s", s.name, s.url)
			}
			time.Sleep(100 * time.Millisecond)
		}
		cancel()
		for _, c := range []struct {
			what   string
			header http.Header
			body   []byte
			want   int
		}{
			{"the delivery", d.header, d.body, http.StatusAccepted},
			{"the delivery again", d.header, d.body, http.StatusNoContent},
			{"the body with one bit changed", d.header, tampered, http.StatusUnauthorized},
			{"the delivery without its signature", unsigned, d.body, http.StatusUnauthorized},
		} {
			got, err := post(s.url, c.header, c.body)
			if err != nil || got != c.want {
				t.Errorf("%s answered %s with %d (%v), want %d", s.name, c.what, got, err, c.want)
			}
		}
	}
}
