//! Python strings as UTF-8, converted here rather than by CPython.
//!
//! Taking a `&str` from Python asks CPython for the string's UTF-8. A string with any
//! non-ASCII character is stored as one, two or four bytes per character, and CPython
//! converts it with a loop per character (a tenth of the time of `encode_ordinary` on
//! English with curly quotes), then keeps the copy inside the string for as long as the
//! string lives (a second copy of a large text). Here an ASCII string, or one whose UTF-8
//! CPython already holds, is borrowed as it is; any other is converted into a buffer that is
//! dropped after the call: two-byte strings by `encoding_rs` (SIMD over runs of ASCII).
//! Surrogates follow tiktoken (`encode("utf-16", "surrogatepass").decode("utf-16",
//! "replace")`): a high one followed by a low one is the character they spell, any other
//! becomes U+FFFD.

use std::borrow::Cow;

use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::string::PyStringData;
use pyo3::types::PyString;

/// The UTF-8 of `s` (see the module doc for surrogates).
pub fn utf8<'a>(s: &'a Bound<'_, PyString>) -> PyResult<Cow<'a, str>> {
    if let Some(held) = held_utf8(s) {
        return Ok(Cow::Borrowed(held));
    }
    // SAFETY: the representation is read as PyO3 documents it; the string is immutable and
    // `s` keeps it alive for 'a
    let data = unsafe { s.data()? };
    // Buffers sized to the text, not to its worst case (3 bytes per unit of a two-byte str
    // was a large allocation to zero: a tenth of encoding English text with curly quotes).
    let bytes = match data {
        PyStringData::Ucs1(latin1) => {
            let len = latin1.iter().map(|&b| 1 + (b >> 7) as usize).sum();
            convert(
                latin1,
                len,
                2,
                encoding_rs::mem::convert_latin1_to_utf8_partial,
            )
        }
        PyStringData::Ucs2(units) => {
            // a BMP string: UTF-16 without pairs, unless it holds surrogates, which are
            // then read as UTF-16 (tiktoken's rule) and unpaired ones replaced (at most three
            // bytes a unit: a pair's two units make four)
            let len = units
                .iter()
                .map(|&u| 1 + (u >= 0x80) as usize + (u >= 0x800) as usize)
                .sum();
            convert(
                units,
                len,
                3,
                encoding_rs::mem::convert_utf16_to_utf8_partial,
            )
        }
        PyStringData::Ucs4(chars) => ucs4_to_utf8(chars),
    };
    // SAFETY: both converters write UTF-8
    Ok(Cow::Owned(unsafe { String::from_utf8_unchecked(bytes) }))
}

/// `src` as UTF-8 by `partial` (an `encoding_rs` converter) into `len` bytes, enough for all
/// of it; should it stop short all the same, again into `per_unit` bytes a unit, its
/// documented room (a stop inside a surrogate pair would split the character).
fn convert<T>(
    src: &[T],
    len: usize,
    per_unit: usize,
    partial: impl Fn(&[T], &mut [u8]) -> (usize, usize),
) -> Vec<u8> {
    let mut out = vec![0; len];
    let (read, written) = partial(src, &mut out);
    if read == src.len() {
        out.truncate(written);
        return out;
    }
    let mut out = vec![0; per_unit * src.len()];
    let (_, written) = partial(src, &mut out);
    out.truncate(written);
    out
}

/// The UTF-8 that `s` holds already: all of an ASCII string, or the copy CPython made when
/// something asked for it before.
fn held_utf8<'a>(s: &'a Bound<'_, PyString>) -> Option<&'a str> {
    let op = s.as_ptr();
    // SAFETY: `op` is a str object; a compact string's header is a PyCompactUnicodeObject
    // (PyASCIIObject for ASCII), and both fields read are set once and then immutable
    unsafe {
        if ffi::PyUnicode_IS_COMPACT(op) == 0 {
            return None;
        }
        let (ptr, len) = if ffi::PyUnicode_IS_ASCII(op) != 0 {
            (
                ffi::PyUnicode_DATA(op) as *const u8,
                ffi::PyUnicode_GET_LENGTH(op),
            )
        } else {
            let compact = op as *const ffi::PyCompactUnicodeObject;
            ((*compact).utf8 as *const u8, (*compact).utf8_length)
        };
        if ptr.is_null() {
            return None;
        }
        let bytes = std::slice::from_raw_parts(ptr, len as usize);
        Some(std::str::from_utf8_unchecked(bytes))
    }
}

/// A four-byte string (one that holds a character beyond U+FFFF) as UTF-8.
fn ucs4_to_utf8(chars: &[u32]) -> Vec<u8> {
    let mut out: Vec<u8> = Vec::with_capacity(4 * chars.len());
    let dst = out.as_mut_ptr();
    let mut n = 0;
    let mut i = 0;
    while i < chars.len() {
        let mut c = chars[i];
        i += 1;
        if (0xD800..=0xDFFF).contains(&c) {
            c = match chars.get(i) {
                Some(&low) if c < 0xDC00 && (0xDC00..=0xDFFF).contains(&low) => {
                    i += 1;
                    0x10000 + ((c - 0xD800) << 10) + (low - 0xDC00)
                }
                _ => 0xFFFD,
            };
        }
        // SAFETY: at most 4 bytes per character were reserved, and `n` counts those written
        unsafe {
            if c < 0x80 {
                *dst.add(n) = c as u8;
                n += 1;
            } else if c < 0x800 {
                *dst.add(n) = 0xC0 | (c >> 6) as u8;
                *dst.add(n + 1) = 0x80 | (c & 0x3F) as u8;
                n += 2;
            } else if c < 0x10000 {
                *dst.add(n) = 0xE0 | (c >> 12) as u8;
                *dst.add(n + 1) = 0x80 | ((c >> 6) & 0x3F) as u8;
                *dst.add(n + 2) = 0x80 | (c & 0x3F) as u8;
                n += 3;
            } else {
                // (CPython's strings hold no code point above U+10FFFF)
                *dst.add(n) = 0xF0 | (c >> 18) as u8;
                *dst.add(n + 1) = 0x80 | ((c >> 12) & 0x3F) as u8;
                *dst.add(n + 2) = 0x80 | ((c >> 6) & 0x3F) as u8;
                *dst.add(n + 3) = 0x80 | (c & 0x3F) as u8;
                n += 4;
            }
            out.set_len(n);
        }
    }
    out
}
