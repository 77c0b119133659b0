//! Properties of the parser on arbitrary input: it never panics, and what it returns is always a
//! valid report (relative path inside the workspace, line ≥ 1, bounded message and count).

use kubeheal::parse::{MAX_MESSAGE, MAX_REPORTS, Workspace, parse, parse_reader};
use proptest::prelude::*;

fn check(log: &str) {
    let parsed = parse(log, &Workspace::new("/w"));
    assert!(parsed.reports.len() <= MAX_REPORTS);
    for r in &parsed.reports {
        assert!(r.line_number >= 1);
        assert!(!r.file_path.is_empty());
        assert!(!r.file_path.starts_with('/'), "absolute path {}", r.file_path);
        assert!(
            !r.file_path.split('/').any(|s| s == ".." || s.is_empty()),
            "bad path {}",
            r.file_path
        );
        assert!(r.message.chars().count() <= MAX_MESSAGE);
        assert!(r.confidence_score.is_none_or(|c| (0.0..=1.0).contains(&c)));
    }
    assert_eq!(parsed, parse(log, &Workspace::new("/w")), "not deterministic");
    // The same assertion as the cargo-fuzz target: streaming through a tiny buffer changes nothing.
    let streamed = parse_reader(
        std::io::BufReader::with_capacity(16, log.as_bytes()),
        &Workspace::new("/w"),
    )
    .expect("reading from memory cannot fail");
    assert_eq!(parsed, streamed, "streaming differs");
}

/// Lines that look like the formats the parser knows, to reach deep into each one.
fn log_line() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<String>(),
        "[a-z/._]{0,20}:[0-9]{0,4}:[0-9]{0,3}: [A-Z][0-9]{3} .{0,20}",
        "  File \"[/a-z._]{0,20}\", line [0-9]{0,3}(, in [a-z]{1,5})?",
        "E +[A-Za-z]{0,12}(Error|Exception): .{0,20}",
        "_{3,5} [a-z_\\[\\]0-9.-]{0,20} _{3,5}",
        "={3,5} (FAILURES|ERRORS|short test summary info|[0-9] failed in 0.1s) ={3,5}",
        "(FAILED|PASSED|ERROR) [a-z/_.]{0,10}::[a-z_]{0,10}( - .{0,10})?",
        "(error|warning)(\\[E[0-9]{4}\\])?: .{0,20}",
        " +--> [a-z/._]{0,15}:[0-9]{0,3}:[0-9]{0,3}",
        "thread '[a-z:]{0,10}' panicked at [a-z/._]{0,10}:[0-9]{0,3}:[0-9]{0,3}:",
        "\\s*--- (FAIL|PASS): Test[A-Za-z/]{0,10} \\(0.00s\\)",
        "\t/w/[a-z]{1,5}\\.go:[0-9]{1,3} \\+0x[0-9a-f]{1,3}",
        "panic: .{0,20}",
        " +● [A-Za-z ›]{0,20}",
        " +at [A-Za-z.]{0,10} \\([/a-z._]{0,15}:[0-9]{0,3}:[0-9]{0,3}\\)",
        "[a-z/.]{0,10}\\([0-9]{0,3},[0-9]{0,3}\\): error TS[0-9]{4}: .{0,10}",
        "\\{\"reason\":\"compiler-message\".{0,40}",
        "\\{\"Time\":\"x\",\"Action\":\"output\",\"Test\":\"T\",\"Output\":\".{0,20}\"\\}",
        "<\\?xml.{0,10}|<testsuites.{0,20}|<testcase name=\"[a-z]{0,5}\">|<failure>.{0,20}|</testsuites>",
        "\\[|\\]|\\[\\{.{0,30}",
        "\x1b\\[[0-9;]{0,5}m.{0,10}\r.{0,10}",
    ]
}

/// Structured documents on one line longer than the 8 KiB a text line is read to (a jest report,
/// pytest's JUnit XML, a minified JSON array), with arbitrary text somewhere in them.
fn long_line() -> impl Strategy<Value = String> {
    let start = prop_oneof![
        Just("["),
        Just("[{\"a\": 1}, "),
        Just("{\"numFailedTestSuites\":1,\"testResults\":[{\"assertionResults\":["),
        Just("<?xml version=\"1.0\"?><testsuites><testsuite name=\"pytest\">"),
    ];
    let unit = prop_oneof![
        Just(r#"{"filename": "/w/a.py", "code": "F401", "message": "m", "location": {"row": 3}}, "#),
        Just(r#"{"filePath": "/w/a.js", "messages": [{"line": 2, "message": "m", "ruleId": "no-undef"}]}, "#),
        Just(r#"{"fullName": "t", "status": "failed", "failureMessages": ["E\n    at x (/w/a.js:1:2)"]}, "#),
        Just(r#"{"fullName": "u", "status": "passed"}], "status": "failed"}, {"assertionResults": ["#),
        Just(
            "<testcase classname=\"t.a\" name=\"t\"><failure message=\"m\">E   x&#10;t/a.py:3: E</failure></testcase>"
        ),
        Just("<testcase name=\"t\" />"),
        Just("</testsuite><testsuite name=\"x\"><system-out><![CDATA[é<>]]></system-out>"),
    ];
    (start, unit, 0usize..100, ".{0,12}", any::<prop::sample::Index>()).prop_map(|(start, unit, more, noise, at)| {
        let mut line = format!("{start}{}", unit.repeat(9000 / unit.len() + more));
        let mut i = at.index(line.len() + 1);
        while !line.is_char_boundary(i) {
            i -= 1;
        }
        line.insert_str(i, &noise);
        line
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn long_structured_lines_stream_the_same_and_yield_valid_reports(
        lines in prop::collection::vec(prop_oneof![log_line(), long_line()], 1..6),
    ) {
        check(&lines.join("\n"));
    }

    #[test]
    fn long_lines_with_bytes_that_are_not_utf8_stream_the_same(
        lines in prop::collection::vec(prop_oneof![log_line(), long_line()], 1..4),
        bad in prop::collection::vec((any::<prop::sample::Index>(), prop_oneof![Just(b'\r'), 0x80u8..=0xff]), 0..6),
        capacity in 1usize..100,
    ) {
        let mut bytes = lines.join("\r\n").into_bytes();
        for (at, b) in bad {
            let i = at.index(bytes.len() + 1);
            bytes.insert(i, b);
        }
        let workspace = Workspace::new("/w");
        let whole = parse(&String::from_utf8_lossy(&bytes), &workspace);
        let streamed = parse_reader(std::io::BufReader::with_capacity(capacity, &bytes[..]), &workspace)
            .expect("reading from memory cannot fail");
        prop_assert_eq!(whole, streamed);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn arbitrary_text_never_panics_and_yields_valid_reports(lines in prop::collection::vec(log_line(), 0..40)) {
        check(&lines.join("\n"));
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..2000)) {
        check(&String::from_utf8_lossy(&bytes));
    }
}
