//! Token bytes by id, for decoding.

use rustc_hash::FxHashMap;

use crate::{Error, Rank, Result};

/// Token bytes by id: a table when ids are dense (every vocabulary in practice), a map
/// when they are sparse, so one huge id cannot make us allocate gigabytes. The bytes of all
/// tokens are in one buffer: a box per token was 16 bytes of table and a 32-byte allocation
/// for each of o200k's 200k tokens (9.6 MB; here 3 MB).
#[derive(Debug, Clone)]
pub struct Decoder {
    bytes: Vec<u8>,
    /// Where each dense id's bytes are in `bytes` (`span`; 0: no token, tokens are never
    /// empty). One word per id, so a token costs one read of the table: a table of starts
    /// and one of lengths were two misses per token of a long list.
    spans: Vec<u64>,
    sparse: FxHashMap<Rank, u64>,
    max_id: Rank,
}

/// A token's place in `Decoder::bytes`: its start (high half) and length (low half).
#[inline(always)]
fn span(start: usize, len: usize) -> u64 {
    (start as u64) << 32 | len as u64
}

#[inline(always)]
fn start_len(span: u64) -> (usize, usize) {
    ((span >> 32) as usize, (span & 0xFFFF_FFFF) as usize)
}

/// Tokens up to this many bytes are copied as one block (`Decoder::extend`).
const BLOCK: usize = 16;

impl Decoder {
    pub fn new(max_id: Rank, count: usize) -> Self {
        let dense_len = if (max_id as usize) < 2 * count + 1024 {
            max_id as usize + 1
        } else {
            0
        };
        Self {
            bytes: Vec::new(),
            spans: vec![0; dense_len],
            sparse: FxHashMap::default(),
            max_id,
        }
    }

    /// The largest id it was made for.
    pub fn max_id(&self) -> Rank {
        self.max_id
    }

    /// Keeps `bytes` as the token `id`.
    pub fn insert(&mut self, id: Rank, bytes: &[u8]) -> Result<()> {
        if bytes.is_empty() {
            // (a length of 0 is an id without a token here)
            return Err(Error::Invalid(format!("token id {id} has no bytes")));
        }
        let start = self.bytes.len();
        if u32::try_from(start + bytes.len()).is_err() {
            return Err(Error::Invalid(format!(
                "token id {id}: the tokens hold more than 4 GiB of bytes"
            )));
        }
        let taken = match self.spans.get(id as usize) {
            Some(&s) => s != 0,
            None => self.sparse.contains_key(&id),
        };
        if taken {
            return Err(Error::Invalid(format!("token id {id} appears twice")));
        }
        match self.spans.get_mut(id as usize) {
            Some(s) => *s = span(start, bytes.len()),
            None => {
                self.sparse.insert(id, span(start, bytes.len()));
            }
        }
        self.bytes.extend_from_slice(bytes);
        Ok(())
    }

    #[inline(always)]
    fn span_of(&self, id: Rank) -> Option<u64> {
        match self.spans.get(id as usize) {
            Some(&0) => None,
            Some(&s) => Some(s),
            None => self.sparse.get(&id).copied(),
        }
    }

    #[inline]
    pub fn get(&self, id: Rank) -> Option<&[u8]> {
        let (start, len) = start_len(self.span_of(id)?);
        Some(&self.bytes[start..start + len])
    }

    /// The number of bytes of `ids`; the first id that is no token is the error.
    pub fn len_of(&self, ids: &[Rank]) -> Result<usize> {
        ids.iter().try_fold(0, |n, &id| match self.span_of(id) {
            Some(s) => Ok(n + start_len(s).1),
            None => Err(Error::UnknownToken(id as u64)),
        })
    }

    /// Writes the bytes of `ids` into `out`, from its start. A token of up to 16 bytes
    /// (nearly all) is copied as one 16-byte block while 16 bytes are left, the bytes past
    /// its end written over by the next token: a call to `memcpy` for each token of a few
    /// bytes was most of decoding. An id that is no token writes nothing (`len_of` refuses
    /// it first), and writing stops at the end of `out`. Returns the bytes written.
    pub fn write(&self, ids: &[Rank], out: &mut [u8]) -> usize {
        let mut at = 0;
        for &id in ids {
            let Some(s) = self.span_of(id) else { continue };
            let (start, len) = start_len(s);
            if len <= BLOCK && start + BLOCK <= self.bytes.len() && at + BLOCK <= out.len() {
                let block: [u8; BLOCK] = self.bytes[start..start + BLOCK].try_into().unwrap();
                out[at..at + BLOCK].copy_from_slice(&block);
            } else {
                let Some(to) = out.get_mut(at..at + len) else {
                    return at;
                };
                to.copy_from_slice(&self.bytes[start..start + len]);
            }
            at += len;
        }
        at
    }

    pub fn items(&self) -> Vec<(Rank, &[u8])> {
        let mut out: Vec<(Rank, &[u8])> = (0..self.spans.len() as Rank)
            .filter_map(|i| Some((i, self.get(i)?)))
            .chain(self.sparse.keys().filter_map(|&i| Some((i, self.get(i)?))))
            .collect();
        out.sort_unstable_by_key(|&(i, _)| i);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Dense and sparse ids, in any order: each id's bytes, none for an id never given, an id
    /// given twice refused, `items` by id.
    #[test]
    fn decoder_keeps_each_tokens_bytes() {
        for (max_id, count) in [(9, 10), (4_000_000_000, 3)] {
            let mut d = Decoder::new(max_id, count);
            let given: [(Rank, &[u8]); 3] = [(7, b"seven"), (0, b"a"), (max_id, b"last")];
            for (id, bytes) in given {
                d.insert(id, bytes).unwrap();
            }
            assert_eq!(d.get(7), Some(&b"seven"[..]));
            assert_eq!(d.get(0), Some(&b"a"[..]));
            assert_eq!(d.get(max_id), Some(&b"last"[..]));
            assert_eq!(d.get(3), None);
            assert_eq!(d.get(max_id.wrapping_add(1)), None);
            // (a refused id leaves the one held as it was)
            assert!(d.insert(7, b"again").is_err());
            assert!(d.insert(max_id, b"again").is_err());
            assert!(d.insert(3, b"").is_err());
            assert_eq!(d.get(3), None);
            assert_eq!(d.get(7), Some(&b"seven"[..]));
            assert_eq!(d.get(max_id), Some(&b"last"[..]));
            let items: Vec<(Rank, &[u8])> = vec![(0, b"a"), (7, b"seven"), (max_id, b"last")];
            assert_eq!(d.items(), items);
        }
    }

    /// `write` gives the concatenated bytes of any ids: tokens of 1 to 40 bytes (copied as
    /// a 16-byte block up to 16, else whole), the last ones near the end of the buffer,
    /// into memory exactly as long or longer; `len_of` refuses the first unknown id.
    #[test]
    fn write_gives_each_tokens_bytes() {
        for (max_id, count) in [(39, 40), (4_000_000_000, 40)] {
            let mut d = Decoder::new(max_id, count);
            let token = |i: usize| -> Vec<u8> { (0..=i).map(|k| (i * 7 + k) as u8).collect() };
            let id = |i: usize| if i == 39 { max_id } else { i as Rank };
            for i in 0..40 {
                d.insert(id(i), &token(i)).unwrap();
            }
            let mut order: Vec<usize> = (0..40).chain((0..40).rev()).collect();
            order.extend([39, 39, 0, 16, 15, 17, 38]);
            let ids: Vec<Rank> = order.iter().map(|&i| id(i)).collect();
            let want: Vec<u8> = order.iter().flat_map(|&i| token(i)).collect();
            let n = d.len_of(&ids).unwrap();
            assert_eq!(n, want.len());
            for spare in [0, 5, 40] {
                // (into memory of other bytes, exactly as long or longer)
                let mut buf = vec![9u8; n + spare];
                assert_eq!(d.write(&ids, &mut buf), n);
                assert_eq!(buf[..n], want[..]);
            }
            let bad = [id(3), 7_000, id(4)];
            assert!(matches!(d.len_of(&bad), Err(Error::UnknownToken(7_000))));
        }
    }
}
