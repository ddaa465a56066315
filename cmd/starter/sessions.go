package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/maestro-run/maestro/apitype"
	mt "github.com/maestro-run/maestro/maestrotype"
)

func newSessionsCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "sessions",
		Aliases: []string{"session"},
		Short:   "Inspect sessions, roll them back, end calls, resolve halts",
	}
	show := &cobra.Command{
		Use:   "show ID",
		Short: "Show a session: calls, undo stack (LIFO), deferred work, post-call deliveries",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, pos []string) error {
			s, err := g.client().Session(cmd.Context(), pos[0])
			if err != nil {
				return refusalOr(cmd, g, err)
			}
			if g.json {
				return printJSON(cmd.OutOrStdout(), s)
			}
			printSession(cmd.OutOrStdout(), s)
			return nil
		},
	}
	var reason string
	rollback := &cobra.Command{
		Use:   "rollback ID",
		Short: "Run the session's compensations in LIFO order; a failing one halts the session",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, pos []string) error {
			res, err := g.client().Rollback(cmd.Context(), pos[0], reason)
			if err != nil {
				return refusalOr(cmd, g, err)
			}
			w := cmd.OutOrStdout()
			if g.json {
				if err := printJSON(w, res); err != nil {
					return err
				}
			} else {
				for i, st := range res.Steps {
					fmt.Fprintf(w, "%d. %-12s %-18s %s  %s\n", i+1, st.Status, st.Tool, st.OperationKey, st.Summary)
				}
				if res.Halted {
					fmt.Fprintf(w, "halted at %s: an operator must resolve the session\n", res.FailedStep)
				}
			}
			if res.Halted {
				return &exitError{code: 3}
			}
			return nil
		},
	}
	rollback.Flags().StringVar(&reason, "reason", "", "why, recorded with the rollback")

	var resolveReason string
	resolve := &cobra.Command{
		Use:   "resolve ID",
		Short: "Return a halted session to active, recording why (operator key)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, pos []string) error {
			s, err := g.client().Resolve(cmd.Context(), pos[0], resolveReason)
			if err != nil {
				return refusalOr(cmd, g, err)
			}
			if g.json {
				return printJSON(cmd.OutOrStdout(), s)
			}
			printSession(cmd.OutOrStdout(), s)
			return nil
		},
	}
	resolve.Flags().StringVar(&resolveReason, "reason", "", "what the human did (required)")
	_ = resolve.MarkFlagRequired("reason")

	var transcriptFile, transcriptRef string
	end := &cobra.Command{
		Use:   "end ID",
		Short: "End the call: deliver the call-ended signal with the transcript; deferred work is delivered after",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, pos []string) error {
			req := apitype.EndRequest{TranscriptRef: transcriptRef}
			if transcriptFile != "" {
				t, err := readTranscript(transcriptFile)
				if err != nil {
					return err
				}
				req.Transcript = t
			}
			res, err := g.client().End(cmd.Context(), pos[0], req)
			if err != nil {
				return refusalOr(cmd, g, err)
			}
			if g.json {
				return printJSON(cmd.OutOrStdout(), res)
			}
			if res.Ended {
				fmt.Fprintf(cmd.OutOrStdout(), "call %s ended; post-call workflow %s delivers its deferred work\n", res.SessionID, res.PostCallWorkflowID)
			} else {
				fmt.Fprintf(cmd.OutOrStdout(), "call %s had already ended; nothing sent again\n", res.SessionID)
			}
			return nil
		},
	}
	end.Flags().StringVar(&transcriptFile, "transcript", "", `transcript JSON file ({"turns":[{"speaker","text","at"}]}), or - for stdin`)
	end.Flags().StringVar(&transcriptRef, "transcript-ref", "", "URL the post-call workflow fetches the transcript from")
	cmd.AddCommand(show, rollback, resolve, end)
	return cmd
}

// readTranscript reads a transcript from a file, or stdin for "-".
func readTranscript(path string) (*mt.Transcript, error) {
	var r io.Reader = os.Stdin
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return nil, fmt.Errorf("error opening transcript: %w", err)
		}
		defer f.Close()
		r = f
	}
	var t mt.Transcript
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&t); err != nil {
		return nil, fmt.Errorf("error reading transcript %s: %w", path, err)
	}
	return &t, nil
}

func printSession(w io.Writer, s apitype.Session) {
	fmt.Fprintf(w, "session     %s\nagent       %s\nstate       %s\n", s.SessionID, s.AgentID, s.State)
	if s.HaltStep != "" {
		fmt.Fprintf(w, "halted at   %s: %s\n", s.HaltStep, s.HaltReason)
	}
	if s.ResolvedBy != "" {
		fmt.Fprintf(w, "resolved by %s: %s\n", s.ResolvedBy, s.ResolveReason)
	}
	fmt.Fprintln(w, "calls:")
	for _, c := range s.Calls {
		fmt.Fprintf(w, "  %-22s %-18s %-20s %s\n", c.Tool, c.State, c.OperationKey, c.Summary)
		if c.Delivery != nil {
			fmt.Fprintf(w, "  %-22s delivery %s\n", "", describeDelivery(c.Delivery))
		}
		if c.FollowUp != "" {
			fmt.Fprintf(w, "  %-22s FOLLOW UP: %s\n", "", c.FollowUp)
		}
	}
	fmt.Fprintln(w, "undo stack (runs top first):")
	for _, u := range s.UndoStack {
		fmt.Fprintf(w, "  #%-4d %-18s %-12s for %s %s\n", u.Seq, u.Tool, u.Status, u.OperationKey, u.Detail)
	}
	fmt.Fprintln(w, "deferred:")
	for _, d := range s.Deferred {
		rid := ""
		if d.Receipt != nil {
			rid = d.Receipt.ID
		}
		fmt.Fprintf(w, "  %-22s %-10s %s %s\n", d.Tool, d.Status, rid, d.Reason)
	}
	fmt.Fprintln(w, "post-call:")
	for _, p := range s.PostCall {
		rid := ""
		if p.Receipt != nil {
			rid = p.Receipt.ID
		}
		fmt.Fprintf(w, "  %-22s %-18s %-10s %s %s\n", p.Key, p.Tool, p.Status, rid, p.Reason)
	}
}
