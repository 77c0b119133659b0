//! Structured output: cargo's and mypy's JSON lines, JSON arrays (ruff, eslint, pylint), jest's
//! `--json` report, and JUnit XML (pytest `--junitxml`, jest-junit, go-junit-report).
//!
//! A document spread over many lines (or over one very long line) is read as it arrives, in
//! bounded memory: a JSON document by [`JsonStream`], which cuts out one array element or jest test
//! result at a time, a JUnit document by [`XmlStream`] and quick-xml, one construct at a time,
//! keeping only the current test case's failure text. The failure text inside a JUnit test case or
//! a jest result is parsed like a log of its own.
//!
//! A line that only looks like the start of a document (`[` alone, `<testsuite` in prose, an
//! array that never ends) must not hide the log after it: the lines a document takes are held
//! back (up to [`MAX_HELD`] bytes) until a piece of the document is complete, and as soon as the
//! text stops being the document — it is not JSON, or it is text where JUnit has elements — the
//! document is given up and the lines held back go to the text formats, as if it had never begun.

use std::borrow::Cow;

use quick_xml::events::{BytesEnd, Event};
use serde::Deserialize;
use serde_json::Value;

use super::js::{eslint_finding, js_type};
use super::json_item::{self, EslintMessage, Item, JestAssertion};
use super::json_stream::{JsonStream, Piece, Role, Shape, Status, Tag};
use super::lint::{mypy_type, pylint_type, pyright_finding};
use super::rust::{lint_finding_type, names_the_expected_type, report_expected_type, rustc_type};
use super::xml_stream::{Flow, XmlPiece, XmlStream};
use super::{Finding, MAX_REPORTS, Parser, Rank, Sink, TEST_FRAME_CONFIDENCE, TestOutcome};
use crate::api::shared::{BugReport, ErrorType};

/// Most reports one structured document adds, so that a huge lint report leaves room for the
/// failures after it.
pub const MAX_DOCUMENT_REPORTS: usize = MAX_REPORTS / 2;
/// Most lint findings one structured document adds: a quarter of its bound stays for its errors,
/// wherever in the document they come (pylint's JSON lists by file, an error after a hundred
/// conventions).
pub const MAX_DOCUMENT_WARNINGS: usize = MAX_DOCUMENT_REPORTS * 3 / 4;
/// Most bytes of log lines a document holds back before a piece of it (an array element, a test
/// case) is complete. A JSON document past it goes on (its element is too long to read anyway);
/// a JUnit document past it is given up, since XML text can take any line.
pub const MAX_HELD: usize = 4 * 1024 * 1024;
/// Most bytes of a one-line JSON record read ([`single_line`]): cargo's message carries its error
/// code's whole explanation and rendered text (E0277's is 10 KB), libtest's event a failed test's
/// output. A longer record is not read.
const MAX_RECORD: usize = 1024 * 1024;
/// Deepest element nesting of a JUnit document.
const MAX_XML_DEPTH: usize = 64;
/// Failure text kept of one test case: its start and its end (where pytest puts the location).
const MAX_CASE_HEAD: usize = 64 * 1024;
const MAX_CASE_TAIL: usize = 64 * 1024;

/// A document being read.
enum Reading {
    /// A JSON array of findings, or a report object with a list of findings (SARIF, rdjson,
    /// pylint `json2`): each element goes to [`array_item`].
    JsonArray(JsonStream),
    Jest(JsonStream, JestSuite),
    Junit(XmlStream, Junit),
}

/// What a piece of a document asks of the reader.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    Go,
    /// A piece of the document is complete: the lines held back so far belong to it.
    Commit,
    /// The document is complete.
    Done,
    /// The text is not the document it looked like.
    GiveUp,
}

struct Doc {
    reading: Reading,
    /// The lines taken since the last commit, each ended by `\n`; the current one starts at
    /// `current`.
    held: String,
    current: usize,
    /// The document began on the current line.
    began_here: bool,
    /// A piece of the document was completed on the current line.
    committed_here: bool,
    /// The sink's report count when the document began.
    reports_at_start: usize,
    /// The sink's count of lint reports when the document began.
    warnings_at_start: usize,
}

/// A document given up: its held-back lines go to the text formats.
pub(crate) struct GaveUp {
    /// The lines before the current one, each ended by `\n`.
    pub before: String,
    /// The current line.
    pub current: String,
    /// The document gave up before the rest of the current line was read, and did not begin on
    /// it: the line may begin another document.
    pub restart: bool,
}

#[derive(Default)]
pub(crate) struct Structured {
    doc: Option<Doc>,
    gave_up: Option<GaveUp>,
    /// What follows a document's end on the line it ended on (at most [`super::clean::MAX_LINE`]
    /// bytes): another tool's output, when a tool wrote its document without a final newline
    /// (`cat report.xml; ruff check .`). It is read as a line of its own.
    after_end: Option<String>,
    /// A one-line JSON record being read, and its reader: the line's first bytes and the rest as
    /// it comes, read when the line ends (a record longer than [`super::clean::MAX_LINE`] is
    /// whole only then).
    record: Option<(RecordReader, String)>,
}

impl Structured {
    /// Offers the first [`super::clean::MAX_LINE`] bytes of a line (cleaned): `true` when a
    /// structured document took it. A document given up on it leaves a [`GaveUp`] to take.
    pub fn begin_line(&mut self, line: &str, sink: &mut Sink<'_>) -> bool {
        self.after_end = None;
        let json_open = self
            .doc
            .as_ref()
            .is_some_and(|d| !matches!(d.reading, Reading::Junit(..)));
        if self.doc.is_some() && (starts_document(line) || (json_open && line.starts_with("{\""))) {
            // A new document where the open one has no business (a truncated report, then the
            // next tool's): the open one ends here, read as far as it went. A pretty-printed JSON
            // document indents what it holds, so `{"` at column 0 inside one is the next tool's
            // one-line JSON record (mypy's, cargo's).
            self.end_truncated(sink);
            return true;
        }
        if let Some(doc) = self.doc.as_mut() {
            doc.began_here = false;
            doc.committed_here = false;
            if doc.held.len() + line.len() >= MAX_HELD {
                if matches!(doc.reading, Reading::Junit(..)) {
                    self.hold(line);
                    self.give_up(true);
                    return true;
                }
                doc.held.clear();
            }
            self.hold(line);
            self.feed(line, true, sink);
            return true;
        }
        let Some(&first) = line.as_bytes().first() else {
            return false;
        };
        if let Some(read) = record_reader(line) {
            self.record = Some((read, line.to_owned()));
            return true;
        }
        let reading = match first {
            // A report object (SARIF, rdjson, pylint `json2`), pretty-printed: `{` alone.
            b'{' if line.trim_end() == "{" || starts_report(line) => Reading::JsonArray(JsonStream::new(Shape::Report)),
            // jest's `--json` report, and vitest's (`--reporter=json`, the same shape).
            b'{' if line.starts_with("{\"numFailedTestSuites\"") || line.starts_with("{\"numTotalTestSuites\"") => {
                sink.summary.runner_summary_seen = true;
                Reading::Jest(JsonStream::new(Shape::Jest), JestSuite::default())
            }
            b'[' if line.trim_end() == "[" || line.starts_with("[{") => {
                Reading::JsonArray(JsonStream::new(Shape::Array))
            }
            b'<' if line.starts_with("<?xml") || line.starts_with("<testsuite") || line.starts_with("<checkstyle") => {
                Reading::Junit(XmlStream::default(), Junit::default())
            }
            _ => return false,
        };
        self.doc = Some(Doc {
            reading,
            held: String::new(),
            current: 0,
            began_here: true,
            committed_here: false,
            reports_at_start: sink.report_count(),
            warnings_at_start: sink.warning_count(),
        });
        self.hold(line);
        self.feed(line, true, sink);
        true
    }

    /// Whether no document is open: then a line that cannot start one is not this reader's (what
    /// a document leaves behind, given up or after its end, is always taken on the line it came).
    pub fn between_documents(&self) -> bool {
        debug_assert!(self.gave_up.is_none() && self.after_end.is_none());
        self.doc.is_none()
    }

    /// Whether the rest of a line longer than [`super::clean::MAX_LINE`] is wanted.
    pub fn wants_rest(&self) -> bool {
        self.doc.is_some()
            || self.record.is_some()
            || self
                .after_end
                .as_ref()
                .is_some_and(|t| t.len() < super::clean::MAX_LINE)
    }

    /// The rest of a long line, in one or more pieces, after [`Structured::begin_line`].
    pub fn rest(&mut self, piece: &str, sink: &mut Sink<'_>) {
        if self.doc.is_none() {
            if let Some((_, record)) = self.record.as_mut() {
                if record.len() + piece.len() > MAX_RECORD {
                    // Past the bound, a record is not read: the rest of its line is not wanted.
                    self.record = None;
                } else {
                    record.push_str(piece);
                }
            } else if let Some(tail) = self.after_end.as_mut() {
                push_bounded(tail, piece);
            }
            return;
        }
        self.feed(piece, false, sink);
    }

    /// The text after a document's end on the line just read, if there is any.
    pub fn take_after_end(&mut self) -> Option<String> {
        self.after_end.take().filter(|t| !t.trim().is_empty())
    }

    /// The end of the line.
    pub fn end_line(&mut self, sink: &mut Sink<'_>) {
        if let Some((read, record)) = self.record.take() {
            read(&record, sink);
        }
        self.feed("\n", false, sink);
        let Some(doc) = self.doc.as_mut() else {
            return;
        };
        if matches!(doc.reading, Reading::Jest(..)) {
            // jest writes its report on one line: what it held is all there is.
            self.doc = None;
        } else if doc.committed_here {
            doc.held.clear();
            doc.current = 0;
        }
    }

    /// A document given up on the line just offered, if any.
    pub fn take_gave_up(&mut self) -> Option<GaveUp> {
        self.gave_up.take()
    }

    /// A document still open at the end of the log is read as far as it went; returns the lines
    /// it held back, for the text formats.
    pub fn finish(&mut self, sink: &mut Sink<'_>) -> Option<String> {
        let doc = self.doc.take()?;
        if let Reading::Junit(_, junit) = &doc.reading
            && junit.root_seen
        {
            sink.summary.runner_summary_seen = true;
        }
        Some(doc.held)
    }

    /// Ends the open document before the current line, which the reader offers again: the lines
    /// it held back go to the text formats, as at the end of the log.
    fn end_truncated(&mut self, sink: &mut Sink<'_>) {
        let Some(doc) = self.doc.take() else {
            return;
        };
        if let Reading::Junit(_, junit) = &doc.reading
            && junit.root_seen
        {
            sink.summary.runner_summary_seen = true;
        }
        self.gave_up = Some(GaveUp {
            before: doc.held,
            current: String::new(),
            restart: true,
        });
    }

    fn hold(&mut self, line: &str) {
        if let Some(doc) = self.doc.as_mut() {
            doc.current = doc.held.len();
            doc.held.push_str(line);
            doc.held.push('\n');
        }
    }

    fn give_up(&mut self, in_first_bytes: bool) {
        let Some(mut doc) = self.doc.take() else {
            return;
        };
        let mut current = doc.held.split_off(doc.current);
        current.pop();
        self.gave_up = Some(GaveUp {
            before: doc.held,
            current,
            restart: in_first_bytes && !doc.began_here,
        });
    }

    /// Feeds text of the current line to the document.
    fn feed(&mut self, text: &str, in_first_bytes: bool, sink: &mut Sink<'_>) {
        let Some(doc) = self.doc.as_mut() else {
            return;
        };
        let start = doc.reports_at_start;
        sink.warnings_bound = Some(doc.warnings_at_start + MAX_DOCUMENT_WARNINGS);
        let mut step = Step::Go;
        let mut committed = false;
        let unread = match &mut doc.reading {
            Reading::JsonArray(stream) => {
                let status = stream.feed(text, &mut |piece| {
                    if let Piece::Value(tag @ (Tag::Item | Tag::VetFinding), item) = piece {
                        if !room(sink, start) {
                            sink.leave_out(1);
                        } else if tag == Tag::VetFinding {
                            vet_finding(item, sink);
                        } else if let Some(item) = json_item::read(item) {
                            array_item(&item, start, sink);
                        }
                    }
                    committed |= matches!(piece, Piece::Value(..) | Piece::Oversize(_));
                });
                step = json_step(status);
                stream.unread()
            }
            Reading::Jest(stream, suite) => {
                let status = stream.feed(text, &mut |piece| suite.piece(piece, start, sink));
                step = json_step(status);
                stream.unread()
            }
            Reading::Junit(stream, junit) => {
                stream.feed(text, &mut |piece| {
                    step = junit.piece(piece, start, sink);
                    committed |= step == Step::Commit;
                    match step {
                        Step::Go | Step::Commit => Flow::More,
                        Step::Done | Step::GiveUp => Flow::Stop,
                    }
                });
                // A JUnit document is a test run's summary; Checkstyle's is a linter's.
                if step == Step::Done && junit.checkstyle.is_none() {
                    sink.summary.runner_summary_seen = true;
                }
                stream.unread()
            }
        };
        sink.warnings_bound = None;
        if committed {
            // What came before this line belongs to the document; this line may still be given up.
            doc.held.drain(..doc.current);
            doc.current = 0;
            doc.committed_here = true;
        }
        match step {
            Step::Go | Step::Commit => {}
            Step::Done => {
                self.doc = None;
                let mut tail = String::new();
                push_bounded(&mut tail, &text[text.len() - unread.min(text.len())..]);
                self.after_end = Some(tail);
            }
            Step::GiveUp => self.give_up(in_first_bytes),
        }
    }
}

/// The formats with one JSON record per line (cargo's and mypy's messages, ruff's `json-lines`):
/// `true` when the line was one. Also read in lines a document held back and gave up.
pub(crate) fn single_line(line: &str, sink: &mut Sink<'_>) -> bool {
    let Some(read) = record_reader(line) else {
        return false;
    };
    read(line, sink);
    true
}

/// What reads one tool's one-line JSON record ([`record_reader`]).
type RecordReader = fn(&str, &mut Sink<'_>);

/// The reader of a one-line JSON record, by how the record starts (each tool writes its first
/// key first).
fn record_reader(line: &str) -> Option<RecordReader> {
    if !line.starts_with('{') {
        return None;
    }
    let read: RecordReader = if line.starts_with("{\"reason\":") {
        cargo_message
    } else if line.starts_with("{\"file\": ") {
        mypy_json
    } else if line.starts_with("{\"code\":") {
        staticcheck_json
    } else if line.starts_with("{ \"type\": \"test\"") || line.starts_with("{\"type\":\"test\"") {
        // libtest's own spacing, and nextest's compact form of the same events.
        libtest_event
    } else if line.starts_with("{\"cell\":") {
        // ruff `json-lines` (ruff sorts keys, `cell` comes first).
        ruff_json_line
    } else {
        return None;
    };
    Some(read)
}

fn ruff_json_line(line: &str, sink: &mut Sink<'_>) {
    if let Some(item) = json_item::read(line) {
        array_item(&item, sink.report_count(), sink);
    }
}

/// A test's event in libtest's JSON (`cargo test -- -Z unstable-options --format json`, which
/// nextest and IDEs use too): `{ "type": "test", "name": "m::t", "event": "failed", "stdout":
/// "thread 'm::t' panicked at src/lib.rs:403:9: ..." }`. A failed test's captured output is its
/// failure text, as a JUnit case's is; `ok` and `ignored` record the test's outcome.
fn libtest_event(line: &str, sink: &mut Sink<'_>) {
    #[derive(Deserialize)]
    struct Event<'a> {
        #[serde(borrow)]
        name: Cow<'a, str>,
        #[serde(borrow)]
        event: Cow<'a, str>,
        #[serde(borrow, default)]
        stdout: Option<Cow<'a, str>>,
    }
    let Ok(event) = serde_json::from_str::<Event>(line) else {
        return;
    };
    match event.event.as_ref() {
        "failed" => failed_test(&event.name, event.stdout.as_deref().unwrap_or(""), sink),
        "ok" => sink.test(&event.name, TestOutcome::Passed),
        "ignored" => sink.test(&event.name, TestOutcome::Skipped),
        _ => {}
    }
}

/// Whether a line at column 0 can only be the start of a document: an XML declaration, a JUnit
/// root, a one-line JSON array or report, or the `[` / `{` a pretty-printer puts alone on the
/// first line (it indents everything inside). Inside an open document, such a line means that
/// document was cut short.
fn starts_document(line: &str) -> bool {
    let trimmed = line.trim_end();
    line.starts_with("<?xml")
        || line.starts_with("<testsuites")
        || line.starts_with("<checkstyle")
        || trimmed == "["
        || trimmed == "{"
        || line.starts_with("[{")
        || line.starts_with("{\"numFailedTestSuites\"")
        || starts_report(line)
}

/// A report object printed on one line: eslint's and others' `{"results":[`, SARIF (golangci-lint
/// prints `{"version":"2.1.0",`, other tools `{"$schema":`), golangci-lint's `{"Issues":[`.
fn starts_report(line: &str) -> bool {
    ["{\"results\":[", "{\"Issues\":[", "{\"version\":\"2.", "{\"$schema\":"]
        .iter()
        .any(|start| line.starts_with(start))
}

/// Appends `s` to `text`, which holds at most [`super::clean::MAX_LINE`] bytes (like any line).
fn push_bounded(text: &mut String, s: &str) {
    let room = super::clean::MAX_LINE.saturating_sub(text.len());
    text.push_str(&s[..floor_boundary(s, room)]);
}

fn json_step(status: Status) -> Step {
    match status {
        Status::Open => Step::Go,
        Status::Done => Step::Done,
        Status::Failed => Step::GiveUp,
    }
}

/// Whether a document that began when the sink held `start` reports may add another.
fn room(sink: &Sink<'_>, start: usize) -> bool {
    sink.report_count() < MAX_REPORTS && sink.report_count() - start < MAX_DOCUMENT_REPORTS
}

/// One element of a linter's JSON array (or a ruff `json-lines` record), told apart by its fields.
fn array_item(item: &Item<'_>, start: usize, sink: &mut Sink<'_>) {
    let pylint_id = match &item.message_id.0 {
        Some(id) => id.0.as_deref(),
        None => item.message_id_json2.0.as_ref().and_then(|id| id.0.as_deref()),
    };
    let location = item.location.0.as_ref().and_then(|l| l.0.as_ref());
    if let (Some(title), Some(err)) = (item.full_title.0.as_ref().and_then(|t| t.0.as_deref()), &item.err.0) {
        // mocha: a test that failed has its error's stack, read as the log Node printed.
        let stack = err.stack.text();
        if !stack.is_empty() {
            failed_test(title, stack, sink);
        }
    } else if let Some(messages) = &item.messages.0 {
        // eslint: one element per file, with its messages.
        let file = item.file_path.text();
        let no_fields = EslintMessage::default();
        for (i, m) in messages.iter().enumerate() {
            if !room(sink, start) {
                sink.leave_out(messages.len() - i);
                break;
            }
            let m = m.0.as_ref().unwrap_or(&no_fields);
            let finding = eslint_finding(
                file,
                position(m.line.0),
                m.message.text(),
                m.rule_id.text(),
                m.fatal.0,
                1.0,
            );
            sink.report(finding);
        }
    } else if let Some(scenarios) = &item.elements.0 {
        // Cucumber: one element per feature, with its scenarios and their steps.
        for scenario in scenarios.iter().filter_map(|s| s.0.as_ref()) {
            let steps = scenario.steps.0.iter().flatten().filter_map(|step| step.0.as_ref());
            let results = steps.filter_map(|step| step.result.0.as_ref());
            let outcomes = results.map(|r| (r.status.text(), r.error_message.text()));
            cucumber_scenario(scenario.name.text(), outcomes, start, sink);
        }
    } else if let Some(id) = pylint_id {
        // pylint `json` (`message-id`) and `json2` (`messageId`)
        let (symbol, message) = (item.symbol.text(), item.message.0.string.text());
        let error_type = pylint_type(id, symbol, message);
        sink.report(Finding {
            file: item.path.text(),
            line: position(item.line.0),
            error_type,
            message: Cow::Owned(format!("{id}: {message} ({symbol})")),
            test: None,
            confidence: 1.0,
            rank: Rank::of(error_type),
            diagnostic: true,
        });
    } else if let Some(linter) = &item.from_linter.0 {
        // golangci-lint's `json`: `{"FromLinter": ..., "Text": ..., "Pos": {"Filename", "Line"}}`;
        // the compiler's errors come as the `typecheck` linter's.
        let linter = linter.text();
        let place = item.pos.0.as_ref().and_then(|p| p.0.as_ref());
        let file = place.map_or("", |p| p.filename.text());
        let line = position(place.and_then(|p| p.line.0));
        go_linter_item(file, line, linter, item.text.text(), sink);
    } else if let Some(locations) = &item.locations.0 {
        // A SARIF result: its first location, when that names a physical one.
        let Some(physical) = locations
            .first()
            .and_then(|l| l.0.as_ref())
            .and_then(|l| l.physical_location.0.as_ref())
        else {
            return;
        };
        let physical = physical.0.as_ref();
        let line = position(physical.and_then(|p| p.region.0.as_ref()).and_then(|r| r.start_line.0));
        let file = physical
            .and_then(|p| p.artifact_location.0.as_ref())
            .map_or("", |a| a.uri.text());
        let (rule, message) = (item.rule_id.text(), item.message.0.inner.text());
        if rule == "typecheck" {
            go_linter_item(file, line, rule, message, sink);
        } else {
            lint_item(file, line, rule, message, sink);
        }
    } else if let Some(location) = location.filter(|l| l.range.0.is_some()) {
        // reviewdog's rdjson diagnostic.
        let code = item.code.0.as_ref().map_or("", |c| c.0.inner.text());
        let line = position(line_of(location.range.0.as_ref().and_then(|r| r.0.as_ref())));
        lint_item(location.path.text(), line, code, item.message.0.string.text(), sink);
    } else if let Some(check) = item.check_name.0.as_deref() {
        // GitLab code quality: `location.positions.begin.line` or `location.lines.begin`.
        let line = position(location.and_then(|l| {
            match &l.positions.0 {
                Some(positions) => positions
                    .0
                    .as_ref()
                    .and_then(|p| p.begin.0.as_ref())
                    .and_then(|b| b.line.0),
                None => l.lines.0.as_ref().and_then(|lines| lines.begin.0),
            }
        }));
        let description = item.description.text();
        let message = description
            .strip_prefix(check)
            .and_then(|d| d.strip_prefix(": "))
            .unwrap_or(description);
        let path = location.map_or("", |l| l.path.text());
        code_quality_item(path, line, check, item.severity.text(), message, sink);
    } else if let (Some(range), Some(file)) = (&item.range.0, &item.file.0) {
        // pyright `--outputjson`: lines counted from 0; a message may go on over several lines.
        let level = item.severity.text();
        if matches!(level, "error" | "warning") {
            let message = item.message.0.string.text().lines().next().unwrap_or("");
            let line = line_of(range.0.as_ref()).map_or(1, |n| n.saturating_add(1).min(u64::from(u32::MAX)) as u32);
            sink.report(pyright_finding(file.text(), line, level, message, item.rule.text()));
        }
    } else if let (Some(file), Some(id)) = (&item.filename.0, &item.test_id.0) {
        // bandit `-f json`: `{"filename", "line_number", "test_id", "test_name", "issue_text"}`.
        let code = format!("{} {}", id.text(), item.test_name.text());
        lint_item(
            file.text(),
            position(item.line_number.0),
            code.trim(),
            item.issue_text.text(),
            sink,
        );
    } else if let (Some(file), Some(range)) = (&item.filename.0, &item.range.0) {
        // `deno lint --json`: a `file://` URL, lines counted from 1 (its columns from 0).
        let code = item.code.0.as_ref().map_or("", |c| c.0.string.text());
        let line = position(line_of(range.0.as_ref()));
        lint_item(file.text(), line, code, item.message.0.string.text(), sink);
    } else if let Some(file) = &item.filename.0 {
        // ruff
        let code = item
            .code
            .0
            .as_ref()
            .and_then(|c| c.0.string.0.as_deref())
            .unwrap_or("invalid-syntax");
        let message = item.message.0.string.text();
        let error_type = lint_finding_type(code, message);
        sink.report(Finding {
            file: file.text(),
            line: position(location.and_then(|l| l.row.0)),
            error_type,
            message: Cow::Owned(format!("{code} {message}")),
            test: None,
            confidence: 1.0,
            rank: Rank::of(error_type),
            diagnostic: true,
        });
    }
}

/// A `go vet -json` finding, `{"posn": "/abs/a.go:9:2", "end": ..., "message": ...}`, typed as
/// `go vet`'s text is.
fn vet_finding(text: &str, sink: &mut Sink<'_>) {
    let Ok(finding) = serde_json::from_str::<json_item::VetFinding>(text) else {
        return;
    };
    let (Some(place), Some(message)) = (finding.posn.0.as_deref(), finding.message.0.as_deref()) else {
        return;
    };
    let Some((file, line, _)) = super::split_location(place) else {
        return;
    };
    let (error_type, rank) = super::go::go_type(message);
    sink.report(Finding {
        file,
        line,
        error_type,
        message: Cow::Borrowed(message),
        test: None,
        confidence: 1.0,
        rank,
        diagnostic: true,
    });
}

/// `range.start.line` (reviewdog's and pyright's ranges).
fn line_of(range: Option<&json_item::Range>) -> Option<u64> {
    range.and_then(|r| r.start.0.as_ref()).and_then(|start| start.line.0)
}

/// A Cucumber scenario, from its steps' `(status, error_message)`: a scenario with a failed step
/// failed, and the first failed step's message (the step implementation's traceback or stack) is
/// its failure text, as a JUnit case's is; a scenario whose steps all passed passed.
fn cucumber_scenario<'a>(
    name: &str,
    steps: impl Iterator<Item = (&'a str, &'a str)>,
    start: usize,
    sink: &mut Sink<'_>,
) {
    let mut any = false;
    for (status, message) in steps {
        any = true;
        if status == "failed" {
            sink.test(name, TestOutcome::Failed);
            if !room(sink, start) {
                sink.leave_out(1);
            } else if !failure_text(message, name, false, false, sink) {
                // pytest-bdd's message is pytest's long traceback.
                failure_text(message, name, true, false, sink);
            }
            return;
        }
        if status != "passed" {
            return;
        }
    }
    if any {
        sink.test(name, TestOutcome::Passed);
    }
}

/// A golangci-lint issue (its JSON, SARIF and Checkstyle reports): a linter's finding is
/// LINTING; the `typecheck` linter's are the compiler's errors, typed as go build's are, and a
/// package that does not compile is one issue at its first file's line 1 whose text is the
/// compiler's output (`: # pkg\n./a.go:55:38: undefined: key\n...`): each of its errors is read
/// where it is.
fn go_linter_item(file: &str, line: u32, linter: &str, text: &str, sink: &mut Sink<'_>) {
    let (error_type, rank) = if linter == "typecheck" {
        if text.starts_with(": # ") {
            failure_text(text, "", false, true, sink);
            return;
        }
        super::go::go_type(text)
    } else {
        (ErrorType::Linting, Rank::Warning)
    };
    sink.report(Finding {
        file,
        line,
        error_type,
        message: Cow::Owned(format!("{linter} {text}")),
        test: None,
        confidence: 1.0,
        rank,
        diagnostic: true,
    });
}

/// A GitLab code-quality issue: a type checker's rule named in kebab case on a Python file
/// (ty's) is typed by its name and severity, another check as a linter's code.
fn code_quality_item(path: &str, line: u32, check: &str, severity: &str, message: &str, sink: &mut Sink<'_>) {
    if !(super::ty::is_rule_name(check) && super::ty::is_python_path(path)) {
        lint_item(path, line, check, message, sink);
        return;
    }
    let error = matches!(severity, "major" | "critical" | "blocker");
    let (error_type, rank) = super::ty::rule_type(check, error);
    sink.report(Finding {
        file: path,
        line,
        error_type,
        message: Cow::Owned(format!("{check}: {message}")),
        test: None,
        confidence: 1.0,
        rank,
        diagnostic: true,
    });
}

/// A linter's finding from a format that names its rule: the rule code gives the bug type.
fn lint_item(file: &str, line: u32, code: &str, message: &str, sink: &mut Sink<'_>) {
    let error_type = lint_finding_type(if code.is_empty() { "invalid-syntax" } else { code }, message);
    sink.report(Finding {
        file,
        line,
        error_type,
        message: Cow::Owned(if code.is_empty() {
            message.to_owned()
        } else {
            format!("{code} {message}")
        }),
        test: None,
        confidence: 1.0,
        rank: Rank::of(error_type),
        diagnostic: true,
    });
}

/// A test a CI's own format says failed (TeamCity's `testFailed`), with its failure text: read as
/// a JUnit test case's failure is.
pub(crate) fn failed_test(name: &str, text: &str, sink: &mut Sink<'_>) {
    sink.test(name, TestOutcome::Failed);
    if sink.report_count() < MAX_REPORTS {
        // rustdoc names a doctest `src/lib.rs - f (line 357)`, and its panic's line is the
        // program's it made of the example: under libtest's own header, the Rust reader places it
        // at the example.
        let doctest = name.contains(" - ") && name.ends_with(')') && name.contains(" (line ");
        let text = if doctest {
            Cow::Owned(format!("---- {name} stdout ----\n{text}"))
        } else {
            Cow::Borrowed(text)
        };
        failure_text(&text, name, false, false, sink);
    } else {
        sink.leave_out(1);
    }
}

/// Parses a failure text (a JUnit failure, a jest failure message) as a log of its own and
/// reports its first finding under `test` (every finding, with no test, when `all`).
fn failure_text(text: &str, test: &str, pytest: bool, all: bool, sink: &mut Sink<'_>) -> bool {
    let mut parser = Parser::new(sink.workspace);
    if pytest {
        parser.formats.python.begin_pytest_block();
    }
    parser.block(text);
    let found = parser.finish();
    let mut any = false;
    // One failure's text gives its first report, and the second place the same error has at the
    // test's own frame when it was raised below the test.
    let first_message = found.reports.first().map(|r| r.message.clone());
    let failure_s_own = |i: usize, r: &BugReport| {
        i == 0
            || r.confidence_score == Some(TEST_FRAME_CONFIDENCE)
                && first_message.as_ref().is_some_and(|m| *m == r.message)
    };
    for (_, r) in found
        .reports
        .into_iter()
        .enumerate()
        .filter(|(i, r)| all || failure_s_own(*i, r))
        .take(if all { MAX_DOCUMENT_REPORTS } else { 2 })
    {
        any |= sink
            .report(Finding {
                file: &r.file_path,
                line: r.line_number,
                error_type: r.error_type,
                message: Cow::Owned(r.message),
                test: (!all).then_some(test),
                confidence: r.confidence_score.unwrap_or(0.9),
                rank: Rank::of(r.error_type),
                diagnostic: false,
            })
            .is_some();
        // The failure's place past its bound takes its test's line with it.
        if !all && !any {
            break;
        }
    }
    any
}

/// The jest test result (one test file) being read.
#[derive(Default)]
struct JestSuite {
    assertions: usize,
    failed: bool,
    message: Option<String>,
}

impl JestSuite {
    fn piece(&mut self, piece: Piece<'_>, start: usize, sink: &mut Sink<'_>) {
        match piece {
            Piece::Value(Tag::Assertion, text) => {
                self.assertions += 1;
                if let Some(a) = json_item::read_jest_assertion(text) {
                    jest_assertion(&a, start, sink);
                }
            }
            Piece::Oversize(Tag::Assertion) => self.assertions += 1,
            Piece::Value(Tag::SuiteStatus, text) => {
                self.failed = serde_json::from_str::<String>(text).is_ok_and(|s| s == "failed");
            }
            Piece::Value(Tag::SuiteMessage, text) => self.message = serde_json::from_str(text).ok(),
            Piece::End(Role::Suite) => {
                let suite = std::mem::take(self);
                if suite.assertions == 0 && suite.failed {
                    // A test file that failed before any test ran (a syntax error, a failed import).
                    let mut parser = Parser::new(sink.workspace);
                    let message = suite.message.as_deref().unwrap_or("");
                    // vitest gives an import it could not resolve without the error's name
                    // (`Cannot find package 'x' imported from '/w/a.js'`): read as Node's error.
                    if message.starts_with("Cannot find ") {
                        parser.block(&format!("Error: {message}"));
                    } else {
                        parser.block(message);
                    }
                    let reports = parser.finish().reports;
                    let count = reports.len();
                    for (i, r) in reports.into_iter().enumerate() {
                        if !room(sink, start) {
                            sink.leave_out(count - i);
                            break;
                        }
                        sink.report(Finding {
                            file: &r.file_path,
                            line: r.line_number,
                            error_type: r.error_type,
                            message: Cow::Owned(r.message),
                            test: None,
                            confidence: r.confidence_score.unwrap_or(0.9),
                            rank: Rank::Error,
                            diagnostic: false,
                        });
                    }
                }
            }
            _ => {}
        }
    }
}

fn jest_assertion(a: &JestAssertion<'_>, start: usize, sink: &mut Sink<'_>) {
    let messages = || {
        a.failure_messages
            .0
            .iter()
            .flatten()
            .filter_map(|m| m.0.as_deref())
            .collect()
    };
    jest_result(a.full_name.text(), a.status.text(), messages, start, sink);
}

/// One jest test result: its outcome counted and recorded, and a failed test's messages read
/// (`messages` is asked only then).
fn jest_result<'m>(
    name: &str,
    status: &str,
    messages: impl FnOnce() -> Vec<&'m str>,
    start: usize,
    sink: &mut Sink<'_>,
) {
    let outcome = match status {
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
    if outcome == TestOutcome::Failed && !room(sink, start) {
        // Its failure text is not read: a finding left out.
        sink.leave_out(1);
    } else if outcome == TestOutcome::Failed {
        failure_text(&messages().join("\n"), name, false, false, sink);
    }
}

/// An element open in a JUnit document.
struct Open {
    name: String,
    /// Whether text may stand in it: not in the elements JUnit puts only elements in.
    text: bool,
}

/// The JUnit document being read (pytest, jest-junit, go-junit-report).
#[derive(Default)]
struct Junit {
    open: Vec<Open>,
    root_seen: bool,
    pytest: bool,
    /// The current `<testsuite>`'s name: ruff's JUnit names each suite by the file checked, mypy's
    /// is `mypy` (one case whose failure lists every error).
    suite: Option<String>,
    case: Option<Case>,
    in_failure: bool,
    /// The document is Checkstyle's (`<checkstyle><file name><error line message source>`), which
    /// linters print too (golangci-lint, eslint's `checkstyle` formatter): the current file.
    checkstyle: Option<String>,
}

/// The longest suite name kept: ruff and ty name a suite by its file's path (Linux's `PATH_MAX`).
const MAX_SUITE_NAME: usize = 4096;

/// An element name as remembered: its first 64 bytes.
fn short_name(name: &str) -> &str {
    &name[..floor_boundary(name, 64)]
}

/// Elements whose content is only other elements.
fn holds_only_elements(name: &str) -> bool {
    matches!(
        name,
        "testsuites" | "testsuite" | "testcase" | "properties" | "property" | "checkstyle" | "file"
    )
}

impl Junit {
    fn piece(&mut self, piece: XmlPiece<'_>, start: usize, sink: &mut Sink<'_>) -> Step {
        match piece {
            XmlPiece::Invalid => Step::GiveUp,
            XmlPiece::Markup(markup) => {
                if let Some(name) = markup.strip_prefix("</").and_then(|m| m.strip_suffix('>')) {
                    // quick-xml reads an end tag only after its start tag: this one is read here.
                    let name = name.trim_end();
                    if name.is_empty() || name.contains(|c: char| c.is_whitespace() || c == '<') {
                        return Step::GiveUp;
                    }
                    return self.event(Event::End(BytesEnd::new(name)), start, sink);
                }
                let mut reader = quick_xml::Reader::from_str(markup);
                match reader.read_event() {
                    Ok(event) => self.event(event, start, sink),
                    Err(_) => Step::GiveUp,
                }
            }
            XmlPiece::Text(text) => {
                let mut reader = quick_xml::Reader::from_str(text);
                loop {
                    match reader.read_event() {
                        Ok(Event::Eof) => return Step::Go,
                        Ok(event) => {
                            if self.event(event, start, sink) == Step::GiveUp {
                                return Step::GiveUp;
                            }
                        }
                        Err(_) => return Step::GiveUp,
                    }
                }
            }
        }
    }

    /// Whether text may stand where the document is.
    fn text_allowed(&self) -> bool {
        self.open.last().is_some_and(|o| o.text)
    }

    /// Opens an element; `Err` when it cannot be part of a JUnit document here.
    fn open(&mut self, e: &quick_xml::events::BytesStart<'_>, empty: bool) -> Result<(), ()> {
        let name = e.name().0;
        if e.attributes().any(|a| a.is_err()) {
            return Err(());
        }
        if self.open.is_empty() {
            if self.root_seen || !matches!(name, "testsuites" | "testsuite" | "checkstyle") {
                return Err(());
            }
            self.root_seen = true;
            if name == "checkstyle" {
                self.checkstyle = Some(String::new());
            }
        }
        if self.open.len() >= MAX_XML_DEPTH {
            return Err(());
        }
        if !empty {
            self.open.push(Open {
                name: short_name(name).to_owned(),
                text: !holds_only_elements(name),
            });
        }
        Ok(())
    }

    fn event(&mut self, event: Event<'_>, start: usize, sink: &mut Sink<'_>) -> Step {
        match event {
            Event::Start(ref e) | Event::Empty(ref e) => {
                let empty = matches!(event, Event::Empty(_));
                if self.open(e, empty).is_err() {
                    return Step::GiveUp;
                }
                let name = e.name().0;
                if let Some(file) = self.checkstyle.as_mut() {
                    match name {
                        "file" => *file = attr(e, "name").unwrap_or_default(),
                        "error" if room(sink, start) => {
                            let line = attr(e, "line").and_then(|l| l.parse().ok()).unwrap_or(1);
                            let message = attr(e, "message").unwrap_or_default();
                            let source = attr(e, "source").unwrap_or_default();
                            // eslint names its rule `eslint.rules.no-undef`.
                            let rule = source.strip_prefix("eslint.rules.").unwrap_or(&source);
                            if rule == "typecheck" {
                                go_linter_item(file, line, rule, &message, sink);
                            } else {
                                lint_item(file, line, rule, &message, sink);
                            }
                            // Each finding read confirms the document, as a test case does.
                            return Step::Commit;
                        }
                        _ => {}
                    }
                    return if self.open.is_empty() { Step::Done } else { Step::Go };
                }
                match name {
                    "testsuite" => {
                        let name = attr(e, "name");
                        self.pytest |= name.as_deref() == Some("pytest");
                        // A linter's suite is named by a file's path, often absolute and long.
                        self.suite = name.map(|n| n[..floor_boundary(&n, MAX_SUITE_NAME)].to_owned());
                    }
                    "testcase" if empty => {
                        let mut c = new_case(e);
                        c.outcome = Some(TestOutcome::Passed);
                        finish_case(c, self.pytest, self.suite.as_deref(), start, sink);
                        return Step::Commit;
                    }
                    "testcase" => self.case = Some(new_case(e)),
                    "property" => {
                        if let Some(c) = self.case.as_mut()
                            && attr(e, "name").as_deref() == Some("severity")
                        {
                            c.severity = attr(e, "value");
                        }
                    }
                    "failure" | "error" | "skipped" => {
                        if let Some(c) = self.case.as_mut() {
                            c.outcome = Some(match name {
                                "failure" => TestOutcome::Failed,
                                "error" => TestOutcome::Error,
                                _ => TestOutcome::Skipped,
                            });
                            if let Some(message) = attr(e, "message") {
                                c.text.push_str(&message);
                                c.text.push_str("\n");
                            }
                            self.in_failure = !empty && name != "skipped";
                        }
                    }
                    _ => {}
                }
                if self.open.is_empty() { Step::Done } else { Step::Go }
            }
            Event::End(e) => {
                let name = e.name().0;
                if self.open.pop().is_none_or(|o| o.name != short_name(name)) {
                    return Step::GiveUp;
                }
                match name {
                    "failure" | "error" => self.in_failure = false,
                    "testcase" => {
                        if let Some(mut c) = self.case.take() {
                            c.outcome.get_or_insert(TestOutcome::Passed);
                            finish_case(c, self.pytest, self.suite.as_deref(), start, sink);
                        }
                        return Step::Commit;
                    }
                    _ => {}
                }
                if self.open.is_empty() { Step::Done } else { Step::Go }
            }
            Event::Text(t) => {
                let text = t.xml10_content();
                if !self.text_allowed() && !text.trim().is_empty() {
                    return Step::GiveUp;
                }
                if self.in_failure
                    && let Some(c) = self.case.as_mut()
                {
                    c.text.push_str(&text);
                }
                Step::Go
            }
            Event::CData(t) => {
                if !self.text_allowed() {
                    return Step::GiveUp;
                }
                if self.in_failure
                    && let Some(c) = self.case.as_mut()
                {
                    c.text.push_str(&t.xml10_content());
                }
                Step::Go
            }
            Event::GeneralRef(r) => {
                if !self.text_allowed() {
                    return Step::GiveUp;
                }
                if self.in_failure
                    && let Some(c) = self.case.as_mut()
                {
                    if let Ok(Some(ch)) = r.resolve_char_ref() {
                        c.text.push_str(ch.encode_utf8(&mut [0; 4]));
                    } else if let Some(ch) = predefined_entity(&r.into_inner()) {
                        c.text.push_str(ch.encode_utf8(&mut [0; 4]));
                    }
                }
                Step::Go
            }
            // The declaration, comments, processing instructions.
            _ => Step::Go,
        }
    }
}

/// A test case's failure text, bounded: its first [`MAX_CASE_HEAD`] and last [`MAX_CASE_TAIL`]
/// bytes, whatever pieces it came in.
#[derive(Default)]
struct CaseText {
    head: String,
    tail: String,
    total: usize,
}

impl CaseText {
    fn push_str(&mut self, mut s: &str) {
        self.total += s.len();
        if self.tail.is_empty() && self.head.len() < MAX_CASE_HEAD {
            let k = floor_boundary(s, MAX_CASE_HEAD - self.head.len());
            self.head.push_str(&s[..k]);
            s = &s[k..];
        }
        if s.len() > MAX_CASE_TAIL {
            self.tail.clear();
            s = &s[ceil_boundary(s, s.len() - MAX_CASE_TAIL)..];
        }
        self.tail.push_str(s);
        if self.tail.len() > 2 * MAX_CASE_TAIL {
            let cut = ceil_boundary(&self.tail, self.tail.len() - MAX_CASE_TAIL);
            self.tail.drain(..cut);
        }
    }

    /// The text kept: all of it, or its start, a line `...`, and its end from a line start.
    fn text(&self) -> Cow<'_, str> {
        if self.total == self.head.len() + self.tail.len() {
            return if self.tail.is_empty() {
                Cow::Borrowed(&self.head)
            } else {
                Cow::Owned(format!("{}{}", self.head, self.tail))
            };
        }
        let tail = &self.tail[ceil_boundary(&self.tail, self.tail.len().saturating_sub(MAX_CASE_TAIL))..];
        let tail = tail.find('\n').map_or(tail, |i| &tail[i + 1..]);
        Cow::Owned(format!("{}\n...\n{tail}", self.head))
    }
}

fn floor_boundary(s: &str, mut i: usize) -> usize {
    i = i.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn ceil_boundary(s: &str, mut i: usize) -> usize {
    while !s.is_char_boundary(i) {
        i += 1;
    }
    i
}

#[derive(Default)]
struct Case {
    classname: String,
    name: String,
    file: Option<String>,
    line: Option<u32>,
    /// A linter's level for its finding, `<property name="severity" value="warning"/>` (ty's).
    severity: Option<String>,
    outcome: Option<TestOutcome>,
    text: CaseText,
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

fn finish_case(c: Case, pytest: bool, suite: Option<&str>, start: usize, sink: &mut Sink<'_>) {
    if lint_case(&c, suite, start, sink) {
        return;
    }
    let name = test_name(&c, pytest);
    let outcome = c.outcome.unwrap_or(TestOutcome::Passed);
    match outcome {
        TestOutcome::Passed => sink.summary.passed += 1,
        TestOutcome::Failed => sink.summary.failed += 1,
        TestOutcome::Error => sink.summary.errors += 1,
        TestOutcome::Skipped => sink.summary.skipped += 1,
    }
    sink.summary.runner_summary_seen = true;
    sink.test(&name, outcome);
    if !matches!(outcome, TestOutcome::Failed | TestOutcome::Error) {
        return;
    }
    if !room(sink, start) {
        sink.leave_out(1);
        return;
    }
    let text = c.text.text();
    if failure_text(&text, &name, pytest, false, sink) {
        return;
    }
    if let (Some(file), Some(line)) = (c.file.as_deref(), c.line) {
        let message = text.lines().next().unwrap_or("test failed").to_owned();
        sink.report(Finding {
            file,
            line,
            error_type: js_type(&message),
            message: Cow::Owned(message),
            test: Some(&name),
            confidence: 0.8,
            rank: Rank::Error,
            diagnostic: false,
        });
    }
}

/// A linter's JUnit report is not a test run: ruff writes a case per finding (named
/// `org.ruff.F401`, in a suite named by the file, with the line as an attribute), mypy one case
/// whose failure lists every error. Returns `true` when the case was one of these.
fn lint_case(c: &Case, suite: Option<&str>, start: usize, sink: &mut Sink<'_>) -> bool {
    if suite == Some("mypy") {
        if matches!(c.outcome, Some(TestOutcome::Failed | TestOutcome::Error)) {
            if room(sink, start) {
                failure_text(&c.text.text(), "", false, true, sink);
            } else {
                sink.leave_out(1);
            }
        }
        return true;
    }
    // ty's cases, `org.ty.invalid-assignment` (the file's path, less `.py`, as the class).
    if let (Some(rule), Some(file), Some(line)) = (c.name.strip_prefix("org.ty."), suite, c.line)
        && super::ty::is_rule_name(rule)
        && c.file.is_none()
    {
        if room(sink, start) {
            let text = c.text.text();
            // The failure's `message`, then its text (`line 229, col 28, message`).
            let message = text.lines().next().unwrap_or("");
            let (error_type, rank) = super::ty::rule_type(rule, c.severity.as_deref() != Some("warning"));
            sink.report(Finding {
                file,
                line,
                error_type,
                message: Cow::Owned(format!("{rule}: {message}")),
                test: None,
                confidence: 1.0,
                rank,
                diagnostic: true,
            });
        } else {
            sink.leave_out(1);
        }
        return true;
    }
    // `org.ruff.F401`, `org.ruff.invalid-syntax`
    let code = c.name.rsplit('.').next().unwrap_or("");
    let letters = code.bytes().take_while(u8::is_ascii_uppercase).count();
    let digits = &code[letters..];
    let is_code = code == "invalid-syntax"
        || (1..=4).contains(&letters) && (2..=4).contains(&digits.len()) && digits.bytes().all(|b| b.is_ascii_digit());
    let (Some(file), Some(line), true) = (suite, c.line, is_code && c.file.is_none()) else {
        return false;
    };
    if room(sink, start) {
        let text = c.text.text();
        let message = text.lines().next().unwrap_or("");
        lint_item(file, line, code, message, sink);
    } else {
        sink.leave_out(1);
    }
    true
}

fn str_of<'v>(v: &'v Value, key: &str) -> &'v str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

fn u32_of(v: &Value, key: &str) -> u32 {
    position(v.get(key).and_then(Value::as_u64))
}

/// A `compiler-message` record of cargo's `--message-format=json`, with only the fields read:
/// serde skips the rest (the `rendered` text, the `children`, the spans' own text), which makes
/// up most of each record, without building a value of it.
#[derive(Deserialize)]
struct CargoRecord<'a> {
    #[serde(borrow)]
    message: CompilerMessage<'a>,
}

#[derive(Deserialize)]
struct CompilerMessage<'a> {
    #[serde(borrow, default)]
    level: Cow<'a, str>,
    #[serde(borrow, default)]
    message: Cow<'a, str>,
    #[serde(borrow, default)]
    code: Option<DiagnosticCode<'a>>,
    #[serde(borrow, default)]
    spans: Vec<Span<'a>>,
}

#[derive(Deserialize)]
struct DiagnosticCode<'a> {
    #[serde(borrow)]
    code: Cow<'a, str>,
}

#[derive(Deserialize)]
struct Span<'a> {
    #[serde(borrow, default)]
    file_name: Cow<'a, str>,
    #[serde(default)]
    line_start: Option<u64>,
    #[serde(default)]
    column_start: Option<u64>,
    #[serde(default)]
    is_primary: bool,
    /// The text rustc prints under the span: read for E0308's secondary labels.
    #[serde(borrow, default)]
    label: Option<Cow<'a, str>>,
}

/// A line or column number as a report gives it, at least 1 (and at most `u32::MAX`).
fn position(n: Option<u64>) -> u32 {
    n.map_or(1, |n| n.clamp(1, u64::from(u32::MAX)) as u32)
}

fn cargo_message(line: &str, sink: &mut Sink<'_>) {
    // cargo writes `reason` first: an artifact's or a build script's record (most of a build's
    // records, and long) is not parsed.
    if !line.starts_with("{\"reason\":\"compiler-message\"") {
        return;
    }
    let Ok(CargoRecord { message }) = serde_json::from_str::<CargoRecord>(line) else {
        return;
    };
    let level = message.level.as_ref();
    if level != "error" && level != "warning" {
        return;
    }
    let text = message.message.as_ref();
    if text.starts_with("aborting due to") || text.contains("warnings emitted") || text.contains("warning emitted") {
        return;
    }
    let code = message.code.as_ref().map(|c| c.code.as_ref());
    let spans = &message.spans;
    // An error can have several primary spans (a mismatched delimiter: the `}` and the `(` it
    // leaves unclosed); the first in the file is where rustc's own text points (`-->`).
    let first_primary = spans.iter().find(|s| s.is_primary);
    let Some(span) = first_primary
        .and_then(|first| {
            spans
                .iter()
                .filter(|s| s.is_primary && s.file_name == first.file_name)
                .min_by_key(|s| (position(s.line_start), position(s.column_start)))
        })
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
        file: &span.file_name,
        line: position(span.line_start),
        error_type,
        message: Cow::Borrowed(&rendered),
        test: None,
        confidence: 1.0,
        rank,
        diagnostic: true,
    });
    if code == Some("E0308") {
        // A label on the error's own line (`let n: u32 = f();`) names no other place.
        let elsewhere =
            |s: &&Span<'_>| !s.is_primary && (s.file_name != span.file_name || s.line_start != span.line_start);
        for label_span in spans.iter().filter(elsewhere) {
            if let Some(label) = label_span.label.as_deref()
                && names_the_expected_type(label)
            {
                report_expected_type(
                    &label_span.file_name,
                    position(label_span.line_start),
                    &rendered,
                    label,
                    sink,
                );
            }
        }
    }
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
        diagnostic: true,
    });
}

/// A record of staticcheck's `-f json`: a check's finding at its `location`, or (`"code":
/// "compile"`, no location) the compiler's errors, which its `message` holds as `go build` prints
/// them.
fn staticcheck_json(line: &str, sink: &mut Sink<'_>) {
    let Ok(v) = serde_json::from_str::<Value>(line) else {
        return;
    };
    let (code, message) = (str_of(&v, "code"), str_of(&v, "message"));
    let location = &v["location"];
    let file = str_of(location, "file");
    if code == "compile" || file.is_empty() {
        failure_text(message, "", false, true, sink);
    } else if str_of(&v, "severity") != "ignored" {
        lint_item(file, u32_of(location, "line"), code, message, sink);
    }
}

/// The extensions of the text files pytest's `--doctest-glob` is given (its default is
/// `test*.txt`).
const DOCTEST_TEXT_EXTENSIONS: [&str; 5] = ["txt", "rst", "md", "markdown", "text"];

/// The test's name in its runner's own notation: a pytest node id, or the case name.
fn test_name(c: &Case, pytest: bool) -> String {
    if !pytest {
        return c.name.clone();
    }
    if c.classname.is_empty() {
        // A module that failed to be collected: pytest writes its dotted name, `tests.test_x`;
        // its node id is its path.
        let module = c.name.split('.').all(|s| {
            s.starts_with(|ch: char| ch.is_ascii_alphabetic() || ch == '_')
                && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
        });
        return if module && !c.name.is_empty() {
            format!("{}.py", c.name.replace('.', "/"))
        } else {
            c.name.clone()
        };
    }
    if let Some(file) = &c.file {
        return format!("{file}::{}", c.name);
    }
    // A doctest file (`--doctest-glob`): pytest names its item after the file, `usage.txt`, and
    // takes only `.py` off the classname, so the classname is the path, `docs.usage.txt`. (A
    // module's docstring is named after the module, `pkg.mod`, which has no such extension.)
    if c.name
        .rsplit_once('.')
        .is_some_and(|(_, ext)| DOCTEST_TEXT_EXTENSIONS.contains(&ext))
        && let Some(folder) = c.classname.strip_suffix(c.name.as_str())
        && (folder.is_empty() || folder.ends_with('.'))
    {
        return format!("{}{}::{}", folder.replace('.', "/"), c.name, c.name);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::Workspace;
    use proptest::prelude::*;

    /// [`array_item`] as it was, on a whole `serde_json::Value`: what the typed reading must match.
    fn array_item_by_value(item: &Value, start: usize, sink: &mut Sink<'_>) {
        if let (Some(Value::String(title)), Some(err)) =
            (item.get("fullTitle"), item.get("err").filter(|e| e.is_object()))
        {
            let stack = str_of(err, "stack");
            if !stack.is_empty() {
                failed_test(title, stack, sink);
            }
        } else if let Some(messages) = item.get("messages").and_then(Value::as_array) {
            // eslint: one element per file, with its messages.
            let file = str_of(item, "filePath");
            for (i, m) in messages.iter().enumerate() {
                if !room(sink, start) {
                    sink.leave_out(messages.len() - i);
                    break;
                }
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
        } else if let Some(scenarios) = item.get("elements").and_then(Value::as_array) {
            for scenario in scenarios.iter().filter(|s| s.is_object()) {
                let steps = scenario.get("steps").and_then(Value::as_array).into_iter().flatten();
                let results = steps.filter_map(|step| step.get("result").filter(|r| r.is_object()));
                let outcomes = results.map(|r| (str_of(r, "status"), str_of(r, "error_message")));
                cucumber_scenario(str_of(scenario, "name"), outcomes, start, sink);
            }
        } else if let Some(id) = item
            .get("message-id")
            .or_else(|| item.get("messageId"))
            .and_then(Value::as_str)
        {
            // pylint `json` (`message-id`) and `json2` (`messageId`)
            let (symbol, message) = (str_of(item, "symbol"), str_of(item, "message"));
            let error_type = pylint_type(id, symbol, message);
            sink.report(Finding {
                file: str_of(item, "path"),
                line: u32_of(item, "line"),
                error_type,
                message: Cow::Owned(format!("{id}: {message} ({symbol})")),
                test: None,
                confidence: 1.0,
                rank: Rank::of(error_type),
                diagnostic: true,
            });
        } else if let Some(linter) = item.get("FromLinter") {
            // golangci-lint.
            let linter = linter.as_str().unwrap_or("");
            let place = item.get("Pos");
            let file = place.map_or("", |p| str_of(p, "Filename"));
            let line = place.map_or(1, |p| u32_of(p, "Line"));
            go_linter_item(file, line, linter, str_of(item, "Text"), sink);
        } else if let Some(locations) = item.get("locations").and_then(Value::as_array) {
            // A SARIF result.
            let Some(physical) = locations.first().and_then(|l| l.get("physicalLocation")) else {
                return;
            };
            let rule = str_of(item, "ruleId");
            let message = item.get("message").map_or("", |m| str_of(m, "text"));
            let line = physical.get("region").map_or(1, |r| u32_of(r, "startLine"));
            let file = physical.get("artifactLocation").map_or("", |a| str_of(a, "uri"));
            if rule == "typecheck" {
                go_linter_item(file, line, rule, message, sink);
            } else {
                lint_item(file, line, rule, message, sink);
            }
        } else if let Some(location) = item.get("location").filter(|l| l.get("range").is_some()) {
            // reviewdog's rdjson diagnostic.
            let code = item.get("code").map_or("", |c| str_of(c, "value"));
            let line = u32_of(&location["range"]["start"], "line");
            lint_item(str_of(location, "path"), line, code, str_of(item, "message"), sink);
        } else if let Some(check) = item.get("check_name").and_then(Value::as_str) {
            // GitLab code quality: `location.positions.begin.line` or `location.lines.begin`.
            let location = &item["location"];
            let line = if location.get("positions").is_some() {
                u32_of(&location["positions"]["begin"], "line")
            } else {
                u32_of(&location["lines"], "begin")
            };
            let description = str_of(item, "description");
            let message = description
                .strip_prefix(check)
                .and_then(|d| d.strip_prefix(": "))
                .unwrap_or(description);
            code_quality_item(
                str_of(location, "path"),
                line,
                check,
                str_of(item, "severity"),
                message,
                sink,
            );
        } else if let Some(range) = item.get("range").filter(|_| item.get("file").is_some()) {
            // pyright `--outputjson`: lines counted from 0; a message may go on over several lines.
            let level = str_of(item, "severity");
            if matches!(level, "error" | "warning") {
                let message = str_of(item, "message").lines().next().unwrap_or("");
                let line = range["start"]["line"]
                    .as_u64()
                    .map_or(1, |n| n.saturating_add(1).min(u64::from(u32::MAX)) as u32);
                sink.report(pyright_finding(
                    str_of(item, "file"),
                    line,
                    level,
                    message,
                    str_of(item, "rule"),
                ));
            }
        } else if let (Some(_), Some(id)) = (item.get("filename"), item.get("test_id")) {
            let code = format!("{} {}", id.as_str().unwrap_or(""), str_of(item, "test_name"));
            lint_item(
                str_of(item, "filename"),
                u32_of(item, "line_number"),
                code.trim(),
                str_of(item, "issue_text"),
                sink,
            );
        } else if let (Some(_), Some(range)) = (item.get("filename"), item.get("range")) {
            let code = item.get("code").and_then(Value::as_str).unwrap_or("");
            lint_item(
                str_of(item, "filename"),
                u32_of(&range["start"], "line"),
                code,
                str_of(item, "message"),
                sink,
            );
        } else if item.get("filename").is_some() {
            // ruff
            let code = item.get("code").and_then(Value::as_str).unwrap_or("invalid-syntax");
            let message = str_of(item, "message");
            let error_type = lint_finding_type(code, message);
            sink.report(Finding {
                file: str_of(item, "filename"),
                line: u32_of(&item["location"], "row"),
                error_type,
                message: Cow::Owned(format!("{code} {message}")),
                test: None,
                confidence: 1.0,
                rank: Rank::of(error_type),
                diagnostic: true,
            });
        }
    }

    /// [`jest_assertion`]'s reading of the fields as it was, on a whole `serde_json::Value`.
    fn jest_assertion_by_value(a: &Value, start: usize, sink: &mut Sink<'_>) {
        let messages = || {
            a.get("failureMessages")
                .and_then(Value::as_array)
                .map(|m| m.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default()
        };
        jest_result(str_of(a, "fullName"), str_of(a, "status"), messages, start, sink);
    }

    /// JSON made of the fields the formats read, nested, each of any JSON type.
    fn json() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            (-3i64..40).prop_map(Value::from),
            Just(Value::from(7.5)),
            Just(Value::from(u64::MAX)),
            prop_oneof![
                Just("error"),
                Just("warning"),
                Just("E501"),
                Just("a.py"),
                Just("src/a.js"),
                Just("C0116"),
                Just("no-var"),
                Just("x: y"),
                Just("say \"hi\"\nmore"),
                Just(""),
                Just("invalid-syntax"),
            ]
            .prop_map(Value::from),
        ];
        leaf.prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..3).prop_map(Value::Array),
                prop::collection::vec(
                    (
                        prop_oneof![
                            Just("messages"),
                            Just("filePath"),
                            Just("message-id"),
                            Just("messageId"),
                            Just("symbol"),
                            Just("message"),
                            Just("path"),
                            Just("line"),
                            Just("locations"),
                            Just("ruleId"),
                            Just("location"),
                            Just("code"),
                            Just("check_name"),
                            Just("description"),
                            Just("range"),
                            Just("file"),
                            Just("severity"),
                            Just("rule"),
                            Just("filename"),
                            Just("fatal"),
                            Just("physicalLocation"),
                            Just("region"),
                            Just("startLine"),
                            Just("artifactLocation"),
                            Just("uri"),
                            Just("start"),
                            Just("positions"),
                            Just("begin"),
                            Just("lines"),
                            Just("row"),
                            Just("value"),
                            Just("text"),
                            Just("fullName"),
                            Just("status"),
                            Just("failureMessages"),
                        ],
                        inner,
                    ),
                    0..6,
                )
                .prop_map(|fields| Value::Object(fields.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())),
            ]
        })
    }

    /// `value` mostly, or now and then any other JSON in its place.
    fn or_other(value: BoxedStrategy<Value>) -> BoxedStrategy<Value> {
        prop_oneof![5 => value, 1 => json()].boxed()
    }

    fn text() -> BoxedStrategy<Value> {
        or_other(
            prop_oneof![
                Just("error"),
                Just("warning"),
                Just("E501"),
                Just("unresolved-import"),
                Just("major"),
                Just("src/a.py"),
                Just("x: y"),
                Just("a\"b\nc")
            ]
            .prop_map(Value::from)
            .boxed(),
        )
    }

    fn number() -> BoxedStrategy<Value> {
        or_other((-2i64..30).prop_map(Value::from).boxed())
    }

    /// An object with each of `fields` present three times in four.
    fn object(fields: Vec<(&'static str, BoxedStrategy<Value>)>) -> BoxedStrategy<Value> {
        let fields: Vec<_> = fields
            .into_iter()
            .map(|(key, value)| prop::option::weighted(0.75, value).prop_map(move |v| v.map(|v| (key.to_owned(), v))))
            .collect();
        or_other(
            fields
                .prop_map(|fields| Value::Object(fields.into_iter().flatten().collect()))
                .boxed(),
        )
    }

    /// Elements shaped as each format's, with fields missing or of another type now and then.
    fn element() -> impl Strategy<Value = Value> {
        let line_of = |key: &'static str| object(vec![(key, object(vec![("line", number())]))]);
        let list =
            |item: BoxedStrategy<Value>| or_other(prop::collection::vec(item, 0..3).prop_map(Value::Array).boxed());
        let step = object(vec![(
            "result",
            object(vec![
                (
                    "status",
                    prop_oneof![text(), Just(Value::from("passed")), Just(Value::from("failed"))].boxed(),
                ),
                ("error_message", text()),
            ]),
        )]);
        prop_oneof![
            object(vec![("fullTitle", text()), ("err", object(vec![("stack", text())]))]),
            object(vec![(
                "elements",
                list(object(vec![("name", text()), ("steps", list(step))]))
            )]),
            object(vec![
                ("filePath", text()),
                (
                    "messages",
                    or_other(
                        prop::collection::vec(
                            object(vec![
                                ("fatal", or_other(any::<bool>().prop_map(Value::Bool).boxed())),
                                ("line", number()),
                                ("message", text()),
                                ("ruleId", text()),
                            ]),
                            0..3
                        )
                        .prop_map(Value::Array)
                        .boxed()
                    )
                ),
            ]),
            object(vec![
                ("message-id", text()),
                ("messageId", text()),
                ("symbol", text()),
                ("message", text()),
                ("path", text()),
                ("line", number())
            ]),
            object(vec![
                ("ruleId", text()),
                ("message", prop_oneof![text(), object(vec![("text", text())])].boxed()),
                (
                    "locations",
                    or_other(
                        prop::collection::vec(
                            object(vec![(
                                "physicalLocation",
                                object(vec![
                                    ("region", object(vec![("startLine", number())])),
                                    ("artifactLocation", object(vec![("uri", text())])),
                                ])
                            )]),
                            0..2
                        )
                        .prop_map(Value::Array)
                        .boxed()
                    )
                ),
            ]),
            object(vec![
                ("message", text()),
                ("code", prop_oneof![text(), object(vec![("value", text())])].boxed()),
                (
                    "location",
                    object(vec![("path", text()), ("range", line_of("start")), ("row", number())])
                ),
            ]),
            object(vec![
                ("check_name", text()),
                ("description", text()),
                ("severity", text()),
                (
                    "location",
                    object(vec![
                        ("path", text()),
                        ("positions", line_of("begin")),
                        ("lines", object(vec![("begin", number())]))
                    ])
                ),
            ]),
            object(vec![
                ("file", text()),
                ("severity", text()),
                ("message", text()),
                ("rule", text()),
                ("range", line_of("start"))
            ]),
            object(vec![
                ("filename", text()),
                ("code", text()),
                ("message", text()),
                ("location", object(vec![("row", number())]))
            ]),
            object(vec![
                ("filename", text()),
                ("test_id", text()),
                ("test_name", text()),
                ("issue_text", text()),
                ("line_number", number()),
            ]),
            object(vec![
                ("filename", text()),
                ("code", text()),
                ("message", text()),
                ("range", line_of("start")),
            ]),
            object(vec![
                (
                    "FromLinter",
                    prop_oneof![text(), Just(Value::from("typecheck"))].boxed()
                ),
                ("Text", text()),
                ("Pos", object(vec![("Filename", text()), ("Line", number())]))
            ]),
            json(),
        ]
    }

    /// What `text` gives read the new way and the old (a `Value`, when `text` is JSON).
    fn both_readings(
        text: &str,
        typed: impl Fn(&str, &mut Sink<'_>),
        by_value: impl Fn(&Value, &mut Sink<'_>),
    ) -> (String, String) {
        let workspace = Workspace::new("/w");
        let output = |read: &dyn Fn(&mut Sink<'_>)| {
            let mut sink = Sink::new(&workspace);
            read(&mut sink);
            serde_json::to_string(&sink.finish()).expect("a parse output serialises")
        };
        let typed = output(&|sink| typed(text, sink));
        let by_value = output(&|sink| {
            if let Ok(value) = serde_json::from_str::<Value>(text) {
                by_value(&value, sink);
            }
        });
        (typed, by_value)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(3000))]

        /// An element read into the few fields used gives the reports a whole `Value` gave.
        #[test]
        fn an_element_read_into_its_fields_reports_what_its_value_reported(item in element()) {
            let text = item.to_string();
            let (typed, by_value) = both_readings(
                &text,
                |t, sink| {
                    if let Some(item) = json_item::read(t) {
                        array_item(&item, 0, sink);
                    }
                },
                |item, sink| array_item_by_value(item, 0, sink),
            );
            prop_assert_eq!(typed, by_value, "{}", text);
        }

        /// A jest test result read into its fields gives what its `Value` gave.
        #[test]
        fn a_jest_result_read_into_its_fields_reports_what_its_value_reported(
            result in prop_oneof![
                object(vec![
                    ("fullName", text()),
                    ("status", prop_oneof![Just(Value::from("failed")), Just(Value::from("passed")), text()].boxed()),
                    (
                        "failureMessages",
                        or_other(
                            prop::collection::vec(
                                prop_oneof![
                                    Just(Value::from("Error: boom\n    at Object.<anonymous> (/w/a.test.js:3:9)")),
                                    text(),
                                ],
                                0..3,
                            )
                            .prop_map(Value::Array)
                            .boxed(),
                        ),
                    ),
                ]),
                json(),
            ],
        ) {
            let text = result.to_string();
            let (typed, by_value) = both_readings(
                &text,
                |t, sink| {
                    if let Some(a) = json_item::read_jest_assertion(t) {
                        jest_assertion(&a, 0, sink);
                    }
                },
                |a, sink| jest_assertion_by_value(a, 0, sink),
            );
            prop_assert_eq!(typed, by_value, "{}", text);
        }
    }

    /// bandit 1.9.4's `-f json` (its INFO lines before it) and deno 2.9.6's `deno lint --json`,
    /// captured by running them (the fourteenth outsider trial's): each finding at its line, not
    /// at line 1, with its message (bandit's `code` field is the source excerpt, not a rule).
    #[test]
    fn bandit_s_and_deno_lint_s_json_findings_are_placed_at_their_lines() {
        let bandit = r#"[main]	INFO	profile include tests: None
[main]	INFO	profile exclude tests: None
[main]	INFO	cli include tests: None
[main]	INFO	cli exclude tests: None
{
  "errors": [],
  "generated_at": "2026-11-26T23:06:34Z",
  "metrics": {
    "_totals": {
      "CONFIDENCE.HIGH": 1,
      "CONFIDENCE.LOW": 0,
      "CONFIDENCE.MEDIUM": 0,
      "CONFIDENCE.UNDEFINED": 0,
      "SEVERITY.HIGH": 0,
      "SEVERITY.LOW": 1,
      "SEVERITY.MEDIUM": 0,
      "SEVERITY.UNDEFINED": 0,
      "loc": 345,
      "nosec": 0,
      "skipped_tests": 0
    },
    "inflection/__init__.py": {
      "CONFIDENCE.HIGH": 1,
      "CONFIDENCE.LOW": 0,
      "CONFIDENCE.MEDIUM": 0,
      "CONFIDENCE.UNDEFINED": 0,
      "SEVERITY.HIGH": 0,
      "SEVERITY.LOW": 1,
      "SEVERITY.MEDIUM": 0,
      "SEVERITY.UNDEFINED": 0,
      "loc": 345,
      "nosec": 0,
      "skipped_tests": 0
    }
  },
  "results": [
    {
      "code": "269     \"\"\"\n270     assert separator is not None, 'separator must be a string'\n271     string = transliterate(string)\n",
      "col_offset": 4,
      "end_col_offset": 62,
      "filename": "inflection/__init__.py",
      "issue_confidence": "HIGH",
      "issue_cwe": {
        "id": 703,
        "link": "https://cwe.mitre.org/data/definitions/703.html"
      },
      "issue_severity": "LOW",
      "issue_text": "Use of assert detected. The enclosed code will be removed when compiling to optimised byte code.",
      "line_number": 270,
      "line_range": [
        270
      ],
      "more_info": "https://bandit.readthedocs.io/en/1.9.4/plugins/b101_assert_used.html",
      "test_id": "B101",
      "test_name": "assert_used"
    }
  ]
}"#;
        let deno = r#"{
  "version": 1,
  "diagnostics": [
    {
      "filename": "file:///work/heldout15/projects/dedent_logic/src/index.ts",
      "range": {
        "start": {
          "line": 14,
          "col": 6,
          "bytePos": 400
        },
        "end": {
          "line": 14,
          "col": 19,
          "bytePos": 413
        }
      },
      "message": "`indentLengths` is never reassigned",
      "code": "prefer-const",
      "hint": "Use `const` instead"
    }
  ],
  "errors": [],
  "checked_files": [
    "/work/heldout15/projects/dedent_logic/src/index.ts"
  ]
}
"#;
        let findings = |log, root| {
            let parsed = crate::parse::parse(log, &Workspace::new(root));
            crate::parse::report_findings(&parsed)
                .into_iter()
                .map(|(file, line, error_type, message)| (file.to_owned(), line, error_type, message.to_owned()))
                .collect::<Vec<_>>()
        };
        assert_eq!(
            findings(bandit, "/work/heldout15/projects/inflection"),
            [(
                "inflection/__init__.py".to_owned(),
                270,
                "Linting".to_owned(),
                "B101 assert_used Use of assert detected. The enclosed code will be removed when compiling to optimised byte code.".to_owned()
            )]
        );
        assert_eq!(
            findings(deno, "/work/heldout15/projects/dedent_logic"),
            [(
                "src/index.ts".to_owned(),
                14,
                "Linting".to_owned(),
                "prefer-const `indentLengths` is never reassigned".to_owned()
            )]
        );
    }

    /// golangci-lint 2.15's JSON, SARIF and Checkstyle reports of packages that do not compile
    /// (the fifteenth outsider trial's, captured by running it on go-version 1.7.0): the
    /// compiler's output put in one `typecheck` issue at the first file's line 1 is read error by
    /// error, and a `typecheck` issue of its own is typed as go build's error is, not as lint.
    #[test]
    fn golangci_lint_s_reports_of_a_package_that_does_not_compile_give_the_compiler_s_errors() {
        let json = r##"{"Issues":[{"FromLinter":"typecheck","Text":": # github.com/hashicorp/go-version [github.com/hashicorp/go-version.test]\n./constraint.go:54:6: declared and not used: k\n./constraint.go:55:38: undefined: key\n./version.go:300:2: declared and not used: segmentsOnly\n./version.go:301:25: cannot use segments (variable of type []int64) as string value in argument to NewVersion","Severity":"","SourceLines":["// Copyright (c) HashiCorp, Inc."],"Pos":{"Filename":"constraint.go","Offset":0,"Line":1,"Column":0},"ExpectNoLint":false,"ExpectedNoLintLinter":""}],"Report":{"Linters":[{"Name":"arangolint"},{"Name":"asasalint"},{"Name":"asciicheck"},{"Name":"bidichk"},{"Name":"bodyclose"},{"Name":"canonicalheader"},{"Name":"clickhouselint"},{"Name":"containedctx"},{"Name":"contextcheck"},{"Name":"copyloopvar"},{"Name":"cyclop"},{"Name":"decorder"},{"Name":"depguard"},{"Name":"dogsled"},{"Name":"dupl"},{"Name":"dupword"},{"Name":"durationcheck"},{"Name":"embeddedstructfieldcheck"},{"Name":"errcheck","Enabled":true},{"Name":"errchkjson"},{"Name":"errname"},{"Name":"errorlint"},{"Name":"exhaustive"},{"Name":"exhaustruct"},{"Name":"exhaustruct_v5"},{"Name":"exptostd"},{"Name":"forbidigo"},{"Name":"forcetypeassert"},{"Name":"funcorder"},{"Name":"fatcontext"},{"Name":"funlen"},{"Name":"gci"},{"Name":"ginkgolinter"},{"Name":"gocheckcompilerdirectives"},{"Name":"gochecknoglobals"},{"Name":"gochecknoinits"},{"Name":"gochecksumtype"},{"Name":"gocognit"},{"Name":"goconst"},{"Name":"gocritic"},{"Name":"gocyclo"},{"Name":"godoclint"},{"Name":"godot"},{"Name":"godox"},{"Name":"err113"},{"Name":"gofmt"},{"Name":"gofumpt"},{"Name":"golines"},{"Name":"goheader"},{"Name":"goimports"},{"Name":"mnd"},{"Name":"modernize"},{"Name":"gomoddirectives"},{"Name":"gomodguard"},{"Name":"gomodguard_v2"},{"Name":"goprintffuncname"},{"Name":"gosec"},{"Name":"gosmopolitan"},{"Name":"govet","Enabled":true},{"Name":"grouper"},{"Name":"iface"},{"Name":"importas"},{"Name":"inamedparam"},{"Name":"ineffassign","Enabled":true},{"Name":"interfacebloat"},{"Name":"intrange"},{"Name":"iotamixing"},{"Name":"ireturn"},{"Name":"lll"},{"Name":"loggercheck"},{"Name":"maintidx"},{"Name":"makezero"},{"Name":"mirror"},{"Name":"misspell"},{"Name":"musttag"},{"Name":"nakedret"},{"Name":"nestif"},{"Name":"nilerr"},{"Name":"nilnesserr"},{"Name":"nilnil"},{"Name":"nlreturn"},{"Name":"noctx"},{"Name":"noinlineerr"},{"Name":"nonamedreturns"},{"Name":"nosprintfhostport"},{"Name":"paralleltest"},{"Name":"perfsprint"},{"Name":"prealloc"},{"Name":"predeclared"},{"Name":"promlinter"},{"Name":"protogetter"},{"Name":"reassign"},{"Name":"recvcheck"},{"Name":"revive"},{"Name":"rowserrcheck"},{"Name":"sloglint"},{"Name":"sqlclosecheck"},{"Name":"spancheck"},{"Name":"staticcheck","Enabled":true},{"Name":"swaggo"},{"Name":"tagalign"},{"Name":"tagliatelle"},{"Name":"testableexamples"},{"Name":"testifylint"},{"Name":"testpackage"},{"Name":"thelper"},{"Name":"tparallel"},{"Name":"typecheck","Enabled":true},{"Name":"unconvert"},{"Name":"unparam"},{"Name":"unqueryvet"},{"Name":"unused","Enabled":true},{"Name":"usestdlibvars"},{"Name":"usetesting"},{"Name":"varnamelen"},{"Name":"wastedassign"},{"Name":"whitespace"},{"Name":"wrapcheck"},{"Name":"wsl"},{"Name":"wsl_v5"},{"Name":"zerologlint"},{"Name":"nolintlint"}]}}
1 issues:
* typecheck: 1
"##;
        let sarif = r##"{"version":"2.1.0","$schema":"https://schemastore.azurewebsites.net/schemas/json/sarif-2.1.0-rtm.6.json","runs":[{"tool":{"driver":{"name":"golangci-lint"}},"results":[{"ruleId":"typecheck","level":"error","message":{"text":": # github.com/hashicorp/go-version [github.com/hashicorp/go-version.test]\n./version_collection.go:15:27: syntax error: unexpected newline in argument list; possibly missing comma or )"},"locations":[{"physicalLocation":{"artifactLocation":{"uri":"constraint.go","index":0},"region":{"startLine":1,"startColumn":1}}}]},{"ruleId":"typecheck","level":"error","message":{"text":"missing ',' before newline in argument list"},"locations":[{"physicalLocation":{"artifactLocation":{"uri":"version_collection.go","index":0},"region":{"startLine":15,"startColumn":27}}}]},{"ruleId":"typecheck","level":"error","message":{"text":"expected operand, found '}'"},"locations":[{"physicalLocation":{"artifactLocation":{"uri":"version_collection.go","index":0},"region":{"startLine":16,"startColumn":1}}}]},{"ruleId":"typecheck","level":"error","message":{"text":"missing ',' in argument list"},"locations":[{"physicalLocation":{"artifactLocation":{"uri":"version_collection.go","index":0},"region":{"startLine":20,"startColumn":3}}}]}]}]}
4 issues:
* typecheck: 4
"##;
        let checkstyle = r##"<?xml version="1.0" encoding="UTF-8"?>

<checkstyle version="5.0">
  <file name="version.go">
    <error column="2" line="14" message="could not import golang.org/x/mod/semver (version.go:14:2: no required module provides package golang.org/x/mod/semver; to add it:&#xA;&#x9;go get golang.org/x/mod/semver)" severity="error" source="typecheck"></error>
  </file>
</checkstyle>
1 issues:
* typecheck: 1
"##;
        let findings = |log| {
            let parsed = crate::parse::parse(log, &Workspace::new("/work/heldout16/projects/goversion"));
            crate::parse::report_findings(&parsed)
                .into_iter()
                .map(|(file, line, error_type, _)| (file.to_owned(), line, error_type))
                .collect::<Vec<_>>()
        };
        let place = |file: &str, line, error_type: &str| (file.to_owned(), line, error_type.to_owned());
        assert_eq!(
            findings(json),
            [
                place("constraint.go", 55, "Import"),
                place("version.go", 301, "TypeError"),
                place("constraint.go", 54, "Linting"),
                place("version.go", 300, "Linting"),
            ]
        );
        assert_eq!(
            findings(sarif),
            [
                place("version_collection.go", 15, "Syntax"),
                place("version_collection.go", 16, "Syntax"),
                place("version_collection.go", 20, "Syntax"),
            ]
        );
        assert_eq!(findings(checkstyle), [place("version.go", 14, "Import")]);
    }

    /// vitest 3.2's JSON report of a test file that failed to load (the fifteenth outsider
    /// trial's, captured by running it): its message names the package the code imports and
    /// the importer, quoted, without the error's name.
    #[test]
    fn vitest_s_json_suite_that_failed_to_load_is_placed_at_its_importer() {
        let log = r##"{"numTotalTestSuites":1,"numPassedTestSuites":0,"numFailedTestSuites":1,"numPendingTestSuites":0,"numTotalTests":0,"numPassedTests":0,"numFailedTests":0,"numPendingTests":0,"numTodoTests":0,"snapshot":{"added":0,"failure":false,"filesAdded":0,"filesRemoved":0,"filesRemovedList":[],"filesUnmatched":0,"filesUpdated":0,"matched":0,"total":0,"unchecked":0,"uncheckedKeysByFile":[],"unmatched":0,"updated":0,"didUpdate":false},"startTime":1795735751069,"success":false,"testResults":[{"assertionResults":[],"startTime":1795735751069,"endTime":1795735751069,"status":"failed","message":"Cannot find package 'filesize-base' imported from '/work/heldout16/projects/prettybytes_dep/index.js'","name":"/work/heldout16/projects/prettybytes_dep/test/pretty-bytes.test.js"}]}
"##;
        let parsed = crate::parse::parse(
            log,
            &Workspace::new("/work/heldout16/projects/prettybytes_dep")
                .with_files(vec!["index.js".to_owned(), "test/pretty-bytes.test.js".to_owned()]),
        );
        assert_eq!(crate::parse::report_places(&parsed), [("index.js", 1, None)]);
    }

    /// libtest's JSON (`cargo test -- -Z unstable-options --format json`, the fifteenth outsider
    /// trial's, captured by running it on hex 0.4.3): the failed test's captured panic is read
    /// as its failure text, named by the test; the others' outcomes are recorded.
    #[test]
    fn libtest_s_json_events_give_the_failed_test_s_panic() {
        let log = r##"    Finished `test` profile [unoptimized + debuginfo] target(s) in 0.03s
     Running unittests src/lib.rs (/work/heldout16/target/hex/debug/deps/hex-c67cabac35bd7bd1)
{ "type": "suite", "event": "started", "test_count": 14 }
{ "type": "test", "event": "started", "name": "error::tests::test_display" }
{ "type": "test", "event": "started", "name": "test::test_decode" }
{ "type": "test", "name": "error::tests::test_display", "event": "ok", "exec_time": 0.000009495 }
{ "type": "test", "event": "started", "name": "test::test_decode_to_slice" }
{ "type": "test", "name": "test::test_decode", "event": "ok", "exec_time": 0.000009795 }
{ "type": "test", "event": "started", "name": "test::test_empty" }
{ "type": "test", "name": "test::test_decode_to_slice", "event": "ok", "exec_time": 0.000002463 }
{ "type": "test", "event": "started", "name": "test::test_encode" }
{ "type": "test", "name": "test::test_encode", "event": "ok", "exec_time": 0.000001652 }
{ "type": "test", "event": "started", "name": "test::test_encode_to_slice" }
{ "type": "test", "name": "test::test_empty", "event": "ok", "exec_time": 0.000001212 }
{ "type": "test", "event": "started", "name": "test::test_from_hex_array" }
{ "type": "test", "name": "test::test_from_hex_array", "event": "ok", "exec_time": 0.000001973 }
{ "type": "test", "event": "started", "name": "test::test_from_hex_okay_bytes" }
{ "type": "test", "name": "test::test_from_hex_okay_bytes", "event": "ok", "exec_time": 0.000006559 }
{ "type": "test", "event": "started", "name": "test::test_from_hex_okay_str" }
{ "type": "test", "name": "test::test_from_hex_okay_str", "event": "ok", "exec_time": 0.000004667 }
{ "type": "test", "event": "started", "name": "test::test_from_hex_whitespace" }
{ "type": "test", "name": "test::test_from_hex_whitespace", "event": "ok", "exec_time": 0.000001423 }
{ "type": "test", "event": "started", "name": "test::test_gen_iter" }
{ "type": "test", "name": "test::test_gen_iter", "event": "ok", "exec_time": 0.000003295 }
{ "type": "test", "event": "started", "name": "test::test_invalid_char" }
{ "type": "test", "name": "test::test_invalid_char", "event": "ok", "exec_time": 0.000001002 }
{ "type": "test", "event": "started", "name": "test::test_invalid_length" }
{ "type": "test", "name": "test::test_invalid_length", "event": "ok", "exec_time": 0.0000003 }
{ "type": "test", "event": "started", "name": "test::test_to_hex" }
{ "type": "test", "name": "test::test_to_hex", "event": "ok", "exec_time": 0.000003074 }
{ "type": "test", "name": "test::test_encode_to_slice", "event": "failed", "exec_time": 0.079613791, "stdout": "\nthread 'test::test_encode_to_slice' (26859) panicked at src/lib.rs:403:9:\nassertion `left == right` failed\n  left: [54, 51, 54, 49, 55, 55, 54, 49]\n right: [54, 98, 54, 57, 55, 55, 54, 57]\nstack backtrace:\n   0: __rustc::rust_begin_unwind\n             at /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/std/src/panicking.rs:689:5\n   1: core::panicking::panic_fmt\n             at /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/core/src/panicking.rs:80:14\n   2: core::panicking::assert_failed_inner\n             at /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/core/src/panicking.rs:439:17\n   3: core::panicking::assert_failed::<&[u8; 8], &[u8; 8]>\n             at /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/core/src/panicking.rs:394:5\n   4: hex::test::test_encode_to_slice\n             at ./src/lib.rs:403:9\n   5: hex::test::test_encode_to_slice::{closure#0}\n             at ./src/lib.rs:400:30\n   6: <hex::test::test_encode_to_slice::{closure#0} as core::ops::function::FnOnce<()>>::call_once\n             at /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/core/src/ops/function.rs:250:5\n   7: <fn() -> core::result::Result<(), alloc::string::String> as core::ops::function::FnOnce<()>>::call_once\n             at /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/core/src/ops/function.rs:250:5\nnote: Some details are omitted, run with `RUST_BACKTRACE=full` for a verbose backtrace.\n" }
{ "type": "suite", "event": "failed", "passed": 13, "failed": 1, "ignored": 0, "measured": 0, "filtered_out": 0, "exec_time": 0.080907132 }
error: test failed, to rerun pass `--lib`
"##;
        let parsed = crate::parse::parse(
            log,
            &Workspace::new("/work/heldout16/projects/hex").with_files(vec!["src/lib.rs".to_owned()]),
        );
        assert_eq!(
            crate::parse::report_places(&parsed),
            [("src/lib.rs", 403, Some("test::test_encode_to_slice"))]
        );
        assert_eq!(parsed.failing_tests(), ["test::test_encode_to_slice"]);
        assert_eq!(parsed.tests.len(), 14);
        // From a review: nextest writes the same events without libtest's spaces.
        let nextest = r##"{"type":"suite","event":"started","test_count":2,"nextest":{"crate":"rvt","test_binary":"rvt","kind":"lib"}}
{"type":"test","event":"started","name":"rvt::rvt$tests::bad_t"}
{"type":"test","event":"failed","name":"rvt::rvt$tests::bad_t","exec_time":0.004,"stdout":"\nthread 'tests::bad_t' panicked at src/lib.rs:6:26:\nassertion `left == right` failed\n  left: 2\n right: 3\n"}
"##;
        let parsed = crate::parse::parse(nextest, &Workspace::new("/w").with_files(vec!["src/lib.rs".to_owned()]));
        assert_eq!(
            crate::parse::report_places(&parsed),
            [("src/lib.rs", 6, Some("rvt::rvt$tests::bad_t"))]
        );
    }

    /// A one-line record longer than a line's bound (a test that printed a few hundred lines
    /// before it panicked; cargo's message with its code's explanation) is read whole, whether
    /// the log comes at once or streamed in small pieces, and behind a CI's timestamps.
    #[test]
    fn a_one_line_record_longer_than_a_line_s_bound_is_read_whole() {
        let printed: String = (0..800).map(|i| format!("checking input {i:>4}: ok\\n")).collect();
        let event = format!(
            r#"{{"type":"test","event":"failed","name":"tests::wraps","exec_time":0.004,"stdout":"{printed}\nthread 'tests::wraps' panicked at src/lib.rs:6:26:\nassertion failed\n"}}"#
        );
        assert!(event.len() > 2 * crate::parse::clean::MAX_LINE);
        let workspace = Workspace::new("/w").with_files(vec!["src/lib.rs".to_owned()]);
        let want = [("src/lib.rs", 6, Some("tests::wraps"))];
        for log in [
            format!("{event}\nerror: test failed\n"),
            format!("2026-11-28T03:00:00.1234567Z {event}\n"),
        ] {
            let parsed = crate::parse::parse(&log, &workspace);
            assert_eq!(crate::parse::report_places(&parsed), want, "{}", &log[..40]);
            let streamed =
                crate::parse::parse_reader(std::io::BufReader::with_capacity(1000, log.as_bytes()), &workspace)
                    .unwrap();
            assert_eq!(crate::parse::report_places(&streamed), want, "streamed: {}", &log[..40]);
        }
    }

    /// pytest-bdd 8's `--cucumberjson` report (the fifteenth outsider trial's, captured by running
    /// it on cachetools with two bugs): each failed scenario's first failed step's message,
    /// pytest's long traceback, is read as its failure text, named by the scenario.
    #[test]
    fn a_cucumber_report_s_failed_steps_are_read_as_failure_texts() {
        let log = r##"[{"keyword": "Feature", "uri": "features/eviction.feature", "name": "Cache eviction", "id": "features/eviction.feature", "line": 1, "description": "", "language": "en", "tags": [], "elements": [{"keyword": "Scenario", "id": "test_fifo_cache_evicts_the_oldest_entry", "name": "FIFO cache evicts the oldest entry", "line": 2, "description": "", "tags": [], "type": "scenario", "steps": [{"keyword": "Given", "name": "a FIFO cache of size 2", "line": 3, "match": {"location": ""}, "result": {"status": "passed", "duration": 73611}}, {"keyword": "When", "name": "I store keys 1, 2 and 3", "line": 4, "match": {"location": ""}, "result": {"status": "passed", "duration": 33500}}, {"keyword": "Then", "name": "key 1 is gone", "line": 5, "match": {"location": ""}, "result": {"status": "failed", "duration": 146790, "error_message": "fixturefunc = <function key1_gone at 0x7f21a6e6d300>\nrequest = <FixtureRequest for <Function test_fifo_cache_evicts_the_oldest_entry>>\nkwargs = {'cache': FIFOCache({1: '1', 3: '3'}, maxsize=2, currsize=2)}\n\n    def call_fixture_func(\n        fixturefunc: _FixtureFunc[FixtureValue], request: FixtureRequest, kwargs\n    ) -> FixtureValue:\n        if inspect.isgeneratorfunction(fixturefunc):\n            fixturefunc = cast(Callable[..., Generator[FixtureValue]], fixturefunc)\n            generator = fixturefunc(**kwargs)\n            try:\n                fixture_result = next(generator)\n            except StopIteration:\n                raise ValueError(f\"{request.fixturename} did not yield a value\") from None\n            finalizer = functools.partial(_teardown_yield_fixture, fixturefunc, generator)\n            request.addfinalizer(finalizer)\n        else:\n            fixturefunc = cast(Callable[..., FixtureValue], fixturefunc)\n>           fixture_result = fixturefunc(**kwargs)\n                             ^^^^^^^^^^^^^^^^^^^^^\n\n../../venv/lib/python3.11/site-packages/_pytest/fixtures.py:1074: \n_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ \n\ncache = FIFOCache({1: '1', 3: '3'}, maxsize=2, currsize=2)\n\n    @then(\"key 1 is gone\")\n    def key1_gone(cache):\n>       assert 1 not in cache\nE       AssertionError: assert 1 not in FIFOCache({1: '1', 3: '3'}, maxsize=2, currsize=2)\n\ntests/test_bdd_eviction.py:22: AssertionError"}}, {"keyword": "And", "name": "key 3 is kept", "line": 6, "match": {"location": ""}, "result": {"status": "failed", "duration": 260, "error_message": ""}}]}, {"keyword": "Scenario", "id": "test_unbounded_ttl_decorator_memoizes", "name": "unbounded TTL decorator memoizes", "line": 8, "description": "", "tags": [], "type": "scenario", "steps": [{"keyword": "Given", "name": "a function memoized with an unbounded ttl_cache", "line": 9, "match": {"location": ""}, "result": {"status": "failed", "duration": 35512, "error_message": "fixturefunc = <function memoized at 0x7f21a6e6d4e0>\nrequest = <FixtureRequest for <Function test_unbounded_ttl_decorator_memoizes>>\nkwargs = {}\n\n    def call_fixture_func(\n        fixturefunc: _FixtureFunc[FixtureValue], request: FixtureRequest, kwargs\n    ) -> FixtureValue:\n        if inspect.isgeneratorfunction(fixturefunc):\n            fixturefunc = cast(Callable[..., Generator[FixtureValue]], fixturefunc)\n            generator = fixturefunc(**kwargs)\n            try:\n                fixture_result = next(generator)\n            except StopIteration:\n                raise ValueError(f\"{request.fixturename} did not yield a value\") from None\n            finalizer = functools.partial(_teardown_yield_fixture, fixturefunc, generator)\n            request.addfinalizer(finalizer)\n        else:\n            fixturefunc = cast(Callable[..., FixtureValue], fixturefunc)\n>           fixture_result = fixturefunc(**kwargs)\n                             ^^^^^^^^^^^^^^^^^^^^^\n\n../../venv/lib/python3.11/site-packages/_pytest/fixtures.py:1074: \n_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ \ntests/test_bdd_eviction.py:34: in memoized\n    @cachetools.func.ttl_cache(maxsize=None)\n     ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ \n\nmaxsize = None, ttl = 600, timer = <built-in function monotonic>, typed = False\n\n    def ttl_cache(maxsize=128, ttl=600, timer=time.monotonic, typed=False):\n        \"\"\"Decorator to wrap a function with a memoizing callable that saves\n        up to `maxsize` results based on a Least Recently Used (LRU)\n        algorithm with a per-item time-to-live (TTL) value.\n        \"\"\"\n        if maxsize is None:\n>           return _cache(_UnboundTTLCache(ttl, timr), None, typed)\n                                                ^^^^\nE           NameError: name 'timr' is not defined\n\nsrc/cachetools/func.py:117: NameError"}}, {"keyword": "When", "name": "I call it twice with 5", "line": 10, "match": {"location": ""}, "result": {"status": "failed", "duration": 260, "error_message": ""}}, {"keyword": "Then", "name": "it ran once", "line": 11, "match": {"location": ""}, "result": {"status": "failed", "duration": 210, "error_message": ""}}]}]}]"##;
        let files = [
            "src/cachetools/func.py",
            "tests/test_bdd_eviction.py",
            "tests/features/eviction.feature",
        ];
        let workspace =
            Workspace::new("/work/heldout16/projects/cachetools").with_files(files.map(str::to_owned).to_vec());
        let parsed = crate::parse::parse(log, &workspace);
        assert_eq!(
            crate::parse::report_findings(&parsed)
                .into_iter()
                .map(|(file, line, error_type, _)| (file, line, error_type))
                .collect::<Vec<_>>(),
            [
                ("tests/test_bdd_eviction.py", 22, "Logic".to_owned()),
                ("src/cachetools/func.py", 117, "Import".to_owned())
            ]
        );
        assert_eq!(parsed.failing_tests().len(), 2);
    }

    /// cucumber-js 12's `--format json` (captured by running it on a feature of two scenarios, one
    /// failing on a bug in the code its steps call): the failed step's stack places it at its
    /// first project frame, named by the scenario; the passing scenario is recorded.
    #[test]
    fn cucumber_js_s_json_report_places_its_failed_step() {
        let log = r##"[
  {
    "description": "",
    "elements": [
      {
        "description": "",
        "id": "calculator;adding-two-numbers",
        "keyword": "Scenario",
        "line": 2,
        "name": "adding two numbers",
        "steps": [
          {
            "arguments": [],
            "keyword": "Given ",
            "line": 3,
            "name": "the numbers 2 and 3",
            "match": {
              "location": "features/step_definitions/steps.js:5"
            },
            "result": {
              "status": "passed",
              "duration": 690266
            }
          },
          {
            "arguments": [],
            "keyword": "When ",
            "line": 4,
            "name": "I add them",
            "match": {
              "location": "features/step_definitions/steps.js:10"
            },
            "result": {
              "status": "passed",
              "duration": 51997
            }
          },
          {
            "arguments": [],
            "keyword": "Then ",
            "line": 5,
            "name": "the result is 5",
            "match": {
              "location": "features/step_definitions/steps.js:14"
            },
            "result": {
              "status": "failed",
              "duration": 708993,
              "error_message": "AssertionError [ERR_ASSERTION]: Expected values to be strictly equal:\n\n-1 !== 5\n\n    + expected - actual\n\n    --1\n    +5\n\n    at World.<anonymous> (/w/features/step_definitions/steps.js:15:10)"
            }
          }
        ],
        "tags": [],
        "type": "scenario"
      },
      {
        "description": "",
        "id": "calculator;adding-zero",
        "keyword": "Scenario",
        "line": 7,
        "name": "adding zero",
        "steps": [
          {
            "arguments": [],
            "keyword": "Given ",
            "line": 8,
            "name": "the numbers 2 and 0",
            "match": {
              "location": "features/step_definitions/steps.js:5"
            },
            "result": {
              "status": "passed",
              "duration": 57956
            }
          },
          {
            "arguments": [],
            "keyword": "When ",
            "line": 9,
            "name": "I add them",
            "match": {
              "location": "features/step_definitions/steps.js:10"
            },
            "result": {
              "status": "passed",
              "duration": 64816
            }
          },
          {
            "arguments": [],
            "keyword": "Then ",
            "line": 10,
            "name": "the result is 2",
            "match": {
              "location": "features/step_definitions/steps.js:14"
            },
            "result": {
              "status": "passed",
              "duration": 33800
            }
          }
        ],
        "tags": [],
        "type": "scenario"
      }
    ],
    "id": "calculator",
    "line": 1,
    "keyword": "Feature",
    "name": "Calculator",
    "tags": [],
    "uri": "features/calc.feature"
  }
]"##;
        let files = ["features/step_definitions/steps.js", "src/calc.js"];
        let parsed = crate::parse::parse(log, &Workspace::new("/w").with_files(files.map(str::to_owned).to_vec()));
        assert_eq!(
            crate::parse::report_places(&parsed),
            [("features/step_definitions/steps.js", 15, Some("adding two numbers"))]
        );
        assert_eq!(parsed.tests.len(), 2);
    }

    #[test]
    fn golangci_lint_s_one_line_json_and_sarif_are_read_with_the_summary_after_them() {
        // golangci-lint 2.6 `--output.json.path=stdout` and `--output.sarif.path=stdout` (trimmed
        // to two issues each), each followed by the text summary golangci-lint prints after it.
        let json = r#"{"Issues":[{"FromLinter":"ineffassign","Text":"ineffectual assignment to base","Severity":"","SourceLines":["\tbase := 1024.0"],"Pos":{"Filename":"bytes.go","Offset":1428,"Line":90,"Column":2},"ExpectNoLint":false,"ExpectedNoLintLinter":""},{"FromLinter":"typecheck","Text":"undefined: strngs","Severity":"","SourceLines":[],"Pos":{"Filename":"english/words.go","Line":79,"Column":34}}],"Report":{"Linters":[{"Name":"errcheck","Enabled":true}]}}
2 issues:
* ineffassign: 1
* typecheck: 1
"#;
        let sarif = r#"{"version":"2.1.0","$schema":"https://schemastore.azurewebsites.net/schemas/json/sarif-2.1.0-rtm.6.json","runs":[{"tool":{"driver":{"name":"golangci-lint"}},"results":[{"ruleId":"errcheck","level":"error","message":{"text":"Error return value is not checked"},"locations":[{"physicalLocation":{"artifactLocation":{"uri":"bigbytes_test.go","index":0},"region":{"startLine":212,"startColumn":16}}}]}]}]}
1 issues:
* errcheck: 1
"#;
        let places = |log: &str| -> Vec<(String, u32, String)> {
            crate::parse::parse(log, &Workspace::new("/w"))
                .reports
                .iter()
                .map(|r| (r.file_path.clone(), r.line_number, format!("{:?}", r.error_type)))
                .collect()
        };
        assert_eq!(
            places(json),
            [
                ("english/words.go".to_owned(), 79, "Import".to_owned()),
                ("bytes.go".to_owned(), 90, "Linting".to_owned()),
            ]
        );
        assert_eq!(
            places(sarif),
            [("bigbytes_test.go".to_owned(), 212, "Linting".to_owned())]
        );
    }

    /// `go vet -json ./...` (Go 1.26) on spf13/cast: a document per package, `{}` for one with
    /// nothing to say, findings keyed by package and analyzer; then a pretty-printed JSON object
    /// of another kind whose nested list holds ruff-shaped fields: nobody's findings.
    #[test]
    fn go_vet_s_json_is_read_by_package_and_analyzer() {
        let log = "{}\n{\n\t\"github.com/spf13/cast\": {\n\t\t\"printf\": [\n\t\t\t{\n\t\t\t\t\"posn\": \"/w/basic.go:59:68\",\n\t\t\t\t\"end\": \"/w/basic.go:59:70\",\n\t\t\t\t\"message\": \"fmt.Errorf format %d reads arg #3, but call has 2 args\"\n\t\t\t}\n\t\t]\n\t}\n}\n{}\n{\n  \"metadata\": {\"rulesMeta\": {}, \"files\": [{\"filename\": \"src/app.py\", \"message\": \"scanned\"}]}\n}\n";
        let parsed = crate::parse::parse(log, &Workspace::new("/w"));
        assert_eq!(
            crate::parse::report_findings(&parsed),
            [(
                "basic.go",
                59,
                "Linting".to_owned(),
                "fmt.Errorf format %d reads arg #3, but call has 2 args"
            )]
        );
    }

    #[test]
    fn a_checkstyle_document_is_a_linter_s_findings() {
        // golangci-lint 2.6 `--output.checkstyle.path=stdout` (two files), then eslint 8's
        // `-f checkstyle` on one line without a declaration, then a pytest failure after both.
        let log = r#"<?xml version="1.0" encoding="UTF-8"?>

<checkstyle version="5.0">
  <file name="bigbytes.go">
    <error column="6" line="159" message="QF1001: could apply De Morgan&#39;s law" severity="error" source="staticcheck"></error>
  </file>
  <file name="bytes.go">
    <error column="2" line="90" message="ineffectual assignment to base" severity="error" source="ineffassign"></error>
  </file>
</checkstyle>
<checkstyle version="4.3"><file name="/w/src/a.js"><error line="3" column="7" severity="error" message="&apos;x&apos; is not defined. (no-undef)" source="eslint.rules.no-undef" /></file></checkstyle>
=================================== FAILURES ===================================
____________________________________ test_a ____________________________________

    def test_a():
>       assert f() == 2
E       assert 1 == 2

tests/test_a.py:4: AssertionError
"#;
        let parsed = crate::parse::parse(log, &Workspace::new("/w"));
        let got = crate::parse::report_findings(&parsed);
        assert_eq!(
            got,
            [
                // An undefined name does not resolve: IMPORT, ranked with the errors.
                (
                    "src/a.js",
                    3,
                    "Import".to_owned(),
                    "no-undef 'x' is not defined. (no-undef)"
                ),
                (
                    "tests/test_a.py",
                    4,
                    "Logic".to_owned(),
                    "AssertionError: assert 1 == 2"
                ),
                (
                    "bigbytes.go",
                    159,
                    "Linting".to_owned(),
                    "staticcheck QF1001: could apply De Morgan's law"
                ),
                (
                    "bytes.go",
                    90,
                    "Linting".to_owned(),
                    "ineffassign ineffectual assignment to base"
                ),
            ],
            "{:#?}",
            parsed.reports
        );
        assert!(!parsed.summary.runner_summary_seen);
    }

    #[test]
    fn staticcheck_s_json_records_are_findings_and_its_compile_records_the_compiler_s_errors() {
        // staticcheck 2025.1 `-f json`: a package that does not compile, then a check's finding.
        let log = r##"{"code":"compile","severity":"error","location":{"file":"","line":0,"column":0},"end":{"file":"","line":0,"column":0},"message":"# github.com/dustin/go-humanize/english\nenglish/words.go:66:45: cannot use quantity (variable of type int) as int64 value in argument to humanize.Comma\nenglish/words.go:79:34: undefined: strngs"}
{"code":"SA4006","severity":"error","location":{"file":"/w/bytes.go","line":90,"column":2},"end":{"file":"/w/bytes.go","line":90,"column":6},"message":"this value of base is never used"}
"##;
        let parsed = crate::parse::parse(log, &Workspace::new("/w"));
        let got: Vec<(&str, u32, String)> = parsed
            .reports
            .iter()
            .map(|r| (r.file_path.as_str(), r.line_number, format!("{:?}", r.error_type)))
            .collect();
        assert_eq!(
            got,
            [
                ("english/words.go", 66, "TypeError".to_owned()),
                ("english/words.go", 79, "Import".to_owned()),
                ("bytes.go", 90, "Linting".to_owned()),
            ],
            "{:#?}",
            parsed.reports
        );
    }
    /// mocha 12 `--reporter json` (an outside trial's fraction.js 5.3.4, two of its 314 tests):
    /// a failed test's `err.stack` is read as the log Node printed, under `tests` and again under
    /// `failures`; a log cut inside `failures` still has them under `tests`.
    #[test]
    fn mocha_s_json_report_places_each_failed_test_s_stack() {
        const REPORT: &str = r##"{
  "stats": {
    "suites": 9,
    "tests": 314,
    "passes": 291,
    "pending": 0,
    "failures": 23,
    "start": "2026-11-27T18:48:06.317Z",
    "end": "2026-11-27T18:48:06.404Z",
    "duration": 87
  },
  "tests": [
    {
      "title": "",
      "fullTitle": "Fraction ",
      "file": "/w/tests/fraction.test.js",
      "duration": 0,
      "currentRetry": 0,
      "speed": "fast",
      "err": {}
    },
    {
      "title": "1 - (-1)",
      "fullTitle": "Fraction 1 - (-1)",
      "file": "/w/tests/fraction.test.js",
      "duration": 1,
      "currentRetry": 0,
      "err": {
        "stack": "AssertionError [ERR_ASSERTION]: '0' == '2'\n    at Context.<anonymous> (tests/fraction.test.js:1583:18)\n    at process.processImmediate (node:internal/timers:483:21)",
        "message": "'0' == '2'",
        "generatedMessage": true,
        "name": "AssertionError",
        "code": "ERR_ASSERTION",
        "actual": "0",
        "expected": "2",
        "operator": "=="
      }
    },
    {
      "title": "-222/3",
      "fullTitle": "Fraction -222/3",
      "file": "/w/tests/fraction.test.js",
      "duration": 0,
      "currentRetry": 0,
      "err": {
        "stack": "TypeError: this.n is not a function\n    at Object.inverse (dist/fraction.js:569:52)\n    at action (tests/fraction.test.js:1567:69)\n    at Context.<anonymous> (tests/fraction.test.js:1583:24)\n    at process.processImmediate (node:internal/timers:483:21)",
        "message": "this.n is not a function"
      }
    }
  ],
  "pending": [],
  "failures": [
    {
      "title": "1 - (-1)",
      "fullTitle": "Fraction 1 - (-1)",
      "file": "/w/tests/fraction.test.js",
      "duration": 1,
      "currentRetry": 0,
      "err": {
        "stack": "AssertionError [ERR_ASSERTION]: '0' == '2'\n    at Context.<anonymous> (tests/fraction.test.js:1583:18)\n    at process.processImmediate (node:internal/timers:483:21)",
        "message": "'0' == '2'",
        "generatedMessage": true,
        "name": "AssertionError",
        "code": "ERR_ASSERTION",
        "actual": "0",
        "expected": "2",
        "operator": "=="
      }
    },
    {
      "title": "-222/3",
      "fullTitle": "Fraction -222/3",
      "file": "/w/tests/fraction.test.js",
      "duration": 0,
      "currentRetry": 0,
      "err": {
        "stack": "TypeError: this.n is not a function\n    at Object.inverse (dist/fraction.js:569:52)\n    at action (tests/fraction.test.js:1567:69)\n    at Context.<anonymous> (tests/fraction.test.js:1583:24)\n    at process.processImmediate (node:internal/timers:483:21)",
        "message": "this.n is not a function"
      }
    }
  ],
  "passes": [
    {
      "title": "",
      "fullTitle": "Fraction ",
      "file": "/w/tests/fraction.test.js",
      "duration": 0,
      "currentRetry": 0,
      "speed": "fast",
      "err": {}
    }
  ]
}"##;
        let workspace = crate::parse::Workspace::new("/w")
            .with_files(vec!["tests/fraction.test.js".to_owned(), "dist/fraction.js".to_owned()]);
        // Cut inside the first element of `failures` (the last `"failures"`: `stats` counts them).
        let cut = &REPORT[..REPORT.rfind("\"failures\"").expect("failures") + 40];
        for log in [REPORT, cut] {
            let parsed = crate::parse::parse(log, &workspace);
            let places = crate::parse::report_places(&parsed);
            let types: Vec<String> = crate::parse::report_findings(&parsed)
                .into_iter()
                .map(|f| f.2)
                .collect();
            assert_eq!(
                places,
                [
                    ("tests/fraction.test.js", 1583, Some("Fraction 1 - (-1)")),
                    ("dist/fraction.js", 569, Some("Fraction -222/3")),
                    ("tests/fraction.test.js", 1583, Some("Fraction -222/3")),
                ],
                "{log}"
            );
            assert_eq!(types, ["Logic", "TypeError", "TypeError"], "{log}");
        }
    }
}
