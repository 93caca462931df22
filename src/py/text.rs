//! Python strings as UTF-8, converted here rather than by CPython.
//!
//! Taking a `&str` from Python asks CPython for the string's UTF-8. A string with any
//! non-ASCII character is stored as one, two or four bytes per character, and CPython
//! converts it with a loop per character (a tenth of the time of `encode_ordinary` on
//! English with curly quotes), then keeps the copy inside the string for as long as the
//! string lives (a second copy of a large text). Here an ASCII string, or one whose UTF-8
//! CPython already holds, is borrowed as it is; any other is converted (by simdutf) into a
//! buffer that is dropped after the call.
//! Surrogates follow tiktoken (`encode("utf-16", "surrogatepass").decode("utf-16",
//! "replace")`): a high one followed by a low one is the character they spell, any other
//! becomes U+FFFD.

use std::ops::Deref;

use pyo3::exceptions::PyMemoryError;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::string::PyStringData;
use pyo3::types::PyString;

use super::spare::Spare;

/// The UTF-8 of `s` (see the module doc for surrogates).
pub fn utf8<'a>(s: &'a Bound<'_, PyString>) -> PyResult<Utf8<'a>> {
    source(s)?.utf8()
}

/// The UTF-8 of the argument `text`, or a `TypeError` that says what it is instead. (PyO3's
/// own, "'bytes' object is not an instance of 'str'", ended in a note "while processing
/// 'text'", the last line printed, which read as the error: found by QA.)
pub fn text_arg<'a>(text: &'a Bound<'_, PyAny>) -> PyResult<Utf8<'a>> {
    let Ok(s) = text.cast::<PyString>() else {
        let kind = text.get_type().name()?;
        let bytes = text.is_instance_of::<pyo3::types::PyBytes>()
            || text.is_instance_of::<pyo3::types::PyByteArray>();
        let hint = if bytes {
            " (decode it first: text.decode('utf-8'))"
        } else {
            ""
        };
        return Err(pyo3::exceptions::PyTypeError::new_err(format!(
            "text must be a str, not {kind}{hint}"
        )));
    };
    utf8(s)
}

/// A string's text as UTF-8: borrowed from the string, or converted into a buffer kept for
/// the thread's next call (`spare.rs`).
pub enum Utf8<'a> {
    Held(&'a str),
    Made(Spare<u8>),
}

impl Deref for Utf8<'_> {
    type Target = str;
    fn deref(&self) -> &str {
        match self {
            Utf8::Held(t) => t,
            // SAFETY: `to_utf8` writes UTF-8
            Utf8::Made(bytes) => unsafe { std::str::from_utf8_unchecked(bytes) },
        }
    }
}

/// A string's storage, read with the GIL held, to be converted to UTF-8 without it (by
/// any thread: the string is immutable and its owner keeps it alive for 'a).
pub enum Source<'a> {
    Utf8(&'a str),
    Data(PyStringData<'a>),
}

/// The storage of `s`: its UTF-8 if it holds it (ASCII, or converted before), else its
/// characters.
pub fn source<'a>(s: &'a Bound<'_, PyString>) -> PyResult<Source<'a>> {
    if let Some(held) = held_utf8(s) {
        return Ok(Source::Utf8(held));
    }
    // SAFETY: the representation is read as PyO3 documents it; the string is immutable and
    // `s` keeps it alive for 'a
    Ok(Source::Data(unsafe { s.data()? }))
}

/// [`source`], borrowed from the string itself rather than from the reference `s`.
///
/// # Safety
/// The string must outlive every use of the result (a reference to it held elsewhere).
pub unsafe fn source_of_held<'a>(s: &Bound<'_, PyString>) -> PyResult<Source<'a>> {
    // SAFETY: a source points into the string's own storage, which lives as long as the
    // string, not into `s` (the caller keeps the string alive)
    Ok(unsafe { std::mem::transmute::<Source<'_>, Source<'a>>(source(s)?) })
}

impl<'a> Source<'a> {
    /// Units of the string (bytes of UTF-8, or characters): the work of `utf8`.
    pub fn len(&self) -> usize {
        match self {
            Source::Utf8(t) => t.len(),
            Source::Data(PyStringData::Ucs1(u)) => u.len(),
            Source::Data(PyStringData::Ucs2(u)) => u.len(),
            Source::Data(PyStringData::Ucs4(u)) => u.len(),
        }
    }

    /// The string as UTF-8: borrowed when held, else converted (MemoryError if there is
    /// no memory for the worst case, `T::ROOM` bytes a unit). (Inlined for the borrow: as a
    /// call per text of a batch, its result went back through memory and the caller's
    /// read of it waited, a sixth of the batch's own time on 100,000 short strings.)
    #[inline(always)]
    pub fn utf8(&self) -> PyResult<Utf8<'a>> {
        match self {
            Source::Utf8(t) => Ok(Utf8::Held(t)),
            Source::Data(data) => Self::convert(data),
        }
    }

    /// The string as UTF-8: borrowed when held, else converted into `buf` (its contents
    /// replaced), a buffer the caller keeps for the next text.
    pub fn utf8_in<'s>(&'s self, buf: &'s mut Vec<u8>) -> PyResult<&'s str> {
        match self {
            Source::Utf8(t) => return Ok(t),
            Source::Data(PyStringData::Ucs1(latin1)) => to_utf8_in(latin1, buf)?,
            Source::Data(PyStringData::Ucs2(units)) => to_utf8_in(units, buf)?,
            Source::Data(PyStringData::Ucs4(chars)) => to_utf8_in(chars, buf)?,
        }
        // SAFETY: `to_utf8_in` writes UTF-8
        Ok(unsafe { std::str::from_utf8_unchecked(buf) })
    }

    #[inline(never)]
    fn convert(data: &PyStringData<'a>) -> PyResult<Utf8<'a>> {
        let bytes = match data {
            PyStringData::Ucs1(latin1) => to_utf8(latin1),
            PyStringData::Ucs2(units) => to_utf8(units),
            PyStringData::Ucs4(chars) => to_utf8(chars),
        };
        bytes.map(Utf8::Made)
    }
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

/// A unit of CPython's string storage: a byte (Latin-1), a UTF-16 unit (a BMP string), a
/// code point.
trait Unit: Copy {
    /// The most UTF-8 bytes one unit can need.
    const ROOM: usize;
    fn get(self) -> u32;
    /// Converts all of `units` with simdutf (SIMD of the widest kind the CPU has, chosen at
    /// run time) if they hold no surrogate; returns the bytes written (`None`: a surrogate,
    /// nothing usable written).
    ///
    /// # Safety
    /// `dst` must have room for `ROOM` bytes a unit.
    unsafe fn simd(units: &[Self], dst: *mut u8) -> Option<usize>;
}

impl Unit for u8 {
    const ROOM: usize = 2;
    fn get(self) -> u32 {
        self as u32
    }
    unsafe fn simd(units: &[u8], dst: *mut u8) -> Option<usize> {
        Some(simdutf::convert_latin1_to_utf8(
            units.as_ptr(),
            units.len(),
            dst,
        ))
    }
}

impl Unit for u16 {
    const ROOM: usize = 3;
    fn get(self) -> u32 {
        self as u32
    }
    unsafe fn simd(units: &[u16], dst: *mut u8) -> Option<usize> {
        // (0 for a lone surrogate, the only invalid UTF-16; `units` is never empty)
        let n = simdutf::convert_utf16_to_utf8(units.as_ptr(), units.len(), dst);
        (n > 0).then_some(n)
    }
}

impl Unit for u32 {
    const ROOM: usize = 4;
    fn get(self) -> u32 {
        self
    }
    unsafe fn simd(units: &[u32], dst: *mut u8) -> Option<usize> {
        // (0 for a surrogate, the only code point a Python string holds that UTF-32 may not)
        let n = simdutf::convert_utf32_to_utf8(units.as_ptr(), units.len(), dst);
        (n > 0).then_some(n)
    }
}

/// A CPython string's units as UTF-8, into a buffer of the worst case (`T::ROOM` bytes a
/// unit) that is never zeroed, so only the pages written are touched. simdutf took 0.6 ms
/// for 3 MB of English with curly quotes and 1.3 ms for 6.5 MB of Chinese, Russian and
/// emoji, where a loop that copied runs of sixteen ASCII units took 1.0 and 7.3 ms. A string
/// holding a surrogate, which simdutf refuses, is converted by the loop below as tiktoken
/// reads it (see the module doc): a high one followed by a low one is the character they
/// spell, any other is U+FFFD.
fn to_utf8<T: Unit>(units: &[T]) -> PyResult<Spare<u8>> {
    let mut out = Spare::<u8>::with_capacity(T::ROOM * units.len(), "the text's UTF-8")?;
    // SAFETY: `out` has room for `T::ROOM` bytes a unit, and `n` bytes were written
    unsafe {
        let n = write_utf8(units, out.as_mut_ptr());
        out.set_len(n);
    }
    Ok(out)
}

/// `to_utf8` into `buf` (its contents replaced), whose memory is kept from one text to the
/// next (the short texts of a batch job).
fn to_utf8_in<T: Unit>(units: &[T], buf: &mut Vec<u8>) -> PyResult<()> {
    buf.clear();
    buf.try_reserve(T::ROOM * units.len())
        .map_err(|e| PyMemoryError::new_err(format!("no memory for the text's UTF-8: {e}")))?;
    // SAFETY: `buf` has room for `T::ROOM` bytes a unit, and `n` bytes were written
    unsafe {
        let n = write_utf8(units, buf.as_mut_ptr());
        buf.set_len(n);
    }
    Ok(())
}

/// Writes `units` as UTF-8 at `dst`; returns the bytes written.
///
/// # Safety
/// `dst` must have room for `T::ROOM` bytes a unit.
unsafe fn write_utf8<T: Unit>(units: &[T], dst: *mut u8) -> usize {
    let len = units.len();
    if len == 0 {
        return 0;
    }
    if let Some(n) = T::simd(units, dst) {
        return n;
    }
    let mut n = 0;
    let mut i = 0;
    // the writes stay below `T::ROOM * len`: a unit takes at most `T::ROOM` bytes (a
    // surrogate pair's two units, four, at most 2 * ROOM); `n` counts the bytes written
    while i < len {
        let u = units[i].get();
        i += 1;
        if u < 0x80 {
            *dst.add(n) = u as u8;
            n += 1;
            continue;
        }
        let c = if !(0xD800..0xE000).contains(&u) {
            u
        } else if u < 0xDC00 && i < len && (0xDC00..0xE000).contains(&units[i].get()) {
            i += 1;
            0x10000 + ((u - 0xD800) << 10) + (units[i - 1].get() - 0xDC00)
        } else {
            0xFFFD
        };
        n += write_char(dst.add(n), c);
    }
    n
}

/// Writes the UTF-8 of code point `c` (0x80 <= c <= 0x10FFFF, no surrogate) at `dst`;
/// returns its length.
///
/// # Safety
/// `dst` must have room for that many bytes (2 to 4).
#[inline(always)]
unsafe fn write_char(dst: *mut u8, c: u32) -> usize {
    if c < 0x800 {
        *dst = 0xC0 | (c >> 6) as u8;
        *dst.add(1) = 0x80 | (c & 0x3F) as u8;
        2
    } else if c < 0x10000 {
        *dst = 0xE0 | (c >> 12) as u8;
        *dst.add(1) = 0x80 | ((c >> 6) & 0x3F) as u8;
        *dst.add(2) = 0x80 | (c & 0x3F) as u8;
        3
    } else {
        *dst = 0xF0 | (c >> 18) as u8;
        *dst.add(1) = 0x80 | ((c >> 12) & 0x3F) as u8;
        *dst.add(2) = 0x80 | ((c >> 6) & 0x3F) as u8;
        *dst.add(3) = 0x80 | (c & 0x3F) as u8;
        4
    }
}
