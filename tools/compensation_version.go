package tools

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// digestLen is how many hex digits of a row's sha256 a compensation
// version carries: enough that an edit never collides by chance, short
// enough to read in a halt reason.
const digestLen = 16

// rowDigest is the sha256 of catalog content as data, without the comments
// and layout of the file: reformatting or moving a row changes nothing,
// editing a field it covers changes the digest.
func rowDigest(v any) (string, error) {
	raw, err := yaml.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("error encoding catalog row: %w", err)
	}
	var data any
	if err := yaml.Unmarshal(raw, &data); err != nil {
		return "", fmt.Errorf("error decoding catalog row: %w", err)
	}
	canonical, err := json.Marshal(data)
	if err != nil {
		return "", fmt.Errorf("error encoding catalog row: %w", err)
	}
	sum := sha256.Sum256(canonical)
	return hex.EncodeToString(sum[:]), nil
}

// contract is the part of a tool row that decides what a call does and how
// its outcome is proven. Description, owner, risk tags and wording are left
// out: editing them changes no effect, so it strands no rollback.
type contract struct {
	Effect        string        `yaml:"effect"`
	Delivery      string        `yaml:"delivery"`
	Reversibility string        `yaml:"reversibility"`
	InputSchema   yaml.Node     `yaml:"input_schema"`
	Connector     yaml.Node     `yaml:"connector"`
	Receipt       *receiptFile  `yaml:"receipt"`
	Approval      *approvalFile `yaml:"approval"`
}

func contractOf(tf toolFile) contract {
	return contract{Effect: tf.Effect, Delivery: tf.Delivery, Reversibility: tf.Reversibility,
		InputSchema: tf.InputSchema, Connector: tf.Connector, Receipt: tf.Receipt, Approval: tf.Approval}
}

// VersionString is the compensation version an undo entry records:
// "<version>+<digest>", the compensation tool's declared version and a
// digest of what the undo would run (the compensation tool's contract: its
// classes, schema, connector, receipt and approval; and the compensated
// tool's compensation block, which renders its arguments). The declared version is what
// an author bumps; the digest catches an edit nobody bumped it for, so an
// undo never runs a compensation different from the one recorded.
func (c *Compensation) VersionString() string {
	if c.digest == "" {
		return strconv.Itoa(c.Version)
	}
	return strconv.Itoa(c.Version) + "+" + c.digest
}

// SameVersion reports whether a version an undo entry recorded names this
// compensation. Entries recorded before versions carried a digest hold the
// declared version alone, and are compared on it.
func (c *Compensation) SameVersion(recorded string) bool {
	if !strings.Contains(recorded, "+") {
		return recorded == strconv.Itoa(c.Version)
	}
	return recorded == c.VersionString()
}

// sealVersion fixes the compensation's digest once its target is known.
func (c *Compensation) sealVersion(target *Tool) {
	sum := sha256.Sum256([]byte(target.rowDigest + "\n" + c.blockDigest))
	c.digest = hex.EncodeToString(sum[:])[:digestLen]
}
