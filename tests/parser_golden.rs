//! Golden tests of the parser on real tool output: every `tests/fixtures/logs/<case>.log` was
//! made by running the real tool on a broken project in `tests/fixtures/projects/`
//! (`tests/fixtures/regenerate.sh`); `<case>.expected.json` holds the reports, failing tests and
//! verdict a developer expects. `KUBEHEAL_BLESS=1 cargo test --test parser_golden` rewrites the
//! expected files for review with `git diff`.

mod parser_fixtures;

use kubeheal::parse;
use parser_fixtures::{cases, fixtures, read_log, workspace};
use serde_json::{Value, json};

fn actual(case: &str, project: &str) -> Value {
    let logs = fixtures().join("logs");
    let log = read_log(&logs, case);
    let exit: i32 = std::fs::read_to_string(logs.join(format!("{case}.exit")))
        .expect("the exit code exists")
        .trim()
        .parse()
        .expect("the exit code is a number");
    let parsed = parse::parse(&log, &workspace(project));
    json!({
        "project": project,
        "exitCode": exit,
        "reports": parsed.reports,
        "failingTests": parsed.failing_tests(),
        "verdict": parsed.verdict(exit),
    })
}

#[test]
fn every_golden_log_gives_its_expected_reports() {
    let cases = cases();
    assert!(cases.len() >= 80, "only {} golden cases", cases.len());
    let bless = std::env::var_os("KUBEHEAL_BLESS").is_some();
    let mut failures = Vec::new();
    for (case, project) in &cases {
        let got = actual(case, project);
        let path = fixtures().join("logs").join(format!("{case}.expected.json"));
        if bless {
            let text = serde_json::to_string_pretty(&got).expect("json") + "\n";
            std::fs::write(&path, text).expect("the expected file can be written");
            continue;
        }
        let expected: Value = match std::fs::read_to_string(&path) {
            Ok(text) => serde_json::from_str(&text).expect("expected file is JSON"),
            Err(_) => {
                failures.push(format!("{case}: no {}", path.display()));
                continue;
            }
        };
        if expected != got {
            failures.push(format!(
                "{case}:\n  expected {}\n  got      {}",
                serde_json::to_string(&expected).unwrap_or_default(),
                serde_json::to_string(&got).unwrap_or_default()
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} golden case(s) differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn parsing_is_deterministic() {
    for (case, project) in cases() {
        assert_eq!(
            actual(&case, &project),
            actual(&case, &project),
            "{case} parsed twice differs"
        );
    }
}

#[test]
fn streaming_a_log_gives_what_parsing_it_whole_gives() {
    for (case, project) in cases() {
        let bytes = std::fs::read(fixtures().join("logs").join(format!("{case}.log"))).expect("the log exists");
        let ws = workspace(&project);
        let whole = parse::parse(&String::from_utf8_lossy(&bytes), &ws);
        // A small buffer makes every line cross buffer boundaries; a larger one has lines end in
        // it and long lines (GitLab's broken 32 KiB lines) go on past it.
        for capacity in [7, 5000] {
            let reader = std::io::BufReader::with_capacity(capacity, &bytes[..]);
            let streamed = parse::parse_reader(reader, &ws).expect("reading from memory cannot fail");
            assert_eq!(whole, streamed, "{case}, read {capacity} bytes at a time");
        }
    }
}

#[test]
fn every_bug_type_appears_in_the_goldens() {
    let mut seen = std::collections::BTreeSet::new();
    for (case, project) in cases() {
        for report in actual(&case, &project)["reports"].as_array().expect("reports") {
            seen.insert(report["errorType"].as_str().expect("type").to_owned());
        }
    }
    for t in ["LINTING", "SYNTAX", "LOGIC", "TYPE_ERROR", "IMPORT", "INDENTATION"] {
        assert!(seen.contains(t), "no golden log yields a {t} report");
    }
}
