//! The Parser layer: `build log + workspace → bug reports`, deterministic, regex and heuristics
//! only — no LLM, no I/O, no clock, no hash-order iteration.
//!
//! The log is read once, line by line ([`clean`] takes off colours, redraws and timestamps,
//! `runners` a monorepo runner's package prefixes and nextest's indentation). Each format family
//! (`python`, `rust`, `go`, `js`, `lint`, `tap`, `format_check`, `esbuild`, `rollup`, `webpack`,
//! `deno`, `ty`, `biome`, `oxlint`, `stylelint`, `doctest`, `ava`, `behave`, `bandit`,
//! `structured`) keeps a little state (the text formats one set for each workspace package whose
//! output a runner interleaves) and hands what it finds to the [`Sink`], which normalises paths
//! ([`paths`]), merges duplicates, keeps the output bounded and ordered, and records test outcomes
//! and infrastructure signatures ([`outcome`]). A structured document (a JSON array, a jest report,
//! JUnit or Checkstyle XML) is read as it arrives, in bounded memory; the lines it takes are held
//! back from the text formats only until they are known to be the document. What the parser found
//! becomes a [`Verdict`] together with the exit code; `core::format` renders a report for people.

mod annotations;
mod ascii;
mod ava;
mod awaited;
mod bandit;
mod behave;
mod biome;
pub mod clean;
mod deno;
mod doctest;
mod esbuild;
mod format_check;
mod go;
mod js;
mod json_item;
mod json_stream;
mod lint;
mod look;
mod needles;
pub mod outcome;
mod oxlint;
pub mod paths;
mod python;
mod rollup;
mod runners;
mod rust;
mod structured;
mod stylelint;
mod tap;
mod ty;
mod webpack;
mod xml_stream;

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet, HashMap};

use serde::Serialize;

use crate::api::shared::{BugReport, ErrorType};
use look::Look;
pub(crate) use needles::{Marks, Needle};
pub use outcome::{InfraKind, SuiteSummary, TestOutcome, Verdict};
pub use paths::{MAX_PACKAGE_MANIFEST_BYTES, Workspace};
pub use python::PYTHON_STDLIB_MODULES;
pub use structured::{MAX_DOCUMENT_REPORTS, MAX_DOCUMENT_WARNINGS, MAX_HELD};

/// Most bug reports one log yields; past this the log says little more.
pub const MAX_REPORTS: usize = 200;
/// Most lint findings (and warnings) one log yields: the other half of [`MAX_REPORTS`] is kept for
/// what breaks the build or the tests, so that a linter's long report before them (a CI job that
/// lints, then tests) cannot crowd them out.
pub const MAX_LINT_REPORTS: usize = MAX_REPORTS / 2;
/// Most reports kept at one place (file, line and type), each naming another test that failed
/// there: a bug that fails a whole parametrised suite would otherwise fill [`MAX_REPORTS`] with
/// one place and hide the bugs reported after it. A few tests are enough to show how it fails.
pub const MAX_REPORTS_PER_PLACE: usize = 10;
/// Most failing tests' own lines reported for one place their failures were raised at (each test
/// that called down to it is a place to look at; a bug failing hundreds of tests leaves room).
pub const MAX_TEST_LINES_PER_RAISE_SITE: usize = 40;
/// Most test outcomes one log keeps.
pub const MAX_TESTS: usize = 20_000;
/// Longest message kept in a report.
pub const MAX_MESSAGE: usize = 1000;
/// Most paths whose repository-relative form one parse remembers ([`Sink::relative`]), and the
/// longest path remembered: at most about 1 MiB.
const MAX_RESOLVED: usize = 4096;
const MAX_RESOLVED_PATH: usize = 256;
/// Most structured documents read on one line (each one's end starts the next); the rest of such
/// a line goes to the text formats.
const MAX_DOCUMENTS_PER_LINE: usize = 8;

/// Everything the parser learnt from one log.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ParseOutput {
    /// Bug reports, most important first (errors before lint findings, then in log order).
    pub reports: Vec<BugReport>,
    /// Each test the log names, with its outcome, sorted by name.
    pub tests: Vec<TestResult>,
    /// What the test runners' own summaries said.
    pub summary: SuiteSummary,
    /// Infrastructure failures seen in the log (out of memory, DNS, disk full, ...), sorted.
    pub infra: Vec<InfraKind>,
    /// How much was left out past the bounds ([`MAX_REPORTS`], [`MAX_LINT_REPORTS`],
    /// [`MAX_REPORTS_PER_PLACE`], a document's [`MAX_DOCUMENT_REPORTS`]): each finding read and
    /// not kept (one said twice counts
    /// twice: it is not compared with the others), and each element of a report document past its
    /// bound, unread (an eslint file's element may hold several findings, or none; a jest test
    /// result's failure counts as one).
    pub left_out: usize,
    /// The first absolute path the log named that is neither in the workspace nor a
    /// dependency's or the toolchain's code (site-packages, a registry, ...). With no reports,
    /// it hints that the workspace given is not the folder the build ran in.
    pub outside_workspace: Option<String>,
}

impl ParseOutput {
    /// Whether the run passed, failed on the code, ran no tests, or failed on infrastructure.
    pub fn verdict(&self, exit_code: i32) -> Verdict {
        outcome::verdict(self, exit_code)
    }

    /// Names of the tests that failed or errored, sorted.
    pub fn failing_tests(&self) -> Vec<String> {
        self.tests
            .iter()
            .filter(|t| matches!(t.outcome, TestOutcome::Failed | TestOutcome::Error))
            .map(|t| t.name.clone())
            .collect()
    }
}

/// One test and how it ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TestResult {
    pub name: String,
    pub outcome: TestOutcome,
}

/// Parses a whole log.
pub fn parse(log: &str, workspace: &Workspace) -> ParseOutput {
    let mut parser = Parser::new(workspace);
    parser.lines(log);
    parser.finish()
}

/// The parser failed on a log: a bug of kubeheal's, reported as an error instead of a panic
/// unwinding through the caller, so that one repository's log cannot stop the operator's
/// reconcile loop (and every other run with it): the heal loop ends the run as a failure that is
/// not the code's, with this message. What the panic said is in the process's own log (the panic
/// hook prints it); the error carries none of the log's text.
#[derive(Debug, thiserror::Error)]
#[error(
    "the build log parser failed on this log: a bug in kubeheal (its panic message, in this process's log, says where); please report it with the log"
)]
pub struct ParserFailed;

/// [`parse`], with a panic of the parser caught and returned as [`ParserFailed`].
pub fn parse_contained(log: &str, workspace: &Workspace) -> Result<ParseOutput, ParserFailed> {
    // The parser's state is its own and dropped with the panic: nothing shared is left half
    // written.
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| parse(log, workspace))).map_err(|_| ParserFailed)
}

/// Parses a log read from `reader`, in constant memory: a line is held at most
/// [`clean::MAX_LINE`] bytes (the rest of a longer line goes on, piece by piece, to a structured
/// document that wants it, or is skipped), and bytes that are not UTF-8 become U+FFFD. The result
/// is the same as [`parse`] of the whole log.
pub fn parse_reader(mut reader: impl std::io::BufRead, workspace: &Workspace) -> std::io::Result<ParseOutput> {
    let mut parser = Parser::new(workspace);
    // A line that goes on past the buffer is handed on in pieces, decoded as they come.
    let mut decoder = Utf8Pieces::default();
    let mut in_line = false;
    loop {
        let chunk = match reader.fill_buf() {
            Ok(chunk) => chunk,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if chunk.is_empty() {
            break;
        }
        let Some(newline) = memchr::memchr(b'\n', chunk) else {
            // No line end in the buffer: hand on what there is and read on.
            decoder.push(chunk, &mut |s| parser.piece(s));
            in_line = true;
            let used = chunk.len();
            reader.consume(used);
            continue;
        };
        if !in_line {
            // The common case: every line that ends in this buffer is parsed where it lies.
            let end = memchr::memrchr(b'\n', chunk).unwrap_or(newline);
            let lines = &chunk[..end];
            // One UTF-8 check for the whole run of lines; `\n` never splits a character. The
            // check is vectorised (simdutf8): it reads every byte of the log.
            match simdutf8::basic::from_utf8(lines) {
                Ok(text) => parser.lines(text),
                Err(_) => {
                    for raw in lines.split(|&b| b == b'\n') {
                        parser.line(&utf8(raw));
                    }
                }
            }
            reader.consume(end + 1);
        } else {
            decoder.push(&chunk[..newline], &mut |s| parser.piece(s));
            decoder.finish(&mut |s| parser.piece(s));
            parser.end_pieces();
            in_line = false;
            reader.consume(newline + 1);
        }
    }
    if in_line {
        decoder.finish(&mut |s| parser.piece(s));
        parser.end_pieces();
    }
    Ok(parser.finish())
}

/// Bytes turned into text piece by piece, exactly as [`String::from_utf8_lossy`] turns all of
/// them: a character cut between two pieces waits for the next one.
#[derive(Default)]
struct Utf8Pieces {
    /// The start of a character whose end has not arrived (at most 3 bytes).
    carry: Vec<u8>,
}

impl Utf8Pieces {
    fn push(&mut self, mut bytes: &[u8], out: &mut impl FnMut(&str)) {
        if !self.carry.is_empty() {
            // Finish the carried character with as few bytes as it takes.
            let n = self.carry.len();
            let take = bytes.len().min(4 - n);
            let mut both = [0u8; 4];
            both[..n].copy_from_slice(&self.carry);
            both[n..n + take].copy_from_slice(&bytes[..take]);
            let both = &both[..n + take];
            let used = match std::str::from_utf8(both) {
                Ok(s) => {
                    let first = s.chars().next().map_or(0, char::len_utf8);
                    out(&s[..first]);
                    first
                }
                Err(e) if e.valid_up_to() > 0 => {
                    let s = std::str::from_utf8(&both[..e.valid_up_to()]).unwrap_or_default();
                    let first = s.chars().next().map_or(0, char::len_utf8);
                    out(&s[..first]);
                    first
                }
                Err(e) => match e.error_len() {
                    Some(len) => {
                        out("\u{FFFD}");
                        len
                    }
                    None => {
                        // Still not complete: the pieces were tiny.
                        self.carry = both.to_vec();
                        return;
                    }
                },
            };
            self.carry.clear();
            bytes = &bytes[used.saturating_sub(n)..];
        }
        loop {
            match std::str::from_utf8(bytes) {
                Ok(s) => {
                    if !s.is_empty() {
                        out(s);
                    }
                    return;
                }
                Err(e) => {
                    let valid = e.valid_up_to();
                    if valid > 0 {
                        out(std::str::from_utf8(&bytes[..valid]).unwrap_or_default());
                    }
                    match e.error_len() {
                        Some(len) => {
                            out("\u{FFFD}");
                            bytes = &bytes[valid + len..];
                        }
                        None => {
                            self.carry = bytes[valid..].to_vec();
                            return;
                        }
                    }
                }
            }
        }
    }

    /// The end of the text: a character left unfinished is U+FFFD.
    fn finish(&mut self, out: &mut impl FnMut(&str)) {
        if !self.carry.is_empty() {
            self.carry.clear();
            out("\u{FFFD}");
        }
    }
}

/// A piece of a line without the `\r` of a CRLF line end.
fn without_cr(piece: &str) -> &str {
    piece.strip_suffix('\r').unwrap_or(piece)
}

/// The line as text: borrowed when it is valid UTF-8 (the fast, common case), otherwise with
/// U+FFFD for each invalid sequence.
fn utf8(bytes: &[u8]) -> std::borrow::Cow<'_, str> {
    match std::str::from_utf8(bytes) {
        Ok(s) => std::borrow::Cow::Borrowed(s),
        Err(_) => String::from_utf8_lossy(bytes),
    }
}

/// The text formats and what each has open.
#[derive(Default)]
struct Formats {
    python: python::Python,
    rust: rust::Rust,
    go: go::Go,
    js: js::Js,
    lint: lint::Lint,
    tap: tap::Tap,
    format_check: format_check::FormatCheck,
    esbuild: esbuild::Esbuild,
    rollup: rollup::Rollup,
    deno: deno::Deno,
    webpack: webpack::Webpack,
    ty: ty::Ty,
    biome: biome::Biome,
    doctest: doctest::Doctest,
    ava: ava::Ava,
    oxlint: oxlint::Oxlint,
    stylelint: stylelint::Stylelint,
    behave: behave::Behave,
    bandit: bandit::Bandit,
}

/// The streaming parser: feed it raw lines, then `finish`.
pub struct Parser<'w> {
    sink: Sink<'w>,
    /// The text formats reading the lines of no workspace package's output.
    formats: Formats,
    /// Each workspace package's own text formats, by its prefix's index in [`runners::Runners`]:
    /// a monorepo runner interleaves several packages' output, and each tool's failure block
    /// must be read from its own package's lines.
    package_formats: Vec<Formats>,
    /// Whose formats read the current line: `None` for [`Parser::formats`].
    package: Option<usize>,
    structured: structured::Structured,
    /// Runners' text around a tool's lines (a package's prefix, nextest's indentation), taken off.
    runners: runners::Runners,
    /// A line arriving in pieces: its first bytes, until they are enough to clean it.
    partial: String,
    /// The pieces now are the rest of a long line, for a structured document.
    in_rest: bool,
    /// A `\r` at the end of the last piece of the rest: the line's own `\r` if the line ends next.
    pending_cr: bool,
    /// A long line of a GitLab job log ([`clean::TraceHeader`]) that the next lines may go on
    /// with (the runner breaks a long line every 32 KiB): its stream. The line is not ended
    /// until a line that does not go on with it comes, so that a JSON document on one line
    /// reaches its document whole.
    open_trace_line: Option<[u8; 3]>,
    /// The stream of the GitLab job log's line now arriving in pieces, if it has a header.
    trace_pieces: Option<[u8; 3]>,
    /// Every format is offered every line, as before lines were routed: a test compares the two.
    #[cfg(test)]
    offer_all: bool,
}

impl<'w> Parser<'w> {
    pub fn new(workspace: &'w Workspace) -> Self {
        Parser {
            sink: Sink::new(workspace),
            formats: Formats::default(),
            package_formats: Vec::new(),
            package: None,
            structured: structured::Structured::default(),
            runners: runners::Runners::default(),
            partial: String::new(),
            in_rest: false,
            pending_cr: false,
            open_trace_line: None,
            trace_pieces: None,
            #[cfg(test)]
            offer_all: false,
        }
    }

    /// Feeds a run of raw lines separated by `\n` (the last one needs no `\n`). The needles
    /// that tell a format whether a line concerns it ([`Needle`]) are found by one scan of the
    /// whole run rather than of each line.
    pub fn lines(&mut self, text: &str) {
        let bytes = text.as_bytes();
        let mut scan = needles::Scan::new(text);
        // The first escape or `\r` at or after the current line's start, found by a search of
        // its own: a line with none (most lines) is not searched for them again when cleaned,
        // and a coloured line costs one search, not one for each of its escapes.
        // A `$` marks a line that may start a workspace package's script (pnpm's `pkg test$ cmd`):
        // it is looked at as closely as one with escapes.
        let special_from =
            |from: usize| memchr::memchr3(0x1b, b'\r', b'$', &bytes[from..]).map_or(usize::MAX, |k| from + k);
        let mut special = special_from(0);
        let mut start = 0;
        for at in memchr::memchr_iter(b'\n', bytes) {
            let marks = scan.marks(start, at);
            self.line_with(&text[start..at], marks, special < at);
            start = at + 1;
            if special < start {
                special = special_from(start);
            }
        }
        let marks = scan.marks(start, text.len());
        self.line_with(&text[start..], marks, special < text.len());
    }

    /// Feeds a block of text that is not the log's own (a failure message inside a document),
    /// split into lines as [`str::lines`] splits it, with one needle scan for the whole block
    /// rather than every needle assumed on every line.
    pub(crate) fn block(&mut self, text: &str) {
        if text.is_empty() {
            return;
        }
        // `str::lines` yields no line after a final `\n`; a `\r` before it is cleaned off.
        self.lines(text.strip_suffix('\n').unwrap_or(text));
    }

    /// Feeds one raw line (without its `\n`).
    pub fn line(&mut self, raw: &str) {
        self.line_with(raw, Marks::ALL, true);
    }

    /// Feeds one raw line and the needles a scan found in it. What the formats see of the line
    /// (cleaned, or a part of it) holds no needle the raw line does not: cleaning only takes text
    /// off, unless taking an escape sequence off joins two bytes that stand side by side in a
    /// needle (which can make one), so such a line is searched again once cleaned (or, when its
    /// rest goes on to a document, may hold any).
    fn line_with(&mut self, raw: &str, marks: Marks, escapes_or_returns: bool) {
        if self.open_trace_line.is_some() && self.goes_on_with_trace_line(raw) {
            return;
        }
        let (line, joined) = clean::clean_line_noting_escapes(raw, escapes_or_returns);
        // Marks of the line before a runner's prefix comes off: what the prefix held too, a
        // bound on what the rest holds.
        let marks = if raw.len() > clean::MAX_LINE {
            if memchr::memchr(0x1b, raw.as_bytes()).is_some() {
                Marks::ALL
            } else {
                marks
            }
        } else if joined {
            needles::marks_of(&line)
        } else {
            marks
        };
        // pnpm's script start holds a `$`, which the buffer's scan looks for.
        let script_start = escapes_or_returns && has_byte(&line, b'$');
        self.sink.marks = marks;
        let line = self.without_runners_text(line, script_start, raw);
        self.line_body(raw, &line);
        self.sink.marks = Marks::ALL;
    }

    /// A cleaned line without a monorepo runner's prefix or nextest's indentation, learning from
    /// it the prefix it shows, if it shows one ([`runners`]). `script_start`: it may hold a `$`;
    /// `raw`: the line before cleaning.
    /// Most lines of most logs have nothing of a runner's: one look, inline.
    #[inline(always)]
    fn without_runners_text<'a>(
        &mut self,
        line: std::borrow::Cow<'a, str>,
        script_start: bool,
        raw: &str,
    ) -> std::borrow::Cow<'a, str> {
        let bytes = line.as_bytes();
        let pipe = self.sink.marks.may_hold(Needle::Pipe);
        if !script_start
            && self.runners.passes_over(bytes.first().copied())
            && !runners::may_show_a_prefix(bytes, pipe)
            && !runners::may_be_nextest_heading(bytes)
        {
            self.package = None;
            self.sink.package.clear();
            return line;
        }
        self.without_any_runners_text(line, script_start, raw)
    }

    fn without_any_runners_text<'a>(
        &mut self,
        line: std::borrow::Cow<'a, str>,
        script_start: bool,
        raw: &str,
    ) -> std::borrow::Cow<'a, str> {
        if script_start || runners::may_show_a_prefix(line.as_bytes(), self.sink.marks.may_hold(Needle::Pipe)) {
            self.runners.note(&line, script_start, self.sink.workspace);
        }
        let (line, package) = self.runners.strip(line, raw);
        self.sink.package.clear();
        if let Some(i) = package {
            self.sink.package.push_str(self.runners.folder(i));
            while self.package_formats.len() <= i {
                self.package_formats.push(Formats::default());
            }
        }
        self.package = package;
        line
    }

    fn line_body(&mut self, raw: &str, line: &str) {
        // Between documents, a line that can neither start one nor be a one-line JSON record (the
        // most of a log) goes straight to the text formats.
        if self.structured.between_documents()
            && raw.len() <= clean::MAX_LINE
            && !matches!(line.as_bytes().first(), Some(b'{' | b'[' | b'<'))
        {
            self.text(line);
            return;
        }
        self.begin(line);
        if let Some(header) = clean::trace_header(raw)
            && raw.len() > clean::MAX_LINE
        {
            // The runner may have broken the line: what goes on in the next lines is its rest.
            // A `\r` before the break is the line end's (CRLF), as at the end of any line.
            self.rest_piece(without_cr(&raw[clean::cut(raw)..]));
            self.open_trace_line = Some(header.stream);
            return;
        }
        if let Some(rest) = clean::rest_of_long_line(raw)
            && self.structured.wants_rest()
        {
            self.rest(rest);
        }
        self.end();
    }

    /// Whether the raw line goes on with the open long line of a GitLab job log (a `+` header of
    /// the same stream): then its text is the open line's rest. Any other line ends the open
    /// line first.
    fn goes_on_with_trace_line(&mut self, raw: &str) -> bool {
        let Some(stream) = self.open_trace_line else {
            return false;
        };
        if clean::trace_header(raw).is_some_and(|h| h.goes_on && h.stream == stream) {
            self.rest_piece(without_cr(&raw[clean::TRACE_HEADER_LEN..]));
            return true;
        }
        self.end_trace_line();
        false
    }

    /// Ends the open long line of a GitLab job log.
    fn end_trace_line(&mut self) {
        if self.open_trace_line.take().is_some() {
            self.pending_cr = false;
            self.end();
        }
    }

    /// Feeds part of a raw line: the line is the pieces up to [`Parser::end_pieces`]. What the
    /// parser makes of a line is the same whether it comes whole or in pieces.
    fn piece(&mut self, s: &str) {
        if self.in_rest {
            self.rest_piece(s);
            return;
        }
        // Two bytes past the cut tell a long line from one that only ends in `\r`.
        let need = clean::MAX_LINE + 2;
        if self.partial.len() + s.len() < need {
            self.partial.push_str(s);
            return;
        }
        let mut k = need - self.partial.len();
        while !s.is_char_boundary(k) {
            k += 1;
        }
        self.partial.push_str(&s[..k]);
        let first = std::mem::take(&mut self.partial);
        let stream = clean::trace_header(&first).map(|h| h.stream);
        if self.open_trace_line.is_some() && self.goes_on_with_trace_line(&first) {
            // The open line's rest goes on in this line's pieces, and may go on after them.
            self.trace_pieces = self.open_trace_line.take();
            self.in_rest = true;
            self.rest_piece(&s[k..]);
            return;
        }
        self.trace_pieces = stream;
        let line = clean::clean_line(&first);
        let script_start = has_byte(&line, b'$');
        let line = self.without_runners_text(line, script_start, &first);
        self.begin(&line);
        self.in_rest = true;
        self.rest_piece(&first[clean::cut(&first)..]);
        self.rest_piece(&s[k..]);
    }

    fn rest_piece(&mut self, s: &str) {
        if s.is_empty() || !self.structured.wants_rest() {
            return;
        }
        if std::mem::take(&mut self.pending_cr) {
            self.rest("\r");
        }
        match s.strip_suffix('\r') {
            Some(body) => {
                self.pending_cr = true;
                if !body.is_empty() {
                    self.rest(body);
                }
            }
            None => self.rest(s),
        }
    }

    /// Ends the line fed by [`Parser::piece`].
    fn end_pieces(&mut self) {
        if std::mem::take(&mut self.in_rest) {
            if let Some(stream) = self.trace_pieces.take() {
                // A long line of a GitLab job log: the next lines may go on with it. A `\r`
                // before the break is the line end's.
                self.pending_cr = false;
                self.open_trace_line = Some(stream);
                return;
            }
            self.pending_cr = false;
            self.end();
        } else {
            let line = std::mem::take(&mut self.partial);
            self.line(&line);
        }
    }

    /// The first [`clean::MAX_LINE`] bytes of a line, cleaned. A document that ends on the line
    /// (a tool that prints no final newline, then the next tool's output) leaves the rest of the
    /// line, which is read as a line of its own: it may begin another document, which then takes
    /// the rest of a long line. Each round reads a shorter text; a line of many tiny documents
    /// goes to the text formats after a few.
    fn begin(&mut self, line: &str) {
        self.begin_one(line);
        let mut rounds = 0;
        while let Some(tail) = self.structured.take_after_end() {
            rounds += 1;
            if rounds > MAX_DOCUMENTS_PER_LINE {
                self.text(&tail);
                break;
            }
            // A runner's or a collector's prefix may start the line of its own (a JUnit
            // document that ended without a newline, then `[lint : ruff] a.py:2:8: F401 ...`).
            let tail = self.without_runners_text(std::borrow::Cow::Borrowed(&tail), has_byte(&tail, b'$'), &tail);
            self.begin_one(&tail);
        }
    }

    fn begin_one(&mut self, line: &str) {
        // A structured document takes the lines it is made of.
        let taken = self.structured.begin_line(line, &mut self.sink);
        let Some(gave_up) = self.structured.take_gave_up() else {
            if !taken {
                self.text(line);
            }
            return;
        };
        // A document given up: the text formats see the lines it held back, as if it never was.
        self.replay(&gave_up.before);
        if gave_up.restart && self.structured.begin_line(line, &mut self.sink) {
            // Another document begins on this line.
            if self.structured.take_gave_up().is_some() {
                self.text(line);
            }
        } else {
            self.text(line);
        }
    }

    /// The rest of a long line.
    fn rest(&mut self, piece: &str) {
        self.structured.rest(piece, &mut self.sink);
        self.after_rest();
    }

    fn end(&mut self) {
        self.structured.end_line(&mut self.sink);
        self.after_rest();
        // A document that ended past the first bytes of a long line: what followed it there (at
        // most a line's worth) is a line of its own.
        if let Some(tail) = self.structured.take_after_end() {
            let line = clean::clean_line(&tail).into_owned();
            self.begin(&line);
            self.structured.end_line(&mut self.sink);
            self.after_rest();
            // A document that began and ended in that text too: its rest was all there is.
            if let Some(tail) = self.structured.take_after_end() {
                self.text(&tail);
            }
        }
    }

    /// A document given up past the first bytes of the line gives the line to the text formats.
    fn after_rest(&mut self) {
        if let Some(gave_up) = self.structured.take_gave_up() {
            self.replay(&gave_up.before);
            self.text(&gave_up.current);
        }
    }

    /// Lines a document held back and gave up: they go to the text formats, and to the one-line
    /// JSON formats (a JUnit document cut inside a tag, then cargo's JSON messages). A document
    /// that begins among them is not read: it would mean reading them again, without bound.
    fn replay(&mut self, lines: &str) {
        // Lines held back from before are not the current line: what a scan found in it says
        // nothing of them.
        let marks = std::mem::replace(&mut self.sink.marks, Marks::ALL);
        for line in lines.split_terminator('\n') {
            if !structured::single_line(line, &mut self.sink) {
                self.text(line);
            }
        }
        self.sink.marks = marks;
    }

    /// A line for the text formats: the current package's, or those of no package's output.
    fn text(&mut self, line: &str) {
        // An annotation is the CI's, whatever tool printed it: no format reads it.
        if matches!(line.as_bytes().first(), Some(b':' | b'#')) && annotations::line(line, &mut self.sink) {
            return;
        }
        let formats = match self.package {
            Some(i) => &mut self.package_formats[i],
            None => &mut self.formats,
        };
        #[cfg(test)]
        let offer_all = self.offer_all;
        #[cfg(not(test))]
        let offer_all = false;
        formats.text(line, &mut self.sink, offer_all);
    }

    pub fn finish(mut self) -> ParseOutput {
        self.end_trace_line();
        if let Some(held) = self.structured.finish(&mut self.sink) {
            self.replay(&held);
        }
        self.sink.package.clear();
        self.formats.finish(&mut self.sink);
        // What each package's formats still hold is reported with its paths resolved in the
        // package's folder.
        for (i, formats) in self.package_formats.iter_mut().enumerate() {
            self.runners.folder(i).clone_into(&mut self.sink.package);
            formats.finish(&mut self.sink);
        }
        self.sink.finish()
    }
}

impl Formats {
    /// A line for the text formats: each is handed the line only when, by one look at it and
    /// the format's own state, the line can concern it (most lines concern one or two).
    /// `offer_all`: every format is handed every line (a test compares the two).
    #[inline(always)]
    fn text(&mut self, line: &str, sink: &mut Sink<'_>, offer_all: bool) {
        let look = Look::new(line, sink.marks);
        if look.first == Some(b'#')
            && let Some(output) = self.tap.comment_as_output(line)
        {
            // `node --test` prints a test file's stderr as TAP comments, the error that killed
            // the file among it ([`tap::Tap::comment_as_output`]): TAP reads the comment, the
            // other formats the error.
            if offer_all || self.tap.wants(&look) {
                self.tap.line(line, sink);
            }
            self.offer(&Look::new(output, sink.marks), sink, offer_all, false);
            return;
        }
        self.offer(&look, sink, offer_all, true);
    }

    /// Hands the line to each format that wants it (`tap`: TAP too).
    #[inline]
    fn offer(&mut self, look: &Look<'_>, sink: &mut Sink<'_>, offer_all: bool, tap: bool) {
        let line = look.line;
        if offer_all || outcome::wants(look) {
            outcome::line(line, sink);
        }
        if offer_all || self.python.wants(look) {
            self.python.line(line, sink);
        }
        if offer_all || self.rust.wants(look) {
            self.rust.line(line, sink);
        }
        if offer_all || self.go.wants(look) {
            self.go.line(line, sink);
        }
        if offer_all || self.js.wants(look) {
            self.js.line(line, sink);
        }
        if offer_all || self.lint.wants(look) {
            self.lint.line(line, sink);
        }
        if tap && (offer_all || self.tap.wants(look)) {
            self.tap.line(line, sink);
        }
        if offer_all || self.format_check.wants(look) {
            self.format_check.line(line, sink);
        }
        if offer_all || self.esbuild.wants(look) {
            self.esbuild.line(line, sink);
        }
        if offer_all || self.rollup.wants(look) {
            self.rollup.line(line, sink);
        }
        if offer_all || self.deno.wants(look) {
            self.deno.line(line, sink);
        }
        if offer_all || self.webpack.wants(look) {
            self.webpack.line(line, sink);
        }
        if offer_all || self.ty.wants(look) {
            self.ty.line(line, sink);
        }
        if offer_all || self.biome.wants(look) {
            self.biome.line(line, sink);
        }
        if offer_all || self.doctest.wants(look) {
            self.doctest.line(line, sink);
        }
        if offer_all || self.ava.wants(look) {
            self.ava.line(line, sink);
        }
        if offer_all || self.oxlint.wants(look) {
            self.oxlint.line(line, sink);
        }
        if offer_all || self.stylelint.wants(look) {
            self.stylelint.line(line, sink);
        }
        if offer_all || self.behave.wants(look) {
            self.behave.line(line, sink);
        }
        if offer_all || self.bandit.wants(look) {
            self.bandit.line(line, sink);
        }
    }

    fn finish(&mut self, sink: &mut Sink<'_>) {
        self.python.finish(sink);
        self.rust.finish(sink);
        self.go.finish(sink);
        self.js.finish(sink);
        self.tap.finish(sink);
        self.format_check.finish(sink);
        self.doctest.finish(sink);
        self.ava.finish(sink);
    }
}

/// How much a report matters when reports are ordered: errors before warnings and lint.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Rank {
    Error,
    Warning,
}

impl Rank {
    /// Lint findings rank below everything that breaks the build or the tests.
    pub(crate) fn of(error_type: ErrorType) -> Rank {
        if error_type == ErrorType::Linting {
            Rank::Warning
        } else {
            Rank::Error
        }
    }
}

/// How often a frame repeats in an overflowed stack to be taken for its recursive call: Python
/// prints a repeated frame three times before `[Previous line repeated 971 more times]`, Node
/// shows ten frames, Go a hundred.
pub(crate) const RECURSION_REPEATS: u32 = 3;

/// How many times each place in the project was seen, at most [`PlaceCounts::MAX_PLACES`]
/// places: where the other threads or goroutines of a hang are blocked (a stack each), or the
/// calls an overflowed stack repeats (a frame each).
#[derive(Default)]
pub(crate) struct PlaceCounts(Vec<((String, u32), u32)>);

impl PlaceCounts {
    const MAX_PLACES: usize = 16;

    /// `place` seen once more.
    pub(crate) fn count(&mut self, place: (String, u32)) {
        if let Some((_, count)) = self.0.iter_mut().find(|(p, _)| *p == place) {
            *count += 1;
        } else if self.0.len() < Self::MAX_PLACES {
            self.0.push((place, 1));
        }
    }

    /// The call a stack that overflowed repeats most, when it repeats it at least
    /// [`RECURSION_REPEATS`] times: the recursion without end (a base case never reached, an
    /// override calling itself), where the fix goes, wherever the limit happened to be reached.
    pub(crate) fn recursive_call(&self) -> Option<&(String, u32)> {
        self.most()
            .filter(|&(_, repeats)| repeats >= RECURSION_REPEATS)
            .map(|(place, _)| place)
    }

    /// The place seen most (the first counted, on a tie), and how many times.
    pub(crate) fn most(&self) -> Option<(&(String, u32), u32)> {
        self.0
            .iter()
            .rev()
            .max_by_key(|(_, count)| *count)
            .map(|(place, count)| (place, *count))
    }
}

/// The confidence of a test failure's report at the test's own frame, beside the one where the
/// failure was raised below it (in the code the test calls): there the bug more likely is.
pub(crate) const TEST_FRAME_CONFIDENCE: f64 = 0.8;

/// A report before path normalisation.
pub(crate) struct Finding<'a> {
    pub file: &'a str,
    pub line: u32,
    pub error_type: ErrorType,
    pub message: std::borrow::Cow<'a, str>,
    pub test: Option<&'a str>,
    pub confidence: f64,
    pub rank: Rank,
    /// A checker's or compiler's diagnostic (mypy, tsc, rustc, the Go compiler and vet, a
    /// linter): a tool prints each once, so two at one place with different messages are two
    /// errors (mypy's `arg-type` and `return-value` at one call) and both reach the healer. A
    /// test failure is restated in several sections of a log in words that differ (the
    /// traceback, the short summary), so it is merged by place and type instead.
    pub diagnostic: bool,
}

/// Where everything found goes: normalises, merges, bounds and orders.
pub(crate) struct Sink<'w> {
    pub workspace: &'w Workspace,
    reports: Vec<(Rank, BugReport)>,
    /// (file, line, type, diagnostic's message) → reports at that place, for merging duplicates.
    index: BTreeMap<(String, u32, ErrorType, String), Vec<usize>>,
    /// The test failures' reports that a diagnostic at their place was merged into: a second
    /// diagnostic there is another error, a report of its own.
    diagnosed: BTreeSet<usize>,
    /// Each test's outcome by name. Hashed, not ordered: a long log records an outcome on most of
    /// its lines, and a lookup among thousands of names that share long prefixes (`tests/...::`)
    /// cost a dozen string comparisons in an ordered map. Sorted once, when read out.
    tests: HashMap<String, TestOutcome, foldhash::fast::RandomState>,
    pub summary: SuiteSummary,
    infra: Vec<InfraKind>,
    /// How many of the reports rank as [`Rank::Warning`].
    warnings: usize,
    /// The failing tests' lines reported for each raise site ([`Sink::report_raised`]).
    test_lines: HashMap<(String, u32), usize, foldhash::fast::RandomState>,
    /// While a structured document is read: the count of [`Rank::Warning`] reports it may not
    /// reach ([`structured::MAX_DOCUMENT_WARNINGS`]).
    pub(crate) warnings_bound: Option<usize>,
    /// Findings left out past the bounds ([`ParseOutput::left_out`]).
    left_out: usize,
    /// The reports made for a finding that named its test, by index: what
    /// [`Sink::withdraw_test`] may take back (a report another finding made, which a test's
    /// finding merged into, stays).
    named_by_test: BTreeSet<usize>,
    /// The reports taken back ([`Sink::withdraw_test`]), left out when the output is made.
    withdrawn: BTreeSet<usize>,
    /// [`ParseOutput::outside_workspace`], noted as paths are resolved.
    outside_workspace: RefCell<Option<String>>,
    /// The needles the text the formats now read may hold.
    marks: Marks,
    /// Paths already made repository-relative, and what they became: a log names the same few
    /// files in frame after frame and report after report, and each resolution trims, copies,
    /// scans for foreign folders and searches the listing. At most [`MAX_RESOLVED`]; behind a
    /// `RefCell` so that the formats can ask while they hold the sink shared.
    resolved: RefCell<HashMap<Box<str>, Option<String>, foldhash::fast::RandomState>>,
    /// The folder of the workspace package whose script printed the current line (pnpm's
    /// recursive runs, [`runners::Runners`]): a relative path is that folder's first.
    pub(crate) package: String,
}

impl<'w> Sink<'w> {
    fn new(workspace: &'w Workspace) -> Self {
        Sink {
            workspace,
            reports: Vec::new(),
            index: BTreeMap::new(),
            diagnosed: BTreeSet::new(),
            tests: HashMap::default(),
            summary: SuiteSummary::default(),
            infra: Vec::new(),
            warnings: 0,
            test_lines: HashMap::default(),
            warnings_bound: None,
            left_out: 0,
            named_by_test: BTreeSet::new(),
            withdrawn: BTreeSet::new(),
            outside_workspace: RefCell::default(),
            marks: Marks::ALL,
            resolved: RefCell::default(),
            package: String::new(),
        }
    }

    /// `path` as a repository-relative path ([`Workspace::relative`]), `None` when it is not
    /// the project's file; remembered for the paths seen first.
    pub fn relative(&self, path: &str) -> Option<String> {
        self.resolving(path, |r| r.cloned())
    }

    /// Whether `path` is one of the project's files ([`Workspace::relative`] resolves it).
    pub fn is_project_file(&self, path: &str) -> bool {
        self.resolving(path, |r| r.is_some())
    }

    /// Whether `path` is one of the project's test files ([`paths::is_test_file`]).
    pub(crate) fn is_test_file(&self, path: &str) -> bool {
        self.resolving(path, |r| r.is_some_and(|p| paths::is_test_file(p)))
    }

    fn resolving<T>(&self, path: &str, f: impl FnOnce(Option<&String>) -> T) -> T {
        if !self.package.is_empty() && !path.starts_with('/') && !has_byte(path, b':') {
            // The package's file when the repository has it: a report made on another
            // package's line (interleaved output) still finds a file named once elsewhere.
            let in_package = format!("{}/{path}", self.package);
            if let Some(found) = self.resolved_path(&in_package).filter(|f| self.workspace.holds(f)) {
                return f(Some(&found));
            }
        }
        self.resolved_path_with(path, f)
    }

    /// `path` resolved (and remembered), if it resolves.
    fn resolved_path(&self, path: &str) -> Option<String> {
        self.resolved_path_with(path, |r| r.cloned())
    }

    fn resolved_path_with<T>(&self, path: &str, f: impl FnOnce(Option<&String>) -> T) -> T {
        if let Some(known) = self.resolved.borrow().get(path) {
            return f(known.as_ref());
        }
        let relative = self.workspace.relative(path);
        if relative.is_none() && Workspace::is_absolute_project_path(path) {
            let mut outside = self.outside_workspace.borrow_mut();
            if outside.is_none() {
                *outside = Some(truncate(path.trim(), MAX_MESSAGE));
            }
        }
        let answer = f(relative.as_ref());
        let mut resolved = self.resolved.borrow_mut();
        if resolved.len() < MAX_RESOLVED && path.len() <= MAX_RESOLVED_PATH {
            resolved.insert(path.into(), relative);
        }
        answer
    }

    /// Whether the text the formats now read may hold `needle`: when not, it does not.
    pub fn may_hold(&self, needle: Needle) -> bool {
        self.marks.may_hold(needle)
    }

    /// Sets what the text the formats read next may hold; returns what was set before. Text that
    /// is not the current line's (decoded from a JSON record) may hold anything.
    pub fn set_marks(&mut self, marks: Marks) -> Marks {
        std::mem::replace(&mut self.marks, marks)
    }

    /// Records a test's failure raised at `raised`'s place and, when that is in the code the test
    /// calls (the project's, or a helper of the test file's), the test's own frame that led there
    /// (`called_at`, which says which call failed) as a second place at
    /// [`TEST_FRAME_CONFIDENCE`]. Each failing test's line is a place to look at, past
    /// the raise site's own bound too, up to [`MAX_TEST_LINES_PER_RAISE_SITE`]: a bug that fails
    /// hundreds of tests leaves room for the next bug. Returns the index of each report
    /// ([`Sink::report`]).
    pub(crate) fn report_raised<'a>(
        &mut self,
        raised: Finding<'a>,
        called_at: Option<(&'a str, u32)>,
    ) -> (Option<usize>, Option<usize>) {
        let called_at = called_at.filter(|&place| place != (raised.file, raised.line));
        let second = called_at.map(|(file, line)| Finding {
            file,
            line,
            error_type: raised.error_type,
            message: raised.message.clone(),
            test: raised.test,
            confidence: TEST_FRAME_CONFIDENCE,
            rank: raised.rank,
            diagnostic: raised.diagnostic,
        });
        let site = second.is_some().then_some((raised.file, raised.line));
        let kept = self.report(raised);
        let Some((second, (file, line))) = second.zip(site) else {
            return (kept, None);
        };
        (kept, self.report_test_line(file, line, second))
    }

    /// Records a failing test's own line (`called`), the frame that led to the failure raised at
    /// `raised_file:raised_line` in the code the test calls, up to
    /// [`MAX_TEST_LINES_PER_RAISE_SITE`] such lines for that raise site ([`Sink::report_raised`],
    /// for a format that reads the test's frame after the raise site's report). Returns the index
    /// of its report.
    pub(crate) fn report_test_line(
        &mut self,
        raised_file: &str,
        raised_line: u32,
        called: Finding<'_>,
    ) -> Option<usize> {
        let site = (self.relative(raised_file)?, raised_line);
        if self
            .test_lines
            .get(&site)
            .is_some_and(|&n| n >= MAX_TEST_LINES_PER_RAISE_SITE)
        {
            self.left_out += 1;
            return None;
        }
        // Counted when reported anew: a test line merged into its report, or past its own
        // place's bound, takes no room from another test's line.
        let reports = self.reports.len();
        let called = self.report(called);
        if self.reports.len() > reports {
            *self.test_lines.entry(site).or_default() += 1;
        }
        called
    }

    /// Records a finding; returns the index of its report, or `None` when its file is not the
    /// project's code or the report limit is reached.
    pub fn report(&mut self, f: Finding<'_>) -> Option<usize> {
        let file = self.relative(f.file)?;
        let line = f.line.max(1);
        // Diagnostics (lint findings among them) at one line are distinct by message; other
        // reports by place and type.
        let detail = if f.diagnostic || f.error_type == ErrorType::Linting {
            f.message.trim().to_owned()
        } else {
            String::new()
        };
        let key = (file, line, f.error_type, detail);
        let own = self.index.get(&key);
        // Found through another key: a diagnostic merged into a failure is indexed as itself too.
        let through_failure = own.is_none() && f.diagnostic;
        let existing = match own {
            Some(existing) => Some(existing),
            None if f.error_type == ErrorType::Linting => None,
            // A test failure and a diagnostic of one type at one place are one bug seen by two
            // tools (eslint's parsing error, then jest's SyntaxError), in either order: a failure
            // merges into the first report at its place, a diagnostic into the failure there
            // (whose empty detail sorts first) unless another diagnostic already was.
            None => self
                .index
                .range((key.0.clone(), line, f.error_type, String::new())..)
                .next()
                .filter(|((file, l, t, detail), reports)| {
                    *file == key.0
                        && *l == line
                        && *t == f.error_type
                        && (!f.diagnostic || detail.is_empty() && !reports.iter().any(|i| self.diagnosed.contains(i)))
                })
                .map(|(_, reports)| reports),
        };
        if let Some(existing) = existing {
            let same_test = existing.iter().copied().find(|&i| {
                let t = self.reports[i].1.test_name.as_deref();
                f.test.is_none() || t == f.test || t.is_none()
            });
            let at_place = existing.len();
            if let Some(i) = same_test {
                let report = &mut self.reports[i].1;
                if report.test_name.is_none()
                    && let Some(test) = f.test
                {
                    report.test_name = Some(test.to_owned());
                    // The report now says what the finding that names its test says (doctest's
                    // example, read after the traceback under it was): as surely, when surer.
                    if report.confidence_score.is_none_or(|c| c < f.confidence) {
                        report.confidence_score = Some(f.confidence);
                    }
                }
                if through_failure {
                    self.diagnosed.insert(i);
                    self.index.entry(key).or_default().push(i);
                }
                return Some(i);
            }
            if at_place >= MAX_REPORTS_PER_PLACE {
                self.left_out += 1;
                return None;
            }
        }
        if self.reports.len() >= MAX_REPORTS
            || (f.rank == Rank::Warning
                && (self.warnings >= MAX_LINT_REPORTS || self.warnings_bound.is_some_and(|b| self.warnings >= b)))
        {
            self.left_out += 1;
            return None;
        }
        if f.rank == Rank::Warning {
            self.warnings += 1;
        }
        let report = BugReport {
            file_path: key.0.clone(),
            line_number: line,
            error_type: f.error_type,
            message: truncate(f.message.trim(), MAX_MESSAGE),
            test_name: f.test.map(str::to_owned),
            confidence_score: Some(f.confidence),
        };
        self.index.entry(key).or_default().push(self.reports.len());
        if f.test.is_some() {
            self.named_by_test.insert(self.reports.len());
        }
        self.reports.push((f.rank, report));
        Some(self.reports.len() - 1)
    }

    /// Takes back what a test's failure reported, when the runner says afterwards that the test
    /// passed: a `#[should_panic]` test's panic, printed under `cargo test -- --nocapture`
    /// before its `... ok`. Its outcome is recorded as passed.
    pub fn withdraw_test(&mut self, name: &str) {
        for &i in &self.named_by_test {
            if self.reports[i].1.test_name.as_deref() == Some(name) {
                self.withdrawn.insert(i);
            }
        }
        // A later finding at its place makes a report of its own, not merged into one taken back.
        let withdrawn = &self.withdrawn;
        for reports in self.index.values_mut() {
            reports.retain(|i| !withdrawn.contains(i));
        }
        if let Some(outcome) = self.tests.get_mut(name) {
            *outcome = TestOutcome::Passed;
        } else if self.tests.len() < MAX_TESTS {
            self.tests.insert(name.to_owned(), TestOutcome::Passed);
        }
    }

    /// Counts findings a document's bound left out unread ([`ParseOutput::left_out`]).
    pub fn leave_out(&mut self, findings: usize) {
        self.left_out += findings;
    }

    /// Names the test of an earlier report (used when the name comes later in the log).
    pub fn set_test(&mut self, report: usize, test: &str) {
        if let Some((_, r)) = self.reports.get_mut(report) {
            r.test_name = Some(test.to_owned());
        }
    }

    pub fn test(&mut self, name: &str, outcome: TestOutcome) {
        // A runner's name mostly comes trimmed: then no scan.
        let trimmed_already = !name.as_bytes().first().is_some_and(|&b| b <= b' ' || b >= 0x80)
            && !name.as_bytes().last().is_some_and(|&b| b <= b' ' || b >= 0x80);
        let name = if trimmed_already { name } else { trim(name) };
        if name.is_empty() {
            return;
        }
        if let Some(existing) = self.tests.get_mut(name) {
            // A later, worse outcome wins (a test reported passed by one runner line and failed
            // by another failed).
            if outcome.severity() > existing.severity() {
                *existing = outcome;
            }
        } else if self.tests.len() < MAX_TESTS {
            self.tests.insert(name.to_owned(), outcome);
        }
    }

    /// The names of the tests recorded, sorted.
    pub fn sorted_test_names(&self) -> Vec<&str> {
        let mut names: Vec<&str> = self.tests.keys().map(String::as_str).collect();
        names.sort_unstable();
        names
    }

    /// How many reports there are.
    pub fn report_count(&self) -> usize {
        self.reports.len()
    }

    /// How many of the reports rank as [`Rank::Warning`].
    pub fn warning_count(&self) -> usize {
        self.warnings
    }

    pub fn infra(&mut self, kind: InfraKind) {
        if !self.infra.contains(&kind) {
            self.infra.push(kind);
        }
    }

    fn finish(mut self) -> ParseOutput {
        if !self.withdrawn.is_empty() {
            let withdrawn = std::mem::take(&mut self.withdrawn);
            let mut i = 0;
            self.reports.retain(|_| {
                i += 1;
                !withdrawn.contains(&(i - 1))
            });
        }
        // Stable: equal ranks keep log order.
        self.reports.sort_by_key(|(rank, _)| *rank);
        self.infra.sort();
        // Names are unique, so an unstable sort gives the one order.
        let mut tests: Vec<TestResult> = self
            .tests
            .into_iter()
            .map(|(name, outcome)| TestResult { name, outcome })
            .collect();
        tests.sort_unstable_by(|a, b| a.name.cmp(&b.name));
        ParseOutput {
            reports: self.reports.into_iter().map(|(_, r)| r).collect(),
            tests,
            summary: self.summary,
            infra: self.infra,
            left_out: self.left_out,
            outside_workspace: self.outside_workspace.into_inner(),
        }
    }
}

/// The first `max` characters of `s`, on a character boundary.
pub(crate) fn truncate(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((i, _)) => s[..i].to_owned(),
        None => s.to_owned(),
    }
}

/// At most `max` bytes of `s`, cut on a character boundary (Kubernetes counts bytes).
pub fn truncate_bytes(s: &str, max: usize) -> &str {
    let mut end = max.min(s.len());
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// Splits `path:line[:col][: rest]` at the start of a line: the path may not contain spaces or
/// `:` (Windows drive letters aside). Returns (path, line, rest after the location).
pub(crate) fn split_location(s: &str) -> Option<(&str, u32, &str)> {
    let skip = if s.as_bytes().get(1) == Some(&b':') && s.as_bytes().first().is_some_and(u8::is_ascii_alphabetic) {
        2
    } else {
        0
    };
    let colon = skip + find_byte(&s[skip..], b':')?;
    let path = &s[..colon];
    if path.is_empty() || has_byte(path, b' ') || has_byte(path, b'\t') {
        return None;
    }
    let after = &s[colon + 1..];
    let digits = after.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 || digits > 9 {
        return None;
    }
    let line: u32 = after[..digits].parse().ok()?;
    let mut rest = &after[digits..];
    // An optional `:col`.
    if let Some(r) = rest.strip_prefix(':') {
        let col = r.bytes().take_while(u8::is_ascii_digit).count();
        rest = if col > 0 { &r[col..] } else { rest };
    }
    let rest = rest.strip_prefix(':').unwrap_or(rest);
    Some((path, line, rest.trim_start()))
}

/// Where `needle` first occurs in `s`, found without the set-up a substring searcher does on
/// each call: for the short needles looked for in short lines, a vectorised search of one byte
/// of the needle (its first that is neither a space nor a letter, which lines hold less often)
/// and a check of each place it stands is the fastest search.
pub(crate) fn find_short(s: &str, needle: &str) -> Option<usize> {
    let (h, n) = (s.as_bytes(), needle.as_bytes());
    let k = n
        .iter()
        .position(|b| !(b.is_ascii_alphabetic() || *b == b' '))
        .unwrap_or(0);
    let Some(&key) = n.get(k) else {
        return Some(0);
    };
    // Each place of the key byte, in order, is the place of the needle's `k`th byte.
    let mut from = k;
    while from < h.len() {
        let at = from + memchr::memchr(key, &h[from..])? - k;
        if h[at..].starts_with(n) {
            return Some(at);
        }
        from = at + k + 1;
    }
    None
}

/// Whether `needle` occurs in `s` (see [`find_short`]).
pub(crate) fn has(s: &str, needle: &str) -> bool {
    find_short(s, needle).is_some()
}

/// The place at the start of a row a linter prints indented under its file's line, `  12:5  rest`
/// (eslint `stylish`, ruff `grouped`): the line number and what follows the whitespace after the
/// column, as `^S+([0-9]+):[0-9]+S+` reads them for the whitespace `S` that `is_space` tells.
pub(crate) fn row_place(line: &str, is_space: impl Fn(u8) -> bool) -> Option<(&str, &str)> {
    let spaces = |s: &str| s.bytes().take_while(|&b| is_space(b)).count();
    let digits = |s: &str| s.bytes().take_while(u8::is_ascii_digit).count();
    let indent = spaces(line);
    let at_line = &line[indent..];
    let n = digits(at_line);
    if indent == 0 || n == 0 {
        return None;
    }
    let at_column = at_line[n..].strip_prefix(':')?;
    let column = digits(at_column);
    let gap = spaces(&at_column[column..]);
    if column == 0 || gap == 0 {
        return None;
    }
    Some((&at_line[..n], &at_column[column + gap..]))
}

/// Where the ASCII `byte` first is in `s`. This and the helpers below are `str`'s char searches
/// done faster on a log's short texts: a text of 16 bytes or more by a vectorised search
/// (`str::contains(char)` and its kin cost several times as much there, and they run on most
/// lines), a shorter one a byte at a time (cheaper than setting up a vectorised search).
#[inline]
fn find_byte(s: &str, byte: u8) -> Option<usize> {
    let b = s.as_bytes();
    if b.len() < 16 {
        b.iter().position(|&c| c == byte)
    } else {
        memchr::memchr(byte, b)
    }
}

/// Where the ASCII `byte` last is in `s`.
#[inline]
fn rfind_byte(s: &str, byte: u8) -> Option<usize> {
    let b = s.as_bytes();
    if b.len() < 16 {
        b.iter().rposition(|&c| c == byte)
    } else {
        memchr::memrchr(byte, b)
    }
}

/// Whether `s` holds the ASCII `byte`.
#[inline]
pub(crate) fn has_byte(s: &str, byte: u8) -> bool {
    find_byte(s, byte).is_some()
}

/// `s.split_once(byte)` for an ASCII `byte`.
#[inline]
pub(crate) fn split_once_byte(s: &str, byte: u8) -> Option<(&str, &str)> {
    let at = find_byte(s, byte)?;
    Some((&s[..at], &s[at + 1..]))
}

/// `s.rsplit_once(byte)` for an ASCII `byte`.
#[inline]
pub(crate) fn rsplit_once_byte(s: &str, byte: u8) -> Option<(&str, &str)> {
    let at = rfind_byte(s, byte)?;
    Some((&s[..at], &s[at + 1..]))
}

/// `s.trim_start()`, with the ASCII whitespace most lines start or end with skipped a byte at a
/// time rather than decoded as characters (the text past it goes to `str::trim_start` only when
/// it starts with a character that is not ASCII, which may be whitespace too).
pub(crate) fn trim_start(s: &str) -> &str {
    let b = s.as_bytes();
    let i = ascii::space_end(b);
    if b.get(i).is_some_and(|&c| c >= 0x80) {
        s[i..].trim_start()
    } else {
        &s[i..]
    }
}

/// `s.trim_end()`, as [`trim_start`] does it.
pub(crate) fn trim_end(s: &str) -> &str {
    let b = s.as_bytes();
    let i = ascii::space_start_from_end(b);
    if i > 0 && b[i - 1] >= 0x80 {
        s[..i].trim_end()
    } else {
        &s[..i]
    }
}

/// `s.trim()`, as [`trim_start`] does it.
pub(crate) fn trim(s: &str) -> &str {
    trim_end(trim_start(s))
}

/// `s` split after its first run of non-whitespace: what a regex's `(\S+)` takes at the start
/// of `s` (empty when `s` starts with whitespace).
pub(crate) fn split_word(s: &str) -> (&str, &str) {
    let b = s.as_bytes();
    let mut i = 0;
    loop {
        // Printable ASCII is skipped eight bytes at a time; what stops it is whitespace, a
        // control byte, or a character that is not ASCII (U+00A0 is whitespace).
        i += ascii::printable_end(&b[i..]);
        let Some(&c) = b.get(i) else {
            break;
        };
        if c < 0x80 {
            if c == b' ' || (0x09..=0x0d).contains(&c) {
                break;
            }
            i += 1;
        } else {
            let c = s[i..].chars().next().unwrap_or(' ');
            if c.is_whitespace() {
                break;
            }
            i += c.len_utf8();
        }
    }
    s.split_at(i)
}

/// Sets `slot` to `value`, reusing the string it holds (a name set on every line of a long log).
pub(crate) fn set_name(slot: &mut Option<String>, value: &str) {
    match slot {
        Some(s) => {
            s.clear();
            s.push_str(value);
        }
        None => *slot = Some(value.to_owned()),
    }
}

/// Whether `path` looks like a source file (has an extension of a few letters).
pub(crate) fn looks_like_source(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    match name.rsplit_once('.') {
        Some((stem, ext)) => {
            !stem.is_empty() && (1..=5).contains(&ext.len()) && ext.bytes().all(|b| b.is_ascii_alphanumeric())
        }
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The first two groups `regex` captures in `line`: what a reader written in its place reads.
    fn regex_pair<'l>(regex: &str, line: &'l str) -> Option<(&'l str, &'l str)> {
        let c = regex::Regex::new(regex).expect("regex").captures(line)?;
        Some((c.get(1)?.as_str(), c.get(2)?.as_str()))
    }

    proptest! {
        #[test]
        fn bytes_decoded_in_pieces_are_decoded_as_a_whole(
            bytes in prop::collection::vec(prop_oneof![any::<u8>(), 0x80u8..0xc0, 0xe0u8..0xf5], 0..64),
            cuts in prop::collection::vec(0usize..64, 0..6),
        ) {
            let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c.min(bytes.len())).collect();
            cuts.push(bytes.len());
            cuts.sort_unstable();
            let mut decoder = Utf8Pieces::default();
            let mut text = String::new();
            let mut from = 0;
            for cut in cuts {
                decoder.push(&bytes[from..cut], &mut |s| text.push_str(s));
                from = cut;
            }
            decoder.finish(&mut |s| text.push_str(s));
            prop_assert_eq!(text, String::from_utf8_lossy(&bytes));
        }

        #[test]
        fn a_word_is_split_where_whitespace_begins(s in "[a \t\n\u{b}\u{c}\r\u{1c}\u{85}\u{a0}\u{e9}\u{2003}]{0,24}") {
            let at = s.find(char::is_whitespace).unwrap_or(s.len());
            prop_assert_eq!(split_word(&s), s.split_at(at));
        }

        #[test]
        fn text_is_trimmed_as_str_trims_it(s in "[ \t\n\u{b}\u{c}\r\u{1c}\u{85}\u{a0}\u{2003}\u{3000}a\u{e9}]{0,24}") {
            prop_assert_eq!(trim_start(&s), s.trim_start());
            prop_assert_eq!(trim_end(&s), s.trim_end());
            prop_assert_eq!(trim(&s), s.trim());
        }

        #[test]
        fn a_short_needle_is_found_where_str_find_finds_it(
            s in "[ .:a(\\[]{0,12}",
            needle in "[ .:a(\\[]{0,4}",
        ) {
            prop_assert_eq!(find_short(&s, &needle), s.find(needle.as_str()));
        }
    }

    /// Every line of the golden logs (real tools' output), for logs made of their pieces.
    static GOLDEN_LINES: std::sync::LazyLock<Vec<String>> = std::sync::LazyLock::new(|| {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/logs");
        let mut logs: Vec<_> = std::fs::read_dir(dir)
            .expect("the golden logs")
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|e| e == "log"))
            .collect();
        logs.sort();
        logs.iter()
            .flat_map(|p| {
                let text = String::from_utf8_lossy(&std::fs::read(p).expect("a golden log")).into_owned();
                text.lines().map(str::to_owned).collect::<Vec<_>>()
            })
            .collect()
    });

    /// Parses `log` with every format offered every line.
    fn parse_offering_all(log: &str, workspace: &Workspace) -> ParseOutput {
        let mut parser = Parser::new(workspace);
        parser.offer_all = true;
        parser.lines(log);
        parser.finish()
    }

    /// A log of runs of golden lines from anywhere, some with a prefix a line may carry.
    fn golden_soup() -> impl Strategy<Value = String> {
        let prefixes = prop_oneof![
            4 => Just(""),
            1 => Just("  "),
            1 => Just("\t"),
            1 => Just("E   "),
            1 => Just("\u{1b}[31m"),
            1 => Just("2026-11-22T04:01:02.1234567Z "),
            1 => Just("\u{a0}"),
        ];
        let run = (any::<prop::sample::Index>(), 1usize..40, prefixes);
        prop::collection::vec(run, 1..12).prop_map(|runs| {
            let lines = &*GOLDEN_LINES;
            let mut log = String::new();
            for (at, len, prefix) in runs {
                let start = at.index(lines.len());
                for line in lines.iter().skip(start).take(len) {
                    log.push_str(prefix);
                    log.push_str(line);
                    log.push('\n');
                }
            }
            log
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(3000))]

        /// Each line is handed only to the formats that want it: what the parser finds is what it
        /// finds when every format is offered every line.
        #[test]
        fn routing_lines_to_the_formats_that_want_them_changes_nothing(
            log in golden_soup(),
            root in prop_oneof![Just("/tmp/kubeheal-fixtures/mono"), Just("/tmp/kubeheal-fixtures/py_logic"), Just("/w")],
        ) {
            let workspace = Workspace::new(root);
            prop_assert_eq!(parse(&log, &workspace), parse_offering_all(&log, &workspace));
        }

        /// A Go panic's test is the one a `--- FAIL:` line named before it whatever ordinary
        /// output came between (which routing does not hand to Go, and offering every line does).
        #[test]
        fn a_go_panic_s_test_is_the_same_routed_or_offered_every_line(
            between in prop::collection::vec(prop_oneof![Just("loading fixtures"), Just(""), Just("=== CONT  TestB"), Just("=== PAUSE TestC")], 0..4),
        ) {
            let log = format!(
                "=== RUN   TestA\n--- FAIL: TestA (0.00s)\n{}\npanic: boom\n\ngoroutine 7 [running]:\nexample.com/m.f()\n\t/w/m.go:5 +0x1d\nFAIL\texample.com/m\t0.01s\n",
                between.join("\n")
            );
            let workspace = Workspace::new("/w");
            let routed = parse(&log, &workspace);
            prop_assert_eq!(routed.reports[0].test_name.as_deref(), Some("TestA"));
            prop_assert_eq!(routed, parse_offering_all(&log, &workspace));
        }

        /// A failure text fed as a block (one needle scan) gives what its lines fed one by one
        /// (every needle assumed) give.
        #[test]
        fn a_block_gives_what_its_lines_give(
            log in golden_soup(),
            crlf in any::<bool>(),
            end in prop_oneof![Just(""), Just("\n"), Just("\r"), Just("\n\n"), Just("\r\n")],
        ) {
            let mut text = if crlf { log.replace('\n', "\r\n") } else { log };
            text.push_str(end);
            let workspace = Workspace::new("/tmp/kubeheal-fixtures/mono");
            let mut whole = Parser::new(&workspace);
            whole.block(&text);
            let mut one_by_one = Parser::new(&workspace);
            for line in text.lines() {
                one_by_one.line(line);
            }
            prop_assert_eq!(whole.finish(), one_by_one.finish());
        }

        #[test]
        fn routing_arbitrary_lines_changes_nothing(lines in prop::collection::vec(".{0,40}", 0..20)) {
            let log = lines.join("\n");
            let workspace = Workspace::new("/w");
            prop_assert_eq!(parse(&log, &workspace), parse_offering_all(&log, &workspace));
        }
    }

    /// Found by the routing property test: Go's `--- FAIL: TestX (0.00s)` is no diff header,
    /// which the diff reader's `wants` knew and its reading of a line offered anyway did not (a
    /// `+++` line after it began a diff).
    #[test]
    fn a_go_result_is_no_diff_header_however_it_is_read() {
        let workspace = Workspace::new("/w");
        let log = "--- FAIL: TestTable (0.00s)\n+++ fx.py\n@@ -1,4 +1,5 @@\n \"\"\"Currency.\"\"\"\n+\n";
        let routed = parse(log, &workspace);
        assert_eq!(routed, parse_offering_all(log, &workspace));
        assert!(routed.reports.is_empty(), "{:?}", routed.reports);
    }

    /// Found by the `parse` fuzz target: a numbered line at column 0 (`5) x:`) started a mocha
    /// title when Js read it, which its `wants` does not offer it for (mocha indents its titles):
    /// the line read with every needle assumed (a line that is not UTF-8, streamed) named a
    /// failed test that the routed parse did not.
    #[test]
    fn a_numbered_line_at_column_0_is_no_mocha_title_however_it_is_read() {
        let workspace = Workspace::new("/w");
        for log in ["5) x:\n Error: ", "5) x:\n Error: boom\n"] {
            assert_eq!(parse(log, &workspace), parse_offering_all(log, &workspace), "{log:?}");
        }
        let bytes = b"5) \xff:\n Error: ";
        let streamed = parse_reader(std::io::BufReader::with_capacity(16, &bytes[..]), &workspace).expect("in memory");
        assert_eq!(streamed, parse(&String::from_utf8_lossy(bytes), &workspace));
        assert!(streamed.tests.is_empty(), "{:?}", streamed.tests);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        /// The outcome lines of a long log are read without regexes: each reader reads what the
        /// regex it replaced reads.
        #[test]
        fn outcome_lines_are_read_as_the_regexes_read_them(
            line in "[ \t\u{a0}]{0,2}(=== |--- |test |PASSED |FAILED |XPASS|ERROR )?(RUN|CONT|PAUSE|FAIL|PASS|SKIP|RU)?(: )?[ \t\u{2003}]{0,3}[a-zA-Z:/._ (\u{e9}\u{a0}\n]{0,8}( \\(| \\.\\.\\. | \\.\\. | - | -)?(ok|FAILED|ignored|ig)?.{0,3}",
        ) {
            prop_assert_eq!(
                go::run_line(&line),
                regex::Regex::new(r"^=== (?:RUN|CONT|PAUSE)\s+(\S+)").expect("regex").captures(&line).and_then(|c| Some(c.get(1)?.as_str()))
            );
            prop_assert_eq!(go::result_header(&line), regex_pair(r"^\s*--- (FAIL|PASS|SKIP): (\S+) \(", &line));
            prop_assert_eq!(rust::test_line(&line), regex_pair(r"^test (\S+) \.\.\. (ok|FAILED|ignored)", &line));
            prop_assert_eq!(
                python::summary_outcome(&line),
                regex_pair(r"^(PASSED|FAILED|ERROR|XFAIL|XPASS) (\S+)(?: - (.*))?$", &line)
            );
        }
    }
}

/// A workspace rooted at `/w` listing `files` and the manifests `manifests` (path, text), whose
/// texts it reads ([`Workspace::with_package_manifests`]), for tests.
#[cfg(test)]
pub(crate) fn workspace_with_manifests(manifests: &[(&str, &str)], files: &[&str]) -> Workspace {
    let listed = manifests.iter().map(|(f, _)| *f).chain(files.iter().copied());
    Workspace::new("/w")
        .with_files(listed.map(str::to_owned).collect())
        .with_package_manifests(|path| {
            manifests
                .iter()
                .find(|(f, _)| *f == path)
                .map(|(_, text)| text.as_bytes().to_vec())
        })
}

/// Each report's file, line and type, owned, for tests to compare at a glance.
#[cfg(test)]
pub(crate) fn report_types(parsed: &ParseOutput) -> Vec<(String, u32, String)> {
    parsed
        .reports
        .iter()
        .map(|r| (r.file_path.clone(), r.line_number, format!("{:?}", r.error_type)))
        .collect()
}

/// Each report's file, line and type, for tests to compare at a glance.
#[cfg(test)]
pub(crate) fn report_kinds(parsed: &ParseOutput) -> Vec<(&str, u32, ErrorType)> {
    parsed
        .reports
        .iter()
        .map(|r| (r.file_path.as_str(), r.line_number, r.error_type))
        .collect()
}

/// Each report's file, line and test, for tests to compare at a glance.
#[cfg(test)]
pub(crate) fn report_places(parsed: &ParseOutput) -> Vec<(&str, u32, Option<&str>)> {
    parsed
        .reports
        .iter()
        .map(|r| (r.file_path.as_str(), r.line_number, r.test_name.as_deref()))
        .collect()
}

/// Each report's file, line and confidence, for tests to compare at a glance.
#[cfg(test)]
pub(crate) fn report_confidences(parsed: &ParseOutput) -> Vec<(&str, u32, Option<f64>)> {
    parsed
        .reports
        .iter()
        .map(|r| (r.file_path.as_str(), r.line_number, r.confidence_score))
        .collect()
}

/// Each report's file, line, type and message, for tests to compare at a glance.
#[cfg(test)]
pub(crate) fn report_findings(parsed: &ParseOutput) -> Vec<(&str, u32, String, &str)> {
    parsed
        .reports
        .iter()
        .map(|r| {
            (
                r.file_path.as_str(),
                r.line_number,
                format!("{:?}", r.error_type),
                r.message.as_str(),
            )
        })
        .collect()
}

/// Each report's file, line and message, for tests to compare at a glance.
#[cfg(test)]
pub(crate) fn report_messages(parsed: &ParseOutput) -> Vec<(&str, u32, &str)> {
    parsed
        .reports
        .iter()
        .map(|r| (r.file_path.as_str(), r.line_number, r.message.as_str()))
        .collect()
}

/// Each report's file, line, message and test.
#[cfg(test)]
pub(crate) fn report_tests(parsed: &ParseOutput) -> Vec<(&str, u32, &str, Option<&str>)> {
    parsed
        .reports
        .iter()
        .map(|r| {
            (
                r.file_path.as_str(),
                r.line_number,
                r.message.as_str(),
                r.test_name.as_deref(),
            )
        })
        .collect()
}

#[cfg(test)]
mod bounds {
    use super::*;

    /// A path asked for again is answered from memory as the workspace answers it, and paths
    /// past the memory's bounds (too many, too long) are still resolved.
    #[test]
    fn a_path_resolved_again_is_resolved_as_the_workspace_resolves_it() {
        let workspace = Workspace::new("/w").with_files(vec!["pkg/a.py".to_owned(), "gen/m7.py".to_owned()]);
        let sink = Sink::new(&workspace);
        for _ in 0..2 {
            assert_eq!(sink.relative("/w/pkg/a.py").as_deref(), Some("pkg/a.py"));
            assert!(sink.is_project_file("a.py"));
            assert!(!sink.is_project_file("/usr/lib/python3.12/json/decoder.py"));
        }
        let long = format!("/w/{}/a.py", "d".repeat(MAX_RESOLVED_PATH));
        let many = (0..MAX_RESOLVED + 10).map(|i| format!("/w/gen/m{i}.py"));
        for path in many.chain([long]) {
            for _ in 0..2 {
                assert_eq!(sink.relative(&path), workspace.relative(&path), "{path}");
            }
        }
        assert_eq!(sink.resolved.borrow().len(), MAX_RESOLVED);
    }

    /// Findings past the bounds are counted, not silently dropped, and what breaks the build
    /// after a long lint report is still kept.
    #[test]
    fn findings_past_the_bounds_are_counted() {
        let workspace = Workspace::new("/w");
        let mut log: String = (1..=150)
            .map(|n| format!("/w/app/m.py:{n}:1: E501 line too long ({n} > 79 characters)\n"))
            .collect();
        log.push_str("Traceback (most recent call last):\n  File \"/w/app/m.py\", line 3, in f\n    x()\nTypeError: 'int' object is not callable\n");
        let parsed = parse(&log, &workspace);
        assert_eq!(parsed.reports.len(), MAX_LINT_REPORTS + 1);
        assert_eq!(parsed.reports[0].error_type, ErrorType::TypeError);
        assert_eq!(parsed.left_out, 150 - MAX_LINT_REPORTS);

        // As `ruff check --output-format=json` prints it: pretty, each finding indented. The
        // document's lint findings leave room for an error it lists after them.
        let mut items: Vec<serde_json::Value> = (1..=150)
            .map(|n| serde_json::json!({"code": "E501", "message": "Line too long", "filename": "/w/app/m.py", "location": {"row": n, "column": 1}}))
            .collect();
        items.push(serde_json::json!({"code": "F821", "message": "Undefined name `taxx`", "filename": "/w/app/n.py", "location": {"row": 7, "column": 1}}));
        let array = serde_json::to_string_pretty(&items).expect("JSON");
        let parsed = parse(&format!("{array}\n"), &workspace);
        assert_eq!(parsed.reports.len(), MAX_DOCUMENT_WARNINGS + 1);
        assert_eq!(
            (parsed.reports[0].file_path.as_str(), parsed.reports[0].error_type),
            ("app/n.py", ErrorType::Import)
        );
        assert_eq!(parsed.left_out, 150 - MAX_DOCUMENT_WARNINGS);
        assert_eq!(parse("/w/app/m.py:1:1: E501 line too long\n", &workspace).left_out, 0);

        // As `jest --json` prints it: one line, each failed test's message with its stack.
        let assertions: Vec<serde_json::Value> = (1..=150)
            .map(|n| serde_json::json!({"fullName": format!("sums {n}"), "status": "failed", "failureMessages": [format!("Error: expect(received).toBe(expected)\n    at Object.<anonymous> (/w/sum.test.js:{n}:5)")]}))
            .collect();
        let report = serde_json::json!({"numFailedTestSuites": 1, "testResults": [{"assertionResults": assertions, "status": "failed", "message": ""}]});
        let parsed = parse(&format!("{report}\n"), &workspace);
        assert_eq!(parsed.reports.len(), MAX_DOCUMENT_REPORTS);
        assert_eq!(parsed.left_out, 150 - MAX_DOCUMENT_REPORTS);
    }

    /// One bug failing more tests than a log gives reports is kept at a few of them, and the bug
    /// after it is reported (as pytest's `--tb=short` prints each failure).
    #[test]
    fn a_place_keeps_a_few_tests_and_leaves_room_for_the_next_bug() {
        let workspace = Workspace::new("/w");
        // Each test calls the code from a line of its own.
        let failure = |test: &str, test_line: usize, line: u32, error: &str| {
            format!(
                "____ {test} ____\ntests/test_m.py:{test_line}: in {test}\n    f()\napp/m.py:{line}: in f\n    x()\nE   {error}\n"
            )
        };
        let mut log = String::from("=== FAILURES ===\n");
        for n in 0..MAX_REPORTS + 50 {
            log.push_str(&failure(
                &format!("test_a_{n}"),
                10 + n,
                3,
                "TypeError: 'int' object is not callable",
            ));
        }
        log.push_str(&failure("test_b", 5, 7, "KeyError: 'k'"));
        let parsed = parse(&log, &workspace);
        let at = |line: u32| {
            parsed
                .reports
                .iter()
                .filter(|r| r.line_number == line && r.file_path == "app/m.py")
                .count()
        };
        let tests_lines = parsed
            .reports
            .iter()
            .filter(|r| r.file_path == "tests/test_m.py")
            .count();
        // Each failure has two places, where it was raised and the test's line that called
        // there: past the raise site's bound, its tests' lines have a bound of their own.
        assert_eq!(
            (at(3), tests_lines, at(7)),
            (MAX_REPORTS_PER_PLACE, MAX_TEST_LINES_PER_RAISE_SITE + 1, 1),
            "{:#?}",
            parsed.reports
        );
        let failures = MAX_REPORTS + 50;
        assert_eq!(
            parsed.left_out,
            (failures - MAX_REPORTS_PER_PLACE) + (failures - MAX_TEST_LINES_PER_RAISE_SITE)
        );
    }

    /// Each test that called down to one raise site has its line reported, though one test's
    /// line repeats past its own place's bound (a parametrised test failing 45 times at one line):
    /// the repeats take no room from the other tests' lines.
    #[test]
    fn a_test_line_past_its_place_s_bound_leaves_room_for_other_tests_lines() {
        let failure = |test: &str, test_line: u32| {
            format!(
                "____ {test} ____\ntests/test_m.py:{test_line}: in {test}\n    f()\napp/m.py:2: in f\n    x()\nE   ZeroDivisionError: division by zero\n"
            )
        };
        let mut log = String::from("=== FAILURES ===\n");
        for n in 0..45 {
            log.push_str(&failure(&format!("test_many[{n}]"), 6));
        }
        log.push_str(&failure("test_other", 9));
        log.push_str(&failure("test_third", 12));
        let parsed = parse(&log, &Workspace::new("/w"));
        let test_lines: BTreeSet<u32> = parsed
            .reports
            .iter()
            .filter(|r| r.file_path == "tests/test_m.py")
            .map(|r| r.line_number)
            .collect();
        assert_eq!(test_lines, BTreeSet::from([6, 9, 12]));
    }

    /// A failure and the type checker's errors at its line give the same reports in either order:
    /// the first checker error is the failure's, the second another error, reported too.
    #[test]
    fn a_failure_and_two_checker_errors_at_its_line_give_the_same_reports_in_either_order() {
        let workspace = Workspace::new("/w");
        let failure = "Traceback (most recent call last):\n  File \"/w/pkg/calc.py\", line 12, in total\n    return a + b\nTypeError: unsupported operand type(s) for +: 'int' and 'str'\n";
        let checker = "pkg/calc.py:12: error: Unsupported operand types for + (\"int\" and \"str\")  [operator]\npkg/calc.py:12: error: Incompatible return value type (got \"str\", expected \"int\")  [return-value]\n";
        for log in [format!("{failure}{checker}"), format!("{checker}{failure}")] {
            let parsed = parse(&log, &workspace);
            assert_eq!(parsed.reports.len(), 2, "{log}\n{:#?}", parsed.reports);
            assert!(
                parsed.reports.iter().any(|r| r.message.contains("[return-value]")),
                "{log}\n{:#?}",
                parsed.reports
            );
        }
    }
}
