//! Python: tracebacks, SyntaxError / IndentationError / TabError blocks, pytest in every `--tb`
//! mode (failure sections, collection errors, the short test summary, `-v` and `-rA` outcomes,
//! parametrised ids) and unittest.
//!
//! A failure is a block of frames and an exception; the report points at the deepest frame in the
//! project (where the exception was raised), or at the exact spot a SyntaxError names, and keeps
//! the test's name.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::LazyLock;

use regex::Regex;

use super::look::{Look, is_ascii_space};
use super::needles::FATAL_PYTHON_ERROR;
use super::{
    Finding, Needle, PlaceCounts, Rank, Sink, TestOutcome, has, has_byte, split_location, split_once_byte, split_word,
};
use crate::api::shared::ErrorType;

static FILE_FRAME: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r#"^\s*File "([^"]+)", line (\d+)(?:, in (.*))?$"#).expect("regex"));
static EXCEPTION: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^((?:[A-Za-z_][\w]*\.)*[A-Za-z_]\w*(?:Error|Exception|Exit|Interrupt|Failure|Warning|Iteration|NotFound))(?:: (.*))?$")
        .expect("regex")
});
/// Any exception class, as a project defines its own: `InsufficientFunds`,
/// `ledger.errors.Frozen: eve`. Read only where an exception must stand (a pytest `E` line, the
/// line after a traceback's frames, pytest's `path:N: Name` line), never in free text.
static ANY_EXCEPTION: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^((?:[A-Za-z_]\w*\.)*[A-Z]\w*)(?:: (.*))?$").expect("regex"));
/// `SyntaxError: expected ':' (calc.py, line 1)`: how pytest's summary and `compile()` name the
/// place of a syntax error on one line.
static INLINE_SYNTAX: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(SyntaxError|IndentationError|TabError): (.*) \(([^()\s]+\.py), line (\d+)\)$").expect("regex")
});
static VERBOSE_OUTCOME: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(\S+::\S+) (PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS)(?: \(.*\))?(?:\s+\[\s*\d+%\])?$").expect("regex")
});
static UNITTEST_HEADER: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^(FAIL|ERROR): (\w+) \(([\w.]+)\)").expect("regex"));
static UNITTEST_VERBOSE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(\w+) \(([\w.]+)\)(?:\n.*)? \.\.\. (ok|FAIL|ERROR|skipped|expected failure|unexpected success)")
        .expect("regex")
});

#[derive(Default, Clone, Copy, PartialEq, Eq)]
enum Section {
    #[default]
    None,
    /// pytest's FAILURES or ERRORS section.
    Pytest,
}

#[derive(Default, Clone)]
struct Frame {
    file: String,
    line: u32,
    /// A `File ... line N` frame with no function: the location of a SyntaxError.
    syntax_location: bool,
    /// The failing test's own frame: its function is the test's, or it is the first entry of
    /// pytest's traceback, which starts at the test (or at the fixture that failed its setup).
    is_test: bool,
}

#[derive(Default)]
struct Block {
    /// pytest's short test name (resolved to a node id at the end) or unittest's id.
    test: Option<String>,
    /// unittest ids are final; pytest short names are not.
    test_is_final: bool,
    frames: Vec<Frame>,
    exception: Option<(String, String)>,
    /// A chained part of a failure pytest prints whole began at this frame and its exception
    /// has not come yet: the exception of a part with a project frame is the failure's (raised
    /// in the project while it handled the one before), one raised only in pytest's own code
    /// (a collection error's `CollectError`) is not.
    later_part: Option<usize>,
    /// The frames before this index are those of an exception the next part was raised from
    /// ("The above exception was the direct cause"): when that part was raised outside the
    /// project (a worker pool raising again what its worker raised), the cause's deepest project
    /// frame is where it went wrong; when raised in the project, a third place to look at.
    cause_end: Option<usize>,
    /// The exception of that cause, when it was read.
    cause_exception: Option<(String, String)>,
    /// A failed assertion as `--tb=short` shows it, `E   assert 1 == 2` with no exception line
    /// after it (pytest takes "AssertionError: " off): the exception when no other is named.
    assertion: Option<String>,
    /// The source line shown under the last frame.
    source: Option<String>,
    awaiting_source: bool,
    /// A plain traceback ends at its exception line; pytest and unittest blocks at the next header.
    ends_at_exception: bool,
    /// A traceback pytest printed as an exception's text (`E     File "...", line 32`, a cause
    /// shown before a chained error): only its first line has the `E`, the rest, its exception
    /// line too, are indented by four spaces.
    nested: bool,
    /// A failing test's block: under pytest's header naming it, or a JUnit test case's failure
    /// text ([`Python::begin_pytest_block`]).
    of_a_test: bool,
    /// The next frame of pytest's is the first of the traceback (which starts at the test) or of
    /// a part chained to it ("During handling of the above exception"): the last part's first
    /// frame is the test's.
    part_start: bool,
}

/// How `python -m doctest` heads an example's expected output, and what came instead.
const DOCTEST_EXPECTED: &str = "Expected:";
const DOCTEST_GOT: &str = "Got:";

/// What a pytest failure cut short before its exception is reported as ([`Python::end_cut_block`]).
const CUT_SHORT: &str = "the log ends before this failure's exception (cut short)";

/// The project's frame a RecursionError's traceback repeats most ([`PlaceCounts::recursive_call`]).
/// Mutual recursion repeats two frames as often: the outer is taken.
fn recursive_call<'f>(frames: &'f [Frame], sink: &Sink<'_>) -> Option<&'f Frame> {
    let mut calls = PlaceCounts::default();
    for frame in frames.iter().filter(|f| !f.is_test && sink.is_project_file(&f.file)) {
        calls.count((frame.file.clone(), frame.line));
    }
    let (file, line) = calls.recursive_call()?;
    frames.iter().find(|f| f.line == *line && f.file == *file)
}

/// Most frames one block keeps (a RecursionError prints a thousand).
const MAX_FRAMES: usize = 64;

#[derive(Default)]
pub(crate) struct Python {
    section: Section,
    block: Option<Block>,
    /// Whether the current pytest section had `___ name ___` headers (not `--tb=line`).
    section_has_headers: bool,
    /// Reports whose pytest short test name must become a node id.
    pending_names: Vec<(usize, String)>,
    /// `--tb=line` failures, reported at the end with the names of the short test summary, which
    /// lists the failures in the same order.
    tb_line: TbLineFailures,
    /// The short test summary's failed tests in log order (the first [`super::MAX_TESTS`]), and
    /// how many it listed.
    summary_failed: Vec<String>,
    summary_failed_count: usize,
    /// Python said the next traceback is chained to the last one ("During handling of the above
    /// exception"): it belongs to the same test.
    chained: bool,
    /// What a doctest example raised, from its `UNEXPECTED EXCEPTION: TypeError('...')` line,
    /// until the `--tb=line` failure line that names only doctest's `UnexpectedException`.
    doctest_raised: Option<(String, String)>,
    /// Under `--tb=line`, the deepest project frame of a traceback printed as an exception's text
    /// (doctest's after its `UNEXPECTED EXCEPTION:` line, a worker's in a `RemoteTraceback`):
    /// where the exception was raised, which the failure line (the example's own line, the
    /// pool's code that raised it again) does not say. Reported unnamed if no failure line takes
    /// it (a log cut short, a path the line cannot be read from): the traceback shows the bug.
    printed_place: Option<PrintedPlace>,
    /// What a doctest example printed and what it should have, for the failure line after them.
    doctest_output: DoctestOutput,
    /// Inside an exception group's boxed traceback: the column of its outermost box's edge.
    exception_group: Option<usize>,
    /// What each sub-exception of the group read last starts from: the group's frames (a
    /// sub-exception raised with no traceback of its own was raised where the group was) and its
    /// test.
    group_start: Option<GroupStart>,
    /// The current block is a sub-exception's that began with the group's frames: a group ending
    /// before it found its exception leaves nothing to report.
    block_from_group: bool,
    /// The indentation of a traceback printed indented (behave prints a failed step's six spaces
    /// in, under the step): what its `Traceback` line had is taken off each of its lines, which
    /// then read as those of a traceback at column 0 (its exception line among them).
    traceback_indent: usize,
    /// Inside `python -m doctest`'s `Expected:` block, up to its `Got:`: a traceback there is what
    /// the example should have raised, not one that happened.
    in_doctest_expected: bool,
    /// Inside pytest-timeout's dump of the threads' stacks ([`TimeoutDump`]).
    timeout: Option<TimeoutDump>,
    /// Inside faulthandler's dump of the threads' stacks ([`FaultDump`]).
    fault: Option<FaultDump>,
    /// pytest's `!!! KeyboardInterrupt !!!` banner was the last line: the next names where the
    /// interrupt landed (`path:227: KeyboardInterrupt: …`).
    interrupt_due: bool,
}

/// pytest-timeout's `--timeout-method=thread` dump: a `+++ Timeout +++` banner (after the
/// progress dots of the test that hung, on their line), each thread's stack under its
/// `~~~ Stack of MainThread (1398…) ~~~` header, the banner again, and the run dies. The test
/// ran in the main thread: where its stack ends in the project is where the test hung.
#[derive(Default)]
struct TimeoutDump {
    /// The main thread's stack, once read.
    main: Option<Block>,
    /// The stack being read is the main thread's (its frames go to [`Python::block`]).
    reading_main: bool,
    /// A thread's header has been read (right after the banner, nothing else is the dump's).
    headed: bool,
}

/// The exception of an interrupted run, in pytest's banner and on the line after it.
const KEYBOARD_INTERRUPT: &str = "KeyboardInterrupt";

/// What the timed-out test is reported with: pytest-timeout's banner says no more.
const TIMEOUT_MESSAGE: &str = "the test ran past pytest-timeout's limit (its stack when it was stopped)";

/// CPython's faulthandler dump, which a crash prints (`Fatal Python error: Segmentation fault`,
/// also after a test's progress dots), and pytest's `faulthandler_timeout` or
/// `faulthandler.dump_traceback_later` print when a test runs too long (`Timeout (0:00:05)!`):
///
/// ```text
/// Fatal Python error: Segmentation fault
///
/// Current thread 0x00007f03d1de7b80 (most recent call first):
///   File "/w/buffers.py", line 9 in byte_at
///   File "/w/tests/test_buffers.py", line 9 in test_reads_the_last_byte
/// ```
///
/// Each thread's stack, innermost frame first (the reverse of a traceback), frames with no comma
/// before `in`. The crashed thread is the `Current thread`; a timeout names none, and the stack
/// that runs a test file is the test's.
struct FaultDump {
    /// What is reported: the exception's kind and message, as a traceback's would be.
    exception: (String, String),
    /// The stack being read, innermost frame first, whether it is the current thread's, and the
    /// function of its outermost frame in a test file (the test's).
    reading: Vec<Frame>,
    reading_current: bool,
    reading_test: Option<String>,
    /// The stack chosen so far ([`FaultDump::choose`]), with its test.
    chosen: Option<(Vec<Frame>, Option<String>, StackWeight)>,
    /// The file and function of the innermost project frame of the stack being read: where
    /// that thread is blocked, if the dump is of a hang.
    reading_top: Option<(String, String)>,
    /// Where the threads are blocked in the project's code (not in a test file), and how many
    /// at each place ([`PlaceCounts`]).
    blocked_at: PlaceCounts,
    /// The first call, further out on a stack, of the function that thread is blocked in: it
    /// entered the function again while it held what the inner call waits for (a lock that is
    /// not re-entrant).
    reentered_at: Option<(String, u32)>,
}

/// How likely a dumped stack is the failure's: the current thread's (it crashed), else one that
/// runs a test, else any; among equals the later (the main thread is dumped last).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum StackWeight {
    Other,
    RunsATest,
    Current,
}

/// What an exception group's sub-exceptions start from.
struct GroupStart {
    frames: Vec<Frame>,
    test: Option<String>,
    test_is_final: bool,
}

/// How Python (3.11 on) prints an exception group, which `asyncio.TaskGroup`, anyio and trio
/// raise: its traceback and each sub-exception's in boxes, every line behind a `| ` edge, nested
/// groups one box deeper, sub-exceptions parted by `+---- 2 ----` rules:
///
/// ```text
///   + Exception Group Traceback (most recent call last):
///   |   File "app/tasks.py", line 10, in fetch_all
///   | ExceptionGroup: unhandled errors in a TaskGroup (1 sub-exception)
///   +-+---------------- 1 ----------------
///     | Traceback (most recent call last):
///     |   File "app/tasks.py", line 6, in fetch
///     | KeyError: 'pear'
///     +------------------------------------
/// ```
const EXCEPTION_GROUP_TRACEBACK: &str = "+ Exception Group Traceback (most recent call last):";

/// A line of an exception group's boxes, read without them.
enum GroupLine<'l> {
    /// The text behind the box's edge, as a plain traceback prints it.
    Text(&'l str),
    /// A rule between sub-exceptions, or a box's end: nothing to read.
    Rule,
}

/// The group's traceback and a nested group's read as a traceback.
const TRACEBACK: &str = "Traceback (most recent call last):";

impl Python {
    /// Whether [`Python::line`] can do anything with the line: inside a block, a pytest section or
    /// an exception group's boxes every line may belong to it; outside, only a line that starts
    /// one, names a test's outcome, or places a syntax error does.
    #[inline]
    pub fn wants(&self, look: &Look<'_>) -> bool {
        if self.block.is_some()
            || self.section != Section::None
            || self.exception_group.is_some()
            || self.timeout.is_some()
            || self.fault.is_some()
            || self.interrupt_due
        {
            return true;
        }
        let Some(first) = look.first else {
            return false;
        };
        let line = look.line;
        let starts_something = match first {
            // A section's or unittest's rule.
            b'=' => look.last == b'=',
            // unittest's summary.
            b'R' => line.starts_with("Ran "),
            b'I' => line.starts_with(CONFTEST_IMPORT_ERROR),
            // unittest's headers, pytest's short test summary, a frame at column 0.
            b'F' => line.starts_with("FAIL") || line.starts_with("File \""),
            b'E' => line.starts_with("ERROR") || line == DOCTEST_EXPECTED,
            // The end of a doctest's `Expected:` block.
            b'G' => line == DOCTEST_GOT,
            b'P' => line.starts_with("PASSED "),
            b'X' => line.starts_with("XFAIL ") || line.starts_with("XPASS "),
            // Tracebacks, chained ones too.
            b'D' => line.starts_with("During handling of the above exception"),
            // pytest's banner when a run was interrupted.
            b'!' => line.starts_with("!!!"),
            // An exception group's boxed traceback, where nothing indents it.
            b'+' => line.starts_with(EXCEPTION_GROUP_TRACEBACK),
            b'T' => line.starts_with("Traceback (most recent call last)") || line.starts_with("The above exception"),
            // A character that may be whitespace, or start a word.
            0x80.. => true,
            _ => false,
        };
        starts_something
            || look.last == b')' && look.may_hold(Needle::LineComma)
            || look.last == b'+' && is_timeout_banner(line)
            || look.last == b'!' && line.ends_with(")!")
            || look.may_hold(Needle::FatalPython)
            || is_ascii_space(first) && {
                let trimmed = look.trimmed();
                trimmed.starts_with("File \"")
                    || trimmed.as_bytes().first() == Some(&b'+') && trimmed.starts_with(EXCEPTION_GROUP_TRACEBACK)
                    // A traceback printed indented (behave's, under a failed step).
                    || trimmed.as_bytes().first() == Some(&b'T') && trimmed.starts_with(TRACEBACK)
            }
            // pytest `-v` and unittest `-v` outcomes.
            || look.holds_double_colon()
            || starts_with_word_and_paren(line) && has(line, " ... ")
    }

    pub fn line(&mut self, line: &str, sink: &mut Sink<'_>) {
        let in_group = self.exception_group.is_some();
        match self.group_line(line) {
            Some(GroupLine::Text(text)) => self.read(text, sink),
            Some(GroupLine::Rule) => self.next_sub_exception(sink),
            None => {
                if in_group {
                    self.end_group();
                }
                let line = self.without_traceback_indent(line);
                self.read(line, sink);
            }
        }
    }

    /// The line without the indentation of the traceback it belongs to
    /// ([`Python::traceback_indent`]). A `Traceback` line sets the indentation (none at column 0);
    /// it holds until the block is reported, and a line less indented is read as it is.
    fn without_traceback_indent<'l>(&mut self, line: &'l str) -> &'l str {
        // In pytest's failures an indented `Traceback` line is source it lists (a docstring's
        // doctest), not a traceback: pytest prints those at column 0, or under `E`.
        if line == DOCTEST_EXPECTED || line == DOCTEST_GOT {
            self.in_doctest_expected = line == DOCTEST_EXPECTED;
        }
        if self.section == Section::Pytest || self.in_doctest_expected {
            self.traceback_indent = 0;
            return line;
        }
        if matches!(line.as_bytes().first(), Some(b' ' | b'T')) {
            let text = line.trim_start_matches(' ');
            if text.starts_with(TRACEBACK) {
                self.traceback_indent = line.len() - text.len();
                return text;
            }
        }
        if self.traceback_indent == 0 {
            return line;
        }
        if self.block.is_none() {
            self.traceback_indent = 0;
            return line;
        }
        match line.as_bytes().get(..self.traceback_indent) {
            Some(indent) if indent.iter().all(|&b| b == b' ') => &line[self.traceback_indent..],
            _ => line,
        }
    }

    /// A rule between an exception group's sub-exceptions (or its boxes' end): the sub-exception
    /// read so far is reported, and the next one starts from the group's frames and test.
    fn next_sub_exception(&mut self, sink: &mut Sink<'_>) {
        if self.block.as_ref().is_some_and(|b| b.exception.is_some()) {
            self.flush(sink);
        }
        if self.block.is_none()
            && let Some(start) = self.group_start.as_ref()
        {
            self.block = Some(Block {
                test: start.test.clone(),
                test_is_final: start.test_is_final,
                frames: start.frames.clone(),
                ends_at_exception: true,
                ..Block::default()
            });
            self.block_from_group = true;
        }
        // A sub-exception's own traceback belongs to the same test.
        self.chained = true;
    }

    /// The group's boxes ended: a sub-exception begun from the group's frames that found no
    /// exception is nothing.
    fn end_group(&mut self) {
        if std::mem::take(&mut self.block_from_group) && self.block.as_ref().is_some_and(|b| b.exception.is_none()) {
            self.block = None;
        }
        self.group_start = None;
        self.chained = false;
    }

    /// An exception group's line without its box ([`EXCEPTION_GROUP_TRACEBACK`]), `None` for a
    /// line outside any group. A group's traceback reads as a traceback; its own exception
    /// (`ExceptionGroup: ... (2 sub-exceptions)`) is not the bug, its sub-exceptions are.
    fn group_line<'l>(&mut self, line: &'l str) -> Option<GroupLine<'l>> {
        // Outside a group, only a line starting with a space or `+` can open one.
        if self.exception_group.is_none() && !matches!(line.as_bytes().first(), Some(b' ' | b'+')) {
            return None;
        }
        let indent = line.bytes().take_while(|&b| b == b' ').count();
        let rest = &line[indent..];
        let Some(edge) = self.exception_group else {
            if rest.starts_with(EXCEPTION_GROUP_TRACEBACK) {
                self.exception_group = Some(indent);
                return Some(GroupLine::Text(TRACEBACK));
            }
            return None;
        };
        if indent >= edge {
            if let Some(text) = rest.strip_prefix("| ").or_else(|| (rest == "|").then_some("")) {
                // A nested group's traceback opens a box one deeper, behind this one's edge.
                let text = match text.strip_prefix("Exception Group Traceback (most recent call last):") {
                    Some("") => TRACEBACK,
                    _ => text,
                };
                return Some(GroupLine::Text(text));
            }
            if rest.starts_with('+') && rest.bytes().all(|b| matches!(b, b'+' | b'-' | b' ' | b'0'..=b'9')) {
                return Some(GroupLine::Rule);
            }
        }
        // Anything else ends the group's boxes.
        self.exception_group = None;
        None
    }

    fn read(&mut self, line: &str, sink: &mut Sink<'_>) {
        let Some(&first) = line.as_bytes().first() else {
            return;
        };
        if std::mem::take(&mut self.interrupt_due)
            && let Some((file, n, what)) = split_location(line)
            && what.trim_start().starts_with(KEYBOARD_INTERRUPT)
            && sink.is_project_file(file)
        {
            // Where the code was when it was interrupted (a signal, or raised by the code):
            // a place to look at, less sure than a failure's.
            let mut finding = python_finding(file, n, KEYBOARD_INTERRUPT, "the run was interrupted here", None);
            finding.confidence = 0.7;
            sink.report(finding);
            return;
        }
        if first == b'!' && line.starts_with("!!!") && line.contains(" KeyboardInterrupt") {
            self.flush(sink);
            self.interrupt_due = true;
            return;
        }
        if self.fault.is_some() {
            if self.fault_dump_line(line, sink) {
                return;
            }
            // Text that is none of the dump's: it has ended (the process died, or a cut log
            // and another step), and the line is read as any other.
            self.report_fault_dump(sink);
        }
        // Most lines are ruled out by the needle or the last byte before any search.
        if (sink.may_hold(Needle::FatalPython) || line.ends_with(")!"))
            && let Some(exception) = fault_dump_start(line)
        {
            self.flush(sink);
            self.fault = Some(FaultDump {
                exception,
                reading: Vec::new(),
                reading_current: false,
                reading_test: None,
                chosen: None,
                reading_top: None,
                blocked_at: PlaceCounts::default(),
                reentered_at: None,
            });
            return;
        }
        if line.ends_with('+') && is_timeout_banner(line) {
            self.timeout_banner(sink);
            return;
        }
        if let Some(dump) = &self.timeout
            && !is_timeout_dump_line(line, dump.headed)
        {
            // Text that is none of the dump's: the dump ended without its closing banner (a cut
            // log, then another step's output, which is read as any other).
            self.timeout_banner(sink);
        }
        if let Some(dump) = self.timeout.as_mut() {
            if first == b'~'
                && let Some(thread) = stack_of(line)
            {
                if dump.reading_main {
                    dump.main = self.block.take();
                }
                dump.headed = true;
                dump.reading_main = thread == "MainThread";
                self.block = dump.reading_main.then(Block::default);
                return;
            }
            if !dump.reading_main {
                // Another thread's stack: not the test's.
                return;
            }
        }

        if first == b'=' && line.len() > 10 && line.ends_with('=') {
            if line.contains(" test session starts ") {
                // Another run begins: a failure of the last one still open was cut short.
                self.end_cut_block();
            }
            self.flush(sink);
            self.report_printed_place(sink);
            self.doctest_raised = None;
            let title = line.trim_matches('=').trim();
            self.section = if title == "FAILURES" || title == "ERRORS" {
                self.section_has_headers = false;
                Section::Pytest
            } else {
                Section::None
            };
            return;
        }
        if first == b'=' && line.starts_with("======") && line.bytes().all(|b| b == b'=') {
            // unittest's separator before FAIL:/ERROR:.
            self.flush(sink);
            return;
        }
        if first == b'R' && line.starts_with("Ran ") && line.contains(" test") {
            // unittest's summary: its last failure block is over.
            self.flush(sink);
            self.section = Section::None;
        }

        if self.section == Section::Pytest
            && first == b'_'
            && let Some(title) = section_title(line)
            && !title.bytes().all(|b| b == b'_' || b == b' ')
        {
            self.flush(sink);
            self.section_has_headers = true;
            let test = section_test(title);
            self.block = Some(Block {
                of_a_test: test.is_some(),
                test,
                part_start: true,
                ..Block::default()
            });
            return;
        }

        if first == b'I' && line.starts_with(CONFTEST_IMPORT_ERROR) {
            // pytest could not import a conftest.py: no test ran, and what follows is the import's
            // short traceback and its error under `E`, as a collection error's.
            self.flush(sink);
            self.section = Section::Pytest;
            self.section_has_headers = true;
            self.block = Some(Block {
                part_start: true,
                ..Block::default()
            });
            return;
        }

        if (line.starts_with("FAIL: ") || line.starts_with("ERROR: "))
            && let Some(c) = UNITTEST_HEADER.captures(line)
        {
            self.flush(sink);
            let id = if c[3].ends_with(&format!(".{}", &c[2])) {
                c[3].to_owned()
            } else {
                format!("{}.{}", &c[3], &c[2])
            };
            let outcome = if &c[1] == "FAIL" {
                TestOutcome::Failed
            } else {
                TestOutcome::Error
            };
            sink.test(&id, outcome);
            // A subtest's failure names its parameters after the test (`(i=3)`, `[msg] (i=3)`):
            // each is a failure of its own, as pytest's SUBFAILED sections are.
            let subtest = line[c.get(0).map_or(line.len(), |m| m.end())..].trim();
            let test = if subtest.starts_with('(') || subtest.starts_with('[') {
                format!("{id} {subtest}")
            } else {
                id
            };
            self.block = Some(Block {
                test: Some(test),
                test_is_final: true,
                ..Block::default()
            });
            return;
        }

        // A test's outcome line is nothing else: most lines of a long log are such.
        if self.section == Section::None && self.outcomes(line, sink) {
            return;
        }

        if line.ends_with(')')
            && sink.may_hold(Needle::LineComma)
            && has(line, ", line ")
            && let Some(c) = INLINE_SYNTAX.captures(line)
        {
            let message = format!("{}: {} ({}, line {})", &c[1], &c[2], &c[3], &c[4]);
            let error_type = if &c[1] == "SyntaxError" {
                ErrorType::Syntax
            } else {
                ErrorType::Indentation
            };
            sink.report(Finding {
                file: &c[3],
                line: c[4].parse().unwrap_or(1),
                error_type,
                message: Cow::Owned(message),
                test: None,
                confidence: 0.9,
                rank: Rank::Error,
                diagnostic: false,
            });
        }

        if line.starts_with("During handling of the above exception")
            || line.starts_with("The above exception was the direct cause")
        {
            self.chained = true;
            if let Some(block) = self.block.as_mut() {
                block.part_start = true;
                if line.starts_with("The above") {
                    block.cause_end = Some(block.frames.len());
                    block.cause_exception.clone_from(&block.exception);
                }
                if !block.ends_at_exception {
                    block.later_part = Some(block.frames.len());
                }
            }
            return;
        }
        if line.starts_with("Traceback (most recent call last)") {
            self.new_traceback(sink);
            if self.block.is_none() {
                self.block = Some(Block {
                    ends_at_exception: true,
                    ..Block::default()
                });
            }
            return;
        }
        // Outside any block and section, what is left is a traceback's `File "..."` frame: a
        // line that starts with neither whitespace nor `F` cannot be one.
        if self.block.is_none()
            && self.section == Section::None
            && first != b'F'
            && first.is_ascii()
            && !(first == b' ' || (0x09..=0x0d).contains(&first))
        {
            return;
        }

        // pytest's `E   ` lines carry the exception, and sometimes a whole nested traceback.
        let (body, from_e_line) = match line.strip_prefix("E ") {
            Some(rest) if self.block.is_some() => (rest.trim_start(), true),
            _ => (line, false),
        };

        if let Some((file, n, function)) = file_frame(body) {
            if !from_e_line {
                self.new_traceback(sink);
            }
            let block = self.block.get_or_insert_with(|| Block {
                ends_at_exception: true,
                ..Block::default()
            });
            if block.frames.len() < MAX_FRAMES {
                // pytest's `--tb=native` starts the traceback in pytest's own code: a test's first
                // frame in the project, in a test file, is where it began (the test, or the
                // fixture that failed at setup), as the first entry of pytest's own traceback is
                // in the other modes.
                let first_in_project = block.part_start && sink.is_project_file(file);
                block.part_start &= !first_in_project;
                let is_test = function.is_some_and(|f| block.test.as_deref().is_some_and(|t| test_function(t) == f))
                    || block.of_a_test && first_in_project && sink.is_test_file(file);
                block.frames.push(Frame {
                    file: file.to_owned(),
                    line: n.parse().unwrap_or(1),
                    syntax_location: function.is_none(),
                    is_test,
                });
            }
            block.nested |= from_e_line;
            block.source = None;
            block.awaiting_source = true;
            return;
        }

        if self.section == Section::Pytest && !from_e_line && self.doctest_output.line(line) {
            return;
        }

        // pytest --tb=line: one line per failure, `path:N: ExcName: message`, no headers; a failed
        // assertion's line is `path:N: assert ...` (pytest takes "AssertionError: " off).
        // Anything else (another tool's traceback after a cut-short pytest log) is read as usual.
        if self.section == Section::Pytest && !self.section_has_headers && first != b' ' && !from_e_line {
            if first == b'U'
                && let Some(raised) = doctest_unexpected(line)
            {
                // Where the last example raised is no answer for this one: its failure line never
                // came, so it is reported as its traceback showed it.
                self.report_printed_place(sink);
                self.doctest_raised = Some(raised);
                return;
            }
            if let Some((file, n, rest)) = split_location(line)
                && let (true, Some((kind, message))) =
                    (file.ends_with(".py") || doctest_failure(rest), tb_line_failure(rest))
            {
                // A doctest's failure names doctest's wrapper; what the example raised was said
                // on its `UNEXPECTED EXCEPTION:` line, and where, by the traceback after it.
                let raised = self.doctest_raised.take().filter(|_| kind == "UnexpectedException");
                // The printed traceback's place when the failure line is not the project's (a
                // worker's exception raised again by the pool): the project's place is deeper.
                // Else it is reported as it is.
                if raised.is_none() && sink.is_project_file(file) {
                    self.report_printed_place(sink);
                }
                let place = self.printed_place.take();
                let (file, n) = place.as_ref().map_or((file, n), |p| (p.file.as_str(), p.line));
                let (kind, message) = match raised {
                    Some(raised) => raised,
                    None if kind == "DocTestFailure" => (kind.to_owned(), self.doctest_output.take()),
                    None => (kind.to_owned(), message.unwrap_or("").to_owned()),
                };
                self.tb_line.push(file, n, kind, message);
                return;
            }
        }

        let Some(block) = self.block.as_mut() else {
            return;
        };

        if block.awaiting_source && (line.starts_with("    ") || from_e_line) && !body.is_empty() {
            block.awaiting_source = false;
            block.source = Some(body.trim().to_owned());
            return;
        }

        // Where an exception must stand — an `E` line, or right after a traceback's last frame and
        // its source line — any class name is one; elsewhere only the usual names are.
        let must_be_exception = from_e_line || (!block.frames.is_empty() && block.source.is_some());
        let nested_line = block.nested && line.starts_with("    ");
        if (from_e_line || !line.starts_with(' ') || nested_line)
            && (block.exception.is_none() || block.later_part.is_some())
            && let Some((kind, message)) = exception(body.trim(), must_be_exception)
        {
            let later_part = block.later_part.take();
            if block.exception.is_some()
                && !later_part.is_some_and(|start| block.frames[start..].iter().any(|f| sink.is_project_file(&f.file)))
            {
                return;
            }
            if is_group_of_sub_exceptions(kind, message) {
                // The sub-exceptions follow: they are the failure, of the same test, raised
                // from the group's frames on.
                self.group_start = Some(GroupStart {
                    frames: block.frames.clone(),
                    test: block.test.clone(),
                    test_is_final: block.test_is_final,
                });
                self.chained = true;
                return;
            }
            block.exception = Some((kind.to_owned(), message.unwrap_or("").to_owned()));
            if block.ends_at_exception && !from_e_line {
                self.flush(sink);
            }
            return;
        }

        if from_e_line && block.exception.is_none() && block.assertion.is_none() && body.starts_with("assert ") {
            block.assertion = Some(body.trim_end().to_owned());
            return;
        }

        // pytest's own frame lines: `path:N: in func`, `path:N: ExcName[: msg]`, `path:N: `.
        if self.section == Section::Pytest
            && !from_e_line
            && first != b' '
            && let Some((file, n, rest)) = split_location(line)
            && (file.ends_with(".py") || doctest_failure(rest))
        {
            // A doctest example that raised: the example's line is the place only when the
            // traceback doctest printed holds no frame of the project's (which is deeper).
            let raised_in_project =
                rest.trim_end() == "UnexpectedException" && block.frames.iter().any(|f| sink.is_project_file(&f.file));
            if block.frames.len() < MAX_FRAMES && !raised_in_project {
                let is_test = (std::mem::take(&mut block.part_start) && block.of_a_test)
                    || rest
                        .strip_prefix("in ")
                        .is_some_and(|f| block.test.as_deref().is_some_and(|t| test_function(t) == f.trim_end()));
                block.frames.push(Frame {
                    file: file.to_owned(),
                    line: n,
                    syntax_location: false,
                    is_test,
                });
            }
            if block.exception.is_none()
                && let Some((kind, message)) = exception(rest, true)
            {
                let message = match message {
                    None if kind == "DocTestFailure" => self.doctest_output.take(),
                    _ => message.unwrap_or("").to_owned(),
                };
                block.exception = Some((kind.to_owned(), message));
            }
            block.awaiting_source = rest.starts_with("in ");
        }
    }

    /// A line inside faulthandler's dump: a thread's header, one of its frames, or an indented
    /// line of no frame (`  <no Python frame>`, `  ...`, Python 3.14's C stack). Whether it was
    /// the dump's. A traceback's `File` line is not (a cut dump, then another step's traceback).
    fn fault_dump_line(&mut self, line: &str, sink: &Sink<'_>) -> bool {
        let dump = self.fault.as_mut().expect("inside a faulthandler dump");
        if let Some(current) = fault_thread_header(line) {
            dump.choose();
            dump.reading_current = current;
            return true;
        }
        if !line.starts_with(' ') {
            return false;
        }
        match fault_frame(line) {
            Some((file, n, function)) => {
                if sink.is_test_file(file) {
                    dump.reading_test = Some(function.to_owned());
                }
                dump.blocked_frame(file, n, function, sink);
                if dump.reading.len() < MAX_FRAMES {
                    dump.reading.push(Frame {
                        file: file.to_owned(),
                        line: n,
                        syntax_location: false,
                        is_test: false,
                    });
                }
                true
            }
            None => !line.trim_start().starts_with("File \""),
        }
    }

    /// faulthandler's dump has ended: the chosen stack is reported as a traceback would be, at its
    /// deepest frame in the project, with the test's frame (its first in a test file).
    fn report_fault_dump(&mut self, sink: &mut Sink<'_>) {
        let Some(mut dump) = self.fault.take() else {
            return;
        };
        dump.choose();
        let hang = dump.hang_place();
        let Some((mut frames, test, _)) = dump.chosen else {
            return;
        };
        frames.reverse();
        if let Some(test) = frames.iter_mut().find(|f| sink.is_test_file(&f.file)) {
            test.is_test = true;
        }
        self.flush(sink);
        let site = frames
            .iter()
            .rev()
            .find(|f| sink.is_project_file(&f.file))
            .map(|f| (f.file.clone(), f.line));
        let (kind, message) = dump.exception;
        self.block = Some(Block {
            frames,
            exception: Some((kind.clone(), message.clone())),
            // The test function's name, resolved to the id pytest printed for it, if any.
            test: test.clone(),
            ..Block::default()
        });
        self.flush(sink);
        // A hang: where the other threads wait is a place to look at after the test's own.
        if let Some(((file, n), what)) = hang.filter(|(place, _)| Some(place) != site.as_ref()) {
            let message = format!("{message} ({what})");
            let mut finding = python_finding(&file, n, &kind, &message, test.as_deref());
            finding.confidence = 0.7;
            sink.report(finding);
        }
    }

    /// pytest-timeout's banner: it opens the dump of the threads' stacks, or closes it, when
    /// the main thread's stack is reported as the test's failure.
    fn timeout_banner(&mut self, sink: &mut Sink<'_>) {
        let Some(dump) = self.timeout.take() else {
            self.flush(sink);
            self.timeout = Some(TimeoutDump::default());
            return;
        };
        let main = if dump.reading_main {
            self.block.take()
        } else {
            dump.main
        };
        self.block = main.map(|mut block| {
            block.exception = Some(("Timeout".to_owned(), TIMEOUT_MESSAGE.to_owned()));
            // The stack starts in pytest: its first frame in a test file is the test's own.
            if let Some(test) = block.frames.iter_mut().find(|f| sink.is_test_file(&f.file)) {
                test.is_test = true;
            }
            block
        });
        self.flush(sink);
    }

    /// A traceback begins: a block that already has its exception is finished (a unittest
    /// failure, a pytest failure cut short, then another tool's traceback). A chained traceback
    /// keeps the test of the one it is chained to.
    fn new_traceback(&mut self, sink: &mut Sink<'_>) {
        let chained = std::mem::take(&mut self.chained);
        let Some(block) = self.block.as_ref().filter(|b| b.exception.is_some()) else {
            return;
        };
        let (test, test_is_final) = if chained {
            (block.test.clone(), block.test_is_final)
        } else {
            (None, false)
        };
        self.flush(sink);
        self.block = Some(Block {
            test,
            test_is_final,
            ends_at_exception: true,
            ..Block::default()
        });
    }

    /// pytest `-v` lines and the short test summary; unittest `-v` lines.
    /// Records the test outcome `line` names, if it names one; whether it did.
    fn outcomes(&mut self, line: &str, sink: &mut Sink<'_>) -> bool {
        let first = line.as_bytes()[0];
        if matches!(first, b'P' | b'F' | b'E' | b'X')
            && let Some((word, name)) = summary_outcome(line)
            && (name.contains("::") || name.ends_with(".py"))
        {
            let outcome = match word {
                "PASSED" | "XFAIL" | "XPASS" => TestOutcome::Passed,
                "FAILED" => TestOutcome::Failed,
                _ => TestOutcome::Error,
            };
            if outcome == TestOutcome::Failed {
                self.summary_failed_count += 1;
                if self.summary_failed.len() < super::MAX_TESTS {
                    self.summary_failed.push(name.to_owned());
                }
            }
            sink.test(name, outcome);
            // `ERROR tests/a.py - SyntaxError: ... (calc.py, line 3)` places a syntax error too.
            return !line.ends_with(')');
        }
        if let Some((id, outcome)) = verbose_outcome(line) {
            sink.test(id, outcome);
            return true;
        }
        if has(line, "::")
            && has(line, " [")
            && let Some(c) = VERBOSE_OUTCOME.captures(line)
        {
            let outcome = match &c[2] {
                "PASSED" | "XFAIL" | "XPASS" => TestOutcome::Passed,
                "FAILED" => TestOutcome::Failed,
                "SKIPPED" => TestOutcome::Skipped,
                _ => TestOutcome::Error,
            };
            sink.test(&c[1], outcome);
            return true;
        }
        // The regex's anchor, `word (`, and its ` ... `: a `cargo test` line has only the latter.
        if starts_with_word_and_paren(line)
            && has(line, " ... ")
            && let Some(c) = UNITTEST_VERBOSE.captures(line)
        {
            let id = if c[2].ends_with(&format!(".{}", &c[1])) {
                c[2].to_owned()
            } else {
                format!("{}.{}", &c[2], &c[1])
            };
            let outcome = match &c[3] {
                "ok" | "expected failure" => TestOutcome::Passed,
                "FAIL" | "unexpected success" => TestOutcome::Failed,
                "ERROR" => TestOutcome::Error,
                _ => TestOutcome::Skipped,
            };
            sink.test(&id, outcome);
            return true;
        }
        false
    }

    fn flush(&mut self, sink: &mut Sink<'_>) {
        // A block's end (a header, a rule, another traceback): doctest's report of a wrong output
        // read before it belongs to no failure after it.
        self.doctest_output = DoctestOutput::default();
        self.block_from_group = false;
        let Some(block) = self.block.take() else {
            return;
        };
        let assertion = block
            .assertion
            .as_ref()
            .map(|message| ("AssertionError".to_owned(), message.clone()));
        // pytest's long traceback ends a failed `assert` with a bare `path:N: AssertionError`: what
        // failed is the `E   assert ...` line above it.
        let exception = match (&block.exception, &assertion) {
            (Some((kind, message)), Some(assertion)) if kind == "AssertionError" && message.is_empty() => {
                Some(assertion)
            }
            (exception, assertion) => exception.as_ref().or(assertion.as_ref()),
        };
        let Some((kind, message)) = exception else {
            return;
        };
        // The deepest frame in the project; for a SyntaxError the frame that names its location.
        let syntax = matches!(kind.as_str(), "SyntaxError" | "IndentationError" | "TabError");
        let mut candidates = block.frames.iter().rev().filter(|f| sink.is_project_file(&f.file));
        let frame = if syntax {
            block
                .frames
                .iter()
                .rev()
                .find(|f| f.syntax_location && sink.is_project_file(&f.file))
                .or_else(|| candidates.next())
        } else if kind == "RecursionError" {
            // Where the limit was hit is incidental: the call that repeats is the recursion.
            recursive_call(&block.frames, sink).or_else(|| candidates.next())
        } else {
            candidates.next()
        };
        let Some(frame) = frame else {
            return;
        };
        // Raised outside the project from a cause raised in it (`multiprocessing`'s pool raising
        // again what its worker raised, the worker's traceback printed as the cause; a library
        // wrapping what the project's callback raised): the cause's deepest project frame is the
        // place.
        let end = block.cause_end.unwrap_or(0).min(block.frames.len());
        let (cause, last_part) = block.frames.split_at(end);
        let cause_frame = cause.iter().rev().find(|f| !f.is_test && sink.is_project_file(&f.file));
        let raised_outside = last_part.last().is_some_and(|f| !sink.is_project_file(&f.file));
        let (frame, cause_frame) = match cause_frame {
            Some(cause_frame) if !syntax && last_part.iter().any(|f| std::ptr::eq(f, frame)) => {
                if raised_outside {
                    (cause_frame, None)
                } else {
                    // Raised in the project from a cause raised in it too (`raise ConfigError(...)
                    // from e`): the cause's place is a third place to look at.
                    (frame, Some(cause_frame))
                }
            }
            _ => (frame, None),
        };
        if self.section == Section::Pytest && !self.section_has_headers {
            // A traceback printed under `--tb=line`: its place goes to the failure line that
            // follows, which names the test.
            self.report_printed_place(sink);
            self.printed_place = Some(PrintedPlace {
                file: frame.file.clone(),
                line: frame.line,
                kind: kind.clone(),
                message: message.clone(),
            });
            return;
        }
        let test = block.test.as_deref();
        // Raised in the code the test calls: the test's own line, the call that led there, is a
        // second place to look at (and shows the healer what the test expected).
        let raised_at_frame = |f: &Frame| (f.file.as_str(), f.line) == (frame.file.as_str(), frame.line);
        let test_frame = (!syntax)
            .then(|| {
                block
                    .frames
                    .iter()
                    .rev()
                    .find(|f| f.is_test && !raised_at_frame(f) && sink.is_project_file(&f.file))
            })
            .flatten();
        let mut finding = python_finding(&frame.file, frame.line, kind, message, test);
        if kind == CUT_SHORT {
            finding.confidence = 0.5;
        }
        let (raised_at, called_at) = sink.report_raised(finding, test_frame.map(|f| (f.file.as_str(), f.line)));
        let cause_at = cause_frame
            .filter(|c| !raised_at_frame(c) && test_frame.is_none_or(|t| (&t.file, t.line) != (&c.file, c.line)))
            .and_then(|c| {
                let (cause_kind, cause_message) =
                    block.cause_exception.as_ref().map_or((kind, message), |(k, m)| (k, m));
                let mut finding = python_finding(&c.file, c.line, cause_kind, cause_message, test);
                finding.confidence = 0.7;
                sink.report(finding)
            });
        if !block.test_is_final
            && let Some(short) = block.test
        {
            for i in [raised_at, called_at, cause_at].into_iter().flatten() {
                self.pending_names.push((i, short.clone()));
            }
        }
    }

    /// A printed traceback kept for a failure line that did not come: reported as it is.
    fn report_printed_place(&mut self, sink: &mut Sink<'_>) {
        if let Some(p) = self.printed_place.take() {
            sink.report(python_finding(&p.file, p.line, &p.kind, &p.message, None));
        }
    }

    /// A pytest failure whose traceback was cut short before its exception (the log ends, or
    /// another run begins): the frames it showed are still where to look, less surely.
    fn end_cut_block(&mut self) {
        if let Some(block) = self
            .block
            .as_mut()
            .filter(|b| !b.ends_at_exception && b.exception.is_none() && b.assertion.is_none() && !b.frames.is_empty())
        {
            block.exception = Some((CUT_SHORT.to_owned(), String::new()));
        }
    }

    pub fn finish(&mut self, sink: &mut Sink<'_>) {
        self.report_fault_dump(sink);
        self.end_cut_block();
        self.flush(sink);
        self.report_printed_place(sink);
        // pytest names tests in section headers by their short name; the node id comes from the
        // outcome lines. Prefer an id whose file appears in the report.
        // A long log names the same short names again and again (a suite run in several jobs):
        // each is looked up among the ids once.
        let pending = std::mem::take(&mut self.pending_names);
        let mut resolved: BTreeMap<String, Option<String>> = BTreeMap::new();
        if !pending.is_empty() {
            let ids = sink.sorted_test_names();
            for (_, short) in &pending {
                if !resolved.contains_key(short) {
                    let id = node_id(short, ids.iter().copied());
                    resolved.insert(short.clone(), id);
                }
            }
        }
        for (report, short) in pending {
            let id = resolved[&short].as_deref().unwrap_or(&short);
            sink.set_test(report, id);
        }
        // The i-th failure is the summary's i-th only when both list every failure.
        let names = (self.tb_line.count == self.summary_failed_count).then_some(&self.summary_failed[..]);
        std::mem::take(&mut self.tb_line).report(names, sink);
    }
}

/// pytest `--tb=line`'s failures, in constant memory whatever their number: the places they
/// were raised at, each once, and which place each failure was raised at, in log order. A bug
/// that fails thousands of parametrised tests is one place; a bug after it is another, and is
/// reported even when the failures before it are past the bounds.
#[derive(Default)]
struct TbLineFailures {
    /// Each place (file, line, exception) once, with the message of its first failure and how
    /// many failures it had: at most [`super::MAX_REPORTS`].
    places: Vec<TbLinePlace>,
    /// The place of each failure in log order (the first [`super::MAX_TESTS`]; [`u16::MAX`] for a
    /// place past the bound), with its own message while its place has had fewer than
    /// [`super::MAX_REPORTS_PER_PLACE`] failures (the sink keeps no more at one place).
    order: Vec<(u16, Option<String>)>,
    /// How many failures there were.
    count: usize,
}

struct TbLinePlace {
    file: String,
    line: u32,
    kind: String,
    first_message: String,
    failures: usize,
}

impl TbLineFailures {
    fn push(&mut self, file: &str, line: u32, kind: String, message: String) {
        self.count += 1;
        let at = match self
            .places
            .iter()
            .position(|p| p.line == line && p.file == file && p.kind == kind)
        {
            Some(at) => at,
            None if self.places.len() < super::MAX_REPORTS => {
                self.places.push(TbLinePlace {
                    file: file.to_owned(),
                    line,
                    kind,
                    first_message: super::truncate(&message, super::MAX_MESSAGE),
                    failures: 0,
                });
                self.places.len() - 1
            }
            None => {
                if self.order.len() < super::MAX_TESTS {
                    self.order.push((u16::MAX, None));
                }
                return;
            }
        };
        let place = &mut self.places[at];
        place.failures += 1;
        if self.order.len() < super::MAX_TESTS {
            let own =
                (place.failures <= super::MAX_REPORTS_PER_PLACE).then(|| super::truncate(&message, super::MAX_MESSAGE));
            self.order.push((at as u16, own));
        }
    }

    /// Reports each failure at its place, named after the test `names` gives it by its index;
    /// then each place whose failures all came past the bound on the order, unnamed.
    fn report(self, names: Option<&[String]>, sink: &mut Sink<'_>) {
        let mut reported = vec![false; self.places.len()];
        for (i, (at, own)) in self.order.iter().enumerate() {
            let Some(place) = self.places.get(usize::from(*at)) else {
                sink.leave_out(1);
                continue;
            };
            reported[usize::from(*at)] = true;
            let test = names.and_then(|names| names.get(i)).map(String::as_str);
            let message = own.as_deref().unwrap_or(&place.first_message);
            sink.report(python_finding(&place.file, place.line, &place.kind, message, test));
        }
        // The failures past the bound on the order, less one for each place reported below (each
        // holds at least one of them).
        let mut past_the_order = self.count - self.order.len();
        for (place, _) in self.places.iter().zip(reported).filter(|(_, reported)| !reported) {
            sink.report(python_finding(
                &place.file,
                place.line,
                &place.kind,
                &place.first_message,
                None,
            ));
            past_the_order -= 1;
        }
        sink.leave_out(past_the_order);
    }
}

/// A traceback's frame, `  File "/abs/app.py", line 12, in main` (no function for the place of
/// a SyntaxError): the file, the line and the function, as FILE_FRAME reads them, without running
/// the regex on the ASCII frames of a traceback.
pub(crate) fn file_frame(body: &str) -> Option<(&str, &str, Option<&str>)> {
    let rest = body.trim_start().strip_prefix("File \"")?;
    let (file, rest) = rest.split_once('"')?;
    let rest = rest.strip_prefix(", line ")?;
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    if file.is_empty() || rest.as_bytes().get(digits).is_some_and(|&b| b >= 0x80) {
        // An empty name, or a digit that may not be ASCII (`\d` is Unicode): the regex decides.
        let c = FILE_FRAME.captures(body)?;
        return Some((c.get(1)?.as_str(), c.get(2)?.as_str(), c.get(3).map(|m| m.as_str())));
    }
    let (n, after) = rest.split_at(digits);
    let function = match after.strip_prefix(", in ") {
        Some(function) if !function.contains('\n') => Some(function),
        Some(_) => return None,
        None if after.is_empty() => None,
        None => return None,
    };
    (digits > 0).then_some((file, n, function))
}

/// The title of a failure's header in a pytest section: the title centred in `_`s, down to one
/// on each side when the test's name is long (`_ test_roundtrip[http://example.com:8080/...] _`).
/// Read as `^_+ (.+?) _+$` reads it, without the lazy group's backtracking over the `_ _ _ _`
/// rules pytest draws between a traceback's frames (made of `_` and spaces alone, they are no
/// header: the caller leaves them out). The leading run of `_` is followed by a space; the title
/// ends at the space before the trailing run, which only one space can be.
fn section_title(line: &str) -> Option<&str> {
    let lead = line.bytes().take_while(|&b| b == b'_').count();
    if lead == 0 {
        return None;
    }
    let rest = line[lead..].strip_prefix(' ')?;
    let before_trail = rest.trim_end_matches('_');
    if before_trail.len() == rest.len() {
        return None;
    }
    before_trail
        .strip_suffix(' ')
        .filter(|title| !title.is_empty() && !title.contains('\n'))
}

/// The test a pytest section's header names, as a short name: `test_x` for `ERROR at setup of
/// test_x` (a fixture's error), none for `ERROR collecting path` (no test ran).
/// The function of a test named by pytest's short name (`Class.test_x[1.5-a]`, a subtest's
/// `Class.test_x (i=3)`) or unittest's id (`tests.test_mod.Class.test_x`, a subtest's with its
/// parameters after a space): `test_x`.
fn test_function(test: &str) -> &str {
    let name = &test[..test.find(['[', ' ']).unwrap_or(test.len())];
    name.rsplit('.').next().unwrap_or(name)
}

fn section_test(title: &str) -> Option<String> {
    if title.starts_with("ERROR collecting ") {
        return None;
    }
    let name = ["ERROR at setup of ", "ERROR at teardown of "]
        .iter()
        .find_map(|prefix| title.strip_prefix(prefix))
        .unwrap_or(title);
    Some(name.to_owned())
}

/// The first of the run's test ids (sorted) that pytest's short test name `short` stands for:
/// `Class.test[1.5-x]` is `path::Class::test[1.5-x]` (dots outside the parameter brackets), and
/// a doctest's `[doctest] pkg.mod.func` is `path::pkg.mod.func` (its dots are the object's).
fn node_id<'a>(short: &str, mut ids: impl Iterator<Item = &'a str>) -> Option<String> {
    let wanted = match short.strip_prefix("[doctest] ") {
        Some(object) => object.to_owned(),
        None => {
            let (name, params) = short.split_at(short.find('[').unwrap_or(short.len()));
            format!("{}{params}", name.replace('.', "::"))
        }
    };
    let suffix = format!("::{wanted}");
    ids.find(|id| id.ends_with(&suffix) || *id == wanted).map(str::to_owned)
}

/// doctest's `UNEXPECTED EXCEPTION: TypeError("unsupported operand ...")` (the exception's
/// repr): the exception's name and its message, when the repr holds one string.
fn doctest_unexpected(line: &str) -> Option<(String, String)> {
    let repr = line.strip_prefix("UNEXPECTED EXCEPTION: ")?.trim_end();
    let (kind, args) = repr.split_once('(')?;
    let args = args.strip_suffix(')')?;
    exception(kind, true).filter(|(name, message)| name.len() == kind.len() && message.is_none())?;
    let message = [('"', '"'), ('\'', '\'')]
        .iter()
        .find_map(|&(open, close)| args.strip_prefix(open)?.strip_suffix(close))
        .unwrap_or(args);
    Some((kind.to_owned(), message.to_owned()))
}

/// Where an exception was raised, from a traceback printed under `--tb=line` ([`Python::printed_place`]).
struct PrintedPlace {
    file: String,
    line: u32,
    kind: String,
    message: String,
}

/// doctest's report of an example whose output was wrong: `Expected:` and `Got:` (or `Expected
/// nothing`, `Got nothing`), each followed by the output indented by four spaces, or, under
/// `--doctest-report udiff|ndiff|cdiff` (a multi-line output in the first), `Differences (...):`
/// and a diff of the two indented the same way. The failure line after it says only
/// `DocTestFailure`; this is what failed.
#[derive(Default)]
pub(crate) struct DoctestOutput {
    reading: Option<DoctestPart>,
    /// `Expected` or `Differences` was read: only then is a `Got` doctest's (a source line after
    /// a stray `Got:` is not output).
    seen_expected: bool,
    expected: String,
    got: String,
}

#[derive(Clone, Copy)]
enum DoctestPart {
    Expected,
    Got,
    /// A diff of the expected output and the actual one.
    Diff(DiffKind),
}

#[derive(Clone, Copy)]
enum DiffKind {
    /// `@@` hunks of ` `, `-` and `+` lines.
    Unified,
    /// `  `, `- `, `+ ` and `? ` (a hint) lines.
    Ndiff,
    /// A context diff: `*** 1,3 ****` then the expected lines, `--- 1,3 ----` then the actual
    /// ones (`!` changed, `-` removed, `+` added).
    Context { actual: bool },
}

/// Most bytes kept of each of a doctest's expected and actual outputs.
const MAX_DOCTEST_OUTPUT: usize = 300;

impl DoctestOutput {
    /// Reads a line of the report; whether it was one.
    pub(crate) fn line(&mut self, line: &str) -> bool {
        // A header or a rule (`____ test ____`, `---- Captured stdout ----`, `====`) starts
        // something else: what was read before it is no doctest's report of what follows.
        if line.starts_with("___") || line.starts_with("---") || line.starts_with("===") {
            *self = DoctestOutput::default();
            return false;
        }
        let trimmed = line.trim_end();
        let diff = match trimmed {
            "Differences (unified diff with -expected +actual):" => Some(DiffKind::Unified),
            "Differences (ndiff with -expected +actual):" => Some(DiffKind::Ndiff),
            "Differences (context diff with expected followed by actual):" => Some(DiffKind::Context { actual: false }),
            _ => None,
        };
        match trimmed {
            "Expected:" | "Expected nothing" => {
                self.start(trimmed.ends_with(':').then_some(DoctestPart::Expected));
                true
            }
            _ if diff.is_some() => {
                self.start(diff.map(DoctestPart::Diff));
                true
            }
            "Got:" | "Got nothing" if self.seen_expected => {
                self.reading = trimmed.ends_with(':').then_some(DoctestPart::Got);
                true
            }
            _ => match (self.reading, line.strip_prefix("    ")) {
                (Some(DoctestPart::Expected), Some(output)) => {
                    push_output(&mut self.expected, output);
                    true
                }
                (Some(DoctestPart::Got), Some(output)) => {
                    push_output(&mut self.got, output);
                    true
                }
                (Some(DoctestPart::Diff(kind)), Some(output)) => {
                    self.diff_line(kind, output);
                    true
                }
                _ => {
                    self.reading = None;
                    false
                }
            },
        }
    }

    /// A report begins: what was read of another is dropped.
    fn start(&mut self, reading: Option<DoctestPart>) {
        self.expected.clear();
        self.got.clear();
        self.seen_expected = true;
        self.reading = reading;
    }

    /// A line of a diff: a line only the expected output has, or only the actual one, is kept
    /// as `Expected`'s or `Got`'s; context, hints and hunk headers are not.
    fn diff_line(&mut self, kind: DiffKind, output: &str) {
        // The mark is the first character (a line of the diff may start with any).
        let (mark, text) = output.split_at(output.chars().next().map_or(0, char::len_utf8));
        let side = match (kind, mark) {
            (DiffKind::Unified, _) if output.starts_with("@@") => None,
            (DiffKind::Unified | DiffKind::Ndiff, "-") => Some(false),
            (DiffKind::Unified | DiffKind::Ndiff, "+") => Some(true),
            (DiffKind::Context { .. }, "*") => {
                // `***************` between hunks, `*** 1,3 ****` before the expected lines.
                self.reading = Some(DoctestPart::Diff(DiffKind::Context { actual: false }));
                None
            }
            (DiffKind::Context { .. }, "-") if output.starts_with("--- ") => {
                self.reading = Some(DoctestPart::Diff(DiffKind::Context { actual: true }));
                None
            }
            (DiffKind::Context { actual }, "!" | "-" | "+") => Some(actual),
            _ => None,
        };
        match side {
            Some(false) => push_output(&mut self.expected, text),
            Some(true) => push_output(&mut self.got, text),
            None => {}
        }
    }

    /// `expected 9.5, got 8.25`, once; empty when no report was read.
    pub(crate) fn take(&mut self) -> String {
        self.reading = None;
        self.seen_expected = false;
        let (expected, got) = (std::mem::take(&mut self.expected), std::mem::take(&mut self.got));
        if expected.is_empty() && got.is_empty() {
            return String::new();
        }
        let nothing = |s: String| if s.is_empty() { "nothing".to_owned() } else { s };
        format!("expected {}, got {}", nothing(expected), nothing(got))
    }
}

/// Appends a line of a doctest's output to what is kept of it (its lines joined by spaces, at
/// most [`MAX_DOCTEST_OUTPUT`] bytes).
fn push_output(text: &mut String, output: &str) {
    let output = output.trim();
    if text.len() >= MAX_DOCTEST_OUTPUT || output.is_empty() {
        return;
    }
    if !text.is_empty() {
        text.push(' ');
    }
    text.push_str(super::truncate_bytes(output, MAX_DOCTEST_OUTPUT - text.len()));
}

/// pytest's doctest failures, `path:N: DocTestFailure` and `path:N: UnexpectedException`, name
/// the failing example's line: in a text file too (`--doctest-glob`, `test*.txt` by default),
/// where no other place is given.
fn doctest_failure(rest: &str) -> bool {
    matches!(rest.trim_end(), "DocTestFailure" | "UnexpectedException")
}

/// What a `--tb=line` failure line says after its location: an exception and its message, or a
/// failed assertion as pytest shortens it (`assert 1 == 2`: "AssertionError: " taken off).
fn tb_line_failure(rest: &str) -> Option<(&str, Option<&str>)> {
    if rest.starts_with("assert ") {
        return Some(("AssertionError", Some(rest)));
    }
    exception(rest, true)
}

/// An exception line, `Name` or `Name: message`: any class name where one must stand, else only
/// the usual names. Returns the name and the message.
pub(crate) fn exception(text: &str, must_be: bool) -> Option<(&str, Option<&str>)> {
    // A name is ASCII in nearly every log: it is read without a regex, as ANY_EXCEPTION and
    // EXCEPTION read it; a name with other characters (`\w` is Unicode) goes to them.
    let name_end = text
        .bytes()
        .position(|b| !(b.is_ascii_alphanumeric() || b == b'_' || b == b'.'))
        .unwrap_or(text.len());
    if text.as_bytes().get(name_end).is_some_and(|&b| b >= 0x80) {
        let c = if must_be {
            ANY_EXCEPTION.captures(text).or_else(|| EXCEPTION.captures(text))
        } else {
            EXCEPTION.captures(text)
        }?;
        return Some((c.get(1)?.as_str(), c.get(2).map(|m| m.as_str())));
    }
    let (name, after) = text.split_at(name_end);
    let message = match after.strip_prefix(": ") {
        Some(message) if !message.contains('\n') => Some(message),
        Some(_) => return None,
        None if after.is_empty() => None,
        None => return None,
    };
    let mut segments = name.split('.');
    let last = segments.next_back()?;
    let is_identifier = |s: &str| {
        s.as_bytes()
            .first()
            .is_some_and(|b| b.is_ascii_alphabetic() || *b == b'_')
    };
    if !(is_identifier(last) && segments.all(is_identifier)) {
        return None;
    }
    let any_class = must_be && last.as_bytes()[0].is_ascii_uppercase();
    let usual = USUAL_EXCEPTION_ENDINGS
        .iter()
        .any(|e| last.len() > e.len() && last.ends_with(e));
    (any_class || usual).then_some((name, message))
}

/// How the names of the usual exception classes end (EXCEPTION).
const USUAL_EXCEPTION_ENDINGS: &[&str] = &[
    "Error",
    "Exception",
    "Exit",
    "Interrupt",
    "Failure",
    "Warning",
    "Iteration",
    "NotFound",
];

/// pytest's short test summary, `FAILED tests/a.py::test_x - AssertionError: ...`: the outcome
/// word and the test's id, as `^(PASSED|FAILED|ERROR|XFAIL|XPASS) (\S+)(?: - (.*))?$` reads
/// them, without a regex (a `-rA` log of a long suite is mostly such lines).
pub(crate) fn summary_outcome(line: &str) -> Option<(&str, &str)> {
    let (word, rest) = split_once_byte(line, b' ')?;
    if !matches!(word, "PASSED" | "FAILED" | "ERROR" | "XFAIL" | "XPASS") {
        return None;
    }
    let (name, tail) = split_node_id(rest);
    let ends_right = tail.is_empty() || tail.strip_prefix(" - ").is_some_and(|m| !m.contains('\n'));
    (!name.is_empty() && ends_right).then_some((word, name))
}

/// An exception group's own exception, `ExceptionGroup: msg (2 sub-exceptions)`, whose
/// sub-exceptions follow it ([`EXCEPTION_GROUP_TRACEBACK`]).
fn is_group_of_sub_exceptions(kind: &str, message: Option<&str>) -> bool {
    kind.ends_with("ExceptionGroup")
        && message.is_some_and(|m| m.ends_with(" sub-exception)") || m.ends_with(" sub-exceptions)"))
}

/// The pytest node id `text` starts with, and the rest: an id ends at its first space unless that
/// space is inside its parameters (`test_date[input10-Mar 02 2009]`), where it ends at the `]`
/// that the line's end, ` - ` or another space follows.
fn split_node_id(text: &str) -> (&str, &str) {
    let (name, tail) = split_word(text);
    if tail.is_empty() || name.ends_with(']') || !has_byte(name, b'[') {
        return (name, tail);
    }
    let close = if text.ends_with(']') && !has(text, "] ") {
        Some(text.len() - 1)
    } else {
        text.find("] ")
    };
    match close {
        Some(close) => text.split_at(close + 1),
        None => (name, tail),
    }
}

/// pytest `-v`: `path::test[params] PASSED   [ 42%]`, read without a regex (the common case in
/// a long log of passing tests).
fn verbose_outcome(line: &str) -> Option<(&str, TestOutcome)> {
    let (id, rest) = split_node_id(line);
    if !has(id, "::") {
        return None;
    }
    // The run of spaces before the outcome and the one before `[ 42%]` are long: trimmed a byte
    // at a time.
    let rest = super::trim_start(rest);
    // The outcome is the word up to the next space (or the line's end).
    let (word, outcome) = [
        ("PASSED", TestOutcome::Passed),
        ("FAILED", TestOutcome::Failed),
        ("SKIPPED", TestOutcome::Skipped),
        ("XFAIL", TestOutcome::Passed),
        ("XPASS", TestOutcome::Passed),
        ("ERROR", TestOutcome::Error),
    ]
    .into_iter()
    .find(|(word, _)| {
        rest.strip_prefix(word)
            .is_some_and(|r| r.is_empty() || r.starts_with(' '))
    })?;
    let tail = super::trim(&rest[word.len()..]);
    (tail.is_empty() || (tail.starts_with('[') && tail.ends_with("%]"))).then_some((id, outcome))
}

/// Whether the line starts `word (`, as unittest's `-v` outcome lines do (`test_x (tests.T) ...
/// ok`); a character that is not ASCII may be a word's (`\w` is Unicode), so such a line may.
fn starts_with_word_and_paren(line: &str) -> bool {
    let b = line.as_bytes();
    let word = b
        .iter()
        .take_while(|c| c.is_ascii_alphanumeric() || **c == b'_')
        .count();
    match b.get(word) {
        Some(&c) if c >= 0x80 => true,
        _ => word > 0 && b[word..].starts_with(b" ("),
    }
}

/// pytest-timeout's banner, `+++…+++ Timeout +++…+++`, alone on its line or after the progress
/// dots it interrupted.
fn is_timeout_banner(line: &str) -> bool {
    line.ends_with("+++")
        && line
            .trim_end_matches('+')
            .strip_suffix(" Timeout ")
            .is_some_and(|before| before.ends_with("+++"))
}

/// Whether a line is one a pytest-timeout dump prints: a thread's header, and under one (once
/// `headed`) a frame, which always names its function, or the frame's source line, four spaces
/// in. A traceback's place of a syntax error (`  File "app.py", line 5`, no function) is not.
fn is_timeout_dump_line(line: &str, headed: bool) -> bool {
    match line.as_bytes().first() {
        Some(b'~') => stack_of(line).is_some(),
        Some(b' ') if headed => {
            line.starts_with("    ") || file_frame(line).is_some_and(|(_, _, function)| function.is_some())
        }
        _ => false,
    }
}

impl FaultDump {
    /// A frame of the stack being read, for where its thread is blocked: its innermost frame in
    /// the project counted there (not in a test file), and a call further out of the same
    /// function noted as a re-entry.
    fn blocked_frame(&mut self, file: &str, n: u32, function: &str, sink: &Sink<'_>) {
        if !sink.is_project_file(file) {
            return;
        }
        match &self.reading_top {
            None => {
                self.reading_top = Some((file.to_owned(), function.to_owned()));
                if sink.is_test_file(file) {
                    return;
                }
                let place = (file.to_owned(), n);
                self.blocked_at.count(place);
            }
            Some((top_file, top_function)) => {
                if self.reentered_at.is_none() && top_file == file && top_function == function {
                    self.reentered_at = Some((file.to_owned(), n));
                }
            }
        }
    }

    /// For a hang (a timeout, or a process aborted while it hung), where the threads say it
    /// is: a function re-entered by the thread blocked in it, else where most threads are
    /// blocked in the project's code; with what the report says of it. None for a crash,
    /// whose other threads have nothing to do with it.
    fn hang_place(&self) -> Option<((String, u32), String)> {
        let (kind, message) = &self.exception;
        if kind != "Timeout" && message != "Aborted" {
            return None;
        }
        if let Some(place) = &self.reentered_at {
            return Some((
                place.clone(),
                "the function its thread is blocked in, entered again".to_owned(),
            ));
        }
        let (place, count) = self.blocked_at.most()?;
        let what = if count == 1 {
            "a thread is blocked here".to_owned()
        } else {
            format!("{count} threads are blocked here")
        };
        Some((place.clone(), what))
    }

    /// The stack just read is kept if it is likelier the failure's than the one kept before.
    fn choose(&mut self) {
        self.reading_top = None;
        let frames = std::mem::take(&mut self.reading);
        let test = self.reading_test.take();
        if frames.is_empty() {
            return;
        }
        let weight = if self.reading_current {
            StackWeight::Current
        } else if test.is_some() {
            StackWeight::RunsATest
        } else {
            StackWeight::Other
        };
        if self.chosen.as_ref().is_none_or(|(.., kept)| weight >= *kept) {
            self.chosen = Some((frames, test, weight));
        }
    }
}

/// The line that opens faulthandler's dump, and what the dump is reported as: a fatal error
/// (`Fatal Python error: Segmentation fault`, after a test's progress dots too) or a timeout
/// (`Timeout (0:00:05)!`, after the test's name in pytest's `-v` line too).
fn fault_dump_start(line: &str) -> Option<(String, String)> {
    if let Some(at) = line.find(FATAL_PYTHON_ERROR) {
        let what = line[at + FATAL_PYTHON_ERROR.len()..].trim();
        return Some(("Fatal Python error".to_owned(), what.to_owned()));
    }
    let at = line.strip_suffix(")!")?.rfind("Timeout (")?;
    let limit = &line[at + "Timeout (".len()..line.len() - 2];
    (!limit.is_empty() && limit.bytes().all(|b| b.is_ascii_digit() || b == b':' || b == b'.')).then(|| {
        (
            "Timeout".to_owned(),
            format!("the test ran past faulthandler's timeout ({limit}): its stack when it was dumped"),
        )
    })
}

/// A faulthandler dump's thread header, `Thread 0x00007f… (most recent call first):` or, for the
/// thread that crashed, `Current thread 0x…`: whether it is the current thread.
fn fault_thread_header(line: &str) -> Option<bool> {
    let (current, rest) = match line.strip_prefix("Current thread ") {
        Some(rest) => (true, rest),
        None => (false, line.strip_prefix("Thread ")?),
    };
    (rest.starts_with("0x") && rest.ends_with("(most recent call first):")).then_some(current)
}

/// A faulthandler frame, `  File "/w/app.py", line 9 in byte_at` (no comma before `in`, unlike a
/// traceback's): the file, the line and the function.
fn fault_frame(line: &str) -> Option<(&str, u32, &str)> {
    let rest = line.trim_start().strip_prefix("File \"")?;
    let (file, rest) = rest.split_once("\", line ")?;
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    let n = rest[..digits].parse().ok()?;
    let function = rest[digits..].strip_prefix(" in ")?;
    Some((file, n, function))
}

/// The thread a pytest-timeout dump's header names: `~~~ Stack of MainThread (1398…) ~~~`.
fn stack_of(line: &str) -> Option<&str> {
    let rest = line.trim_matches('~').trim().strip_prefix("Stack of ")?;
    Some(rest.rsplit_once(" (").map_or(rest, |(name, _)| name))
}

/// The report for a Python exception at `file:line`.
pub(crate) fn python_finding<'a>(
    file: &'a str,
    line: u32,
    kind: &'a str,
    message: &'a str,
    test: Option<&'a str>,
) -> Finding<'a> {
    let short_kind = kind.rsplit('.').next().unwrap_or(kind);
    let error_type = match short_kind {
        "SyntaxError" => ErrorType::Syntax,
        "IndentationError" | "TabError" => ErrorType::Indentation,
        "ModuleNotFoundError" | "ImportError" => ErrorType::Import,
        // An unresolvable name: a module never imported, or a name never imported or defined.
        "NameError" => ErrorType::Import,
        "AttributeError" if message.starts_with("module ") => ErrorType::Import,
        "TypeError" | "AttributeError" => ErrorType::TypeError,
        _ => ErrorType::Logic,
    };
    Finding {
        file,
        line,
        error_type,
        message: if message.is_empty() {
            Cow::Borrowed(kind)
        } else {
            Cow::Owned(format!("{kind}: {message}"))
        },
        test,
        confidence: if test.is_some() { 0.95 } else { 0.9 },
        rank: Rank::Error,
        diagnostic: false,
    }
}

/// The standard library's public top-level modules: CPython 3.11's `sys.stdlib_module_names`
/// without the private (`_`), demo and easter-egg ones, plus the two 3.14 added. A NameError that
/// names one of them, for a name the file uses as `name.attribute`, is a module the code forgot
/// to import (the built-in import fixer adds it). Sorted, for a binary search.
pub const PYTHON_STDLIB_MODULES: &[&str] = &[
    "abc",
    "aifc",
    "annotationlib",
    "argparse",
    "array",
    "ast",
    "asynchat",
    "asyncio",
    "asyncore",
    "atexit",
    "audioop",
    "base64",
    "bdb",
    "binascii",
    "bisect",
    "builtins",
    "bz2",
    "cProfile",
    "calendar",
    "cgi",
    "cgitb",
    "chunk",
    "cmath",
    "cmd",
    "code",
    "codecs",
    "codeop",
    "collections",
    "colorsys",
    "compileall",
    "compression",
    "concurrent",
    "configparser",
    "contextlib",
    "contextvars",
    "copy",
    "copyreg",
    "crypt",
    "csv",
    "ctypes",
    "curses",
    "dataclasses",
    "datetime",
    "dbm",
    "decimal",
    "difflib",
    "dis",
    "distutils",
    "doctest",
    "email",
    "encodings",
    "ensurepip",
    "enum",
    "errno",
    "faulthandler",
    "fcntl",
    "filecmp",
    "fileinput",
    "fnmatch",
    "fractions",
    "ftplib",
    "functools",
    "gc",
    "genericpath",
    "getopt",
    "getpass",
    "gettext",
    "glob",
    "graphlib",
    "grp",
    "gzip",
    "hashlib",
    "heapq",
    "hmac",
    "html",
    "http",
    "imaplib",
    "imghdr",
    "imp",
    "importlib",
    "inspect",
    "io",
    "ipaddress",
    "itertools",
    "json",
    "keyword",
    "lib2to3",
    "linecache",
    "locale",
    "logging",
    "lzma",
    "mailbox",
    "mailcap",
    "marshal",
    "math",
    "mimetypes",
    "mmap",
    "modulefinder",
    "msilib",
    "msvcrt",
    "multiprocessing",
    "netrc",
    "nis",
    "nntplib",
    "nt",
    "ntpath",
    "nturl2path",
    "numbers",
    "opcode",
    "operator",
    "optparse",
    "os",
    "ossaudiodev",
    "pathlib",
    "pdb",
    "pickle",
    "pickletools",
    "pipes",
    "pkgutil",
    "platform",
    "plistlib",
    "poplib",
    "posix",
    "posixpath",
    "pprint",
    "profile",
    "pstats",
    "pty",
    "pwd",
    "py_compile",
    "pyclbr",
    "pydoc",
    "pyexpat",
    "queue",
    "quopri",
    "random",
    "re",
    "readline",
    "reprlib",
    "resource",
    "rlcompleter",
    "runpy",
    "sched",
    "secrets",
    "select",
    "selectors",
    "shelve",
    "shlex",
    "shutil",
    "signal",
    "site",
    "smtpd",
    "smtplib",
    "sndhdr",
    "socket",
    "socketserver",
    "spwd",
    "sqlite3",
    "sre_compile",
    "sre_constants",
    "sre_parse",
    "ssl",
    "stat",
    "statistics",
    "string",
    "stringprep",
    "struct",
    "subprocess",
    "sunau",
    "symtable",
    "sys",
    "sysconfig",
    "syslog",
    "tabnanny",
    "tarfile",
    "telnetlib",
    "tempfile",
    "termios",
    "textwrap",
    "threading",
    "time",
    "timeit",
    "tkinter",
    "token",
    "tokenize",
    "tomllib",
    "trace",
    "traceback",
    "tracemalloc",
    "tty",
    "turtle",
    "types",
    "typing",
    "unicodedata",
    "unittest",
    "urllib",
    "uu",
    "uuid",
    "venv",
    "warnings",
    "wave",
    "weakref",
    "webbrowser",
    "winreg",
    "winsound",
    "wsgiref",
    "xdrlib",
    "xml",
    "xmlrpc",
    "zipapp",
    "zipfile",
    "zipimport",
    "zlib",
    "zoneinfo",
];

/// pytest's header when a `conftest.py` failed to import, before the import's traceback.
const CONFTEST_IMPORT_ERROR: &str = "ImportError while loading conftest ";

impl Python {
    /// Reads what follows as the body of one pytest failure (a JUnit `<failure>` text).
    pub(crate) fn begin_pytest_block(&mut self) {
        self.section = Section::Pytest;
        self.section_has_headers = true;
        self.block = Some(Block {
            of_a_test: true,
            part_start: true,
            ..Block::default()
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    /// From the twenty-fourth trial (parse 1.20.2's `test_datetimes`): an assertion in a helper
    /// the test defines fails for one of the test's calls; the call (which input failed) is the
    /// test's own line, reported beside the helper's assertion.
    #[test]
    fn a_test_s_call_of_its_own_failing_helper_is_its_second_place() {
        let log = "=================================== FAILURES ===================================
________________________________ test_datetimes ________________________________

    def test_datetimes():
        def y(fmt, s, e):
            assert parse.parse(fmt, s).fixed[0] == e
    
>       y(\"a {:ti} b\", \"a 1997-07-16T19:20+0100 b\", datetime(1997, 7, 16, 19, 20))

tests/test_parse.py:474: 
_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ 

    def y(fmt, s, e):
>       assert parse.parse(fmt, s).fixed[0] == e
E       ValueError: offset must be a timedelta

tests/test_parse.py:454: ValueError
=========================== short test summary info ============================
FAILED tests/test_parse.py::test_datetimes - ValueError: offset must be a timedelta
";
        let parsed = super::super::parse(log, &super::super::Workspace::new("/w"));
        let test = Some("tests/test_parse.py::test_datetimes");
        assert_eq!(
            crate::parse::report_places(&parsed),
            [("tests/test_parse.py", 454, test), ("tests/test_parse.py", 474, test)]
        );
    }

    /// From the thirteenth trial's logs, broken for a while by behave's indented tracebacks: a
    /// pytest long traceback lists a function's source, whose docstring holds a doctest's
    /// `Traceback (most recent call last):` indented; that is source, not a traceback, and the
    /// failure is placed where the chained LookupError was raised (as before the break), and
    /// named by it: the test failed with it, raised in the project as it handled the KeyError.
    #[test]
    fn a_doctest_traceback_in_listed_source_is_not_a_traceback() {
        let log = "=================================== FAILURES ===================================
_______________________ test_get_in_missing_uses_default _______________________
[gw0] linux -- Python 3.11.7 /work/heldout14/venv/bin/python

keys = ['server', 'port'], coll = {'server': {}}, default = 8080
no_default = False

    def get_in(keys, coll, default=None, no_default=False):
        \"\"\" Returns coll[i0][i1]...[iX] where [i0, i1, ..., iX]==keys.
    
        If coll[i0][i1]...[iX] cannot be found, returns ``default``, unless
        ``no_default`` is specified, then it raises KeyError or IndexError.
    
        ``get_in`` is a generalization of ``operator.getitem`` for nested data
        structures such as dictionaries and lists.
    
        >>> transaction = {'name': 'Alice',
        ...                'purchase': {'items': ['Apple', 'Orange'],
        ...                             'costs': [0.50, 1.25]},
        ...                'credit card': '5555-1234-1234-1234'}
        >>> get_in(['purchase', 'items', 0], transaction)
        'Apple'
        >>> get_in(['name'], transaction)
        'Alice'
        >>> get_in(['purchase', 'total'], transaction)
        >>> get_in(['purchase', 'items', 'apple'], transaction)
        >>> get_in(['purchase', 'items', 10], transaction)
        >>> get_in(['purchase', 'total'], transaction, 0)
        0
        >>> get_in(['y'], {}, no_default=True)
        Traceback (most recent call last):
            ...
        KeyError: 'y'
    
        See Also:
            itertoolz.get
            operator.getitem
        \"\"\"
        try:
>           return reduce(operator.getitem, keys, coll)
                   ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
E           KeyError: 'port'

toolz/dicttoolz.py:335: KeyError

The above exception was the direct cause of the following exception:

    def test_get_in_missing_uses_default():
>       assert lookup_port({\"server\": {}}) == 8080
               ^^^^^^^^^^^^^^^^^^^^^^^^^^^

toolz/tests/test_chain.py:9: 
_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ 
toolz/tests/test_chain.py:5: in lookup_port
    return get_in([\"server\", \"port\"], config, default=8080)
           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ 

keys = ['server', 'port'], coll = {'server': {}}, default = 8080
no_default = False

    def get_in(keys, coll, default=None, no_default=False):
        \"\"\" Returns coll[i0][i1]...[iX] where [i0, i1, ..., iX]==keys.
    
        If coll[i0][i1]...[iX] cannot be found, returns ``default``, unless
        ``no_default`` is specified, then it raises KeyError or IndexError.
    
        ``get_in`` is a generalization of ``operator.getitem`` for nested data
        structures such as dictionaries and lists.
    
        >>> transaction = {'name': 'Alice',
        ...                'purchase': {'items': ['Apple', 'Orange'],
        ...                             'costs': [0.50, 1.25]},
        ...                'credit card': '5555-1234-1234-1234'}
        >>> get_in(['purchase', 'items', 0], transaction)
        'Apple'
        >>> get_in(['name'], transaction)
        'Alice'
        >>> get_in(['purchase', 'total'], transaction)
        >>> get_in(['purchase', 'items', 'apple'], transaction)
        >>> get_in(['purchase', 'items', 10], transaction)
        >>> get_in(['purchase', 'total'], transaction, 0)
        0
        >>> get_in(['y'], {}, no_default=True)
        Traceback (most recent call last):
            ...
        KeyError: 'y'
    
        See Also:
            itertoolz.get
            operator.getitem
        \"\"\"
        try:
            return reduce(operator.getitem, keys, coll)
        except (KeyError, IndexError, TypeError) as exc:
            if not no_default:
>               raise LookupError(\"missing path %r\" % (keys,)) from exc
E               LookupError: missing path ['server', 'port']

toolz/dicttoolz.py:338: LookupError
";
        let workspace = super::super::Workspace::new("/work/heldout14/projects/toolz").with_files(vec![
            "toolz/dicttoolz.py".to_owned(),
            "toolz/tests/test_chain.py".to_owned(),
        ]);
        let parsed = super::super::parse(log, &workspace);
        let places: Vec<_> = super::super::report_findings(&parsed)
            .into_iter()
            .map(|(file, line, _, message)| (file, line, message))
            .collect();
        // And the test's line that called there, where the chained error's traceback starts.
        assert_eq!(
            places,
            [
                (
                    "toolz/dicttoolz.py",
                    338,
                    "LookupError: missing path ['server', 'port']"
                ),
                (
                    "toolz/tests/test_chain.py",
                    9,
                    "LookupError: missing path ['server', 'port']"
                )
            ]
        );
    }

    /// From a review: `python -m doctest`'s `Expected:` block shows the traceback the example
    /// should have raised; it is not one that happened (the doctest reader reports the example).
    #[test]
    fn a_doctest_s_expected_traceback_is_not_an_exception() {
        let log = "**********************************************************************
File \"/w/mod.py\", line 3, in mod.f
Failed example:
    f({})
Expected:
    Traceback (most recent call last):
        ...
    KeyError: 'y'
Got:
    {}
**********************************************************************
File \"/w/mod.py\", line 7, in mod.f
Failed example:
    f(1)
Expected:
    2
Got:
    1
**********************************************************************
1 items had failures:
   2 of   2 in mod.f
***Test Failed*** 2 failures.
";
        let parsed = super::super::parse(
            log,
            &super::super::Workspace::new("/w").with_files(vec!["mod.py".to_owned()]),
        );
        let messages: Vec<_> = super::super::report_messages(&parsed)
            .into_iter()
            .map(|(_, line, message)| (line, message.starts_with("doctest example failed")))
            .collect();
        assert_eq!(messages, [(3, true), (7, true)]);
    }

    /// From a review: an outcome line of pytest's summary that places a syntax error is read for
    /// both.
    #[test]
    fn a_summary_line_that_places_a_syntax_error_is_read_for_it() {
        let log = "ERROR toolz/tests/test_itertoolz.py - SyntaxError: invalid syntax (itertoolz.py, line 30)\n";
        let parsed = crate::parse::parse(log, &crate::parse::Workspace::new("/w"));
        assert_eq!(crate::parse::report_places(&parsed), [("itertoolz.py", 30, None)]);
    }

    /// Exception groups (Python 3.12, the real output): an `asyncio.TaskGroup`'s KeyError under
    /// a script and under pytest (which prints the boxes natively whatever `--tb`), and a group
    /// nested in another with sub-exceptions raised nowhere. The sub-exception is the failure, at
    /// its own frame, of the test that ran it; a group's own `ExceptionGroup` is not reported.
    #[test]
    fn an_exception_group_s_sub_exception_is_read_through_its_boxes() {
        let script = "\
  + Exception Group Traceback (most recent call last):
  |   File \"/tmp/py13/run_tasks.py\", line 4, in <module>
  |     print(asyncio.run(fetch_all({\"apple\": 1})))
  |           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
  |   File \"/root/.pyenv/versions/3.12.1/lib/python3.12/asyncio/runners.py\", line 194, in run
  |     return runner.run(main)
  |            ^^^^^^^^^^^^^^^^
  |   File \"/root/.pyenv/versions/3.12.1/lib/python3.12/asyncio/runners.py\", line 118, in run
  |     return self._loop.run_until_complete(task)
  |            ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
  |   File \"/root/.pyenv/versions/3.12.1/lib/python3.12/asyncio/base_events.py\", line 684, in run_until_complete
  |     return future.result()
  |            ^^^^^^^^^^^^^^^
  |   File \"/tmp/py13/app/tasks.py\", line 10, in fetch_all
  |     async with asyncio.TaskGroup() as tg:
  |   File \"/root/.pyenv/versions/3.12.1/lib/python3.12/asyncio/taskgroups.py\", line 145, in __aexit__
  |     raise me from None
  | ExceptionGroup: unhandled errors in a TaskGroup (1 sub-exception)
  +-+---------------- 1 ----------------
    | Traceback (most recent call last):
    |   File \"/tmp/py13/app/tasks.py\", line 6, in fetch
    |     return prices[name] * 2
    |            ~~~~~~^^^^^^
    | KeyError: 'pear'
    +------------------------------------
";
        let pytest = "\
F                                                                        [100%]
=================================== FAILURES ===================================
________________________________ test_fetch_all ________________________________
  + Exception Group Traceback (most recent call last):
  |   File \"/tmp/py13/test_tasks.py\", line 5, in test_fetch_all
  |     assert asyncio.run(fetch_all({\"apple\": 1})) == 2
  |            ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
  |   File \"/root/.pyenv/versions/3.12.1/lib/python3.12/asyncio/runners.py\", line 194, in run
  |     return runner.run(main)
  |            ^^^^^^^^^^^^^^^^
  |   File \"/root/.pyenv/versions/3.12.1/lib/python3.12/asyncio/runners.py\", line 118, in run
  |     return self._loop.run_until_complete(task)
  |            ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
  |   File \"/root/.pyenv/versions/3.12.1/lib/python3.12/asyncio/base_events.py\", line 684, in run_until_complete
  |     return future.result()
  |            ^^^^^^^^^^^^^^^
  |   File \"/tmp/py13/app/tasks.py\", line 10, in fetch_all
  |     async with asyncio.TaskGroup() as tg:
  |   File \"/root/.pyenv/versions/3.12.1/lib/python3.12/asyncio/taskgroups.py\", line 145, in __aexit__
  |     raise me from None
  | ExceptionGroup: unhandled errors in a TaskGroup (1 sub-exception)
  +-+---------------- 1 ----------------
    | Traceback (most recent call last):
    |   File \"/tmp/py13/app/tasks.py\", line 6, in fetch
    |     return prices[name] * 2
    |            ~~~~~~^^^^^^
    | KeyError: 'pear'
    +------------------------------------
=========================== short test summary info ============================
FAILED test_tasks.py::test_fetch_all - KeyError('pear') [single exception in ...
1 failed in 0.02s
";
        let nested = "\
  + Exception Group Traceback (most recent call last):
  |   File \"/tmp/py13/nested.py\", line 6, in outer
  |     inner()
  |   File \"/tmp/py13/nested.py\", line 2, in inner
  |     raise ExceptionGroup(\"inner\", [ValueError(\"bad value\"), TypeError(\"bad type\")])
  | ExceptionGroup: inner (2 sub-exceptions)
  +-+---------------- 1 ----------------
    | ValueError: bad value
    +---------------- 2 ----------------
    | TypeError: bad type
    +------------------------------------

During handling of the above exception, another exception occurred:

  + Exception Group Traceback (most recent call last):
  |   File \"/tmp/py13/nested.py\", line 10, in <module>
  |     outer()
  |   File \"/tmp/py13/nested.py\", line 8, in outer
  |     raise ExceptionGroup(\"outer\", [e, KeyError(\"k\")])
  | ExceptionGroup: outer (2 sub-exceptions)
  +-+---------------- 1 ----------------
    | Exception Group Traceback (most recent call last):
    |   File \"/tmp/py13/nested.py\", line 6, in outer
    |     inner()
    |   File \"/tmp/py13/nested.py\", line 2, in inner
    |     raise ExceptionGroup(\"inner\", [ValueError(\"bad value\"), TypeError(\"bad type\")])
    | ExceptionGroup: inner (2 sub-exceptions)
    +-+---------------- 1 ----------------
      | ValueError: bad value
      +---------------- 2 ----------------
      | TypeError: bad type
      +------------------------------------
    +---------------- 2 ----------------
    | KeyError: 'k'
    +------------------------------------
";
        let files = ["app/tasks.py", "run_tasks.py", "test_tasks.py", "nested.py"]
            .map(str::to_owned)
            .to_vec();
        let workspace = crate::parse::Workspace::new("/tmp/py13").with_files(files);
        let findings = |log: &str| {
            let parsed = crate::parse::parse(log, &workspace);
            parsed
                .reports
                .iter()
                .map(|r| {
                    (
                        r.file_path.clone(),
                        r.line_number,
                        r.message.clone(),
                        r.test_name.clone(),
                    )
                })
                .collect::<Vec<_>>()
        };
        let key_error = |test: Option<&str>| {
            vec![(
                "app/tasks.py".to_owned(),
                6,
                "KeyError: 'pear'".to_owned(),
                test.map(str::to_owned),
            )]
        };
        assert_eq!(findings(script), key_error(None));
        // The test's own line called the group's tasks: a second place.
        let test = Some("test_tasks.py::test_fetch_all".to_owned());
        let mut in_test = key_error(test.as_deref());
        in_test.push(("test_tasks.py".to_owned(), 5, "KeyError: 'pear'".to_owned(), test));
        assert_eq!(findings(pytest), in_test);
        // The inner group's sub-exceptions have no traceback of their own: the group's raise is
        // the place of each. (The outer group's own KeyError, after the inner group's boxes, is
        // not read: its start is the inner group's.)
        assert_eq!(
            findings(nested),
            [
                ("nested.py".to_owned(), 2, "ValueError: bad value".to_owned(), None),
                ("nested.py".to_owned(), 2, "TypeError: bad type".to_owned(), None)
            ]
        );
        // Two sub-exceptions of one test, each with its traceback, and a test raising a group of
        // two exceptions raised nowhere (one place: one report).
        let two = "\
FF                                                                       [100%]
=================================== FAILURES ===================================
__________________________________ test_mixed __________________________________
  + Exception Group Traceback (most recent call last):
  |   File \"/tmp/py13/test_two.py\", line 6, in test_mixed
  |     asyncio.run(mixed())
  |   File \"/root/.pyenv/versions/3.12.1/lib/python3.12/asyncio/runners.py\", line 194, in run
  |     return runner.run(main)
  |            ^^^^^^^^^^^^^^^^
  |   File \"/root/.pyenv/versions/3.12.1/lib/python3.12/asyncio/runners.py\", line 118, in run
  |     return self._loop.run_until_complete(task)
  |            ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
  |   File \"/root/.pyenv/versions/3.12.1/lib/python3.12/asyncio/base_events.py\", line 684, in run_until_complete
  |     return future.result()
  |            ^^^^^^^^^^^^^^^
  |   File \"/tmp/py13/app/two.py\", line 19, in mixed
  |     async with asyncio.TaskGroup() as tg:
  |   File \"/root/.pyenv/versions/3.12.1/lib/python3.12/asyncio/taskgroups.py\", line 145, in __aexit__
  |     raise me from None
  | ExceptionGroup: unhandled errors in a TaskGroup (2 sub-exceptions)
  +-+---------------- 1 ----------------
    | Traceback (most recent call last):
    |   File \"/tmp/py13/app/two.py\", line 10, in bad
    |     helper(n)
    |   File \"/tmp/py13/app/two.py\", line 5, in helper
    |     raise ValueError(f\"bad {n}\")
    | ValueError: bad 1
    +---------------- 2 ----------------
    | Traceback (most recent call last):
    |   File \"/tmp/py13/app/two.py\", line 15, in fetch
    |     return prices[name]
    |            ~~~~~~^^^^^^
    | KeyError: 'plum'
    +------------------------------------
_______________________________ test_plain_group _______________________________
  + Exception Group Traceback (most recent call last):
  |   File \"/tmp/py13/test_two.py\", line 10, in test_plain_group
  |     raise ExceptionGroup(\"several\", [ValueError(\"v\"), KeyError(\"k\")])
  | ExceptionGroup: several (2 sub-exceptions)
  +-+---------------- 1 ----------------
    | ValueError: v
    +---------------- 2 ----------------
    | KeyError: 'k'
    +------------------------------------
=========================== short test summary info ============================
FAILED test_two.py::test_mixed - ExceptionGroup: unhandled errors in a TaskGr...
FAILED test_two.py::test_plain_group - ExceptionGroup: several (2 sub-excepti...
2 failed in 0.02s
";
        let two_files = ["app/two.py", "test_two.py"].map(str::to_owned).to_vec();
        let parsed = crate::parse::parse(two, &crate::parse::Workspace::new("/tmp/py13").with_files(two_files));
        assert_eq!(
            crate::parse::report_tests(&parsed),
            [
                ("app/two.py", 5, "ValueError: bad 1", Some("test_two.py::test_mixed")),
                // The test's line, once for both (one place, one type).
                ("test_two.py", 6, "ValueError: bad 1", Some("test_two.py::test_mixed")),
                ("app/two.py", 15, "KeyError: 'plum'", Some("test_two.py::test_mixed")),
                (
                    "test_two.py",
                    10,
                    "ValueError: v",
                    Some("test_two.py::test_plain_group")
                ),
            ]
        );
    }

    /// What the exception regexes alone read in `text`.
    fn by_regex(text: &str, must_be: bool) -> Option<(&str, Option<&str>)> {
        let c = if must_be {
            ANY_EXCEPTION.captures(text).or_else(|| EXCEPTION.captures(text))
        } else {
            EXCEPTION.captures(text)
        }?;
        Some((c.get(1)?.as_str(), c.get(2).map(|m| m.as_str())))
    }

    /// pytest 9.2's output for two doctests whose output was wrong, one printing where nothing
    /// was expected and one printing nothing where `3` was.
    #[test]
    fn a_doctest_failure_says_what_was_expected_and_what_came() {
        let log = "\
=================================== FAILURES ===================================
________________________________ [doctest] m.f _________________________________
002 
003     >>> print(5)
Expected nothing
Got:
    5

/tmp/dt2/m.py:3: DocTestFailure
________________________________ [doctest] n.g _________________________________
002 
003     >>> None
Expected:
    3
Got nothing

/tmp/dt2/n.py:3: DocTestFailure
=========================== short test summary info ============================
FAILED m.py::m.f
FAILED n.py::n.g
";
        let parsed = super::super::parse(log, &super::super::Workspace::new("/tmp/dt2"));
        let messages = super::super::report_messages(&parsed);
        assert_eq!(
            messages,
            [
                ("m.py", 3, "DocTestFailure: expected nothing, got 5"),
                ("n.py", 3, "DocTestFailure: expected 3, got nothing"),
            ]
        );
    }

    /// pytest 9.2's `--doctest-report udiff` and `cdiff` for an example whose three lines of
    /// output differ in the middle one: the lines only one side has are what failed.
    #[test]
    fn a_doctest_diff_says_which_lines_differ() {
        let failure = |report: &str| {
            format!(
                "\
=================================== FAILURES ===================================
______________________________ [doctest] calc.avg ______________________________
002 
003     >>> avg([1, 2, 3, 4])
004     2.5
005     >>> print('\\n'.join(['a', 'b', 'c']))
{report}
/tmp/dt/calc.py:5: DocTestFailure
=========================== short test summary info ============================
FAILED calc.py::calc.avg
"
            )
        };
        let unified = "\
Differences (unified diff with -expected +actual):
    @@ -1,3 +1,3 @@
     a
    -x
    +b
     c
";
        let context = "\
Differences (context diff with expected followed by actual):
    ***************
    *** 1,3 ****
      a
    ! x
      c
    --- 1,3 ----
      a
    ! b
      c
";
        for report in [unified, context] {
            let parsed = super::super::parse(&failure(report), &super::super::Workspace::new("/tmp/dt"));
            let messages: Vec<&str> = parsed.reports.iter().map(|r| r.message.as_str()).collect();
            assert_eq!(messages, ["DocTestFailure: expected x, got b"], "{report}");
        }
    }

    /// Under `--tb=line`, a doctest's traceback whose failure line never comes (the run was cut
    /// short) is still reported, and where it raised is not taken for the next doctest's place.
    #[test]
    fn a_doctest_traceback_without_its_failure_line_is_reported_alone() {
        let log = "\
=================================== FAILURES ===================================
022     >>> label(7.0)
UNEXPECTED EXCEPTION: TypeError('can only concatenate str (not \"float\") to str')
Traceback (most recent call last):
  File \"/usr/lib/python3.11/doctest.py\", line 1353, in __run
    exec(compile(example.source, filename, \"single\",
  File \"<doctest shipping.rates.label[0]>\", line 1, in <module>
  File \"/w/shipping/rates.py\", line 25, in label
    return \"EUR \" + price
TypeError: can only concatenate str (not \"float\") to str
=========================== short test summary info ============================
=================================== FAILURES ===================================
003     >>> {}['k']
UNEXPECTED EXCEPTION: KeyError('k')
Traceback (most recent call last):
  File \"/usr/lib/python3.11/doctest.py\", line 1353, in __run
    exec(compile(example.source, filename, \"single\",
  File \"<doctest shipping.util.f[0]>\", line 1, in <module>
KeyError: 'k'
/w/shipping/util.py:3: UnexpectedException
=========================== short test summary info ============================
FAILED shipping/util.py::shipping.util.f
";
        let parsed = super::super::parse(log, &super::super::Workspace::new("/w"));
        let places = super::super::report_places(&parsed);
        assert_eq!(
            places,
            [
                ("shipping/rates.py", 25, None),
                ("shipping/util.py", 3, Some("shipping/util.py::shipping.util.f")),
            ]
        );
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4000))]

        /// A traceback's frame is read as the regex it replaced reads it.
        #[test]
        fn frames_are_read_as_the_regex_reads_them(
            body in "[ \t\u{a0}]{0,2}(File \")?[a-z/.\"é]{0,5}(\")?(, line )?[0-9\u{663}]{0,3}(, in .{0,4}|, i|\n|x)?",
        ) {
            let by_regex = FILE_FRAME
                .captures(&body)
                .map(|c| (c.get(1).map_or("", |m| m.as_str()), c.get(2).map_or("", |m| m.as_str()), c.get(3).map(|m| m.as_str())));
            prop_assert_eq!(file_frame(&body), by_regex);
        }

        /// An exception line is read as the regexes it replaced read it.
        #[test]
        fn exception_lines_are_read_as_the_regexes_read_them(
            text in "([a-zA-Z_1é]{0,4}\\.?){0,3}(Error|Exception|Exit|Warning|NotFound|Ex)?(: ?.{0,6}|:|\n.{0,2}| x)?",
            must_be in any::<bool>(),
        ) {
            prop_assert_eq!(exception(&text, must_be), by_regex(&text, must_be));
        }

        /// A section's header is read as the regex it replaced reads it.
        #[test]
        fn section_headers_are_read_as_the_regex_reads_them(line in "[_ ]{0,5}[a-z_ é\n]{0,6}[_ ]{0,5}") {
            let section_header = Regex::new(r"^_+ (.+?) _+$").expect("regex");
            let by_regex = section_header.captures(&line).map(|c| c.get(1).map_or("", |m| m.as_str()));
            prop_assert_eq!(section_title(&line), by_regex, "{:?}", line);
        }
    }

    #[test]
    fn a_long_traceback_s_bare_assertion_error_says_what_the_assert_compared() {
        // pytest 9 on boltons (`--tb=long`): a rewritten `assert` shows the comparison on `E`
        // lines and ends with a bare `AssertionError`.
        let log = "\
=================================== FAILURES ===================================
_____________________________ test_parse_int_list ______________________________

    def test_parse_int_list():
>       assert strutils.parse_int_list(\"1,3,5-8,10-11,15\") == [1, 3, 5, 6, 7, 8, 10, 11, 15]
E       assert [1, 3, 5, 6, 7, 10, ...] == [1, 3, 5, 6, 7, 8, ...]
E         
E         At index 5 diff: 10 != 8

tests/test_strutils.py:84: AssertionError
";
        let parsed = crate::parse::parse(log, &crate::parse::Workspace::new("/w"));
        let messages: Vec<&str> = parsed.reports.iter().map(|r| r.message.as_str()).collect();
        assert_eq!(
            messages,
            ["AssertionError: assert [1, 3, 5, 6, 7, 10, ...] == [1, 3, 5, 6, 7, 8, ...]"]
        );
    }

    /// pytest 9.2 when a `conftest.py` fails to import (exit status 4, no test ran): the error
    /// under `E` is placed as a collection error's, a syntax error in the module it imports at
    /// that module's line, a missing module at the conftest's import.
    #[test]
    fn a_conftest_that_fails_to_import_is_placed_as_a_collection_error() {
        let indented = r#"ImportError while loading conftest '/w/tests/conftest.py'.
tests/conftest.py:2: in <module>
    from pkg.geom import area
E     File "/w/pkg/geom.py", line 4
E       return w * h
E                   ^
E   IndentationError: unindent does not match any outer indentation level
"#;
        let missing = r#"ImportError while loading conftest '/w/tests/conftest.py'.
tests/conftest.py:2: in <module>
    from pkg.shapes import area
E   ModuleNotFoundError: No module named 'pkg.shapes'
"#;
        let workspace = crate::parse::Workspace::new("/w");
        for (log, place) in [
            (indented, ("pkg/geom.py", 4, ErrorType::Indentation)),
            (missing, ("tests/conftest.py", 2, ErrorType::Import)),
        ] {
            let parsed = crate::parse::parse(log, &workspace);
            let places = crate::parse::report_kinds(&parsed);
            assert_eq!(places, [place], "{log}");
        }
    }

    /// A fixture that fails at setup (pytest 9.2, the error raised in the code it calls): every
    /// `--tb` mode gives the raise site and the fixture's line, where the test began. `native`
    /// starts the traceback in pytest's own code and names the fixture, not the test: its first
    /// frame in the project is the test's.
    #[test]
    fn a_fixture_failing_at_setup_gives_its_line_in_every_tb_mode() {
        let auto = r#"============================= test session starts ==============================
platform linux -- Python 3.11.7, pytest-9.2.0, pluggy-1.7.0
rootdir: /w
plugins: platformdirs-4.14.8
collected 1 item

tests/test_q.py E                                                        [100%]

==================================== ERRORS ====================================
_________________________ ERROR at setup of test_query _________________________

    @pytest.fixture
    def conn():
>       return connect("nohost")
               ^^^^^^^^^^^^^^^^^

tests/conftest.py:7: 
_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ 

url = 'nohost'

    def connect(url):
>       host = url.split("//")[1]
               ^^^^^^^^^^^^^^^^^^
E       IndexError: list index out of range

app/db.py:2: IndexError
=========================== short test summary info ============================
ERROR tests/test_q.py::test_query - IndexError: list index out of range
=============================== 1 error in 0.01s ===============================
"#;
        let native = r#"============================= test session starts ==============================
platform linux -- Python 3.11.7, pytest-9.2.0, pluggy-1.7.0
rootdir: /w
plugins: platformdirs-4.14.8
collected 1 item

tests/test_q.py E                                                        [100%]

==================================== ERRORS ====================================
_________________________ ERROR at setup of test_query _________________________
Traceback (most recent call last):
  File "/work/heldout19/venv/lib/python3.11/site-packages/_pytest/runner.py", line 361, in from_call
    result: TResult | None = func()
                             ^^^^^^
  File "/work/heldout19/venv/lib/python3.11/site-packages/_pytest/runner.py", line 250, in <lambda>
    lambda: runtest_hook(item=item, **kwds),
            ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
  File "/work/heldout19/venv/lib/python3.11/site-packages/pluggy/_caller.py", line 197, in __call__
    return self._hookexec(
           ^^^^^^^^^^^^^^^
  File "/work/heldout19/venv/lib/python3.11/site-packages/pluggy/_manager.py", line 183, in _hookexec
    return self._inner_hookexec(hook_name, methods, kwargs, firstresult)
           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
  File "/work/heldout19/venv/lib/python3.11/site-packages/pluggy/_execution.py", line 195, in _multicall
    raise exception
  File "/work/heldout19/venv/lib/python3.11/site-packages/pluggy/_execution.py", line 167, in _multicall
    teardown.throw(exception)
  File "/work/heldout19/venv/lib/python3.11/site-packages/_pytest/logging.py", line 871, in pytest_runtest_setup
    yield
  File "/work/heldout19/venv/lib/python3.11/site-packages/pluggy/_execution.py", line 167, in _multicall
    teardown.throw(exception)
  File "/work/heldout19/venv/lib/python3.11/site-packages/_pytest/capture.py", line 901, in pytest_runtest_setup
    return (yield)
            ^^^^^
  File "/work/heldout19/venv/lib/python3.11/site-packages/pluggy/_execution.py", line 147, in _multicall
    res = hook_impl.function(*args)
          ^^^^^^^^^^^^^^^^^^^^^^^^^
  File "/work/heldout19/venv/lib/python3.11/site-packages/_pytest/runner.py", line 170, in pytest_runtest_setup
    item.session._setupstate.setup(item)
  File "/work/heldout19/venv/lib/python3.11/site-packages/_pytest/runner.py", line 536, in setup
    col.setup()
  File "/work/heldout19/venv/lib/python3.11/site-packages/_pytest/python.py", line 1801, in setup
    self._request._fillfixtures()
  File "/work/heldout19/venv/lib/python3.11/site-packages/_pytest/fixtures.py", line 877, in _fillfixtures
    item.funcargs[argname] = self.getfixturevalue(argname)
                             ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
  File "/work/heldout19/venv/lib/python3.11/site-packages/_pytest/fixtures.py", line 701, in getfixturevalue
    fixturedef = self._get_active_fixturedef(argname)
                 ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
  File "/work/heldout19/venv/lib/python3.11/site-packages/_pytest/fixtures.py", line 797, in _get_active_fixturedef
    fixturedef.execute(request=subrequest)
  File "/work/heldout19/venv/lib/python3.11/site-packages/_pytest/fixtures.py", line 1301, in execute
    result: FixtureValue = ihook.pytest_fixture_setup(
                           ^^^^^^^^^^^^^^^^^^^^^^^^^^^
  File "/work/heldout19/venv/lib/python3.11/site-packages/pluggy/_caller.py", line 197, in __call__
    return self._hookexec(
           ^^^^^^^^^^^^^^^
  File "/work/heldout19/venv/lib/python3.11/site-packages/pluggy/_manager.py", line 183, in _hookexec
    return self._inner_hookexec(hook_name, methods, kwargs, firstresult)
           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
  File "/work/heldout19/venv/lib/python3.11/site-packages/pluggy/_execution.py", line 195, in _multicall
    raise exception
  File "/work/heldout19/venv/lib/python3.11/site-packages/pluggy/_execution.py", line 167, in _multicall
    teardown.throw(exception)
  File "/work/heldout19/venv/lib/python3.11/site-packages/_pytest/setuponly.py", line 36, in pytest_fixture_setup
    return (yield)
            ^^^^^
  File "/work/heldout19/venv/lib/python3.11/site-packages/pluggy/_execution.py", line 147, in _multicall
    res = hook_impl.function(*args)
          ^^^^^^^^^^^^^^^^^^^^^^^^^
  File "/work/heldout19/venv/lib/python3.11/site-packages/_pytest/fixtures.py", line 1407, in pytest_fixture_setup
    result = call_fixture_func(fixturefunc, request, kwargs)
             ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
  File "/work/heldout19/venv/lib/python3.11/site-packages/_pytest/fixtures.py", line 1074, in call_fixture_func
    fixture_result = fixturefunc(**kwargs)
                     ^^^^^^^^^^^^^^^^^^^^^
  File "/w/tests/conftest.py", line 7, in conn
    return connect("nohost")
           ^^^^^^^^^^^^^^^^^
  File "/w/app/db.py", line 2, in connect
    host = url.split("//")[1]
           ~~~~~~~~~~~~~~~^^^
IndexError: list index out of range
=========================== short test summary info ============================
ERROR tests/test_q.py::test_query - IndexError: list index out of range
=============================== 1 error in 0.01s ===============================
"#;
        for log in [auto, native] {
            let parsed = crate::parse::parse(log, &crate::parse::Workspace::new("/w"));
            let places = crate::parse::report_confidences(&parsed);
            assert_eq!(
                places,
                [("app/db.py", 2, Some(0.95)), ("tests/conftest.py", 7, Some(0.8))],
                "{log}"
            );
        }
    }

    /// unittest's subtests (Python 3.11): each failing subtest is a failure of its own, named by
    /// its parameters after the test's id, as pytest names its SUBFAILED sections; the test's
    /// own frame is still found by the test's function.
    #[test]
    fn each_unittest_subtest_that_fails_is_a_failure_of_its_own() {
        let log = r#"EE
======================================================================
ERROR: test_halves (tests.test_calc.HalfTests.test_halves) (n=3)
----------------------------------------------------------------------
Traceback (most recent call last):
  File "/w/tests/test_calc.py", line 9, in test_halves
    self.assertEqual(half(n), n // 2)
                     ^^^^^^^
  File "/w/app/calc.py", line 2, in half
    return n // 2 if n % 2 == 0 else n / 0
                                     ~~^~~
ZeroDivisionError: division by zero

======================================================================
ERROR: test_halves (tests.test_calc.HalfTests.test_halves) (n=5)
----------------------------------------------------------------------
Traceback (most recent call last):
  File "/w/tests/test_calc.py", line 9, in test_halves
    self.assertEqual(half(n), n // 2)
                     ^^^^^^^
  File "/w/app/calc.py", line 2, in half
    return n // 2 if n % 2 == 0 else n / 0
                                     ~~^~~
ZeroDivisionError: division by zero

----------------------------------------------------------------------
Ran 1 test in 0.001s

FAILED (errors=2)
"#;
        let parsed = crate::parse::parse(log, &crate::parse::Workspace::new("/w"));
        let reports = crate::parse::report_places(&parsed);
        let (n3, n5) = (
            Some("tests.test_calc.HalfTests.test_halves (n=3)"),
            Some("tests.test_calc.HalfTests.test_halves (n=5)"),
        );
        assert_eq!(
            reports,
            [
                ("app/calc.py", 2, n3),
                ("tests/test_calc.py", 9, n3),
                ("app/calc.py", 2, n5),
                ("tests/test_calc.py", 9, n5)
            ]
        );
        let outcomes: Vec<&str> = parsed.tests.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(outcomes, ["tests.test_calc.HalfTests.test_halves"]);
    }

    /// pytest 9.2 `--tb=short` (an outsider trial's cachetools 8.0.2): an exception raised while
    /// handling another (`raise KeyErorr(...) from None` in an `except StopIteration:`) is the
    /// failure, at its raise site and the test's line: the part before it only led there.
    #[test]
    fn a_chained_failure_is_the_exception_its_last_part_raised_in_the_project() {
        let log = r#"=================================== FAILURES ===================================
__________________________ FIFOCacheTest.test_popitem __________________________
src/cachetools/__init__.py:213: in popitem
    key = next(iter(self.__order))
          ^^^^^^^^^^^^^^^^^^^^^^^^
E   StopIteration

During handling of the above exception, another exception occurred:
tests/__init__.py:194: in test_popitem
    cache.popitem()
src/cachetools/__init__.py:215: in popitem
    raise KeyErorr("%s is empty" % type(self).__name__) from None
          ^^^^^^^^
E   NameError: name 'KeyErorr' is not defined
=========================== short test summary info ============================
"#;
        let workspace = crate::parse::Workspace::new("/w").with_files(vec![
            "src/cachetools/__init__.py".to_owned(),
            "tests/__init__.py".to_owned(),
        ]);
        let parsed = crate::parse::parse(log, &workspace);
        assert_eq!(
            crate::parse::report_types(&parsed),
            [
                ("src/cachetools/__init__.py".to_owned(), 215, "Import".to_owned()),
                ("tests/__init__.py".to_owned(), 194, "Import".to_owned())
            ]
        );
        assert_eq!(parsed.reports[0].message, "NameError: name 'KeyErorr' is not defined");
    }

    /// A line of a doctest's diff may start with any character: another tool's line right after
    /// the diff (a jest `✕`, found by the routing property test) is no diff mark, and the
    /// doctest's report keeps what the diff said.
    #[test]
    fn a_doctest_diff_line_may_start_with_any_character() {
        let log = include_str!("../../tests/fixtures/logs/py_doctest_ndiff.log")
            .replace("    + 8.25\n", "    + 8.25\n    ✕ renders the header (3 ms)\n");
        let parsed = crate::parse::parse(&log, &crate::parse::Workspace::new("/tmp/kubeheal-fixtures/py_doctest"));
        let report = parsed
            .reports
            .iter()
            .find(|r| r.file_path == "docs/usage.txt" && r.line_number == 9)
            .expect("the doctest's report");
        assert_eq!(report.message, "DocTestFailure: expected 9.5, got 8.25");
    }

    /// faulthandler's dumps (CPython 3.11, from runs of unittest and pytest): the crashed
    /// thread's stack when one is `Current`, else the one that runs a test file, else the last;
    /// reported at its deepest project frame with the test's; a traceback's `File` line without
    /// a function after a cut dump ends it.
    #[test]
    fn a_faulthandler_dump_is_reported_at_the_stack_that_failed() {
        let ws = crate::parse::Workspace::new("/w").with_files(
            ["src/cache.py", "tests/test_threading.py", "app/cli.py", "app/worker.py"]
                .map(str::to_owned)
                .to_vec(),
        );
        let places = |log: &str| -> Vec<(String, u32, Option<String>)> {
            crate::parse::report_places(&crate::parse::parse(log, &ws))
                .into_iter()
                .map(|(f, l, t)| (f.to_owned(), l, t.map(str::to_owned)))
                .collect()
        };
        let aborted = "\
.F...Fatal Python error: Aborted

Thread 0x00007f8409ffb6c0 (most recent call first):
  File \"/w/src/cache.py\", line 46 in __call__
  File \"/w/tests/test_threading.py\", line 213 in run
  File \"/root/.pyenv/versions/3.11.7/lib/python3.11/threading.py\", line 1045 in _bootstrap_inner

Thread 0x00007f844fa3d6c0 (most recent call first):
  File \"/w/src/cache.py\", line 46 in __call__
  File \"/w/src/cache.py\", line 50 in __call__
  File \"/w/tests/test_threading.py\", line 213 in run

Current thread 0x00007f845108eb80 (most recent call first):
  File \"/root/.pyenv/versions/3.11.7/lib/python3.11/threading.py\", line 1123 in join
  File \"/w/tests/test_threading.py\", line 219 in run_threading_test
  File \"/w/tests/test_threading.py\", line 50 in test_cachedmethod_lock
  File \"/root/.pyenv/versions/3.11.7/lib/python3.11/unittest/case.py\", line 579 in _callTestMethod
";
        // The process was aborted while it hung: the thread that entered the locked function
        // again (line 50) is where the others wait.
        let test = Some("test_cachedmethod_lock".to_owned());
        assert_eq!(
            places(aborted),
            [
                ("tests/test_threading.py".to_owned(), 219, test.clone()),
                ("tests/test_threading.py".to_owned(), 50, test.clone()),
                ("src/cache.py".to_owned(), 50, test)
            ]
        );
        // Without that thread, where most threads are blocked.
        let without = aborted.replace("line 50 in __call__", "line 50 in get");
        let last = crate::parse::parse(&without, &ws).reports.pop().expect("reports");
        assert_eq!((last.file_path.as_str(), last.line_number), ("src/cache.py", 46));
        assert!(
            last.message.ends_with("(2 threads are blocked here)"),
            "{}",
            last.message
        );
        let timeout = "\
tests/test_threading.py Timeout (0:00:03)!
Thread 0x00007f9708849b80 (most recent call first):
  File \"/w/app/worker.py\", line 7 in loop

Thread 0x00007f9708849b81 (most recent call first):
  File \"/w/src/cache.py\", line 70 in __setitem__
  File \"/w/tests/test_threading.py\", line 431 in test_clear

Thread 0x00007f9708849b82 (most recent call first):
  File \"/w/app/worker.py\", line 9 in idle
  File \"<frozen runpy>\", line 88 in _run_code
  File \"/w/app/cli.py\", line 5
    return result
TabError: inconsistent use of tabs and spaces in indentation
";
        let test = Some("test_clear".to_owned());
        assert_eq!(
            places(timeout),
            [
                ("src/cache.py".to_owned(), 70, test.clone()),
                ("tests/test_threading.py".to_owned(), 431, test.clone()),
                // The other threads' places, one each: the first.
                ("app/worker.py".to_owned(), 7, test),
                ("app/cli.py".to_owned(), 5, None),
            ]
        );
        // A crash's other threads have nothing to do with it.
        let crash = timeout.replace(
            "tests/test_threading.py Timeout (0:00:03)!",
            "Fatal Python error: Segmentation fault",
        );
        assert_eq!(places(&crash).len(), 3);
        assert_eq!(
            fault_frame("  File \"/w/a.py\", line 9 in f"),
            Some(("/w/a.py", 9, "f"))
        );
        assert_eq!(fault_frame("  File \"/w/a.py\", line 9, in f"), None);
        assert!(fault_dump_start("Timeout (0:00:01)!").is_some() && fault_dump_start("Timeout (soon)!").is_none());
    }

    /// pytest 9.2 interrupted by a `KeyboardInterrupt` the code raised (the twenty-eighth
    /// outsider trial's, on inflection 0.5.1, captured by running it): the place the line after
    /// its banner names, when it is the project's.
    #[test]
    fn an_interrupted_run_is_placed_where_the_interrupt_landed() {
        let ws = crate::parse::Workspace::new("/work/heldout30/repos/inflection")
            .with_files(vec!["inflection/__init__.py".to_owned()]);
        let log = "\
................................................
!!!!!!!!!!!!!!!!!!!!!!!!!!!! KeyboardInterrupt: th !!!!!!!!!!!!!!!!!!!!!!!!!!!!!
/work/heldout30/repos/inflection/inflection/__init__.py:227: KeyboardInterrupt: th
(to show a full traceback on KeyboardInterrupt use --full-trace)
336 passed in 0.28s
";
        let parsed = crate::parse::parse(log, &ws);
        assert_eq!(
            crate::parse::report_places(&parsed),
            [("inflection/__init__.py", 227, None)]
        );
        assert_eq!(parsed.reports[0].confidence_score, Some(0.7));
        // Interrupted in the standard library: no place of the project's.
        let elsewhere = log.replace(
            "/work/heldout30/repos/inflection/inflection/__init__.py:227",
            "/usr/lib/python3.11/selectors.py:468",
        );
        assert!(crate::parse::parse(&elsewhere, &ws).reports.is_empty());
    }

    /// pytest-timeout 2.4's thread dump (the golden `pytest_timeout_thread`), its closing banner
    /// cut off and another step's output after it: the dump ends at that output, which is read.
    #[test]
    fn a_timeout_dump_without_its_closing_banner_ends_at_the_next_step_s_output() {
        let log = "\
tests/test_retry.py .+++++++++++++++++++++++++++++++++++ Timeout ++++++++++++++++++++++++++++++++++++
~~~~~~~~~~~~~~~~~~~~ Stack of MainThread (140632396446592) ~~~~~~~~~~~~~~~~~~~~~
  File \"/w/tests/test_retry.py\", line 9, in test_never_waits_longer_than_the_cap
    assert backoff_delays(1, 5, 5) == [1, 2, 4, 5, 5]
  File \"/w/retry.py\", line 10, in backoff_delays
    continue
~~~~~~~~~~~~~~~~~~~~ Stack of Thread-1 (140632300000000) ~~~~~~~~~~~~~~~~~~~~~
  File \"/w/app/worker.py\", line 3, in run
    time.sleep(1)
Traceback (most recent call last):
  File \"/w/app/cli.py\", line 4, in <module>
    main()
KeyError: 'port'
";
        let ws = crate::parse::Workspace::new("/w").with_files(
            ["tests/test_retry.py", "retry.py", "app/worker.py", "app/cli.py"]
                .map(str::to_owned)
                .to_vec(),
        );
        let parsed = crate::parse::parse(log, &ws);
        let places: Vec<(&str, u32)> = crate::parse::report_places(&parsed)
            .into_iter()
            .map(|(f, l, _)| (f, l))
            .collect();
        assert_eq!(
            places,
            [("retry.py", 10), ("tests/test_retry.py", 9), ("app/cli.py", 4)]
        );
        // Cut right after the banner, or inside another thread's stack, then Python's report of
        // a syntax error, whose place is indented as a frame is but names no function.
        for cut in [
            "tests/test_retry.py .+++++++++++ Timeout +++",
            "+++++ Timeout +++++\n~~~~ Stack of Thread-1 (1406) ~~~~\n  File \"/w/app/worker.py\", line 3, in run",
        ] {
            let log = format!(
                "{cut}\n  File \"/w/app/cli.py\", line 5\n    return result\nTabError: inconsistent use of tabs and spaces in indentation\n"
            );
            let parsed = crate::parse::parse(&log, &ws);
            let found: Vec<(&str, u32, String)> = crate::parse::report_findings(&parsed)
                .into_iter()
                .map(|(file, line, kind, _)| (file, line, kind))
                .collect();
            assert_eq!(found, [("app/cli.py", 5, "Indentation".to_owned())], "{cut}");
        }
        assert!(is_timeout_banner("+++++ Timeout +++++") && !is_timeout_banner("a + Timeout +"));
        assert_eq!(stack_of("~~~~ Stack of Thread-1 (1406) ~~~~"), Some("Thread-1"));
    }

    /// pytest's long traceback cut by `head -c` before its exception (the twenty-ninth outsider
    /// trial's, on boltons 24.0.0): the frames it showed are reported, less surely; the same
    /// failure cut and followed by another run's session is too; a whole one is unchanged.
    #[test]
    fn a_failure_cut_before_its_exception_is_placed_by_the_frames_it_showed() {
        let cut = "\
=================================== FAILURES ===================================
____________________________ test_remap_drops_nones ____________________________

    def test_remap_drops_nones():
        data = {'name': 'x', 'tags': ['a', None, 'b'], 'meta': {'owner': None, 'size': 3}}
>       assert strip_nones(data) == {'name': 'x', 'tags': ['a', 'b'], 'meta': {'size': 3}}

tests/test_trial_extra.py:31: 
_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ 
tests/test_trial_extra.py:26: in strip_nones
    return remap(obj, visit=lambda p, k, v: v is not None)
_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ 

root = {'meta': {'owner': None, 'size': 3}, 'name': 'x', 'tags': ['a', None, 'b']}

    def remap(root, visit=default_visit, enter=default_enter, exit=default_exit,
              **kwargs):
        \"\"\"The remap (\"recursive map\") function is used to traverse and
";
        let ws = crate::parse::Workspace::new("/work/heldout31/repos/boltons").with_files(
            ["tests/test_trial_extra.py", "boltons/iterutils.py"]
                .map(str::to_owned)
                .to_vec(),
        );
        let expected = [
            ("tests/test_trial_extra.py", 26, Some(0.5)),
            ("tests/test_trial_extra.py", 31, Some(0.8)),
        ];
        let parsed = crate::parse::parse(cut, &ws);
        assert_eq!(crate::parse::report_confidences(&parsed), expected);
        let then_another_run = format!(
            "{cut}============================= test session starts ==============================\n\
             collected 0 items\n"
        );
        let parsed = crate::parse::parse(&then_another_run, &ws);
        assert_eq!(crate::parse::report_confidences(&parsed), expected);
        let whole = format!(
            "{cut}E       AssertionError: assert {{}} == {{'a': 1}}\n\ntests/test_trial_extra.py:26: AssertionError\n"
        );
        let parsed = crate::parse::parse(&whole, &ws);
        assert_eq!(
            crate::parse::report_confidences(&parsed)[0].2,
            Some(0.95),
            "{:?}",
            parsed.reports
        );
    }
}
