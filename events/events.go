// Package events holds sample provider webhooks — realistic bodies with the
// headers each provider sends, minus the signature — and signs them for a
// source's verification kind with a given secret and time. Tests use them,
// and so does the local sender.
//
// Samples live in testdata/<kind>/<name>.json (the exact body bytes) and
// testdata/<kind>/<name>.headers.json (a JSON object of header names to
// values); a kind with replay protection also has testdata/<kind>/<name>.vary,
// the dotted path of a body member that differs between real events (a
// commit, an order id), which WithEventID changes to make each event's body
// its own. No sample carries a real secret; signatures are computed by Sign.
package events

import (
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"path"
	"slices"
	"strings"
)

//go:embed testdata
var files embed.FS

// Sample is one provider webhook, unsigned.
type Sample struct {
	// Kind is the verification kind the sample belongs to (a shared/provider name).
	Kind string
	// Name names the sample within its kind, usually the event type.
	Name string
	// Body is the exact request body.
	Body []byte
	// Header holds the provider's headers other than the signature.
	Header http.Header
	// Vary is the path of the body member that differs between events
	// (the .vary file); nil when the sample has none.
	Vary []string
}

// Clone returns a deep copy, so a test may tamper with it freely.
func (s Sample) Clone() Sample {
	s.Body = slices.Clone(s.Body)
	s.Header = s.Header.Clone()
	s.Vary = slices.Clone(s.Vary)
	return s
}

// Samples returns every embedded sample, ordered by kind and name.
func Samples() ([]Sample, error) {
	var out []Sample
	err := fs.WalkDir(files, "testdata", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || strings.HasSuffix(p, ".headers.json") || !strings.HasSuffix(p, ".json") {
			return nil
		}
		kind := path.Base(path.Dir(p))
		s, err := Load(kind, strings.TrimSuffix(path.Base(p), ".json"))
		if err != nil {
			return err
		}
		out = append(out, s)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read samples: %w", err)
	}
	return out, nil
}

// Load returns one sample by kind and name, e.g. Load("stripe", "payment_intent.succeeded").
func Load(kind, name string) (Sample, error) {
	if strings.ContainsAny(kind+name, "/\\") {
		return Sample{}, fmt.Errorf("sample %s/%s: names hold no path separators", kind, name)
	}
	base := path.Join("testdata", kind, name)
	body, err := files.ReadFile(base + ".json")
	if err != nil {
		return Sample{}, fmt.Errorf("sample %s/%s: %w", kind, name, err)
	}
	raw, err := files.ReadFile(base + ".headers.json")
	if err != nil {
		return Sample{}, fmt.Errorf("sample %s/%s headers: %w", kind, name, err)
	}
	var hm map[string]string
	if err := json.Unmarshal(raw, &hm); err != nil {
		return Sample{}, fmt.Errorf("sample %s/%s headers: %w", kind, name, err)
	}
	h := make(http.Header, len(hm))
	for k, v := range hm {
		h.Set(k, v)
	}
	var vary []string
	if raw, err := files.ReadFile(base + ".vary"); err == nil {
		vary = strings.Split(strings.TrimSpace(string(raw)), ".")
	}
	return Sample{Kind: kind, Name: name, Body: body, Header: h, Vary: vary}, nil
}

// MustLoad is Load for tests and fixed sample names; it panics on error.
func MustLoad(kind, name string) Sample {
	s, err := Load(kind, name)
	if err != nil {
		panic(err)
	}
	return s
}
