//! The CI monitor (seed 001): turns an execution and its parsed log into the observation the
//! state machine records and the outcome it acts on. A run passes only when the exit code is 0
//! AND the parsed results show the suite ran; an environment failure (from how the executor saw
//! the run end, or from what the log says) stops the loop before any healer is asked.

use crate::api::heal_run::Observation;
use crate::api::shared::{BugReport, ErrorClass, RunEnvelope, RunStatus, wire_name};
use crate::core::heal_run::Outcome;
use crate::parse::{ParseOutput, ParserFailed, TestOutcome, Verdict, Workspace, parse_contained};

/// Most bug reports kept in a status observation.
pub const MAX_REPORTS: usize = 20;
/// Most failing test names kept in a status observation.
pub const MAX_FAILING: usize = 50;

/// The observation and outcome of one execution.
pub fn judge(envelope: &RunEnvelope, parsed: &ParseOutput) -> (Observation, Outcome) {
    let observation = Observation {
        envelope: envelope.clone(),
        bug_reports: kept_reports(&parsed.reports),
        failing_tests: parsed.failing_tests().into_iter().take(MAX_FAILING).collect(),
        tests_ran: tests_that_ran(parsed),
        endpoint_calls: Vec::new(),
    };
    let outcome = match envelope.error_class {
        Some(
            class @ (ErrorClass::OomKilled
            | ErrorClass::ImagePull
            | ErrorClass::Evicted
            | ErrorClass::SourceFetch
            | ErrorClass::Infra
            | ErrorClass::CommandNotFound),
        ) => Outcome::Infrastructure {
            message: format!(
                "{}: {} ({})",
                wire_name(&class),
                envelope.error_message.clone().unwrap_or_default(),
                envelope.suggested_fix.clone().unwrap_or_default()
            ),
        },
        // A build that hangs is the code's fault as often as not; the log says where it stopped.
        _ if envelope.status == RunStatus::Timeout => Outcome::Failed,
        _ => match parsed.verdict(envelope.exit_code.unwrap_or(-1)) {
            Verdict::Passed => Outcome::Passed,
            Verdict::Failed => Outcome::Failed,
            Verdict::Infrastructure(kind) => Outcome::Infrastructure {
                message: format!("{kind:?}: {}", kind.suggested_fix()),
            },
        },
    };
    (observation, outcome)
}

/// [`judge`] of an execution and its log, parsed against `workspace`; a log the parser fails on
/// is judged by [`judge_unparsed`].
pub fn judge_log(envelope: &RunEnvelope, log: &str, workspace: &Workspace) -> (Observation, Outcome) {
    match parse_contained(log, workspace) {
        Ok(parsed) => judge(envelope, &parsed),
        Err(failed) => judge_unparsed(envelope, &failed),
    }
}

/// [`judge`] of an execution whose log the parser failed on ([`ParserFailed`], a kubeheal bug):
/// nothing is known of the log (neither that its tests ran nor where they failed), so the loop
/// ends as a failure that is not the code's and says why, rather than judging (or building) it
/// again and again; what the executor saw (an OOM kill) still comes first.
fn judge_unparsed(envelope: &RunEnvelope, failed: &ParserFailed) -> (Observation, Outcome) {
    let (observation, outcome) = judge(envelope, &ParseOutput::default());
    let outcome = match outcome {
        Outcome::Infrastructure { .. } if envelope.error_class.is_some() => outcome,
        _ => Outcome::Infrastructure {
            message: failed.to_string(),
        },
    };
    (observation, outcome)
}

/// The reports a status keeps: the first at each place (file, line, type) before any repeat, in
/// the parser's order. One bug that fails sixty tests is one place to look at; its sixty reports
/// (one per test) must not hide the next bug's.
fn kept_reports(reports: &[BugReport]) -> Vec<BugReport> {
    let mut seen = std::collections::HashSet::new();
    let (first, repeats): (Vec<&BugReport>, Vec<&BugReport>) = reports
        .iter()
        .partition(|r| seen.insert((r.file_path.as_str(), r.line_number, r.error_type)));
    first.into_iter().chain(repeats).take(MAX_REPORTS).cloned().collect()
}

/// Tests that ran to a pass or a failure. Errors do not count: a collection error (a module that
/// does not import) is reported as an erroring "test" although nothing in it ran.
fn tests_that_ran(parsed: &ParseOutput) -> u32 {
    let named = parsed
        .tests
        .iter()
        .filter(|t| matches!(t.outcome, TestOutcome::Passed | TestOutcome::Failed))
        .count() as u32;
    named.max(parsed.summary.passed + parsed.summary.failed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::{Workspace, parse};

    fn envelope(exit: i32, class: Option<ErrorClass>) -> RunEnvelope {
        RunEnvelope {
            run_id: "run".into(),
            endpoint: None,
            http_status: 200,
            content_type: "text/plain".into(),
            json: None,
            text_preview: None,
            status: if exit == 0 {
                RunStatus::Success
            } else {
                RunStatus::Error
            },
            duration_ms: 1,
            exit_code: Some(exit),
            error_class: class,
            error_message: class.map(|_| "the build container ran out of memory".into()),
            suggested_fix: class.map(|_| "raise the memory limit".into()),
            warnings: Vec::new(),
            redactions_applied: false,
            artifacts: Vec::new(),
            log_excerpt: None,
            environment_metadata: Default::default(),
        }
    }

    const PYTEST_FAIL: &str = "FAILED test_calc.py::test_add - assert 3 == 4\n\
        ========================= 1 failed, 2 passed in 0.03s =========================\n";
    const PYTEST_PASS: &str = "========================= 3 passed in 0.03s =========================\n";

    #[test]
    fn exit_zero_with_tests_that_ran_passes() {
        let parsed = parse(PYTEST_PASS, &Workspace::new(""));
        let (observation, outcome) = judge(&envelope(0, None), &parsed);
        assert_eq!(outcome, Outcome::Passed);
        assert_eq!(observation.tests_ran, 3);
    }

    #[test]
    fn exit_zero_with_no_test_run_is_not_a_pass() {
        let parsed = parse(
            "========================= no tests ran in 0.01s =========================\n",
            &Workspace::new(""),
        );
        let (_, outcome) = judge(&envelope(0, None), &parsed);
        assert!(matches!(outcome, Outcome::Infrastructure { .. }), "{outcome:?}");
    }

    #[test]
    fn failing_tests_are_named_and_the_outcome_is_failed() {
        let parsed = parse(PYTEST_FAIL, &Workspace::new(""));
        let (observation, outcome) = judge(&envelope(1, None), &parsed);
        assert_eq!(outcome, Outcome::Failed);
        assert_eq!(observation.failing_tests, vec!["test_calc.py::test_add"]);
        assert_eq!(observation.tests_ran, 3);
    }

    /// A log the parser failed on: a build, failed or passed, ends as a failure that is not the
    /// code's, saying the parser failed; what the executor saw comes first.
    #[test]
    fn a_log_the_parser_failed_on_is_not_judged_the_code_s_fault() {
        let failed = crate::parse::ParserFailed;
        for exit in [1, 0] {
            let (observation, outcome) = judge_unparsed(&envelope(exit, None), &failed);
            assert_eq!(
                outcome,
                Outcome::Infrastructure {
                    message: failed.to_string()
                }
            );
            assert!(observation.bug_reports.is_empty());
        }
        let (_, outcome) = judge_unparsed(&envelope(1, Some(ErrorClass::OomKilled)), &failed);
        let Outcome::Infrastructure { message } = outcome else {
            panic!("{outcome:?}")
        };
        assert!(message.contains("ran out of memory"), "{message}");
    }

    /// pytest `--tb=line`: three bugs failing ten tests each, then another bug. The parser keeps
    /// all 31 reports; the status's 20 take each place once before any repeat.
    #[test]
    fn a_bug_that_fails_many_tests_does_not_hide_the_next() {
        let mut log =
            String::from("=================================== FAILURES ===================================\n");
        for line in [7, 8, 9] {
            for n in 0..10 {
                log.push_str(&format!("/w/calc.py:{line}: TypeError: unsupported operand ({n})\n"));
            }
        }
        log.push_str("/w/fmt.py:3: KeyError: 'x'\n");
        // The summary names each failure, so each is its own test's report.
        log.push_str("=========================== short test summary info ============================\n");
        for line in [7, 8, 9] {
            for n in 0..10 {
                log.push_str(&format!(
                    "FAILED test_calc.py::test_op_{line}[{n}] - TypeError: unsupported operand ({n})\n"
                ));
            }
        }
        log.push_str("FAILED test_fmt.py::test_fmt - KeyError: 'x'\n");
        let parsed = parse(&log, &Workspace::new("/w"));
        assert_eq!(parsed.reports.len(), 31);
        let (observation, _) = judge(&envelope(1, None), &parsed);
        assert_eq!(observation.bug_reports.len(), MAX_REPORTS);
        let places: Vec<(&str, u32)> = observation
            .bug_reports
            .iter()
            .take(4)
            .map(|r| (r.file_path.as_str(), r.line_number))
            .collect();
        assert_eq!(places, [("calc.py", 7), ("calc.py", 8), ("calc.py", 9), ("fmt.py", 3)]);
    }

    #[test]
    fn a_collection_error_runs_no_test() {
        let log = "ERROR test_calc.py - SyntaxError: expected ':'\n\
            =========================== 1 error in 0.05s ===========================\n";
        let parsed = parse(log, &Workspace::new(""));
        let (observation, outcome) = judge(&envelope(2, None), &parsed);
        assert_eq!(outcome, Outcome::Failed);
        assert_eq!(observation.tests_ran, 0);
    }

    #[test]
    fn an_executor_error_class_of_the_environment_is_an_infrastructure_failure() {
        let parsed = parse(PYTEST_FAIL, &Workspace::new(""));
        let (_, outcome) = judge(&envelope(137, Some(ErrorClass::OomKilled)), &parsed);
        let Outcome::Infrastructure { message } = outcome else {
            panic!("{outcome:?}")
        };
        assert!(
            message.starts_with("OOM_KILLED: the build container ran out of memory"),
            "{message}"
        );
    }
}
