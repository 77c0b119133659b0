//! The gate (seed 001 and 002 constraints), before anything is committed: confidence, the number
//! of files, allowed and protected paths, test files, new dependencies, and hunks far from every
//! reported line (no refactoring). A rejected patch is recorded with all of its reasons.

use std::collections::BTreeMap;

use similar::{DiffOp, TextDiff};

use crate::api::heal_run::{FileChange, GateVerdict, HealPolicy};
use crate::api::shared::BugReport;
use crate::healer::validate::allowed;

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

/// Whether `path` is a test file by the usual conventions of the four ecosystems.
pub fn is_test_file(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    path.starts_with("tests/")
        || path.starts_with("test/")
        || path.contains("/tests/")
        || path.contains("/__tests__/")
        || (name.starts_with("test_") && name.ends_with(".py"))
        || name.ends_with("_test.py")
        || name.ends_with("_test.go")
        || name.contains(".test.")
        || name.contains(".spec.")
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
        for op in TextDiff::from_lines(old, new).ops() {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::shared::ErrorType;

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
