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
    /// Where each dense id's bytes start in `bytes`, and their length (0: no token; tokens
    /// are never empty).
    starts: Vec<u64>,
    lens: Vec<u32>,
    sparse: FxHashMap<Rank, (u64, u32)>,
    max_id: Rank,
}

impl Decoder {
    pub fn new(max_id: Rank, count: usize) -> Self {
        let dense_len = if (max_id as usize) < 2 * count + 1024 {
            max_id as usize + 1
        } else {
            0
        };
        Self {
            bytes: Vec::new(),
            starts: vec![0; dense_len],
            lens: vec![0; dense_len],
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
        let len = u32::try_from(bytes.len())
            .map_err(|_| Error::Invalid(format!("token id {id} is longer than 4 GiB")))?;
        let start = self.bytes.len() as u64;
        let taken = match self.lens.get(id as usize) {
            Some(&l) => l != 0,
            None => self.sparse.contains_key(&id),
        };
        if taken {
            return Err(Error::Invalid(format!("token id {id} appears twice")));
        }
        match self.lens.get_mut(id as usize) {
            Some(l) => {
                *l = len;
                self.starts[id as usize] = start;
            }
            None => {
                self.sparse.insert(id, (start, len));
            }
        }
        self.bytes.extend_from_slice(bytes);
        Ok(())
    }

    #[inline]
    pub fn get(&self, id: Rank) -> Option<&[u8]> {
        let (start, len) = match self.lens.get(id as usize) {
            Some(&0) => return None,
            Some(&len) => (self.starts[id as usize], len),
            None => *self.sparse.get(&id)?,
        };
        Some(&self.bytes[start as usize..start as usize + len as usize])
    }

    pub fn items(&self) -> Vec<(Rank, &[u8])> {
        let mut out: Vec<(Rank, &[u8])> = (0..self.lens.len() as Rank)
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
}
