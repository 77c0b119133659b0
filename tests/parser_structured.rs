//! Structured documents in a log (JSON arrays, jest `--json`, JUnit XML) are read as they arrive,
//! in bounded memory, and a line that only looks like the start of one does not hide the log after
//! it.

use std::fmt::Write as _;
use std::io::BufReader;

mod parser_fixtures;

use kubeheal::parse::{MAX_DOCUMENT_WARNINGS, MAX_REPORTS, ParseOutput, TestOutcome, Workspace, parse, parse_reader};

const PYTEST_FAILURE: &str = "\
=================================== FAILURES ===================================
______________________________ test_gold_discount ______________________________

    def test_gold_discount():
>       assert apply_discount(100, \"gold\") == 80
E       AssertionError: assert 120.0 == 80

tests/test_discount.py:7: AssertionError
=========================== short test summary info ============================
FAILED tests/test_discount.py::test_gold_discount - AssertionError: assert 12...
========================= 1 failed, 2 passed in 0.16s ==========================
";

fn workspace() -> Workspace {
    Workspace::new("/w")
}

/// Parses whole and streamed through a small buffer: both must agree.
fn parsed(log: &str) -> ParseOutput {
    let whole = parse(log, &workspace());
    let streamed = parse_reader(BufReader::with_capacity(61, log.as_bytes()), &workspace()).expect("in memory");
    assert_eq!(whole, streamed, "streaming differs");
    whole
}

fn has_pytest_failure(out: &ParseOutput) -> bool {
    out.reports
        .iter()
        .any(|r| r.file_path == "tests/test_discount.py" && r.line_number == 7)
        && out
            .failing_tests()
            .contains(&"tests/test_discount.py::test_gold_discount".to_owned())
}

/// The `n`th ruff finding of the logs here.
fn ruff_finding(n: usize) -> String {
    parser_fixtures::ruff_json_finding(n as u64, "/w/pkg", 1000)
}

#[test]
fn a_100_mb_json_array_is_read_element_by_element_and_the_log_after_it_still_counts() {
    let mut log = String::with_capacity(101 * 1024 * 1024);
    log.push_str("$ ruff check --output-format=json .\n[\n");
    let mut n = 0;
    while log.len() < 100 * 1024 * 1024 {
        if n > 0 {
            log.push_str(",\n");
        }
        log.push_str(&ruff_finding(n));
        n += 1;
    }
    log.push_str("\n]\n$ pytest\n");
    log.push_str(PYTEST_FAILURE);
    let out = parse(&log, &workspace());
    // Findings are bounded, and the array leaves room for what comes after it.
    assert!(n > 100_000, "{n} elements");
    assert!(out.reports.len() <= MAX_REPORTS);
    let lint = out.reports.iter().filter(|r| r.message.starts_with("F401")).count();
    assert_eq!(lint, MAX_DOCUMENT_WARNINGS);
    assert_eq!(out.reports[MAX_DOCUMENT_WARNINGS - 1].file_path, "pkg/module_0.py");
    assert!(has_pytest_failure(&out), "{:#?}", out.reports.first());
    // Streamed from a reader, the same.
    let streamed = parse_reader(BufReader::with_capacity(64 * 1024, log.as_bytes()), &workspace()).expect("in memory");
    assert_eq!(out, streamed);
}

#[test]
fn a_json_array_element_longer_than_the_bound_is_skipped() {
    let huge = format!(
        r#"  {{"filename": "/w/a.py", "code": "E501", "message": "{}", "location": {{"row": 1}}}}"#,
        "x".repeat(2 * 1024 * 1024)
    );
    let small =
        r#"  {"filename": "/w/b.py", "code": "F401", "message": "`os` imported but unused", "location": {"row": 3}}"#;
    let log = format!("[\n{huge},\n{small}\n]\n{PYTEST_FAILURE}");
    let out = parsed(&log);
    let files: Vec<&str> = out.reports.iter().map(|r| r.file_path.as_str()).collect();
    assert_eq!(files, vec!["tests/test_discount.py", "b.py"]);
}

#[test]
fn a_lone_bracket_does_not_hide_a_pytest_failure() {
    let log = format!("collecting ...\n[\n{PYTEST_FAILURE}");
    assert!(has_pytest_failure(&parsed(&log)));
    // Nor do brackets that are JSON for a while.
    let log = format!("[\n[\n  1,\n{PYTEST_FAILURE}");
    assert!(has_pytest_failure(&parsed(&log)));
}

#[test]
fn an_unterminated_array_does_not_hide_the_log_after_it() {
    // Two findings are read; the third is cut off by the rest of the log.
    let element = ruff_finding(0);
    let third = &element[..element.len() / 2];
    let log = format!(
        "[\n{},\n{},\n{third}\n{PYTEST_FAILURE}",
        ruff_finding(0),
        ruff_finding(1)
    );
    let out = parsed(&log);
    assert!(has_pytest_failure(&out));
    let lint: Vec<u32> = out
        .reports
        .iter()
        .filter(|r| r.message.starts_with("F401"))
        .map(|r| r.line_number)
        .collect();
    assert_eq!(lint, vec![1, 2]);
    // An array still open when the log ends gives what it read; what it held back goes to the
    // text formats.
    let log = format!(
        "{PYTEST_FAILURE}[{}\n  {{\"filename\": \"/w/b.py\",",
        r#"{"filename": "/w/a.py", "code": "F401", "message": "m", "location": {"row": 1}},"#
    );
    let out = parsed(&log);
    assert!(has_pytest_failure(&out));
    let files: Vec<&str> = out.reports.iter().map(|r| r.file_path.as_str()).collect();
    assert_eq!(files, vec!["tests/test_discount.py", "a.py"]);
}

#[test]
fn a_testsuite_line_in_prose_does_not_hide_failures() {
    for prose in [
        "<testsuite> elements are written by --junitxml",
        "<testsuite name=\"pytest\" tests=\"3\">",
        "<testsuite",
        "<?xml version=\"1.0\"?>",
        "<testsuites><testsuite name=\"x\"><testcase name=\"a\"><failure>boom",
    ] {
        let log = format!("{prose}\n{PYTEST_FAILURE}");
        let out = parsed(&log);
        assert!(has_pytest_failure(&out), "after {prose:?}: {:#?}", out.reports);
    }
}

/// A JUnit document as pytest writes it: one line, failure text with its own line ends.
fn pytest_junit(cases: usize, failing: &[usize]) -> String {
    let mut xml = String::from(
        "<?xml version=\"1.0\" encoding=\"utf-8\"?><testsuites name=\"pytest tests\"><testsuite name=\"pytest\" errors=\"0\">",
    );
    for i in 0..cases {
        if failing.contains(&i) {
            write!(
                xml,
                "<testcase classname=\"tests.test_many\" name=\"test_{i}\" time=\"0.001\"><failure message=\"AssertionError: assert {i} == 0\">def test_{i}():\n&gt;       assert value({i}) == 0\nE       AssertionError: assert {i} == 0\n\ntests/test_many.py:{line}: AssertionError</failure></testcase>",
                line = i + 1
            )
            .expect("write to a string");
        } else {
            write!(
                xml,
                "<testcase classname=\"tests.test_many\" name=\"test_{i}\" time=\"0.001\" />"
            )
            .expect("write to a string");
        }
    }
    xml.push_str("</testsuite></testsuites>");
    xml
}

#[test]
fn junit_with_many_test_cases_still_reports_its_failures() {
    // 20,000 test cases, failures near the start and far past the 8 KiB a text line is read to.
    let failing = [3, 9_000, 19_999];
    let log = format!("$ pytest --junitxml=/dev/stdout\n{}\n", pytest_junit(20_000, &failing));
    let out = parsed(&log);
    let lines: Vec<u32> = out
        .reports
        .iter()
        .filter(|r| r.file_path == "tests/test_many.py")
        .map(|r| r.line_number)
        .collect();
    assert_eq!(lines, vec![4, 9_001, 20_000]);
    assert_eq!(out.summary.failed, 3);
    assert_eq!(out.summary.passed, 19_997);
    assert_eq!(out.tests.len(), 20_000);
    assert_eq!(
        out.failing_tests(),
        vec![
            "tests/test_many.py::test_19999",
            "tests/test_many.py::test_3",
            "tests/test_many.py::test_9000"
        ]
    );
    assert!(
        out.tests
            .iter()
            .any(|t| t.name == "tests/test_many.py::test_0" && t.outcome == TestOutcome::Passed)
    );
}

#[test]
fn junit_over_many_lines_reports_its_failures_and_the_log_after_it() {
    let mut xml = String::from(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"jest tests\">\n  <testsuite name=\"slugify\">\n",
    );
    for i in 0..5_000 {
        if i % 1_000 == 999 {
            write!(
                xml,
                "    <testcase classname=\"slug {i}\" name=\"slug {i}\" time=\"0.001\">\n      <failure>Error: expect(received).toBe(expected)\n\nExpected: &quot;a&quot;\nReceived: &quot;b&quot;\n    at Object.toBe (/w/src/slug.test.js:{i}:36)\n    at new Promise (&lt;anonymous&gt;)</failure>\n    </testcase>\n"
            )
            .expect("write to a string");
        } else {
            write!(
                xml,
                "    <testcase classname=\"slug {i}\" name=\"slug {i}\" time=\"0.001\">\n    </testcase>\n"
            )
            .expect("write to a string");
        }
    }
    xml.push_str("  </testsuite>\n</testsuites>\n");
    let log = format!("{xml}{PYTEST_FAILURE}");
    let out = parsed(&log);
    let lines: Vec<u32> = out
        .reports
        .iter()
        .filter(|r| r.file_path == "src/slug.test.js")
        .map(|r| r.line_number)
        .collect();
    assert_eq!(lines, vec![999, 1999, 2999, 3999, 4999]);
    assert_eq!(out.summary.failed, 5 + 1);
    assert!(has_pytest_failure(&out));
}

#[test]
fn a_jest_report_longer_than_a_line_is_read_to_its_end() {
    let mut results = Vec::new();
    for i in 0..400 {
        let failed = i == 399;
        results.push(format!(
            r#"{{"ancestorTitles":["slugify"],"duration":1,"failureMessages":[{}],"fullName":"slugify case {i}","status":"{}","title":"case {i}"}}"#,
            if failed {
                r#""Error: expect(received).toBe(expected)\n    at Object.toBe (/w/src/slug.test.js:42:36)""#
            } else {
                ""
            },
            if failed { "failed" } else { "passed" }
        ));
    }
    let line = format!(
        r#"{{"numFailedTestSuites":1,"numFailedTests":1,"testResults":[{{"assertionResults":[{}],"message":"","name":"/w/src/slug.test.js","status":"failed"}},{{"assertionResults":[],"message":"  ● Test suite failed to run\n\n    SyntaxError: /w/src/broken.test.js: Unexpected token (3:4)\n\n      at Parser.raise (/w/node_modules/x.js:1:1)","name":"/w/src/broken.test.js","status":"failed"}}],"wasInterrupted":false}}"#,
        results.join(",")
    );
    assert!(line.len() > 40_000);
    let log = format!("{line}\r\n{PYTEST_FAILURE}");
    let out = parsed(&log);
    // jest's 399, and the 2 of pytest's summary line.
    assert_eq!(out.summary.passed, 399 + 2);
    assert_eq!(out.failing_tests()[0], "slugify case 399");
    assert!(
        out.reports
            .iter()
            .any(|r| r.file_path == "src/slug.test.js" && r.line_number == 42),
        "{:#?}",
        out.reports
    );
    assert!(has_pytest_failure(&out));
}

#[test]
fn long_lines_stream_the_same_through_any_buffer() {
    // Long JSON and XML lines with invalid UTF-8, `\r` and multi-byte characters near the cut.
    let mut log: Vec<u8> = Vec::new();
    let mut element = ruff_finding(7).into_bytes();
    element.retain(|&b| b != b'\n');
    log.extend_from_slice(b"[");
    for i in 0..40 {
        if i > 0 {
            log.extend_from_slice(b", ");
        }
        log.extend_from_slice(&element);
    }
    log.extend_from_slice(b"]\r\n");
    let mut junit = pytest_junit(300, &[5, 299]).into_bytes();
    junit.splice(8190..8190, "é€\u{1F600}".bytes());
    junit.splice(9000..9000, [0xff, 0xc3, b'\r']);
    log.extend_from_slice(&junit);
    log.extend_from_slice(b"\r\n");
    log.extend_from_slice(PYTEST_FAILURE.as_bytes());
    let whole = parse(&String::from_utf8_lossy(&log), &workspace());
    for capacity in [1, 2, 3, 7, 64, 8191, 8193, 100_000] {
        let streamed = parse_reader(BufReader::with_capacity(capacity, &log[..]), &workspace()).expect("in memory");
        assert_eq!(whole, streamed, "buffer of {capacity}");
    }
    assert!(has_pytest_failure(&whole));
}
