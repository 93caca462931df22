//! o200k and cl100k pre-tokens of mostly ASCII text, 64 bytes at a time.
//!
//! The scanners in `fast.rs` decide one pre-token at a time, and the CPU cannot predict
//! where a word ends: a mispredicted branch per pre-token was most of their time. Here the
//! 64 bytes of a window are classified into bit masks (bit `k`: byte `k` of the window) with
//! AVX2, or AVX-512 where the CPU has it, and the bytes where a pre-token starts are found
//! with shifts and ands, no branch per byte (English: 1.6 -> 0.75 ns per byte; code: 2.0-2.1
//! -> 0.75; with AVX-512, 3 MB of code through `last_pretoken` 0.92-1.05 -> 0.82).
//!
//! On ASCII text every rule of the two patterns is local (`rules` derives each one from
//! the pattern): a window decides the starts of its bytes from the three bytes before them
//! and the three after. The punctuation U+2010..=U+2027 (curly quotes, dashes, `…`: one
//! English byte in a hundred) is taken as one punctuation character of three bytes. What
//! is not local is left to `fast.rs`, from a few bytes before it: other bytes >= 0x80
//! (Unicode classes; whitespace among them may continue a run), a run of ten digits or more
//! (`\p{N}{1,3}` counts from the run's start), a newline, blanks, then another newline in
//! one whitespace run (which newline is the last), and in o200k a `/` after a newline (the
//! `[\r\n/]*` tail of punctuation may reach it) and a contraction right after another
//! (`x't't`). `tests` compares this with `fast.rs` (itself tested against the regex) on
//! random text.

/// A window starts `BACK` bytes before a byte known to start a pre-token (the rules look
/// back three bytes) and decides its bytes `BACK..COMMIT` (they look ahead three).
const BACK: usize = 3;
const COMMIT: u32 = 60;
/// What `rules` gives for a window whose bytes are mostly not for it: skip it.
const SKIP: u32 = 64;

/// Class masks of a window.
struct Masks {
    nonascii: u64,
    upper: u64,
    lower: u64,
    digit: u64,
    /// `' '` itself: the optional space of ` ?[^\s\p{L}\p{N}]+`.
    space: u64,
    /// `\s` without `\r`, `\n`: space, `\t`, `\x0b`, `\x0c`.
    blank: u64,
    newline: u64,
    apostrophe: u64,
    slash: u64,
    /// Letters that end a two-character contraction: `s t m d` in either case.
    smtd: u64,
    /// `r` or `v`, `l`, `e` in either case (`'re 've 'll`).
    rv: u64,
    l: u64,
    e: u64,
    /// The bytes of U+2010..=U+2027 (dashes, quotation marks, `…`: punctuation in English
    /// text): 0xE2, 0x80, then 0x90..=0xA7.
    e2: u64,
    x80: u64,
    x90_a7: u64,
}

/// Whether this CPU can run the window scanner (std caches the answer).
pub fn available() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::is_x86_feature_detected!("avx2")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// `rules` of the window at `bytes`, its masks kept in registers: classified and decided
/// in one function compiled for AVX2 (as two calls, the sixteen masks went through memory).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn window<const O200K: bool>(bytes: &[u8; 64]) -> Result<u64, u32> {
    rules::<O200K>(&classify(bytes))
}

/// `window` with AVX-512 (BW): a mask is one compare of the whole window, where AVX2 takes
/// two compares and two moves of their bits per mask.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512bw")]
unsafe fn window512<const O200K: bool>(bytes: &[u8; 64]) -> Result<u64, u32> {
    rules::<O200K>(&classify512(bytes))
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512bw")]
#[inline]
unsafe fn classify512(bytes: &[u8; 64]) -> Masks {
    use std::arch::x86_64::*;
    let x = _mm512_loadu_si512(bytes.as_ptr() as *const __m512i);
    let eq = |v: __m512i, c: u8| _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8(c as i8));
    // x - lo <= hi - lo, unsigned: x in lo..=hi
    let within = |v: __m512i, lo: u8, hi: u8| {
        let d = _mm512_sub_epi8(v, _mm512_set1_epi8(lo as i8));
        _mm512_cmple_epu8_mask(d, _mm512_set1_epi8((hi - lo) as i8))
    };
    // `| 0x20` folds A-Z onto a-z (and no other byte into a-z)
    let f = _mm512_or_si512(x, _mm512_set1_epi8(0x20));
    Masks {
        nonascii: _mm512_movepi8_mask(x),
        upper: within(x, b'A', b'Z'),
        lower: within(x, b'a', b'z'),
        digit: within(x, b'0', b'9'),
        space: eq(x, b' '),
        blank: eq(x, b' ') | eq(x, b'\t') | within(x, 0x0b, 0x0c),
        newline: eq(x, b'\n') | eq(x, b'\r'),
        apostrophe: eq(x, b'\''),
        slash: eq(x, b'/'),
        smtd: eq(f, b's') | eq(f, b't') | eq(f, b'm') | eq(f, b'd'),
        rv: eq(f, b'r') | eq(f, b'v'),
        l: eq(f, b'l'),
        e: eq(f, b'e'),
        e2: eq(x, 0xE2),
        x80: eq(x, 0x80),
        x90_a7: within(x, 0x90, 0xA7),
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn classify(bytes: &[u8; 64]) -> Masks {
    use std::arch::x86_64::*;
    let half = |k: usize| _mm256_loadu_si256(bytes.as_ptr().add(32 * k) as *const __m256i);
    let (a, b) = (half(0), half(1));
    let mask = |f: &dyn Fn(__m256i) -> __m256i| -> u64 {
        let lo = _mm256_movemask_epi8(f(a)) as u32 as u64;
        let hi = _mm256_movemask_epi8(f(b)) as u32 as u64;
        lo | hi << 32
    };
    let eq = |x: __m256i, c: u8| _mm256_cmpeq_epi8(x, _mm256_set1_epi8(c as i8));
    // x - lo <= hi - lo, unsigned: x in lo..=hi
    let within = |x: __m256i, lo: u8, hi: u8| {
        let d = _mm256_sub_epi8(x, _mm256_set1_epi8(lo as i8));
        _mm256_cmpeq_epi8(_mm256_min_epu8(d, _mm256_set1_epi8((hi - lo) as i8)), d)
    };
    // `| 0x20` folds A-Z onto a-z (and no other byte into a-z)
    let folded = |x: __m256i| _mm256_or_si256(x, _mm256_set1_epi8(0x20));
    Masks {
        nonascii: mask(&|x| x),
        upper: mask(&|x| within(x, b'A', b'Z')),
        lower: mask(&|x| within(x, b'a', b'z')),
        digit: mask(&|x| within(x, b'0', b'9')),
        space: mask(&|x| eq(x, b' ')),
        blank: mask(&|x| {
            let space_tab = _mm256_or_si256(eq(x, b' '), eq(x, b'\t'));
            _mm256_or_si256(space_tab, within(x, 0x0b, 0x0c))
        }),
        newline: mask(&|x| _mm256_or_si256(eq(x, b'\n'), eq(x, b'\r'))),
        apostrophe: mask(&|x| eq(x, b'\'')),
        slash: mask(&|x| eq(x, b'/')),
        smtd: mask(&|x| {
            let f = folded(x);
            _mm256_or_si256(
                _mm256_or_si256(eq(f, b's'), eq(f, b't')),
                _mm256_or_si256(eq(f, b'm'), eq(f, b'd')),
            )
        }),
        rv: mask(&|x| {
            let f = folded(x);
            _mm256_or_si256(eq(f, b'r'), eq(f, b'v'))
        }),
        l: mask(&|x| eq(folded(x), b'l')),
        e: mask(&|x| eq(folded(x), b'e')),
        e2: mask(&|x| eq(x, 0xE2)),
        x80: mask(&|x| eq(x, 0x80)),
        x90_a7: mask(&|x| within(x, 0x90, 0xA7)),
    }
}

/// The bytes where a pre-token starts among the bytes the window decides (`BACK` and at
/// least one more), given that byte `BACK` starts one; or, when it cannot decide byte
/// `BACK + 1`, the first byte of the window from which another may be tried (`SKIP`: the
/// next 64).
/// `O200K`: o200k's rules, else cl100k's.
#[inline(always)]
fn rules<const O200K: bool>(m: &Masks) -> Result<u64, u32> {
    let prev = |x: u64| x << 1;
    let next = |x: u64| x >> 1;
    let letter = m.upper | m.lower;
    let white = m.blank | m.newline;
    // punctuation characters by their first and by their last byte (three for U+2010..)
    let ascii_punct = !(m.nonascii | letter | m.digit | white);
    let wide = m.e2 & next(m.x80) & next(next(m.x90_a7));
    let wide_last = prev(prev(wide));
    let punct_first = ascii_punct | wide;
    let punct_last = ascii_punct | wide_last;

    // Contractions `'s 't 'm 'd 're 've 'll` (any case). o200k: after a letter, the end of
    // its word. cl100k: a pre-token of their own wherever one starts at the apostrophe
    // (not after punctuation or a space, which take it along).
    let apostrophe = if O200K {
        m.apostrophe & prev(letter)
    } else {
        m.apostrophe & !prev(punct_last) & !prev(m.space)
    };
    let two = apostrophe & next(m.smtd);
    let three = apostrophe & ((next(m.rv) & next(next(m.e))) | (next(m.l) & next(next(m.l))));
    // byte BACK starts a pre-token: no contraction reaches it from before (nor, in
    // o200k, starts there)
    let here = if O200K { 1u64 << BACK } else { 0 };
    let two = two & !(1 << (BACK - 1) | here);
    let three = three & !(0b11 << (BACK - 2) | here);
    let contraction = two | three;
    let contraction_end = prev(two) | prev(prev(three));

    // `\p{N}{1,3}`: digits start a pre-token at 0, 3 and 6 digits into their run (one
    // that began before byte BACK began again there, as BACK starts a pre-token); a run of
    // ten or more is left to `fast.rs`
    let digit = m.digit & !((1u64 << BACK) - 1);
    let mut at = digit & !prev(digit);
    let mut digit_start = at;
    for k in 1..=9 {
        at = digit & prev(at);
        if k % 3 == 0 {
            digit_start |= at;
        }
    }
    // Not local (see the module doc): decide only bytes well before the first of them.
    let mut bad = (m.nonascii & !(wide | prev(wide) | wide_last)) | at;
    if O200K {
        bad |= (m.slash & prev(m.newline)) | (contraction & prev(contraction_end));
    }

    let mut end = COMMIT;
    let first_bad = bad.trailing_zeros();
    if bad != 0 {
        if first_bad < BACK as u32 + 4 {
            // text full of them (another script, a table of numbers): skip the window
            return Err(if bad.count_ones() > 4 {
                SKIP
            } else {
                first_bad + 1
            });
        }
        end = end.min(first_bad - 3);
    }

    // ` ?[^\s\p{L}\p{N}]+[\r\n/]*` (cl100k: `[\r\n]*`): a run of punctuation starts a
    // pre-token unless a space before it does (and takes it along); newlines right after
    // it belong to it. (An o200k contraction is inside a word.)
    let inside_word = if O200K { contraction } else { 0 };
    let punct_start =
        punct_first & ((!prev(punct_last) & !prev(m.space) & !inside_word) | 1 << BACK);
    // (at the character's last byte)
    let punct_start_last = (punct_start & ascii_punct) | prev(prev(punct_start & wide));
    let run_start = m.newline & !prev(m.newline);
    let seed = run_start & prev(punct_last);
    let taken = (m.newline.wrapping_add(seed) ^ m.newline) & m.newline;

    // Letters: o200k `[^\r\n\p{L}\p{N}]?[upper]*[lower]+C?|[^\r\n\p{L}\p{N}]?[upper]+[lower]*C?`,
    // cl100k `[^\r\n\p{L}\p{N}]?+\p{L}++`. A word starts at its letter unless one blank or
    // one punctuation character that starts a pre-token comes before it (the optional
    // prefix); within letters, after a contraction, and in o200k at a capital after a
    // lower-case letter (but not inside a contraction).
    let capital = if O200K {
        prev(m.lower) & m.upper & !prev(prev(three))
    } else {
        0
    };
    let letter_start = letter
        & ((!prev(letter) & !prev(punct_last) & !prev(m.blank))
            | (prev(letter) & (capital | prev(contraction_end)))
            | (prev(punct_last) & !prev(contraction) & !prev(punct_start_last)));

    // Whitespace not taken by punctuation: `\s*[\r\n]+` up to the run's last newline, then
    // `\s+(?!\S)` leaves the last blank before a non-space to start the next pre-token.
    let ws = white & !taken;
    let ws_start = ws & !prev(ws);
    let after_newline = m.blank & prev(m.newline & ws);
    // a newline later in the same run: which one is last is not local
    let after_blanks = m.blank.wrapping_add(after_newline) & !m.blank;
    // decide only bytes before the whitespace run that holds it
    let before_run_of = |k: u32| {
        let runs_before = ws_start & ((1u64 << k) - 1);
        63u32.saturating_sub(runs_before.leading_zeros())
    };
    let later_newline = after_blanks & m.newline;
    if later_newline != 0 {
        end = end.min(before_run_of(later_newline.trailing_zeros()));
    }
    // a byte >= 0x80 may be whitespace too (U+00A0, U+2028, ...) and continue a run
    if bad != 0 && ws >> (first_bad - 1) & 1 != 0 {
        end = end.min(before_run_of(first_bad));
    }
    let last_blank = m.blank & prev(m.blank) & !next(white);
    // a run that reaches the window's end: its last blank is not known
    if ws >> 63 != 0 {
        end = end.min(64 - ws.leading_ones());
    }
    if end <= BACK as u32 {
        return Err(BACK as u32 + 1);
    }
    let starts = letter_start | punct_start | ws_start | after_newline | last_blank | digit_start;
    let decided = (1u64 << end) - (1u64 << BACK);
    Ok((starts & decided) | 1 << BACK)
}

/// Calls `f` on each o200k (`O200K`) or cl100k pre-token of `text` (AVX2 available),
/// falling back to `scalar` (the pre-token end at a byte) where a window cannot decide.
pub fn for_each<'t, const O200K: bool>(
    text: &'t str,
    f: impl super::Sink<'t>,
    scalar: impl Fn(&str, usize) -> usize,
) {
    for_each_with::<O200K>(text, f, scalar, avx512())
}

/// Whether the CPU has AVX-512 (BW) for `window512` (std caches the answer).
fn avx512() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::is_x86_feature_detected!("avx512bw")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// `for_each`, with AVX-512 (`avx512`, which the CPU must have) or AVX2.
fn for_each_with<'t, const O200K: bool>(
    text: &'t str,
    mut f: impl super::Sink<'t>,
    scalar: impl Fn(&str, usize) -> usize,
    avx512: bool,
) {
    let b = text.as_bytes();
    let mut i = 0;
    // where windows may be tried again after one could not decide, and how far that
    // moves on after each window in a row that could not (text in another script)
    let mut retry = BACK;
    let mut skip = 0;
    while i < b.len() {
        if i >= retry && i + 64 - BACK <= b.len() {
            let w = i - BACK;
            let bytes: &[u8; 64] = b[w..w + 64].try_into().unwrap();
            // SAFETY: `for_each` calls this only where `available()` is true, and the
            // AVX-512 one where `avx512` says the CPU has it
            #[cfg(target_arch = "x86_64")]
            let decided = unsafe {
                if avx512 {
                    window512::<O200K>(bytes)
                } else {
                    window::<O200K>(bytes)
                }
            };
            #[cfg(not(target_arch = "x86_64"))]
            let decided: Result<u64, u32> = unreachable!("{bytes:?}");
            match decided {
                Ok(starts) => {
                    // every start but the last ends a pre-token; the last one's may go on
                    let mut s = starts;
                    let mut from = i;
                    s &= s - 1;
                    while s != 0 {
                        let to = w + s.trailing_zeros() as usize;
                        debug_assert!(text.is_char_boundary(from) && text.is_char_boundary(to));
                        // SAFETY: a start is at an ASCII byte or at 0xE2 (the first byte of
                        // U+2010..=U+2027), never inside a character; `from < to <= len`
                        // (the boundary checks of `&text[from..to]` were a third of the
                        // loop's time)
                        f.piece(unsafe { text.get_unchecked(from..to) });
                        from = to;
                        s &= s - 1;
                    }
                    if from > i {
                        i = from;
                        skip = 0;
                        continue;
                    }
                }
                // text in another script: further on each time in a row
                Err(SKIP) => {
                    retry = w + skip.max(64);
                    skip = (2 * skip).clamp(128, 4096);
                }
                Err(k) => retry = w + k as usize,
            }
        }
        let end = scalar(text, i);
        f.piece(&text[i..end]);
        i = end;
    }
}

#[cfg(test)]
mod tests {
    use super::super::classes::Classes;
    use super::super::fast::{for_each_scalar, next_cl100k, next_o200k, one, Preset};
    use super::*;

    fn by_windows(preset: Preset, text: &str, avx512: bool) -> Vec<&str> {
        let cls = Classes::get();
        let mut out = Vec::new();
        let push = |p| out.push(p);
        match preset {
            Preset::O200k => {
                for_each_with::<true>(text, push, |t, i| one(t, i, cls, next_o200k), avx512)
            }
            _ => for_each_with::<false>(text, push, |t, i| one(t, i, cls, next_cl100k), avx512),
        }
        out
    }

    fn by_scalar(preset: Preset, text: &str) -> Vec<&str> {
        let mut out = Vec::new();
        for_each_scalar(preset, text, |p| out.push(p));
        out
    }

    /// ASCII chosen for every rule: letters of the contractions in both cases, blanks of
    /// each kind, newlines, punctuation with `'` and `/`, and (rarely) a digit or a non-ASCII
    /// letter for the fallbacks.
    const ALPHABET: &[&str] = &[
        "a", "b", "e", "s", "t", "m", "d", "r", "v", "l", "E", "S", "T", "M", "D", "R", "V", "L",
        "Q", "z", "Z", " ", " ", " ", " ", "\t", "\u{b}", "\u{c}", "\n", "\n", "\r", "'", "'", "'",
        "/", ".", ",", "(", "\"", "-", "_", "\0", "\u{1c}", "\u{7f}", "0", "1", "9", "’", "“", "—",
        "…", "\u{2010}", "\u{2027}", "\u{2028}", "\u{200b}", "\u{2030}", "é", "\u{a0}",
    ];

    #[test]
    fn windows_split_like_the_scalar_scanner() {
        if !available() {
            return;
        }
        let mut rand = crate::test_rng(12345);
        for case in 0..20_000 {
            let len = 60 + rand(300);
            // a few symbols per text make long runs of each
            let pick: Vec<&str> = (0..2 + rand(8))
                .map(|_| ALPHABET[rand(ALPHABET.len())])
                .collect();
            let text: String = (0..len)
                .map(|_| {
                    if rand(4) == 0 {
                        ALPHABET[rand(ALPHABET.len() - 2)]
                    } else {
                        pick[rand(pick.len())]
                    }
                })
                .collect();
            for preset in [Preset::O200k, Preset::Cl100k] {
                let want = by_scalar(preset, &text);
                // (AVX2 always; AVX-512 where the CPU has it)
                for avx512 in [false, true].into_iter().filter(|&a| !a || avx512()) {
                    assert_eq!(
                        by_windows(preset, &text, avx512),
                        want,
                        "{preset:?}, avx512 {avx512}, case {case}: {text:?}"
                    );
                }
            }
        }
    }
}
