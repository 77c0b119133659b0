//! TAP, the Test Anything Protocol: tape's and `node --test`'s output (and any TAP producer's).
//! `ok N name` and `not ok N name` are test outcomes; a failure's YAML block (`---` to `...`)
//! says where it failed: tape's `at:` (the assertion in the test), the frames of its `stack:`
//! (where a thrown error began), node's `location:` (the test itself).

use std::borrow::Cow;

use super::js::{STACK_OVERFLOW, frame_place, js_type, node_frame, node_header};
use super::look::Look;
use super::{Finding, PlaceCounts, Rank, Sink, TestOutcome, has_byte};

/// A failure being read: its test, and what its YAML block said so far.
#[derive(Default)]
struct Failure {
    test: String,
    /// What the `not ok` line says: tape's assertion (`should be strictly equal`), or the test.
    assertion: String,
    /// tape's and node's `expected:` and `actual:`, when on one line.
    expected: Option<String>,
    actual: Option<String>,
    in_yaml: bool,
    /// tape's `at:`: the assertion that failed.
    at: Option<(String, u32)>,
    /// The first frame of `stack:` in the project.
    stack: Option<(String, u32)>,
    /// The outermost frame of `stack:` in a test file: the test's call that led to the error.
    test_frame: Option<(String, u32)>,
    /// The frames of `stack:` in the project, counted: a stack that overflowed is placed at the
    /// call it repeats ([`STACK_OVERFLOW`]).
    calls: PlaceCounts,
    /// node's `location:`: where the test is.
    location: Option<(String, u32)>,
    /// tape's `operator:`; `error` when the test threw.
    operator: Option<String>,
    /// node's `name:` and `error:` (the error's class and first line).
    name: Option<String>,
    error: Option<String>,
    /// node's `failureType: 'subtestsFailed'`: a parent whose subtests failed, each reported.
    subtests_failed: bool,
    /// Lines of the YAML block read: a block that never closes (a job killed mid-block) is
    /// given up after [`MAX_YAML_LINES`].
    yaml_lines: u32,
    /// ava's `'Error thrown in test:'` detail was read: the error's class follows
    /// (`ReferenceError {`), then its `message:`.
    ava_thrown: AvaThrown,
}

/// Where in ava's detail of an error thrown in a test the YAML block is.
#[derive(Default, Clone, Copy, PartialEq)]
enum AvaThrown {
    #[default]
    No,
    Class,
    Message,
}

/// Most lines of a failure's YAML block (tape's stack is a dozen).
const MAX_YAML_LINES: u32 = 200;

#[derive(Default)]
pub(crate) struct Tap {
    /// A `TAP version` line or an outcome was seen: `# name` comments are then tape's test names,
    /// or what a test file printed.
    seen: bool,
    /// The comments are an error Node printed as a test file died (its `file:line` header came
    /// first), up to the file's `# Subtest:` or the next outcome.
    node_error: bool,
    /// tape's last `# name` comment: the test its assertions belong to.
    comment: Option<String>,
    failure: Option<Failure>,
}

impl Tap {
    /// Whether [`Tap::line`] can do anything with the line: inside a failure every line may be
    /// its YAML or end it; otherwise only a TAP header, an outcome, or (once TAP was seen) a
    /// comment.
    #[inline]
    pub fn wants(&self, look: &Look<'_>) -> bool {
        if self.failure.is_some() {
            return true;
        }
        // Most lines of a long log start with none of these: ruled out by one byte, inline.
        match look.first {
            Some(b'T' | b'o' | b'n') => self.may_start(look),
            Some(b'#' | b' ') => self.seen && self.may_start(look),
            _ => false,
        }
    }

    /// What a TAP comment holds when it is an error Node printed as a test file died: its runner
    /// prints a file's stderr as `# ` comments, and an uncaught error (the SyntaxError that
    /// stopped the file loading) begins with Node's `file:line` header, then the source line,
    /// the error and its frames. Other stderr a test wrote (a stack it logged and went on) is not
    /// read: the test's own outcome says whether it failed.
    pub fn comment_as_output<'l>(&self, line: &'l str) -> Option<&'l str> {
        let comment = line.strip_prefix("# ").filter(|_| self.seen)?;
        if self.node_error {
            return (!comment.starts_with("Subtest: ") && !is_summary(comment)).then_some(comment);
        }
        starts_node_error(comment).then_some(comment)
    }

    fn may_start(&self, look: &Look<'_>) -> bool {
        match look.first {
            Some(b'T') => look.line.starts_with("TAP version "),
            Some(b'o' | b'n') => outcome(look.line).is_some(),
            Some(b'#') => self.seen,
            // node's subtests are indented by four spaces a level.
            Some(b' ') => {
                matches!(look.trimmed().as_bytes().first(), Some(b'o' | b'n')) && outcome(look.trimmed()).is_some()
            }
            _ => false,
        }
    }

    pub fn line(&mut self, line: &str, sink: &mut Sink<'_>) {
        if line.starts_with("TAP version ") {
            self.seen = true;
            self.node_error = false;
            return;
        }
        let trimmed = line.trim_start();
        // An outcome line is at column 0, or, once TAP has been seen, indented by spaces (node's
        // subtests): as routing offers them ([`Tap::wants`]).
        let indented = line.trim_start_matches(' ');
        if let Some((passed, name)) = (indented.len() == line.len() || self.seen)
            .then(|| outcome(indented))
            .flatten()
        {
            self.flush(sink);
            self.seen = true;
            self.node_error = false;
            let (name, directive) = match name.split_once(" # ") {
                Some((name, directive)) => (name, directive.to_ascii_uppercase()),
                None => (name, String::new()),
            };
            // tape names an assertion; its test is the `# name` comment above it.
            let test = match (name.strip_prefix("- "), &self.comment) {
                (Some(name), _) => name.to_owned(),
                (None, Some(comment)) => comment.clone(),
                (None, None) => name.to_owned(),
            };
            let outcome = if directive.starts_with("SKIP") {
                TestOutcome::Skipped
            } else if passed || directive.starts_with("TODO") {
                TestOutcome::Passed
            } else {
                TestOutcome::Failed
            };
            if !test.is_empty() {
                sink.test(&test, outcome);
            }
            if outcome == TestOutcome::Failed {
                self.failure = Some(Failure {
                    test,
                    assertion: name.trim_start_matches("- ").to_owned(),
                    ..Failure::default()
                });
            }
            return;
        }
        if let Some(comment) = line.strip_prefix("# ") {
            if self.seen {
                self.node_error = if self.node_error {
                    !comment.starts_with("Subtest: ")
                } else {
                    starts_node_error(comment)
                };
            }
            self.flush(sink);
            // `# Subtest: name` (node) announces what its outcome line names again; the
            // summaries (`# tests 3`, `# fail 1`, `# ok`, node's `# duration_ms 141.4`) name no test.
            if !comment.starts_with("Subtest: ") && !is_summary(comment) {
                self.comment = Some(comment.trim().to_owned());
            }
            return;
        }
        let Some(failure) = self.failure.as_mut() else {
            return;
        };
        if !failure.in_yaml {
            if trimmed == "---" {
                failure.in_yaml = true;
            } else if !trimmed.is_empty() {
                // No YAML block: the failure said no place.
                self.failure = None;
            }
            return;
        }
        if trimmed == "..." {
            self.flush(sink);
            return;
        }
        failure.yaml_lines += 1;
        if failure.yaml_lines > MAX_YAML_LINES {
            self.flush(sink);
            return;
        }
        match failure.ava_thrown {
            AvaThrown::Class => {
                failure.ava_thrown = AvaThrown::No;
                if let Some(class) = trimmed.strip_suffix(" {").filter(|c| is_class_name(c)) {
                    failure.name = Some(class.to_owned());
                    failure.ava_thrown = AvaThrown::Message;
                    return;
                }
            }
            AvaThrown::Message => {
                if let Some(message) = trimmed.strip_prefix("message: ") {
                    let message = message.trim_end_matches(',').trim_matches('\'');
                    failure.error = Some(message.to_owned());
                    failure.ava_thrown = AvaThrown::No;
                    return;
                }
                if trimmed == "}" {
                    failure.ava_thrown = AvaThrown::No;
                }
                return;
            }
            AvaThrown::No => {}
        }
        if trimmed.starts_with("'Error thrown in test:'") {
            failure.ava_thrown = AvaThrown::Class;
            return;
        }
        if let Some(at) = trimmed.strip_prefix("at: ") {
            failure.at = frame(unquoted(at), sink);
        } else if let Some(location) = trimmed.strip_prefix("location: ") {
            failure.location = frame(unquoted(location), sink);
        } else if let Some(operator) = trimmed.strip_prefix("operator: ") {
            failure.operator = Some(unquoted(operator).to_owned());
        } else if let Some(expected) = trimmed.strip_prefix("expected: ") {
            failure.expected = one_line_value(expected);
        } else if let Some(actual) = trimmed.strip_prefix("actual: ") {
            failure.actual = one_line_value(actual);
        } else if let Some(kind) = trimmed.strip_prefix("failureType: ") {
            failure.subtests_failed = unquoted(kind) == "subtestsFailed";
        } else if let Some(name) = trimmed.strip_prefix("name: ") {
            failure.name = Some(unquoted(name).to_owned());
        } else if let Some(error) = trimmed.strip_prefix("error: ") {
            let error = unquoted(error);
            if !error.starts_with('|') && !error.starts_with('>') {
                failure.error = Some(error.to_owned());
            }
        } else if let Some(message) = trimmed.strip_prefix("message: ")
            && failure.error.is_none()
        {
            // vitest's `error:` is a map: its `name:` and `message:` under it.
            failure.error = Some(unquoted(message).to_owned());
        } else if let Some(place) = frame(trimmed.strip_prefix("at ").unwrap_or(trimmed), sink) {
            // A line of `stack: |-`: tape's `at fn (path:12:5)`, node's `fn (file:///path:12:5)`.
            if sink.is_test_file(&place.0) {
                failure.test_frame = Some(place.clone());
            }
            if failure.error.as_deref().is_some_and(|e| e.contains(STACK_OVERFLOW)) {
                failure.calls.count(place.clone());
            }
            failure.stack.get_or_insert(place);
        }
    }

    /// Reports the failure read so far: an assertion at tape's `at:`; a thrown error where its
    /// stack first enters the project; else where the test is.
    fn flush(&mut self, sink: &mut Sink<'_>) {
        let Some(mut failure) = self.failure.take() else {
            return;
        };
        if failure.subtests_failed {
            return;
        }
        let threw = failure.operator.as_deref() == Some("error")
            || failure.name.as_deref().is_some_and(|n| n != "AssertionError");
        if let Some(call) = failure.calls.recursive_call().cloned() {
            failure.stack = Some(call);
        }
        let place = if threw {
            failure.stack.clone().or(failure.at)
        } else {
            failure.at.or(failure.stack.clone())
        }
        .or(failure.location);
        let Some((file, line)) = place else {
            return;
        };
        // Thrown in the code the test calls: the test's own line, the call that led there, is a
        // second place to look at.
        let called_at = failure
            .test_frame
            .as_ref()
            .filter(|_| threw && failure.stack.as_ref() == Some(&(file.clone(), line)));
        let mut message = match (&failure.name, &failure.error) {
            (Some(name), Some(error)) => format!("{name}: {error}"),
            (Some(name), None) => format!("{name}: {}", failure.assertion),
            // tape names a thrown error by its text: `not ok 3 TypeError: x is not a function`.
            (None, _) if threw => failure.assertion.clone(),
            _ => format!("not ok: {}", failure.assertion),
        };
        if let (Some(expected), Some(actual)) = (&failure.expected, &failure.actual)
            && !threw
        {
            message.push_str(&format!(" (expected {expected}, actual {actual})"));
        }
        sink.report_raised(
            Finding {
                file: &file,
                line,
                error_type: js_type(&message),
                message: Cow::Borrowed(&message),
                test: Some(&failure.test),
                confidence: 0.85,
                rank: Rank::Error,
                diagnostic: false,
            },
            called_at.map(|(file, line)| (file.as_str(), *line)),
        );
    }

    pub fn finish(&mut self, sink: &mut Sink<'_>) {
        self.flush(sink);
    }
}

/// A JavaScript class name (`TypeError`): a capital, then letters and digits.
fn is_class_name(name: &str) -> bool {
    name.as_bytes().first().is_some_and(u8::is_ascii_uppercase) && name.bytes().all(|b| b.is_ascii_alphanumeric())
}

/// `ok 3 name` or `not ok 3 name` (the number may stand alone): whether it passed, and the name.
fn outcome(line: &str) -> Option<(bool, &str)> {
    let (passed, rest) = match line.strip_prefix("ok ") {
        Some(rest) => (true, rest),
        None => (false, line.strip_prefix("not ok ")?),
    };
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 {
        return None;
    }
    Some((passed, rest[digits..].trim()))
}

/// A TAP summary comment: a count (`tests 3`, `pass 2`, node's `duration_ms 141.4`) or tape's `ok`.
fn is_summary(comment: &str) -> bool {
    const COUNTS: &[&str] = &[
        "tests",
        "suites",
        "pass",
        "fail",
        "skip",
        "skipped",
        "todo",
        "cancelled",
        "duration_ms",
    ];
    comment == "ok"
        || comment.split_once(' ').is_some_and(|(word, n)| {
            // tape pads its counts: `# pass  1`.
            let n = n.trim();
            COUNTS.contains(&word) && !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit() || b == b'.')
        })
}

/// A YAML value on its own line; `|-` or `>` begins a block of lines, which is not kept.
fn one_line_value(value: &str) -> Option<String> {
    let value = value.trim();
    (!value.starts_with('|') && !value.starts_with('>')).then(|| value.to_owned())
}

/// A YAML scalar without its quotes: node and tape quote with `'`, vitest with `"`.
fn unquoted(value: &str) -> &str {
    value.trim_matches(|c| c == '\'' || c == '"')
}

/// A place in the project from a frame's text: `fn (/abs/a.js:12:5)`, `/abs/a.js:12:5`,
/// `file:///abs/a.js:12:5`.
fn frame(text: &str, sink: &Sink<'_>) -> Option<(String, u32)> {
    let text = text.trim();
    if !text.is_ascii() {
        // A path with other characters: the frame reader's regex knows them.
        let as_frame = format!("  at {text}");
        let (file, line) = node_frame(&as_frame)?;
        sink.relative(file)?;
        return Some((file.to_owned(), line.parse().unwrap_or(1)));
    }
    let (file, line) = frame_place(text)?;
    sink.relative(file)?;
    Some((file.to_owned(), line.parse().unwrap_or(1)))
}

/// Whether a comment is the header Node prints above an uncaught error: the place it stopped,
/// `file:line` in the project, or in Node's own code (`node:internal/modules/cjs/loader:1210`
/// above a module it could not find) or in code with no file (`<anonymous_script>:1` above
/// what `JSON.parse` could not read); the error's frames name the project's line.
fn starts_node_error(comment: &str) -> bool {
    if node_header(comment).is_some() {
        return true;
    }
    let Some((place, n)) = comment.rsplit_once(':') else {
        return false;
    };
    let own = place.starts_with("node:") || place.starts_with('<') && place.ends_with('>');
    own && !has_byte(place, b' ') && !n.is_empty() && n.len() <= 9 && n.bytes().all(|b| b.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use crate::api::shared::ErrorType;
    use crate::parse::{TestOutcome, Workspace, parse};

    /// `node --test --test-reporter=tap` (Node 20.20.2, an outsider trial's flat 5.0.2): a
    /// TypeError thrown in the code the test calls is placed at its first project frame and at
    /// the test's own call, the outermost frame of the stack in a test file.
    #[test]
    fn a_thrown_error_is_placed_where_it_began_and_at_the_test_s_call() {
        let log = "\
TAP version 13
# Subtest: unflatten nested keys
not ok 2 - unflatten nested keys
  ---
  duration_ms: 0.181793
  location: '/work/heldout18/projects/jsmono/packages/flat/test/node/flat.node.test.js:9:1'
  failureType: 'testCodeFailure'
  error: 'key.trimm is not a function'
  code: 'ERR_TEST_FAILURE'
  name: 'TypeError'
  stack: |-
    getkey (/work/heldout18/projects/jsmono/packages/flat/index.js:70:34)
    /work/heldout18/projects/jsmono/packages/flat/index.js:119:16
    Array.forEach (<anonymous>)
    Function.unflatten (/work/heldout18/projects/jsmono/packages/flat/index.js:117:23)
    TestContext.<anonymous> (/work/heldout18/projects/jsmono/packages/flat/test/node/flat.node.test.js:10:34)
    Test.runInAsyncScope (node:async_hooks:206:9)
    Test.run (node:internal/test_runner/test:796:25)
    Test.processPendingSubtests (node:internal/test_runner/test:526:18)
    Test.postRun (node:internal/test_runner/test:889:19)
    Test.run (node:internal/test_runner/test:835:12)
  ...
1..2
";
        let parsed = parse(log, &Workspace::new("/work/heldout18/projects/jsmono"));
        let places = crate::parse::report_confidences(&parsed);
        assert_eq!(
            places,
            [
                ("packages/flat/index.js", 70, Some(0.85)),
                ("packages/flat/test/node/flat.node.test.js", 10, Some(0.8))
            ]
        );
    }

    /// `node --test` (Node 20.20.2) on a failing assertion and a TypeError in the code under test:
    /// its output when it is not a terminal, TAP.
    const NODE_TEST: &str = r#"TAP version 13
# Subtest: totals prices
not ok 1 - totals prices
  ---
  duration_ms: 2.344028
  location: '/w/test/m.test.js:4:1'
  failureType: 'testCodeFailure'
  error: |-
    Expected values to be strictly equal:
    
    3 !== 4
    
  code: 'ERR_ASSERTION'
  name: 'AssertionError'
  expected: 4
  actual: 3
  operator: 'strictEqual'
  stack: |-
    TestContext.<anonymous> (/w/test/m.test.js:5:10)
    Test.runInAsyncScope (node:async_hooks:206:9)
    Test.run (node:internal/test_runner/test:796:25)
    Test.processPendingSubtests (node:internal/test_runner/test:526:18)
    node:internal/test_runner/harness:255:12
    node:internal/process/task_queues:140:7
    AsyncResource.runInAsyncScope (node:async_hooks:206:9)
    AsyncResource.runMicrotask (node:internal/process/task_queues:137:8)
  ...
# Subtest: first name
not ok 2 - first name
  ---
  duration_ms: 0.19901
  location: '/w/test/m.test.js:7:1'
  failureType: 'testCodeFailure'
  error: "Cannot read properties of undefined (reading 'toUpperCase')"
  code: 'ERR_TEST_FAILURE'
  name: 'TypeError'
  stack: |-
    first (/w/lib/m.js:5:21)
    TestContext.<anonymous> (/w/test/m.test.js:8:22)
    Test.runInAsyncScope (node:async_hooks:206:9)
    Test.run (node:internal/test_runner/test:796:25)
    Test.processPendingSubtests (node:internal/test_runner/test:526:18)
    Test.postRun (node:internal/test_runner/test:889:19)
    Test.run (node:internal/test_runner/test:835:12)
    async Test.processPendingSubtests (node:internal/test_runner/test:526:7)
  ...
# Subtest: passes
ok 3 - passes
  ---
  duration_ms: 0.201629
  ...
1..3
# tests 3
# suites 0
# pass 1
# fail 2
# cancelled 0
# skipped 0
# todo 0
# duration_ms 141.443906
"#;

    /// tape 5.10.2 on a test that throws (`operator: error`), named with a summary's word.
    const TAPE_THROWS: &str = r#"TAP version 13
# fail on null input
not ok 1 TypeError: Cannot read properties of undefined (reading 'toUpperCase')
  ---
    operator: error
    stack: |-
      TypeError: Cannot read properties of undefined (reading 'toUpperCase')
          at first (/w/lib/m.js:2:21)
          at Test.<anonymous> (/w/test/tape.js:4:11)
          at Test.run (/work/heldout4/base/node_modules/tape/lib/test.js:151:28)
          at Immediate.next (/work/heldout4/base/node_modules/tape/lib/results.js:175:7)
          at process.processImmediate (node:internal/timers:483:21)
  ...
# second
ok 2 should be strictly equal

1..2
# tests 2
# pass  1
# fail  1

"#;

    /// `node --test` on a failing test inside a `describe`: its parent fails too.
    const NODE_TEST_NESTED: &str = r#"TAP version 13
# Subtest: first
    # Subtest: uppercases
    not ok 1 - uppercases
      ---
      duration_ms: 2.108617
      location: '/w/test/nested.test.js:5:3'
      failureType: 'testCodeFailure'
      error: |-
        Expected values to be strictly equal:
        
        'A' !== 'B'
        
      code: 'ERR_ASSERTION'
      name: 'AssertionError'
      expected: 'B'
      actual: 'A'
      operator: 'strictEqual'
      stack: |-
        TestContext.<anonymous> (/w/test/nested.test.js:5:35)
        Test.runInAsyncScope (node:async_hooks:206:9)
        Test.run (node:internal/test_runner/test:796:25)
        Test.start (node:internal/test_runner/test:702:17)
        node:internal/test_runner/test:1133:71
        node:internal/per_context/primordials:482:82
        new Promise (<anonymous>)
        new SafePromise (node:internal/per_context/primordials:450:29)
        node:internal/per_context/primordials:482:9
        Array.map (<anonymous>)
      ...
    # Subtest: works
    ok 2 - works
      ---
      duration_ms: 0.163334
      ...
    1..2
not ok 1 - first
  ---
  duration_ms: 3.271928
  type: 'suite'
  location: '/w/test/nested.test.js:4:1'
  failureType: 'subtestsFailed'
  error: '1 subtest failed'
  code: 'ERR_TEST_FAILURE'
  ...
1..1
# tests 2
# suites 1
# pass 1
# fail 1
# cancelled 0
# skipped 0
# todo 0
# duration_ms 107.901043
"#;

    #[test]
    fn a_test_that_throws_is_placed_where_the_error_began_and_typed_by_it() {
        let parsed = parse(TAPE_THROWS, &Workspace::new("/w"));
        // Where it began, and the test's call that led there (tape's stack goes on to it).
        assert_eq!(parsed.reports.len(), 2, "{:?}", parsed.reports);
        let report = &parsed.reports[0];
        assert_eq!((report.file_path.as_str(), report.line_number), ("lib/m.js", 2));
        let test_s = &parsed.reports[1];
        assert_eq!((test_s.file_path.as_str(), test_s.line_number), ("test/tape.js", 4));
        assert_eq!(report.error_type, ErrorType::TypeError);
        assert_eq!(report.test_name.as_deref(), Some("fail on null input"));
        let second = parsed.tests.iter().find(|t| t.name == "second").map(|t| t.outcome);
        assert_eq!(second, Some(TestOutcome::Passed));
    }

    #[test]
    fn a_parent_whose_subtests_failed_is_not_a_place() {
        let parsed = parse(NODE_TEST_NESTED, &Workspace::new("/w"));
        let places: Vec<(&str, u32)> = parsed
            .reports
            .iter()
            .map(|r| (r.file_path.as_str(), r.line_number))
            .collect();
        assert_eq!(places, [("test/nested.test.js", 5)]);
    }

    /// `node --test` (Node 20.20.2, TAP as it prints when its output is not a terminal) on a test
    /// file whose `require` of the code under test failed to load, and on one that logs a handled
    /// error's stack and passes: Node prints each file's stderr as TAP comments. The load-time
    /// SyntaxError, under Node's `file:line` header, is placed where Node stopped; the stack the
    /// passing test logged is no report.
    #[test]
    fn a_load_time_error_in_tap_comments_is_placed_where_node_stopped() {
        let log = r#"TAP version 13
# /w/lib/add.js:2
#   return Number(a.trim()
#                        ^
# SyntaxError: missing ) after argument list
#     at wrapSafe (node:internal/modules/cjs/loader:1464:18)
#     at Module._compile (node:internal/modules/cjs/loader:1495:20)
#     at Module._extensions..js (node:internal/modules/cjs/loader:1623:10)
#     at Module.load (node:internal/modules/cjs/loader:1266:32)
#     at Module._load (node:internal/modules/cjs/loader:1091:12)
#     at Module.require (node:internal/modules/cjs/loader:1289:19)
#     at require (node:internal/modules/helpers:182:18)
#     at Object.<anonymous> (/w/test/add.test.js:3:17)
#     at Module._compile (node:internal/modules/cjs/loader:1521:14)
#     at Module._extensions..js (node:internal/modules/cjs/loader:1623:10)
# Node.js v20.20.2
# Subtest: /w/test/add.test.js
not ok 1 - /w/test/add.test.js
  ---
  duration_ms: 72.637943
  location: '/w/test/add.test.js:1:1'
  failureType: 'testCodeFailure'
  exitCode: 1
  signal: ~
  error: 'test failed'
  code: 'ERR_TEST_FAILURE'
  ...
# Error: retrying
#     at TestContext.<anonymous> (/w/test/log.test.js:5:17)
#     at Test.runInAsyncScope (node:async_hooks:206:9)
#     at Test.run (node:internal/test_runner/test:796:25)
#     at Test.processPendingSubtests (node:internal/test_runner/test:526:18)
#     at node:internal/test_runner/harness:255:12
#     at node:internal/process/task_queues:140:7
#     at AsyncResource.runInAsyncScope (node:async_hooks:206:9)
#     at AsyncResource.runMicrotask (node:internal/process/task_queues:137:8)
# Subtest: logs a handled error
ok 2 - logs a handled error
  ---
  duration_ms: 2.147012
  ...
1..2
# tests 2
# suites 0
# pass 1
# fail 1
# cancelled 0
# skipped 0
# todo 0
# duration_ms 138.414988
"#;
        let parsed = parse(log, &Workspace::new("/w"));
        let places = crate::parse::report_kinds(&parsed);
        assert_eq!(
            places,
            [
                ("lib/add.js", 2, ErrorType::Syntax),
                ("test/add.test.js", 1, ErrorType::Logic)
            ]
        );
        assert_eq!(parsed.reports[0].message, "SyntaxError: missing ) after argument list");
    }

    /// `node --test` (Node 20.20.2, TAP) on test files that died at load with Node's header in
    /// its own code (a module it could not find) or in code with no file (`JSON.parse`): the
    /// error is placed by its frames at the test file's line that ran it.
    #[test]
    fn a_load_time_error_under_node_s_own_header_is_placed_by_its_frames() {
        let missing = "\
TAP version 13
# node:internal/modules/cjs/loader:1210
#   throw err;
#   ^
# Error: Cannot find module './helpers-missing.js'
# Require stack:
# - /tmp/nt/t2/load.test.js
#     at Module._resolveFilename (node:internal/modules/cjs/loader:1207:15)
#     at Module._load (node:internal/modules/cjs/loader:1038:27)
#     at Module.require (node:internal/modules/cjs/loader:1289:19)
#     at require (node:internal/modules/helpers:182:18)
#     at Object.<anonymous> (/tmp/nt/t2/load.test.js:3:17)
#     at Module._compile (node:internal/modules/cjs/loader:1521:14)
#     at Function.executeUserEntryPoint [as runMain] (node:internal/modules/run_main:164:12) {
#   code: 'MODULE_NOT_FOUND',
#   requireStack: [ '/tmp/nt/t2/load.test.js' ]
# }
# Node.js v20.20.2
# Subtest: /tmp/nt/t2/load.test.js
not ok 1 - /tmp/nt/t2/load.test.js
  ---
  duration_ms: 82.623195
  location: '/tmp/nt/t2/load.test.js:1:1'
  failureType: 'testCodeFailure'
  exitCode: 1
  signal: ~
  error: 'test failed'
  code: 'ERR_TEST_FAILURE'
  ...
1..1
";
        let parsed = parse(missing, &Workspace::new("/tmp/nt"));
        assert_eq!(
            crate::parse::report_kinds(&parsed),
            [
                ("t2/load.test.js", 3, ErrorType::Import),
                ("t2/load.test.js", 1, ErrorType::Logic)
            ]
        );
        let json = missing
            .replace("node:internal/modules/cjs/loader:1210", "<anonymous_script>:1")
            .replace(
                "Error: Cannot find module './helpers-missing.js'",
                "SyntaxError: Expected double-quoted property name in JSON at position 8",
            );
        let parsed = parse(&json, &Workspace::new("/tmp/nt"));
        assert_eq!(
            crate::parse::report_kinds(&parsed)[0],
            ("t2/load.test.js", 3, ErrorType::Syntax)
        );
        // A comment like a place of Node's own that is no header: a test's output.
        assert!(!super::starts_node_error("node:internal is 3"));
        assert!(!super::starts_node_error("<anonymous>: 3"));
        assert!(super::starts_node_error("node:internal/modules/cjs/loader:1210"));
    }

    #[test]
    fn node_test_failures_are_placed_at_the_assertion_and_where_the_error_began() {
        let parsed = parse(NODE_TEST, &Workspace::new("/w"));
        let places = crate::parse::report_kinds(&parsed);
        assert_eq!(
            places,
            [
                ("test/m.test.js", 5, ErrorType::Logic),
                ("lib/m.js", 5, ErrorType::TypeError),
                ("test/m.test.js", 8, ErrorType::TypeError)
            ]
        );
        assert_eq!(parsed.reports[0].test_name.as_deref(), Some("totals prices"));
        assert_eq!(
            parsed.reports[1].message,
            "TypeError: Cannot read properties of undefined (reading 'toUpperCase')"
        );
        let outcomes: Vec<(&str, TestOutcome)> = parsed.tests.iter().map(|t| (t.name.as_str(), t.outcome)).collect();
        assert_eq!(
            outcomes,
            [
                ("first name", TestOutcome::Failed),
                ("passes", TestOutcome::Passed),
                ("totals prices", TestOutcome::Failed)
            ]
        );
    }

    #[test]
    fn ava_s_tap_names_the_error_thrown_in_a_test_and_where() {
        // ava 7 `--tap`: an assertion (its `at:` inside ava: no place in the project), then an
        // error thrown in the code under test.
        let log = "\
TAP version 13
not ok 2 - parses hours
  ---
    name: AssertionError
    assertion: t.is()
    details:
      'Difference (- actual, + expected):': |-
        - 3600002
        + 7200000
    message: ''
    at: >-
      ExecutionContext.is
      (file:///w/node_modules/ava/lib/assert.js:309:16)
  ...
not ok 3 - formats short minutes
  ---
    name: AssertionError
    details:
      'Error thrown in test:': |-
        ReferenceError {
          message: 'mn is not defined',
        }
    message: Error thrown in test
    at: 'fmtShort (/w/index.js:122:28)'
  ...
1..3
";
        let parsed = crate::parse::parse(log, &crate::parse::Workspace::new("/w"));
        let got = crate::parse::report_findings(&parsed);
        assert_eq!(
            got,
            [(
                "index.js",
                122,
                "Import".to_owned(),
                "ReferenceError: mn is not defined"
            )]
        );
    }
    /// vitest 4.1 `--reporter=tap` (an outside trial's fraction.js 5.3.4): TAP 14's nested
    /// subtests, indented four spaces a level, and a YAML map of the error with double-quoted
    /// values; `at:` is where it was thrown.
    #[test]
    fn vitest_s_tap_places_each_failure_at_its_at() {
        let log = r#"TAP version 13
1..1
not ok 1 - tests/fraction.test.js # time=193.80ms {
    1..9
    not ok 1 - Fraction # time=165.81ms {
        1..289
        ok 67 - 1 + 1 # time=0.20ms
        not ok 68 - 1 - (-1) # time=26.89ms
            ---
            error:
                name: "AssertionError"
                message: "'0' == '2'"
            at: "/w/tests/fraction.test.js:1583:18"
            ...
        not ok 94 - -222/3 # time=0.53ms
            ---
            error:
                name: "TypeError"
                message: "this.n is not a function"
            at: "/w/dist/fraction.js:569:52"
            ...
    }
}
"#;
        let workspace = crate::parse::Workspace::new("/w")
            .with_files(vec!["tests/fraction.test.js".to_owned(), "dist/fraction.js".to_owned()]);
        let parsed = crate::parse::parse(log, &workspace);
        let got: Vec<(&str, u32, String)> = crate::parse::report_findings(&parsed)
            .into_iter()
            .map(|(file, line, error_type, _)| (file, line, error_type))
            .collect();
        assert_eq!(
            got,
            [
                ("tests/fraction.test.js", 1583, "Logic".to_owned()),
                ("dist/fraction.js", 569, "TypeError".to_owned())
            ]
        );
        let messages: Vec<&str> = parsed.reports.iter().map(|r| r.message.as_str()).collect();
        assert!(messages[1].contains("this.n is not a function"), "{messages:?}");
    }
}
