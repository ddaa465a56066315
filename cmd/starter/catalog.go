package main

import (
	"crypto/rand"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/spf13/cobra"
)

//go:embed starter_catalog.yaml
var starterCatalog string

// catalogKeys are the keys a new catalog was written for: printed once,
// stored in the catalog only as their sha256.
type catalogKeys struct {
	Path        string `json:"path,omitempty"`
	AgentKey    string `json:"agent_key"`
	OperatorKey string `json:"operator_key"`
}

func newCatalogCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "catalog", Short: "Write and check tool catalogs, and have a running maestro reload its own"}
	var force bool
	initCmd := &cobra.Command{
		Use:   "init [path]",
		Short: "Write a minimal catalog with fresh agent and operator keys",
		Long: "init writes a minimal valid catalog to path, or to stdout without one, with a\n" +
			"fresh random agent key and operator key. The keys are printed once, on\n" +
			"stdout when the catalog goes to a file and on stderr when it goes to\n" +
			"stdout; the catalog holds only their sha256. It refuses to overwrite a\n" +
			"file unless --force is given. docs/catalog.md describes every field.",
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			keys, text, err := newStarterCatalog()
			if err != nil {
				return err
			}
			report := cmd.ErrOrStderr()
			if len(args) == 0 || args[0] == "-" {
				if _, err := io.WriteString(cmd.OutOrStdout(), text); err != nil {
					return fmt.Errorf("error writing the catalog: %w", err)
				}
			} else {
				if err := writeNewFile(args[0], text, force); err != nil {
					return err
				}
				keys.Path = args[0]
				report = cmd.OutOrStdout()
			}
			if g.json {
				return printJSON(report, keys)
			}
			printCatalogKeys(report, keys)
			return nil
		},
	}
	initCmd.Flags().BoolVar(&force, "force", false, "overwrite path if it exists")
	cmd.AddCommand(initCmd, newCatalogReloadCmd(g), newCatalogVersionsCmd(g), newCatalogCheckCmd(g))
	return cmd
}

// newStarterCatalog returns fresh keys and the starter catalog holding
// their hashes.
func newStarterCatalog() (catalogKeys, string, error) {
	agent, err := newKey("maestro_agent_")
	if err != nil {
		return catalogKeys{}, "", err
	}
	ops, err := newKey("maestro_ops_")
	if err != nil {
		return catalogKeys{}, "", err
	}
	text := strings.NewReplacer(
		"{{AGENT_KEY_SHA256}}", hashKey(agent),
		"{{OPERATOR_KEY_SHA256}}", hashKey(ops),
	).Replace(starterCatalog)
	return catalogKeys{AgentKey: agent, OperatorKey: ops}, text, nil
}

func newKey(prefix string) (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("error generating a key: %w", err)
	}
	return prefix + hex.EncodeToString(b), nil
}

// hashKey is how a catalog stores a key: its sha256 in hex, as maestro's
// catalog loader expects (the catalog tests hold the two to the same
// answer). Computed here so the CLI does not link the server's catalog code.
func hashKey(key string) string {
	h := sha256.Sum256([]byte(key))
	return hex.EncodeToString(h[:])
}

func writeNewFile(path, text string, force bool) error {
	flags := os.O_WRONLY | os.O_CREATE | os.O_EXCL
	if force {
		flags = os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	}
	f, err := os.OpenFile(path, flags, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("%s already exists: pass --force to overwrite it (its keys stop working)", path)
	}
	if err != nil {
		return fmt.Errorf("error creating the catalog: %w", err)
	}
	if _, err := io.WriteString(f, text); err != nil {
		_ = f.Close()
		return fmt.Errorf("error writing the catalog: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("error writing the catalog: %w", err)
	}
	return nil
}

func printCatalogKeys(w io.Writer, k catalogKeys) {
	if k.Path != "" {
		fmt.Fprintf(w, "wrote %s\n\n", k.Path)
	}
	fmt.Fprintf(w, "agent key:    %s\noperator key: %s\n\n", k.AgentKey, k.OperatorKey)
	fmt.Fprintln(w, "These keys are shown only now; the catalog stores only their sha256. Keep them in your secret store.")
	fmt.Fprintln(w, "Point the backoffice service at your API with MAESTRO_HTTP_SERVICE_BACKOFFICE_URL, then start maestro with --catalog.")
}
