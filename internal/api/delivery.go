package api

import (
	"context"
	"errors"
	"fmt"

	"github.com/maestro-run/maestro/apitype"
	"github.com/maestro-run/maestro/internal/ledger"
	mt "github.com/maestro-run/maestro/maestrotype"
)

// twilioProvider names Twilio in the message status store; its message SID
// is the receipt field mt.ReceiptMessageSID.
const twilioProvider = "twilio"

// messageStatus looks up the delivery status of the message an
// invocation's receipt names. ok is false when the receipt names no Twilio
// message or Twilio has reported nothing yet. A ledger error is logged and
// treated as no news: the invocation itself is still worth answering.
func (s *Server) messageStatus(ctx context.Context, inv ledger.Invocation, read *readMessage) (ms ledger.MessageStatus, ok bool) {
	if inv.State != mt.InvocationSucceeded || inv.Observation == nil || inv.Observation.Receipt == nil {
		return ledger.MessageStatus{}, false
	}
	sid := receiptMessageSID(inv.Observation.Receipt)
	if sid == "" {
		return ledger.MessageStatus{}, false
	}
	if read != nil && read.statusRead {
		if read.status == nil || read.status.MessageID != sid {
			return ledger.MessageStatus{}, false
		}
		return *read.status, true
	}
	ms, err := s.cfg.Store.MessageStatusGet(ctx, twilioProvider, sid)
	if errors.Is(err, ledger.ErrNotFound) {
		return ledger.MessageStatus{}, false
	}
	if err != nil {
		s.cfg.Logger.Error("could not read message status", "invocation", inv.ID, "message_sid", sid, "err", err)
		return ledger.MessageStatus{}, false
	}
	return ms, true
}

// readMessage is what was read with the invocation: the status of the
// message its receipt names, when statusRead (nil when none was
// reported), and its effect's state reads, when stateReads is not nil.
type readMessage struct {
	status     *ledger.MessageStatus
	statusRead bool
	stateReads *ledger.EffectStateReads
}

func deliveryView(ms ledger.MessageStatus) *apitype.Delivery {
	return &apitype.Delivery{
		Provider:  ms.Provider,
		MessageID: ms.MessageID,
		Status:    ms.Status,
		Final:     ms.Status.Final(),
		Failed:    ms.Status.Failed(),
		Recipient: ms.Recipient,
		ErrorCode: ms.ErrorCode,
		UpdatedAt: ms.UpdatedAt,
	}
}

// deliveryFailure is the follow-up observation for a succeeded send whose
// message then failed, or nil while it has not. It keeps the shape of
// every failure, so an agent relays it like any other: the wording says
// the text did not go through, and next_actions say what is safe to offer.
func deliveryFailure(inv ledger.Invocation, ms ledger.MessageStatus, args map[string]any) *mt.Observation {
	if !ms.Status.Failed() {
		return nil
	}
	to := ms.Recipient
	if to == "" {
		to = recipientArg(args)
	}
	wording := "The text did not go through."
	if to != "" {
		wording = fmt.Sprintf("The text to %s did not go through.", to)
	}
	because := ""
	if ms.ErrorCode != "" {
		because = fmt.Sprintf(" (Twilio error %s)", ms.ErrorCode)
	}
	obs := mt.Observation{
		Status: mt.StatusError,
		Code:   mt.CodeDeliveryFailed,
		Summary: fmt.Sprintf("Twilio reported message %s %s%s after %s answered that it was sent",
			ms.MessageID, ms.Status, because, inv.Tool),
		Wording: wording,
		Source:  &mt.Source{System: "twilio", Tool: inv.Tool, OperationKey: inv.OperationKey, InvocationID: inv.ID},
		NextActions: &mt.NextActions{
			RootCause: fmt.Sprintf("Twilio accepted the message, which is all a send's receipt proves, "+
				"and the carrier then reported it %s%s: it never reached the handset.", ms.Status, because),
			Remediation: "Tell the person the text did not go through; offer another channel or confirm the number. " +
				"Sending again needs a new operation key: this one answers this outcome.",
			StopCondition: "Stop after telling the person once; do not claim the text arrived, and do not resend under this operation key.",
		},
	}
	return &obs
}

// recipientArg finds the number a send went to in its arguments, for a
// follow-up on a message whose callbacks did not name it.
func recipientArg(args map[string]any) string {
	for _, name := range []string{"to", "sms_to"} {
		if v, ok := args[name].(string); ok && v != "" {
			return v
		}
	}
	return ""
}

// receiptMessageSID is the Twilio message a receipt names, or "".
func receiptMessageSID(r *mt.Receipt) string {
	if r == nil {
		return ""
	}
	return r.Fields[mt.ReceiptMessageSID]
}
