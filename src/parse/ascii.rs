//! Byte scans under every format's reading of a line: where a word ends, where a run of ASCII
//! whitespace ends. Each looks at eight bytes at a time (one `u64`), because the runs are long
//! on the lines a log is mostly made of — a pytest `-v` id of forty bytes, the thirty spaces
//! before its `[ 42%]` — and a loop over bytes costs several instructions for each.
//!
//! The tests hold each scan to the byte-at-a-time loop it replaces.

const ONES: u64 = u64::from_ne_bytes([0x01; 8]);
const HIGHS: u64 = u64::from_ne_bytes([0x80; 8]);
const SPACES: u64 = u64::from_ne_bytes([b' '; 8]);

/// Eight bytes of `b` from `at`, the first in the lowest byte.
#[inline]
fn chunk(b: &[u8], at: usize) -> u64 {
    let mut word = [0u8; 8];
    word.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(word)
}

/// Where the first byte that is a space, a control byte or not ASCII is (`b.len()` when none
/// is): the end of a run of printable ASCII, where a word may end.
#[inline]
pub(crate) fn printable_end(b: &[u8]) -> usize {
    let mut at = 0;
    while at + 8 <= b.len() {
        let x = chunk(b, at);
        // A byte below 0x21 gets its high bit from the subtraction (only the lowest such byte
        // is sure: a borrow may mark the bytes above it, which come later), a byte of 0x80 or
        // more has its own.
        let stops = (x.wrapping_sub(ONES * 0x21) & !x & HIGHS) | (x & HIGHS);
        if stops != 0 {
            return at + (stops.trailing_zeros() / 8) as usize;
        }
        at += 8;
    }
    at + b[at..]
        .iter()
        .position(|&c| c <= b' ' || c >= 0x80)
        .unwrap_or(b.len() - at)
}

/// Where the run of ASCII whitespace `b` starts with ends (`b.len()` when it is all such).
#[inline]
pub(crate) fn space_end(b: &[u8]) -> usize {
    let mut at = 0;
    // Runs of spaces eight at a time; a tab, a line feed or the end goes byte by byte.
    while at + 8 <= b.len() && chunk(b, at) == SPACES {
        at += 8;
    }
    at + b[at..].iter().position(|&c| !is_ascii_space(c)).unwrap_or(b.len() - at)
}

/// Where the run of ASCII whitespace `b` ends with begins (0 when it is all such).
#[inline]
pub(crate) fn space_start_from_end(b: &[u8]) -> usize {
    let mut end = b.len();
    while end >= 8 && chunk(b, end - 8) == SPACES {
        end -= 8;
    }
    b[..end].iter().rposition(|&c| !is_ascii_space(c)).map_or(0, |i| i + 1)
}

/// ASCII whitespace as `char::is_whitespace` has it.
#[inline]
pub(crate) fn is_ascii_space(b: u8) -> bool {
    b == b' ' || (0x09..=0x0d).contains(&b)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Bytes that test each scan's edges: spaces, controls, the printable ASCII bounds, bytes
    /// that are not ASCII.
    fn bytes() -> impl Strategy<Value = Vec<u8>> {
        prop::collection::vec(
            prop_oneof![
                4 => Just(b' '),
                4 => Just(b'a'),
                1 => Just(b'\t'),
                1 => Just(b'\n'),
                1 => Just(0x0d),
                1 => Just(0x0e),
                1 => Just(0x00),
                1 => Just(0x1f),
                1 => Just(b'!'),
                1 => Just(0x7e),
                1 => Just(0x7f),
                1 => Just(0x80),
                1 => Just(0xff),
                1 => any::<u8>(),
            ],
            0..40,
        )
    }

    proptest! {
        #[test]
        fn a_printable_run_ends_where_a_byte_loop_says(b in bytes()) {
            let by_byte = b.iter().position(|&c| c <= b' ' || c >= 0x80).unwrap_or(b.len());
            prop_assert_eq!(printable_end(&b), by_byte);
        }

        #[test]
        fn a_space_run_ends_where_a_byte_loop_says(b in bytes()) {
            let by_byte = b.iter().position(|&c| !is_ascii_space(c)).unwrap_or(b.len());
            prop_assert_eq!(space_end(&b), by_byte);
            let from_end = b.iter().rposition(|&c| !is_ascii_space(c)).map_or(0, |i| i + 1);
            prop_assert_eq!(space_start_from_end(&b), from_end);
        }
    }
}
