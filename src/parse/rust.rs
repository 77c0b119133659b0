//! Rust: rustc and clippy diagnostics in the human format (`error[E0308]: ...` then
//! ` --> src/lib.rs:4:5`), `cargo test` outcomes and panics (`assert_eq!` diffs, unwraps), in both
//! the current (`panicked at src/lib.rs:4:5:`) and the older (`panicked at 'msg', src/lib.rs:4:5`)
//! form. The JSON message format is read in `structured`. ruff's full format shares the
//! `-->` shape and is read here too.

use std::borrow::Cow;
use std::sync::LazyLock;

use regex::Regex;

use super::look::Look;
use super::{Finding, Rank, Sink, TEST_FRAME_CONFIDENCE, TestOutcome, has_byte, split_location, split_word};
use crate::api::shared::ErrorType;

static RUFF_HEADER: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^([A-Z]{1,4}\d{2,4}|invalid-syntax)(?: \[\*\])?:? (.+)$").expect("regex"));
static PANIC_NEW: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^thread '([^']*)'(?: \(\d+\))? panicked at ([^:\s]+):(\d+):(\d+):$").expect("regex"));
static PANIC_OLD: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^thread '([^']*)'(?: \(\d+\))? panicked at '(.*)', ([^:\s]+):(\d+):(\d+)$").expect("regex")
});

enum Header {
    Rustc {
        level: String,
        code: Option<String>,
        message: String,
    },
    Ruff {
        code: String,
        message: String,
    },
}

/// A panic's backtrace (`RUST_BACKTRACE=1`), or the lines where one may start. A panic whose own
/// location is not the project's (it panicked inside `core` or a dependency) is placed at the
/// first project frame; the test's own frame, further out, is the call that led there.
struct Backtrace {
    test: String,
    message: String,
    /// Where the panic was placed: its own location, or its first project frame.
    site: Option<(String, u32)>,
    /// The last function line names the test's function (`crate::tests::name`, or its closure).
    in_test_function: bool,
    /// The crate the last function line names (`app` of `app::tests::name`), when it names one.
    frame_crate: Option<String>,
    /// Backtrace lines read so far: a backtrace that never names the project is given up.
    lines: u32,
    /// The folder of the package whose test ran, as the workspace names it (`crates/a/`): the
    /// backtrace prints the files under it relative to it (`./src/lib.rs`), for the test runs
    /// there, and the panic's place relative to the workspace (`crates/a/src/lib.rs`). Told by
    /// `cargo test`'s `Running` line, or learnt from the backtrace: from a frame at the panic's
    /// own place, or from the crate a `./` frame's function names.
    crate_folder: Option<String>,
    /// The panic is a failed assertion (`assert!`, `debug_assert!`, `assert_eq!`) in the code
    /// the test calls, and no caller of it has been read yet: a function that checks what it is
    /// given, so the project's code that called it with what broke the check is a place to look
    /// at too (`set_len(CAP + 1)` fails `set_len`'s `debug_assert!`).
    precondition: bool,
}

/// Most backtrace lines read for a project frame (two per frame; deep recursion aside, the
/// project's frame is near the top).
const MAX_BACKTRACE_LINES: u32 = 400;

/// A doctest whose output follows, from its header in `cargo test`'s failures
/// (`---- src/lib.rs - hamming (line 77) stdout ----`). rustdoc compiles the example into a
/// program of its own, so a panic in the example's code names the source file with the line of
/// that program (`panicked at src/lib.rs:7:1` for an assertion on the example's third line), a
/// small number; a panic in the library's code the example calls names its real line. A line
/// after the example's header is the library's own (the item a doc comment documents follows
/// it); a line before it is taken for the program's, and the example is the place, unless the
/// example is too short to have such a line ([`Rust::is_example_line`]).
/// From the 2024 edition rustdoc merges the doctests into one program in a temporary folder
/// ([`is_merged_doctests`]): a panic there is placed at the example.
struct Doctest {
    /// The doctest's name, as `cargo test` lists it.
    name: String,
    file: String,
    line: u32,
    /// Marked `should_panic`: its program's panic is what it expects.
    should_panic: bool,
}

#[derive(Default)]
pub(crate) struct Rust {
    header: Option<Header>,
    /// A panic waiting for its message on the next line.
    panic: Option<(String, String, u32)>,
    backtrace: Option<Backtrace>,
    doctest: Option<Doctest>,
    /// The test whose output follows (`---- tests::name stdout ----` in `cargo test`'s failures).
    failing_test: Option<String>,
    /// The folder of the Cargo package whose tests run now, with a `/` after it (`crates/app/`),
    /// as `cargo test`'s `Running …` or `Doc-tests …` line tells it, until the binary's `test
    /// result:`: a test runs in its package's folder, and a backtrace prints the files under it
    /// relative to it (`./src/lib.rs`).
    package_folder: Option<String>,
    /// The doctests the current test binary listed (`test src/lib.rs - f (line 77) ... ok`),
    /// until its `test result:`: each example's file and the line it starts at, which bound the
    /// length of the example before it (at most [`MAX_DOCTESTS_LISTED`]).
    doctests: std::collections::BTreeSet<(Box<str>, u32)>,
    /// A doctest program's output began with no doctest named (`Test executable failed` alone
    /// on its line): under `-- --nocapture` with doctests run in parallel, its listing line
    /// (`test src/lib.rs - f (line 3) ... FAILED`) comes after it.
    unlisted_doctest_output: bool,
    /// The panics of such output (or of a merged doctests program with no doctest open), each
    /// the file, line and message, in log order, until a doctest's `FAILED` listing line
    /// places the first: most [`MAX_UNLISTED_PANICS`], until the binary's `test result:`.
    unlisted_panics: std::collections::VecDeque<(String, u32, String)>,
    /// A `#[should_panic]` test running (`test tests::overflows - should panic ... `, its
    /// outcome to come after its output under `-- --nocapture --test-threads=1`): its panic is
    /// expected.
    expected_panic: Option<String>,
    /// proptest's failure, read from its panic (`Test failed: ...`): its message ends with
    /// the place of the assertion that failed (`... at tests/props.rs:11.`), a few lines on,
    /// where the panic names the `proptest!` macro's line.
    proptest: Option<Proptest>,
    /// A rustc error without a code, read at its place and held until its block ends: in the
    /// human format clippy's lints, and rustc's own lints that `-D warnings` or `#[deny]` made
    /// errors, print no code in their header, only a note below it saying they are lints.
    held: Option<HeldError>,
    /// The messages of the held errors whose blocks said they are lints, their quoted names
    /// taken out ([`lint_shape`]): rustc notes a lint's level once, at its first diagnostic, so
    /// the second `unused variable` has no note (clippy's link is on each of its own).
    lint_shapes: std::collections::BTreeSet<String>,
    /// A mismatched-types error's block, read for the declaration that fixed the type it
    /// expected ([`Mismatch`]).
    mismatch: Option<Mismatch>,
}

/// rustc's `error[E0308]: mismatched types` names, besides the value's place, the declaration
/// that made it expect its type, as a secondary label in the source it shows: `` --- expected
/// `u32` because of return type`` under a signature, `` --- expected due to this`` under a
/// binding's annotation. A changed signature breaks every return that no longer matches it: each
/// error's place is a symptom, the declaration is where one fix ends them all.
struct Mismatch {
    /// The file of the source shown now (the error's, or a note's `:::` elsewhere).
    file: String,
    /// The error's message, for the declaration's report.
    message: String,
    /// The line number of the last source line shown: a label's line is the one above it.
    shown: Option<u32>,
    /// Lines read since the error: a block longer than [`MAX_HELD_ERROR_LINES`] has ended unseen.
    lines: u16,
}

/// Most lint messages remembered ([`Rust::lint_shapes`]).
const MAX_LINT_SHAPES: usize = 256;

/// A code-less rustc error waiting for the end of its block ([`Rust::held`]).
struct HeldError {
    file: String,
    line: u32,
    message: String,
    /// Its block said it is a lint.
    lint: bool,
    /// Lines read since: a block longer than [`MAX_HELD_ERROR_LINES`] has ended unseen.
    lines: u16,
}

const MAX_HELD_ERROR_LINES: u16 = 200;

/// A proptest failure waiting for its assertion's place ([`Rust::proptest`]).
struct Proptest {
    test: String,
    message: String,
    /// Lines read since: a message longer than [`PROPTEST_MESSAGE_LINES`] names no place.
    lines: u8,
}

const PROPTEST_MESSAGE_LINES: u8 = 16;

/// Most panics of doctest programs remembered until their listing lines place them.
const MAX_UNLISTED_PANICS: usize = 64;

/// What `cargo test` prints when a doctest's program fails, before the program's output.
const EXECUTABLE_FAILED: &str = "Test executable failed";

/// Most doctests of one crate remembered for where their examples start.
const MAX_DOCTESTS_LISTED: usize = 10_000;

/// A line that is cargo's or libtest's own output and never a panic's message: a coded rustc
/// error, another panic, a test's captured output's header, a test binary's `running N tests`.
fn begins_other_rust_output(line: &str) -> bool {
    line.strip_prefix("error[E")
        .is_some_and(|rest| rest.as_bytes().first().is_some_and(u8::is_ascii_digit))
        || line.starts_with("thread '") && line.contains("' panicked at ")
        || line.starts_with("---- ") && line.ends_with(" stdout ----")
        || line.starts_with("running ") && (line.ends_with(" tests") || line.ends_with(" test"))
}

/// The lines rustdoc puts before a doctest's example in the program it makes of it
/// (`#![allow(unused)]`, `extern crate`, `fn main() {`): a panic in the example's third line is
/// at the program's seventh; a margin over the four seen.
const DOCTEST_PRELUDE_LINES: u32 = 8;

impl Rust {
    /// Whether [`Rust::line`] can do anything with the line: a panic's message or backtrace
    /// takes whatever line comes; otherwise only a diagnostic's header, its ` --> ` location
    /// after a header, a test's outcome or a panic do.
    #[inline]
    pub fn wants(&self, look: &Look<'_>) -> bool {
        let Some(first) = look.first else {
            return false;
        };
        // A diagnostic's header waits for its location on the next line, whatever that line is.
        if self.backtrace.is_some()
            || self.panic.is_some()
            || self.header.is_some()
            || self.proptest.is_some()
            || self.held.is_some()
            || self.mismatch.is_some()
        {
            return true;
        }
        let line = look.line;
        match first {
            b'e' | b'w' => line.starts_with("error") || line.starts_with("warning"),
            b'A'..=b'Z' | b'i' => ruff_code_prefix(line) || line.starts_with(EXECUTABLE_FAILED),
            b't' => line.starts_with("test ") || line.starts_with("thread '"),
            b'-' => line.starts_with("---- "),
            b'n' => line.starts_with(NOT_PANICKED),
            b'u' => line.starts_with(UNFORMATTED),
            b' ' => self.header.is_some() || is_test_binary_start(look),
            _ => false,
        }
    }

    /// A panic's message line has come (`panicked at src/lib.rs:4:5:` then the message): the
    /// panic is reported, or kept until a backtrace or a doctest's name places it. Whether the
    /// line is read on as any other.
    fn panicked(
        &mut self,
        (mut test, mut file, mut n): (String, String, u32),
        message: String,
        line: &str,
        sink: &mut Sink<'_>,
    ) -> bool {
        if self.expected_panic.as_ref() == Some(&test) {
            self.expected_panic = None;
            return false;
        }
        if self.doctest.is_none() && test == "main" && (self.unlisted_doctest_output || is_merged_doctests(&file)) {
            // A doctest's, named by a listing line still to come.
            if self.unlisted_panics.len() < MAX_UNLISTED_PANICS {
                self.unlisted_panics.push_back((file, n, message));
            }
            self.unlisted_doctest_output = false;
            return false;
        }
        if let Some(doctest) = self.doctest.as_ref() {
            if doctest.should_panic {
                return false;
            }
            self.place_in_doctest(doctest, &mut file, &mut n);
            if doctest.file == file {
                test.clone_from(&doctest.name);
            }
        }
        if !sink.is_project_file(&file) {
            record_panicked(sink, &test);
            self.backtrace = Some(Backtrace::new(test, message, None, self.package_folder.clone()));
            return false;
        }
        sink.report(Finding {
            file: &file,
            line: n,
            error_type: ErrorType::Logic,
            message: Cow::Borrowed(&message),
            test: (test != "main").then_some(test.as_str()),
            confidence: 0.95,
            rank: Rank::Error,
            diagnostic: false,
        });
        record_panicked(sink, &test);
        if line.starts_with("Test failed: ") && test != "main" {
            self.proptest = Some(Proptest {
                test: test.clone(),
                message: message.clone(),
                lines: 0,
            });
        }
        // A backtrace may follow, with the test's own frame further out: a place to look at
        // even when the panic's place is past its bound ([`Sink::report_test_line`]).
        if test != "main" && !sink.is_test_file(&file) {
            self.backtrace = Some(Backtrace::new(
                test,
                message,
                Some((file, n)),
                self.package_folder.clone(),
            ));
        }
        true
    }

    pub fn line(&mut self, line: &str, sink: &mut Sink<'_>) {
        // rustc and ruff put a diagnostic's location on the line after its header: after any
        // other line, the header has none (a `-->` further on is another diagnostic's).
        if self.header.is_some() && !is_location(line) {
            self.header = None;
        }
        let Some(&first) = line.as_bytes().first() else {
            return;
        };
        if let Some(held) = self.held.as_mut() {
            held.lines += 1;
            if in_diagnostic_block(line) && held.lines <= MAX_HELD_ERROR_LINES {
                held.lint |= names_a_lint(line);
                return;
            }
            self.report_held(sink);
        }
        if let Some(mismatch) = self.mismatch.as_mut() {
            // Read beside the rest: a block cut short, then another tool's indented lines, loses
            // nothing to it.
            mismatch.lines += 1;
            if in_diagnostic_block(line) && mismatch.lines <= MAX_HELD_ERROR_LINES {
                mismatch.read(line, sink);
            } else {
                self.mismatch = None;
            }
        }
        if let Some(backtrace) = self.backtrace.as_mut() {
            if backtrace.frame(line, sink) {
                self.backtrace = None;
                return;
            }
            backtrace.lines += 1;
            let in_backtrace =
                line.starts_with(' ') && !(self.header.is_some() && is_location(line)) || line == "stack backtrace:";
            if !in_backtrace || backtrace.lines > MAX_BACKTRACE_LINES {
                self.backtrace = None;
            } else {
                return;
            }
        }
        if let Some(proptest) = self.proptest.as_mut() {
            proptest.lines += 1;
            if let Some((file, n)) = proptest_place(line) {
                let proptest = self.proptest.take().expect("a proptest failure");
                sink.report(Finding {
                    file,
                    line: n,
                    error_type: ErrorType::Logic,
                    message: Cow::Owned(proptest.message),
                    test: Some(&proptest.test),
                    confidence: 0.95,
                    rank: Rank::Error,
                    diagnostic: false,
                });
                return;
            }
            if line.trim().is_empty() || proptest.lines > PROPTEST_MESSAGE_LINES {
                self.proptest = None;
            }
        }
        if let Some(panic) = self.panic.take() {
            // A log cut after `panicked at …:`, before its message, and then more of cargo's
            // output: the panic is reported without a message and the line is read as any other.
            let cut = begins_other_rust_output(line);
            let message = if cut {
                "panicked".to_owned()
            } else {
                format!("panicked: {}", line.trim())
            };
            let read_on = self.panicked(panic, message, line, sink);
            if cut {
                // Its backtrace would have come before that output.
                self.backtrace = None;
            }
            // A message that reads as a diagnostic's header may be one (the same cut): it is
            // read as one too, and a backtrace ends at the diagnostic's location.
            if !(read_on || cut || rustc_message(line).is_some() || ruff_code_prefix(line)) {
                return;
            }
        }
        match first {
            b'e' | b'w' if line.starts_with("error") || line.starts_with("warning") => {
                // cargo's word after a test binary that failed, ended by a crash too (no `test
                // result:` then): the next output is not its package's.
                if line.starts_with("error: test failed") {
                    self.package_folder = None;
                    self.doctests.clear();
                }
                if let Some((level, code, message)) = rustc_message(line).filter(|(.., m)| !m.is_empty()) {
                    let message = message.to_owned();
                    // Summaries that point nowhere.
                    if message.starts_with("could not compile")
                        || message.starts_with("aborting due to")
                        || message.contains("warnings emitted")
                        || message.contains("warning emitted")
                        || message.starts_with("build failed")
                    {
                        self.header = None;
                        return;
                    }
                    self.header = Some(Header::Rustc {
                        level: level.to_owned(),
                        code: code.map(str::to_owned),
                        message,
                    });
                }
            }
            b'A'..=b'Z' | b'i' if ruff_code_prefix(line) => {
                if let Some((code, message)) = ruff_header(line) {
                    self.header = Some(Header::Ruff {
                        code: code.to_owned(),
                        message: message.to_owned(),
                    });
                }
            }
            b' ' => {
                let trimmed = line.trim_start();
                if let Some(running) = trimmed.strip_prefix("Running ") {
                    self.package_folder = test_binary_folder(running, sink.workspace);
                } else if let Some(name) = trimmed.strip_prefix("Doc-tests ") {
                    self.package_folder = sink.workspace.crate_folder(name.trim_end());
                }
                if let Some(location) = trimmed.strip_prefix("--> ").or_else(|| trimmed.strip_prefix("::: "))
                    && let (Some(header), Some((file, n, _))) = (self.header.take(), split_location(location))
                {
                    if let Header::Rustc {
                        level,
                        code: None,
                        message,
                    } = &header
                        && level == "error"
                        && rustc_type(level, None, message).0 == ErrorType::TypeError
                    {
                        self.report_held(sink);
                        self.held = Some(HeldError {
                            file: file.to_owned(),
                            line: n,
                            message: message.clone(),
                            lint: false,
                            lines: 0,
                        });
                    } else {
                        emit_header(&header, file, n, sink);
                        if let Header::Rustc {
                            code: Some(code),
                            message,
                            ..
                        } = header
                            && code == "E0308"
                        {
                            self.mismatch = Some(Mismatch {
                                file: file.to_owned(),
                                message: format!("error[{code}]: {message}"),
                                shown: None,
                                lines: 0,
                            });
                        }
                    }
                }
            }
            b'-' => {
                self.doctest = doctest_header(line);
                self.failing_test = line
                    .strip_prefix("---- ")
                    .and_then(|l| l.strip_suffix(" stdout ----"))
                    .map(str::to_owned);
            }
            // `ruff format --check` (0.9 on): a file it would reformat, its first change's place
            // on the next line.
            b'u' if line.starts_with(UNFORMATTED) => {
                self.header = Some(Header::Ruff {
                    code: "unformatted".to_owned(),
                    message: line[UNFORMATTED.len()..].trim().to_owned(),
                });
            }
            // A `#[should_panic]` test that returned: where it is defined is what failed.
            b'n' if line.starts_with(NOT_PANICKED) => {
                if let Some((file, n, _)) = split_location(&line[NOT_PANICKED.len()..]) {
                    let test = self.failing_test.as_deref();
                    sink.report(Finding {
                        file,
                        line: n,
                        error_type: ErrorType::Logic,
                        message: Cow::Borrowed("test did not panic as expected"),
                        test,
                        confidence: 0.9,
                        rank: Rank::Error,
                        diagnostic: false,
                    });
                    if let Some(test) = test {
                        sink.test(test, TestOutcome::Failed);
                    }
                }
            }
            // A test binary's summary ends its failures: a panic after it is not the doctest's.
            b't' if line.starts_with("test result: ") => {
                self.doctest = None;
                self.failing_test = None;
                // The binary's output ends: the next tool's backtraces are not its package's, nor
                // its doctests another binary's.
                self.package_folder = None;
                self.doctests.clear();
                self.unlisted_panics.clear();
                self.unlisted_doctest_output = false;
            }
            b'T' if line.starts_with(EXECUTABLE_FAILED) => {
                self.unlisted_doctest_output = self.doctest.is_none();
            }
            b't' if line.starts_with("test ") => {
                self.expected_panic = should_panic_line(line)
                    .filter(|(_, word)| word.is_empty())
                    .map(|(name, _)| name.to_owned());
                let listed = test_line(line).or_else(|| {
                    let (name, word, (file, n)) = doctest_line(line)?;
                    if self.doctests.len() < MAX_DOCTESTS_LISTED {
                        self.doctests.insert((file.into(), n));
                    }
                    Some((name, word))
                });
                if let Some((name, word)) = listed {
                    if !self.unlisted_panics.is_empty()
                        && let Some(doctest) = Doctest::named(name)
                    {
                        if word == "FAILED" {
                            self.place_unlisted_panic(&doctest, sink);
                        } else if doctest.should_panic {
                            // Its program's panic was expected.
                            self.unlisted_panics.pop_front();
                        }
                    }
                    let outcome = match word {
                        "ok" => TestOutcome::Passed,
                        "FAILED" => TestOutcome::Failed,
                        _ => TestOutcome::Skipped,
                    };
                    sink.test(name, outcome);
                } else if let Some((name, "ok")) = should_panic_line(line) {
                    // Its panic was printed before (`-- --nocapture`): it was expected.
                    sink.withdraw_test(name);
                } else if let Some(doctest) = failed_doctest_line(line) {
                    // `-- --nocapture`: the doctest's output follows its listing line, with no
                    // `---- name stdout ----` header; the listing line opens it instead. A
                    // `should_panic` doctest's program fails as it should: `ok` follows.
                    if !doctest.should_panic {
                        sink.test(&doctest.name, TestOutcome::Failed);
                        self.failing_test = Some(doctest.name.clone());
                    }
                    self.doctest = Some(doctest);
                }
            }
            b't' if line.starts_with("thread '") => {
                if let Some(c) = PANIC_NEW.captures(line) {
                    // Windows prints the place with backslashes; the backtrace's frames are
                    // compared with it.
                    let file = c[2].replace('\\', "/");
                    self.panic = Some((c[1].to_owned(), file, c[3].parse().unwrap_or(1)));
                } else if let Some(c) = PANIC_OLD.captures(line) {
                    let test = c[1].to_owned();
                    sink.report(Finding {
                        file: &c[3],
                        line: c[4].parse().unwrap_or(1),
                        error_type: ErrorType::Logic,
                        message: Cow::Owned(format!("panicked: {}", &c[2])),
                        test: (test != "main").then_some(test.as_str()),
                        confidence: 0.95,
                        rank: Rank::Error,
                        diagnostic: false,
                    });
                    record_panicked(sink, &test);
                }
            }
            _ => {}
        }
    }

    pub fn finish(&mut self, sink: &mut Sink<'_>) {
        self.report_held(sink);
    }

    /// Reports the held code-less error: a lint when its block said so, else a type error as
    /// [`rustc_type`] calls a code-less error that is no syntax error.
    fn report_held(&mut self, sink: &mut Sink<'_>) {
        let Some(held) = self.held.take() else {
            return;
        };
        let shape = lint_shape(&held.message);
        let lint = held.lint || self.lint_shapes.contains(&shape);
        if held.lint && self.lint_shapes.len() < MAX_LINT_SHAPES {
            self.lint_shapes.insert(shape);
        }
        let error_type = if lint { ErrorType::Linting } else { ErrorType::TypeError };
        sink.report(Finding {
            file: &held.file,
            line: held.line,
            error_type,
            message: Cow::Owned(format!("error: {}", held.message)),
            test: None,
            confidence: 0.95,
            rank: Rank::of(error_type),
            diagnostic: true,
        });
    }

    /// Moves a panic's place (`file:n`, as its program printed it) to where it is in the
    /// doctest's file: a line of the program rustdoc made of the example is the example's
    /// place; a line after the example's header is the library's own. The 2024 edition's merged
    /// doctests' program says nothing of the example's line, which is the place.
    fn place_in_doctest(&self, doctest: &Doctest, file: &mut String, n: &mut u32) {
        if doctest.file == *file {
            if *n >= doctest.line || self.is_example_line(doctest, *n) {
                *n = (*n).max(doctest.line);
            }
        } else if is_merged_doctests(file) {
            file.clone_from(&doctest.file);
            *n = doctest.line;
        }
    }

    /// A doctest listed as failed after its program's output (`-- --nocapture`, in parallel):
    /// the first panic that output held is placed in it.
    fn place_unlisted_panic(&mut self, doctest: &Doctest, sink: &mut Sink<'_>) {
        let Some((mut file, mut n, message)) = self.unlisted_panics.pop_front() else {
            return;
        };
        self.place_in_doctest(doctest, &mut file, &mut n);
        if sink.is_project_file(&file) {
            sink.report(Finding {
                file: &file,
                line: n,
                error_type: ErrorType::Logic,
                message: Cow::Owned(message),
                test: Some(&doctest.name),
                confidence: 0.9,
                rank: Rank::Error,
                diagnostic: false,
            });
        }
    }

    /// Whether a panic at line `n` of the doctest's file, before its example, can be a line of the
    /// program rustdoc made of the example (which it names after the file): not when the example
    /// is shorter than that, as the next example listed in the file shows (it ends before it);
    /// then the line is the library's own, code the example called. Without a next example
    /// listed (`-q` lists none), it can.
    fn is_example_line(&self, doctest: &Doctest, n: u32) -> bool {
        let after: (Box<str>, u32) = (doctest.file.as_str().into(), doctest.line.saturating_add(1));
        let next = self
            .doctests
            .range(after..)
            .next()
            .filter(|(file, _)| **file == *doctest.file)
            .map(|&(_, line)| line);
        next.is_none_or(|next| n <= (next - doctest.line).saturating_add(DOCTEST_PRELUDE_LINES))
    }
}

/// ruff's header of a file `ruff format --check` would reformat.
const UNFORMATTED: &str = "unformatted: ";

/// A diagnostic's location line, ` --> src/main.rs:4:18` (or ` ::: ` for a note's elsewhere).
fn is_location(line: &str) -> bool {
    line.starts_with(' ') && {
        let trimmed = line.trim_start();
        trimmed.starts_with("--> ") || trimmed.starts_with("::: ")
    }
}

/// Whether a line goes on with a rustc diagnostic's block: its source lines (indented, or a
/// two-digit line number's gutter, `59 |`), notes, helps and suggestions. A blank line, which
/// ends the block, never reaches a format; the next header or any other text does.
fn in_diagnostic_block(line: &str) -> bool {
    match line.as_bytes().first() {
        Some(b' ' | b'0'..=b'9' | b'|' | b'=') => true,
        Some(b'.') => line.starts_with("..."),
        Some(b'h' | b'n') => line.starts_with("help: ") || line.starts_with("note: "),
        _ => false,
    }
}

impl Mismatch {
    /// A line of the error's block: a source line (`199 | pub fn f() -> u32 {`), a label under
    /// it, or a note's place in another file.
    fn read(&mut self, line: &str, sink: &mut Sink<'_>) {
        let trimmed = line.trim_start();
        if let Some(location) = trimmed.strip_prefix("::: ").or_else(|| trimmed.strip_prefix("--> "))
            && let Some((file, ..)) = split_location(location)
        {
            file.clone_into(&mut self.file);
            return;
        }
        let Some((gutter, text)) = trimmed.split_once('|') else {
            return;
        };
        let gutter = gutter.trim_end();
        if !gutter.is_empty() {
            self.shown = gutter.parse().ok();
            return;
        }
        // A secondary label: `-` marks under the source, then its text.
        let label = text.trim_start();
        let Some(label) = label.strip_prefix('-').map(|l| l.trim_start_matches('-').trim_start()) else {
            return;
        };
        if let Some(n) = self.shown
            && names_the_expected_type(label)
        {
            report_expected_type(&self.file, n, &self.message, label, sink);
        }
    }
}

/// Whether a secondary label of E0308 marks the declaration that made rustc expect its type
/// ([`Mismatch`]); cargo's JSON carries the same labels in its spans.
pub(crate) fn names_the_expected_type(label: &str) -> bool {
    label.ends_with("because of return type") || label == "expected due to this"
}

/// The declaration a mismatched-types error's label names, at 0.7 beside the error's own place:
/// a symptom's place comes first, the one fix for many symptoms next.
pub(crate) fn report_expected_type(file: &str, line: u32, error: &str, label: &str, sink: &mut Sink<'_>) {
    if !sink.is_project_file(file) {
        return;
    }
    sink.report(Finding {
        file,
        line,
        error_type: ErrorType::TypeError,
        message: Cow::Owned(format!("{error}: {label}")),
        test: None,
        confidence: 0.7,
        rank: Rank::Error,
        diagnostic: true,
    });
}

/// Whether a line of a diagnostic's block says the diagnostic is a lint: a lint level's note
/// (`` = note: `-D clippy::write-literal` implied by `-D warnings` ``, `` `#[deny(unused_variables)]`
/// implied by `#[deny(warnings)]` ``, `note: the lint level is defined here`) or clippy's link to
/// the lint's page.
fn names_a_lint(line: &str) -> bool {
    let trimmed = line.trim_start();
    let note = trimmed.strip_prefix("= ").unwrap_or(trimmed);
    note.starts_with("note: the lint level is defined here")
        || (note.starts_with("note: `") && (note.contains("implied by `") || note.contains(")]` on by default")))
        || (note.starts_with("help: for further information visit ") && note.contains("rust-clippy"))
}

/// A diagnostic's message with each `quoted` name in it taken out: `` unused variable: `a` ``
/// and `` unused variable: `b` `` are one lint's.
fn lint_shape(message: &str) -> String {
    let mut shape = String::with_capacity(message.len());
    for (i, part) in message.split('`').enumerate() {
        // The even parts are outside the quotes.
        if i % 2 == 0 {
            shape.push_str(part);
        }
        shape.push('`');
    }
    shape
}

/// libtest's note on a `#[should_panic]` test that returned, before the test's place.
const NOT_PANICKED: &str = "note: test did not panic as expected at ";

/// A test that panicked failed; `main` is a program's own thread (`cargo run`, a build script),
/// not a test's (libtest names each test's thread after it).
fn record_panicked(sink: &mut Sink<'_>, test: &str) {
    if test != "main" {
        sink.test(test, TestOutcome::Failed);
    }
}

fn report_panic(
    sink: &mut Sink<'_>,
    file: &str,
    line: u32,
    test: &str,
    message: &str,
    confidence: f64,
) -> Option<usize> {
    sink.report(Finding {
        file,
        line,
        error_type: ErrorType::Logic,
        message: Cow::Borrowed(message),
        test: (test != "main").then_some(test),
        confidence,
        rank: Rank::Error,
        diagnostic: false,
    })
}

impl Backtrace {
    fn new(test: String, message: String, site: Option<(String, u32)>, crate_folder: Option<String>) -> Self {
        Backtrace {
            precondition: site.is_some() && message.trim_start_matches("panicked: ").starts_with("assertion"),
            test,
            message,
            site,
            in_test_function: false,
            frame_crate: None,
            lines: 0,
            crate_folder,
        }
    }

    /// Reads a backtrace's line: a function (`  7: crate::tests::name`) or its place (`      at
    /// ./src/lib.rs:18:5`). The first project place is the panic's when its own was not; when
    /// that is in the code the test calls, a place in the test's function or in a test file,
    /// another than the panic's, is the test's frame. Returns whether the backtrace has nothing
    /// more to give.
    fn frame(&mut self, line: &str, sink: &mut Sink<'_>) -> bool {
        let trimmed = line.trim_start();
        if !line.starts_with("  ") {
            return false;
        }
        let Some(at) = trimmed.strip_prefix("at ") else {
            if let Some((index, function)) = trimmed.split_once(": ")
                && index.bytes().all(|b| b.is_ascii_digit())
            {
                // `RUST_BACKTRACE=full` puts the address first and the symbol's hash last:
                // `0x55d5… - crate::tests::name::h39af38831619e1d4`.
                let function = match function.trim_start().strip_prefix("0x") {
                    Some(address) => {
                        let name = address.split_once(" - ").map_or(function, |(_, name)| name).trim_end();
                        match name.rsplit_once("::h") {
                            Some((head, hash)) if hash.len() == 16 && hash.bytes().all(|b| b.is_ascii_hexdigit()) => {
                                head
                            }
                            _ => name,
                        }
                    }
                    None => function,
                };
                self.in_test_function = names_test_function(function, &self.test);
                self.frame_crate = function_crate(function).map(str::to_owned);
            }
            return false;
        };
        let Some((printed, n, _)) = split_location(at) else {
            return false;
        };
        // Windows prints the package's files as `.\src\lib.rs`.
        let printed = match printed.strip_prefix(".\\") {
            Some(in_package) => Cow::Owned(format!("./{}", in_package.replace('\\', "/"))),
            None => Cow::Borrowed(printed),
        };
        let printed = printed.as_ref();
        if let (Some(in_package), Some(name)) = (printed.strip_prefix("./"), &self.frame_crate)
            && let Some(folder) = sink
                .workspace
                .crate_folder(name)
                .filter(|folder| sink.workspace.holds(&format!("{folder}{in_package}")))
        {
            // The package of the crate the frame's function names, when the file is there: the
            // surest word on where `./` is (a folder told before may be a crashed binary's).
            self.crate_folder = Some(folder);
        }
        let file = match (printed.strip_prefix("./"), &self.crate_folder) {
            (Some(in_crate), Some(folder)) => Cow::Owned(format!("{folder}{in_crate}")),
            _ => Cow::Borrowed(printed),
        };
        let file = file.as_ref();
        if !sink.is_project_file(file) {
            return false;
        }
        let Some(site) = &self.site else {
            report_panic(sink, file, n, &self.test, &self.message, 0.9);
            self.site = Some((file.to_owned(), n));
            // Raised in the test itself: it has no other frame to give.
            return self.test == "main" || self.in_test_function || sink.is_test_file(file);
        };
        // One place printed two ways (`crates/fnv/lib.rs` by the panic, `./lib.rs` by the
        // backtrace, relative to the crate) is one, and tells the crate's folder.
        let (by_panic, in_crate) = (site.0.trim_start_matches("./"), file.trim_start_matches("./"));
        let folder = by_panic
            .strip_suffix(in_crate)
            .filter(|folder| folder.ends_with('/') && file.starts_with("./") && !by_panic.starts_with('/'));
        let same_file = sink.relative(&site.0) == sink.relative(file) || folder.is_some();
        if let Some(folder) = folder.filter(|_| site.1 == n && self.crate_folder.is_none()) {
            self.crate_folder = Some(folder.to_owned());
        }
        let elsewhere = site.1 != n || !same_file;
        if (self.in_test_function || sink.is_test_file(file)) && elsewhere {
            let test = (self.test != "main").then_some(self.test.as_str());
            let called = Finding {
                file,
                line: n,
                error_type: ErrorType::Logic,
                message: Cow::Borrowed(&self.message),
                test,
                confidence: TEST_FRAME_CONFIDENCE,
                rank: Rank::Error,
                diagnostic: false,
            };
            sink.report_test_line(&site.0, site.1, called);
            return true;
        }
        if self.precondition && elsewhere && !self.in_test_function {
            self.precondition = false;
            let message = format!("{} (the call that broke the check)", self.message);
            report_panic(sink, file, n, &self.test, &message, 0.7);
        }
        self.in_test_function
    }
}

/// Whether a backtrace's function (`crate::tests::name`, its closure `name::{{closure}}` or
/// `name::{closure#0}`; not `<F as FnOnce>::call_once`) is the test `test`'s (`tests::name`).
fn names_test_function(function: &str, test: &str) -> bool {
    let function = function.trim_end();
    let function = match function.rfind("::{") {
        Some(at) if function.ends_with('}') => &function[..at],
        _ => function,
    };
    let test = test.rsplit("::").next().unwrap_or(test);
    function == test || function.strip_suffix(test).is_some_and(|head| head.ends_with("::"))
}

/// Whether the line is `cargo test`'s start of a test binary's output: `     Running …` or
/// `   Doc-tests …` (pip's `  Downloading …` is not).
#[inline]
fn is_test_binary_start(look: &Look<'_>) -> bool {
    match look.first_after_indent() {
        Some(b'R') => look.trimmed().starts_with("Running "),
        Some(b'D') => look.trimmed().starts_with("Doc-tests "),
        _ => false,
    }
}

/// The crate a backtrace's function belongs to (`app` of `app::tests::name`); `None` for a
/// trait method's frame (`<T as Trait>::f`), whose first name may be another crate's type.
fn function_crate(function: &str) -> Option<&str> {
    let (name, _) = function.trim().split_once("::")?;
    // v0 mangling names the crate with its hash: `app[1a2b3c4d5e6f7a8b]::tests::name`.
    let name = name
        .split_once('[')
        .map_or(name, |(name, hash)| if hash.ends_with(']') { name } else { "" });
    (!name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')).then_some(name)
}

/// The folder of the package whose test binary `cargo test` runs, from its line
/// `Running unittests src/lib.rs (target/debug/deps/app-80e3f2a1a73ba447)` (a library's or a
/// binary's unit tests: the binary is named after the crate) or `Running tests/api.rs
/// (target/debug/deps/api-d08343c65e1bc8ea)` (an integration test: the file is in the package's
/// folder), the part after `Running `. `None` when the workspace does not tell it.
fn test_binary_folder(running: &str, workspace: &super::Workspace) -> Option<String> {
    let running = running.trim_end();
    let (source, binary) = match running.strip_suffix(')').and_then(|r| r.rsplit_once(" (")) {
        Some((source, binary)) => (Some(source), binary),
        // cargo before 1.52: `Running target/debug/deps/app-80e3f2a1a73ba447`.
        None => (None, running),
    };
    // cargo on Windows prints `src\lib.rs`.
    let source = source.map(|s| s.replace('\\', "/"));
    let source = source.as_deref();
    let unit_source = source.map(|s| s.strip_prefix("unittests ").unwrap_or(s));
    let unit_tests = source.is_none_or(|s| s.starts_with("unittests "));
    let binary = binary.rsplit(['/', '\\']).next()?;
    let binary = binary.strip_suffix(".exe").unwrap_or(binary);
    let by_crate = binary
        .rsplit_once('-')
        .filter(|(_, hash)| hash.len() == 16 && hash.bytes().all(|b| b.is_ascii_hexdigit()))
        .filter(|_| unit_tests)
        .and_then(|(name, _)| workspace.crate_folder(name))
        .filter(|folder| unit_source.is_none_or(|s| workspace.holds(&format!("{folder}{s}"))));
    by_crate.or_else(|| workspace.cargo_package_holding(unit_source?))
}

/// `test tests::name ... ok`: the test's name and its outcome word, as
/// `^test (\S+) \.\.\. (ok|FAILED|ignored)` reads them, without a regex (a long `cargo test` log
/// is mostly such lines).
pub(crate) fn test_line(line: &str) -> Option<(&str, &str)> {
    let (name, rest) = split_word(line.strip_prefix("test ")?);
    let rest = rest.strip_prefix(" ... ")?;
    let word = outcome_word(rest)?;
    (!name.is_empty()).then_some((name, word))
}

/// A doctest's outcome, `test src/lib.rs - hamming (line 77) ... ok` (its name holds spaces,
/// and may end in a mode: `- compile fail`, `- should panic`): the name, the outcome word, and
/// the file and line the example starts at.
fn doctest_line(line: &str) -> Option<(&str, &str, (&str, u32))> {
    let (name, rest) = listing(line)?;
    let place = doctest_name(name)?;
    Some((name, outcome_word(rest)?, place))
}

/// A listing line, `test NAME ... REST`, split at its first ` ... ` (a doctest's name holds
/// spaces): the name and what follows.
fn listing(line: &str) -> Option<(&str, &str)> {
    let body = line.strip_prefix("test ")?;
    let end = super::find_short(body, " ... ")?;
    Some((&body[..end], &body[end + " ... ".len()..]))
}

/// The place at the end of proptest's failure message, `... right: `"AAa"` at tests/props.rs:11.`.
fn proptest_place(line: &str) -> Option<(&str, u32)> {
    let (_, place) = line.trim_end().strip_suffix('.')?.rsplit_once(" at ")?;
    let (file, n, rest) = split_location(place)?;
    (rest.is_empty() && file.ends_with(".rs")).then_some((file, n))
}

/// A `#[should_panic]` test's listing line, `test tests::overflows - should panic ... ok`: its
/// name and its outcome word, empty while its output follows (one thread, `-- --nocapture`:
/// the outcome comes after the output); `--report-time` adds ` <0.001s>` after it.
fn should_panic_line(line: &str) -> Option<(&str, &str)> {
    let (name, rest) = split_word(line.strip_prefix("test ")?);
    let outcome = rest.strip_prefix(" - should panic ...")?.trim();
    let word = outcome.split(' ').next().unwrap_or("");
    (!name.is_empty()).then_some((name, word))
}

/// A doctest's listing line under `cargo test -- --nocapture`, whose program's output follows
/// it: `test src/lib.rs - f (line 7) ... Test executable failed (exit status: 101).`
fn failed_doctest_line(line: &str) -> Option<Doctest> {
    let (name, rest) = listing(line)?;
    rest.starts_with(EXECUTABLE_FAILED)
        .then(|| Doctest::named(name))
        .flatten()
}

/// The outcome word `cargo test` prints after a test's name and ` ... `.
fn outcome_word(rest: &str) -> Option<&'static str> {
    ["ok", "FAILED", "ignored"].into_iter().find(|w| rest.starts_with(w))
}

/// The file and the line of a doctest's name, `src/lib.rs - hamming (line 77)` (`fnv/lib.rs -
/// (line 51)` for a crate's own documentation, `... (line 5) - compile fail` with a mode).
fn doctest_name(name: &str) -> Option<(&str, u32)> {
    let (file, item) = name.split_once(" - ")?;
    let (_, after) = item.rsplit_once("(line ")?;
    let (n, mode) = after.split_once(')')?;
    if !(mode.is_empty() || mode.starts_with(" - ")) {
        return None;
    }
    if file.is_empty() || has_byte(file, b' ') || !n.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some((file, n.parse().ok()?))
}

/// Whether a panic's file is the program rustdoc merges a crate's doctests into (edition 2024 on:
/// `/tmp/rustdoctestHDSIKl/doctest_bundle_2024.rs`), written to a temporary folder and gone when
/// the log is read.
fn is_merged_doctests(file: &str) -> bool {
    let name = file.rsplit(['/', '\\']).next().unwrap_or(file);
    name.starts_with("doctest_bundle_") && name.ends_with(".rs")
}

/// The doctest a `---- name stdout ----` header of `cargo test`'s failures opens, if it is one.
fn doctest_header(line: &str) -> Option<Doctest> {
    Doctest::named(line.strip_prefix("---- ")?.strip_suffix(" stdout ----")?)
}

impl Doctest {
    /// The doctest `cargo test` names `name` (`src/lib.rs - hamming (line 77)`), if it is one.
    fn named(name: &str) -> Option<Doctest> {
        let (file, line) = doctest_name(name)?;
        Some(Doctest {
            name: name.to_owned(),
            file: file.to_owned(),
            line,
            should_panic: name.ends_with(" - should panic"),
        })
    }
}

/// rustc's message, `error[E0308]: msg` or `warning: msg` (a header, or what follows the place
/// in `--message-format=short`): its level, code and message, as
/// `^(error|warning)(?:\[([A-Za-z0-9_:]+)\])?: (.*)$` reads it, without a regex (a capture cost
/// thousands of instructions a line).
pub(crate) fn rustc_message(text: &str) -> Option<(&str, Option<&str>, &str)> {
    let level = ["error", "warning"].into_iter().find(|l| text.starts_with(l))?;
    let after = &text[level.len()..];
    let (code, after) = match after.strip_prefix('[') {
        Some(rest) => {
            let len = rest
                .bytes()
                .take_while(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b':'))
                .count();
            if len == 0 {
                return None;
            }
            (Some(&rest[..len]), rest[len..].strip_prefix(']')?)
        }
        None => (None, after),
    };
    let message = after.strip_prefix(": ")?;
    (!message.contains('\n')).then_some((level, code, message))
}

/// A ruff or flake8 code at the start of `text` and what follows it: `invalid-syntax`, or one to
/// four capital letters and two to four digits, as `[A-Z]{1,4}[0-9]{2,4}` takes them before a
/// byte that is neither (the letters and the digits are whole runs: a shorter code would be
/// followed by a letter or a digit, which no format allows).
pub(crate) fn split_lint_code(text: &str) -> Option<(&str, &str)> {
    if text.starts_with("invalid-syntax") {
        return Some(text.split_at("invalid-syntax".len()));
    }
    let b = text.as_bytes();
    let letters = b.iter().take_while(|c| c.is_ascii_uppercase()).count();
    let digits = b[letters..].iter().take_while(|c| c.is_ascii_digit()).count();
    ((1..=4).contains(&letters) && (2..=4).contains(&digits)).then(|| text.split_at(letters + digits))
}

/// ruff's `full` header, `F401 [*] msg` or `E501: msg`: its code and message, as [`RUFF_HEADER`]
/// reads them, without running the regex on ASCII text.
fn ruff_header(line: &str) -> Option<(&str, &str)> {
    if !line.is_ascii() {
        let c = RUFF_HEADER.captures(line)?;
        return Some((c.get(1)?.as_str(), c.get(2)?.as_str()));
    }
    let (code, after) = split_lint_code(line)?;
    // `:? (.+)`, after ` [*]` when that leaves a message, else right after the code.
    fn message(after: &str) -> Option<&str> {
        let after = after.strip_prefix(':').unwrap_or(after);
        after.strip_prefix(' ').filter(|m| !m.is_empty() && !m.contains('\n'))
    }
    let message = after
        .strip_prefix(" [*]")
        .and_then(message)
        .or_else(|| message(after))?;
    Some((code, message))
}

/// `F401 `, `I001 `, `invalid-syntax:`: the start of a ruff diagnostic, checked without a regex.
fn ruff_code_prefix(line: &str) -> bool {
    let b = line.as_bytes();
    let letters = b.iter().take_while(|c| c.is_ascii_uppercase()).count();
    (1..=4).contains(&letters) && b.get(letters).is_some_and(u8::is_ascii_digit) || line.starts_with("invalid-syntax")
}

fn emit_header(header: &Header, file: &str, line: u32, sink: &mut Sink<'_>) {
    match header {
        Header::Rustc { level, code, message } => {
            let (error_type, rank) = rustc_type(level, code.as_deref(), message);
            let message = match code {
                Some(code) => format!("{level}[{code}]: {message}"),
                None => format!("{level}: {message}"),
            };
            sink.report(Finding {
                file,
                line,
                error_type,
                message: Cow::Owned(message),
                test: None,
                confidence: 0.95,
                rank,
                diagnostic: true,
            });
        }
        Header::Ruff { code, message } => {
            let error_type = lint_finding_type(code, message);
            sink.report(Finding {
                file,
                line,
                error_type,
                message: Cow::Owned(format!("{code} {message}")),
                test: None,
                confidence: 0.95,
                rank: Rank::of(error_type),
                diagnostic: true,
            });
        }
    }
}

/// The bug type of a rustc or clippy diagnostic.
pub(crate) fn rustc_type(level: &str, code: Option<&str>, message: &str) -> (ErrorType, Rank) {
    if level == "warning" {
        return (ErrorType::Linting, Rank::Warning);
    }
    let error_type = match code {
        Some("E0432" | "E0433" | "E0412" | "E0425" | "E0422" | "E0423" | "E0583" | "E0463" | "E0405" | "E0531") => {
            ErrorType::Import
        }
        // Not an `E0308` but a lint's name (`clippy::write_literal`, `unused_variables` in
        // cargo's JSON): a lint `-D warnings` or `#[deny]` made an error.
        Some(c) if !is_error_code(c) => ErrorType::Linting,
        Some(_) => ErrorType::TypeError,
        None if message.starts_with("expected ")
            || message.starts_with("unexpected ")
            || message.contains("unclosed delimiter")
            || message.contains("mismatched closing delimiter")
            || message.contains("unterminated")
            || message.starts_with("this file contains an unclosed") =>
        {
            ErrorType::Syntax
        }
        None => ErrorType::TypeError,
    };
    (error_type, Rank::Error)
}

/// Whether a diagnostic's code is one of rustc's error codes (`E0308`), not a lint's name.
fn is_error_code(code: &str) -> bool {
    code.strip_prefix('E')
        .is_some_and(|digits| !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()))
}

/// The bug type of a linter's finding by its code or rule: ruff, flake8 and pylint report parse
/// failures through the linter, which are SYNTAX or INDENTATION; a name or module that does not
/// resolve ([`is_unresolved_rule`]) is IMPORT; everything else is LINTING.
pub(crate) fn lint_finding_type(code: &str, message: &str) -> ErrorType {
    if is_unresolved_rule(code) {
        return ErrorType::Import;
    }
    // pycodestyle's (and ruff's) `E112 expected an indented block` and `E113 unexpected
    // indentation`: what Python's compiler stops on as an IndentationError, not a style.
    if matches!(code, "E112" | "E113") {
        return ErrorType::Indentation;
    }
    let m = message.to_ascii_lowercase();
    let syntax_code =
        matches!(code, "invalid-syntax" | "E999" | "E0001" | "E901" | "E902") || code.starts_with("syntax");
    if !syntax_code && !m.starts_with("syntaxerror") && !m.starts_with("parsing failed") {
        return ErrorType::Linting;
    }
    if m.contains("indent") || m.contains("taberror") || m.contains("inconsistent use of tabs") {
        ErrorType::Indentation
    } else {
        ErrorType::Syntax
    }
}

/// Linters' codes and rules for a name used but never defined or imported, or a module that
/// cannot be found: they do not resolve, as Python's NameError and ImportError, Node's
/// ReferenceError, tsc's TS2304 and TS2307, rustc's E0425 and Go's `undefined:` say, so they are
/// IMPORT whichever tool reports them. pyflakes' F821 (ruff's and flake8's); eslint's `no-undef`
/// and the import plugins' unresolved modules (eslint-plugin-import, its fork import-x, and
/// eslint-plugin-n); Biome's `noUndeclaredVariables` and `noUnresolvedImports` (the rules' names
/// whose category [`is_unresolved_rule`] takes off).
const UNRESOLVED_RULES: &[&str] = &[
    "F821",
    "no-undef",
    "import/no-unresolved",
    "import-x/no-unresolved",
    "n/no-missing-import",
    "n/no-missing-require",
    "node/no-missing-import",
    "node/no-missing-require",
    "noUndeclaredVariables",
    "noUnresolvedImports",
];

/// Whether a linter's code or rule is one of [`UNRESOLVED_RULES`]; Biome's comes with its
/// category (`lint/correctness/noUndeclaredVariables`), oxlint's as `plugin(rule)`.
pub(crate) fn is_unresolved_rule(code: &str) -> bool {
    // oxlint's `eslint(no-undef)`, `import(no-unresolved)`.
    if let Some((plugin, rule)) = code.strip_suffix(')').and_then(|c| c.split_once('(')) {
        return is_unresolved_rule(&super::oxlint::oxlint_rule(plugin, rule));
    }
    let rule = code
        .strip_prefix("lint/")
        .map_or(code, |r| r.rsplit('/').next().unwrap_or(r));
    UNRESOLVED_RULES.contains(&rule)
}

#[cfg(test)]
mod tests {
    use super::super::{TestOutcome, Workspace, parse};
    use super::*;
    use proptest::prelude::*;

    /// What [`rustc_message`] reads, as a regex.
    static RUSTC_MESSAGE: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"^(error|warning)(?:\[([A-Za-z0-9_:]+)\])?: (.*)$").expect("regex"));

    fn pieces() -> impl Strategy<Value = String> {
        prop::collection::vec(
            prop_oneof![
                Just("error"),
                Just("warning"),
                Just("["),
                Just("]"),
                Just("E0308"),
                Just("clippy::x"),
                Just("_"),
                Just(":"),
                Just(": "),
                Just(" "),
                Just("F401"),
                Just("ABCDE"),
                Just("12345"),
                Just("invalid-syntax"),
                Just(" [*]"),
                Just("[*]"),
                Just("\u{663}"),
                Just("\u{e9}"),
                Just("\n"),
                Just("msg"),
                Just("1"),
                Just("A"),
            ],
            0..7,
        )
        .prop_map(|p| p.concat())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4000))]

        #[test]
        fn rustc_and_ruff_messages_are_read_as_their_regexes_read_them(text in pieces()) {
            let by_regex = RUSTC_MESSAGE
                .captures(&text)
                .map(|c| (c.get(1).unwrap().as_str(), c.get(2).map(|m| m.as_str()), c.get(3).unwrap().as_str()));
            prop_assert_eq!(rustc_message(&text), by_regex, "{:?}", text);
            let by_regex = RUFF_HEADER.captures(&text).map(|c| (c.get(1).unwrap().as_str(), c.get(2).unwrap().as_str()));
            prop_assert_eq!(ruff_header(&text), by_regex, "{:?}", text);
        }
    }

    /// The package a test binary runs in, from `cargo test`'s `Running` line: a unit-test binary
    /// by its crate's name (its path absolute when cargo ran in a member's folder, `.exe` on
    /// Windows, no source before cargo 1.52), an integration test by the package holding its
    /// file; `None` when the workspace does not tell it.
    #[test]
    fn a_running_line_tells_the_test_binary_s_package() {
        let manifests = [
            ("crates/slug/Cargo.toml", "[package]\nname = \"slug-tools\"\n"),
            ("crates/heck/Cargo.toml", "[package]\nname = \"heck\"\n"),
        ];
        let files = [
            "crates/slug/src/lib.rs",
            "crates/slug/tests/columns.rs",
            "crates/heck/src/lib.rs",
        ];
        let ws = super::super::workspace_with_manifests(&manifests, &files);
        for (running, folder) in [
            (
                "unittests src/lib.rs (target/debug/deps/slug_tools-483fee0012f97fff)",
                Some("crates/slug/"),
            ),
            (
                "unittests src/lib.rs (/w/target/debug/deps/heck-684bcc189c948253)",
                Some("crates/heck/"),
            ),
            (
                "unittests src\\lib.rs (target\\debug\\deps\\slug_tools-483fee0012f97fff.exe)",
                Some("crates/slug/"),
            ),
            ("target/debug/deps/heck-684bcc189c948253", Some("crates/heck/")),
            (
                "tests/columns.rs (target/debug/deps/columns-a5cfbc7a70717093)",
                Some("crates/slug/"),
            ),
            // A binary's unit tests with no such source listed, a crate the manifests do not name.
            ("unittests src/main.rs (target/debug/deps/heck-684bcc189c948253)", None),
            ("unittests src/lib.rs (target/debug/deps/other-684bcc189c948253)", None),
        ] {
            assert_eq!(test_binary_folder(running, &ws).as_deref(), folder, "{running}");
        }
    }

    /// A test binary that crashed prints no `test result:`; cargo's `error: test failed` ends
    /// its output, and a frame whose function names a workspace crate is placed in that crate's
    /// package whatever was told before (a review's case: alpha's binary crashed, then nextest
    /// ran beta's tests).
    #[test]
    fn a_crashed_binary_s_package_is_not_the_next_tool_s() {
        let log = "\
     Running unittests src/lib.rs (target/debug/deps/alpha-0123456789abcdef)

running 1 test
error: test failed, to rerun pass `-p alpha --lib`

Caused by:
  process didn't exit successfully: `/w/target/debug/deps/alpha-0123456789abcdef` (signal: 11, SIGSEGV: invalid memory reference)
        FAIL [   0.004s] beta tests::t

  stderr ───

    thread 'tests::t' (28783) panicked at /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/foo-1.0.0/src/lib.rs:5:5:
    boom
    stack backtrace:
       0: foo::f
                 at /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/foo-1.0.0/src/lib.rs:5:5
       1: beta::g
                 at ./src/lib.rs:12:5
       2: beta::tests::t
                 at ./src/lib.rs:30:9
";
        let manifests = [
            ("crates/alpha/Cargo.toml", "[package]\nname = \"alpha\"\n"),
            ("crates/beta/Cargo.toml", "[package]\nname = \"beta\"\n"),
        ];
        let ws =
            super::super::workspace_with_manifests(&manifests, &["crates/alpha/src/lib.rs", "crates/beta/src/lib.rs"]);
        let parsed = parse(log, &ws);
        let places: Vec<(&str, u32)> = super::super::report_places(&parsed)
            .into_iter()
            .map(|(file, line, _)| (file, line))
            .collect();
        assert_eq!(places, [("crates/beta/src/lib.rs", 12), ("crates/beta/src/lib.rs", 30)]);
    }

    #[test]
    fn a_code_less_error_is_a_lint_when_its_block_says_so() {
        // rustc 1.95 under `-D warnings`: the lint's level is noted at its first diagnostic
        // only; a code-less error that is no lint (a macro not found) stays a type error; the
        // log is cut inside clippy's last block.
        let log = "\
error: cannot find macro `vecc` in this scope
 --> src/lib.rs:2:13
  |
2 |     let v = vecc![1];
  |             ^^^^ help: a macro with a similar name exists: `vec`

error: unused variable: `a`
 --> src/lib.rs:5:9
  |
5 |     let a = 1;
  |         ^ help: if this is intentional, prefix it with an underscore: `_a`
  |
  = note: `-D unused-variables` implied by `-D warnings`
  = help: to override `-D warnings` add `#[allow(unused_variables)]`

error: unused variable: `b`
  --> src/lib.rs:12:9
   |
12 |     let b = 2;
   |         ^ help: if this is intentional, prefix it with an underscore: `_b`

error: unused variable: `c`
  --> src/lib.rs:14:9
   |
14 |     let c = 3;
note: the lint level is defined here
 --> src/lib.rs:1:9
  |
1 | #![deny(unused)]
  |         ^^^^^^
  = note: `#[deny(unused_variables)]` implied by `#[deny(unused)]`

error: literal with an empty format string
  --> src/lib.rs:20:27
   |
20 |     write!(f, \"{}\", \"\")?;
   |                       ^^
   |
   = help: for further information visit https://rust-lang.github.io/rust-clippy/rust-1.95.0/index.html#write_literal
";
        let ws = Workspace::new("/w").with_files(vec!["src/lib.rs".to_owned()]);
        let parsed = parse(log, &ws);
        let types: Vec<(u32, String)> = super::super::report_findings(&parsed)
            .into_iter()
            .map(|(_, line, error_type, _)| (line, error_type))
            .collect();
        let expected = [
            (2, "TypeError"),
            (5, "Linting"),
            (12, "Linting"),
            (14, "Linting"),
            (20, "Linting"),
        ];
        assert_eq!(types, expected.map(|(line, t)| (line, t.to_owned())));
    }

    /// A log cut after a panic's `panicked at …:` line (its message never printed), then a
    /// build's errors (the golden `cargo_test_single` cut there, then `cargo_build`): the panic
    /// and each error are reported, whether the panic's place is in the project or not.
    #[test]
    fn a_panic_cut_before_its_message_leaves_the_output_after_it_to_be_read() {
        let errors = "\
error[E0432]: unresolved import `std::collections::HashMapp`
 --> src/main.rs:1:5
  |
1 | use std::collections::HashMapp;
  |     ^^^^^^^^^^^^^^^^^^^^^^^^^^ no `HashMapp` in `collections`
";
        let ws = Workspace::new("/w").with_files(vec!["src/lib.rs".to_owned(), "src/main.rs".to_owned()]);
        let uncoded = errors.replace("error[E0432]", "warning");
        for (panic, errors, expected) in [
            (
                "thread 'tests::boiling_point' (6913) panicked at src/lib.rs:23:9:",
                errors,
                &[(23, "Logic"), (1, "Import")][..],
            ),
            (
                "thread 'main' (6913) panicked at /rustc/abc/library/core/src/num/mod.rs:9:1:",
                errors,
                &[(1, "Import")],
            ),
            // A header with no code may be the message: it is read as both, and the backtrace
            // of a panic outside the project ends at its location.
            (
                "thread 'main' (6913) panicked at /rustc/abc/library/core/src/num/mod.rs:9:1:",
                &uncoded,
                &[(1, "Linting")],
            ),
        ] {
            let parsed = parse(&format!("{panic}\n{errors}"), &ws);
            let found: Vec<(u32, String)> = super::super::report_findings(&parsed)
                .into_iter()
                .map(|(_, line, error_type, _)| (line, error_type))
                .collect();
            let expected: Vec<(u32, String)> = expected.iter().map(|&(n, t)| (n, t.to_owned())).collect();
            assert_eq!(found, expected, "{panic}");
        }
        assert!(begins_other_rust_output("running 1 test") && !begins_other_rust_output("error: bad digit"));
    }

    #[test]
    fn a_frame_s_crate_is_its_function_s_first_name() {
        assert_eq!(function_crate("slug_tools::tests::columns"), Some("slug_tools"));
        assert_eq!(function_crate("heck::transform"), Some("heck"));
        assert_eq!(
            function_crate("<heck::AsSnakeCase<T> as core::fmt::Display>::fmt"),
            None
        );
        assert_eq!(function_crate("main"), None);
        assert_eq!(
            function_crate("slug_tools[9e3c0b8a1f2d4e5c]::column"),
            Some("slug_tools")
        );
    }

    /// `cargo test` with `RUST_BACKTRACE=1` and `=full` (cargo 1.95, a reviewer's crate): a panic
    /// in the library a unit test calls is placed there and at the test's line; one inside `core`
    /// called from the test itself is placed at the test's line only (its closure's frame, at
    /// the `fn` line, is the harness's); `full` names functions with their address and hash.
    #[test]
    fn a_backtrace_gives_the_test_s_line_only_when_the_panic_is_below_the_test() {
        let in_core = "\
---- tests::in_core stdout ----

thread 'tests::in_core' (9371) panicked at /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/core/src/num/mod.rs:1802:1:
from_ascii_radix: radix must lie in the range `[2, 36]` - found 40
stack backtrace:
   0: __rustc::rust_begin_unwind
             at /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/std/src/panicking.rs:689:5
   1: core::panicking::panic_fmt
             at /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/core/src/panicking.rs:80:14
   2: core::num::from_ascii_radix_panic::do_panic::runtime
             at /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/core/src/panic.rs:172:21
   3: core::num::from_ascii_radix_panic::do_panic
             at /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/core/src/intrinsics/mod.rs:2447:9
   4: core::num::from_ascii_radix_panic
             at /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/core/src/panic.rs:177:9
   5: core::num::<impl u32>::from_ascii_radix
             at /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/core/src/num/mod.rs:1713:21
   6: core::num::<impl u32>::from_str_radix
             at /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/core/src/num/mod.rs:1630:17
   7: mycrate::tests::in_core
             at ./src/lib.rs:39:17
   8: mycrate::tests::in_core::{{closure}}
             at ./src/lib.rs:38:17
   9: core::ops::function::FnOnce::call_once
             at /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/core/src/ops/function.rs:250:5
  10: <fn() -> core::result::Result<(), alloc::string::String> as core::ops::function::FnOnce<()>>::call_once
             at /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/core/src/ops/function.rs:250:5
note: Some details are omitted, run with `RUST_BACKTRACE=full` for a verbose backtrace.

";
        let in_lib = "\
---- tests::in_lib stdout ----

thread 'tests::in_lib' (9372) panicked at src/lib.rs:2:5:
index out of bounds: the len is 0 but the index is 0
stack backtrace:
   0: __rustc::rust_begin_unwind
             at /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/std/src/panicking.rs:689:5
   1: core::panicking::panic_fmt
             at /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/core/src/panicking.rs:80:14
   2: core::panicking::panic_bounds_check
             at /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/core/src/panicking.rs:271:5
   3: mycrate::first
             at ./src/lib.rs:2:5
   4: mycrate::tests::in_lib
             at ./src/lib.rs:23:20
   5: mycrate::tests::in_lib::{{closure}}
             at ./src/lib.rs:22:16
   6: core::ops::function::FnOnce::call_once
             at /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/core/src/ops/function.rs:250:5
   7: <fn() -> core::result::Result<(), alloc::string::String> as core::ops::function::FnOnce<()>>::call_once
             at /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/core/src/ops/function.rs:250:5
note: Some details are omitted, run with `RUST_BACKTRACE=full` for a verbose backtrace.

";
        let in_lib_full = "\
---- tests::in_lib stdout ----

thread 'tests::in_lib' (9390) panicked at src/lib.rs:2:5:
index out of bounds: the len is 0 but the index is 0
stack backtrace:
   0:     0x56323f7857ca - std[e28293b1aa0f68bd]::backtrace_rs::backtrace::libunwind::trace
                               at /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/std/src/../../backtrace/src/backtrace/libunwind.rs:117:9
   1:     0x56323f7857ca - std[e28293b1aa0f68bd]::backtrace_rs::backtrace::trace_unsynchronized::<std[e28293b1aa0f68bd]::sys::backtrace::_print_fmt::{closure#1}>
                               at /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/std/src/../../backtrace/src/backtrace/mod.rs:66:14
   2:     0x56323f7857ca - std[e28293b1aa0f68bd]::sys::backtrace::_print_fmt
                               at /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/std/src/sys/backtrace.rs:74:9
   3:     0x56323f7857ca - <<std[e28293b1aa0f68bd]::sys::backtrace::BacktraceLock>::print::DisplayBacktrace as core[c1f1a4ba060b9bfa]::fmt::Display>::fmt
                               at /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/std/src/sys/backtrace.rs:44:26
   4:     0x56323f79943a - <core[c1f1a4ba060b9bfa]::fmt::rt::Argument>::fmt
                               at /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/core/src/fmt/rt.rs:152:76
   5:     0x56323f79943a - core[c1f1a4ba060b9bfa]::fmt::write
   6:     0x56323f78a052 - std[e28293b1aa0f68bd]::io::default_write_fmt::<alloc[fdfd2bd8633a6659]::vec::Vec<u8>>
                               at /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/std/src/io/mod.rs:639:11
   7:     0x56323f78a052 - <alloc[fdfd2bd8633a6659]::vec::Vec<u8> as std[e28293b1aa0f68bd]::io::Write>::write_fmt
                               at /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/std/src/io/mod.rs:1994:13
   8:     0x56323f7649df - <std[e28293b1aa0f68bd]::sys::backtrace::BacktraceLock>::print
                               at /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/std/src/sys/backtrace.rs:47:9
   9:     0x56323f7649df - std[e28293b1aa0f68bd]::panicking::default_hook::{closure#0}
                               at /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/std/src/panicking.rs:292:27
  10:     0x56323f77dd39 - std[e28293b1aa0f68bd]::panicking::default_hook
                               at /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/std/src/panicking.rs:316:9
  11:     0x56323f71ad9c - <alloc[fdfd2bd8633a6659]::boxed::Box<dyn for<'a, 'b> core[c1f1a4ba060b9bfa]::ops::function::Fn<(&'a std[e28293b1aa0f68bd]::panic::PanicHookInfo<'b>,), Output = ()> + core[c1f1a4ba060b9bfa]::marker::Sync + core[c1f1a4ba060b9bfa]::marker::Send> as core[c1f1a4ba060b9bfa]::ops::function::Fn<(&std[e28293b1aa0f68bd]::panic::PanicHookInfo,)>>::call
                               at /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/alloc/src/boxed.rs:2254:9
  12:     0x56323f71ad9c - test[273d7611820c9051]::test_main_with_exit_callback::<test[273d7611820c9051]::test_main::{closure#0}>::{closure#0}
                               at /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/test/src/lib.rs:145:21
  13:     0x56323f77def2 - <alloc[fdfd2bd8633a6659]::boxed::Box<dyn for<'a, 'b> core[c1f1a4ba060b9bfa]::ops::function::Fn<(&'a std[e28293b1aa0f68bd]::panic::PanicHookInfo<'b>,), Output = ()> + core[c1f1a4ba060b9bfa]::marker::Sync + core[c1f1a4ba060b9bfa]::marker::Send> as core[c1f1a4ba060b9bfa]::ops::function::Fn<(&std[e28293b1aa0f68bd]::panic::PanicHookInfo,)>>::call
                               at /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/alloc/src/boxed.rs:2254:9
  14:     0x56323f77def2 - std[e28293b1aa0f68bd]::panicking::panic_with_hook
                               at /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/std/src/panicking.rs:833:13
  15:     0x56323f764a98 - std[e28293b1aa0f68bd]::panicking::panic_handler::{closure#0}
                               at /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/std/src/panicking.rs:698:13
  16:     0x56323f75c439 - std[e28293b1aa0f68bd]::sys::backtrace::__rust_end_short_backtrace::<std[e28293b1aa0f68bd]::panicking::panic_handler::{closure#0}, !>
                               at /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/std/src/sys/backtrace.rs:182:18
  17:     0x56323f7657ad - __rustc[b7974e8690430dd9]::rust_begin_unwind
                               at /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/std/src/panicking.rs:689:5
  18:     0x56323f799c8c - core[c1f1a4ba060b9bfa]::panicking::panic_fmt
                               at /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/core/src/panicking.rs:80:14
  19:     0x56323f799adc - core[c1f1a4ba060b9bfa]::panicking::panic_bounds_check
                               at /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/core/src/panicking.rs:271:5
  20:     0x56323f70d6b1 - mycrate::first::h03f496c3bff9b366
                               at /tmp/review2/rs/mycrate/src/lib.rs:2:5
  21:     0x56323f70deb2 - mycrate::tests::in_lib::h39af38831619e1d4
                               at /tmp/review2/rs/mycrate/src/lib.rs:23:20
  22:     0x56323f70ea97 - mycrate::tests::in_lib::{{closure}}::h260078ecbfec3a09
                               at /tmp/review2/rs/mycrate/src/lib.rs:22:16
  23:     0x56323f70e686 - core::ops::function::FnOnce::call_once::h25295521d9ecc417
                               at /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/core/src/ops/function.rs:250:5
  24:     0x56323f70ee7b - <fn() -> core[c1f1a4ba060b9bfa]::result::Result<(), alloc[fdfd2bd8633a6659]::string::String> as core[c1f1a4ba060b9bfa]::ops::function::FnOnce<()>>::call_once
                               at /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/core/src/ops/function.rs:250:5
  25:     0x56323f70ee7b - test[273d7611820c9051]::__rust_begin_short_backtrace::<core[c1f1a4ba060b9bfa]::result::Result<(), alloc[fdfd2bd8633a6659]::string::String>, fn() -> core[c1f1a4ba060b9bfa]::result::Result<(), alloc[fdfd2bd8633a6659]::string::String>>
                               at /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/test/src/lib.rs:663:18
  26:     0x56323f71b86b - test[273d7611820c9051]::run_test_in_process::{closure#0}
                               at /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/test/src/lib.rs:686:74
  27:     0x56323f71b86b - <core[c1f1a4ba060b9bfa]::panic::unwind_safe::AssertUnwindSafe<test[273d7611820c9051]::run_test_in_process::{closure#0}> as core[c1f1a4ba060b9bfa]::ops::function::FnOnce<()>>::call_once
                               at /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/core/src/panic/unwind_safe.rs:274:9
  28:     0x56323f71b86b - std[e28293b1aa0f68bd]::panicking::catch_unwind::do_call::<core[c1f1a4ba060b9bfa]::panic::unwind_safe::AssertUnwindSafe<test[273d7611820c9051]::run_test_in_process::{closure#0}>, core[c1f1a4ba060b9bfa]::result::Result<(), alloc[fdfd2bd8633a6659]::string::String>>
                               at /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/std/src/panicking.rs:581:40
  29:     0x56323f71b86b - std[e28293b1aa0f68bd]::panicking::catch_unwind::<core[c1f1a4ba060b9bfa]::result::Result<(), alloc[fdfd2bd8633a6659]::string::String>, core[c1f1a4ba060b9bfa]::panic::unwind_safe::AssertUnwindSafe<test[273d7611820c9051]::run_test_in_process::{closure#0}>>
                               at /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/std/src/panicking.rs:544:19
  30:     0x56323f71b86b - std[e28293b1aa0f68bd]::panic::catch_unwind::<core[c1f1a4ba060b9bfa]::panic::unwind_safe::AssertUnwindSafe<test[273d7611820c9051]::run_test_in_process::{closure#0}>, core[c1f1a4ba060b9bfa]::result::Result<(), alloc[fdfd2bd8633a6659]::string::String>>
                               at /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/std/src/panic.rs:359:14
  31:     0x56323f71b86b - test[273d7611820c9051]::run_test_in_process
                               at /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/test/src/lib.rs:686:27
  32:     0x56323f71b86b - test[273d7611820c9051]::run_test::{closure#0}
                               at /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/test/src/lib.rs:607:43
  33:     0x56323f716f84 - test[273d7611820c9051]::run_test::{closure#1}
                               at /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/test/src/lib.rs:637:41
  34:     0x56323f716f84 - std[e28293b1aa0f68bd]::sys::backtrace::__rust_begin_short_backtrace::<test[273d7611820c9051]::run_test::{closure#1}, ()>
                               at /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/std/src/sys/backtrace.rs:166:18
  35:     0x56323f71e472 - std[e28293b1aa0f68bd]::thread::lifecycle::spawn_unchecked::<test[273d7611820c9051]::run_test::{closure#1}, ()>::{closure#1}::{closure#0}
                               at /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/std/src/thread/lifecycle.rs:91:13
  36:     0x56323f71e472 - <core[c1f1a4ba060b9bfa]::panic::unwind_safe::AssertUnwindSafe<std[e28293b1aa0f68bd]::thread::lifecycle::spawn_unchecked<test[273d7611820c9051]::run_test::{closure#1}, ()>::{closure#1}::{closure#0}> as core[c1f1a4ba060b9bfa]::ops::function::FnOnce<()>>::call_once
                               at /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/core/src/panic/unwind_safe.rs:274:9
  37:     0x56323f71e472 - std[e28293b1aa0f68bd]::panicking::catch_unwind::do_call::<core[c1f1a4ba060b9bfa]::panic::unwind_safe::AssertUnwindSafe<std[e28293b1aa0f68bd]::thread::lifecycle::spawn_unchecked<test[273d7611820c9051]::run_test::{closure#1}, ()>::{closure#1}::{closure#0}>, ()>
                               at /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/std/src/panicking.rs:581:40
  38:     0x56323f71e472 - std[e28293b1aa0f68bd]::panicking::catch_unwind::<(), core[c1f1a4ba060b9bfa]::panic::unwind_safe::AssertUnwindSafe<std[e28293b1aa0f68bd]::thread::lifecycle::spawn_unchecked<test[273d7611820c9051]::run_test::{closure#1}, ()>::{closure#1}::{closure#0}>>
                               at /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/std/src/panicking.rs:544:19
  39:     0x56323f71e472 - std[e28293b1aa0f68bd]::panic::catch_unwind::<core[c1f1a4ba060b9bfa]::panic::unwind_safe::AssertUnwindSafe<std[e28293b1aa0f68bd]::thread::lifecycle::spawn_unchecked<test[273d7611820c9051]::run_test::{closure#1}, ()>::{closure#1}::{closure#0}>, ()>
                               at /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/std/src/panic.rs:359:14
  40:     0x56323f71e472 - std[e28293b1aa0f68bd]::thread::lifecycle::spawn_unchecked::<test[273d7611820c9051]::run_test::{closure#1}, ()>::{closure#1}
                               at /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/std/src/thread/lifecycle.rs:89:26
  41:     0x56323f71e472 - <std[e28293b1aa0f68bd]::thread::lifecycle::spawn_unchecked<test[273d7611820c9051]::run_test::{closure#1}, ()>::{closure#1} as core[c1f1a4ba060b9bfa]::ops::function::FnOnce<()>>::call_once::{shim:vtable#0}
                               at /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/core/src/ops/function.rs:250:5
  42:     0x56323f7850df - <alloc[fdfd2bd8633a6659]::boxed::Box<dyn core[c1f1a4ba060b9bfa]::ops::function::FnOnce<(), Output = ()> + core[c1f1a4ba060b9bfa]::marker::Send> as core[c1f1a4ba060b9bfa]::ops::function::FnOnce<()>>::call_once
                               at /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/alloc/src/boxed.rs:2240:9
  43:     0x56323f7850df - <std[e28293b1aa0f68bd]::sys::thread::unix::Thread>::new::thread_start
                               at /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/std/src/sys/thread/unix.rs:118:17
  44:     0x7fb6a77711f5 - start_thread
                               at ./nptl/pthread_create.c:442:8
  45:     0x7fb6a77f18ec - clone3
                               at ./misc/../sysdeps/unix/sysv/linux/x86_64/clone3.S:81:0
  46:                0x0 - <unknown>

";
        let workspace =
            crate::parse::Workspace::new("/tmp/review2/rs/mycrate").with_files(vec!["src/lib.rs".to_owned()]);
        let places = |log: &str| {
            let parsed = crate::parse::parse(log, &workspace);
            parsed
                .reports
                .iter()
                .map(|r| (r.line_number, r.confidence_score))
                .collect::<Vec<_>>()
        };
        assert_eq!(places(in_core), [(39, Some(0.9))]);
        for log in [in_lib, in_lib_full] {
            assert_eq!(places(log), [(2, Some(0.95)), (23, Some(0.8))], "{log}");
        }
    }

    /// `cargo test` in a workspace of two crates that each have a `src/lib.rs` (bytesize 1.3.3
    /// and glob 0.3.4, an outsider trial's, `RUST_BACKTRACE=1`): the panic names its place from
    /// the workspace (`crates/bytesize/src/lib.rs`), the backtrace from the crate the test runs
    /// in (`./src/lib.rs`). The frame at the panic's place tells the crate's folder, in which the
    /// test's own frame is found.
    #[test]
    fn a_crate_s_frames_are_resolved_in_the_folder_its_panic_names() {
        let log = r#"---- tests::test_display stdout ----

thread 'tests::test_display' (3203) panicked at crates/bytesize/src/lib.rs:417:9:
assertion `left == right` failed
  left: "1.0 KB"
 right: "1000 B"
stack backtrace:
   0: __rustc::rust_begin_unwind
             at /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/std/src/panicking.rs:689:5
   1: core::panicking::panic_fmt
             at /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/core/src/panicking.rs:80:14
   2: core::panicking::assert_failed_inner
             at /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/core/src/panicking.rs:439:17
   3: core::panicking::assert_failed
             at /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/core/src/panicking.rs:394:5
   4: bytesize::tests::assert_display
             at ./src/lib.rs:417:9
   5: bytesize::tests::test_display
             at ./src/lib.rs:423:9
   6: bytesize::tests::test_display::{{closure}}
             at ./src/lib.rs:421:22
   7: core::ops::function::FnOnce::call_once
             at /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/core/src/ops/function.rs:250:5
   8: <fn() -> core::result::Result<(), alloc::string::String> as core::ops::function::FnOnce<()>>::call_once
             at /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/core/src/ops/function.rs:250:5
note: Some details are omitted, run with `RUST_BACKTRACE=full` for a verbose backtrace.
"#;
        let workspace = crate::parse::Workspace::new("/w").with_files(vec![
            "crates/bytesize/src/lib.rs".to_owned(),
            "crates/glob/src/lib.rs".to_owned(),
        ]);
        // On Windows the same run prints its paths with backslashes, the frames' as `.\src\lib.rs`.
        let windows = log
            .replace("at ./src/lib.rs", "at .\\src\\lib.rs")
            .replace("crates/bytesize/src/lib.rs", "crates\\bytesize\\src\\lib.rs");
        for log in [log, windows.as_str()] {
            let parsed = crate::parse::parse(log, &workspace);
            let places: Vec<(&str, u32)> = parsed
                .reports
                .iter()
                .map(|r| (r.file_path.as_str(), r.line_number))
                .collect();
            assert_eq!(
                places,
                [("crates/bytesize/src/lib.rs", 417), ("crates/bytesize/src/lib.rs", 423)],
                "{log}"
            );
        }
    }

    /// proptest 1 on ident_case 1.0.1 (the twenty-fifth outsider trial's, captured by running it):
    /// the panic names the `proptest!` macro's line; the message ends with the failed
    /// assertion's, which is reported too.
    #[test]
    fn proptest_s_failed_assertion_is_placed_at_its_line() {
        let log = r#"     Running tests/props.rs (target/debug/deps/props-48757b7e1018b824)

running 1 test
test snake_then_pascal_round_trips ... FAILED

failures:

---- snake_then_pascal_round_trips stdout ----

thread 'snake_then_pascal_round_trips' (20322) panicked at tests/props.rs:4:1:
Test failed: assertion failed: `(left == right)` 
  left: `"Aaa"`,
 right: `"AAa"` at tests/props.rs:11.
minimal failing input: s = "AAa"
	successes: 4
	local rejects: 0
	global rejects: 0

"#;
        let workspace = crate::parse::Workspace::new("/w").with_files(vec!["tests/props.rs".to_owned()]);
        let parsed = crate::parse::parse(log, &workspace);
        let test = Some("snake_then_pascal_round_trips");
        assert_eq!(
            crate::parse::report_places(&parsed),
            [("tests/props.rs", 4, test), ("tests/props.rs", 11, test)]
        );
    }

    /// `cargo test -- --nocapture` prints a `#[should_panic]` test's expected panic before its
    /// `ok`: no report. A panic at the same place afterwards (the crate's example run next, a
    /// crate written for this test, captured by running it) is one.
    #[test]
    fn a_should_panic_test_s_expected_panic_is_no_report_but_a_later_one_there_is() {
        let log = r#"    Finished `test` profile [unoptimized + debuginfo] target(s) in 0.01s
     Running unittests src/lib.rs (target/debug/deps/mdt-d6fbdaaffaf4c597)

running 2 tests

thread 'tests::sub_underflows' (27889) panicked at src/lib.rs:16:5:
attempt to subtract with overflow
note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace
test tests::sub_underflows - should panic ... ok

thread 'tests::adds' (27888) panicked at src/lib.rs:29:9:
assertion `left == right` failed
  left: 4
 right: 5
test tests::adds ... FAILED

failures:

failures:
    tests::adds

test result: FAILED. 1 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s

error: test failed, to rerun pass `--lib`

thread 'main' (27628) panicked at src/lib.rs:16:5:
attempt to subtract with overflow
note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace
"#;
        let workspace = crate::parse::Workspace::new("/tmp/mdt").with_files(vec!["src/lib.rs".to_owned()]);
        let parsed = crate::parse::parse(log, &workspace);
        assert_eq!(
            crate::parse::report_places(&parsed),
            [("src/lib.rs", 29, Some("tests::adds")), ("src/lib.rs", 16, None)]
        );
        assert_eq!(parsed.failing_tests(), ["tests::adds"]);
    }

    /// A backtrace's frame is the test's when its function is the test's, or the test's closure
    /// as either edition names it; a function that merely ends with the test's name is not.
    #[test]
    fn a_backtrace_frame_names_the_test_s_function() {
        for function in [
            "test_unindent::unindent_long_indent",
            "test_unindent::unindent_long_indent::{{closure}}",
            "strsim::tests::hamming_diff::{closure#0}",
            "unindent_long_indent",
        ] {
            let test = if function.starts_with("strsim") {
                "tests::hamming_diff"
            } else {
                "unindent_long_indent"
            };
            assert!(super::names_test_function(function, test), "{function}");
        }
        for function in [
            "unindent::not_unindent_long_indent",
            "<F as core::ops::function::FnOnce<()>>::call_once",
            "test::run_test",
        ] {
            assert!(
                !super::names_test_function(function, "unindent_long_indent"),
                "{function}"
            );
        }
    }

    /// From the 2024 edition rustdoc merges a crate's doctests into one program in a temporary
    /// folder, and a panic names that program's file (cargo 1.95, a crate of `cargo new` with
    /// three failing doctests: the crate's, an item's and a module's documentation). Each is
    /// placed at its example, with and without `RUST_BACKTRACE=1`.
    #[test]
    fn a_merged_doctest_s_panic_is_placed_at_its_example() {
        let plain = "\
   Compiling dtest v0.1.0 (/tmp/dtest)
    Finished `test` profile [unoptimized + debuginfo] target(s) in 0.03s
   Doc-tests dtest

running 3 tests
test src/lib.rs - add (line 9) ... FAILED
test src/lib.rs - (line 3) ... FAILED
test src/lib.rs - inner (line 19) ... FAILED

failures:

---- src/lib.rs - add (line 9) stdout ----
Test executable failed (exit status: 101).

stderr:

thread 'main' (4772) panicked at /tmp/rustdoctestHDSIKl/doctest_bundle_2024.rs:14:1:
assertion `left == right` failed
  left: 2
 right: 3
note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace


---- src/lib.rs - (line 3) stdout ----
Test executable failed (exit status: 101).

stderr:

thread 'main' (4771) panicked at /tmp/rustdoctestHDSIKl/doctest_bundle_2024.rs:6:1:
assertion `left == right` failed
  left: 4
 right: 5
note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace


---- src/lib.rs - inner (line 19) stdout ----
Test executable failed (exit status: 101).

stderr:

thread 'main' (4774) panicked at /tmp/rustdoctestHDSIKl/doctest_bundle_2024.rs:22:1:
inner module doc
note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace



failures:
    src/lib.rs - (line 3)
    src/lib.rs - add (line 9)
    src/lib.rs - inner (line 19)

test result: FAILED. 0 passed; 3 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s

all doctests ran in 0.15s; merged doctests compilation took 0.14s
error: doctest failed, to rerun pass `--doc`
";
        let backtraced = "\
   Compiling dtest v0.1.0 (/tmp/dtest)
    Finished `test` profile [unoptimized + debuginfo] target(s) in 0.13s
   Doc-tests dtest

running 3 tests
test src/lib.rs - add (line 9) ... FAILED
test src/lib.rs - (line 3) ... FAILED
test src/lib.rs - inner (line 19) ... FAILED

failures:

---- src/lib.rs - add (line 9) stdout ----
Test executable failed (exit status: 101).

stderr:

thread 'main' (4407) panicked at /tmp/rustdoctest7gUqfl/doctest_bundle_2024.rs:14:1:
assertion `left == right` failed
  left: 2
 right: 3
stack backtrace:
   0: __rustc::rust_begin_unwind
             at /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/std/src/panicking.rs:689:5
   1: core::panicking::panic_fmt
             at /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/core/src/panicking.rs:80:14
   2: core::panicking::assert_failed_inner
             at /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/core/src/panicking.rs:439:17
   3: core::panicking::assert_failed::<u64, u64>
             at /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/core/src/panicking.rs:394:5
   4: doctest_bundle_2024::__doctest_1::main
   5: doctest_bundle_2024::__doctest_1::__main_fn
   6: doctest_runner_2024::__doctest_1::TEST::{closure#0}
   7: <doctest_runner_2024::__doctest_1::TEST::{closure#0} as core::ops::function::FnOnce<()>>::call_once
   8: doctest_runner_2024::main
   9: <fn() -> std::process::ExitCode as core::ops::function::FnOnce<()>>::call_once
note: Some details are omitted, run with `RUST_BACKTRACE=full` for a verbose backtrace.


---- src/lib.rs - (line 3) stdout ----
Test executable failed (exit status: 101).

stderr:

thread 'main' (4406) panicked at /tmp/rustdoctest7gUqfl/doctest_bundle_2024.rs:6:1:
assertion `left == right` failed
  left: 4
 right: 5
stack backtrace:
   0: __rustc::rust_begin_unwind
             at /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/std/src/panicking.rs:689:5
   1: core::panicking::panic_fmt
             at /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/core/src/panicking.rs:80:14
   2: core::panicking::assert_failed_inner
             at /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/core/src/panicking.rs:439:17
   3: core::panicking::assert_failed::<u64, u64>
             at /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/core/src/panicking.rs:394:5
   4: doctest_bundle_2024::__doctest_0::main
   5: doctest_bundle_2024::__doctest_0::__main_fn
   6: doctest_runner_2024::__doctest_0::TEST::{closure#0}
   7: <doctest_runner_2024::__doctest_0::TEST::{closure#0} as core::ops::function::FnOnce<()>>::call_once
   8: doctest_runner_2024::main
   9: <fn() -> std::process::ExitCode as core::ops::function::FnOnce<()>>::call_once
note: Some details are omitted, run with `RUST_BACKTRACE=full` for a verbose backtrace.


---- src/lib.rs - inner (line 19) stdout ----
Test executable failed (exit status: 101).

stderr:

thread 'main' (4422) panicked at /tmp/rustdoctest7gUqfl/doctest_bundle_2024.rs:22:1:
inner module doc
stack backtrace:
   0: __rustc::rust_begin_unwind
             at /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/std/src/panicking.rs:689:5
   1: core::panicking::panic_fmt
             at /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/core/src/panicking.rs:80:14
   2: doctest_bundle_2024::__doctest_2::main
   3: doctest_bundle_2024::__doctest_2::__main_fn
   4: doctest_runner_2024::__doctest_2::TEST::{closure#0}
   5: <doctest_runner_2024::__doctest_2::TEST::{closure#0} as core::ops::function::FnOnce<()>>::call_once
   6: doctest_runner_2024::main
   7: <fn() -> std::process::ExitCode as core::ops::function::FnOnce<()>>::call_once
note: Some details are omitted, run with `RUST_BACKTRACE=full` for a verbose backtrace.



failures:
    src/lib.rs - (line 3)
    src/lib.rs - add (line 9)
    src/lib.rs - inner (line 19)

test result: FAILED. 0 passed; 3 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.39s

all doctests ran in 0.67s; merged doctests compilation took 0.26s
error: doctest failed, to rerun pass `--doc`
";
        for log in [plain, backtraced] {
            let parsed = parse(
                log,
                &Workspace::new("/tmp/dtest").with_files(vec!["src/lib.rs".to_owned()]),
            );
            let mut places = super::super::report_places(&parsed);
            places.sort();
            assert_eq!(
                places,
                [
                    ("src/lib.rs", 3, Some("src/lib.rs - (line 3)")),
                    ("src/lib.rs", 9, Some("src/lib.rs - add (line 9)")),
                    ("src/lib.rs", 19, Some("src/lib.rs - inner (line 19)")),
                ],
                "{log}"
            );
        }
        assert!(is_merged_doctests("/tmp/rustdoctestHDSIKl/doctest_bundle_2024.rs"));
        assert!(!is_merged_doctests("src/doctest_bundle.rs"));
    }

    /// `cargo test`'s doctests (strsim 0.11.1 and fnv 1.0.7 from crates.io, one with a bug): their
    /// outcomes are counted under their names, and a panic in an example is reported at the
    /// example, not at the line rustdoc's own numbering gives it.
    #[test]
    fn a_doctest_is_named_and_its_panic_placed_at_its_example() {
        let log = "\
   Doc-tests fnv

running 2 tests
test fnv/lib.rs - (line 51) ... ok

   Doc-tests strsim

running 2 tests
test strsim/src/lib.rs - jaro (line 180) ... ok
test strsim/src/lib.rs - hamming (line 77) ... FAILED

failures:

---- strsim/src/lib.rs - hamming (line 77) stdout ----
Test executable failed (exit status: 101).

stderr:

thread 'main' (23024) panicked at strsim/src/lib.rs:7:1:
assertion `left == right` failed
  left: Ok(3)
 right: Ok(4)
";
        let parsed = parse(log, &Workspace::new("/w"));
        let tests: Vec<(&str, TestOutcome)> = parsed.tests.iter().map(|t| (t.name.as_str(), t.outcome)).collect();
        assert_eq!(
            tests,
            [
                ("fnv/lib.rs - (line 51)", TestOutcome::Passed),
                ("strsim/src/lib.rs - hamming (line 77)", TestOutcome::Failed),
                ("strsim/src/lib.rs - jaro (line 180)", TestOutcome::Passed),
            ]
        );
        let places = super::super::report_places(&parsed);
        assert_eq!(
            places,
            [("strsim/src/lib.rs", 77, Some("strsim/src/lib.rs - hamming (line 77)"))]
        );
    }
    /// A panic in the library's code under a doctest keeps its line (it follows the example);
    /// the doctest's failure ends at its binary's summary; a doctest with a mode is counted.
    #[test]
    fn a_doctest_leaves_a_library_panic_and_what_follows_it_alone() {
        let log = "\
test src/lib.rs - osa_distance (line 295) ... FAILED
test src/lib.rs - parse (line 40) - compile fail ... ok
test src/lib.rs - spawn (line 60) - should panic ... FAILED

failures:

---- src/lib.rs - osa_distance (line 295) stdout ----
Test executable failed (exit status: 101).

stderr:

thread 'main' (23097) panicked at src/lib.rs:316:27:
index out of bounds: the len is 3 but the index is 3

failures:
    src/lib.rs - osa_distance (line 295)

test result: FAILED. 0 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.10s

thread 'main' (23100) panicked at src/lib.rs:12:9:
called `Option::unwrap()` on a `None` value
";
        let parsed = parse(log, &Workspace::new("/w"));
        let places = super::super::report_places(&parsed);
        assert_eq!(
            places,
            [
                ("src/lib.rs", 316, Some("src/lib.rs - osa_distance (line 295)")),
                ("src/lib.rs", 12, None),
            ]
        );
        // (`main` is the panicking program's thread, not a test.)
        let tests: Vec<&str> = parsed.tests.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(
            tests,
            [
                "src/lib.rs - osa_distance (line 295)",
                "src/lib.rs - parse (line 40) - compile fail",
                "src/lib.rs - spawn (line 60) - should panic",
            ]
        );
    }

    /// A panic in the library's code before a doctest's example (vec_map 0.8.2 from crates.io, in a
    /// workspace's `libs/vmap`, a bug in `get`, which `contains_key` and `entry` call): rustdoc
    /// names its program after the file, so line 476 could be the program's own, but the examples
    /// listed show the one at 486 ends before 503: a program that long cannot be it, and the
    /// library's line is kept. A panic at the program's line 18 under the example at 330, which
    /// runs to 394, is the example's. Without the listing (`-q` prints dots), the example is the
    /// place, as before.
    #[test]
    fn a_library_panic_before_a_doctest_s_example_keeps_its_line() {
        let listing = "\
   Doc-tests vec_map

running 6 tests
test libs/vmap/src/lib.rs - VecMap<V>::clear (line 452) ... ok
test libs/vmap/src/lib.rs - VecMap<V>::contains_key (line 486) ... FAILED
test libs/vmap/src/lib.rs - VecMap<V>::drain (line 394) ... ok
test libs/vmap/src/lib.rs - VecMap<V>::get (line 466) ... FAILED
test libs/vmap/src/lib.rs - VecMap<V>::get_mut (line 503) ... ok
test libs/vmap/src/lib.rs - VecMap<V>::split_off (line 330) ... FAILED
";
        let failures = "\
failures:

---- libs/vmap/src/lib.rs - VecMap<V>::contains_key (line 486) stdout ----
Test executable failed (exit status: 101).

stderr:

thread 'main' (2716) panicked at libs/vmap/src/lib.rs:476:19:
index out of bounds: the len is 2 but the index is 2
note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace


---- libs/vmap/src/lib.rs - VecMap<V>::get (line 466) stdout ----
Test executable failed (exit status: 101).

stderr:

thread 'main' (2771) panicked at libs/vmap/src/lib.rs:476:19:
index out of bounds: the len is 2 but the index is 2
note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace


---- libs/vmap/src/lib.rs - VecMap<V>::split_off (line 330) stdout ----
Test executable failed (exit status: 101).

stderr:

thread 'main' (2949) panicked at libs/vmap/src/lib.rs:18:13:
key not present
note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace
";
        let places = |log: &str| {
            let parsed = parse(log, &Workspace::new("/w"));
            super::super::report_places(&parsed)
                .into_iter()
                .map(|(file, line, test)| (file.to_owned(), line, test.map(str::to_owned)))
                .collect::<Vec<_>>()
        };
        let at = |line: u32, test: &str| {
            (
                "libs/vmap/src/lib.rs".to_owned(),
                line,
                Some(format!("libs/vmap/src/lib.rs - {test}")),
            )
        };
        assert_eq!(
            places(&format!("{listing}{failures}")),
            [
                at(476, "VecMap<V>::contains_key (line 486)"),
                at(476, "VecMap<V>::get (line 466)"),
                at(330, "VecMap<V>::split_off (line 330)"),
            ]
        );
        assert_eq!(
            places(failures),
            [
                at(486, "VecMap<V>::contains_key (line 486)"),
                at(476, "VecMap<V>::get (line 466)"),
                at(330, "VecMap<V>::split_off (line 330)"),
            ]
        );
    }

    /// A header whose location does not come on the next line has none: ruff's configuration
    /// warning above a `ruff format --check` diagnostic (ruff 0.17) is not that diagnostic's.
    #[test]
    fn a_header_is_read_with_the_location_on_the_next_line_only() {
        let log = "\
warning: The `ignore-init-module-imports` option is deprecated and will be removed in a future release.
unformatted: File would be reformatted
  --> README.md:21:1
   |
";
        let parsed = parse(log, &Workspace::new("/w"));
        let reports = super::super::report_messages(&parsed);
        assert_eq!(reports, [("README.md", 21, "unformatted File would be reformatted")]);
    }
}
