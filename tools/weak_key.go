package tools

import (
	"crypto/sha256"
	"encoding/binary"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// RuleWeakKey: an api_key_sha256 is the hash of a key short or common
// enough to guess (see weakKeyClass).
const RuleWeakKey = "weak-key"

const (
	// weakMaxPrintable: every key of up to this many printable ASCII
	// characters is refused.
	weakMaxPrintable = 3
	// weakMaxDigits: every all-digit key of up to this many digits is
	// refused. Each digit more is ten times the hashing: eight would take
	// seconds of CPU at the first load, six about a tenth of one.
	weakMaxDigits = 6
)

// commonWeakKeys are keys people choose when asked for a secret; each is
// also refused capitalised, in capitals, and with 1, 123 or ! after it.
var commonWeakKeys = []string{
	"password", "passw0rd", "p@ssw0rd", "pass", "secret", "s3cret", "changeme", "changeit", "admin",
	"administrator", "root", "toor", "test", "testing", "tester", "guest", "user", "login", "welcome",
	"default", "letmein", "qwerty", "qwertyuiop", "asdf", "asdfgh", "zxcvbn", "abc123", "abcdef",
	"1q2w3e4r", "1qaz2wsx", "iloveyou", "trustno1", "monkey", "dragon", "master", "shadow", "sunshine",
	"princess", "football", "baseball", "superman", "hello", "key", "apikey", "api-key", "api_key",
	"token", "demo", "example", "sample", "temp", "dev", "development", "staging", "production", "prod",
	"maestro", "agent", "operator", "ops", "manager", "foobar", "foo", "bar", "12345678", "87654321",
	"123456789", "1234567890", "0123456789", "11111111", "00000000", "99999999", "123123123",
}

// weakKeyClass names the kind of guessable key whose hash is h: the empty
// key, one of up to weakMaxPrintable printable ASCII characters, one of up
// to weakMaxDigits digits, or a common one. It is empty for every other
// hash, which the loader cannot tell from a strong key's.
func weakKeyClass(h keyHash) string {
	if !weakKeys().has(h) {
		return ""
	}
	// A prefix matched: find the key, which also rules out a strong key
	// that merely shares four bytes of hash with a weak one.
	class := ""
	eachWeakKey(func(key []byte, c string) bool {
		if sha256.Sum256(key) == h {
			class = c
			return false
		}
		return true
	})
	return class
}

// weakKeys is the first four bytes of every weak key's hash: computed
// once, at the first load that checks a key, and kept small since
// weakKeyClass confirms a match by the key.
var weakKeys = sync.OnceValue(buildWeakKeySet)

// weakKeySet holds four-byte hash prefixes bucketed by their first two
// bytes: low[start[b]:start[b+1]] are the last two bytes of the prefixes
// whose first two are b. Two bytes a key, where a sorted []uint32 would
// take four, and built in linear time, where sorting two million prefixes
// would take longer than hashing them.
type weakKeySet struct {
	start [1<<16 + 1]uint32
	low   []uint16
}

func (s *weakKeySet) has(h keyHash) bool {
	b := binary.BigEndian.Uint16(h[:2])
	return slices.Contains(s.low[s.start[b]:s.start[b+1]], binary.BigEndian.Uint16(h[2:4]))
}

func buildWeakKeySet() *weakKeySet {
	prefixes := make([]uint32, 0, weakKeyCount())
	eachWeakKey(func(key []byte, _ string) bool {
		sum := sha256.Sum256(key)
		prefixes = append(prefixes, binary.BigEndian.Uint32(sum[:4]))
		return true
	})
	s := &weakKeySet{low: make([]uint16, len(prefixes))}
	for _, p := range prefixes {
		s.start[p>>16+1]++
	}
	for b := 1; b < len(s.start); b++ {
		s.start[b] += s.start[b-1]
	}
	next := s.start
	for _, p := range prefixes {
		s.low[next[p>>16]] = uint16(p)
		next[p>>16]++
	}
	return s
}

// weakKeyCount is about how many keys eachWeakKey yields.
func weakKeyCount() int {
	n, p, d := 1, 1, 1
	for i := 1; i <= weakMaxPrintable; i++ {
		p *= '~' - ' ' + 1
		n += p
	}
	for i := 1; i <= weakMaxDigits; i++ {
		d *= 10
		if i > weakMaxPrintable {
			n += d
		}
	}
	return n + 6*len(commonWeakKeys)
}

// eachWeakKey yields every key weakKeyClass knows, with its class, until
// yield returns false. The key's bytes are valid only during the call.
func eachWeakKey(yield func(key []byte, class string) bool) {
	var buf [weakMaxDigits]byte
	if !yield(buf[:0], "the empty key") {
		return
	}
	printable := make([]byte, 0, '~'-' '+1)
	for c := byte(' '); c <= '~'; c++ {
		printable = append(printable, c)
	}
	short := "a key of " + strconv.Itoa(weakMaxPrintable) + " characters or fewer"
	for n := 1; n <= weakMaxPrintable; n++ {
		if !eachString(printable, buf[:n], 0, short, yield) {
			return
		}
	}
	digits := "an all-digit key of " + strconv.Itoa(weakMaxDigits) + " digits or fewer"
	for n := weakMaxPrintable + 1; n <= weakMaxDigits; n++ {
		if !eachString([]byte("0123456789"), buf[:n], 0, digits, yield) {
			return
		}
	}
	for _, k := range commonWeakKeys {
		for _, v := range []string{k, strings.ToUpper(k[:1]) + k[1:], strings.ToUpper(k), k + "1", k + "123", k + "!"} {
			if !yield([]byte(v), "a common password") {
				return
			}
		}
	}
}

// eachString yields every string over alphabet of len(buf), filling buf
// from position i.
func eachString(alphabet, buf []byte, i int, class string, yield func([]byte, string) bool) bool {
	if i == len(buf) {
		return yield(buf, class)
	}
	for _, c := range alphabet {
		buf[i] = c
		if !eachString(alphabet, buf, i+1, class, yield) {
			return false
		}
	}
	return true
}

// refuseWeakKey reports h against row's api_key_sha256 if it is the hash
// of a key that can be guessed, and says whether it did.
func refuseWeakKey(p *problems, row string, h keyHash) bool {
	class := weakKeyClass(h)
	if class == "" {
		return false
	}
	p.addRule(RuleWeakKey, row, "api_key_sha256",
		"is the sha256 of %s, which can be guessed (rule %s): make a key of 32 random bytes with `starter keys new` and put its sha256 here",
		class, RuleWeakKey)
	return true
}
