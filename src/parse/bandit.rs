//! bandit's text report: each issue is a block whose first line names the check and what it
//! found, and whose place comes a few lines under it —
//!
//! ```text
//! >> Issue: [B101:assert_used] Use of assert detected. The enclosed code will be removed ...
//!    Severity: Low   Confidence: High
//!    CWE: CWE-703 (https://cwe.mitre.org/data/definitions/703.html)
//!    More Info: https://bandit.readthedocs.io/en/1.9.4/plugins/b101_assert_used.html
//!    Location: inflection/__init__.py:270:4
//! ```
//!
//! (`Location: ./x.py:270` before bandit 1.7, with no column, and before `More Info`). Each issue
//! is a LINTING finding at its location. bandit's JSON is read in `structured`.

use std::borrow::Cow;

use super::look::Look;
use super::{Finding, Rank, Sink, split_location, truncate};
use crate::api::shared::ErrorType;

/// How bandit's text report begins an issue.
const ISSUE: &str = ">> Issue: [";

/// Most indented lines read after an issue's first line for its location (bandit prints three or
/// four): past them the block is not bandit's.
const MAX_LINES_TO_LOCATION: u8 = 6;

#[derive(Default)]
pub(crate) struct Bandit {
    /// The issue read, waiting for its location: its message, and how many more lines it may
    /// take to come.
    issue: Option<(String, u8)>,
}

impl Bandit {
    /// Whether [`Bandit::line`] can do anything with the line: an issue's first line, and the
    /// lines after it up to its location.
    #[inline]
    pub fn wants(&self, look: &Look<'_>) -> bool {
        self.issue.is_some() || look.first == Some(b'>') && look.line.starts_with(ISSUE)
    }

    pub fn line(&mut self, line: &str, sink: &mut Sink<'_>) {
        if let Some(rest) = line.strip_prefix(ISSUE) {
            self.issue = issue_message(rest).map(|message| (message, MAX_LINES_TO_LOCATION));
            return;
        }
        let Some((message, lines_left)) = self.issue.take() else {
            return;
        };
        if !line.starts_with(' ') {
            return;
        }
        let Some(place) = line.trim_start().strip_prefix("Location: ") else {
            if lines_left > 1 {
                self.issue = Some((message, lines_left - 1));
            }
            return;
        };
        if let Some((file, n, _)) = split_location(place.trim_end()) {
            sink.report(Finding {
                file,
                line: n,
                error_type: ErrorType::Linting,
                message: Cow::Owned(message),
                test: None,
                confidence: 0.95,
                rank: Rank::Warning,
                diagnostic: true,
            });
        }
    }
}

/// An issue's message from the rest of its first line, `B101:assert_used] Use of assert
/// detected.`: `B101 assert_used: Use of assert detected.`.
fn issue_message(rest: &str) -> Option<String> {
    let (check, text) = rest.split_once("] ")?;
    let (code, name) = check.split_once(':')?;
    let message = format!("{code} {name}: {}", text.trim());
    Some(truncate(&message, super::MAX_MESSAGE))
}

#[cfg(test)]
mod tests {
    use super::super::{Workspace, parse, report_findings};

    const B101: &str = "B101 assert_used: Use of assert detected. The enclosed code will be removed when compiling to optimised byte code.";

    fn inflection() -> Workspace {
        Workspace::new("/work/heldout15/projects/inflection").with_files(
            ["inflection/__init__.py", "test_inflection.py"]
                .map(str::to_owned)
                .to_vec(),
        )
    }

    /// bandit 1.9.4's text report (the fourteenth outsider trial's, on inflection 0.5.1), under
    /// GitHub Actions: the issue at its location's line.
    #[test]
    fn an_issue_is_placed_at_its_location() {
        let log = "\
2026-11-26T10:00:00.9374561Z Run started:2026-11-26 23:06:34.201208+00:00
2026-11-26T10:00:00.9744561Z 
2026-11-26T10:00:01.0114561Z Test results:
2026-11-26T10:00:01.0484561Z >> Issue: [B101:assert_used] Use of assert detected. The enclosed code will be removed when compiling to optimised byte code.
2026-11-26T10:00:01.0854561Z    Severity: Low   Confidence: High
2026-11-26T10:00:01.1224561Z    CWE: CWE-703 (https://cwe.mitre.org/data/definitions/703.html)
2026-11-26T10:00:01.1594561Z    More Info: https://bandit.readthedocs.io/en/1.9.4/plugins/b101_assert_used.html
2026-11-26T10:00:01.1964561Z    Location: inflection/__init__.py:270:4
2026-11-26T10:00:01.2334561Z 269\t    \"\"\"
2026-11-26T10:00:01.2704561Z 270\t    assert separator is not None, 'separator must be a string'
2026-11-26T10:00:01.3074561Z 271\t    string = transliterate(string)
2026-11-26T10:00:01.3444561Z 
2026-11-26T10:00:01.3814561Z --------------------------------------------------
";
        let parsed = parse(log, &inflection());
        assert_eq!(
            report_findings(&parsed),
            [("inflection/__init__.py", 270, "Linting".to_owned(), B101)]
        );
    }

    /// `cd inflection && bandit __init__.py`: the location is relative to the subfolder, and the
    /// listing finds the file.
    #[test]
    fn an_issue_found_in_a_subfolder_is_placed_in_the_repository() {
        let log = "\
Test results:
>> Issue: [B101:assert_used] Use of assert detected. The enclosed code will be removed when compiling to optimised byte code.
   Severity: Low   Confidence: High
   CWE: CWE-703 (https://cwe.mitre.org/data/definitions/703.html)
   More Info: https://bandit.readthedocs.io/en/1.9.4/plugins/b101_assert_used.html
   Location: ./__init__.py:270:4
269\t    \"\"\"
270\t    assert separator is not None, 'separator must be a string'
";
        let parsed = parse(log, &inflection());
        assert_eq!(
            report_findings(&parsed),
            [("inflection/__init__.py", 270, "Linting".to_owned(), B101)]
        );
    }

    /// An issue's block that ends before its location (a log cut short, another tool's
    /// indented line) places nothing.
    #[test]
    fn an_issue_without_its_location_is_not_placed() {
        let log = "\
>> Issue: [B101:assert_used] Use of assert detected.
   Severity: Low   Confidence: High
Something else
   Location: inflection/__init__.py:270:4
";
        assert!(parse(log, &inflection()).reports.is_empty());
    }
}
