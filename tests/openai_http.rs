//! The OpenAI-compatible adapter against a loopback server that speaks the chat-completions wire
//! format: a good reply becomes validated files; malformed replies and failing endpoints become
//! clear errors with nothing to write.

#[path = "support/mod.rs"]
mod support;

use std::collections::BTreeMap;
use std::time::Duration;

use axum::Router;
use axum::http::{HeaderMap, StatusCode};
use axum::response::IntoResponse;
use axum::routing::post;
use kubeheal::api::heal_run::HealerOutcome;
use kubeheal::api::shared::{BugReport, ErrorType};
use kubeheal::healer::openai::OpenAi;
use kubeheal::healer::validate::Limits;
use kubeheal::healer::{ErrorContext, HealRequest, HealResponse, Healer, PreviousAttempt, ReportWithSnippet};
use serde_json::{Value, json};
use support::http::serve;

fn request() -> HealRequest {
    let content = "def calculate(a, b):\n    return a - b\n";
    let report = BugReport {
        file_path: "logic.py".into(),
        line_number: 2,
        error_type: ErrorType::Logic,
        message: "AssertionError: assert -1 == 5".into(),
        test_name: Some("test_logic.py::test_add".into()),
        confidence_score: Some(0.95),
    };
    HealRequest {
        project_id: "calc".into(),
        cycle: 2,
        failed_files: BTreeMap::from([("logic.py".to_owned(), content.to_owned())]),
        reports: vec![ReportWithSnippet::new(report, content)],
        error_context: ErrorContext::new(1, 1, "1 failed".into(), "", "FAILED test_logic.py::test_add"),
        history: vec![PreviousAttempt {
            cycle: 1,
            outcome: "error".into(),
            changes_summary: Some("swapped the operands".into()),
            files: vec!["logic.py".into()],
            result: Some("test still failed".into()),
        }],
        timeout: Duration::from_secs(5),
        limits: Limits {
            allowed_paths: vec!["logic.py".into()],
            ..Limits::default()
        },
    }
}

fn completion(content: &str) -> Value {
    json!({
        "id": "chatcmpl-1", "object": "chat.completion", "model": "qwen2.5-coder",
        "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content}}],
        "usage": {"prompt_tokens": 300, "completion_tokens": 40, "total_tokens": 340}
    })
}

async fn ask(app: Router) -> HealResponse {
    let addr = serve(app).await;
    let healer = OpenAi::new(
        &format!("http://{addr}/v1"),
        "qwen2.5-coder",
        Some("sk-test".into()),
        1024,
    )
    .expect("a healer");
    healer.heal(&request()).await
}

fn replying(status: StatusCode, body: Value) -> Router {
    Router::new().route(
        "/v1/chat/completions",
        post(move || {
            let body = body.clone();
            async move { (status, axum::Json(body)).into_response() }
        }),
    )
}

#[tokio::test]
async fn a_well_formed_reply_becomes_the_fix_and_the_request_carries_the_context() {
    let app = Router::new().route(
        "/v1/chat/completions",
        post(|headers: HeaderMap, axum::Json(body): axum::Json<Value>| async move {
            let prompt = body["messages"][1]["content"].as_str().unwrap_or_default().to_owned();
            let ok = headers.get("authorization").and_then(|v| v.to_str().ok()) == Some("Bearer sk-test")
                && body["model"] == "qwen2.5-coder"
                && body["max_tokens"] == 1024
                && body["messages"][0]["role"] == "system"
                && prompt.contains("LOGIC error in logic.py line 2")
                && prompt.contains("test_logic.py::test_add")
                && prompt.contains("swapped the operands")
                && prompt.contains("FILE: logic.py");
            if !ok {
                return (StatusCode::BAD_REQUEST, axum::Json(json!({"error": {"message": format!("bad request: {body}")}}))).into_response();
            }
            axum::Json(completion("Here you go.\n\nSUMMARY: add instead of subtract\nCONFIDENCE: 0.8\nFILE: logic.py\n```python\ndef calculate(a, b):\n    return a + b\n```\n")).into_response()
        }),
    );
    let response = ask(app).await;
    assert_eq!(response.outcome, HealerOutcome::Healed, "{response:?}");
    assert_eq!(
        response.modified_files["logic.py"],
        "def calculate(a, b):\n    return a + b\n"
    );
    assert_eq!(response.changes_summary.as_deref(), Some("add instead of subtract"));
    assert_eq!(response.confidence, 0.8);
    assert_eq!(response.tokens_used, Some(340));
}

#[tokio::test]
async fn malformed_replies_and_failing_endpoints_are_errors_with_nothing_to_write() {
    let cases = vec![
        (
            "prose only",
            replying(StatusCode::OK, completion("You should change the minus to a plus.")),
            "no FILE block",
        ),
        (
            "cut off",
            replying(
                StatusCode::OK,
                completion("FILE: logic.py\n```python\ndef calculate(a, b):"),
            ),
            "not closed",
        ),
        (
            "outside the allowed paths",
            replying(StatusCode::OK, completion("FILE: ../secrets.py\n```\nx\n```")),
            "'..' is not allowed",
        ),
        (
            "no choices",
            replying(StatusCode::OK, json!({"choices": []})),
            "no choices[0].message.content",
        ),
        (
            "no fix",
            replying(StatusCode::OK, completion("NO_FIX: the test expects the wrong value")),
            "the test expects the wrong value",
        ),
        (
            "rate limited",
            replying(
                StatusCode::TOO_MANY_REQUESTS,
                json!({"error": {"message": "Rate limit reached"}}),
            ),
            "429: Rate limit reached",
        ),
        (
            "bad key",
            replying(
                StatusCode::UNAUTHORIZED,
                json!({"error": {"message": "Incorrect API key provided"}}),
            ),
            "401: Incorrect API key",
        ),
    ];
    for (what, app, reason) in cases {
        let response = ask(app).await;
        assert_eq!(response.outcome, HealerOutcome::Error, "{what}: {response:?}");
        assert!(response.modified_files.is_empty(), "{what}: files would be written");
        let got = response.reason.unwrap_or_default();
        assert!(got.contains(reason), "{what}: {got:?} does not say {reason:?}");
    }
    let html = Router::new().route(
        "/v1/chat/completions",
        post(|| async { (StatusCode::BAD_GATEWAY, "<html>502</html>") }),
    );
    let response = ask(html).await;
    assert!(response.reason.unwrap_or_default().contains("not JSON"));
}

#[tokio::test]
async fn a_model_slower_than_the_cycle_timeout_is_a_timeout() {
    let app = Router::new().route(
        "/v1/chat/completions",
        post(|| async {
            tokio::time::sleep(Duration::from_secs(10)).await;
            "{}"
        }),
    );
    let addr = serve(app).await;
    let healer = OpenAi::new(&format!("http://{addr}/v1"), "m", None, 256).expect("a healer");
    let mut req = request();
    req.timeout = Duration::from_millis(300);
    let response = healer.heal(&req).await;
    assert_eq!(response.outcome, HealerOutcome::Timeout, "{response:?}");
}

#[tokio::test]
async fn the_reference_server_asks_the_model_when_no_deterministic_fixer_applies() {
    use kubeheal::healer::Chain;
    use kubeheal::healer::builtin::Builtin;
    use kubeheal::healer::server::{ServerState, router};
    let model = serve(replying(
        StatusCode::OK,
        completion("SUMMARY: add instead of subtract\nCONFIDENCE: 0.7\nFILE: logic.py\n```\ndef calculate(a, b):\n    return a + b\n```"),
    ))
    .await;
    let openai = OpenAi::new(&format!("http://{model}/v1"), "m", None, 256).expect("a healer");
    let server = serve(router(std::sync::Arc::new(ServerState {
        healers: Chain(vec![Box::new(Builtin), Box::new(openai)]),
    })))
    .await;
    let answer: Value = support::http::client()
        .post(format!("http://{server}/api/heal"))
        .json(&json!({
            "project_id": "calc", "cycle": 3,
            "failed_files": {
                "logic.py": "def calculate(a, b):\n    return a - b\n",
                "test_logic.py": "from logic import calculate\n\n\ndef test_add():\n    assert calculate(2, 3) == 5\n"
            },
            "pytest_errors": {"exit_code": 1, "error_count": 1, "error_summary": "1 failed", "stderr": "",
                "stdout": "=================================== FAILURES ===================================\n___________________________________ test_add ___________________________________\n\n    def test_add():\n>       assert calculate(2, 3) == 5\nE       AssertionError: assert -1 == 5\n\ntest_logic.py:5: AssertionError\n=========================== short test summary info ============================\nFAILED test_logic.py::test_add - AssertionError: assert -1 == 5\n============================== 1 failed in 0.01s ==============================="}
        }))
        .send()
        .await
        .expect("an answer")
        .json()
        .await
        .expect("JSON");
    assert_eq!(answer["status"], "healed", "{answer}");
    assert_eq!(
        answer["modified_files"]["logic.py"],
        "def calculate(a, b):\n    return a + b\n"
    );
}

#[tokio::test]
async fn an_endpoint_that_redirects_is_an_error_and_the_prompt_is_not_sent_on() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    let reached = Arc::new(AtomicUsize::new(0));
    let elsewhere = {
        let reached = Arc::clone(&reached);
        serve(Router::new().route(
            "/v1/chat/completions",
            post(move || {
                reached.fetch_add(1, Ordering::SeqCst);
                async { axum::Json(completion("SUMMARY: x\nFILE: logic.py\n```\nx = 1\n```")) }
            }),
        ))
        .await
    };
    let location = format!("http://{elsewhere}/v1/chat/completions");
    let app = Router::new().route(
        "/v1/chat/completions",
        post(move || {
            let location = location.clone();
            async move { (StatusCode::PERMANENT_REDIRECT, [("location", location)]).into_response() }
        }),
    );
    let response = ask(app).await;
    assert_eq!(response.outcome, HealerOutcome::Error, "{response:?}");
    assert!(response.modified_files.is_empty());
    let reason = response.reason.unwrap_or_default();
    assert!(
        reason.contains("redirects (308 to http://") && reason.contains("configure the final URL"),
        "{reason}"
    );
    assert_eq!(
        reached.load(Ordering::SeqCst),
        0,
        "the prompt was sent on to the other server"
    );
}
