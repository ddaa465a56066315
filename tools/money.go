package tools

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/text/currency"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// A Currency is the ISO 4217 currency an integer argument counts in minor
// units (cents of USD, yen of JPY), declared by a tool's money_fields so
// that people read an amount as money: 12500 of USD is $125.00, not the
// twelve thousand five hundred the bare number suggests.
type Currency struct {
	code   string
	symbol string
	// scale is how many digits of the amount are the minor unit: 2 for
	// USD, 0 for JPY, 3 for BHD.
	scale int
}

// currencyCodeRE is how a catalog spells a currency: the ISO 4217 code,
// in capitals, as every payment API and invoice does.
var currencyCodeRE = regexp.MustCompile(`^[A-Z]{3}$`)

// ParseCurrency reads an ISO 4217 code such as USD.
func ParseCurrency(code string) (Currency, error) {
	u, err := currency.ParseISO(code)
	if err != nil || !currencyCodeRE.MatchString(code) {
		return Currency{}, fmt.Errorf("%q is not an ISO 4217 currency code such as USD, EUR or JPY", code)
	}
	scale, _ := currency.Standard.Rounding(u)
	// English symbols: $ for USD, CA$ for CAD, the code where there is
	// no symbol of its own.
	symbol := message.NewPrinter(language.English).Sprint(currency.Symbol(u))
	return Currency{code: code, symbol: symbol, scale: scale}, nil
}

// Code is the currency's ISO 4217 code.
func (c Currency) Code() string { return c.code }

// Format shows an amount counted in the currency's minor unit as people
// write money, with its symbol and digit groups: 12500 of USD is
// "$125.00", 1250000 is "$12,500.00", 500 of JPY is "¥500" and 1500 of
// CHF is "CHF 15.00".
func (c Currency) Format(minor int64) string {
	sign := ""
	if minor < 0 {
		sign = "-"
	}
	digits := strconv.FormatUint(absolute(minor), 10)
	if len(digits) <= c.scale {
		digits = strings.Repeat("0", c.scale-len(digits)+1) + digits
	}
	whole, fraction := digits[:len(digits)-c.scale], digits[len(digits)-c.scale:]
	amount := grouped(whole)
	if fraction != "" {
		amount += "." + fraction
	}
	symbol := c.symbol
	if last := symbol[len(symbol)-1]; last >= 'A' && last <= 'Z' {
		// A code or lettered symbol (CHF, BHD) would run into the digits.
		symbol += " "
	}
	return sign + symbol + amount
}

// absolute is |n|, including for the one int64 whose negation overflows.
func absolute(n int64) uint64 {
	if n < 0 {
		return uint64(^n) + 1
	}
	return uint64(n)
}

// grouped puts a comma between each group of three digits.
func grouped(digits string) string {
	var b strings.Builder
	for i, d := range digits {
		if i > 0 && (len(digits)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(d)
	}
	return b.String()
}

// buildMoneyFields reads a row's money_fields: argument name to currency.
func buildMoneyFields(p *problems, row string, in map[string]string) map[string]Currency {
	if len(in) == 0 {
		return nil
	}
	out := make(map[string]Currency, len(in))
	for _, name := range slices.Sorted(maps.Keys(in)) {
		c, err := ParseCurrency(in[name])
		if err != nil {
			p.add(row, "money_fields."+name, "%v", err)
			continue
		}
		out[name] = c
	}
	return out
}

// moneyFields checks that each money field is an integer argument the
// tool's schema declares: an amount in minor units is a whole number, and
// a field the schema does not know would never be shown.
func (v *validator) moneyFields(row string, t *Tool) {
	if len(t.MoneyFields) == 0 {
		return
	}
	types := map[string]string{}
	for _, f := range t.InputSchema.Fields() {
		types[f.Name] = f.Type
	}
	for _, name := range slices.Sorted(maps.Keys(t.MoneyFields)) {
		typ, ok := types[name]
		switch {
		case !ok:
			v.p.add(row, "money_fields."+name, "%q is not an argument of the tool's input_schema", name)
		case typ == "":
			v.p.add(row, "money_fields."+name, "must be an argument of type integer counting the currency's minor unit (cents for USD); its schema gives it no single type")
		case typ != "integer":
			v.p.add(row, "money_fields."+name, "must be an argument of type integer counting the currency's minor unit (cents for USD), got type %s", typ)
		}
	}
}
