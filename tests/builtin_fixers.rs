//! Each deterministic fixer on the real tool output it answers: the golden log of a broken fixture
//! project is parsed, the fixer rewrites the file, and the real tool then runs clean on a copy of
//! the project (python3 compiles it and pytest passes).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use kubeheal::healer::builtin::fix;
use kubeheal::parse::{Workspace, parse};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for entry in std::fs::read_dir(from).expect("readable").flatten() {
        let target = to.join(entry.file_name());
        if entry.path().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).expect("copy");
        }
    }
}

/// Parses `case`'s golden log, fixes `file` of `project` with the built-in fixers, writes the
/// result into a copy of the project, and returns the copy and the new content.
fn heal(case: &str, project: &str, file: &str) -> Option<(tempfile::TempDir, String, String)> {
    let log = std::fs::read_to_string(fixtures().join("logs").join(format!("{case}.log"))).expect("the log");
    let project_dir = fixtures().join("projects").join(project);
    let parsed = parse(&log, &Workspace::new(format!("/tmp/kubeheal-fixtures/{project}")));
    let original = std::fs::read_to_string(project_dir.join(file)).expect("the file");
    let files = BTreeMap::from([(file.to_owned(), original)]);
    let (fixed, summary) = fix(&files, &parsed.reports)?;
    let copy = tempfile::tempdir().expect("a temp dir");
    copy_dir(&project_dir, copy.path());
    std::fs::write(copy.path().join(file), &fixed[file]).expect("write the fix");
    Some((copy, fixed[file].clone(), summary))
}

fn run(dir: &Path, args: &[&str]) -> (bool, String) {
    let out = Command::new("python3")
        .args(args)
        .current_dir(dir)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .output()
        .expect("python3 runs");
    (
        out.status.success(),
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    )
}

fn assert_pytest_passes(dir: &Path, tests: &str) {
    let (ok, output) = run(dir, &["-m", "pytest", "-q", "-p", "no:cacheprovider", tests]);
    assert!(ok, "pytest still fails after the fix:\n{output}");
}

#[test]
fn a_missing_colon_reported_by_pytest_is_added() {
    let (dir, content, summary) = heal("py_syntax_default", "py_syntax", "calc.py").expect("a fix");
    assert!(content.starts_with("def add(a, b):\n"), "{content}");
    assert_eq!(summary, "Added missing colon after function definition");
    assert_pytest_passes(dir.path(), "test_calc.py");
}

#[test]
fn a_missing_colon_reported_by_ruff_and_flake8_is_added() {
    for case in ["ruff_syntax", "flake8_syntax", "pylint_syntax", "py_syntax_run"] {
        let (dir, _, _) = heal(case, "py_syntax", "calc.py").unwrap_or_else(|| panic!("{case}: no fix"));
        assert_pytest_passes(dir.path(), "test_calc.py");
    }
}

#[test]
fn an_unexpected_indent_is_removed() {
    for case in ["py_indent_default", "py_indent_run", "flake8_indent", "ruff_indent"] {
        let (dir, content, _) = heal(case, "py_indent", "shapes.py").unwrap_or_else(|| panic!("{case}: no fix"));
        assert!(
            content.contains("    area = width * height\n    return area\n"),
            "{case}: {content}"
        );
        assert_pytest_passes(dir.path(), "test_shapes.py");
    }
}

#[test]
fn tabs_mixed_with_spaces_become_spaces() {
    let (dir, content, _) = heal("py_tabs_taberror", "py_tabs", "totals.py").expect("a fix");
    assert!(!content.contains('\t'), "{content}");
    assert_pytest_passes(dir.path(), "test_totals.py");
}

#[test]
fn an_unindent_between_two_levels_is_left_to_a_human() {
    // `return label` at 6 spaces sits between the `if` body (8) and the function body (4): the
    // fixer cannot know which was meant.
    assert!(heal("py_tabs_unindent", "py_tabs", "report.py").is_none());
}

#[test]
fn a_name_error_for_a_standard_module_gets_its_import() {
    let (dir, content, summary) = heal("py_import_nameerror", "py_import", "app/encode.py").expect("a fix");
    assert!(content.starts_with("import json\n"), "{content}");
    assert_eq!(summary, "Added missing import of json");
    assert_pytest_passes(dir.path(), "test_encode.py");
}

#[test]
fn unused_imports_reported_by_ruff_flake8_and_pylint_are_removed() {
    for case in [
        "ruff_default",
        "ruff_concise",
        "ruff_json",
        "flake8_default",
        "pylint_default",
        "pylint_json",
    ] {
        let (dir, content, _) = heal(case, "py_lint", "util.py").unwrap_or_else(|| panic!("{case}: no fix"));
        assert!(
            !content.contains("import os\n") && !content.contains("import sys\n"),
            "{case}: {content}"
        );
        assert!(
            content.contains("import json\n"),
            "{case} removed a used import: {content}"
        );
        let (ok, output) = run(dir.path(), &["-c", "import util"]);
        assert!(ok, "{case}: the fixed module does not import:\n{output}");
    }
}

#[test]
fn contract_naming_errors_from_a_real_validator_are_normalised_until_it_passes() {
    use kubeheal::healer::contract::normalize_contract;
    let project = fixtures().join("projects/contract_helpdesk");
    let contract = "domains/helpdesk/entities/ticket.contract.yaml";
    let log = std::fs::read_to_string(fixtures().join("logs/contract_jsonschema.log")).expect("the log");
    let errors: Vec<String> = log.lines().map(str::to_owned).collect();
    let original = std::fs::read_to_string(project.join(contract)).expect("the contract");
    let (fixed, changes) = normalize_contract(&original, &errors)
        .expect("YAML")
        .expect("a normalisation");
    assert_eq!(
        changes,
        [
            "metadata.fqn: Entity/helpdesk/ticket -> entity/helpdesk/ticket",
            "spec.fields.myField -> spec.fields.my_field",
            "spec.fields.resolutionNotes -> spec.fields.resolution_notes",
            "spec.graph.edges.assigned_to -> spec.graph.edges.ASSIGNED_TO",
            "spec.number_prefix: tkt -> TKT",
        ]
    );
    let copy = tempfile::tempdir().expect("a temp dir");
    copy_dir(&project, copy.path());
    std::fs::write(copy.path().join(contract), &fixed).expect("write");
    let (ok, output) = run(copy.path(), &["validate_contract.py", contract]);
    assert!(ok, "the validator still fails:\n{output}\n{fixed}");
}

#[test]
fn a_name_error_for_a_name_the_project_defines_gets_imported_from_its_module() {
    let log = std::fs::read_to_string(fixtures().join("logs/py_projname_default.log")).expect("the log");
    let project_dir = fixtures().join("projects/py_projname");
    let parsed = parse(&log, &Workspace::new("/tmp/kubeheal-fixtures/py_projname"));
    let read = |f: &str| std::fs::read_to_string(project_dir.join(f)).expect("the file");
    // The healer is given the failing file and the module that defines the name.
    let files = BTreeMap::from([
        ("app/report.py".to_owned(), read("app/report.py")),
        ("app/totals.py".to_owned(), read("app/totals.py")),
    ]);
    let (fixed, summary) = fix(&files, &parsed.reports).expect("a fix");
    assert_eq!(summary, "Added missing import of total from app.totals");
    assert!(
        fixed["app/report.py"].contains("\"\"\"Builds the daily report.\"\"\"\nfrom app.totals import total\n"),
        "{}",
        fixed["app/report.py"]
    );
    let copy = tempfile::tempdir().expect("a temp dir");
    copy_dir(&project_dir, copy.path());
    std::fs::write(copy.path().join("app/report.py"), &fixed["app/report.py"]).expect("write");
    assert_pytest_passes(copy.path(), "test_report.py");
}
