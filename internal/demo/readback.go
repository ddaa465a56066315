package demo

import (
	"fmt"
	"strings"

	mt "github.com/maestro-run/maestro/maestrotype"
)

// These checks read what the providers themselves say, through their own
// APIs, never maestro's ledger.

func (s *scenario) confirmSMS(sid string) error {
	ev, err := s.standins.Reader().TwilioMessage(sid)
	if err != nil {
		return err
	}
	s.confirm("Twilio API: message %s to %s %s", ev.ID, ev.Detail["to"], statusPhrase(ev.Status))
	return nil
}

func (s *scenario) confirmEmail(id string) error {
	ev, err := s.standins.Reader().SESMessage(s.ctx, id)
	if err != nil {
		return err
	}
	to := ev.Detail["destination"].(map[string]any)["to"]
	s.confirm("SES store: message %s to %v, subject %q", ev.ID, to, ev.Detail["subject"])
	return nil
}

func (s *scenario) confirmWorkOrder(id string) error {
	ev, err := s.standins.Reader().HTTPResource(s.ctx, s.standins.SandboxURL(), s.standins.Sandbox.Token(), "/v1/work_orders/"+id)
	if err != nil {
		return err
	}
	s.confirm("back-office API: work order %s %s", ev.ID, statusPhrase(ev.Status))
	return expect(ev.ID == id, "work order %s not found at the provider", id)
}

func (s *scenario) confirmRefund(id string) error {
	ev, err := s.standins.Reader().HTTPResource(s.ctx, s.standins.SandboxURL(), s.standins.Sandbox.Token(), "/v1/refunds/"+id)
	if err != nil {
		return err
	}
	s.confirm("back-office API: refund %s of %v cents %s", ev.ID, ev.Detail["amount_cents"], statusPhrase(ev.Status))
	return expect(ev.ID == id, "refund %s not found at the provider", id)
}

// confirmReceipt reads any receipt back from the provider that issued it.
func (s *scenario) confirmReceipt(r *mt.Receipt) error {
	switch {
	case r.Fields[mt.ReceiptMessageSID] != "" && r.Fields[mt.ReceiptMessageID] != "":
		if err := s.confirmSMS(r.Fields[mt.ReceiptMessageSID]); err != nil {
			return err
		}
		return s.confirmEmail(r.Fields[mt.ReceiptMessageID])
	case r.Fields[mt.ReceiptMessageSID] != "":
		return s.confirmSMS(r.Fields[mt.ReceiptMessageSID])
	case r.Fields[mt.ReceiptMessageID] != "":
		return s.confirmEmail(r.Fields[mt.ReceiptMessageID])
	case strings.HasPrefix(r.ID, "wo_"):
		return s.confirmWorkOrder(r.ID)
	case strings.HasPrefix(r.ID, "re_"):
		return s.confirmRefund(r.ID)
	}
	return fmt.Errorf("demo expectation failed: no way to read back receipt %s from %s", r.ID, r.Provider)
}
