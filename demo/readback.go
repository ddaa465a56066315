package demo

// These checks read what the providers themselves say, through their own
// APIs, never maestro's ledger.

func (s *scenario) confirmSMS(sid string) error {
	ev, err := s.standins.Reader().TwilioMessage(sid)
	if err != nil {
		return err
	}
	s.confirm("Twilio API: message %s to %s is %s", ev.ID, ev.Detail["to"], ev.Status)
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
	s.confirm("back-office API: work order %s is %s", ev.ID, ev.Status)
	return expect(ev.ID == id, "work order %s not found at the provider", id)
}

func (s *scenario) confirmRefund(id string) error {
	ev, err := s.standins.Reader().HTTPResource(s.ctx, s.standins.SandboxURL(), s.standins.Sandbox.Token(), "/v1/refunds/"+id)
	if err != nil {
		return err
	}
	s.confirm("back-office API: refund %s of %v cents is %s", ev.ID, ev.Detail["amount_cents"], ev.Status)
	return expect(ev.ID == id, "refund %s not found at the provider", id)
}
