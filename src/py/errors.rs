//! Core errors -> Python exceptions, as DESIGN.md §4 documents them.

use pyo3::exceptions::{PyKeyError, PyOSError, PyValueError};
use pyo3::PyErr;

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
        other => PyValueError::new_err(other.to_string()),
    }
}
