//! Recall, type accuracy and precision on logs the parser was not tailored to.
//!
//! `tests/fixtures/heldout/` holds a project (`inventory`: a Python package in `svc/`, a JS
//! package in `ui/`) that the parser's code was not written against, the logs of real tools run on
//! it (`heldout/cases`, made by `regenerate.sh`), and the answers: for test failures, type checks
//! and crashes, the places written from the project's known bugs (`answers.json`); for lint
//! findings, the tools' own JSON output (`truth/`). Nothing here is derived from the parser's
//! output. `cargo test --test parser_heldout -- --nocapture` prints the figures per case.
//!
//! - recall: the share of expected places (file and line) that some report points at;
//! - type accuracy: of those, the share whose report has the expected bug type;
//! - precision: the share of reports that point at an expected place.

mod parser_fixtures;

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use kubeheal::parse::{Workspace, parse};
use parser_fixtures::{fixtures, project_files, read_log, table};
use serde_json::Value;

fn heldout() -> PathBuf {
    fixtures().join("heldout")
}

/// (file, line) → bug type.
type Places = BTreeMap<(String, u32), String>;

/// A path as a tool printed it, repository-relative: absolute under the copy regenerate.sh ran
/// in, or relative to the package folder the tool ran in.
fn repo_path(path: &str, package: &str) -> String {
    let path = path.strip_prefix("./").unwrap_or(path);
    match path.strip_prefix("/tmp/kubeheal-fixtures/inventory/") {
        Some(rest) => rest.to_owned(),
        None => format!("{package}/{path}"),
    }
}

/// A linter's finding's type as the project types it: a parse failure SYNTAX (INDENTATION when
/// about indentation), a name used but never defined (pyflakes' F821, pylint's E0602, eslint's
/// `no-undef`) IMPORT, like the NameError or ReferenceError it becomes at run time; the rest
/// LINTING.
fn lint_type(syntax: bool, message: &str) -> String {
    lint_type_of(syntax, false, message)
}

fn lint_type_of(syntax: bool, undefined_name: bool, message: &str) -> String {
    if undefined_name {
        "IMPORT"
    } else if !syntax {
        "LINTING"
    } else if message.to_ascii_lowercase().contains("indent") {
        "INDENTATION"
    } else {
        "SYNTAX"
    }
    .to_owned()
}

fn json(name: &str) -> Value {
    let text = std::fs::read_to_string(heldout().join("truth").join(name)).expect("truth file");
    serde_json::from_str(&text).expect("truth is JSON")
}

/// The lint findings each linter itself reported, from its machine-readable output.
fn truth(set: &str) -> Places {
    let mut places = Places::new();
    match set {
        "ruff" => {
            for item in json("ruff.json").as_array().expect("ruff's array") {
                let message = item["message"].as_str().unwrap_or("");
                // ruff names a syntax error `invalid-syntax` (older releases: no code).
                let syntax = item["code"].is_null() || item["code"] == "invalid-syntax";
                let row = item["location"]["row"].as_u64().expect("row") as u32;
                let file = repo_path(item["filename"].as_str().expect("filename"), "svc");
                places.insert((file, row), lint_type_of(syntax, item["code"] == "F821", message));
            }
        }
        "pylint" => {
            for item in json("pylint.json").as_array().expect("pylint's array") {
                let id = item["message-id"].as_str().unwrap_or("");
                let message = item["message"].as_str().unwrap_or("");
                let kind = match id {
                    "E0001" => lint_type(true, message),
                    "E0401" | "E0611" | "E0602" => "IMPORT".to_owned(),
                    _ => "LINTING".to_owned(),
                };
                let line = item["line"].as_u64().expect("line") as u32;
                places.insert((repo_path(item["path"].as_str().expect("path"), "svc"), line), kind);
            }
        }
        "flake8" => {
            let text = std::fs::read_to_string(heldout().join("truth/flake8.txt")).expect("flake8 truth");
            for l in text.lines() {
                let mut parts = l.split('|');
                let (Some(path), Some(row), Some(code)) = (parts.next(), parts.next(), parts.next()) else {
                    continue;
                };
                let kind = lint_type_of(code == "E999", code == "F821", "");
                places.insert((repo_path(path, "svc"), row.parse().expect("row")), kind);
            }
        }
        "eslint" => {
            for file in json("eslint.json").as_array().expect("eslint's array") {
                let path = repo_path(file["filePath"].as_str().expect("filePath"), "ui");
                for m in file["messages"].as_array().expect("messages") {
                    let fatal = m["fatal"].as_bool().unwrap_or(false);
                    let line = m["line"].as_u64().expect("line") as u32;
                    places.insert((path.clone(), line), lint_type_of(fatal, m["ruleId"] == "no-undef", ""));
                }
            }
        }
        other => panic!("no truth for {other}"),
    }
    places
}

#[derive(Default, Debug)]
struct Score {
    expected: usize,
    found: usize,
    typed: usize,
    reports: usize,
    precise: usize,
}

impl Score {
    fn add(&mut self, other: &Score) {
        self.expected += other.expected;
        self.found += other.found;
        self.typed += other.typed;
        self.reports += other.reports;
        self.precise += other.precise;
    }

    fn ratio(a: usize, b: usize) -> f64 {
        if b == 0 { 1.0 } else { a as f64 / b as f64 }
    }

    fn recall(&self) -> f64 {
        Self::ratio(self.found, self.expected)
    }

    fn type_accuracy(&self) -> f64 {
        Self::ratio(self.typed, self.found)
    }

    fn precision(&self) -> f64 {
        Self::ratio(self.precise, self.reports)
    }
}

fn score_case(case: &str, sets: &[String], answers: &Value, workspace: &Workspace) -> (Score, Vec<String>) {
    let mut expected = Places::new();
    for set in sets {
        match answers["sets"].get(set) {
            Some(list) => {
                for a in list.as_array().expect("an answer list") {
                    let place = (
                        a["file"].as_str().expect("file").to_owned(),
                        a["line"].as_u64().expect("line") as u32,
                    );
                    expected.insert(place, a["type"].as_str().expect("type").to_owned());
                }
            }
            None => expected.extend(truth(set)),
        }
    }
    let log = read_log(&heldout().join("logs"), case);
    let parsed = parse(&log, workspace);
    let mut notes = Vec::new();
    let reported: BTreeSet<(String, u32)> = parsed
        .reports
        .iter()
        .map(|r| (r.file_path.clone(), r.line_number))
        .collect();
    let mut score = Score {
        expected: expected.len(),
        reports: reported.len(),
        ..Score::default()
    };
    for ((file, line), kind) in &expected {
        let at: Vec<_> = parsed
            .reports
            .iter()
            .filter(|r| &r.file_path == file && r.line_number == *line)
            .collect();
        if at.is_empty() {
            notes.push(format!("missed {file}:{line} {kind}"));
            continue;
        }
        score.found += 1;
        let types: Vec<String> = at
            .iter()
            .map(|r| {
                serde_json::to_value(r.error_type)
                    .expect("type")
                    .as_str()
                    .unwrap_or("")
                    .to_owned()
            })
            .collect();
        if types.contains(kind) {
            score.typed += 1;
        } else {
            notes.push(format!("{file}:{line} typed {types:?}, expected {kind}"));
        }
    }
    for place in &reported {
        if expected.contains_key(place) {
            score.precise += 1;
        } else {
            notes.push(format!("extra report at {}:{}", place.0, place.1));
        }
    }
    (score, notes)
}

#[test]
fn figures_on_logs_the_parser_was_not_tailored_to() {
    let answers: Value =
        serde_json::from_str(&std::fs::read_to_string(heldout().join("answers.json")).expect("answers.json"))
            .expect("answers are JSON");
    let cases = table(
        &std::fs::read_to_string(heldout().join("cases")).expect("the held-out cases"),
        &heldout().join("projects"),
    );
    assert!(cases.len() >= 25, "only {} held-out cases", cases.len());
    let workspace = Workspace::new("/tmp/kubeheal-fixtures/inventory")
        .with_files(project_files(&heldout().join("projects/inventory")));
    let mut total = Score::default();
    println!("{:<20} {:>8} {:>8} {:>9}", "case", "recall", "type", "precision");
    for case in cases.keys() {
        let sets: Vec<String> = answers["cases"][case]
            .as_array()
            .unwrap_or_else(|| panic!("no answers for {case}"))
            .iter()
            .map(|s| s.as_str().expect("a set name").to_owned())
            .collect();
        let (score, notes) = score_case(case, &sets, &answers, &workspace);
        println!(
            "{case:<20} {:>8.3} {:>8.3} {:>9.3}",
            score.recall(),
            score.type_accuracy(),
            score.precision()
        );
        for note in notes {
            println!("    {note}");
        }
        total.add(&score);
    }
    println!(
        "{:<20} {:>8.3} {:>8.3} {:>9.3}   ({} expected places, {} reports)",
        "all",
        total.recall(),
        total.type_accuracy(),
        total.precision(),
        total.expected,
        total.reports
    );
    // The targets.
    assert!(total.recall() >= 0.95, "recall {:.3}", total.recall());
    assert!(
        total.type_accuracy() >= 0.95,
        "type accuracy {:.3}",
        total.type_accuracy()
    );
    assert!(total.precision() >= 0.95, "precision {:.3}", total.precision());
}
