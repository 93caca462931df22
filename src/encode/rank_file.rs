//! A tiktoken rank file (`base64(token) rank` per line) read straight into tokens.
//!
//! Reading o200k's 200,000 lines in Python (a base64 call, an int and two dict entries per
//! line) took longer than building the encoder; here it is a few milliseconds. Only the plain
//! form is read: one line per token, `[A-Za-z0-9+/]+={0,2}`, one space, decimal digits, no
//! token or rank twice. Anything else gives `None`, and the Python reader, which accepts
//! what tiktoken's does, reports the line or reads it.

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use rustc_hash::FxHashSet;

use super::TokenSpec;

/// The tokens of a rank file, id = rank; a token of more than one byte is made by a merge
/// of that rank (tiktoken's rule), a single byte by none.
pub fn parse(data: &[u8]) -> Option<Vec<TokenSpec>> {
    let mut tokens = Vec::with_capacity(data.len() / 16);
    for line in data.split(|&b| b == b'\n') {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.is_empty() {
            continue;
        }
        let space = line.iter().position(|&b| b == b' ')?;
        let (token, rank) = (&line[..space], &line[space + 1..]);
        if rank.is_empty() || !rank.iter().all(u8::is_ascii_digit) || rank.len() > 9 {
            return None;
        }
        let rank: u32 = std::str::from_utf8(rank).ok()?.parse().ok()?;
        let bytes = STANDARD.decode(token).ok()?;
        if bytes.is_empty() {
            return None;
        }
        let merged = (bytes.len() > 1).then_some(rank);
        tokens.push(TokenSpec {
            bytes,
            id: rank,
            rank: merged,
        });
    }
    let mut ranks = FxHashSet::default();
    let mut seen = FxHashSet::default();
    ranks.reserve(tokens.len());
    seen.reserve(tokens.len());
    for t in &tokens {
        if !ranks.insert(t.id) || !seen.insert(&t.bytes[..]) {
            return None;
        }
    }
    Some(tokens)
}

#[cfg(test)]
mod tests {
    use super::*;

    type Parsed = Vec<(Vec<u8>, u32, Option<u32>)>;

    fn parsed(data: &[u8]) -> Option<Parsed> {
        parse(data).map(|t| t.into_iter().map(|t| (t.bytes, t.id, t.rank)).collect())
    }

    #[test]
    fn reads_the_plain_form() {
        // "IQ==" = "!", "aGk=" = "hi", "aGVsbG8=" = "hello"
        assert_eq!(
            parsed(b"IQ== 0\r\naGk= 7\n\naGVsbG8= 12"),
            Some(vec![
                (b"!".to_vec(), 0, None),
                (b"hi".to_vec(), 7, Some(7)),
                (b"hello".to_vec(), 12, Some(12)),
            ])
        );
        assert_eq!(parsed(b""), Some(vec![]));
    }

    #[test]
    fn leaves_anything_else_to_the_python_reader() {
        for bad in [
            &b"IQ== 0 1"[..],    // three fields
            b"IQ==\t0",          // another separator
            b"IQ== -1",          // negative
            b"IQ== +1",          // sign
            b"IQ== 1_0",         // underscore
            b"IQ== 99999999999", // too large
            b"IQ 0",             // bad padding
            b"I!== 0",           // not base64
            b" 0",               // empty token
            b"IQ== 0\nIg== 0",   // rank twice
            b"IQ== 0\nIQ== 1",   // token twice
            b"IQ==",             // no rank
        ] {
            assert_eq!(parsed(bad), None, "{:?}", String::from_utf8_lossy(bad));
        }
    }
}
