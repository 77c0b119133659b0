//! CI annotations that tools print for the CI to pick up: GitHub Actions workflow commands
//! (`::error file=...,line=...::message`, ruff's and flake8's `github` output, any tool's
//! annotations), Azure Pipelines logging commands (`##vso[task.logissue ...]message`, ruff's
//! `azure` output) and TeamCity's inspection service messages (`##teamcity[inspection ...]`,
//! golangci-lint's `teamcity` output). They name the file and line as properties; the message may itself be a
//! `path:line:col: CODE text` diagnostic, whose code gives the bug type.

use std::borrow::Cow;
use std::sync::LazyLock;

use regex::Regex;

use super::lint::mypy_type;
use super::rust::lint_finding_type;
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
    let category = property("title").and_then(|t| super::biome::category_type(&t));
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
