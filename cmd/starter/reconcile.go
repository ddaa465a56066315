package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/maestro-run/maestro/apitype"
)

func newReconcileCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "reconcile",
		Short: "Work the queue of effects whose outcome is unknown (operator key)",
		Long: "An effect whose provider may have acted without maestro recording the answer is\n" +
			"held for reconciliation: nothing is sent for it again until its outcome is known.\n" +
			"Twilio messages are searched for automatically; what cannot be searched (SES email)\n" +
			"and every money effect waits here for a human's recorded decision.\n" +
			"The list also shows texts the agent reported sent that Twilio then reported\n" +
			"undelivered: the person was told a text went out that never arrived.\n" +
			"Post-call work no channel delivered by its deadline comes first (keys ending in\n" +
			"/held): a caller was promised it. Deliver it yourself and resolve it delivered,\n" +
			"or retry it once the cause is fixed.",
	}
	cmd.AddCommand(newReconcileListCmd(g), newReconcileShowCmd(g), newReconcileCheckCmd(g), newReconcileResolveCmd(g), newReconcileRetryCmd(g))
	return cmd
}

func newReconcileListCmd(g *globals) *cobra.Command {
	q := apitype.ListQuery{}
	list := &cobra.Command{
		Use:   "list",
		Short: "List held post-call work, then effects held for reconciliation (money first), then undelivered texts",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			out, err := g.client().ReconciliationPage(cmd.Context(), q)
			if err != nil {
				return refusalOr(cmd, g, err)
			}
			if g.json {
				return printJSON(cmd.OutOrStdout(), out)
			}
			tw := newTable(cmd.OutOrStdout())
			fmt.Fprintln(tw, "OPERATION KEY\tTOOL\tEFFECT\tSTATUS\tSEARCHABLE\tSINCE\tWHY")
			for _, r := range out.Reconciliations {
				status, since := r.Status, r.UpdatedAt
				if d := r.Delivery; d != nil && d.Failed {
					status, since = string(d.Status), d.UpdatedAt
				}
				why := r.Reason
				if h := r.Held; h != nil {
					why = fmt.Sprintf("%q (call back %s; %d attempts): %s", h.Words, orNone(h.CallbackNumber), len(h.Attempts), r.Reason)
					if h.Urgent {
						status = "held URGENT"
					}
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%t\t%s\t%s\n", r.OperationKey, r.Tool, r.Effect, status, r.Searchable, since.Format("2006-01-02 15:04:05Z"), why)
			}
			return flushPaged(tw, cmd.OutOrStdout(), len(out.Reconciliations), out.Paging)
		},
	}
	listFlags(list, &q, "held_postcall, held_effect or undelivered; empty for all")
	return list
}

func newReconcileShowCmd(g *globals) *cobra.Command {
	show := &cobra.Command{
		Use:   "show KEY",
		Short: "Show a held effect: the call it made, why it is held, and its reconciliation log",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, pos []string) error {
			r, err := g.client().Reconciliation(cmd.Context(), pos[0])
			return printReconciliation(cmd, g, r, err)
		},
	}
	return show
}

func newReconcileCheckCmd(g *globals) *cobra.Command {
	check := &cobra.Command{
		Use:   "check KEY",
		Short: "Search the provider's records again; settles the effect only if they prove its outcome",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, pos []string) error {
			r, err := g.client().CheckReconciliation(cmd.Context(), pos[0])
			return printReconciliation(cmd, g, r, err)
		},
	}
	return check
}

func newReconcileResolveCmd(g *globals) *cobra.Command {
	var outcome, reason string
	resolve := &cobra.Command{
		Use:   "resolve KEY --outcome delivered|not-delivered --reason TEXT",
		Short: "Record your decision on a held effect",
		Long: "delivered records the effect as done on your word: its receipt is marked\n" +
			"human-attested, and the agent is not told the provider confirmed it.\n" +
			"not-delivered records that it did not happen, so a new operation key may try again.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, pos []string) error {
			var o string
			switch outcome {
			case "delivered":
				o = apitype.OutcomeDelivered
			case "not-delivered", "not_delivered":
				o = apitype.OutcomeNotDelivered
			default:
				return fmt.Errorf("--outcome must be delivered or not-delivered, got %q", outcome)
			}
			r, err := g.client().ResolveReconciliation(cmd.Context(), pos[0], o, reason)
			return printReconciliation(cmd, g, r, err)
		},
	}
	resolve.Flags().StringVar(&outcome, "outcome", "", "delivered or not-delivered")
	resolve.Flags().StringVar(&reason, "reason", "", "what you checked, and where; recorded in the log")
	_ = resolve.MarkFlagRequired("outcome")
	_ = resolve.MarkFlagRequired("reason")
	return resolve
}

func newReconcileRetryCmd(g *globals) *cobra.Command {
	retry := &cobra.Command{
		Use:   "retry KEY",
		Short: "Deliver held post-call work (a key ending in /held) again along its whole chain",
		Long: "Tries the item's channels again with their deadlines, under new operation keys\n" +
			"that continue its attempts, so nothing already sent is sent again. Fix the cause\n" +
			"first (a provider's credentials, an address it refused).",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, pos []string) error {
			r, err := g.client().RetryReconciliation(cmd.Context(), pos[0])
			return printReconciliation(cmd, g, r, err)
		},
	}
	return retry
}

func printReconciliation(cmd *cobra.Command, g *globals, r apitype.Reconciliation, err error) error {
	if err != nil {
		return refusalOr(cmd, g, err)
	}
	w := cmd.OutOrStdout()
	if g.json {
		return printJSON(w, r)
	}
	tw := newTable(w)
	row(tw, "key", r.OperationKey)
	row(tw, "status", r.Status)
	row(tw, "tool", fmt.Sprintf("%s (%s)", r.Tool, r.Effect))
	if r.ApproverRole != "" {
		row(tw, "paged", r.ApproverRole)
	}
	row(tw, "invocation", r.InvocationID)
	row(tw, "attempts", r.Attempts)
	row(tw, "claimed", r.ClaimedAt.Format("2006-01-02 15:04:05Z"))
	row(tw, "searchable", r.Searchable)
	if r.Reason != "" {
		row(tw, "why", r.Reason)
	}
	if len(r.Request) > 0 {
		row(tw, "request", string(r.Request))
	}
	if rc := r.Receipt; rc != nil {
		row(tw, "receipt", fmt.Sprintf("%s %s (%s)", rc.Provider, rc.ID, rc.Status))
	}
	if r.Delivery != nil {
		row(tw, "delivery", describeDelivery(r.Delivery))
	}
	if h := r.Held; h != nil {
		row(tw, "session", h.SessionID)
		row(tw, "caller said", h.Words)
		row(tw, "call back", orNone(h.CallbackNumber))
		row(tw, "urgent", h.Urgent)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if h := r.Held; h != nil {
		tw = newTable(w)
		for _, a := range h.Attempts {
			row(tw, "  "+a.At.Format("15:04:05.000"), a.Tool, a.Outcome, a.OperationKey, a.Summary)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	tw = newTable(w)
	for _, e := range r.Events {
		row(tw, "  "+e.At.Format("15:04:05.000"), e.Kind, e.Actor+": "+e.Reason)
	}
	return tw.Flush()
}

// describeDelivery says where a message got to, and why it stopped.
func describeDelivery(d *apitype.Delivery) string {
	out := fmt.Sprintf("%s %s", d.MessageID, d.Status)
	if d.Recipient != "" {
		out += " to " + d.Recipient
	}
	if d.ErrorCode != "" {
		out += fmt.Sprintf(" (error %s)", d.ErrorCode)
	}
	return out + " at " + d.UpdatedAt.Format("2006-01-02 15:04:05Z")
}

func orNone(s string) string {
	if s == "" {
		return "none given"
	}
	return s
}
