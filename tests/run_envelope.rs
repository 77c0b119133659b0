//! Every kind of RunEnvelope the executors produce passes seed 003's own `validateRunEnvelope`
//! (run by node) and the rules of its tables, in the snake_case form `kubeheal exec` prints. The
//! probe's envelopes are checked the same way in `tests/probe.rs`, the Job executor's in
//! `tests/cluster/executor_job.rs`.

#[path = "support/mod.rs"]
mod support;

use std::path::Path;
use std::time::Duration;

use kubeheal::api::heal_run::ProjectType;
use kubeheal::api::shared::{ErrorClass, RunStatus};
use kubeheal::executor::ExecutionRequest;
use kubeheal::executor::local::LocalExecutor;
use serde_json::Value;
use support::seed003::assert_seed_envelopes;

fn request(
    source: &Path,
    command: Option<&str>,
    revision: Option<&str>,
    timeout: Duration,
    artifacts: &Path,
) -> ExecutionRequest {
    ExecutionRequest {
        run_id: "envelope-kinds".into(),
        source: source.to_owned(),
        revision: revision.map(str::to_owned),
        patches: Vec::new(),
        project_type: ProjectType::Auto,
        command: command.map(str::to_owned),
        timeout,
        env: Vec::new(),
        secrets: vec!["s3cr3t-build-value".into()],
        verify: None,
        artifacts_dir: artifacts.to_owned(),
    }
}

#[tokio::test]
async fn every_local_envelope_kind_passes_seed_003s_validator() {
    let project = tempfile::tempdir().expect("a folder");
    std::fs::write(project.path().join("README"), "nothing to detect\n").expect("write");
    let artifacts = tempfile::tempdir().expect("a folder");
    let writes_artifacts = "mkdir -p \"$KUBEHEAL_ARTIFACTS/reports\" && printf '<testsuite/>' > \"$KUBEHEAL_ARTIFACTS/reports/junit.xml\" && echo 'token s3cr3t-build-value' && echo done";
    // (what, command, revision, timeout in seconds, status, error class)
    type Case<'a> = (
        &'a str,
        Option<&'a str>,
        Option<&'a str>,
        u64,
        RunStatus,
        Option<ErrorClass>,
    );
    let cases: Vec<Case> = vec![
        (
            "success with a nested artifact",
            Some(writes_artifacts),
            None,
            60,
            RunStatus::Success,
            None,
        ),
        (
            "a failing command",
            Some("echo broken; exit 1"),
            None,
            60,
            RunStatus::Error,
            Some(ErrorClass::RuntimeError),
        ),
        (
            "a missing tool",
            Some("no-such-tool-kubeheal"),
            None,
            60,
            RunStatus::Error,
            Some(ErrorClass::CommandNotFound),
        ),
        (
            "a timeout",
            Some("sleep 30"),
            None,
            1,
            RunStatus::Timeout,
            Some(ErrorClass::Timeout),
        ),
        (
            "a revision that does not exist",
            Some("true"),
            Some("no-such-revision"),
            60,
            RunStatus::Error,
            Some(ErrorClass::SourceFetch),
        ),
        (
            "no command and no project type",
            None,
            None,
            60,
            RunStatus::Error,
            Some(ErrorClass::CommandNotFound),
        ),
    ];
    let mut printed: Vec<Value> = Vec::new();
    for (name, command, revision, timeout, status, class) in cases {
        let execution = LocalExecutor
            .execute(&request(
                project.path(),
                command,
                revision,
                Duration::from_secs(timeout),
                artifacts.path(),
            ))
            .await;
        let e = &execution.envelope;
        assert_eq!(
            (e.status, e.error_class),
            (status, class),
            "{name}: {e:?}\n{}",
            execution.log
        );
        // The meaning kubeheal gives seed 003's HTTP fields for a build.
        let http = match status {
            RunStatus::Success => 200,
            RunStatus::Error => 500,
            RunStatus::Timeout => 504,
        };
        assert_eq!(e.http_status, http, "{name}");
        assert_eq!(e.content_type, "text/plain", "{name}");
        assert!(e.json.is_none(), "{name}");
        assert_eq!(
            e.text_preview.as_deref(),
            Some(&execution.log[..execution.log.len().min(10240)]),
            "{name}"
        );
        printed.push(e.seed_json());
    }
    let success = &printed[0];
    assert_eq!(success["artifacts"][0]["name"], "reports/junit.xml", "{success:#}");
    assert_eq!(success["artifacts"][0]["mime"], "application/xml");
    assert_eq!(success["redactions_applied"], true);
    assert!(!success.to_string().contains("s3cr3t-build-value"));
    assert!(success["environment_metadata"]["os"].is_string(), "{success:#}");
    assert_seed_envelopes(&printed);
}

#[tokio::test]
async fn a_long_log_gives_a_ten_kilobyte_preview() {
    let project = tempfile::tempdir().expect("a folder");
    let artifacts = tempfile::tempdir().expect("a folder");
    let execution = LocalExecutor
        .execute(&request(
            project.path(),
            Some("i=0; while [ $i -lt 2000 ]; do echo \"line $i of a long build log\"; i=$((i+1)); done"),
            None,
            Duration::from_secs(60),
            artifacts.path(),
        ))
        .await;
    let preview = execution.envelope.text_preview.clone().expect("a preview");
    assert_eq!(preview.len(), 10 * 1024);
    assert!(preview.starts_with("line 0 of a long build log\n"));
    assert!(execution.log.len() > preview.len());
    assert_seed_envelopes(&[execution.envelope.seed_json()]);
}

#[test]
fn the_seeds_validator_really_runs_and_refuses_an_envelope_without_http_fields() {
    let complete = serde_json::json!({
        "run_id": "r", "status": "success", "duration_ms": 1, "http_status": 200,
        "content_type": "text/plain", "artifacts": [], "warnings": [], "redactions_applied": false
    });
    let mut without_status = complete.clone();
    without_status.as_object_mut().expect("an object").remove("http_status");
    let mut bad_status = complete.clone();
    bad_status["status"] = "failed".into();
    assert_eq!(
        support::seed003::validate_run_envelopes(&[complete, without_status, bad_status]),
        [true, false, false]
    );
}

/// A service whose one endpoint fails with the build's secret in its body and its output.
const LEAKY_SERVICE: &str = r#"import os, sys
from http.server import BaseHTTPRequestHandler, HTTPServer

class Handler(BaseHTTPRequestHandler):
    def do_GET(self):
        if self.path == "/ok":
            body, status = b'{"ok": true}', 200
        else:
            print("Traceback (most recent call last):\n  File \"serve.py\", line 9, in do_GET\nRuntimeError: token s3cr3t-build-value rejected", file=sys.stderr, flush=True)
            body, status = b'{"error": "token s3cr3t-build-value rejected"}', 500
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

HTTPServer(("127.0.0.1", int(os.environ["PORT"])), Handler).serve_forever()
"#;

const LEAKY_DOCUMENT: &str = r#"{"openapi": "3.0.3", "info": {"title": "t", "version": "1"}, "paths": {
  "/ok": {"get": {"responses": {"200": {"description": "ok"}}}},
  "/leak": {"get": {"responses": {"200": {"description": "ok"}}}}}}"#;

/// A project whose tests pass, with `serve.py` (`service`) and [`LEAKY_DOCUMENT`]: its folder,
/// the artifacts' folder, a free port for the service, and a request to build it.
fn service_project(service: &str) -> (tempfile::TempDir, tempfile::TempDir, u16, ExecutionRequest) {
    let project = tempfile::tempdir().expect("a folder");
    std::fs::write(project.path().join("serve.py"), service).expect("write");
    std::fs::write(project.path().join("openapi.json"), LEAKY_DOCUMENT).expect("write");
    let artifacts = tempfile::tempdir().expect("a folder");
    let port = support::http::free_port().port();
    let request = request(
        project.path(),
        Some("echo tests pass"),
        None,
        Duration::from_secs(60),
        artifacts.path(),
    );
    (project, artifacts, port, request)
}

#[tokio::test]
async fn a_verifying_executions_calls_pass_seed_003s_validator_and_never_hold_the_builds_secret() {
    let (project, _artifacts, port, mut request) = service_project(LEAKY_SERVICE);
    let check = |document: &str| {
        serde_json::from_value(serde_json::json!({
            "document": document, "start": format!("PORT={port} python3 serve.py"),
            "baseUrl": format!("http://127.0.0.1:{port}"), "readyTimeoutSeconds": 20, "callTimeoutSeconds": 10,
        }))
        .expect("a check")
    };
    request.verify = Some(check("openapi.json"));
    let execution = LocalExecutor.execute(&request).await;
    assert_eq!(execution.envelope.status, RunStatus::Success, "the build itself passed");
    let calls = &execution.endpoint_calls;
    let seen: Vec<(Option<&str>, u16)> = calls.iter().map(|c| (c.endpoint.as_deref(), c.http_status)).collect();
    assert_eq!(seen, [(Some("GET /leak"), 500), (Some("GET /ok"), 200)]);
    assert_eq!(calls[0].error_class, Some(ErrorClass::RuntimeError));
    assert!(calls[0].redactions_applied, "{:?}", calls[0]);
    for text in [
        serde_json::to_string(calls).expect("JSON"),
        execution.log.clone(),
        execution.service_output.clone(),
    ] {
        assert!(!text.contains("s3cr3t-build-value"), "{text}");
    }
    assert!(
        execution.service_output.contains("RuntimeError: token [REDACTED"),
        "{}",
        execution.service_output
    );
    assert!(execution.log.contains("FAILED GET /leak"), "{}", execution.log);

    // Something else on the service's port would answer in its place: nothing is called.
    let squatter = std::net::TcpListener::bind(("127.0.0.1", port)).expect("the port is free again");
    request.verify = Some(check("openapi.json"));
    let occupied = LocalExecutor.execute(&request).await;
    let refused = &occupied.endpoint_calls[0];
    assert_eq!((occupied.endpoint_calls.len(), refused.endpoint.as_deref()), (1, None));
    assert!(
        refused
            .error_message
            .as_deref()
            .unwrap_or_default()
            .contains("already answers"),
        "{refused:?}"
    );
    drop(squatter);

    // A document that is a link out of the project is never read (a hostile repository).
    std::os::unix::fs::symlink("/etc/passwd", project.path().join("linked.json")).expect("a link");
    request.verify = Some(check("linked.json"));
    let linked = LocalExecutor.execute(&request).await;
    let refused = &linked.endpoint_calls[0];
    assert_eq!((linked.endpoint_calls.len(), refused.endpoint.as_deref()), (1, None));
    let said = serde_json::to_string(&linked.endpoint_calls).expect("JSON") + &linked.log;
    assert!(!said.contains("root:"), "{said}");

    // A document that is not there: one envelope that says so, and no call.
    request.verify = Some(check("missing.json"));
    let missing = LocalExecutor.execute(&request).await;
    assert_eq!(missing.endpoint_calls.len(), 1);
    let refused = &missing.endpoint_calls[0];
    assert_eq!(
        (refused.endpoint.as_deref(), refused.error_class),
        (None, Some(ErrorClass::ValidationError))
    );
    assert!(
        refused
            .error_message
            .as_deref()
            .unwrap_or_default()
            .contains("missing.json"),
        "{refused:?}"
    );

    let printed: Vec<Value> = calls.iter().chain([refused]).map(|c| c.seed_json()).collect();
    assert_seed_envelopes(&printed);
}

/// A service whose start command fails (a crash at import, say) will never answer: the wait for
/// it ends with the start command, not after `readyTimeoutSeconds`, and every call says why, with
/// the service's own words in its output for the healer.
#[tokio::test]
async fn a_service_that_dies_at_start_ends_the_wait_and_every_call_says_why() {
    let (_project, _artifacts, port, mut request) = service_project("import no_such_module_kubeheal_test\n");
    // Were the wait not ended by the start command, it would last ten minutes and the calls
    // would carry no warning.
    request.verify = Some(
        serde_json::from_value(serde_json::json!({
            "document": "openapi.json", "start": "python3 serve.py",
            "baseUrl": format!("http://127.0.0.1:{port}"), "readyTimeoutSeconds": 600, "callTimeoutSeconds": 5,
        }))
        .expect("a check"),
    );
    let execution = LocalExecutor.execute(&request).await;
    let calls = &execution.endpoint_calls;
    assert_eq!(calls.len(), 2, "{calls:?}");
    for call in calls {
        assert_eq!(call.status, RunStatus::Error, "{call:?}");
        assert!(
            call.warnings
                .iter()
                .any(|w| w.contains("start command exited") && w.contains("before the service accepted a connection")),
            "{call:?}"
        );
    }
    assert!(
        execution.service_output.contains("ModuleNotFoundError"),
        "{}",
        execution.service_output
    );
    let printed: Vec<Value> = calls.iter().map(|c| c.seed_json()).collect();
    assert_seed_envelopes(&printed);
}
