package twilio

import (
	"strings"
	"unicode/utf16"
)

// GSM 03.38: the basic set costs one septet a character, the extension set
// two (escape plus character). Anything else forces UCS-2 for the whole body.
const (
	gsmBasic     = "@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !\"#¤%&'()*+,-./0123456789:;<=>?¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà"
	gsmExtension = "\f^{}\\[~]|€"
)

// Per-segment capacity: a single SMS, then each part of a concatenated one
// after the user data header takes its share.
const (
	gsmSingle  = 160
	gsmPart    = 153
	ucs2Single = 70
	ucs2Part   = 67
)

// segmentCount is how many SMS segments body is billed as.
func segmentCount(body string) int {
	if septets, ok := gsmSeptets(body); ok {
		return parts(septets, gsmSingle, gsmPart)
	}
	return parts(len(utf16.Encode([]rune(body))), ucs2Single, ucs2Part)
}

func gsmSeptets(body string) (int, bool) {
	n := 0
	for _, r := range body {
		switch {
		case strings.ContainsRune(gsmBasic, r):
			n++
		case strings.ContainsRune(gsmExtension, r):
			n += 2
		default:
			return 0, false
		}
	}
	return n, true
}

func parts(units, single, part int) int {
	if units <= single {
		return 1
	}
	return (units + part - 1) / part
}
