//! Which of the repository's files a healer is sent: the files the bug reports name, the project
//! modules those files import, and — for a name that is not defined — the project module that
//! defines it. Never files from vendored, installed or generated folders (a `.venv/` holds
//! thousands of modules that are not the project's), never more than [`MAX_FILES`].

use std::collections::BTreeSet;
use std::sync::LazyLock;

use regex::Regex;

use crate::api::shared::BugReport;

/// Most files one request carries.
pub const MAX_FILES: usize = 20;
/// Largest file sent because a report names it.
pub const MAX_REPORTED_FILE: u64 = 1024 * 1024;
/// Largest file sent as context (an import, a definition).
pub const MAX_CONTEXT_FILE: u64 = 64 * 1024;

/// Folders whose files are never the project's own source.
const NOT_PROJECT: &[&str] = &[
    ".venv",
    "venv",
    ".env",
    "site-packages",
    "dist-packages",
    "node_modules",
    "bower_components",
    "vendor",
    "__pycache__",
    ".tox",
    ".nox",
    ".eggs",
    ".git",
    ".mypy_cache",
    ".pytest_cache",
    ".ruff_cache",
    "dist",
    "build",
    "target",
    ".kubeheal",
];

/// Whether `path` (repository-relative) lies in a vendored, installed or generated folder.
pub fn is_vendored(path: &str) -> bool {
    let mut parts: Vec<&str> = path.split('/').collect();
    parts.pop();
    parts
        .iter()
        .any(|p| NOT_PROJECT.contains(p) || p.ends_with(".egg-info") || p.ends_with(".dist-info"))
}

/// The files to send, in order: reported files first, then what they import, then definers of
/// names reported missing. `read` gives a file's text (bounded), `None` when it cannot or must
/// not be read.
pub fn select(
    reports: &[BugReport],
    tracked: &[String],
    read: &dyn Fn(&str, u64) -> Option<String>,
) -> Vec<(String, String)> {
    let project: BTreeSet<&str> = tracked.iter().map(String::as_str).filter(|p| !is_vendored(p)).collect();
    let mut chosen: Vec<(String, String)> = Vec::new();
    let take = |path: &str, limit: u64, chosen: &mut Vec<(String, String)>| {
        if chosen.len() < MAX_FILES
            && project.contains(path)
            && !chosen.iter().any(|(p, _)| p == path)
            && let Some(text) = read(path, limit)
        {
            chosen.push((path.to_owned(), text));
        }
    };
    for report in reports {
        take(&report.file_path, MAX_REPORTED_FILE, &mut chosen);
    }
    let reported = chosen.len();
    for i in 0..reported {
        let (path, text) = chosen[i].clone();
        for import in imports(&path, &text, &project) {
            take(&import, MAX_CONTEXT_FILE, &mut chosen);
        }
    }
    let names: Vec<&str> = reports.iter().filter_map(undefined_name).collect();
    if !names.is_empty() {
        for path in project.iter().filter(|p| p.ends_with(".py")) {
            if chosen.len() >= MAX_FILES {
                break;
            }
            if !chosen.iter().any(|(p, _)| p == path)
                && let Some(text) = read(path, MAX_CONTEXT_FILE)
                && names.iter().any(|name| defines(&text, name))
            {
                chosen.push(((*path).to_owned(), text));
            }
        }
    }
    chosen
}

/// `total` in `NameError: name 'total' is not defined`.
fn undefined_name(report: &BugReport) -> Option<&str> {
    let rest = report.message.split("name '").nth(1)?;
    let name = rest.split('\'').next()?;
    (report.message.contains("is not defined") && !name.is_empty()).then_some(name)
}

/// Whether a Python module defines `name` at its top level.
pub fn defines(text: &str, name: &str) -> bool {
    text.lines().any(|l| {
        let l = l.strip_prefix("async ").unwrap_or(l);
        l.strip_prefix("def ")
            .or_else(|| l.strip_prefix("class "))
            .is_some_and(|rest| rest.strip_prefix(name).is_some_and(|r| r.starts_with(['(', ':'])))
            || l.strip_prefix(name)
                .is_some_and(|r| r.trim_start().starts_with('=') && !r.trim_start().starts_with("=="))
    })
}

static PY_IMPORT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?m)^\s*(?:from\s+(\.*)([\w.]*)\s+import\s+([\w, ]+)|import\s+([\w., ]+))").expect("import regex")
});
static JS_IMPORT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"(?:from\s+|require\(\s*|import\(\s*|import\s+)["'](\.{1,2}/[^"']+)["']"#).expect("import regex")
});

/// The project files `path` imports (only those in `project`).
fn imports(path: &str, text: &str, project: &BTreeSet<&str>) -> Vec<String> {
    let dir = path.rsplit_once('/').map_or("", |(d, _)| d);
    let mut found = Vec::new();
    if path.ends_with(".py") {
        for c in PY_IMPORT.captures_iter(text) {
            let mut modules: Vec<String> = Vec::new();
            if let Some(names) = c.get(4) {
                modules.extend(
                    names
                        .as_str()
                        .split(',')
                        .map(|m| m.split_whitespace().next().unwrap_or("").to_owned()),
                );
            } else {
                let dots = c.get(1).map_or(0, |m| m.as_str().len());
                let module = c.get(2).map_or("", |m| m.as_str());
                let base = if dots == 0 {
                    module.replace('.', "/")
                } else {
                    let mut parts: Vec<&str> = dir.split('/').filter(|p| !p.is_empty()).collect();
                    for _ in 1..dots {
                        parts.pop();
                    }
                    parts.extend(module.split('.').filter(|p| !p.is_empty()));
                    parts.join("/")
                };
                modules.push(base.replace('/', "."));
                // `from pkg import module` imports a module too.
                for name in c.get(3).map_or("", |m| m.as_str()).split(',') {
                    let name = name.split_whitespace().next().unwrap_or("");
                    if !name.is_empty() {
                        modules.push(
                            format!("{}.{name}", base.replace('/', "."))
                                .trim_start_matches('.')
                                .to_owned(),
                        );
                    }
                }
            }
            for module in modules.iter().filter(|m| !m.is_empty()) {
                let file = module.replace('.', "/");
                // An absolute import is found from the root or from any folder on the way to
                // `path` (a `src/` layout, a test folder on sys.path).
                let mut roots = vec![String::new()];
                let mut prefix = String::new();
                for part in dir.split('/').filter(|p| !p.is_empty()) {
                    prefix = format!("{prefix}{part}/");
                    roots.push(prefix.clone());
                }
                roots.push("src/".into());
                for root in roots {
                    for candidate in [format!("{root}{file}.py"), format!("{root}{file}/__init__.py")] {
                        if project.contains(candidate.as_str()) && !found.contains(&candidate) {
                            found.push(candidate);
                        }
                    }
                }
            }
        }
    } else if [".js", ".mjs", ".cjs", ".ts", ".tsx", ".jsx"]
        .iter()
        .any(|e| path.ends_with(e))
    {
        for c in JS_IMPORT.captures_iter(text) {
            let joined = normalise(&format!("{dir}/{}", &c[1]));
            for ext in [
                "",
                ".js",
                ".ts",
                ".tsx",
                ".jsx",
                ".mjs",
                ".cjs",
                "/index.js",
                "/index.ts",
            ] {
                let candidate = format!("{joined}{ext}");
                if project.contains(candidate.as_str()) && !found.contains(&candidate) {
                    found.push(candidate);
                    break;
                }
            }
        }
    }
    found
}

/// `a/./b/../c` → `a/c` (a path that climbs above the root stays as it is, and matches nothing).
fn normalise(path: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                if parts.pop().is_none() {
                    return path.to_owned();
                }
            }
            p => parts.push(p),
        }
    }
    parts.join("/")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::shared::ErrorType;

    fn report(path: &str, message: &str) -> BugReport {
        BugReport {
            file_path: path.into(),
            line_number: 3,
            error_type: ErrorType::Import,
            message: message.into(),
            test_name: None,
            confidence_score: None,
        }
    }

    fn tree(files: &[(&str, &str)]) -> (Vec<String>, impl Fn(&str, u64) -> Option<String>) {
        let owned: Vec<(String, String)> = files.iter().map(|(p, t)| (p.to_string(), t.to_string())).collect();
        let tracked = owned.iter().map(|(p, _)| p.clone()).collect();
        (tracked, move |path: &str, _| {
            owned.iter().find(|(p, _)| p == path).map(|(_, t)| t.clone())
        })
    }

    #[test]
    fn a_virtualenv_never_crowds_out_the_file_with_the_bug() {
        let mut files: Vec<(String, String)> = (0..40)
            .map(|i| {
                (
                    format!(".venv/lib/python3.11/site-packages/a{i:02}.py"),
                    "x = 1\n".to_owned(),
                )
            })
            .collect();
        files.push(("zz/app.py".into(), "from zz.util import helper\nprint(total)\n".into()));
        files.push(("zz/util.py".into(), "def helper():\n    pass\n".into()));
        files.push(("zz/totals.py".into(), "total = 3\n".into()));
        files.push(("zz/unrelated.py".into(), "y = 2\n".into()));
        let refs: Vec<(&str, &str)> = files.iter().map(|(p, t)| (p.as_str(), t.as_str())).collect();
        let (tracked, read) = tree(&refs);
        let chosen = select(
            &[report("zz/app.py", "NameError: name 'total' is not defined")],
            &tracked,
            &read,
        );
        let paths: Vec<&str> = chosen.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(paths, ["zz/app.py", "zz/util.py", "zz/totals.py"]);
    }

    #[test]
    fn relative_and_package_imports_are_followed() {
        let (tracked, read) = tree(&[
            (
                "src/pkg/core.py",
                "from . import helpers\nfrom .models import Thing\nimport pkg.extra\n",
            ),
            ("src/pkg/helpers.py", ""),
            ("src/pkg/models/__init__.py", ""),
            ("src/pkg/extra.py", ""),
            (
                "web/app.js",
                "const a = require('./lib/a');\nimport b from '../shared/b';\n",
            ),
            ("web/lib/a.js", ""),
            ("shared/b.ts", ""),
        ]);
        let chosen = select(
            &[report("src/pkg/core.py", "x"), report("web/app.js", "y")],
            &tracked,
            &read,
        );
        let paths: Vec<&str> = chosen.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(
            paths,
            [
                "src/pkg/core.py",
                "web/app.js",
                "src/pkg/helpers.py",
                "src/pkg/models/__init__.py",
                "src/pkg/extra.py",
                "web/lib/a.js",
                "shared/b.ts"
            ]
        );
    }

    #[test]
    fn vendored_folders_are_recognised() {
        for path in [
            ".venv/x.py",
            "a/node_modules/b.js",
            "pkg.egg-info/x.py",
            "vendor/lib.go",
            "build/lib/x.py",
        ] {
            assert!(is_vendored(path), "{path}");
        }
        for path in ["venv.py", "app/models.py", "builder/x.py", "src/target.py"] {
            assert!(!is_vendored(path), "{path}");
        }
    }
}
