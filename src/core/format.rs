//! The output formatter: the one place that renders a bug report for people —
//! `{TYPE} error in {file} line {N} → Fix: {desc}` — used by the CLI, commit messages, events and
//! summaries. The fix description is short and chosen from the report's type and message. The
//! heal branch's commit and revert messages are rendered here too, with the trailers by which
//! the Git agent finds a run's commits again.

use crate::api::heal_run::HealRunStatus;
use crate::api::shared::{BugReport, ErrorType};
use crate::core::heal_run::latest_observation;
use crate::parse::truncate;

/// The trailer naming the run a commit belongs to.
pub const RUN_TRAILER: &str = "Kubeheal-Run";
/// The trailer naming the CodeFixDDS (its `spec.id`) a commit executes.
pub const DDS_TRAILER: &str = "Kubeheal-DDS";
/// The trailer naming the cycle a commit belongs to.
pub const CYCLE_TRAILER: &str = "Kubeheal-Cycle";
/// The trailer naming the cycle a revert undoes.
pub const REVERT_TRAILER: &str = "Kubeheal-Reverts";

/// The short form of a commit people read: its first 12 characters.
pub fn short_commit(commit: &str) -> &str {
    &commit[..12.min(commit.len())]
}

/// `LINTING error in src/utils.py line 15 → Fix: remove the unused import`.
pub fn render(report: &BugReport) -> String {
    format!(
        "{} error in {} line {} → Fix: {}",
        type_name(report.error_type),
        report.file_path,
        report.line_number,
        fix_description(report)
    )
}

/// The wire name of a bug type (`TYPE_ERROR`, ...).
pub fn type_name(t: ErrorType) -> &'static str {
    match t {
        ErrorType::Linting => "LINTING",
        ErrorType::Syntax => "SYNTAX",
        ErrorType::Logic => "LOGIC",
        ErrorType::TypeError => "TYPE_ERROR",
        ErrorType::Import => "IMPORT",
        ErrorType::Indentation => "INDENTATION",
    }
}

/// A short, actionable description of the fix, by sub-type.
/// The kind of item rustc's dead-code lint names first (`` function `rounding` is never used ``).
fn unused_item_kind(lower: &str) -> Option<&'static str> {
    const KINDS: [&str; 12] = [
        "function",
        "method",
        "associated function",
        "struct",
        "enum",
        "constant",
        "static",
        "type alias",
        "field",
        "variant",
        "trait",
        "macro",
    ];
    let rest = lower
        .strip_prefix("error: ")
        .or(lower.strip_prefix("warning: "))
        .unwrap_or(lower);
    KINDS
        .into_iter()
        .find(|kind| rest.strip_prefix(kind).is_some_and(|after| after.starts_with(" `")))
}

pub fn fix_description(report: &BugReport) -> String {
    let m = report.message.as_str();
    let lower = m.to_ascii_lowercase();
    let quoted = first_quoted(m);
    match report.error_type {
        ErrorType::Linting => {
            if lower.contains("unused import")
                || lower.contains("imported but unused")
                || lower.contains("imported and not used")
            {
                "remove the unused import".into()
            } else if let Some(kind) = lower.contains("never used").then(|| unused_item_kind(&lower)).flatten() {
                format!("remove the unused {kind}")
            } else if lower.contains("never used")
                || lower.contains("declared and not used")
                || lower.contains("unused variable")
            {
                "remove the unused variable".into()
            } else if lower.contains("import block is un-sorted") || lower.contains("wrong-import-order") {
                "sort the imports".into()
            } else if lower.contains("whitespace") || lower.contains("spaces") {
                "fix the spacing".into()
            } else if lower.contains("docstring") {
                "add the missing docstring".into()
            } else {
                format!("resolve the lint finding: {}", clip(m))
            }
        }
        ErrorType::Syntax => {
            if let Some(token) = expected_token(m) {
                format!("add the missing {token}")
            } else {
                format!("correct the syntax: {}", clip(m))
            }
        }
        ErrorType::Indentation => {
            if lower.contains("unexpected indent") || lower.contains("unexpected indentation") {
                "remove the unexpected indentation".into()
            } else if lower.contains("unindent") || lower.contains("dedent") {
                "align the line with its enclosing block".into()
            } else if lower.contains("tab") {
                "indent with spaces only, not a mix of tabs and spaces".into()
            } else if lower.contains("expected an indented block") {
                "indent the block under its header".into()
            } else {
                "fix the indentation".into()
            }
        }
        ErrorType::Import => match quoted {
            Some(name) if lower.contains("name") && lower.contains("not defined") => format!("import {name}"),
            Some(name) if lower.contains("no module named") || lower.contains("cannot find module") => {
                format!("fix the import of '{name}' or add it to the project")
            }
            Some(name) => format!("import or define '{name}'"),
            None => format!("fix the import: {}", clip(m)),
        },
        ErrorType::TypeError => format!("make the types agree: {}", clip(m)),
        ErrorType::Logic => {
            if lower.contains("assert") {
                "correct the logic so the assertion holds".into()
            } else {
                format!("handle the failing case: {}", clip(m))
            }
        }
    }
}

/// The first name in quotes or backticks. An opening quote starts a word: the apostrophe of
/// `Can't resolve './missing.js'` opens nothing.
fn first_quoted(m: &str) -> Option<&str> {
    for (open, close) in [('\'', '\''), ('`', '`'), ('"', '"')] {
        let opens_a_word = |&(at, _): &(usize, &str)| m[..at].chars().next_back().is_none_or(|c| !c.is_alphanumeric());
        if let Some((start, _)) = m.match_indices(open).find(opens_a_word)
            && let Some(len) = m[start + 1..].find(close)
        {
            let name = &m[start + 1..start + 1 + len];
            if !name.is_empty() && name.len() <= 80 {
                return Some(name);
            }
        }
    }
    None
}

/// `expected ':'`, ``Expected `:` ``, `')' expected` → the token.
fn expected_token(m: &str) -> Option<String> {
    let lower = m.to_ascii_lowercase();
    if let Some(i) = lower.find("expected ") {
        let rest = &m[i + "expected ".len()..];
        let token = rest.split([',', ' ']).next()?.trim();
        if (2..=5).contains(&token.len())
            && (token.starts_with('\'') || token.starts_with('`') || token.starts_with('"'))
        {
            return Some(token.to_owned());
        }
    }
    if let Some(i) = m.find(" expected") {
        let token = m[..i].rsplit(' ').next()?;
        if (3..=5).contains(&token.len()) && token.starts_with('\'') {
            return Some(token.to_owned());
        }
    }
    None
}

fn clip(m: &str) -> String {
    let first = m.lines().next().unwrap_or(m);
    truncate(first, 120)
}

/// The commit message of `cycle`'s fix: the `[AI-AGENT]` subject from the report the patch
/// answers (the first report on a file it changes, else the first report), the healer's summary,
/// and trailers naming the run and cycle (and the approver), by which the Git agent finds the
/// commit again.
pub fn commit_message(status: &HealRunStatus, cycle: u32, run: &str) -> String {
    let entry = status.cycles.iter().find(|c| c.cycle == cycle);
    let patch = entry.and_then(|c| c.patch.as_ref());
    let files: Vec<&str> = patch
        .map(|p| p.files.iter().map(|f| f.path.as_str()).collect())
        .unwrap_or_default();
    let reports = latest_observation(status)
        .map(|o| o.bug_reports.as_slice())
        .unwrap_or_default();
    let subject = reports
        .iter()
        .find(|r| files.contains(&r.file_path.as_str()))
        .or(reports.first())
        .map(render)
        .unwrap_or_else(|| format!("fix of cycle {cycle}"));
    let summary = entry
        .and_then(|c| c.healer_call.as_ref())
        .and_then(|c| c.changes_summary.clone())
        .unwrap_or_default();
    let order = status.work_order.as_ref();
    let approved = patch
        .and_then(|p| p.approved_by.as_ref())
        .or(order.map(|o| &o.approved_by))
        .map(|who| format!("Approved-by: {who}\n"))
        .unwrap_or_default();
    let dds = order.map(|o| format!("{DDS_TRAILER}: {}\n", o.id)).unwrap_or_default();
    format!("[AI-AGENT] {subject}\n\n{summary}\n\n{RUN_TRAILER}: {run}\n{CYCLE_TRAILER}: {cycle}\n{dds}{approved}")
}

/// The message of the commit that reverts `cycle`'s fix (`target`), naming the tests it broke.
pub fn revert_message(status: &HealRunStatus, cycle: u32, target: &str, run: &str) -> String {
    let newly = status
        .cycles
        .iter()
        .find(|c| c.cycle == cycle)
        .and_then(|c| c.tests.as_ref())
        .map(|t| t.newly_failing.join(", "))
        .unwrap_or_default();
    format!(
        "Revert the fix of cycle {cycle}: it made {newly} fail\n\nThis reverts commit {target}.\n\n{RUN_TRAILER}: {run}\n{REVERT_TRAILER}: {cycle}\n"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(error_type: ErrorType, file: &str, line: u32, message: &str) -> BugReport {
        BugReport {
            file_path: file.into(),
            line_number: line,
            error_type,
            message: message.into(),
            test_name: None,
            confidence_score: None,
        }
    }

    #[test]
    fn renders_the_contract_line() {
        let r = report(
            ErrorType::Linting,
            "src/utils.py",
            15,
            "F401 [*] `os` imported but unused",
        );
        assert_eq!(
            render(&r),
            "LINTING error in src/utils.py line 15 → Fix: remove the unused import"
        );
        let r = report(ErrorType::Syntax, "calc.py", 1, "SyntaxError: expected ':'");
        assert_eq!(render(&r), "SYNTAX error in calc.py line 1 → Fix: add the missing ':'");
        let r = report(
            ErrorType::Import,
            "app/encode.py",
            2,
            "NameError: name 'json' is not defined",
        );
        assert_eq!(render(&r), "IMPORT error in app/encode.py line 2 → Fix: import json");
        let r = report(
            ErrorType::Indentation,
            "shapes.py",
            10,
            "IndentationError: unexpected indent",
        );
        assert_eq!(
            render(&r),
            "INDENTATION error in shapes.py line 10 → Fix: remove the unexpected indentation"
        );
        // An apostrophe opens no name (eslint-plugin-n's message).
        let r = report(
            ErrorType::Import,
            "src/b.js",
            1,
            "\"./missing.js\" is not found. Can't resolve './missing.js' in '/w/src' (n/no-missing-import)",
        );
        assert!(
            render(&r).ends_with("→ Fix: import or define './missing.js'"),
            "{}",
            render(&r)
        );
        // rustc's dead code names the item's kind; Go's unused variable is a variable.
        let r = report(
            ErrorType::Linting,
            "src/lib.rs",
            17,
            "error: function `rounding` is never used",
        );
        assert!(
            render(&r).ends_with("→ Fix: remove the unused function"),
            "{}",
            render(&r)
        );
        let r = report(ErrorType::Linting, "main.go", 4, "declared and not used: x");
        assert!(
            render(&r).ends_with("→ Fix: remove the unused variable"),
            "{}",
            render(&r)
        );
        let r = report(ErrorType::Syntax, "src/money.ts", 2, "error TS1005: ')' expected.");
        assert_eq!(
            render(&r),
            "SYNTAX error in src/money.ts line 2 → Fix: add the missing ')'"
        );
    }
}
