//! Several tools in one log: a CI job runs a linter, then the type checker, then the tests, and
//! prints one log. Whatever came before — a JSON array, a JUnit document, a truncated section, a
//! hundred lint findings — each tool's section must give the reports it gives alone.
//!
//! The logs are the golden ones (real tool output, `tests/fixtures/logs/`), concatenated: as a
//! shell prints them (`a; b`, so a log that does not end in a newline runs into the next one's
//! first line), and cut short (a CI log truncated in the middle of a section).

mod parser_fixtures;

use std::collections::BTreeSet;
use std::sync::LazyLock;

use kubeheal::parse::{parse, parse_reader};
use parser_fixtures::{GoldenCase, fixtures, golden_cases, places, read_log, workspace};
use proptest::prelude::*;

/// The golden cases, logs read and parsed alone once.
static CASES: LazyLock<Vec<GoldenCase>> = LazyLock::new(golden_cases);

/// The places of `second`'s reports that are missing when `first` is printed before it.
fn lost(first: &str, second: &GoldenCase) -> Vec<(String, u32, String)> {
    let combined = format!("{first}{}", second.log);
    let together = places(&parse(&combined, &second.workspace));
    second.alone.difference(&together).cloned().collect()
}

/// Every pair of golden logs, both orders: the second log's reports are all found (after a
/// prefix of the first cut at a random point: the property test below).
#[test]
fn every_golden_log_after_every_other_keeps_its_reports() {
    let cases = &*CASES;
    assert!(cases.len() >= 80, "only {} golden cases", cases.len());
    let mut failures = Vec::new();
    for a in cases {
        for b in cases {
            let missing = lost(&a.log, b);
            if !missing.is_empty() {
                failures.push(format!("{} then {}: lost {missing:?}", a.name, b.name));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} pairs lose reports:\n{}",
        failures.len(),
        cases.len() * cases.len(),
        failures.join("\n")
    );
}

proptest! {
    // 256 cases a run; `PROPTEST_CASES=20000` searches deeper (each CI run draws new cuts).
    #![proptest_config(ProptestConfig::with_cases(
        std::env::var("PROPTEST_CASES").ok().and_then(|n| n.parse().ok()).unwrap_or(256)
    ))]

    /// A log cut anywhere (CI truncates logs; a job is killed mid-document, mid-line) and then
    /// another log from the start of a line: the second log's reports are all found, read whole
    /// or streamed.
    #[test]
    fn a_truncated_log_never_hides_the_log_after_it(
        a in any::<prop::sample::Index>(),
        b in any::<prop::sample::Index>(),
        cut in any::<prop::sample::Index>(),
    ) {
        let cases = &*CASES;
        let (a, b) = (&cases[a.index(cases.len())], &cases[b.index(cases.len())]);
        let mut end = cut.index(a.log.len() + 1);
        while !a.log.is_char_boundary(end) {
            end -= 1;
        }
        let first = format!("{}\n", &a.log[..end]);
        let missing = lost(&first, b);
        prop_assert!(missing.is_empty(), "{} cut at {end}, then {}: lost {missing:?}", a.name, b.name);
        let combined = format!("{first}{}", b.log);
        let whole = parse(&combined, &b.workspace);
        let streamed = parse_reader(std::io::BufReader::with_capacity(97, combined.as_bytes()), &b.workspace)
            .expect("reading from memory cannot fail");
        prop_assert_eq!(whole, streamed);
    }
}

/// A long CI job: linters' JSON and SARIF reports, JUnit documents (some cut in half, as a killed
/// job leaves them), jest and go JSON, a wrapped Jenkins log, over and over to 100 MB; then a
/// JUnit report printed without a final newline (`cat junit.xml`), the linter run right after it
/// and the pytest run whose failures are the bug. Their reports are all found, as they are alone.
#[test]
fn a_bug_at_the_end_of_a_100_mb_combined_log_is_found() {
    let sections = [
        "ruff_json",
        "mono_ruff_sarif",
        "mono_pytest_junit",
        "jest_json",
        "mono_eslint_json_meta",
        "mono_pylint_json2",
        "go_test_json",
        "cargo_build_json",
        "mono_ci_jenkins",
        "mono_mypy_junit",
        "mono_ruff_gitlab",
        "jest_junit",
    ];
    let logs: Vec<String> = sections
        .iter()
        .map(|case| read_log(&fixtures().join("logs"), case))
        .collect();
    let mut log = String::with_capacity(101 * 1024 * 1024);
    let mut i = 0;
    while log.len() < 100 * 1024 * 1024 {
        let section = &logs[i % logs.len()];
        if i % 5 == 3 {
            // Cut short mid-line.
            let mut half = section.len() / 2;
            while !section.is_char_boundary(half) {
                half -= 1;
            }
            log.push_str(&section[..half]);
            log.push('\n');
        } else {
            log.push_str(section);
        }
        i += 1;
    }
    let case = |name: &str| CASES.iter().find(|c| c.name == name).expect("a golden case");
    let junit = case("jest_junit");
    assert!(!junit.log.ends_with('\n'), "jest-junit's report has no final newline");
    log.push_str(&junit.log);
    let mut expected = BTreeSet::new();
    for name in ["mono_ruff_concise", "mono_pytest"] {
        log.push_str(&case(name).log);
        expected.extend(case(name).alone.iter().cloned());
    }
    assert!(expected.len() > 5);
    let together = places(&parse(&log, &workspace("mono")));
    let lost: Vec<_> = expected.difference(&together).collect();
    assert!(lost.is_empty(), "after {i} sections, lost {lost:?}");
}

/// Two containers' output interleaved line by line as a log collector prints it (docker
/// compose, `kubectl logs --prefix`, Tekton's `tkn`), each line after its container's prefix:
/// each log's reports are found, read apart from the other's lines.
#[test]
fn two_containers_interleaved_under_a_collector_s_prefixes_keep_their_reports() {
    let cases = &*CASES;
    let case = |name: &str| cases.iter().find(|c| c.name == name).expect("a golden case");
    let pairs = [
        ("py_logic_tb_short", "go_test_v"),
        ("jest_default", "cargo_test"),
        ("py_logic_default", "jest_verbose"),
        ("rs_backtrace", "py_logic_tb_long"),
    ];
    let prefixes = [
        // compose pads each name to the longest's width and one: `%-9s | `.
        ("api-1     | ", "worker-1  | "),
        (
            "[pod/heal-7d9f8-x2x4k/tests] 2026-11-27T15:19:43.655396123Z ",
            "[pod/heal-7d9f8-x2x4k/lint] 2026-11-27T15:19:43.655396124Z ",
        ),
        ("[unit-tests : pytest] ", "[unit-tests : go] "),
        ("[CI/test]   | ", "[CI/lint]   | "),
        ("ci-x7k2p-test-1200007919: ", "ci-x7k2p-lint-3944188612: "),
        (
            "\u{1b}[32mapi-7d9f8c6b5-x2x4k\u{1b}[0m \u{1b}[33mtest\u{1b}[0m ",
            "\u{1b}[32mapi-7d9f8c6b5-x2x4k\u{1b}[0m \u{1b}[33mlint\u{1b}[0m ",
        ),
    ];
    let mut failures = Vec::new();
    for (a, b) in pairs {
        let (a, b) = (case(a), case(b));
        assert!(
            !a.alone.is_empty() && !b.alone.is_empty(),
            "{} and {} give reports",
            a.name,
            b.name
        );
        for (pa, pb) in prefixes {
            let mut lines_a = a.log.lines();
            let mut lines_b = b.log.lines();
            let mut log = String::new();
            loop {
                let (la, lb) = (lines_a.next(), lines_b.next());
                if la.is_none() && lb.is_none() {
                    break;
                }
                for (prefix, line) in [(pa, la), (pb, lb)] {
                    if let Some(line) = line {
                        log.push_str(prefix);
                        log.push_str(line);
                        log.push('\n');
                    }
                }
            }
            for case in [a, b] {
                let together = places(&parse(&log, &case.workspace));
                let missing: Vec<_> = case.alone.difference(&together).collect();
                if !missing.is_empty() {
                    failures.push(format!(
                        "{} beside {} under {pa:?}: lost {missing:?}",
                        case.name,
                        if case.name == a.name { &b.name } else { &a.name }
                    ));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
