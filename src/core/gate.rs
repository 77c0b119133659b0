//! The gate (seed 001 and 002 constraints), before anything is committed: confidence, the number
//! of files, allowed and protected paths, test files, new dependencies, and hunks far from every
//! reported line (no refactoring). A rejected patch is recorded with all of its reasons.

use std::collections::BTreeMap;

use similar::{DiffOp, TextDiff};

use crate::api::heal_run::{FileChange, GateVerdict, HealPolicy};
use crate::api::shared::{BugReport, ErrorType};
pub use crate::parse::paths::is_test_file;

/// Files whose new lines add dependencies.
const MANIFESTS: &[&str] = &[
    "requirements",
    "pyproject.toml",
    "setup.py",
    "setup.cfg",
    "Pipfile",
    "package.json",
    "Cargo.toml",
    "go.mod",
];

/// Whether `path` is one of `allowed` (files) or below one of them (folders, ending in `/`).
pub fn allowed(path: &str, allowed: &[String]) -> bool {
    allowed.is_empty()
        || allowed.iter().any(|a| {
            let a = a.trim_start_matches("./");
            if a.ends_with('/') {
                path.starts_with(a)
            } else {
                path == a || path.starts_with(&format!("{a}/"))
            }
        })
}

fn is_manifest(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    MANIFESTS.iter().any(|m| name.starts_with(m))
}

/// Lines added and removed per file between `before` and `after`.
pub fn changes(before: &BTreeMap<String, String>, after: &BTreeMap<String, String>) -> Vec<FileChange> {
    after
        .iter()
        .map(|(path, new)| {
            let old = before.get(path).map(String::as_str).unwrap_or("");
            let diff = TextDiff::from_lines(old, new);
            let (mut added, mut removed) = (0u32, 0u32);
            for op in diff.ops() {
                match *op {
                    DiffOp::Insert { new_len, .. } => added += new_len as u32,
                    DiffOp::Delete { old_len, .. } => removed += old_len as u32,
                    DiffOp::Replace { old_len, new_len, .. } => {
                        added += new_len as u32;
                        removed += old_len as u32;
                    }
                    DiffOp::Equal { .. } => {}
                }
            }
            FileChange {
                path: path.clone(),
                added,
                removed,
            }
        })
        .filter(|c| c.added + c.removed > 0)
        .collect()
}

/// The gate's verdict on replacing `before` with `after` (full contents, by path).
pub fn check(
    policy: &HealPolicy,
    confidence: f64,
    reports: &[BugReport],
    before: &BTreeMap<String, String>,
    after: &BTreeMap<String, String>,
) -> GateVerdict {
    let mut reasons = Vec::new();
    if confidence < policy.confidence_threshold {
        reasons.push(format!(
            "confidence {confidence:.2} is below the threshold {:.2}",
            policy.confidence_threshold
        ));
    }
    let changed = changes(before, after);
    if changed.is_empty() {
        reasons.push("the patch changes nothing".into());
    }
    if changed.len() > policy.max_files_changed as usize {
        reasons.push(format!(
            "{} files changed; at most {} are allowed",
            changed.len(),
            policy.max_files_changed
        ));
    }
    for change in &changed {
        let path = change.path.as_str();
        if !allowed(path, &policy.allowed_paths) {
            reasons.push(format!("{path} is outside the allowed paths"));
        }
        if !policy.protected_paths.is_empty() && allowed(path, &policy.protected_paths) {
            reasons.push(format!("{path} is protected"));
        }
        if is_test_file(path) && !policy.allow_test_changes {
            reasons.push(format!("{path} is a test file; a fix must not change tests"));
        }
        let old = before.get(path).map(String::as_str).unwrap_or("");
        let new = &after[path];
        if policy.no_new_dependencies && is_manifest(path) && change.added > 0 {
            reasons.push(format!(
                "{path} is a dependency manifest and the patch adds lines to it; new dependencies are not allowed"
            ));
        }
        // Every changed region must lie within the change window of a reported line. A file no
        // report names (the code under a failing assertion, which pytest reports in the test)
        // may change only as much as one window: a small fix, not a rewrite.
        let lines: Vec<u32> = reports
            .iter()
            .filter(|r| r.file_path == path)
            .map(|r| r.line_number)
            .collect();
        let window = policy.change_window_lines;
        if lines.is_empty() {
            let budget = 2 * window + 1;
            if change.added.max(change.removed) > budget {
                reasons.push(format!(
                    "{path} has no reported line and the patch changes {} lines of it; at most {budget} (no refactoring)",
                    change.added.max(change.removed)
                ));
            }
            continue;
        }
        let import_error = reports
            .iter()
            .any(|r| r.file_path == path && r.error_type == ErrorType::Import);
        let header = import_header_end(old);
        let new_lines: Vec<&str> = new.split_inclusive('\n').collect();
        for op in TextDiff::from_lines(old, new).ops() {
            // For an import error, adding import statements in the module's import header is the
            // minimal fix seed 001 asks for, however far the header is from the reported line.
            if import_error
                && let DiffOp::Insert {
                    old_index,
                    new_index,
                    new_len,
                } = *op
                && old_index <= header
                && new_lines[new_index..new_index + new_len]
                    .iter()
                    .all(|l| is_import(l) || l.trim().is_empty())
            {
                continue;
            }
            let (start, len) = match *op {
                DiffOp::Equal { .. } => continue,
                DiffOp::Delete { old_index, old_len, .. } => (old_index, old_len),
                DiffOp::Insert { old_index, .. } => (old_index, 0),
                DiffOp::Replace { old_index, old_len, .. } => (old_index, old_len),
            };
            // 1-based old lines touched; an insertion sits between old_index and old_index+1.
            let first = start as u32 + 1;
            let last = (start + len.max(1)) as u32;
            let near = lines.iter().any(|&l| l + window >= first && l <= last + window);
            if !near {
                reasons.push(format!(
                    "{path} lines {first}-{last} are more than {window} lines from every reported line (no refactoring)"
                ));
                break;
            }
        }
    }
    GateVerdict {
        accepted: reasons.is_empty(),
        reasons,
    }
}

/// Whether `line` is a top-level Python import statement.
fn is_import(line: &str) -> bool {
    (line.starts_with("import ") || line.starts_with("from ") && line.contains(" import "))
        && !line.trim_end().ends_with('\\')
}

/// The 0-based index of the first line after a Python module's import header: its docstring,
/// comments, blank lines, `__future__` and import statements (a multi-line `from x import (…)`
/// included), `try:` / `except ImportError:` blocks around imports, and the module-level dunders
/// (`__all__`, `__version__`, …) that PEP 8 puts between the docstring and the imports. The
/// built-in import fixer inserts within this header, so the two agree on where it ends.
pub fn import_header_end(text: &str) -> usize {
    let lines: Vec<&str> = text.lines().collect();
    let mut i = 0;
    let mut end = 0;
    let mut in_docstring: Option<&str> = None;
    while i < lines.len() {
        let line = lines[i];
        let trimmed = line.trim();
        if let Some(quote) = in_docstring {
            if trimmed.contains(quote) {
                in_docstring = None;
                end = i + 1;
            }
            i += 1;
            continue;
        }
        if i == end && (trimmed.starts_with("\"\"\"") || trimmed.starts_with("'''")) {
            let quote = &trimmed[..3];
            if trimmed.len() < 6 || !trimmed[3..].contains(quote) {
                in_docstring = Some(quote);
            } else {
                end = i + 1;
            }
            i += 1;
            continue;
        }
        if trimmed.is_empty() || trimmed.starts_with('#') {
            i += 1;
            continue;
        }
        if is_import(line) || is_dunder_assignment(line) {
            // A statement over several lines: to its closing bracket.
            let mut depth = 0i32;
            while i < lines.len() {
                depth += bracket_balance(lines[i]);
                i += 1;
                if depth <= 0 {
                    break;
                }
            }
            end = i;
            continue;
        }
        if matches!(trimmed, "try:" | "else:") || trimmed.starts_with("except") || line.starts_with(char::is_whitespace)
        {
            i += 1;
            continue;
        }
        break;
    }
    end
}

/// `__all__ = (`, `__version__ = "1.0"`: a module-level dunder assignment.
fn is_dunder_assignment(line: &str) -> bool {
    let Some(rest) = line.strip_prefix("__") else {
        return false;
    };
    let name_end = rest
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(rest.len());
    let (name, after) = rest.split_at(name_end);
    name.len() > 2
        && name.ends_with("__")
        && after
            .trim_start()
            .strip_prefix(['=', ':'])
            .is_some_and(|r| !r.starts_with('='))
}

/// Opening minus closing brackets on a line, outside its strings and comment.
fn bracket_balance(line: &str) -> i32 {
    let mut balance = 0;
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for c in line.chars() {
        match quote {
            Some(q) => {
                if escaped {
                    escaped = false;
                } else if c == '\\' {
                    escaped = true;
                } else if c == q {
                    quote = None;
                }
            }
            None => match c {
                '#' => break,
                '"' | '\'' => quote = Some(c),
                '(' | '[' | '{' => balance += 1,
                ')' | ']' | '}' => balance -= 1,
                _ => {}
            },
        }
    }
    balance
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(path: &str, line: u32) -> BugReport {
        BugReport {
            file_path: path.into(),
            line_number: line,
            error_type: ErrorType::Syntax,
            message: "x".into(),
            test_name: None,
            confidence_score: None,
        }
    }

    fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect()
    }

    #[test]
    fn a_minimal_fix_near_the_reported_line_passes() {
        let before = map(&[("calc.py", "def add(a, b)\n    return a + b\n")]);
        let after = map(&[("calc.py", "def add(a, b):\n    return a + b\n")]);
        let v = check(&HealPolicy::default(), 1.0, &[report("calc.py", 1)], &before, &after);
        assert!(v.accepted, "{:?}", v.reasons);
    }

    #[test]
    fn a_file_no_report_names_may_change_only_a_little() {
        let before = map(&[("pricing.py", "def f(p):\n    return p * 1.2\n")]);
        let small = map(&[("pricing.py", "def f(p):\n    return p * 0.8\n")]);
        let reports = [report("test_pricing.py", 5)];
        assert!(check(&HealPolicy::default(), 0.9, &reports, &before, &small).accepted);
        let rewrite: String = (0..20).map(|i| format!("line{i}\n")).collect();
        let big = map(&[("pricing.py", rewrite.as_str())]);
        let v = check(&HealPolicy::default(), 0.9, &reports, &before, &big);
        assert!(
            v.reasons.iter().any(|r| r.contains("has no reported line")),
            "{:?}",
            v.reasons
        );
    }

    #[test]
    fn for_an_import_error_an_import_added_to_the_header_passes_however_far_it_is() {
        let body: String = (1..=40).map(|i| format!("x{i} = {i}\n")).collect();
        let old = format!(
            "\"\"\"Module.\"\"\"\n\nimport os\nfrom typing import (\n    Any,\n)\n\n{body}y = json.dumps(x1)\n"
        );
        let new = old.replace("import os\n", "import json\nimport os\n");
        let before = map(&[("m.py", &old)]);
        let after = map(&[("m.py", &new)]);
        let mut name_error = report("m.py", 48);
        name_error.error_type = ErrorType::Import;
        name_error.message = "NameError: name 'json' is not defined".into();
        let v = check(
            &HealPolicy::default(),
            1.0,
            std::slice::from_ref(&name_error),
            &before,
            &after,
        );
        assert!(v.accepted, "{:?}", v.reasons);
        // Anything else far from the line is still refused, and so is the same change for a bug
        // that is not an import error.
        let also = new.replace("x3 = 3", "x3 = 4");
        let v = check(
            &HealPolicy::default(),
            1.0,
            &[name_error],
            &before,
            &map(&[("m.py", &also)]),
        );
        assert!(!v.accepted);
        let v = check(&HealPolicy::default(), 1.0, &[report("m.py", 48)], &before, &after);
        assert!(!v.accepted);
    }

    #[test]
    fn the_import_header_ends_at_the_first_statement() {
        assert_eq!(import_header_end("import a\nimport b\n\nx = 1\n"), 2);
        assert_eq!(
            import_header_end("\"\"\"Doc\nmore.\n\"\"\"\nfrom a import (\n  b,\n)\nx = 1\n"),
            6
        );
        assert_eq!(
            import_header_end(
                "try:\n    import ujson\nexcept ImportError:\n    ujson = None\nimport os\ndef f(): pass\n"
            ),
            5
        );
        assert_eq!(import_header_end("x = 1\nimport os\n"), 0);
    }

    #[test]
    fn the_module_dunders_pep_8_puts_before_the_imports_are_part_of_the_header() {
        let module = "\"\"\"Doc.\"\"\"\n\n__all__ = (\n    \"Cache\",  # )\n    \")\",\n)\n\n__version__ = \"5.5.0\"\n\nimport collections\nimport random\n\nclass Cache:\n    __slots__ = ()\n";
        assert_eq!(import_header_end(module), 11);
        assert_eq!(import_header_end("__all__: list[str] = []\nimport os\n"), 2);
        // Not dunders: a comparison, a private name, an augmented assignment.
        for text in [
            "__all__ == x\nimport os\n",
            "_x_ = 1\nimport os\n",
            "__all__ += []\nimport os\n",
        ] {
            assert_eq!(import_header_end(text), 0, "{text}");
        }
    }

    #[test]
    fn every_broken_limit_is_a_reason() {
        let long: String = (1..=40).map(|i| format!("x{i} = {i}\n")).collect();
        let far = long.replace("x30 = 30", "x30 = 31");
        let before = map(&[
            ("app.py", &long),
            ("tests/test_app.py", "assert True\n"),
            ("requirements.txt", "flask\n"),
        ]);
        let after = map(&[
            ("app.py", &far),
            ("tests/test_app.py", "\n"),
            ("requirements.txt", "flask\nrequests\n"),
        ]);
        let policy = HealPolicy {
            max_files_changed: 2,
            protected_paths: vec!["requirements.txt".into()],
            ..HealPolicy::default()
        };
        let v = check(&policy, 0.3, &[report("app.py", 2)], &before, &after);
        assert!(!v.accepted);
        let all = v.reasons.join("\n");
        for expected in [
            "below the threshold",
            "3 files changed",
            "is protected",
            "test file",
            "new dependencies",
            "no refactoring",
        ] {
            assert!(all.contains(expected), "{expected} missing from:\n{all}");
        }
    }
}
