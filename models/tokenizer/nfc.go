package tokenizer

import (
	"unicode"
	"unicode/utf8"
)

// NFC without its tables: tpucc carries no Unicode composition data, so it
// applies the NFC normalizer only to text that NFC provably leaves as it is,
// and refuses other text. A rune is inert when it is assigned, is not a
// combining mark (no canonical combining class, cannot be the second half
// of a composition), and NFC maps it to itself; text of inert runes is in
// NFC. The test checks this table against Python's unicodedata.

// notInert lists the assigned runes outside the M categories that NFC
// changes (singletons, composition exclusions) or that compose with the rune
// before them (Hangul vowel and trailing jamo), from Unicode 14.
var notInert = &unicode.RangeTable{
	R16: []unicode.Range16{
		{0x0374, 0x0374, 1}, {0x037e, 0x037e, 1}, {0x0387, 0x0387, 1},
		{0x0958, 0x095f, 1}, {0x09dc, 0x09dd, 1}, {0x09df, 0x09df, 1},
		{0x0a33, 0x0a33, 1}, {0x0a36, 0x0a36, 1}, {0x0a59, 0x0a5b, 1},
		{0x0a5e, 0x0a5e, 1}, {0x0b5c, 0x0b5d, 1}, {0x0f43, 0x0f43, 1},
		{0x0f4d, 0x0f4d, 1}, {0x0f52, 0x0f52, 1}, {0x0f57, 0x0f57, 1},
		{0x0f5c, 0x0f5c, 1}, {0x0f69, 0x0f69, 1},
		{0x1161, 0x1175, 1}, {0x11a8, 0x11c2, 1},
		{0x1f71, 0x1f7d, 2}, {0x1fbb, 0x1fbb, 1}, {0x1fbe, 0x1fbe, 1},
		{0x1fc9, 0x1fcb, 2}, {0x1fd3, 0x1fd3, 1}, {0x1fdb, 0x1fdb, 1},
		{0x1fe3, 0x1fe3, 1}, {0x1feb, 0x1feb, 1}, {0x1fee, 0x1fef, 1},
		{0x1ff9, 0x1ffb, 2}, {0x1ffd, 0x1ffd, 1}, {0x2000, 0x2001, 1},
		{0x2126, 0x2126, 1}, {0x212a, 0x212b, 1}, {0x2329, 0x232a, 1},
		{0x2adc, 0x2adc, 1}, {0xf900, 0xfa0d, 1}, {0xfa10, 0xfa10, 1},
		{0xfa12, 0xfa12, 1}, {0xfa15, 0xfa1e, 1}, {0xfa20, 0xfa20, 1},
		{0xfa22, 0xfa22, 1}, {0xfa25, 0xfa26, 1}, {0xfa2a, 0xfa6d, 1},
		{0xfa70, 0xfad9, 1}, {0xfb1d, 0xfb1d, 1}, {0xfb1f, 0xfb1f, 1},
		{0xfb2a, 0xfb36, 1}, {0xfb38, 0xfb3c, 1}, {0xfb3e, 0xfb3e, 1},
		{0xfb40, 0xfb41, 1}, {0xfb43, 0xfb44, 1}, {0xfb46, 0xfb4e, 1},
	},
	R32: []unicode.Range32{
		{0x1d15e, 0x1d164, 1}, {0x1d1bb, 0x1d1c0, 1}, {0x2f800, 0x2fa1d, 1},
	},
}

// assigned are the general categories of assigned, non-surrogate runes.
var assigned = []*unicode.RangeTable{unicode.L, unicode.M, unicode.N, unicode.P, unicode.S, unicode.Z, unicode.Cc, unicode.Cf, unicode.Co}

func runeInert(r rune) bool {
	if r < 0x300 {
		return true // below the first combining mark nothing composes or changes
	}
	return unicode.In(r, assigned...) && !unicode.Is(unicode.M, r) && !unicode.Is(notInert, r)
}

// firstNotInert returns the first rune of s that is not inert, with its
// byte offset; ok is true when there is none. Invalid UTF-8 is not inert.
func firstNotInert(s string) (at int, r rune, ok bool) {
	for i, r := range s {
		if r == utf8.RuneError || !runeInert(r) {
			return i, r, false
		}
	}
	return 0, 0, true
}

func nfcInert(s string) bool {
	_, _, ok := firstNotInert(s)
	return ok
}
