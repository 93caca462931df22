//! Unicode character classes for the hand-written scanners, taken from `regex-syntax` —
//! the same tables fancy-regex matches `\p{L}`, `\s`, ... with — so the scanners classify
//! every character exactly as the regex does.

use std::sync::OnceLock;

use regex_syntax::hir::{Class, HirKind};

/// `\p{L}`
pub const LETTER: u16 = 1 << 0;
/// `\p{N}`
pub const NUMBER: u16 = 1 << 1;
/// `\s` (Unicode White_Space)
pub const SPACE: u16 = 1 << 2;
/// o200k's "upper" set: `[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]`
pub const UPPER: u16 = 1 << 3;
/// o200k's "lower" set: `[\p{Ll}\p{Lm}\p{Lo}\p{M}]`
pub const LOWER: u16 = 1 << 4;

const CLASSES: [(&str, u16); 5] = [
    (r"\p{L}", LETTER),
    (r"\p{N}", NUMBER),
    (r"\s", SPACE),
    (r"[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]", UPPER),
    (r"[\p{Ll}\p{Lm}\p{Lo}\p{M}]", LOWER),
];

/// Flags of every code point (0x110000 entries, built once).
fn table() -> &'static [u16] {
    static TABLE: OnceLock<Vec<u16>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut t = vec![0u16; 0x110000];
        for (pattern, flag) in CLASSES {
            let hir = regex_syntax::Parser::new()
                .parse(pattern)
                .expect("the class patterns are valid");
            let HirKind::Class(Class::Unicode(class)) = hir.kind() else {
                unreachable!("{pattern} parses to a Unicode class")
            };
            for r in class.ranges() {
                for f in &mut t[r.start() as usize..=r.end() as usize] {
                    *f |= flag;
                }
            }
        }
        t
    })
}

/// A table handle, so hot loops index it without the `OnceLock` check.
#[derive(Clone, Copy)]
pub struct Classes(&'static [u16]);

impl Classes {
    pub fn get() -> Self {
        Classes(table())
    }

    #[inline(always)]
    pub fn of(self, c: char) -> u16 {
        // a char is always < 0x110000, the table length, so this never panics
        self.0[c as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flags(c: char) -> u16 {
        Classes::get().of(c)
    }

    #[test]
    fn a_few_known_classes() {
        assert_eq!(flags('a') & (LETTER | LOWER), LETTER | LOWER);
        assert_eq!(flags('A') & (LETTER | UPPER | LOWER), LETTER | UPPER);
        assert_eq!(flags('7'), NUMBER);
        assert_eq!(flags('\u{3000}'), SPACE);
        assert_eq!(flags('\u{1c}'), 0); // not White_Space, unlike Python's str.isspace
        assert_eq!(flags('中') & (UPPER | LOWER), UPPER | LOWER); // Lo is in both sets
        assert_eq!(flags('\u{301}') & (LETTER | UPPER | LOWER), UPPER | LOWER); // a mark
    }
}
