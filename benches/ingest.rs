//! The `/healer` ingest's throughput on loopback, against a real kube-apiserver + etcd.
//!
//!     cargo bench --bench ingest
//!     KUBEHEAL_BENCH_STORM=20000 KUBEHEAL_BENCH_DISTINCT=4000 cargo bench --bench ingest
//!
//! Starts the test control plane (the cluster tests' harness, `KUBEBUILDER_ASSETS` or
//! `tests/control-plane/build.sh`) and the release `kubeheal operator` serving `/healer` on
//! loopback, then, from 64 concurrent connections of one client:
//!
//! - a **storm**: one error `KUBEHEAL_BENCH_STORM` times (default 10,000): requests/s until the
//!   last answer, how long until the ticket's count is written whole, and the API server's
//!   writes of HealerTickets meanwhile (its own `apiserver_request_total`, before and after);
//! - **distinct** errors (`KUBEHEAL_BENCH_DISTINCT`, default 2,000, each its own ticket):
//!   requests/s, and how long until every ticket exists;
//! - the same storm against a **bare handler** (axum on loopback in this process: read the body,
//!   answer 202 with a fixed JSON), the floor of HTTP on this machine; the ratio is the storm's
//!   rate over the bare handler's.
//!
//! The operator runs with no rate limit (`--ingest-rate-limit 0`): the figure is the ingest's
//! own cost, not the limit's.

#[path = "../tests/support/mod.rs"]
mod support;

use support::http::free_port;

use std::process::Command;
use std::time::{Duration, Instant};

use axum::routing::post;
use futures::StreamExt;
use kube::api::{Api, ListParams};
use kubeheal::api::healer_ticket::HealerTicket;
use serde_json::{Value, json};

const CONCURRENCY: usize = 64;

fn env_count(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// Seed 004's example error; `frame` names the project file of its top frame (a different file
/// is a different error).
fn error(frame: &str) -> Value {
    json!({
        "source": "runtime",
        "contract_fqn": "entity/helpdesk/ticket",
        "error": "KeyError: 'resolution'",
        "stacktrace": format!("Traceback (most recent call last):\n  File \"backend/routes/{frame}.py\", line 88, in patch_ticket\n    ticket[\"resolution\"] = body[\"resolution\"]\nKeyError: 'resolution'\n"),
        "context": {"request_path": "/tickets/42", "method": "PATCH", "status_code": 500}
    })
}

/// Posts every body to `url` from [`CONCURRENCY`] connections; returns the time and how many
/// were answered 202.
async fn fire(client: &reqwest::Client, url: &str, bodies: Vec<Value>) -> (Duration, usize) {
    let started = Instant::now();
    let accepted = futures::stream::iter(bodies)
        .map(|body| {
            let request = client.post(url).json(&body);
            async move {
                request
                    .send()
                    .await
                    .map(|r| r.status().as_u16() == 202)
                    .unwrap_or(false)
            }
        })
        .buffer_unordered(CONCURRENCY)
        .filter(|ok| std::future::ready(*ok))
        .count()
        .await;
    (started.elapsed(), accepted)
}

/// The API server's count of HealerTicket writes (create, update, patch, status included).
fn ticket_writes(plane: &support::cluster::ControlPlane) -> f64 {
    let out = plane.kubectl(["get", "--raw", "/metrics"]);
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| l.starts_with("apiserver_request_total{") && l.contains("resource=\"healertickets\""))
        .filter(|l| {
            ["verb=\"POST\"", "verb=\"PATCH\"", "verb=\"PUT\"", "verb=\"APPLY\""]
                .iter()
                .any(|v| l.contains(v))
        })
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum()
}

/// Waits until `done` holds for the namespace's tickets; returns how long it took.
async fn settle(api: &Api<HealerTicket>, done: impl Fn(&[HealerTicket]) -> bool) -> Duration {
    let started = Instant::now();
    loop {
        let tickets = api.list(&ListParams::default()).await.expect("list tickets").items;
        if done(&tickets) {
            return started.elapsed();
        }
        assert!(
            started.elapsed() < Duration::from_secs(300),
            "the tickets never settled"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

fn rate(n: usize, took: Duration) -> f64 {
    n as f64 / took.as_secs_f64()
}

#[tokio::main]
async fn main() {
    let storm = env_count("KUBEHEAL_BENCH_STORM", 10_000);
    let distinct = env_count("KUBEHEAL_BENCH_DISTINCT", 2_000);
    let plane = support::cluster::control_plane();
    let ns = plane.namespace("ingest-bench");
    let work = tempfile::tempdir().expect("a temp dir");
    let healer = free_port();
    let mut operator = Command::new(env!("CARGO_BIN_EXE_kubeheal"));
    operator
        .args([
            "operator",
            "--namespace",
            &ns.name,
            "--listen",
            &free_port().to_string(),
        ])
        .args([
            "--healer-listen",
            &healer.to_string(),
            "--ingest-allow-anonymous",
            "--ingest-rate-limit",
            "0",
        ])
        .arg("--work-dir")
        .arg(work.path().join("cache"))
        .env("KUBECONFIG", plane.kubeconfig())
        .env("RUST_LOG", "warn");
    let _operator =
        support::cluster::spawn_watched(work.path(), "operator", &mut operator, None).expect("the operator starts");
    let client = support::http::client();
    let base = format!("http://{healer}/healer");
    let deadline = Instant::now() + Duration::from_secs(60);
    while client.get(format!("{base}/health")).send().await.is_err() {
        assert!(Instant::now() < deadline, "the /healer API never came up");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let api: Api<HealerTicket> = Api::namespaced(plane.client().await, &ns.name);
    let url = format!("{base}/ingest");

    let writes_before = ticket_writes(plane);
    let (took, accepted) = fire(&client, &url, vec![error("tickets"); storm]).await;
    assert_eq!(accepted, storm, "every ingest of the storm is accepted");
    let written = settle(&api, |t| {
        t.iter()
            .any(|t| t.status.as_ref().is_some_and(|s| s.occurrences as usize == storm))
    })
    .await;
    let writes = ticket_writes(plane) - writes_before;
    let storm_rate = rate(storm, took);
    println!(
        "storm: {storm} ingests of one error in {:.2} s = {storm_rate:.0} requests/s; counted whole {:.2} s after the last answer; {writes:.0} ticket writes = {:.1} writes/s",
        took.as_secs_f64(),
        written.as_secs_f64(),
        writes / (took + written).as_secs_f64()
    );

    let bodies: Vec<Value> = (0..distinct).map(|n| error(&format!("route_{n}"))).collect();
    let (took, accepted) = fire(&client, &url, bodies).await;
    assert_eq!(accepted, distinct, "every distinct ingest is accepted");
    let created = settle(&api, |t| t.len() > distinct).await;
    println!(
        "distinct: {distinct} different errors in {:.2} s = {:.0} requests/s; every ticket created {:.2} s after the last answer",
        took.as_secs_f64(),
        rate(distinct, took),
        created.as_secs_f64()
    );

    let bare_addr = free_port();
    let listener = tokio::net::TcpListener::bind(bare_addr)
        .await
        .expect("the bare handler's port");
    let bare = axum::Router::new().route(
        "/ingest",
        post(|_body: axum::body::Bytes| async {
            (
                axum::http::StatusCode::ACCEPTED,
                axum::Json(json!({"ticket_id": "ht-0000000000000000", "status": "queued"})),
            )
        }),
    );
    tokio::spawn(async move { axum::serve(listener, bare).await.expect("the bare handler serves") });
    let (took, accepted) = fire(
        &client,
        &format!("http://{bare_addr}/ingest"),
        vec![error("tickets"); storm],
    )
    .await;
    assert_eq!(accepted, storm);
    let bare_rate = rate(storm, took);
    println!(
        "bare handler: {storm} in {:.2} s = {bare_rate:.0} requests/s; the storm ran at {:.2}× the bare handler's rate",
        took.as_secs_f64(),
        storm_rate / bare_rate
    );
}
