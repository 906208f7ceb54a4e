// Package jstext turns bytes into text the way upstream's JavaScript does:
// [Decode] is TextDecoder("utf-8") without fatal (the WHATWG Encoding
// Standard's UTF-8 decoder, which Node's Buffer toString follows too): each
// maximal subpart of an ill-formed sequence becomes one U+FFFD. Go's
// strings.ToValidUTF8 replaces a whole run of bad bytes with one U+FFFD, and
// encoding/json replaces each bad byte: both differ from upstream's text.
// [Units] and [Head] are a string's length and its cut as JavaScript counts
// them, in UTF-16 code units.
//
// # Imports
//
// The standard library only.
package jstext
