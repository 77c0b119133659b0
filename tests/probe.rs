//! `kubeheal probe` against a real HTTP service on loopback, written for the test: JSON, text, a
//! CSV over 10 KB, binary, a 500 whose body carries secrets, a slow endpoint, required enum and
//! path parameters, a JSON body with required fields. Each envelope is checked, then every one is
//! run through seed 003's own validator; the binary's exit codes are those of the built
//! `kubeheal`.

#[path = "support/mod.rs"]
mod support;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Json;
use axum::extract::{Path, Query};
use axum::http::{HeaderMap, StatusCode, header};
use axum::routing::{get, post};
use kubeheal::probe::{ProbeArgs, ProbeError, probe};
use serde_json::{Value, json};
use support::seed003::assert_seed_envelopes;

const TOKEN: &str = "tok-9f8e7d6c5b4a39281706";

/// The service: each route answers as its name says. `calls` counts the requests it got.
async fn service(calls: Arc<Mutex<Vec<String>>>) -> String {
    let seen = calls.clone();
    let app = axum::Router::new()
        .route("/hello", get(|| async { ([(header::CONTENT_TYPE, "text/plain; charset=utf-8")], "hello, probe\n") }))
        .route(
            "/report.csv",
            get(|| async {
                let mut csv = String::from("id,name,price\n");
                for i in 0..1000 {
                    csv.push_str(&format!("{i},item number {i},{}.99\n", i % 50));
                }
                ([(header::CONTENT_TYPE, "text/csv")], csv)
            }),
        )
        .route("/logo.png", get(|| async { ([(header::CONTENT_TYPE, "image/png")], vec![0x89u8, b'P', b'N', b'G', 0, 1, 2, 255]) }))
        .route(
            "/crash",
            get(|headers: HeaderMap| async move {
                let auth = headers.get(header::AUTHORIZATION).and_then(|v| v.to_str().ok()).unwrap_or("").to_owned();
                (
                    StatusCode::INTERNAL_SERVER_ERROR,
                    [(header::CONTENT_TYPE, "text/plain")],
                    format!(
                        "Traceback (most recent call last):\n  File \"app.py\", line 12, in crash\n    connect(password=\"hunter2-db-pass\")\nKeyError: 'resolution' (request had {auth})\n"
                    ),
                )
            }),
        )
        .route("/openapi.json", get(|| async { Json(document()) }))
        .route("/here", get(|| async { axum::response::Redirect::temporary("/hello") }))
        .route("/away", get(|| async { axum::response::Redirect::temporary("http://localhost:1/hello") }))
        .route(
            "/slow",
            get(|| async {
                tokio::time::sleep(Duration::from_secs(10)).await;
                "too late"
            }),
        )
        .route(
            "/items/{id}",
            get(|Path(id): Path<String>, Query(query): Query<std::collections::HashMap<String, String>>| async move {
                let Ok(id) = id.parse::<u32>() else {
                    return (StatusCode::UNPROCESSABLE_ENTITY, Json(json!({"detail": "id must be an integer"})));
                };
                match query.get("sort").map(String::as_str) {
                    Some(sort @ ("asc" | "desc")) => (StatusCode::OK, Json(json!({"id": id, "sort": sort, "api_key": "abcd-1234-efgh-5678"}))),
                    _ => (StatusCode::UNPROCESSABLE_ENTITY, Json(json!({"detail": "sort must be asc or desc"}))),
                }
            }),
        )
        .route(
            "/orders",
            post(|body: Json<Value>| async move {
                let ok = body["item"].is_string()
                    && body["quantity"].as_u64().is_some_and(|q| q >= 1)
                    && matches!(body["kind"].as_str(), Some("pickup" | "delivery"));
                if ok {
                    (StatusCode::CREATED, Json(json!({"accepted": body.0})))
                } else {
                    (StatusCode::UNPROCESSABLE_ENTITY, Json(json!({"detail": "missing fields", "got": body.0})))
                }
            }),
        )
        .layer(axum::middleware::from_fn(move |request: axum::extract::Request, next: axum::middleware::Next| {
            let seen = seen.clone();
            async move {
                seen.lock().expect("calls").push(format!("{} {}", request.method(), request.uri()));
                next.run(request).await
            }
        }));
    format!("http://{}", support::http::serve(app).await)
}

fn document() -> Value {
    json!({
        "openapi": "3.0.3",
        "info": {"title": "Shop", "version": "1.0.0"},
        "paths": {
            "/hello": {"get": {"summary": "text"}},
            "/report.csv": {"get": {"summary": "a CSV over 10 KB"}},
            "/logo.png": {"get": {"summary": "binary"}},
            "/crash": {"get": {"summary": "a 500 with secrets"}},
            "/slow": {"get": {"summary": "slower than the timeout"}},
            "/items/{id}": {"get": {"parameters": [
                {"name": "id", "in": "path", "required": true, "schema": {"type": "integer", "minimum": 1}},
                {"name": "sort", "in": "query", "required": true, "schema": {"$ref": "#/components/schemas/Sort"}}
            ]}},
            "/orders": {"post": {"requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Order"}}}}}}
        },
        "components": {"schemas": {
            "Sort": {"type": "string", "enum": ["asc", "desc"]},
            "Order": {"type": "object", "required": ["item", "quantity", "kind"], "properties": {
                "item": {"type": "string"},
                "quantity": {"type": "integer", "minimum": 1},
                "kind": {"type": "string", "enum": ["pickup", "delivery"]},
                "note": {"type": "string"}
            }}
        }}
    })
}

fn write(dir: &std::path::Path, name: &str, value: &Value) -> String {
    let path = dir.join(name);
    std::fs::write(&path, value.to_string()).expect("write the document");
    path.display().to_string()
}

fn args(document: &str, base: &str) -> ProbeArgs {
    ProbeArgs {
        document: document.to_owned(),
        base_url: base.to_owned(),
        endpoints: Vec::new(),
        timeout: 1.0,
        headers: vec![format!("Authorization: Bearer {TOKEN}")],
        report_to: None,
        contract_fqn: None,
        report_token: None,
        wait_ready: None,
        after: None,
        output: None,
    }
}

#[tokio::test]
async fn every_endpoint_gets_the_right_envelope_and_all_pass_seed_003s_validator() {
    let calls = Arc::new(Mutex::new(Vec::new()));
    let base = service(calls.clone()).await;
    let dir = tempfile::tempdir().expect("a folder");
    let doc = write(dir.path(), "openapi.json", &document());
    let report = probe(&args(&doc, &base)).await.expect("the probe runs");
    let by_endpoint = |id: &str| {
        report
            .envelopes
            .iter()
            .find(|e| e.endpoint.as_deref() == Some(id))
            .unwrap_or_else(|| panic!("no envelope for {id}"))
            .seed_json()
    };
    assert_eq!(report.envelopes.len(), 7);
    assert!(!report.all_succeeded());

    let hello = by_endpoint("GET /hello");
    assert_eq!(
        (hello["status"].clone(), hello["http_status"].clone()),
        (json!("success"), json!(200))
    );
    assert_eq!(hello["content_type"], "text/plain");
    assert_eq!(hello["text_preview"], "hello, probe\n");
    assert!(hello.get("json").is_none());

    let csv = by_endpoint("GET /report.csv");
    assert_eq!(csv["content_type"], "text/csv");
    let preview = csv["text_preview"].as_str().expect("a preview");
    assert_eq!(preview.len(), 10 * 1024, "the first 10 KB of a longer CSV");
    assert!(preview.starts_with("id,name,price\n0,item number 0,0.99\n"));

    let png = by_endpoint("GET /logo.png");
    assert_eq!(png["content_type"], "image/png");
    assert!(
        png.get("json").is_none() && png.get("text_preview").is_none(),
        "{png:#}"
    );

    let crash = by_endpoint("GET /crash");
    assert_eq!(
        (crash["status"].clone(), crash["http_status"].clone()),
        (json!("error"), json!(500))
    );
    assert_eq!(crash["error_class"], "RUNTIME_ERROR");
    let body = crash["text_preview"].as_str().expect("the body");
    assert!(body.contains("KeyError: 'resolution'"), "{body}");
    assert!(
        !crash.to_string().contains(TOKEN),
        "the header's token is redacted: {crash:#}"
    );
    assert!(
        !crash.to_string().contains("hunter2-db-pass"),
        "the password is redacted: {crash:#}"
    );
    assert_eq!(crash["redactions_applied"], true);

    let slow = by_endpoint("GET /slow");
    assert_eq!(slow["status"], "timeout");
    assert_eq!(slow["http_status"], 504);
    assert_eq!(slow["error_class"], "TIMEOUT");
    assert!(
        slow["duration_ms"].as_u64().expect("ms") < 5000,
        "stopped at the 1 s timeout: {slow:#}"
    );

    let item = by_endpoint("GET /items/{id}");
    assert_eq!(item["status"], "success", "{item:#}");
    assert_eq!(item["json"]["id"], 1, "the path parameter's minimum");
    assert_eq!(item["json"]["sort"], "asc", "the enum's first value, through a $ref");
    assert_eq!(
        item["json"]["api_key"], "[REDACTED:SECRET]",
        "a value named as a key is redacted"
    );
    assert_eq!(item["redactions_applied"], true);

    let order = by_endpoint("POST /orders");
    assert_eq!(
        (order["status"].clone(), order["http_status"].clone()),
        (json!("success"), json!(201)),
        "{order:#}"
    );
    assert_eq!(
        order["json"]["accepted"],
        json!({"item": "string", "quantity": 1, "kind": "pickup"})
    );

    assert!(
        calls
            .lock()
            .expect("calls")
            .iter()
            .any(|c| c == "GET /items/1?sort=asc"),
        "{:?}",
        calls.lock().expect("calls")
    );
    let printed: Vec<Value> = report.seed_json().as_array().expect("an array").clone();
    assert_seed_envelopes(&printed);
}

#[tokio::test]
async fn an_unknown_endpoint_gets_endpoint_not_found_and_no_call() {
    let calls = Arc::new(Mutex::new(Vec::new()));
    let base = service(calls.clone()).await;
    // The document from a URL this time: the service's own.
    let mut args = args(&format!("{base}/openapi.json"), &base);
    args.endpoints = vec!["get /nowhere".into(), "GET /hello".into()];
    let report = probe(&args).await.expect("the probe runs");
    let missing = report.envelopes[0].seed_json();
    assert_eq!(missing["endpoint"], "GET /nowhere");
    assert_eq!(missing["error_class"], "ENDPOINT_NOT_FOUND");
    assert_eq!(missing["http_status"], 404);
    assert!(
        missing["suggested_fix"].as_str().expect("a fix").contains("GET /hello"),
        "{missing:#}"
    );
    assert_eq!(report.envelopes[1].endpoint.as_deref(), Some("GET /hello"));
    assert_eq!(
        *calls.lock().expect("calls"),
        ["GET /openapi.json", "GET /hello"],
        "the document, then only the known endpoint"
    );
    assert_seed_envelopes(&report.seed_json().as_array().expect("an array").clone());
}

#[tokio::test]
async fn a_swagger_2_document_is_refused_with_what_to_do() {
    let dir = tempfile::tempdir().expect("a folder");
    let doc = write(
        dir.path(),
        "swagger.json",
        &json!({"swagger": "2.0", "info": {"title": "Old", "version": "1"}, "paths": {"/a": {"get": {}}}}),
    );
    let err = probe(&args(&doc, "http://127.0.0.1:9")).await.expect_err("refused");
    assert!(matches!(err, ProbeError::Document(_)));
    let text = err.to_string();
    assert!(
        text.contains("is a Swagger 2.0 document") && text.contains("OpenAPI 3.x"),
        "{text}"
    );
}

#[tokio::test]
async fn failed_calls_are_reported_to_the_ingest_endpoint_as_seed_004_runtime_errors() {
    let base = service(Arc::new(Mutex::new(Vec::new()))).await;
    let posted = Arc::new(Mutex::new(Vec::<(Option<String>, axum::body::Bytes)>::new()));
    let record = posted.clone();
    let ingest = axum::Router::new().route(
        "/healer/ingest",
        post(move |headers: HeaderMap, body: axum::body::Bytes| {
            let record = record.clone();
            async move {
                let authorization = headers
                    .get("authorization")
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_owned);
                record.lock().expect("posted").push((authorization, body));
                Json(json!({"ticket_id": "t-1", "status": "queued"}))
            }
        }),
    );
    let ingest = format!("http://{}/healer/ingest", support::http::serve(ingest).await);
    let dir = tempfile::tempdir().expect("a folder");
    let doc = write(dir.path(), "openapi.json", &document());
    let mut args = args(&doc, &base);
    args.endpoints = vec!["GET /hello".into(), "GET /crash".into()];
    args.report_to = Some(ingest);
    args.contract_fqn = Some("entity/demo/greeting".into());
    args.report_token = Some("ingest-token-4242".into());
    let report = probe(&args).await.expect("the probe runs");
    assert!(report.report_errors.is_empty(), "{:?}", report.report_errors);
    let posted = posted.lock().expect("posted").clone();
    assert_eq!(posted.len(), 1, "only the failed call: {posted:#?}");
    let (authorization, body) = &posted[0];
    assert_eq!(authorization.as_deref(), Some("Bearer ingest-token-4242"));
    // kubeheal's own ingest (the operator's /healer/ingest, `kubeheal ticket ingest`) takes it.
    let spec = kubeheal::core::ticket_api::ingest_spec(body).expect("kubeheal's ingest accepts the report");
    assert_eq!(spec.target.contract_fqn.as_deref(), Some("entity/demo/greeting"));
    let ticket: Value = serde_json::from_slice(body).expect("JSON");
    let ticket = &ticket;
    assert_eq!(ticket["source"], "runtime");
    assert_eq!(ticket["context"]["status_code"], 500);
    assert_eq!(ticket["context"]["method"], "GET");
    assert_eq!(ticket["context"]["request_path"], "/crash");
    assert!(ticket["error"].as_str().expect("an error").contains("answered 500"));
    let trace = ticket["stacktrace"].as_str().expect("a trace");
    assert!(
        trace.contains("KeyError") && !trace.contains(TOKEN) && !trace.contains("hunter2-db-pass"),
        "{trace}"
    );
}

#[tokio::test]
async fn redirects_are_followed_on_the_same_host_only() {
    let base = service(Arc::new(Mutex::new(Vec::new()))).await;
    let dir = tempfile::tempdir().expect("a folder");
    let doc = write(
        dir.path(),
        "openapi.json",
        &json!({"openapi": "3.1.0", "paths": {"/here": {"get": {}}, "/away": {"get": {}}}}),
    );
    let report = probe(&args(&doc, &base)).await.expect("the probe runs");
    let away = report.envelopes[0].seed_json();
    assert_eq!(away["endpoint"], "GET /away");
    assert_eq!(
        (away["http_status"].clone(), away["error_class"].clone()),
        (json!(307), json!("NETWORK_ERROR"))
    );
    assert!(
        away["error_message"]
            .as_str()
            .expect("a message")
            .contains("http://localhost:1/hello"),
        "{away:#}"
    );
    let here = report.envelopes[1].seed_json();
    assert_eq!(
        (here["status"].clone(), here["text_preview"].clone()),
        (json!("success"), json!("hello, probe\n"))
    );
    assert_seed_envelopes(&report.seed_json().as_array().expect("an array").clone());
}

#[tokio::test]
async fn a_service_that_is_down_and_inputs_that_cannot_be_sent_give_their_envelopes() {
    // A port nothing listens on: bound, then released.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let dir = tempfile::tempdir().expect("a folder");
    let doc = write(
        dir.path(),
        "openapi.json",
        &json!({"openapi": "3.0.3", "paths": {
            "/a": {"get": {}},
            "/session": {"get": {"parameters": [{"name": "sid", "in": "cookie", "required": true, "schema": {"type": "string"}}]}}
        }}),
    );
    let report = probe(&args(&doc, &format!("http://127.0.0.1:{port}")))
        .await
        .expect("the probe runs");
    let down = report.envelopes[0].seed_json();
    assert_eq!(
        (down["error_class"].clone(), down["http_status"].clone()),
        (json!("NETWORK_ERROR"), json!(502)),
        "{down:#}"
    );
    assert!(!down.to_string().contains(TOKEN));
    let cookie = report.envelopes[1].seed_json();
    assert_eq!(
        (cookie["error_class"].clone(), cookie["http_status"].clone()),
        (json!("VALIDATION_ERROR"), json!(400))
    );
    assert!(
        cookie["error_message"]
            .as_str()
            .expect("a message")
            .contains("no call was made"),
        "{cookie:#}"
    );
    assert_seed_envelopes(&report.seed_json().as_array().expect("an array").clone());
}

/// Runs the built binary; returns its exit code and stdout.
async fn kubeheal(args: &[&str]) -> (i32, String, String) {
    let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_kubeheal"))
        .args(args)
        .output()
        .await
        .expect("kubeheal runs");
    (
        out.status.code().expect("an exit code"),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[tokio::test]
async fn the_binary_exits_0_when_all_succeed_1_when_any_fails_and_2_for_bad_input() {
    let base = service(Arc::new(Mutex::new(Vec::new()))).await;
    let dir = tempfile::tempdir().expect("a folder");
    let doc = write(dir.path(), "openapi.json", &document());
    let common = ["probe", "--openapi", &doc, "--base-url", &base, "--timeout", "1"];

    let (code, stdout, stderr) =
        kubeheal(&[&common[..], &["--endpoint", "GET /hello", "--endpoint", "POST /orders"]].concat()).await;
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    let printed: Vec<Value> = serde_json::from_str(&stdout).expect("a JSON array");
    assert_eq!(printed.len(), 2);
    assert_seed_envelopes(&printed);

    let (code, stdout, stderr) =
        kubeheal(&[&common[..], &["--header", &format!("Authorization: Bearer {TOKEN}")]].concat()).await;
    assert_eq!(code, 1, "{stdout}\n{stderr}");
    assert!(!stdout.contains(TOKEN) && !stderr.contains(TOKEN));
    let printed: Vec<Value> = serde_json::from_str(&stdout).expect("a JSON array");
    assert_eq!(printed.len(), 7);
    assert_seed_envelopes(&printed);

    let swagger = write(
        dir.path(),
        "swagger.json",
        &json!({"swagger": "2.0", "paths": {"/a": {"get": {}}}}),
    );
    let (code, stdout, stderr) = kubeheal(&["probe", "--openapi", &swagger, "--base-url", &base]).await;
    assert_eq!(code, 2, "{stdout}\n{stderr}");
    assert!(stdout.is_empty() && stderr.contains("Swagger 2.0"), "{stderr}");

    let broken = dir.path().join("broken.json");
    std::fs::write(&broken, "{\"openapi\": \"3.0.0\", \"paths\": ").expect("write");
    let (code, _, stderr) = kubeheal(&["probe", "--openapi", &broken.display().to_string(), "--base-url", &base]).await;
    assert_eq!(code, 2);
    assert!(stderr.contains("neither JSON nor YAML"), "{stderr}");

    let (code, _, stderr) = kubeheal(&[&common[..], &["--endpoint", "hello"]].concat()).await;
    assert_eq!(code, 2);
    assert!(stderr.contains("\"METHOD /path\""), "{stderr}");

    // A report needs the contract it is filed under, in a contract FQN's shape.
    let ingest = "http://127.0.0.1:9/healer/ingest";
    let (code, _, stderr) = kubeheal(&[&common[..], &["--report-to", ingest]].concat()).await;
    assert_eq!(code, 2);
    assert!(stderr.contains("--contract-fqn"), "{stderr}");
    let (code, _, stderr) =
        kubeheal(&[&common[..], &["--report-to", ingest, "--contract-fqn", "ticket"]].concat()).await;
    assert_eq!(code, 2);
    assert!(stderr.contains("entity/helpdesk/ticket"), "{stderr}");

    let (code, _, stderr) = kubeheal(&["probe", "--openapi", &doc, "--base-url", "localhost:8000"]).await;
    assert_eq!(code, 2);
    assert!(
        stderr.contains("--base-url") && stderr.contains("http(s) URL"),
        "{stderr}"
    );
}
