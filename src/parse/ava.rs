//! ava's default reporter: the run's list (`  ✘ [fail]: parses hours`), then, after a rule
//! (`  ─`), each failure under its title —
//!
//! ```text
//!   parses hours
//!
//!   test.js:9
//!
//!    9:   t.is(ms('2h'), 7200000);
//!
//!   Difference (- actual, + expected):
//!
//!   - 3600002
//!   + 7200000
//!
//!   › test.js:9:5
//! ```
//!
//! — an assertion at its `›` place (LOGIC), or `Error thrown in test:` and the error's stack,
//! reported where the stack enters the project; and a file that failed to load (`Uncaught
//! exception in test.js`, Node's `path:line` header, the error). ava's `--tap` output is TAP's
//! ([`super::tap`]).

use std::borrow::Cow;

use super::js::{js_error, js_type, node_frame};
use super::look::Look;
use super::{Finding, Rank, Sink, TestOutcome, split_location, trim_start, truncate};
use crate::api::shared::ErrorType;

/// Failed tests' titles kept from the run's list.
const MAX_TITLES: usize = 1000;
/// Lines an assertion's difference is kept to in the message.
const MAX_DIFFERENCE_LINES: usize = 4;

#[derive(Default)]
pub(crate) struct Ava {
    /// The titles of the tests the run's list said failed.
    failed: Vec<String>,
    /// The rule after the list was read: failures are detailed under their titles.
    in_details: bool,
    failure: Option<Failure>,
    /// `Uncaught exception in FILE` was read: the place and the error follow.
    uncaught: Option<Option<(String, u32)>>,
    /// Lines read since `Uncaught exception in`: the error comes within [`MAX_UNCAUGHT_LINES`].
    uncaught_lines: u8,
}

/// Lines from `Uncaught exception in` to its error: Node's header, the source, the caret, blanks.
const MAX_UNCAUGHT_LINES: u8 = 12;

#[derive(Default)]
struct Failure {
    test: String,
    /// The `file:line` under the title, then the `› file:line:col` after the difference.
    place: Option<(String, u32)>,
    difference: Vec<String>,
    in_difference: bool,
    thrown: bool,
    error: Option<String>,
    frame: Option<(String, u32)>,
}

impl Ava {
    /// Whether [`Ava::line`] can do anything with the line: every line once the list named a
    /// failure or a file failed to load; before that only ava's indented failure mark, rule and
    /// uncaught exception.
    #[inline]
    pub fn wants(&self, look: &Look<'_>) -> bool {
        !self.failed.is_empty()
            || self.uncaught.is_some()
            || look.indented() && matches!(look.first_after_indent(), Some(0xe2 | b'U')) && {
                let text = look.trimmed();
                text.starts_with("✘ [fail]: ") || text.starts_with('─') || text.starts_with("Uncaught exception in ")
            }
    }

    pub fn line(&mut self, line: &str, sink: &mut Sink<'_>) {
        let text = trim_start(line).trim_end();
        let indented = line.starts_with("  ");
        if let Some(title) = text.strip_prefix("✘ [fail]: ").filter(|_| indented) {
            // ava adds the error's summary after the title of a test that threw.
            let title = title.strip_suffix(" Error thrown in test").unwrap_or(title);
            sink.test(title, TestOutcome::Failed);
            if self.failed.len() < MAX_TITLES {
                self.failed.push(title.to_owned());
            }
            return;
        }
        if text == "─" && indented {
            self.flush(sink);
            self.in_details = !self.failed.is_empty();
            return;
        }
        if let Some(file) = text.strip_prefix("Uncaught exception in ").filter(|_| indented) {
            self.flush(sink);
            self.uncaught = (!file.is_empty()).then_some(None);
            self.uncaught_lines = 0;
            return;
        }
        if let Some(place) = &self.uncaught {
            let placed = place.is_some();
            self.uncaught_line(text, placed, sink);
            return;
        }
        if !self.in_details {
            return;
        }
        if indented && self.failed.iter().any(|t| t == text) {
            self.flush(sink);
            self.failure = Some(Failure {
                test: text.to_owned(),
                ..Failure::default()
            });
            return;
        }
        if !indented && !text.is_empty() {
            // ava's details are indented: anything else is another tool's, and the titles listed
            // are no longer looked for (the lines after need not be looked at).
            self.flush(sink);
            self.in_details = false;
            self.failed.clear();
            return;
        }
        let Some(failure) = self.failure.as_mut() else {
            return;
        };
        if text == "Error thrown in test:" {
            failure.thrown = true;
        } else if text == "Difference (- actual, + expected):" {
            failure.in_difference = true;
        } else if let Some(place) = text.strip_prefix("› ").and_then(split_location) {
            failure.place = Some((place.0.to_owned(), place.1));
            failure.in_difference = false;
        } else if failure.in_difference && (text.starts_with("- ") || text.starts_with("+ ")) {
            if failure.difference.len() < MAX_DIFFERENCE_LINES {
                failure.difference.push(text.to_owned());
            }
        } else if failure.thrown && failure.error.is_none() && js_error(text).is_some() {
            failure.error = Some(text.to_owned());
        } else if failure.thrown && failure.error.is_some() {
            if failure.frame.is_none()
                && let Some((file, n)) = node_frame(line)
                && sink.is_project_file(file)
            {
                failure.frame = Some((file.to_owned(), n.parse().unwrap_or(1)));
            }
        } else if failure.place.is_none()
            && !failure.thrown
            && let Some((file, n, rest)) = split_location(text)
            && rest.is_empty()
        {
            failure.place = Some((file.to_owned(), n));
        }
    }

    /// A line after `Uncaught exception in FILE`: ava's `file:line` of the test file's line that
    /// loaded the broken one, Node's `path:line` header of the broken one (the last place before
    /// the error is the error's), then the error.
    fn uncaught_line(&mut self, text: &str, placed: bool, sink: &mut Sink<'_>) {
        self.uncaught_lines += 1;
        if self.uncaught_lines > MAX_UNCAUGHT_LINES {
            self.uncaught = None;
            return;
        }
        if let Some((file, n, rest)) = split_location(text)
            && rest.is_empty()
            && sink.is_project_file(file)
        {
            self.uncaught = Some(Some((file.to_owned(), n)));
            return;
        }
        if placed && js_error(text).is_some() {
            let Some(Some((file, n))) = self.uncaught.take() else {
                return;
            };
            report(sink, &file, n, js_type(text), text, None);
        }
    }

    fn flush(&mut self, sink: &mut Sink<'_>) {
        let Some(failure) = self.failure.take() else {
            return;
        };
        let test = Some(failure.test.as_str());
        if failure.thrown {
            let (Some(error), Some((file, n))) = (&failure.error, failure.frame.as_ref().or(failure.place.as_ref()))
            else {
                return;
            };
            report(sink, file, *n, js_type(error), error, test);
        } else if let Some((file, n)) = &failure.place {
            let message = if failure.difference.is_empty() {
                format!("assertion failed: {}", failure.test)
            } else {
                format!(
                    "assertion failed (- actual, + expected): {}",
                    failure.difference.join(" ")
                )
            };
            report(sink, file, *n, ErrorType::Logic, &message, test);
        }
    }

    pub fn finish(&mut self, sink: &mut Sink<'_>) {
        self.flush(sink);
    }
}

fn report(sink: &mut Sink<'_>, file: &str, line: u32, error_type: ErrorType, message: &str, test: Option<&str>) {
    sink.report(Finding {
        file,
        line,
        error_type,
        message: Cow::Owned(truncate(message, super::MAX_MESSAGE)),
        test,
        confidence: 0.9,
        rank: Rank::Error,
        diagnostic: false,
    });
}

#[cfg(test)]
mod tests {
    use crate::parse::{Workspace, parse};

    fn reports(log: &str) -> Vec<(String, u32, String, String, Option<String>)> {
        parse(log, &Workspace::new("/w"))
            .reports
            .into_iter()
            .map(|r| {
                (
                    r.file_path,
                    r.line_number,
                    format!("{:?}", r.error_type),
                    r.message,
                    r.test_name,
                )
            })
            .collect()
    }

    #[test]
    fn ava_s_failures_are_placed_at_the_assertion_or_where_the_thrown_error_began() {
        // ava 7's default reporter (colours taken off), on ms with bugs.
        let log = "
  ✔ parses seconds
  ✘ [fail]: parses hours
  ✘ [fail]: formats short minutes Error thrown in test
  ─

  parses hours

  test.js:9

   8: test('parses hours', t => {
   9:   t.is(ms('2h'), 7200000);
   10: });

  Difference (- actual, + expected):

  - 3600002
  + 7200000

  › test.js:9:5



  formats short minutes

  Error thrown in test:

  ReferenceError {
    message: 'mn is not defined',
  }

  ReferenceError: mn is not defined
      at fmtShort (/w/index.js:122:28)
      at module.exports (/w/index.js:32:42)
      at /w/test.js:13:8
      at Test.callFn (file:///w/node_modules/ava/lib/test.js:525:26)

  ─

  2 tests failed
";
        let s = |x: &str| x.to_owned();
        assert_eq!(
            reports(log),
            [
                (
                    s("test.js"),
                    9,
                    s("Logic"),
                    s("assertion failed (- actual, + expected): - 3600002 + 7200000"),
                    Some(s("parses hours"))
                ),
                (
                    s("index.js"),
                    122,
                    s("Import"),
                    s("ReferenceError: mn is not defined"),
                    Some(s("formats short minutes"))
                ),
            ]
        );
    }

    #[test]
    fn a_file_ava_could_not_load_is_placed_by_node_s_header() {
        // ava 7 (colours taken off): the test file's line that loaded the broken file, then
        // Node's header of the broken file.
        let log = "
  Uncaught exception in test.js

  test.js:2

   1: const test = require('ava');
   2: const ms = require('./index.js');

  /w/index.js:116
      return Math.round(ms / d)) + 'd';
                               ^

  SyntaxError: Unexpected token ')'

  ─

  1 uncaught exception
";
        let got: Vec<(String, u32, String)> = reports(log).into_iter().map(|r| (r.0, r.1, r.2)).collect();
        assert_eq!(got, [("index.js".to_owned(), 116, "Syntax".to_owned())]);
    }
}
