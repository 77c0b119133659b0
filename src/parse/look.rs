//! One cheap look at a cleaned line, taken once and shared by every format: its first and last
//! bytes, where its indentation ends, and the needles the buffer's scan found in it. Each format
//! tells from it alone, with its own state, whether the line can concern it
//! (`Python::wants`, `Rust::wants`, ...); the parser hands the line only to those that say so,
//! instead of every format running its own checks on every line.

use super::has;
use super::needles::{Marks, Needle};

pub(crate) struct Look<'a> {
    pub line: &'a str,
    /// The first byte, `None` for an empty line.
    pub first: Option<u8>,
    /// The last byte (0 for an empty line).
    pub last: u8,
    /// How many bytes of ASCII whitespace the line starts with.
    indent: usize,
    /// Where the first `:` is: locations, test ids and most diagnostics have one.
    pub colon: Option<usize>,
    marks: Marks,
}

pub(crate) use super::ascii::is_ascii_space;

impl<'a> Look<'a> {
    #[inline]
    pub fn new(line: &'a str, marks: Marks) -> Self {
        let bytes = line.as_bytes();
        let indent = super::ascii::space_end(bytes);
        Look {
            line,
            first: bytes.first().copied(),
            last: bytes.last().copied().unwrap_or(0),
            indent,
            colon: memchr::memchr(b':', bytes),
            marks,
        }
    }

    /// Whether the line holds `::` (a pytest node id, a Rust path).
    #[inline]
    pub fn holds_double_colon(&self) -> bool {
        // The first colon mostly begins the pair (`tests/a.py::test_x`): then no search.
        self.colon
            .is_some_and(|c| self.line.as_bytes().get(c + 1) == Some(&b':') || has(&self.line[c + 1..], "::"))
    }

    /// Whether the line may hold `needle`: when not, it does not.
    pub fn may_hold(&self, needle: Needle) -> bool {
        self.marks.may_hold(needle)
    }

    /// `line.trim_start()`, found without decoding characters unless the text after the ASCII
    /// indentation starts with one that is not ASCII (which may be whitespace too). Several
    /// formats' `wants` ask for it on every indented line: always inline.
    #[inline(always)]
    pub fn trimmed(&self) -> &'a str {
        let rest = &self.line[self.indent..];
        if rest.as_bytes().first().is_some_and(|&b| b >= 0x80) {
            rest.trim_start()
        } else {
            rest
        }
    }

    /// The first byte after the line's ASCII indentation (`None` when there is none): a cheap
    /// first look before [`Look::trimmed`].
    #[inline]
    pub fn first_after_indent(&self) -> Option<u8> {
        self.line.as_bytes().get(self.indent).copied()
    }

    /// Whether the line starts with a space or a tab: what most formats call indented.
    pub fn indented(&self) -> bool {
        matches!(self.first, Some(b' ' | b'\t'))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn the_trimmed_line_is_what_trim_start_gives(s in "[ \t\u{b}\u{a0}\u{3000}\u{85}a●é]{0,6}") {
            prop_assert_eq!(Look::new(&s, Marks::ALL).trimmed(), s.trim_start());
        }
    }
}
