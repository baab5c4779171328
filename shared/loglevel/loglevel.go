// Package loglevel keeps a function's application lines at or above the
// level functions.logLevel names, in the function itself: Lambda's own
// application log level cannot do it, since it files the EMF metric lines
// (which carry no level) as INFO and would drop them with the INFO lines.
package loglevel

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/hookfan/hookfan/shared/config"
)

// AtLeast returns l writing only records at or above the level named
// (config.LogLevelInfo, the default, when ""; config.LogLevelWarn).
func AtLeast(l *slog.Logger, name string) *slog.Logger {
	if l == nil || name == "" || name == config.LogLevelInfo {
		return l
	}
	return slog.New(filtered{l.Handler(), slog.LevelWarn})
}

// Check reports a level name the contract does not know, naming the
// variable and the fix.
func Check(value string) error {
	if value == "" || value == config.LogLevelInfo || value == config.LogLevelWarn {
		return nil
	}
	return fmt.Errorf("%s = %q: want %q, or unset for %q (functions.logLevel)", config.EnvLogLevel, value, config.LogLevelWarn, config.LogLevelInfo)
}

type filtered struct {
	slog.Handler
	min slog.Level
}

func (f filtered) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= f.min && f.Handler.Enabled(ctx, l)
}

func (f filtered) WithAttrs(attrs []slog.Attr) slog.Handler {
	return filtered{f.Handler.WithAttrs(attrs), f.min}
}

func (f filtered) WithGroup(name string) slog.Handler {
	return filtered{f.Handler.WithGroup(name), f.min}
}
