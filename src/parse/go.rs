//! Go: `go build` / `go vet` diagnostics, `go test` outcomes (`--- FAIL: TestX/sub`), `t.Errorf`
//! lines, panics with their goroutine frames, the race detector's reports (`go test -race`),
//! Ginkgo's failed specs, and `go test -json` events (whose `Output` is read as the text it
//! carries).

use std::borrow::Cow;
use std::sync::LazyLock;

use regex::Regex;
use serde::Deserialize;

use super::look::Look;
use super::outcome::InfraKind;
use super::{
    Finding, Marks, Needle, PlaceCounts, Rank, Sink, TestOutcome, has, has_byte, set_name, split_location, split_word,
};
use crate::api::shared::ErrorType;

static TEST_LOCATION: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^\s+([\w./-]+_test\.go|[\w./-]+\.go):(\d+): (.*)$").expect("regex"));
static PACKAGE_RESULT: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^(ok|FAIL|\?)\s+(\S+)\s+(?:[\d.]+s|\(cached\)|\[no test files\])").expect("regex"));

#[derive(Deserialize)]
struct Event {
    #[serde(rename = "Action")]
    action: String,
    #[serde(rename = "Test")]
    test: Option<String>,
    #[serde(rename = "Output")]
    output: Option<String>,
}

/// How the runtime heads the report of an error no program can recover from (a deadlock,
/// concurrent map writes), the goroutines' stacks following as a panic's do.
const FATAL_ERROR: &str = "fatal error: ";

/// The testing package's word for a test that ended by `runtime.Goexit` (a `t.FailNow` from a
/// goroutine or a subtest), printed at its own `testing.go` line.
const GOEXIT: &str = "test executed panic(nil) or runtime.Goexit";

/// The runtime's fatal error when every goroutine is blocked.
const DEADLOCK: &str = "all goroutines are asleep - deadlock!";

/// A panic whose goroutine stack is being read.
struct Panic {
    /// `panic` or `fatal error`, as the runtime heads it.
    kind: &'static str,
    message: String,
    /// The frame in the project it was raised at, as far as the stack has been read.
    site: Option<(String, u32)>,
    /// A `panic(...)` function line was read and no project frame since: the first project frame
    /// under it called `panic` (or what did). A panic that a deferred function recovered and
    /// raised again (`[recovered, repanicked]`) shows one such line per `panic` call, the first
    /// one raised lowest: its site is under the last one.
    under_panic_call: bool,
    /// The outermost frame in a test file read so far: the test's own call that led to the
    /// panic.
    test_frame: Option<(String, u32)>,
    /// The last line was `created by ...`: the frame that follows is where the goroutine was
    /// started, not a call on its stack.
    creator_next: bool,
    /// The `goroutine N [running]:` line was read. Before it come the message's other lines and
    /// the runtime's (`[signal SIGSEGV: segmentation violation ...]`); after it, the stack,
    /// which the first line of another kind ends.
    in_stack: bool,
    /// Lines read before the stack: a `panic:` line with no stack after it is given up.
    lines_before_stack: u32,
    /// `panic: test timed out after 2s`: the tests still running, which its `running tests:`
    /// lines name; then the stacks of every goroutine follow, and the place is in the one
    /// running a test (where it is blocked), not in the alarm's that panicked. Also
    /// `fatal error: all goroutines are asleep - deadlock!`, whose stacks are read the same way.
    hang: Option<Hang>,
    /// `fatal error: stack overflow`: how often each project frame of the stack is called
    /// ([`STACK_OVERFLOW`]).
    recursion: Option<PlaceCounts>,
}

/// The runtime's fatal error when a goroutine's stack outgrows its limit: a recursion without
/// end. Its stack's top frame is wherever the limit happened to be reached; the frame it repeats
/// is the call that recursed, where the fix goes.
const STACK_OVERFLOW: &str = "stack overflow";

/// What the stacks of a hang are read for ([`Panic::hang`]): a test's timeout, or the runtime's
/// deadlock. One goroutine waits (the test's, or the first); the others say on what.
#[derive(Default)]
struct Hang {
    /// The tests running when the time ran out (at most [`MAX_RUNNING_TESTS`]).
    running: Vec<String>,
    /// The goroutine whose stack is being read runs one of them: a function line named it.
    runs_test: bool,
    /// A deadlock's report: the first goroutine with a project frame is the one that waits (no
    /// test is named as running).
    first_is_the_failure: bool,
    /// That goroutine's first project frame and its outermost frame in a test file.
    site: Option<(String, u32)>,
    test_frame: Option<(String, u32)>,
    /// That first project frame is in a test file (a goroutine the test started, blocked in the
    /// test's own code: not where the code under test hangs).
    site_in_test: bool,
    /// That goroutine's stack has a `panic(...)` call, and its first project frame under it:
    /// a goroutine that panicked and then blocked (a deferred `Lock` on a mutex it held).
    under_panic_call: bool,
    panicked_at: Option<(String, u32)>,
    /// Where the goroutines that run no test are: the first that panicked and blocked, and how
    /// many are blocked at each place in the project's code ([`PlaceCounts`]).
    first_panicked_at: Option<(String, u32)>,
    blocked_at: PlaceCounts,
}

/// Most running tests a timeout's list is read for.
const MAX_RUNNING_TESTS: usize = 16;

impl Hang {
    /// A goroutine's stack ends: when it is the one that waits (it ran a test, or it is a
    /// deadlock's first), its places are the panic's (the first such goroutine's); another's
    /// say where the hang is ([`Hang::place`]).
    fn end_goroutine(&mut self, panic_site: &mut Option<(String, u32)>, test_frame: &mut Option<(String, u32)>) {
        let waits = self.runs_test || self.first_is_the_failure && self.site.is_some();
        if waits && panic_site.is_none() {
            self.first_is_the_failure = false;
            *panic_site = self.site.take();
            *test_frame = self.test_frame.take();
        } else if let Some(place) = self.panicked_at.take() {
            self.first_panicked_at.get_or_insert(place);
        } else if let Some(place) = self.site.take().filter(|_| !self.runs_test && !self.site_in_test) {
            self.blocked_at.count(place);
        }
        self.runs_test = false;
        self.site = None;
        self.test_frame = None;
        self.site_in_test = false;
        self.under_panic_call = false;
        self.panicked_at = None;
    }

    /// Where the other goroutines say the hang is: where one panicked and blocked, else where
    /// most of them are blocked in the project's code (the first such place on a tie), with what
    /// the report says of it.
    fn place(&self) -> Option<(&(String, u32), String)> {
        if let Some(place) = &self.first_panicked_at {
            return Some((place, "a goroutine panicked here and then blocked".to_owned()));
        }
        let (place, count) = self.blocked_at.most()?;
        let what = if count == 1 {
            "a goroutine is blocked here".to_owned()
        } else {
            format!("{count} goroutines are blocked here")
        };
        Some((place, what))
    }

    /// Whether a goroutine's function line (`pkg_test.TestX(0x...)`, `pkg.TestX.func1()` for a
    /// subtest) is a running test's.
    fn names_running_test(&self, function: &str) -> bool {
        let name = function.split('(').next().unwrap_or("");
        let name = name.rsplit('/').next().unwrap_or(name);
        self.running.iter().any(|test| {
            let top = test.split('/').next().unwrap_or(test);
            name.split('.').any(|part| part == top)
        })
    }
}

/// A report of the race detector (`go test -race`), until its closing rule: two goroutines'
/// accesses to one variable, each with its stack, then where the goroutines were created.
///
/// ```text
/// WARNING: DATA RACE
/// Write at 0x00c0000e21e0 by goroutine 9:
///   github.com/patrickmn/go-cache.(*cache).Set()
///       /work/gocache/cache.go:61 +0x15b
///
/// Previous read at 0x00c0000e21e0 by goroutine 8:
///   ...
/// Goroutine 9 (running) created at:
///   ...
/// ==================
/// ```
#[derive(Default)]
struct Race {
    /// The access the detector caught (`write`) and the one before it (`previous read`), each
    /// with the function of its first frame in the project.
    accesses: Vec<(String, String)>,
    /// The first frame in the project of the caught access: where the report goes.
    site: Option<(String, u32)>,
    /// The function line read last, for the frame line under it.
    function: String,
    /// Where the stacks of the goroutines' creation begin: none of their frames is the place.
    in_creation: bool,
    /// Lines read: a report that never closes is given up.
    lines: u32,
}

/// Most lines of a race report (two stacks and two creation stacks, each frame two lines).
const MAX_RACE_LINES: u32 = 400;

/// A failed Ginkgo (v2) spec, from its header or its failure's first line to the line that
/// places the failure (`In [It] at: path:N`), or, for a panic outside the project, to the first
/// project frame of the stack trace under it:
///
/// ```text
/// • [FAILED] [0.000 seconds]
/// Cache [It] increments an int
/// /work/gocache/suite/suite_test.go:26
///
///   [FAILED] Expected
///       <int>: 2
///   to equal
///       <int>: 8
///   In [It] at: /work/gocache/suite/suite_test.go:31 @ 11/26/26 21:02:36.962
/// ------------------------------
/// ```
///
/// A JUnit or JSON report's failure text holds the same lines from `[FAILED]` on.
#[derive(Default)]
struct GinkgoFailure {
    /// The spec's name (`[It] Cache increments an int`), from the line after the header.
    spec: Option<String>,
    /// The header was read and the spec's name is the next line.
    awaiting_spec: bool,
    /// The failure's text, from `[FAILED]` to the line that places it.
    message: String,
    in_message: bool,
    /// The failure was placed outside the project (a runtime panic): the stack trace follows.
    awaiting_stack: bool,
    lines: u32,
}

/// Most lines of a Ginkgo failure read before it is placed (a long message, a deep stack).
const MAX_GINKGO_LINES: u32 = 100;

/// The states Ginkgo reports a spec that did not pass in.
const GINKGO_STATES: [&str; 5] = ["[FAILED]", "[PANICKED]", "[TIMEDOUT]", "[INTERRUPTED]", "[ABORTED]"];

/// Whether `text` (trimmed) begins a Ginkgo failure's message (`[FAILED] Expected`), not the
/// `-v` line that places it in passing (`[FAILED] in [It] - path:N`) nor a line of the summary
/// of the failures (`[TIMEDOUT] Cache [It] waits forever`).
fn is_ginkgo_failure_start(text: &str) -> bool {
    GINKGO_STATES.iter().any(|s| {
        text.strip_prefix(s)
            .is_some_and(|rest| rest.starts_with(' ') && !rest.starts_with(" in [") && !names_a_spec(rest))
    })
}

/// Whether the text after a state names a spec, as Ginkgo's summary of the failures does after
/// `[TIMEDOUT]` (`Cache [It] waits forever`): a node's kind in brackets.
fn names_a_spec(rest: &str) -> bool {
    [
        "[It] ",
        "[BeforeEach] ",
        "[AfterEach] ",
        "[JustBeforeEach] ",
        "[BeforeAll] ",
        "[AfterAll] ",
    ]
    .iter()
    .any(|kind| rest.contains(kind))
}

/// A spec's name as Ginkgo's JUnit report gives it, `[It] Cache increments an int`, from the line
/// under its console header, `Cache [It] increments an int` (the containers, the node's kind, the
/// spec's text): one name for one spec, whichever of the two the log holds.
fn ginkgo_spec_name(line: &str) -> String {
    let kind = line.find(" [").and_then(|open| {
        let close = open + line[open..].find("] ")?;
        Some((open, close))
    });
    match kind {
        Some((open, close)) => format!("{} {} {}", &line[open + 1..=close], &line[..open], &line[close + 2..]),
        None => line.to_owned(),
    }
}

/// A line of `go test`'s own that ends a Ginkgo failure never placed (a log cut inside it, a
/// summary's line taken for one): a test's result or start, a package's, a panic, the race
/// detector, Ginkgo's summary.
fn ends_a_ginkgo_failure(trimmed: &str) -> bool {
    [
        "--- ",
        "=== RUN",
        "FAIL\t",
        "ok  \t",
        "panic: ",
        "WARNING: DATA RACE",
        "Summarizing ",
        "Ran ",
    ]
    .iter()
    .any(|p| trimmed.starts_with(p))
}

/// Whether `line` is the header of a Ginkgo spec that did not pass (`• [FAILED] [0.000 seconds]`).
fn is_ginkgo_header(line: &str) -> bool {
    line.strip_prefix("• ")
        .is_some_and(|rest| GINKGO_STATES.iter().any(|s| rest.starts_with(s)))
}

/// Whether a line at column 0 is one of a race report's parts: an access's or a goroutine's
/// heading (`Write at 0x... by goroutine 9:`, `Goroutine 9 (running) created at:`).
fn is_race_heading(line: &str) -> bool {
    line.starts_with("Goroutine ") || line.ends_with(':') && line.contains(" at 0x")
}

/// Most races kept waiting for their test's name.
const MAX_UNNAMED_RACES: usize = 16;

/// What the testing package prints under the test whose run the race detector saw a race in.
const RACE_DETECTED: &str = "race detected during execution of test";

/// Most lines between a `panic:` line and its goroutine's stack (a message over several lines,
/// the runtime's signal line).
const MAX_LINES_BEFORE_STACK: u32 = 32;

/// A failure whose location line says nothing (`    x_test.go:16: `) and whose message follows
/// as testify prints it: a table of labels and values under the location (`Error Trace:`,
/// `Error:`, `Test:`, `Messages:`), each row indented, a tab, the label, a tab, the value; a row
/// with no label goes on with the last one's value.
struct Testify {
    file: String,
    line: u32,
    test: Option<String>,
    /// The label whose value the rows are, without its colon.
    label: String,
    error: String,
    messages: String,
}

/// Most bytes kept of a testify failure's error and of its messages.
const MAX_TESTIFY_TEXT: usize = 300;

impl Testify {
    fn row(&mut self, label: &str, value: &str) {
        if !label.is_empty() {
            self.label = label.trim_end_matches(':').to_owned();
        }
        let text = match self.label.as_str() {
            // The diff repeats what `expected:` and `actual:` said.
            "Error" if value == "Diff:" => {
                self.label = "Diff".to_owned();
                return;
            }
            "Error" => &mut self.error,
            "Messages" => &mut self.messages,
            _ => return,
        };
        if text.len() < MAX_TESTIFY_TEXT && !value.is_empty() {
            if !text.is_empty() {
                text.push(' ');
            }
            text.push_str(super::truncate_bytes(value, MAX_TESTIFY_TEXT - text.len()));
        }
    }
}

/// A row of testify's table: its label (empty on a row that goes on) and its value.
fn testify_row(line: &str) -> Option<(&str, &str)> {
    let row = line.trim_start_matches(' ').strip_prefix('\t')?;
    let (label, value) = row.split_once('\t').unwrap_or((row, ""));
    Some((label.trim(), value.trim()))
}

#[derive(Default)]
pub(crate) struct Go {
    /// The test whose output the following lines are.
    current_test: Option<String>,
    /// The test the last `--- FAIL:` line named (`--- FAIL: TestX/#00`), until a test starts
    /// (`=== RUN`) or a package's result: a test that panics is reported failed, its parents
    /// around it, just before the `panic:` line, and parallel tests may announce that they go on
    /// (`=== CONT`) in between. Then it, not the last announced, is the panic's test. Only Go's
    /// own lines change it, which the routing of lines always hands to this reader.
    failed_last: Option<String>,
    /// A panic, until its stack ends.
    panic: Option<Panic>,
    /// A testify failure, until its table ends.
    testify: Option<Testify>,
    /// A race detector's report, until its closing rule.
    race: Option<Race>,
    /// A Ginkgo spec's failure, until it is placed.
    ginkgo: Option<GinkgoFailure>,
    /// The races reported since the last test the testing package said saw a race: its line
    /// under the test's `--- FAIL:`, after the reports, names their test (the name the last
    /// `--- FAIL:` gave is another test's, unless `-v` announced this one).
    unnamed_races: Vec<usize>,
    /// The test the testing package said saw a race before any report of it came: the race
    /// detector writes to standard error, the tests to standard output, and a log of both may
    /// hold the report after the test's lines.
    raced_test: Option<String>,
    /// A race ended with no frame in the project to report: the testing package's next `race
    /// detected` line is its test's, and names no later race.
    unreported_race: bool,
    packages_with_tests: u32,
    packages_without_tests: u32,
    /// staticcheck's `-f stylish`: the file whose rows follow.
    stylish_file: Option<String>,
}

impl Go {
    /// Whether [`Go::line`] can do anything with the line: a JSON event, a panic and its frames,
    /// a test's start or result, a package's result, or a line that names a `.go` file.
    #[inline]
    pub fn wants(&self, look: &Look<'_>) -> bool {
        // staticcheck `-f stylish`: a file's path alone (ends in `o`), then its rows.
        if self.stylish_file.is_some() || look.last == b'o' && is_go_file_alone(look.line) {
            return true;
        }
        let Some(first) = look.first else {
            return false;
        };
        let line = look.line;
        match first {
            // Inside a panic's stack, every line: its function lines and its end matter; so in
            // a testify table.
            _ if self.panic.is_some() || self.testify.is_some() || self.race.is_some() || self.ginkgo.is_some() => true,
            b'W' => line.starts_with("WARNING: DATA RACE") || look.may_hold(Needle::GoFile),
            // Ginkgo's header of a spec that did not pass, and its failure's first line.
            0xe2 => is_ginkgo_header(line) || look.may_hold(Needle::GoFile),
            b'[' => is_ginkgo_failure_start(line) || look.may_hold(Needle::GoFile),
            b'{' => is_event(line),
            b'p' => line.starts_with("panic: "),
            b'f' => line.starts_with(FATAL_ERROR),
            b'=' => line.starts_with("=== "),
            b'o' | b'F' | b'?' => true,
            b'-' => line.starts_with("--- ") || look.may_hold(Needle::GoFile),
            // A goroutine frame matters only inside a panic's stack, taken above.
            b'\t' => false,
            // A subtest's `    --- FAIL: TestX/sub (0.00s)`.
            b' ' => {
                let trimmed = look.trimmed();
                trimmed.starts_with("--- ")
                    || look.may_hold(Needle::GoFile)
                    || trimmed.starts_with('[') && is_ginkgo_failure_start(trimmed)
            }
            _ => look.may_hold(Needle::GoFile),
        }
    }

    pub fn line(&mut self, line: &str, sink: &mut Sink<'_>) {
        if self.stylish_line(line, sink) {
            return;
        }
        if is_event(line) {
            self.json_event(line, sink);
            return;
        }
        self.text(line, sink);
    }

    /// staticcheck's `-f stylish`, a file's path alone and a row for each finding under it —
    ///
    /// ```text
    /// /w/bytes.go
    ///   (125, 3)  SA4017  Replace doesn't have side effects and its return value is ignored
    /// ```
    ///
    /// A check's finding is LINTING. (A package that does not compile is a row of the file `-`,
    /// the compiler's own lines after it, read as they are.) Whether the line was one of these.
    fn stylish_line(&mut self, line: &str, sink: &mut Sink<'_>) -> bool {
        if let Some(file) = self.stylish_file.as_deref() {
            if let Some((n, check, message)) = stylish_row(line) {
                sink.report(Finding {
                    file,
                    line: n,
                    error_type: ErrorType::Linting,
                    message: Cow::Owned(format!("{check} {message}")),
                    test: None,
                    confidence: 0.9,
                    rank: Rank::Warning,
                    diagnostic: true,
                });
                return true;
            }
            if line.trim().is_empty() {
                return true;
            }
            self.stylish_file = None;
        }
        if is_go_file_alone(line) {
            self.stylish_file = Some(line.to_owned());
            return true;
        }
        false
    }

    fn json_event(&mut self, line: &str, sink: &mut Sink<'_>) {
        let Ok(event) = serde_json::from_str::<Event>(line) else {
            return;
        };
        match (event.action.as_str(), event.test.as_deref()) {
            // A package's compiler and vet output (Go 1.24 on) is `build-output`.
            ("output" | "build-output", test) => {
                if let Some(output) = event.output {
                    if test.is_some() && test != self.current_test.as_deref() {
                        // Another test's output: a panic read so far was the last test's.
                        self.end_panic(sink);
                        self.current_test = test.map(str::to_owned);
                    }
                    // The output is decoded from JSON: not the text the scan of the line saw.
                    let marks = sink.set_marks(Marks::ALL);
                    for text in output.lines() {
                        let cleaned = super::clean::clean_line(text);
                        self.text(&cleaned, sink);
                    }
                    sink.set_marks(marks);
                    // test2json names each output's test: a panic is the test its event names.
                    self.failed_last = None;
                }
            }
            ("fail", Some(test)) => sink.test(test, TestOutcome::Failed),
            ("pass", Some(test)) => sink.test(test, TestOutcome::Passed),
            ("skip", Some(test)) => sink.test(test, TestOutcome::Skipped),
            _ => {}
        }
    }

    fn text(&mut self, line: &str, sink: &mut Sink<'_>) {
        if let Some(testify) = self.testify.as_mut() {
            if let Some((label, value)) = testify_row(line) {
                testify.row(label, value);
                return;
            }
            self.end_testify(sink);
        }
        if self.race.is_some() && self.race_line(line, sink) {
            return;
        }
        // Most lines are ruled out by a byte: a Ginkgo failure begins with `•` or `[`.
        if (self.ginkgo.is_some() || matches!(line.bytes().find(|&b| b != b' '), Some(0xe2 | b'[')))
            && self.ginkgo_line(line, sink)
        {
            return;
        }
        let Some(&first) = line.as_bytes().first() else {
            return;
        };
        if line.starts_with("WARNING: DATA RACE") {
            self.race = Some(Race::default());
            return;
        }
        let fatal = line
            .strip_prefix(FATAL_ERROR)
            .filter(|m| !m.starts_with("runtime: out of memory"));
        if let Some(message) = line.strip_prefix("panic: ").or(fatal) {
            self.end_panic(sink);
            if let Some(test) = self.failed_last.take() {
                self.current_test = Some(test);
            }
            let hang = if message.starts_with("test timed out after ") {
                Some(Hang::default())
            } else if message == DEADLOCK {
                // Every goroutine is blocked; the first listed (main's, or a test's) waits on
                // the others.
                Some(Hang {
                    first_is_the_failure: true,
                    ..Hang::default()
                })
            } else {
                None
            };
            self.panic = Some(Panic {
                kind: if fatal.is_some() { "fatal error" } else { "panic" },
                message: message.trim_end_matches(" [recovered]").to_owned(),
                site: None,
                under_panic_call: false,
                test_frame: None,
                creator_next: false,
                in_stack: false,
                lines_before_stack: 0,
                hang,
                recursion: (message == STACK_OVERFLOW).then(PlaceCounts::default),
            });
            return;
        }
        if let Some(panic) = self.panic.as_mut() {
            if first == b'\t'
                && !panic.in_stack
                && let Some(hang) = panic.hang.as_mut()
            {
                // `\trunning tests:`, then `\t\tTestX (2s)` for each.
                if let Some((test, _)) = line.trim().split_once(" (")
                    && hang.running.len() < MAX_RUNNING_TESTS
                    && !has_byte(test, b' ')
                {
                    if hang.running.is_empty() {
                        self.current_test = Some(test.to_owned());
                    }
                    hang.running.push(test.to_owned());
                }
                return;
            }
            if first == b'\t' {
                // A goroutine frame: `\t/abs/path/file.go:15 +0x1d`.
                let location = line.trim().split(' ').next().unwrap_or("");
                if let Some((file, n, _)) = split_location(location)
                    && file.ends_with(".go")
                    // The test binary's generated `main` (`_testmain.go:68`), in no folder.
                    && file != "_testmain.go"
                    && sink.is_project_file(file)
                {
                    if let Some(hang) = panic.hang.as_mut() {
                        if hang.site.is_none() {
                            hang.site = Some((file.to_owned(), n));
                            hang.site_in_test = sink.is_test_file(file);
                        }
                        if hang.under_panic_call && !panic.creator_next {
                            hang.under_panic_call = false;
                            hang.panicked_at.get_or_insert_with(|| (file.to_owned(), n));
                        }
                        if sink.is_test_file(file) && !panic.creator_next {
                            hang.test_frame = Some((file.to_owned(), n));
                        }
                    } else {
                        if panic.site.is_none() || panic.under_panic_call {
                            panic.site = Some((file.to_owned(), n));
                        }
                        if let Some(calls) = panic.recursion.as_mut()
                            && panic.in_stack
                        {
                            calls.count((file.to_owned(), n));
                        }
                        if sink.is_test_file(file) && !panic.creator_next {
                            panic.test_frame = Some((file.to_owned(), n));
                        }
                    }
                    panic.under_panic_call = false;
                }
                panic.creator_next = false;
                return;
            }
            if line.starts_with("panic(") {
                panic.under_panic_call = true;
                if let Some(hang) = panic.hang.as_mut() {
                    hang.under_panic_call = true;
                }
                return;
            }
            if line.starts_with("goroutine ") {
                panic.in_stack = true;
                if let Some(hang) = panic.hang.as_mut() {
                    hang.end_goroutine(&mut panic.site, &mut panic.test_frame);
                }
                return;
            }
            if !panic.in_stack {
                // The panic's message, the runtime's signal line, or, when the log was cut
                // before the stack, the next tool's output: read as any other line meanwhile.
                panic.lines_before_stack += 1;
                if panic.lines_before_stack > MAX_LINES_BEFORE_STACK {
                    // No stack came: the panic said no place.
                    self.panic = None;
                }
            } else if line.starts_with("created by ") || is_function_line(line) {
                panic.creator_next = line.starts_with("created by ");
                if let Some(hang) = panic.hang.as_mut()
                    && !panic.creator_next
                    && hang.names_running_test(line)
                {
                    hang.runs_test = true;
                }
                return;
            } else {
                // The stack is over: this line is read as any other.
                self.end_panic(sink);
            }
        }
        if first == b'\t' {
            return;
        }
        match first {
            b'=' if line.starts_with("=== ") => {
                if let Some(name) = run_line(line) {
                    if line.starts_with("=== RUN") {
                        self.failed_last = None;
                    }
                    set_name(&mut self.current_test, name);
                } else if let Some(name) = gotestsum_failure(line) {
                    // gotestsum's summary of the failures, after every test ran: what follows
                    // is the named test's output (a package's own failure names none).
                    match name {
                        Some(name) => {
                            sink.test(name, TestOutcome::Failed);
                            set_name(&mut self.current_test, name);
                        }
                        None => self.current_test = None,
                    }
                }
            }
            b'o' | b'F' | b'?' if line.contains('\t') || line.starts_with("ok ") || line.starts_with("FAIL ") => {
                if let Some(c) = PACKAGE_RESULT.captures(line) {
                    self.failed_last = None;
                    sink.summary.runner_summary_seen = true;
                    if &c[1] == "?" {
                        self.packages_without_tests += 1;
                    } else {
                        self.packages_with_tests += 1;
                    }
                }
            }
            b' ' | b'-'
                if line.trim_start().starts_with("--- ") || sink.may_hold(Needle::GoFile) && has(line, ".go:") =>
            {
                // A benchmark's failure has no duration: `--- FAIL: BenchmarkOrdinal` (a
                // sub-benchmark's indented under it).
                if let Some(name) = line
                    .trim_start()
                    .strip_prefix("--- FAIL: ")
                    .filter(|name| name.starts_with("Benchmark") && !name.contains(char::is_whitespace))
                {
                    sink.summary.failed += 1;
                    sink.test(name, TestOutcome::Failed);
                    set_name(&mut self.current_test, name);
                    return;
                }
                if let Some((word, name)) = result_header(line) {
                    let outcome = match word {
                        "FAIL" => TestOutcome::Failed,
                        "PASS" => TestOutcome::Passed,
                        _ => TestOutcome::Skipped,
                    };
                    match outcome {
                        TestOutcome::Failed => {
                            sink.summary.failed += 1;
                            self.failed_last = Some(name.to_owned());
                        }
                        TestOutcome::Passed => sink.summary.passed += 1,
                        _ => sink.summary.skipped += 1,
                    }
                    sink.test(name, outcome);
                    set_name(&mut self.current_test, name);
                    return;
                }
                if first == b' '
                    && let Some(c) = TEST_LOCATION.captures(line)
                {
                    if c[3].trim() == RACE_DETECTED {
                        // The testing package's own line, not the test's: it names the test of
                        // the race reported above it.
                        if self.unnamed_races.is_empty() && !std::mem::take(&mut self.unreported_race) {
                            self.raced_test.clone_from(&self.current_test);
                        }
                        for report in std::mem::take(&mut self.unnamed_races) {
                            if let Some(test) = self.current_test.as_deref() {
                                sink.set_test(report, test);
                            }
                        }
                        return;
                    }
                    if &c[1] == "testing.go" && c[3].starts_with(GOEXIT) {
                        // The testing package's own line, at its own source (a relative name
                        // that is not listed is kept, so the message tells): the test's failure
                        // is the `t.Fatal` before it, from another goroutine or a subtest.
                        return;
                    }
                    if c[3].trim().is_empty() {
                        // testify's table of what failed follows.
                        self.testify = Some(Testify {
                            file: c[1].to_owned(),
                            line: c[2].parse().unwrap_or(1),
                            test: self.current_test.clone(),
                            label: String::new(),
                            error: String::new(),
                            messages: String::new(),
                        });
                        return;
                    }
                    sink.report(Finding {
                        file: &c[1],
                        line: c[2].parse().unwrap_or(1),
                        error_type: ErrorType::Logic,
                        message: Cow::Borrowed(&c[3]),
                        test: self.current_test.as_deref(),
                        confidence: 0.9,
                        rank: Rank::Error,
                        diagnostic: false,
                    });
                }
            }
            _ => {}
        }
        // Compiler and vet diagnostics: `./main.go:9:17: message`, possibly after `vet: `.
        let diagnostic = line.strip_prefix("vet: ").unwrap_or(line);
        if !diagnostic.starts_with(' ')
            && sink.may_hold(Needle::GoFile)
            && has(diagnostic, ".go:")
            && let Some((file, n, message)) = split_location(diagnostic)
            && file.ends_with(".go")
            && !message.is_empty()
            // golangci-lint's line before the compiler's errors of a package, `words.go:1: : #
            // pkg [pkg.test]`: the package's header, not a finding.
            && !message.starts_with(": # ")
        {
            let message = first_message(message);
            let (error_type, rank) = go_type(message);
            sink.report(Finding {
                file,
                line: n,
                error_type,
                message: Cow::Borrowed(message),
                test: None,
                confidence: 0.9,
                rank,
                diagnostic: true,
            });
        }
    }

    /// Reads a line of a Ginkgo spec's failure, or one that begins it; `false` for a line that
    /// is not one (it is read as any other).
    #[inline(never)]
    fn ginkgo_line(&mut self, line: &str, sink: &mut Sink<'_>) -> bool {
        // Ginkgo indents with spaces only (and `wants` lets only those through).
        let trimmed = line.trim_start_matches(' ');
        if is_ginkgo_header(line) {
            self.ginkgo = Some(GinkgoFailure {
                awaiting_spec: true,
                ..GinkgoFailure::default()
            });
            return true;
        }
        if is_ginkgo_failure_start(trimmed) {
            let failure = self.ginkgo.get_or_insert_with(GinkgoFailure::default);
            failure.in_message = true;
            failure.message = trimmed.to_owned();
            return true;
        }
        let Some(failure) = self.ginkgo.as_mut() else {
            return false;
        };
        failure.lines += 1;
        // Ginkgo's rule ends the spec's block and is read no further; another line that ends
        // the failure is read as any other.
        let rule = trimmed.starts_with("------------------------------");
        if rule || failure.lines > MAX_GINKGO_LINES || ends_a_ginkgo_failure(trimmed) {
            self.ginkgo = None;
            return rule;
        }
        if failure.awaiting_spec {
            if !trimmed.is_empty() {
                failure.awaiting_spec = false;
                failure.spec = Some(ginkgo_spec_name(trimmed));
            }
            return true;
        }
        // `In [It] at: /work/suite_test.go:31 @ 11/26/26 21:02:36.962`.
        let place = trimmed
            .strip_prefix("In [")
            .and_then(|rest| rest.split_once("] at: "))
            .map(|(_, at)| at.split(" @ ").next().unwrap_or(at));
        let location = match place {
            Some(at) => split_location(at),
            // A panic's stack trace, placed outside the project: its first frame in the project
            // (`    \t/abs/suite_test.go:44 +0x18`, debug.Stack's tab behind Ginkgo's spaces).
            None if failure.awaiting_stack => split_location(trimmed.trim_start().split(' ').next().unwrap_or("")),
            None => None,
        };
        if let Some((file, n, _)) = location.filter(|(file, ..)| file.ends_with(".go")) {
            if sink.is_project_file(file) {
                let message = if failure.message.is_empty() {
                    "Ginkgo spec failed".to_owned()
                } else {
                    failure.message.clone()
                };
                let test = failure.spec.clone().or_else(|| self.current_test.clone());
                sink.report(Finding {
                    file,
                    line: n,
                    error_type: ErrorType::Logic,
                    message: Cow::Owned(message),
                    test: test.as_deref(),
                    confidence: 0.9,
                    rank: Rank::Error,
                    diagnostic: false,
                });
                self.ginkgo = None;
            } else if place.is_some() {
                failure.in_message = false;
                failure.awaiting_stack = true;
            }
            return true;
        }
        if failure.in_message && !trimmed.is_empty() && failure.message.len() < MAX_TESTIFY_TEXT {
            failure.message.push(' ');
            failure.message.push_str(trimmed);
        }
        true
    }

    /// A line of a race detector's report: its accesses' headers and stacks, up to its closing
    /// rule, when it is reported at the caught access's first frame in the project.
    #[inline(never)]
    /// Whether the line was the report's: a line at column 0 that none of its parts begins (a log
    /// cut inside the report, then a test's result or a compiler's error) ends it unread.
    fn race_line(&mut self, line: &str, sink: &mut Sink<'_>) -> bool {
        let Some(race) = self.race.as_mut() else {
            return false;
        };
        race.lines += 1;
        if race.lines > MAX_RACE_LINES {
            self.race = None;
            return false;
        }
        if line.starts_with("==================") {
            self.end_race(sink);
            return true;
        }
        if !line.is_empty() && !line.starts_with(' ') && !is_race_heading(line) {
            self.end_race(sink);
            return false;
        }
        if let Some(frame) = line.strip_prefix("      ") {
            // `      /abs/path/cache.go:61 +0x15b` under its function's line.
            let location = frame.split(' ').next().unwrap_or("");
            if !race.in_creation
                && let Some((file, n, _)) = split_location(location)
                && file.ends_with(".go")
                && sink.is_project_file(file)
                && let Some(access) = race.accesses.last_mut()
                && access.1.is_empty()
            {
                access.1.clone_from(&race.function);
                if race.accesses.len() == 1 {
                    race.site = Some((file.to_owned(), n));
                }
            }
        } else if let Some(function) = line.strip_prefix("  ") {
            race.function = function.trim_end_matches("()").to_owned();
        } else if line.starts_with("Goroutine ") {
            race.in_creation = true;
        } else if let Some((kind, _)) = line.split_once(" at 0x").filter(|_| line.ends_with(':')) {
            // `Write at 0x... by goroutine 9:`, `Previous read at 0x... by goroutine 8:`.
            if race.accesses.len() < 2 {
                race.accesses.push((kind.to_ascii_lowercase(), String::new()));
            }
        }
        true
    }

    /// Reports the race whose report has ended, at the caught access's frame in the project.
    fn end_race(&mut self, sink: &mut Sink<'_>) {
        let Some(race) = self.race.take() else {
            return;
        };
        let Race {
            accesses,
            site: Some((file, line)),
            ..
        } = race
        else {
            self.unreported_race = true;
            return;
        };
        let message = accesses
            .iter()
            .map(|(kind, function)| match function.as_str() {
                "" => kind.clone(),
                f => format!("{kind} in {f}"),
            })
            .collect::<Vec<_>>()
            .join(", ");
        let test = self.raced_test.take();
        let report = sink.report(Finding {
            file: &file,
            line,
            error_type: ErrorType::Logic,
            message: Cow::Owned(format!("DATA RACE: {message}")),
            test: test.as_deref(),
            confidence: 0.9,
            rank: Rank::Error,
            diagnostic: false,
        });
        if let Some(report) = report
            && test.is_none()
            && self.unnamed_races.len() < MAX_UNNAMED_RACES
        {
            self.unnamed_races.push(report);
        }
    }

    /// Reports the panic whose stack has ended, at the frame it was raised at.
    fn end_panic(&mut self, sink: &mut Sink<'_>) {
        if let Some(panic) = self.panic.as_mut()
            && let Some(hang) = panic.hang.as_mut()
        {
            hang.end_goroutine(&mut panic.site, &mut panic.test_frame);
        }
        let Some(Panic {
            kind,
            message,
            site: Some(mut site),
            test_frame,
            hang,
            recursion,
            ..
        }) = self.panic.take()
        else {
            return;
        };
        if let Some(call) = recursion.as_ref().and_then(PlaceCounts::recursive_call) {
            call.clone_into(&mut site);
        }
        let message = format!("{kind}: {message}");
        // Raised in the code the test calls: the test's own line, the call that led there, is a
        // second place to look at.
        sink.report_raised(
            Finding {
                file: &site.0,
                line: site.1,
                error_type: ErrorType::Logic,
                message: Cow::Borrowed(&message),
                test: self.current_test.as_deref(),
                confidence: 0.9,
                rank: Rank::Error,
                diagnostic: false,
            },
            test_frame.as_ref().map(|(file, line)| (file.as_str(), *line)),
        );
        // A test that timed out is blocked on other goroutines: where they are is where the
        // hang is (a deadlock's other side), a place to look at after the test's own.
        if let Some((place, what)) = hang.as_ref().and_then(Hang::place)
            && *place != site
        {
            sink.report(Finding {
                file: &place.0,
                line: place.1,
                error_type: ErrorType::Logic,
                message: Cow::Owned(format!("{message} ({what})")),
                test: self.current_test.as_deref(),
                confidence: 0.7,
                rank: Rank::Error,
                diagnostic: false,
            });
        }
    }

    /// Reports a testify failure whose table has ended.
    fn end_testify(&mut self, sink: &mut Sink<'_>) {
        let Some(t) = self.testify.take() else {
            return;
        };
        let message = match (t.error.is_empty(), t.messages.is_empty()) {
            (_, true) => t.error,
            (true, false) => t.messages,
            (false, false) => format!("{} ({})", t.error, t.messages),
        };
        sink.report(Finding {
            file: &t.file,
            line: t.line,
            error_type: ErrorType::Logic,
            message: Cow::Owned(message),
            test: t.test.as_deref(),
            confidence: 0.9,
            rank: Rank::Error,
            diagnostic: false,
        });
    }

    pub fn finish(&mut self, sink: &mut Sink<'_>) {
        self.end_testify(sink);
        self.end_race(sink);
        self.end_panic(sink);
        if self.packages_without_tests > 0 && self.packages_with_tests == 0 {
            sink.infra(InfraKind::NoTestsCollected);
        }
    }
}

/// A `go test -json` event: `{"Time":...}`, or without a time `{"Action":...}`, or a package's
/// build output `{"ImportPath":...,"Action":"build-output",...}`.
fn is_event(line: &str) -> bool {
    line.starts_with("{\"Time\":") || line.starts_with("{\"Action\":") || line.starts_with("{\"ImportPath\":")
}

/// A goroutine stack's function line, `pkg/path.Func(0x1, ...)` or `main.main()`: a name without
/// spaces, then its arguments.
fn is_function_line(line: &str) -> bool {
    line.ends_with(')')
        && line
            .find('(')
            .is_some_and(|open| open > 0 && !has_byte(&line[..open], b' '))
}

/// `=== RUN   TestX/sub` (or CONT, PAUSE): the test's name, as `^=== (?:RUN|CONT|PAUSE)\s+(\S+)`
/// reads it, without a regex (a long `go test -v` log is mostly such lines).
pub(crate) fn run_line(line: &str) -> Option<&str> {
    let rest = line.strip_prefix("=== ")?;
    let rest = ["RUN", "CONT", "PAUSE"].iter().find_map(|w| rest.strip_prefix(w))?;
    let after_space = rest.trim_start();
    if after_space.len() == rest.len() {
        return None;
    }
    let (name, _) = split_word(after_space);
    (!name.is_empty()).then_some(name)
}

/// gotestsum's `=== FAIL: pkg TestX (0.00s)` (`=== FAIL: pkg  (0.00s)` for a package that failed
/// as a whole): the test's name, if it has one.
fn gotestsum_failure(line: &str) -> Option<Option<&str>> {
    let rest = line.strip_prefix("=== FAIL: ")?;
    let (_package, rest) = split_word(rest);
    let (name, _) = split_word(rest.strip_prefix(' ')?);
    Some((!name.is_empty() && !name.starts_with('(')).then_some(name))
}

/// `--- FAIL: TestX/sub (0.00s)`, indented for a subtest: the outcome word and the test's name,
/// as `^\s*--- (FAIL|PASS|SKIP): (\S+) \(` reads them, without a regex.
pub(crate) fn result_header(line: &str) -> Option<(&str, &str)> {
    let rest = line.trim_start().strip_prefix("--- ")?;
    let (word, rest) = rest.split_at_checked(4)?;
    if !matches!(word, "FAIL" | "PASS" | "SKIP") {
        return None;
    }
    let (name, rest) = split_word(rest.strip_prefix(": ")?);
    (!name.is_empty() && rest.starts_with(" (")).then_some((word, name))
}

/// The bug type of a Go compiler or vet message.
/// The first of a diagnostic's messages: errcheck joins a package's errors on one line, and a
/// message ends where the next one's place begins (` /abs/b.go:4:2: undefined: x`).
fn first_message(message: &str) -> &str {
    let mut from = 0;
    while let Some(k) = message[from..].find(".go:") {
        let at = from + k;
        if let Some(space) = message[..at].rfind(' ')
            && split_location(&message[space + 1..]).is_some()
        {
            return message[..space].trim_end();
        }
        from = at + 4;
    }
    message
}

/// A Go file's path alone on its line (staticcheck's stylish header).
fn is_go_file_alone(line: &str) -> bool {
    line.len() > 3 && line.ends_with(".go") && !line.contains(char::is_whitespace)
}

/// A stylish row, `  (125, 3)  SA4017  message`: the line, the check and the message.
fn stylish_row(line: &str) -> Option<(u32, &str, &str)> {
    let rest = line.strip_prefix(' ')?.trim_start().strip_prefix('(')?;
    let (place, rest) = rest.split_once(')')?;
    let (n, column) = place.split_once(", ")?;
    if !column.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let (check, message) = rest.trim_start().split_once("  ")?;
    Some((n.parse().ok()?, check, message.trim()))
}

pub(crate) fn go_type(message: &str) -> (ErrorType, Rank) {
    let m = message;
    if m.starts_with("syntax error")
        || m.starts_with("expected ")
        || m.contains("unexpected newline")
        // go/types' parser, as golangci-lint's typecheck quotes it: `missing ',' before newline`.
        || m.starts_with("missing ',' ")
    {
        return (ErrorType::Syntax, Rank::Error);
    }
    if m.starts_with("undefined: ")
        || m.starts_with("could not import")
        || m.contains("is not in std")
        || m.contains("cannot find package")
        || m.contains("no required module provides package")
        || m.starts_with("package ") && m.contains(" is not in ")
    {
        return (ErrorType::Import, Rank::Error);
    }
    if m.contains("imported and not used") || m.contains("declared and not used") {
        return (ErrorType::Linting, Rank::Error);
    }
    const TYPE_PHRASES: &[&str] = &[
        "cannot use ",
        "mismatched types",
        "invalid operation",
        "cannot convert",
        "has no field or method",
        "not enough arguments",
        "too many arguments",
        "missing return",
        "assignment mismatch",
        "does not implement",
        "not enough return values",
        "too many return values",
        "cannot assign",
        "(value of type",
        "undefined (type",
        "is not a type",
        "non-boolean condition",
        // Generics: a type argument outside its constraint, one that cannot be inferred.
        "does not satisfy",
        "cannot infer ",
    ];
    if TYPE_PHRASES.iter().any(|p| m.contains(p)) {
        return (ErrorType::TypeError, Rank::Error);
    }
    (ErrorType::Linting, Rank::Warning)
}

#[cfg(test)]
mod tests {
    use crate::parse::{Workspace, parse};

    /// `go test -run TestDistancesConcurrently -timeout 2s -v` on a test blocked in a
    /// `WaitGroup` (agnivade/levenshtein with a batch function written for the twenty-fifth
    /// outsider trial, captured by running it): the alarm's goroutine panics, and every
    /// goroutine's stack follows. The place is where the running test's goroutine is blocked,
    /// with the test's own line; not the test binary's generated `_testmain.go`.
    #[test]
    fn a_test_timeout_is_placed_where_the_running_test_is_blocked() {
        let log = r#"=== RUN   TestDistancesConcurrently
panic: test timed out after 2s
	running tests:
		TestDistancesConcurrently (2s)

goroutine 11 [running]:
testing.(*M).startAlarm.func1()
	/usr/local/go/src/testing/testing.go:2802 +0x354
created by time.goFunc
	/usr/local/go/src/time/sleep.go:215 +0x2d

goroutine 1 [chan receive]:
testing.(*T).Run(0x354bf3526488, {0x6fac95?, 0x0?}, 0x70d6b8)
	/usr/local/go/src/testing/testing.go:2109 +0x4e5
testing.runTests.func1(0x354bf3526488)
	/usr/local/go/src/testing/testing.go:2585 +0x3e
testing.tRunner(0x354bf3526488, 0x354bf3511c58)
	/usr/local/go/src/testing/testing.go:2036 +0xea
testing.runTests({0x6fd5ff, 0x1f}, {0x6fd5ff, 0x1f}, 0x354bf34743d8, {0x960840, 0x7, 0x7}, {0xc2ba7fb81c4646b5, 0x773de5ce, ...})
	/usr/local/go/src/testing/testing.go:2583 +0x505
testing.(*M).Run(0x354bf34d5040)
	/usr/local/go/src/testing/testing.go:2443 +0x6ac
main.main()
	_testmain.go:68 +0x9b

goroutine 7 [sync.WaitGroup.Wait]:
sync.runtime_SemacquireWaitGroup(0x354bf34bed00?, 0x0?)
	/usr/local/go/src/runtime/sema.go:114 +0x2e
sync.(*WaitGroup).Wait(0x354bf3476920)
	/usr/local/go/src/sync/waitgroup.go:206 +0x85
github.com/agnivade/levenshtein.Distances({0x354bf349ef00, 0x3, 0x51a7ed?})
	/work/heldout25/projects/golev/batch.go:16 +0x1c5
github.com/agnivade/levenshtein_test.TestDistancesConcurrently(0x354bf35266c8)
	/work/heldout25/projects/golev/zz_batch_test.go:10 +0xb7
testing.tRunner(0x354bf35266c8, 0x70d6b8)
	/usr/local/go/src/testing/testing.go:2036 +0xea
created by testing.(*T).Run in goroutine 1
	/usr/local/go/src/testing/testing.go:2101 +0x4c5
FAIL	github.com/agnivade/levenshtein	2.011s
FAIL
"#;
        let workspace = Workspace::new("/work/heldout25/projects/golev");
        let parsed = parse(log, &workspace);
        let got: Vec<_> = parsed
            .reports
            .iter()
            .map(|r| (r.file_path.as_str(), r.line_number, r.test_name.as_deref()))
            .collect();
        let test = Some("TestDistancesConcurrently");
        assert_eq!(got, [("batch.go", 16, test), ("zz_batch_test.go", 10, test)]);
    }

    /// `go test -timeout 3s` on golang.org/x/sync's semaphore with a wrong type assertion in
    /// `notifyWaiters` (the twenty-seventh outsider trial's, captured by running it, frames of
    /// the runtime cut): a goroutine panicked while it held the mutex, its deferred `Release`
    /// blocked on it, and so the test waits forever. The test's place first, then where that
    /// goroutine panicked, not where the most goroutines wait.
    #[test]
    fn a_timeout_names_where_another_goroutine_panicked_and_blocked() {
        let log = r#"panic: test timed out after 3s
	running tests:
		TestLargeAcquireDoesntStarve (3s)

goroutine 17 [running]:
testing.(*M).startAlarm.func1()
	/usr/local/go/src/testing/testing.go:2802 +0x354

goroutine 7 [select]:
golang.org/x/sync/semaphore.(*Weighted).Acquire(0x2937452ce230, {0x5ba3b8, 0x6f4a40}, 0x2)
	/w/semaphore/semaphore.go:80 +0x351
golang.org/x/sync/semaphore_test.TestLargeAcquireDoesntStarve(0x29374528c908)
	/w/semaphore/semaphore_test.go:215 +0x1c5
created by testing.(*T).Run in goroutine 1
	/usr/local/go/src/testing/testing.go:2101 +0x4c5

goroutine 8 [sync.Mutex.Lock]:
sync.(*Mutex).Lock(...)
	/usr/local/go/src/sync/mutex.go:46
golang.org/x/sync/semaphore.(*Weighted).Release(0x2937452ce230, 0x1)
	/w/semaphore/semaphore.go:135 +0x52
golang.org/x/sync/semaphore_test.TestLargeAcquireDoesntStarve.func1.1()
	/w/semaphore/semaphore_test.go:210 +0x25
panic({0x565ae0?, 0x293745336750?})
	/usr/local/go/src/runtime/panic.go:860 +0x13a
golang.org/x/sync/semaphore.(*Weighted).notifyWaiters(0x2937452ce230)
	/w/semaphore/semaphore.go:152 +0x11a
golang.org/x/sync/semaphore.(*Weighted).Release(0x2937452ce230, 0x0?)
	/w/semaphore/semaphore.go:141 +0x79
created by golang.org/x/sync/semaphore_test.TestLargeAcquireDoesntStarve in goroutine 7
	/w/semaphore/semaphore_test.go:208 +0xa5

goroutine 9 [sync.Mutex.Lock]:
golang.org/x/sync/semaphore.(*Weighted).Release(0x2937452ce230, 0x1)
	/w/semaphore/semaphore.go:135 +0x52
created by golang.org/x/sync/semaphore_test.TestLargeAcquireDoesntStarve in goroutine 7
	/w/semaphore/semaphore_test.go:208 +0xa5

goroutine 10 [sync.Mutex.Lock]:
golang.org/x/sync/semaphore.(*Weighted).Release(0x2937452ce230, 0x1)
	/w/semaphore/semaphore.go:135 +0x52
created by golang.org/x/sync/semaphore_test.TestLargeAcquireDoesntStarve in goroutine 7
	/w/semaphore/semaphore_test.go:208 +0xa5
FAIL	golang.org/x/sync/semaphore	3.008s
"#;
        let parsed = parse(log, &Workspace::new("/w"));
        let got: Vec<_> = parsed
            .reports
            .iter()
            .map(|r| (r.file_path.as_str(), r.line_number))
            .collect();
        assert_eq!(
            got,
            [
                ("semaphore/semaphore.go", 80),
                ("semaphore/semaphore_test.go", 215),
                ("semaphore/semaphore.go", 152)
            ]
        );
        // Without the goroutine that panicked, where most of the others wait.
        let cut = log.replace("panic({0x565ae0?, 0x293745336750?})", "sync.(*Mutex).Unlock()");
        let parsed = parse(&cut, &Workspace::new("/w"));
        let last = parsed.reports.last().expect("reports");
        assert_eq!(
            (last.file_path.as_str(), last.line_number),
            ("semaphore/semaphore.go", 135)
        );
        // (goroutine 8 runs the test's function: it is the test's, not one blocked elsewhere.)
        assert!(
            last.message.ends_with("(2 goroutines are blocked here)"),
            "{}",
            last.message
        );
    }

    /// errcheck 1.9 on a package that does not compile (the fourteenth outsider trial's,
    /// captured by running it): the compiler's errors one a line, then all of them joined on the
    /// last one's line; each message ends where the next one's place begins, and is typed alone.
    #[test]
    fn errcheck_s_joined_errors_are_each_typed_alone() {
        let log = "error: failed to check packages: errors while loading package github.com/dustin/go-humanize: [-: # github.com/dustin/go-humanize
./comma.go:42:30: undefined: val
./ordinals.go:3:8: \"strconv\" imported and not used
./ordinals.go:24:9: invalid operation: x + suffix (mismatched types int and string) /work/heldout15/projects/humanize_build/comma.go:42:30: undefined: val /work/heldout15/projects/humanize_build/ordinals.go:24:9: invalid operation: x + suffix (mismatched types int and string) /work/heldout15/projects/humanize_build/ordinals.go:3:8: \"strconv\" imported and not used]
";
        let parsed = crate::parse::parse(
            log,
            &crate::parse::Workspace::new("/work/heldout15/projects/humanize_build"),
        );
        let got: Vec<_> = crate::parse::report_findings(&parsed)
            .into_iter()
            .map(|(file, line, error_type, message)| (file.to_owned(), line, error_type, message.to_owned()))
            .collect();
        assert!(
            got.contains(&(
                "ordinals.go".to_owned(),
                24,
                "TypeError".to_owned(),
                "invalid operation: x + suffix (mismatched types int and string)".to_owned()
            )),
            "{got:?}"
        );
        assert!(got.iter().any(
            |(file, line, error_type, _)| (file.as_str(), *line, error_type.as_str()) == ("comma.go", 42, "Import")
        ));
    }

    /// staticcheck 2026.2.2's `-f stylish`, captured by running it (the fourteenth outsider
    /// trial's finding, and a package that does not compile): the finding at its row's line; the
    /// compiler's lines under a `compile` row read as they are without it.
    #[test]
    fn staticcheck_s_stylish_rows_are_placed() {
        let finding = "/work/heldout15/projects/humanize/bytes.go
  (125, 3)  SA4017  Replace doesn't have side effects and its return value is ignored

 ✖ 1 problems (1 errors, 0 warnings, 0 ignored)
";
        let compile = "-
  (0, 0)  compile  # github.com/dustin/go-humanize
./comma.go:42:30: undefined: val
./ordinals.go:3:8: \"strconv\" imported and not used
./ordinals.go:24:9: invalid operation: x + suffix (mismatched types int and string)
  (0, 0)  compile  # github.com/dustin/go-humanize [github.com/dustin/go-humanize.test]
./comma.go:42:30: undefined: val
./ordinals.go:3:8: \"strconv\" imported and not used
./ordinals.go:24:9: invalid operation: x + suffix (mismatched types int and string)

 ✖ 2 problems (2 errors, 0 warnings, 0 ignored)
";
        let places = |log: &str| {
            let parsed = crate::parse::parse(log, &crate::parse::Workspace::new("/work/heldout15/projects/humanize"));
            crate::parse::report_findings(&parsed)
                .into_iter()
                .map(|(file, line, error_type, _)| (file.to_owned(), line, error_type))
                .collect::<Vec<_>>()
        };
        assert_eq!(places(finding), [("bytes.go".to_owned(), 125, "Linting".to_owned())]);
        let compiler_alone: String = compile
            .lines()
            .filter(|l| l.starts_with("./"))
            .map(|l| format!("{l}\n"))
            .collect();
        assert_eq!(places(compile), places(&compiler_alone));
        assert_eq!(places(compile).len(), 3);
    }
    /// From a review: a Ginkgo panic's stack, whose frames stand behind a tab; a line of Ginkgo's
    /// summary (`[TIMEDOUT] Cache [It] ...`), which opens no failure; race reports cut short, or
    /// with no frame in the project, which end at the next line of another kind; and the
    /// testing package's `race detected` line of a race with no frame to report, which names no
    /// later race.
    #[test]
    fn ginkgo_panics_summaries_and_cut_or_unplaced_races_are_read_right() {
        let files = ["cache.go", "cache_test.go", "suite/suite_test.go"]
            .map(str::to_owned)
            .to_vec();
        let workspace = crate::parse::Workspace::new("/work/heldout14/projects/gocache").with_files(files);
        let places = |log: &str| -> Vec<(String, u32, Option<String>)> {
            crate::parse::parse(log, &workspace)
                .reports
                .iter()
                .map(|r| (r.file_path.clone(), r.line_number, r.test_name.clone()))
                .collect()
        };
        let at = |file: &str, line: u32| (file.to_owned(), line);
        let files_lines = |log: &str| places(log).into_iter().map(|(f, l, _)| (f, l)).collect::<Vec<_>>();
        assert_eq!(
            files_lines(
                "• [PANICKED] [0.000 seconds]
Cache [It] divides
/work/heldout14/projects/gocache/suite/suite_test.go:40

  [PANICKED] Test Panicked
  In [It] at: /usr/local/go/src/runtime/panic.go:262 @ 11/26/26 21:02:36.962

  runtime error: integer divide by zero

  Full Stack Trace
    github.com/patrickmn/go-cache/suite_test.init.func1.3()
    \t/work/heldout14/projects/gocache/suite/suite_test.go:44 +0x18
------------------------------
"
            ),
            [at("suite/suite_test.go", 44)]
        );
        assert_eq!(
            files_lines(
                "Summarizing 1 Failure:
  [TIMEDOUT] Cache [It] waits forever
  /work/heldout14/projects/gocache/suite/suite_test.go:31

Ran 3 of 3 Specs in 0.000 seconds
FAIL! - Suite Timeout Elapsed -- 1 Passed | 1 Failed | 0 Pending | 0 Skipped
--- FAIL: TestSuite (0.00s)
FAIL
FAIL\tgithub.com/patrickmn/go-cache/suite\t0.5s
--- FAIL: TestCacheTimes (0.00s)
    cache_test.go:40: Found a: 2, want 3
FAIL
FAIL\tgithub.com/patrickmn/go-cache\t0.1s
"
            ),
            [at("cache_test.go", 40)]
        );
        assert_eq!(
            files_lines(
                "WARNING: DATA RACE
Write at 0x00c0000e21e0 by goroutine 9:
  runtime.mapassign_faststr()
      /usr/local/go/src/internal/runtime/maps/runtime_faststr.go:263 +0x0
  github.com/patrickmn/go-cache.(*cache).Set()
      /work/heldout14/projects/gocache/cache.go:61 +0x15b
  github.com/patrickmn/go-cache.TestConcurrentSetGet.func1()
      /work/heldout14/projects/gocache/race_test.go:17 +0x1b0
  github.com/patrickmn/go-cache.TestConcurrentSetGet.gowrap1()
      /work/heldout14/projects/gocache/race_test.go:20 +0x38

--- FAIL: TestCacheTimes (0.00s)
    cache_test.go:40: Found a: 2, want 3
panic: runtime error: index out of range [recovered]
goroutine 7 [running]:
github.com/patrickmn/go-cache.TestX()
\t/work/heldout14/projects/gocache/cache_test.go:99 +0x1d
FAIL
FAIL\tgithub.com/patrickmn/go-cache\t0.1s
./cache.go:12:2: undefined: foo
"
            ),
            [
                at("cache.go", 61),
                at("cache_test.go", 40),
                at("cache_test.go", 99),
                at("cache.go", 12)
            ]
        );
        assert_eq!(
            files_lines(
                "WARNING: DATA RACE
Read at 0x1 by goroutine 9:
  sync.x()
      /usr/local/go/src/sync/x.go:1 +0x1
    cache_test.go:40: Found a: 2, want 3
panic: runtime error: index out of range [recovered]
goroutine 7 [running]:
github.com/patrickmn/go-cache.TestX()
\t/work/heldout14/projects/gocache/cache_test.go:99 +0x1d
FAIL
FAIL\tgithub.com/patrickmn/go-cache\t0.1s
./cache.go:12:2: undefined: foo
"
            ),
            [at("cache_test.go", 99), at("cache.go", 12)]
        );
        let named = places(
            "==================
WARNING: DATA RACE
Write at 0x00c0000e21e0 by goroutine 9:
  sync.(*Map).Store()
      /usr/local/go/src/sync/map.go:10 +0x15b

Previous write at 0x00c0000e21e0 by goroutine 10:
  sync.(*Map).Store()
      /usr/local/go/src/sync/map.go:10 +0x15b

Goroutine 9 (running) created at:
  github.com/patrickmn/go-cache.TestA()
      /work/heldout14/projects/gocache/race_test.go:14 +0x8a
==================
--- FAIL: TestA (0.00s)
    testing.go:1712: race detected during execution of test
==================
WARNING: DATA RACE
Write at 0x00c0000e21e0 by goroutine 19:
  github.com/patrickmn/go-cache.(*cache).Set()
      /work/heldout14/projects/gocache/cache.go:61 +0x15b

Previous read at 0x00c0000e21e0 by goroutine 18:
  github.com/patrickmn/go-cache.(*cache).Get()
      /work/heldout14/projects/gocache/cache.go:123 +0x15b

Goroutine 19 (running) created at:
  github.com/patrickmn/go-cache.TestB()
      /work/heldout14/projects/gocache/race_test.go:30 +0x8a
==================
--- FAIL: TestB (0.00s)
    testing.go:1712: race detected during execution of test
FAIL
",
        );
        assert_eq!(named.len(), 1, "{named:?}");
        assert_eq!(named[0].2.as_deref(), Some("TestB"));
    }

    /// `go test ./...` (Go 1.26.8) on a nil pointer dereferenced in the code under test: the
    /// runtime's signal line stands between the panic and its stack.
    const NIL_DEREFERENCE: &str = r#"--- FAIL: TestTotal (0.00s)
panic: runtime error: invalid memory address or nil pointer dereference [recovered, repanicked]
[signal SIGSEGV: segmentation violation code=0x1 addr=0x0 pc=0x52e515]

goroutine 6 [running]:
testing.tRunner.func1.2({0x55a740, 0x6cae60})
	/usr/local/go/src/testing/testing.go:1974 +0x232
testing.tRunner.func1()
	/usr/local/go/src/testing/testing.go:1977 +0x349
panic({0x55a740?, 0x6cae60?})
	/usr/local/go/src/runtime/panic.go:860 +0x13a
example.com/shop.(*Cart).Total(...)
	/w/cart.go:10
example.com/shop.TestTotal(0x2ee82d0246c8?)
	/w/cart_test.go:7 +0x35
testing.tRunner(0x2ee82d0246c8, 0x592e28)
	/usr/local/go/src/testing/testing.go:2036 +0xea
created by testing.(*T).Run in goroutine 1
	/usr/local/go/src/testing/testing.go:2101 +0x4c5
FAIL	example.com/shop	0.005s
FAIL
"#;

    /// The same run, `go test -json ./...`.
    const NIL_DEREFERENCE_JSON: &str = r#"{"Time":"2026-11-26T00:23:36.953734959Z","Action":"start","Package":"example.com/shop"}
{"Time":"2026-11-26T00:23:36.956587111Z","Action":"run","Package":"example.com/shop","Test":"TestTotal"}
{"Time":"2026-11-26T00:23:36.956605519Z","Action":"output","Package":"example.com/shop","Test":"TestTotal","Output":"=== RUN   TestTotal\n"}
{"Time":"2026-11-26T00:23:36.95663388Z","Action":"output","Package":"example.com/shop","Test":"TestTotal","Output":"--- FAIL: TestTotal (0.00s)\n"}
{"Time":"2026-11-26T00:23:36.95887605Z","Action":"output","Package":"example.com/shop","Test":"TestTotal","Output":"panic: runtime error: invalid memory address or nil pointer dereference [recovered, repanicked]\n"}
{"Time":"2026-11-26T00:23:36.958895217Z","Action":"output","Package":"example.com/shop","Test":"TestTotal","Output":"[signal SIGSEGV: segmentation violation code=0x1 addr=0x0 pc=0x52e515]\n"}
{"Time":"2026-11-26T00:23:36.958898944Z","Action":"output","Package":"example.com/shop","Test":"TestTotal","Output":"\n"}
{"Time":"2026-11-26T00:23:36.958901305Z","Action":"output","Package":"example.com/shop","Test":"TestTotal","Output":"goroutine 18 [running]:\n"}
{"Time":"2026-11-26T00:23:36.958905445Z","Action":"output","Package":"example.com/shop","Test":"TestTotal","Output":"testing.tRunner.func1.2({0x55a740, 0x6cae60})\n"}
{"Time":"2026-11-26T00:23:36.958908244Z","Action":"output","Package":"example.com/shop","Test":"TestTotal","Output":"\t/usr/local/go/src/testing/testing.go:1974 +0x232\n"}
{"Time":"2026-11-26T00:23:36.958912798Z","Action":"output","Package":"example.com/shop","Test":"TestTotal","Output":"testing.tRunner.func1()\n"}
{"Time":"2026-11-26T00:23:36.958914725Z","Action":"output","Package":"example.com/shop","Test":"TestTotal","Output":"\t/usr/local/go/src/testing/testing.go:1977 +0x349\n"}
{"Time":"2026-11-26T00:23:36.958916819Z","Action":"output","Package":"example.com/shop","Test":"TestTotal","Output":"panic({0x55a740?, 0x6cae60?})\n"}
{"Time":"2026-11-26T00:23:36.958919431Z","Action":"output","Package":"example.com/shop","Test":"TestTotal","Output":"\t/usr/local/go/src/runtime/panic.go:860 +0x13a\n"}
{"Time":"2026-11-26T00:23:36.958921722Z","Action":"output","Package":"example.com/shop","Test":"TestTotal","Output":"example.com/shop.(*Cart).Total(...)\n"}
{"Time":"2026-11-26T00:23:36.95892374Z","Action":"output","Package":"example.com/shop","Test":"TestTotal","Output":"\t/w/cart.go:10\n"}
{"Time":"2026-11-26T00:23:36.958926012Z","Action":"output","Package":"example.com/shop","Test":"TestTotal","Output":"example.com/shop.TestTotal(0x1f35afba0488?)\n"}
{"Time":"2026-11-26T00:23:36.958927972Z","Action":"output","Package":"example.com/shop","Test":"TestTotal","Output":"\t/w/cart_test.go:7 +0x35\n"}
{"Time":"2026-11-26T00:23:36.958929901Z","Action":"output","Package":"example.com/shop","Test":"TestTotal","Output":"testing.tRunner(0x1f35afba0488, 0x592e28)\n"}
{"Time":"2026-11-26T00:23:36.95893166Z","Action":"output","Package":"example.com/shop","Test":"TestTotal","Output":"\t/usr/local/go/src/testing/testing.go:2036 +0xea\n"}
{"Time":"2026-11-26T00:23:36.958933667Z","Action":"output","Package":"example.com/shop","Test":"TestTotal","Output":"created by testing.(*T).Run in goroutine 1\n"}
{"Time":"2026-11-26T00:23:36.958935398Z","Action":"output","Package":"example.com/shop","Test":"TestTotal","Output":"\t/usr/local/go/src/testing/testing.go:2101 +0x4c5\n"}
{"Time":"2026-11-26T00:23:36.959248229Z","Action":"fail","Package":"example.com/shop","Test":"TestTotal","Elapsed":0}
{"Time":"2026-11-26T00:23:36.959255553Z","Action":"output","Package":"example.com/shop","Output":"FAIL\texample.com/shop\t0.004s\n"}
{"Time":"2026-11-26T00:23:36.959262254Z","Action":"fail","Package":"example.com/shop","Elapsed":0.006}
"#;

    /// The race detector's reports (`go test -race`, Go 1.26, a map written without its lock in
    /// go-cache 2.1.0): each race at the caught access's frame in the project, named by the test
    /// the testing package says saw it, whether its line comes after the report or, the two
    /// streams interleaved, before it (`-v`); the testing package's own line is no report.
    #[test]
    fn a_data_race_is_placed_at_the_caught_access_and_named_by_its_test() {
        let plain = "\
==================
WARNING: DATA RACE
Write at 0x00c0000e21e0 by goroutine 9:
  runtime.mapassign_faststr()
      /usr/local/go/src/internal/runtime/maps/runtime_faststr.go:263 +0x0
  github.com/patrickmn/go-cache.(*cache).Set()
      /work/heldout14/projects/gocache/cache.go:61 +0x15b
  github.com/patrickmn/go-cache.TestConcurrentSetGet.func1()
      /work/heldout14/projects/gocache/race_test.go:17 +0x1b0
  github.com/patrickmn/go-cache.TestConcurrentSetGet.gowrap1()
      /work/heldout14/projects/gocache/race_test.go:20 +0x38

Previous write at 0x00c0000e21e0 by goroutine 10:
  runtime.mapassign_faststr()
      /usr/local/go/src/internal/runtime/maps/runtime_faststr.go:263 +0x0
  github.com/patrickmn/go-cache.(*cache).Set()
      /work/heldout14/projects/gocache/cache.go:61 +0x15b
  github.com/patrickmn/go-cache.TestConcurrentSetGet.func1()
      /work/heldout14/projects/gocache/race_test.go:17 +0x1b0
  github.com/patrickmn/go-cache.TestConcurrentSetGet.gowrap1()
      /work/heldout14/projects/gocache/race_test.go:20 +0x38

Goroutine 9 (running) created at:
  github.com/patrickmn/go-cache.TestConcurrentSetGet()
      /work/heldout14/projects/gocache/race_test.go:14 +0x8a
  testing.tRunner()
      /usr/local/go/src/testing/testing.go:2036 +0x21c
  testing.(*T).Run.gowrap1()
      /usr/local/go/src/testing/testing.go:2101 +0x38

Goroutine 10 (running) created at:
  github.com/patrickmn/go-cache.TestConcurrentSetGet()
      /work/heldout14/projects/gocache/race_test.go:14 +0x8a
  testing.tRunner()
      /usr/local/go/src/testing/testing.go:2036 +0x21c
  testing.(*T).Run.gowrap1()
      /usr/local/go/src/testing/testing.go:2101 +0x38
==================
==================
WARNING: DATA RACE
Read at 0x00c0000e21e0 by goroutine 9:
  runtime.mapaccess2_faststr()
      /usr/local/go/src/internal/runtime/maps/runtime_faststr.go:161 +0x0
  github.com/patrickmn/go-cache.(*cache).Get()
      /work/heldout14/projects/gocache/cache.go:123 +0x84
  github.com/patrickmn/go-cache.TestConcurrentSetGet.func1()
      /work/heldout14/projects/gocache/race_test.go:18 +0x1d3
  github.com/patrickmn/go-cache.TestConcurrentSetGet.gowrap1()
      /work/heldout14/projects/gocache/race_test.go:20 +0x38

Previous write at 0x00c0000e21e0 by goroutine 10:
  runtime.mapassign_faststr()
      /usr/local/go/src/internal/runtime/maps/runtime_faststr.go:263 +0x0
  github.com/patrickmn/go-cache.(*cache).Set()
      /work/heldout14/projects/gocache/cache.go:61 +0x15b
  github.com/patrickmn/go-cache.TestConcurrentSetGet.func1()
      /work/heldout14/projects/gocache/race_test.go:17 +0x1b0
  github.com/patrickmn/go-cache.TestConcurrentSetGet.gowrap1()
      /work/heldout14/projects/gocache/race_test.go:20 +0x38

Goroutine 9 (running) created at:
  github.com/patrickmn/go-cache.TestConcurrentSetGet()
      /work/heldout14/projects/gocache/race_test.go:14 +0x8a
  testing.tRunner()
      /usr/local/go/src/testing/testing.go:2036 +0x21c
  testing.(*T).Run.gowrap1()
      /usr/local/go/src/testing/testing.go:2101 +0x38

Goroutine 10 (running) created at:
  github.com/patrickmn/go-cache.TestConcurrentSetGet()
      /work/heldout14/projects/gocache/race_test.go:14 +0x8a
  testing.tRunner()
      /usr/local/go/src/testing/testing.go:2036 +0x21c
  testing.(*T).Run.gowrap1()
      /usr/local/go/src/testing/testing.go:2101 +0x38
==================
fatal error: concurrent map writes

goroutine 22 [running]:
internal/runtime/maps.fatal({0x6d1531?, 0xc0000fa100?})
	/usr/local/go/src/runtime/panic.go:1181 +0x18
github.com/patrickmn/go-cache.(*cache).Set(0xc0000a95c0, {0xc0000963cc, 0x4}, {0x68b280, 0x6ea318}, 0x0)
	/work/heldout14/projects/gocache/cache.go:61 +0x15c
github.com/patrickmn/go-cache.TestConcurrentSetGet.func1(0x1)
	/work/heldout14/projects/gocache/race_test.go:17 +0x1b1
created by github.com/patrickmn/go-cache.TestConcurrentSetGet in goroutine 20
	/work/heldout14/projects/gocache/race_test.go:14 +0x8b
FAIL	github.com/patrickmn/go-cache	0.017s
FAIL
";
        let interleaved = "\
--- PASS: TestGetWithExpiration (0.00s)
=== RUN   TestConcurrentSetGet
==================
    testing.go:1712: race detected during execution of test
--- FAIL: TestConcurrentSetGet (0.00s)
=== RUN   TestShardedCache
--- PASS: TestShardedCache (0.00s)
FAIL
WARNING: DATA RACE
Write at 0x00c0000d35c0 by goroutine 84:
  runtime.mapassign_faststr()
      /usr/local/go/src/internal/runtime/maps/runtime_faststr.go:263 +0x0
  github.com/patrickmn/go-cache.(*cache).Set()
      /work/heldout14/projects/gocache/cache.go:61 +0x15b
  github.com/patrickmn/go-cache.TestConcurrentSetGet.func1()
      /work/heldout14/projects/gocache/race_test.go:17 +0x1b0
  github.com/patrickmn/go-cache.TestConcurrentSetGet.gowrap1()
      /work/heldout14/projects/gocache/race_test.go:20 +0x38

Previous write at 0x00c0000d35c0 by goroutine 85:
  runtime.mapassign_faststr()
      /usr/local/go/src/internal/runtime/maps/runtime_faststr.go:263 +0x0
  github.com/patrickmn/go-cache.(*cache).Set()
      /work/heldout14/projects/gocache/cache.go:61 +0x15b
  github.com/patrickmn/go-cache.TestConcurrentSetGet.func1()
      /work/heldout14/projects/gocache/race_test.go:17 +0x1b0
  github.com/patrickmn/go-cache.TestConcurrentSetGet.gowrap1()
      /work/heldout14/projects/gocache/race_test.go:20 +0x38

Goroutine 84 (running) created at:
  github.com/patrickmn/go-cache.TestConcurrentSetGet()
      /work/heldout14/projects/gocache/race_test.go:14 +0x8a
  testing.tRunner()
      /usr/local/go/src/testing/testing.go:2036 +0x21c
  testing.(*T).Run.gowrap1()
      /usr/local/go/src/testing/testing.go:2101 +0x38

Goroutine 85 (finished) created at:
  github.com/patrickmn/go-cache.TestConcurrentSetGet()
      /work/heldout14/projects/gocache/race_test.go:14 +0x8a
  testing.tRunner()
      /usr/local/go/src/testing/testing.go:2036 +0x21c
  testing.(*T).Run.gowrap1()
      /usr/local/go/src/testing/testing.go:2101 +0x38
==================

Ginkgo ran 2 suites in 2.633227739s

There were failures detected in the following suites:
  [38;5;9mgocache [38;5;243m.[0m

Test Suite Failed
exit status 1
";
        let files = ["cache.go", "race_test.go", "cache_test.go"]
            .map(str::to_owned)
            .to_vec();
        let workspace = crate::parse::Workspace::new("/work/heldout14/projects/gocache").with_files(files);
        let races = |log: &str| {
            crate::parse::parse(log, &workspace)
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
        let set = "github.com/patrickmn/go-cache.(*cache).Set";
        let get = "github.com/patrickmn/go-cache.(*cache).Get";
        assert_eq!(
            races(plain),
            [
                (
                    "cache.go".to_owned(),
                    61,
                    format!("DATA RACE: write in {set}, previous write in {set}"),
                    None
                ),
                (
                    "cache.go".to_owned(),
                    123,
                    format!("DATA RACE: read in {get}, previous write in {set}"),
                    None
                ),
                // The runtime's fatal error that ended the run: raised at the first race's
                // place, called from the test's goroutine.
                (
                    "race_test.go".to_owned(),
                    17,
                    "fatal error: concurrent map writes".to_owned(),
                    None
                ),
            ]
        );
        let named = races(interleaved);
        assert_eq!(named.len(), 1, "{named:?}");
        assert_eq!((named[0].0.as_str(), named[0].1), ("cache.go", 61));
        assert_eq!(named[0].3.as_deref(), Some("TestConcurrentSetGet"));
    }

    /// Ginkgo v2.22's failed specs (`ginkgo` on go-cache's suite, in colour) and its JUnit report
    /// cat'ed into the log: each failure placed where it failed (`In [It] at:`), not where the
    /// spec is declared, named as the JUnit report names the spec, once whichever the log holds.
    #[test]
    fn a_ginkgo_spec_s_failure_is_placed_where_it_failed() {
        let console = "\
Running Suite: GoCache Suite - /work/heldout14/projects/gocache/suite
=====================================================================
Random Seed: \u{1b}[1m1795726956\u{1b}[0m

Will run \u{1b}[1m3\u{1b}[0m of \u{1b}[1m3\u{1b}[0m specs
\u{1b}[38;5;10m•\u{1b}[0m
\u{1b}[38;5;243m------------------------------\u{1b}[0m
\u{1b}[38;5;9m• [FAILED] [0.000 seconds]\u{1b}[0m
\u{1b}[0mCache \u{1b}[38;5;9m\u{1b}[1m[It] increments an int\u{1b}[0m
\u{1b}[38;5;243m/work/heldout14/projects/gocache/suite/suite_test.go:26\u{1b}[0m

  \u{1b}[38;5;9m[FAILED] Expected
      <int>: 2
  to equal
      <int>: 8\u{1b}[0m
  \u{1b}[38;5;9mIn \u{1b}[1m[It]\u{1b}[0m\u{1b}[38;5;9m at: \u{1b}[1m/work/heldout14/projects/gocache/suite/suite_test.go:31\u{1b}[0m \u{1b}[38;5;243m@ 11/26/26 21:02:36.962\u{1b}[0m
\u{1b}[38;5;243m------------------------------\u{1b}[0m
\u{1b}[38;5;9m• [FAILED] [0.000 seconds]\u{1b}[0m
\u{1b}[0mCache \u{1b}[38;5;9m\u{1b}[1m[It] counts items\u{1b}[0m
\u{1b}[38;5;243m/work/heldout14/projects/gocache/suite/suite_test.go:34\u{1b}[0m

  \u{1b}[38;5;9m[FAILED] Expected
      <int>: 1
  to equal
      <int>: 2\u{1b}[0m
  \u{1b}[38;5;9mIn \u{1b}[1m[It]\u{1b}[0m\u{1b}[38;5;9m at: \u{1b}[1m/work/heldout14/projects/gocache/suite/suite_test.go:38\u{1b}[0m \u{1b}[38;5;243m@ 11/26/26 21:02:36.962\u{1b}[0m
\u{1b}[38;5;243m------------------------------\u{1b}[0m

\u{1b}[38;5;9m\u{1b}[1mSummarizing 2 Failures:\u{1b}[0m
  \u{1b}[38;5;9m[FAIL]\u{1b}[0m \u{1b}[0mCache \u{1b}[38;5;9m\u{1b}[1m[It] increments an int\u{1b}[0m
  \u{1b}[38;5;243m/work/heldout14/projects/gocache/suite/suite_test.go:31\u{1b}[0m
  \u{1b}[38;5;9m[FAIL]\u{1b}[0m \u{1b}[0mCache \u{1b}[38;5;9m\u{1b}[1m[It] counts items\u{1b}[0m
  \u{1b}[38;5;243m/work/heldout14/projects/gocache/suite/suite_test.go:38\u{1b}[0m

\u{1b}[38;5;9m\u{1b}[1mRan 3 of 3 Specs in 0.000 seconds\u{1b}[0m
\u{1b}[38;5;9m\u{1b}[1mFAIL!\u{1b}[0m -- \u{1b}[38;5;10m\u{1b}[1m1 Passed\u{1b}[0m | \u{1b}[38;5;9m\u{1b}[1m2 Failed\u{1b}[0m | \u{1b}[38;5;11m\u{1b}[1m0 Pending\u{1b}[0m | \u{1b}[38;5;14m\u{1b}[1m0 Skipped\u{1b}[0m
--- FAIL: TestSuite (0.00s)
FAIL

Ginkgo ran 1 suite in 866.084293ms

Test Suite Failed
exit status 1
";
        let junit = "\
<?xml version=\"1.0\" encoding=\"UTF-8\"?>
  <testsuites tests=\"3\" disabled=\"0\" errors=\"0\" failures=\"2\" time=\"0.001067122\">
      <testsuite name=\"GoCache Suite\" package=\"/work/heldout14/projects/gocache/suite\" tests=\"3\" disabled=\"0\" skipped=\"0\" errors=\"0\" failures=\"2\" time=\"0.001067122\" timestamp=\"2026-11-26T21:02:42\">
          <properties>
              <property name=\"SuiteSucceeded\" value=\"false\"></property>
              <property name=\"SuiteHasProgrammaticFocus\" value=\"false\"></property>
              <property name=\"SpecialSuiteFailureReason\" value=\"\"></property>
              <property name=\"SuiteLabels\" value=\"[]\"></property>
              <property name=\"RandomSeed\" value=\"1795726961\"></property>
              <property name=\"RandomizeAllSpecs\" value=\"false\"></property>
              <property name=\"LabelFilter\" value=\"\"></property>
              <property name=\"FocusStrings\" value=\"\"></property>
              <property name=\"SkipStrings\" value=\"\"></property>
              <property name=\"FocusFiles\" value=\"\"></property>
              <property name=\"SkipFiles\" value=\"\"></property>
              <property name=\"FailOnPending\" value=\"false\"></property>
              <property name=\"FailOnEmpty\" value=\"false\"></property>
              <property name=\"FailFast\" value=\"false\"></property>
              <property name=\"FlakeAttempts\" value=\"0\"></property>
              <property name=\"DryRun\" value=\"false\"></property>
              <property name=\"ParallelTotal\" value=\"1\"></property>
              <property name=\"OutputInterceptorMode\" value=\"\"></property>
          </properties>
          <testcase name=\"[It] Cache stores and retrieves a value\" classname=\"GoCache Suite\" status=\"passed\" time=\"0.000201402\">
              <system-err>&gt; Enter [It] stores and retrieves a value - /work/heldout14/projects/gocache/suite/suite_test.go:18 @ 11/26/26 21:02:42.613&#xA;&lt; Exit [It] stores and retrieves a value - /work/heldout14/projects/gocache/suite/suite_test.go:18 @ 11/26/26 21:02:42.613 (0s)&#xA;</system-err>
          </testcase>
          <testcase name=\"[It] Cache increments an int\" classname=\"GoCache Suite\" status=\"failed\" time=\"0.000265869\">
              <failure message=\"Expected&#xA;    &lt;int&gt;: 2&#xA;to equal&#xA;    &lt;int&gt;: 8\" type=\"failed\">[FAILED] Expected&#xA;    &lt;int&gt;: 2&#xA;to equal&#xA;    &lt;int&gt;: 8&#xA;In [It] at: /work/heldout14/projects/gocache/suite/suite_test.go:31 @ 11/26/26 21:02:42.613&#xA;</failure>
              <system-err>&gt; Enter [It] increments an int - /work/heldout14/projects/gocache/suite/suite_test.go:26 @ 11/26/26 21:02:42.613&#xA;[FAILED] Expected&#xA;    &lt;int&gt;: 2&#xA;to equal&#xA;    &lt;int&gt;: 8&#xA;In [It] at: /work/heldout14/projects/gocache/suite/suite_test.go:31 @ 11/26/26 21:02:42.613&#xA;&lt; Exit [It] increments an int - /work/heldout14/projects/gocache/suite/suite_test.go:26 @ 11/26/26 21:02:42.613 (0s)&#xA;</system-err>
          </testcase>
          <testcase name=\"[It] Cache counts items\" classname=\"GoCache Suite\" status=\"failed\" time=\"0.000188803\">
              <failure message=\"Expected&#xA;    &lt;int&gt;: 1&#xA;to equal&#xA;    &lt;int&gt;: 2\" type=\"failed\">[FAILED] Expected&#xA;    &lt;int&gt;: 1&#xA;to equal&#xA;    &lt;int&gt;: 2&#xA;In [It] at: /work/heldout14/projects/gocache/suite/suite_test.go:38 @ 11/26/26 21:02:42.614&#xA;</failure>
              <system-err>&gt; Enter [It] counts items - /work/heldout14/projects/gocache/suite/suite_test.go:34 @ 11/26/26 21:02:42.613&#xA;[FAILED] Expected&#xA;    &lt;int&gt;: 1&#xA;to equal&#xA;    &lt;int&gt;: 2&#xA;In [It] at: /work/heldout14/projects/gocache/suite/suite_test.go:38 @ 11/26/26 21:02:42.614&#xA;&lt; Exit [It] counts items - /work/heldout14/projects/gocache/suite/suite_test.go:34 @ 11/26/26 21:02:42.614 (0s)&#xA;</system-err>
          </testcase>
      </testsuite>
  </testsuites>";
        let files = ["cache.go", "suite/suite_test.go"].map(str::to_owned).to_vec();
        let workspace = crate::parse::Workspace::new("/work/heldout14/projects/gocache").with_files(files);
        for log in [console, junit] {
            let parsed = crate::parse::parse(log, &workspace);
            assert_eq!(
                crate::parse::report_tests(&parsed),
                [
                    (
                        "suite/suite_test.go",
                        31,
                        "[FAILED] Expected <int>: 2 to equal <int>: 8",
                        Some("[It] Cache increments an int")
                    ),
                    (
                        "suite/suite_test.go",
                        38,
                        "[FAILED] Expected <int>: 1 to equal <int>: 2",
                        Some("[It] Cache counts items")
                    ),
                ],
                "{log}"
            );
        }
        assert_eq!(
            super::ginkgo_spec_name("Cache [It] increments an int"),
            "[It] Cache increments an int"
        );
        assert_eq!(super::ginkgo_spec_name("[It] stands alone"), "[It] stands alone");
    }

    /// A panic in a goroutine the test started (go 1.26, a reviewer's package): the test's frame
    /// is the closure's call on the goroutine's stack, not the `created by` line that started it.
    #[test]
    fn a_goroutine_s_panic_is_placed_at_the_test_s_call_not_where_it_was_started() {
        let log = "\
panic: runtime error: invalid memory address or nil pointer dereference
[signal SIGSEGV: segmentation violation code=0x1 addr=0x0 pc=0x52efc4]

goroutine 7 [running]:
example.com/shop/cart.Total(...)
	/tmp/review2/go/cart/cart.go:8
example.com/shop/cart.TestGo.func1()
	/tmp/review2/go/cart/go_test.go:13 +0x44
created by example.com/shop/cart.TestGo in goroutine 6
	/tmp/review2/go/cart/go_test.go:11 +0x65
FAIL	example.com/shop/cart	0.004s
FAIL
";
        let parsed = parse(log, &Workspace::new("/tmp/review2/go"));
        let places = super::super::report_places(&parsed);
        assert_eq!(
            places,
            [("cart/cart.go", 8, None), ("cart/go_test.go", 13, None)],
            "{log}"
        );
    }

    #[test]
    fn a_nil_dereference_is_placed_where_the_pointer_was_followed() {
        for log in [NIL_DEREFERENCE, NIL_DEREFERENCE_JSON] {
            let parsed = parse(log, &Workspace::new("/w"));
            let places = super::super::report_places(&parsed);
            // Where the pointer was followed, and the test's line that called there.
            assert_eq!(
                places,
                [
                    ("cart.go", 10, Some("TestTotal")),
                    ("cart_test.go", 7, Some("TestTotal"))
                ],
                "{log}"
            );
        }
    }

    /// A log cut between a panic's line and its stack (found by the `parse_after` fuzz target):
    /// the next tool's output is read, not taken for the panic's message; cut inside the stack,
    /// the stack's end is where the next output starts. The panic itself, with no stack, says no
    /// place.
    #[test]
    fn a_panic_cut_before_its_stack_does_not_hide_the_next_output() {
        // `go build ./...` (Go 1.26.8) on the golden go_app project.
        let build = "# example.com/goapp\n./main.go:9:17: cannot use os.Getenv(\"PORT\") (value of type string) as int value in variable declaration\n./main.go:10:20: undefined: undefinedHost\n";
        let (head, _) = NIL_DEREFERENCE.split_at(NIL_DEREFERENCE.find("goroutine 6").expect("a stack"));
        let (in_stack, _) =
            NIL_DEREFERENCE.split_at(NIL_DEREFERENCE.find("example.com/shop.TestTotal").expect("a frame"));
        let workspace =
            Workspace::new("/w").with_files(vec!["main.go".into(), "cart.go".into(), "cart_test.go".into()]);
        for before in ["panic: \n", "panic: boom\n\n", head, in_stack] {
            let parsed = parse(&format!("{before}{build}"), &workspace);
            let kinds = super::super::report_kinds(&parsed);
            assert!(
                kinds.contains(&("main.go", 9, super::ErrorType::TypeError))
                    && kinds.contains(&("main.go", 10, super::ErrorType::Import)),
                "{before:?}: {kinds:?}"
            );
        }
    }

    /// testify prints its failure as a table under a location line that says nothing; a failed
    /// benchmark's header has no duration (go-humanize 1.0.1, go 1.26).
    #[test]
    fn a_testify_failure_says_what_was_not_equal_and_a_benchmark_is_named() {
        let log = "\
--- FAIL: TestOrdinal (0.00s)
    humanize_test.go:16: \n        \tError Trace:\t/w/humanize_test.go:16
        \tError:      \tNot equal: \n        \t            \texpected: \"22nd\"
        \t            \tactual  : \"22rd\"
        \t            \t
        \t            \tDiff:
        \t            \t--- Expected
        \t            \t+++ Actual
        \tTest:       \tTestOrdinal
        \tMessages:   \tOrdinal(22)
--- FAIL: BenchmarkOrdinal
    humanize_test.go:61: Ordinal(22) = \"22rd\", want 22nd
FAIL
";
        let parsed = super::super::parse(log, &Workspace::new("/w"));
        let reports: Vec<(&str, u32, &str, Option<&str>)> = parsed
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
            .collect();
        assert_eq!(
            reports,
            [
                (
                    "humanize_test.go",
                    16,
                    "Not equal: expected: \"22nd\" actual  : \"22rd\" (Ordinal(22))",
                    Some("TestOrdinal")
                ),
                (
                    "humanize_test.go",
                    61,
                    "Ordinal(22) = \"22rd\", want 22nd",
                    Some("BenchmarkOrdinal")
                ),
            ]
        );
    }

    #[test]
    fn gotestsum_s_failure_summary_names_its_test_and_golangci_s_package_header_is_no_finding() {
        // gotestsum 1.13 (`--format standard-verbose`): the last test that ran passed; the
        // summary after the run repeats a failure under its own name, then a package's build
        // failure. golangci-lint 2 prints a package header before the compiler's errors.
        let log = "\
=== RUN   TestCustomRelTime
--- PASS: TestCustomRelTime (0.00s)
FAIL
FAIL\tgithub.com/dustin/go-humanize\t0.015s

=== Failed
=== FAIL: . TestOrdinals (0.00s)
    common_test.go:14: On 2, expected '2nd', but got '2th'

=== FAIL: english  (0.00s)
FAIL\tgithub.com/dustin/go-humanize/english [build failed]
english/words.go:1: : # github.com/dustin/go-humanize/english [github.com/dustin/go-humanize/english.test]
english/words.go:79:34: undefined: strngs (typecheck)
";
        let parsed = parse(log, &Workspace::new("/w"));
        let got: Vec<(&str, u32, Option<&str>)> = parsed
            .reports
            .iter()
            .map(|r| (r.file_path.as_str(), r.line_number, r.test_name.as_deref()))
            .collect();
        assert_eq!(
            got,
            [
                ("common_test.go", 14, Some("TestOrdinals")),
                ("english/words.go", 79, None)
            ],
            "{:#?}",
            parsed.reports
        );
    }

    /// `go test -v` and `-json` (Go 1.26, an outsider trial's go-viper/mapstructure 2.5.0,
    /// parallel subtests): the test that panics is reported failed, its parents around it, just before the
    /// `panic:` line, and another test's `=== CONT` may come in between. The panic is that test's.
    #[test]
    fn a_panic_is_the_test_reported_failed_just_before_it() {
        let log = "\
    --- FAIL: TestStringToNetIPAddrHookFunc/Fail (0.00s)
        --- FAIL: TestStringToNetIPAddrHookFunc/Fail/#00 (0.00s)
=== CONT  TestStringToNetIPAddrHookFunc/Fail/#07
panic: runtime error: index out of range [2] with length 2 [recovered, repanicked]

goroutine 215 [running]:
testing.tRunner.func1.2({0x663720, 0x3a7c9e9f4498})
	/usr/local/go/src/testing/testing.go:1974 +0x232
testing.tRunner.func1()
	/usr/local/go/src/testing/testing.go:1977 +0x349
panic({0x663720?, 0x3a7c9e9f4498?})
	/usr/local/go/src/runtime/panic.go:860 +0x13a
github.com/go-viper/mapstructure/v2.wrapNetIPParseAddrError({0x693ac0, 0x3a7c9eb23740})
	/w/errors.go:182 +0xa5
github.com/go-viper/mapstructure/v2.TestStringToNetIPAddrHookFunc.StringToNetIPAddrHookFunc.func1({0x69c270?, 0x61fc60?}, {0x69c270, 0x674a60}, {0x61fc60, 0x3a7c9eb2d1e0})
	/w/decode_hooks.go:420 +0xd7
github.com/go-viper/mapstructure/v2.DecodeHookExec({0x6322a0?, 0x68f7f0?}, {0x61fc60?, 0x3a7c9eb2d1e0?, 0x1?}, {0x674a60?, 0x3a7c9eb36528?, 0x3a7c9ea06810?})
	/w/decode_hooks.go:73 +0x170
github.com/go-viper/mapstructure/v2.decodeHookFailureTestCase[...].Run(0x694860?, 0x3a7c9eb42008?, {0x6322a0, 0x68f7f0})
	/w/decode_hooks_test.go:94 +0x116
github.com/go-viper/mapstructure/v2.decodeHookTestSuite[...].Run.func2.1()
	/w/decode_hooks_test.go:48 +0x65
testing.tRunner(0x3a7c9eb42008, 0x3a7c9e9913e0)
	/usr/local/go/src/testing/testing.go:2036 +0xea
created by testing.(*T).Run in goroutine 202
	/usr/local/go/src/testing/testing.go:2101 +0x4c5
FAIL	github.com/go-viper/mapstructure/v2	0.012s
?   	github.com/go-viper/mapstructure/v2/internal/errors	[no test files]
FAIL
";
        // `go test -json` of the same run: test2json names each output's test, and the panic is
        // the one its events name (whatever `--- FAIL:` came before).
        let json = r#"{"Time":"2026-11-27T04:42:13.877084279Z","Action":"output","Package":"github.com/go-viper/mapstructure/v2","Test":"TestStringToNetIPAddrHookFunc/Fail/#00","Output":"--- FAIL: TestStringToNetIPAddrHookFunc/Fail/#00 (0.00s)\n"}
{"Time":"2026-11-27T04:42:13.877086902Z","Action":"fail","Package":"github.com/go-viper/mapstructure/v2","Test":"TestStringToNetIPAddrHookFunc/Fail/#00","Elapsed":0}
{"Time":"2026-11-27T04:42:13.877091229Z","Action":"output","Package":"github.com/go-viper/mapstructure/v2","Test":"TestStringToNetIPAddrHookFunc/Fail","Output":"--- FAIL: TestStringToNetIPAddrHookFunc/Fail (0.00s)\n"}
{"Time":"2026-11-27T04:42:13.877093202Z","Action":"fail","Package":"github.com/go-viper/mapstructure/v2","Test":"TestStringToNetIPAddrHookFunc/Fail","Elapsed":0}
{"Time":"2026-11-27T04:42:13.877094884Z","Action":"output","Package":"github.com/go-viper/mapstructure/v2","Test":"TestStringToNetIPAddrHookFunc","Output":"--- FAIL: TestStringToNetIPAddrHookFunc (0.00s)\n"}
{"Time":"2026-11-27T04:42:13.877096968Z","Action":"fail","Package":"github.com/go-viper/mapstructure/v2","Test":"TestStringToNetIPAddrHookFunc","Elapsed":0}
{"Time":"2026-11-27T04:42:13.87709874Z","Action":"cont","Package":"github.com/go-viper/mapstructure/v2","Test":"TestStringToNetIPAddrHookFunc/Fail/#07"}
{"Time":"2026-11-27T04:42:13.877100463Z","Action":"output","Package":"github.com/go-viper/mapstructure/v2","Test":"TestStringToNetIPAddrHookFunc/Fail/#07","Output":"=== CONT  TestStringToNetIPAddrHookFunc/Fail/#07\n"}
{"Time":"2026-11-27T04:42:13.879367125Z","Action":"output","Package":"github.com/go-viper/mapstructure/v2","Test":"TestStringToNetIPAddrHookFunc/Fail/#07","Output":"panic: runtime error: index out of range [2] with length 2 [recovered, repanicked]\n"}
{"Time":"2026-11-27T04:42:13.879372793Z","Action":"output","Package":"github.com/go-viper/mapstructure/v2","Test":"TestStringToNetIPAddrHookFunc/Fail/#07","Output":"\n"}
{"Time":"2026-11-27T04:42:13.879374926Z","Action":"output","Package":"github.com/go-viper/mapstructure/v2","Test":"TestStringToNetIPAddrHookFunc/Fail/#07","Output":"goroutine 212 [running]:\n"}
{"Time":"2026-11-27T04:42:13.879376959Z","Action":"output","Package":"github.com/go-viper/mapstructure/v2","Test":"TestStringToNetIPAddrHookFunc/Fail/#07","Output":"testing.tRunner.func1.2({0x663720, 0x3e8fc3564258})\n"}
{"Time":"2026-11-27T04:42:13.879379123Z","Action":"output","Package":"github.com/go-viper/mapstructure/v2","Test":"TestStringToNetIPAddrHookFunc/Fail/#07","Output":"\t/usr/local/go/src/testing/testing.go:1974 +0x232\n"}
{"Time":"2026-11-27T04:42:13.879381025Z","Action":"output","Package":"github.com/go-viper/mapstructure/v2","Test":"TestStringToNetIPAddrHookFunc/Fail/#07","Output":"testing.tRunner.func1()\n"}
{"Time":"2026-11-27T04:42:13.879384581Z","Action":"output","Package":"github.com/go-viper/mapstructure/v2","Test":"TestStringToNetIPAddrHookFunc/Fail/#07","Output":"\t/usr/local/go/src/testing/testing.go:1977 +0x349\n"}
{"Time":"2026-11-27T04:42:13.879386454Z","Action":"output","Package":"github.com/go-viper/mapstructure/v2","Test":"TestStringToNetIPAddrHookFunc/Fail/#07","Output":"panic({0x663720?, 0x3e8fc3564258?})\n"}
{"Time":"2026-11-27T04:42:13.879388356Z","Action":"output","Package":"github.com/go-viper/mapstructure/v2","Test":"TestStringToNetIPAddrHookFunc/Fail/#07","Output":"\t/usr/local/go/src/runtime/panic.go:860 +0x13a\n"}
{"Time":"2026-11-27T04:42:13.879391171Z","Action":"output","Package":"github.com/go-viper/mapstructure/v2","Test":"TestStringToNetIPAddrHookFunc/Fail/#07","Output":"github.com/go-viper/mapstructure/v2.wrapNetIPParseAddrError({0x693ac0, 0x3e8fc35a1bc0})\n"}
{"Time":"2026-11-27T04:42:13.879393484Z","Action":"output","Package":"github.com/go-viper/mapstructure/v2","Test":"TestStringToNetIPAddrHookFunc/Fail/#07","Output":"\t/w/errors.go:182 +0xa5\n"}
{"Time":"2026-11-27T04:42:13.879395657Z","Action":"output","Package":"github.com/go-viper/mapstructure/v2","Test":"TestStringToNetIPAddrHookFunc/Fail/#07","Output":"github.com/go-viper/mapstructure/v2.TestStringToNetIPAddrHookFunc.StringToNetIPAddrHookFunc.func1({0x69c270?, 0x61fc60?}, {0x69c270, 0x674a60}, {0x61fc60, 0x3e8fc35d4640})\n"}
{"Time":"2026-11-27T04:42:13.879397831Z","Action":"output","Package":"github.com/go-viper/mapstructure/v2","Test":"TestStringToNetIPAddrHookFunc/Fail/#07","Output":"\t/w/decode_hooks.go:420 +0xd7\n"}
{"Time":"2026-11-27T04:42:13.879399844Z","Action":"output","Package":"github.com/go-viper/mapstructure/v2","Test":"TestStringToNetIPAddrHookFunc/Fail/#07","Output":"github.com/go-viper/mapstructure/v2.DecodeHookExec({0x6322a0?, 0x68f7f0?}, {0x61fc60?, 0x3e8fc35d4640?, 0x1?}, {0x674a60?, 0x3e8fc35b0888?, 0x3e8fc35e1350?})\n"}
{"Time":"2026-11-27T04:42:13.879405983Z","Action":"output","Package":"github.com/go-viper/mapstructure/v2","Test":"TestStringToNetIPAddrHookFunc/Fail/#07","Output":"\t/w/decode_hooks.go:73 +0x170\n"}
{"Time":"2026-11-27T04:42:13.879407976Z","Action":"output","Package":"github.com/go-viper/mapstructure/v2","Test":"TestStringToNetIPAddrHookFunc/Fail/#07","Output":"github.com/go-viper/mapstructure/v2.decodeHookFailureTestCase[...].Run(0x694860?, 0x3e8fc35cbb08?, {0x6322a0, 0x68f7f0})\n"}
{"Time":"2026-11-27T04:42:13.879410019Z","Action":"output","Package":"github.com/go-viper/mapstructure/v2","Test":"TestStringToNetIPAddrHookFunc/Fail/#07","Output":"\t/w/decode_hooks_test.go:94 +0x116\n"}
{"Time":"2026-11-27T04:42:13.879411842Z","Action":"output","Package":"github.com/go-viper/mapstructure/v2","Test":"TestStringToNetIPAddrHookFunc/Fail/#07","Output":"github.com/go-viper/mapstructure/v2.decodeHookTestSuite[...].Run.func2.1()\n"}
{"Time":"2026-11-27T04:42:13.879413714Z","Action":"output","Package":"github.com/go-viper/mapstructure/v2","Test":"TestStringToNetIPAddrHookFunc/Fail/#07","Output":"\t/w/decode_hooks_test.go:48 +0x65\n"}
{"Time":"2026-11-27T04:42:13.879415607Z","Action":"output","Package":"github.com/go-viper/mapstructure/v2","Test":"TestStringToNetIPAddrHookFunc/Fail/#07","Output":"testing.tRunner(0x3e8fc35cbb08, 0x3e8fc3500d80)\n"}
{"Time":"2026-11-27T04:42:13.87941747Z","Action":"output","Package":"github.com/go-viper/mapstructure/v2","Test":"TestStringToNetIPAddrHookFunc/Fail/#07","Output":"\t/usr/local/go/src/testing/testing.go:2036 +0xea\n"}
{"Time":"2026-11-27T04:42:13.879419313Z","Action":"output","Package":"github.com/go-viper/mapstructure/v2","Test":"TestStringToNetIPAddrHookFunc/Fail/#07","Output":"created by testing.(*T).Run in goroutine 199\n"}
{"Time":"2026-11-27T04:42:13.879421086Z","Action":"output","Package":"github.com/go-viper/mapstructure/v2","Test":"TestStringToNetIPAddrHookFunc/Fail/#07","Output":"\t/usr/local/go/src/testing/testing.go:2101 +0x4c5\n"}
"#;
        for (log, test) in [(log, "#00"), (json, "#07")] {
            let parsed = crate::parse::parse(log, &crate::parse::Workspace::new("/w"));
            let reports = crate::parse::report_places(&parsed);
            let test = format!("TestStringToNetIPAddrHookFunc/Fail/{test}");
            let test = Some(test.as_str());
            assert_eq!(reports, [("errors.go", 182, test), ("decode_hooks_test.go", 48, test)]);
        }
    }
}
