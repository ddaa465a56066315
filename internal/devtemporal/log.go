package devtemporal

import (
	"context"
	"log/slog"

	"go.temporal.io/server/common/log"
	"go.temporal.io/server/common/log/tag"
)

// serverLogger routes the server's logs to an slog.Logger.
type serverLogger struct {
	l *slog.Logger
}

var (
	_ log.Logger      = serverLogger{}
	_ log.WithLogger  = serverLogger{}
	_ log.SLogWrapper = serverLogger{}
)

func (s serverLogger) Debug(msg string, tags ...tag.Tag) { s.log(slog.LevelDebug, msg, tags) }
func (s serverLogger) Info(msg string, tags ...tag.Tag)  { s.log(slog.LevelInfo, msg, tags) }
func (s serverLogger) Warn(msg string, tags ...tag.Tag)  { s.log(slog.LevelWarn, msg, tags) }
func (s serverLogger) Error(msg string, tags ...tag.Tag) { s.log(slog.LevelError, msg, tags) }

// DPanic only panics in the server's development builds.
func (s serverLogger) DPanic(msg string, tags ...tag.Tag) { s.log(slog.LevelError, msg, tags) }

// Panic and Fatal must not return: the server's callers rely on it. Fatal
// panics instead of exiting because the process belongs to the embedder.
func (s serverLogger) Panic(msg string, tags ...tag.Tag) {
	s.log(slog.LevelError, msg, tags)
	panic(msg)
}

func (s serverLogger) Fatal(msg string, tags ...tag.Tag) {
	s.log(slog.LevelError, msg, tags)
	panic(msg)
}

func (s serverLogger) With(tags ...tag.Tag) log.Logger {
	return serverLogger{l: slog.New(s.l.Handler().WithAttrs(toAttrs(tags)))}
}

// SLog lets the server hand the same logger to the components it builds on
// slog, such as its internal SDK clients.
func (s serverLogger) SLog() *slog.Logger { return s.l }

func (s serverLogger) log(level slog.Level, msg string, tags []tag.Tag) {
	ctx := context.Background()
	if !s.l.Enabled(ctx, level) {
		return
	}
	s.l.LogAttrs(ctx, level, msg, toAttrs(tags)...)
}

func toAttrs(tags []tag.Tag) []slog.Attr {
	attrs := make([]slog.Attr, len(tags))
	for i, t := range tags {
		attrs[i] = slog.Any(t.Key(), t.Value())
	}
	return attrs
}
