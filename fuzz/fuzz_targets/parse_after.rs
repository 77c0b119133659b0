//! Fuzzes the parser's promise that a section stands alone: whatever came before a tool's log in
//! a CI job (here: any bytes, ended by a line break), the golden log's reports are all found.
//! The first two bytes pick the golden log (real tool output, `tests/fixtures/logs/`), the rest
//! is the text printed before it.
//!
//!     cargo +nightly fuzz run parse_after -- -max_total_time=60
//!
//! Only what the parser promises is checked: a text before the log that fills the report bounds
//! ([`MAX_REPORTS`] and the others, counted in `left_out`) may leave the log's reports out, and a
//! golden log that is past its own bounds alone is not used.

#![no_main]

#[path = "../../tests/parser_fixtures/mod.rs"]
mod parser_fixtures;

use std::sync::LazyLock;

use kubeheal::parse::{MAX_REPORTS, parse, parse_reader};
use libfuzzer_sys::fuzz_target;
use parser_fixtures::{GoldenCase, golden_cases, places};

/// The golden cases within their own bounds and with reports to lose.
static CASES: LazyLock<Vec<GoldenCase>> = LazyLock::new(|| {
    golden_cases()
        .into_iter()
        .filter(|case| case.left_out == 0 && !case.alone.is_empty())
        .collect()
});

fuzz_target!(|data: &[u8]| {
    let [a, b, before @ ..] = data else { return };
    let cases = &*CASES;
    let case = &cases[usize::from(u16::from_le_bytes([*a, *b])) % cases.len()];
    let before = String::from_utf8_lossy(before);
    let combined = format!("{before}\n{}", case.log);
    let together = parse(&combined, &case.workspace);
    let streamed = parse_reader(std::io::BufReader::with_capacity(61, combined.as_bytes()), &case.workspace)
        .expect("in memory");
    assert_eq!(together, streamed, "read whole and streamed differ");
    // What came before filled a bound: the log's reports may be left out, as the bounds say.
    if together.left_out > 0 || together.reports.len() >= MAX_REPORTS {
        return;
    }
    let found = places(&together);
    let lost: Vec<_> = case.alone.difference(&found).collect();
    assert!(lost.is_empty(), "the log's reports were lost after the text before it: {lost:?}");
});
