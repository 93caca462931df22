//! The body of a saved `PretokenCounts` file: compact, and checked on load.
//!
//! Records in increasing byte order of the pre-tokens; each is
//! `varint(shared) varint(len) bytes[len] varint(count)`: the pre-token is the first
//! `shared` bytes of the previous one followed by `bytes` (front coding: sorted pre-tokens
//! share long prefixes). Varints are LEB128 (7 bits per byte, low bits first). The Python
//! side wraps the body in a header (magic, pattern, special tokens, record count, CRC-32).

use super::PretokenCounts;
use crate::{Error, Result};

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Reads a varint at `*pos`; None if truncated or longer than 64 bits.
fn get_varint(data: &[u8], pos: &mut usize) -> Option<u64> {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let b = *data.get(*pos)?;
        *pos += 1;
        let bits = (b & 0x7f) as u64;
        if shift == 63 && bits > 1 {
            return None;
        }
        v |= bits << shift;
        if b & 0x80 == 0 {
            return Some(v);
        }
    }
    None
}

impl PretokenCounts {
    /// The counts as a file body (see the module docs); deterministic for equal counts.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut entries: Vec<(&Vec<u8>, &u64)> = self.counts.iter().collect();
        entries.sort_unstable();
        let mut out = Vec::new();
        let mut prev: &[u8] = &[];
        for (k, &c) in entries {
            let shared = prev
                .iter()
                .zip(k.iter())
                .take_while(|(a, b)| a == b)
                .count();
            put_varint(&mut out, shared as u64);
            put_varint(&mut out, (k.len() - shared) as u64);
            out.extend_from_slice(&k[shared..]);
            put_varint(&mut out, c);
            prev = k;
        }
        out
    }

    /// Reads a body written by [`Self::to_bytes`] holding `n` records. Every length is
    /// checked against the data left, keys must strictly increase and counts be positive,
    /// so a corrupt body is an error (naming the record), never a panic or a huge
    /// allocation.
    pub fn from_bytes(data: &[u8], n: u64) -> Result<PretokenCounts> {
        let bad = |i: u64, what: &str| Error::Invalid(format!("record {i}: {what}"));
        let mut out = PretokenCounts::default();
        // every record takes at least 4 bytes: do not trust `n` for the allocation
        out.counts.reserve((n as usize).min(data.len() / 4));
        let mut pos = 0usize;
        let mut prev: Vec<u8> = Vec::new();
        for i in 0..n {
            let shared = get_varint(data, &mut pos).ok_or_else(|| bad(i, "truncated"))?;
            let len = get_varint(data, &mut pos).ok_or_else(|| bad(i, "truncated"))?;
            if shared > prev.len() as u64 {
                return Err(bad(i, "shares more bytes than the previous pre-token has"));
            }
            if len > (data.len() - pos) as u64 {
                return Err(bad(i, "truncated"));
            }
            let mut key = prev[..shared as usize].to_vec();
            key.extend_from_slice(&data[pos..pos + len as usize]);
            pos += len as usize;
            let count = get_varint(data, &mut pos).ok_or_else(|| bad(i, "truncated"))?;
            if key.is_empty() || (i > 0 && key <= prev) {
                return Err(bad(i, "pre-tokens are not in strictly increasing order"));
            }
            if count == 0 {
                return Err(bad(i, "a count of 0"));
            }
            out.counts.insert(key.clone(), count);
            prev = key;
        }
        if pos != data.len() {
            return Err(Error::Invalid(format!(
                "{} bytes after the last record",
                data.len() - pos
            )));
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roundtrip_and_corruption() {
        let mut c = PretokenCounts::default();
        for (k, v) in [("the", 5u64), ("then", 1 << 40), (" x", 1), ("é", u64::MAX)] {
            c.counts.insert(k.as_bytes().to_vec(), v);
        }
        let body = c.to_bytes();
        assert_eq!(PretokenCounts::from_bytes(&body, 4).unwrap(), c);
        for cut in 0..body.len() {
            assert!(PretokenCounts::from_bytes(&body[..cut], 4).is_err());
        }
        assert!(PretokenCounts::from_bytes(&body, 3).is_err());
        assert!(PretokenCounts::from_bytes(&body, 5).is_err());
        let mut flipped = body.clone();
        flipped[0] = 9; // shared prefix longer than the (empty) previous key
        assert!(PretokenCounts::from_bytes(&flipped, 4).is_err());
    }
}
