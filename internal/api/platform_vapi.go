package api

import (
	"context"
	"net"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/maestro-run/maestro/apitype"
	"github.com/maestro-run/maestro/internal/platform"
	mt "github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/tools"
)

// handleVapi takes every server message of an agent's Vapi assistant:
// tool-calls are run and answered in call order, always with HTTP 200;
// end-of-call-report ends the call; any other type is acknowledged.
func (s *Server) handleVapi(w http.ResponseWriter, r *http.Request) {
	pr, ok := s.readPlatform(w, r, tools.PlatformVapi)
	if !ok {
		return
	}
	sig, err := platform.VerifyVapi(r.Header.Get("X-Signature"), r.Header.Get("X-Timestamp"), pr.body, pr.secret, time.Now())
	if !s.verified(w, r, pr, sig, err) {
		return
	}
	msg, err := platform.ParseVapi(pr.body)
	if err != nil {
		s.refuseUnreadable(w, r, pr, sig, err)
		return
	}
	switch msg.Type {
	case platform.VapiToolCalls:
		writeJSON(w, http.StatusOK, s.vapiToolCalls(r, pr, msg, s.toolDeadline(w, r, pr)))
	case platform.VapiEndOfCallReport:
		out, ref := s.platformEnd(r.Context(), r, pr.agent, msg.CallInfo(), msg.Transcript())
		s.writeEventResult(w, r, sig, out, ref)
	default:
		writeJSON(w, http.StatusOK, apitype.PlatformEventResult{SessionID: msg.Call.ID, Detail: "message type " + msg.Type + " needs no action"})
	}
}

// vapiToolCalls runs a message's tool calls side by side and answers each,
// in call order, with a single-line result, or an error for a call refused
// or failed, each by the deadline.
func (s *Server) vapiToolCalls(r *http.Request, pr platformRequest, msg platform.VapiMessage, deadline time.Time) platform.VapiResults {
	call := msg.CallInfo()
	calls, errs := msg.ToolCalls()
	out := platform.VapiResults{Results: make([]platform.VapiResult, len(calls))}
	var wg sync.WaitGroup
	for i, tc := range calls {
		out.Results[i].ToolCallID = tc.ID
		if errs[i] != nil {
			out.Results[i].Error = platform.OneLine(errs[i].Error())
			continue
		}
		wg.Go(func() {
			ans := s.platformInvoke(r.Context(), r, pr.agent, call, tc, deadline)
			if ans.Status == mt.StatusPending {
				s.owePush(r.Context(), pr.agent, ans.InvocationID, msg.ControlURL())
			}
			if ans.Status == mt.StatusError {
				out.Results[i].Error = platform.OneLine(ans.Wording)
			} else {
				out.Results[i].Result = platform.OneLine(ans.Wording)
			}
		})
	}
	wg.Wait()
	return out
}

// owePush owes the final outcome of a call answered pending to the live
// call's control URL, when the agent's platform block asks for it: the
// callback relay posts it, once, as an add-message. A control URL that is
// missing, not https, or on a host off the platform block's control_hosts
// is not pushed to (dev mode lets a loopback host through); the model
// still learns the outcome when it asks again. The URL comes in a signed
// body, but a signature says who sent it, not that maestro should post
// there.
func (s *Server) owePush(ctx context.Context, agent *tools.Agent, invocationID, controlURL string) {
	if !agent.Platform.PushResults || invocationID == "" {
		return
	}
	u, err := url.Parse(controlURL)
	switch {
	case controlURL == "" || err != nil || u.Host == "" || u.User != nil:
		s.cfg.Logger.Warn("no usable control URL: the result is not pushed", "agent", agent.ID, "invocation", invocationID)
		return
	case u.Scheme != "https" && !(u.Scheme == "http" && s.cfg.LoopbackCallbacks && isLoopback(u.Hostname())):
		s.cfg.Logger.Warn("control URL is not https: the result is not pushed", "agent", agent.ID, "invocation", invocationID, "host", u.Host)
		return
	case !(s.cfg.LoopbackCallbacks && isLoopback(u.Hostname())) && !agent.Platform.AllowsControlHost(u.Hostname()):
		s.cfg.Logger.Warn("control URL host is not on the agent's platform.control_hosts: the result is not pushed",
			"agent", agent.ID, "invocation", invocationID, "host", u.Host, "control_hosts", agent.Platform.ControlHosts)
		return
	}
	if err := s.cfg.Store.CallbackOwe(ctx, invocationID, agent.ID, controlURL); err != nil {
		s.cfg.Logger.Error("could not owe the pushed result", "invocation", invocationID, "agent", agent.ID, "err", err)
	}
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
