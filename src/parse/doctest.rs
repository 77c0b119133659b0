//! Python's doctest run by itself (`python -m doctest -v mod.py`, `doctest.testmod()`): each
//! failure follows a rule of `*` and names its example's place —
//!
//! ```text
//! **********************************************************************
//! File "/abs/pkg/mod.py", line 211, in mod.ordinal
//! Failed example:
//!     ordinal(1)
//! Expected:
//!     'st'
//! Got:
//!     'th'
//! ```
//!
//! — or, when the example raised, `Exception raised:` and the traceback indented under it. A
//! wrong output is LOGIC at the example; an exception is reported where the project's code
//! raised it (its deepest project frame), typed as a Python exception is. pytest's doctests
//! (`--doctest-modules`) are read with pytest's output, in [`super::python`].

use super::look::Look;
use super::python::{DoctestOutput, exception, file_frame, python_finding};
use super::{Finding, Rank, Sink, truncate};
use crate::api::shared::ErrorType;
use std::borrow::Cow;

/// Frames kept of an example's traceback.
const MAX_FRAMES: usize = 64;

#[derive(Default)]
pub(crate) struct Doctest {
    /// The last line was doctest's rule: a failure's place may come next.
    after_rule: bool,
    example: Option<Example>,
}

struct Example {
    file: String,
    line: u32,
    /// doctest's name of the example's test (`mod.ordinal`).
    name: String,
    /// `Failed example:` was read: this is doctest's report, not a traceback at column 0.
    failed: bool,
    output: DoctestOutput,
    raised: bool,
    frames: Vec<(String, u32)>,
    exception: Option<(String, String)>,
}

impl Doctest {
    /// Whether [`Doctest::line`] can do anything with the line: inside a failure every line;
    /// otherwise a rule of `*`, and the place after it.
    #[inline]
    pub fn wants(&self, look: &Look<'_>) -> bool {
        self.example.is_some() || self.after_rule || look.first == Some(b'*')
    }

    pub fn line(&mut self, line: &str, sink: &mut Sink<'_>) {
        let after_rule = std::mem::take(&mut self.after_rule);
        if line.len() >= 20 && line.bytes().all(|b| b == b'*') {
            self.finish(sink);
            self.after_rule = true;
            return;
        }
        if after_rule {
            if let Some((file, n, Some(name))) = file_frame(line).filter(|_| line.starts_with("File \"")) {
                self.example = Some(Example {
                    file: file.to_owned(),
                    line: n.parse().unwrap_or(1),
                    name: name.to_owned(),
                    failed: false,
                    output: DoctestOutput::default(),
                    raised: false,
                    frames: Vec::new(),
                    exception: None,
                });
            }
            return;
        }
        let Some(example) = self.example.as_mut() else {
            return;
        };
        match line.trim_end() {
            "Failed example:" => example.failed = true,
            "Exception raised:" if example.failed => example.raised = true,
            _ if example.raised => {
                // The traceback, indented by four: its frames by six.
                if let Some((file, n, _)) = file_frame(line) {
                    if example.frames.len() < MAX_FRAMES {
                        example.frames.push((file.to_owned(), n.parse().unwrap_or(1)));
                    }
                } else if let Some(text) = line.strip_prefix("    ").filter(|t| !t.starts_with(' '))
                    && example.exception.is_none()
                    && let Some((kind, message)) = exception(text.trim_end(), true)
                {
                    example.exception = Some((kind.to_owned(), message.unwrap_or("").to_owned()));
                } else if !line.starts_with(' ') && !line.is_empty() {
                    self.finish(sink);
                }
            }
            _ if example.output.line(line) || line.starts_with(' ') || line.is_empty() => {}
            // The example's own lines are indented; anything else at column 0 (doctest's
            // summary, another tool) ends the failure.
            _ => self.finish(sink),
        }
    }

    /// Reports the failure being read.
    pub fn finish(&mut self, sink: &mut Sink<'_>) {
        let Some(mut example) = self.example.take().filter(|e| e.failed) else {
            return;
        };
        let test = Some(example.name.as_str());
        if let Some((kind, message)) = &example.exception {
            let (file, line) = example
                .frames
                .iter()
                .rev()
                .find(|(file, _)| sink.is_project_file(file))
                .map_or((example.file.as_str(), example.line), |(f, n)| (f.as_str(), *n));
            sink.report(python_finding(file, line, kind, message, test));
            return;
        }
        let output = example.output.take();
        let message = if output.is_empty() {
            "doctest example failed".to_owned()
        } else {
            format!("doctest example failed: {output}")
        };
        sink.report(Finding {
            file: &example.file,
            line: example.line,
            error_type: ErrorType::Logic,
            message: Cow::Owned(truncate(&message, super::MAX_MESSAGE)),
            test,
            confidence: 0.9,
            rank: Rank::Error,
            diagnostic: false,
        });
    }
}

#[cfg(test)]
mod tests {
    use crate::parse::{Workspace, parse};

    #[test]
    fn a_doctest_run_s_failures_are_placed_at_the_example_or_where_it_raised() {
        // `python -m doctest inflection/__init__.py` (Python 3.11) on inflection 0.5.1 with bugs.
        let log = "\
**********************************************************************
File \"/w/inflection/__init__.py\", line 176, in __init__.dasherize
Failed example:
    dasherize(\"puni_puni\")
Exception raised:
    Traceback (most recent call last):
      File \"/usr/lib/python3.11/doctest.py\", line 1353, in __run
        exec(compile(example.source, filename, \"single\",
      File \"<doctest __init__.dasherize[0]>\", line 1, in <module>
        dasherize(\"puni_puni\")
      File \"/w/inflection/__init__.py\", line 180, in dasherize
        return wrod.replace('_', '-')
               ^^^^
    NameError: name 'wrod' is not defined
**********************************************************************
File \"/w/inflection/__init__.py\", line 211, in __init__.ordinal
Failed example:
    ordinal(1)
Expected:
    'st'
Got:
    'th'
**********************************************************************
1 items had failures:
   2 of  40 in __init__
***Test Failed*** 2 failures.
";
        let parsed = parse(log, &Workspace::new("/w"));
        let got: Vec<(&str, u32, String, &str, Option<&str>)> = parsed
            .reports
            .iter()
            .map(|r| {
                (
                    r.file_path.as_str(),
                    r.line_number,
                    format!("{:?}", r.error_type),
                    r.message.as_str(),
                    r.test_name.as_deref(),
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                (
                    "inflection/__init__.py",
                    180,
                    "Import".to_owned(),
                    "NameError: name 'wrod' is not defined",
                    Some("__init__.dasherize")
                ),
                (
                    "inflection/__init__.py",
                    211,
                    "Logic".to_owned(),
                    "doctest example failed: expected 'st', got 'th'",
                    Some("__init__.ordinal")
                ),
            ]
        );
        // The traceback, indented, is read by the Python reader too, before doctest names its
        // example: the report merged from both is as sure as a named failure.
        assert_eq!(parsed.reports[0].confidence_score, Some(0.95));
    }
}
