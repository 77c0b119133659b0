//! stylelint, the CSS linter of most Node projects: its default `string` formatter, a file's path
//! alone on its line and a row for each finding under it —
//!
//! ```text
//! normalize.css
//!    24:3   ✖  Unknown property "margn"   property-no-unknown
//!    23:1   ✖  Unclosed block             CssSyntaxError
//! ```
//!
//! (`✖` an error, `⚠` a warning; `×` and `‼` on a terminal without them) — and its `unix`
//! formatter,
//! `/abs/normalize.css:24:3: Unknown property "margn" (property-no-unknown) [error]`. A rule's
//! finding is LINTING; `CssSyntaxError`, a stylesheet that does not parse, SYNTAX.

use std::borrow::Cow;

use super::look::Look;
use super::{Finding, Rank, Sink, split_location};
use crate::api::shared::ErrorType;

/// The files stylelint reads: stylesheets, and the components whose styles it reads through
/// postcss-html.
const STYLE_EXTENSIONS: [&str; 9] = [
    ".css", ".scss", ".sass", ".less", ".pcss", ".vue", ".html", ".svelte", ".astro",
];

#[derive(Default)]
pub(crate) struct Stylelint {
    /// The stylesheet whose rows follow (the `string` formatter).
    file: Option<String>,
}

impl Stylelint {
    /// Whether [`Stylelint::line`] can do anything with the line: under a stylesheet's path,
    /// every line up to the first that is not a row; otherwise one that ends as a stylesheet's
    /// path or a `unix` finding does (its last byte rules out most lines).
    #[inline]
    pub fn wants(&self, look: &Look<'_>) -> bool {
        self.file.is_some()
            || match look.last {
                b's' | b'e' | b'l' | b'o' => ends_as_stylesheet(look.line),
                b']' => unix_body(look.line).is_some(),
                _ => false,
            }
    }

    pub fn line(&mut self, line: &str, sink: &mut Sink<'_>) {
        if let Some(file) = self.file.as_deref() {
            if let Some((n, message, rule)) = row(line) {
                report(sink, file, n, message, rule);
                return;
            }
            if !line.trim().is_empty() {
                self.file = None;
            }
        }
        if is_stylesheet(line) {
            self.file = Some(line.to_owned());
            return;
        }
        if let Some((file, n, message, rule)) = unix_finding(line) {
            report(sink, file, n, message, rule);
        }
    }
}

/// A finding: LINTING, ranked with the warnings, or SYNTAX for a stylesheet that does not parse.
fn report(sink: &mut Sink<'_>, file: &str, line: u32, message: &str, rule: &str) {
    let error_type = if rule == "CssSyntaxError" {
        ErrorType::Syntax
    } else {
        ErrorType::Linting
    };
    sink.report(Finding {
        file,
        line,
        error_type,
        message: Cow::Owned(format!("{message} ({rule})")),
        test: None,
        confidence: 0.9,
        rank: Rank::of(error_type),
        diagnostic: true,
    });
}

/// A stylesheet's path, nothing else on the line.
fn is_stylesheet(text: &str) -> bool {
    ends_as_stylesheet(text) && !text.contains(char::is_whitespace)
}

/// Whether `text` ends with a stylesheet's extension.
fn ends_as_stylesheet(text: &str) -> bool {
    STYLE_EXTENSIONS.iter().any(|e| text.ends_with(e))
}

/// A `unix` line without its severity, when it ends with one.
fn unix_body(line: &str) -> Option<&str> {
    line.strip_suffix(" [error]")
        .or_else(|| line.strip_suffix(" [warning]"))
}

/// A `string` formatter's row, `   24:3   ✖  Unknown property "margn"   property-no-unknown` (`⚠`
/// for a warning): the line, the message and the rule.
fn row(line: &str) -> Option<(u32, &str, &str)> {
    let rest = line.strip_prefix(' ')?.trim_start();
    let (place, rest) = rest.split_once(' ')?;
    let (n, column) = place.split_once(':')?;
    if !column.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let rest = rest.trim_start();
    // `×` and `‼` where the terminal cannot show `✖` and `⚠`.
    let rest = ['✖', '⚠', '×', '‼'].iter().find_map(|mark| rest.strip_prefix(*mark))?;
    let (message, rule) = rest.trim().rsplit_once("  ")?;
    Some((n.parse().ok()?, message.trim(), rule.trim()))
}

/// A `unix` formatter's line, `/abs/a.css:24:3: message (rule) [error]` (or `[warning]`): the
/// file, the line, the message and the rule.
fn unix_finding(line: &str) -> Option<(&str, u32, &str, &str)> {
    let (file, n, rest) = split_location(unix_body(line)?)?;
    if !is_stylesheet(file) {
        return None;
    }
    let (message, rule) = rest.strip_suffix(')')?.rsplit_once(" (")?;
    Some((file, n, message, rule))
}

#[cfg(test)]
mod tests {
    use crate::parse::{Workspace, parse, report_findings};

    /// From a review: the marks stylelint falls back to (`×`, `‼`), and styles in a component
    /// (postcss-html).
    #[test]
    fn fallback_marks_and_components_are_read() {
        let places = |log: &str| -> Vec<(String, u32)> {
            report_findings(&parse(log, &Workspace::new("/w")))
                .into_iter()
                .map(|(file, line, ..)| (file.to_owned(), line))
                .collect()
        };
        assert_eq!(
            places(
                "
normalize.css
  24:3  ×  Unknown property \"margn\"  property-no-unknown
  30:1  ‼  Unexpected empty block  block-no-empty

× 2 problems (1 error, 1 warning)
"
            ),
            [("normalize.css".to_owned(), 24), ("normalize.css".to_owned(), 30)]
        );
        assert_eq!(
            places(
                "
src/App.vue
  24:3  ✖  Unknown property \"margn\"  property-no-unknown

/w/src/App.vue:24:3: Unknown property \"margn\" (property-no-unknown) [error]
"
            ),
            [("src/App.vue".to_owned(), 24)]
        );
    }

    /// stylelint 17's `string` and `unix` formatters on normalize.css 8 with two bugs, and a
    /// stylesheet that does not parse, coloured under Jenkins' timestamps with CRLF (the
    /// thirteenth outsider trial's logs).
    #[test]
    fn stylelint_s_findings_are_read_in_both_formatters() {
        let places = |log: &str| -> Vec<(String, u32, String)> {
            report_findings(&parse(log, &Workspace::new("/work/heldout14/projects/normalize")))
                .into_iter()
                .map(|(file, line, kind, _)| (file.to_owned(), line, kind))
                .collect()
        };
        let lint = |line: u32| ("normalize.css".to_owned(), line, "Linting".to_owned());
        assert_eq!(
            places(
                "
normalize.css
   13:3   ✖  Vendor-prefixed property \"-webkit-text-size-adjust\"  property-no-vendor-prefix
   24:3   ✖  Unknown property \"margn\"                             property-no-unknown
   41:14  ✖  Unknown value \"2emm\" for property \"font-size\"        declaration-property-value-no-unknown
   65:27  ✖  Duplicate font-family name \"monospace\"               font-family-no-duplicate-names
"
            ),
            [lint(13), lint(24), lint(41), lint(65)]
        );
        assert_eq!(places("/work/heldout14/projects/normalize/normalize.css:13:3: Vendor-prefixed property \"-webkit-text-size-adjust\" (property-no-vendor-prefix) [error]
/work/heldout14/projects/normalize/normalize.css:24:3: Unknown property \"margn\" (property-no-unknown) [error]
/work/heldout14/projects/normalize/normalize.css:41:14: Unknown value \"2emm\" for property \"font-size\" (declaration-property-value-no-unknown) [error]
"), [lint(13), lint(24), lint(41)]);
        assert_eq!(places("[2026-11-26T10:00:00.160Z] [Pipeline] sh\r
[2026-11-26T10:00:00.197Z] + npx stylelint normalize.css\r
[2026-11-26T10:00:00.234Z] \r
[2026-11-26T10:00:00.271Z] normalize.css\r
[2026-11-26T10:00:00.308Z]   \u{1b}[2m23:1\u{1b}[22m  \u{1b}[31m\u{1b}[31m✖\u{1b}[39m  Unclosed block  \u{1b}[2mCssSyntaxError\u{1b}[22m\r
[2026-11-26T10:00:00.345Z] \r
[2026-11-26T10:00:00.382Z] \u{1b}[31m✖\u{1b}[39m 1 problem (\u{1b}[31m1 error\u{1b}[39m, \u{1b}[33m0 warnings\u{1b}[39m)\r
[2026-11-26T10:00:00.419Z] \r
[2026-11-26T10:00:00.456Z] script returned exit code 2\r
"), [("normalize.css".to_owned(), 23, "Syntax".to_owned())]);
    }
}
