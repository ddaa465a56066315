package activities

import (
	"encoding/json"
	"fmt"

	"github.com/maestro-run/maestro/internal/connectors"
	"github.com/maestro-run/maestro/internal/observation"
	mt "github.com/maestro-run/maestro/maestrotype"
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
		wording = tools.WithNotice("I wasn't able to do that.", tool.RenderNotice(templateData(in, nil, nil)))
	}
	f := observation.Failure{Wording: wording}
	switch {
	case ce.Misconfigured():
		// Maestro's fault, not the model's: telling the agent to fix its
		// arguments would send it guessing at a problem it cannot see.
		f.Code = mt.CodeMisconfigured
		f.Summary = fmt.Sprintf("%s could not be done because of maestro's own configuration; nothing was done", tool.Name)
		if ce.Class == connectors.ClassAuth {
			f.Summary = fmt.Sprintf("%s refused maestro's credentials; nothing was done", providerName(ce))
		}
		f.RootCause = ce.Error() + ". This is a fault in maestro's configuration, not in the call's arguments; an operator must fix it."
		f.Remediation = "Tell the person you can't do this right now and hand over to a human."
		f.StopCondition = "Do not retry or change arguments: every call of this tool fails until an operator fixes the configuration."
	case ce.Class == connectors.ClassRejected:
		f.Code = mt.CodeProviderRejected
		f.Summary = fmt.Sprintf("%s refused the request; nothing was done", ce.Provider)
		f.RootCause = ce.Error()
		f.Remediation = "Correct the argument the provider named and call again with a new operation key."
		f.StopCondition = "Stop if the corrected call is refused too; tell the person it was not done."
	case ce.Class == connectors.ClassFailed:
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
	wording := tools.WithNotice("I can't confirm that has gone through yet; the team will check and follow up with you.",
		tool.RenderNotice(templateData(in, nil, nil)))
	return observation.Pending(observation.Failure{
		Code:          mt.CodeOutcomeUnknown,
		Summary:       fmt.Sprintf("Outcome of %s is unknown; held for reconciliation", in.Tool),
		RootCause:     why,
		Remediation:   "Do not call again. Tell the person you can't confirm it yet and that the team will check and follow up.",
		StopCondition: "Stop now: the operation key is held until the provider's state is reconciled.",
		Wording:       wording,
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

func providerName(ce *connectors.Error) string {
	if ce.Provider == "" {
		return "the provider"
	}
	return ce.Provider
}

// nothingFoundObservation answers a lookup that found nothing: the call
// worked, so it is not an error, and a bare success would leave the agent
// to guess whether an empty answer means "no such thing" or "look again".
func nothingFoundObservation(tool *tools.Tool, in workflows.ExecuteInput, payload []byte) mt.Observation {
	return observation.Warning(observation.Failure{
		Code:          mt.CodeNothingFound,
		Summary:       fmt.Sprintf("%s found nothing for these arguments", tool.Name),
		RootCause:     "The lookup worked and the provider holds nothing matching the arguments given; most often an ID was misheard or mistyped.",
		Remediation:   "Check the ID or details with the caller (read them back) and look up again with the corrected value.",
		StopCondition: "Stop after a second lookup with the caller's confirmed details finds nothing: tell the person you could not find it and offer to hand over to a human.",
		Wording:       "I couldn't find anything under those details. Could you check them for me?",
		Payload:       jsonPayload(payload),
	}, source(tool, in))
}

func jsonPayload(b []byte) any {
	if len(b) == 0 {
		return nil
	}
	return json.RawMessage(b)
}
