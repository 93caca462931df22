//! Encoding and decoding with a fixed vocabulary.
//!
//! Within a pre-token the rule is tiktoken's: start from single bytes and repeatedly merge
//! the adjacent pair whose concatenation has the lowest rank (leftmost among equal ranks);
//! a pre-token that is itself a token is one id. For a trained tokenizer the rank of a
//! token is the index of the merge that made it, so this is "apply merges in learned
//! order" (DESIGN.md §2). Pair lookups go through a table (left id, right id) ->
//! (rank, merged id), built once from the vocabulary, so the hot loop hashes integers, not
//! byte strings.

mod atoms;
mod build;
mod cache;
mod decoder;
mod key;
mod lines;
mod lookup;
mod merge;
mod pairs;
pub mod rank_file;

use rustc_hash::FxHashMap;

use build::{byte_pair_table, every_split, merge_with_max, on_every_cpu, reachable_pairs};
use cache::PieceCache;
use decoder::Decoder;
use lookup::TokenIds;
use pairs::PairTable;

use crate::pretokenize::cuts::{find_cut, split_text, Cuts};
use crate::pretokenize::{Pretokenizer, Span, SpecialMatcher};
use crate::{Error, Rank, Result};

/// A mergeable token: its bytes, its id, and its merge priority (`None` if no merge makes it,
/// like the 256 single bytes, or a token only reachable as a whole pre-token).
#[derive(Debug, Clone)]
pub struct TokenSpec {
    pub bytes: Vec<u8>,
    pub id: Rank,
    pub rank: Option<u32>,
}

/// A vocabulary ready to encode and decode, with its pattern and special tokens.
#[derive(Debug, Clone)]
pub struct Encoder {
    byte_ids: [Rank; 256],
    /// (rank, id) of every pair of single bytes, at `a << 8 | b` (`merge::NONE`: no token).
    byte_pairs: Box<[(u32, Rank)]>,
    /// The tokens that merging their own bytes does not make, bytes -> id (lowest id on
    /// duplicates): the only pre-tokens that are one id where merging would give others.
    /// None in the OpenAI encodings (`unmade_tokens`).
    unmade: FxHashMap<Box<[u8]>, Rank>,
    /// (left id, right id) -> (rank of the concatenation, its id).
    pair_table: PairTable,
    /// Characters that merging may start from whole (`atoms.rs`).
    atoms: atoms::Atoms,
    /// Token bytes by id.
    decoder: Decoder,
    special_ids: Vec<Rank>,
    specials: SpecialMatcher,
    pretok: Pretokenizer,
    /// Recent pre-tokens and their ids, shared by the threads that encode.
    cache: PieceCache,
}

/// `Error::NoMemory` if a piece merged on this thread since the last check went without
/// its ids for want of memory (`merge::take_no_memory`).
pub fn no_memory_for_pieces() -> Result<()> {
    match merge::take_no_memory() {
        0 => Ok(()),
        bytes => Err(Error::NoMemory {
            what: "merging a long pre-token",
            bytes,
        }),
    }
}

/// The pre-tokens of one `encode_ordinary` on their way through the piece cache. A type of
/// its own, whose `piece` the scanner's loop inlines (`pretokenize::Sink`): as a closure it
/// was a call per pre-token (its registers saved and restored each time); inlined, 3 MB
/// slices one thread, paired in one process: cl100k / o200k code 1.07-1.10x the speed,
/// English 1.07-1.08x.
struct Pieces<'e, 'c, 'a, 't, 'o> {
    enc: &'e Encoder,
    cache: &'c mut cache::Table<'a>,
    ahead: cache::Ahead<'t>,
    out: &'o mut Vec<Rank>,
    /// The end of the text: a piece's bytes readable from its start are `end - start`.
    end: usize,
}

impl<'t> crate::pretokenize::Sink<'t> for &mut Pieces<'_, '_, '_, 't, '_> {
    #[inline(always)]
    fn piece(&mut self, piece: &'t str) {
        let room = self.end - piece.as_ptr() as usize;
        let enc = self.enc;
        self.cache
            .push(&mut self.ahead, piece.as_bytes(), room, self.out, |p, o| {
                enc.encode_piece(p, o)
            })
    }
}

impl Encoder {
    /// Builds an encoder. Every single byte must be a token; ids must be unique.
    pub fn new(
        tokens: Vec<TokenSpec>,
        specials: Vec<(String, Rank)>,
        pattern: &str,
    ) -> Result<Self> {
        let pretok = Pretokenizer::new(pattern)?;
        let special_strings: Vec<String> = specials.iter().map(|(s, _)| s.clone()).collect();
        let matcher = SpecialMatcher::new(&special_strings)?;
        let max_id = tokens
            .iter()
            .map(|t| t.id)
            .chain(specials.iter().map(|s| s.1))
            .max()
            .unwrap_or(0);
        let mut decoder = Decoder::new(max_id, tokens.len() + specials.len());
        // borrowed keys: a vocabulary's worth of small allocations freed at once here left
        // the allocator slow for every call after (a quarter on batches of short texts)
        let mut token_ids: FxHashMap<&[u8], Rank> = FxHashMap::default();
        token_ids.reserve(tokens.len());
        for t in &tokens {
            if t.bytes.is_empty() {
                return Err(Error::Invalid(format!("token id {} has no bytes", t.id)));
            }
            decoder.insert(t.id, &t.bytes)?;
            let e = token_ids.entry(&t.bytes).or_insert(t.id);
            *e = (*e).min(t.id);
        }
        let mut special_ids = rustc_hash::FxHashSet::default();
        for (s, id) in &specials {
            // a special token may share its id with an ordinary token of the same bytes, or
            // with an earlier special token (an alias, as o200k_harmony's
            // <|reserved_200018|> of <|endofprompt|>: the first one's bytes decode it)
            if decoder.get(*id) != Some(s.as_bytes()) && !special_ids.contains(id) {
                decoder.insert(*id, s.as_bytes())?;
            }
            special_ids.insert(*id);
        }
        let mut byte_ids = [0 as Rank; 256];
        for b in 0..=255u8 {
            byte_ids[b as usize] = *token_ids.get(&[b][..]).ok_or_else(|| {
                Error::Invalid(format!(
                    "the vocabulary has no token for the single byte {b:#04x}"
                ))
            })?;
        }
        // Priority of each distinct token bytes: the lowest rank among tokens with them.
        let mut ranks: FxHashMap<&[u8], u32> = FxHashMap::default();
        for t in &tokens {
            if let Some(r) = t.rank {
                let e = ranks.entry(&t.bytes[..]).or_insert(r);
                *e = (*e).min(r);
            }
        }
        // (the by-value lookup: these few million lookups were most of the construction)
        let lookup = TokenIds::new(&token_ids);
        let ranked: Vec<(&[u8], u32)> = ranks.iter().map(|(&b, &r)| (b, r)).collect();
        let pairs = on_every_cpu(&ranked, |part| every_split(part, &token_ids, &lookup));
        let pair_table = reachable_pairs(pairs, |id| decoder.get(id), &byte_ids);
        let byte_pairs = byte_pair_table(|a, b| pair_table.get(a, b), &byte_ids);
        let atoms = atoms::Atoms::new(
            &ranks,
            |b| lookup.get(b),
            |b| merge_with_max(b, &byte_ids, |l, r| pair_table.get(l, r)),
        );
        // (the maps by bytes and the tokens are freed on return, not as soon as done with:
        // freed earlier, the tables built after them took their place in memory, and the
        // first encode after the construction was 15% slower on code; how, not found)
        let mut enc = Self {
            byte_ids,
            byte_pairs,
            unmade: FxHashMap::default(),
            pair_table,
            atoms,
            decoder,
            special_ids: specials.iter().map(|s| s.1).collect(),
            specials: matcher,
            pretok,
            cache: PieceCache::default(),
        };
        enc.unmade = enc.unmade_tokens(&token_ids);
        Ok(enc)
    }

    /// The tokens whose bytes merging alone does not encode as their id (lowest id on
    /// duplicates). tiktoken looks every pre-token up whole before merging it; but merging
    /// makes a token from its own bytes unless the vocabulary has a token no merge reaches,
    /// so only those are kept for a lookup. The lookup before every merge, in a map of the
    /// whole vocabulary (4-9 MB, so a line from memory for each pre-token the piece cache
    /// missed), cost 2.5-5% of the time on cold code and multilingual text, English within
    /// noise (3 MB slices, one thread, cl100k and o200k, paired in one process).
    fn unmade_tokens(&self, token_ids: &FxHashMap<&[u8], Rank>) -> FxHashMap<Box<[u8]>, Rank> {
        let tokens: Vec<(&[u8], Rank)> = token_ids.iter().map(|(&b, &id)| (b, id)).collect();
        let unmade = on_every_cpu(&tokens, |part| {
            let (mut ids, mut unmade) = (Vec::new(), Vec::new());
            for &(bytes, id) in part {
                ids.clear();
                self.merge(bytes, &mut ids);
                if ids[..] != [id] {
                    unmade.push((Box::from(bytes), id));
                }
            }
            unmade
        });
        unmade.into_iter().collect()
    }

    /// The special tokens, in registration order, with their ids.
    pub fn special_tokens(&self) -> impl Iterator<Item = (&str, Rank)> {
        self.specials
            .tokens()
            .iter()
            .map(|s| s.as_str())
            .zip(self.special_ids.iter().copied())
    }

    /// Encodes one pre-token's bytes, appending ids to `out`: a pre-token that is a token is
    /// its id (tiktoken's rule), else the ids of merging its bytes.
    pub fn encode_piece(&self, piece: &[u8], out: &mut Vec<Rank>) {
        if !self.unmade.is_empty() {
            if let Some(&id) = self.unmade.get(piece) {
                out.push(id);
                return;
            }
        }
        self.merge(piece, out)
    }

    /// Merges one pre-token's bytes, appending the ids to `out`.
    fn merge(&self, piece: &[u8], out: &mut Vec<Rank>) {
        merge::byte_pair_merge(
            piece,
            &self.byte_ids,
            Some(&self.byte_pairs),
            Some(&self.atoms),
            &self.pair_table,
            out,
        );
    }

    /// Encodes text, treating special-token text as ordinary text.
    pub fn encode_ordinary(&self, text: &str) -> Result<Vec<Rank>> {
        let mut out = Vec::with_capacity(text.len() / 4);
        self.encode_ordinary_into(text, &mut out)?;
        Ok(out)
    }

    fn encode_ordinary_into(&self, text: &str, out: &mut Vec<Rank>) -> Result<()> {
        let end = text.as_bytes().as_ptr_range().end as usize;
        self.cache.with(|cache| {
            let mut sink = Pieces {
                enc: self,
                cache,
                ahead: cache::Ahead::default(),
                out,
                end,
            };
            let r = self.pretok.scan(text, &mut sink);
            // (in place: taken apart by value, the ring was an 832-byte copy, and reading
            // it back waited on the copy, an eighth of the time of a short text)
            let Pieces {
                cache, ahead, out, ..
            } = &mut sink;
            cache.finish(ahead, out, |p, o| self.encode_piece(p, o));
            no_memory_for_pieces()?;
            r
        })
    }

    /// Encodes text where the special tokens found by `allowed` become their ids.
    /// `allowed` must be built from (a subset of) this encoder's special tokens, in the
    /// same order; `None` means all of them.
    pub fn encode_with_special(
        &self,
        text: &str,
        allowed: Option<&AllowedSpecial>,
    ) -> Result<Vec<Rank>> {
        let mut out = Vec::with_capacity(text.len() / 4);
        self.encode_into(text, Some(allowed), &mut out)?;
        Ok(out)
    }

    /// `encode_ordinary` (`specials` None) or `encode_with_special` (`Some(allowed)`): the
    /// `specials` argument of [`Self::split_into_parts`], whose parts this encodes.
    pub fn encode(
        &self,
        text: &str,
        specials: Option<Option<&AllowedSpecial>>,
    ) -> Result<Vec<Rank>> {
        match specials {
            None => self.encode_ordinary(text),
            Some(allowed) => self.encode_with_special(text, allowed),
        }
    }

    /// [`Self::encode`], appending the ids to `out`.
    pub fn encode_into(
        &self,
        text: &str,
        specials: Option<Option<&AllowedSpecial>>,
        out: &mut Vec<Rank>,
    ) -> Result<()> {
        let Some(allowed) = specials else {
            return self.encode_ordinary_into(text, out);
        };
        let (matcher, ids) = match allowed {
            None => (&self.specials, &self.special_ids),
            Some(a) => (&a.matcher, &a.ids),
        };
        for span in matcher.split(text) {
            match span {
                Span::Text(t) => self.encode_ordinary_into(t, out)?,
                Span::Special(i) => out.push(ids[i]),
            }
        }
        Ok(())
    }

    /// A cut of `text`, a buffer of a stream, before which its ids are final whatever text
    /// follows: the last safe cut of `pretokenize/cuts.rs` (after a newline, or before a
    /// special token that is split out), so that the part before it is encoded as a text of
    /// its own, the fast way (`encode_stream_prefix` pre-tokenizes the buffer to its end and
    /// encodes the pre-tokens before its cut one by one). `text` must begin where the
    /// stream's last cut was made. The cut comes before any beginning of a special token at
    /// the end (allowed or not, so that a disallowed one is searched for whole in the next
    /// buffer). None if the buffer has no such cut (a custom pattern, a line longer than
    /// the buffer), or if a special token holds a `\n` or `\r`: a cut after a newline could
    /// then fall inside one that is text here, and no buffer would hold it whole.
    /// `specials`: as for `encode_stream_prefix`.
    pub fn stream_safe_cut(
        &self,
        text: &str,
        specials: Option<Option<&AllowedSpecial>>,
    ) -> Option<usize> {
        if self
            .specials
            .tokens()
            .iter()
            .any(|t| t.contains(['\n', '\r']))
        {
            return None;
        }
        let hold = self
            .specials
            .partial_at_end(text, |_| true)
            .unwrap_or(text.len());
        let matcher = specials.map(|s| s.map_or(&self.specials, |a| &a.matcher));
        let cuts = Cuts::new(&self.pretok, matcher);
        find_cut(&text.as_bytes()[..hold], 0, &cuts).filter(|&c| c > 0)
    }

    /// Encodes the longest prefix of `text` that is final while more text may follow (a
    /// stream): returns its ids and its length in bytes. The rest, to be prepended to the
    /// next chunk, always ends in at least the last pre-token, and in any beginning of a
    /// special token (allowed or not, so a disallowed one is always seen whole). With a
    /// custom pattern only text before a special token is final.
    /// `specials`: `None` encodes special-token text as ordinary text.
    pub fn encode_stream_prefix(
        &self,
        text: &str,
        specials: Option<Option<&AllowedSpecial>>,
    ) -> Result<(Vec<Rank>, usize)> {
        let (matcher, ids) = match specials {
            None => (None, &self.special_ids),
            Some(None) => (Some(&self.specials), &self.special_ids),
            Some(Some(a)) => (Some(&a.matcher), &a.ids),
        };
        // Special tokens found in the whole buffer; one that ends inside it is final unless
        // the buffer's end could still extend it, which `partial_at_end` catches.
        let matches = matcher.map(|m| m.find_all(text)).unwrap_or_default();
        let inside_match = |p: usize| matches.iter().any(|&(s, e)| s < p && p < e);
        let hold = self
            .specials
            .partial_at_end(text, |p| !inside_match(p))
            .unwrap_or(text.len());
        let head = &text[..hold];
        // The last ordinary span of `head` may go on in the next chunk: cut inside it.
        let last_special_end = matches
            .iter()
            .rev()
            .map(|&(_, e)| e)
            .find(|&e| e <= hold)
            .unwrap_or(0);
        let tail = &head[last_special_end..];
        let tail_cut = self.pretok.stream_cut(tail).unwrap_or(0);
        let mut out = Vec::new();
        if let Some(m) = matcher {
            for span in m.split(&text[..last_special_end]) {
                match span {
                    Span::Text(t) => self.encode_ordinary_into(t, &mut out)?,
                    Span::Special(i) => out.push(ids[i]),
                }
            }
        }
        if tail_cut > 0 {
            // the pre-tokens as split in the whole buffer: the prefix alone would end
            // differently (a whitespace run at its end, say)
            let base = tail.as_ptr() as usize;
            self.cache.with(|cache| {
                self.pretok.for_each(tail, |piece| {
                    if piece.as_ptr() as usize - base < tail_cut {
                        let room = piece.len(); // (no need to read past it here)
                        cache.encode(piece.as_bytes(), room, &mut out, |p, o| {
                            self.encode_piece(p, o)
                        });
                    }
                })
            })?;
            no_memory_for_pieces()?;
        }
        Ok((out, last_special_end + tail_cut))
    }

    /// `text` cut into parts of about `target` bytes or more whose encodings, concatenated,
    /// are the encoding of `text` (the cut rule is in `pretokenize/cuts.rs`), so that one
    /// long text can be encoded on several threads. `specials` is the special tokens that
    /// the encoding splits out: `None` for ordinary text, `Some(None)` for all of them.
    pub fn split_into_parts<'t>(
        &self,
        text: &'t str,
        specials: Option<Option<&AllowedSpecial>>,
        target: usize,
    ) -> Vec<&'t str> {
        let matcher = specials.map(|s| s.map_or(&self.specials, |a| &a.matcher));
        let mut parts = Vec::new();
        split_text(text, &Cuts::new(&self.pretok, matcher), target, &mut parts);
        parts
    }

    /// A matcher for a subset of the special tokens, for [`Self::encode_with_special`].
    pub fn allowed_special(&self, tokens: &[String]) -> Result<AllowedSpecial> {
        let lookup: FxHashMap<&str, Rank> = self.special_tokens().collect();
        let ids = tokens
            .iter()
            .map(|t| {
                lookup.get(t.as_str()).copied().ok_or_else(|| {
                    Error::Invalid(format!("{t:?} is not a special token of this tokenizer"))
                })
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(AllowedSpecial {
            matcher: SpecialMatcher::new(tokens)?,
            ids,
        })
    }

    /// The last pre-token of `text` (its special tokens not split out), if any.
    pub fn last_pretoken<'t>(&self, text: &'t str) -> Result<Option<&'t str>> {
        let mut last = None;
        self.pretok.for_each(text, |piece| last = Some(piece))?;
        Ok(last)
    }

    /// The first special token (of all registered) in `text`, if any.
    pub fn find_special(&self, text: &str) -> Option<&str> {
        self.specials
            .find(text)
            .map(|(_, _, i)| self.specials.tokens()[i].as_str())
    }

    /// The merges of a vocabulary known only by ranks (a tiktoken rank file has no merge
    /// list): encoding a token's bytes with only lower ranks allowed leaves exactly two
    /// parts, the merge that makes it. Returns (rank, left id, right id) by rank; a token
    /// that does not end in two parts (not a BPE vocabulary) is left out. (The pair table
    /// holds only the pairs merging joins; BPE with the ranks cut off chooses among those
    /// too, so the parts are those BPE over every split would give.)
    pub fn recover_merges(&self) -> Vec<(u32, Rank, Rank)> {
        let made = self.merge_ranks();
        let mut out = Vec::with_capacity(made.len());
        for (&id, &rank) in &made {
            let Some(bytes) = self.decoder.get(id) else {
                continue;
            };
            if let Some((left, right)) = self.split(bytes, rank) {
                out.push((rank, left, right));
            }
        }
        out.sort_unstable();
        out
    }

    /// The rank of every token that a pair of tokens makes, by id (every pair that makes a
    /// token carries that token's rank).
    fn merge_ranks(&self) -> FxHashMap<Rank, u32> {
        self.pair_table
            .entries()
            .map(|(_, (rank, id))| (id, rank))
            .collect()
    }

    /// The two tokens that BPE of `bytes` with only ranks below `rank` ends in, if two.
    fn split(&self, bytes: &[u8], rank: u32) -> Option<(Rank, Rank)> {
        let mut parts = Vec::new();
        merge::byte_pair_merge(
            bytes,
            &self.byte_ids,
            None,
            None, // (merges below a rank: a character may not form whole)
            |a, b| self.pair_table.get(a, b).filter(|&(r, _)| r < rank),
            &mut parts,
        );
        match parts[..] {
            [left, right] => Some((left, right)),
            _ => None,
        }
    }

    /// The bytes of one token.
    pub fn token_bytes(&self, id: Rank) -> Result<&[u8]> {
        self.decoder.get(id).ok_or(Error::UnknownToken(id as u64))
    }

    /// Every (id, bytes) of the vocabulary, special tokens included, by id.
    pub fn tokens(&self) -> Vec<(Rank, &[u8])> {
        self.decoder.items()
    }

    /// Concatenated bytes of `ids`.
    pub fn decode_bytes(&self, ids: &[Rank]) -> Result<Vec<u8>> {
        let mut out = crate::room::zeroed_bytes(self.decoded_len(ids)?, "the decoded bytes")?;
        self.decode_to(ids, &mut out);
        Ok(out)
    }

    /// The number of bytes `ids` decode to; the first id that is no token is the error.
    pub fn decoded_len(&self, ids: &[Rank]) -> Result<usize> {
        self.decoder.len_of(ids)
    }

    /// Writes the bytes of `ids` into `out` (at least `decoded_len(ids)` long) from its
    /// start; returns how many.
    pub fn decode_to(&self, ids: &[Rank], out: &mut [u8]) -> usize {
        self.decoder.write(ids, out)
    }

    /// One more than the largest id.
    pub fn n_vocab(&self) -> usize {
        self.decoder.max_id() as usize + 1
    }
}

/// A compiled subset of special tokens that an `encode` call allows.
#[derive(Debug, Clone)]
pub struct AllowedSpecial {
    matcher: SpecialMatcher,
    ids: Vec<Rank>,
}

impl AllowedSpecial {
    /// Whether any allowed special token occurs in `text`.
    pub fn find(&self, text: &str) -> Option<&str> {
        self.matcher
            .find(text)
            .map(|(_, _, i)| self.matcher.tokens()[i].as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes_only_plus(extra: &[(&[u8], Option<u32>)]) -> Vec<TokenSpec> {
        let mut v: Vec<TokenSpec> = (0..=255u8)
            .map(|b| TokenSpec {
                bytes: vec![b],
                id: b as Rank,
                rank: None,
            })
            .collect();
        for (i, (b, r)) in extra.iter().enumerate() {
            v.push(TokenSpec {
                bytes: b.to_vec(),
                id: 256 + i as Rank,
                rank: *r,
            });
        }
        v
    }

    /// The single bytes plus `tokens` ranked in their order, one pre-token per text.
    fn ranked_in_order(tokens: &[Vec<u8>]) -> Encoder {
        let specs: Vec<(&[u8], Option<u32>)> = tokens
            .iter()
            .enumerate()
            .map(|(r, t)| (&t[..], Some(r as u32)))
            .collect();
        Encoder::new(bytes_only_plus(&specs), vec![], r"[\s\S]+").unwrap()
    }

    /// BPE of byte strings, tiktoken's rule written plainly: a piece that is a token is its
    /// id; else merge the adjacent parts whose concatenation has the lowest rank, leftmost.
    fn plain_bpe(piece: &[u8], tokens: &[Vec<u8>]) -> Vec<Rank> {
        let id = |t: &[u8]| match t {
            [b] => Some(*b as Rank),
            _ => tokens.iter().position(|x| x == t).map(|i| 256 + i as Rank),
        };
        if let Some(i) = id(piece) {
            return vec![i];
        }
        let mut parts: Vec<Vec<u8>> = piece.iter().map(|&b| vec![b]).collect();
        loop {
            let best = (1..parts.len())
                .filter_map(|i| {
                    let joined = [&parts[i - 1][..], &parts[i][..]].concat();
                    tokens.iter().position(|x| *x == joined).map(|r| (r, i - 1))
                })
                .min();
            let Some((_, i)) = best else { break };
            let right = parts.remove(i + 1);
            parts[i].extend(right);
        }
        parts.iter().map(|p| id(p).unwrap()).collect()
    }

    /// Keeping only the pair of each token that merging joins (`reachable_pairs`), and only
    /// the tokens merging does not make for a whole-piece lookup (`unmade_tokens`), changes
    /// no ids: random vocabularies over a few bytes with random ranks (most tokens of several
    /// splits, some never made by merging), random pieces and every token as a piece,
    /// against BPE of byte strings with every token.
    #[test]
    fn one_pair_per_token_changes_no_ids() {
        let mut rng = crate::test_rng(7);
        let letters = b"ab\xc3\xa9";
        let (mut dropped, mut pieces, mut unmade) = (0, 0, 0);
        for vocab in 0..60 {
            // every two-letter string, then random strings of 3-7 letters, ranks shuffled
            let mut tokens: Vec<Vec<u8>> = Vec::new();
            for &a in letters {
                for &b in letters {
                    tokens.push(vec![a, b]);
                }
            }
            while tokens.len() < 80 {
                let t: Vec<u8> = (0..3 + rng(5)).map(|_| letters[rng(4)]).collect();
                if !tokens.contains(&t) {
                    tokens.push(t);
                }
            }
            for k in (1..tokens.len()).rev() {
                tokens.swap(k, rng(k + 1));
            }
            let enc = ranked_in_order(&tokens);
            let splits: usize = tokens
                .iter()
                .map(|t| {
                    let is = |h: &[u8]| h.len() == 1 || tokens.iter().any(|x| x == h);
                    (1..t.len()).filter(|&k| is(&t[..k]) && is(&t[k..])).count()
                })
                .sum();
            dropped += splits - enc.pair_table.entries().count();
            unmade += enc.unmade.len();
            let random = (0..300).map(|_| (0..1 + rng(14)).map(|_| letters[rng(4)]).collect());
            for piece in random
                .chain(tokens.iter().cloned())
                .collect::<Vec<Vec<u8>>>()
            {
                let mut got = Vec::new();
                enc.encode_piece(&piece, &mut got);
                assert_eq!(
                    got,
                    plain_bpe(&piece, &tokens),
                    "vocabulary {vocab}: {piece:?}"
                );
                pieces += 1;
            }
        }
        assert!(dropped > 500, "only {dropped} splits left out");
        assert!(unmade > 500, "only {unmade} tokens merging does not make");
        assert_eq!(pieces, 60 * (300 + 80));
    }

    /// Merging from atoms (whole characters, `atoms.rs`) gives the ids of merging from bytes,
    /// for random vocabularies over a few characters of 1-4 bytes whose tokens are random
    /// byte strings of them (cutting through characters too) with random ranks, the
    /// characters themselves ranked low in half of them so that many are atoms, many of them
    /// atoms only between some neighbours (guarded), and many of two ids (a character that
    /// merges alone into two tokens).
    #[test]
    fn atoms_change_no_ids() {
        let chars: [&[u8]; 6] = [
            b"a",
            "\u{e9}".as_bytes(),
            "\u{4e2d}".as_bytes(),
            "\u{6587}".as_bytes(),
            "\u{436}".as_bytes(),
            "\u{1f600}".as_bytes(),
        ];
        let mut rng = crate::test_rng(99);
        let (mut atoms_seen, mut guarded_seen, mut pairs_seen) = (0, 0, 0);
        for vocab in 0..300 {
            let text = |rng: &mut dyn FnMut(usize) -> usize, n: usize| -> Vec<u8> {
                (0..n)
                    .flat_map(|_| chars[rng(chars.len())].to_vec())
                    .collect()
            };
            let mut tokens: Vec<Vec<u8>> = Vec::new();
            if vocab % 2 == 0 {
                for c in chars.iter().filter(|c| c.len() > 1) {
                    tokens.push(c[..2].to_vec());
                    tokens.push(c.to_vec());
                }
            }
            for _ in 0..40 {
                let t = text(&mut rng, 6);
                let start = rng(t.len() - 1);
                let len = 2 + rng(6.min(t.len() - start - 1));
                tokens.push(t[start..start + len].to_vec());
            }
            let mut seen = std::collections::HashSet::new();
            tokens.retain(|t| t.len() > 1 && seen.insert(t.clone()));
            // the characters keep their low ranks in even vocabularies; the rest shuffled
            let fixed = if vocab % 2 == 0 {
                8.min(tokens.len())
            } else {
                0
            };
            for k in (fixed + 1..tokens.len()).rev() {
                let j = fixed + rng(k - fixed + 1);
                tokens.swap(k, j);
            }
            let enc = ranked_in_order(&tokens);
            atoms_seen += enc.atoms.count();
            guarded_seen += enc.atoms.guarded();
            pairs_seen += enc.atoms.pairs();
            let lookup = |a, b| enc.pair_table.get(a, b);
            for _ in 0..100 {
                // (a quarter long enough for the bucket queue, over 128 bytes)
                let n = if rng(4) == 0 {
                    60 + rng(60)
                } else {
                    1 + rng(30)
                };
                let piece = text(&mut rng, n);
                let (mut from_atoms, mut from_bytes) = (Vec::new(), Vec::new());
                let pairs = Some(&enc.byte_pairs[..]);
                merge::byte_pair_merge(
                    &piece,
                    &enc.byte_ids,
                    pairs,
                    Some(&enc.atoms),
                    lookup,
                    &mut from_atoms,
                );
                merge::byte_pair_merge(&piece, &enc.byte_ids, pairs, None, lookup, &mut from_bytes);
                assert_eq!(
                    from_atoms,
                    from_bytes,
                    "vocabulary {vocab}: {:?}",
                    String::from_utf8_lossy(&piece)
                );
            }
        }
        assert!(atoms_seen > 300, "{atoms_seen} atoms");
        assert!(guarded_seen > 100, "{guarded_seen} atoms with guards");
        assert!(pairs_seen > 100, "{pairs_seen} atoms of two ids");
    }

    #[test]
    fn wikipedia_example() {
        // Merges aa (rank 0), then ab (rank 1), one pre-token for the whole text.
        let enc = Encoder::new(
            bytes_only_plus(&[(b"aa", Some(0)), (b"ab", Some(1))]),
            vec![],
            r"[\s\S]+",
        )
        .unwrap();
        // "aaab": aa at 0 first (rank 0) -> [aa, a, b]; then (a,b) -> [aa, ab]
        assert_eq!(enc.encode_ordinary("aaab").unwrap(), [256, 257]);
        assert_eq!(enc.decode_bytes(&[256, 257]).unwrap(), b"aaab");
        assert!(matches!(
            enc.token_bytes(999),
            Err(Error::UnknownToken(999))
        ));
    }

    #[test]
    fn wikipedia_aaabdaaabac() {
        // Wikipedia's example: Z=aa, Y=ab, X=ZY -> "aaabdaaabac" = X d X a c.
        let enc = Encoder::new(
            bytes_only_plus(&[(b"aa", Some(0)), (b"ab", Some(1)), (b"aaab", Some(2))]),
            vec![],
            r"[\s\S]+",
        )
        .unwrap();
        assert_eq!(
            enc.encode_ordinary("aaabdaaabac").unwrap(),
            [258, 100, 258, 97, 99]
        );
    }

    #[test]
    fn whole_piece_lookup_wins() {
        // "abc" is a token without a merge that makes it: only a whole pre-token yields it.
        let enc = Encoder::new(
            bytes_only_plus(&[(b"ab", Some(0)), (b"abc", None)]),
            vec![],
            "gpt2",
        )
        .unwrap();
        assert_eq!(enc.encode_ordinary("abc").unwrap(), [257]);
        assert_eq!(enc.encode_ordinary("abcd").unwrap(), [256, 99, 100]);
        assert_eq!(enc.unmade.len(), 1);
    }

    #[test]
    fn duplicated_bytes_are_the_lowest_id() {
        // "ab" twice: id 256 made by no merge, id 257 by a + b. Merging makes the lowest id
        // of the bytes (the pair table's), so a whole pre-token needs no lookup.
        let enc = Encoder::new(
            bytes_only_plus(&[(b"ab", None), (b"ab", Some(0))]),
            vec![],
            "gpt2",
        )
        .unwrap();
        assert_eq!(enc.encode_ordinary("ab").unwrap(), [256]);
        assert_eq!(enc.encode_ordinary("abab").unwrap(), [256, 256]);
        assert!(enc.unmade.is_empty());
    }

    #[test]
    fn specials_allowed_and_ordinary() {
        let enc = Encoder::new(
            bytes_only_plus(&[]),
            vec![("<s>".into(), 300), ("<s><s>".into(), 301)],
            "gpt2",
        )
        .unwrap();
        assert_eq!(enc.encode_with_special("a<s><s>", None).unwrap(), [97, 301]);
        let only = enc.allowed_special(&["<s>".into()]).unwrap();
        assert_eq!(
            enc.encode_with_special("<s><s>", Some(&only)).unwrap(),
            [300, 300]
        );
        assert_eq!(enc.find_special("x<s>"), Some("<s>"));
        assert_eq!(enc.encode_ordinary("<s>").unwrap(), [60, 115, 62]);
    }
}
