//! CI annotations that tools print for the CI to pick up: GitHub Actions workflow commands
//! (`::error file=...,line=...::message`, ruff's and flake8's `github` output, any tool's
//! annotations), Azure Pipelines logging commands (`##vso[task.logissue ...]message`, ruff's
//! `azure` output) and TeamCity's service messages (`##teamcity[inspection ...]`, golangci-lint's
//! `teamcity` output, and a test runner's `##teamcity[testFailed ...]`). They name the file and
//! line as properties; the message may itself be a `path:line:col: CODE text` diagnostic, whose
//! code gives the bug type.
use std::borrow::Cow;
use std::sync::LazyLock;

use regex::Regex;

use super::lint::mypy_type;
use super::rust::{lint_finding_type, split_lint_code};
use super::{Finding, Rank, Sink, split_location};
use crate::api::shared::ErrorType;

/// A lint code at the start of a message: `F401 msg`, `E0401: msg`, `[E501] msg`,
/// `no-undef: msg`-like rule names are not codes.
static CODE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^\[?([A-Z]{1,4}\d{2,4}|invalid-syntax)\]?:? (?:\[\*\] )?(.*)$").expect("regex"));
static MYPY: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^error: (.*?)(?:  \[([\w-]+)\])?$").expect("regex"));

/// Reads a GitHub or Azure annotation; `true` when the line was one.
pub(crate) fn line(line: &str, sink: &mut Sink<'_>) -> bool {
    match line.as_bytes().first() {
        Some(b':') => github(line, sink),
        Some(b'#') => azure(line, sink) || teamcity(line, sink),
        _ => false,
    }
}

/// `::error title=ruff (F401),file=/abs/a.py,line=2,col=8::a.py:2:8: F401 msg`.
fn github(line: &str, sink: &mut Sink<'_>) -> bool {
    let Some(rest) = line.strip_prefix("::") else {
        return false;
    };
    let Some((command, rest)) = rest
        .split_once(' ')
        .filter(|(c, _)| matches!(*c, "error" | "warning" | "notice"))
    else {
        return false;
    };
    let Some((properties, message)) = rest.split_once("::") else {
        return false;
    };
    let property = |key: &str| property(properties, ',', key).map(unescape_property);
    let (Some(file), Some(n)) = (property("file"), property("line").and_then(|l| l.parse::<u32>().ok())) else {
        return false;
    };
    let message = unescape_data(message);
    // Biome titles an annotation with the diagnostic's category: a rule's (`lint/...`) is a
    // linter finding whatever its level, `parse` a syntax error.
    let title = property("title");
    let category = title.as_deref().and_then(|t| {
        super::biome::category_type(t)
            .or_else(|| {
                // ty titles its annotations `ty (rule)`.
                let rule = t.strip_prefix("ty (")?.strip_suffix(')')?;
                Some(super::ty::rule_type(rule, command == "error").0)
            })
            .or_else(|| {
                // A lint code as the title, bare or after its tool's name: flake8's `--format`
                // for Actions (`title=%(code)s`), ruff's `Ruff (F401)`.
                let code = t.rsplit_once(" (").map_or(t, |(_, c)| c.strip_suffix(')').unwrap_or(c));
                let (code, rest) = split_lint_code(code)?;
                rest.is_empty().then(|| lint_finding_type(code, &message))
            })
    });
    report(sink, &file, n, command == "error", &message, category);
    true
}

/// `##vso[task.logissue type=error;sourcepath=/abs/a.py;linenumber=2;code=F401;]msg`.
fn azure(line: &str, sink: &mut Sink<'_>) -> bool {
    let Some(rest) = line.strip_prefix("##vso[task.logissue ") else {
        return false;
    };
    let Some((properties, message)) = rest.split_once(']') else {
        return false;
    };
    let property = |key: &str| property(properties, ';', key);
    let (Some(file), Some(n)) = (
        property("sourcepath"),
        property("linenumber").and_then(|l| l.parse::<u32>().ok()),
    ) else {
        return false;
    };
    let message = match property("code") {
        Some(code) if !code.is_empty() => format!("{code} {message}"),
        _ => message.to_owned(),
    };
    report(sink, file, n, property("type") == Some("error"), &message, None);
    true
}

/// `##teamcity[inspection typeId='errcheck' message='...' file='a.go' line='3' SEVERITY='ERROR']`:
/// an inspection is a linter's finding (golangci-lint's `typecheck` inspections are the
/// compiler's errors, typed by their words). Other service messages are not read.
fn teamcity(line: &str, sink: &mut Sink<'_>) -> bool {
    if let Some(rest) = line.strip_prefix("##teamcity[test") {
        return teamcity_test(rest, sink);
    }
    let Some(attributes) = line
        .strip_prefix("##teamcity[inspection ")
        .and_then(|rest| rest.trim_end().strip_suffix(']'))
    else {
        return false;
    };
    let value = |name: &str| teamcity_value(attributes, name);
    let (Some(file), Some(n)) = (value("file"), value("line").and_then(|l| l.parse::<u32>().ok())) else {
        return false;
    };
    let type_id = value("typeId").unwrap_or_default();
    let message = value("message").unwrap_or_default();
    let (error_type, rank) = if type_id == "typecheck" {
        super::go::go_type(&message)
    } else {
        (ErrorType::Linting, Rank::Warning)
    };
    sink.report(Finding {
        file: &file,
        line: n,
        error_type,
        message: Cow::Owned(format!("{type_id} {message}")),
        test: None,
        confidence: 0.9,
        rank,
        diagnostic: true,
    });
    true
}

/// A test's service message, after `##teamcity[test` (a test runner's TeamCity adapter, or
/// `go test -json` and `cargo test` output converted to them): `testFailed name='x' message='...'
/// details='...'` is a failed test whose details are its failure text, read as a JUnit test
/// case's failure is; `testFinished` a test that ran (it passed unless it failed), `testIgnored`
/// one skipped. The others (`testStarted`, `testStdOut`, suites) name no outcome.
fn teamcity_test(rest: &str, sink: &mut Sink<'_>) -> bool {
    let Some((kind, attributes)) = rest.split_once(' ') else {
        return false;
    };
    let Some(attributes) = attributes.trim_end().strip_suffix(']') else {
        return false;
    };
    let Some(name) = teamcity_value(attributes, "name") else {
        return false;
    };
    match kind {
        "Failed" => {
            let details = teamcity_value(attributes, "details").filter(|d| !d.trim().is_empty());
            let text = details
                .or_else(|| teamcity_value(attributes, "message"))
                .unwrap_or_default();
            super::structured::failed_test(&name, &text, sink);
        }
        "Finished" => sink.test(&name, super::TestOutcome::Passed),
        "Ignored" => sink.test(&name, super::TestOutcome::Skipped),
        _ => {}
    }
    true
}

/// The value of `name='value'` among a service message's attributes, its `|` escapes undone.
fn teamcity_value(attributes: &str, name: &str) -> Option<String> {
    let mut rest = attributes;
    loop {
        let (key, after) = rest.trim_start().split_once("='")?;
        // The value ends at the first `'` not escaped by `|`.
        let bytes = after.as_bytes();
        let mut end = 0;
        while end < bytes.len() && bytes[end] != b'\'' {
            end += if bytes[end] == b'|' { 2 } else { 1 };
        }
        let raw = after.get(..end)?;
        if key == name {
            let mut value = String::with_capacity(raw.len());
            let mut chars = raw.chars();
            while let Some(c) = chars.next() {
                if c != '|' {
                    value.push(c);
                    continue;
                }
                match chars.next() {
                    Some('n') => value.push('\n'),
                    Some('r') => value.push('\r'),
                    Some(other) => value.push(other),
                    None => {}
                }
            }
            return Some(value);
        }
        rest = after.get(end + 1..)?;
    }
}

/// The value of `key=value` in a list of properties separated by `separator`.
fn property<'a>(properties: &'a str, separator: char, key: &str) -> Option<&'a str> {
    properties
        .split(separator)
        .find_map(|p| p.trim().strip_prefix(key)?.strip_prefix('='))
}

/// Reports an annotation: typed by the code its message starts with, else by the `category` its
/// tool gave it, else by its level.
fn report(sink: &mut Sink<'_>, file: &str, line: u32, error: bool, message: &str, category: Option<ErrorType>) {
    // The message's first line; ruff's github output repeats the location in it.
    let first = message.lines().next().unwrap_or("").trim();
    let text = match split_location(first) {
        Some((_, _, rest)) if !rest.is_empty() => rest,
        _ => first,
    };
    let error_type = if let Some(c) = CODE.captures(text) {
        lint_finding_type(&c[1], &c[2])
    } else if let Some(c) = MYPY.captures(text) {
        mypy_type(c.get(2).map_or("", |m| m.as_str()), &c[1])
    } else if let Some(category) = category {
        category
    } else if let Some(error_type) = coded_type(file, text) {
        error_type
    } else if error {
        // An annotation from a tool we do not know by its code: a failure, not a style finding.
        ErrorType::Logic
    } else {
        ErrorType::Linting
    };
    sink.report(Finding {
        file,
        line,
        error_type,
        message: Cow::Borrowed(text),
        test: None,
        confidence: 0.9,
        rank: Rank::of(error_type),
        diagnostic: false,
    });
}

/// golangci-lint's linters whose name ends its findings' messages (`... (ineffassign)`): its
/// default set and the ones most configurations enable. A Go test's message that ends in a word
/// in parentheses (`... (timeout)`) is no linter's.
const GOLANGCI_LINTERS: &[&str] = &[
    "typecheck",
    "errcheck",
    "govet",
    "ineffassign",
    "staticcheck",
    "unused",
    "gosimple",
    "stylecheck",
    "revive",
    "gocritic",
    "gosec",
    "misspell",
    "unparam",
    "prealloc",
    "dupl",
    "goconst",
    "gocyclo",
    "gocognit",
    "gofmt",
    "gofumpt",
    "goimports",
    "lll",
    "nakedret",
    "bodyclose",
    "noctx",
    "errorlint",
    "exhaustive",
    "nilerr",
    "whitespace",
    "godot",
    "dogsled",
    "funlen",
    "nestif",
    "nolintlint",
    "unconvert",
    "copyloopvar",
    "intrange",
    "perfsprint",
    "testifylint",
    "thelper",
    "tparallel",
    "usestdlibvars",
    "wastedassign",
    "forcetypeassert",
    "errname",
    "contextcheck",
    "durationcheck",
    "makezero",
    "predeclared",
    "sqlclosecheck",
    "rowserrcheck",
    "asasalint",
    "asciicheck",
    "bidichk",
    "gochecknoinits",
    "goprintffuncname",
    "mnd",
    "nilnil",
    "wrapcheck",
    "err113",
];

/// The type a message's own code gives, as a problem matcher passes a tool's line on: rustc's
/// `error[E0308]: ...`, ty's `error[invalid-assignment] ...` (deno lint's rules, named alike, are
/// lint), golangci-lint's `message (linter)`.
fn coded_type(file: &str, text: &str) -> Option<ErrorType> {
    if let Some((error, rule, _)) = super::ty::header(text) {
        return Some(if super::ty::is_python_path(file) {
            super::ty::rule_type(rule, error).0
        } else {
            ErrorType::Linting
        });
    }
    if let Some((level, Some(code), message)) = super::rust::rustc_message(text) {
        return Some(super::rust::rustc_type(level, Some(code), message).0);
    }
    if file.ends_with(".go")
        && let Some((message, linter)) = text.strip_suffix(')').and_then(|t| t.rsplit_once(" ("))
        && GOLANGCI_LINTERS.contains(&linter)
    {
        return Some(if linter == "typecheck" {
            super::go::go_type(message).0
        } else {
            ErrorType::Linting
        });
    }
    None
}

/// Workflow command data escapes `%`, `\r` and `\n`.
fn unescape_data(s: &str) -> String {
    s.replace("%0D", "\r").replace("%0A", "\n").replace("%25", "%")
}

/// Property values also escape `:` and `,`.
fn unescape_property(s: &str) -> String {
    s.replace("%3A", ":")
        .replace("%2C", ",")
        .replace("%0D", "\r")
        .replace("%0A", "\n")
        .replace("%25", "%")
}

#[cfg(test)]
mod tests {
    use crate::parse::{Workspace, parse};

    /// TeamCity's test service messages, as the fifteenth outsider trial's script made them of
    /// `go test -v` and `cargo test --no-fail-fast` output (following TeamCity's documented
    /// format): each `testFailed`'s details are read as its failure text, named by the test; a
    /// doctest's panic is placed at its example; `testFinished` records a test that ran.
    #[test]
    fn teamcity_s_failed_tests_are_read_from_their_details() {
        let go = "##teamcity[blockOpened name='go test -count=1 ./...']
##teamcity[testSuiteStarted name='github.com/hashicorp/go-version' flowId='1']
##teamcity[testStarted name='TestCollection' captureStandardOutput='true' flowId='1']
##teamcity[testFailed name='TestCollection' message='version_collection_test.go:47: bad: |[|]string{\"2.0.0\", \"1.2.0\", \"1.1.1\", \"1.0.0\", \"0.7.1\"}' details='    version_collection_test.go:47: bad: |[|]string{\"2.0.0\", \"1.2.0\", \"1.1.1\", \"1.0.0\", \"0.7.1\"}' flowId='1']
##teamcity[testFinished name='TestCollection' flowId='1']
##teamcity[testStarted name='TestLessThanOrEqual' captureStandardOutput='true' flowId='1']
##teamcity[testFailed name='TestLessThanOrEqual' message='version_test.go:724: 1.2-beta <= 1.2-beta' details='    version_test.go:724: 1.2-beta <= 1.2-beta|n        expected: true|n        actual: false' flowId='1']
##teamcity[testFinished name='TestLessThanOrEqual' flowId='1']
##teamcity[testSuiteFinished name='github.com/hashicorp/go-version' flowId='1']
##teamcity[blockClosed name='go test -count=1 ./...']
";
        let rust = "##teamcity[testStarted name='test::test_decode' captureStandardOutput='true' flowId='1']
##teamcity[testFinished name='test::test_decode' flowId='1']
##teamcity[testFailed name='test::test_encode_to_slice' message='assertion `left == right` failed' details='thread |'test::test_encode_to_slice|' (25822) panicked at src/lib.rs:403:9:|nassertion `left == right` failed|n  left: |[54, 51, 54, 49, 55, 55, 54, 49|]|n right: |[54, 98, 54, 57, 55, 55, 54, 57|]|nstack backtrace:|n   0: __rustc::rust_begin_unwind|n             at /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/std/src/panicking.rs:689:5|n   1: core::panicking::panic_fmt|n             at /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/core/src/panicking.rs:80:14|n   2: core::panicking::assert_failed_inner|n             at /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/core/src/panicking.rs:439:17|n   3: core::panicking::assert_failed::<&|[u8; 8|], &|[u8; 8|]>|n             at /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/core/src/panicking.rs:394:5|n   4: hex::test::test_encode_to_slice|n             at ./src/lib.rs:403:9|n   5: hex::test::test_encode_to_slice::{closure#0}|n             at ./src/lib.rs:400:30|n   6: <hex::test::test_encode_to_slice::{closure#0} as core::ops::function::FnOnce<()>>::call_once|n             at /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/core/src/ops/function.rs:250:5|n   7: <fn() -> core::result::Result<(), alloc::string::String> as core::ops::function::FnOnce<()>>::call_once|n             at /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/core/src/ops/function.rs:250:5|nnote: Some details are omitted, run with `RUST_BACKTRACE=full` for a verbose backtrace.' flowId='1']
##teamcity[testFailed name='ui' message='1 of 2 tests failed' details='thread |'ui|' (25834) panicked at /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/trybuild-1.0.122/src/run.rs:103:13:|n1 of 2 tests failed|nstack backtrace:|n   0: __rustc::rust_begin_unwind|n             at /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/std/src/panicking.rs:689:5|n   1: core::panicking::panic_fmt|n             at /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/core/src/panicking.rs:80:14|n   2: <trybuild::Runner>::run|n             at /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/trybuild-1.0.122/src/run.rs:103:13|n   3: <trybuild::TestCases as core::ops::drop::Drop>::drop|n             at /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/trybuild-1.0.122/src/lib.rs:342:38|n   4: core::ptr::drop_in_place::<trybuild::TestCases>|n             at /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/core/src/ptr/mod.rs:805:1|n   5: trybuild::ui|n             at ./tests/trybuild.rs:6:1|n   6: trybuild::ui::{closure#0}|n             at ./tests/trybuild.rs:2:8|n   7: <trybuild::ui::{closure#0} as core::ops::function::FnOnce<()>>::call_once|n             at /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/core/src/ops/function.rs:250:5|n   8: <fn() -> core::result::Result<(), alloc::string::String> as core::ops::function::FnOnce<()>>::call_once|n             at /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/core/src/ops/function.rs:250:5|nnote: Some details are omitted, run with `RUST_BACKTRACE=full` for a verbose backtrace.' flowId='1']
##teamcity[testFailed name='src/lib.rs - encode_to_slice (line 357)' message='Test executable failed (exit status: 101).' details='Test executable failed (exit status: 101).|n|nstderr:|n|nthread |'main|' (25991) panicked at src/lib.rs:9:1:|nassertion `left == right` failed|n  left: |[54, 51, 54, 49, 55, 55, 54, 49|]|n right: |[54, 98, 54, 57, 55, 55, 54, 57|]|nstack backtrace:|n   0: __rustc::rust_begin_unwind|n             at /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/std/src/panicking.rs:689:5|n   1: core::panicking::panic_fmt|n             at /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/core/src/panicking.rs:80:14|n   2: core::panicking::assert_failed_inner|n             at /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/core/src/panicking.rs:439:17|n   3: core::panicking::assert_failed::<&|[u8; 8|], &|[u8; 8|]>|n   4: rust_out::main|n   5: <fn() -> core::result::Result<(), hex::error::FromHexError> as core::ops::function::FnOnce<()>>::call_once|nnote: Some details are omitted, run with `RUST_BACKTRACE=full` for a verbose backtrace.' flowId='1']
";
        let findings = |log, root, files: &[&str]| {
            let workspace = Workspace::new(root).with_files(files.iter().map(|f| (*f).to_owned()).collect());
            let parsed = parse(log, &workspace);
            let tests = parsed.failing_tests();
            let found: Vec<_> = crate::parse::report_tests(&parsed)
                .into_iter()
                .map(|(file, line, _, test)| (file.to_owned(), line, test.map(str::to_owned)))
                .collect();
            (found, tests, parsed.tests.len())
        };
        let (found, failing, _) = findings(
            go,
            "/work/heldout16/projects/go-version",
            &["version_test.go", "version_collection_test.go"],
        );
        assert_eq!(
            found,
            [
                (
                    "version_collection_test.go".to_owned(),
                    47,
                    Some("TestCollection".to_owned())
                ),
                (
                    "version_test.go".to_owned(),
                    724,
                    Some("TestLessThanOrEqual".to_owned())
                ),
            ]
        );
        assert_eq!(failing, ["TestCollection", "TestLessThanOrEqual"]);
        let (found, _, recorded) = findings(
            rust,
            "/work/heldout16/projects/hex",
            &["src/lib.rs", "tests/trybuild.rs"],
        );
        let places: Vec<_> = found.iter().map(|(file, line, _)| (file.as_str(), *line)).collect();
        assert_eq!(
            places,
            [("src/lib.rs", 403), ("tests/trybuild.rs", 6), ("src/lib.rs", 357)]
        );
        // Three failed tests and the one that finished.
        assert_eq!(recorded, 4);
    }

    /// Azure problem matchers' `logissue` lines from the fifteenth outsider trial (ty's concise
    /// output, golangci-lint's, cargo's short output): each typed by the code its message starts
    /// or ends with, not as an unknown tool's failure (LOGIC).
    #[test]
    fn a_logissue_is_typed_by_its_message_s_code() {
        let log = "##vso[task.logissue type=error;sourcepath=src/cachetools/__init__.py;linenumber=229;columnnumber=28]error[unsupported-operator] Operator `+` is not supported between objects of type `str` and `int`
##vso[task.logissue type=error;sourcepath=src/cachetools/func.py;linenumber=117;columnnumber=45]error[unresolved-reference] Name `timr` used when not defined
##vso[task.logissue type=error;sourcepath=src/cachetools/__init__.py;linenumber=635;columnnumber=5]warning[mismatched-type-name] The name passed to `namedtuple` must match the variable it is assigned to: Expected \"_CacheInfo\", got \"CacheInfo\"
##vso[task.logissue type=error;sourcepath=version.go;linenumber=214;columnnumber=6;code=ineffassign]ineffectual assignment to selfInt (ineffassign)
##vso[task.logissue type=error;sourcepath=src/lib.rs;linenumber=323;columnnumber=17]error[E0425]: cannot find function `value` in this scope: not found in this scope
##vso[task.logissue type=error;sourcepath=src/lib.rs;linenumber=378;columnnumber=21]error[E0308]: mismatched types: expected `u8`, found `u16`
::error file=a_test.go,line=3::TestAdd failed: connection refused (timeout)
";
        let parsed = parse(log, &Workspace::new("/w"));
        let types: Vec<_> = crate::parse::report_findings(&parsed)
            .into_iter()
            .map(|(file, line, error_type, _)| (file, line, error_type))
            .collect();
        assert_eq!(
            types,
            [
                ("src/cachetools/__init__.py", 229, "TypeError".to_owned()),
                ("src/cachetools/func.py", 117, "Import".to_owned()),
                ("src/lib.rs", 323, "Import".to_owned()),
                ("src/lib.rs", 378, "TypeError".to_owned()),
                // From a review: a word in parentheses is a golangci-lint linter's only when it
                // names one.
                ("a_test.go", 3, "Logic".to_owned()),
                ("src/cachetools/__init__.py", 635, "Linting".to_owned()),
                ("version.go", 214, "Linting".to_owned()),
            ]
        );
    }

    #[test]
    fn a_biome_annotation_is_typed_by_its_category() {
        // `biome lint --reporter=github` (Biome 2): a rule's error is a linter finding, as its
        // warnings and notices are; a `parse` error is a syntax error. Another tool's error
        // annotation, without a code, is a failure.
        let log = "\
::notice title=lint/style/useTemplate,file=/w/index.js,line=116,endLine=116,col=12,endColumn=36::Template literals are preferred over string concatenation.
::error title=lint/suspicious/noDoubleEquals,file=/w/index.js,line=31,endLine=31,col=19,endColumn=21::Using == may be unsafe if you are relying on type coercion.
::error title=parse,file=/w/index.js,line=40,col=30::Expected a semicolon or an implicit semicolon after a statement, but found none
::error title=build failed,file=/w/index.js,line=50::Cannot read properties of undefined
";
        let parsed = parse(log, &Workspace::new("/w"));
        let mut got: Vec<(u32, String)> = parsed
            .reports
            .iter()
            .map(|r| (r.line_number, format!("{:?}", r.error_type)))
            .collect();
        got.sort();
        let expected = [(31, "Linting"), (40, "Syntax"), (50, "Logic"), (116, "Linting")];
        assert_eq!(
            got,
            expected.iter().map(|&(n, t)| (n, t.to_owned())).collect::<Vec<_>>(),
            "{:#?}",
            parsed.reports
        );
    }

    #[test]
    fn a_teamcity_inspection_is_a_finding_and_its_escapes_are_undone() {
        // golangci-lint 2.6 `--output.teamcity.path=stdout`, and an escaped message.
        let log = "\
##teamcity[inspectionType id='ineffassign' name='ineffassign' description='ineffassign' category='Golangci-lint reports']
##teamcity[inspection typeId='ineffassign' message='ineffectual assignment to base' file='bytes.go' line='90' SEVERITY='ERROR']
##teamcity[inspection typeId='typecheck' message='undefined: strngs' file='english/words.go' line='79' SEVERITY='ERROR']
##teamcity[inspection typeId='revive' message='don|'t |[stutter|]|nsee ||' file='a.go' line='3' SEVERITY='WARNING']
##teamcity[testStarted name='TestX']
";
        let parsed = parse(log, &Workspace::new("/w"));
        let got = crate::parse::report_findings(&parsed);
        assert_eq!(
            got,
            [
                (
                    "english/words.go",
                    79,
                    "Import".to_owned(),
                    "typecheck undefined: strngs"
                ),
                (
                    "bytes.go",
                    90,
                    "Linting".to_owned(),
                    "ineffassign ineffectual assignment to base"
                ),
                ("a.go", 3, "Linting".to_owned(), "revive don't [stutter]\nsee |"),
            ]
        );
    }
}
