package activities

import (
	"fmt"

	"github.com/maestro-run/maestro/connectors"
	mt "github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/observation"
	"github.com/maestro-run/maestro/tools"
	"github.com/maestro-run/maestro/workflows"
)

func source(tool *tools.Tool, in workflows.ExecuteInput) *mt.Source {
	return &mt.Source{
		System:       string(tool.Connector.Kind),
		Tool:         tool.Name,
		OperationKey: in.OperationKey,
		InvocationID: in.InvocationID,
	}
}

func successSummary(tool *tools.Tool, r *mt.Receipt) string {
	if r == nil {
		return tool.Name + " succeeded"
	}
	return fmt.Sprintf("%s confirmed by %s (id %s, status %s)", tool.Name, r.Provider, r.ID, r.Status)
}

// failureObservation explains a definitive provider failure: the effect did
// not happen, and the agent must say so.
func failureObservation(tool *tools.Tool, in workflows.ExecuteInput, ce *connectors.Error) mt.Observation {
	wording, err := tool.RenderWording(tools.OutcomeFailure, templateData(in, nil, nil))
	if err != nil {
		wording = "I wasn't able to do that."
	}
	f := observation.Failure{Wording: wording}
	switch ce.Class {
	case connectors.ClassAuth:
		f.Code = mt.CodeProviderAuth
		f.Summary = fmt.Sprintf("%s refused maestro's credentials; nothing was done", ce.Provider)
		f.RootCause = ce.Error()
		f.Remediation = "Tell the person it was not done. An operator must fix the provider credentials."
		f.StopCondition = "Do not retry: every call will fail until the credentials are fixed."
	case connectors.ClassRejected, connectors.ClassInvalid:
		f.Code = mt.CodeProviderRejected
		f.Summary = fmt.Sprintf("%s refused the request; nothing was done", ce.Provider)
		f.RootCause = ce.Error()
		f.Remediation = "Correct the argument the provider named and call again with a new operation key."
		f.StopCondition = "Stop if the corrected call is refused too; tell the person it was not done."
	case connectors.ClassFailed:
		f.Code = mt.CodeNotDelivered
		f.Summary = fmt.Sprintf("%s did not go through: %s reported it failed", tool.Name, ce.Provider)
		f.RootCause = ce.Error()
		f.Remediation = "Tell the person it did not go through. If they still want it, check the details the provider objected to and call again with a new operation key."
		f.StopCondition = "Do not retry with this operation key; stop if a new one fails the same way."
	default:
		f.Code = mt.CodeProviderUnavailable
		f.Summary = fmt.Sprintf("%s stayed unavailable after retries; nothing was done", ce.Provider)
		f.RootCause = ce.Error()
		f.Remediation = "Tell the person it did not go through yet. Try once more later with a new operation key."
		f.StopCondition = "Stop after one more failure and hand over to a human."
	}
	return observation.Error(f, source(tool, in))
}

// unknownObservation is for an effect that may or may not have happened.
// It claims neither, and no retry may be attempted before reconciliation.
func unknownObservation(tool *tools.Tool, in workflows.ExecuteInput, why string) mt.Observation {
	return observation.Pending(observation.Failure{
		Code:          mt.CodeOutcomeUnknown,
		Summary:       fmt.Sprintf("Outcome of %s is unknown; held for reconciliation", in.Tool),
		RootCause:     why,
		Remediation:   "Do not call again. Tell the person you can't confirm it yet and that the team will check and follow up.",
		StopCondition: "Stop now: the operation key is held until the provider's state is reconciled.",
		Wording:       "I can't confirm that has gone through yet; the team will check and follow up with you.",
	}, source(tool, in))
}

func keyReusedObservation(tool *tools.Tool, in workflows.ExecuteInput) mt.Observation {
	return observation.Error(observation.Failure{
		Code:          mt.CodeKeyReused,
		Summary:       "This operation key was already used with different arguments; nothing was done",
		RootCause:     "An operation key names one business effect; it cannot carry other arguments.",
		Remediation:   "Use a new operation key for a new effect.",
		StopCondition: "Do not retry with this key.",
	}, source(tool, in))
}
