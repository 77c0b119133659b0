//! One-line `path:line[:col]: message` diagnostics of the Python linters and type checker — mypy
//! (with or without columns and error ends), flake8 (default and `pylint` formats), pylint (text,
//! `parseable`, `msvs`), ruff (concise, `pylint`, `grouped`), pyright's and basedpyright's
//! indented `path:line:col - error: message`, pyflakes' `path:line:col: message` without a code —
//! and cargo's `--message-format=short`.

use std::borrow::Cow;
use std::sync::LazyLock;

use regex::Regex;

use super::look::Look;
use super::rust::{lint_finding_type, rustc_message, rustc_type, split_lint_code};
use super::{Finding, Needle, Rank, Sink, find_short, has_byte, row_place, split_location};
use crate::api::shared::ErrorType;

static MYPY: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^(error|warning|note): (.*?)(?:  \[([\w-]+)\])?$").expect("regex"));
static PYLINT: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^([A-Z][0-9]{4}): (.*?)(?: \(([\w-]+)\))?$").expect("regex"));
/// pylint `parseable` (`[C0116(missing-function-docstring), obj] msg`) and `msvs`
/// (`[C0116(missing-function-docstring)obj] msg`).
static PYLINT_BRACKETED: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^\[([A-Z][0-9]{4})\(([\w-]+)\)(?:, )?[^\]]*\] (.*)$").expect("regex"));
/// A row of ruff's `grouped` format under its file's line: `  12:5  F401 [*] msg`.
static RUFF_GROUPED_ROW: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^ +(\d+):\d+ +([A-Z]{1,4}\d{2,4}|invalid-syntax):? (?:\[\*\] )?(.*)$").expect("regex")
});

#[derive(Default)]
pub(crate) struct Lint {
    /// ruff `grouped`: the file whose rows follow (its line is the path and a colon).
    grouped_file: Option<String>,
    /// pyflakes: a message without a code that is none of its warnings, which is a syntax error
    /// if the source line and a caret under it follow.
    syntax: Option<PendingSyntax>,
}

/// A pyflakes message that may be a syntax error, and how many lines came after it.
struct PendingSyntax {
    file: String,
    line: u32,
    message: String,
    after: u8,
}

impl Lint {
    /// Whether [`Lint::line`] can do anything with the line: in ruff's `grouped` format every
    /// line may be a row or end the group; otherwise only an unindented line with a `:` may be a
    /// diagnostic or start a group.
    #[inline]
    pub fn wants(&self, look: &Look<'_>) -> bool {
        if self.grouped_file.is_some() || self.syntax.is_some() {
            return true;
        }
        if !look.indented() && look.may_hold(Needle::Pipe) && piped_path(look.line, look.colon) {
            return true;
        }
        let Some(colon) = look.colon else {
            return false;
        };
        if look.indented() {
            // pyright: an indented Python path (a drive letter's colon skipped), then the line.
            return split_location(look.trimmed())
                .is_some_and(|(path, ..)| path.ends_with(".py") || path.ends_with(".pyi"));
        }
        // A diagnostic's path, before the first colon (past a drive letter's), is a Python or
        // Rust file's and a line number follows it; a `grouped` file's line ends in a colon;
        // pylint `msvs` puts `(line)` after the path.
        let path = &look.line[..colon];
        // (`::` too: a flake8 `--format` of the user's own, `path::line::col::code::text`; not
        // a pytest node id, `path.py::test`, on most lines of a pytest log.)
        let after = look.line.as_bytes().get(colon + 1..).unwrap_or_default();
        let numbered = match after {
            [b':', b, ..] => b.is_ascii_digit(),
            [b, ..] => b.is_ascii_digit(),
            [] => false,
        };
        colon == 1
            || numbered && [".py", ".pyi", ".rs"].iter().any(|e| path.ends_with(e))
            || look.last == b':'
            || look.may_hold(Needle::PyParen)
    }

    pub fn line(&mut self, line: &str, sink: &mut Sink<'_>) {
        if self.syntax.is_some() && self.syntax_line(line, sink) {
            return;
        }
        let Some(&first) = line.as_bytes().first() else {
            return;
        };
        if first == b' ' {
            if let Some((file, n, level, message)) = pyright_diagnostic(line) {
                self.grouped_file = None;
                sink.report(pyright_finding(file, n, level, message, ""));
                return;
            }
            if let Some(file) = self.grouped_file.as_deref()
                && let Some((n, code, message)) = ruff_grouped_row(line)
            {
                let error_type = lint_finding_type(code, message);
                let message = Cow::Owned(format!("{code} {message}"));
                report(
                    sink,
                    file,
                    n.parse().unwrap_or(1),
                    error_type,
                    Rank::of(error_type),
                    message,
                );
            }
            return;
        }
        if first != b'\t' && sink.may_hold(Needle::Pipe) && piped_path(line, memchr::memchr(b':', line.as_bytes())) {
            self.grouped_file = None;
            custom_row(line, sink);
            return;
        }
        if first == b'\t' || !has_byte(line, b':') {
            return;
        }
        if let Some(path) = grouped_file_line(line) {
            self.grouped_file = Some(path.to_owned());
            return;
        }
        self.grouped_file = None;
        if let Some((file, n, rest)) = sink.may_hold(Needle::PyParen).then(|| msvs_location(line)).flatten() {
            if let Some((id, symbol, message)) = pylint_bracketed(rest) {
                let error_type = pylint_type(id, symbol, message);
                let message = Cow::Owned(format!("{id}: {message} ({symbol})"));
                report(sink, file, n, error_type, Rank::of(error_type), message);
            } else {
                custom_row(line, sink);
            }
            return;
        }
        let Some((file, n, rest)) = split_location(line) else {
            custom_row(line, sink);
            return;
        };
        if file.ends_with(".rs") {
            let level = rest.starts_with("error") || rest.starts_with("warning");
            if let Some((level, code, message)) = level.then(|| rustc_message(rest)).flatten() {
                let (error_type, rank) = rustc_type(level, code, message);
                report(sink, file, n, error_type, rank, Cow::Borrowed(rest));
            }
            return;
        }
        if !(file.ends_with(".py") || file.ends_with(".pyi")) {
            return;
        }
        // mypy `--show-error-end`: `path:line:col:end_line:end_col: error: ...`.
        let rest = skip_error_end(rest);
        // Each regex below reads a message that starts with one of a few bytes: the others are
        // not tried on it.
        let first = rest.as_bytes().first().copied().unwrap_or(0);
        let (level, code, bracket) = (
            matches!(first, b'e' | b'w' | b'n'),
            first.is_ascii_uppercase(),
            first == b'[',
        );
        if let Some((error, rule, message)) = level.then(|| super::ty::header(rest)).flatten() {
            // ty's `concise`: `error[rule] message`.
            let (error_type, rank) = super::ty::rule_type(rule, error);
            report(
                sink,
                file,
                n,
                error_type,
                rank,
                Cow::Owned(format!("{rule}: {message}")),
            );
        } else if let Some((level, message, code)) = level.then(|| mypy_message(rest)).flatten() {
            if level == "note" {
                return;
            }
            let error_type = mypy_type(code, message);
            report(sink, file, n, error_type, Rank::Error, Cow::Borrowed(rest));
        } else if let Some((id, message, symbol)) = code.then(|| pylint_message(rest)).flatten() {
            let error_type = pylint_type(id, symbol, message);
            let rank = Rank::of(error_type);
            report(sink, file, n, error_type, rank, Cow::Borrowed(rest));
        } else if let Some((id, symbol, message)) = bracket.then(|| pylint_bracketed(rest)).flatten() {
            let error_type = pylint_type(id, symbol, message);
            let message = Cow::Owned(format!("{id}: {message} ({symbol})"));
            report(sink, file, n, error_type, Rank::of(error_type), message);
        } else if let Some((code, message)) = (code || first == b'i')
            .then(|| flake8_or_ruff(rest))
            .flatten()
            .or_else(|| bracket.then(|| code_bracketed(rest)).flatten())
        {
            let error_type = lint_finding_type(code, message);
            let rank = Rank::of(error_type);
            report(sink, file, n, error_type, rank, Cow::Borrowed(rest));
        } else if code && custom_row(line, sink) {
            // A flake8 `--format` of its own that puts the code right after the place.
        } else if is_pyflakes_warning(rest) {
            // pyflakes prints no code: its warnings are known by their words. A name that
            // resolves to nothing is IMPORT, as flake8's F821 and Python's NameError are.
            let error_type = if rest.starts_with("undefined name ") {
                ErrorType::Import
            } else {
                ErrorType::Linting
            };
            report(sink, file, n, error_type, Rank::of(error_type), Cow::Borrowed(rest));
        } else if !rest.is_empty() && has_column(line, file) {
            // Anything else pyflakes prints is Python's own syntax error, shown with the source
            // line and a caret.
            self.syntax = Some(PendingSyntax {
                file: file.to_owned(),
                line: n,
                message: rest.to_owned(),
                after: 0,
            });
        }
    }

    /// A line after a pyflakes message that may be a syntax error: the source line, then the
    /// caret under it, which makes it one. Returns whether the line was taken.
    fn syntax_line(&mut self, line: &str, sink: &mut Sink<'_>) -> bool {
        let Some(pending) = self.syntax.as_mut() else {
            return false;
        };
        pending.after += 1;
        if pending.after == 1 {
            // The source line; another diagnostic instead ends the wait, whichever tool's (a log
            // cut after a message, then cargo's short diagnostics), or ruff's `grouped` file.
            // Either way the line is read as any other: what is only known to be the source
            // line once a caret follows may be a row of a linter's own layout (`[E501]
            // ./a.py:23:80 ...`, after a log cut in a message).
            if split_location(line).is_some_and(|(path, ..)| path.contains('.')) || grouped_file_line(line).is_some() {
                self.syntax = None;
            }
            return false;
        }
        let pending = self.syntax.take().expect("a pending syntax error");
        let caret = line.trim_end();
        if !caret.ends_with('^') || !caret.bytes().all(|b| b == b' ' || b == b'^') {
            return false;
        }
        let error_type = lint_finding_type("E999", &pending.message);
        report(
            sink,
            &pending.file,
            pending.line,
            error_type,
            Rank::of(error_type),
            Cow::Owned(pending.message),
        );
        true
    }
}

/// A Python linter's finding in a layout of the user's own (flake8's `--format` takes any
/// template of `%(path)s`, `%(row)d`, `%(col)d`, `%(code)s` and `%(text)s`): the path, its line
/// (and column) in any separators, and the code before the path or after the place, such as
/// `pkg/a.py::3::1::F401::msg`, `pkg/a.py:3:1:F821:msg`, `pkg/a.py(3): F401 msg`, `[F401]
/// pkg/a.py:3:1 msg` or `F401 pkg/a.py:3: msg`. Read only when no known layout read the line,
/// and only with a code, which tells a linter's row from a message that names a place. Reports it
/// and returns whether it did.
fn custom_row(line: &str, sink: &mut Sink<'_>) -> bool {
    let Some((file, n, code, message)) = coded_place(line) else {
        return false;
    };
    let error_type = lint_finding_type(code, message);
    let message = Cow::Owned(format!("{code} {message}"));
    report(sink, file, n, error_type, Rank::of(error_type), message);
    true
}

/// Whether the line's first field, up to its first `|`, is a Python file's path: a flake8
/// `--format` of the user's own that separates its fields with pipes (`path|row|col|code|text`).
/// The `|` stands before the line's first `:` (at `colon`), if any: only that far is searched.
/// (A needle `.py|` in the buffer's scan cost 5% of a long log's time: `.py` is on most lines
/// of a pytest log, and stopped the scan's prefilter there.)
fn piped_path(line: &str, colon: Option<usize>) -> bool {
    let head = &line.as_bytes()[..colon.unwrap_or(line.len())];
    memchr::memchr(b'|', head).is_some_and(|bar| {
        let path = &line[..bar];
        (path.ends_with(".py") || path.ends_with(".pyi")) && !has_byte(path, b' ')
    })
}

/// [`custom_row`]'s reading: the path, line, code and message.
fn coded_place(line: &str) -> Option<(&str, u32, &str, &str)> {
    /// What stands between a template's fields.
    fn separated(s: &str) -> (usize, &str) {
        let rest = s.trim_start_matches([':', '|', '(', ')', ',', ' ', '[', ']', '-']);
        (s.len() - rest.len(), rest)
    }
    fn number(s: &str) -> Option<(u32, &str)> {
        let digits = s.bytes().take_while(u8::is_ascii_digit).count();
        Some((s[..digits].parse().ok()?, &s[digits..]))
    }
    let bracket = line.strip_prefix('[');
    let (leading, rest) = match split_lint_code(bracket.unwrap_or(line)) {
        Some((code, after)) => {
            let after = if bracket.is_some() {
                after.strip_prefix(']')?
            } else {
                after
            };
            let (n, after) = separated(after);
            if n == 0 {
                return None;
            }
            (Some(code), after)
        }
        None => (None, line),
    };
    let end = rest.find([' ', ':', '|', '(', ','])?;
    let file = &rest[..end];
    if !(file.ends_with(".py") || file.ends_with(".pyi")) {
        return None;
    }
    let (sep, after) = separated(&rest[end..]);
    if sep == 0 || sep > 3 {
        return None;
    }
    let (n, mut after) = number(after)?;
    // The column, when the template has one: digits after the line's separator.
    let (sep, after_sep) = separated(after);
    if sep > 0
        && let Some((_, after_col)) = number(after_sep)
    {
        after = after_col;
    }
    let (sep, after) = separated(after);
    if sep == 0 {
        return None;
    }
    let (code, message) = match leading {
        Some(code) => (code, after),
        None => {
            let (code, after) = split_lint_code(after)?;
            let (sep, message) = separated(after);
            if sep == 0 {
                return None;
            }
            (code, message)
        }
    };
    let message = message.trim_end();
    (!message.is_empty()).then_some((file, n, code, message))
}

/// Whether `line`, whose path is `file`, gives a column after its line number
/// (`path:line:col: message`): pyflakes does, Python's warnings and pytest's `--tb=line` do not.
fn has_column(line: &str, file: &str) -> bool {
    let after_line = line[file.len() + 1..].trim_start_matches(|c: char| c.is_ascii_digit());
    after_line
        .strip_prefix(':')
        .is_some_and(|r| r.as_bytes().first().is_some_and(u8::is_ascii_digit))
}

/// Whether a message without a code is one of pyflakes' warnings (its `messages.py`).
fn is_pyflakes_warning(message: &str) -> bool {
    const STARTS: &[&str] = &[
        "undefined name ",
        "redefinition of unused ",
        "import ",
        "'from ",
        "local variable ",
        "duplicate argument ",
        "dictionary key ",
        "from __future__ imports must occur",
        "future feature ",
        "'return' outside function",
        "'yield' outside function",
        "'continue' not properly in loop",
        "'break' outside loop",
        "default 'except:' must be last",
        "two starred expressions",
        "too many expressions in star-unpacking",
        "assertion is always true",
        "use ==/!= to compare",
        "f-string is missing placeholders",
        "'...'",
        "'raise NotImplemented'",
        "syntax error in forward annotation",
        "syntax error in type comment",
        "unused annotation",
    ];
    const CONTAINS: &[&str] = &[
        " imported but unused",
        " may be undefined, or defined from star imports",
        " shadowed by loop variable",
        " is assigned to but never used",
        " referenced before assignment",
        " is annotated but never used",
    ];
    STARTS.iter().any(|s| message.starts_with(s)) || CONTAINS.iter().any(|c| message.contains(c))
}

/// mypy's message after the place, `error: msg  [code]`: its level, message and code (empty
/// when there is none), as [`MYPY`] reads it, without a regex on the common ASCII code.
fn mypy_message(rest: &str) -> Option<(&str, &str, &str)> {
    let level = ["error", "warning", "note"]
        .into_iter()
        .find(|l| rest.strip_prefix(l).is_some_and(|r| r.starts_with(": ")))?;
    let body = &rest[level.len() + 2..];
    let (message, code) = trailing_code(body, "  [", ']').or_else(|| {
        let c = MYPY.captures(rest)?;
        Some((c.get(2)?.as_str(), c.get(3).map_or("", |m| m.as_str())))
    })?;
    Some((level, message, code))
}

/// pylint's message after the place, `C0116: msg (symbol)`: its id, message and symbol (empty
/// when there is none), as [`PYLINT`] reads it, without a regex on the common ASCII symbol.
fn pylint_message(rest: &str) -> Option<(&str, &str, &str)> {
    if !(starts_with_pylint_id(rest.as_bytes()) && rest[5..].starts_with(": ")) {
        return None;
    }
    let (message, symbol) = trailing_code(&rest[7..], " (", ')').or_else(|| {
        let c = PYLINT.captures(rest)?;
        Some((c.get(2)?.as_str(), c.get(3).map_or("", |m| m.as_str())))
    })?;
    Some((&rest[..5], message, symbol))
}

/// A flake8 or ruff message after the place, `E501 line too long` or `F401 [*] ...`: its code
/// and message, as flake8's `^([A-Z][0-9]{3}) (.*)$` and then ruff's
/// `^([A-Z]{1,4}[0-9]{2,4}|invalid-syntax):? (?:\[\*\] )?(.*)$` read them (flake8's reading wins:
/// it keeps ruff's `[*] `), without a regex run over the message.
fn flake8_or_ruff(rest: &str) -> Option<(&str, &str)> {
    let (code, after) = split_lint_code(rest)?;
    let flake8 = code.len() == 4 && code.as_bytes()[1].is_ascii_digit();
    let message = match after.strip_prefix(' ') {
        Some(message) if flake8 => message,
        _ => {
            let after = after.strip_prefix(':').unwrap_or(after).strip_prefix(' ')?;
            after.strip_prefix("[*] ").unwrap_or(after)
        }
    };
    (!message.contains('\n')).then_some((code, message))
}

/// flake8's and ruff's `pylint` format, `[E501] line too long`: its code and message, as
/// `^\[([A-Z]{1,4}[0-9]{2,4}|invalid-syntax)\] (.*)$` reads them.
fn code_bracketed(rest: &str) -> Option<(&str, &str)> {
    let (code, after) = split_lint_code(rest.strip_prefix('[')?)?;
    let message = after.strip_prefix("] ")?;
    (!message.contains('\n')).then_some((code, message))
}

/// pylint's `parseable` and `msvs` message after the place, `[C0116(missing-docstring), obj] msg`:
/// its id, symbol and message, as [`PYLINT_BRACKETED`] reads them, without running the regex
/// unless the symbol holds a character that is not ASCII (which `\w` may take).
fn pylint_bracketed(rest: &str) -> Option<(&str, &str, &str)> {
    let inner = rest.strip_prefix('[')?;
    if !(starts_with_pylint_id(inner.as_bytes()) && inner[5..].starts_with('(')) {
        // Most bracketed messages are flake8's or ruff's `[E501] ...`.
        return None;
    }
    let after_open = &inner[6..];
    let symbol = after_open
        .bytes()
        .take_while(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-'))
        .count();
    if after_open.as_bytes().get(symbol).is_some_and(|&b| b >= 0x80) {
        let c = PYLINT_BRACKETED.captures(rest)?;
        return Some((c.get(1)?.as_str(), c.get(2)?.as_str(), c.get(3)?.as_str()));
    }
    // `(?:, )?[^\]]*\] `: the object runs to the first `]`.
    let after_symbol = after_open[symbol..].strip_prefix(')').filter(|_| symbol > 0)?;
    let close = after_symbol.find(']')?;
    let message = after_symbol[close + 1..].strip_prefix(' ')?;
    (!message.contains('\n')).then_some((&inner[..5], &after_open[..symbol], message))
}

/// ruff `grouped`'s file, `path/to/file.py:` alone on its line: the path.
fn grouped_file_line(line: &str) -> Option<&str> {
    line.strip_suffix(':')
        .filter(|path| (path.ends_with(".py") || path.ends_with(".pyi")) && !has_byte(path, b' '))
}

/// A row of ruff's `grouped` format, `  12:5  F401 [*] msg`: its line, code and message, as
/// [`RUFF_GROUPED_ROW`] reads them, without running the regex on ASCII text.
fn ruff_grouped_row(line: &str) -> Option<(&str, &str, &str)> {
    if !line.is_ascii() {
        let c = RUFF_GROUPED_ROW.captures(line)?;
        return Some((c.get(1)?.as_str(), c.get(2)?.as_str(), c.get(3)?.as_str()));
    }
    let (n, rest) = row_place(line, |b| b == b' ')?;
    let (code, after) = split_lint_code(rest)?;
    let after = after.strip_prefix(':').unwrap_or(after).strip_prefix(' ')?;
    let message = after.strip_prefix("[*] ").unwrap_or(after);
    (!message.contains('\n')).then_some((n, code, message))
}

/// Whether `b` starts with a pylint message id, a capital and four digits (`C0116`).
fn starts_with_pylint_id(b: &[u8]) -> bool {
    b.len() >= 5 && b[0].is_ascii_uppercase() && b[1..5].iter().all(u8::is_ascii_digit)
}

/// `text` (a line: no `\n`) as `(.*?)(?:OPEN([\w-]+)CLOSE)?$` reads it, where OPEN holds a space
/// and `\w-` none: the message and the code at the end (empty when there is none). Only the last
/// `open` can begin the code (a code begun earlier would hold the later one's space), so it is
/// the one looked at. `None` when that code holds a character that is not ASCII, which `\w`
/// may or may not take: the regex decides then.
fn trailing_code<'t>(text: &'t str, open: &str, close: char) -> Option<(&'t str, &'t str)> {
    let Some(inner) = text.strip_suffix(close) else {
        return Some((text, ""));
    };
    let Some(at) = inner.rfind(open) else {
        return Some((text, ""));
    };
    let code = &inner[at + open.len()..];
    if !code.is_ascii() {
        return None;
    }
    let is_code = !code.is_empty()
        && code
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    Some(if is_code { (&text[..at], code) } else { (text, "") })
}

/// `path.py(12): rest`: pylint's `msvs` format.
fn msvs_location(line: &str) -> Option<(&str, u32, &str)> {
    let open = find_short(line, ".py(")? + 3;
    let path = &line[..open];
    if has_byte(path, b' ') {
        return None;
    }
    let after = &line[open + 1..];
    let digits = after.bytes().take_while(u8::is_ascii_digit).count();
    let rest = after.get(digits..)?.strip_prefix("): ")?;
    let n = after[..digits].parse().ok()?;
    Some((path, n, rest))
}

/// pyright's (and basedpyright's) diagnostic under its file's line,
/// `  /abs/pkg/a.py:12:5 - error: "x" is not defined (reportUndefinedVariable)`: the place, the
/// level and the message. Its notes (`- information:`) are not findings.
fn pyright_diagnostic(line: &str) -> Option<(&str, u32, &str, &str)> {
    let (file, n, rest) = split_location(line.trim_start())?;
    if !(file.ends_with(".py") || file.ends_with(".pyi")) {
        return None;
    }
    let (level, message) = rest.strip_prefix("- ")?.split_once(": ")?;
    matches!(level, "error" | "warning").then_some((file, n, level, message))
}

/// A pyright finding, as its text or its `--outputjson` gives it. The rule is the JSON's `rule`,
/// or the text's trailing `(reportSomething)` (a message continued on further lines puts it on
/// the last of them: then the words tell the type).
pub(crate) fn pyright_finding<'a>(file: &'a str, line: u32, level: &str, message: &'a str, rule: &str) -> Finding<'a> {
    let message = message.trim();
    let rule = if rule.is_empty() {
        message
            .strip_suffix(')')
            .and_then(|m| m.rsplit_once(" (report"))
            .map_or("", |(_, r)| r)
    } else {
        rule.strip_prefix("report").unwrap_or(rule)
    };
    let error_type = pyright_type(level, rule, message);
    Finding {
        file,
        line,
        error_type,
        message: if rule.is_empty() || message.ends_with(')') {
            Cow::Owned(format!("{level}: {message}"))
        } else {
            Cow::Owned(format!("{level}: {message} (report{rule})"))
        },
        test: None,
        confidence: 0.95,
        rank: Rank::of(error_type),
        diagnostic: true,
    }
}

/// The bug type of a pyright diagnostic by its rule (without `report`) or, for a rule-less one,
/// its words: a name or module that does not resolve is IMPORT (as Python's NameError and
/// ImportError are), the parser's own errors SYNTAX or INDENTATION, another error TYPE_ERROR, a
/// warning LINTING.
fn pyright_type(level: &str, rule: &str, message: &str) -> ErrorType {
    let import = matches!(rule, "MissingImports" | "MissingModuleSource" | "UndefinedVariable")
        || rule == "AttributeAccessIssue" && message.contains("is unknown import symbol")
        || message.starts_with("Import \"") && message.contains("could not be resolved");
    if import {
        ErrorType::Import
    } else if level == "warning" {
        ErrorType::Linting
    } else if rule.is_empty()
        && [
            "Unindent",
            "Expected indented block",
            "Unexpected indentation",
            "Inconsistent use of tabs",
        ]
        .iter()
        .any(|p| message.starts_with(p))
    {
        ErrorType::Indentation
    } else if rule.is_empty()
        && (message.starts_with("Expected ")
            || message.starts_with("Statements must be separated by newlines or semicolons")
            || message.starts_with("Invalid character")
            || message.ends_with("is unterminated")
            || message.ends_with("was not closed"))
    {
        ErrorType::Syntax
    } else {
        ErrorType::TypeError
    }
}

/// Skips `end_line:end_col: ` after the location (mypy `--show-error-end`).
fn skip_error_end(rest: &str) -> &str {
    let b = rest.as_bytes();
    let a = b.iter().take_while(|c| c.is_ascii_digit()).count();
    if a == 0 || b.get(a) != Some(&b':') {
        return rest;
    }
    let c = b[a + 1..].iter().take_while(|c| c.is_ascii_digit()).count();
    if c == 0 || b.get(a + 1 + c) != Some(&b':') {
        return rest;
    }
    rest[a + 1 + c + 1..].trim_start()
}

fn report(sink: &mut Sink<'_>, file: &str, line: u32, error_type: ErrorType, rank: Rank, message: Cow<'_, str>) {
    sink.report(Finding {
        file,
        line,
        error_type,
        message,
        test: None,
        confidence: 0.95,
        rank,
        diagnostic: true,
    });
}

/// The bug type of a mypy error code.
pub(crate) fn mypy_type(code: &str, message: &str) -> ErrorType {
    match code {
        "import" | "import-not-found" | "import-untyped" | "name-defined" => ErrorType::Import,
        // mypy's parser names an indentation error in words (`Unexpected indentation`,
        // `Unindent does not match any outer indentation level`) under the `syntax` code.
        "syntax" if message.to_ascii_lowercase().contains("indent") => ErrorType::Indentation,
        "syntax" => ErrorType::Syntax,
        // `from pkg.mod import nme`: the name the import asks for is not there, as Python's own
        // ImportError, pylint's E0611 and pyright's "unknown import symbol" say it (a module's
        // missing attribute used in code reads `Module has no attribute`, with no module named).
        "attr-defined" if message.starts_with("Module \"") => ErrorType::Import,
        // `--pretty` wraps a long message, and its code can go to a line of its own: the words
        // say what the code would.
        "" if message.starts_with("Name \"") && message.contains("\" is not defined") => ErrorType::Import,
        "" if message.starts_with("Module \"") && message.contains("\" has no attribute \"") => ErrorType::Import,
        _ if message.starts_with("invalid syntax") => ErrorType::Syntax,
        _ if message.starts_with("Cannot find implementation or library stub")
            || message.starts_with("Library stubs not installed")
            || message.starts_with("Skipping analyzing") =>
        {
            ErrorType::Import
        }
        _ if message.contains("unindent") || message.contains("unexpected indent") => ErrorType::Indentation,
        _ => ErrorType::TypeError,
    }
}

/// The bug type of a pylint message.
pub(crate) fn pylint_type(id: &str, symbol: &str, message: &str) -> ErrorType {
    match (id, symbol) {
        ("E0001", _) | (_, "syntax-error") => lint_finding_type("E0001", message),
        // A module, or a name, that does not resolve (E0602: a name used but never defined or
        // imported, as Python's NameError and mypy's `name-defined` say).
        ("E0401" | "E0611" | "E0602", _) | (_, "import-error" | "no-name-in-module" | "undefined-variable") => {
            ErrorType::Import
        }
        _ => ErrorType::Linting,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::{Workspace, parse};
    use proptest::prelude::*;

    /// mypy 2.4 `--pretty --show-column-numbers` (two outsider trials' jmespath 1.0.1 and idna
    /// 3.10): a message wrapped at the terminal's width puts its code, or the rest of the message
    /// and the code, on a line of its own; the words type it.
    #[test]
    fn mypy_s_pretty_message_whose_code_wrapped_is_typed_by_its_words() {
        let log = "jmespath/functions.py:166:16: error: Name \"decimal\" is not defined \n[name-defined]\n            return decimal.Decimal(abs(arg))\n                   ^~~~~~~\njmespath/visitor.py:95:16: error: \"None\" not callable  [misc]\nidna/core.py:295:36: error: Name \"_punnycode\" is not defined; did you mean\n\"_punycode\"?  [name-defined]\n";
        assert_eq!(
            crate::parse::report_types(&parse(log, &Workspace::new("/w"))),
            [
                ("jmespath/functions.py".to_owned(), 166, "Import".to_owned()),
                ("jmespath/visitor.py".to_owned(), 95, "TypeError".to_owned()),
                ("idna/core.py".to_owned(), 295, "Import".to_owned())
            ]
        );
    }

    /// ruff's concise output cut mid-line (`path:14:5: F`, which reads as pyflakes' syntax error
    /// waiting for its source line), then ruff's `grouped` output: its file's line is no source
    /// line (a property test's find, on the golden logs `mono_ruff_concise` and `_grouped`).
    #[test]
    fn a_grouped_file_line_ends_a_cut_line_s_wait_for_its_source() {
        let log = "ledger/report.py:14:5: F\nledger/report.py:\n  14:5  F841 Local variable `unused` is assigned to but never used\n";
        assert_eq!(
            crate::parse::report_types(&parse(log, &Workspace::new("/w"))),
            [("ledger/report.py".to_owned(), 14, "Linting".to_owned())]
        );
    }

    /// dmypy 2.x (the fifteenth outsider trial's): mypy's parser names the indentation error in
    /// words under the `syntax` code.
    /// Found by the cut-log property test: a pylint line cut after its place, then flake8's
    /// code-first `--format`: the row that stood where the source line would is read.
    #[test]
    fn a_code_first_row_after_a_cut_line_is_read() {
        let log = "calc.py:1:14: E\n[E501] ./ledger/accounts.py:23:80 line too long (87 > 79 characters)\n";
        assert_eq!(
            crate::parse::report_types(&parse(log, &Workspace::new("/w"))),
            [("ledger/accounts.py".to_owned(), 23, "Linting".to_owned())]
        );
    }

    #[test]
    fn mypy_s_indentation_error_is_indentation() {
        let log = "Daemon started\nsrc/cachetools/func.py:31: error: Unexpected indentation  [syntax]\n";
        assert_eq!(
            crate::parse::report_types(&parse(log, &Workspace::new("/w"))),
            [("src/cachetools/func.py".to_owned(), 31, "Indentation".to_owned())]
        );
    }

    /// pycodestyle 2.14 on a line indented where Python does not compile it (the fourteenth
    /// outsider trial's): E113 is the IndentationError, ranked before E111's style finding.
    #[test]
    fn pycodestyle_s_unexpected_indentation_is_an_indentation_error() {
        let log = "inflection/__init__.py:198:7: E111 indentation is not a multiple of 4
inflection/__init__.py:198:7: E113 unexpected indentation
";
        let parsed = crate::parse::parse(log, &crate::parse::Workspace::new("/w"));
        let types: Vec<_> = crate::parse::report_findings(&parsed)
            .into_iter()
            .map(|(file, line, error_type, _)| (file, line, error_type))
            .collect();
        assert_eq!(
            types,
            [
                ("inflection/__init__.py", 198, "Indentation".to_owned()),
                ("inflection/__init__.py", 198, "Linting".to_owned())
            ]
        );
    }

    /// A log cut inside a linter's message (`shapes.py:10:1: i`, which reads as a pyflakes
    /// syntax error waiting for its source line), then cargo's short diagnostics: the next
    /// tool's diagnostic ends the wait and is read (a combined-log property test found it).
    #[test]
    fn a_diagnostic_after_a_cut_message_is_read() {
        let log = "shapes.py:10:1: i\nsrc/main.rs:1:5: error[E0432]: unresolved import `std::collections::HashMapp`: no `HashMapp` in `collections`\n";
        let parsed = super::super::parse(log, &super::super::Workspace::new("/w"));
        assert_eq!(super::super::report_places(&parsed), [("src/main.rs", 1, None)]);
    }

    /// The regexes the flake8, ruff and bracketed readers replaced.
    static FLAKE8: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^([A-Z][0-9]{3}) (.*)$").expect("regex"));
    static RUFF: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"^([A-Z]{1,4}[0-9]{2,4}|invalid-syntax):? (?:\[\*\] )?(.*)$").expect("regex"));
    static CODE_BRACKETED: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"^\[([A-Z]{1,4}[0-9]{2,4}|invalid-syntax)\] (.*)$").expect("regex"));

    /// Where `part`, a slice of `text`, lies in it.
    fn substr_range(text: &str, part: &str) -> std::ops::Range<usize> {
        let start = part.as_ptr() as usize - text.as_ptr() as usize;
        start..start + part.len()
    }

    /// A regex's first three groups, as the readers give them.
    fn triple<'t>(regex: &Regex, text: &'t str) -> Option<(&'t str, &'t str, &'t str)> {
        regex.captures(text).map(|c| {
            (
                c.get(1).unwrap().as_str(),
                c.get(2).unwrap().as_str(),
                c.get(3).unwrap().as_str(),
            )
        })
    }

    /// Messages made of the pieces that matter to the two readers: codes, their brackets and
    /// the spaces before them, words that are not ASCII.
    fn message() -> impl Strategy<Value = String> {
        prop::collection::vec(
            prop_oneof![
                Just("error"),
                Just("warning"),
                Just("note"),
                Just(": "),
                Just("C0116"),
                Just("E1"),
                Just("  ["),
                Just(" ["),
                Just("]"),
                Just(" ("),
                Just(")"),
                Just("("),
                Just("["),
                Just("arg-type"),
                Just("missing_doc"),
                Just("x"),
                Just(" "),
                Just("é"),
                Just("\u{2003}"),
                Just("\u{300}"),
                Just("-"),
            ],
            0..10,
        )
        .prop_map(|p| p.concat())
    }

    /// mypy's `attr-defined` on a `from ... import` of a name the module lacks names the module:
    /// an import that does not resolve, as Python's ImportError and pylint's E0611 say; on an
    /// attribute used in code it names none, and is a type error.
    #[test]
    fn a_name_a_from_import_asks_for_in_vain_is_an_import_error() {
        assert_eq!(
            mypy_type(
                "attr-defined",
                "Module \"toolz.itertoolz\" has no attribute \"gettr\"; maybe \"getter\"?"
            ),
            ErrorType::Import
        );
        assert_eq!(
            mypy_type("attr-defined", "Module has no attribute \"gettr\""),
            ErrorType::TypeError
        );
        assert_eq!(
            mypy_type("attr-defined", "\"Foo\" has no attribute \"x\""),
            ErrorType::TypeError
        );
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4000))]

        #[test]
        fn flake8_ruff_and_bracketed_codes_are_read_as_their_regexes_read_them(
            rest in prop::collection::vec(
                prop_oneof![
                    Just("E"), Just("ABCD"), Just("ABCDE"), Just("5"), Just("01"), Just("12345"), Just("é"),
                    Just("\u{663}"), Just("invalid-syntax"), Just(":"), Just(" "), Just("[*] "), Just("["),
                    Just("]"), Just("] "), Just("C0116("), Just("x"), Just("\n"), Just(")"), Just(", "), Just("-"),
                    Just("_"), Just("12:5"), Just("  "),
                ],
                0..7,
            ).prop_map(|p| p.concat()),
        ) {
            let text = rest.as_str();
            let pair = |c: regex::Captures<'_>| (c.get(1).unwrap().range(), c.get(2).unwrap().range());
            let ranges = |r: Option<(&str, &str)>| {
                r.map(|(a, b)| (substr_range(text, a), substr_range(text, b)))
            };
            let by_regex = FLAKE8.captures(text).or_else(|| RUFF.captures(text)).map(pair);
            prop_assert_eq!(ranges(flake8_or_ruff(text)), by_regex, "{:?}", rest);
            prop_assert_eq!(ranges(code_bracketed(text)), CODE_BRACKETED.captures(text).map(pair), "{:?}", rest);
            prop_assert_eq!(pylint_bracketed(text), triple(&PYLINT_BRACKETED, text), "{:?}", text);
            prop_assert_eq!(ruff_grouped_row(text), triple(&RUFF_GROUPED_ROW, text), "{:?}", text);
        }

        /// Near the shapes of pylint's bracketed messages and ruff's grouped rows, so that most
        /// are one or miss it by a byte.
        #[test]
        fn bracketed_messages_and_grouped_rows_are_read_as_their_regexes_read_them(
            bracketed in "\\[?(C0116|E1|C011)?\\(?[a-z_\u{e9}-]{0,3}\\)?(, )?[a-z ]{0,2}\\]?( |  )?(msg|\n|\\[\\*\\] )?",
            row in " {0,2}[0-9]{0,2}:?[0-9]{0,2} {0,2}(F401|ABCDE12|E1|invalid-syntax|\u{663}){0,1}:? ?(\\[\\*\\] )?(msg|\n)?",
        ) {
            prop_assert_eq!(pylint_bracketed(&bracketed), triple(&PYLINT_BRACKETED, &bracketed), "{:?}", bracketed);
            prop_assert_eq!(ruff_grouped_row(&row), triple(&RUFF_GROUPED_ROW, &row), "{:?}", row);
        }

        #[test]
        fn mypy_and_pylint_messages_are_read_as_their_regexes_read_them(rest in message()) {
            let by_regex = MYPY.captures(&rest).map(|c| {
                (c.get(1).unwrap().as_str(), c.get(2).unwrap().as_str(), c.get(3).map_or("", |m| m.as_str()))
            });
            prop_assert_eq!(mypy_message(&rest), by_regex, "{:?}", rest);
            let by_regex = PYLINT.captures(&rest).map(|c| {
                (c.get(1).unwrap().as_str(), c.get(2).unwrap().as_str(), c.get(3).map_or("", |m| m.as_str()))
            });
            prop_assert_eq!(pylint_message(&rest), by_regex, "{:?}", rest);
        }
    }

    /// pyright's own parser errors carry no rule: their words tell SYNTAX from INDENTATION; a
    /// Windows runner's paths start with a drive letter and its colon.
    #[test]
    fn pyright_s_parser_errors_are_typed_by_their_words_and_windows_paths_are_read() {
        let log = "/w/pkg/a.py\n  /w/pkg/a.py:4:1 - error: Expected indented block\n  /w/pkg/a.py:9:11 - error: String literal is unterminated\n  /w/pkg/a.py:14:8 - error: \"(\" was not closed\n  D:\\w\\pkg\\b.py:3:5 - error: \"foo\" is not defined (reportUndefinedVariable)\n4 errors, 0 warnings, 0 informations\n";
        let types: Vec<(String, u32, String)> = parse(log, &Workspace::new("/w"))
            .reports
            .iter()
            .map(|r| (r.file_path.clone(), r.line_number, format!("{:?}", r.error_type)))
            .chain(
                parse(log, &Workspace::new("D:\\w"))
                    .reports
                    .iter()
                    .map(|r| (r.file_path.clone(), r.line_number, format!("{:?}", r.error_type))),
            )
            .collect();
        let expected = [
            ("pkg/a.py", 4, "Indentation"),
            ("pkg/a.py", 9, "Syntax"),
            ("pkg/a.py", 14, "Syntax"),
            ("pkg/b.py", 3, "Import"),
        ];
        for (file, line, kind) in expected {
            assert!(
                types.iter().any(|t| t.0 == file && t.1 == line && t.2 == kind),
                "{file}:{line} {kind} not in {types:?}"
            );
        }
    }

    #[test]
    fn pyflakes_warnings_are_linting_but_undefined_names_and_its_syntax_errors_need_the_caret() {
        // pyflakes 3.2's output (its messages have no code): two warnings; a syntax error, shown
        // with the source line and a caret; a codeless message with no caret after it (not one);
        // a warning with no column (pyflakes before 2.2), and Python's own warning, whose line has
        // no column either.
        let log = "\
pkg/core.py:1:1: 'os' imported but unused
pkg/core.py:180:12: undefined name 'wrod'
pkg/core.py:413:18: '(' was never closed
    word = re.sub(r\"([A-Z]+)\", r'\\1_', word
                 ^
pkg/core.py:9:4: expected an indented block after 'if' statement on line 8
    return 1
    ^^^^^^
pkg/core.py:20:1: something a script printed
then more of its output
and its last line
pkg/core.py:21:1: local variable 'x' is assigned to but never used
pkg/core.py:30: DeprecationWarning: invalid escape sequence '\\d'
pkg/core.py:31: undefined name 'old'
";
        let parsed = parse(log, &Workspace::new("/w"));
        let got: Vec<(u32, String)> = parsed
            .reports
            .iter()
            .map(|r| (r.line_number, format!("{:?}", r.error_type)))
            .collect();
        let expected: Vec<(u32, String)> = [
            (1, "Linting"),
            (180, "Import"),
            (413, "Syntax"),
            (9, "Indentation"),
            (21, "Linting"),
            (31, "Import"),
        ]
        .iter()
        .map(|&(n, t)| (n, t.to_owned()))
        .collect();
        let mut got_sorted = got.clone();
        got_sorted.sort();
        let mut expected_sorted = expected.clone();
        expected_sorted.sort();
        assert_eq!(got_sorted, expected_sorted, "{:#?}", parsed.reports);
    }
}
