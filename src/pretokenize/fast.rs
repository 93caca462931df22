//! Hand-written scanners for the preset patterns (gpt2, cl100k, o200k).
//!
//! Each `next_*` function returns the end of the pre-token that starts at byte `i`,
//! exactly where the regex's leftmost-first match would end. The alternatives are tried in
//! the order the pattern lists them, and the few places where the regex backtracks
//! (`\s+(?!\S)` giving back one character, o200k's `[upper]*[lower]+`) are worked out
//! directly. Character classes come from the regex's own Unicode tables (`classes.rs`).
//! `tests` checks every scanner against fancy-regex on many random strings; the Python
//! suite checks them again against the `regex` module and tiktoken.

use super::classes::{Classes, LETTER, LOWER, NUMBER, SPACE, UPPER};

/// Which preset a scanner implements.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Preset {
    Gpt2,
    Cl100k,
    O200k,
}

/// Calls `f` on each pre-token of `text`: cl100k and o200k 64 bytes at a time where the CPU
/// has AVX2 (`windows.rs`, which comes back here for what it cannot decide).
pub fn for_each<'t>(preset: Preset, text: &'t str, f: impl super::Sink<'t>) {
    let cls = Classes::get();
    if super::windows::available() {
        match preset {
            Preset::O200k => {
                let scalar = |t: &str, i| one(t, i, cls, next_o200k);
                return super::windows::for_each::<true>(text, f, scalar);
            }
            Preset::Cl100k => {
                let scalar = |t: &str, i| one(t, i, cls, next_cl100k);
                return super::windows::for_each::<false>(text, f, scalar);
            }
            Preset::Gpt2 => {}
        }
    }
    for_each_scalar(preset, text, f)
}

/// [`for_each`] one pre-token at a time.
pub fn for_each_scalar<'t>(preset: Preset, text: &'t str, mut f: impl super::Sink<'t>) {
    let cls = Classes::get();
    let mut i = 0;
    while i < text.len() {
        let end = match preset {
            Preset::Gpt2 => one(text, i, cls, next_gpt2),
            Preset::Cl100k => one(text, i, cls, next_cl100k),
            Preset::O200k => one(text, i, cls, next_o200k),
        };
        f.piece(&text[i..end]);
        i = end;
    }
}

/// The end of the pre-token at `i` by `next`. Every branch of a scanner consumes at least
/// one character; this guards anyway, so that a bug can never loop forever or slice inside
/// a character.
#[inline(always)]
pub(super) fn one(
    text: &str,
    i: usize,
    cls: Classes,
    next: fn(&str, usize, Classes) -> usize,
) -> usize {
    let end = next(text, i, cls);
    if end > i && text.is_char_boundary(end) {
        end
    } else {
        i + char_at(text, i).map_or(1, |(_, n)| n)
    }
}

/// The character at byte `i` and its length in bytes.
#[inline(always)]
fn char_at(text: &str, i: usize) -> Option<(char, usize)> {
    let b = *text.as_bytes().get(i)?;
    if b < 0x80 {
        return Some((b as char, 1));
    }
    let c = text.get(i..)?.chars().next()?;
    Some((c, c.len_utf8()))
}

/// `char_at`, decoded here from the lead byte (None past the end, or inside a character):
/// for the runs of letters of non-Latin text, where through `str::chars` each character was
/// a call (a fifth of the scanner's time on Chinese and Hindi). (Used everywhere, it made
/// the code around the ASCII scanner larger, and English and code 1-2% slower.)
#[inline(always)]
fn decode_at(text: &str, i: usize) -> Option<(char, usize)> {
    let s = text.as_bytes();
    let b = *s.get(i)?;
    if b < 0x80 {
        return Some((b as char, 1));
    }
    // `text` is UTF-8: a lead byte is followed by its continuation bytes
    let more = |k: usize| (s[i + k] & 0x3F) as u32;
    let (c, n) = match b {
        0xC0..=0xDF => ((b as u32 & 0x1F) << 6 | more(1), 2),
        0xE0..=0xEF => ((b as u32 & 0x0F) << 12 | more(1) << 6 | more(2), 3),
        0xF0.. => (
            (b as u32 & 0x07) << 18 | more(1) << 12 | more(2) << 6 | more(3),
            4,
        ),
        _ => return None, // a continuation byte: not a character's start
    };
    Some((char::from_u32(c)?, n))
}

/// End of the run of characters from `i` whose flags satisfy `keep`.
#[inline(always)]
fn run(text: &str, mut i: usize, cls: Classes, keep: impl Fn(u16) -> bool) -> usize {
    while let Some((c, n)) = decode_at(text, i) {
        if !keep(cls.of(c)) {
            break;
        }
        i += n;
    }
    i
}

/// 0x80 in each byte lane of `x` (8 bytes read little-endian) holding an ASCII byte in
/// `lo..=hi`, 0 elsewhere. Eight bytes are classified with a few integer operations and no
/// branch: word lengths vary, and a loop that tests one byte at a time mispredicts its exit
/// once per word, which was most of the scanners' time on English.
#[inline(always)]
fn lanes_in(x: u64, lo: u8, hi: u8) -> u64 {
    const H: u64 = 0x8080_8080_8080_8080;
    const L: u64 = 0x0101_0101_0101_0101;
    let x7 = x & !H;
    // no lane carries into the next: x7 <= 0x7f and the added constant is <= 0x80
    let ge_lo = (x7 + L * (0x80 - lo as u64)) & H;
    let gt_hi = (x7 + L * (0x7f - hi as u64)) & H;
    ge_lo & !gt_hi & !x
}

/// End of the run of ASCII bytes from `i` that `lanes` marks (see `lanes_in`); it stops at
/// the first other byte, which may start a non-ASCII character the caller must look at.
#[inline(always)]
fn ascii_run(b: &[u8], mut i: usize, lanes: impl Fn(u64) -> u64) -> usize {
    while let Some(w) = b.get(i..i + 8) {
        let m = lanes(u64::from_le_bytes(w.try_into().unwrap()));
        let n = (!m & 0x8080_8080_8080_8080).trailing_zeros() as usize / 8;
        i += n;
        if n < 8 {
            return i;
        }
    }
    while i < b.len() && lanes(b[i] as u64) & 0x80 != 0 {
        i += 1;
    }
    i
}

#[inline(always)]
fn ascii_letters(x: u64) -> u64 {
    // `| 0x20` maps A-Z onto a-z and no other byte into a-z
    lanes_in(x | 0x2020_2020_2020_2020, b'a', b'z')
}

/// The common ASCII pre-token `P?[A-Za-z]+` of the cl100k and gpt2 patterns, where the optional
/// one-byte prefix `P` is accepted by `prefix`: its end, or `None` when the general scanner
/// must decide (no such word at `i`, or a non-ASCII character right after it).
#[inline(always)]
fn ascii_word(b: &[u8], i: usize, prefix: impl Fn(u8) -> bool) -> Option<usize> {
    let c = *b.get(i)?;
    let s = if c.is_ascii_alphabetic() {
        i
    } else if prefix(c) && b.get(i + 1)?.is_ascii_alphabetic() {
        i + 1
    } else {
        return None;
    };
    let e = letters_end_16(b, s).unwrap_or_else(|| ascii_run(b, s, ascii_letters));
    (b.get(e).is_none_or(|&n| n < 0x80)).then_some(e)
}

#[inline(always)]
fn is_other(f: u16) -> bool {
    f & (LETTER | NUMBER | SPACE) == 0
}

/// `\p{N}{1,3}` after its first number, which ends at `j`.
#[inline(always)]
fn up_to_three_numbers(text: &str, mut j: usize, cls: Classes) -> usize {
    for _ in 0..2 {
        match char_at(text, j) {
            Some((d, m)) if cls.of(d) & NUMBER != 0 => j += m,
            _ => break,
        }
    }
    j
}

/// ` ?[^\s\p{L}\p{N}]+` followed by the ASCII bytes `tail` accepts (cl100k `[\r\n]*`,
/// o200k `[\r\n/]*`): its end, if such a run starts at `i` (whose char is `c`).
#[inline(always)]
fn punctuation(
    text: &str,
    i: usize,
    c: char,
    cls: Classes,
    tail: impl Fn(u8) -> bool,
) -> Option<usize> {
    let start = if c == ' ' { i + 1 } else { i };
    let (c2, _) = char_at(text, start)?;
    if !is_other(cls.of(c2)) {
        return None;
    }
    let j = run(text, start, cls, is_other);
    Some(
        j + text.as_bytes()[j..]
            .iter()
            .take_while(|&&b| tail(b))
            .count(),
    )
}

/// A whitespace run from `i`: (end, start of its last character, end of its last `\r`/`\n`).
#[inline(always)]
fn space_run(text: &str, i: usize, cls: Classes) -> (usize, usize, Option<usize>) {
    let (mut j, mut last, mut newline) = (i, i, None);
    while let Some((c, n)) = char_at(text, j) {
        if cls.of(c) & SPACE == 0 {
            break;
        }
        if c == '\r' || c == '\n' {
            newline = Some(j + 1);
        }
        last = j;
        j += n;
    }
    (j, last, newline)
}

/// `\s+(?!\S)` then the last alternative: the whole run at the end of the text, else the
/// run minus its last character (which then starts the next pre-token), else one character.
#[inline(always)]
fn space_tail(text: &str, i: usize, end: usize, last: usize) -> usize {
    if end == text.len() {
        end
    } else if last > i {
        last
    } else {
        end
    }
}

/// gpt2 / r50k / p50k:
/// `'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s`
pub fn next_gpt2(text: &str, i: usize, cls: Classes) -> usize {
    let b = text.as_bytes();
    let Some((c, n)) = char_at(text, i) else {
        return text.len();
    };
    if let Some(e) = ascii_word(b, i, |p| p == b' ') {
        return e;
    }
    if c == '\'' {
        match (b.get(i + 1), b.get(i + 2)) {
            (Some(b's' | b'd' | b'm' | b't'), _) => return i + 2,
            (Some(b'l'), Some(b'l')) | (Some(b'v' | b'r'), Some(b'e')) => return i + 3,
            _ => {}
        }
    }
    // ` ?X+` for X in letters, numbers, other: the space joins a following run
    let start = if c == ' ' { i + 1 } else { i };
    if let Some((c2, _)) = char_at(text, start) {
        let f = cls.of(c2);
        if start > i || f & SPACE == 0 {
            if f & LETTER != 0 {
                return run(text, start, cls, |g| g & LETTER != 0);
            }
            if f & NUMBER != 0 {
                return run(text, start, cls, |g| g & NUMBER != 0);
            }
            if is_other(f) {
                return run(text, start, cls, is_other);
            }
        }
    }
    // whitespace
    let (end, last, _) = space_run(text, i, cls);
    if end == i {
        return i + n;
    }
    space_tail(text, i, end, last)
}

/// A case-insensitive contraction `'(?i:[sdmt]|ll|ve|re)` after the apostrophe at `i`:
/// its end. Unicode case folding makes `ſ` (U+017F) match `s`.
#[inline(always)]
fn contraction_ci(text: &str, i: usize) -> Option<usize> {
    let (c1, n1) = char_at(text, i + 1)?;
    match c1 {
        's' | 'S' | 'ſ' | 'd' | 'D' | 'm' | 'M' | 't' | 'T' => return Some(i + 1 + n1),
        _ => {}
    }
    let (c2, n2) = char_at(text, i + 1 + n1)?;
    let ok = matches!(
        (c1, c2),
        ('l' | 'L', 'l' | 'L') | ('v' | 'V' | 'r' | 'R', 'e' | 'E')
    );
    ok.then_some(i + 1 + n1 + n2)
}

/// cl100k_base:
/// `'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+|`
/// ` ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s`
pub fn next_cl100k(text: &str, i: usize, cls: Classes) -> usize {
    // `[^\r\n\p{L}\p{N}]?+\p{L}++`, unless an apostrophe may start a contraction first
    let prefix = |p: u8| p < 0x80 && !p.is_ascii_alphanumeric() && !b"\r\n'".contains(&p);
    if let Some(e) = ascii_word(text.as_bytes(), i, prefix) {
        return e;
    }
    let Some((c, n)) = char_at(text, i) else {
        return text.len();
    };
    if c == '\'' {
        if let Some(end) = contraction_ci(text, i) {
            return end;
        }
    }
    let f = cls.of(c);
    if f & LETTER != 0 {
        return run(text, i, cls, |g| g & LETTER != 0);
    }
    if f & NUMBER == 0 && c != '\r' && c != '\n' {
        if let Some((c2, _)) = char_at(text, i + n) {
            if cls.of(c2) & LETTER != 0 {
                return run(text, i + n, cls, |g| g & LETTER != 0);
            }
        }
    }
    if f & NUMBER != 0 {
        return up_to_three_numbers(text, i + n, cls);
    }
    if let Some(end) = punctuation(text, i, c, cls, |b| b == b'\r' || b == b'\n') {
        return end;
    }
    // whitespace: `\s++$`, then `\s*[\r\n]`, then `\s+(?!\S)`, then `\s`
    let (end, last, newline) = space_run(text, i, cls);
    if end == i {
        return i + n;
    }
    if end == text.len() {
        return end;
    }
    if let Some(nl) = newline {
        return nl;
    }
    space_tail(text, i, end, last)
}

/// o200k's contraction suffix `(?i:'s|'t|'re|'ve|'m|'ll|'d)?` at `i`: its end, or `i`.
#[inline(always)]
fn contraction_suffix(text: &str, i: usize) -> usize {
    if text.as_bytes().get(i) == Some(&b'\'') {
        if let Some(end) = contraction_ci(text, i) {
            return end;
        }
    }
    i
}

/// o200k's first alternative after the optional prefix, from `s`:
/// `[upper]*[lower]+contraction?` with the backtracking of `[upper]*` worked out: the
/// upper run gives back characters until one that is also lower can start `[lower]+`.
#[inline(always)]
fn o200k_alt1(text: &str, s: usize, cls: Classes) -> Option<usize> {
    // walk the upper run, remembering the last position whose char is also lower
    let mut j = s;
    let mut last_lower = None;
    while let Some((c, n)) = char_at(text, j) {
        let f = cls.of(c);
        if f & UPPER == 0 {
            break;
        }
        if f & LOWER != 0 {
            last_lower = Some(j);
        }
        j += n;
    }
    let lower_start = match char_at(text, j) {
        Some((c, _)) if cls.of(c) & LOWER != 0 => j,
        _ => last_lower?,
    };
    let end = run(text, lower_start, cls, |g| g & LOWER != 0);
    Some(contraction_suffix(text, end))
}

/// o200k's second alternative after the optional prefix: `[upper]+[lower]*contraction?`.
#[inline(always)]
fn o200k_alt2(text: &str, s: usize, cls: Classes) -> Option<usize> {
    let j = run(text, s, cls, |g| g & UPPER != 0);
    if j == s {
        return None;
    }
    let end = run(text, j, cls, |g| g & LOWER != 0);
    Some(contraction_suffix(text, end))
}

/// o200k's first two alternatives on ASCII: `P?[A-Z]*[a-z]+C?|P?[A-Z]+[a-z]*C?` with `P` one
/// byte that is not `\r`, `\n`, a letter or a digit. ASCII capitals are never lower-case, so
/// the regex cannot backtrack into the capitals and both alternatives end after the
/// lower-case run. `None` when the general scanner must decide.
#[inline(always)]
fn o200k_ascii_word(text: &str, i: usize) -> Option<usize> {
    let b = text.as_bytes();
    let c = *b.get(i)?;
    let s = if c.is_ascii_alphabetic() {
        i
    } else if c < 0x80
        && !c.is_ascii_digit()
        && !matches!(c, b'\r' | b'\n')
        && b.get(i + 1)?.is_ascii_alphabetic()
    {
        i + 1
    } else {
        return None;
    };
    let e = match upper_lower_end_16(b, s) {
        Some(e) => e,
        None => {
            let upper = ascii_run(b, s, |x| lanes_in(x, b'A', b'Z'));
            ascii_run(b, upper, |x| lanes_in(x, b'a', b'z'))
        }
    };
    match b.get(e) {
        None => Some(e),
        Some(&b'\'') => Some(contraction_suffix(text, e)),
        Some(&n) if n < 0x80 => Some(e),
        // a non-ASCII letter or mark may continue either run
        Some(_) => None,
    }
}

/// Which of the 16 bytes from `s` are ASCII capitals and which lower-case letters, as two
/// bit masks (byte `k` -> bit `k`): one SSE2 load and two comparisons classify a whole word,
/// where a loop per run mispredicted its exit once per word. `None` near the end of the text
/// (or off x86_64): the callers' word-at-a-time loops handle it.
#[inline(always)]
fn letters_16(b: &[u8], s: usize) -> Option<(u32, u32)> {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::*;
        let w = b.get(s..s + 16)?;
        // SAFETY: SSE2 is part of x86_64; `w` holds 16 readable bytes
        unsafe {
            let v = _mm_loadu_si128(w.as_ptr() as *const __m128i);
            // signed compares: bytes >= 0x80 are negative, in neither range
            let within = |lo: u8, hi: u8| {
                _mm_movemask_epi8(_mm_and_si128(
                    _mm_cmpgt_epi8(v, _mm_set1_epi8(lo as i8 - 1)),
                    _mm_cmplt_epi8(v, _mm_set1_epi8(hi as i8 + 1)),
                )) as u32
            };
            Some((within(b'A', b'Z'), within(b'a', b'z')))
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (b, s);
        None
    }
}

/// The end of `[A-Za-z]*` from `s`, if it ends within 16 bytes.
#[inline(always)]
fn letters_end_16(b: &[u8], s: usize) -> Option<usize> {
    let (upper, lower) = letters_16(b, s)?;
    let n = (!(upper | lower)).trailing_zeros();
    (n < 16).then_some(s + n as usize)
}

/// The end of `[A-Z]*[a-z]*` from `s`, if it ends within 16 bytes.
#[inline(always)]
fn upper_lower_end_16(b: &[u8], s: usize) -> Option<usize> {
    let (upper, lower) = letters_16(b, s)?;
    let u = (!upper).trailing_zeros();
    let n = u + (!(lower >> u)).trailing_zeros();
    (n < 16).then_some(s + n as usize)
}

/// The other common ASCII pre-tokens of o200k, whose alternatives the regex tries in vain
/// before them: a punctuation run ` ?[^\s\p{L}\p{N}]+[\r\n/]*` (`, `.` `."\n`), a number
/// `\p{N}{1,3}` and a lone `\n` before a non-space. `None` when the general scanner must
/// decide (a non-ASCII neighbour may be a letter, number or space of its own).
#[inline(always)]
fn o200k_ascii_other(b: &[u8], i: usize, cls: Classes) -> Option<usize> {
    let flags = |c: u8| (c < 0x80).then(|| cls.of(c as char));
    let c = *b.get(i)?;
    let f = flags(c)?;
    if f & NUMBER != 0 {
        let mut j = i + 1;
        while j < i + 3 && b.get(j).is_some_and(u8::is_ascii_digit) {
            j += 1;
        }
        return b.get(j).is_none_or(|&n| n < 0x80).then_some(j);
    }
    if c == b'\n' {
        let next = flags(*b.get(i + 1)?)?;
        return (next & SPACE == 0).then_some(i + 1);
    }
    // the run starts here, or after one space
    let start = if c == b' ' { i + 1 } else { i };
    if !is_other(flags(*b.get(start)?)?) {
        return None;
    }
    // one such char before a letter is the optional prefix of a word: the general scanner's
    if start == i && flags(*b.get(i + 1)?)? & LETTER != 0 {
        return None;
    }
    let mut j = start + 1;
    while let Some(&n) = b.get(j) {
        if !is_other(flags(n)?) {
            break;
        }
        j += 1;
    }
    while b.get(j).is_some_and(|&n| matches!(n, b'\r' | b'\n' | b'/')) {
        j += 1;
    }
    Some(j)
}

/// o200k_base:
/// `[^\r\n\p{L}\p{N}]?[upper]*[lower]+C?|[^\r\n\p{L}\p{N}]?[upper]+[lower]*C?|\p{N}{1,3}|`
/// ` ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`
/// with upper = `[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]`, lower = `[\p{Ll}\p{Lm}\p{Lo}\p{M}]`.
pub fn next_o200k(text: &str, i: usize, cls: Classes) -> usize {
    if let Some(e) = o200k_ascii_word(text, i) {
        return e;
    }
    if let Some(e) = o200k_ascii_other(text.as_bytes(), i, cls) {
        return e;
    }
    let Some((c, n)) = char_at(text, i) else {
        return text.len();
    };
    let f = cls.of(c);
    // the optional prefix: one char that is not \r, \n, a letter or a number (greedy: tried
    // with the prefix first, then without, for each alternative in turn)
    let prefix = f & (LETTER | NUMBER) == 0 && c != '\r' && c != '\n';
    if prefix {
        if let Some(e) = o200k_alt1(text, i + n, cls) {
            return e;
        }
    }
    if let Some(e) = o200k_alt1(text, i, cls) {
        return e;
    }
    if prefix {
        if let Some(e) = o200k_alt2(text, i + n, cls) {
            return e;
        }
    }
    if let Some(e) = o200k_alt2(text, i, cls) {
        return e;
    }
    if f & NUMBER != 0 {
        return up_to_three_numbers(text, i + n, cls);
    }
    if let Some(end) = punctuation(text, i, c, cls, |b| matches!(b, b'\r' | b'\n' | b'/')) {
        return end;
    }
    // whitespace: `\s*[\r\n]+`, then `\s+(?!\S)`, then `\s+`
    let (end, last, newline) = space_run(text, i, cls);
    if end == i {
        return i + n;
    }
    if let Some(nl) = newline {
        return nl;
    }
    space_tail(text, i, end, last)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pretokenize::{CL100K_PATTERN, GPT2_PATTERN, O200K_PATTERN};

    /// `decode_at` decodes as `str::chars` at every character's start, of every length and
    /// at the edges of each length's range, and says None inside a character and past the
    /// end.
    #[test]
    fn decode_at_decodes_as_std() {
        let edges = [
            0x0, 0x7F, 0x80, 0x7FF, 0x800, 0xD7FF, 0xE000, 0xFFFD, 0xFFFF, 0x10000, 0x10FFFF,
        ];
        let mut text: String = edges.iter().filter_map(|&c| char::from_u32(c)).collect();
        text.push_str("a\u{e9}\u{4e2d}\u{1f600}\u{915}\u{94d}z");
        let starts: Vec<usize> = text.char_indices().map(|(i, _)| i).collect();
        for i in 0..=text.len() + 1 {
            let want = text.get(i..).and_then(|t| t.chars().next());
            let got = decode_at(&text, i);
            assert_eq!(got, want.map(|c| (c, c.len_utf8())), "at {i}");
            assert_eq!(got, char_at(&text, i), "at {i}");
            assert_eq!(want.is_some(), starts.contains(&i));
        }
    }

    fn by_regex(re: &fancy_regex::Regex, text: &str) -> Vec<String> {
        re.find_iter(text)
            .map(|m| m.unwrap().as_str().to_string())
            .collect()
    }

    fn by_scanner(preset: Preset, text: &str) -> Vec<String> {
        let mut out = Vec::new();
        for_each(preset, text, |s: &str| out.push(s.to_string()));
        out
    }

    /// Characters chosen to hit every branch: ASCII classes, contraction letters and their
    /// folds, Unicode letters of each case class, marks, digits of other scripts, every kind
    /// of whitespace, and the `/` that o200k joins to newlines.
    const ALPHABET: &[char] = &[
        'a', 'b', 's', 't', 'l', 'v', 'e', 'r', 'd', 'm', 'S', 'T', 'L', 'V', 'E', 'R', 'D', 'M',
        'A', 'Z', 'ſ', 'K', '\'', '\'', '\'', ' ', ' ', ' ', '\n', '\n', '\r', '\t', '\u{b}',
        '\u{c}', '\u{85}', '\u{a0}', '\u{3000}', '\u{2028}', '\u{1c}', '0', '1', '9', '٣', '²',
        'Ⅻ', '.', ',', '!', '/', '/', '-', '(', '"', '$', '中', '文', 'ا', 'é', 'É', 'ǅ', 'ʰ',
        '\u{301}', '\u{64b}', '\u{903}', 'ß', '😀', '\u{200d}', '\u{fe0f}', 'Ω', 'ω', '\0', '_',
        '#',
    ];

    /// Mostly ASCII letters, so words run past the 8-byte windows of `ascii_run` and end on
    /// every kind of neighbour, ASCII or not; ASCII punctuation, digits and newlines for the
    /// o200k shortcuts.
    const WORDY: &[char] = &[
        'a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'k', 'l', 'm', 'n', 'o', 'p', 'r', 's', 't',
        'u', 'v', 'w', 'x', 'y', 'z', 'a', 'e', 'o', 's', 'A', 'Z', 'S', 'T', 'L', 'E', 'D', 'M',
        'R', 'V', 'I', 'O', ' ', ' ', ' ', '\'', '\n', '\r', '.', '"', '0', '7', 'é', 'É', 'ſ',
        '中', '\u{301}', 'ǅ', '\u{a0}', '@', '[', '`', '{', '\u{7f}', '/', ',', '\t', '5',
    ];

    fn random_text(seed: &mut u64, max_len: usize) -> String {
        random_from(ALPHABET, seed, max_len)
    }

    fn random_from(alphabet: &[char], seed: &mut u64, max_len: usize) -> String {
        let mut next = || {
            *seed ^= *seed << 13;
            *seed ^= *seed >> 7;
            *seed ^= *seed << 17;
            *seed
        };
        let len = (next() as usize) % (max_len + 1);
        (0..len)
            .map(|_| alphabet[(next() as usize) % alphabet.len()])
            .collect()
    }

    #[test]
    fn scanners_equal_regex_on_random_text() {
        for (preset, pattern) in [
            (Preset::Gpt2, GPT2_PATTERN),
            (Preset::Cl100k, CL100K_PATTERN),
            (Preset::O200k, O200K_PATTERN),
        ] {
            let re = fancy_regex::Regex::new(pattern).unwrap();
            let mut seed = 0x9E3779B97F4A7C15u64;
            for round in 0..20_000 {
                let text = random_text(&mut seed, if round % 10 == 0 { 64 } else { 12 });
                assert_eq!(
                    by_scanner(preset, &text),
                    by_regex(&re, &text),
                    "{preset:?} on {text:?}"
                );
                let text = random_from(WORDY, &mut seed, 40);
                assert_eq!(
                    by_scanner(preset, &text),
                    by_regex(&re, &text),
                    "{preset:?} on {text:?}"
                );
            }
        }
    }

    #[test]
    fn scanners_on_known_cases() {
        for (preset, pattern) in [
            (Preset::Gpt2, GPT2_PATTERN),
            (Preset::Cl100k, CL100K_PATTERN),
            (Preset::O200k, O200K_PATTERN),
        ] {
            let re = fancy_regex::Regex::new(pattern).unwrap();
            for text in [
                "",
                "I'M we'll THEY'RE we'd",
                "a  b",
                "This is an \nexample",
                "1 2 3 4 5 123456",
                "a\r\nb",
                "hello   ",
                "x.\n/y",
                "  \n  x",
                "\u{201c}wrote jack a letter\u{201d}",
                "HelloWorld ABCdef ABC 中文 naïve",
                "<|endoftext|>",
            ] {
                assert_eq!(
                    by_scanner(preset, text),
                    by_regex(&re, text),
                    "{preset:?} {text:?}"
                );
            }
        }
    }
}
