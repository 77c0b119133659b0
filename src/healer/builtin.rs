//! Tier-1 deterministic fixers: no LLM, confidence 1.0, each chosen by a bug report's type and
//! message. A fixer that is not sure does not guess: it returns nothing and the cycle goes on to
//! another healer (or ends).
//!
//! - SYNTAX `expected ':'`: add the colon a Python block header is missing.
//! - INDENTATION: an unexpected indent, an unindent that matches no outer level (the open levels
//!   just below and above the line are tried and those that make the module compile are kept —
//!   Ruff's parser and the compiler's scope rules decide; of two, the strictly nearer one), tabs
//!   mixed with spaces.
//! - IMPORT: `NameError: name 'json' is not defined` for a standard-library module the file uses
//!   as `json.…`, or for a name exactly one of the given files defines at its top level. The
//!   import goes into the module's import header (where the gate accepts it), in alphabetical
//!   place among the plain `import x` lines when they are sorted.
//! - LINTING: an unused import reported by ruff, flake8 or pylint.

use std::collections::BTreeMap;
use std::time::Instant;

use super::compiles::compiles;
use super::{HealFuture, HealRequest, HealResponse, Healer, validate};
use crate::api::heal_run::HealerOutcome;
use crate::api::shared::{BugReport, ErrorType};
use crate::core::gate::import_header_end;
use crate::parse::PYTHON_STDLIB_MODULES;

/// The built-in deterministic healer.
#[derive(Debug, Default, Clone, Copy)]
pub struct Builtin;

impl Healer for Builtin {
    fn name(&self) -> &'static str {
        "builtin"
    }

    fn deterministic(&self) -> bool {
        true
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
    let indent = indent_of(target);
    if indent.contains('\t') {
        return None; // tabs: the tab fixer's
    }
    let current = indent.len();
    let levels = open_levels(&all[..line - 1]);
    let below = levels.iter().rev().find(|&&l| l < current);
    let above = levels.iter().find(|&&l| l > current);
    let realigned = |width: usize| {
        let mut out: Vec<String> = all.iter().map(|l| (*l).to_owned()).collect();
        out[line - 1] = format!("{}{}", " ".repeat(width), &target[indent.len()..]);
        out.concat()
    };
    let candidates: Vec<(usize, String)> = [below, above]
        .into_iter()
        .flatten()
        .map(|&width| (width, realigned(width)))
        .collect();
    // The candidates that make the module compile; when none does (another error elsewhere),
    // all of them, as nothing tells them apart.
    let compiling: Vec<&(usize, String)> = candidates.iter().filter(|(_, text)| compiles(text)).collect();
    let kept: Vec<&(usize, String)> = if compiling.is_empty() {
        candidates.iter().collect()
    } else {
        compiling
    };
    let distance = |candidate: &&(usize, String)| candidate.0.abs_diff(current);
    let nearest = kept.iter().map(distance).min()?;
    let mut nearest_ones = kept.iter().filter(|c| distance(c) == nearest);
    let (_, fixed) = nearest_ones.next()?;
    if nearest_ones.next().is_some() {
        return None; // two levels are as near and both compile: not sure which block it is in
    }
    Some((fixed.clone(), format!("Aligned line {line} with its enclosing block")))
}

/// The indentation widths of the blocks open after `before` (the module's 0 first): the
/// indentation stack of Python's tokenizer, read from the lines that start a statement (not
/// those inside brackets, strings or after a backslash, nor blank and comment lines).
fn open_levels(before: &[&str]) -> Vec<usize> {
    let mut levels = vec![0];
    let mut depth = 0i32;
    let mut string: Option<(char, bool)> = None; // its quote, and whether it is triple-quoted
    let mut continued = false;
    for line in before {
        let code = line.trim_start_matches([' ', '\t']);
        let starts_statement = depth == 0 && string.is_none() && !continued;
        if starts_statement && !code.trim().is_empty() && !code.starts_with('#') {
            let width = line.len() - code.len();
            while levels.last().is_some_and(|&l| l > width) {
                levels.pop();
            }
            if levels.last().is_some_and(|&l| l < width) {
                levels.push(width);
            }
        }
        let chars: Vec<char> = line.trim_end_matches(['\n', '\r']).chars().collect();
        let mut i = 0;
        let mut comment = false;
        while i < chars.len() {
            let c = chars[i];
            match string {
                Some((quote, triple)) => {
                    if c == '\\' {
                        i += 1;
                    } else if c == quote
                        && (!triple || (chars.get(i + 1) == Some(&quote) && chars.get(i + 2) == Some(&quote)))
                    {
                        string = None;
                        if triple {
                            i += 2;
                        }
                    }
                }
                None => match c {
                    '#' => {
                        comment = true;
                        break;
                    }
                    '"' | '\'' => {
                        let triple = chars.get(i + 1) == Some(&c) && chars.get(i + 2) == Some(&c);
                        string = Some((c, triple));
                        if triple {
                            i += 2;
                        }
                    }
                    '(' | '[' | '{' => depth += 1,
                    ')' | ']' | '}' => depth = (depth - 1).max(0),
                    _ => {}
                },
            }
            i += 1;
        }
        // A string in one quote ends with its line.
        if string.is_some_and(|(_, triple)| !triple) {
            string = None;
        }
        continued = string.is_none() && !comment && chars.last() == Some(&'\\');
    }
    levels
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
    if PYTHON_STDLIB_MODULES.binary_search(&name).is_err() || !used_as_module(content, name) {
        return None;
    }
    let with_import = insert_import(content, &format!("import {name}"))?;
    Some((with_import, format!("Added missing import of {name}")))
}

/// Whether `content` uses `name` as a module somewhere: `name.attribute`, with `name` not after a
/// dot nor the end of a longer name. (A variable that happens to be called `string` is not a
/// module to import.)
fn used_as_module(content: &str, name: &str) -> bool {
    content.match_indices(name).any(|(at, _)| {
        let before = content[..at].chars().next_back();
        let after = &content[at + name.len()..];
        !before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '.')
            && after
                .strip_prefix('.')
                .is_some_and(|rest| rest.starts_with(|c: char| c.is_alphabetic() || c == '_'))
    })
}

/// Inserts the statement `import_line` into the module's import header — the part that
/// [`import_header_end`] ends, where the gate accepts an import added for an import error however
/// far it is from the reported line: `import x` among the header's first run of one-line
/// `import …` statements, in alphabetical place when that run is sorted and after it when not;
/// anything else after the header's last import; at the end of the header when it has no
/// import. `None` when the file already has that statement.
fn insert_import(content: &str, import_line: &str) -> Option<String> {
    let all = lines(content);
    if all.iter().any(|l| l.trim() == import_line) {
        return None;
    }
    let header = import_header_end(content).min(all.len());
    // The header's top-level import statements, as (first line, last line).
    let mut statements: Vec<(usize, usize)> = Vec::new();
    let mut i = 0;
    while i < header {
        if all[i].starts_with("import ") || all[i].starts_with("from ") {
            let first = i;
            let mut depth = 0;
            loop {
                depth += all[i].matches(['(', '[', '{']).count() as i64;
                depth -= all[i].matches([')', ']', '}']).count() as i64;
                if depth <= 0 || i + 1 >= header {
                    break;
                }
                i += 1;
            }
            statements.push((first, i));
        }
        i += 1;
    }
    let at = import_line
        .strip_prefix("import ")
        .and_then(|module| place_among_plain_imports(&all, &statements, module))
        .or_else(|| statements.last().map(|&(_, last)| last + 1))
        .unwrap_or(header);
    let newline = if all.first().is_some_and(|l| l.ends_with("\r\n")) {
        "\r\n"
    } else {
        "\n"
    };
    let mut out: Vec<String> = all.iter().map(|l| (*l).to_owned()).collect();
    if let Some(previous) = at.checked_sub(1).and_then(|p| out.get_mut(p))
        && !previous.ends_with('\n')
    {
        previous.push_str(newline);
    }
    out.insert(at, format!("{import_line}{newline}"));
    Some(out.concat())
}

/// Where `import module` goes in the first run of consecutive one-line `import …` statements
/// among `statements`: its alphabetical place when the run is sorted, else after the run. `None`
/// when there is no such run.
fn place_among_plain_imports(all: &[&str], statements: &[(usize, usize)], module: &str) -> Option<usize> {
    let plain = |&(first, last): &(usize, usize)| first == last && all[first].starts_with("import ");
    let start = statements.iter().position(plain)?;
    let mut run = vec![statements[start].0];
    for statement in &statements[start + 1..] {
        if !plain(statement) || statement.0 != run[run.len() - 1] + 1 {
            break;
        }
        run.push(statement.0);
    }
    let key = |line: &str| line["import ".len()..].trim().to_ascii_lowercase();
    let after_run = run[run.len() - 1] + 1;
    if !run.windows(2).all(|w| key(all[w[0]]) <= key(all[w[1]])) {
        return Some(after_run);
    }
    let wanted = module.to_ascii_lowercase();
    Some(run.into_iter().find(|&l| key(all[l]) > wanted).unwrap_or(after_run))
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
    let with_import = insert_import(content, &format!("from {module} import {name}"))?;
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

    const UNINDENT: &str = "IndentationError: unindent does not match any outer indentation level";

    #[test]
    fn of_two_equally_near_levels_the_one_that_compiles_is_kept() {
        // 4 would put `return` in the class body, which does not compile; 8 ends the method.
        let src = "class Cache:\n    def get(self, key):\n        value = self.data[key]\n      return value\n\n    def put(self):\n        pass\n";
        assert_eq!(
            fixed(src, report(ErrorType::Indentation, 4, UNINDENT)).as_deref(),
            Some(src.replace("      return", "        return").as_str())
        );
        // 4 would leave the next line indented after a plain statement: it does not parse.
        let src = "def f(v):\n    if v:\n        x = 1\n      y = 2\n        return x\n";
        assert_eq!(
            fixed(src, report(ErrorType::Indentation, 4, UNINDENT)).as_deref(),
            Some(src.replace("      y", "        y").as_str())
        );
        // A level inside brackets or a string above is no level; 5 is nearer 4 than 8.
        let src = "def f(v):\n    x = (1,\n          2)\n    s = \"\"\"\n  text\n\"\"\"\n     return x\n";
        assert_eq!(
            fixed(src, report(ErrorType::Indentation, 7, UNINDENT)).as_deref(),
            Some(src.replace("     return", "    return").as_str())
        );
    }

    #[test]
    fn a_missing_import_goes_into_the_import_header_in_its_place() {
        let name_error = |name: &str, line: u32| {
            report(
                ErrorType::Import,
                line,
                &format!("NameError: name '{name}' is not defined"),
            )
        };
        // Dunders before the imports (PEP 8), a sorted run: in alphabetical place.
        let src = "\"\"\"Doc.\"\"\"\n\n__all__ = (\n    \"a\",\n)\n\nimport collections\nimport functools\nimport random\n\nfrom . import keys\n\n\ndef f(h):\n    return heapq.heappop(h)\n";
        assert_eq!(
            fixed(src, name_error("heapq", 15)).as_deref(),
            Some(src.replace("import random\n", "import heapq\nimport random\n").as_str())
        );
        // A run that is not sorted: after it. An import far below the header stays where it is.
        let src = "from functools import reduce\nimport sys\nimport inspect\nfrom operator import not_\n\nPYPY = os.name\n\nfrom . import late\n";
        assert_eq!(
            fixed(src, name_error("os", 6)).as_deref(),
            Some(src.replace("import inspect\n", "import inspect\nimport os\n").as_str())
        );
        // No plain import: after the header's last top-level import (a `try:` block of imports
        // below it is part of the header, and stays after it).
        let src = "from a import (\n    b,\n)\ntry:\n    from threading import RLock\nexcept ImportError:\n    RLock = None\n\nx = time.monotonic()\n";
        assert_eq!(
            fixed(src, name_error("time", 9)).as_deref(),
            Some(src.replace(")\ntry:", ")\nimport time\ntry:").as_str())
        );
        // A file without a final newline, and one without any import.
        assert_eq!(
            fixed("\"\"\"Uses re.compile.\"\"\"\nimport os", name_error("re", 1)).as_deref(),
            Some("\"\"\"Uses re.compile.\"\"\"\nimport os\nimport re\n")
        );
        assert_eq!(
            fixed("\"\"\"Doc.\"\"\"\nx = math.pi\n", name_error("math", 2)).as_deref(),
            Some("\"\"\"Doc.\"\"\"\nimport math\nx = math.pi\n")
        );
    }

    #[test]
    fn a_standard_module_name_that_the_file_does_not_use_as_a_module_is_not_imported() {
        let src = "def f():\n    return string + code.upper()\n";
        let error = |name: &str| {
            report(
                ErrorType::Import,
                2,
                &format!("NameError: name '{name}' is not defined"),
            )
        };
        assert_eq!(fixed(src, error("string")), None);
        assert!(fixed(src, error("code")).is_some_and(|f| f.starts_with("import code\n")));
    }

    #[test]
    fn the_standard_library_list_is_sorted() {
        assert!(PYTHON_STDLIB_MODULES.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn a_fixer_that_is_not_sure_does_not_guess() {
        // Two outer levels (4 and 8) are as near to 6, and both compile.
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
