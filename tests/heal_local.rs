//! `kubeheal heal` end to end on the examples a newcomer runs: the real local executor (pytest),
//! the real parser, the built-in fixers (or an OpenAI-compatible server on loopback), the gate, and
//! commits on a real heal branch.

#[path = "support/mod.rs"]
mod support;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use axum::Router;
use axum::routing::post;
use kubeheal::api::heal_run::{HealPolicy, HealRunReason};
use kubeheal::api::shared::{HealerSpec, OpenAiHealer};
use kubeheal::local::{HealOptions, HealSummary, heal};
use serde_json::json;

/// A copy of `examples/<name>` in a temporary folder, so the run's state stays out of the repo.
fn example(name: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("a temp dir");
    let target = dir.path().join(name);
    std::fs::create_dir_all(&target).expect("mkdir");
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples").join(name);
    for entry in std::fs::read_dir(source).expect("the example exists").flatten() {
        if entry.path().is_file() {
            std::fs::copy(entry.path(), target.join(entry.file_name())).expect("copy");
        }
    }
    (dir, target)
}

/// The built-in fixers alone: no service is named.
fn builtin() -> HealerSpec {
    HealerSpec::default()
}

/// The built-in fixers, then the OpenAI-compatible model served at `addr`.
fn model(addr: std::net::SocketAddr) -> HealerSpec {
    HealerSpec {
        open_ai: Some(OpenAiHealer {
            base_url: format!("http://{addr}/v1"),
            model: "m".into(),
            secret_ref: None,
            max_tokens: 1024,
        }),
        ..HealerSpec::default()
    }
}

async fn run(dir: &Path, healer: HealerSpec, max_cycles: u32) -> HealSummary {
    let options = HealOptions {
        dir: dir.to_owned(),
        command: None,
        env: Vec::new(),
        max_cycles,
        timeout: Duration::from_secs(120),
        policy: HealPolicy::default(),
        healer,
        credentials: Default::default(),
        verify: None,
    };
    heal(&options, &mut |line| eprintln!("{line}"), std::future::pending())
        .await
        .expect("the loop runs")
}

fn git(repo: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(args)
        .current_dir(repo)
        .output()
        .expect("git runs");
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

#[tokio::test]
async fn the_syntax_example_is_healed_with_one_commit_on_the_heal_branch() {
    let (_keep, dir) = example("python-syntax");
    let summary = run(&dir, builtin(), 5).await;
    assert!(summary.healed(), "{summary:?}");
    assert_eq!(summary.cycles, 1);
    assert_eq!(summary.branch, "kubeheal/python-syntax");
    assert_eq!(
        git(&summary.repo, &["rev-parse", "--abbrev-ref", "HEAD"]),
        "kubeheal/python-syntax"
    );
    let message = git(&summary.repo, &["log", "-1", "--format=%B"]);
    assert!(
        message.starts_with("[AI-AGENT] SYNTAX error in calculator.py line 4 → Fix: add the missing ':'"),
        "{message}"
    );
    assert!(
        message.contains("Kubeheal-Run: python-syntax") && message.contains("Kubeheal-Cycle: 1"),
        "{message}"
    );
    assert!(
        std::fs::read_to_string(summary.repo.join("calculator.py"))
            .expect("read")
            .contains("def add(a, b):\n")
    );
    // The user's own files are untouched: the fix lives on the branch.
    assert!(
        std::fs::read_to_string(dir.join("calculator.py"))
            .expect("read")
            .contains("def add(a, b)\n")
    );
}

#[tokio::test]
async fn kubeheal_heal_tells_the_story_every_driver_tells() {
    let (_keep, dir) = example("python-syntax");
    let summary = run(&dir, builtin(), 5).await;
    assert!(summary.healed(), "{summary:?}");
    let scenario: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/scenarios/healed_in_one_cycle.json"),
        )
        .expect("the scenario"),
    )
    .expect("JSON");
    let expected: Vec<(String, String)> = serde_json::from_value(scenario["events"].clone()).expect("pairs");
    let events: Vec<(String, String)> = std::fs::read_to_string(dir.join(".kubeheal/events.jsonl"))
        .expect("the events are kept")
        .lines()
        .map(|line| {
            let event: serde_json::Value = serde_json::from_str(line).expect("a JSON line");
            (
                event["reason"].as_str().expect("a reason").to_owned(),
                event["phase"].as_str().expect("a phase").to_owned(),
            )
        })
        .collect();
    assert_eq!(events, expected);
}

#[tokio::test]
async fn the_import_example_is_healed() {
    let (_keep, dir) = example("python-import");
    let summary = run(&dir, builtin(), 5).await;
    assert!(summary.healed(), "{summary:?}");
    assert_eq!(summary.fixed_tests, ["test_report.py::test_to_json_sorts_keys"]);
    assert!(summary.diff_stat.contains("1 insertion"), "{}", summary.diff_stat);
}

#[tokio::test]
async fn the_logic_example_needs_an_llm_and_stops_without_one() {
    let (_keep, dir) = example("python-logic");
    let summary = run(&dir, builtin(), 2).await;
    assert!(!summary.healed());
    assert_eq!(summary.reason, HealRunReason::CyclesExhausted, "{summary:?}");
    assert!(summary.commits.is_empty());
    // The work order for people reads as a CodeFixDDS and is a person's own: no sourceRef,
    // which only the operator may set.
    let yaml = std::fs::read_to_string(dir.join(".kubeheal/proposed-fix.yaml")).expect("a proposed fix");
    let order: kubeheal::api::code_fix_dds::CodeFixDDS = serde_yaml_ng::from_str(&yaml).expect("a CodeFixDDS");
    assert!(order.spec.source_ref.is_none(), "{yaml}");
    assert!(order.spec.allowed_paths.iter().any(|p| p.ends_with(".py")), "{yaml}");
}

#[tokio::test]
async fn the_logic_example_is_healed_by_an_openai_compatible_model() {
    let reply = "SUMMARY: subtract the discount\nCONFIDENCE: 0.8\nFILE: pricing.py\n```python\n\"\"\"Discounts for the checkout.\"\"\"\n\n\ndef discounted(price, percent):\n    # A 20 % discount on 100 is 80.\n    return price * (1 - percent / 100)\n```\n";
    let app = Router::new().route(
        "/v1/chat/completions",
        post(move || async move {
            axum::Json(json!({"choices": [{"message": {"role": "assistant", "content": reply}}], "usage": {"total_tokens": 500}}))
        }),
    );
    let addr = support::http::serve(app).await;
    let (_keep, dir) = example("python-logic");
    let summary = run(&dir, model(addr), 3).await;
    assert!(summary.healed(), "{summary:?}");
    let message = git(&summary.repo, &["log", "-1", "--format=%s"]);
    assert!(message.starts_with("[AI-AGENT] LOGIC error in"), "{message}");
}

#[tokio::test]
async fn a_fix_that_makes_passing_tests_fail_is_reverted_and_the_run_stops() {
    // A "healer" that fixes `add` and breaks `double` on the way.
    let reply = "SUMMARY: fix add\nCONFIDENCE: 0.9\nFILE: calc.py\n```\ndef add(a, b):\n    return a + b\n\n\ndef double(x):\n    return x * 3\n```\n";
    let app = Router::new().route(
        "/v1/chat/completions",
        post(move || async move { axum::Json(json!({"choices": [{"message": {"content": reply}}]})) }),
    );
    let addr = support::http::serve(app).await;
    let keep = tempfile::tempdir().expect("a temp dir");
    let dir = keep.path().join("calc");
    std::fs::create_dir_all(&dir).expect("mkdir");
    std::fs::write(
        dir.join("calc.py"),
        "def add(a, b):\n    return a - b\n\n\ndef double(x):\n    return x * 2\n",
    )
    .expect("write");
    std::fs::write(
        dir.join("test_calc.py"),
        "from calc import add, double\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\ndef test_double():\n    assert double(4) == 8\n",
    )
    .expect("write");
    let summary = run(&dir, model(addr), 3).await;
    assert_eq!(summary.reason, HealRunReason::Regressed, "{summary:?}");
    assert_eq!(summary.commits.len(), 2, "the fix and its revert");
    assert!(git(&summary.repo, &["log", "-1", "--format=%s"]).starts_with("Revert the fix of cycle 1"));
    assert!(
        summary.message.contains("test_calc.py::test_double"),
        "{}",
        summary.message
    );
    // The loop ended without a fix: a CodeFixDDS for people, ready for kubectl apply.
    let manifest = std::fs::read_to_string(summary.proposed_fix.expect("a proposal")).expect("the manifest");
    assert!(
        manifest.contains("kind: CodeFixDDS") && manifest.contains("HealRun/calc"),
        "{manifest}"
    );
}

#[tokio::test]
async fn a_fix_for_a_collection_error_that_reveals_other_failures_is_not_a_regression() {
    // The syntax example's fix lets the suite run; a test that never ran before and now fails
    // is not one the fix broke.
    let reply = "SUMMARY: fix\nCONFIDENCE: 0.9\nFILE: calculator.py\n```\n\"\"\"A tiny calculator.\"\"\"\n\n\ndef add(a, b):\n    return a + b\n\n\ndef subtract(a, b):\n    return a + b\n```\n";
    let app = Router::new().route(
        "/v1/chat/completions",
        post(move || async move { axum::Json(json!({"choices": [{"message": {"content": reply}}]})) }),
    );
    let addr = support::http::serve(app).await;
    let (_keep, dir) = example("python-syntax");
    // A syntax error no built-in fixer knows, so that the model's fix is the one committed.
    std::fs::write(
        dir.join("calculator.py"),
        "\"\"\"A tiny calculator.\"\"\"\n\n\ndef add(a, b):\n    return a + * b\n\n\ndef subtract(a, b):\n    return a - b\n",
    )
    .expect("write");
    let options = HealOptions {
        dir: dir.clone(),
        command: None,
        env: Vec::new(),
        max_cycles: 2,
        timeout: Duration::from_secs(120),
        policy: HealPolicy {
            change_window_lines: 10,
            ..HealPolicy::default()
        },
        healer: model(addr),
        credentials: Default::default(),
        verify: None,
    };
    let summary = heal(&options, &mut |line| eprintln!("{line}"), std::future::pending())
        .await
        .expect("the loop runs");
    assert_ne!(summary.reason, HealRunReason::Regressed, "{summary:?}");
    assert_eq!(summary.commits.len(), 1, "the fix stays: {summary:?}");
}

#[tokio::test]
async fn the_healer_gets_the_end_of_stderr_apart_from_the_log() {
    let (url, seen) = support::http::recording_healer().await;
    let keep = tempfile::tempdir().expect("a temp dir");
    let dir = keep.path().join("calc");
    std::fs::create_dir_all(&dir).expect("mkdir");
    std::fs::write(dir.join("calc.py"), "def add(a, b):\n    return a - b\n").expect("write");
    std::fs::write(
        dir.join("test_calc.py"),
        "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n",
    )
    .expect("write");
    let options = HealOptions {
        dir: dir.clone(),
        command: Some("echo 'warning from the build on stderr' >&2; python3 -m pytest -q -p no:cacheprovider".into()),
        env: Vec::new(),
        max_cycles: 1,
        timeout: Duration::from_secs(120),
        policy: HealPolicy::default(),
        healer: HealerSpec {
            code_healer_api: Some(kubeheal::api::shared::CodeHealerApiHealer {
                url: Some(url),
                secret_ref: None,
            }),
            ..HealerSpec::default()
        },
        credentials: Default::default(),
        verify: None,
    };
    let summary = heal(&options, &mut |line| eprintln!("{line}"), std::future::pending())
        .await
        .expect("the loop runs");
    assert!(!summary.healed());
    let requests = seen.lock().expect("the record").clone();
    let request: serde_json::Value =
        serde_json::from_str(requests.first().expect("the service was asked")).expect("JSON");
    let errors = &request["pytest_errors"];
    assert_eq!(
        errors["stderr"].as_str().map(str::trim),
        Some("warning from the build on stderr"),
        "{errors}"
    );
    let stdout = errors["stdout"].as_str().unwrap_or_default();
    assert!(stdout.contains("1 failed"), "the log's tail is stdout: {stdout}");
}

/// A port nothing listens on now.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .expect("a free port")
        .local_addr()
        .expect("its address")
        .port()
}

#[tokio::test]
async fn a_service_whose_endpoint_fails_after_the_tests_pass_is_healed_when_the_fix_makes_it_answer() {
    // The example's tests pass; GET /items/{item_id} answers 500 (a NameError in the handler,
    // printed by wsgiref). Only calling the started service shows it.
    let (_keep, dir) = example("python-service");
    let port = free_port();
    let verify: kubeheal::api::heal_run::Verify = serde_json::from_value(json!({"openapi": {
        "document": "openapi.json",
        "start": format!("PORT={port} python3 app.py"),
        "baseUrl": format!("http://127.0.0.1:{port}"),
        "readyTimeoutSeconds": 20, "callTimeoutSeconds": 10,
    }}))
    .expect("a verify spec");
    let options = HealOptions {
        dir: dir.clone(),
        command: None,
        env: Vec::new(),
        max_cycles: 3,
        timeout: Duration::from_secs(120),
        policy: HealPolicy::default(),
        healer: builtin(),
        credentials: Default::default(),
        verify: Some(verify),
    };
    let summary = heal(&options, &mut |line| eprintln!("{line}"), std::future::pending())
        .await
        .expect("the loop runs");
    assert!(summary.healed(), "{summary:?}");
    assert_eq!(summary.cycles, 1, "{summary:?}");
    assert_eq!(summary.fixed_tests, ["GET /items/{item_id}"], "{summary:?}");
    let fixed = std::fs::read_to_string(summary.repo.join("app.py")).expect("read");
    assert!(fixed.contains("import json\n"), "{fixed}");
    let message = git(&summary.repo, &["log", "-1", "--format=%B"]);
    assert!(
        message.starts_with("[AI-AGENT] IMPORT error in app.py line 25"),
        "{message}"
    );

    // The status says what each execution called, and the baseline's log holds the service's
    // trace and the failed call for the healer and for people.
    let status: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join(".kubeheal/status.json")).expect("the status"))
            .expect("JSON");
    let calls = &status["baseline"]["endpointCalls"];
    assert_eq!(calls[0]["endpoint"], "GET /health");
    assert_eq!(calls[0]["httpStatus"], 200);
    assert_eq!(calls[1]["endpoint"], "GET /items/{item_id}");
    assert_eq!(calls[1]["httpStatus"], 500);
    assert_eq!(status["cycles"][0]["execution"]["endpointCalls"][1]["httpStatus"], 200);
    let key = status["baseline"]["envelope"]["runId"].as_str().expect("a run id");
    let log = std::fs::read_to_string(dir.join(format!(".kubeheal/{key}.log"))).expect("the baseline's log");
    assert!(log.contains("NameError: name 'json' is not defined"), "{log}");
    assert!(log.contains("FAILED GET /items/{item_id}"), "{log}");
    // The service was stopped: nothing answers on its port any more.
    assert!(std::net::TcpStream::connect(("127.0.0.1", port)).is_err());
}
