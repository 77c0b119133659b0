//! The parser's golden corpus as the parser tests read it: the cases of
//! `tests/fixtures/regenerate.sh` (name | project | command), each project's file list, and the
//! workspace the logs were made in.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use kubeheal::parse::{ParseOutput, Workspace};

pub fn fixtures() -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    // The fuzz crate (fuzz/, one folder down) reads the same corpus.
    let root = if manifest.ends_with("fuzz") {
        manifest.parent().unwrap_or(manifest)
    } else {
        manifest
    };
    root.join("tests/fixtures")
}

/// case name → project, from the table in regenerate.sh.
pub fn cases() -> BTreeMap<String, String> {
    let script = std::fs::read_to_string(fixtures().join("regenerate.sh")).expect("regenerate.sh is readable");
    table(&script, &fixtures().join("projects"))
}

/// The `name|project|command` rows of a case table whose project is a folder of `projects`.
pub fn table(script: &str, projects: &Path) -> BTreeMap<String, String> {
    script
        .lines()
        .filter_map(|l| {
            let mut parts = l.splitn(3, '|');
            let (name, project, _) = (parts.next()?, parts.next()?, parts.next()?);
            (!name.is_empty() && !name.contains(' ') && projects.join(project).is_dir())
                .then(|| (name.to_owned(), project.to_owned()))
        })
        .collect()
}

/// The files of a project folder, relative and with forward slashes.
pub fn project_files(root: &Path) -> Vec<String> {
    fn walk(dir: &Path, root: &Path, out: &mut Vec<String>) {
        for entry in std::fs::read_dir(dir).expect("project folder is readable").flatten() {
            let path = entry.path();
            if path.is_dir() {
                walk(&path, root, out);
            } else if let Ok(rel) = path.strip_prefix(root) {
                out.push(rel.to_string_lossy().replace('\\', "/"));
            }
        }
    }
    let mut files = Vec::new();
    walk(root, root, &mut files);
    files
}

/// Where each report points and what it is: the part of a report that a section before it must
/// not change (messages and test names may merge with an earlier report at the same place).
pub fn places(out: &ParseOutput) -> std::collections::BTreeSet<(String, u32, String)> {
    out.reports
        .iter()
        .map(|r| (r.file_path.clone(), r.line_number, format!("{:?}", r.error_type)))
        .collect()
}

/// A golden log with its workspace, parsed alone once: what a log printed before it must leave
/// as it is.
pub struct GoldenCase {
    pub name: String,
    pub log: String,
    pub workspace: Workspace,
    /// The places of the reports this log gives alone ([`places`]).
    pub alone: std::collections::BTreeSet<(String, u32, String)>,
    /// What its own bounds left out alone.
    pub left_out: usize,
}

/// Every golden case, its log read and parsed alone.
pub fn golden_cases() -> Vec<GoldenCase> {
    cases()
        .into_iter()
        .map(|(name, project)| {
            let log = read_log(&fixtures().join("logs"), &name);
            let workspace = workspace(&project);
            let parsed = kubeheal::parse::parse(&log, &workspace);
            GoldenCase {
                name,
                log,
                workspace,
                alone: places(&parsed),
                left_out: parsed.left_out,
            }
        })
        .collect()
}

/// The workspace a golden log was made in: regenerate.sh copies each project to this folder.
pub fn workspace(project: &str) -> Workspace {
    Workspace::new(format!("/tmp/kubeheal-fixtures/{project}"))
        .with_files(project_files(&fixtures().join("projects").join(project)))
}

/// A log as the parser reads it (bytes that are not UTF-8 become U+FFFD).
pub fn read_log(dir: &Path, case: &str) -> String {
    let log = std::fs::read(dir.join(format!("{case}.log"))).expect("the log exists");
    String::from_utf8_lossy(&log).into_owned()
}

/// The `n`th of many ruff findings under `dir`, `per_file` to a file, as an element of the array
/// `ruff check --output-format=json` prints: for logs whose structured section is large.
pub fn ruff_json_finding(n: u64, dir: &str, per_file: u64) -> String {
    format!(
        r#"  {{
    "cell": null,
    "code": "F401",
    "end_location": {{
      "column": 10,
      "row": {row}
    }},
    "filename": "{dir}/module_{file}.py",
    "fix": {{
      "applicability": "safe",
      "edits": [
        {{
          "content": "",
          "end_location": {{
            "column": 1,
            "row": {next}
          }},
          "location": {{
            "column": 1,
            "row": {row}
          }}
        }}
      ],
      "message": "Remove unused import: `os`"
    }},
    "location": {{
      "column": 8,
      "row": {row}
    }},
    "message": "`os` imported but unused",
    "name": "unused-import",
    "noqa_row": {row},
    "severity": "error",
    "url": "https://docs.astral.sh/ruff/rules/unused-import"
  }}"#,
        row = n % per_file + 1,
        next = n % per_file + 2,
        file = n / per_file,
    )
}
