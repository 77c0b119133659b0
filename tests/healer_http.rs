//! The Code Healer API over real HTTP on loopback: the reference server answers seed 000's
//! example with seed 000's example response, and the client survives every misbehaving healer —
//! slow, failing, lying, huge, or reaching outside the repository — with a clear outcome and no
//! files to write.

#[path = "support/mod.rs"]
mod support;

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

use axum::Router;
use axum::http::{HeaderMap, StatusCode};
use axum::response::IntoResponse;
use axum::routing::post;
use kubeheal::api::heal_run::HealerOutcome;
use kubeheal::healer::Chain;
use kubeheal::healer::builtin::Builtin;
use kubeheal::healer::code_healer_api::CodeHealerApi;
use kubeheal::healer::server::{ServerConfig, ServerState, serve_on};
use kubeheal::healer::validate::Limits;
use kubeheal::healer::{ErrorContext, HealFuture, HealRequest, HealResponse, Healer};
use serde_json::{Value, json};
use support::http::{read_until_closed, serve, trickle};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

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
    start(ServerConfig::default(), Chain(vec![Box::new(Builtin)])).await
}

/// The reference server as `kubeheal healer serve` runs it (its own accept loop, connection
/// settings and limits), on a free loopback port for the rest of the test.
async fn start(config: ServerConfig, healers: Chain) -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a loopback port");
    let addr = listener.local_addr().expect("an address");
    let state = Arc::new(ServerState { healers });
    tokio::spawn(async move {
        serve_on(listener, state, config, std::future::pending())
            .await
            .expect("the server runs")
    });
    addr
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

#[tokio::test]
async fn a_healer_url_that_redirects_is_an_error_and_the_files_are_not_sent_on() {
    let reached = Arc::new(AtomicUsize::new(0));
    let elsewhere = {
        let reached = Arc::clone(&reached);
        serve(Router::new().route(
            "/api/heal",
            post(move |body: String| {
                reached.fetch_add(1, Ordering::SeqCst);
                async move {
                    axum::Json(json!({"status": "healed", "modified_files": {"logic.py": body.len().to_string()}}))
                }
            }),
        ))
        .await
    };
    let location = format!("http://{elsewhere}/api/heal");
    let redirecting = Router::new().route(
        "/api/heal",
        post(move || {
            let location = location.clone();
            async move { (StatusCode::TEMPORARY_REDIRECT, [("location", location)]).into_response() }
        }),
    );
    let response = ask(redirecting, Duration::from_secs(5)).await;
    assert_failed(&response, HealerOutcome::Error, "redirects (307 to http://");
    assert_failed(&response, HealerOutcome::Error, "configure the final URL");
    assert_eq!(
        reached.load(Ordering::SeqCst),
        0,
        "the request was sent on to the other server"
    );
}

// The server's own limits, against clients that misbehave on purpose. Timings are generous
// bounds on a shared 2-core machine; what is checked is what happens, and in which order.

/// A healer that holds its (blocking) thread until the test lets it go, as long CPU work does:
/// `entered` says it started; `done` says it stopped holding.
struct Gate {
    entered: tokio::sync::mpsc::UnboundedSender<()>,
    release: Mutex<mpsc::Receiver<()>>,
    done: Arc<AtomicBool>,
}

struct GateHandle {
    entered: tokio::sync::mpsc::UnboundedReceiver<()>,
    release: mpsc::Sender<()>,
    done: Arc<AtomicBool>,
}

fn gate() -> (Gate, GateHandle) {
    let (entered_tx, entered) = tokio::sync::mpsc::unbounded_channel();
    let (release, release_rx) = mpsc::channel();
    let done = Arc::new(AtomicBool::new(false));
    (
        Gate {
            entered: entered_tx,
            release: Mutex::new(release_rx),
            done: Arc::clone(&done),
        },
        GateHandle { entered, release, done },
    )
}

impl Healer for Gate {
    fn name(&self) -> &'static str {
        "gate"
    }

    fn heal<'a>(&'a self, _request: &'a HealRequest) -> HealFuture<'a> {
        Box::pin(async move {
            let _ = self.entered.send(());
            // Blocks the thread it runs on; never for ever, so that a server that runs it on
            // an async worker fails the test instead of hanging it.
            let _ = self
                .release
                .lock()
                .expect("the gate's lock")
                .recv_timeout(Duration::from_secs(30));
            self.done.store(true, Ordering::SeqCst);
            HealResponse::failed(HealerOutcome::Error, "the gate fixes nothing", Duration::ZERO)
        })
    }
}

async fn healthz(addr: SocketAddr) -> Value {
    let answer = tokio::time::timeout(
        Duration::from_secs(15),
        support::http::client().get(format!("http://{addr}/healthz")).send(),
    )
    .await
    .expect("/healthz answers within 15 s")
    .expect("/healthz answers");
    assert_eq!(answer.status(), 200);
    answer.json().await.expect("JSON")
}

#[tokio::test]
async fn a_client_that_sends_its_headers_too_slowly_is_disconnected_while_healthz_answers() {
    let config = ServerConfig {
        header_read_timeout: Duration::from_secs(2),
        ..ServerConfig::default()
    };
    let addr = start(config, Chain(vec![Box::new(Builtin)])).await;
    // 100 bytes of head at one byte per 200 ms would take 20 s.
    let head = format!(
        "GET /healthz HTTP/1.1\r\nHost: healer\r\nX-Slow: {}\r\n\r\n",
        "a".repeat(51)
    );
    assert_eq!(head.len(), 100);
    let (mut reader, writer) = TcpStream::connect(addr).await.expect("a connection").into_split();
    let started = Instant::now();
    let sender = trickle(writer, head.into_bytes(), Duration::from_millis(200));

    assert_eq!(healthz(addr).await["status"], "ok");

    let closed = read_until_closed(&mut reader, Duration::from_secs(12)).await;
    let waited = started.elapsed();
    sender.abort();
    let answer = closed.unwrap_or_else(|| panic!("the slow client was still connected after {waited:?}"));
    assert!(
        !String::from_utf8_lossy(&answer).contains("200 OK"),
        "the slow request was served: {}",
        String::from_utf8_lossy(&answer)
    );
}

#[tokio::test]
async fn idle_connections_past_the_connection_limit_are_closed_and_healthz_still_answers() {
    // 300 connections that never send a byte, more than the default limit of 256: the first
    // 256 are served and closed by the header read timeout, then the rest, then /healthz's.
    let config = ServerConfig {
        header_read_timeout: Duration::from_secs(1),
        ..ServerConfig::default()
    };
    assert!(config.max_connections < 300);
    let addr = start(config, Chain(vec![Box::new(Builtin)])).await;
    let mut idle = Vec::new();
    for _ in 0..300 {
        let (reader, writer) = TcpStream::connect(addr).await.expect("a connection").into_split();
        idle.push((reader, writer));
    }

    assert_eq!(healthz(addr).await["status"], "ok");

    let deadline = tokio::time::Instant::now() + Duration::from_secs(15);
    for (i, (reader, _writer)) in idle.iter_mut().enumerate() {
        let left = deadline.saturating_duration_since(tokio::time::Instant::now());
        let got = read_until_closed(reader, left).await;
        assert!(got.is_some(), "idle connection {i} is still open after 15 s");
    }
}

#[tokio::test]
async fn a_connection_past_the_limit_waits_until_another_one_closes() {
    let config = ServerConfig {
        max_connections: 4,
        header_read_timeout: Duration::from_secs(60),
        ..ServerConfig::default()
    };
    let addr = start(config, Chain(vec![Box::new(Builtin)])).await;
    let mut idle = Vec::new();
    for _ in 0..4 {
        idle.push(TcpStream::connect(addr).await.expect("a connection"));
    }
    let (mut reader, mut writer) = TcpStream::connect(addr).await.expect("a fifth connection").into_split();
    writer
        .write_all(b"GET /healthz HTTP/1.1\r\nHost: healer\r\nConnection: close\r\n\r\n")
        .await
        .expect("the request is written");
    let mut first = [0u8; 1];
    let early = tokio::time::timeout(Duration::from_millis(700), reader.read(&mut first)).await;
    assert!(early.is_err(), "the fifth connection was served while four were open");

    drop(idle.pop());
    let answer = read_until_closed(&mut reader, Duration::from_secs(15))
        .await
        .expect("the fifth connection is served once one of the four closes");
    let answer = String::from_utf8_lossy(&answer);
    assert!(
        answer.contains("200 OK") && answer.contains("\"status\":\"ok\""),
        "{answer}"
    );
}

#[tokio::test]
async fn a_body_that_does_not_arrive_within_the_body_timeout_is_a_408_seed_000_error() {
    let config = ServerConfig {
        body_read_timeout: Duration::from_secs(1),
        ..ServerConfig::default()
    };
    let addr = start(config, Chain(vec![Box::new(Builtin)])).await;
    let (mut reader, mut writer) = TcpStream::connect(addr).await.expect("a connection").into_split();
    writer
        .write_all(
            b"POST /api/heal HTTP/1.1\r\nHost: healer\r\nContent-Type: application/json\r\nContent-Length: 200\r\n\r\n",
        )
        .await
        .expect("the head is written");
    // 200 bytes at one per 100 ms: 20 s, each byte well within any idle timeout.
    let sender = trickle(writer, vec![b' '; 200], Duration::from_millis(100));
    let answer = read_until_closed(&mut reader, Duration::from_secs(12))
        .await
        .expect("the server answers and closes before the body ends");
    sender.abort();
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(
        answer.contains(r#""status":"error""#) && answer.contains("did not arrive in time"),
        "{answer}"
    );
}

/// Every answer has seed 000's error body, a wrong path or method too (they were empty).
#[tokio::test]
async fn an_unknown_path_or_method_is_a_seed_000_error_that_names_the_api() {
    let addr = reference_server().await;
    let client = kubeheal::healer::http_client().expect("a client");
    for (method, path, status) in [
        (reqwest::Method::GET, "/api/heal", 405),
        (reqwest::Method::POST, "/heal", 404),
        (reqwest::Method::GET, "/", 404),
    ] {
        let answer = client
            .request(method.clone(), format!("http://{addr}{path}"))
            .send()
            .await
            .expect("an answer");
        assert_eq!(answer.status().as_u16(), status, "{method} {path}");
        if status == 405 {
            assert_eq!(answer.headers()["allow"], "POST");
        }
        let body: serde_json::Value = answer.json().await.expect("a JSON body");
        assert_eq!(body["status"], "error", "{body}");
        assert!(
            body["message"]
                .as_str()
                .is_some_and(|m| m.contains("POST /api/heal") && m.contains(path)),
            "{body}"
        );
    }
}

#[tokio::test]
async fn a_body_over_16_mib_is_a_413_seed_000_error() {
    let addr = reference_server().await;
    let (mut reader, mut writer) = TcpStream::connect(addr).await.expect("a connection").into_split();
    let size = 17 * 1024 * 1024;
    let sender = tokio::spawn(async move {
        let head = format!(
            "POST /api/heal HTTP/1.1\r\nHost: healer\r\nContent-Type: application/json\r\nContent-Length: {size}\r\n\r\n"
        );
        let _ = writer.write_all(head.as_bytes()).await;
        let _ = writer.write_all(&vec![b' '; size]).await;
        writer
    });
    let answer = read_until_closed(&mut reader, Duration::from_secs(30))
        .await
        .expect("the server answers and closes");
    drop(sender.await);
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 413"), "{answer}");
    assert!(
        answer.contains(r#""status":"error""#) && answer.contains("larger than 16 MiB"),
        "{answer}"
    );
}

/// Seed 000's example with `stdout` grown to about `size` bytes of pytest output.
fn big_request(size: usize) -> Value {
    let mut body = seed_example_request();
    let failure = "test_logic.py:12: in test_add\nE   AssertionError: assert 3 == 4\nFAILED test_logic.py::test_add - AssertionError: assert 3 == 4\n";
    body["pytest_errors"]["stdout"] = json!(failure.repeat(size / failure.len()));
    body
}

#[tokio::test]
async fn a_15_mb_heal_request_in_flight_does_not_hold_up_healthz() {
    // The test's runtime has one thread: a server that parsed and fixed on its async workers
    // could not answer /healthz until the gate (after the parsing, in the same task) let go.
    let (gate, mut handle) = gate();
    let addr = start(ServerConfig::default(), Chain(vec![Box::new(gate), Box::new(Builtin)])).await;
    let body = big_request(15 * 1024 * 1024);
    let big = tokio::spawn(async move {
        let answer = support::http::client()
            .post(format!("http://{addr}/api/heal"))
            .json(&body)
            .send()
            .await
            .expect("the big request is answered");
        (answer.status(), answer.json::<Value>().await.expect("JSON"))
    });
    tokio::time::timeout(Duration::from_secs(300), handle.entered.recv())
        .await
        .expect("the big request is parsed and reaches the healers")
        .expect("the gate is there");

    assert_eq!(healthz(addr).await["status"], "ok");
    assert!(
        !handle.done.load(Ordering::SeqCst) && !big.is_finished(),
        "/healthz answered only after the big request's work"
    );

    handle.release.send(()).expect("the gate is waiting");
    let (status, answer) = big.await.expect("the big request's task");
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["status"], "healed", "{answer}");
}

#[tokio::test]
async fn a_heal_request_past_the_in_flight_limit_gets_a_quick_503_seed_000_error() {
    let (gate, mut handle) = gate();
    let config = ServerConfig {
        max_heal_requests: 1,
        ..ServerConfig::default()
    };
    let addr = start(config, Chain(vec![Box::new(gate), Box::new(Builtin)])).await;
    let first = tokio::spawn(async move {
        support::http::client()
            .post(format!("http://{addr}/api/heal"))
            .json(&seed_example_request())
            .send()
            .await
            .expect("the first request is answered")
            .status()
    });
    tokio::time::timeout(Duration::from_secs(30), handle.entered.recv())
        .await
        .expect("the first request reaches the healers")
        .expect("the gate is there");

    let second = tokio::time::timeout(
        Duration::from_secs(10),
        support::http::client()
            .post(format!("http://{addr}/api/heal"))
            .json(&seed_example_request())
            .send(),
    )
    .await
    .expect("the second request is answered at once, not queued")
    .expect("an answer");
    assert_eq!(second.status(), 503);
    let body: Value = second.json().await.expect("JSON");
    assert_eq!(body["status"], "error", "{body}");
    assert!(body["message"].as_str().unwrap_or_default().contains("busy"), "{body}");
    assert_eq!(healthz(addr).await["status"], "ok");
    assert!(
        !handle.done.load(Ordering::SeqCst),
        "the first request was over before the 503"
    );

    handle.release.send(()).expect("the gate is waiting");
    assert_eq!(first.await.expect("the first request's task"), 200);
}
