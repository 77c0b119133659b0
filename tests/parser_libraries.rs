//! The parser on the logs of real libraries with injected bugs (`tests/fixtures/library_logs`):
//! every bug is reported at the place it is fixed, or at the place the log shows instead, with its
//! type; every report points at one of those places or at a failing test's own line that called
//! into the bug, with that place's bug's type; and every test a pytest report names is named by
//! its node id.

mod parser_fixtures;

use std::collections::{BTreeMap, BTreeSet};

use kubeheal::api::shared::BugReport;
use kubeheal::parse::{Workspace, parse};
use parser_fixtures::fixtures;
use serde_json::Value;

fn type_name(report: &BugReport) -> String {
    serde_json::to_value(report.error_type)
        .expect("a bug type")
        .as_str()
        .unwrap_or("")
        .to_owned()
}

/// One log of `expected.json`, read with its project's workspace.
struct LibraryLog {
    name: String,
    text: String,
    workspace: Workspace,
    /// The project's entry: its root and its bugs.
    project: Value,
    /// The bugs the log shows, when it names them (an eslint log shows no failing test); else all.
    shown: Option<Vec<String>>,
}

fn library_logs() -> Vec<LibraryLog> {
    let dir = fixtures().join("library_logs");
    let expected: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("expected.json")).expect("expected.json"))
            .expect("expected.json is JSON");
    let logs = expected["logs"].as_object().expect("the logs");
    assert!(logs.len() >= 5, "only {} logs", logs.len());
    logs.iter()
        .map(|(name, shows)| {
            // `"project"`, or `{"project", "bugs"}` for a log that names the bugs it shows.
            let project = shows
                .as_str()
                .or_else(|| shows["project"].as_str())
                .expect("a project name");
            let shown = shows["bugs"]
                .as_array()
                .map(|bugs| bugs.iter().map(|b| b.as_str().expect("a bug id").to_owned()).collect());
            let spec = expected["projects"][project].clone();
            let files: Vec<String> = std::fs::read_to_string(dir.join(format!("{project}.files")))
                .expect("the project's file list")
                .lines()
                .map(str::to_owned)
                .collect();
            // A project's manifests, where the workspace's packages are named (`kubeheal parse
            // --workspace` reads them from the workspace folder), are kept beside its file list.
            let manifests = dir.join(format!("{project}.manifests"));
            let workspace = Workspace::new(spec["root"].as_str().expect("a root"))
                .with_files(files)
                .with_package_manifests(|path| std::fs::read(manifests.join(path)).ok());
            let text =
                String::from_utf8_lossy(&std::fs::read(dir.join(format!("{name}.log"))).expect("the log")).into_owned();
            LibraryLog {
                name: name.clone(),
                text,
                workspace,
                project: spec,
                shown,
            }
        })
        .collect()
}

#[test]
fn every_injected_bug_is_reported_where_a_developer_looks_and_nowhere_else() {
    let mut problems = Vec::new();
    for LibraryLog {
        name: log,
        text,
        workspace,
        project: spec,
        shown,
    } in library_logs()
    {
        let parsed = parse(&text, &workspace);

        // Each place, with the type of the bug shown there; files any line of which is a place.
        let mut places = BTreeMap::new();
        let mut any_line = BTreeMap::new();
        for bug in spec["bugs"].as_array().expect("the bugs") {
            let place = |p: &Value| {
                (
                    p[0].as_str().expect("a file").to_owned(),
                    p[1].as_u64().expect("a line") as u32,
                )
            };
            let mut at = vec![(
                bug["file"].as_str().expect("a file").to_owned(),
                bug["line"].as_u64().expect("a line") as u32,
            )];
            at.extend(bug["alt"].as_array().expect("alt").iter().map(place));
            let kind = bug["type"].as_str().expect("a type");
            places.extend(at.iter().map(|place| (place.clone(), kind)));
            // The failing tests' own lines that called into the bug: a report there points at
            // it, but does not report it.
            let test_lines = bug["test_lines"].as_array().map(Vec::as_slice).unwrap_or_default();
            places.extend(test_lines.iter().map(|p| (place(p), kind)));
            let files: Vec<&str> = bug["alt_files"]
                .as_array()
                .map(|f| f.iter().map(|f| f.as_str().expect("a file")).collect())
                .unwrap_or_default();
            any_line.extend(files.iter().map(|&f| (f.to_owned(), kind)));
            let id = bug["id"].as_str().expect("an id");
            let required = shown.as_ref().is_none_or(|shown| shown.iter().any(|s| s == id));
            let reported = parsed.reports.iter().any(|r| {
                (at.contains(&(r.file_path.clone(), r.line_number)) || files.contains(&r.file_path.as_str()))
                    && type_name(r) == kind
            });
            if required && !reported {
                problems.push(format!("{log}: {} ({kind} at {at:?}) is not reported", bug["id"]));
            }
        }
        for r in &parsed.reports {
            let what = format!("{}:{} ({}: {})", r.file_path, r.line_number, type_name(r), r.message);
            let kind = places
                .get(&(r.file_path.clone(), r.line_number))
                .or_else(|| any_line.get(&r.file_path));
            match kind {
                None => problems.push(format!("{log}: a report at {what} points at no bug")),
                Some(kind) if *kind != type_name(r) => {
                    problems.push(format!("{log}: the report at {what} is not typed {kind}"))
                }
                Some(_) => {}
            }
            // A test is named as pytest names it to be run again: `path::name[params]`.
            if spec["test_names"] == "pytest"
                && let Some(test) = &r.test_name
                && !test.contains("::")
            {
                problems.push(format!(
                    "{log}: the report at {what} names the test {test:?}, not its node id"
                ));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// `kubeheal parse --workspace DIR` resolves the paths of a log printed in a subfolder against
/// the folder's files, as the heal loop resolves them against the repository's.
#[test]
fn the_parse_command_resolves_a_subfolder_log_against_the_workspace_folder() {
    let dir = fixtures().join("library_logs");
    let workspace = tempfile::tempdir().expect("a temporary folder");
    for file in std::fs::read_to_string(dir.join("boltons.files"))
        .expect("the file list")
        .lines()
    {
        let path = workspace.path().join(file);
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("a folder");
        std::fs::write(&path, "").expect("a file");
    }
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_kubeheal"))
        .args(["parse", "--format", "text", "--workspace"])
        .arg(workspace.path())
        .arg(dir.join("boltons-subdir-short.log"))
        .output()
        .expect("kubeheal runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    // Printed from tests/ as `../boltons/dictutils.py:857` and `test_strutils.py:84`.
    for place in [
        "boltons/dictutils.py line 857",
        "boltons/urlutils.py line 314",
        "tests/test_strutils.py line 84",
    ] {
        assert!(text.contains(place), "no report at {place}:\n{text}");
    }
    assert!(
        !text.contains("error in test_"),
        "a path left relative to tests/:\n{text}"
    );
}

/// A Cargo workspace's test that panics in another member's code: the backtrace prints the files
/// of the test's own package relative to that package (`./src/lib.rs`, `./tests/columns.rs`), and
/// both members have a `src/lib.rs`. The package is told by `cargo test`'s `Running` line or,
/// under `-q` and nextest (which print none), by the crate the frame's function names (`slug_tools::column`),
/// which the package's manifest gives (`slug-tools`, in `crates/slug`). Every failing test's own
/// line is reported, those of the library's own 26 failing tests too (past the ten reports the
/// panic's place keeps).
#[test]
fn a_workspace_test_failing_in_another_member_is_placed_at_its_own_line() {
    let logs: Vec<LibraryLog> = library_logs()
        .into_iter()
        .filter(|l| l.name.starts_with("rs-cross-"))
        .collect();
    assert_eq!(logs.len(), 4);
    let listed: BTreeSet<String> = std::fs::read_to_string(fixtures().join("library_logs/rs-cross.files"))
        .expect("the file list")
        .lines()
        .map(str::to_owned)
        .collect();
    for log in &logs {
        let parsed = parse(&log.text, &log.workspace);
        let places: BTreeSet<(&str, u32)> = parsed
            .reports
            .iter()
            .map(|r| (r.file_path.as_str(), r.line_number))
            .collect();
        let unlisted: Vec<_> = places.iter().filter(|(f, _)| !listed.contains(*f)).collect();
        assert!(
            unlisted.is_empty(),
            "{}: reports at files not in the workspace: {unlisted:?}",
            log.name
        );
        let bug = &log.project["bugs"][0];
        let mut expected: Vec<(&str, u32)> = bug["test_lines"]
            .as_array()
            .expect("the failing tests' lines")
            .iter()
            .map(|p| (p[0].as_str().expect("a file"), p[1].as_u64().expect("a line") as u32))
            .collect();
        if log.name == "rs-cross-subdir-slug" {
            // Run in `crates/slug`: only its own tests.
            expected.retain(|(file, _)| file.starts_with("crates/slug/"));
        }
        for place in expected {
            assert!(
                places.contains(&place),
                "{}: no report at {place:?}: {places:?}",
                log.name
            );
        }
    }
}

/// A monorepo runner names a package as its `package.json` does, and the folder may be named
/// otherwise: `kubeheal parse --workspace` reads the workspace's manifests, so lerna's
/// `camelcase: ` lines resolve in `packages/case-kit` (whose manifest names `camelcase`), not in
/// `packages/camelcase` (another package's folder, which holds the same files). The log is
/// lerna's real output (`tests/fixtures/monorepo_names/README.md`).
#[test]
fn the_parse_command_finds_a_package_by_its_manifest_s_name() {
    let workspace = tempfile::tempdir().expect("a temporary folder");
    for (folder, name) in [
        ("packages/case-kit", "camelcase"),
        ("packages/camelcase", "camel-legacy"),
    ] {
        let dir = workspace.path().join(folder);
        std::fs::create_dir_all(dir.join("test")).expect("a folder");
        std::fs::write(dir.join("index.js"), "").expect("a file");
        std::fs::write(dir.join("test/camelcase.test.js"), "").expect("a file");
        std::fs::write(
            dir.join("package.json"),
            format!(r#"{{"name": "{name}", "version": "6.3.0", "scripts": {{"test": "jest"}}}}"#),
        )
        .expect("a manifest");
    }
    std::fs::write(
        workspace.path().join("package.json"),
        r#"{"name": "jsmono", "private": true, "workspaces": ["packages/*"]}"#,
    )
    .expect("the root manifest");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_kubeheal"))
        .args(["parse", "--format", "text", "--workspace"])
        .arg(workspace.path())
        .arg(fixtures().join("monorepo_names/lerna-stream.log"))
        .output()
        .expect("kubeheal runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(
        text.starts_with("IMPORT error in packages/case-kit/index.js line 52"),
        "{text}"
    );
    assert!(!text.contains("packages/camelcase/"), "another package's file:\n{text}");
}

/// A workspace given relative to the current folder stands for its absolute path: the absolute
/// paths a tool printed there are made relative to it, not matched by their longest listed
/// ending (`app/pkg/calc.py` inside `app/` is another file).
#[test]
fn a_relative_workspace_folder_takes_the_absolute_paths_under_it() {
    let parent = tempfile::tempdir().expect("a temporary folder");
    let app = parent.path().join("app");
    for file in ["pkg/calc.py", "app/pkg/calc.py"] {
        std::fs::create_dir_all(app.join(file).parent().expect("a parent")).expect("a folder");
        std::fs::write(app.join(file), "").expect("a file");
    }
    let log = parent.path().join("build.log");
    std::fs::write(
        &log,
        format!(
            "Traceback (most recent call last):\n  File \"{}\", line 3, in add\n    return a + b\nTypeError: unsupported operand type(s) for +: 'int' and 'str'\n",
            app.join("pkg/calc.py").display()
        ),
    )
    .expect("the log");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_kubeheal"))
        .current_dir(parent.path())
        .args(["parse", "--format", "text", "--workspace", "app"])
        .arg(&log)
        .output()
        .expect("kubeheal runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(text.starts_with("TYPE_ERROR error in pkg/calc.py line 3"), "{text}");
}

/// Findings past the bounds are not dropped silently: `kubeheal parse` keeps standard output for
/// the reports and says on standard error how many it left out.
#[test]
fn the_parse_command_says_how_many_findings_it_left_out() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let log = dir.path().join("flake8.log");
    let findings: String = (1..=130)
        .map(|n| format!("app/m.py:{n}:80: E501 line too long (90 > 79 characters)\n"))
        .collect();
    std::fs::write(&log, findings).expect("the log");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_kubeheal"))
        .args(["parse", "--workspace", "/w"])
        .arg(&log)
        .output()
        .expect("kubeheal runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let reports: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout).expect("a JSON array on standard output");
    assert_eq!(reports.len(), 100);
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("30 more finding(s) left out"), "{said}");
}

/// A library log after any other (a CI job that runs one tool after another) gives every report it
/// gives alone: what a format keeps across lines (a Go panic's stack, a TAP failure's YAML, jest's
/// Node header, a traceback nested in pytest's `E` line) ends where the other tool's output does.
#[test]
fn a_library_log_after_another_gives_what_it_gives_alone() {
    let logs = library_logs();
    let place = |r: &BugReport| (r.file_path.clone(), r.line_number, type_name(r));
    let mut lost = Vec::new();
    for second in &logs {
        let alone: BTreeSet<_> = parse(&second.text, &second.workspace)
            .reports
            .iter()
            .map(place)
            .collect();
        for first in &logs {
            let both: BTreeSet<_> = parse(&format!("{}\n{}", first.text, second.text), &second.workspace)
                .reports
                .iter()
                .map(place)
                .collect();
            if let Some(missing) = alone.difference(&both).next() {
                lost.push(format!("{} after {}: {missing:?} lost", second.name, first.name));
            }
        }
    }
    assert!(lost.is_empty(), "{}", lost.join("\n"));
}

/// A type checker prints each error once: two at one line are two errors, and the healer is sent
/// both. mypy's `error:` lines in the real library logs (tabulate's `test_api.py:11` has two,
/// `[misc]` and `[assignment]`) are each a report with its own message.
#[test]
fn every_error_a_type_checker_prints_is_a_report_of_its_own() {
    let logs: Vec<LibraryLog> = library_logs()
        .into_iter()
        .filter(|log| log.name.ends_with("-mypy"))
        .collect();
    assert!(!logs.is_empty(), "no mypy log among the library logs");
    // mypy's colours wrap the parts; the place and the error code tell one error from another.
    let escapes = regex::Regex::new("\x1b(\\[[0-9;]*[A-Za-z]|\\([A-Z])").expect("a regex");
    for log in logs {
        let parsed = parse(&log.text, &log.workspace);
        let plain = escapes.replace_all(&log.text, "");
        let printed: BTreeSet<(String, u32, String)> = plain
            .lines()
            .filter_map(|line| {
                let (place, message) = line.split_once(": error: ")?;
                let (file, n) = place.rsplit_once(':')?;
                let file = file.rsplit(' ').next()?;
                let code = message.rsplit_once("  [")?.1.trim_end_matches(']');
                Some((file.to_owned(), n.parse().ok()?, code.to_owned()))
            })
            .collect();
        let reported: BTreeSet<(String, u32, String)> = parsed
            .reports
            .iter()
            .filter_map(|r| {
                let code = r.message.rsplit_once("  [")?.1.trim_end_matches(']');
                Some((r.file_path.clone(), r.line_number, code.to_owned()))
            })
            .collect();
        assert!(
            printed.len() >= 7,
            "{}: only {} errors read from the log",
            log.name,
            printed.len()
        );
        assert_eq!(reported, printed, "{}", log.name);
    }
}

/// tape's YAML block holds the failed assertion's words and its `stack:`, an indented `Error:`
/// with Node's frames: the report keeps TAP's words (what was expected, what came), which the
/// stack's `Error:` line does not say.
#[test]
fn a_tape_failure_keeps_the_words_of_its_tap_block() {
    let log = library_logs()
        .into_iter()
        .find(|log| log.name == "js-p1-tape-stringify")
        .expect("the tape log");
    let parsed = parse(&log.text, &log.workspace);
    assert!(parsed.reports.len() >= 20, "{} reports", parsed.reports.len());
    let plain: Vec<&str> = parsed
        .reports
        .iter()
        .map(|r| r.message.as_str())
        .filter(|m| !m.starts_with("not ok: "))
        .collect();
    assert!(plain.is_empty(), "{plain:?}");
}
