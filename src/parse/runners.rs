//! Runners' own text around a tool's lines, taken off after cleaning and before the formats see
//! a line. A monorepo's script runner names the package before each line of its output, and
//! several packages' lines interleave:
//!
//! | runner                              | the line that shows the prefix          | prefix          |
//! |-------------------------------------|------------------------------------------|-----------------|
//! | pnpm `-r` / `--filter`              | `packages/calc test$ node --test`        | `packages/calc test: ` |
//! | turbo                               | `calc:test: cache miss, executing 5a6b…` | `calc:test: `   |
//! | lerna and nx `--stream`, turbo      | `calc: > calc@1.0.0 test` (npm's header) | `calc: `        |
//! | yarn `workspaces foreach -p`        | `[calc]: ` and a package folder `calc/`  | `[calc]: `      |
//!
//! A prefix is taken off only once the log showed it for what it is (a script starting, the
//! package manager's header naming the same package, turbo's cache line, or, for yarn, which
//! prints neither, a package of that name in the repository): a line that merely looks like one
//! (`tests/a.py failed: ...`, `error: ...`) keeps its text. The package's folder becomes the
//! sink's [`super::Sink::package`], so that a path its tool prints relative to the folder
//! resolves there first.
//!
//! cargo-nextest prints each failed test's captured output under a `  stdout ───` or
//! `  stderr ───` heading, every line indented by four spaces: the indentation comes off, so the
//! test's panic and backtrace read as libtest prints them, until nextest's next status line.

use std::borrow::Cow;

use super::clean::cut_front;
use super::paths::Workspace;

/// Most workspace packages' prefixes kept: a monorepo's recursive run names each package once.
const MAX_RUNNER_PREFIXES: usize = 64;

/// A package's prefix and the package's folder (empty when not known).
struct Prefix {
    text: String,
    folder: String,
}

#[derive(Default)]
pub(crate) struct Runners {
    prefixes: Vec<Prefix>,
    /// Inside a test's output that cargo-nextest captured and indents.
    nextest_output: bool,
}

impl Runners {
    /// Learns the prefix `line` (cleaned, not yet stripped) shows, if it shows one: asked of the
    /// lines that hold a `$` (`script_start`: pnpm's script start has one) or a
    /// [`super::needles::Needle::RunnerPrefix`], as the buffer's scan tells.
    pub(crate) fn note(&mut self, line: &str, script_start: bool, workspace: &Workspace) {
        if self.prefixes.len() >= MAX_RUNNER_PREFIXES {
            return;
        }
        let learnt = match line.as_bytes().first() {
            Some(b'[') => yarn_prefix(line, workspace),
            Some(b'a'..=b'z' | b'0'..=b'9' | b'@' | b'.') => {
                let pnpm = if script_start { pnpm_script_start(line) } else { None };
                pnpm.or_else(|| named_prefix(line).map(|(text, name)| (text, package_folder(workspace, name))))
            }
            _ => None,
        };
        if let Some((text, folder)) = learnt
            && !self.prefixes.iter().any(|p| p.text == text)
        {
            self.prefixes.push(Prefix { text, folder });
        }
    }

    /// `line` without a package's prefix (then `package` is the package's folder, or empty) and
    /// without nextest's indentation of a captured output. Most logs have neither: one look.
    #[inline]
    pub(crate) fn strip<'a>(&mut self, line: Cow<'a, str>, package: &mut String) -> Cow<'a, str> {
        if self.prefixes.is_empty() && !self.nextest_output && !may_be_nextest_heading(line.as_bytes()) {
            return line;
        }
        self.strip_any(line, package)
    }

    fn strip_any<'a>(&mut self, line: Cow<'a, str>, package: &mut String) -> Cow<'a, str> {
        let line = if self.prefixes.is_empty() {
            line
        } else {
            package.clear();
            match self.prefixes.iter().find(|p| line.starts_with(p.text.as_str())) {
                Some(prefix) => {
                    package.push_str(&prefix.folder);
                    let start = prefix.text.len();
                    cut_front(line, start)
                }
                None => line,
            }
        };
        self.nextest(line)
    }

    /// Takes nextest's four spaces off a captured output's lines; notes where one begins and
    /// ends.
    fn nextest<'a>(&mut self, line: Cow<'a, str>) -> Cow<'a, str> {
        let bytes = line.as_bytes();
        if self.nextest_output {
            if bytes.is_empty() {
                return line;
            }
            if bytes.starts_with(b"    ") && !is_nextest_status(&line[4..]) {
                return cut_front(line, 4);
            }
            self.nextest_output = false;
        }
        if may_be_nextest_heading(bytes) && is_nextest_heading(&line) {
            self.nextest_output = true;
        }
        line
    }
}

/// Whether a line is short and starts as nextest's heading of a captured output does.
#[inline]
fn may_be_nextest_heading(line: &[u8]) -> bool {
    line.len() <= 24 && line.starts_with(b"  ")
}

/// nextest's heading of a test's captured output: `  stdout ───`, `  stderr ───`, `  output ───`.
fn is_nextest_heading(line: &str) -> bool {
    let Some(word) = line
        .strip_prefix("  ")
        .and_then(|l| l.strip_suffix(" ───").or_else(|| l.strip_suffix(" ---")))
    else {
        return false;
    };
    !word.is_empty() && word.bytes().all(|b| b.is_ascii_lowercase())
}

/// nextest's status of a test, indented: `    FAIL [   0.101s] ( 3/46) itoa::test test_min`,
/// `SIGABRT [`, `TRY 2 FAIL [`, `TIMEOUT [`: upper-case words, then the time in brackets.
fn is_nextest_status(text: &str) -> bool {
    let text = text.trim_start();
    let Some(open) = text.find(" [") else {
        return false;
    };
    let words = &text[..open];
    let Some(time) = text[open + 2..].split_once(']').map(|(t, _)| t.trim_start()) else {
        return false;
    };
    !words.is_empty()
        && words.as_bytes()[0].is_ascii_uppercase()
        && words
            .bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b' ')
        && time
            .strip_suffix('s')
            .is_some_and(|t| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit() || b == b'.') && t.contains('.'))
}

/// A byte of an npm package's name (`calc`, `@acme/ui`, `lodash.kebabcase`).
fn is_name_byte(b: u8) -> bool {
    b.is_ascii_lowercase() || b.is_ascii_digit() || matches!(b, b'-' | b'.' | b'_' | b'~' | b'@' | b'/')
}

/// Whether `name` can be an npm package's name: `name` or `@scope/name`.
fn is_package_name(name: &str) -> bool {
    let bare = match name.strip_prefix('@') {
        Some(scoped) => match scoped.split_once('/') {
            Some((scope, bare)) if !scope.is_empty() => bare,
            _ => return false,
        },
        None => name,
    };
    !bare.is_empty() && !bare.contains(['@', '/']) && !bare.starts_with('.')
}

/// A prefix that starts with the package's name, shown by what follows it on the line: lerna's and
/// nx's `calc: ` before npm's header `> calc@1.0.0 test`; turbo's `calc:test: ` before its cache
/// line (`cache miss, executing 5a6b…`, `cache hit, replaying logs …`, `cache bypass, …`) or
/// npm's header. Returns the prefix and the package's name.
fn named_prefix(line: &str) -> Option<(String, &str)> {
    let end = line.bytes().position(|b| !is_name_byte(b))?;
    let name = &line[..end];
    if line.as_bytes()[end] != b':' || !is_package_name(name) {
        return None;
    }
    let rest = &line[end + 1..];
    let names_it = |text: &str| {
        text.strip_prefix("> ")
            .and_then(|header| header.strip_prefix(name))
            .is_some_and(|version| version.starts_with('@'))
    };
    if let Some(after) = rest.strip_prefix(' ')
        && names_it(after)
    {
        return Some((line[..end + 2].to_owned(), name));
    }
    // turbo: a task (`test`, `test:unit`), then `: `.
    let task_end = rest.find(": ")?;
    let task = &rest[..task_end];
    let after = &rest[task_end + 2..];
    let task_like = task.as_bytes().first().is_some_and(u8::is_ascii_alphabetic)
        && task
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b':' | b'-' | b'_' | b'.'));
    let shown = ["cache miss, ", "cache hit, ", "cache bypass, "]
        .iter()
        .any(|c| after.starts_with(c))
        || names_it(after);
    (task_like && shown).then(|| (line[..end + 1 + task_end + 2].to_owned(), name))
}

/// yarn's `[calc]: ` (`yarn workspaces foreach -p`), which no line announces: taken when the
/// repository has the package's folder, with the package's folder.
fn yarn_prefix(line: &str, workspace: &Workspace) -> Option<(String, String)> {
    let close = line.find("]: ")?;
    let name = &line[1..close];
    if !name.bytes().all(is_name_byte) || !is_package_name(name) {
        return None;
    }
    let folder = package_folder(workspace, name);
    (!folder.is_empty()).then(|| (line[..close + 3].to_owned(), folder))
}

/// The folder of the repository's package `name`: the one folder named as the package (its name
/// without a scope) that holds a `package.json`; empty when there is none or several.
fn package_folder(workspace: &Workspace, name: &str) -> String {
    let bare = name.rsplit('/').next().unwrap_or(name);
    workspace.manifest_folder(bare, "package.json").unwrap_or_default()
}

/// pnpm's `<package folder> <script>$ <command>`: the prefix `<package folder> <script>: ` of the
/// script's output, and the folder. The folder is a relative path (`packages/calc`, or `.` for
/// the root).
fn pnpm_script_start(line: &str) -> Option<(String, String)> {
    let (folder, rest) = line.split_once(' ')?;
    let (script, command) = rest.split_once("$ ")?;
    // A relative folder (`packages/calc`, `.`), not a file's path (`tests/a.py`).
    let last = folder.rsplit('/').next().unwrap_or(folder);
    let folder_like = folder == "."
        || folder.contains('/') && !folder.starts_with('/') && !folder.contains(':') && !last.contains('.');
    let script_like = !script.is_empty()
        && script
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b':' | b'-' | b'_' | b'.'));
    let package = if folder == "." { "" } else { folder };
    let inside = !folder.split('/').any(|segment| segment == "..");
    (folder_like && inside && script_like && !command.trim().is_empty())
        .then(|| (format!("{folder} {script}: "), package.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::report_findings;
    #[test]
    fn a_workspace_package_s_prefix_is_taken_off_once_its_script_started() {
        // pnpm 10 `pnpm -r test`: two packages' scripts start, their lines interleave (node's
        // TAP in one); a line shaped like a prefix that no script started keeps its text.
        let log = "\
Scope: 2 of 3 workspace projects
packages/calc test$ node --test test.js
packages/ms test$ node --test
packages/calc test: TAP version 13
packages/calc test: not ok 1 - clamp keeps values inside the range
packages/ms test: TAP version 13
packages/calc test:   ---
packages/calc test:   location: '/w/packages/calc/test.js:6:1'
packages/calc test:   failureType: 'testCodeFailure'
packages/calc test:   error: 'Expected values to be strictly equal'
packages/calc test:   stack: |-
packages/calc test:     TestContext.<anonymous> (/w/packages/calc/test.js:7:10)
packages/calc test:   ...
packages/calc test: 1..1
packages/calc test: Failed
";
        let parsed = crate::parse::parse(log, &crate::parse::Workspace::new("/w"));
        let places: Vec<(&str, u32)> = parsed
            .reports
            .iter()
            .map(|r| (r.file_path.as_str(), r.line_number))
            .collect();
        assert_eq!(places, [("packages/calc/test.js", 7)], "{:#?}", parsed.reports);

        // A path a package's tool prints relative to the package's folder is that folder's file,
        // though another package has a file of that name too.
        let log = "\
packages/ms lint$ eslint --format unix test.js
packages/ms lint: test.js:9:5: 'mn' is not defined. [Error/no-undef]
packages/calc lint$ eslint --format unix test.js
packages/calc lint: test.js:3:1: Unexpected console statement. [Error/no-console]
test.js:4:2: Printed outside any package. [Error/no-console]
";
        let files = vec!["packages/calc/test.js".to_owned(), "packages/ms/test.js".to_owned()];
        let parsed = crate::parse::parse(log, &crate::parse::Workspace::new("/w").with_files(files));
        let places: Vec<(&str, u32)> = parsed
            .reports
            .iter()
            .map(|r| (r.file_path.as_str(), r.line_number))
            .collect();
        assert_eq!(
            places,
            [("packages/ms/test.js", 9), ("packages/calc/test.js", 3), ("test.js", 4)],
            "{:#?}",
            parsed.reports
        );

        let workspace = Workspace::new("/w");
        let mut runners = Runners::default();
        let strip = |runners: &mut Runners, line: &'static str| {
            runners.note(line, line.contains('$'), &workspace);
            let mut package = String::from("left from before");
            let line = runners.strip(Cow::Borrowed(line), &mut package).into_owned();
            (line, package)
        };
        assert_eq!(
            strip(&mut runners, "packages/calc test: ok 1"),
            ("packages/calc test: ok 1".to_owned(), "left from before".to_owned())
        );
        for line in [
            "packages/calc test$ node --test test.js",
            "tests/a.py failed$ not a script",
            "/abs/dir test$ not a package folder",
            "../../etc test$ a folder outside the repository",
        ] {
            strip(&mut runners, line);
        }
        assert_eq!(
            strip(&mut runners, "packages/calc test: ok 1"),
            ("ok 1".to_owned(), "packages/calc".to_owned())
        );
        for kept in ["tests/a.py failed: x", "/abs/dir test: x", "../../etc test: x"] {
            assert_eq!(strip(&mut runners, kept), (kept.to_owned(), String::new()));
        }
    }

    /// Two packages of a monorepo, each with a `test/` folder of the same shape.
    fn monorepo() -> Workspace {
        let files = ["camelcase", "decamelize", "kleur"]
            .iter()
            .flat_map(|p| {
                [
                    format!("packages/{p}/package.json"),
                    format!("packages/{p}/index.js"),
                    format!("packages/{p}/test/{p}.test.js"),
                ]
            })
            .chain(["package.json".to_owned()])
            .collect();
        Workspace::new("/w").with_files(files)
    }

    /// `turbo run test --continue` (turbo 2.11, jest 29 and vitest 2 in the packages, npm
    /// workspaces): every line of a package's task is `pkg:task: `, the tasks' lines interleave,
    /// and each tool prints paths relative to its package's folder.
    #[test]
    fn turbo_s_task_prefixes_come_off_and_paths_resolve_in_the_package() {
        let log = "\
   • Running test in 3 packages
camelcase:test: cache bypass, force executing 5565ae94ec170cb9
kleur:test: cache miss, executing be303226bc7941cf
kleur:test: > kleur@4.1.5 test
kleur:test:  ❯ test/kleur.test.js (5 tests | 1 failed) 18ms
camelcase:test: > camelcase@6.3.0 test
camelcase:test: FAIL test/camelcase.test.js
camelcase:test:   ● camelCase › pascalCase option
camelcase:test: 
camelcase:test:     expect(received).toBe(expected) // Object.is equality
camelcase:test: 
camelcase:test:       at Object.toBe (test/camelcase.test.js:15:52)
camelcase:test: 
camelcase:test: Test Suites: 1 failed, 1 total
kleur:test: FAIL  test/kleur.test.js > kleur > background color
kleur:test: AssertionError: expected '\\u001b[44mx' to be '\\u001b[44mx\\u001b[49m' // Object.is equality
kleur:test:  ❯ test/kleur.test.js:17:29
kleur:test: 
";
        let parsed = crate::parse::parse(log, &monorepo());
        let places: Vec<(&str, u32)> = parsed
            .reports
            .iter()
            .map(|r| (r.file_path.as_str(), r.line_number))
            .collect();
        assert_eq!(
            places,
            [
                ("packages/camelcase/test/camelcase.test.js", 15),
                ("packages/kleur/test/kleur.test.js", 17)
            ],
            "{:#?}",
            parsed.reports
        );
    }

    /// yarn 4's `workspaces foreach -p -v run test` prints `[pkg]: ` and no line that starts a
    /// package; lerna's and nx's `--stream` print `pkg: `, shown by npm's header for the package.
    #[test]
    fn yarn_s_and_lerna_s_prefixes_come_off() {
        let log = "\
[decamelize]: FAIL test/decamelize.test.js
[decamelize]:   ● decamelize › single word
[decamelize]: 
[decamelize]:     expect(received).toBe(expected) // Object.is equality
[decamelize]: 
[decamelize]:       at Object.toBe (test/decamelize.test.js:20:27)
[decamelize]: 
kleur: > kleur@4.1.5 test
kleur: FAIL  test/kleur.test.js > kleur > background color
kleur: AssertionError: expected 'x' to be 'y' // Object.is equality
kleur:  ❯ test/kleur.test.js:17:29
kleur: 
";
        let parsed = crate::parse::parse(log, &monorepo());
        let places: Vec<(&str, u32)> = parsed
            .reports
            .iter()
            .map(|r| (r.file_path.as_str(), r.line_number))
            .collect();
        assert_eq!(
            places,
            [
                ("packages/decamelize/test/decamelize.test.js", 20),
                ("packages/kleur/test/kleur.test.js", 17)
            ],
            "{:#?}",
            parsed.reports
        );
    }

    /// Text shaped like a prefix that nothing showed to be one keeps its words.
    #[test]
    fn a_prefix_is_taken_off_only_once_the_log_showed_it() {
        let workspace = monorepo();
        let mut runners = Runners::default();
        for line in [
            // Not npm's header for this package, nor turbo's cache line.
            "kleur: > camelcase@6.3.0 test",
            "error: could not compile `calc` (lib) due to 1 previous error",
            "camelcase:test: some output",
            "note: > kleur@4.1.5 test",
            // No package of this name in the repository, or no package's name at all.
            "[ms]: ok",
            "[INFO]: Scanning for projects",
            "[a b]: x",
        ] {
            runners.note(line, false, &workspace);
        }
        assert!(
            runners.prefixes.is_empty(),
            "{:?}",
            runners.prefixes.iter().map(|p| &p.text).collect::<Vec<_>>()
        );
        runners.note("@acme/kleur:build: cache hit, replaying logs 5a6b", false, &workspace);
        runners.note("camelcase: > camelcase@6.3.0 test", false, &workspace);
        let mut package = String::new();
        let line = runners.strip(Cow::Borrowed("@acme/kleur:build: x"), &mut package);
        assert_eq!((line.as_ref(), package.as_str()), ("x", "packages/kleur"));
        let line = runners.strip(Cow::Borrowed("camelcase: y"), &mut package);
        assert_eq!((line.as_ref(), package.as_str()), ("y", "packages/camelcase"));
    }

    /// `cargo nextest run` (nextest 0.9) indents each failed test's captured output under its
    /// `stdout ───` and `stderr ───` headings: the panic there is libtest's, read as it prints
    /// it, up to nextest's next status line.
    #[test]
    fn nextest_s_captured_output_is_read_as_libtest_prints_it() {
        let log = "\
        FAIL [   0.101s] ( 3/46) itoa::test test_i16_min
  stdout ───

    running 1 test
    test test_i16_min ... FAILED

  stderr ───

    thread 'test_i16_min' (3787) panicked at crates/itoa/tests/test.rs:16:1:
    assertion `left == right` failed
      left: \"+32768\"
     right: \"-32768\"

        PASS [   0.006s] ( 4/46) itoa::test test_i16_0
    thread 'not_a_test_output' panicked at crates/itoa/src/lib.rs:3:1:
";
        let files = vec![
            "crates/itoa/tests/test.rs".to_owned(),
            "crates/itoa/src/lib.rs".to_owned(),
        ];
        let parsed = crate::parse::parse(log, &Workspace::new("/w").with_files(files));
        assert_eq!(
            report_findings(&parsed),
            [(
                "crates/itoa/tests/test.rs",
                16,
                "Logic".to_owned(),
                "panicked: assertion `left == right` failed"
            )]
        );
        assert_eq!(parsed.reports[0].test_name.as_deref(), Some("test_i16_min"));
        for status in [
            "FAIL [   0.101s] ( 3/46) a b",
            "SIGABRT [   1.0s] x",
            "TRY 2 FAIL [ 0.5s] x",
        ] {
            assert!(is_nextest_status(status), "{status}");
        }
        for text in ["FAIL [x] a", "thread 'a' panicked", "Fail [ 0.1s] x", "[ 0.1s]"] {
            assert!(!is_nextest_status(text), "{text}");
        }
    }
}
