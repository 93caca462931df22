//! A short piece as a value: its bytes and length packed into two words.
//!
//! Almost every pre-token is at most 15 bytes. Packed, hashing it is one multiply and
//! comparing it two word compares, where a loop over its bytes (and a length check, and a
//! call to `memcmp`) used to be a third of a cache hit.

/// The longest piece that has a key, in bytes.
pub const MAX: usize = 15;

/// A piece of 1..=`MAX` bytes: its bytes, zero-padded, with the length in the last byte (so a
/// key is never all zeros, which marks an empty slot).
pub type Key = [u64; 2];

/// `KEEP[n]`: the masks of the first `n` bytes of two little-endian words.
const KEEP: [Key; 16] = {
    let mut t = [[0u64; 2]; 16];
    let mut n = 0;
    while n < 16 {
        let lo = if n >= 8 {
            u64::MAX
        } else {
            (1u64 << (8 * n)) - 1
        };
        let hi = if n <= 8 {
            0
        } else {
            (1u64 << (8 * (n - 8))) - 1
        };
        t[n] = [lo, hi];
        n += 1;
    }
    t
};

/// The key of `piece` (`1 <= piece.len() <= MAX`). `room` is how many bytes are readable
/// from the piece's start (it may lie inside a longer text): with 16 of them the key is two
/// loads and two masks, not a copy of a ragged length.
#[inline(always)]
pub fn pack(piece: &[u8], room: usize) -> Key {
    let n = piece.len();
    debug_assert!((1..=MAX).contains(&n) && room >= n);
    let (lo, hi) = if room >= 16 {
        // SAFETY: the caller says `room >= 16` bytes from the piece's start are readable
        unsafe {
            let p = piece.as_ptr();
            (
                (p as *const u64).read_unaligned(),
                (p.add(8) as *const u64).read_unaligned(),
            )
        }
    } else {
        ragged(piece)
    };
    let keep = KEEP[n & 15];
    [lo & keep[0], (hi & keep[1]) | (n as u64) << 56]
}

/// The bytes of `piece` (1..=`MAX` of them) as two little-endian words, zero-padded, read
/// with loads inside the piece that overlap (the last piece of a text, where fewer than 16
/// bytes are readable). Copied into a zeroed buffer and read back as words, the bytes
/// stalled the reads a dozen cycles or more (a load cannot take its value from several
/// smaller stores): a sixth of `encode_ordinary`'s time on a batch of short strings.
#[inline(always)]
fn ragged(piece: &[u8]) -> (u64, u64) {
    let n = piece.len();
    let word = |i: usize| u64::from_le_bytes(piece[i..i + 8].try_into().unwrap());
    let half = |i: usize| u32::from_le_bytes(piece[i..i + 4].try_into().unwrap()) as u64;
    let byte = |i: usize| piece[i] as u64;
    if n > 8 {
        // the last word holds bytes n-8..n; bytes 8..n are its top n-8
        (word(0), word(n - 8) >> (8 * (16 - n)))
    } else if n == 8 {
        (word(0), 0)
    } else if n >= 4 {
        (half(0) | half(n - 4) << (8 * (n - 4)), 0)
    } else {
        (
            byte(0) | byte(n / 2) << (8 * (n / 2)) | byte(n - 1) << (8 * (n - 1)),
            0,
        )
    }
}

/// A hash of `key` whose high bits (the well-mixed ones of a product) index tables.
#[inline(always)]
pub fn hash(key: Key) -> u64 {
    (key[0] ^ key[1].rotate_left(29)).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_the_bytes_and_length_wherever_read() {
        // every length, read in place (16+ bytes readable) or copied (fewer): the same key,
        // and different pieces (a trailing zero byte included) never share one
        let text: Vec<u8> = (0..64u8).map(|i| i.wrapping_mul(37) | 1).collect();
        let mut seen = std::collections::HashSet::new();
        for n in 1..=MAX {
            for start in [0, 5, 40] {
                let piece = &text[start..start + n];
                let k = pack(piece, text.len() - start);
                assert_eq!(k, pack(piece, n));
                let mut want = [0u8; 16];
                want[..n].copy_from_slice(piece);
                want[15] = n as u8;
                assert_eq!(
                    k,
                    [
                        u64::from_le_bytes(want[..8].try_into().unwrap()),
                        u64::from_le_bytes(want[8..].try_into().unwrap()),
                    ]
                );
                assert!(seen.insert(k));
            }
            let zeros = vec![0u8; n];
            assert!(seen.insert(pack(&zeros, n)));
        }
    }
}
