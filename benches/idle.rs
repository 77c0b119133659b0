//! What HealRuns waiting on their Jobs cost a cluster: the idle state of a busy one.
//!
//!     cargo bench --bench idle                                  # 100, 500 and 1000 runs
//!     KUBEHEAL_BENCH_RUNS=1000 KUBEHEAL_BENCH_IDLE_SECONDS=300 cargo bench --bench idle
//!
//! For each N: a real kube-apiserver + etcd (the cluster tests' harness, `KUBEBUILDER_ASSETS` or
//! `tests/control-plane/build.sh`) with no kubelet and no Job controller, so a Job, once created,
//! never runs; the release `kubeheal operator` for a fresh namespace, under the chart's operator
//! ClusterRole as an ordinary user (so the API server's priority and fairness applies to it as to
//! a ServiceAccount, not the exemption an admin has); N HealRuns created at once from
//! [`CREATE_CONCURRENCY`] connections. Printed per N:
//!
//! - **create → Job**: from each HealRun's create answered to its Job seen by a watch, p50 / p95,
//!   and how long until every Job existed; then the same for `KUBEHEAL_BENCH_APART` (default 20)
//!   more runs created one at a time beside the N waiting ones, each once the previous one's Job
//!   exists: runs that arrive apart, as they mostly do;
//! - **429s**: the API server's own `apiserver_request_total{code="429"}` while creating (the
//!   bench's creates among them are shown apart);
//! - **idle**: once every Job exists and the operator has settled, the API requests over
//!   `KUBEHEAL_BENCH_IDLE_SECONDS` (default 150: longer than the operator's 120 s safety re-check
//!   of a running Job), reads and writes apart, per second, leaving out the API server's own
//!   bookkeeping (its endpoints and lease; the operator here holds no Lease) and the bench's
//!   scrapes of `/metrics` (not a resource); every count is printed beside;
//! - **RSS**: the operator's resident memory at the end of the idle window, and its peak.
//!
//! `KUBEHEAL_BENCH_LOG=kubeheal=debug` (any `RUST_LOG` filter) runs the operator at that level
//! and prints its log once every Job exists: where a lone run's time goes, step by step.

#[path = "../tests/support/mod.rs"]
mod support;

use support::http::free_port;

use std::collections::{BTreeMap, HashMap};
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::batch::v1::Job;
use kube::api::{Api, PostParams};
use kube::runtime::watcher;
use kubeheal::api::heal_run::HealRun;
use kubeheal::api::shared::HEAL_RUN_LABEL;
use serde_json::json;
use support::cluster::ControlPlane;

/// Connections the bench creates HealRuns from (as a GitOps tool syncing a folder would).
const CREATE_CONCURRENCY: usize = 32;

/// The API server's `apiserver_request_total` for resource requests, by (verb, code, resource).
fn requests(plane: &ControlPlane) -> BTreeMap<(String, String, String), f64> {
    let out = plane.kubectl(["get", "--raw", "/metrics"]);
    let mut counts = BTreeMap::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let Some(labels) = line.strip_prefix("apiserver_request_total{") else {
            continue;
        };
        let label = |name: &str| {
            labels
                .split(&format!("{name}=\""))
                .nth(1)
                .and_then(|rest| rest.split('"').next())
                .unwrap_or_default()
                .to_owned()
        };
        // Non-resource requests (the bench's own /metrics scrapes, /healthz) are not counted.
        if label("resource").is_empty() {
            continue;
        }
        let value = line
            .rsplit(' ')
            .next()
            .and_then(|v| v.parse::<f64>().ok())
            .unwrap_or(0.0);
        *counts
            .entry((label("verb"), label("code"), label("resource")))
            .or_default() += value;
    }
    counts
}

/// What happened between two scrapes of [`requests`].
fn since(
    before: &BTreeMap<(String, String, String), f64>,
    after: &BTreeMap<(String, String, String), f64>,
) -> BTreeMap<(String, String, String), f64> {
    after
        .iter()
        .map(|(k, v)| (k.clone(), v - before.get(k).copied().unwrap_or(0.0)))
        .filter(|(_, v)| *v > 0.0)
        .collect()
}

fn is_write(verb: &str) -> bool {
    matches!(verb, "POST" | "PUT" | "PATCH" | "APPLY" | "DELETE" | "DELETECOLLECTION")
}

/// The operator's resident memory now and at its peak, in MiB.
fn rss(pid: u32) -> (f64, f64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
            .map_or(0.0, |kb| kb / 1024.0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() as f64 * p).ceil() as usize).clamp(1, sorted.len()) - 1]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// One repository every run heals (its build never runs: there is no kubelet).
fn origin(dir: &std::path::Path) -> String {
    let source = dir.join("source");
    std::fs::create_dir_all(&source).expect("a source folder");
    std::fs::write(source.join("calc.py"), "def add(a, b):\n    return a - b\n").expect("write calc.py");
    std::fs::write(
        source.join("test_calc.py"),
        "from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n",
    )
    .expect("write the test");
    support::git::git(&source, &["init", "-q", "-b", "main"]);
    support::git::git(&source, &["add", "."]);
    support::git::git(&source, &["commit", "-qm", "a project with a bug"]);
    support::git::git(dir, &["clone", "-q", "--bare", "source", "origin.git"]);
    format!("file://{}", dir.join("origin.git").display())
}

/// The HealRun `name` the bench creates: a Python project healed from `url`'s main branch.
fn heal_run(name: &str, url: &str) -> HealRun {
    serde_json::from_value(json!({
        "apiVersion": "kubeheal.dev/v1alpha1", "kind": "HealRun",
        "metadata": {"name": name},
        "spec": {
            "source": {"url": url, "revision": "main"},
            "executor": {"projectType": "python", "image": "python:3.12-slim",
                         "command": "python3 -m pytest -rA", "timeoutSeconds": 86400},
            "healer": {"builtin": {}},
            "maxCycles": 3,
        }
    }))
    .expect("a HealRun")
}

/// Creates `count` runs one at a time, each once the previous one's Job exists and a moment
/// has passed: runs that arrive apart, as they mostly do. Their create → Job latencies.
async fn one_at_a_time(
    api: &Api<HealRun>,
    seen: &Mutex<HashMap<String, Instant>>,
    count: usize,
    url: &str,
) -> Vec<Duration> {
    let mut latencies = Vec::with_capacity(count);
    for n in 0..count {
        let name = format!("apart-{n:03}");
        api.create(&PostParams::default(), &heal_run(&name, url))
            .await
            .unwrap_or_else(|e| panic!("create {name}: {e}"));
        let created = Instant::now();
        let deadline = created + Duration::from_secs(60);
        let job = loop {
            if let Some(at) = seen.lock().unwrap().get(&name) {
                break *at;
            }
            assert!(Instant::now() < deadline, "{name}'s Job does not exist after a minute");
            tokio::time::sleep(Duration::from_millis(1)).await;
        };
        latencies.push(job.saturating_duration_since(created));
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    latencies.sort();
    latencies
}

async fn measure(plane: &'static ControlPlane, runs: usize, idle: Duration, apart: usize, url: &str) {
    let ns = plane.namespace(&format!("idle-{runs}"));
    let work = tempfile::tempdir().expect("a temp dir");
    let listen = free_port();
    let mut command = Command::new(env!("CARGO_BIN_EXE_kubeheal"));
    command
        .args(["operator", "--namespace", &ns.name, "--listen", &listen.to_string()])
        .arg("--allow-file-sources")
        .arg("--work-dir")
        .arg(work.path().join("cache"))
        .env("KUBECONFIG", plane.kubeconfig_as("kubeheal-operator"))
        .env("KUBEHEAL_HEALER_LISTEN", "off")
        .env(
            "RUST_LOG",
            std::env::var("KUBEHEAL_BENCH_LOG").unwrap_or_else(|_| "warn".into()),
        );
    let operator =
        support::cluster::spawn_watched(work.path(), "operator", &mut command, None).expect("the operator starts");
    let http = support::http::client();
    let deadline = Instant::now() + Duration::from_secs(60);
    while !http
        .get(format!("http://{listen}/readyz"))
        .send()
        .await
        .is_ok_and(|r| r.status().is_success())
    {
        assert!(
            Instant::now() < deadline,
            "the operator never became ready:\n{}",
            operator.log_tail(30)
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    let client = plane.client().await;
    let jobs: Api<Job> = Api::namespaced(client.clone(), &ns.name);
    let seen: Arc<Mutex<HashMap<String, Instant>>> = Arc::default();
    let watching = {
        let seen = seen.clone();
        tokio::spawn(async move {
            let mut events = watcher::watcher(jobs, watcher::Config::default()).boxed();
            while let Ok(Some(event)) = events.try_next().await {
                if let watcher::Event::Apply(job) | watcher::Event::InitApply(job) = event
                    && let Some(run) = job.metadata.labels.as_ref().and_then(|l| l.get(HEAL_RUN_LABEL))
                {
                    seen.lock().unwrap().entry(run.clone()).or_insert_with(Instant::now);
                }
            }
        })
    };

    let api: Api<HealRun> = Api::namespaced(client, &ns.name);
    let before = requests(plane);
    let started = Instant::now();
    let created: HashMap<String, Instant> = futures::stream::iter(0..runs)
        .map(|n| {
            let api = api.clone();
            let name = format!("run-{n:04}");
            let run = heal_run(&name, url);
            async move {
                api.create(&PostParams::default(), &run)
                    .await
                    .unwrap_or_else(|e| panic!("create {name}: {e}"));
                (name, Instant::now())
            }
        })
        .buffer_unordered(CREATE_CONCURRENCY)
        .collect()
        .await;
    let deadline = Instant::now() + Duration::from_secs(600);
    while seen.lock().unwrap().len() < runs {
        assert!(
            Instant::now() < deadline,
            "only {} of {runs} Jobs exist after 10 minutes; the operator's log:\n{}",
            seen.lock().unwrap().len(),
            operator.log_tail(30)
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let all_jobs = started.elapsed();
    if std::env::var_os("KUBEHEAL_BENCH_LOG").is_some() {
        println!("the operator's log up to the last Job:\n{}", operator.log_tail(400));
    }
    let creating = since(&before, &requests(plane));
    let alone = one_at_a_time(&api, &seen, apart, url).await;
    watching.abort();
    let mut latencies: Vec<Duration> = {
        let seen = seen.lock().unwrap();
        created
            .iter()
            .map(|(name, at)| seen[name].saturating_duration_since(*at))
            .collect()
    };
    latencies.sort();
    let count = |counts: &BTreeMap<(String, String, String), f64>, keep: &dyn Fn(&str, &str, &str) -> bool| -> u64 {
        counts
            .iter()
            .filter(|((verb, code, resource), _)| keep(verb, code, resource))
            .map(|(_, v)| *v as u64)
            .sum()
    };
    let throttled = count(&creating, &|_, code, _| code == "429");
    let throttled_creates = count(&creating, &|verb, code, resource| {
        code == "429" && verb == "POST" && resource == "healruns"
    });

    // Settled: the last status writes after the launches are done.
    tokio::time::sleep(Duration::from_secs(15)).await;
    let before = requests(plane);
    tokio::time::sleep(idle).await;
    let idling = since(&before, &requests(plane));
    let (rss_now, rss_peak) = rss(operator.id());
    let waiting = api
        .get_status("run-0000")
        .await
        .expect("a waiting run")
        .status
        .unwrap_or_default();
    // The API server's own bookkeeping (its endpoints and identity lease) is not the operator's,
    // which holds no Lease here: shown, not counted.
    let own = |resource: &str| matches!(resource, "endpoints" | "leases" | "endpointslices");
    let reads = count(&idling, &|verb, _, resource| !is_write(verb) && !own(resource));
    let writes = count(&idling, &|verb, _, resource| is_write(verb) && !own(resource));
    let per_second = |n: u64| n as f64 / idle.as_secs_f64();
    let listed = |counts: &BTreeMap<(String, String, String), f64>| -> String {
        counts
            .iter()
            .map(|((verb, code, resource), v)| format!("{verb} {resource} {code}: {v}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    println!(
        "{runs} runs: create → Job p50 {:.0} ms, p95 {:.0} ms, every Job after {:.1} s; then {apart} runs created one at a time: p50 {:.0} ms, p95 {:.0} ms; {throttled} 429s while creating ({throttled_creates} of them the bench's creates) [every request the API server counted until every Job existed: {}]; idle over {} s: {:.2} requests/s from the operator and the API server's informers ({:.2} reads/s, {:.2} writes/s) [every request the API server counted: {}]; operator RSS {rss_now:.0} MiB (peak {rss_peak:.0} MiB); a waiting run says {:?}: {:?}",
        ms(percentile(&latencies, 0.50)),
        ms(percentile(&latencies, 0.95)),
        all_jobs.as_secs_f64(),
        ms(percentile(&alone, 0.50)),
        ms(percentile(&alone, 0.95)),
        listed(&creating),
        idle.as_secs(),
        per_second(reads + writes),
        per_second(reads),
        per_second(writes),
        listed(&idling),
        waiting.phase,
        waiting.message.unwrap_or_default(),
    );
}

#[tokio::main]
async fn main() {
    let sizes: Vec<usize> = std::env::var("KUBEHEAL_BENCH_RUNS")
        .unwrap_or_else(|_| "100,500,1000".into())
        .split(',')
        .map(|n| {
            n.trim()
                .parse()
                .expect("KUBEHEAL_BENCH_RUNS is a list of counts, e.g. 100,500")
        })
        .collect();
    let idle = Duration::from_secs(
        std::env::var("KUBEHEAL_BENCH_IDLE_SECONDS")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(150),
    );
    let plane = support::cluster::control_plane();
    support::cluster::bind_operator_role(plane);
    let repos = tempfile::tempdir().expect("a temp dir");
    let url = origin(repos.path());
    let apart = std::env::var("KUBEHEAL_BENCH_APART")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20)
        .max(1);
    for runs in sizes {
        measure(plane, runs, idle, apart, &url).await;
    }
}
