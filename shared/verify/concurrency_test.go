package verify_test

import (
	"crypto/sha256"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/hookfan/hookfan/shared/verify"
)

// TestConcurrentVerify shares one verifier and one secret list between
// goroutines, as a warm function serving concurrent requests would (run
// with -race).
func TestConcurrentVerify(t *testing.T) {
	v := &verify.Stripe{Tolerance: 300 * time.Second}
	ks := []string{"whsec_a", "whsec_b"}
	now := time.Unix(1764478800, 0)
	ts := strconv.FormatInt(now.Unix(), 10)
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for g := range 8 {
		wg.Go(func() {
			for i := range 50 {
				body := "{\"n\":" + strconv.Itoa(g*1000+i) + "}"
				secret := []string{"whsec_a", "whsec_b"}[i%2]
				h := header("Stripe-Signature", "t="+ts+",v1="+hmacHex(sha256.New, secret, ts+".", body))
				if err := v.Verify(&verify.Request{Header: h, Body: []byte(body), Now: now}, ks); err != nil {
					errs <- err
					return
				}
				if err := v.Verify(&verify.Request{Header: h, Body: []byte(body + " "), Now: now}, ks); err == nil {
					errs <- errForged
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

var errForged = errorString("a tampered body verified")

type errorString string

func (e errorString) Error() string { return string(e) }
