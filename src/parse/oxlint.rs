//! oxlint's default reporter, miette's graphical one: the diagnostic's severity (`x` an error,
//! `!` a warning; `×` and `⚠` in miette's Unicode theme, whose frame opens with `╭─[`), its rule
//! as `plugin(rule)` and its message on one line, then the place on the next, opening the code
//! frame —
//!
//! ```text
//!   ! eslint(no-unused-vars): Variable 'strictOps' is declared but never used.
//!    ,-[functions/cmp.js:7:7]
//!  6 | const lte = require('./lte')
//! ```
//!
//! A rule's finding is LINTING (IMPORT for a name or module that does not resolve, as
//! [`super::rust::is_unresolved_rule`] says); an error with no rule is the parser's, SYNTAX.
//! oxlint's `-f unix` lines are eslint's `unix` format, read with it.

use std::borrow::Cow;

use super::look::Look;
use super::{Finding, Rank, Sink, split_location};
use crate::api::shared::ErrorType;

/// Lines between a diagnostic's header and its place (oxlint prints it on the next).
const MAX_LINES_TO_PLACE: u8 = 2;

#[derive(Default)]
pub(crate) struct Oxlint {
    /// A header read whose place has not come yet.
    header: Option<Header>,
}

struct Header {
    error_type: ErrorType,
    /// `eslint(no-unused-vars): message`, or the message alone.
    message: String,
    /// Lines read since the header.
    lines: u8,
}

impl Oxlint {
    /// Whether [`Oxlint::line`] can do anything with the line: after a header, the lines up to
    /// its place; otherwise an indented line that may be a header (a severity's mark after the
    /// indentation).
    #[inline]
    pub fn wants(&self, look: &Look<'_>) -> bool {
        // The mark stands at the third byte: one look at it rules out most lines.
        self.header.is_some()
            || matches!(look.line.as_bytes().get(2), Some(b'x' | b'!' | 0xc3 | 0xe2)) && look.line.starts_with("  ")
    }

    pub fn line(&mut self, line: &str, sink: &mut Sink<'_>) {
        if let Some(header) = header(line) {
            self.header = Some(header);
            return;
        }
        let Some(header) = self.header.as_mut() else {
            return;
        };
        header.lines += 1;
        // `   ,-[functions/cmp.js:7:7]` (`╭─[` in miette's Unicode theme); a place without a file
        // (`,-[1:1]`, a bundler's module-not-found) is none.
        let frame = line.trim_start_matches(' ');
        let place = frame
            .strip_prefix(",-[")
            .or_else(|| frame.strip_prefix("╭─["))
            .and_then(|rest| rest.strip_suffix(']'))
            .and_then(split_location)
            .filter(|(file, ..)| file.contains(['.', '/']));
        if let Some((file, n, _)) = place {
            let header = self.header.take().expect("a header");
            sink.report(Finding {
                file,
                line: n,
                error_type: header.error_type,
                message: Cow::Owned(header.message),
                test: None,
                confidence: 0.9,
                rank: Rank::of(header.error_type),
                diagnostic: true,
            });
        } else if header.lines >= MAX_LINES_TO_PLACE {
            self.header = None;
        }
    }
}

/// `  ! eslint(no-unused-vars): message` (`x`, or `×`, for an error): the header's message and
/// its bug type.
fn header(line: &str) -> Option<Header> {
    let body = line.strip_prefix("  ")?;
    let (error, rest) = if let Some(rest) = body.strip_prefix("x ").or_else(|| body.strip_prefix("× ")) {
        (true, rest)
    } else {
        (false, body.strip_prefix("! ").or_else(|| body.strip_prefix("⚠ "))?)
    };
    let rule = rest
        .split_once("): ")
        .and_then(|(rule, _)| rule.split_once('('))
        .filter(|(plugin, rule)| is_rule_name(plugin) && is_rule_name(rule));
    let error_type = match rule {
        Some((plugin, rule)) if super::rust::is_unresolved_rule(&oxlint_rule(plugin, rule)) => ErrorType::Import,
        Some(_) => ErrorType::Linting,
        None if error => ErrorType::Syntax,
        None => return None,
    };
    Some(Header {
        error_type,
        message: rest.to_owned(),
        lines: 0,
    })
}

/// oxlint's `plugin(rule)` as eslint names the rule: `no-undef` for eslint's own, `import/...`
/// for a plugin's.
pub(crate) fn oxlint_rule(plugin: &str, rule: &str) -> String {
    if plugin == "eslint" {
        rule.to_owned()
    } else {
        format!("{plugin}/{rule}")
    }
}

/// A plugin's or a rule's name: lower-case words, digits, `-`, `_`, `/` and `@`.
fn is_rule_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || matches!(b, b'-' | b'_' | b'/' | b'@'))
}

#[cfg(test)]
mod tests {
    use crate::parse::{Workspace, parse, report_findings};

    /// From a review: miette's Unicode theme (`×`, `╭─[`), and a bundler's frame with no file
    /// (`,-[1:1]`), which places nothing.
    #[test]
    fn the_unicode_theme_is_read_and_a_place_without_a_file_is_none() {
        let places = |log: &str| -> Vec<(String, u32)> {
            report_findings(&parse(log, &Workspace::new("/w")))
                .into_iter()
                .map(|(file, line, ..)| (file.to_owned(), line))
                .collect()
        };
        assert_eq!(
            places(
                "
  × eslint(no-undef): 'compre' is not defined.
   ╭─[functions/neq.js:2:30]
 1 │ const compare = require('./compare')
 2 │ const neq = (a, b, loose) => compre(a, b, loose) !== 0
   ·                              ──────
   ╰────

  ⚠ eslint(no-unused-vars): Variable 'compare' is declared but never used.
   ╭─[functions/neq.js:1:7]
 1 │ const compare = require('./compare')
   ╰────
"
            ),
            [("functions/neq.js".to_owned(), 2), ("functions/neq.js".to_owned(), 1)]
        );
        assert_eq!(
            places(
                "ERROR in ./functions/neq.js
  x Module not found: Can't resolve './compre' in '/work/heldout14/projects/semver/functions'
   ,-[1:1]
 1 | const compare = require('./compre')
   : ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
   `----
"
            ),
            []
        );
    }

    /// oxlint 1.94's real output, in its default reporter and `-f unix`: a parser error (SYNTAX),
    /// `no-undef` (IMPORT), and `no-unused-vars` warnings on semver 7.6.3 (LINTING).
    #[test]
    fn oxlint_s_diagnostics_are_placed_and_typed_in_both_reporters() {
        let types = |log: &str| -> Vec<(String, u32, String)> {
            report_findings(&parse(log, &Workspace::new("/w")))
                .into_iter()
                .map(|(file, line, kind, _)| (file.to_owned(), line, kind))
                .collect()
        };
        let syntax = [("src/b.js".to_owned(), 2, "Syntax".to_owned())];
        let undefined = [("src/a.js".to_owned(), 2, "Import".to_owned())];
        assert_eq!(
            types(
                "
  x Expected `,` or `)` but found `]`
   ,-[src/b.js:2:16]
 1 | export function f(x) {
 2 |   return [x, (x];
   :              | |
   :              | `-- `,` or `)` expected
   :              `-- Opened here
 3 | }
   `----

Found 0 warnings and 1 error.
Finished in 14ms on 2 files with 96 rules using 2 threads.
"
            ),
            syntax
        );
        assert_eq!(
            types(
                "src/b.js:2:16: Expected `,` or `)` but found `]` [Error]

1 problem
"
            ),
            syntax
        );
        assert_eq!(types("
  x eslint(no-undef): 'taxRate' is not defined.
   ,-[src/a.js:2:25]
 1 | export function total(items) {
 2 |   return items.length * taxRate;
   :                         ^^^^^^^
 3 | }
   `----
  help: Either define 'taxRate' or remove the reference to it. If 'taxRate' is a global variable, add it to the 'globals' configuration.

Found 0 warnings and 1 error.
Finished in 4ms on 1 file with 97 rules using 2 threads.
"), undefined);
        assert_eq!(
            types(
                "src/a.js:2:25: 'taxRate' is not defined. [Error/eslint(no-undef)]

1 problem
"
            ),
            undefined
        );
        assert_eq!(
            types(
                "
  ! eslint(no-unused-vars): Catch parameter 'er' is caught but never used.
   ,-[functions/satisfies.js:5:12]
 4 |     range = new Range(range, options)
 5 |   } catch (er) {
   :            ^|
   :             `-- 'er' is declared here
 6 |     return false
   `----
  help: Consider handling this error.

  ! eslint(no-unused-vars): Variable 'compare' is declared but never used. Unused variables should start with a '_'.
   ,-[functions/neq.js:1:7]
 1 | const compare = require('./compare')
   :       ^^^|^^^
   :          `-- 'compare' is declared here
 2 | const neq = (a, b, loose) => compre(a, b, loose) !== 0
   `----
  help: Consider removing this declaration.

"
            ),
            [
                ("functions/satisfies.js".to_owned(), 5, "Linting".to_owned()),
                ("functions/neq.js".to_owned(), 1, "Linting".to_owned()),
            ]
        );
    }
}
