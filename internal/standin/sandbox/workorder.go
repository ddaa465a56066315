package sandbox

// Work order priorities, in rising urgency, and trades.
var (
	priorities = []string{"routine", "urgent", "emergency"}
	categories = []string{"plumbing", "electrical", "hvac", "appliance", "other"}
)

const (
	maxUnit        = 32
	maxDescription = 2000
)

// WorkOrder is a maintenance request; cancelling it withdraws the request.
type WorkOrder struct {
	Meta
	TenantID    string  `json:"tenant_id"`
	Unit        string  `json:"unit"`
	Category    string  `json:"category"`
	Description string  `json:"description"`
	Priority    string  `json:"priority"`
	ExternalRef *string `json:"external_ref"`
}

func (w *WorkOrder) meta() *Meta { return &w.Meta }

type workOrderParams struct {
	TenantID string `json:"tenant_id"`
	// Unit defaults to the tenant's unit, as a back office would fill it.
	Unit        string  `json:"unit"`
	Category    string  `json:"category"`
	Description string  `json:"description"`
	Priority    string  `json:"priority"`
	ExternalRef *string `json:"external_ref"`
}

func (s *Server) workOrderKind() kind[WorkOrder] {
	return kind[WorkOrder]{
		object: "work_order",
		prefix: "wo",
		path:   "/v1/work_orders",
		status: "open",
		build:  s.buildWorkOrder,
		filters: map[string]func(*WorkOrder) string{
			"tenant_id":    func(w *WorkOrder) string { return w.TenantID },
			"external_ref": func(w *WorkOrder) string { return deref(w.ExternalRef) },
			"status":       func(w *WorkOrder) string { return w.Status },
		},
	}
}

func (s *Server) buildWorkOrder(body []byte) (WorkOrder, *apiError) {
	var p workOrderParams
	if apiErr := decodeParams(body, &p); apiErr != nil {
		return WorkOrder{}, apiErr
	}
	if apiErr := s.tenants.checkActive(p.TenantID); apiErr != nil {
		return WorkOrder{}, apiErr
	}
	if p.Unit == "" {
		tn, _ := s.tenants.get(p.TenantID)
		p.Unit = tn.Unit
	}
	if apiErr := firstError(
		requireString("unit", p.Unit, maxUnit),
		oneOf("category", p.Category, categories...),
		requireString("description", p.Description, maxDescription),
		oneOf("priority", p.Priority, priorities...),
		checkExternalRef(p.ExternalRef),
	); apiErr != nil {
		return WorkOrder{}, apiErr
	}
	return WorkOrder{
		TenantID:    p.TenantID,
		Unit:        p.Unit,
		Category:    p.Category,
		Description: p.Description,
		Priority:    p.Priority,
		ExternalRef: p.ExternalRef,
	}, nil
}
