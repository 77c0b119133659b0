//! One-line `path:line[:col]: message` diagnostics of the Python linters and type checker — mypy,
//! flake8, pylint, ruff's concise format — and cargo's `--message-format=short`.

use std::borrow::Cow;
use std::sync::LazyLock;

use regex::Regex;

use super::rust::{lint_type_for_syntax_message, rustc_type};
use super::{Finding, Rank, Sink, split_location};
use crate::api::shared::ErrorType;

static MYPY: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^(error|warning|note): (.*?)(?:  \[([\w-]+)\])?$").expect("regex"));
static FLAKE8: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^([A-Z]\d{3}) (.*)$").expect("regex"));
static PYLINT: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^([A-Z]\d{4}): (.*?)(?: \(([\w-]+)\))?$").expect("regex"));
static RUFF: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^([A-Z]{1,4}\d{2,4}|invalid-syntax):? (?:\[\*\] )?(.*)$").expect("regex"));
static RUSTC_SHORT: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^(error|warning)(?:\[([A-Za-z0-9_:]+)\])?: (.*)$").expect("regex"));

#[derive(Default)]
pub(crate) struct Lint;

impl Lint {
    pub fn line(&mut self, line: &str, sink: &mut Sink<'_>) {
        let Some(&first) = line.as_bytes().first() else {
            return;
        };
        if first == b' ' || first == b'\t' || !line.contains(':') {
            return;
        }
        let Some((file, n, rest)) = split_location(line) else {
            return;
        };
        if file.ends_with(".rs") {
            if let Some(c) = RUSTC_SHORT.captures(rest) {
                let (error_type, rank) = rustc_type(&c[1], c.get(2).map(|m| m.as_str()), &c[3]);
                report(sink, file, n, error_type, rank, Cow::Borrowed(rest));
            }
            return;
        }
        if !(file.ends_with(".py") || file.ends_with(".pyi")) {
            return;
        }
        if let Some(c) = MYPY.captures(rest) {
            if &c[1] == "note" {
                return;
            }
            let error_type = mypy_type(c.get(3).map_or("", |m| m.as_str()), &c[2]);
            report(sink, file, n, error_type, Rank::Error, Cow::Borrowed(rest));
        } else if let Some(c) = PYLINT.captures(rest) {
            let error_type = pylint_type(&c[1], c.get(3).map_or("", |m| m.as_str()), &c[2]);
            let rank = Rank::of(error_type);
            report(sink, file, n, error_type, rank, Cow::Borrowed(rest));
        } else if let Some(c) = FLAKE8.captures(rest).or_else(|| RUFF.captures(rest)) {
            let error_type = lint_type_for_syntax_message(&c[1], &c[2]);
            let rank = Rank::of(error_type);
            report(sink, file, n, error_type, rank, Cow::Borrowed(rest));
        }
    }
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
    });
}

/// The bug type of a mypy error code.
pub(crate) fn mypy_type(code: &str, message: &str) -> ErrorType {
    match code {
        "import" | "import-not-found" | "import-untyped" | "name-defined" => ErrorType::Import,
        "syntax" => ErrorType::Syntax,
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
        ("E0001", _) | (_, "syntax-error") => lint_type_for_syntax_message("E0001", message),
        ("E0401" | "E0611", _) | (_, "import-error" | "no-name-in-module") => ErrorType::Import,
        _ => ErrorType::Linting,
    }
}
