//! Seed 004's classifier tables row by row, with the messages the real tools print (jsonschema
//! 4.26, PostgreSQL 16 through psql, Python 3.11, Node.js), its two worked examples, messages the
//! table was not written for, and the fingerprint, name and queue order.

use super::*;

use FixableBy::{Code, Contract, Data, Generator};
use Priority::{Critical, High, Low, Medium};

fn context(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

fn report<'a>(source: TicketSource, error: &'a str, context: &'a BTreeMap<String, String>) -> Report<'a> {
    Report {
        source,
        error,
        stacktrace: None,
        context,
        contract_fqn: Some("entity/helpdesk/ticket"),
        path: None,
        targets_code: false,
        priority: None,
    }
}

/// One case: a source, a message, whether it came with `status_code: 500`, and the expected
/// error type, tier, fixable_by and priority.
type Case = (TicketSource, &'static str, bool, &'static str, u8, FixableBy, Priority);

fn check(cases: &[Case]) {
    let five_hundred = context(&[("status_code", "500")]);
    let none = context(&[]);
    let mut failures = Vec::new();
    for &(source, error, is_500, error_type, tier, fixable_by, priority) in cases {
        let got = classify(&report(source, error, if is_500 { &five_hundred } else { &none }));
        let want = Classification {
            error_type: error_type.to_owned(),
            tier,
            fixable_by,
            priority,
        };
        if got != want {
            failures.push(format!("{source:?} {error:?}:\n  got  {got:?}\n  want {want:?}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

// --- seed 004's tables, row by row ---------------------------------------------------------

/// Tier 1, jsonschema's own output (`Draft202012Validator(...).iter_errors(...)`, `.message`).
const TIER_1: &[Case] = &[
    (
        Validation,
        "'myField' does not match '^[a-z][a-z0-9_]*$'",
        false,
        "naming",
        1,
        Contract,
        Low,
    ),
    (
        Validation,
        "'Entity/helpdesk/ticket' does not match '^(entity|workflow|route|page|infra|mixin|agent)/[a-z][a-z0-9_-]*/[a-z][a-z0-9_-]*$'",
        false,
        "fqn_format",
        1,
        Contract,
        Low,
    ),
    (
        Validation,
        "'assigned_to' does not match '^[A-Z][A-Z0-9_]*$'",
        false,
        "graph_edge",
        1,
        Contract,
        Low,
    ),
    (
        Validation,
        "'ticket' does not match '^[A-Z]{2,6}$'",
        false,
        "number_prefix",
        1,
        Contract,
        Low,
    ),
];

/// Tier 2: jsonschema's output for `required`, `oneOf`, `enum`; the compiler's errors as seed 004
/// quotes them.
const TIER_2: &[Case] = &[
    (
        Validation,
        "'resolution' is a required property",
        false,
        "missing_field",
        2,
        Contract,
        Medium,
    ),
    (
        Validation,
        "1.5 is not valid under any of the given schemas",
        false,
        "schema_mismatch",
        2,
        Contract,
        Medium,
    ),
    (
        Validation,
        "'strng' is not one of ['string', 'integer', 'text']",
        false,
        "invalid_enum",
        2,
        Contract,
        Medium,
    ),
    (
        Compilation,
        "Unresolved reference: 'severity' in workflow guard for entity/helpdesk/incident",
        false,
        "missing_reference",
        2,
        Contract,
        Medium,
    ),
    (
        Compilation,
        "Dependency cycle: entity/helpdesk/ticket -> entity/helpdesk/queue -> entity/helpdesk/ticket",
        false,
        "dependency_cycle",
        2,
        Contract,
        Medium,
    ),
    (
        Compilation,
        "Circular dependency detected",
        false,
        "dependency_cycle",
        2,
        Contract,
        Medium,
    ),
];

/// Tier 3: a 500 and another runtime error (Node.js's real TypeError, Python's real KeyError).
const TIER_3: &[Case] = &[
    (
        Runtime,
        "KeyError: 'resolution'",
        true,
        "runtime_500",
        3,
        Contract,
        Critical,
    ),
    (
        Runtime,
        "TypeError: Cannot read properties of undefined (reading 'trim')",
        false,
        "runtime_exception",
        3,
        Contract,
        High,
    ),
    // A 500 said in the message only: seed 004's demo line.
    (
        Runtime,
        "PATCH /tickets/abc → 500: KeyError: 'resolution'",
        false,
        "runtime_500",
        3,
        Contract,
        Critical,
    ),
    (
        Manual,
        "500 Internal Server Error",
        false,
        "runtime_500",
        3,
        Contract,
        Critical,
    ),
];

/// Generator bugs, in the words of asyncpg, PostgreSQL 16 (psql) and Python 3.11.
const GENERATOR_BUGS: &[Case] = &[
    (
        Runtime,
        "invalid input for query argument $1: 'abc' (invalid UUID 'abc': length must be between 32..36 characters, got 3)",
        true,
        "runtime_500",
        3,
        Generator,
        Critical,
    ),
    (
        Runtime,
        "ERROR:  invalid input syntax for type uuid: \"abc\"",
        true,
        "runtime_500",
        3,
        Generator,
        Critical,
    ),
    (
        Runtime,
        "ValueError: badly formed hexadecimal UUID string",
        false,
        "runtime_exception",
        3,
        Generator,
        High,
    ),
    (
        Runtime,
        "ERROR:  column \"severity\" does not exist",
        true,
        "runtime_500",
        3,
        Generator,
        Critical,
    ),
    (
        Runtime,
        "ERROR:  column \"severity\" of relation \"tickets\" does not exist",
        true,
        "runtime_500",
        3,
        Generator,
        Critical,
    ),
    (
        Runtime,
        "ERROR:  syntax error at or near \"fromm\"",
        true,
        "runtime_500",
        3,
        Generator,
        Critical,
    ),
    (
        Runtime,
        "ModuleNotFoundError: No module named 'backend'",
        true,
        "runtime_500",
        3,
        Generator,
        Critical,
    ),
    (
        Runtime,
        "ImportError: cannot import name 'nothing' from 'os' (/root/.pyenv/versions/3.11.7/lib/python3.11/os.py)",
        true,
        "runtime_500",
        3,
        Generator,
        Critical,
    ),
    (
        Runtime,
        "NameError: name 'foo' is not defined",
        true,
        "runtime_500",
        3,
        Generator,
        Critical,
    ),
    (
        Runtime,
        "AttributeError: 'NoneType' object has no attribute 'severity'",
        true,
        "runtime_500",
        3,
        Generator,
        Critical,
    ),
];

/// Data issues, in the words of PostgreSQL 16 (psql), Python 3.11 and Node.js.
const DATA_ISSUES: &[Case] = &[
    (
        Runtime,
        "ERROR:  duplicate key value violates unique constraint \"users2_email_key\"\nDETAIL:  Key (email)=(a@example.com) already exists.",
        true,
        "runtime_500",
        3,
        Data,
        Critical,
    ),
    (
        Runtime,
        "ERROR:  insert or update on table \"orders\" violates foreign key constraint \"orders_customer_id_fkey\"\nDETAIL:  Key (customer_id)=(42) is not present in table \"customers\".",
        true,
        "runtime_500",
        3,
        Data,
        Critical,
    ),
    (
        Manual,
        "foreign key constraint on orders.customer_id violates integrity",
        false,
        "unknown",
        2,
        Data,
        Medium,
    ),
    (
        Runtime,
        "ERROR:  null value in column \"email\" of relation \"users\" violates not-null constraint\nDETAIL:  Failing row contains (3, null).",
        true,
        "runtime_500",
        3,
        Data,
        Critical,
    ),
    (
        Runtime,
        "ConnectionRefusedError: [Errno 111] Connection refused",
        true,
        "runtime_500",
        3,
        Data,
        Critical,
    ),
    (
        Runtime,
        "psql: error: connection to server at \"127.0.0.1\", port 1 failed: Connection refused\n\tIs the server running on that host and accepting TCP/IP connections?",
        false,
        "runtime_exception",
        3,
        Data,
        High,
    ),
    (
        Runtime,
        "ERROR:  canceling statement due to statement timeout",
        true,
        "runtime_500",
        3,
        Data,
        Critical,
    ),
    (
        Runtime,
        "TimeoutError: [Errno 110] Connection timed out",
        false,
        "runtime_exception",
        3,
        Data,
        High,
    ),
    (
        Runtime,
        "Error: connect ECONNREFUSED 127.0.0.1:1",
        false,
        "runtime_exception",
        3,
        Data,
        High,
    ),
];

#[test]
fn seed_tier_1_rows() {
    check(TIER_1);
}

#[test]
fn seed_tier_2_rows() {
    check(TIER_2);
}

#[test]
fn seed_tier_3_rows() {
    check(TIER_3);
}

#[test]
fn seed_generator_bugs() {
    check(GENERATOR_BUGS);
}

#[test]
fn seed_data_issues() {
    check(DATA_ISSUES);
}

/// Every message row of the table is exercised by some case above: adding a row without a case
/// fails here.
#[test]
fn every_message_row_has_a_case() {
    let five_hundred = context(&[("status_code", "500")]);
    let all: Vec<Case> = [TIER_1, TIER_2, TIER_3, GENERATOR_BUGS, DATA_ISSUES].concat();
    for rule in RULES {
        let When::Message { seed, .. } = rule.when else {
            continue;
        };
        let covered = all
            .iter()
            .any(|&(source, error, ..)| matching(&report(source, error, &five_hundred)).any(|r| std::ptr::eq(r, rule)));
        assert!(covered, "no case for the row {seed:?}");
    }
}

#[test]
fn the_table_is_seed_004s() {
    let types: Vec<(&str, u8, Priority)> = RULES
        .iter()
        .filter_map(|r| r.what)
        .map(|w| (w.error_type, w.tier, w.priority))
        .collect();
    for (error_type, tier, priority) in [
        ("naming", 1, Low),
        ("fqn_format", 1, Low),
        ("graph_edge", 1, Low),
        ("number_prefix", 1, Low),
        ("missing_field", 2, Medium),
        ("schema_mismatch", 2, Medium),
        ("invalid_enum", 2, Medium),
        ("missing_reference", 2, Medium),
        ("dependency_cycle", 2, Medium),
        ("runtime_500", 3, Critical),
        ("runtime_exception", 3, High),
    ] {
        assert!(
            types.contains(&(error_type, tier, priority)),
            "{error_type} tier {tier} {priority:?}"
        );
    }
    let seeds = |who: FixableBy| -> Vec<&str> {
        RULES
            .iter()
            .filter(|r| r.fixable_by == Some(who))
            .filter_map(|r| match r.when {
                When::Message { seed, .. } => Some(seed),
                _ => None,
            })
            .collect()
    };
    assert_eq!(
        seeds(Generator),
        [
            "invalid UUID",
            "column does not exist",
            "syntax error at or near",
            "ImportError / ModuleNotFoundError",
            "NameError / AttributeError"
        ]
    );
    assert_eq!(
        seeds(Data),
        [
            "duplicate key value violates unique constraint",
            "foreign key violates",
            "null value in column violates not-null",
            "connection refused / timeout"
        ]
    );
    // Every row decides something, and generator and data rows say what to do instead.
    for rule in RULES {
        assert!(rule.what.is_some() || rule.fixable_by.is_some(), "{rule:?}");
        if matches!(rule.fixable_by, Some(Generator | Data)) {
            assert!(!rule.advice.is_empty(), "{rule:?}");
        }
    }
}

/// Every source gets a complete classification from the table itself, not from `classify`'s
/// fallback.
#[test]
fn every_source_is_classified_by_the_table() {
    let none = context(&[]);
    for (source, error_type) in [
        (Validation, "structural"),
        (Compilation, "compilation_error"),
        (Runtime, "runtime_exception"),
        (Manual, "unknown"),
    ] {
        let r = report(source, "something odd happened", &none);
        assert!(matching(&r).any(|rule| rule.what.is_some()), "{source:?}");
        assert!(matching(&r).any(|rule| rule.fixable_by.is_some()), "{source:?}");
        let got = classify(&r);
        assert_eq!(
            (got.error_type.as_str(), got.fixable_by),
            (error_type, Contract),
            "{source:?}"
        );
    }
}

// --- seed 004's worked examples -------------------------------------------------------------

/// "column 'severity' does not exist" from runtime, status 500: generator, tier 3, CRITICAL.
#[test]
fn seed_example_generator_bug() {
    let ctx = context(&[("status_code", "500")]);
    let r = report(Runtime, "column 'severity' does not exist", &ctx);
    let c = classify(&r);
    assert_eq!((c.fixable_by, c.tier, c.priority), (Generator, 3, Critical));
    let text = diagnostic(&c, &r).expect("a generator bug has a diagnostic");
    assert!(
        text.contains("generator bug") && text.contains("`column does not exist`"),
        "{text}"
    );
    assert!(
        text.contains("entity/helpdesk/ticket") && text.contains("regenerate"),
        "{text}"
    );
}

/// The first live demo: `KeyError: 'resolution'`, runtime 500 → runtime_500, contract, 3, critical.
#[test]
fn seed_example_missing_resolution() {
    let ctx = context(&[
        ("request_path", "/tickets/abc"),
        ("method", "PATCH"),
        ("status_code", "500"),
    ]);
    let mut r = report(Runtime, "KeyError: 'resolution'", &ctx);
    r.stacktrace = Some("Traceback (most recent call last)...");
    let c = classify(&r);
    assert_eq!(
        c,
        Classification {
            error_type: "runtime_500".into(),
            tier: 3,
            fixable_by: Contract,
            priority: Critical
        }
    );
    assert_eq!(diagnostic(&c, &r), None);
}

// --- quoting, case, and messages the table was not written for ------------------------------

#[test]
fn patterns_inside_quoted_values_do_not_count() {
    check(&[
        // A missing key named `timeout` is not a timeout.
        (
            Runtime,
            "KeyError: 'timeout'",
            true,
            "runtime_500",
            3,
            Contract,
            Critical,
        ),
        (
            Runtime,
            "KeyError: 'AttributeError'",
            false,
            "runtime_exception",
            3,
            Contract,
            High,
        ),
        // A field named `lifecycle` is required, not a cycle; a value `connection refused` is
        // not in the enum.
        (
            Validation,
            "'lifecycle' is a required property",
            false,
            "missing_field",
            2,
            Contract,
            Medium,
        ),
        (
            Validation,
            "'connection refused' is not one of ['open', 'closed']",
            false,
            "invalid_enum",
            2,
            Contract,
            Medium,
        ),
        (
            Manual,
            "\"is a required property\" was typed into the title",
            false,
            "unknown",
            2,
            Contract,
            Medium,
        ),
        // An apostrophe is not a quote: the pattern after it still counts.
        (
            Runtime,
            "can't reach the database: connection refused",
            false,
            "runtime_exception",
            3,
            Data,
            High,
        ),
        // A validation error is about a contract, never data: and `timeout_seconds` is a name.
        (
            Validation,
            "-1 is less than the minimum of 0 in timeout_seconds",
            false,
            "structural",
            2,
            Contract,
            Medium,
        ),
        (
            Compilation,
            "option timeout_seconds is unknown",
            false,
            "compilation_error",
            2,
            Contract,
            Medium,
        ),
    ]);
}

#[test]
fn word_patterns_ignore_case_and_regex_patterns_do_not() {
    check(&[
        (
            Runtime,
            "DUPLICATE KEY VALUE VIOLATES UNIQUE CONSTRAINT \"pk\"",
            false,
            "runtime_exception",
            3,
            Data,
            High,
        ),
        (
            Validation,
            "'x' IS A REQUIRED PROPERTY",
            false,
            "missing_field",
            2,
            Contract,
            Medium,
        ),
        (
            Compilation,
            "UNRESOLVED REFERENCE to entity/x/y",
            false,
            "missing_reference",
            2,
            Contract,
            Medium,
        ),
        // `^[a-z]…` and `^[A-Z]…` differ only in case: each is its own row.
        (
            Validation,
            "'myField' does not match '^[A-Z][A-Z0-9_]*$'",
            false,
            "graph_edge",
            1,
            Contract,
            Low,
        ),
        (
            Validation,
            "'MY_FIELD' does not match '^[a-z][a-z0-9_]*$'",
            false,
            "naming",
            1,
            Contract,
            Low,
        ),
        // Another validator's quoting of the same pattern.
        (
            Validation,
            "\"myField\" does not match \"^[a-z][a-z0-9_]*$\"",
            false,
            "naming",
            1,
            Contract,
            Low,
        ),
        // Some other pattern is not a tier-1 error.
        (
            Validation,
            "'x y' does not match '^\\S+$'",
            false,
            "structural",
            2,
            Contract,
            Medium,
        ),
    ]);
}

/// Messages as SQLAlchemy, asyncpg, pydantic, redis-py, httpx and jsonschema print them around
/// the driver's words — not the forms the table was written from.
#[test]
fn messages_the_table_was_not_written_for() {
    check(&[
        (
            Runtime,
            "sqlalchemy.exc.ProgrammingError: (psycopg2.errors.UndefinedColumn) column tickets.severity does not exist\nLINE 1: SELECT tickets.severity FROM tickets",
            true,
            "runtime_500",
            3,
            Generator,
            Critical,
        ),
        (
            Runtime,
            "sqlalchemy.exc.IntegrityError: (psycopg2.errors.UniqueViolation) duplicate key value violates unique constraint \"ix_users_email\"",
            true,
            "runtime_500",
            3,
            Data,
            Critical,
        ),
        (
            Runtime,
            "sqlalchemy.exc.OperationalError: (psycopg2.OperationalError) connection to server at \"db\" (172.18.0.2), port 5432 failed: Connection refused",
            true,
            "runtime_500",
            3,
            Data,
            Critical,
        ),
        (
            Runtime,
            "asyncpg.exceptions.ForeignKeyViolationError: update or delete on table \"tickets\" violates foreign key constraint \"comments_ticket_id_fkey\" on table \"comments\"",
            true,
            "runtime_500",
            3,
            Data,
            Critical,
        ),
        (
            Runtime,
            "asyncpg.exceptions.NotNullViolationError: null value in column \"title\" violates not-null constraint",
            true,
            "runtime_500",
            3,
            Data,
            Critical,
        ),
        (
            Runtime,
            "redis.exceptions.TimeoutError: Timeout reading from socket",
            false,
            "runtime_exception",
            3,
            Data,
            High,
        ),
        (
            Runtime,
            "httpx.ReadTimeout: timed out",
            true,
            "runtime_500",
            3,
            Data,
            Critical,
        ),
        (
            Runtime,
            "pydantic_core._pydantic_core.ValidationError: 1 validation error for Ticket\nresolution\n  Field required [type=missing, input_value={}, input_type=dict]",
            true,
            "runtime_500",
            3,
            Contract,
            Critical,
        ),
        (
            Runtime,
            "json.decoder.JSONDecodeError: Expecting property name enclosed in double quotes: line 1 column 2 (char 1)",
            false,
            "runtime_exception",
            3,
            Contract,
            High,
        ),
        (
            Runtime,
            "HTTP/1.1 500 Internal Server Error",
            false,
            "runtime_500",
            3,
            Contract,
            Critical,
        ),
        (
            Runtime,
            "upstream answered HTTP 502 Bad Gateway",
            false,
            "runtime_exception",
            3,
            Contract,
            High,
        ),
        (
            Validation,
            "Additional properties are not allowed ('myField' was unexpected)",
            false,
            "structural",
            2,
            Contract,
            Medium,
        ),
        (
            Validation,
            "None is not of type 'string'",
            false,
            "structural",
            2,
            Contract,
            Medium,
        ),
        (
            Compilation,
            "entity/helpdesk/ticket: mixin 'auditable' not found",
            false,
            "compilation_error",
            2,
            Contract,
            Medium,
        ),
    ]);
}

#[test]
fn a_status_code_other_than_500_is_not_a_500() {
    for status in ["404", "502", "5000", " 500 "] {
        let ctx = context(&[("status_code", status)]);
        let c = classify(&report(Runtime, "KeyError: 'resolution'", &ctx));
        let want = if status.trim() == "500" {
            "runtime_500"
        } else {
            "runtime_exception"
        };
        assert_eq!(c.error_type, want, "status {status:?}");
    }
    // A validation error does not become tier 3 because of its context.
    let ctx = context(&[("status_code", "500")]);
    assert_eq!(
        classify(&report(Validation, "'x' is a required property", &ctx)).tier,
        2
    );
}

#[test]
fn spec_priority_overrides_the_table() {
    let ctx = context(&[("status_code", "500")]);
    let mut r = report(Runtime, "KeyError: 'resolution'", &ctx);
    r.priority = Some(Low);
    let c = classify(&r);
    assert_eq!((c.error_type.as_str(), c.tier, c.priority), ("runtime_500", 3, Low));
    let mut r = report(Validation, "'myField' does not match '^[a-z][a-z0-9_]*$'", &ctx);
    r.priority = Some(Critical);
    assert_eq!(classify(&r).priority, Critical);
}

// --- kubeheal's `code` class ----------------------------------------------------------------

/// Python 3.11's real traceback of a KeyError raised in the project's code, called through the
/// standard library's `json` first.
const PYTHON_TRACE: &str = r#"Traceback (most recent call last):
  File "/app/backend/tickets.py", line 6, in <module>
    update_ticket("{}")
  File "/app/backend/tickets.py", line 5, in update_ticket
    return parse(body)["resolution"]
           ~~~~~~~~~~~^^^^^^^^^^^^^^
KeyError: 'resolution'"#;

/// Python 3.11's real traceback of an error raised inside the standard library.
const PYTHON_TRACE_INTO_STDLIB: &str = r#"Traceback (most recent call last):
  File "/app/backend/tickets.py", line 6, in <module>
    update_ticket("{")
  File "/app/backend/tickets.py", line 5, in update_ticket
    return parse(body)["resolution"]
           ^^^^^^^^^^^
  File "/app/backend/tickets.py", line 3, in parse
    return json.loads(body)
           ^^^^^^^^^^^^^^^^
  File "/root/.pyenv/versions/3.11.7/lib/python3.11/json/__init__.py", line 346, in loads
    return _default_decoder.decode(s)
           ^^^^^^^^^^^^^^^^^^^^^^^^^^
  File "/root/.pyenv/versions/3.11.7/lib/python3.11/json/decoder.py", line 353, in raw_decode
    obj, end = self.scan_once(s, idx)
               ^^^^^^^^^^^^^^^^^^^^^^
json.decoder.JSONDecodeError: Expecting property name enclosed in double quotes: line 1 column 2 (char 1)"#;

/// A traceback entirely in installed packages and the interpreter.
const PYTHON_TRACE_LIBRARIES_ONLY: &str = r#"Traceback (most recent call last):
  File "<frozen runpy>", line 198, in _run_module_as_main
  File "/usr/local/lib/python3.12/site-packages/uvicorn/main.py", line 410, in main
    run(app)
  File "/usr/local/lib/python3.12/asyncio/base_events.py", line 691, in run_until_complete
    return future.result()
ConnectionRefusedError: [Errno 111] Connect call failed ('127.0.0.1', 5432)"#;

/// Node.js 20's real stack of a TypeError in the project's code.
const NODE_TRACE: &str = "TypeError: Cannot read properties of undefined (reading 'trim')
    at updateTicket (/app/src/routes/tickets.js:1:48)
    at handle (/app/server.js:2:31)
    at /app/server.js:3:21
    at Array.map (<anonymous>)
    at Object.<anonymous> (/app/server.js:3:11)
    at Module._compile (node:internal/modules/cjs/loader:1521:14)
    at Function.executeUserEntryPoint [as runMain] (node:internal/modules/run_main:164:12)";

fn code_report<'a>(error: &'a str, trace: &'a str, ctx: &'a BTreeMap<String, String>) -> Report<'a> {
    Report {
        stacktrace: Some(trace),
        contract_fqn: None,
        path: Some("backend/tickets.py"),
        targets_code: true,
        ..report(Runtime, error, ctx)
    }
}

#[test]
fn project_frames_are_found_innermost_first() {
    let frame = |file: &str, line: u32, function: &str| Frame {
        file: file.into(),
        line,
        function: function.into(),
    };
    assert_eq!(
        project_frame(Some(PYTHON_TRACE)),
        Some(frame("/app/backend/tickets.py", 5, "update_ticket"))
    );
    assert_eq!(
        project_frame(Some(PYTHON_TRACE_INTO_STDLIB)),
        Some(frame("/app/backend/tickets.py", 3, "parse"))
    );
    assert_eq!(
        project_frames(PYTHON_TRACE_INTO_STDLIB),
        [
            frame("/app/backend/tickets.py", 3, "parse"),
            frame("/app/backend/tickets.py", 5, "update_ticket"),
            frame("/app/backend/tickets.py", 6, "<module>"),
        ]
    );
    assert_eq!(project_frame(Some(PYTHON_TRACE_LIBRARIES_ONLY)), None);
    assert_eq!(
        project_frame(Some(NODE_TRACE)),
        Some(frame("/app/src/routes/tickets.js", 1, "updateTicket"))
    );
    assert_eq!(
        project_frame(Some(
            "Error: x\n    at Module._compile (node:internal/modules/cjs/loader:1521:14)\n    at Layer.handle [as handle_request] (/app/node_modules/express/lib/router/layer.js:95:5)"
        )),
        None
    );
    assert_eq!(project_frame(Some("Traceback (most recent call last)...")), None);
    assert_eq!(project_frame(None), None);
}

#[test]
fn an_error_in_the_projects_own_code_is_fixable_by_code() {
    let ctx = context(&[("status_code", "500")]);
    let c = classify(&code_report("KeyError: 'resolution'", PYTHON_TRACE, &ctx));
    assert_eq!(
        (c.error_type.as_str(), c.fixable_by, c.priority),
        ("runtime_500", Code, Critical)
    );
    let c = classify(&code_report(
        "TypeError: Cannot read properties of undefined (reading 'trim')",
        NODE_TRACE,
        &ctx,
    ));
    assert_eq!(c.fixable_by, Code);
    // In hand-written code, a bad import is the project's bug, not a generator's.
    assert_eq!(
        classify(&code_report(
            "ModuleNotFoundError: No module named 'backend.modles'",
            PYTHON_TRACE,
            &ctx
        ))
        .fixable_by,
        Code
    );
    assert_eq!(diagnostic(&c, &code_report("x", NODE_TRACE, &ctx)), None);
}

#[test]
fn code_needs_both_a_repository_target_and_a_project_frame() {
    let ctx = context(&[("status_code", "500")]);
    let mut r = code_report("KeyError: 'resolution'", PYTHON_TRACE, &ctx);
    r.targets_code = false;
    assert_eq!(classify(&r).fixable_by, Contract);
    let r = code_report("KeyError: 'resolution'", PYTHON_TRACE_LIBRARIES_ONLY, &ctx);
    assert_eq!(classify(&r).fixable_by, Contract);
}

/// A data issue's trace always passes through the project's code; no code change fixes it.
#[test]
fn a_data_issue_stays_data_in_project_code() {
    let ctx = context(&[]);
    let r = code_report(
        "ConnectionRefusedError: [Errno 111] Connection refused",
        PYTHON_TRACE,
        &ctx,
    );
    let c = classify(&r);
    assert_eq!(c.fixable_by, Data);
    let text = diagnostic(&c, &r).expect("a data issue has a diagnostic");
    assert!(
        text.contains("`connection refused / timeout`") && text.contains("backend/tickets.py"),
        "{text}"
    );
}

// --- normalize ----------------------------------------------------------------------------------

#[test]
fn normalize_replaces_volatile_parts() {
    for (message, want) in [
        (
            "Ticket 8f14e45f-ceea-467a-9575-1b2b4b4c3c3a not found",
            "Ticket <uuid> not found",
        ),
        (
            "PATCH /tickets/42 → 500: KeyError: 'resolution'",
            "PATCH /tickets/<n> → <n>: KeyError: 'resolution'",
        ),
        (
            "deadline 2024-05-01T12:34:56.789Z passed at 12:35:01",
            "deadline <time> passed at <time>",
        ),
        ("since 2024-05-01 12:34:56+02:00", "since <time>"),
        ("object at 0x7f3a2b1c9d10 freed", "object at <hex> freed"),
        ("document 507f1f77bcf86cd799439011 missing", "document <hex> missing"),
        ("connect ECONNREFUSED 10.0.3.17:5432", "connect ECONNREFUSED <ip>"),
        ("listen on [::1]:8080 failed", "listen on <ip> failed"),
        ("no route to 2001:db8:85a3::8a2e:370:7334", "no route to <ip>"),
        ("mail to jane.doe+test@example.com bounced", "mail to <email> bounced"),
        (
            "ERROR:  invalid input syntax for type uuid: \"abc\"",
            "ERROR:  invalid input syntax for type uuid: \"<v>\"",
        ),
        (
            "Key (email)=(a@example.com) already exists.",
            "Key (email)=(<v>) already exists.",
        ),
        (
            "'hello world' is not one of ['a', 'b']",
            "'<v>' is not one of ['a', 'b']",
        ),
        // Names are kept: they tell errors apart.
        ("KeyError: 'resolution'", "KeyError: 'resolution'"),
        (
            "AttributeError: 'NoneType' object has no attribute 'severity'",
            "AttributeError: 'NoneType' object has no attribute 'severity'",
        ),
        (
            "duplicate key value violates unique constraint \"users_email_key\"",
            "duplicate key value violates unique constraint \"users_email_key\"",
        ),
        (
            "can't reach python3 at std::io::Error",
            "can't reach python3 at std::io::Error",
        ),
    ] {
        assert_eq!(normalize(message), want, "{message:?}");
    }
}

/// Pairs of the same error with different volatile parts, as real services print them.
#[test]
fn normalize_makes_repeats_equal() {
    for (a, b) in [
        (
            "upstream timed out (110: Connection timed out) while reading response header from upstream, client: 10.1.2.3, server: api.example.com, request: \"GET /tickets/7 HTTP/1.1\"",
            "upstream timed out (110: Connection timed out) while reading response header from upstream, client: 192.168.0.44, server: api.example.com, request: \"GET /tickets/1234 HTTP/1.1\"",
        ),
        (
            "invalid input for query argument $1: 'abc' (invalid UUID 'abc': length must be between 32..36 characters, got 3)",
            "invalid input for query argument $1: 'tickets' (invalid UUID 'tickets': length must be between 32..36 characters, got 7)",
        ),
        (
            "ERROR:  null value in column \"email\" of relation \"users\" violates not-null constraint\nDETAIL:  Failing row contains (3, null).",
            "ERROR:  null value in column \"email\" of relation \"users\" violates not-null constraint\nDETAIL:  Failing row contains (97, null, 2024-05-01 10:00:00).",
        ),
        (
            "java.net.SocketTimeoutException: Read timed out after 30000 ms",
            "java.net.SocketTimeoutException: Read timed out after 15000 ms",
        ),
        (
            "Ticket 8f14e45f-ceea-467a-9575-1b2b4b4c3c3a was modified at 2024-05-01T10:00:00Z by 'jane@example.com'",
            "Ticket 0b6f2c7e-1d2a-4c11-9f0e-4e1b9d2f7a55 was modified at 2025-01-31T23:59:59Z by 'joe@example.org'",
        ),
    ] {
        assert_eq!(normalize(a), normalize(b), "{a:?}\n{b:?}");
    }
    assert_ne!(normalize("KeyError: 'resolution'"), normalize("KeyError: 'severity'"));
}

// --- fingerprint, name, queue ---------------------------------------------------------------------

fn fingerprint_of(r: &Report<'_>) -> String {
    fingerprint(r, &classify(r))
}

#[test]
fn the_same_error_from_two_requests_has_one_fingerprint() {
    let a_ctx = context(&[
        ("request_path", "/tickets/8f14e45f-ceea-467a-9575-1b2b4b4c3c3a"),
        ("status_code", "500"),
    ]);
    let b_ctx = context(&[
        ("request_path", "/tickets/0b6f2c7e-1d2a-4c11-9f0e-4e1b9d2f7a55"),
        ("status_code", "500"),
    ]);
    let a_trace = PYTHON_TRACE.to_owned();
    // Another replica, another line number (a reformatted build), same function.
    let b_trace = PYTHON_TRACE.replace("line 5, in update_ticket", "line 7, in update_ticket");
    let mut a = report(
        Runtime,
        "invalid input for query argument $1: 'abc' (invalid UUID 'abc': length must be between 32..36 characters, got 3)",
        &a_ctx,
    );
    a.stacktrace = Some(&a_trace);
    let mut b = report(
        Runtime,
        "invalid input for query argument $1: 'xyz-1' (invalid UUID 'xyz-1': length must be between 32..36 characters, got 5)",
        &b_ctx,
    );
    b.stacktrace = Some(&b_trace);
    let fp = fingerprint_of(&a);
    assert_eq!(fp, fingerprint_of(&b));
    assert_eq!(fp.len(), 64);
    assert!(fp.bytes().all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase()));

    // Only the first line counts: a DETAIL line with the row's values does not split tickets.
    let one = report(
        Runtime,
        "duplicate key value violates unique constraint \"users_email_key\"\nDETAIL:  Key (email)=(a@example.com) already exists.",
        &a_ctx,
    );
    let two = report(
        Runtime,
        "duplicate key value violates unique constraint \"users_email_key\"\nDETAIL:  Key (email)=(b@example.org) already exists.",
        &b_ctx,
    );
    assert_eq!(fingerprint_of(&one), fingerprint_of(&two));
}

#[test]
fn different_errors_and_targets_have_different_fingerprints() {
    let ctx = context(&[("status_code", "500")]);
    let base = report(Runtime, "KeyError: 'resolution'", &ctx);
    let fp = fingerprint_of(&base);
    let other_key = report(Runtime, "KeyError: 'severity'", &ctx);
    assert_ne!(fp, fingerprint_of(&other_key));
    let other_contract = Report {
        contract_fqn: Some("entity/helpdesk/incident"),
        ..report(Runtime, "KeyError: 'resolution'", &ctx)
    };
    assert_ne!(fp, fingerprint_of(&other_contract));
    let other_source = report(Manual, "KeyError: 'resolution'", &ctx);
    assert_ne!(fp, fingerprint_of(&other_source));
    let none = context(&[]);
    let not_a_500 = report(Runtime, "KeyError: 'resolution'", &none);
    assert_ne!(fp, fingerprint_of(&not_a_500), "another error type");
    let with_frame = Report {
        stacktrace: Some(PYTHON_TRACE),
        ..report(Runtime, "KeyError: 'resolution'", &ctx)
    };
    let other_frame_trace = PYTHON_TRACE.replace("in update_ticket", "in close_ticket");
    let with_other_frame = Report {
        stacktrace: Some(&other_frame_trace),
        ..report(Runtime, "KeyError: 'resolution'", &ctx)
    };
    assert_ne!(fingerprint_of(&with_frame), fingerprint_of(&with_other_frame));
    // A path target counts like a contract.
    let on_path = Report {
        contract_fqn: None,
        path: Some("backend/tickets.py"),
        ..report(Runtime, "KeyError: 'resolution'", &ctx)
    };
    assert_ne!(fp, fingerprint_of(&on_path));
}

#[test]
fn a_pasted_traceback_is_fingerprinted_by_its_exception_line() {
    let ctx = context(&[]);
    let pasted = report(Manual, PYTHON_TRACE, &ctx);
    let line = report(Manual, "KeyError: 'resolution'", &ctx);
    assert_eq!(fingerprint_of(&pasted), fingerprint_of(&line));
}

#[test]
fn ticket_names_are_dns_labels() {
    let dns_label = regex::Regex::new(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$").expect("regex");
    let ctx = context(&[]);
    for error in ["KeyError: 'resolution'", "", "ü ✓ \u{0}", "x".repeat(8192).as_str()] {
        let name = ticket_name(&fingerprint_of(&report(Runtime, error, &ctx)));
        assert!(name.len() <= 63 && dns_label.is_match(&name), "{name}");
        assert_eq!(name.len(), 19, "{name}");
        assert!(name.starts_with("ht-"));
    }
    assert_eq!(ticket_name("0123456789ABCDEFffff"), "ht-0123456789abcdef");
    // Deterministic.
    let fp = fingerprint_of(&report(Runtime, "KeyError: 'resolution'", &ctx));
    assert_eq!(ticket_name(&fp), format!("ht-{}", &fp[..16]));
}

#[test]
fn the_queue_takes_priority_then_age_then_name() {
    let at = |s: i64| Timestamp::from_second(1_790_000_000 + s).expect("a time");
    let mut queue = [
        queue_key(Low, at(0), "ht-a"),
        queue_key(Medium, at(5), "ht-b"),
        queue_key(Critical, at(9), "ht-c"),
        queue_key(High, at(1), "ht-d"),
        queue_key(Critical, at(3), "ht-e"),
        queue_key(Critical, at(3), "ht-0"),
        queue_key(High, at(0), "ht-f"),
    ];
    queue.sort();
    let order: Vec<&str> = queue.iter().map(|(_, _, name)| name.as_str()).collect();
    assert_eq!(order, ["ht-0", "ht-e", "ht-c", "ht-f", "ht-d", "ht-b", "ht-a"]);
    assert_eq!(
        [Critical, High, Medium, Low].map(|p| queue_key(p, at(0), "x").0),
        [0, 1, 2, 3]
    );
}

#[test]
fn an_error_back_after_its_fix_was_applied_is_a_recurrence_and_a_failed_or_rejected_ticket_keeps_counting() {
    let at = |s: i64| Timestamp::from_second(1_800_000_000 + s).expect("a time");
    let ended = |phase: TicketPhase, resolved: Option<i64>| HealerTicketStatus {
        phase: Some(phase),
        resolved_at: resolved.map(|s| Time(at(s))),
        ..HealerTicketStatus::default()
    };
    assert!(recurs_after(Some(&ended(TicketPhase::Applied, Some(10))), at(11)));
    assert!(
        !recurs_after(Some(&ended(TicketPhase::Applied, Some(10))), at(10)),
        "seen before the fix, not after it"
    );
    assert!(recurs_after(Some(&ended(TicketPhase::Applied, None)), at(0)));
    for phase in [
        TicketPhase::Failed,
        TicketPhase::Rejected,
        TicketPhase::Queued,
        TicketPhase::Proposed,
    ] {
        assert!(!recurs_after(Some(&ended(phase, Some(10))), at(11)), "{phase:?}");
    }
    assert!(!recurs_after(None, at(11)), "a new ticket");

    assert_eq!(next_recurrence("ht-0123", "ht-0123").as_deref(), Some("ht-0123-r2"));
    assert_eq!(next_recurrence("ht-0123", "ht-0123-r2").as_deref(), Some("ht-0123-r3"));
    assert_eq!(
        next_recurrence("ht-0123", "ht-0123-r99").as_deref(),
        Some("ht-0123-r100")
    );
    assert_eq!(
        next_recurrence("ht-0123", "ht-0123-r100"),
        None,
        "the last one counts the rest"
    );
}
