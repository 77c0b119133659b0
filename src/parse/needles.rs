//! Needles: short strings whose presence decides whether a format needs to look at a line at all
//! (`.go:`, ` TS`, `Error`, the infrastructure words, ...). All of them are found by one scan of
//! each buffer of lines with one automaton, which costs far less than a search of each line for
//! each needle; a line then only carries the set of needles it may hold ([`Marks`]).
//!
//! Only needles that most lines lack belong here: a needle on nearly every line (`::` in a pytest
//! `-v` log) would make the scan stop on every line, and is cheaper looked for on the lines that
//! need it.

use std::sync::LazyLock;

use aho_corasick::{AhoCorasick, Input, MatchKind};

use super::outcome::INFRA_WORDS_LIST;

/// What a line may hold, a bit each.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Needle {
    /// `.go:` (Go locations).
    GoFile,
    /// `.py(` (pylint `msvs`).
    PyParen,
    /// `error TS`, `warning TS` (tsc's diagnostics).
    TsCode,
    /// `Error`.
    Error,
    /// `Exception`.
    Exception,
    /// `, line ` (a Python syntax error's place on one line: `(calc.py, line 3)`).
    LineComma,
    /// Any of the infrastructure words ([`INFRA_WORDS_LIST`]).
    InfraWord,
    /// `Fatal Python error: ` (faulthandler's dump of a crash, after a test's progress dots).
    FatalPython,
    /// `|` (a flake8 `--format` of the user's own, `path|row|col|code|text`). One byte, which
    /// would stop the automaton's prefilter wherever it stands: found by a search of its own.
    Pipe,
}

/// The needles that are not infrastructure words, with their text. None is shorter than four
/// bytes, nor starts with a space: the scan's prefilter looks at a needle's first bytes, and short
/// or common ones would stop it on most lines.
const NAMED: [(Needle, &str); 8] = [
    (Needle::GoFile, ".go:"),
    (Needle::PyParen, ".py("),
    (Needle::TsCode, "error TS"),
    (Needle::TsCode, "warning TS"),
    (Needle::Error, "Error"),
    (Needle::Exception, "Exception"),
    (Needle::LineComma, ", line "),
    (Needle::FatalPython, FATAL_PYTHON_ERROR),
];

/// How CPython's faulthandler heads its dump of a crash (`Fatal Python error: Segmentation fault`).
pub(crate) const FATAL_PYTHON_ERROR: &str = "Fatal Python error: ";

/// Which needles a line may hold, a bit each: a clear bit means it holds none.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Marks(u16);

impl Marks {
    /// Nothing known of the text: every needle may be there.
    pub(crate) const ALL: Marks = Marks(u16::MAX);

    pub(crate) fn may_hold(self, needle: Needle) -> bool {
        self.0 & bit(needle) != 0
    }
}

const fn bit(needle: Needle) -> u16 {
    1 << needle as u16
}

/// Every needle's text (the named ones, then the infrastructure words) and its bit.
fn patterns() -> impl Iterator<Item = (&'static str, u16)> {
    NAMED
        .iter()
        .map(|&(needle, text)| (text, bit(needle)))
        .chain(INFRA_WORDS_LIST.iter().map(|&w| (w, bit(Needle::InfraWord))))
}

/// Leftmost-first rather than the standard semantics: only then does the automaton get its
/// vectorised prefilter, which makes a scan of a whole buffer of lines cheap.
static AUTOMATON: LazyLock<(AhoCorasick, Vec<u16>)> = LazyLock::new(|| {
    let (texts, bits): (Vec<&str>, Vec<u16>) = patterns().unzip();
    let automaton = AhoCorasick::builder()
        .match_kind(MatchKind::LeftmostFirst)
        .build(texts)
        .expect("aho-corasick automaton");
    (automaton, bits)
});

/// The places of the needles in a run of lines, found by one scan of the run and read in order,
/// line by line.
pub(crate) struct Scan<'t> {
    text: &'t str,
    /// The next needle at or after the last line asked for: (start, bit).
    next: Option<(usize, u16)>,
    /// The next `|` at or after the last line asked for ([`Needle::Pipe`]).
    next_pipe: Option<usize>,
}

impl<'t> Scan<'t> {
    pub(crate) fn new(text: &'t str) -> Self {
        let mut scan = Scan {
            text,
            next: None,
            next_pipe: memchr::memchr(b'|', text.as_bytes()),
        };
        scan.next = scan.find(0);
        scan
    }

    /// The first needle that starts at or after `from`. A search resumes one byte after the last
    /// needle's start rather than after its end, so that a needle inside or overlapping another
    /// (`Error` in `MemoryError`) is found too; needles that start at the same place would hide
    /// one another, and none does (see the test below).
    fn find(&self, from: usize) -> Option<(usize, u16)> {
        let (automaton, bits) = &*AUTOMATON;
        if from >= self.text.len() {
            return None;
        }
        let m = automaton.find(Input::new(self.text).span(from..self.text.len()))?;
        Some((m.start(), bits[m.pattern().as_usize()]))
    }

    /// The needles in `text[start..end]`, for lines asked in order. No needle holds a `\n`, so
    /// each lies within a line.
    pub(crate) fn marks(&mut self, start: usize, end: usize) -> Marks {
        let mut bits = 0u16;
        while let Some((at, bit)) = self.next
            && at < end
        {
            if at >= start {
                bits |= bit;
            }
            self.next = self.find(at + 1);
        }
        if let Some(at) = self.next_pipe.filter(|&at| at < end) {
            if at >= start {
                bits |= bit(Needle::Pipe);
            }
            self.next_pipe = memchr::memchr(b'|', &self.text.as_bytes()[end..]).map(|k| end + k);
        }
        Marks(bits)
    }
}

/// Pairs of bytes that stand side by side in some needle, a bit each (`a * 256 + b`). Cleaning
/// that takes an escape sequence out from between two bytes can only make a new needle when the
/// two are such a pair; otherwise the cleaned line holds no needle the raw line does not, and the
/// raw line's marks serve without a search of the cleaned one.
static ADJACENT: LazyLock<Vec<u64>> = LazyLock::new(|| {
    let mut bits = vec![0u64; 256 * 256 / 64];
    for (text, _) in patterns() {
        for pair in text.as_bytes().windows(2) {
            let at = usize::from(pair[0]) * 256 + usize::from(pair[1]);
            bits[at / 64] |= 1 << (at % 64);
        }
    }
    bits
});

/// Whether `a` followed by `b` stands in some needle.
pub(crate) fn adjacent_in_a_needle(a: u8, b: u8) -> bool {
    let at = usize::from(a) * 256 + usize::from(b);
    ADJACENT[at / 64] & (1 << (at % 64)) != 0
}

/// The needles in one piece of text.
pub(crate) fn marks_of(text: &str) -> Marks {
    Scan::new(text).marks(0, text.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn no_needle_starts_another_of_a_different_kind() {
        // Two needles that can start at the same place are one a prefix of the other: the scan
        // would report only one of them there.
        for (a, a_bit) in patterns() {
            for (b, b_bit) in patterns() {
                assert!(
                    a == b || a_bit == b_bit || !b.starts_with(a),
                    "{a:?} starts {b:?}: the scan could miss one"
                );
            }
        }
    }

    fn marks_by_search(line: &str) -> u16 {
        patterns()
            .filter(|(t, _)| line.contains(t))
            .fold(0, |acc, (_, b)| acc | b)
    }

    proptest! {
        /// A line cleaned of escapes without joining a needle's pair of bytes holds no needle the
        /// raw line does not: the raw line's marks are a bound on the cleaned line's.
        #[test]
        fn cleaning_that_joins_no_needle_pair_makes_no_needle(
            pieces in prop::collection::vec(
                prop_oneof![
                    Just("Err"), Just("or"), Just("E"), Just("rror"), Just(".g"), Just("o:"), Just(".go:"),
                    Just("Killed"), Just("Kil"), Just("led"), Just("not"), Just(" found"), Just(", line "),
                    Just("\u{1b}[32m"), Just("\u{1b}[0m"), Just("\u{1b}(B"), Just("\u{1b}="), Just("\u{1b}]8;;http://x.go:\u{7}"), Just("\u{1b}"),
                    Just("\r"), Just("."), Just(" "), Just("x"), Just("é"), Just("2026-11-22T04:01:02Z "),
                ],
                0..12,
            ).prop_map(|p| p.concat()),
        ) {
            let (cleaned, joined) = super::super::clean::clean_line_noting_escapes(&pieces, true);
            if !joined {
                let (raw, clean) = (marks_of(&pieces).0, marks_of(&cleaned).0);
                prop_assert_eq!(clean & !raw, 0, "{:?} -> {:?}", pieces, cleaned);
            }
        }

        /// The scan of a run of lines marks in each line exactly the needles a search of that
        /// line finds.
        #[test]
        fn each_line_is_marked_with_the_needles_it_holds(
            lines in prop::collection::vec(
                prop::collection::vec(
                    prop_oneof![
                        Just("MemoryError"), Just("Error"), Just("Exception"), Just(".go:"),
                        Just(".py("), Just(", line "), Just("not found"), Just("error TS"), Just("warning"), Just("TS"), Just("memory allocation of "),
                        Just("Killed"), Just("Could not connect to "), Just("x"), Just(" "), Just("E"),
                        Just("."), Just("go"), Just(":"),
                    ],
                    0..8,
                ).prop_map(|pieces| pieces.concat()),
                0..6,
            ),
        ) {
            let text = lines.join("\n");
            let mut scan = Scan::new(&text);
            let mut start = 0;
            for line in &lines {
                let end = start + line.len();
                prop_assert_eq!(scan.marks(start, end).0, marks_by_search(line), "{:?}", line);
                start = end + 1;
            }
        }
    }
}
