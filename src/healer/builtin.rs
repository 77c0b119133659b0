//! Tier-1 deterministic fixers: no LLM, confidence 1.0, each chosen by a bug report's type and
//! message. A fixer that is not sure does not guess: it returns nothing and the cycle goes on to
//! another healer (or ends).
//!
//! - SYNTAX `expected ':'`: add the colon a Python block header is missing.
//! - INDENTATION: an unexpected indent, an unindent that matches no outer level (only when one
//!   level is nearest), tabs mixed with spaces.
//! - IMPORT: `NameError: name 'json' is not defined` for a standard-library module, or for a name
//!   exactly one of the given files defines at its top level.
//! - LINTING: an unused import reported by ruff, flake8 or pylint.

use std::collections::BTreeMap;
use std::time::Instant;

use super::{HealFuture, HealRequest, HealResponse, Healer, validate};
use crate::api::heal_run::HealerOutcome;
use crate::api::shared::{BugReport, ErrorType};
use crate::parse::PYTHON_STDLIB_MODULES;

/// The built-in deterministic healer.
#[derive(Debug, Default, Clone, Copy)]
pub struct Builtin;

impl Healer for Builtin {
    fn name(&self) -> &'static str {
        "builtin"
    }

    fn heal<'a>(&'a self, request: &'a HealRequest) -> HealFuture<'a> {
        Box::pin(async move {
            let started = Instant::now();
            let reports: Vec<BugReport> = request.reports.iter().map(|r| r.report.clone()).collect();
            match fix(&request.failed_files, &reports) {
                Some((files, summary)) => match validate::validate(&files, &request.limits) {
                    Ok(files) => HealResponse {
                        outcome: HealerOutcome::Healed,
                        reason: None,
                        modified_files: files,
                        changes_summary: Some(summary),
                        confidence: 1.0,
                        duration: started.elapsed(),
                        tokens_used: None,
                        answered_by: None,
                    },
                    Err(e) => HealResponse::failed(HealerOutcome::Error, e, started.elapsed()),
                },
                None => HealResponse::failed(
                    HealerOutcome::Error,
                    "no deterministic fixer applies to these bug reports",
                    started.elapsed(),
                ),
            }
        })
    }
}

/// Applies every fixer that is sure of itself; returns the changed files and a summary.
pub fn fix(files: &BTreeMap<String, String>, reports: &[BugReport]) -> Option<(BTreeMap<String, String>, String)> {
    let mut changed: BTreeMap<String, String> = BTreeMap::new();
    let mut summaries: Vec<String> = Vec::new();
    // Bottom-up, so that a fix that removes a line leaves the line numbers above it true; a
    // missing import (which adds a line at the top) comes last.
    let mut ordered: Vec<&BugReport> = reports.iter().collect();
    ordered.sort_by_key(|r| (r.error_type == ErrorType::Import, std::cmp::Reverse(r.line_number)));
    for report in ordered {
        let Some(original) = changed.get(&report.file_path).or_else(|| files.get(&report.file_path)) else {
            continue;
        };
        let fixed = fix_one(original, report).or_else(|| missing_project_import(files, report, original));
        if let Some((content, summary)) = fixed {
            if !summaries.contains(&summary) {
                summaries.push(summary);
            }
            changed.insert(report.file_path.clone(), content);
        }
    }
    (!changed.is_empty()).then(|| (changed, summaries.join("; ")))
}

fn fix_one(content: &str, report: &BugReport) -> Option<(String, String)> {
    let message = report.message.as_str();
    let line = report.line_number as usize;
    match report.error_type {
        ErrorType::Syntax if message.contains("expected ':'") || message.contains("Expected `:`") => {
            missing_colon(content, line)
        }
        ErrorType::Indentation
            if message.contains("unexpected indent") || message.contains("Unexpected indentation") =>
        {
            unexpected_indent(content, line)
        }
        ErrorType::Indentation if message.contains("unindent does not match") => unindent_mismatch(content, line),
        ErrorType::Indentation if message.contains("inconsistent use of tabs") => mixed_tabs(content),
        ErrorType::Import if message.contains("NameError") => missing_stdlib_import(content, message),
        ErrorType::Linting
            if message.contains("imported but unused")
                || message.contains("Unused import")
                || message.contains("unused-import") =>
        {
            unused_import(content, line, message)
        }
        _ => None,
    }
}

/// Splits keeping line ends, so that unchanged lines are byte-for-byte the same.
fn lines(content: &str) -> Vec<&str> {
    content.split_inclusive('\n').collect()
}

fn body_and_end(line: &str) -> (&str, &str) {
    let body = line.trim_end_matches(['\n', '\r']);
    (body, &line[body.len()..])
}

fn indent_of(line: &str) -> &str {
    &line[..line.len() - line.trim_start_matches([' ', '\t']).len()]
}

const BLOCK_KEYWORDS: &[(&str, &str)] = &[
    ("async def ", "function definition"),
    ("def ", "function definition"),
    ("class ", "class definition"),
    ("if ", "if statement"),
    ("elif ", "elif clause"),
    ("else", "else clause"),
    ("for ", "for loop"),
    ("async for ", "for loop"),
    ("while ", "while loop"),
    ("try", "try statement"),
    ("except", "except clause"),
    ("finally", "finally clause"),
    ("with ", "with statement"),
    ("async with ", "with statement"),
    ("match ", "match statement"),
    ("case ", "case clause"),
];

fn missing_colon(content: &str, line: usize) -> Option<(String, String)> {
    let mut all = lines(content);
    let target = *all.get(line.checked_sub(1)?)?;
    let (body, end) = body_and_end(target);
    let code = body.trim();
    if code.ends_with(':') || code.contains('#') || code.is_empty() {
        return None;
    }
    let (_, what) = BLOCK_KEYWORDS
        .iter()
        .find(|(k, _)| code.starts_with(k) || code == k.trim())?;
    // A header that continues on the next line (open brackets) is not ours to finish.
    let opens = code.matches(['(', '[', '{']).count();
    let closes = code.matches([')', ']', '}']).count();
    if opens != closes {
        return None;
    }
    let fixed = format!("{}:{end}", body.trim_end());
    all[line - 1] = &fixed;
    Some((all.concat(), format!("Added missing colon after {what}")))
}

fn unexpected_indent(content: &str, line: usize) -> Option<(String, String)> {
    let all = lines(content);
    let target = *all.get(line.checked_sub(1)?)?;
    let previous = all[..line - 1].iter().rev().find(|l| !l.trim().is_empty())?;
    // After a block header the indent is expected; something else is wrong there.
    if previous.trim_end().ends_with(':') {
        return None;
    }
    let indent = indent_of(previous);
    let fixed = format!("{indent}{}", target.trim_start_matches([' ', '\t']));
    let mut out: Vec<String> = all.iter().map(|l| (*l).to_owned()).collect();
    out[line - 1] = fixed;
    Some((out.concat(), format!("Removed unexpected indentation on line {line}")))
}

fn unindent_mismatch(content: &str, line: usize) -> Option<(String, String)> {
    let all = lines(content);
    let target = *all.get(line.checked_sub(1)?)?;
    let current = indent_of(target).len();
    // The indentation levels open above this line.
    let mut levels: Vec<usize> = all[..line - 1]
        .iter()
        .filter(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
        .map(|l| indent_of(l).len())
        .collect();
    levels.sort_unstable();
    levels.dedup();
    let best = levels.iter().map(|&l| (l.abs_diff(current), l)).min()?;
    if levels.iter().filter(|&&l| l.abs_diff(current) == best.0).count() > 1 {
        return None; // two levels are as near: not sure which block the line belongs to
    }
    let fixed = format!("{}{}", " ".repeat(best.1), target.trim_start_matches([' ', '\t']));
    let mut out: Vec<String> = all.iter().map(|l| (*l).to_owned()).collect();
    out[line - 1] = fixed;
    Some((out.concat(), format!("Aligned line {line} with its enclosing block")))
}

fn mixed_tabs(content: &str) -> Option<(String, String)> {
    // The file's indentation unit: the smallest indent made of spaces, 4 when there is none.
    let unit = content
        .lines()
        .map(|l| l.len() - l.trim_start_matches(' ').len())
        .filter(|&n| n > 0)
        .min()
        .unwrap_or(4);
    let fixed: String = lines(content)
        .into_iter()
        .map(|l| {
            let indent = indent_of(l);
            if indent.contains('\t') {
                let width: usize = indent.chars().map(|c| if c == '\t' { unit } else { 1 }).sum();
                format!("{}{}", " ".repeat(width), &l[indent.len()..])
            } else {
                l.to_owned()
            }
        })
        .collect();
    (fixed != content).then(|| (fixed, format!("Replaced tabs with {unit} spaces in indentation")))
}

fn missing_stdlib_import(content: &str, message: &str) -> Option<(String, String)> {
    let name = message.split('\'').nth(1)?;
    if !PYTHON_STDLIB_MODULES.contains(&name) {
        return None;
    }
    let (with_import, _) = insert_import(content, &format!("import {name}\n"))?;
    Some((with_import, format!("Added missing import of {name}")))
}

/// Inserts `import_line` after the module docstring and the last top-level import; `None` when
/// the file already has that line.
fn insert_import(content: &str, import_line: &str) -> Option<(String, usize)> {
    let all = lines(content);
    if all.iter().any(|l| l.trim() == import_line.trim()) {
        return None;
    }
    let mut insert_at = 0;
    let mut in_docstring = false;
    for (i, l) in all.iter().enumerate() {
        let t = l.trim();
        if i == 0 && (t.starts_with("\"\"\"") || t.starts_with("'''")) {
            in_docstring = !(t.len() > 3 && (t.ends_with("\"\"\"") || t.ends_with("'''")));
            insert_at = i + 1;
            continue;
        }
        if in_docstring {
            if t.ends_with("\"\"\"") || t.ends_with("'''") {
                in_docstring = false;
            }
            insert_at = i + 1;
            continue;
        }
        if l.starts_with("import ") || l.starts_with("from ") {
            insert_at = i + 1;
        }
    }
    let mut out: Vec<String> = all.iter().map(|l| (*l).to_owned()).collect();
    out.insert(insert_at, import_line.to_owned());
    Some((out.concat(), insert_at))
}

/// `NameError: name 'total' is not defined` where exactly one of the given files defines `total`
/// at its top level: import it from that module.
fn missing_project_import(
    files: &BTreeMap<String, String>,
    report: &BugReport,
    content: &str,
) -> Option<(String, String)> {
    if report.error_type != ErrorType::Import || !report.message.contains("NameError") {
        return None;
    }
    let name = report.message.split('\'').nth(1)?;
    let defines = |text: &str| {
        text.lines().any(|l| {
            l.strip_prefix("def ")
                .or_else(|| l.strip_prefix("async def "))
                .or_else(|| l.strip_prefix("class "))
                .is_some_and(|rest| rest.strip_prefix(name).is_some_and(|r| r.starts_with(['(', ':'])))
                || l.strip_prefix(name)
                    .is_some_and(|r| r.trim_start().starts_with('=') && !r.trim_start().starts_with("=="))
        })
    };
    let mut definers = files
        .iter()
        .filter(|(path, text)| **path != report.file_path && path.ends_with(".py") && defines(text));
    let (path, _) = definers.next()?;
    if definers.next().is_some() {
        return None; // defined in two modules: not sure which one is meant
    }
    let module = path
        .trim_end_matches(".py")
        .trim_end_matches("/__init__")
        .replace('/', ".");
    let line = format!("from {module} import {name}\n");
    let (with_import, _) = insert_import(content, &line)?;
    Some((with_import, format!("Added missing import of {name} from {module}")))
}

fn unused_import(content: &str, line: usize, message: &str) -> Option<(String, String)> {
    // The module name: `os` in "`os` imported but unused", "'os' imported but unused",
    // "Unused import os".
    let name = message
        .split(['`', '\''])
        .nth(1)
        .filter(|n| !n.is_empty())
        .or_else(|| {
            message
                .split("Unused import ")
                .nth(1)
                .and_then(|r| r.split_whitespace().next())
        })?;
    let all = lines(content);
    let target = *all.get(line.checked_sub(1)?)?;
    let (body, end) = body_and_end(target);
    let code = body.trim();
    if code.contains('#') || code.contains('(') || code.ends_with('\\') {
        return None;
    }
    let indent = indent_of(body);
    let replacement = if let Some(names) = code.strip_prefix("import ") {
        let kept: Vec<&str> = names
            .split(',')
            .map(str::trim)
            .filter(|n| *n != name && n.split(" as ").next() != Some(name))
            .collect();
        if kept.len() == names.split(',').count() {
            return None;
        }
        (!kept.is_empty()).then(|| format!("{indent}import {}{end}", kept.join(", ")))
    } else if let Some((module, names)) = code.strip_prefix("from ").and_then(|r| r.split_once(" import ")) {
        let short = name.rsplit('.').next().unwrap_or(name);
        let kept: Vec<&str> = names
            .split(',')
            .map(str::trim)
            .filter(|n| *n != short && n.split(" as ").nth(1) != Some(short))
            .collect();
        if kept.len() == names.split(',').count() {
            return None;
        }
        (!kept.is_empty()).then(|| format!("{indent}from {module} import {}{end}", kept.join(", ")))
    } else {
        return None;
    };
    let mut out: Vec<String> = all.iter().map(|l| (*l).to_owned()).collect();
    match replacement {
        Some(r) => out[line - 1] = r,
        None => {
            out.remove(line - 1);
        }
    }
    Some((out.concat(), format!("Removed unused import of {name}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(t: ErrorType, line: u32, message: &str) -> BugReport {
        BugReport {
            file_path: "a.py".into(),
            line_number: line,
            error_type: t,
            message: message.into(),
            test_name: None,
            confidence_score: None,
        }
    }

    fn fixed(content: &str, r: BugReport) -> Option<String> {
        fix(&BTreeMap::from([("a.py".to_owned(), content.to_owned())]), &[r]).map(|(f, _)| f["a.py"].clone())
    }

    #[test]
    fn a_fixer_that_is_not_sure_does_not_guess() {
        // Two outer levels (4 and 8) are as near to 6.
        let src = "def f(v):\n    if v:\n        x = 1\n      return x\n";
        assert_eq!(
            fixed(
                src,
                report(
                    ErrorType::Indentation,
                    4,
                    "IndentationError: unindent does not match any outer indentation level"
                )
            ),
            None
        );
        // A header with a comment, an unknown module, a header split over lines.
        assert_eq!(
            fixed(
                "def f(a)  # note\n",
                report(ErrorType::Syntax, 1, "SyntaxError: expected ':'")
            ),
            None
        );
        assert_eq!(
            fixed(
                "x = yaml.load(1)\n",
                report(ErrorType::Import, 1, "NameError: name 'yaml' is not defined")
            ),
            None
        );
        assert_eq!(
            fixed(
                "def f(a,\n      b)\n",
                report(ErrorType::Syntax, 1, "SyntaxError: expected ':'")
            ),
            None
        );
    }
}
