//! Core errors -> Python exceptions, as DESIGN.md §4 documents them.

use pyo3::exceptions::{PyKeyError, PyKeyboardInterrupt, PyMemoryError, PyOSError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::Error;

pub fn to_py(err: Error) -> PyErr {
    match err {
        // OSError(errno, strerror, filename) picks the subclass itself
        // (FileNotFoundError for ENOENT, PermissionError, IsADirectoryError, ...).
        Error::Io { path, source } => {
            let filename = path.to_string_lossy().into_owned();
            match source.raw_os_error() {
                Some(errno) => {
                    // io::Error's text ends in " (os error N)"; Python shows the errno itself
                    let text = source.to_string();
                    let strerror = match text.rfind(" (os error ") {
                        Some(k) => text[..k].to_string(),
                        None => text,
                    };
                    PyOSError::new_err((errno, strerror, filename))
                }
                None => PyOSError::new_err(format!("{filename}: {source}")),
            }
        }
        Error::UnknownToken(id) => PyKeyError::new_err(format!("unknown token id {id}")),
        // the exception a corpus file read in Python raises (a ValueError, and a
        // UnicodeDecodeError with the file and offset), so one `except` catches both
        Error::InvalidUtf8 {
            path,
            offset,
            bad,
            reason,
        } => Python::attach(|py| {
            let make = || -> PyResult<PyErr> {
                let class = py.import("bytepair.inputs")?.getattr("CorpusDecodeError")?;
                let path = path.to_string_lossy();
                let args = (path, offset, PyBytes::new(py, &bad), reason, py.None());
                Ok(PyErr::from_value(class.call1(args)?))
            };
            make().unwrap_or_else(|e| e)
        }),
        e @ Error::NoMemory { .. } => PyMemoryError::new_err(e.to_string()),
        // (`interruptible` returns the signal handler's own exception; this is a fallback)
        Error::Interrupted => PyKeyboardInterrupt::new_err("interrupted"),
        other => PyValueError::new_err(other.to_string()),
    }
}
