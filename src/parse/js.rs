//! TypeScript and JavaScript: tsc (classic `file(line,col)` and pretty `file:line:col -`), eslint's
//! stylish, compact, unix and html formats, jest failure blocks (`● Suite › test`, with what ts-jest,
//! Babel, SWC or Node said when a suite failed to run) with their stack frames, vitest's (`FAIL
//! file > suite > test`, the error, `❯` frames), and Node stack traces, indented as mocha prints
//! them too. eslint's, jest's and vitest's JSON formats and JUnit XML are read in `structured`.

use std::borrow::Cow;
use std::sync::LazyLock;

use regex::Regex;

use super::look::{Look, is_ascii_space};
use super::{
    Finding, Needle, PlaceCounts, Rank, Sink, TestOutcome, has_byte, looks_like_source, row_place, rsplit_once_byte,
    split_once_byte,
};
use crate::api::shared::ErrorType;

static TSC_CLASSIC: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^(\S+?)\((\d+),(\d+)\): (error|warning) (TS\d+): (.*)$").expect("regex"));
static TSC_PRETTY: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^(\S+?):(\d+):(\d+) - (error|warning) (TS\d+): (.*)$").expect("regex"));
static ESLINT_ROW: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\s+(\d+):(\d+)\s+(error|warning)\s+(.+?)(?:\s{2,}(@?[\w/-]+))?\s*$").expect("regex")
});
/// eslint's `compact` formatter: `/abs/a.js: line 3, col 7, Error - message (rule)`.
static ESLINT_COMPACT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(\S+?): line (\d+), col \d+, (?:Error|Warning) - (.*?)(?: \(([@\w/-]+)\))?$").expect("regex")
});
/// eslint's `unix` formatter: `/abs/a.js:3:7: message [Error/rule]` (`[Error]` for a parse
/// failure). oxlint's `-f unix` writes its rule as `plugin(rule)`:
/// `[Warning/eslint(no-unused-vars)]`.
static ESLINT_UNIX: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(\S+?):(\d+):\d+: (.*) \[(?:Error|Warning)(?:/([@\w/-]+(?:\([@\w/-]+\))?))?\]$").expect("regex")
});
static FRAME: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^\s+at (?:.*? \()?(?:file://)?([^()\s]+?):(\d+):(\d+)\)?$").expect("regex"));
static JS_ERROR: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?:Uncaught )?((?:[A-Z]\w*)?(?:Error|Exception))(?: \[[\w_]+\])?: (.*)$").expect("regex")
});

/// Babel's syntax error, as `@babel/cli` prints it and jest under "Test suite failed to run":
/// `SyntaxError: /abs/src/price.js: Unexpected token, expected "," (3:28)` (a colon after the
/// place when a hint follows: a syntax its configuration does not enable).
static BABEL_SYNTAX: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^SyntaxError: (\S+?): (.*?) \((\d+):(\d+)\):?$").expect("regex"));

/// Words looked for on many lines, each searcher built once (building one costs more than a
/// search of a short line).
static TS_CODE: LazyLock<memchr::memmem::Finder<'static>> = LazyLock::new(|| memchr::memmem::Finder::new(" TS"));
static ERROR_WORD: LazyLock<memchr::memmem::Finder<'static>> = LazyLock::new(|| memchr::memmem::Finder::new("Error"));
static EXCEPTION_WORD: LazyLock<memchr::memmem::Finder<'static>> =
    LazyLock::new(|| memchr::memmem::Finder::new("Exception"));

/// Lines Node prints between its `file:line` header and the error (source line, caret, blank).
const NODE_HEADER_REACH: u32 = 4;

const JS_EXTENSIONS: &[&str] = &[
    ".js", ".jsx", ".ts", ".tsx", ".mjs", ".cjs", ".mts", ".cts", ".vue", ".svelte",
];

#[derive(Default)]
struct Failure {
    test: Option<String>,
    message: Option<String>,
    location: Option<(String, u32)>,
    /// Frames seen; a plain Node error ends at the first line after its frames.
    frames: u32,
    /// A jest suite that failed to run: its test file, the place when nothing else names one
    /// (an ES module jest could not load names no file of the code).
    suite: Option<String>,
    /// The outermost frame in a test file: the test's own call that led to the error.
    test_frame: Option<(String, u32)>,
    /// The error this one was thrown for (`new Error(msg, { cause })`), shown after its stack.
    cause: Option<Cause>,
    /// The project's frames of a stack that overflowed ([`STACK_OVERFLOW`]), counted.
    calls: PlaceCounts,
    /// The location is an unresolved import's importer at its first line, a guess: a frame in
    /// that file (vitest's `❯ src/index.ts:3:1`, the import's own line) says better.
    importer_line: bool,
}

/// V8's RangeError when the stack outgrows its limit: a recursion without end. The stack's top
/// frame is wherever the limit was reached; the call it repeats is the recursion.
pub(crate) const STACK_OVERFLOW: &str = "Maximum call stack size exceeded";

/// The cause of an error, as the runners show it after the error's stack: mocha's `Caused by:
/// TypeError: ...`, jest's `Cause:` with the error on the next line, Node's `[cause]: TypeError:
/// ...` (`node --test`, an uncaught error), each with its own frames.
#[derive(Default)]
struct Cause {
    message: Option<String>,
    /// Its first frame in the project: where it was thrown, a third place to look at.
    location: Option<(String, u32)>,
}

impl Failure {
    /// A failed test named before its error (vitest's `FAIL` line), its error not read yet: the
    /// error is the next line, and any other line ends the wait.
    fn names_a_test_before_its_error(&self) -> bool {
        self.test.is_some() && self.message.is_none() && self.frames == 0
    }

    /// An error read whose place is not known yet, before any frame.
    fn awaits_its_place(&self) -> bool {
        self.message.is_some() && self.location.is_none() && self.frames == 0
    }
}

/// eslint's `html` formatter: the file whose rows follow (`[+] /abs/a.js` in a `<th>`), and the
/// row being read, one cell a line: `<td>4:5</td>`, `<td class="clr-2">Error</td>`, the message,
/// the rule's link.
struct EslintHtml {
    file: String,
    row: HtmlRow,
}

/// The cells of an eslint `html` row read so far.
#[derive(Default)]
struct HtmlRow {
    line: Option<u32>,
    severity_seen: bool,
    message: Option<String>,
    rule: Option<String>,
}

#[derive(Default)]
pub(crate) struct Js {
    /// jest's test file whose results follow (`FAIL test/a.test.js`).
    jest_file: Option<String>,
    /// eslint stylish: the file the following rows belong to.
    eslint_file: Option<String>,
    /// eslint html: its table being read.
    eslint_html: Option<EslintHtml>,
    /// jest's `●` block, or a Node error, being read.
    failure: Option<Failure>,
    in_jest_block: bool,
    /// Node's `/abs/file.js:12` header before an uncaught error (a load-time SyntaxError has no
    /// project frame, only this), and how many lines ago it was.
    node_header: Option<(String, u32, u32)>,
    /// A failed test's title was read whose error comes indented under it: mocha's spec reporter
    /// (`  2) suite` and the test's name), or a TAP `not ok` that no YAML block follows (mocha's
    /// `tap` reporter). Elsewhere an indented `Error:` is another tool's (tape's YAML `stack:`).
    indented_error_due: Option<DueTitle>,
    /// Inside jasmine's `Failures:`, and whether the failure's message is the next line.
    jasmine: Option<JasmineMessage>,
    /// `node --test`'s spec reporter, among its failing tests: the place of the test the last
    /// `test at FILE:L:C` line named ([`NodeTestAt`]).
    node_test_at: Option<NodeTestAt>,
}

/// A failing test of `node --test`'s spec reporter, whose error is a quoted string and no stack
/// (a timeout), so that only the test's `test at` line places it:
///
/// ```text
/// test at test/parse.test.js:8:1
/// ✖ parses async (100.365131ms)
///   'test timed out after 100ms'
/// ```
struct NodeTestAt {
    file: String,
    line: u32,
    /// The test's name, from its `✖` line.
    name: Option<String>,
}

/// What `node --test` says of a test file whose process failed outside its tests (it exited
/// with a code other than 0 — `process.exit`, an error at load — with no test failing): the
/// file's own test, named by its path, failed with this message and nothing else.
const NODE_FILE_FAILED: &str = "'test failed'";

/// A test file that failed outside its tests ([`NODE_FILE_FAILED`]), at the line Node gives
/// (its first). Less sure than a failure's place: the line only names the file.
fn file_failed<'a>(file: &'a str, line: u32, test: &'a str) -> Finding<'a> {
    Finding {
        file,
        line,
        error_type: ErrorType::Logic,
        message: Cow::Borrowed(
            "the test file failed outside its tests: its process exited with an error (process.exit, or an error while it loaded)",
        ),
        test: Some(test),
        confidence: 0.6,
        rank: Rank::Error,
        diagnostic: false,
    }
}

/// What Node prints when a module's top-level `await` never settles (the process exits 13).
const UNSETTLED_AWAIT: &str = "Warning: Detected unsettled top-level await at ";

/// Whether the current jasmine failure's message is the next line (after its `Message:`).
#[derive(PartialEq)]
enum JasmineMessage {
    Due,
    Read,
}

/// The title of a failed test whose error comes indented under it.
struct DueTitle {
    /// The test's full title as read so far: mocha's spec reporter prints it over several lines
    /// (the suite, any nested suite, the test and a `:`), its `tap` reporter on the `not ok` line.
    name: String,
    /// How many more lines may go on the title (the spec reporter's last ends with `:`).
    more: u8,
}

/// Lines a mocha title may take past its numbered first one (nested suites, then the test).
const MAX_TITLE_LINES: u8 = 4;

impl Js {
    /// Whether [`Js::line`] can do anything with the line. Node's `file:line` header ages with
    /// every line, eslint's rows follow their file, and jest indents a whole failure block: then
    /// every line counts, as it does after an error's frames (the first other line ends it).
    /// An error waiting for its frames wants them and what ends it; otherwise a line counts only
    /// if it may start something: a Node header (ends in a digit), an eslint file (ends like a
    /// source file's name, or in whitespace), an eslint `compact` or `unix` finding (a source
    /// file's path before the first colon), a tsc diagnostic, an error, jest's `●`, or a vitest
    /// `FAIL` line.
    #[inline]
    pub fn wants(&self, look: &Look<'_>) -> bool {
        if self.jasmine.is_some()
            || self.node_test_at.is_some()
            || self.node_header.is_some()
            || self.indented_error_due.is_some()
            || self
                .failure
                .as_ref()
                .is_some_and(Failure::names_a_test_before_its_error)
            || self.eslint_file.is_some()
            || self.eslint_html.is_some()
            || self.in_jest_block
            || self.failure.as_ref().is_some_and(|f| f.frames > 0)
        {
            return true;
        }
        let Some(first) = look.first else {
            return false;
        };
        if self.failure.is_some()
            && (matches!(first, b'F' | b'P' | b'T')
                || ["at ", "❯ ", "cause: "].iter().any(|p| look.trimmed().starts_with(p)))
        {
            return true;
        }
        let last = look.last;
        (!look.indented()
            && (last.is_ascii_digit()
                // eslint `stylish`: a JS/TS file's path alone on its line.
                || is_js_path(look.line)
                // vitest's failed test when nothing indents it: `FAIL  a.test.js > suite > test`;
                // jasmine's failures.
                || first == b'F' && (look.line.starts_with("FAIL ") || look.line == "Failures:")
                // jest's other suite lines and its summary, which end the suite `FAIL` named.
                || first == b'P' && look.line.starts_with("PASS ")
                || first == b'T' && look.line.starts_with("Test Suites:")
                || first == b'S' && look.line.starts_with("Suite error: ")
                // eslint `compact` and `unix`: a JS/TS path before the first colon.
                || look.colon.is_some_and(|c| is_js_path(&look.line[..c]))
                || is_ascii_space(last)
                || last >= 0x80
                || look.may_hold(Needle::TsCode)))
            || first.is_ascii_uppercase() && (look.may_hold(Needle::Error) || look.may_hold(Needle::Exception))
            // An error without a stack, in brackets (`[Error [ERR_TEST_FAILURE]: msg] {`).
            || first == b'[' && look.line.as_bytes().get(1).is_some_and(u8::is_ascii_uppercase) && look.may_hold(Needle::Error)
            // A failed test's title whose error comes indented (mocha's spec and tap reporters).
            || first == b'n' && look.line.starts_with("not ok ")
            // After the indentation (which may be Unicode whitespace).
            || (is_ascii_space(first) || first >= 0x80) && {
                let trimmed = look.trimmed();
                starts_indented_block(trimmed)
                    || trimmed.as_bytes().first().is_some_and(u8::is_ascii_digit) && mocha_failure_title(trimmed).is_some()
            }
    }

    pub fn line(&mut self, line: &str, sink: &mut Sink<'_>) {
        if self.node_test_line(line, sink) {
            return;
        }
        let header = self.node_header.take().filter(|h| h.2 < NODE_HEADER_REACH);
        let Some(&first) = line.as_bytes().first() else {
            self.node_header = header.map(|(f, n, age)| (f, n, age + 1));
            return;
        };
        // mocha names the file it could not load after its own words, indented.
        let place_line = match first {
            b' ' => line.trim_start().strip_prefix("Exception during run: "),
            b'\t' => None,
            b'E' => Some(line.strip_prefix("Exception during run: ").unwrap_or(line)),
            _ => Some(line),
        };
        if let Some((file, n)) = place_line.and_then(node_header) {
            self.node_header = Some((file.to_owned(), n, 0));
            return;
        }
        self.node_header = header.map(|(f, n, age)| (f, n, age + 1));

        if (self.eslint_html.is_some() || first == b' ' && line.trim_start().starts_with("[+] "))
            && self.eslint_html_line(line, sink)
        {
            return;
        }

        if first != b' ' && first != b'\t' {
            if let Some(finding) = sink.may_hold(Needle::TsCode).then(|| tsc_diagnostic(line)).flatten() {
                sink.report(finding);
                return;
            }
            // Babel's own error, outside a test runner (`babel src`, a bundler's babel-loader):
            // the file and the place are on the line, the frames all Babel's.
            if first == b'S'
                && self.failure.is_none()
                && line.starts_with("SyntaxError: ")
                && let Some(c) = BABEL_SYNTAX.captures(line)
                && sink.is_project_file(&c[1])
            {
                sink.report(Finding {
                    file: &c[1],
                    line: c[3].parse().unwrap_or(1),
                    error_type: ErrorType::Syntax,
                    message: Cow::Owned(format!("SyntaxError: {}", &c[2])),
                    test: None,
                    confidence: 0.9,
                    rank: Rank::Error,
                    diagnostic: true,
                });
                return;
            }
            if let Some(finding) = eslint_one_line(line) {
                sink.report(finding);
                return;
            }
            // eslint stylish: a line that is only a path to a source file starts its rows.
            let trimmed = line.trim_end();
            // Every JS/TS extension ends in s, x or e: one byte rules out most lines.
            if matches!(trimmed.as_bytes().last(), Some(b's' | b'x' | b'e'))
                && !has_byte(trimmed, b' ')
                && JS_EXTENSIONS.iter().any(|e| trimmed.ends_with(e))
                && looks_like_source(trimmed)
            {
                self.eslint_file = Some(trimmed.to_owned());
                return;
            }
        }

        if let Some(file) = self.eslint_file.as_deref() {
            if let Some((n, message, rule)) = eslint_row(line) {
                sink.report(eslint_finding(
                    file,
                    n.parse().unwrap_or(1),
                    message.trim(),
                    rule.unwrap_or(""),
                    false,
                    0.95,
                ));
                return;
            }
            if !line.trim().is_empty() {
                self.eslint_file = None;
            }
        }

        // jasmine: `Failures:`, then each failed spec `1) suite spec` at column 0, its `Message:`
        // and its `Stack:` indented under it. A suite's own error (an `afterAll` that threw) is
        // `Suite error: suite`, after the failures or alone, with the same lines under it.
        if let Some(suite) = line.strip_prefix("Suite error: ") {
            self.flush(sink);
            let suite = suite.trim_end();
            sink.test(suite, TestOutcome::Failed);
            self.failure = Some(Failure {
                test: Some(suite.to_owned()),
                ..Failure::default()
            });
            self.jasmine = Some(JasmineMessage::Read);
            return;
        }
        if line == "Failures:" {
            self.flush(sink);
            self.jasmine = Some(JasmineMessage::Read);
            return;
        }
        if self.jasmine.is_some() && self.jasmine_line(line, first, sink) {
            return;
        }

        // jest indents everything in a failure block: a line at column 0 (its summary, or
        // another tool's output after a cut-short jest log) ends the block.
        if self.in_jest_block && first != b' ' && first != b'\t' {
            self.flush(sink);
            self.in_jest_block = false;
        }
        let trimmed = line.trim_start();
        // jest: `● describe › test`, and the end of a file's results.
        if let Some(title) = trimmed.strip_prefix("● ") {
            self.flush(sink);
            self.in_jest_block = true;
            let suite_failed = title == "Test suite failed to run";
            let test = (!suite_failed).then(|| title.replace(" › ", " "));
            if let Some(test) = &test {
                sink.test(test, TestOutcome::Failed);
            }
            self.failure = Some(Failure {
                test,
                suite: self.jest_file.clone().filter(|_| suite_failed),
                ..Failure::default()
            });
            return;
        }
        // Node's test runner (`--test-reporter=spec`, its default on a terminal): `✖ name (1.2ms)`,
        // then the error and its stack, indented.
        if let Some(title) = trimmed.strip_prefix("✖ ").and_then(node_spec_test) {
            self.flush(sink);
            self.in_jest_block = true;
            sink.test(title, TestOutcome::Failed);
            self.failure = Some(Failure {
                test: Some(title.to_owned()),
                // A test file's own test is named by its path: the file failed outside its tests
                // (an error at load, `process.exit`), a suite that failed to run.
                suite: Some(title.to_owned()).filter(|title| is_js_path(title)),
                ..Failure::default()
            });
            return;
        }
        // vitest: ` FAIL  test/a.test.js > suite > test`, then the error at column 0 and its `❯`
        // frames (no block: the error is read as any Node error is, and takes the test's name).
        if let Some(title) = vitest_failed_test(trimmed) {
            self.flush(sink);
            self.in_jest_block = false;
            let test = title.replace(" > ", " ");
            sink.test(&test, TestOutcome::Failed);
            self.failure = Some(Failure {
                test: Some(test),
                ..Failure::default()
            });
            return;
        }
        if line.starts_with("FAIL ") || line.starts_with("PASS ") || line.starts_with("Test Suites:") {
            self.flush(sink);
            self.in_jest_block = false;
            self.jest_file = line
                .strip_prefix("FAIL ")
                .map(|rest| super::split_word(rest.trim_start()).0.to_owned())
                .filter(|file| is_js_path(file));
            return;
        }

        // vitest's frames: `❯ fn path:line:col` or `❯ path:line:col`.
        let vitest_frame = trimmed.strip_prefix("❯ ");
        if trimmed.starts_with("at ") || vitest_frame.is_some() {
            // A frame counts only in a failure: without one the regex need not run.
            if let Some(failure) = self.failure.as_mut()
                && let Some((file, n)) = match vitest_frame {
                    Some(rest) => rest.rsplit(' ').next().and_then(plain_location),
                    None => node_frame(line),
                }
            {
                if let Some(cause) = failure.cause.as_mut() {
                    if cause.location.is_none() && sink.is_project_file(file) {
                        cause.location = Some((file.to_owned(), n.parse().unwrap_or(1)));
                    }
                    return;
                }
                failure.frames += 1;
                if sink.is_project_file(file) {
                    let place = || (file.to_owned(), n.parse().unwrap_or(1));
                    let in_importer = || {
                        failure.importer_line
                            && failure
                                .location
                                .as_ref()
                                .is_some_and(|(importer, _)| sink.relative(importer) == sink.relative(file))
                    };
                    if failure.location.is_none() || in_importer() {
                        failure.location = Some(place());
                        failure.importer_line = false;
                    }
                    if failure.message.as_deref().is_some_and(|m| m.contains(STACK_OVERFLOW)) {
                        failure.calls.count(place());
                    }
                    if self.jest_file.as_deref() == Some(file) || sink.is_test_file(file) {
                        failure.test_frame = Some(place());
                    }
                }
            }
            return;
        }
        if let Some(failure) = self.failure.as_mut().filter(|f| f.frames > 0) {
            if let Some(cause) = failure.cause.as_mut().filter(|c| c.message.is_none()) {
                // jest's `Cause:`: the error is the next line.
                cause.message = js_error(trimmed).map(|(kind, message)| format!("{kind}: {message}"));
                if cause.message.is_some() {
                    return;
                }
            }
            // An error with no frame of the project's own (jest's timeout, thrown in
            // jest-circus) is placed by its cause's frames, read as if they were its own.
            let own_place = failure.location.is_some();
            let shown = trimmed
                .strip_prefix("Caused by: ")
                .or_else(|| trimmed.strip_prefix("[cause]: "));
            if let Some(error) = shown.and_then(js_error) {
                failure.cause = own_place.then(|| Cause {
                    message: Some(format!("{}: {}", error.0, error.1)),
                    location: None,
                });
                return;
            }
            if trimmed.starts_with("... ") && trimmed.ends_with(" lines matching cause stack trace ...") {
                // Node's stand-in for the frames the error shares with its cause: the stack goes on.
                return;
            }
            if trimmed == "Cause:" && self.in_jest_block {
                failure.cause = own_place.then(Cause::default);
                return;
            }
        }
        // node:test's failure of a test whose code threw, `Error [ERR_TEST_FAILURE]: msg` (in
        // brackets when it has no stack of its own): what was thrown is its `cause:`, with the
        // frames under it.
        if let Some(cause) = trimmed.strip_prefix("cause: ")
            && let Some(failure) = self.failure.as_mut().filter(|f| f.location.is_none())
            && let Some((kind, message)) = js_error(cause)
        {
            failure.message = Some(format!("{kind}: {message}"));
            return;
        }

        if !self.in_jest_block {
            // vitest shows the source around a frame's place between its `❯` frames
            // (`179|   return x;`, then `   |   ^`): they do not end the stack.
            if self.failure.as_ref().is_some_and(|f| f.frames > 0)
                && trimmed
                    .trim_start_matches(|c: char| c.is_ascii_digit())
                    .starts_with('|')
            {
                return;
            }
            // vite's error for a file one of its plugins could not transform (vitest's suite
            // that failed to run on a syntax error): `Plugin: vite:import-analysis`, then `File:
            // /abs/colors.js:18:4` under the error, and only vite's own frames after it.
            if let Some(place) = trimmed.strip_prefix("File: ")
                && let Some(failure) = self.failure.as_mut().filter(|f| f.awaits_its_place())
                && let Some((file, n)) = plain_location(place.trim_end())
                && sink.is_project_file(file)
            {
                failure.location = Some((file.to_owned(), n.parse().unwrap_or(1)));
                return;
            }
            if let Some(rest) = line.strip_prefix("not ok ") {
                // TAP: `not ok 2 suite test` (mocha), `not ok 2 - test` (others).
                let name = rest.trim_start_matches(|c: char| c.is_ascii_digit()).trim_start();
                self.indented_error_due = Some(DueTitle {
                    name: name.strip_prefix("- ").unwrap_or(name).trim_end().to_owned(),
                    more: 0,
                });
            } else if (is_ascii_space(first) || first >= 0x80)
                && let Some(title) = mocha_failure_title(trimmed)
            {
                // Indented, as mocha prints it (and as `wants` offers it): at column 0 a numbered
                // line is another tool's.
                let title = title.trim_end();
                self.indented_error_due = Some(DueTitle {
                    name: title.trim_end_matches(':').to_owned(),
                    more: if title.ends_with(':') { 0 } else { MAX_TITLE_LINES },
                });
            } else if trimmed == "---" || first != b' ' && first != b'\t' {
                // A YAML block (tape, node:test), or a line at column 0: another tool's output,
                // or the next part of the log (an RSpec or bats title's error never came).
                self.indented_error_due = None;
            } else if let Some(due) = self.indented_error_due.as_mut().filter(|d| d.more > 0)
                && !trimmed.is_empty()
            {
                // The title goes on: a nested suite, or the test and its `:`.
                let part = trimmed.trim_end();
                due.name.push(' ');
                due.name.push_str(part.trim_end_matches(':'));
                due.more = if part.ends_with(':') { 0 } else { due.more - 1 };
                return;
            }
            // At column 0, or indented under a failed test's title as mocha prints it.
            let error_text = if first == b' ' || first == b'\t' {
                self.indented_error_due.is_some().then_some(trimmed)
            } else if first == b'[' {
                // An error without a stack, as Node shows one: `[Error [CODE]: msg] {`.
                line.strip_prefix('[')
                    .and_then(|l| l.strip_suffix("] {").or_else(|| l.strip_suffix(']')))
            } else {
                Some(line)
            };
            let may_be_error = error_text.is_some_and(|t| t.as_bytes().first().is_some_and(u8::is_ascii_uppercase))
                && (sink.may_hold(Needle::Error) && ERROR_WORD.find(line.as_bytes()).is_some()
                    || sink.may_hold(Needle::Exception) && EXCEPTION_WORD.find(line.as_bytes()).is_some());
            if let Some((kind, message)) = may_be_error.then(|| error_text.and_then(js_error)).flatten() {
                // A failed test named before its error (vitest's `FAIL` line, mocha's title)
                // gives it its name.
                let titled = self
                    .indented_error_due
                    .take()
                    .map(|t| t.name)
                    .filter(|name| !name.is_empty());
                let test = self
                    .failure
                    .as_mut()
                    .filter(|f| f.names_a_test_before_its_error())
                    .and_then(|f| f.test.take())
                    .or(titled);
                if let Some(test) = &test {
                    sink.test(test, TestOutcome::Failed);
                }
                self.flush(sink);
                // Node names the place it stopped above the error; the frames may all be Node's
                // own. An ES module whose import Node could not resolve is named in the message.
                let header = self
                    .node_header
                    .take()
                    .filter(|(file, _, _)| sink.is_project_file(file))
                    .map(|(file, n, _)| (file, n));
                let importer = header
                    .is_none()
                    .then(|| esm_importer(message).filter(|file| sink.is_project_file(file)))
                    .flatten()
                    .map(|file| (file.to_owned(), 1));
                self.failure = Some(Failure {
                    test,
                    message: Some(format!("{kind}: {message}")),
                    importer_line: importer.is_some(),
                    location: header.or(importer),
                    ..Failure::default()
                });
                return;
            }
            if self.failure.as_ref().is_some_and(|f| f.frames > 0) {
                self.flush(sink);
            } else if self
                .failure
                .as_ref()
                .is_some_and(Failure::names_a_test_before_its_error)
            {
                // Not the named test's error (an error vitest prints otherwise): the name is not
                // given to a later, unrelated one.
                self.failure = None;
            }
            return;
        }

        // A suite that failed to run on a type error: ts-jest prints tsc's diagnostic, indented.
        if sink.may_hold(Needle::TsCode)
            && let Some(finding) = tsc_diagnostic(trimmed)
        {
            if sink.is_project_file(finding.file) {
                sink.report(finding);
                // The suite's failure is this diagnostic: nothing more to report for it.
                self.failure = None;
            }
            return;
        }
        // A suite that failed to run on a syntax error Node found itself: jest prints Node's
        // `file:line` header, the source line and the error, indented under `Details:`.
        if let Some((file, n)) = node_header(trimmed)
            && sink.is_project_file(file)
        {
            self.node_header = Some((file.to_owned(), n, 0));
            return;
        }
        let Some(failure) = self.failure.as_mut() else {
            return;
        };
        if trimmed.starts_with("SyntaxError: ")
            && let Some((file, n, _)) = self.node_header.take()
        {
            failure.location = Some((file, n));
            failure.message = Some(trimmed.to_owned());
            return;
        }
        if failure.message.is_none() && !trimmed.is_empty() {
            // A suite that failed to run on a syntax error in the code under test: Babel names
            // the file and line; the frames are all in the transformer.
            if let Some(c) = BABEL_SYNTAX.captures(trimmed)
                && sink.is_project_file(&c[1])
            {
                failure.location = Some((c[1].to_owned(), c[3].parse().unwrap_or(1)));
                failure.message = Some(format!("SyntaxError: {}", &c[2]));
                return;
            }
            failure.message = Some(trimmed.to_owned());
        } else if failure.test.is_none()
            && failure.location.is_none()
            && let Some(error) = failure.message.as_deref().and_then(|m| m.strip_prefix("x "))
            && let Some((file, n)) = swc_source(trimmed)
            && sink.is_project_file(file)
        {
            // SWC (`@swc/jest`) prints its error, `x Expected ',', got ';'`, and then the source
            // it could not compile with the place: `,-[/abs/src/total.js:3:1]`.
            let message = format!("SyntaxError: {error}");
            failure.message = Some(message);
            failure.location = Some((file.to_owned(), n));
        }
    }

    /// A line of eslint's `html` report, once its first file has been named; whether it was one.
    /// Every line of its table is markup, a file's `[+] path` or blank: any other line ends it.
    fn eslint_html_line(&mut self, line: &str, sink: &mut Sink<'_>) -> bool {
        let cell = line.trim();
        if let Some(path) = cell.strip_prefix("[+] ") {
            self.eslint_html = Some(EslintHtml {
                file: path.to_owned(),
                row: HtmlRow::default(),
            });
            return true;
        }
        let Some(EslintHtml { file, row }) = self.eslint_html.as_mut() else {
            return false;
        };
        if !(cell.is_empty() || cell.starts_with('<')) || cell == "</table>" {
            self.eslint_html = None;
            return false;
        }
        if cell == "</tr>" {
            let row = std::mem::take(row);
            if let (Some(n), Some(message)) = (row.line, row.message) {
                let rule = row.rule.unwrap_or_default();
                sink.report(eslint_finding(file, n, &message, &rule, false, 0.95));
            }
        } else if let Some(text) = cell.strip_prefix("<td>").and_then(|c| c.strip_suffix("</td>")) {
            let place = text
                .split_once(':')
                .filter(|(_, column)| column.bytes().all(|b| b.is_ascii_digit()))
                .and_then(|(n, _)| n.parse::<u32>().ok());
            match place {
                Some(n) if row.line.is_none() => row.line = Some(n),
                _ if row.severity_seen && row.message.is_none() => row.message = Some(html_text(text)),
                _ => {}
            }
        } else if cell.starts_with("<td class=\"clr-")
            && (cell.ends_with(">Error</td>") || cell.ends_with(">Warning</td>"))
        {
            row.severity_seen = row.line.is_some();
        } else if cell.starts_with("<a href=")
            && let Some(rule) = cell
                .strip_suffix("</a>")
                .and_then(|c| c.rsplit_once('>'))
                .map(|(_, r)| r)
        {
            row.rule = Some(html_text(rule));
        }
        true
    }

    /// A line inside jasmine's `Failures:`; whether it was read (a frame is not: it is read as
    /// any failure's frame is).
    fn jasmine_line(&mut self, line: &str, first: u8, sink: &mut Sink<'_>) -> bool {
        if first != b' ' && first != b'\t' {
            if let Some(title) = mocha_failure_title(line) {
                self.flush(sink);
                let title = title.trim_end();
                sink.test(title, TestOutcome::Failed);
                self.failure = Some(Failure {
                    test: Some(title.to_owned()),
                    ..Failure::default()
                });
                self.jasmine = Some(JasmineMessage::Read);
                return true;
            }
            // The failures are over (`4 specs, 4 failures`).
            self.flush(sink);
            self.jasmine = None;
            return false;
        }
        let trimmed = line.trim();
        match trimmed {
            "Message:" => {
                // jasmine goes on after a failed expectation: each message, with the stack under
                // it, is a failure of the spec's own.
                if let Some(test) = self
                    .failure
                    .as_ref()
                    .filter(|f| f.message.is_some())
                    .and_then(|f| f.test.clone())
                {
                    self.flush(sink);
                    self.failure = Some(Failure {
                        test: Some(test),
                        ..Failure::default()
                    });
                }
                self.jasmine = Some(JasmineMessage::Due);
            }
            "Stack:" | "" => {}
            _ if self.jasmine == Some(JasmineMessage::Due) => {
                self.jasmine = Some(JasmineMessage::Read);
                if let Some(failure) = self.failure.as_mut() {
                    failure.message = Some(trimmed.to_owned());
                }
            }
            _ => return false,
        }
        true
    }

    fn flush(&mut self, sink: &mut Sink<'_>) {
        let Some(failure) = self.failure.take() else {
            return;
        };
        // A suite that failed to run with no place of the code: its test file's imports, at line
        // 1, are where to look.
        let location = failure.calls.recursive_call().cloned().or(failure.location);
        let (location, confidence) = match (location, failure.suite) {
            (Some(location), _) => (location, 0.9),
            // jest's notice of a test file with no test in it names no broken line.
            (None, Some(suite))
                if sink.is_project_file(&suite)
                    && !failure
                        .message
                        .as_deref()
                        .is_some_and(|m| m.starts_with("Your test suite must contain at least one test")) =>
            {
                ((suite, 1), 0.6)
            }
            _ => return,
        };
        let Some(message) = failure.message else {
            return;
        };
        if message == NODE_FILE_FAILED
            && let Some(test) = failure.test.as_deref()
        {
            sink.report(file_failed(&location.0, location.1, test));
            return;
        }
        // Raised in the code the test calls: the test's own line, the call that led there, is a
        // second place to look at (not for a syntax error, which the test only loaded).
        let error_type = js_type(&message);
        let called_at = failure.test_frame.as_ref().filter(|_| error_type != ErrorType::Syntax);
        sink.report_raised(
            Finding {
                file: &location.0,
                line: location.1,
                error_type,
                message: Cow::Borrowed(&message),
                test: failure.test.as_deref(),
                confidence,
                rank: Rank::Error,
                diagnostic: false,
            },
            called_at.map(|(file, line)| (file.as_str(), *line)),
        );
        // The error it was thrown for, where that was thrown (the code the test's call reached
        // through a wrapper that caught it), unless already reported.
        if let Some(Cause {
            message: cause_message,
            location: Some((file, n)),
        }) = failure.cause
            && (file.as_str(), n) != (location.0.as_str(), location.1)
            && failure.test_frame.as_ref().is_none_or(|(f, l)| (f, *l) != (&file, n))
        {
            let cause_message = cause_message.unwrap_or(message);
            sink.report(Finding {
                file: &file,
                line: n,
                error_type: js_type(&cause_message),
                message: Cow::Borrowed(&cause_message),
                test: failure.test.as_deref(),
                confidence: 0.7,
                rank: Rank::Error,
                diagnostic: false,
            });
        }
    }

    /// `node --test`'s `test at` lines and a timed-out test under one, and Node's warning of a
    /// top-level `await` that never settled: whether the line was one of theirs.
    fn node_test_line(&mut self, line: &str, sink: &mut Sink<'_>) -> bool {
        if let Some(place) = line
            .strip_prefix("test at ")
            .or_else(|| line.strip_prefix(UNSETTLED_AWAIT))
        {
            let place = place.strip_prefix("file://").unwrap_or(place);
            let (file, rest) = match place.rsplit_once(':') {
                // `FILE:L:C`: the column off first.
                Some((before, column))
                    if line.starts_with("test at ") && column.bytes().all(|b| b.is_ascii_digit()) =>
                {
                    before.rsplit_once(':').unwrap_or((before, ""))
                }
                Some(split) => split,
                None => return false,
            };
            let Ok(n) = rest.parse::<u32>() else {
                return false;
            };
            if line.starts_with("test at ") {
                self.node_test_at = Some(NodeTestAt {
                    file: file.to_owned(),
                    line: n,
                    name: None,
                });
            } else {
                sink.report(Finding {
                    file,
                    line: n,
                    error_type: ErrorType::Logic,
                    message: Cow::Borrowed("a top-level await that never settled (Node exited with code 13)"),
                    test: None,
                    confidence: 0.9,
                    rank: Rank::Error,
                    diagnostic: false,
                });
            }
            return true;
        }
        let Some(at) = self.node_test_at.as_mut() else {
            return false;
        };
        if at.name.is_none()
            && let Some(name) = line.strip_prefix("✖ ")
        {
            at.name = Some(name.rsplit_once(" (").map_or(name, |(name, _)| name).to_owned());
            return true;
        }
        let at = self.node_test_at.take().expect("a test's place");
        let message = line.trim();
        if message == NODE_FILE_FAILED
            && let Some(name) = at.name.as_deref().filter(|name| is_js_path(name))
        {
            // A test file's own test failed with no error of its own: the file failed outside
            // its tests, and no line of it is named but the test's first.
            sink.report(file_failed(&at.file, at.line, name));
            return true;
        }
        if at.name.is_some()
            && let Some(message) = message.strip_prefix('\'').and_then(|m| m.strip_suffix('\''))
            && message.starts_with("test timed out after ")
        {
            sink.report(Finding {
                file: &at.file,
                line: at.line,
                error_type: ErrorType::Logic,
                message: Cow::Borrowed(message),
                test: at.name.as_deref(),
                confidence: 0.9,
                rank: Rank::Error,
                diagnostic: false,
            });
            return true;
        }
        // Any other error comes indented under the test's name, its stack after it, as under
        // mocha's spec reporter.
        self.indented_error_due = at.name.map(|name| DueTitle { name, more: 0 });
        false
    }

    pub fn finish(&mut self, sink: &mut Sink<'_>) {
        self.flush(sink);
    }
}

/// The test a failed line of Node's spec reporter names, `signed values (3.132097ms)`: the
/// duration is what tells it from other `✖` lines (`✖ failing tests:`, eslint's `✖ 3 problems`).
fn node_spec_test(rest: &str) -> Option<&str> {
    let (name, duration) = rest.strip_suffix("ms)")?.rsplit_once(" (")?;
    let number = !duration.is_empty() && duration.bytes().all(|b| b.is_ascii_digit() || b == b'.');
    (number && !name.is_empty()).then_some(name)
}

/// The text of an HTML cell, its character references resolved (eslint's `html` escapes `&`, `<`,
/// `>`, `"` and `'`).
fn html_text(text: &str) -> String {
    quick_xml::escape::unescape(text).map_or_else(|_| text.to_owned(), Cow::into_owned)
}

/// The ES module whose import Node's loader could not resolve: `Cannot find module
/// '/abs/helpers.mjs' imported from /abs/check.mjs` (or `Cannot find package 'x' ...`). Node gives
/// no line: the importing module is the place, at its first line, where imports stand.
fn esm_importer(message: &str) -> Option<&str> {
    if !(message.starts_with("Cannot find module '") || message.starts_with("Cannot find package '")) {
        return None;
    }
    let (_, importer) = message.rsplit_once("' imported from ")?;
    // vitest quotes the importer: `... imported from '/w/index.js'`.
    let importer = importer.trim();
    let importer = importer
        .strip_prefix('\'')
        .and_then(|i| i.strip_suffix('\''))
        .unwrap_or(importer);
    Some(importer).filter(|i| !i.is_empty())
}

/// A tsc diagnostic, classic (`src/a.ts(3,7): error TS2322: ...`) or pretty (`src/a.ts:3:7 -
/// error TS2322: ...`).
fn tsc_diagnostic(line: &str) -> Option<Finding<'_>> {
    TS_CODE.find(line.as_bytes())?;
    let TscParts {
        file,
        line: n,
        level,
        code,
        message,
    } = tsc_parts(line)?;
    let (error_type, rank) = ts_type(code, level);
    Some(Finding {
        file,
        line: n.parse().unwrap_or(1),
        error_type,
        message: Cow::Owned(format!("{level} {code}: {message}")),
        test: None,
        confidence: 0.95,
        rank,
        diagnostic: true,
    })
}

/// What a tsc diagnostic says (its column aside).
#[derive(Debug, PartialEq, Eq)]
struct TscParts<'a> {
    file: &'a str,
    line: &'a str,
    level: &'a str,
    code: &'a str,
    message: &'a str,
}

/// A tsc diagnostic's parts, as [`TSC_CLASSIC`] and then [`TSC_PRETTY`] read them, without
/// running the regexes on ASCII text. The path is the shortest run of non-whitespace before a
/// `(` (classic) or a `:` (pretty) after which the rest reads as the diagnostic.
fn tsc_parts(line: &str) -> Option<TscParts<'_>> {
    if !line.is_ascii() || line.contains('\n') {
        let c = TSC_CLASSIC.captures(line).or_else(|| TSC_PRETTY.captures(line))?;
        return Some(TscParts {
            file: c.get(1)?.as_str(),
            line: c.get(2)?.as_str(),
            level: c.get(4)?.as_str(),
            code: c.get(5)?.as_str(),
            message: c.get(6)?.as_str(),
        });
    }
    let path_end = line
        .bytes()
        .position(|b| matches!(b, b' ' | b'\t' | 0x0b | 0x0c | b'\r'))
        .unwrap_or(line.len());
    [(b'(', b',', "): "), (b':', b':', " - ")]
        .into_iter()
        .find_map(|(open, between, close)| {
            line.as_bytes()[..path_end]
                .iter()
                .enumerate()
                .skip(1)
                .filter(|&(_, &b)| b == open)
                .find_map(|(at, _)| tsc_rest(line, at, between, close))
        })
}

/// The diagnostic after a path that ends before `at`: `N,M): level TSn: msg` (classic) or
/// `N:M - level TSn: msg` (pretty).
fn tsc_rest<'a>(line: &'a str, at: usize, between: u8, close: &str) -> Option<TscParts<'a>> {
    let digits = |s: &str| s.bytes().take_while(u8::is_ascii_digit).count();
    let rest = &line[at + 1..];
    let n = digits(rest);
    let column = rest[n..].strip_prefix(between as char).filter(|_| n > 0)?;
    let c = digits(column);
    let at_level = column[c..].strip_prefix(close).filter(|_| c > 0)?;
    let level = ["error", "warning"].into_iter().find(|l| at_level.starts_with(l))?;
    let after_level = &at_level[level.len()..];
    let at_code = after_level.strip_prefix(" TS")?;
    let code_digits = digits(at_code);
    let message = at_code[code_digits..].strip_prefix(": ").filter(|_| code_digits > 0)?;
    Some(TscParts {
        file: &line[..at],
        line: &rest[..n],
        level,
        // `TS` and its digits.
        code: &after_level[1..3 + code_digits],
        message,
    })
}

/// An error line, `TypeError: msg` or `Uncaught MyException [CODE]: msg`: its name and message,
/// as [`JS_ERROR`] reads them, without running the regex on ASCII text (a regex capture cost
/// thousands of instructions on each of the many lines that name an error).
pub(crate) fn js_error(text: &str) -> Option<(&str, &str)> {
    if !text.is_ascii() {
        let c = JS_ERROR.captures(text)?;
        return Some((c.get(1)?.as_str(), c.get(2)?.as_str()));
    }
    let word_len = |s: &str| {
        s.bytes()
            .take_while(|b| b.is_ascii_alphanumeric() || *b == b'_')
            .count()
    };
    let text = text.strip_prefix("Uncaught ").unwrap_or(text);
    // The name is a whole word: what follows it (` [CODE]` or `: `) is no word character.
    let word = word_len(text);
    let (kind, after) = text.split_at(word);
    if !(kind.as_bytes().first().is_some_and(u8::is_ascii_uppercase)
        && (kind.ends_with("Error") || kind.ends_with("Exception")))
    {
        return None;
    }
    // An optional ` [CODE]` (Node's `[ERR_MODULE_NOT_FOUND]`).
    let after = match after.strip_prefix(" [") {
        Some(code) => {
            let len = word_len(code);
            if len == 0 {
                return None;
            }
            code[len..].strip_prefix(']')?
        }
        None => after,
    };
    let message = after.strip_prefix(": ")?;
    (!message.contains('\n')).then_some((kind, message))
}

/// A row of eslint's `stylish` format under its file, `  3:7  error  msg  rule`: its line,
/// message and rule, as [`ESLINT_ROW`] reads them, without running the regex on ASCII text.
///
/// The regex's message is lazy: it ends where the rest of the row is either two or more spaces,
/// a rule and trailing whitespace, or only whitespace. A rule can only be the run of rule
/// characters that ends where the trailing whitespace begins, so the message ends where the
/// whitespace before that rule begins when there are two or more of it, else at the trailing
/// whitespace.
fn eslint_row(line: &str) -> Option<(&str, &str, Option<&str>)> {
    if !line.is_ascii() || line.contains('\n') {
        let c = ESLINT_ROW.captures(line)?;
        return Some((c.get(1)?.as_str(), c.get(4)?.as_str(), c.get(5).map(|m| m.as_str())));
    }
    let is_space = |b: &u8| matches!(b, b' ' | b'\t' | 0x0b | 0x0c | b'\r');
    let is_rule = |b: &u8| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'/' | b'-');
    let spaces = |s: &str| s.bytes().take_while(is_space).count();

    let (n, at_level) = row_place(line, |b| is_space(&b))?;
    let level = ["error", "warning"].into_iter().find(|l| at_level.starts_with(l))?;
    let after_level = &at_level[level.len()..];
    let gap = spaces(after_level);
    if gap == 0 {
        return None;
    }
    let rest = &after_level[gap..];
    if rest.is_empty() {
        // The message takes one byte of the whitespace when there are two.
        return (gap >= 2).then(|| (n, &after_level[gap - 1..], None));
    }
    // `rest` starts with a byte that is not whitespace: the message is never empty.
    let b = rest.as_bytes();
    let trailing = rest.len() - b.iter().rev().take_while(|b| is_space(b)).count();
    let rule_start = trailing - b[..trailing].iter().rev().take_while(|b| is_rule(b)).count();
    if rule_start < trailing {
        let at = if rule_start > 0 && b[rule_start - 1] == b'@' {
            rule_start - 1
        } else {
            rule_start
        };
        let end = at - b[..at].iter().rev().take_while(|b| is_space(b)).count();
        if end + 2 <= at {
            return Some((n, &rest[..end], Some(&rest[at..trailing])));
        }
    }
    Some((n, &rest[..trailing], None))
}

/// Whether `path` names a JS/TS source by its extension (each ends in s, x or e: one byte rules
/// out most text).
#[inline]
pub(crate) fn is_js_path(path: &str) -> bool {
    matches!(path.as_bytes().last(), Some(b's' | b'x' | b'e')) && JS_EXTENSIONS.iter().any(|e| path.ends_with(e))
}

/// A finding of eslint's one-line formatters, `compact` and `unix`, whose path is a JS/TS
/// source's.
fn eslint_one_line(line: &str) -> Option<Finding<'_>> {
    let (path, _) = split_once_byte(line, b':')?;
    if !is_js_path(path) {
        return None;
    }
    let c = if line.ends_with(']') {
        ESLINT_UNIX.captures(line)?
    } else {
        ESLINT_COMPACT.captures(line)?
    };
    let rule = c.get(4).map_or("", |m| m.as_str());
    // `[Error]` with no rule is the parser's (eslint says `Parsing error`, oxlint does not).
    let parse_failure = line.ends_with(" [Error]");
    Some(eslint_finding(
        c.get(1)?.as_str(),
        c[2].parse().unwrap_or(1),
        c.get(3)?.as_str(),
        rule,
        parse_failure,
        0.95,
    ))
}

/// A stack frame, `    at fn (/abs/file.js:12:5)` or `    at /abs/file.js:12:5`: the file and
/// the line, as [`FRAME`] reads them, without running the regex on the ASCII lines a stack is
/// made of (its lazy prefix made it the costliest regex of a jest log). A frame is one token with
/// no space or parenthesis in it, after `at ` or after the last ` (` of the line.
pub(crate) fn node_frame(line: &str) -> Option<(&str, &str)> {
    if !line.is_ascii() {
        // `\s` and `\d` are Unicode classes: the regex knows them.
        let c = FRAME.captures(line)?;
        return Some((c.get(1)?.as_str(), c.get(2)?.as_str()));
    }
    let rest = line.trim_start();
    if rest.len() == line.len() {
        return None;
    }
    frame_place(rest.strip_prefix("at ")?)
}

/// What follows a frame's `at ` (ASCII): `fn (path:12:5)` or `path:12:5`, the path and the line.
pub(crate) fn frame_place(rest: &str) -> Option<(&str, &str)> {
    let called = rest.rfind(" (").and_then(|i| frame_location(&rest[i + 2..]));
    called.or_else(|| frame_location(rest))
}

/// `[file://]path:line:column[)]`, the whole of `text` (ASCII): (path, line).
fn frame_location(text: &str) -> Option<(&str, &str)> {
    let uri = text.strip_prefix("file://").and_then(|path| plain_location(path));
    uri.or_else(|| plain_location(text))
}

fn plain_location(text: &str) -> Option<(&str, &str)> {
    let text = text.strip_suffix(')').unwrap_or(text);
    let (head, column) = rsplit_once_byte(text, b':')?;
    let (path, line) = rsplit_once_byte(head, b':')?;
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let path_ok = !path.is_empty()
        && !path
            .bytes()
            .any(|b| b == b'(' || b == b')' || b.is_ascii_whitespace() || b == 0x0b);
    (digits(line) && digits(column) && path_ok).then_some((path, line))
}

/// The head of the source SWC shows under its error, `,-[/abs/src/total.js:3:1]`: the file and
/// the line.
fn swc_source(line: &str) -> Option<(&str, u32)> {
    let place = line.strip_prefix(",-[")?.strip_suffix(']')?;
    let (head, column) = rsplit_once_byte(place, b':')?;
    let (file, n) = rsplit_once_byte(head, b':')?;
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    (digits(column) && digits(n) && !file.is_empty()).then(|| (file, n.parse().unwrap_or(1)))
}

/// Whether an indented line starts something of this format's own: jest's `● ` block, Node's
/// test runner's `✖ `, vitest's `FAIL `, eslint html's `[+] ` file, mocha's `Exception during
/// run:`. Told by the first byte first: most indented lines start with none of them.
#[inline]
fn starts_indented_block(trimmed: &str) -> bool {
    match trimmed.as_bytes().first() {
        // `●` and `✖` are both E2 ..: so is `✓`, on every passing test's line.
        Some(0xE2) => trimmed.starts_with("● ") || trimmed.starts_with("✖ "),
        Some(b'[') => trimmed.starts_with("[+] "),
        // vitest's `FAIL` line; vite's `File:` under a plugin's error.
        Some(b'F') => trimmed.starts_with("FAIL ") || trimmed.starts_with("File: "),
        Some(b'E') => trimmed.starts_with("Exception during run: "),
        _ => false,
    }
}

/// mocha's spec reporter's failed test, `2) suite`: the title after its number (the test's own
/// name and its error follow, indented).
fn mocha_failure_title(trimmed: &str) -> Option<&str> {
    let digits = trimmed.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 {
        return None;
    }
    trimmed[digits..].strip_prefix(") ")
}

/// vitest's failed test, `FAIL  test/a.test.js > suite > test`: the title after the file
/// (`suite > test`).
fn vitest_failed_test(trimmed: &str) -> Option<&str> {
    let (file, title) = trimmed.strip_prefix("FAIL ")?.trim_start().split_once(" > ")?;
    (is_js_path(file) && !title.is_empty()).then_some(title)
}

/// Node's `path/to/file.js:12` line above an uncaught error: a source path and a line, nothing
/// else.
pub(crate) fn node_header(line: &str) -> Option<(&str, u32)> {
    // The line number ends the line: most lines are ruled out by their last byte.
    if !line.as_bytes().last().is_some_and(u8::is_ascii_digit) {
        return None;
    }
    // The last `:` stands right before the number: the number is the line's last digits.
    let digits = line.bytes().rev().take_while(u8::is_ascii_digit).count();
    let colon = line.len() - digits;
    if digits > 9 || colon == 0 || line.as_bytes()[colon - 1] != b':' {
        return None;
    }
    let (path, n) = (&line[..colon - 1], &line[colon..]);
    if has_byte(path, b' ') {
        return None;
    }
    let path = path.strip_prefix("file://").unwrap_or(path);
    (JS_EXTENSIONS.iter().any(|e| path.ends_with(e)) && looks_like_source(path)).then(|| (path, n.parse().unwrap_or(1)))
}

/// One eslint message: a parse failure is SYNTAX, a name or module that does not resolve
/// (`no-undef`, [`super::rust::is_unresolved_rule`]) IMPORT, anything else a LINTING finding.
pub(crate) fn eslint_finding<'a>(
    file: &'a str,
    line: u32,
    message: &'a str,
    rule: &str,
    fatal: bool,
    confidence: f64,
) -> Finding<'a> {
    let error_type = if fatal || message.starts_with("Parsing error") {
        ErrorType::Syntax
    } else if super::rust::is_unresolved_rule(rule) {
        ErrorType::Import
    } else {
        ErrorType::Linting
    };
    Finding {
        file,
        line,
        error_type,
        message: if rule.is_empty() {
            Cow::Borrowed(message)
        } else {
            Cow::Owned(format!("{message} ({rule})"))
        },
        test: None,
        confidence,
        rank: Rank::of(error_type),
        diagnostic: true,
    }
}

/// Whether `code` is a TypeScript diagnostic's code, `TS` and its number (`TS2322`), as the tools
/// that run tsc quote it (Rollup's and deno's).
pub(crate) fn is_ts_code(code: &str) -> bool {
    code.strip_prefix("TS")
        .is_some_and(|digits| !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()))
}

/// The bug type of a TypeScript diagnostic code.
pub(crate) fn ts_type(code: &str, level: &str) -> (ErrorType, Rank) {
    let number: u32 = code.trim_start_matches("TS").parse().unwrap_or(0);
    let error_type = match number {
        1000..=1999 => ErrorType::Syntax,
        2307 | 2304 | 2305 | 2306 | 2503 | 2552 | 2580 | 2582 | 2614 | 2724 | 2792 | 2875 => ErrorType::Import,
        6133 | 6192 | 6196 | 6198 => ErrorType::Linting,
        _ => ErrorType::TypeError,
    };
    let rank = if level == "warning" || error_type == ErrorType::Linting {
        Rank::Warning
    } else {
        Rank::Error
    };
    (error_type, rank)
}

/// The bug type of a JavaScript error message.
pub(crate) fn js_type(message: &str) -> ErrorType {
    if message.starts_with("TypeError") {
        ErrorType::TypeError
    } else if message.starts_with("SyntaxError")
        // vite's: a file that does not parse, which its import analysis or esbuild could not read.
        || message.contains("contains invalid JS syntax")
        || message.contains("Transform failed with")
    {
        ErrorType::Syntax
    } else if message.starts_with("ReferenceError") && message.ends_with("is not defined")
        || message.contains("Cannot find module")
        || message.contains("Cannot find package")
        || message.starts_with("Module not found")
    {
        ErrorType::Import
    } else {
        ErrorType::Logic
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Node 26's `node --test` spec reporter on minimist 1.2.8 with a test that times out and one
    /// that fails an assertion, and Node's warning of a top-level `await` that never settled
    /// (the twenty-eighth outsider trial's, captured by running them): the timeout at its `test
    /// at` line, the assertion where its stack says, the `await` at the module's line.
    #[test]
    fn node_test_s_timeout_and_an_unsettled_await_are_placed() {
        let ws = super::super::Workspace::new("/work/heldout30/repos/minimist").with_files(
            ["test-node/parse.test.js", "scripts/cli.mjs", "index.js"]
                .map(str::to_owned)
                .to_vec(),
        );
        let spec = "\
\u{2716} parses async (100.365131ms)
\u{2716} alias port (1.122355ms)
\u{2714} double dash (1.536764ms)
\u{2139} tests 4
\u{2139} fail 1
\u{2139} cancelled 1

\u{2716} failing tests:

test at test-node/parse.test.js:8:1
\u{2716} parses async (100.365131ms)
  'test timed out after 100ms'

test at test-node/parse.test.js:13:1
\u{2716} alias port (1.122355ms)
  AssertionError [ERR_ASSERTION]: Expected values to be strictly equal:
  + actual - expected
  
  + undefined
  - 8080
  
      at TestContext.<anonymous> (/work/heldout30/repos/minimist/test-node/parse.test.js:15:9)
      at Test.runInAsyncScope (node:async_hooks:226:14)
      at async startSubtestAfterBootstrap (node:internal/test_runner/harness:387:3) {
    generatedMessage: true,
    code: 'ERR_ASSERTION',
  }

test at test-node/parse.test.js:1:1
\u{2716} test-node/parse.test.js (48.874183ms)
  'test failed'
";
        let parsed = super::super::parse(spec, &ws);
        let got: Vec<_> = super::super::report_places(&parsed);
        assert_eq!(
            got,
            [
                ("test-node/parse.test.js", 8, Some("parses async")),
                ("test-node/parse.test.js", 15, Some("alias port")),
                // The file's own test: `process.exit(1)` ended it outside its tests.
                ("test-node/parse.test.js", 1, Some("test-node/parse.test.js"))
            ]
        );
        // The dot reporter names the file's test and its message, and no place: the file's
        // first line, as `test at` gives it.
        let dot = "\
X

Failed tests:

\u{2716} /work/heldout30/repos/minimist/test-node/parse.test.js (64.467673ms)
  'test failed'
";
        let parsed = super::super::parse(dot, &ws);
        assert_eq!(
            super::super::report_places(&parsed),
            [(
                "test-node/parse.test.js",
                1,
                Some("/work/heldout30/repos/minimist/test-node/parse.test.js")
            )]
        );
        assert!(
            parsed.reports[0].message.contains("outside its tests"),
            "{:?}",
            parsed.reports[0]
        );
        let unsettled = "\
Warning: Detected unsettled top-level await at file:///work/heldout30/repos/minimist/scripts/cli.mjs:3
const argv = await parseAsync(process.argv.slice(2));
             ^
";
        let parsed = super::super::parse(unsettled, &ws);
        assert_eq!(super::super::report_places(&parsed), [("scripts/cli.mjs", 3, None)]);
    }

    /// From a review: a jasmine spec that failed twice (each message with its own stack), then a
    /// suite's error, and Babel's error whose place a colon and a hint follow.
    #[test]
    fn each_jasmine_message_and_babel_s_hinted_error_are_placed() {
        let semver = super::super::Workspace::new("/work/heldout14/projects/semver")
            .with_files(["functions/clean.js", "spec/semverSpec.js"].map(str::to_owned).to_vec());
        let parsed = super::super::parse(
            "Started
F.

Failures:
1) semver comparison neq reports different versions
  Message:
    Expected 1 to equal 2.
  Stack:
        at <Jasmine>
        at UserContext.<anonymous> (/work/heldout14/projects/semver/spec/semverSpec.js:9:19)
        at <Jasmine>
  Message:
    TypeError: s.version is not a function
  Stack:
        at Object.clean (/work/heldout14/projects/semver/functions/clean.js:4:16)
        at UserContext.<anonymous> (/work/heldout14/projects/semver/spec/semverSpec.js:19:19)
Suite error: semver parts
  Message:
    Error: afterAll boom
  Stack:
        at UserContext.<anonymous> (/work/heldout14/projects/semver/spec/semverSpec.js:30:11)

2 specs, 2 failures
",
            &semver,
        );
        assert_eq!(
            super::super::report_places(&parsed),
            [
                (
                    "spec/semverSpec.js",
                    9,
                    Some("semver comparison neq reports different versions")
                ),
                (
                    "functions/clean.js",
                    4,
                    Some("semver comparison neq reports different versions")
                ),
                // The suite's own error after the spec's, at its frame.
                ("spec/semverSpec.js", 30, Some("semver parts")),
            ]
        );
        let nanoid =
            super::super::Workspace::new("/work/heldout14/projects/nanoid_syntax").with_files(vec!["index.js".into()]);
        let parsed = super::super::parse("SyntaxError: /work/heldout14/projects/nanoid_syntax/index.js: Support for the experimental syntax 'jsx' isn't currently enabled (23:2):

> 23 | <div/>
", &nanoid);
        assert_eq!(super::super::report_places(&parsed), [("index.js", 23, None)]);
    }

    /// jasmine 7's `Suite error:` (an `afterAll` that threw), alone and after a failed spec,
    /// captured by running it: each at its first project frame, named by its suite.
    #[test]
    fn a_jasmine_suite_error_is_placed_at_its_first_project_frame() {
        let alone = "Randomized with seed 20474
Started
.


Suite error: db
  Message:
    TypeError: Cannot read properties of undefined (reading 'close')
  Stack:
        at close (/tmp/jas/lib/db.js:2:20)
        at UserContext.<anonymous> (/tmp/jas/spec/dbSpec.js:5:5)
        at <Jasmine>
        at node:internal/process/task_queues:140:7

1 spec, 1 failure
Finished in 0.003 seconds
Randomized with seed 20474 (jasmine --random=true --seed=20474)
";
        let both = "Randomized with seed 4321
Started
F.

Failures:
1) math adds
  Message:
    Expected 2 to be 3.
  Stack:
        at <Jasmine>
        at UserContext.<anonymous> (/tmp/jas/spec/mathSpec.js:5:19)
        at <Jasmine>

Suite error: db
  Message:
    TypeError: Cannot read properties of undefined (reading 'close')
  Stack:
        at close (/tmp/jas/lib/db.js:2:20)
        at UserContext.<anonymous> (/tmp/jas/spec/dbSpec.js:5:5)
        at <Jasmine>
        at node:internal/process/task_queues:140:7

2 specs, 2 failures
Finished in 0.008 seconds
Randomized with seed 4321 (jasmine --random=true --seed=4321)
";
        let files = ["lib/db.js", "spec/dbSpec.js", "spec/mathSpec.js"]
            .map(str::to_owned)
            .to_vec();
        let workspace = super::super::Workspace::new("/tmp/jas").with_files(files);
        let places = |log| {
            let parsed = super::super::parse(log, &workspace);
            super::super::report_findings(&parsed)
                .into_iter()
                .map(|(file, line, error_type, _)| (file.to_owned(), line, error_type))
                .zip(parsed.reports.iter().map(|r| r.test_name.clone()))
                .collect::<Vec<_>>()
        };
        let suite_error = (
            ("lib/db.js".to_owned(), 2, "TypeError".to_owned()),
            Some("db".to_owned()),
        );
        assert_eq!(places(alone), std::slice::from_ref(&suite_error));
        assert_eq!(
            places(both),
            [
                (
                    ("spec/mathSpec.js".to_owned(), 5, "Logic".to_owned()),
                    Some("math adds".to_owned())
                ),
                suite_error
            ]
        );
    }

    /// node:test's JUnit reporter (Node 20, the fourteenth outsider trial's, captured by running
    /// it on ms 2.1.3 with three bugs): a test whose code threw is `Error [ERR_TEST_FAILURE]`
    /// (in brackets when it has no stack) with what was thrown as its `cause:` and the frames
    /// under it: placed at the cause's first project frame, typed by the cause.
    #[test]
    fn node_test_s_junit_failures_are_placed_and_typed_by_their_cause() {
        let log = "<?xml version=\"1.0\" encoding=\"utf-8\"?>
<testsuites>
	<testsuite name=\"ms(string)\" time=\"0.002617\" disabled=\"0\" errors=\"0\" tests=\"3\" failures=\"2\" skipped=\"0\" hostname=\"vm\">
		<testcase name=\"parses weeks\" time=\"0.001421\" classname=\"test\" failure=\"Expected values to be strictly equal:+ actual - expected+ 86400000- 604800000\">
			<failure type=\"testCodeFailure\" message=\"Expected values to be strictly equal:+ actual - expected+ 86400000- 604800000\">
Error [ERR_TEST_FAILURE]: Expected values to be strictly equal:
+ actual - expected

+ 86400000
- 604800000
    at new Promise (&lt;anonymous>)
    at Array.map (&lt;anonymous>) {
  code: 'ERR_TEST_FAILURE',
  failureType: 'testCodeFailure',
  cause: AssertionError [ERR_ASSERTION]: Expected values to be strictly equal:
  + actual - expected
  
  + 86400000
  - 604800000
      at TestContext.&lt;anonymous> (/work/heldout15/projects/ms/test/ms.test.js:8:12)
      at Test.runInAsyncScope (node:async_hooks:206:9)
      at Test.run (node:internal/test_runner/test:796:25)
      at Test.start (node:internal/test_runner/test:702:17)
      at node:internal/test_runner/test:1133:71
      at node:internal/per_context/primordials:482:82
      at new Promise (&lt;anonymous>)
      at new SafePromise (node:internal/per_context/primordials:450:29)
      at node:internal/per_context/primordials:482:9
      at Array.map (&lt;anonymous>) {
    generatedMessage: true,
    code: 'ERR_ASSERTION',
    actual: 86400000,
    expected: 604800000,
    operator: 'strictEqual'
  }
}
			</failure>
		</testcase>
		<testcase name=\"parses hours\" time=\"0.000187\" classname=\"test\"/>
		<testcase name=\"parses a bare number\" time=\"0.000150\" classname=\"test\" failure=\"Cannot read properties of undefined (reading 'toLowerCase')\">
			<failure type=\"testCodeFailure\" message=\"Cannot read properties of undefined (reading 'toLowerCase')\">
[Error [ERR_TEST_FAILURE]: Cannot read properties of undefined (reading 'toLowerCase')] {
  code: 'ERR_TEST_FAILURE',
  failureType: 'testCodeFailure',
  cause: TypeError [Error]: Cannot read properties of undefined (reading 'toLowerCase')
      at parse (/work/heldout15/projects/ms/index.js:61:23)
      at module.exports (/work/heldout15/projects/ms/index.js:30:12)
      at TestContext.&lt;anonymous> (/work/heldout15/projects/ms/test/ms.test.js:16:24)
      at Test.runInAsyncScope (node:async_hooks:206:9)
      at Test.run (node:internal/test_runner/test:796:25)
      at Suite.processPendingSubtests (node:internal/test_runner/test:526:18)
      at Test.postRun (node:internal/test_runner/test:889:19)
      at Test.run (node:internal/test_runner/test:835:12)
      at async Suite.processPendingSubtests (node:internal/test_runner/test:526:7)
}
			</failure>
		</testcase>
	</testsuite>
	<testsuite name=\"ms(number)\" time=\"0.000325\" disabled=\"0\" errors=\"0\" tests=\"2\" failures=\"1\" skipped=\"0\" hostname=\"vm\">
		<testcase name=\"formats short\" time=\"0.000111\" classname=\"test\"/>
		<testcase name=\"formats long days\" time=\"0.000118\" classname=\"test\" failure=\"plurl is not defined\">
			<failure type=\"testCodeFailure\" message=\"plurl is not defined\">
Error [ERR_TEST_FAILURE]: plurl is not defined
    at async Promise.all (index 0) {
  code: 'ERR_TEST_FAILURE',
  failureType: 'testCodeFailure',
  cause: ReferenceError [Error]: plurl is not defined
      at fmtLong (/work/heldout15/projects/ms/index.js:142:5)
      at module.exports (/work/heldout15/projects/ms/index.js:32:27)
      at TestContext.&lt;anonymous> (/work/heldout15/projects/ms/test/ms.test.js:26:24)
      at Test.runInAsyncScope (node:async_hooks:206:9)
      at Test.run (node:internal/test_runner/test:796:25)
      at Suite.processPendingSubtests (node:internal/test_runner/test:526:18)
      at Test.postRun (node:internal/test_runner/test:889:19)
      at Test.run (node:internal/test_runner/test:835:12)
      at async Promise.all (index 0)
      at async Suite.run (node:internal/test_runner/test:1135:7)
}
			</failure>
		</testcase>
	</testsuite>
	<!-- tests 5 -->
	<!-- suites 2 -->
	<!-- pass 2 -->
	<!-- fail 3 -->
	<!-- cancelled 0 -->
	<!-- skipped 0 -->
	<!-- todo 0 -->
	<!-- duration_ms 85.521056 -->
</testsuites>
";
        let workspace = super::super::Workspace::new("/work/heldout15/projects/ms")
            .with_files(["index.js", "test/ms.test.js"].map(str::to_owned).to_vec());
        let parsed = super::super::parse(log, &workspace);
        let got: Vec<_> = super::super::report_findings(&parsed)
            .into_iter()
            .map(|(file, line, error_type, _)| (file.to_owned(), line, error_type))
            .collect();
        assert_eq!(
            got,
            [
                ("test/ms.test.js".to_owned(), 8, "Logic".to_owned()),
                ("index.js".to_owned(), 61, "TypeError".to_owned()),
                ("test/ms.test.js".to_owned(), 16, "TypeError".to_owned()),
                ("index.js".to_owned(), 142, "Import".to_owned()),
                ("test/ms.test.js".to_owned(), 26, "Import".to_owned()),
            ]
        );
    }

    /// jest 30 with `--ci` on an ES module (`--experimental-vm-modules`) that does not parse (the
    /// fifteenth outsider trial's, captured by running it): jest names no file of the code, only
    /// the suite that failed to run, which is reported at its first line (its imports), less
    /// surely than a place the log names.
    #[test]
    fn a_jest_suite_that_failed_to_run_without_a_place_is_reported_at_the_suite() {
        let log = "FAIL test/pretty-bytes.test.js
  ● Test suite failed to run

    SyntaxError: Unexpected token ';'

      at EsmLoader.loadEsmModule (../../tools/js/node_modules/jest-runtime/build/index.js:1863:20)

Test Suites: 1 failed, 1 total
Tests:       0 total
Snapshots:   0 total
Time:        0.092 s
Ran all test suites.
(node:27534) ExperimentalWarning: VM Modules is an experimental feature and might change at any time
(Use `node --trace-warnings ...` to show where the warning was created)
";
        let workspace = super::super::Workspace::new("/work/heldout16/projects/prettybytes_syntax")
            .with_files(vec!["index.js".to_owned(), "test/pretty-bytes.test.js".to_owned()]);
        let parsed = super::super::parse(log, &workspace);
        assert_eq!(
            super::super::report_findings(&parsed)
                .into_iter()
                .map(|(file, line, error_type, _)| (file, line, error_type))
                .collect::<Vec<_>>(),
            [("test/pretty-bytes.test.js", 1, "Syntax".to_owned())]
        );
        assert_eq!(parsed.reports[0].confidence_score, Some(0.6));
        // From a review: jest's notice of a test file with no test names no broken line.
        let empty = "FAIL ./empty.test.js
  ● Test suite failed to run

    Your test suite must contain at least one test.

      at onResult (../../../work/heldout16/tools/js/node_modules/@jest/core/build/index.js:1054:18)
      at ../../../work/heldout16/tools/js/node_modules/emittery/index.js:363:13
          at Array.map (<anonymous>)
      at Emittery.emit (../../../work/heldout16/tools/js/node_modules/emittery/index.js:361:23)

";
        let workspace = super::super::Workspace::new("/w").with_files(vec!["empty.test.js".to_owned()]);
        assert!(super::super::parse(empty, &workspace).reports.is_empty());
    }

    /// jasmine 7's failures (the thirteenth outsider trial's, on semver 7.6.3 with four bugs): each
    /// spec's `Message:` is its error, placed at its stack's first project frame and named by
    /// its title.
    #[test]
    fn jasmine_s_failures_are_placed_at_their_first_project_frame() {
        let log = "Randomized with seed 06892
Started
FFFF

Failures:
1) semver comparison neq reports different versions
  Message:
    ReferenceError: compre is not defined
  Stack:
        at Object.neq (/work/heldout14/projects/semver/functions/neq.js:2:50)
        at UserContext.<anonymous> (/work/heldout14/projects/semver/spec/semverSpec.js:9:19)
        at <Jasmine>

2) semver comparison gt is strict for equal versions
  Message:
    Expected true to be false.
  Stack:
        at <Jasmine>
        at UserContext.<anonymous> (/work/heldout14/projects/semver/spec/semverSpec.js:5:41)
        at <Jasmine>

3) semver parts clean removes whitespace
  Message:
    TypeError: s.version is not a function
  Stack:
        at Object.clean (/work/heldout14/projects/semver/functions/clean.js:4:16)
        at UserContext.<anonymous> (/work/heldout14/projects/semver/spec/semverSpec.js:19:19)
        at <Jasmine>

4) semver parts major of 7.1.0 is 7
  Message:
    Expected 1 to equal 7.
  Stack:
        at <Jasmine>
        at UserContext.<anonymous> (/work/heldout14/projects/semver/spec/semverSpec.js:15:35)
        at <Jasmine>

4 specs, 4 failures
Finished in 0.006 seconds
Randomized with seed 06892 (jasmine --random=true --seed=06892)
";
        let files = ["functions/neq.js", "functions/clean.js", "spec/semverSpec.js"]
            .map(str::to_owned)
            .to_vec();
        let workspace = super::super::Workspace::new("/work/heldout14/projects/semver").with_files(files);
        let parsed = super::super::parse(log, &workspace);
        let got: Vec<_> = parsed
            .reports
            .iter()
            .map(|r| {
                (
                    r.file_path.as_str(),
                    r.line_number,
                    r.error_type,
                    r.test_name.as_deref(),
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                (
                    "functions/neq.js",
                    2,
                    ErrorType::Import,
                    Some("semver comparison neq reports different versions")
                ),
                (
                    "spec/semverSpec.js",
                    5,
                    ErrorType::Logic,
                    Some("semver comparison gt is strict for equal versions")
                ),
                (
                    "functions/clean.js",
                    4,
                    ErrorType::TypeError,
                    Some("semver parts clean removes whitespace")
                ),
                (
                    "spec/semverSpec.js",
                    15,
                    ErrorType::Logic,
                    Some("semver parts major of 7.1.0 is 7")
                ),
            ]
        );
    }

    /// `@babel/cli` 7.29 on a file it cannot parse (the thirteenth outsider trial's, on nanoid
    /// 5.0.9): Babel's own error names the file and the place; its frames are all Babel's.
    #[test]
    fn babel_s_own_syntax_error_is_placed_at_its_line() {
        let log =
            "SyntaxError: /work/heldout14/projects/nanoid_syntax/index.js: Unexpected token, expected \",\" (23:2)

  21 | export function customRandom(alphabet, defaultSize, getRandom) {
  22 |   let mask = (2 << (31 - Math.clz32((alphabet.length - 1) | 1)) - 1
> 23 |   let step = Math.ceil((1.6 * mask * defaultSize) / alphabet.length)
     |   ^
  24 |   return (size = defaultSize) => {
  25 |     let id = ''
  26 |     while (true) {
    at constructor (/work/heldout14/tools/node_modules/@babel/parser/lib/index.js:369:19)
    at Parser.raise (/work/heldout14/tools/node_modules/@babel/parser/lib/index.js:6643:19)
    at Parser.unexpected (/work/heldout14/tools/node_modules/@babel/parser/lib/index.js:6663:16)
    at Parser.expect (/work/heldout14/tools/node_modules/@babel/parser/lib/index.js:6983:12)
    at Parser.parseParenAndDistinguishExpression (/work/heldout14/tools/node_modules/@babel/parser/lib/index.js:8676:14)
";
        let workspace =
            super::super::Workspace::new("/work/heldout14/projects/nanoid_syntax").with_files(vec!["index.js".into()]);
        let parsed = super::super::parse(log, &workspace);
        assert_eq!(
            super::super::report_findings(&parsed),
            [(
                "index.js",
                23,
                "Syntax".to_owned(),
                "SyntaxError: Unexpected token, expected \",\""
            )]
        );
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4000))]

        /// A `stylish` row is read as the regex it replaced reads it.
        #[test]
        fn eslint_rows_are_read_as_the_regex_reads_them(
            line in prop_oneof![
                " {0,2}[0-9]{0,2}:?[0-9]{0,2} {0,3}(error|warning|err)?( |  |\t)?(x|Unexpected var| |  |@|no-var|@ts/x|\\.|\u{e9}|\u{a0}|\r){0,6}",
                "[ \t:0-9ewrnoaig@/x\u{a0}\u{663}.-]{0,24}",
            ],
        ) {
            let by_regex = ESLINT_ROW
                .captures(&line)
                .map(|c| (c.get(1).unwrap().as_str(), c.get(4).unwrap().as_str(), c.get(5).map(|m| m.as_str())));
            prop_assert_eq!(eslint_row(&line), by_regex, "{:?}", line);
        }

        /// A tsc diagnostic is read as the regexes it replaced read it.
        #[test]
        fn tsc_diagnostics_are_read_as_the_regexes_read_them(
            line in prop_oneof![
                "[a-z(:. \u{e9}]{0,3}\\([0-9]{0,2},[0-9]{0,2}\\): (error|warning|err) TS[0-9]{0,3}: (msg|\n|\u{663}|\\(1,2\\): error TS1: x)?",
                "[a-z(:. \u{e9}]{0,3}:[0-9]{0,2}:[0-9]{0,2} - (error|warning|err) TS[0-9]{0,3}: (msg|\n|\u{663}|:1:2 - error TS1: x)?",
                "(\\(|:|[a-z]|[0-9]|,|\\): | - |error|TS|: | |\u{e9}){0,10}",
            ],
        ) {
            let by_regex = TSC_CLASSIC.captures(&line).or_else(|| TSC_PRETTY.captures(&line)).map(|c| TscParts {
                file: c.get(1).unwrap().as_str(),
                line: c.get(2).unwrap().as_str(),
                level: c.get(4).unwrap().as_str(),
                code: c.get(5).unwrap().as_str(),
                message: c.get(6).unwrap().as_str(),
            });
            prop_assert_eq!(tsc_parts(&line), by_regex, "{:?}", line);
        }

        /// Node's `file:line` header is found as splitting at the last colon found it.
        #[test]
        fn node_headers_are_read_as_the_last_colon_splits_them(
            line in "(file://)?[a-z/ .:\u{e9}]{0,6}(\\.js|\\.ts|\\.py)?(:[0-9]{0,11}){0,2}",
        ) {
            let by_split = line
                .as_bytes()
                .last()
                .is_some_and(u8::is_ascii_digit)
                .then(|| line.rsplit_once(':'))
                .flatten()
                .filter(|(path, n)| !n.is_empty() && n.len() <= 9 && n.bytes().all(|b| b.is_ascii_digit()) && !path.contains(' '))
                .map(|(path, n)| (path.strip_prefix("file://").unwrap_or(path), n.parse().unwrap_or(1)))
                .filter(|(path, _)| JS_EXTENSIONS.iter().any(|e| path.ends_with(e)) && looks_like_source(path));
            prop_assert_eq!(node_header(&line), by_split, "{:?}", line);
        }

        /// An error line is read as the regex it replaced reads it.
        #[test]
        fn error_lines_are_read_as_the_regex_reads_them(
            text in prop::collection::vec(
                prop_oneof![
                    Just("Uncaught "), Just("Uncaught"), Just("Type"), Just("Error"), Just("Exception"), Just("x"),
                    Just("_"), Just("9"), Just("\u{e9}"), Just("\u{663}"), Just(" ["), Just("ERR_X"), Just("]"),
                    Just(": "), Just(":"), Just(" "), Just("\n"), Just("\r"), Just("msg"),
                ],
                0..8,
            ).prop_map(|p| p.concat()),
        ) {
            let by_regex = JS_ERROR.captures(&text).map(|c| (c.get(1).unwrap().as_str(), c.get(2).unwrap().as_str()));
            prop_assert_eq!(js_error(&text), by_regex, "{:?}", text);
        }

        /// A stack frame is read as the regex it replaced reads it.
        #[test]
        fn stack_frames_are_read_as_the_regex_reads_them(
            line in "[ \t\u{a0}]{0,2}(at )?([A-Za-z.<>]{0,6}( \\(| \\(\\(| ){0,2})?(file://)?[a-z/.:( )\u{e9}\u{663}]{0,8}(:[0-9\u{663}]{0,3}){0,3}\\)?\\)?",
        ) {
            let by_regex = FRAME.captures(&line).map(|c| (c.get(1).map_or("", |m| m.as_str()), c.get(2).map_or("", |m| m.as_str())));
            prop_assert_eq!(node_frame(&line), by_regex);
        }
    }

    #[test]
    fn frames_of_a_jest_stack_are_read() {
        assert_eq!(
            node_frame("      at Object.<anonymous> (/w/src/price.test.js:12:5)"),
            Some(("/w/src/price.test.js", "12"))
        );
        assert_eq!(node_frame("    at /w/src/a.js:3:9"), Some(("/w/src/a.js", "3")));
        assert_eq!(
            node_frame("    at file:///w/src/a.mjs:3:9"),
            Some(("/w/src/a.mjs", "3"))
        );
        assert_eq!(node_frame("    at new Promise (<anonymous>)"), None);
    }

    /// eslint's `html` table ends at the first line that is not markup: a row after it is not read
    /// as the last file's.
    #[test]
    fn an_eslint_html_table_ends_at_a_line_that_is_not_markup() {
        let row = "<tr style=\"display: none;\" class=\"f-1\">\n    <td>4:5</td>\n    <td class=\"clr-2\">Error</td>\n    <td>&#39;x&#39; is defined but never used.</td>\n    <td>\n        <a href=\"https://eslint.org/docs/latest/rules/no-unused-vars\">no-unused-vars</a>\n    </td>\n</tr>\n";
        let table =
            format!("<th colspan=\"4\">\n        [+] /w/src/a.js\n        <span>1 problem</span>\n</th>\n{row}");
        let workspace = super::super::Workspace::new("/w");
        let read = super::super::parse(&table, &workspace);
        let places = super::super::report_messages(&read);
        assert_eq!(
            places,
            [("src/a.js", 4, "'x' is defined but never used. (no-unused-vars)")]
        );
        let cut = format!("<th colspan=\"4\">\n        [+] /w/src/a.js\n</th>\nnpm ERR! lint failed\n{row}");
        assert!(super::super::parse(&cut, &workspace).reports.is_empty());
    }

    /// Another runner's numbered failure (RSpec's `1) ...`) or a TAP `not ok` with no error
    /// under it (bats) does not make a later indented `Error:` a failure: here a passing jest
    /// suite's `console.error`.
    #[test]
    fn an_indented_error_after_another_runners_title_is_not_a_failure() {
        let workspace =
            super::super::Workspace::new("/w").with_files(vec!["src/cache.js".into(), "spec/user_spec.rb".into()]);
        let jest = "> jest --ci\n\n  console.error\n    Error: connect ECONNREFUSED 127.0.0.1:6379\n        at Object.connect (/w/src/cache.js:14:11)\n\nPASS src/cache.test.js\n";
        for before in [
            "Failures:\n\n  1) User#display_name falls back to the email\n     Failure/Error: expect(user.display_name).to eq(\"ann@example.com\")\n\nFinished in 0.04 seconds\n",
            "1..2\nok 1 builds\nnot ok 2 deploys\n# (in test file test/deploy.bats, line 9)\n",
        ] {
            let parsed = super::super::parse(&format!("{before}{jest}"), &workspace);
            assert!(parsed.reports.is_empty(), "{before}{:#?}", parsed.reports);
        }
    }

    /// vitest's `FAIL` line names the test whose error follows it; an error vitest prints in
    /// another form (`Unknown Error: ...`) ends the wait, and a later unrelated error (an unhandled
    /// rejection) does not take the name.
    #[test]
    fn a_vitest_test_name_goes_only_to_the_error_under_it() {
        let workspace =
            super::super::Workspace::new("/w").with_files(vec!["src/poller.js".into(), "src/math.js".into()]);
        let log = " FAIL  test/math.test.js > math > rejects bad input\nUnknown Error: bad input\n\n⎯⎯⎯ Unhandled Rejection ⎯⎯⎯\nTypeError: Cannot read properties of undefined (reading 'status')\n ❯ poll src/poller.js:12:20\n     10|   const res = await fetch(url)\n";
        let parsed = super::super::parse(log, &workspace);
        assert_eq!(
            crate::parse::report_places(&parsed),
            [("src/poller.js", 12, None)],
            "{:#?}",
            parsed.reports
        );
        let named = " FAIL  test/math.test.js > math > divides\nTypeError: Cannot read properties of null (reading 'x')\n ❯ Object.divide src/math.js:4:12\n ❯ test/math.test.js:10:19\n";
        let parsed = super::super::parse(named, &workspace);
        assert_eq!(
            crate::parse::report_places(&parsed),
            [
                ("src/math.js", 4, Some("math divides")),
                ("test/math.test.js", 10, Some("math divides"))
            ],
            "{:#?}",
            parsed.reports
        );
    }

    /// vitest 3.2 on pluralize 8.0.0 (the twenty-fifth outsider trial's, captured by running it):
    /// the source around the library's frame, shown between the `❯` frames, does not end the
    /// stack before the test's own frame.
    #[test]
    fn vitest_s_code_frame_does_not_end_the_stack() {
        let workspace = super::super::Workspace::new("/w")
            .with_files(vec!["lib/pluralize.js".into(), "test/vitest/plural.test.js".into()]);
        let log = r#" FAIL  test/vitest/plural.test.js > counts > prefixes the count when inclusive
TypeError: count.toLocalString is not a function
 ❯ pluralize lib/pluralize.js:179:31
    177|       ? pluralize.singular(word) : pluralize.plural(word);
    178| 
    179|     return (inclusive ? count.toLocalString() + ' ' : '') + pluralized;
       |                               ^
    180|   }
    181| 
 ❯ test/vitest/plural.test.js:16:21
"#;
        let parsed = super::super::parse(log, &workspace);
        let test = Some("counts prefixes the count when inclusive");
        assert_eq!(
            crate::parse::report_places(&parsed),
            [
                ("lib/pluralize.js", 179, test),
                ("test/vitest/plural.test.js", 16, test)
            ],
            "{:#?}",
            parsed.reports
        );
    }

    /// vitest 2 on a file that does not parse: vite's import analysis names the file (at 1:1;
    /// it does not know where) under its error, and only vite's own frames follow.
    #[test]
    fn vite_s_plugin_error_is_reported_at_the_file_it_names() {
        let workspace =
            super::super::Workspace::new("/w").with_files(vec!["colors.js".into(), "test/kleur.test.js".into()]);
        let log = " FAIL  test/kleur.test.js [ test/kleur.test.js ]
Error: Failed to parse source for import analysis because the content contains invalid JS syntax. If you are using JSX, make sure to name the file with the .jsx or .tsx extension.
  Plugin: vite:import-analysis
  File: /w/colors.js:1:1
  1  |  let FORCE_COLOR, NODE_DISABLE_COLORS, NO_COLOR, TERM, isTTY=true;
     |  ^
 ❯ TransformPluginContext._formatError ../../node_modules/vite/dist/node/chunks/dep-BK3b2jBa.js:49258:41
 ❯ loadAndTransform ../../node_modules/vite/dist/node/chunks/dep-BK3b2jBa.js:51978:27

 Test Files  1 failed (1)
";
        let parsed = super::super::parse(log, &workspace);
        assert_eq!(
            crate::parse::report_places(&parsed),
            [("colors.js", 1, None)],
            "{:#?}",
            parsed.reports
        );
        assert_eq!(parsed.reports[0].error_type, crate::api::shared::ErrorType::Syntax);
    }

    /// mocha names the failed test over its title's lines (spec: the suite, nested suites, the
    /// test and a `:`) or on the `not ok` line (tap): the report carries that full title.
    #[test]
    fn a_mocha_failure_is_named_by_its_full_title() {
        let workspace = super::super::Workspace::new("/w").with_files(vec!["functions/valid.js".into()]);
        let spec = "  1 passing (6ms)\n  1 failing\n\n  1) semver\n       functions\n         returns null for an invalid version:\n     TypeError: Cannot read properties of null (reading 'version')\n      at Object.valid (functions/valid.js:4:12)\n      at Context.<anonymous> (test/semver.spec.js:10:31)\n\n";
        let tap = "not ok 1 semver functions returns null for an invalid version\n  Cannot read properties of null (reading 'version')\n  TypeError: Cannot read properties of null (reading 'version')\n      at Object.valid (functions/valid.js:4:12)\n# tests 1\n";
        let name = "semver functions returns null for an invalid version";
        // The spec reporter's stack goes on to the test's line, which called the code.
        let thrown = ("functions/valid.js", 4, Some(name));
        for (log, places) in [
            (spec, vec![thrown, ("test/semver.spec.js", 10, Some(name))]),
            (tap, vec![thrown]),
        ] {
            let parsed = super::super::parse(log, &workspace);
            assert_eq!(crate::parse::report_places(&parsed), places, "{log}");
            assert!(parsed.failing_tests().iter().any(|t| t == name), "{log}");
        }
    }

    /// mocha 10's spec reporter on an error thrown with a `cause` (`new Error(msg, { cause })`,
    /// captured by running it): the wrapper's place, the test's line, and where the cause was
    /// thrown, from its `Caused by:` stack, typed by the cause.
    #[test]
    fn an_error_s_cause_is_placed_where_it_was_thrown() {
        let log = "\
  config
    1) loads config from a query


  0 passing (2ms)
  1 failing

  1) config
       loads config from a query:
     Error: could not load config from query
      at loadConfig (lib/decode.js:9:11)
      at Context.<anonymous> (test/config.test.js:6:28)
      at process.processImmediate (node:internal/timers:483:21)
     Caused by: TypeError: String.prototype.replaceAll called with a non-global RegExp argument
      at String.replaceAll (<anonymous>)
      at decodeValue (lib/decode.js:2:15)
      at Array.map (<anonymous>)
      at /tmp/jc/lib/decode.js:7:78
      at Array.map (<anonymous>)
      at loadConfig (lib/decode.js:7:48)
      at Context.<anonymous> (test/config.test.js:6:28)
      at process.processImmediate (node:internal/timers:483:21)
";
        let ws = super::super::Workspace::new("/tmp/jc")
            .with_files(["lib/decode.js", "test/config.test.js"].map(str::to_owned).to_vec());
        let parsed = super::super::parse(log, &ws);
        assert_eq!(
            super::super::report_kinds(&parsed),
            [
                ("lib/decode.js", 9, ErrorType::Logic),
                ("test/config.test.js", 6, ErrorType::Logic),
                ("lib/decode.js", 2, ErrorType::TypeError)
            ]
        );
        assert!(
            parsed.reports[2]
                .message
                .starts_with("TypeError: String.prototype.replaceAll")
        );
    }

    /// jest 30's timeout (the twenty-seventh outsider trial's, on bottleneck 2.19.5): the error
    /// is thrown in jest-circus, and its `Cause:` names where the test was declared. An error
    /// with no project frame of its own is placed by its cause's frames, as its own: the
    /// test's line, and the call of the file's `describe` further out.
    #[test]
    fn an_error_without_a_project_frame_is_placed_by_its_cause_s() {
        let log = "\
FAIL test/general.js (16.735 s)
  ● General › Should pass multiple arguments back even on errors when using submit()

    thrown: \"Exceeded timeout of 5000 ms for a test while waiting for `done()` to be called.
    Add a timeout value to this test to increase the timeout, if this is a long-running test. See https://jestjs.io/docs/api#testname-fn-timeout.\"

      at _getError (node_modules/jest-circus/build/jestAdapterInit.js:1985:12)
          at Array.map (<anonymous>)

    Cause:
        thrown: \"Exceeded timeout of 5000 ms for a test while waiting for `done()` to be called.
        Add a timeout value to this test to increase the timeout, if this is a long-running test. See https://jestjs.io/docs/api#testname-fn-timeout.\"

          80 |   })
          81 |
        > 82 |   it('Should pass multiple arguments back even on errors when using submit()', function (done) {
             |   ^
          83 |     c = makeTest({ maxConcurrent: 1 })
          84 |
          85 |     c.limiter.submit(c.job, new Error('welp'), 1, 2, function (err, x, y) {

          at test/general.js:82:3
          at Object.<anonymous> (test/general.js:6:1)

";
        let ws = super::super::Workspace::new("/work/heldout29/repos/bottleneck")
            .with_files(["test/general.js", "lib/Bottleneck.js"].map(str::to_owned).to_vec());
        let parsed = super::super::parse(log, &ws);
        assert_eq!(
            super::super::report_confidences(&parsed),
            [("test/general.js", 82, Some(0.9)), ("test/general.js", 6, Some(0.8))]
        );
    }
}
