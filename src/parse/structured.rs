//! Structured output: cargo's and mypy's JSON lines, JSON arrays (ruff, eslint, pylint), jest's
//! `--json` report, and JUnit XML (pytest `--junitxml`, jest-junit, go-junit-report). A document
//! spread over many lines is collected (up to a bound) and read when it is complete; the failure
//! text inside a JUnit test case or a jest result is parsed like a log of its own.

use std::borrow::Cow;

use quick_xml::events::Event;
use serde_json::Value;

use super::js::{eslint_finding, js_type};
use super::lint::{mypy_type, pylint_type};
use super::rust::{lint_type_for_syntax_message, rustc_type};
use super::{Finding, Parser, Rank, Sink, TestOutcome};

/// Largest structured document collected; a larger one is dropped, not read.
const MAX_DOCUMENT: usize = 64 * 1024 * 1024;

enum Collecting {
    None,
    JsonArray(String),
    /// `end` is the closing tag of the document's root, once seen.
    Xml {
        text: String,
        end: Option<&'static str>,
    },
}

pub(crate) struct Structured {
    collecting: Collecting,
}

impl Default for Structured {
    fn default() -> Self {
        Structured {
            collecting: Collecting::None,
        }
    }
}

impl Structured {
    /// Takes the line when it belongs to a structured document; `false` lets the text formats
    /// look at it.
    pub fn line(&mut self, line: &str, sink: &mut Sink<'_>) -> bool {
        match &mut self.collecting {
            Collecting::JsonArray(text) => {
                push_bounded(text, line);
                if line.trim_end() == "]" {
                    let text = std::mem::take(text);
                    self.collecting = Collecting::None;
                    json_array(&text, sink);
                }
                return true;
            }
            Collecting::Xml { text, end } => {
                push_bounded(text, line);
                let trimmed = line.trim();
                if end.is_none() {
                    *end = root_end(trimmed);
                }
                if end.is_some_and(|e| trimmed.ends_with(e)) {
                    let text = std::mem::take(text);
                    self.collecting = Collecting::None;
                    junit(&text, sink);
                }
                return true;
            }
            Collecting::None => {}
        }
        let Some(&first) = line.as_bytes().first() else {
            return false;
        };
        match first {
            b'{' if line.starts_with("{\"reason\":") => {
                cargo_message(line, sink);
                true
            }
            b'{' if line.starts_with("{\"file\": ") => {
                mypy_json(line, sink);
                true
            }
            b'{' if line.starts_with("{\"numFailedTestSuites\"") => {
                jest_json(line, sink);
                true
            }
            b'[' if line.trim_end() == "[" => {
                self.collecting = Collecting::JsonArray(format!("{line}\n"));
                true
            }
            b'[' if line.starts_with("[{") && line.trim_end().ends_with(']') => {
                json_array(line, sink);
                true
            }
            b'<' if line.starts_with("<?xml") || line.starts_with("<testsuites") || line.starts_with("<testsuite") => {
                let end = root_end(line);
                let mut text = String::new();
                push_bounded(&mut text, line);
                if end.is_some_and(|e| line.trim_end().ends_with(e)) {
                    junit(&text, sink);
                } else {
                    self.collecting = Collecting::Xml { text, end };
                }
                true
            }
            _ => false,
        }
    }

    /// A document still open at the end of the log is read as far as it goes.
    pub fn finish(&mut self, sink: &mut Sink<'_>) {
        match std::mem::replace(&mut self.collecting, Collecting::None) {
            Collecting::JsonArray(text) => json_array(&text, sink),
            Collecting::Xml { text, .. } => junit(&text, sink),
            Collecting::None => {}
        }
    }
}

/// The closing tag of a JUnit document whose root element opens in `line`.
fn root_end(line: &str) -> Option<&'static str> {
    if line.contains("<testsuites") {
        Some("</testsuites>")
    } else if line.contains("<testsuite") {
        Some("</testsuite>")
    } else {
        None
    }
}

fn push_bounded(text: &mut String, line: &str) {
    if text.len() + line.len() < MAX_DOCUMENT {
        text.push_str(line);
        text.push('\n');
    }
}

fn str_of<'v>(v: &'v Value, key: &str) -> &'v str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

fn u32_of(v: &Value, key: &str) -> u32 {
    v.get(key)
        .and_then(Value::as_u64)
        .map_or(1, |n| n.clamp(1, u64::from(u32::MAX)) as u32)
}

fn cargo_message(line: &str, sink: &mut Sink<'_>) {
    let Ok(v) = serde_json::from_str::<Value>(line) else {
        return;
    };
    if str_of(&v, "reason") != "compiler-message" {
        return;
    }
    let message = &v["message"];
    let level = str_of(message, "level");
    if level != "error" && level != "warning" {
        return;
    }
    let text = str_of(message, "message");
    if text.starts_with("aborting due to") || text.contains("warnings emitted") || text.contains("warning emitted") {
        return;
    }
    let code = message.get("code").and_then(|c| c.get("code")).and_then(Value::as_str);
    let Some(spans) = message.get("spans").and_then(Value::as_array) else {
        return;
    };
    let Some(span) = spans
        .iter()
        .find(|s| s["is_primary"] == Value::Bool(true))
        .or(spans.first())
    else {
        return;
    };
    let (error_type, rank) = rustc_type(level, code, text);
    let rendered = match code {
        Some(code) => format!("{level}[{code}]: {text}"),
        None => format!("{level}: {text}"),
    };
    sink.report(Finding {
        file: str_of(span, "file_name"),
        line: u32_of(span, "line_start"),
        error_type,
        message: Cow::Owned(rendered),
        test: None,
        confidence: 1.0,
        rank,
    });
}

fn mypy_json(line: &str, sink: &mut Sink<'_>) {
    let Ok(v) = serde_json::from_str::<Value>(line) else {
        return;
    };
    if str_of(&v, "severity") == "note" {
        return;
    }
    let message = str_of(&v, "message");
    let code = str_of(&v, "code");
    sink.report(Finding {
        file: str_of(&v, "file"),
        line: u32_of(&v, "line"),
        error_type: mypy_type(code, message),
        message: Cow::Owned(format!("error: {message}  [{code}]")),
        test: None,
        confidence: 1.0,
        rank: Rank::Error,
    });
}

/// ruff, eslint and pylint JSON arrays, told apart by their fields.
fn json_array(text: &str, sink: &mut Sink<'_>) {
    let Ok(Value::Array(items)) = serde_json::from_str::<Value>(text) else {
        return;
    };
    for item in &items {
        if let Some(messages) = item.get("messages").and_then(Value::as_array) {
            // eslint
            let file = str_of(item, "filePath");
            for m in messages {
                let fatal = m.get("fatal") == Some(&Value::Bool(true));
                let finding = eslint_finding(
                    file,
                    u32_of(m, "line"),
                    str_of(m, "message"),
                    str_of(m, "ruleId"),
                    fatal,
                    1.0,
                );
                sink.report(finding);
            }
        } else if item.get("message-id").is_some() {
            // pylint
            let (id, symbol, message) = (
                str_of(item, "message-id"),
                str_of(item, "symbol"),
                str_of(item, "message"),
            );
            let error_type = pylint_type(id, symbol, message);
            sink.report(Finding {
                file: str_of(item, "path"),
                line: u32_of(item, "line"),
                error_type,
                message: Cow::Owned(format!("{id}: {message} ({symbol})")),
                test: None,
                confidence: 1.0,
                rank: Rank::of(error_type),
            });
        } else if item.get("filename").is_some() {
            // ruff
            let code = item.get("code").and_then(Value::as_str).unwrap_or("invalid-syntax");
            let message = str_of(item, "message");
            let error_type = lint_type_for_syntax_message(code, message);
            sink.report(Finding {
                file: str_of(item, "filename"),
                line: u32_of(&item["location"], "row"),
                error_type,
                message: Cow::Owned(format!("{code} {message}")),
                test: None,
                confidence: 1.0,
                rank: Rank::of(error_type),
            });
        }
    }
}

/// Parses a failure text (a JUnit failure, a jest failure message) as a log of its own and
/// reports its first finding under `test`.
fn failure_text(text: &str, test: &str, pytest: bool, sink: &mut Sink<'_>) -> bool {
    let mut parser = Parser::new(sink.workspace);
    if pytest {
        parser.python.begin_pytest_block();
    }
    for line in text.lines() {
        parser.line(line);
    }
    let found = parser.finish();
    let Some(first) = found.reports.into_iter().next() else {
        return false;
    };
    sink.report(Finding {
        file: &first.file_path,
        line: first.line_number,
        error_type: first.error_type,
        message: Cow::Owned(first.message),
        test: Some(test),
        confidence: first.confidence_score.unwrap_or(0.9),
        rank: Rank::of(first.error_type),
    })
    .is_some()
}

fn jest_json(line: &str, sink: &mut Sink<'_>) {
    let Ok(v) = serde_json::from_str::<Value>(line) else {
        return;
    };
    sink.summary.runner_summary_seen = true;
    let Some(results) = v.get("testResults").and_then(Value::as_array) else {
        return;
    };
    for suite in results {
        let assertions = suite
            .get("assertionResults")
            .and_then(Value::as_array)
            .map_or(&[][..], Vec::as_slice);
        for a in assertions {
            let name = str_of(a, "fullName");
            let outcome = match str_of(a, "status") {
                "passed" => TestOutcome::Passed,
                "failed" => TestOutcome::Failed,
                _ => TestOutcome::Skipped,
            };
            match outcome {
                TestOutcome::Passed => sink.summary.passed += 1,
                TestOutcome::Failed => sink.summary.failed += 1,
                _ => sink.summary.skipped += 1,
            }
            sink.test(name, outcome);
            if outcome == TestOutcome::Failed {
                let messages: Vec<&str> = a
                    .get("failureMessages")
                    .and_then(Value::as_array)
                    .map(|m| m.iter().filter_map(Value::as_str).collect())
                    .unwrap_or_default();
                failure_text(&messages.join("\n"), name, false, sink);
            }
        }
        if assertions.is_empty() && str_of(suite, "status") == "failed" {
            let message = str_of(suite, "message");
            let mut parser = Parser::new(sink.workspace);
            for l in message.lines() {
                parser.line(l);
            }
            for r in parser.finish().reports {
                sink.report(Finding {
                    file: &r.file_path,
                    line: r.line_number,
                    error_type: r.error_type,
                    message: Cow::Owned(r.message),
                    test: None,
                    confidence: r.confidence_score.unwrap_or(0.9),
                    rank: Rank::Error,
                });
            }
        }
    }
}

#[derive(Default)]
struct Case {
    classname: String,
    name: String,
    file: Option<String>,
    line: Option<u32>,
    outcome: Option<TestOutcome>,
    text: String,
}

/// JUnit XML, as pytest, jest-junit and go-junit-report write it.
fn junit(text: &str, sink: &mut Sink<'_>) {
    let mut reader = quick_xml::Reader::from_str(text);
    let mut pytest = false;
    let mut case: Option<Case> = None;
    let mut in_failure = false;
    sink.summary.runner_summary_seen = true;
    // A malformed document is read as far as it is well-formed.
    while let Ok(event) = reader.read_event() {
        match event {
            Event::Start(e) | Event::Empty(e) if e.name().0 == "testsuite" => {
                pytest |= attr(&e, "name").as_deref() == Some("pytest");
            }
            Event::Start(ref e) if e.name().0 == "testcase" => {
                case = Some(new_case(e));
            }
            Event::Empty(ref e) if e.name().0 == "testcase" => {
                let mut c = new_case(e);
                c.outcome = Some(TestOutcome::Passed);
                finish_case(c, pytest, sink);
            }
            Event::Start(ref e) | Event::Empty(ref e) if matches!(e.name().0, "failure" | "error" | "skipped") => {
                if let Some(c) = case.as_mut() {
                    c.outcome = Some(match e.name().0 {
                        "failure" => TestOutcome::Failed,
                        "error" => TestOutcome::Error,
                        _ => TestOutcome::Skipped,
                    });
                    if let Some(message) = attr(e, "message") {
                        c.text.push_str(&message);
                        c.text.push('\n');
                    }
                    in_failure = matches!(event, Event::Start(_)) && e.name().0 != "skipped";
                }
            }
            Event::Text(t) if in_failure => {
                if let Some(c) = case.as_mut() {
                    c.text.push_str(&t.xml10_content());
                }
            }
            Event::CData(t) if in_failure => {
                if let Some(c) = case.as_mut() {
                    c.text.push_str(&t.into_inner());
                }
            }
            Event::GeneralRef(r) if in_failure => {
                if let Some(c) = case.as_mut() {
                    if let Ok(Some(ch)) = r.resolve_char_ref() {
                        c.text.push(ch);
                    } else if let Some(ch) = predefined_entity(&r.into_inner()) {
                        c.text.push(ch);
                    }
                }
            }
            Event::End(e) if matches!(e.name().0, "failure" | "error") => in_failure = false,
            Event::End(e) if e.name().0 == "testcase" => {
                if let Some(mut c) = case.take() {
                    c.outcome.get_or_insert(TestOutcome::Passed);
                    finish_case(c, pytest, sink);
                }
            }
            Event::Eof => break,
            _ => {}
        }
    }
}

fn attr(e: &quick_xml::events::BytesStart<'_>, key: &str) -> Option<String> {
    e.attributes().flatten().find(|a| a.key.0 == key).and_then(|a| {
        a.normalized_value(quick_xml::XmlVersion::Implicit1_0)
            .ok()
            .map(|v| v.into_owned())
    })
}

fn predefined_entity(name: &str) -> Option<char> {
    match name {
        "quot" => Some('"'),
        "amp" => Some('&'),
        "lt" => Some('<'),
        "gt" => Some('>'),
        "apos" => Some('\''),
        _ => None,
    }
}

fn new_case(e: &quick_xml::events::BytesStart<'_>) -> Case {
    Case {
        classname: attr(e, "classname").unwrap_or_default(),
        name: attr(e, "name").unwrap_or_default(),
        file: attr(e, "file"),
        line: attr(e, "line").and_then(|l| l.parse().ok()),
        ..Case::default()
    }
}

fn finish_case(c: Case, pytest: bool, sink: &mut Sink<'_>) {
    let name = test_name(&c, pytest);
    let outcome = c.outcome.unwrap_or(TestOutcome::Passed);
    match outcome {
        TestOutcome::Passed => sink.summary.passed += 1,
        TestOutcome::Failed => sink.summary.failed += 1,
        TestOutcome::Error => sink.summary.errors += 1,
        TestOutcome::Skipped => sink.summary.skipped += 1,
    }
    sink.test(&name, outcome);
    if !matches!(outcome, TestOutcome::Failed | TestOutcome::Error) {
        return;
    }
    if failure_text(&c.text, &name, pytest, sink) {
        return;
    }
    if let (Some(file), Some(line)) = (c.file.as_deref(), c.line) {
        let message = c.text.lines().next().unwrap_or("test failed").to_owned();
        sink.report(Finding {
            file,
            line,
            error_type: js_type(&message),
            message: Cow::Owned(message),
            test: Some(&name),
            confidence: 0.8,
            rank: Rank::Error,
        });
    }
}

/// The test's name in its runner's own notation: a pytest node id, or the case name.
fn test_name(c: &Case, pytest: bool) -> String {
    if !pytest || c.classname.is_empty() {
        return c.name.clone();
    }
    if let Some(file) = &c.file {
        return format!("{file}::{}", c.name);
    }
    // `tests.test_x.TestClass` → `tests/test_x.py::TestClass::name`: segments that start with an
    // upper-case letter are classes.
    let segments: Vec<&str> = c.classname.split('.').collect();
    let split = segments
        .iter()
        .position(|s| s.starts_with(|ch: char| ch.is_ascii_uppercase()))
        .unwrap_or(segments.len());
    let mut id = format!("{}.py", segments[..split].join("/"));
    for class in &segments[split..] {
        id.push_str("::");
        id.push_str(class);
    }
    format!("{id}::{}", c.name)
}
