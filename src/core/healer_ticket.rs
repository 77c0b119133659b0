//! A HealerTicket's intake decisions (seed 004): what kind of error a report is (`classify`), why
//! it cannot be fixed by a contract when it cannot (`diagnostic`), which reports are the same
//! error (`normalize`, `fingerprint`, `ticket_name`), in which order tickets are analysed
//! (`queue_key`), and the phase intake gives a ticket (`decide`).
//!
//! The classifier is one table, [`RULES`], read top to bottom. A report's classification has two
//! halves, each taken from the first row that matches the report and decides that half:
//!
//! - *what* it is — error type, tier and priority — from seed 004's tier tables;
//! - *who* can fix it — `fixable_by` — from seed 004's generator-bug and data-issue lists, plus
//!   kubeheal's `code` class, and `contract` for everything else.
//!
//! The halves are separate because the seed's own example needs both at once: `column 'severity'
//! does not exist` from a runtime 500 is a generator bug (who) *and* a tier-3 CRITICAL
//! `runtime_500` (what).
//!
//! Message patterns only count where they start outside a quoted value: `KeyError: 'timeout'` is
//! a missing key named `timeout`, not a timeout.

use std::collections::BTreeMap;
use std::sync::LazyLock;

use k8s_openapi::jiff::Timestamp;
use regex::{Captures, Regex};
use sha2::{Digest, Sha256};

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use crate::api::healer_ticket::{
    Classification, FixableBy, HealerTicket, HealerTicketStatus, Priority, TicketPhase, TicketSource,
};
use crate::api::shared::condition;
use crate::core::heal_run::{Note, upsert_condition};

/// What an error report says, from any ingest path.
pub struct Report<'a> {
    pub source: TicketSource,
    pub error: &'a str,
    pub stacktrace: Option<&'a str>,
    pub context: &'a BTreeMap<String, String>,
    pub contract_fqn: Option<&'a str>,
    /// A repository path the ticket targets (`spec.target.path`), if any.
    pub path: Option<&'a str>,
    /// The ticket targets a repository to heal (a `healRun` template): an error whose stack
    /// trace points into project code is then `fixable_by: code`.
    pub targets_code: bool,
    /// `spec.priority`: overrides the classifier's priority.
    pub priority: Option<Priority>,
}

/// The report a ticket's spec makes.
pub fn report(ticket: &HealerTicket) -> Report<'_> {
    let spec = &ticket.spec;
    Report {
        source: spec.source,
        error: &spec.error,
        stacktrace: spec.stacktrace.as_deref(),
        context: &spec.context,
        contract_fqn: spec.target.contract_fqn.as_deref(),
        path: spec.target.path.as_deref(),
        targets_code: spec.target.heal_run.is_some(),
        priority: spec.priority,
    }
}

/// When a row of [`RULES`] applies to a report (besides its sources).
#[derive(Clone, Copy, Debug)]
pub enum When {
    /// The error message matches `regex` at a place outside any quoted value. `seed` is the
    /// pattern as seed 004's table writes it.
    Message { seed: &'static str, regex: &'static str },
    /// The report is an HTTP 500: the context's `status_code` is 500, or the message says so
    /// (`500 Internal Server Error`, `HTTP 500`, `status code 500`, `→ 500:`).
    Http500,
    /// The ticket targets a repository to heal and the stack trace has a frame in the project's
    /// own code.
    ProjectFrame,
    /// Every report of the row's sources.
    Always,
}

/// What an error is: the half of a classification seed 004's tier tables decide.
#[derive(Clone, Copy, Debug)]
pub struct What {
    pub error_type: &'static str,
    pub tier: u8,
    pub priority: Priority,
}

/// One row of the classifier.
#[derive(Clone, Copy, Debug)]
pub struct Rule {
    /// The sources the row applies to.
    pub sources: &'static [TicketSource],
    pub when: When,
    /// What the error is, if this row decides it.
    pub what: Option<What>,
    /// Who can fix it, if this row decides it.
    pub fixable_by: Option<FixableBy>,
    /// For generator and data rows: what to do instead of a contract change.
    pub advice: &'static str,
}

use TicketSource::{Compilation, Manual, Runtime, Validation};

const ALL: &[TicketSource] = &[Validation, Compilation, Runtime, Manual];
/// A contract validation error is a statement about a contract, never about data or generated
/// code: the generator and data rows do not look at it (`timeout_seconds: -1 is less than the
/// minimum of 0` is not a timeout).
const NOT_VALIDATION: &[TicketSource] = &[Compilation, Runtime, Manual];
/// Seed 004's tier-1 and tier-2 patterns are contract errors; a runtime error is tier 3 whatever
/// its text (a runtime `'x' is not one of [...]` is still an outage of the running app).
const CONTRACT_SOURCES: &[TicketSource] = &[Validation, Compilation, Manual];

const fn data(seed: &'static str, regex: &'static str, advice: &'static str) -> Rule {
    Rule {
        sources: NOT_VALIDATION,
        when: When::Message { seed, regex },
        what: None,
        fixable_by: Some(FixableBy::Data),
        advice,
    }
}

const fn generator(seed: &'static str, regex: &'static str, advice: &'static str) -> Rule {
    Rule {
        sources: NOT_VALIDATION,
        when: When::Message { seed, regex },
        what: None,
        fixable_by: Some(FixableBy::Generator),
        advice,
    }
}

/// A contract error of seed 004's tier tables. Priorities (the seed gives them for tier 3 only):
/// tier 1 is LOW — cosmetic, fixed deterministically without anyone waiting —, tier 2 MEDIUM — a
/// structural contract error, not yet an outage —, as `Priority`'s own documentation reads.
const fn contract(seed: &'static str, regex: &'static str, error_type: &'static str, tier: u8) -> Rule {
    Rule {
        sources: CONTRACT_SOURCES,
        when: When::Message { seed, regex },
        what: Some(What {
            error_type,
            tier,
            priority: if tier == 1 { Priority::Low } else { Priority::Medium },
        }),
        fixable_by: None,
        advice: "",
    }
}

const fn what(
    sources: &'static [TicketSource],
    when: When,
    error_type: &'static str,
    tier: u8,
    priority: Priority,
) -> Rule {
    Rule {
        sources,
        when,
        what: Some(What {
            error_type,
            tier,
            priority,
        }),
        fixable_by: None,
        advice: "",
    }
}

/// The classifier, read top to bottom; see the module documentation.
///
/// Order of the `fixable_by` rows: data issues first (a data error's stack trace always passes
/// through the project's code, and no code change removes a duplicate row or starts a database),
/// then kubeheal's `code` class (in a hand-written repository, a bad import or a wrong column
/// name is the project's own bug, not a generator's), then seed 004's generator bugs.
pub static RULES: &[Rule] = &[
    // Data issues (seed 004: "not fixable by contract").
    data(
        "duplicate key value violates unique constraint",
        r"(?i)\bduplicate key value violates unique constraint\b",
        "A row with the same unique key already exists: the request or the stored data repeats a value that must be unique.",
    ),
    // PostgreSQL's own wording puts "violates" first (`violates foreign key constraint`); the
    // seed's order is accepted too.
    data(
        "foreign key violates",
        r"(?i)\bviolates foreign key constraint\b|\bforeign key\b.*?\bviolates\b",
        "A row refers to a row that does not exist (or one still referred to was deleted): the data is inconsistent.",
    ),
    data(
        "null value in column violates not-null",
        r"(?i)\bnull value in column\b.*?\bviolates not-null\b",
        "A required column was given no value: the request or the stored data lacks it.",
    ),
    // `\w*timeout` also catches `TimeoutError`, `ReadTimeout`, `statement timeout`, but not an
    // identifier that merely starts with the word (`timeout_seconds`); Node.js says the same
    // with its error codes (`connect ECONNREFUSED 127.0.0.1:5432`).
    data(
        "connection refused / timeout",
        r"(?i)\bconnection refused\b|\b\w*timeout(?:error|exception)?\b|\btimed out\b|\bE(?:CONNREFUSED|TIMEDOUT)\b",
        "A service the application depends on did not answer: check that it runs, is reachable and is not overloaded.",
    ),
    // kubeheal's class.
    Rule {
        sources: ALL,
        when: When::ProjectFrame,
        what: None,
        fixable_by: Some(FixableBy::Code),
        advice: "",
    },
    // Generator bugs (seed 004: "not fixable by contract").
    // The seed's `invalid UUID` (asyncpg's wording), with PostgreSQL's and Python's `uuid`
    // module's wording for the same error.
    generator(
        "invalid UUID",
        r"(?i)\binvalid UUID\b|\binvalid input syntax for type uuid\b|\bbadly formed hexadecimal UUID string\b",
        "The generated code passes a value that is not a UUID where the database expects one: the generated route or repository does not validate or convert it.",
    ),
    // `column "x" does not exist`, `column "x" of relation "t" does not exist`, `column t.x does
    // not exist`, and the seed's `column 'x' does not exist`.
    generator(
        "column does not exist",
        r#"(?i)\bcolumn\s+(?:"[^"\n]*"|'[^'\n]*'|[\w.$]+)(?:\s+of\s+relation\s+(?:"[^"\n]*"|'[^'\n]*'|[\w.$]+))?\s+does\s+not\s+exist\b"#,
        "The generated SQL names a column the generated schema does not have: the repository, DDL or migration generator disagree, or a migration was not run.",
    ),
    generator(
        "syntax error at or near",
        r"(?i)\bsyntax error at or near\b",
        "The generated SQL does not parse: the Postgres or repository generator wrote invalid SQL.",
    ),
    generator(
        "ImportError / ModuleNotFoundError",
        r"(?i)\b(?:ImportError|ModuleNotFoundError)\b",
        "The generated code imports a module or name that does not exist: a generator wrote a wrong import or a missing file.",
    ),
    generator(
        "NameError / AttributeError",
        r"(?i)\b(?:NameError|AttributeError)\b",
        "The generated code uses a name or attribute that does not exist: a generator template refers to something it did not define.",
    ),
    // Tier 3 — runtime. A 500 is recognised from the runtime (or a manually submitted) report's
    // context `status_code`, seed 004's key, or from its message.
    what(&[Runtime, Manual], When::Http500, "runtime_500", 3, Priority::Critical),
    what(&[Runtime], When::Always, "runtime_exception", 3, Priority::High),
    // Tier 1 — deterministic. Case-sensitive: `^[a-z]…` and `^[A-Z]…` differ only in case. Either
    // quote around the pattern (Python's repr uses single quotes).
    contract(
        "does not match '^[a-z][a-z0-9_]*$'",
        r#"does not match ['"]\^\[a-z\]\[a-z0-9_\]\*\$['"]"#,
        "naming",
        1,
    ),
    contract(
        "does not match '^(entity|workflow...",
        r#"does not match ['"]\^\(entity\|workflow"#,
        "fqn_format",
        1,
    ),
    contract(
        "does not match '^[A-Z][A-Z0-9_]*$'",
        r#"does not match ['"]\^\[A-Z\]\[A-Z0-9_\]\*\$['"]"#,
        "graph_edge",
        1,
    ),
    contract(
        "does not match '^[A-Z]{2,6}$'",
        r#"does not match ['"]\^\[A-Z\]\{2,6\}\$['"]"#,
        "number_prefix",
        1,
    ),
    // Tier 2 — structural.
    contract(
        "is a required property",
        r"(?i)\bis a required property\b",
        "missing_field",
        2,
    ),
    contract(
        "is not valid under any of the given schemas",
        r"(?i)\bis not valid under any of the given schemas\b",
        "schema_mismatch",
        2,
    ),
    contract("is not one of", r"(?i)\bis not one of\b", "invalid_enum", 2),
    contract(
        "unresolved reference",
        r"(?i)\bunresolved reference\b",
        "missing_reference",
        2,
    ),
    // `cycle` as a word (and `cycles`, `cyclic`, and the table's own example, "Circular
    // dependency"), so that a field named `lifecycle` is not a cycle.
    contract("cycle", r"(?i)\bcycl(?:e|es|ic)\b|\bcircular\b", "dependency_cycle", 2),
    // Nothing matched: by source (the priority "else from the source").
    what(&[Validation], When::Always, "structural", 2, Priority::Medium),
    what(&[Compilation], When::Always, "compilation_error", 2, Priority::Medium),
    what(&[Manual], When::Always, "unknown", 2, Priority::Medium),
    Rule {
        sources: ALL,
        when: When::Always,
        what: None,
        fixable_by: Some(FixableBy::Contract),
        advice: "",
    },
];

/// `RULES`' message patterns, compiled once, by row.
static PATTERNS: LazyLock<Vec<Option<Regex>>> = LazyLock::new(|| {
    RULES
        .iter()
        .map(|rule| match rule.when {
            When::Message { seed, regex } => {
                Some(Regex::new(regex).unwrap_or_else(|e| panic!("classifier pattern {seed:?}: {e}")))
            }
            _ => None,
        })
        .collect()
});

static HTTP_500: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b500 internal server error\b|\bHTTP(?:/[\d.]+)?\s+500\b|\bstatus(?:[ _]code)?\s*[=:]?\s*500\b|(?:→|->)\s*500\b")
        .expect("regex")
});

/// The rows that match `report`, in table order.
fn matching(report: &Report<'_>) -> impl Iterator<Item = &'static Rule> {
    let quoted = quoted_spans(report.error);
    RULES.iter().zip(PATTERNS.iter()).filter_map(move |(rule, pattern)| {
        let applies = rule.sources.contains(&report.source)
            && match rule.when {
                When::Message { .. } => pattern.as_ref().is_some_and(|p| {
                    p.find_iter(report.error)
                        .any(|m| !quoted.iter().any(|&(start, end)| start <= m.start() && m.start() < end))
                }),
                When::Http500 => {
                    report.context.get("status_code").is_some_and(|s| s.trim() == "500")
                        || HTTP_500.is_match(report.error)
                }
                When::ProjectFrame => report.targets_code && project_frame(report.stacktrace).is_some(),
                When::Always => true,
            };
        applies.then_some(rule)
    })
}

/// The row that decides who can fix `report`.
fn fixable_rule(report: &Report<'_>) -> Option<&'static Rule> {
    matching(report).find(|rule| rule.fixable_by.is_some())
}

/// Seed 004's classification of `report`, with kubeheal's `code` class and `report.priority`
/// as an override.
pub fn classify(report: &Report<'_>) -> Classification {
    // The table ends in rows that match every report of every source, so both are found; the
    // fallbacks only keep this total.
    let what = matching(report).find_map(|rule| rule.what).unwrap_or(What {
        error_type: "unknown",
        tier: 2,
        priority: Priority::Medium,
    });
    let fixable_by = fixable_rule(report)
        .and_then(|rule| rule.fixable_by)
        .unwrap_or(FixableBy::Contract);
    Classification {
        error_type: what.error_type.to_owned(),
        tier: what.tier,
        fixable_by,
        priority: report.priority.unwrap_or(what.priority),
    }
}

/// Why a ticket classified as generator or data cannot be fixed by a contract change, and what
/// to do instead; None for contract/code.
pub fn diagnostic(classification: &Classification, report: &Report<'_>) -> Option<String> {
    let (who, instead) = match classification.fixable_by {
        FixableBy::Contract | FixableBy::Code => return None,
        FixableBy::Generator => (
            "a generator bug",
            "Fix the generator (or its template) and regenerate; changing the contract would not change the code it writes.",
        ),
        FixableBy::Data => (
            "a data or infrastructure issue",
            "Correct the data or the environment; neither a contract nor a code change removes it.",
        ),
    };
    let rule = fixable_rule(report).filter(|rule| rule.fixable_by == Some(classification.fixable_by));
    let (pattern, advice) = match rule {
        Some(Rule {
            when: When::Message { seed, .. },
            advice,
            ..
        }) => (format!(" (it matches `{seed}`)"), format!(" {advice}")),
        _ => (String::new(), String::new()),
    };
    let target = report
        .contract_fqn
        .or(report.path)
        .map(|t| format!(" for {t}"))
        .unwrap_or_default();
    Some(format!(
        "Not fixable by a contract change: the {} error{target} is {who}{pattern}.{advice} {instead}",
        classification.error_type
    ))
}

/// Where quoted values are in `text`, as byte ranges from the opening to the closing quote.
///
/// A quote opens a value only at the start or after a character that is not alphanumeric, and
/// closes it only before one, so the apostrophes of `doesn't` and `can't` quote nothing.
fn quoted_spans(text: &str) -> Vec<(usize, usize)> {
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let boundary = |i: Option<usize>| i.and_then(|i| chars.get(i)).is_none_or(|&(_, c)| !c.is_alphanumeric());
    let mut spans = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let (start, c) = chars[i];
        if matches!(c, '\'' | '"' | '`') && boundary(i.checked_sub(1)) {
            let close = (i + 1..chars.len()).find(|&j| chars[j].1 == c && boundary(Some(j + 1)));
            if let Some(j) = close {
                spans.push((start, chars[j].0 + c.len_utf8()));
                i = j + 1;
                continue;
            }
        }
        i += 1;
    }
    spans
}

/// One replacement of [`normalize`]: what a volatile part looks like and its placeholder.
struct Volatile {
    pattern: Regex,
    placeholder: &'static str,
}

/// In order: the longer shapes first, since they contain numbers (a timestamp, a UUID), and
/// quoted values before bare numbers.
static VOLATILE: LazyLock<Vec<Volatile>> = LazyLock::new(|| {
    let v = |pattern: &str, placeholder| Volatile {
        pattern: Regex::new(pattern).unwrap_or_else(|e| panic!("normalize pattern {pattern:?}: {e}")),
        placeholder,
    };
    vec![
        // ISO 8601 / RFC 3339 dates and times, and bare times of day.
        v(
            r"\b\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?)?(?:Z|[+-]\d{2}:?\d{2}\b)?",
            "<time>",
        ),
        v(r"\b\d{1,2}:\d{2}:\d{2}(?:[.,]\d+)?\b", "<time>"),
        v(
            r"(?i)\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b",
            "<uuid>",
        ),
        v(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+", "<email>"),
        // IPv4 and IPv6 addresses, with their port.
        v(r"\b(?:\d{1,3}\.){3}\d{1,3}(?::\d{1,5})?\b", "<ip>"),
        v(r"(?i)\[[0-9a-f:.]*:[0-9a-f:.]*\](?::\d{1,5})?", "<ip>"),
        v(r"::1\b", "<ip>"),
        v(r"(?i)\b0x[0-9a-f]+\b", "<hex>"),
    ]
});

/// Unbracketed IPv6 addresses: hex groups and at least three colons, with a digit somewhere (so
/// that a path such as `add::decode::bad` stays).
static IPV6: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?i)\b[0-9a-f]{0,4}(?::[0-9a-f]{0,4}){3,7}\b").expect("regex"));
/// Long hex ids (object ids, digests): at least 8 hex digits with both a digit and a letter.
static HEX_ID: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"(?i)\b[0-9a-f]{8,}\b").expect("regex"));
/// A quoted value that is data by the words before it: PostgreSQL's `for type uuid: "abc"`,
/// asyncpg's `query argument $1: 'abc'` and `invalid UUID 'abc'`.
static DATA_QUOTE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"(?i)(\b(?:for type \w+|invalid UUID|query argument \$\d+)\s*:?\s*)(['"])[^'"\n]*(['"])"#)
        .expect("regex")
});
/// PostgreSQL's DETAIL values: `Key (email)=(a@example.com)`, `Failing row contains (3, null)`.
static ROW_VALUES: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?i)(\)=|\bfailing row contains )\([^\n]*?\)(\s|\.|$)").expect("regex"));
/// A quoted value that names something (a field, key, column, module): kept, since a different
/// name is a different error.
static IDENTIFIER: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^[A-Za-z_][A-Za-z0-9_.\-/]{0,63}$").expect("regex"));
static NUMBER: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"\b\d+(?:\.\d+)?\b").expect("regex"));

/// The error message with its volatile parts replaced by placeholders (numbers, hex ids, UUIDs,
/// IP addresses and ports, timestamps, quoted values that vary...).
///
/// Quoted values that are names (`'resolution'`, `"users_email_key"`) are kept: they tell one
/// error from another. Quoted values that are data — not a name, or placed where a driver quotes
/// input — become `<v>`.
pub fn normalize(message: &str) -> String {
    let mut text = message.trim().to_owned();
    for volatile in VOLATILE.iter() {
        text = volatile.pattern.replace_all(&text, volatile.placeholder).into_owned();
    }
    text = IPV6
        .replace_all(&text, |c: &Captures<'_>| {
            let address = &c[0];
            if address.bytes().any(|b| b.is_ascii_digit()) {
                "<ip>".to_owned()
            } else {
                address.to_owned()
            }
        })
        .into_owned();
    text = HEX_ID
        .replace_all(&text, |c: &Captures<'_>| {
            let id = &c[0];
            if id.bytes().any(|b| b.is_ascii_digit()) && id.bytes().any(|b| b.is_ascii_alphabetic()) {
                "<hex>".to_owned()
            } else {
                id.to_owned()
            }
        })
        .into_owned();
    text = DATA_QUOTE.replace_all(&text, "${1}${2}<v>${3}").into_owned();
    text = ROW_VALUES.replace_all(&text, "${1}(<v>)${2}").into_owned();
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    for (start, end) in quoted_spans(&text) {
        let quote = &text[start..start + 1];
        let inner = &text[start + 1..end - 1];
        if IDENTIFIER.is_match(inner) || inner == "<v>" {
            continue;
        }
        out.push_str(&text[last..start]);
        out.push_str(quote);
        out.push_str("<v>");
        out.push_str(quote);
        last = end;
    }
    out.push_str(&text[last..]);
    NUMBER.replace_all(&out, "<n>").into_owned()
}

/// One frame of a stack trace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    pub file: String,
    /// 1-based; 0 when the trace does not say.
    pub line: u32,
    pub function: String,
}

/// `  File "/app/routes.py", line 42, in update_ticket` (Python).
static PYTHON_FRAME: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r#"^\s*File "([^"]+)", line (\d+)(?:, in (.+?))?\s*$"#).expect("regex"));
/// `    at updateTicket (/app/src/routes.js:42:13)`, `    at /app/src/x.js:1:2` (JavaScript).
static JS_FRAME: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\s*at (?:async )?(?:(.+?) \()?((?:file://)?[^\s()]+?):(\d+)(?::\d+)?\)?\s*$").expect("regex")
});
/// Files that are not the project's: installed packages, the standard library, and pseudo-files
/// (`<string>`, `<frozen runpy>`, `node:internal/…`, `[eval]`).
static LIBRARY: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)(?:^|[/\\])(?:site-packages|dist-packages|node_modules)[/\\]|[/\\]lib(?:64)?[/\\]python\d|[/\\]python\d+[/\\]lib[/\\]|^<|^\[|^node:|^internal[/\\]",
    )
    .expect("regex")
});

/// The frames of a Python or JavaScript stack trace, innermost (where the error was raised)
/// first: Python prints them outermost first, JavaScript innermost first.
pub fn frames(stacktrace: &str) -> Vec<Frame> {
    let mut python: Vec<Frame> = stacktrace
        .lines()
        .filter_map(|line| PYTHON_FRAME.captures(line))
        .map(|c| Frame {
            file: c[1].to_owned(),
            line: c[2].parse().unwrap_or(0),
            function: c.get(3).map_or("", |m| m.as_str()).to_owned(),
        })
        .collect();
    python.reverse();
    let javascript = stacktrace
        .lines()
        .filter_map(|line| JS_FRAME.captures(line))
        .map(|c| Frame {
            file: c[2].to_owned(),
            line: c[3].parse().unwrap_or(0),
            function: c.get(1).map_or("", |m| m.as_str()).to_owned(),
        });
    python.into_iter().chain(javascript).collect()
}

/// The innermost frame in the project's own code, if the stack trace has one.
pub fn project_frame(stacktrace: Option<&str>) -> Option<Frame> {
    project_frames(stacktrace?).into_iter().next()
}

/// The frames in the project's own code (not installed packages, the standard library or
/// pseudo-files), innermost first.
pub fn project_frames(stacktrace: &str) -> Vec<Frame> {
    frames(stacktrace)
        .into_iter()
        .filter(|frame| !LIBRARY.is_match(&frame.file))
        .collect()
}

/// The line of the error that says what it is: the first, or for a Python traceback pasted into
/// the message, the exception line at its end.
pub fn headline(error: &str) -> &str {
    let mut lines = error.lines().map(str::trim).filter(|line| !line.is_empty());
    match lines.next() {
        Some(first) if first.starts_with("Traceback (most recent call last)") => lines.next_back().unwrap_or(first),
        Some(first) => first,
        None => "",
    }
}

fn source_name(source: TicketSource) -> &'static str {
    match source {
        TicketSource::Validation => "validation",
        TicketSource::Compilation => "compilation",
        TicketSource::Runtime => "runtime",
        TicketSource::Manual => "manual",
    }
}

/// sha256 hex of source, target (contract fqn or path), error type, normalize(error's first line)
/// and the top stack frame in the project's code (file and function, no line number) — the
/// same error from two replicas or two requests gets the same fingerprint.
pub fn fingerprint(report: &Report<'_>, classification: &Classification) -> String {
    let frame = project_frame(report.stacktrace)
        .map(|f| format!("{}:{}", f.file, f.function))
        .unwrap_or_default();
    let parts: [&str; 5] = [
        source_name(report.source),
        report.contract_fqn.or(report.path).unwrap_or(""),
        classification.error_type.as_str(),
        &normalize(headline(report.error)),
        &frame,
    ];
    let mut hash = Sha256::new();
    for part in parts {
        // Each part ends in a NUL, which none contains: ("ab", "c") and ("a", "bc") differ.
        hash.update(part.as_bytes());
        hash.update([0]);
    }
    hash.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// The ticket's object name from its fingerprint: `ht-` + the first 16 hex digits (a valid
/// Kubernetes name, deterministic so that replicas agree without talking).
pub fn ticket_name(fingerprint: &str) -> String {
    let digits: String = fingerprint
        .chars()
        .filter(char::is_ascii_hexdigit)
        .map(|c| c.to_ascii_lowercase())
        .take(16)
        .collect();
    format!("ht-{digits}")
}

/// Most recurrences of one error filed as tickets of their own (`ht-…-r2` to `ht-…-r100`); later
/// ones are counted on the last.
pub const MAX_RECURRENCES: u32 = 100;

/// Whether occurrences last seen at `last` re-open `ticket` as a recurrence: its fix was applied
/// before them, so the error came back. A ticket that failed or was rejected still stands for
/// the error (no fix was made), and counts them.
pub fn recurs_after(status: Option<&HealerTicketStatus>, last: Timestamp) -> bool {
    status.is_some_and(|s| {
        s.phase == Some(TicketPhase::Applied) && s.resolved_at.as_ref().is_none_or(|resolved| last > resolved.0)
    })
}

/// The name the recurrence after ticket `current` is filed under: `<first>-r2`, `-r3`, …, or
/// `None` past [`MAX_RECURRENCES`]. Deterministic, so replicas agree.
pub fn next_recurrence(first: &str, current: &str) -> Option<String> {
    let n = match current.strip_prefix(first).and_then(|r| r.strip_prefix("-r")) {
        Some(n) => n.parse::<u32>().ok()? + 1,
        None => 2,
    };
    (n <= MAX_RECURRENCES).then(|| format!("{first}-r{n}"))
}

/// Queue order: CRITICAL → HIGH → MEDIUM → LOW, FIFO by creation time within a priority, then name.
pub fn queue_key(priority: Priority, created: Timestamp, name: &str) -> (u8, Timestamp, String) {
    let order = match priority {
        Priority::Critical => 0,
        Priority::High => 1,
        Priority::Medium => 2,
        Priority::Low => 3,
    };
    (order, created, name.to_owned())
}

/// What the HealerTicket controller decides for a ticket: its classification and fingerprint,
/// and the phase intake gives it — `Queued` for a contract or code fix (proposals are the next
/// stage), `Failed` with a diagnostic at once for a generator bug or a data issue (seed 004: no
/// contract fix is attempted) — plus the Event of a transition. Occurrence counts are the
/// ingest's, not decided here.
pub fn decide(
    report: &Report<'_>,
    previous: &HealerTicketStatus,
    now: Timestamp,
) -> (HealerTicketStatus, Option<Note>) {
    let mut status = previous.clone();
    let classification = classify(report);
    status.fingerprint = Some(fingerprint(report, &classification));
    // Past intake, the fixing half (`core::ticket_fix`) owns the phase and the conditions.
    if matches!(
        previous.phase,
        Some(TicketPhase::Analyzing | TicketPhase::Proposed | TicketPhase::Approved)
    ) {
        status.classification = Some(classification);
        return (status, None);
    }
    let terminal = matches!(
        previous.phase,
        Some(TicketPhase::Applied | TicketPhase::Failed | TicketPhase::Rejected)
    );
    let phase = if terminal {
        previous.phase.unwrap_or(TicketPhase::Failed)
    } else if let Some(why) = diagnostic(&classification, report) {
        status.resolved_at.get_or_insert(Time(now));
        status.resolution_note = Some(why);
        TicketPhase::Failed
    } else {
        TicketPhase::Queued
    };
    status.classification = Some(classification.clone());
    let message = status.resolution_note.clone().unwrap_or_else(|| {
        format!(
            "{} (tier {}, fixable by {}, {}): queued for a proposal",
            classification.error_type,
            classification.tier,
            crate::api::shared::wire_name(&classification.fixable_by),
            crate::api::shared::wire_name(&classification.priority)
        )
    });
    // A ticket that stays queued keeps its conditions: the fixing half may have said there why
    // it waits.
    if previous.phase != Some(phase) || previous.conditions.is_empty() {
        settle(&mut status, phase, &message, now);
    }
    let note = (previous.phase != Some(phase)).then(|| Note {
        warning: phase == TicketPhase::Failed,
        reason: match phase {
            TicketPhase::Failed => "Failed",
            _ => "Queued",
        },
        message,
    });
    (status, note)
}

/// Puts `status` in `phase`, with its three conditions saying so: `Ready` once applied,
/// `Stalled` once failed, `Reconciling` while on its way; reason the phase, `message` the why.
pub fn settle(status: &mut HealerTicketStatus, phase: TicketPhase, message: &str, now: Timestamp) {
    status.phase = Some(phase);
    let (ready, reconciling, stalled) = match phase {
        TicketPhase::Applied => ("True", "False", "False"),
        TicketPhase::Failed => ("False", "False", "True"),
        TicketPhase::Rejected => ("False", "False", "False"),
        _ => ("False", "True", "False"),
    };
    let reason = format!("{phase:?}");
    for (kind, value) in [
        (condition::READY, ready),
        (condition::RECONCILING, reconciling),
        (condition::STALLED, stalled),
    ] {
        upsert_condition(&mut status.conditions, kind, value, &reason, message, now);
    }
}

#[cfg(test)]
#[path = "healer_ticket_tests.rs"]
mod tests;
