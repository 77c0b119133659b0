//! Deno's own diagnostics (`deno check`, `deno test`, `deno lint`, and any script `deno run`
//! stops on): a header, the source excerpt, then the place —
//!
//! ```text
//! TS2552 [ERROR]: Cannot find name 'patern'. Did you mean 'pattern'?      (deno check)
//!     strings = strings.map((str) => str.replace(patern, '\n'));
//!                                                ~~~~~~
//!     at file:///w/src/index.ts:28:48
//! error: SyntaxError: Expression expected                                  (any command)
//!     at file:///w/src/index.ts:11:3
//! removes the leading newline => ./src/dedent_test.ts:4:6                  (deno test's ERRORS)
//! error: AssertionError: Expected values to be strictly equal:
//!     at file:///w/src/dedent_test.ts:8:10
//! error[prefer-const]: `indentLengths` is never reassigned                 (deno lint)
//!   --> /w/src/index.ts:14:7
//! file:///w/src/index.ts: line 14, col 7 - `x` is never reassigned (prefer-const)  (--compact)
//! ```
//!
//! A type checker's error is typed by its TypeScript code, as tsc's; an error thrown by the code by
//! its name, as Node's; a lint rule's finding is LINTING. The place of a thrown error is its first
//! frame in the project's files (an assertion library's frames come first).

use std::borrow::Cow;

use super::awaited::Awaited;
use super::look::Look;
use super::{Finding, Rank, Sink, TestOutcome, trim_start};
use crate::api::shared::ErrorType;

/// Lines between a header and its place: a type checker's excerpt is two, a failed assertion's
/// difference can be long.
const MAX_LINES_TO_PLACE: u16 = 200;

/// Lines of `deno test`'s ERRORS section without a test named, past which it has ended unseen.
const MAX_ERRORS_LINES: u16 = 1000;

#[derive(Default)]
pub(crate) struct Deno {
    header: Awaited<Header, MAX_LINES_TO_PLACE>,
    /// Inside `deno test`'s ` ERRORS ` section (each error follows its test's name): the lines
    /// read since the last test named. A log cut inside it ends it after [`MAX_ERRORS_LINES`].
    in_errors: Option<u16>,
    /// The test whose error comes next (`name => ./file.ts:4:6`).
    test: Option<String>,
}

struct Header {
    message: String,
    error_type: ErrorType,
    rank: Rank,
    /// A lint rule's finding, placed by its `-->` line; otherwise by an `at` frame.
    arrow: bool,
    test: Option<String>,
    /// The message is the next line's (`deno lint`'s parser error).
    message_due: bool,
}

impl Deno {
    /// Whether [`Deno::line`] can do anything with the line: after a header or inside `deno
    /// test`'s errors, every line; otherwise a header, told by its first byte, or the section's
    /// title (` ERRORS `, the only line that starts and ends with a space and says so).
    #[inline]
    pub fn wants(&self, look: &Look<'_>) -> bool {
        if self.header.is_waiting() || self.in_errors.is_some() {
            return true;
        }
        let line = look.line;
        match look.first {
            Some(b'T') => line.starts_with("TS") && line.as_bytes().get(2).is_some_and(u8::is_ascii_digit),
            Some(b'e') => line.starts_with("error"),
            Some(b'E') => line.starts_with(LINT_FAILED),
            Some(b'f') => line.starts_with("file:///") && look.last == b')',
            Some(b' ') => look.last == b' ' && line.trim() == "ERRORS",
            _ => false,
        }
    }

    pub fn line(&mut self, line: &str, sink: &mut Sink<'_>) {
        if line.trim() == "ERRORS" {
            self.in_errors = Some(0);
            return;
        }
        let ended = |read: u16| {
            read >= MAX_ERRORS_LINES
                || line.trim() == "FAILURES"
                || line.starts_with("FAILED |")
                || line.starts_with("ok |")
        };
        if let Some(read) = self.in_errors.as_mut() {
            *read += 1;
        }
        if self.in_errors.is_some_and(ended) {
            self.in_errors = None;
            self.test = None;
            self.header.clear();
            return;
        }
        if let Some(header) = self.header(line) {
            self.header.start(header);
            return;
        }
        if let Some(header) = self.header.get_mut() {
            if header.message_due
                && let Some((name, _)) = super::js::js_error(line.trim())
            {
                // `deno lint`'s parser error, under the file it names.
                header.message = line.trim().to_owned();
                header.message_due = name != "SyntaxError";
                self.header.missed();
                return;
            }
            if let Some((file, n)) = place(line, header.arrow).filter(|(file, _)| sink.is_project_file(file))
                && let Some(header) = self.header.take()
            {
                if let Some(test) = header.test.as_deref() {
                    sink.test(test, TestOutcome::Failed);
                }
                sink.report(Finding {
                    file,
                    line: n,
                    error_type: header.error_type,
                    message: Cow::Owned(header.message),
                    test: header.test.as_deref(),
                    confidence: 0.9,
                    rank: header.rank,
                    diagnostic: true,
                });
            } else {
                self.header.missed();
            }
            return;
        }
        if let Some(read) = self.in_errors.as_mut() {
            if let Some((name, _)) = line.rsplit_once(" => ./") {
                self.test = Some(name.trim().to_owned());
                *read = 0;
            }
            return;
        }
        if let Some((file, n, message, rule)) = compact(line) {
            sink.report(Finding {
                file,
                line: n,
                error_type: ErrorType::Linting,
                message: Cow::Owned(format!("{rule}: {message}")),
                test: None,
                confidence: 0.9,
                rank: Rank::Warning,
                diagnostic: true,
            });
        }
    }

    /// A header: a type checker's (`TS2552 [ERROR]: msg`, `error: TS2552 ...` before Deno 2), an
    /// error thrown (`error: TypeError: msg`, `error: Uncaught (in promise) TypeError: msg`), a
    /// lint rule's (`error[rule]: msg`), or a file the linter could not parse.
    fn header(&mut self, line: &str) -> Option<Header> {
        let header = |message: &str, (error_type, rank), arrow, test| Header {
            message: message.to_owned(),
            error_type,
            rank,
            arrow,
            test,
            message_due: false,
        };
        if line.starts_with(LINT_FAILED) {
            // `Error linting: /w/src/index.ts`, the parser's error indented below it: placed by
            // its frame, as `deno check`'s.
            let mut lint_failed = header("SyntaxError", (ErrorType::Syntax, Rank::Error), false, None);
            lint_failed.message_due = true;
            return Some(lint_failed);
        }
        if let Some(rest) = line.strip_prefix("error[") {
            let (rule, message) = rest.split_once("]: ")?;
            // A rule is named in lower case (`prefer-const`); rustc's codes (`E0308`) are not.
            if !rule
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
            {
                return None;
            }
            return Some(header(
                &format!("{rule}: {message}"),
                (ErrorType::Linting, Rank::Warning),
                true,
                None,
            ));
        }
        let rest = line.strip_prefix("error: ").unwrap_or(line);
        if let Some((code, message)) = ts_header(rest) {
            return Some(header(
                &format!("{code}: {message}"),
                super::js::ts_type(code, "error"),
                false,
                None,
            ));
        }
        let thrown = line.strip_prefix("error: ")?;
        let thrown = thrown.strip_prefix("Uncaught ").unwrap_or(thrown);
        let thrown = thrown.strip_prefix("(in promise) ").unwrap_or(thrown);
        let (name, _) = super::js::js_error(thrown)?;
        if !name.ends_with("Error") {
            return None;
        }
        let error_type = super::js::js_type(thrown);
        Some(header(
            thrown,
            (error_type, Rank::of(error_type)),
            false,
            self.test.take(),
        ))
    }
}

/// How `deno lint` begins a file it could not parse.
const LINT_FAILED: &str = "Error linting: ";

/// `TS2552 [ERROR]: message`: the code and the message.
fn ts_header(text: &str) -> Option<(&str, &str)> {
    let (code, rest) = text.split_once(' ')?;
    Some((code, rest.strip_prefix("[ERROR]: ")?)).filter(|_| super::js::is_ts_code(code))
}

/// The place under a header: a frame (`at file:///w/a.ts:11:3`, `at fn (file:///w/a.ts:8:3)`)
/// or, for a lint rule's finding, its arrow (`--> /w/a.ts:14:7`).
fn place(line: &str, arrow: bool) -> Option<(&str, u32)> {
    if arrow {
        // A Python file's is ty's, which prints its rules' findings as deno lint does.
        let rest = trim_start(line).strip_prefix("--> ")?;
        let (file, n, _) = super::split_location(rest)?;
        let file = file.strip_prefix("file://").unwrap_or(file);
        return super::js::is_js_path(file).then_some((file, n));
    }
    let (file, n) = super::js::node_frame(line)?;
    // A module deno fetched (`https://jsr.io/@std/assert/...`, `npm:`) or its own runtime's
    // (`ext:deno_fetch/...`) is no project file, whatever the listing says of a relative path.
    if file.contains("://") || ["ext:", "jsr:", "npm:", "node:"].iter().any(|s| file.starts_with(s)) {
        return None;
    }
    Some((file, n.parse().ok()?))
}

/// `--compact`: `file:///w/a.ts: line 14, col 7 - message (rule)`.
fn compact(line: &str) -> Option<(&str, u32, &str, &str)> {
    let rest = line.strip_prefix("file://")?;
    let (file, rest) = rest.split_once(": line ")?;
    let (n, rest) = rest.split_once(", col ")?;
    let (_, rest) = rest.split_once(" - ")?;
    let (message, rule) = rest.strip_suffix(')')?.rsplit_once(" (")?;
    Some((file, n.parse().ok()?, message, rule))
}

#[cfg(test)]
mod tests {
    use crate::parse::{Workspace, parse};

    fn places(log: &str, project: &str) -> Vec<(String, u32, String)> {
        let workspace = Workspace::new(format!("/work/heldout15/projects/{project}"))
            .with_files(["src/index.ts", "src/dedent_test.ts"].map(str::to_owned).to_vec());
        crate::parse::report_types(&parse(log, &workspace))
    }

    /// deno 2.9.6 `deno check`: two TypeScript errors, the first with related information (its own
    /// `at` line) under it. Captured by running it (the fourteenth outsider trial's; its download
    /// lines cut).
    #[test]
    fn deno_check() {
        let log = "\u{1b}[0m\u{1b}[32mCheck\u{1b}[0m src/index.ts
\u{1b}[0m\u{1b}[1mTS2552 \u{1b}[0m[ERROR]: Cannot find name 'patern'. Did you mean 'pattern'?
    strings = strings.map((str) => str.replace(patern, '\\n'));
\u{1b}[0m\u{1b}[31m                                               ~~~~~~\u{1b}[0m
    at \u{1b}[0m\u{1b}[36mfile:///work/heldout15/projects/dedent/src/index.ts\u{1b}[0m:\u{1b}[0m\u{1b}[33m28\u{1b}[0m:\u{1b}[0m\u{1b}[33m48\u{1b}[0m

    'pattern' is declared here.
        const pattern = new RegExp(`\\n[\\t ]{${Math.min(...indentLengths)}}`, 'g');
    \u{1b}[0m\u{1b}[36m          ~~~~~~~\u{1b}[0m
        at \u{1b}[0m\u{1b}[36mfile:///work/heldout15/projects/dedent/src/index.ts\u{1b}[0m:\u{1b}[0m\u{1b}[33m26\u{1b}[0m:\u{1b}[0m\u{1b}[33m11\u{1b}[0m

\u{1b}[0m\u{1b}[1mTS2322 \u{1b}[0m[ERROR]: Type 'string' is not assignable to type 'number'.
    const endentation: number = endentations ? endentations[1] : ''
\u{1b}[0m\u{1b}[31m          ~~~~~~~~~~~\u{1b}[0m
    at \u{1b}[0m\u{1b}[36mfile:///work/heldout15/projects/dedent/src/index.ts\u{1b}[0m:\u{1b}[0m\u{1b}[33m40\u{1b}[0m:\u{1b}[0m\u{1b}[33m11\u{1b}[0m

Found 2 errors.

\u{1b}[0m\u{1b}[1m\u{1b}[31merror\u{1b}[0m: Type checking failed.

Stack backtrace:
   0: <unknown>
";
        assert_eq!(
            places(log, "dedent"),
            [
                ("src/index.ts".to_owned(), 28, "Import".to_owned()),
                ("src/index.ts".to_owned(), 40, "TypeError".to_owned())
            ]
        );
    }

    /// `deno check` on a module that does not parse. Captured by running it (the fourteenth
    /// outsider trial's; its download lines cut).
    #[test]
    fn syntax_deno_check() {
        let log = "\u{1b}[0m\u{1b}[1m\u{1b}[31merror\u{1b}[0m: SyntaxError: Expression expected
   |
11 |   ;
   |   ~
    at file:///work/heldout15/projects/dedent_syntax/src/index.ts:11:3

Stack backtrace:
   0: <unknown>
";
        assert_eq!(
            places(log, "dedent_syntax"),
            [("src/index.ts".to_owned(), 11, "Syntax".to_owned())]
        );
    }

    /// `deno test`, coloured: the failed assertion at its frame in the test. Captured by running it
    /// (the fourteenth outsider trial's; its download lines cut).
    #[test]
    fn deno_test() {
        let log = "\u{1b}[0m\u{1b}[38;5;245mrunning 2 tests from ./src/dedent_test.ts\u{1b}[0m
removes the leading newline ... \u{1b}[0m\u{1b}[31mFAILED\u{1b}[0m \u{1b}[0m\u{1b}[38;5;245m(3ms)\u{1b}[0m
interpolates values ... \u{1b}[0m\u{1b}[32mok\u{1b}[0m \u{1b}[0m\u{1b}[38;5;245m(245µs)\u{1b}[0m

\u{1b}[0m\u{1b}[1m\u{1b}[37m\u{1b}[41m ERRORS \u{1b}[0m

removes the leading newline \u{1b}[0m\u{1b}[38;5;245m=> ./src/dedent_test.ts:4:6\u{1b}[0m
\u{1b}[0m\u{1b}[1m\u{1b}[31merror\u{1b}[0m: AssertionError: Expected values to be strictly equal:
+ actual - expected

+ '\\nLine #1\\nLine #2'
- 'Line #1\\nLine #2'

  assert.strictEqual(out, \"Line #1\\nLine #2\");
\u{1b}[0m\u{1b}[31m         ^\u{1b}[0m
    at \u{1b}[0m\u{1b}[2m\u{1b}[38;5;245mfile:///work/heldout15/projects/dedent_logic/\u{1b}[0m\u{1b}[0m\u{1b}[36msrc/dedent_test.ts\u{1b}[0m:\u{1b}[0m\u{1b}[33m8\u{1b}[0m:\u{1b}[0m\u{1b}[33m10\u{1b}[0m

\u{1b}[0m\u{1b}[1m\u{1b}[37m\u{1b}[41m FAILURES \u{1b}[0m

removes the leading newline \u{1b}[0m\u{1b}[38;5;245m=> ./src/dedent_test.ts:4:6\u{1b}[0m

\u{1b}[0m\u{1b}[31mFAILED\u{1b}[0m | 1 passed | 1 failed \u{1b}[0m\u{1b}[38;5;245m(8ms)\u{1b}[0m

\u{1b}[0m\u{1b}[1m\u{1b}[31merror\u{1b}[0m: Test failed

Stack backtrace:
   0: <unknown>
";
        assert_eq!(
            places(log, "dedent_logic"),
            [("src/dedent_test.ts".to_owned(), 8, "Logic".to_owned())]
        );
    }

    /// `NO_COLOR=1 deno test`. Captured by running it (the fourteenth outsider trial's; its
    /// download lines cut).
    #[test]
    fn deno_test_nocolor() {
        let log = "running 2 tests from ./src/dedent_test.ts
removes the leading newline ... FAILED (1ms)
interpolates values ... ok (247µs)

 ERRORS 

removes the leading newline => ./src/dedent_test.ts:4:6
error: AssertionError: Expected values to be strictly equal:
+ actual - expected

+ '\\nLine #1\\nLine #2'
- 'Line #1\\nLine #2'

  assert.strictEqual(out, \"Line #1\\nLine #2\");
         ^
    at file:///work/heldout15/projects/dedent_logic/src/dedent_test.ts:8:10

 FAILURES 

removes the leading newline => ./src/dedent_test.ts:4:6

FAILED | 1 passed | 1 failed (8ms)

error: Test failed

Stack backtrace:
   0: <unknown>
";
        assert_eq!(
            places(log, "dedent_logic"),
            [("src/dedent_test.ts".to_owned(), 8, "Logic".to_owned())]
        );
        // Named by the test its error follows in the ERRORS section.
        let parsed = parse(log, &Workspace::new("/work/heldout15/projects/dedent_logic"));
        assert_eq!(
            parsed.reports[0].test_name.as_deref(),
            Some("removes the leading newline")
        );
    }

    /// `deno lint`: a rule's finding, placed by its arrow. Captured by running it (the fourteenth
    /// outsider trial's; its download lines cut).
    #[test]
    fn deno_lint() {
        let log = "\u{1b}[0m\u{1b}[1m\u{1b}[31merror[prefer-const]\u{1b}[0m: \u{1b}[0m\u{1b}[1m`indentLengths` is never reassigned\u{1b}[0m
  \u{1b}[0m\u{1b}[38;5;12m-->\u{1b}[0m \u{1b}[0m\u{1b}[36m/work/heldout15/projects/dedent_logic/src/index.ts\u{1b}[0m\u{1b}[0m\u{1b}[33m:14:7\u{1b}[0m
  \u{1b}[0m\u{1b}[38;5;12m | \u{1b}[0m
\u{1b}[0m\u{1b}[38;5;12m14 | \u{1b}[0m  let indentLengths = strings.reduce((arr, str) => {
  \u{1b}[0m\u{1b}[38;5;12m | \u{1b}[0m      \u{1b}[0m\u{1b}[1m\u{1b}[31m^^^^^^^^^^^^^\u{1b}[0m
   \u{1b}[0m\u{1b}[38;5;12m=\u{1b}[0m \u{1b}[0m\u{1b}[1mhint\u{1b}[0m: Use `const` instead

  \u{1b}[0m\u{1b}[38;5;12mdocs\u{1b}[0m: https://docs.deno.com/lint/rules/prefer-const


Found 1 problem
Checked 4 files
";
        assert_eq!(
            places(log, "dedent_logic"),
            [("src/index.ts".to_owned(), 14, "Linting".to_owned())]
        );
    }

    /// `deno lint --compact`. Captured by running it (the fourteenth outsider trial's; its download
    /// lines cut).
    #[test]
    fn deno_lint_compact() {
        let log = "file:///work/heldout15/projects/dedent_logic/src/index.ts: line 14, col 7 - `indentLengths` is never reassigned (prefer-const)
Found 1 problem
Checked 4 files
";
        assert_eq!(
            places(log, "dedent_logic"),
            [("src/index.ts".to_owned(), 14, "Linting".to_owned())]
        );
    }

    /// `deno lint` on a module that does not parse. Captured by running it (the fourteenth outsider
    /// trial's; its download lines cut).
    #[test]
    fn syntax_deno_lint() {
        let log = "Error linting: /work/heldout15/projects/dedent_syntax/src/index.ts
    SyntaxError: Expression expected
       |
    11 |   ;
       |   ~
        at file:///work/heldout15/projects/dedent_syntax/src/index.ts:11:3
Checked 1 file
";
        assert_eq!(
            places(log, "dedent_syntax"),
            [("src/index.ts".to_owned(), 11, "Syntax".to_owned())]
        );
    }
    /// A log cut inside `deno test`'s ERRORS section: the section ends after
    /// [`super::MAX_ERRORS_LINES`] lines without a test named, and a later ` => ./` line names
    /// no error.
    #[test]
    fn a_cut_errors_section_ends() {
        let filler = "other tool's output\n".repeat(usize::from(super::MAX_ERRORS_LINES) + 1);
        let log =
            format!(" ERRORS \n\n{filler}see a => ./a.ts:1:1\nerror: TypeError: boom\n    at file:///w/a.ts:3:1\n");
        let parsed = parse(&log, &Workspace::new("/w").with_files(vec!["a.ts".to_owned()]));
        assert_eq!(
            crate::parse::report_tests(&parsed),
            [("a.ts", 3, "TypeError: boom", None)]
        );
    }
    /// From a review: `deno test` with `@std/assert`, whose frame (fetched from jsr.io) comes
    /// first; a fetched module or deno's runtime (`ext:`) is no project file.
    #[test]
    fn a_fetched_module_s_frame_is_not_the_place() {
        let log = " ERRORS 

adds => ./main_test.ts:3:6
error: AssertionError: Values are not equal.
    [Diff] Actual / Expected
-   3
+   4
  throw new AssertionError(message);
        ^
    at assertEquals (https://jsr.io/@std/assert/1.0.8/equals.ts:51:9)
    at file:///w/main.ts:1:3

 FAILURES 

adds => ./main_test.ts:3:6

FAILED | 0 passed | 1 failed (3ms)
";
        let parsed = parse(log, &Workspace::new("/w").with_files(vec!["main.ts".to_owned()]));
        assert_eq!(crate::parse::report_places(&parsed), [("main.ts", 1, Some("adds"))]);
    }
}
