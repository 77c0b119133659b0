//! The Code Healer API over real HTTP on loopback: the reference server answers seed 000's
//! example with seed 000's example response, and the client survives every misbehaving healer —
//! slow, failing, lying, huge, or reaching outside the repository — with a clear outcome and no
//! files to write.

#[path = "support/mod.rs"]
mod support;

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::http::{HeaderMap, StatusCode};
use axum::response::IntoResponse;
use axum::routing::post;
use kubeheal::api::heal_run::HealerOutcome;
use kubeheal::healer::Chain;
use kubeheal::healer::builtin::Builtin;
use kubeheal::healer::code_healer_api::CodeHealerApi;
use kubeheal::healer::server::{ServerState, router};
use kubeheal::healer::validate::Limits;
use kubeheal::healer::{ErrorContext, HealRequest, HealResponse, Healer};
use serde_json::{Value, json};
use support::http::serve;

fn seed_example_request() -> Value {
    json!({
        "project_id": "auto_calc_v2",
        "cycle": 1,
        "failed_files": {"logic.py": "def add(a, b)\n  return a + b"},
        "pytest_errors": {
            "exit_code": 2,
            "error_count": 1,
            "error_summary": "SyntaxError: invalid syntax",
            "stderr": "SyntaxError: expected ':' (logic.py, line 1)",
            "stdout": ""
        }
    })
}

async fn reference_server() -> SocketAddr {
    serve(router(Arc::new(ServerState {
        healers: Chain(vec![Box::new(Builtin)]),
    })))
    .await
}

#[tokio::test]
async fn the_reference_server_answers_seed_000s_example_with_seed_000s_response() {
    let addr = reference_server().await;
    let response = support::http::client()
        .post(format!("http://{addr}/api/heal"))
        .json(&seed_example_request())
        .send()
        .await
        .expect("the server answers");
    assert_eq!(response.status(), 200);
    let body: Value = response.json().await.expect("JSON");
    assert_eq!(body["status"], "healed");
    assert_eq!(
        body["modified_files"],
        json!({"logic.py": "def add(a, b):\n  return a + b"})
    );
    assert_eq!(body["changes_summary"], "Added missing colon after function definition");
}

#[tokio::test]
async fn the_reference_server_reports_bad_requests_and_unfixable_errors_as_seed_000_errors() {
    let addr = reference_server().await;
    let client = support::http::client();
    let bad = client
        .post(format!("http://{addr}/api/heal"))
        .body("not json")
        .send()
        .await
        .expect("answer");
    assert_eq!(bad.status(), 400);
    let body: Value = bad.json().await.expect("JSON");
    assert_eq!(body["status"], "error");
    assert!(body["message"].as_str().unwrap_or_default().contains("invalid request"));

    let mut unfixable = seed_example_request();
    unfixable["pytest_errors"]["stderr"] = json!("AssertionError: assert 3 == 4");
    let answer = client
        .post(format!("http://{addr}/api/heal"))
        .json(&unfixable)
        .send()
        .await
        .expect("answer");
    assert_eq!(answer.status(), 422);
    assert_eq!(answer.json::<Value>().await.expect("JSON")["status"], "error");

    let health: Value = client
        .get(format!("http://{addr}/healthz"))
        .send()
        .await
        .expect("answer")
        .json()
        .await
        .expect("JSON");
    assert_eq!(health["status"], "ok");
}

fn request(timeout: Duration) -> HealRequest {
    HealRequest {
        project_id: "auto_calc_v2".into(),
        cycle: 1,
        failed_files: BTreeMap::from([("logic.py".to_owned(), "def add(a, b)\n  return a + b".to_owned())]),
        reports: Vec::new(),
        error_context: ErrorContext::new(
            2,
            1,
            "SyntaxError".into(),
            "SyntaxError: expected ':' (logic.py, line 1)",
            "",
        ),
        history: Vec::new(),
        timeout,
        limits: Limits {
            allowed_paths: vec!["logic.py".into(), "src/".into()],
            ..Limits::default()
        },
    }
}

async fn ask(app: Router, timeout: Duration) -> HealResponse {
    let addr = serve(app).await;
    let client = CodeHealerApi::new(format!("http://{addr}/api/heal"), Some("s3cret".into())).expect("a client");
    client.heal(&request(timeout)).await
}

fn answering(status: StatusCode, body: impl Into<String> + Clone + Send + Sync + 'static) -> Router {
    Router::new().route(
        "/api/heal",
        post(move || {
            let body = body.clone().into();
            async move { (status, [("content-type", "application/json")], body).into_response() }
        }),
    )
}

fn assert_failed(response: &HealResponse, outcome: HealerOutcome, reason: &str) {
    assert_eq!(response.outcome, outcome, "{response:?}");
    assert!(
        response.modified_files.is_empty(),
        "files would be written: {response:?}"
    );
    let got = response.reason.as_deref().unwrap_or_default();
    assert!(got.contains(reason), "reason {got:?} does not say {reason:?}");
}

#[tokio::test]
async fn the_client_sends_seed_000s_request_with_the_bearer_token_and_reads_the_fix() {
    let app = Router::new().route(
        "/api/heal",
        post(|headers: HeaderMap, body: String| async move {
            let request: Value = serde_json::from_str(&body).expect("the client sends JSON");
            let authorized = headers.get("authorization").and_then(|v| v.to_str().ok()) == Some("Bearer s3cret");
            let shaped = request["project_id"] == "auto_calc_v2"
                && request["cycle"] == 1
                && request["failed_files"]["logic.py"].is_string()
                && request["pytest_errors"]["exit_code"] == 2
                && request["pytest_errors"]["stderr"]
                    .as_str()
                    .is_some_and(|s| s.contains("expected ':'"));
            if !(authorized && shaped) {
                return (StatusCode::BAD_REQUEST, format!("unexpected request: {body}")).into_response();
            }
            axum::Json(json!({
                "status": "healed",
                "modified_files": {"logic.py": "def add(a, b):\n  return a + b"},
                "changes_summary": "Added missing colon after function definition"
            }))
            .into_response()
        }),
    );
    let response = ask(app, Duration::from_secs(5)).await;
    assert_eq!(response.outcome, HealerOutcome::Healed, "{response:?}");
    assert_eq!(response.modified_files["logic.py"], "def add(a, b):\n  return a + b");
    assert_eq!(
        response.changes_summary.as_deref(),
        Some("Added missing colon after function definition")
    );
}

#[tokio::test]
async fn sams_own_keys_files_and_explanation_are_accepted() {
    let app = answering(
        StatusCode::OK,
        r#"{"files": {"logic.py": "x = 1\n"}, "explanation": "done"}"#,
    );
    let response = ask(app, Duration::from_secs(5)).await;
    assert_eq!(response.outcome, HealerOutcome::Healed, "{response:?}");
    assert_eq!(response.changes_summary.as_deref(), Some("done"));
}

#[tokio::test]
async fn a_healer_slower_than_the_cycle_timeout_is_a_timeout() {
    let app = Router::new().route(
        "/api/heal",
        post(|| async {
            tokio::time::sleep(Duration::from_secs(5)).await;
            "{}"
        }),
    );
    let response = ask(app, Duration::from_millis(300)).await;
    assert_failed(&response, HealerOutcome::Timeout, "did not answer within");
    assert!(
        response.duration < Duration::from_secs(3),
        "the client waited {:?}",
        response.duration
    );
}

#[tokio::test]
async fn a_504_is_a_timeout_and_500_or_4xx_are_errors_with_the_healers_message() {
    let r = ask(
        answering(
            StatusCode::GATEWAY_TIMEOUT,
            r#"{"status":"timeout","message":"Healer timed out after 30s"}"#,
        ),
        Duration::from_secs(5),
    )
    .await;
    assert_failed(&r, HealerOutcome::Timeout, "Healer timed out after 30s");
    let r = ask(
        answering(
            StatusCode::INTERNAL_SERVER_ERROR,
            r#"{"status":"error","message":"Failed to generate fix: model returned invalid syntax"}"#,
        ),
        Duration::from_secs(5),
    )
    .await;
    assert_failed(&r, HealerOutcome::Error, "500: Failed to generate fix");
    let r = ask(
        answering(
            StatusCode::TOO_MANY_REQUESTS,
            r#"{"status":"error","message":"rate limited"}"#,
        ),
        Duration::from_secs(5),
    )
    .await;
    assert_failed(&r, HealerOutcome::Error, "429: rate limited");
}

#[tokio::test]
async fn answers_that_are_not_a_valid_fix_are_errors_and_nothing_is_written() {
    let cases: Vec<(&str, String, &str)> = vec![
        ("HTML", "<html><body>502 Bad Gateway</body></html>".into(), "not JSON"),
        (
            "wrong types",
            r#"{"status":"healed","modified_files":{"logic.py":42}}"#.into(),
            "wrong shape",
        ),
        (
            "no files",
            r#"{"status":"healed","changes_summary":"trust me"}"#.into(),
            "no modified_files",
        ),
        (
            "another status",
            r#"{"status":"pending","modified_files":{}}"#.into(),
            "not \"healed\"",
        ),
        (
            "path traversal",
            r#"{"status":"healed","modified_files":{"../../etc/passwd":"root::0:0"}}"#.into(),
            "'..' is not allowed",
        ),
        (
            "absolute path",
            r#"{"status":"healed","modified_files":{"/etc/passwd":"x"}}"#.into(),
            "absolute paths",
        ),
        (
            "binary content",
            r#"{"status":"healed","modified_files":{"logic.py":"\u0000\u0001ELF"}}"#.into(),
            "binary",
        ),
        (
            "outside the allowed paths",
            r#"{"status":"healed","modified_files":{"setup.py":"x"}}"#.into(),
            "outside the allowed paths",
        ),
        (
            "one good file and one bad",
            r#"{"status":"healed","modified_files":{"logic.py":"ok","../x":"bad"}}"#.into(),
            "'..' is not allowed",
        ),
    ];
    for (what, body, reason) in cases {
        let response = ask(answering(StatusCode::OK, body), Duration::from_secs(5)).await;
        assert_eq!(response.outcome, HealerOutcome::Error, "{what}: {response:?}");
        assert!(response.modified_files.is_empty(), "{what}: files would be written");
        let got = response.reason.unwrap_or_default();
        assert!(got.contains(reason), "{what}: reason {got:?} does not say {reason:?}");
    }
}

#[tokio::test]
async fn a_50_mb_answer_is_refused_without_reading_it_all() {
    let huge = format!(
        r#"{{"status":"healed","modified_files":{{"logic.py":"{}"}}}}"#,
        "x".repeat(50 * 1024 * 1024)
    );
    let response = ask(answering(StatusCode::OK, huge), Duration::from_secs(30)).await;
    assert_failed(&response, HealerOutcome::Error, "larger than 16 MiB");
}

#[tokio::test]
async fn a_healer_that_is_down_is_an_error_that_names_it() {
    // A port that was free: nothing listens there.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .expect("a port")
        .local_addr()
        .expect("addr")
        .port();
    let client = CodeHealerApi::new(format!("http://127.0.0.1:{port}/api/heal"), None).expect("a client");
    let response = client.heal(&request(Duration::from_secs(5))).await;
    assert_failed(&response, HealerOutcome::Unreachable, "cannot reach the healer");
}
