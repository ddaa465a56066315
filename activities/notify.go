package activities

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/maestro-run/maestro/internal/connectors"
	"github.com/maestro-run/maestro/internal/ledger"
	mt "github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/tools"
	"github.com/maestro-run/maestro/workflows"
)

// NotifyActor is the actor of the notification events in a request's log.
const NotifyActor = "maestro:notify"

// ErrTypeNotify marks a notification that cannot be sent: retrying the
// same message cannot help.
const ErrTypeNotify = "NotifyFailed"

// notifyDetail is the detail of a notification event.
type notifyDetail struct {
	Stage     string `json:"stage"`
	Recipient string `json:"recipient,omitempty"`
	Channel   string `json:"channel,omitempty"`
	// OperationKey is the notification's key in the idempotency ledger.
	OperationKey string      `json:"operation_key,omitempty"`
	Receipt      *mt.Receipt `json:"receipt,omitempty"`
	Error        string      `json:"error,omitempty"`
	// EscalateAfter is the role's escalation time, on an escalated event.
	EscalateAfter string `json:"escalate_after,omitempty"`
}

// NotifyPlan says who is told at a stage of a request that is still
// pending. The escalated stage's plan logs the escalation, once.
func (a *Activities) NotifyPlan(ctx context.Context, in workflows.NotifyPlanInput) (workflows.NotifyPlan, error) {
	req, err := a.cfg.Store.ApprovalRequestGet(ctx, in.ApprovalID)
	if err != nil {
		return workflows.NotifyPlan{}, retryable(ErrTypeLedger, fmt.Errorf("error reading approval request: %w", err))
	}
	if req.Status != ledger.ApprovalPending {
		return workflows.NotifyPlan{}, nil
	}
	cat := a.cfg.Catalog.Load()
	plan := workflows.NotifyPlan{Pending: true}
	for _, r := range cat.Recipients(req.ApproverRole, tools.NotifyStage(in.Stage)) {
		plan.Recipients = append(plan.Recipients, r.Key())
	}
	role, _ := cat.Role(req.ApproverRole)
	switch in.Stage {
	case workflows.StageOpened:
		if role != nil && role.EscalateAfter > 0 {
			plan.EscalateAt = req.CreatedAt.Add(role.EscalateAfter)
		}
	case workflows.StageEscalated:
		d := notifyDetail{Stage: in.Stage}
		if role != nil {
			d.EscalateAfter = role.EscalateAfter.String()
		}
		if err := a.logNotifyEvent(ctx, req, ledger.ApprovalEventEscalated, d); err != nil {
			return workflows.NotifyPlan{}, err
		}
	default:
		return workflows.NotifyPlan{}, nonRetryable(workflows.ErrTypeInvariant, fmt.Errorf("unknown notification stage %q", in.Stage))
	}
	return plan, nil
}

// Notify tells one recipient about a request, exactly once: the message is
// an effect in the idempotency ledger under a key derived from the
// request, stage and recipient, so a retry or a second worker finds it
// claimed or settled and does not send it again. A text whose answer was
// lost is looked up at Twilio before anything is resent; an email or
// webhook post whose answer was lost is not resent at all, and is recorded
// as failed, so nobody is told twice.
func (a *Activities) Notify(ctx context.Context, in workflows.NotifySendInput) error {
	req, err := a.cfg.Store.ApprovalRequestGet(ctx, in.ApprovalID)
	if err != nil {
		return retryable(ErrTypeLedger, fmt.Errorf("error reading approval request: %w", err))
	}
	cat := a.cfg.Catalog.Load()
	rcpt, ok := cat.Recipient(req.ApproverRole, tools.NotifyStage(in.Stage), in.Recipient)
	if !ok {
		return nonRetryable(ErrTypeNotify, fmt.Errorf("recipient %s is no longer in the catalog's %s list for role %q", in.Recipient, in.Stage, req.ApproverRole))
	}
	tool, _ := cat.Tool(req.Tool)
	msg := notifyMessage(req, tool, in.Stage, a.cfg.PublicURL)
	key := notifyKey(in)
	detail := notifyDetail{Stage: in.Stage, Recipient: in.Recipient, Channel: string(rcpt.Channel.Kind), OperationKey: key}

	owner := leaseOwner(ctx)
	claim, err := a.cfg.Store.EffectClaim(ctx, ledger.EffectClaimParams{
		OperationKey: key,
		Tool:         "notify." + string(rcpt.Channel.Kind),
		PayloadHash:  payloadHash(key, string(rcpt.Channel.Kind)),
		Owner:        owner,
		LeaseTTL:     a.cfg.LeaseTTL,
		EffectClass:  mt.EffectWrite,
	})
	if err != nil {
		return retryable(ErrTypeLedger, fmt.Errorf("error claiming notification %s: %w", key, err))
	}
	switch claim.Outcome {
	case ledger.ClaimSettled:
		// Sent (or given up on) by an earlier attempt that stopped before
		// it reported: record what it did, once.
		if claim.Effect.Status == mt.EffectSucceeded {
			detail.Receipt = claim.Effect.Receipt
			return a.logNotifyEvent(ctx, req, ledger.ApprovalEventNotified, detail)
		}
		return nonRetryable(ErrTypeNotify, fmt.Errorf("notification %s: %s", key, claim.Effect.Error))
	case ledger.ClaimBusy:
		return leaseBusy(claim.Effect.LeaseExpiresAt)
	case ledger.ClaimConflict:
		return nonRetryable(workflows.ErrTypeInvariant, fmt.Errorf("notification key %s was used for another message", key))
	case ledger.ClaimTakeover:
		done, err := a.notifyTakeover(ctx, key, owner, rcpt, msg, claim.Effect, &detail)
		if done || err != nil {
			if err == nil {
				err = a.logNotifyEvent(ctx, req, ledger.ApprovalEventNotified, detail)
			}
			return err
		}
	}

	receipt, err := a.sendNotification(ctx, key, rcpt, msg)
	if err != nil {
		return a.notifyFailure(ctx, key, owner, rcpt, err)
	}
	if err := a.cfg.Store.EffectSettle(ctx, ledger.EffectSettleParams{
		OperationKey: key, Owner: owner, Status: mt.EffectSucceeded, Receipt: receipt,
	}); err != nil {
		if errors.Is(err, ledger.ErrLeaseLost) {
			return nonRetryable(ErrTypeNotify, fmt.Errorf("notification %s was sent (%s %s) after its claim was taken over: %w", key, receipt.Provider, receipt.ID, err))
		}
		return retryable(ErrTypeLedger, fmt.Errorf("error settling notification %s: %w", key, err))
	}
	detail.Receipt = receipt
	return a.logNotifyEvent(ctx, req, ledger.ApprovalEventNotified, detail)
}

// notifyTakeover settles a notification an earlier attempt claimed and
// never settled. Only Twilio can be asked what it sent: a match adopts
// its receipt, and a complete search that found nothing, once the
// provider has had time to list the message, lets it be sent. Everything
// else is given up on rather than risk telling someone twice.
func (a *Activities) notifyTakeover(ctx context.Context, key, owner string, rcpt tools.Recipient, msg notification, eff ledger.Effect, detail *notifyDetail) (bool, error) {
	if rcpt.Channel.Kind != tools.ChannelSMS {
		return true, a.settleNotify(ctx, key, owner, mt.EffectFailed, nil,
			"an earlier attempt may have sent it and "+string(rcpt.Channel.Kind)+" cannot be asked; not resent, so nobody is told twice")
	}
	if wait := a.cfg.ListingLag - time.Since(eff.UpdatedAt); wait > 0 {
		if err := a.cfg.Store.EffectHandOver(ctx, key, owner, nextLeaseOwner(ctx), a.cfg.LeaseTTL); err != nil {
			return true, retryable(ErrTypeLedger, fmt.Errorf("error keeping the claim on %s: %w", key, err))
		}
		return true, lookAgain("Twilio may not list the message yet; looking again once it has had time to", wait)
	}
	found, err := a.cfg.Connectors.Lookup(ctx, smsCall(key, rcpt, msg), eff.CreatedAt.Add(-time.Minute))
	switch {
	case err != nil:
		return true, a.notifyFailure(ctx, key, owner, rcpt, err)
	case len(found.Matches) > 0:
		r := found.Matches[0].Receipt
		detail.Receipt = r
		return true, a.settleNotify(ctx, key, owner, mt.EffectSucceeded, r, "")
	case !found.Complete:
		return true, a.settleNotify(ctx, key, owner, mt.EffectFailed, nil, "an earlier attempt may have sent it and Twilio's records could not all be searched; not resent")
	}
	return false, nil
}

// notifyFailure settles a send that failed: a provider that provably did
// nothing hands the key back for the next attempt; anything else is final.
func (a *Activities) notifyFailure(ctx context.Context, key, owner string, rcpt tools.Recipient, err error) error {
	ce := connectors.AsError(err)
	switch {
	case ce.Retryable() && !lastAttempt(ctx):
		if rerr := a.cfg.Store.EffectRelease(ctx, key, owner); rerr != nil {
			return retryable(ErrTypeLedger, fmt.Errorf("error releasing notification %s: %w", key, rerr))
		}
		return retryable(ErrTypeProviderRetry, ce)
	case ce.Class == connectors.ClassUnknown && rcpt.Channel.Kind == tools.ChannelSMS && !lastAttempt(ctx):
		// Twilio may have sent it: the next attempt takes the claim over
		// and asks Twilio before anything is resent.
		if herr := a.cfg.Store.EffectHandOver(ctx, key, owner, nextLeaseOwner(ctx), a.cfg.LeaseTTL); herr != nil {
			return retryable(ErrTypeLedger, fmt.Errorf("error keeping the claim on %s: %w", key, herr))
		}
		return retryable(ErrTypeProviderRetry, ce)
	}
	if serr := a.settleNotify(ctx, key, owner, mt.EffectFailed, nil, ce.Error()); serr != nil {
		return serr
	}
	return nonRetryable(ErrTypeNotify, ce)
}

func (a *Activities) settleNotify(ctx context.Context, key, owner string, status mt.EffectStatus, r *mt.Receipt, why string) error {
	err := a.cfg.Store.EffectSettle(ctx, ledger.EffectSettleParams{OperationKey: key, Owner: owner, Status: status, Receipt: r, Error: why})
	switch {
	case errors.Is(err, ledger.ErrLeaseLost):
		return nonRetryable(ErrTypeNotify, fmt.Errorf("notification %s: %w", key, err))
	case err != nil:
		return retryable(ErrTypeLedger, fmt.Errorf("error settling notification %s: %w", key, err))
	case status != mt.EffectSucceeded:
		return nonRetryable(ErrTypeNotify, fmt.Errorf("notification %s: %s", key, why))
	}
	return nil
}

// NotifyFailed records a notification that could not be sent, once. It
// changes nothing about the request.
func (a *Activities) NotifyFailed(ctx context.Context, in workflows.NotifyFailedInput) error {
	req, err := a.cfg.Store.ApprovalRequestGet(ctx, in.ApprovalID)
	if err != nil {
		return retryable(ErrTypeLedger, fmt.Errorf("error reading approval request: %w", err))
	}
	d := notifyDetail{Stage: in.Stage, Recipient: in.Recipient, OperationKey: notifyKey(in.NotifySendInput), Error: in.Cause}
	if rcpt, ok := a.cfg.Catalog.Load().Recipient(req.ApproverRole, tools.NotifyStage(in.Stage), in.Recipient); ok {
		d.Channel = string(rcpt.Channel.Kind)
	}
	return a.logNotifyEvent(ctx, req, ledger.ApprovalEventNotifyFailed, d)
}

// logNotifyEvent appends a notification event unless the log already has
// one of its kind for the same stage and recipient: an attempt that logged
// it and stopped before reporting is retried, and the log says it once.
func (a *Activities) logNotifyEvent(ctx context.Context, req ledger.ApprovalRequest, kind ledger.ApprovalEventKind, d notifyDetail) error {
	events, err := a.cfg.Store.ApprovalEventList(ctx, req.ID)
	if err != nil {
		return retryable(ErrTypeLedger, err)
	}
	logged := slices.ContainsFunc(events, func(e ledger.ApprovalEvent) bool {
		if e.Kind != kind {
			return false
		}
		var got notifyDetail
		return json.Unmarshal(e.Detail, &got) == nil && got.Stage == d.Stage && got.Recipient == d.Recipient
	})
	if logged {
		return nil
	}
	b, err := json.Marshal(d)
	if err != nil {
		return nonRetryable(workflows.ErrTypeInvariant, fmt.Errorf("error encoding notification detail: %w", err))
	}
	if _, err := a.cfg.Store.ApprovalEventInsert(ctx, ledger.ApprovalEvent{
		ApprovalID: req.ID, Kind: kind, Actor: NotifyActor, Detail: b,
	}); err != nil {
		return retryable(ErrTypeLedger, err)
	}
	return nil
}

// notifyKey is a notification's operation key: one per request, stage and
// recipient (who, channel kind and index), so it is sent at most once.
func notifyKey(in workflows.NotifySendInput) string {
	return "notify:" + in.ApprovalID + ":" + in.Stage + ":" + in.Recipient
}

func payloadHash(parts ...string) string {
	sum := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
	return hex.EncodeToString(sum[:])
}
