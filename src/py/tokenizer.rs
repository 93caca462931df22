//! `CoreBPE`: the compiled encoder behind `bytepair.Tokenizer`.

use std::sync::OnceLock;

use pyo3::exceptions::PyValueError;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyString};
use rayon::prelude::*;
use rustc_hash::FxHashMap;

use super::errors::to_py;
use super::ints::{ids_into, ids_of, IntCache};
use super::spare::Spare;
use super::text::{source_of_held, text_arg, Source, Utf8};
use super::{pipelined, pool_size, run_in_pool};
use crate::encode::{self, Encoder, TokenSpec};
use crate::Rank;

/// A disallowed special token met by `encode_batch`: the index of its text, and the token.
type Refused = (usize, String);

/// Encoder over a fixed vocabulary (immutable, safe to share between threads).
#[pyclass(frozen, module = "bytepair._core")]
pub struct CoreBPE {
    enc: Encoder,
    /// One Python int per id, made on first use: a list of ids is then built by taking
    /// references, not by allocating an int object per token (half the cost of `encode`
    /// on English text was that allocation).
    ints: OnceLock<IntCache>,
}

/// The ids of one text, in parts (several when it was encoded on several cores).
type TextIds = Vec<Spare<Rank>>;

/// Vocabularies up to this many ids get the int cache (a few MB at most).
const INT_CACHE_MAX: usize = 1 << 21;

/// A text longer than twice this many bytes is encoded in parts of about this size, and a
/// pending Ctrl-C is acted on between parts (~0.1 s apart) instead of after the whole text.
const INTERRUPT_PART: usize = 1 << 23;

/// A text of at least this many bytes is encoded on every core (see `encode_checked`): a
/// millisecond or more of work on one, against tens of microseconds to wake the others.
const PARALLEL_MIN: usize = 1 << 17;

/// A text shorter than this many bytes is encoded (and searched for special tokens) with
/// the GIL held: at most ~10 us of work, where letting the GIL go and taking it back cost
/// 0.05-0.1 us of a 0.8 us call on a line of 60 characters.
const DETACH_MIN: usize = 1 << 10;

/// `f()`, with the GIL released if `len` (bytes of text) is `DETACH_MIN` or more.
fn detach_for<T: Send>(py: Python<'_>, len: usize, f: impl FnOnce() -> T + Send) -> T {
    if len < DETACH_MIN {
        f()
    } else {
        py.detach(f)
    }
}

impl CoreBPE {
    /// The bytes of `ids` as a new bytes object: measured, then written straight into the
    /// object, with the GIL released for both on a long list (decoded into a vector first,
    /// the copy into the object, GIL held, was most of the call once decoding got fast).
    fn bytes_of<'py>(&self, py: Python<'py>, ids: &[Rank]) -> PyResult<Bound<'py, PyBytes>> {
        // (an id is about four bytes of text)
        let len = detach_for(py, 4 * ids.len(), || self.enc.decoded_len(ids)).map_err(to_py)?;
        // SAFETY: a new bytes object of `len` bytes not yet written (`PyBytes::new_with`
        // zeroed them with the GIL held: page faults and all, a fifth of a long call), which
        // no other code can see until it is returned; `decode_to` writes all `len` of them
        // (the ids were measured by `decoded_len`)
        unsafe {
            let obj = ffi::PyBytes_FromStringAndSize(std::ptr::null(), len as ffi::Py_ssize_t);
            let obj = Bound::from_owned_ptr_or_err(py, obj)?.cast_into_unchecked::<PyBytes>();
            let data = ffi::PyBytes_AsString(obj.as_ptr()) as usize;
            detach_for(py, len, || {
                let buf = std::slice::from_raw_parts_mut(data as *mut u8, len);
                self.enc.decode_to(ids, buf)
            });
            Ok(obj)
        }
    }

    /// Builds the encoder with the GIL released.
    fn build(
        py: Python<'_>,
        specs: Vec<TokenSpec>,
        special_tokens: Vec<(String, Rank)>,
        pattern: &str,
    ) -> PyResult<Self> {
        let enc = py
            .detach(|| Encoder::new(specs, special_tokens, pattern))
            .map_err(to_py)?;
        Ok(Self {
            enc,
            ints: OnceLock::new(),
        })
    }

    /// The encoder (for continued training).
    pub fn encoder(&self) -> &Encoder {
        &self.enc
    }

    /// The ids of `text`, the GIL released: ordinary (`specials` None) or with the given
    /// special tokens (`Some(None)`: all of them), as `Encoder::split_into_parts` reads it.
    /// A text of `PARALLEL_MIN` bytes or more is as much work as a batch: it is cut into
    /// parts (exact cuts) encoded on every core the process may use, by `encode_batch`'s
    /// pool (a process pinned to one core encodes on this thread). A long text goes in rounds
    /// of parts with Python's signal handlers run between them, so Ctrl-C interrupts a
    /// minute-long encode within a fraction of a second.
    fn encode_checked(
        &self,
        py: Python<'_>,
        text: &str,
        specials: Option<Option<&encode::AllowedSpecial>>,
    ) -> PyResult<TextIds> {
        let one = |t: &str| self.enc.encode(t, specials);
        // (the length first: even a cheap count of CPUs is a system call)
        let threads = if text.len() >= PARALLEL_MIN {
            pool_size(None)
        } else {
            1
        };
        let parallel = threads > 1;
        if !parallel {
            // On a limited address space (`room.rs`) the ids get room for their most, one
            // per byte, before each part: a vector that grew while encoding would end the
            // process where the memory is not there.
            let limited = text.len() >= PARALLEL_MIN && crate::room::spare().is_some();
            let first = if limited {
                text.len().min(2 * INTERRUPT_PART)
            } else {
                text.len() / 4
            };
            let mut ids = Spare::with_capacity(first, "the ids")?;
            if text.len() <= 2 * INTERRUPT_PART {
                detach_for(py, text.len(), || {
                    self.enc.encode_into(text, specials, &mut ids)
                })
                .map_err(to_py)?;
                return Ok(vec![ids]);
            }
            let parts = py.detach(|| self.enc.split_into_parts(text, specials, INTERRUPT_PART));
            for part in parts {
                py.check_signals()?;
                if limited {
                    crate::room::ids_room(&mut ids, part.len()).map_err(to_py)?;
                }
                py.detach(|| self.enc.encode_into(part, specials, &mut ids))
                    .map_err(to_py)?;
            }
            return Ok(vec![ids]);
        }
        let mut ids = Vec::new();
        // about four parts per thread, so that a part slower than the others (a run of
        // Chinese in English text) leaves no long tail
        let target = (text.len() / (4 * threads)).clamp(PARALLEL_MIN / 4, INTERRUPT_PART);
        let parts = py.detach(|| self.enc.split_into_parts(text, specials, target));
        for round in parts.chunks((threads * INTERRUPT_PART / target).max(1)) {
            py.check_signals()?;
            let got = py.detach(|| {
                run_in_pool(None, || {
                    round.par_iter().map(|p| one(p)).collect::<Vec<_>>()
                })
            })?;
            for part in got {
                ids.push(part.map_err(to_py)?.into());
            }
        }
        Ok(ids)
    }

    /// The first special token in `text`, if `refuse` and there is one.
    fn refused<'py>(
        &self,
        py: Python<'py>,
        text: &str,
        refuse: bool,
    ) -> Option<Bound<'py, PyString>> {
        let found =
            refuse.then(|| detach_for(py, text.len(), || self.enc.find_special(text)))??;
        Some(PyString::new(py, found))
    }

    fn id_list<'py>(&self, py: Python<'py>, ids: &[Rank]) -> PyResult<Bound<'py, PyList>> {
        self.id_list_of_parts(py, std::slice::from_ref(&ids))
    }

    /// One list of the ids of `parts` in order (filled by every core when there are several
    /// parts: see `IntCache::list`).
    fn id_list_of_parts<'py>(
        &self,
        py: Python<'py>,
        parts: &[impl AsRef<[Rank]> + Sync],
    ) -> PyResult<Bound<'py, PyList>> {
        self.list_of_parts(py, parts, true)
    }

    /// [`Self::id_list_of_parts`], filled by every core only if `spread`.
    fn list_of_parts<'py>(
        &self,
        py: Python<'py>,
        parts: &[impl AsRef<[Rank]> + Sync],
        spread: bool,
    ) -> PyResult<Bound<'py, PyList>> {
        let n = self.enc.n_vocab();
        if n > INT_CACHE_MAX {
            return PyList::new(py, parts.iter().flat_map(|p| p.as_ref()));
        }
        let ints = match self.ints.get() {
            Some(ints) => ints,
            None => {
                // Made, then set (a thread that made them too drops its own), not made
                // inside a `Once`: `get_or_init_py_attached` lets the GIL go and runs the
                // maker once it has it back, and a fork by the thread that had it meanwhile
                // left the child a `Once` running for ever (3 children of 25 hung in the fork
                // test once short texts were encoded with the GIL held, the first list of ids
                // then being the first place the GIL was let go)
                let _ = self.ints.set(IntCache::new(py, n)?);
                self.ints.get().expect("the ints are set")
            }
        };
        ints.list(py, parts, spread)
    }
}

/// `errors` (an error handler's name) as CPython takes it.
fn c_errors(errors: &str) -> PyResult<std::borrow::Cow<'static, std::ffi::CStr>> {
    use std::borrow::Cow;
    Ok(match errors {
        // (the usual name without an allocation: a call decodes a line in 0.3 us)
        "replace" => Cow::Borrowed(c"replace"),
        _ => Cow::Owned(
            std::ffi::CString::new(errors)
                .map_err(|_| PyValueError::new_err("embedded null character"))?,
        ),
    })
}

/// `bytes.decode("utf-8", errors)` of `bytes`, without a bytes object.
fn utf8_str<'py>(
    py: Python<'py>,
    bytes: &[u8],
    errors: &std::ffi::CStr,
) -> PyResult<Bound<'py, PyAny>> {
    // SAFETY: the pointer and length are those of `bytes`, and `errors` is a C string;
    // CPython copies what it reads
    unsafe {
        let text = ffi::PyUnicode_DecodeUTF8(
            bytes.as_ptr().cast(),
            bytes.len() as ffi::Py_ssize_t,
            errors.as_ptr(),
        );
        Bound::from_owned_ptr_or_err(py, text)
    }
}

/// Ids a job of `decode_batch` decodes (at least one list each): fewer, and waking the
/// workers costs more than the work.
const DECODE_JOB: usize = 1 << 14;

/// The lists whose ids end at `ends`, in runs of about `per_run` ids (whole lists).
fn runs_of(ends: &[usize], per_run: usize) -> Vec<std::ops::Range<usize>> {
    let mut runs = Vec::new();
    let (mut first, mut from) = (0, 0);
    for (i, &end) in ends.iter().enumerate() {
        if end - from >= per_run {
            runs.push(first..i + 1);
            (first, from) = (i + 1, end);
        }
    }
    if first < ends.len() {
        runs.push(first..ends.len());
    }
    runs
}

/// A job of a batch: a run of whole texts (by index), or one part of a text cut into parts.
/// (A run is a range, not a list of its texts: one entry a text, 48 bytes each, made the
/// grouping of 78,000 lines 1.7 ms of a 40 ms batch on two threads, all of it serial.)
enum Job<'t> {
    Texts(std::ops::Range<usize>),
    Part {
        index: usize,
        part: usize,
        of: usize,
        text: &'t str,
    },
}

impl Job<'_> {
    /// Its size: bytes, or characters not yet converted.
    fn len(&self, texts: &[Text<'_>]) -> usize {
        match self {
            Job::Texts(run) => texts[run.clone()].iter().map(Text::len).sum(),
            Job::Part { text, .. } => text.len(),
        }
    }
}

/// A text of a batch: its UTF-8, or its characters, converted by the thread that encodes it.
#[derive(Clone, Copy)]
enum Text<'t> {
    Utf8(&'t str),
    Later(&'t Source<'t>),
}

impl Text<'_> {
    /// Its size for dividing the work: bytes, or characters not yet converted.
    fn len(&self) -> usize {
        match self {
            Text::Utf8(t) => t.len(),
            Text::Later(s) => s.len(),
        }
    }
}

/// Groups `texts` into jobs of about `target` units or more, in order: runs of whole texts,
/// and each text of UTF-8 longer than `target` cut by `split` into parts, a job each.
fn batch_jobs<'t>(
    texts: &[Text<'t>],
    target: usize,
    split: impl Fn(&'t str) -> Vec<&'t str>,
) -> Vec<Job<'t>> {
    let mut jobs = Vec::new();
    let (mut first, mut size) = (0, 0);
    for (index, text) in texts.iter().enumerate() {
        match *text {
            Text::Utf8(t) if t.len() > target => {
                if first < index {
                    jobs.push(Job::Texts(first..index));
                }
                let parts = split(t);
                let of = parts.len();
                jobs.extend(parts.into_iter().enumerate().map(|(part, text)| Job::Part {
                    index,
                    part,
                    of,
                    text,
                }));
                (first, size) = (index + 1, 0);
            }
            _ => {
                size += text.len();
                if size >= target {
                    jobs.push(Job::Texts(first..index + 1));
                    (first, size) = (index + 1, 0);
                }
            }
        }
    }
    if first < texts.len() {
        jobs.push(Job::Texts(first..texts.len()));
    }
    jobs
}

/// The ids of one job's texts (or its one part), one after another: its `i`th text's are
/// `ids[ends[i - 1]..ends[i]]`. One vector a job, not one a text: a batch of 57,000
/// lines made as many vectors on the workers, each freed by the thread that builds the
/// lists (a free of another thread's memory, which takes the lock of its arena).
struct JobIds {
    ids: Vec<Rank>,
    ends: Vec<usize>,
}

impl JobIds {
    fn segment(&self, i: usize) -> &[Rank] {
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        &self.ids[start..self.ends[i]]
    }
}

/// The ids of the texts cut into parts, as their parts come in (jobs finish nearly in
/// order, but not exactly). A text of one part is not kept here: its list is made from its
/// job's ids at once.
struct Parts {
    /// Text index -> its parts so far, and how many are still missing.
    waiting: FxHashMap<usize, Waiting>,
}

/// The parts of one text that have come in, and how many have not.
struct Waiting(Vec<Option<Vec<Rank>>>, usize);

impl Parts {
    fn new(jobs: &[Job<'_>]) -> Self {
        let cut = jobs.iter().filter_map(|job| match *job {
            Job::Part {
                index, part: 0, of, ..
            } if of > 1 => Some((index, Waiting(vec![None; of], of))),
            _ => None,
        });
        Self {
            waiting: cut.collect(),
        }
    }

    /// Keeps the ids of one part; returns its text's parts once all are in. (Handed to
    /// the list as they are: joined into one vector first, they were megabytes copied into
    /// new memory by the thread that also builds every list.)
    fn add(&mut self, index: usize, part: usize, ids: Vec<Rank>) -> Option<Vec<Vec<Rank>>> {
        let Waiting(parts, missing) = self.waiting.get_mut(&index).expect("a text in parts");
        parts[part] = Some(ids);
        *missing -= 1;
        if *missing > 0 {
            return None;
        }
        let Waiting(parts, _) = self.waiting.remove(&index).expect("a text in parts");
        Some(parts.into_iter().flatten().collect())
    }
}

/// A compiled set of special tokens that an `encode` call allows.
#[pyclass(frozen, module = "bytepair._core")]
pub struct AllowedSpecial {
    inner: encode::AllowedSpecial,
}

/// `MemoryError` if a limit on address space leaves too little to build a tokenizer of
/// `tokens` tokens (`room.rs`): its tables and their temporaries come to about 400 bytes
/// a token (o200k's peak: 80 MB) and the piece cache's 10 MiB. Called from Python before
/// `CoreBPE(tokens, ...)`: PyO3's copy of the tokens, made before any code of the core
/// runs, could not fail otherwise than by ending the process.
#[pyfunction]
pub fn check_build(tokens: usize) -> PyResult<()> {
    crate::room::check(
        tokens.saturating_mul(400) + (16 << 20),
        "building the tokenizer",
    )
    .map_err(to_py)
}

#[pymethods]
impl CoreBPE {
    /// tokens: (bytes, id, rank or None) for every mergeable token; special_tokens: (text, id).
    #[new]
    fn new(
        py: Python<'_>,
        tokens: Vec<(Bound<'_, PyBytes>, Rank, Option<u32>)>,
        special_tokens: Vec<(String, Rank)>,
        pattern: &str,
    ) -> PyResult<Self> {
        let specs: Vec<TokenSpec> = tokens
            .iter()
            .map(|(b, id, rank)| TokenSpec {
                bytes: b.as_bytes().to_vec(),
                id: *id,
                rank: *rank,
            })
            .collect();
        Self::build(py, specs, special_tokens, pattern)
    }

    /// Built from the bytes of a tiktoken rank file (id = rank), or None when a line is not
    /// in the plain form `encode::rank_file` reads (the Python reader then handles it).
    #[staticmethod]
    fn from_rank_file(
        py: Python<'_>,
        data: &[u8],
        special_tokens: Vec<(String, Rank)>,
        pattern: &str,
    ) -> PyResult<Option<Self>> {
        // (a line per token, 18 bytes on average in o200k's file)
        check_build(data.len() / 16)?;
        let Some(specs) = py.detach(|| encode::rank_file::parse(data)) else {
            return Ok(None);
        };
        Self::build(py, specs, special_tokens, pattern).map(Some)
    }

    /// `refuse_special`: the first special token in the text, if any, is returned instead
    /// of the ids (one pass over the text for tiktoken's default `disallowed_special`).
    #[pyo3(signature = (text, refuse_special=false))]
    fn encode_ordinary<'py>(
        &self,
        py: Python<'py>,
        text: &Bound<'py, PyAny>,
        refuse_special: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let text = text_arg(text)?;
        if let Some(found) = self.refused(py, &text, refuse_special) {
            return Ok(found.into_any());
        }
        let ids = self.encode_checked(py, &text, None)?;
        Ok(self.id_list_of_parts(py, &ids)?.into_any())
    }

    /// Encodes with the allowed special tokens mapped to their ids (None: all of them).
    #[pyo3(signature = (text, allowed=None))]
    fn encode<'py>(
        &self,
        py: Python<'py>,
        text: &Bound<'py, PyAny>,
        allowed: Option<&AllowedSpecial>,
    ) -> PyResult<Bound<'py, PyList>> {
        let ids = self.encode_checked(py, &text_arg(text)?, Some(allowed.map(|a| &a.inner)))?;
        self.id_list_of_parts(py, &ids)
    }

    /// The ids of `encode` / `encode_ordinary` as little-endian uint32 bytes, for numpy:
    /// no Python int is made per token.
    #[pyo3(signature = (text, allowed=None, ordinary=false, refuse_special=false))]
    fn encode_to_bytes<'py>(
        &self,
        py: Python<'py>,
        text: &Bound<'py, PyAny>,
        allowed: Option<&AllowedSpecial>,
        ordinary: bool,
        refuse_special: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let text = text_arg(text)?;
        if let Some(found) = self.refused(py, &text, refuse_special) {
            return Ok(found.into_any());
        }
        let specials = (!ordinary).then_some(allowed.map(|a| &a.inner));
        let parts = self.encode_checked(py, &text, specials)?;
        // written straight into the bytes object: one copy of the ids, not two
        let n: usize = parts.iter().map(|p| p.len()).sum();
        let bytes = PyBytes::new_with(py, n * 4, |out| {
            for (slot, id) in out
                .chunks_exact_mut(4)
                .zip(parts.iter().flat_map(|p| p.iter()))
            {
                slot.copy_from_slice(&id.to_le_bytes());
            }
            Ok(())
        })?;
        Ok(bytes.into_any())
    }

    /// Encodes many texts in parallel (rayon), the GIL released. Returns the id lists, or
    /// (when `disallowed` is given and one of its tokens occurs in a text) the index of the
    /// first such text and the token found in it.
    #[pyo3(signature = (texts, allowed=None, ordinary=false, num_threads=None, disallowed=None))]
    fn encode_batch<'py>(
        &self,
        py: Python<'py>,
        texts: &Bound<'py, PyList>,
        allowed: Option<&AllowedSpecial>,
        ordinary: bool,
        num_threads: Option<usize>,
        disallowed: Option<&AllowedSpecial>,
    ) -> PyResult<(Vec<Bound<'py, PyList>>, Option<Refused>)> {
        // Each text is checked, held (the list may change while the GIL is released) and its
        // storage read in one pass: a pass each (the caller's copy of the list, PyO3's
        // extraction, the reads, and two passes of releases) touched each string's header
        // five times, 11 ms of serial work around a 12 MB batch of 226,000 lines taking
        // 120 ms on two threads.
        let n = texts.len();
        if n >= 1 << 10 {
            // (the tables of a text each below, on a limited address space: `room.rs`)
            crate::room::check(n * 64, "the batch's tables").map_err(to_py)?;
        }
        let mut held: Vec<Bound<'py, PyString>> = Vec::with_capacity(n);
        let mut sources: Vec<Source<'_>> = Vec::with_capacity(n);
        for i in 0..n {
            // SAFETY: `i` is below the list's length, which this loop cannot change (it runs
            // no Python code)
            let text = unsafe { texts.get_item_unchecked(i) }.cast_into::<PyString>()?;
            // SAFETY: `held` keeps the string alive; it is dropped after `sources` and all
            // that is made from it (declared before them)
            sources.push(unsafe { source_of_held(&text)? });
            held.push(text);
        }
        let units: usize = sources.iter().map(|s| s.len()).sum();
        // Below this many bytes (or characters), waking worker threads costs more than it
        // saves. (Their number is not even asked for then: a few system calls, a tenth of a
        // batch of eight lines.)
        let threads = if units < 1 << 15 {
            1
        } else {
            pool_size(num_threads)
        };
        let one_thread = threads == 1;
        // Jobs of about `target` units, runs of whole short texts or exact parts of a long
        // one: on several threads, several jobs a thread, so that the lists of finished
        // jobs are built while later ones are encoded; on one, Ctrl-C is seen between jobs.
        let target = if one_thread {
            INTERRUPT_PART
        } else {
            (units / (8 * threads)).clamp(1 << 15, 1 << 22)
        };
        // A text outside ASCII is converted to UTF-8 here only if it is needed whole before
        // the jobs: to be cut into parts, or searched for disallowed special tokens. Any
        // other is converted by the thread that encodes it, into a buffer kept for the
        // job's next text: converted here, the 20,000 lines with curly quotes among 76,000
        // (4 MB of English) took 3-4.6 ms of a 35 ms batch on two threads, with an
        // allocation each. (ASCII texts are borrowed, not copied: src/py/text.rs.)
        let now = |s: &Source<'_>| disallowed.is_some() || s.len() > target;
        // (an ASCII text is borrowed, never converted: taken for a text to convert, the
        // ASCII lines of 4 MB of English went through the conversion's threads for nothing,
        // 2-23 ms before the encoding of a 45 ms batch could start)
        let early: Vec<usize> = (0..sources.len())
            .filter(|&i| matches!(sources[i], Source::Data(_)) && now(&sources[i]))
            .collect();
        let units_early: usize = early.iter().map(|&i| sources[i].len()).sum();
        let convert = |texts: &[usize]| -> PyResult<Vec<Utf8<'_>>> {
            texts.iter().map(|&i| sources[i].utf8()).collect()
        };
        let converted: Vec<Utf8<'_>> = if units_early >= 1 << 20 && threads > 1 {
            // Converted on every core of the batch when they are many megabytes: done here
            // one by one, the conversion was a serial part of the batch (2.5 ms of 45 for 10
            // MB of English on two cores). Taken one by one by this thread and the workers
            // (`pipelined`), not handed to the pool as a whole: this thread then waited
            // while one worker converted all four texts of a 4 MB batch (1.8 ms; the other,
            // asleep, woke too late to take any). Runs of texts of about a quarter of a
            // thread's share (a job per text made 100,000 short ones 1.2x slower than with
            // the pool), and of 4M characters at most: Ctrl-C is seen between runs (ten
            // texts of 40M characters, most of them emoji, took 0.9 s to convert, and
            // Ctrl-C waited for all of it)
            let size = (units_early / (4 * threads)).clamp(1 << 16, 1 << 22);
            let mut groups: Vec<&[usize]> = Vec::new();
            let (mut first, mut filled) = (0, 0);
            for (k, &i) in early.iter().enumerate() {
                filled += sources[i].len();
                if filled >= size || k + 1 == early.len() {
                    groups.push(&early[first..=k]);
                    (first, filled) = (k + 1, 0);
                }
            }
            let mut done: Vec<Vec<Utf8<'_>>> = groups.iter().map(|_| Vec::new()).collect();
            pipelined(
                py,
                &groups,
                threads,
                |g| convert(g),
                |k, texts| {
                    py.check_signals()?;
                    done[k] = texts?;
                    Ok(())
                },
            )?;
            done.into_iter().flatten().collect()
        } else {
            convert(&early)?
        };
        let mut texts: Vec<Text<'_>> = sources
            .iter()
            .map(|s| match s {
                Source::Utf8(t) => Text::Utf8(t),
                Source::Data(_) => Text::Later(s),
            })
            .collect();
        for (&i, text) in early.iter().zip(&converted) {
            texts[i] = Text::Utf8(text);
        }
        if let Some(d) = disallowed {
            // (every text is UTF-8 by now: `now`)
            let find = |(i, t): (usize, &Text<'_>)| -> Option<Refused> {
                match t {
                    Text::Utf8(t) => d.inner.find(t).map(|s| (i, s.to_string())),
                    Text::Later(_) => None,
                }
            };
            // (on this thread below the size that wakes the workers for encoding: woken for
            // one short text, they took 20 us, where its encoding takes one)
            let found = if one_thread {
                detach_for(py, units, || texts.iter().enumerate().find_map(find))
            } else {
                py.detach(|| {
                    run_in_pool(num_threads, || {
                        texts.par_iter().enumerate().find_map_first(find)
                    })
                })?
            };
            if found.is_some() {
                return Ok((Vec::new(), found));
            }
        }
        let allowed = allowed.map(|a| &a.inner);
        let specials = (!ordinary).then_some(allowed);
        let jobs = detach_for(py, units, || {
            batch_jobs(&texts, target, |t| {
                self.enc.split_into_parts(t, specials, target)
            })
        });
        // (as in `encode_checked`: on a limited address space the ids get room for their
        // most before each text)
        let limited = units >= PARALLEL_MIN && crate::room::spare().is_some();
        let room = |ids: &mut Vec<Rank>, text: &str| match limited {
            true => crate::room::ids_room(ids, text.len()).map_err(to_py),
            false => Ok(()),
        };
        let work = |job: &Job<'_>| -> PyResult<JobIds> {
            let mut done = JobIds {
                ids: Vec::with_capacity(if limited { 0 } else { job.len(&texts) / 4 }),
                ends: Vec::new(),
            };
            match job {
                Job::Texts(run) => {
                    done.ends.reserve_exact(run.len());
                    let mut buf = Vec::new();
                    for text in &texts[run.clone()] {
                        let text = match *text {
                            Text::Utf8(t) => t,
                            Text::Later(s) => s.utf8_in(&mut buf)?,
                        };
                        room(&mut done.ids, text)?;
                        let ids = &mut done.ids;
                        self.enc.encode_into(text, specials, ids).map_err(to_py)?;
                        done.ends.push(done.ids.len());
                    }
                }
                Job::Part { text, .. } => {
                    room(&mut done.ids, text)?;
                    self.enc
                        .encode_into(text, specials, &mut done.ids)
                        .map_err(to_py)?;
                    done.ends.push(done.ids.len());
                }
            }
            Ok(done)
        };
        let mut parts = Parts::new(&jobs);
        let mut lists: Vec<Option<Bound<'py, PyList>>> = vec![None; texts.len()];
        let mut take = |k: usize, done: PyResult<JobIds>| -> PyResult<()> {
            // Ctrl-C stops the batch between jobs (the workers finish their current one)
            py.check_signals()?;
            let done = done?;
            match jobs[k] {
                Job::Texts(ref run) => {
                    for (i, index) in run.clone().enumerate() {
                        lists[index] = Some(self.list_of_parts(py, &[done.segment(i)], false)?);
                    }
                }
                Job::Part { index, of: 1, .. } => {
                    lists[index] = Some(self.list_of_parts(py, &[done.ids], false)?);
                }
                Job::Part { index, part, .. } => {
                    if let Some(ids) = parts.add(index, part, done.ids) {
                        // (on this thread: the pool that would fill it in parallel is not
                        // the pool of this batch's workers, and its threads, woken for the
                        // last list, were more threads than CPUs: 70 involuntary context
                        // switches per 4 MB batch on 2 CPUs, against 8)
                        lists[index] = Some(self.list_of_parts(py, &ids, false)?);
                    }
                }
            }
            Ok(())
        };
        if one_thread {
            for (k, job) in jobs.iter().enumerate() {
                take(k, detach_for(py, job.len(&texts), || work(job)))?;
            }
        } else {
            pipelined(py, &jobs, threads, work, take)?;
        }
        let lists = lists.into_iter().map(|l| l.expect("every text is encoded"));
        Ok((lists.collect(), None))
    }

    /// Encodes the final prefix of a stream buffer; returns (ids, the rest of the text).
    /// mode: "ordinary" (specials as text), "all", or "allowed" with `allowed`.
    #[pyo3(signature = (text, mode, allowed=None))]
    fn encode_stream_prefix<'py>(
        &self,
        py: Python<'py>,
        text: &Bound<'py, PyAny>,
        mode: &str,
        allowed: Option<&AllowedSpecial>,
    ) -> PyResult<(Bound<'py, PyList>, String)> {
        let specials = match (mode, allowed) {
            ("ordinary", _) => None,
            ("all", _) => Some(None),
            ("allowed", Some(a)) => Some(Some(&a.inner)),
            _ => {
                return Err(PyValueError::new_err(
                    "mode must be 'ordinary', 'all', or 'allowed' with a matcher",
                ))
            }
        };
        let text = text_arg(text)?;
        // most buffers end in a line still arriving: the lines before it go the way of
        // `encode`, on every CPU (the general way below pre-tokenizes the buffer to its end
        // and encodes the pre-tokens before its cut one by one, on this thread)
        if let Some(cut) = py.detach(|| self.enc.stream_safe_cut(&text, specials)) {
            let ids = self.encode_checked(py, &text[..cut], specials)?;
            return Ok((self.id_list_of_parts(py, &ids)?, text[cut..].to_string()));
        }
        let (ids, cut) = py
            .detach(|| self.enc.encode_stream_prefix(&text, specials))
            .map_err(to_py)?;
        Ok((self.id_list(py, &ids)?, text[cut..].to_string()))
    }

    /// Compiles a subset of the special tokens for `encode`.
    fn allowed_special(&self, tokens: Vec<String>) -> PyResult<AllowedSpecial> {
        Ok(AllowedSpecial {
            inner: self.enc.allowed_special(&tokens).map_err(to_py)?,
        })
    }

    fn decode_bytes<'py>(
        &self,
        py: Python<'py>,
        ids: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let ids = ids_of(ids)?;
        self.bytes_of(py, &ids)
    }

    /// `decode_bytes(ids).decode("utf-8", errors)`, without the bytes object.
    fn decode<'py>(
        &self,
        py: Python<'py>,
        ids: &Bound<'py, PyAny>,
        errors: &str,
    ) -> PyResult<Bound<'py, PyAny>> {
        let ids = ids_of(ids)?;
        let bytes = detach_for(py, 4 * ids.len(), || self.enc.decode_bytes(&ids)).map_err(to_py)?;
        utf8_str(py, &bytes, &c_errors(errors)?)
    }

    /// `decode_bytes` of ids given as little-endian uint32 bytes (a numpy array's): read
    /// from a sequence one by one, 2.5M numpy ids took 0.17 s with the GIL held.
    fn decode_bytes_le<'py>(&self, py: Python<'py>, data: &[u8]) -> PyResult<Bound<'py, PyBytes>> {
        if !data.len().is_multiple_of(4) {
            return Err(PyValueError::new_err(
                "ids as uint32 bytes: the length must be a multiple of 4",
            ));
        }
        // SAFETY: every four bytes are some u32; a bytes object's data is aligned for it on
        // CPython, and anywhere else the ids are copied out below
        let ids = match unsafe { data.align_to::<Rank>() } {
            ([], ids, []) if cfg!(target_endian = "little") => std::borrow::Cow::Borrowed(ids),
            _ => detach_for(py, data.len(), || {
                data.chunks_exact(4)
                    .map(|b| Rank::from_le_bytes([b[0], b[1], b[2], b[3]]))
                    .collect()
            }),
        };
        self.bytes_of(py, &ids)
    }

    /// `decode_bytes` of each id list, in parallel (rayon), the GIL released. The ids of
    /// all the lists are read into one vector, and a job decodes a run of lists into one
    /// buffer: a vector per list, in and out, spent half of the time in `malloc` and `free`.
    /// With `errors`, each list's text is made as `bytes.decode("utf-8", errors)` makes it,
    /// without the bytes object (57,000 calls of that were more than the decoding).
    #[pyo3(signature = (batch, num_threads=None, errors=None))]
    fn decode_batch<'py>(
        &self,
        py: Python<'py>,
        batch: &Bound<'py, PyList>,
        num_threads: Option<usize>,
        errors: Option<&str>,
    ) -> PyResult<Vec<Bound<'py, PyAny>>> {
        let errors = errors.map(c_errors).transpose()?;
        if batch.len() >= 1 << 10 {
            crate::room::check(batch.len() * 32, "the batch's tables").map_err(to_py)?;
        }
        let mut ids = Vec::new();
        let mut ends = Vec::with_capacity(batch.len());
        for list in batch.iter() {
            ids_into(&list, &mut ids)?;
            ends.push(ids.len());
        }
        let runs = runs_of(&ends, DECODE_JOB);
        let decode_run = |run: &std::ops::Range<usize>| {
            let mut start = if run.start == 0 {
                0
            } else {
                ends[run.start - 1]
            };
            let len = self.enc.decoded_len(&ids[start..ends[run.end - 1]])?;
            let mut bytes = crate::room::zeroed_bytes(len, "the decoded bytes")?;
            let mut byte_ends = Vec::with_capacity(run.len());
            let mut at = 0;
            for &end in &ends[run.clone()] {
                at += self.enc.decode_to(&ids[start..end], &mut bytes[at..]);
                byte_ends.push(at);
                start = end;
            }
            Ok((bytes, byte_ends))
        };
        let decoded: crate::Result<Vec<(Vec<u8>, Vec<usize>)>> = if runs.len() < 2
            || pool_size(num_threads) == 1
        {
            detach_for(py, 4 * ids.len(), || runs.iter().map(decode_run).collect())
        } else {
            py.detach(|| run_in_pool(num_threads, || runs.par_iter().map(decode_run).collect()))?
        };
        let mut out = Vec::with_capacity(ends.len());
        for (bytes, byte_ends) in &decoded.map_err(to_py)? {
            let mut start = 0;
            for &end in byte_ends {
                let piece = &bytes[start..end];
                out.push(match &errors {
                    Some(errors) => utf8_str(py, piece, errors)?,
                    None => PyBytes::new(py, piece).into_any(),
                });
                start = end;
            }
        }
        Ok(out)
    }

    fn token_bytes<'py>(&self, py: Python<'py>, id: Rank) -> PyResult<Bound<'py, PyBytes>> {
        let bytes = self.enc.token_bytes(id).map_err(to_py)?;
        Ok(PyBytes::new(py, bytes))
    }

    /// (left id, right id) of each merge, in rank order, recovered from the ranks.
    fn recover_merges(&self, py: Python<'_>) -> Vec<(Rank, Rank)> {
        py.detach(|| {
            self.enc
                .recover_merges()
                .into_iter()
                .map(|(_, l, r)| (l, r))
                .collect()
        })
    }

    /// Every (id, bytes) of the vocabulary, special tokens included, by id, as a list of
    /// tuples. Each object is made fallibly, and under a limit on address space their room
    /// (about 160 bytes a token) is checked first (`room.rs`): PyO3's conversions end in a
    /// panic where an object cannot be made ("PyObject pointer is null", then a hang; QA).
    fn tokens<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let what = "the vocabulary's bytes";
        let n = self.enc.n_vocab();
        crate::room::check(n.saturating_mul(160), what).map_err(to_py)?;
        let tokens = self.enc.tokens();
        // SAFETY: every object below is new (NULL, with an exception set, if it could not be
        // made: `from_owned_ptr_or_err`); a new list's and tuple's slots are each filled once
        // with a reference they take, and the list is seen by no one until it is returned
        unsafe {
            let make = |p: *mut ffi::PyObject| Bound::from_owned_ptr_or_err(py, p);
            let list = make(ffi::PyList_New(tokens.len() as ffi::Py_ssize_t))?;
            for (k, &(id, bytes)) in tokens.iter().enumerate() {
                let id = make(ffi::PyLong_FromUnsignedLong(id.into()))?;
                let data = bytes.as_ptr() as *const std::ffi::c_char;
                let bytes = make(ffi::PyBytes_FromStringAndSize(data, bytes.len() as _))?;
                let pair = make(ffi::PyTuple_New(2))?;
                ffi::PyTuple_SET_ITEM(pair.as_ptr(), 0, id.into_ptr());
                ffi::PyTuple_SET_ITEM(pair.as_ptr(), 1, bytes.into_ptr());
                ffi::PyList_SET_ITEM(list.as_ptr(), k as ffi::Py_ssize_t, pair.into_ptr());
            }
            Ok(list.cast_into_unchecked())
        }
    }

    /// The last pre-token of `text` (special tokens not split out) as UTF-8, or None.
    fn last_pretoken<'py>(
        &self,
        py: Python<'py>,
        text: &Bound<'py, PyAny>,
    ) -> PyResult<Option<Bound<'py, PyBytes>>> {
        let text = text_arg(text)?;
        let last = py.detach(|| self.enc.last_pretoken(&text)).map_err(to_py)?;
        Ok(last.map(|piece| PyBytes::new(py, piece.as_bytes())))
    }

    fn encode_piece(&self, piece: &[u8]) -> PyResult<Vec<Rank>> {
        let mut out = Vec::new();
        self.enc.encode_piece(piece, &mut out);
        encode::no_memory_for_pieces().map_err(to_py)?;
        Ok(out)
    }

    #[getter]
    fn n_vocab(&self) -> usize {
        self.enc.n_vocab()
    }
}

#[pymethods]
impl AllowedSpecial {
    /// The first allowed special token in text, or None.
    fn find(&self, text: &Bound<'_, PyAny>) -> PyResult<Option<String>> {
        Ok(self.inner.find(&text_arg(text)?).map(str::to_string))
    }
}
