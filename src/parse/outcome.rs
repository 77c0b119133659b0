//! Test outcomes, evidence that a suite really ran, infrastructure signatures, and the verdict
//! the CI monitor acts on: a printed "PASSED" proves nothing without exit code 0, and a run that
//! collected no test is not a pass.

use std::sync::LazyLock;

use regex::Regex;
use serde::Serialize;

use super::look::Look;
use super::{Needle, ParseOutput, Sink, find_short, has};

/// How one test ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum TestOutcome {
    Passed,
    Skipped,
    Failed,
    Error,
}

impl TestOutcome {
    pub(crate) fn severity(self) -> u8 {
        match self {
            TestOutcome::Skipped => 0,
            TestOutcome::Passed => 1,
            TestOutcome::Failed => 2,
            TestOutcome::Error => 3,
        }
    }
}

/// The counts the test runners printed in their own summaries, added over every summary.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct SuiteSummary {
    /// A runner printed a summary (pytest, unittest, cargo test, go test, jest, JUnit XML).
    pub runner_summary_seen: bool,
    pub passed: u32,
    pub failed: u32,
    pub errors: u32,
    pub skipped: u32,
}

impl SuiteSummary {
    /// Tests that ran to an outcome.
    pub fn ran(&self) -> u32 {
        self.passed + self.failed + self.errors
    }
}

/// A failure of the environment rather than of the code: no healer can fix it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum InfraKind {
    OutOfMemory,
    DiskFull,
    Dns,
    ConnectionFailed,
    CommandNotFound,
    NoTestsCollected,
}

impl InfraKind {
    /// What to do about it, for people.
    pub fn suggested_fix(self) -> &'static str {
        match self {
            InfraKind::OutOfMemory => "raise the executor's memory limit or reduce the build's parallelism",
            InfraKind::DiskFull => "free disk space or give the executor a larger ephemeral-storage limit",
            InfraKind::Dns => "check the cluster's DNS and the network policy of the executor Pod",
            InfraKind::ConnectionFailed => "start the service the build connects to, or allow the executor to reach it",
            InfraKind::CommandNotFound => "install the missing command in the executor image or fix the build command",
            InfraKind::NoTestsCollected => "check the build command's test selection: no test was collected",
        }
    }
}

/// What a run means for the heal loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "verdict", content = "kind")]
pub enum Verdict {
    /// Exit code 0 and a test runner reported tests that ran (or no runner and nothing found).
    Passed,
    /// The code is at fault: heal it.
    Failed,
    /// The environment is at fault: stop, do not ask a healer.
    Infrastructure(InfraKind),
}

pub(crate) fn verdict(parsed: &ParseOutput, exit_code: i32) -> Verdict {
    let no_tests = parsed.infra.contains(&InfraKind::NoTestsCollected)
        || (parsed.summary.runner_summary_seen && parsed.summary.ran() == 0 && parsed.reports.is_empty());
    if exit_code == 0 {
        return if no_tests {
            Verdict::Infrastructure(InfraKind::NoTestsCollected)
        } else if parsed.summary.failed + parsed.summary.errors > 0 {
            // A runner said tests failed although the command exited 0 (a `|| true`, a wrapper).
            Verdict::Failed
        } else {
            Verdict::Passed
        };
    }
    // Failures in the code win over noise: an infrastructure signature counts only when the
    // parser found nothing to fix.
    if parsed.reports.is_empty() {
        if let Some(kind) = parsed.infra.iter().copied().find(|k| *k != InfraKind::NoTestsCollected) {
            return Verdict::Infrastructure(kind);
        }
        if no_tests {
            return Verdict::Infrastructure(InfraKind::NoTestsCollected);
        }
        if exit_code == 127 {
            return Verdict::Infrastructure(InfraKind::CommandNotFound);
        }
        if exit_code == 137 {
            return Verdict::Infrastructure(InfraKind::OutOfMemory);
        }
    }
    Verdict::Failed
}

static PYTEST_SUMMARY: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^=+ (.*?) in [\d.]+s( \([^)]*\))? =+$").expect("regex"));
static COUNT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(\d+) (passed|failed|errors?|skipped|xfailed|xpassed|deselected|warnings?)").expect("regex")
});
static CARGO_RESULT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^test result: (?:ok|FAILED)\. (\d+) passed; (\d+) failed; (\d+) ignored").expect("regex")
});
static UNITTEST_RAN: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^Ran (\d+) tests? in ").expect("regex"));
static UNITTEST_FAILED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^FAILED \((?:failures=(\d+))?(?:, )?(?:errors=(\d+))?(?:, )?(?:skipped=(\d+))?").expect("regex")
});
static JEST_TESTS: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^Tests:\s+(.*?)(\d+) total$").expect("regex"));
static JEST_COUNT: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(\d+) (passed|failed|skipped|todo|pending)").expect("regex"));
static COMMAND_NOT_FOUND: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?:^|: )(?:line \d+: )?[\w./-]+: (?:command not found|not found)$|^/bin/sh: \d+: [\w./-]+: not found$|^env: '?[\w./-]+'?: No such file or directory$|^exec: \S+: executable file not found in \$PATH")
        .expect("regex")
});

/// Whether [`line`] can find anything in the line: a summary's first byte, or an infrastructure
/// word.
#[inline]
pub(crate) fn wants(look: &Look<'_>) -> bool {
    let line = look.line;
    let summary = match look.first {
        Some(b'=') => look.last == b'=',
        Some(b't') => line.starts_with("test result: "),
        Some(b'R') => line.starts_with("Ran "),
        Some(b'F') => line.starts_with("FAILED ("),
        Some(b'T') => line.starts_with("Tests:"),
        Some(b'N') => line.starts_with("NO TESTS RAN") || line.starts_with("No tests found"),
        _ => false,
    };
    summary || look.may_hold(Needle::InfraWord)
}

/// Looks at one cleaned line for runner summaries and infrastructure signatures.
pub(crate) fn line(line: &str, sink: &mut Sink<'_>) {
    let Some(first) = line.bytes().next() else { return };
    match first {
        b'=' if line.ends_with('=') => {
            if let Some(counts) = pytest_summary(line) {
                sink.summary.runner_summary_seen = true;
                add_counts(counts, sink);
                if counts.contains("no tests ran") {
                    sink.infra(InfraKind::NoTestsCollected);
                }
            } else if line.contains(" no tests ran") {
                sink.summary.runner_summary_seen = true;
                sink.infra(InfraKind::NoTestsCollected);
            }
        }
        b't' if line.starts_with("test result: ") => {
            if let Some(c) = CARGO_RESULT.captures(line) {
                sink.summary.runner_summary_seen = true;
                sink.summary.passed += c[1].parse::<u32>().unwrap_or(0);
                sink.summary.failed += c[2].parse::<u32>().unwrap_or(0);
                sink.summary.skipped += c[3].parse::<u32>().unwrap_or(0);
            }
        }
        b'R' if line.starts_with("Ran ") => {
            if let Some(c) = UNITTEST_RAN.captures(line) {
                sink.summary.runner_summary_seen = true;
                if &c[1] == "0" {
                    sink.infra(InfraKind::NoTestsCollected);
                }
            }
        }
        b'F' if line.starts_with("FAILED (") => {
            if let Some(c) = UNITTEST_FAILED.captures(line) {
                let n = |i: usize| c.get(i).and_then(|m| m.as_str().parse::<u32>().ok()).unwrap_or(0);
                sink.summary.failed += n(1);
                sink.summary.errors += n(2);
                sink.summary.skipped += n(3);
            }
        }
        b'T' if line.starts_with("Tests:") => {
            if let Some(c) = JEST_TESTS.captures(line) {
                sink.summary.runner_summary_seen = true;
                for m in JEST_COUNT.captures_iter(&c[1]) {
                    let n: u32 = m[1].parse().unwrap_or(0);
                    match &m[2] {
                        "passed" => sink.summary.passed += n,
                        "failed" => sink.summary.failed += n,
                        _ => sink.summary.skipped += n,
                    }
                }
            }
        }
        b'N' if line == "NO TESTS RAN" || line.starts_with("No tests found") => {
            sink.summary.runner_summary_seen = true;
            sink.infra(InfraKind::NoTestsCollected);
        }
        _ => {}
    }
    if sink.may_hold(Needle::InfraWord) {
        infra_signature(line, sink);
    }
}

fn add_counts(counts: &str, sink: &mut Sink<'_>) {
    for_each_count(counts, |n, word| {
        let n: u32 = n.parse().unwrap_or(0);
        match word {
            "passed" | "xpassed" => sink.summary.passed += n,
            "failed" => sink.summary.failed += n,
            "error" | "errors" => sink.summary.errors += n,
            "skipped" | "xfailed" | "deselected" => sink.summary.skipped += n,
            _ => {}
        }
    });
}

/// pytest's summary rule, `==== 1 failed, 2 passed in 0.12s ====`: the counts before ` in `, as
/// [`PYTEST_SUMMARY`] reads them, without running the regex on ASCII text (its lazy group
/// backtracked over every rule at thousands of instructions each).
fn pytest_summary(line: &str) -> Option<&str> {
    if !line.is_ascii() || line.contains('\n') {
        // Most `=` rules are a section's title (`FAILURES`): without ` in ` the regex need not run.
        if !has(line, " in ") {
            return None;
        }
        return PYTEST_SUMMARY.captures(line)?.get(1).map(|m| m.as_str());
    }
    let rule = line.bytes().take_while(|&b| b == b'=').count();
    if rule == 0 {
        return None;
    }
    let body = line[rule..].strip_prefix(' ')?;
    // The lazy group ends at the first ` in ` after which the rest reads as the duration.
    let mut from = 0;
    while let Some(at) = find_short(&body[from..], " in ").map(|k| from + k) {
        if summary_tail(&body[at + 4..]) {
            return Some(&body[..at]);
        }
        from = at + 1;
    }
    None
}

/// Whether `rest` is what ends a pytest summary after ` in `: `[\d.]+s( \([^)]*\))? =+$`.
fn summary_tail(rest: &str) -> bool {
    let time = rest.bytes().take_while(|b| b.is_ascii_digit() || *b == b'.').count();
    let Some(mut rest) = rest[time..].strip_prefix('s').filter(|_| time > 0) else {
        return false;
    };
    // `(0:01:02)` after the seconds, on a long run.
    if let Some(inner) = rest.strip_prefix(" (")
        && let Some(close) = inner.find(')')
        && is_rule_end(&inner[close + 1..])
    {
        return true;
    }
    rest = rest.strip_prefix(' ').unwrap_or("");
    !rest.is_empty() && rest.bytes().all(|b| b == b'=')
}

/// ` =+$`.
fn is_rule_end(text: &str) -> bool {
    text.strip_prefix(' ')
        .is_some_and(|r| !r.is_empty() && r.bytes().all(|b| b == b'='))
}

/// Each `N word` count in a summary's text, as [`COUNT`] finds them, without running the regex
/// on ASCII text.
fn for_each_count<'t>(text: &'t str, mut f: impl FnMut(&'t str, &'t str)) {
    if !text.is_ascii() {
        for c in COUNT.captures_iter(text) {
            if let (Some(n), Some(word)) = (c.get(1), c.get(2)) {
                f(n.as_str(), word.as_str());
            }
        }
        return;
    }
    // The regex's `errors?` and `warnings?` take the `s` when there is one: the longer word first.
    const WORDS: [&str; 10] = [
        "passed",
        "failed",
        "errors",
        "error",
        "skipped",
        "xfailed",
        "xpassed",
        "deselected",
        "warnings",
        "warning",
    ];
    let b = text.as_bytes();
    let mut at = 0;
    while at < b.len() {
        if !b[at].is_ascii_digit() {
            at += 1;
            continue;
        }
        let start = at;
        while at < b.len() && b[at].is_ascii_digit() {
            at += 1;
        }
        if let Some(rest) = text[at..].strip_prefix(' ')
            && let Some(word) = WORDS.iter().find(|w| rest.starts_with(*w))
        {
            f(&text[start..at], &rest[..word.len()]);
            at += 1 + word.len();
        }
    }
}

/// Every word an infrastructure signature contains: one pass over a line tells whether any of
/// the detailed checks below can match (most lines hold none of these words).
pub(crate) const INFRA_WORDS_LIST: &[&str] = &[
    "Killed",
    "allocate memory",
    "out of memory",
    "MemoryError",
    "memory allocation of ",
    "SIGKILL",
    "No space left",
    "ENOSPC",
    "name resolution",
    "resolve host",
    "ENOTFOUND",
    "EAI_AGAIN",
    "Name or service not known",
    "no such host",
    "lookup address",
    "Connection refused",
    "ECONNREFUSED",
    "Could not connect to ",
    "Network is unreachable",
    "i/o timeout",
    "spurious network error",
    "not found",
    "No such file or directory",
    "collected 0 items",
    "no test target matches",
];

static INFRA_WORDS: LazyLock<aho_corasick::AhoCorasick> =
    LazyLock::new(|| aho_corasick::AhoCorasick::new(INFRA_WORDS_LIST).expect("aho-corasick automaton"));

fn infra_signature(line: &str, sink: &mut Sink<'_>) {
    let l = line.trim();
    if l.is_empty() || !INFRA_WORDS.is_match(l) {
        return;
    }
    if l == "Killed"
        || l.contains("Cannot allocate memory")
        || l.contains("JavaScript heap out of memory")
        || l.starts_with("MemoryError")
        || l.contains("fatal error: runtime: out of memory")
        || l.contains("memory allocation of ") && l.contains(" failed")
        || l.contains("signal: 9, SIGKILL") && l.contains("process didn't exit successfully")
    {
        sink.infra(InfraKind::OutOfMemory);
    }
    if l.contains("No space left on device") || l.contains("ENOSPC") {
        sink.infra(InfraKind::DiskFull);
    }
    if l.contains("Temporary failure in name resolution")
        || l.contains("Could not resolve host")
        || l.contains("getaddrinfo ENOTFOUND")
        || l.contains("getaddrinfo EAI_AGAIN")
        || l.contains("Name or service not known")
        || (l.contains("dial tcp: lookup ") && l.contains("no such host"))
        || l.contains("failed to lookup address information")
    {
        sink.infra(InfraKind::Dns);
    }
    if l.contains("Connection refused")
        && (l.contains("pip") || l.contains("Max retries exceeded") || l.contains("Failed to connect"))
        || l.contains("ECONNREFUSED") && l.contains("registry")
        || l.contains("Could not connect to ") && l.contains("(") && l.contains("port")
        || l.contains("Network is unreachable")
        || l.contains("i/o timeout") && l.contains("dial tcp")
        || l.contains("spurious network error")
    {
        sink.infra(InfraKind::ConnectionFailed);
    }
    if (l.ends_with("not found") || l.contains("No such file or directory") || l.contains("executable file not found"))
        && COMMAND_NOT_FOUND.is_match(l)
    {
        sink.infra(InfraKind::CommandNotFound);
    }
    if l.starts_with("collected 0 items") || l.starts_with("error: no test target matches") {
        sink.infra(InfraKind::NoTestsCollected);
    }
}

#[cfg(test)]
mod tests {
    use super::{COUNT, InfraKind, PYTEST_SUMMARY, Verdict, for_each_count, pytest_summary};
    use crate::parse::{Workspace, parse};
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4000))]

        /// pytest's summary rule and its counts are read as the regexes they replaced read them.
        #[test]
        fn summaries_are_read_as_the_regexes_read_them(
            line in prop_oneof![
                // Near a summary's shape, so that most are one or miss it by a byte.
                "={0,2} ?([0-9]| in | passed| failed| errors?| warnings?|, |\\(x\\)|\u{663}){0,4}( in )?[0-9.]{0,3}s?( \\([0-9:]{0,3}\\)?)? ?={0,2}",
                prop::collection::vec(
                prop_oneof![
                    Just("="), Just("=="), Just(" "), Just(" in "), Just("in"), Just("0.12"), Just("."), Just("3"),
                    Just("s"), Just(" ("), Just("0:01:02"), Just(")"), Just(" passed"), Just(" failed"), Just(" errors"),
                    Just(" error"), Just(" warnings"), Just(" xfailed"), Just(","), Just("\u{663}"), Just("\u{e9}"),
                    Just("\n"), Just("x"),
                ],
                0..12,
            ).prop_map(|p| p.concat()),
            ],
        ) {
            let by_regex = PYTEST_SUMMARY.captures(&line).map(|c| c.get(1).unwrap().as_str());
            prop_assert_eq!(pytest_summary(&line), by_regex, "{:?}", line);
            let mut counts = Vec::new();
            for_each_count(&line, |n, w| counts.push((n, w)));
            let by_regex: Vec<_> = COUNT.captures_iter(&line).map(|c| (c.get(1).unwrap().as_str(), c.get(2).unwrap().as_str())).collect();
            prop_assert_eq!(counts, by_regex, "{:?}", line);
        }
    }

    fn verdict(log: &str, exit: i32) -> Verdict {
        parse(log, &Workspace::new("/w")).verdict(exit)
    }

    #[test]
    fn a_printed_pass_with_a_failing_exit_code_is_not_a_pass() {
        let log = "tests/test_a.py::test_x PASSED\n=== 1 passed in 0.01s ===\n";
        assert_eq!(verdict(log, 0), Verdict::Passed);
        assert_eq!(verdict(log, 1), Verdict::Failed);
    }

    #[test]
    fn a_run_that_collected_nothing_is_not_a_pass() {
        let log = "collected 0 items\n\n=== no tests ran in 0.01s ===\n";
        assert_eq!(verdict(log, 5), Verdict::Infrastructure(InfraKind::NoTestsCollected));
        assert_eq!(verdict(log, 0), Verdict::Infrastructure(InfraKind::NoTestsCollected));
        assert_eq!(
            verdict("?   \texample.com/x\t[no test files]\n", 0),
            Verdict::Infrastructure(InfraKind::NoTestsCollected)
        );
    }

    #[test]
    fn infrastructure_signatures_stop_the_loop_instead_of_asking_a_healer() {
        let cases = [
            ("Collecting requests\nKilled\n", 137, InfraKind::OutOfMemory),
            (
                "FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory\n",
                134,
                InfraKind::OutOfMemory,
            ),
            ("OSError: [Errno 28] No space left on device\n", 1, InfraKind::DiskFull),
            (
                "WARNING: Retrying ... Failed to establish a new connection: [Errno -3] Temporary failure in name resolution\n",
                1,
                InfraKind::Dns,
            ),
            ("sh: 1: pytest: not found\n", 127, InfraKind::CommandNotFound),
            (
                "/bin/bash: line 1: cargo: command not found\n",
                127,
                InfraKind::CommandNotFound,
            ),
        ];
        for (log, exit, kind) in cases {
            assert_eq!(verdict(log, exit), Verdict::Infrastructure(kind), "{log}");
        }
    }

    #[test]
    fn a_code_failure_wins_over_noise_that_looks_like_infrastructure() {
        let log = "Traceback (most recent call last):\n  File \"/w/app.py\", line 3, in <module>\n    x = 1 / 0\nZeroDivisionError: division by zero\nNo space left on device\n";
        assert_eq!(verdict(log, 1), Verdict::Failed);
    }
}
