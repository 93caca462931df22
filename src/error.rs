//! The one error type of the core. The bindings map each variant to a documented Python
//! exception (`ValueError`, `KeyError`, `OSError`); nothing here panics on user input.

use std::path::PathBuf;

/// Everything that can go wrong in the core, on bad input or I/O.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The pattern is not a valid regex.
    #[error("invalid pre-tokenization pattern {pattern:?}: {message}")]
    InvalidPattern { pattern: String, message: String },

    /// The regex engine gave up (backtracking limit) on some input.
    #[error("pre-tokenization pattern failed on the input: {0}")]
    PatternFailed(String),

    /// A corpus file is not valid UTF-8: `bad`, the invalid sequence at `offset`, and
    /// `reason`, as Python's `UnicodeDecodeError` gives them (the bindings raise
    /// `bytepair.inputs.CorpusDecodeError`, as for a file read in Python). (The hint is
    /// worded as in `inputs.py`, whose `_ERRORS_HINT` the command line rewrites into its
    /// `--errors` flag.)
    #[error(
        "{path}: invalid UTF-8 at byte offset {offset} (byte {:#04x}): {reason}; pass \
         errors='replace' or errors='skip' to read it anyway",
        bad[0]
    )]
    InvalidUtf8 {
        path: PathBuf,
        offset: u64,
        bad: Vec<u8>,
        reason: &'static str,
    },

    /// Reading a corpus file failed.
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    /// A token id that the vocabulary does not have.
    #[error("unknown token id {0}")]
    UnknownToken(u64),

    /// A large buffer could not be allocated (Python's `MemoryError`): what it was for and
    /// its size in bytes.
    #[error("no memory for {what} ({bytes} bytes)")]
    NoMemory { what: &'static str, bytes: usize },

    /// Stopped from outside (Ctrl-C) before the work was done.
    #[error("interrupted")]
    Interrupted,

    /// Any other invalid argument or vocabulary (message says what is wrong).
    #[error("{0}")]
    Invalid(String),
}

/// Result with the core's [`Error`].
pub type Result<T> = std::result::Result<T, Error>;
