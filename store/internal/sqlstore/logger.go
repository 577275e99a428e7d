package sqlstore

import (
	"context"
	"log/slog"
	"strings"
)

// routineHandler passes the job runner's messages on with River's
// routine ones lowered from info to debug: the producers' job counts, the
// maintenance services that ran (cleaners, scheduler), the client
// starting and stopping. Those come every few seconds on a busy server
// and say nothing an operator acts on; warnings, errors, failed jobs,
// rescued jobs and anything else keep their level.
type routineHandler struct{ slog.Handler }

// routine reports whether a River message at info level is routine.
func routine(msg string) bool {
	switch {
	case strings.HasSuffix(msg, ": Producer job counts"),
		msg == "River client started", msg == "River client stopped",
		strings.HasSuffix(msg, "entering poll only mode"):
		return true
	case strings.HasSuffix(msg, ": Ran successfully"):
		// A rescue follows a crash: the operator's business.
		return !strings.HasPrefix(msg, "JobRescuer")
	}
	return false
}

func (h routineHandler) Handle(ctx context.Context, r slog.Record) error {
	if r.Level == slog.LevelInfo && routine(r.Message) {
		if !h.Handler.Enabled(ctx, slog.LevelDebug) {
			return nil
		}
		r = r.Clone()
		r.Level = slog.LevelDebug
	}
	return h.Handler.Handle(ctx, r)
}

func (h routineHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return routineHandler{h.Handler.WithAttrs(attrs)}
}

func (h routineHandler) WithGroup(name string) slog.Handler {
	return routineHandler{h.Handler.WithGroup(name)}
}
