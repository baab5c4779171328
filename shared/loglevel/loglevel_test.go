package loglevel

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/hookfan/hookfan/shared/config"
)

// TestAtLeast: at WARN the INFO lines go, the WARN and ERROR lines stay,
// through With too; the default keeps everything; unknown names are
// refused by Check.
func TestAtLeast(t *testing.T) {
	var b bytes.Buffer
	base := slog.New(slog.NewJSONHandler(&b, nil))
	l := AtLeast(base, config.LogLevelWarn).With("destination", "orders")
	l.Info("deliver", "outcome", "delivered")
	l.WarnContext(context.Background(), "deliver", "outcome", "failed")
	l.Error("deliver", "outcome", "not_attempted")
	got := b.String()
	if strings.Contains(got, "delivered") || !strings.Contains(got, `"failed"`) || !strings.Contains(got, "not_attempted") || !strings.Contains(got, "orders") {
		t.Errorf("at WARN: %s", got)
	}
	if AtLeast(base, "") != base || AtLeast(base, config.LogLevelInfo) != base {
		t.Error("the default level wraps the logger")
	}
	for v, ok := range map[string]bool{"": true, "INFO": true, "WARN": true, "DEBUG": false, "warn": false} {
		if err := Check(v); (err == nil) != ok {
			t.Errorf("Check(%q) = %v", v, err)
		}
	}
}
