//! A HealRun's `spec.verify`: the endpoint calls an execution made once the build passed, judged
//! like tests. A call that failed makes the execution fail; its endpoint ID (`GET /tickets/{id}`)
//! is a failing "test" (so a cycle's diff says which endpoints a fix repaired), and the bug
//! reports point where the service's stack traces (in its own output, or in the answer's body)
//! meet the repository's files — else at the file the start command runs. A check that could not
//! start at all (no document, not OpenAPI) is the configuration's fault, not the code's.

use crate::api::heal_run::{EndpointCall, Incident, Observation, Verify};
use crate::api::shared::{BugReport, ErrorType, RunEnvelope, RunStatus};
use crate::core::heal_run::Outcome;
use crate::core::incident;
use crate::core::monitor::{MAX_FAILING, MAX_REPORTS};
use crate::core::redact::redact;
use crate::parse::truncate;

/// Most endpoint calls kept in an observation.
pub const MAX_CALLS: usize = 100;

/// Adds the execution's endpoint `calls` to `observation` and returns the outcome with them:
/// `outcome` when the run verifies nothing (`verify` is `None`), the build did not pass (nothing
/// was called) or every call succeeded. `service_output` is what the started service printed;
/// `files` the repository's tracked files.
pub fn observe(
    observation: &mut Observation,
    outcome: Outcome,
    verify: Option<&Verify>,
    calls: &[RunEnvelope],
    service_output: &str,
    files: &[String],
) -> Outcome {
    let Some(verify) = verify else {
        return outcome;
    };
    let start = verify.openapi.start.as_str();
    observation.endpoint_calls = calls
        .iter()
        .filter_map(|call| {
            Some(EndpointCall {
                endpoint: call.endpoint.clone()?,
                status: call.status,
                http_status: call.http_status,
                error_class: call.error_class,
            })
        })
        .take(MAX_CALLS)
        .collect();
    if outcome != Outcome::Passed {
        return outcome;
    }
    if let Some(refused) = calls.iter().find(|call| call.endpoint.is_none()) {
        return Outcome::Infrastructure {
            message: format!(
                "{} ({})",
                refused.error_message.clone().unwrap_or_default(),
                refused.suggested_fix.clone().unwrap_or_default()
            ),
        };
    }
    if calls.is_empty() {
        return Outcome::Infrastructure {
            message: format!(
                "the build passed, and no endpoint of {} was called: the document has no operations, or none of verify.openapi.endpoints (give endpoints the document has)",
                verify.openapi.document
            ),
        };
    }
    let failed: Vec<&RunEnvelope> = calls.iter().filter(|c| c.status != RunStatus::Success).collect();
    if failed.is_empty() {
        return Outcome::Passed;
    }
    for call in &failed {
        let endpoint = call.endpoint.clone().unwrap_or_default();
        if observation.failing_tests.len() < MAX_FAILING && !observation.failing_tests.contains(&endpoint) {
            observation.failing_tests.push(endpoint);
        }
    }
    let mut reports = Vec::new();
    for call in &failed {
        let body = body_text(call);
        let traces = format!("{body}\n{service_output}");
        // The call's own answer names its error best; the service's output holds every call's.
        let error = exception_line(&body)
            .or_else(|| exception_line(service_output))
            .map(str::to_owned)
            .or_else(|| call.error_message.clone())
            .unwrap_or_default();
        let what = format!(
            "{} answered HTTP {}: {error}",
            call.endpoint.as_deref().unwrap_or_default(),
            call.http_status
        );
        let found = incident::reports(
            &Incident {
                error: error.clone(),
                stacktrace: Some(traces),
                ticket: None,
            },
            files,
        );
        let message = truncate(&redact(&what, &[]).0, 1000);
        reports.extend(found.into_iter().map(|report| BugReport {
            message: message.clone(),
            ..report
        }));
    }
    if reports.is_empty() {
        // No trace reaches the repository: the service's entry file is where its handlers start.
        let message = truncate(&redact(&summary_of(&failed), &[]).0, 1000);
        reports.extend(entry_files(start, files).into_iter().map(|file| BugReport {
            file_path: file,
            line_number: 1,
            error_type: ErrorType::Logic,
            message: message.clone(),
            test_name: None,
            confidence_score: Some(0.3),
        }));
    }
    for report in reports {
        let known = observation
            .bug_reports
            .iter()
            .any(|r| r.file_path == report.file_path && r.line_number == report.line_number);
        if !known && observation.bug_reports.len() < MAX_REPORTS {
            observation.bug_reports.push(report);
        }
    }
    Outcome::Failed
}

/// What a failed call answered, as text: its JSON or its text preview.
fn body_text(call: &RunEnvelope) -> String {
    match (&call.json, &call.text_preview) {
        // A JSON error body often carries the trace as a string (`{"detail": "Traceback ..."}`).
        (Some(json), _) => {
            let mut out = String::new();
            strings(json, &mut out);
            out
        }
        (None, Some(text)) => text.clone(),
        (None, None) => String::new(),
    }
}

fn strings(value: &serde_json::Value, out: &mut String) {
    match value {
        serde_json::Value::String(s) => {
            out.push_str(s);
            out.push('\n');
        }
        serde_json::Value::Array(items) => items.iter().for_each(|v| strings(v, out)),
        serde_json::Value::Object(map) => map.values().for_each(|v| strings(v, out)),
        _ => {}
    }
}

/// The last line that names an exception (`KeyError: 'resolution'`,
/// `TypeError: Cannot read properties of undefined`).
fn exception_line(text: &str) -> Option<&str> {
    text.lines().map(str::trim).rev().find(|line| {
        let name = line.split(':').next().unwrap_or_default();
        let name = name.rsplit('.').next().unwrap_or(name);
        line.contains(':')
            && !name.is_empty()
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && (name.ends_with("Error") || name.ends_with("Exception"))
    })
}

/// One line for the failed calls: `GET /a answered HTTP 500; POST /b answered HTTP 422`.
fn summary_of(failed: &[&RunEnvelope]) -> String {
    failed
        .iter()
        .map(|c| {
            format!(
                "{} answered HTTP {}",
                c.endpoint.as_deref().unwrap_or_default(),
                c.http_status
            )
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// The repository files the start command runs: a path it names (`python3 app.py`,
/// `node server/index.js`), or a Python module it names (`uvicorn app.main:app`,
/// `python -m service`), when the repository has that file.
pub fn entry_files(start: &str, files: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for word in start.split_whitespace() {
        let word = word.trim_matches(|c| c == '"' || c == '\'');
        let word = word.strip_prefix("./").unwrap_or(word);
        let module = word.split(':').next().unwrap_or(word);
        let candidates = [
            word.to_owned(),
            format!("{}.py", module.replace('.', "/")),
            format!("{}/__main__.py", module.replace('.', "/")),
        ];
        for candidate in candidates {
            if files.contains(&candidate) && !out.contains(&candidate) {
                out.push(candidate);
            }
        }
    }
    out
}

/// What a person reads in the log after the build's own output: what the started service
/// printed, then one line per call.
pub fn log_section(start: &str, calls: &[RunEnvelope], service_output: &str) -> String {
    let mut out = format!("\n=== kubeheal verify: the build passed; the service was started with `{start}` ===\n");
    if !service_output.trim().is_empty() {
        out.push_str("--- what the service printed ---\n");
        out.push_str(service_output.trim_end());
        out.push('\n');
    }
    out.push_str("--- endpoint calls ---\n");
    for call in calls {
        let endpoint = call.endpoint.as_deref().unwrap_or("(no call)");
        match call.status {
            RunStatus::Success => out.push_str(&format!("ok     {endpoint} answered HTTP {}\n", call.http_status)),
            _ => {
                out.push_str(&format!(
                    "FAILED {endpoint}: {}\n",
                    call.error_message.as_deref().unwrap_or("failed")
                ));
                let body = body_text(call);
                if !body.trim().is_empty() {
                    for line in truncate(body.trim_end(), 2000).lines() {
                        out.push_str(&format!("       | {line}\n"));
                    }
                }
                // Why the call could not succeed at all (the service exited at its start).
                for warning in &call.warnings {
                    out.push_str(&format!("       ! {warning}\n"));
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::shared::ErrorClass;

    /// What wsgiref printed for a handler that raised (captured from the example service).
    const SERVICE: &str = r#"Traceback (most recent call last):
  File "/root/.pyenv/versions/3.11.7/lib/python3.11/wsgiref/handlers.py", line 137, in run
    self.result = application(self.environ, self.start_response)
                  ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
  File "/tmp/kubeheal-run-x/workspace/app.py", line 25, in app
    return [json.dumps(body).encode()]
            ^^^^
NameError: name 'json' is not defined
127.0.0.1 - - [25/Nov/2026 06:01:32] "GET /items/1 HTTP/1.1" 500 59
"#;

    fn call(endpoint: &str, http: u16) -> RunEnvelope {
        let failed = http >= 400;
        RunEnvelope {
            run_id: "probe-1".into(),
            endpoint: Some(endpoint.into()),
            status: if failed { RunStatus::Error } else { RunStatus::Success },
            duration_ms: 3,
            http_status: http,
            content_type: "text/plain".into(),
            json: None,
            text_preview: Some(if failed { "A server error occurred." } else { "ok" }.into()),
            exit_code: None,
            error_class: failed.then_some(ErrorClass::RuntimeError),
            error_message: failed.then(|| format!("{endpoint} answered {http}")),
            suggested_fix: failed.then(|| "fix the handler".into()),
            warnings: Vec::new(),
            redactions_applied: false,
            artifacts: Vec::new(),
            log_excerpt: None,
            environment_metadata: Default::default(),
        }
    }

    fn passed_build() -> Observation {
        serde_json::from_value(serde_json::json!({
            "envelope": {"runId": "r", "status": "success", "durationMs": 1}, "testsRan": 2
        }))
        .expect("an observation")
    }

    fn started_with(start: &str) -> Verify {
        serde_json::from_value(serde_json::json!({"openapi": {
            "document": "openapi.json", "start": start, "baseUrl": "http://127.0.0.1:8000"
        }}))
        .expect("a verify spec")
    }

    fn files() -> Vec<String> {
        vec!["app.py".into(), "test_app.py".into(), "pkg/server.py".into()]
    }

    #[test]
    fn a_failed_call_fails_the_execution_at_the_frame_of_the_service_trace_in_the_repository() {
        let mut observation = passed_build();
        let calls = [call("GET /health", 200), call("GET /items/{item_id}", 500)];
        let outcome = observe(
            &mut observation,
            Outcome::Passed,
            Some(&started_with("python3 app.py")),
            &calls,
            SERVICE,
            &files(),
        );
        assert_eq!(outcome, Outcome::Failed);
        assert_eq!(observation.failing_tests, ["GET /items/{item_id}"]);
        assert_eq!(observation.endpoint_calls.len(), 2);
        assert_eq!(observation.endpoint_calls[1].http_status, 500);
        let report = &observation.bug_reports[0];
        assert_eq!((report.file_path.as_str(), report.line_number), ("app.py", 25));
        // NameError reads as a missing import, as the parser reads it: the built-in fixer's case.
        assert_eq!(report.error_type, ErrorType::Import);
        assert_eq!(
            report.message,
            "GET /items/{item_id} answered HTTP 500: NameError: name 'json' is not defined"
        );
    }

    #[test]
    fn every_call_succeeding_keeps_the_build_passed_and_records_the_calls() {
        let mut observation = passed_build();
        let calls = [call("GET /health", 200)];
        let outcome = observe(
            &mut observation,
            Outcome::Passed,
            Some(&started_with("python3 app.py")),
            &calls,
            "",
            &files(),
        );
        assert_eq!(outcome, Outcome::Passed);
        assert!(observation.failing_tests.is_empty() && observation.bug_reports.is_empty());
        assert_eq!(observation.endpoint_calls[0].endpoint, "GET /health");
    }

    #[test]
    fn a_failed_build_is_judged_by_the_build_alone() {
        let mut observation = passed_build();
        let outcome = observe(
            &mut observation,
            Outcome::Failed,
            Some(&started_with("python3 app.py")),
            &[],
            SERVICE,
            &files(),
        );
        assert_eq!(outcome, Outcome::Failed);
        assert!(observation.bug_reports.is_empty());
    }

    #[test]
    fn a_check_that_could_not_start_is_the_configurations_fault() {
        let mut observation = passed_build();
        let refused = RunEnvelope {
            endpoint: None,
            error_message: Some("the endpoints could not be checked: no such file".into()),
            suggested_fix: Some("fix spec.verify.openapi".into()),
            ..call("x", 400)
        };
        let outcome = observe(
            &mut observation,
            Outcome::Passed,
            Some(&started_with("python3 app.py")),
            &[refused],
            "",
            &files(),
        );
        let Outcome::Infrastructure { message } = outcome else {
            panic!("{outcome:?}")
        };
        assert!(
            message.contains("no such file") && message.contains("spec.verify.openapi"),
            "{message}"
        );
    }

    #[test]
    fn without_a_trace_in_the_repository_the_file_the_start_command_runs_is_reported() {
        let mut observation = passed_build();
        let calls = [call("POST /orders", 500)];
        let outcome = observe(
            &mut observation,
            Outcome::Passed,
            Some(&started_with("python3 -m uvicorn pkg.server:app --port 8000")),
            &calls,
            "no trace here",
            &files(),
        );
        assert_eq!(outcome, Outcome::Failed);
        let report = &observation.bug_reports[0];
        assert_eq!((report.file_path.as_str(), report.line_number), ("pkg/server.py", 1));
        assert_eq!(report.message, "POST /orders answered HTTP 500");
    }

    #[test]
    fn a_trace_in_a_json_error_body_is_read_too() {
        let mut observation = passed_build();
        let mut failed = call("GET /items/{item_id}", 500);
        failed.json = Some(serde_json::json!({"detail": SERVICE}));
        failed.text_preview = None;
        observe(
            &mut observation,
            Outcome::Passed,
            Some(&started_with("python3 app.py")),
            &[failed],
            "",
            &files(),
        );
        assert_eq!(observation.bug_reports[0].line_number, 25);
    }

    #[test]
    fn a_run_that_verifies_nothing_keeps_the_builds_outcome() {
        let mut observation = passed_build();
        let calls = [call("GET /items/{item_id}", 500)];
        let outcome = observe(&mut observation, Outcome::Passed, None, &calls, SERVICE, &files());
        assert_eq!(outcome, Outcome::Passed);
        assert!(observation.endpoint_calls.is_empty() && observation.bug_reports.is_empty());
    }

    #[test]
    fn a_passing_build_with_no_call_made_is_not_a_pass() {
        let mut observation = passed_build();
        let outcome = observe(
            &mut observation,
            Outcome::Passed,
            Some(&started_with("python3 app.py")),
            &[],
            "",
            &files(),
        );
        let Outcome::Infrastructure { message } = outcome else {
            panic!("{outcome:?}")
        };
        assert!(message.contains("no endpoint of openapi.json was called"), "{message}");
    }

    #[test]
    fn each_failed_call_is_named_by_the_error_in_its_own_answer() {
        let mut observation = passed_build();
        let mut first = call("GET /a", 500);
        first.text_preview =
            Some("Traceback (most recent call last):\n  File \"/srv/app.py\", line 3, in a\nKeyError: 'x'".into());
        let mut second = call("GET /b", 500);
        second.text_preview = Some("Traceback (most recent call last):\n  File \"/srv/app.py\", line 9, in b\nZeroDivisionError: division by zero".into());
        observe(
            &mut observation,
            Outcome::Passed,
            Some(&started_with("python3 app.py")),
            &[first, second],
            "",
            &files(),
        );
        let messages: Vec<&str> = observation.bug_reports.iter().map(|r| r.message.as_str()).collect();
        assert!(
            messages.contains(&"GET /a answered HTTP 500: KeyError: 'x'"),
            "{messages:?}"
        );
        assert!(
            messages.contains(&"GET /b answered HTTP 500: ZeroDivisionError: division by zero"),
            "{messages:?}"
        );
    }

    #[test]
    fn entry_files_are_the_paths_and_modules_the_start_command_names() {
        let files = files();
        assert_eq!(entry_files("python3 ./app.py", &files), ["app.py"]);
        assert_eq!(
            entry_files("gunicorn pkg.server:app -b :8000", &files),
            ["pkg/server.py"]
        );
        assert!(entry_files("node index.js", &files).is_empty());
    }

    #[test]
    fn the_log_section_says_what_the_service_printed_and_how_each_call_went() {
        let calls = [call("GET /health", 200), call("GET /items/{item_id}", 500)];
        let section = log_section("python3 app.py", &calls, SERVICE);
        assert!(section.contains("NameError: name 'json' is not defined"), "{section}");
        assert!(section.contains("ok     GET /health answered HTTP 200"), "{section}");
        assert!(
            section.contains("FAILED GET /items/{item_id}: GET /items/{item_id} answered 500"),
            "{section}"
        );
        assert!(section.contains("       | A server error occurred."), "{section}");
    }
}
