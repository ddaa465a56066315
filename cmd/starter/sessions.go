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
	cmd.AddCommand(newSessionListCmd(g), newSessionShowCmd(g), newSessionRollbackCmd(g), newSessionResolveCmd(g), newSessionEndCmd(g), newSessionSetFactCmd(g))
	return cmd
}

func newSessionShowCmd(g *globals) *cobra.Command {
	show := &cobra.Command{
		Use:   "show ID",
		Short: "Show a session: calls, undo stack (LIFO), deferred work, post-call deliveries",
		Args:  sessionArg(1),
		RunE: func(cmd *cobra.Command, pos []string) error {
			s, err := g.client().Session(cmd.Context(), pos[0])
			if err != nil {
				return refusalOr(cmd, g, err)
			}
			if g.json {
				return printJSON(cmd.OutOrStdout(), s)
			}
			return printSession(cmd.OutOrStdout(), s)
		},
	}
	return show
}

func newSessionRollbackCmd(g *globals) *cobra.Command {
	var reason string
	rollback := &cobra.Command{
		Use:   "rollback ID",
		Short: "Run the session's compensations in LIFO order; a failing one halts the session",
		Args:  sessionArg(1),
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
				tw := newTable(w)
				for i, st := range res.Steps {
					row(tw, fmt.Sprintf("%d.", i+1), st.Status, st.Tool, st.OperationKey, st.Summary)
				}
				if err := tw.Flush(); err != nil {
					return err
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
	return rollback
}

func newSessionResolveCmd(g *globals) *cobra.Command {
	var (
		resolveReason string
		retry         bool
	)
	resolve := &cobra.Command{
		Use:   "resolve ID",
		Short: "Return a halted session to active, recording why and how (operator key)",
		Long: `Return a halted session to active, recording why and how (operator key).

Without --retry you compensated by hand: the undo entries the rollback could
not run (failed, or pending because their effect was unsettled) are closed as
compensated, with your reason. With --retry the rollback runs again, those
entries included, once the effects they undo have settled; the command answers
when it has run, and the session may halt again.`,
		Args: sessionArg(1),
		RunE: func(cmd *cobra.Command, pos []string) error {
			resolveWith := g.client().Resolve
			if retry {
				resolveWith = g.client().ResolveRetry
			}
			s, err := resolveWith(cmd.Context(), pos[0], resolveReason)
			if err != nil {
				return refusalOr(cmd, g, err)
			}
			if g.json {
				return printJSON(cmd.OutOrStdout(), s)
			}
			return printSession(cmd.OutOrStdout(), s)
		},
	}
	resolve.Flags().StringVar(&resolveReason, "reason", "", "what the human did (required)")
	_ = resolve.MarkFlagRequired("reason")
	resolve.Flags().BoolVar(&retry, "retry", false, "run the rollback again instead of closing its entries as compensated by hand")
	return resolve
}

func newSessionEndCmd(g *globals) *cobra.Command {
	var transcriptFile, transcriptRef string
	end := &cobra.Command{
		Use:   "end ID",
		Short: "End the call: deliver the call-ended signal with the transcript; deferred work is delivered after",
		Args:  sessionArg(1),
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
	return end
}

func newSessionSetFactCmd(g *globals) *cobra.Command {
	setFact := &cobra.Command{
		Use:   "set-fact ID NAME VALUE",
		Short: "Vouch for a session fact as an operator (e.g. a caller's number checked on the phone)",
		Long: "Records a fact with provenance operator:<your id>. Unlike what an agent states in\n" +
			"session_context, an auto-approval rule may rest on it, but only for tools whose approver\n" +
			"role (or vouch_roles) you hold; otherwise their calls still wait for a human. Needs the\n" +
			"vouch_facts permission. NAME must be declared in the catalog's session_facts.",
		Args: sessionArg(3),
		RunE: func(cmd *cobra.Command, pos []string) error {
			s, err := g.client().SetFact(cmd.Context(), pos[0], pos[1], pos[2])
			if err != nil {
				return refusalOr(cmd, g, err)
			}
			if g.json {
				return printJSON(cmd.OutOrStdout(), s)
			}
			return printSession(cmd.OutOrStdout(), s)
		},
	}
	return setFact
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
