//! Project detection: python, node, rust, go or a plain command, with the default command (and
//! the flags that make its output parseable) and the default image of each.

use std::path::Path;

use crate::api::heal_run::ProjectType;

/// The test runner a default command uses, for the executor's reading of exit codes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Runner {
    Pytest,
    Npm,
    Cargo,
    Go,
}

/// The project type of `dir` when `requested` is `auto`.
pub fn detect(dir: &Path, requested: ProjectType) -> ProjectType {
    if requested != ProjectType::Auto {
        return requested;
    }
    let has = |name: &str| dir.join(name).exists();
    if has("Cargo.toml") {
        ProjectType::Rust
    } else if has("go.mod") {
        ProjectType::Go
    } else if has("package.json") {
        ProjectType::Node
    } else if has("pyproject.toml")
        || has("setup.py")
        || has("setup.cfg")
        || has("pytest.ini")
        || has("tox.ini")
        || has("requirements.txt")
        || has_python_tests(dir)
    {
        ProjectType::Python
    } else {
        ProjectType::Auto
    }
}

fn has_python_tests(dir: &Path) -> bool {
    let looks = |p: &Path| {
        p.file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| (n.starts_with("test_") || n.ends_with("_test.py")) && n.ends_with(".py"))
    };
    let Ok(entries) = std::fs::read_dir(dir) else {
        return false;
    };
    entries.flatten().any(|e| {
        let p = e.path();
        looks(&p)
            || (p.is_dir()
                && p.file_name().is_some_and(|n| n == "tests")
                && std::fs::read_dir(&p).is_ok_and(|mut d| d.any(|e| e.is_ok_and(|e| looks(&e.path())))))
    })
}

/// The default command of a project type, with parseable output; `None` for a plain project.
pub fn default_command(project: ProjectType) -> Option<(&'static str, Runner)> {
    match project {
        ProjectType::Python => Some((
            r#"python3 -m pytest -rA --junitxml="$KUBEHEAL_ARTIFACTS/junit.xml""#,
            Runner::Pytest,
        )),
        ProjectType::Node => Some(("npm test", Runner::Npm)),
        ProjectType::Rust => Some(("cargo test", Runner::Cargo)),
        ProjectType::Go => Some(("go test -json ./...", Runner::Go)),
        ProjectType::Auto => None,
    }
}

/// The runner a command uses, when it is one kubeheal knows.
pub fn runner_of(command: &str) -> Option<Runner> {
    if command.contains("pytest") {
        Some(Runner::Pytest)
    } else if command.contains("cargo test") || command.contains("cargo nextest") {
        Some(Runner::Cargo)
    } else if command.contains("go test") {
        Some(Runner::Go)
    } else if command.contains("npm test") || command.contains("jest") || command.contains("npx vitest") {
        Some(Runner::Npm)
    } else {
        None
    }
}

/// The default executor image of a project type.
pub fn default_image(project: ProjectType) -> &'static str {
    match project {
        ProjectType::Python => "python:3.12-slim",
        ProjectType::Node => "node:22-slim",
        ProjectType::Rust => "rust:1-slim",
        ProjectType::Go => "golang:1.24",
        ProjectType::Auto => "debian:bookworm-slim",
    }
}

/// The tools whose versions describe the environment of a project type.
pub fn tools(project: ProjectType) -> &'static [(&'static str, &'static [&'static str])] {
    match project {
        ProjectType::Python => &[("python3", &["--version"]), ("pip", &["--version"])],
        ProjectType::Node => &[("node", &["--version"]), ("npm", &["--version"])],
        ProjectType::Rust => &[("rustc", &["--version"]), ("cargo", &["--version"])],
        ProjectType::Go => &[("go", &["version"])],
        ProjectType::Auto => &[],
    }
}
