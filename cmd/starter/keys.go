package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
)

// keyHashJSON is the --json form of a key and the sha256 a catalog holds.
type keyHashJSON struct {
	Key    string `json:"key,omitempty"`
	SHA256 string `json:"sha256"`
}

func newKeysCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "keys", Short: "Make agent and operator keys for a catalog"}
	var prefix string
	newCmd := &cobra.Command{
		Use:   "new",
		Short: "Print a fresh random key and the sha256 the catalog stores",
		Long: "new prints a fresh random key (32 random bytes) and its sha256. Put the\n" +
			"sha256 in the catalog's api_key_sha256 for one agent or operator, and give\n" +
			"the key only to it: the catalog never holds the key itself.\n\n" +
			"The catalog refuses the hash of a key that can be guessed (rule weak-key):\n" +
			"the empty key, any key of 1 to 3 printable characters, any all-digit key of\n" +
			"up to 6 digits, and common passwords. It cannot tell other weak keys from\n" +
			"strong ones by their hash, so use keys this command makes.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			key, err := newKey(prefix)
			if err != nil {
				return err
			}
			return printKeyHash(cmd.OutOrStdout(), g, keyHashJSON{Key: key, SHA256: hashKey(key)})
		},
	}
	newCmd.Flags().StringVar(&prefix, "prefix", "maestro_", "text the key starts with, to tell keys apart in a secret store")
	hashCmd := &cobra.Command{
		Use:   "hash",
		Short: "Print the sha256 of a key read from stdin",
		Long: "hash reads one key from stdin (a trailing newline is ignored) and prints\n" +
			"the sha256 the catalog stores in api_key_sha256, so the key never appears\n" +
			"on a command line: printf %s \"$KEY\" | starter keys hash\n\n" +
			"The catalog refuses the hash of a short or common key (see keys new).",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			key, err := readKey(cmd.InOrStdin())
			if err != nil {
				return err
			}
			return printKeyHash(cmd.OutOrStdout(), g, keyHashJSON{SHA256: hashKey(key)})
		},
	}
	cmd.AddCommand(newCmd, hashCmd)
	return cmd
}

// readKey reads the first line of r. A key with spaces around it, or more
// than one line, is refused rather than hashed into a value no client sends.
func readKey(r io.Reader) (string, error) {
	data, err := io.ReadAll(io.LimitReader(r, 4096))
	if err != nil {
		return "", fmt.Errorf("error reading the key from stdin: %w", err)
	}
	text := strings.TrimSuffix(strings.TrimSuffix(string(data), "\n"), "\r")
	switch {
	case text == "":
		return "", errors.New("no key on stdin: pipe one in, e.g. printf %s \"$KEY\" | starter keys hash")
	case strings.ContainsAny(text, "\r\n"):
		return "", errors.New("stdin holds more than one line: pipe in a single key")
	case strings.TrimSpace(text) != text:
		return "", errors.New("the key on stdin starts or ends with spaces; clients send keys without them")
	}
	return text, nil
}

func printKeyHash(w io.Writer, g *globals, k keyHashJSON) error {
	if g.json {
		return printJSON(w, k)
	}
	if k.Key != "" {
		fmt.Fprintf(w, "key:    %s\n", k.Key)
		fmt.Fprintf(w, "sha256: %s\n", k.SHA256)
		return nil
	}
	fmt.Fprintln(w, k.SHA256)
	return nil
}
