//! The heal loop end to end: `kubeheal operator` (the real binary, as a process) reconciles
//! HealRuns applied with `kubectl` against the real control plane. The builds run in executor
//! Jobs (the test node of `tests/support/node.rs` plays the kubelet), the source is a bare Git
//! repository on this machine (`file://`), the healer is the reference Code Healer server (or a
//! deliberately misbehaving one) on loopback, and approvals are `kubectl patch`es by a user with
//! the RBAC to make them.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use axum::Router;
use axum::routing::post;
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::events::v1::Event;
use kube::api::{Api, ListParams};
use kubeheal::api::heal_run::{HealRunPhase, HealRunReason, HealerOutcome};
use kubeheal::api::{CodeFixDDS, HealRun};
use kubeheal::healer::builtin::Builtin;
use kubeheal::healer::server::{ServerState, router};
use serde_json::json;

use crate::support::cluster::{
    ControlPlane, Process, RELEASE_NAMESPACE, TestNamespace, bind_operator_role, control_plane, spawn_watched,
};
use crate::support::git::git;
use crate::support::node::{Hold, kubelet, run_node_held};

pub(crate) const RUN: &str = "calc";

/// One end-to-end test: its namespace, repository, node, healer and operator.
pub(crate) struct Heal {
    pub(crate) plane: &'static ControlPlane,
    pub(crate) ns: TestNamespace,
    pub(crate) client: kube::Client,
    /// The bare repository the HealRun heals (`file://` URL).
    pub(crate) origin: PathBuf,
    _dirs: Vec<tempfile::TempDir>,
    pub(crate) work: tempfile::TempDir,
    pub(crate) operator: Option<Process>,
    /// Variables the operator is started with (as its Deployment would set them).
    operator_env: Vec<(String, String)>,
    /// Operators started from now on watch every namespace (no `--namespace`): the test must
    /// keep them off other tests' objects itself, e.g. with `--watch-label-selector`.
    pub(crate) every_namespace: bool,
    metrics: SocketAddr,
    hold: Hold,
    _node: tokio::task::JoinHandle<()>,
}

impl Heal {
    /// A namespace, a bare repository holding `files`, and the test node; the operator is
    /// started by [`Heal::start_operator`].
    pub(crate) async fn new(test: &str, files: &[(&str, &str)], hold: Hold) -> Heal {
        Heal::with_links(test, files, &[], hold).await
    }

    /// [`Heal::new`] with symbolic links (`name`, `target`) committed beside the files.
    async fn with_links(test: &str, files: &[(&str, &str)], links: &[(&str, &str)], hold: Hold) -> Heal {
        let plane = control_plane();
        plane.ensure_controller_manager();
        let logs = kubelet(plane);
        let ns = plane.namespace(test);
        let client = plane.client().await;
        let source = tempfile::tempdir().expect("a temp dir");
        for (path, content) in files {
            let file = source.path().join(path);
            std::fs::create_dir_all(file.parent().expect("a folder")).expect("make the file's folder");
            std::fs::write(file, content).expect("write a project file");
        }
        for (name, target) in links {
            std::os::unix::fs::symlink(target, source.path().join(name)).expect("a link");
        }
        git(source.path(), &["init", "-q", "-b", "main"]);
        git(source.path(), &["add", "."]);
        git(source.path(), &["commit", "-qm", "a project with a bug"]);
        let bare = tempfile::tempdir().expect("a temp dir");
        let origin = bare.path().join("origin.git");
        git(
            bare.path(),
            &[
                "clone",
                "-q",
                "--bare",
                &source.path().display().to_string(),
                "origin.git",
            ],
        );
        bind_operator_role(plane);
        let node = run_node_held(client.clone(), ns.name.clone(), logs, hold.clone());
        Heal {
            plane,
            ns,
            client,
            origin,
            _dirs: vec![source, bare],
            work: tempfile::tempdir().expect("a temp dir"),
            operator: None,
            operator_env: Vec::new(),
            every_namespace: false,
            metrics: free_port(),
            hold,
            _node: node,
        }
    }

    pub(crate) fn url(&self) -> String {
        format!("file://{}", self.origin.display())
    }

    /// Starts `kubeheal operator` for this test's namespace, allowing the `file://` source and
    /// the loopback healer the tests use.
    pub(crate) fn start_operator(&mut self) {
        self.start_operator_with(&["--allow-file-sources", "--allow-cluster-internal-healers"]);
    }

    /// Starts `kubeheal operator` for this test's namespace with `flags`.
    pub(crate) fn start_operator_with(&mut self, flags: &[&str]) {
        self.operator = Some(self.operator_process(flags, self.metrics));
    }

    /// A `kubeheal operator` process for this test's namespace with `flags`, serving its
    /// endpoints on `listen`.
    pub(crate) fn operator_process(&self, flags: &[&str], listen: SocketAddr) -> Process {
        let mut command = Command::new(env!("CARGO_BIN_EXE_kubeheal"));
        command.arg("operator");
        if !self.every_namespace {
            command.args(["--namespace", &self.ns.name]);
        }
        command
            .args(["--listen", &listen.to_string()])
            .args(flags)
            .arg("--work-dir")
            .arg(self.work.path().join("cache"))
            .env("KUBECONFIG", self.plane.kubeconfig_as("kubeheal-operator"))
            // Many operators run at once here: none takes the /healer API's default port (a
            // test that needs it passes --healer-listen).
            .env("KUBEHEAL_HEALER_LISTEN", "off")
            // Not `kube=warn`: targets match by prefix, and it would silence kubeheal's own INFO.
            .env("RUST_LOG", "info,kube_client=warn,kube_runtime=warn")
            .env_remove("CODE_HEALER_URL")
            .envs(self.operator_env.iter().map(|(k, v)| (k.as_str(), v.as_str())));
        let n = std::fs::read_dir(self.work.path()).map(|d| d.count()).unwrap_or(0);
        spawn_watched(self.work.path(), &format!("operator-{n}"), &mut command, None).expect("the operator starts")
    }

    /// Operators started from now on run as the chart's ServiceAccount (a token from the
    /// TokenRequest API, as its Pod would have); returns the token.
    pub(crate) fn as_charts_service_account(&mut self) -> String {
        let token = self.plane.service_account_token(RELEASE_NAMESPACE, "kubeheal");
        let kubeconfig = self
            .plane
            .kubeconfig_with_token(&format!("system:serviceaccount:{RELEASE_NAMESPACE}:kubeheal"), &token);
        self.operator_env
            .push(("KUBECONFIG".into(), kubeconfig.display().to_string()));
        token
    }

    /// Kills the operator with SIGKILL: a crash at whatever point it was.
    pub(crate) fn kill_operator(&mut self) {
        if let Some(mut process) = self.operator.take() {
            process.kill();
        }
    }

    pub(crate) fn apply(&self, spec: serde_json::Value) {
        let manifest = json!({"apiVersion": "kubeheal.dev/v1alpha1", "kind": "HealRun",
                              "metadata": {"name": RUN}, "spec": spec});
        let file = self.work.path().join("healrun.json");
        std::fs::write(&file, manifest.to_string()).expect("write the manifest");
        let out = self
            .plane
            .kubectl(["apply", "-n", &self.ns.name, "-f", &file.display().to_string()]);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }

    /// A HealRun spec for this repository with a Python build and the healer at `healer`.
    pub(crate) fn spec(&self, healer: &str, extra: serde_json::Value) -> serde_json::Value {
        let mut spec = json!({
            "source": {"url": self.url(), "revision": "main"},
            "executor": {"projectType": "python", "image": "python:3.12-slim",
                         "command": "python3 -m pytest -rA -p no:cacheprovider", "timeoutSeconds": 120},
            "healer": {"codeHealerApi": {"url": healer}},
            "maxCycles": 3,
            "policy": {"approval": "Automatic"},
        });
        for (k, v) in extra.as_object().expect("an object") {
            spec[k] = v.clone();
        }
        spec
    }

    pub(crate) fn runs(&self) -> Api<HealRun> {
        Api::namespaced(self.client.clone(), &self.ns.name)
    }

    /// Waits until the HealRun satisfies `done`; fails with its status and the operator's log.
    pub(crate) async fn wait(&self, what: &str, done: impl Fn(&HealRun) -> bool) -> HealRun {
        let deadline = Instant::now() + Duration::from_secs(150);
        loop {
            if let Ok(Some(run)) = self.runs().get_opt(RUN).await
                && done(&run)
            {
                return run;
            }
            if Instant::now() > deadline {
                let run = self.runs().get_opt(RUN).await.ok().flatten();
                panic!(
                    "the HealRun never became {what}; status: {}\noperator log:\n{}",
                    serde_json::to_string_pretty(&run.and_then(|r| r.status)).unwrap_or_default(),
                    self.operator.as_ref().map(|p| p.log_tail(60)).unwrap_or_default()
                );
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
    }

    pub(crate) async fn wait_phase(&self, phase: HealRunPhase) -> HealRun {
        self.wait(&format!("{phase:?}"), |r| {
            r.status.as_ref().and_then(|s| s.phase) == Some(phase)
        })
        .await
    }

    pub(crate) async fn jobs(&self) -> Vec<String> {
        let jobs: Api<Job> = Api::namespaced(self.client.clone(), &self.ns.name);
        let mut names: Vec<String> = jobs
            .list(&ListParams::default())
            .await
            .expect("list Jobs")
            .items
            .into_iter()
            .filter_map(|j| j.metadata.name)
            .collect();
        names.sort();
        names
    }

    async fn wait_for_job(&self, prefix: &str) {
        let deadline = Instant::now() + Duration::from_secs(120);
        while !self.jobs().await.iter().any(|j| j.starts_with(prefix)) {
            assert!(
                Instant::now() < deadline,
                "no Job {prefix}* was created; operator log:\n{}",
                self.operator.as_ref().map(|p| p.log_tail(60)).unwrap_or_default()
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    /// `git log` of the heal branch in the bare repository: (sha, subject) newest first.
    pub(crate) fn branch_log(&self, branch: &str) -> Vec<(String, String)> {
        let out = Command::new("git")
            .args(["log", "--format=%H %s", branch, "--"])
            .current_dir(&self.origin)
            .output()
            .expect("git log");
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|l| l.split_once(' '))
            .map(|(sha, subject)| (sha.to_owned(), subject.to_owned()))
            .collect()
    }

    pub(crate) fn file_on_branch(&self, branch: &str, path: &str) -> String {
        git(&self.origin, &["show", &format!("{branch}:{path}")])
    }

    /// The reasons of the HealRun's Events once one is `reason` (Events are queued after the
    /// status write that a test waits for, and posted beside the reconciles).
    async fn wait_for_event(&self, reason: &str) -> Vec<String> {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let reasons: Vec<String> = self.events().await.into_iter().map(|(_, r)| r).collect();
            if reasons.iter().any(|r| r == reason) || Instant::now() > deadline {
                return reasons;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    /// (type, reason) of every Event about the HealRun, oldest first.
    async fn events(&self) -> Vec<(String, String)> {
        let events: Api<Event> = Api::namespaced(self.client.clone(), &self.ns.name);
        let mut items: Vec<Event> = events
            .list(&ListParams::default())
            .await
            .expect("list Events")
            .items
            .into_iter()
            .filter(|e| e.regarding.as_ref().and_then(|r| r.name.as_deref()) == Some(RUN))
            .collect();
        items.sort_by_key(|e| e.event_time.as_ref().map(|t| t.0));
        items
            .into_iter()
            .map(|e| (e.type_.unwrap_or_default(), e.reason.unwrap_or_default()))
            .collect()
    }
}

impl Drop for Heal {
    fn drop(&mut self) {
        if std::thread::panicking()
            && let Some(process) = &self.operator
        {
            eprintln!("---- operator log ----\n{}", process.log_tail(120));
        }
        self.kill_operator();
    }
}

pub(crate) use crate::support::http::free_port;

/// The reference Code Healer server (built-in deterministic fixers) on loopback, counting calls.
pub(crate) async fn reference_healer() -> (String, Arc<AtomicUsize>) {
    let calls = Arc::new(AtomicUsize::new(0));
    let counter = calls.clone();
    let app = router(Arc::new(ServerState {
        healers: kubeheal::healer::Chain(vec![Box::new(Builtin)]),
    }))
    .layer(axum::middleware::from_fn(
        move |request: axum::extract::Request, next: axum::middleware::Next| {
            let counter = counter.clone();
            async move {
                counter.fetch_add(1, Ordering::SeqCst);
                next.run(request).await
            }
        },
    ));
    let addr = crate::support::http::serve(app).await;
    (format!("http://{addr}/api/heal"), calls)
}

/// A healer that always answers with `files` (seed 000's success shape).
async fn fixed_healer(files: serde_json::Value) -> String {
    counting_healer(files).await.0
}

/// [`fixed_healer`], counting calls.
pub(crate) async fn counting_healer(files: serde_json::Value) -> (String, Arc<AtomicUsize>) {
    let calls = Arc::new(AtomicUsize::new(0));
    let counter = calls.clone();
    let app = Router::new().route(
        "/api/heal",
        post(move || {
            let files = files.clone();
            counter.fetch_add(1, Ordering::SeqCst);
            async move {
                axum::Json(json!({"status": "healed", "modified_files": files,
                                  "changes_summary": "changed calc.py", "confidence": 0.9}))
            }
        }),
    );
    let addr = crate::support::http::serve(app).await;
    (format!("http://{addr}/api/heal"), calls)
}

/// A logic bug no built-in fixer can fix, and the service's fix for it: only the Code Healer API
/// heals this project.
pub(crate) const LOGIC_CALC: &str = "def add(a, b):\n    return a - b\n\n\ndef double(x):\n    return x * 2\n";
pub(crate) const LOGIC_FIXED: &str = "def add(a, b):\n    return a + b\n\n\ndef double(x):\n    return x * 2\n";

pub(crate) fn logic_project() -> Vec<(&'static str, &'static str)> {
    vec![("calc.py", LOGIC_CALC), ("test_calc.py", REGRESS_TEST)]
}

pub(crate) async fn logic_healer() -> (String, Arc<AtomicUsize>) {
    counting_healer(json!({ "calc.py": LOGIC_FIXED })).await
}

const SYNTAX_CALC: &str =
    "\"\"\"A tiny calculator.\"\"\"\n\n\ndef add(a, b)\n    return a + b\n\n\ndef subtract(a, b):\n    return a - b\n";
const SYNTAX_TEST: &str = "from calc import add, subtract\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\ndef test_subtract():\n    assert subtract(5, 3) == 2\n";

fn syntax_project() -> Vec<(&'static str, &'static str)> {
    vec![("calc.py", SYNTAX_CALC), ("test_calc.py", SYNTAX_TEST)]
}

pub(crate) fn status(run: &HealRun) -> &kubeheal::api::heal_run::HealRunStatus {
    run.status.as_ref().expect("a status")
}

#[tokio::test(flavor = "multi_thread")]
async fn a_healrun_heals_a_broken_repository_through_executor_jobs_and_commits_on_the_heal_branch() {
    // Tiered, with a Code Healer API configured: the built-in fixers come first, and their
    // deterministic fix is committed without asking a human or the service.
    let (healer, calls) = reference_healer().await;
    let mut heal = Heal::new("healrun-heals", &syntax_project(), Hold::default()).await;
    heal.start_operator();
    heal.apply(heal.spec(&healer, json!({"policy": {"approval": "Tiered"}})));
    let run = heal.wait_phase(HealRunPhase::Healed).await;
    let s = status(&run);

    assert_eq!(s.reason, Some(HealRunReason::Healed));
    assert_eq!(s.cycle, 1);
    let baseline = s.baseline.as_ref().expect("a baseline");
    assert!(
        baseline.envelope.run_id.starts_with("calc-c0-"),
        "{}",
        baseline.envelope.run_id
    );
    assert_eq!(baseline.bug_reports[0].file_path, "calc.py");
    assert_eq!(baseline.bug_reports[0].line_number, 4);
    let cycle = &s.cycles[0];
    let call = cycle.healer_call.as_ref().expect("a healer call");
    assert_eq!(
        (call.healer.as_str(), call.deterministic, call.outcome),
        ("builtin", true, HealerOutcome::Healed)
    );
    assert!(
        cycle.approval_request.is_none(),
        "a deterministic fix needs no approval under Tiered"
    );
    let patch = cycle.patch.as_ref().expect("a patch");
    assert!(patch.gate.accepted, "{:?}", patch.gate);
    assert!(patch.digest.starts_with("sha256:"));
    let execution = cycle.execution.as_ref().expect("the verifying execution");
    assert_eq!(execution.envelope.exit_code, Some(0));
    assert_eq!(execution.tests_ran, 2);

    // The fix is on the heal branch of the source repository, with the formatter's subject.
    let log = heal.branch_log("kubeheal/calc");
    assert_eq!(log.len(), 2, "{log:?}");
    assert_eq!(patch.commit.as_deref(), Some(log[0].0.as_str()));
    assert!(
        log[0].1.starts_with("[AI-AGENT] SYNTAX error in calc.py line 4 → Fix:"),
        "{}",
        log[0].1
    );
    assert!(
        heal.file_on_branch("kubeheal/calc", "calc.py")
            .contains("def add(a, b):\n")
    );
    let message = git(&heal.origin, &["log", "-1", "--format=%B", "kubeheal/calc"]);
    assert!(
        message.contains(&format!("Kubeheal-Run: {}/calc", heal.ns.name)),
        "{message}"
    );
    assert!(message.contains("Kubeheal-Cycle: 1"));
    let result = s.result.as_ref().expect("a result");
    assert_eq!(result.branch.as_deref(), Some("kubeheal/calc"));
    assert_eq!(result.commit, patch.commit);
    assert!(
        result
            .diff_stat
            .as_deref()
            .unwrap_or_default()
            .contains("1 file changed")
    );
    assert_eq!(
        calls.load(Ordering::SeqCst),
        0,
        "the service is not asked for what the built-in fixers fix"
    );
    assert_eq!(heal.jobs().await.len(), 2, "one Job for the baseline, one for cycle 1");
    let clone = heal.work.path().join("cache").join(&heal.ns.name).join(RUN);
    let deadline = Instant::now() + Duration::from_secs(20);
    while clone.exists() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert!(!clone.exists(), "a finished, pushed run's clone is removed");

    // Conditions and Events tell the same story.
    let ready = s.conditions.iter().find(|c| c.type_ == "Ready").expect("Ready");
    assert_eq!((ready.status.as_str(), ready.reason.as_str()), ("True", "Healed"));
    let reasons = heal.wait_for_event("Healed").await;
    // The story every driver tells (tests/fixtures/scenarios): the operator's Events say it too.
    let scenario: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/scenarios/healed_in_one_cycle.json"),
        )
        .expect("the scenario"),
    )
    .expect("JSON");
    let story: Vec<String> = scenario["events"]
        .as_array()
        .expect("events")
        .iter()
        .map(|e| e[0].as_str().expect("a reason").to_owned())
        .collect();
    for expected in &story {
        assert!(
            reasons.iter().any(|r| r == expected),
            "no {expected} event in {reasons:?}"
        );
    }
    // The logs are kept where the status says.
    let logs = s.logs_ref.as_ref().expect("a logs reference");
    let job = logs.name.trim_end_matches("-log");
    let kept = kubeheal::executor::job::kept_log(heal.client.clone(), &heal.ns.name, job)
        .await
        .expect("read the kept log")
        .expect("a kept log");
    assert!(kept.contains("2 passed"), "{kept}");

    // The operator's endpoints.
    // (the operator counts the run right after writing its status; the test may be faster)
    let http = crate::support::http::client();
    let deadline = Instant::now() + Duration::from_secs(10);
    let metrics = loop {
        let text = http
            .get(format!("http://{}/metrics", heal.metrics))
            .send()
            .await
            .expect("GET /metrics")
            .text()
            .await
            .expect("a body");
        if text.contains("kubeheal_heal_runs_finished_total") || Instant::now() > deadline {
            break text;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert!(
        metrics.contains("kubeheal_heal_runs_finished_total{reason=\"Healed\"} 1"),
        "{metrics}"
    );
    assert!(metrics.contains("kubeheal_healer_calls_total{healer=\"builtin\",outcome=\"healed\"} 1"));
    let ready = http
        .get(format!("http://{}/readyz", heal.metrics))
        .send()
        .await
        .expect("GET /readyz");
    assert_eq!(ready.status(), 200);
}

#[tokio::test(flavor = "multi_thread")]
async fn under_tiered_approval_a_fix_from_the_service_waits_for_a_human() {
    let (healer, calls) = logic_healer().await;
    let mut heal = Heal::new("healrun-tiered", &logic_project(), Hold::default()).await;
    heal.start_operator();
    heal.apply(heal.spec(&healer, json!({"policy": {"approval": "Tiered"}})));
    let run = heal.wait_phase(HealRunPhase::AwaitingApproval).await;
    let s = status(&run);
    let call = s.cycles[0].healer_call.as_ref().expect("a healer call");
    assert_eq!(
        (call.healer.as_str(), call.deterministic),
        ("code-healer-api", false),
        "the built-in fixers had no fix, the service had one"
    );
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    let name = s.cycles[0].approval_request.clone().expect("an approval request");
    let orders: Api<CodeFixDDS> = Api::namespaced(heal.client.clone(), &heal.ns.name);
    let order = orders.get(&name).await.expect("the CodeFixDDS asking for approval");
    assert!(order.spec.approval.is_none());
    assert!(
        heal.branch_log("kubeheal/calc").len() <= 1,
        "nothing is committed before approval"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn with_manual_approval_the_fix_waits_for_a_kubectl_patch_of_its_codefixdds() {
    let (healer, _) = reference_healer().await;
    let mut heal = Heal::new("healrun-manual", &syntax_project(), Hold::default()).await;
    grant_approvers(&heal);
    heal.start_operator();
    heal.apply(heal.spec(&healer, json!({"policy": {"approval": "Manual"}})));
    let run = heal.wait_phase(HealRunPhase::AwaitingApproval).await;
    let s = status(&run);
    let name = s.cycles[0].approval_request.clone().expect("an approval request");
    let digest = s.cycles[0].patch.as_ref().expect("a patch").digest.clone();
    assert!(
        heal.branch_log("kubeheal/calc").is_empty(),
        "nothing is committed before approval"
    );

    let orders: Api<CodeFixDDS> = Api::namespaced(heal.client.clone(), &heal.ns.name);
    let order = orders.get(&name).await.expect("the CodeFixDDS");
    let proposal = order.spec.proposal.as_ref().expect("a proposal");
    assert_eq!(proposal.digest, digest);
    assert!(proposal.patch.contains("+def add(a, b):"), "{}", proposal.patch);
    assert_eq!(kubeheal::core::patch::digest(&proposal.patch), digest);
    assert_eq!(order.spec.source_dds, "HealRun/calc");
    assert_eq!(order.spec.allowed_paths, vec!["calc.py"]);

    let approval = json!({"spec": {"approval": {"decision": "Approved", "approvedBy": "alice",
                                                 "reason": "the colon is right", "patchDigest": digest}}});
    let out = heal.plane.kubectl_as(
        "alice",
        [
            "patch",
            "codefixdds",
            &name,
            "-n",
            &heal.ns.name,
            "--type",
            "merge",
            "-p",
            &approval.to_string(),
        ],
    );
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));

    let run = heal.wait_phase(HealRunPhase::Healed).await;
    let patch = status(&run).cycles[0].patch.clone().expect("a patch");
    assert_eq!(patch.approved_by.as_deref(), Some("alice"));
    let message = git(&heal.origin, &["log", "-1", "--format=%B", "kubeheal/calc"]);
    assert!(message.contains("Approved-by: alice"), "{message}");
    // The work order tells the same story: its execution is the run's commit of that cycle.
    let deadline = Instant::now() + Duration::from_secs(60);
    let order = loop {
        let order = orders.get(&name).await.expect("the CodeFixDDS");
        let phase = order.status.as_ref().and_then(|s| s.phase);
        if phase == Some(kubeheal::api::code_fix_dds::CodeFixPhase::Executed) || Instant::now() > deadline {
            break order;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    };
    let order_status = order.status.expect("the order's status");
    assert_eq!(
        order_status.phase,
        Some(kubeheal::api::code_fix_dds::CodeFixPhase::Executed),
        "{order_status:?}"
    );
    assert_eq!(order_status.approved_by.as_deref(), Some("alice"));
    let execution = order_status.execution.expect("an execution");
    assert_eq!(execution.commit, patch.commit);
    assert_eq!(execution.heal_run.as_deref(), Some(RUN));
    let reasons = heal.wait_for_event("Approved").await;
    assert!(reasons.contains(&"ApprovalRequested".to_owned()) && reasons.contains(&"Approved".to_owned()));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_rejected_approval_fails_the_run_and_commits_nothing() {
    let (healer, _) = reference_healer().await;
    let mut heal = Heal::new("healrun-rejected", &syntax_project(), Hold::default()).await;
    grant_approvers(&heal);
    heal.start_operator();
    heal.apply(heal.spec(&healer, json!({"policy": {"approval": "Manual"}})));
    let run = heal.wait_phase(HealRunPhase::AwaitingApproval).await;
    let name = status(&run).cycles[0]
        .approval_request
        .clone()
        .expect("an approval request");
    let rejection = json!({"spec": {"approval": {"decision": "Rejected", "approvedBy": "alice",
                                                  "reason": "fix the signature upstream instead"}}});
    let out = heal.plane.kubectl_as(
        "alice",
        [
            "patch",
            "codefixdds",
            &name,
            "-n",
            &heal.ns.name,
            "--type",
            "merge",
            "-p",
            &rejection.to_string(),
        ],
    );
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let run = heal.wait_phase(HealRunPhase::Failed).await;
    let s = status(&run);
    assert_eq!(s.reason, Some(HealRunReason::Rejected));
    assert!(
        s.message
            .as_deref()
            .unwrap_or_default()
            .contains("fix the signature upstream")
    );
    assert!(heal.branch_log("kubeheal/calc").is_empty());
    assert_eq!(heal.jobs().await.len(), 1, "no execution after a rejection");
}

const REGRESS_CALC: &str = "def add(a, b):\n    return a - b\n\n\ndef double(x):\n    return x * 2\n";
pub(crate) const REGRESS_TEST: &str = "from calc import add, double\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\ndef test_double():\n    assert double(4) == 8\n";

#[tokio::test(flavor = "multi_thread")]
async fn a_fix_that_breaks_a_passing_test_is_reverted_and_the_run_regresses() {
    // Fixes `add`, breaks `double`.
    let healer =
        fixed_healer(json!({"calc.py": "def add(a, b):\n    return a + b\n\n\ndef double(x):\n    return x * 3\n"}))
            .await;
    let project = vec![("calc.py", REGRESS_CALC), ("test_calc.py", REGRESS_TEST)];
    let mut heal = Heal::new("healrun-regressed", &project, Hold::default()).await;
    heal.start_operator();
    heal.apply(heal.spec(&healer, json!({})));
    let run = heal.wait_phase(HealRunPhase::Failed).await;
    let s = status(&run);
    assert_eq!(s.reason, Some(HealRunReason::Regressed), "{:?}", s.message);
    let tests = s.cycles[0].tests.as_ref().expect("a test diff");
    assert_eq!(tests.fixed, vec!["test_calc.py::test_add"]);
    assert_eq!(tests.newly_failing, vec!["test_calc.py::test_double"]);
    let patch = s.cycles[0].patch.as_ref().expect("a patch");
    let log = heal.branch_log("kubeheal/calc");
    assert_eq!(log.len(), 3, "the fix and its revert on top of the source: {log:?}");
    assert_eq!(patch.reverted_by.as_deref(), Some(log[0].0.as_str()));
    assert!(log[0].1.starts_with("Revert the fix of cycle 1"), "{}", log[0].1);
    // (the helper trims the trailing newline of what git prints)
    assert_eq!(heal.file_on_branch("kubeheal/calc", "calc.py"), REGRESS_CALC.trim_end());
    // The loop ended without a fix: a work order for people, per seed 002.
    let run = heal
        .wait("given a proposed fix", |r| {
            r.status.as_ref().is_some_and(|s| s.proposed_fix.is_some())
        })
        .await;
    let name = status(&run).proposed_fix.clone().expect("a proposal");
    let orders: Api<CodeFixDDS> = Api::namespaced(heal.client.clone(), &heal.ns.name);
    let order = orders.get(&name).await.expect("the proposed CodeFixDDS");
    assert!(order.spec.goal.contains("HealRun/calc"));
    assert!(order.spec.approval.is_none());
}

#[tokio::test(flavor = "multi_thread")]
async fn an_auto_project_is_detected_at_the_source_commit_and_built_with_the_default_image_and_command() {
    let (healer, _) = reference_healer().await;
    let mut heal = Heal::new("healrun-auto", &syntax_project(), Hold::default()).await;
    heal.start_operator();
    let mut spec = heal.spec(&healer, json!({}));
    spec["executor"] = json!({"timeoutSeconds": 120});
    heal.apply(spec);
    let run = heal.wait_phase(HealRunPhase::Healed).await;
    assert_eq!(
        status(&run).project_type,
        Some(kubeheal::api::heal_run::ProjectType::Python)
    );
    let jobs: Api<Job> = Api::namespaced(heal.client.clone(), &heal.ns.name);
    let job = jobs.get(&heal.jobs().await[0]).await.expect("the baseline Job");
    let pod = job.spec.expect("a spec").template.spec.expect("a Pod spec");
    let build = &pod.containers[0];
    assert_eq!(build.image.as_deref(), Some("python:3.12-slim"));
    let script = build
        .command
        .iter()
        .flatten()
        .chain(build.args.iter().flatten())
        .cloned()
        .collect::<Vec<_>>()
        .join(" ");
    assert!(
        script.contains("pip install") && script.contains("-m pytest"),
        "{script}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_revision_that_does_not_exist_fails_the_run_with_what_to_fix_instead_of_retrying() {
    let (healer, calls) = reference_healer().await;
    let mut heal = Heal::new("healrun-no-revision", &syntax_project(), Hold::default()).await;
    heal.start_operator();
    let mut spec = heal.spec(&healer, json!({}));
    spec["source"]["revision"] = json!("release-9.9");
    heal.apply(spec);
    let run = heal.wait_phase(HealRunPhase::Failed).await;
    let s = status(&run);
    assert_eq!(s.reason, Some(HealRunReason::SourceUnavailable));
    let message = s.message.clone().unwrap_or_default();
    assert!(
        message.contains("release-9.9") && message.contains("fix spec.source"),
        "{message}"
    );
    assert!(heal.jobs().await.is_empty());
    assert_eq!(calls.load(Ordering::SeqCst), 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn an_operator_with_default_settings_refuses_file_sources_and_healers_inside_the_cluster() {
    let (healer, calls) = reference_healer().await;
    let mut heal = Heal::new("healrun-url-policy", &syntax_project(), Hold::default()).await;
    heal.start_operator_with(&[]);
    heal.apply(heal.spec(&healer, json!({})));
    let run = heal.wait_phase(HealRunPhase::Failed).await;
    let s = status(&run);
    assert_eq!(s.reason, Some(HealRunReason::SourceUnavailable));
    assert!(
        s.message
            .as_deref()
            .unwrap_or_default()
            .contains("--allow-file-sources"),
        "{:?}",
        s.message
    );
    assert!(heal.jobs().await.is_empty());
    assert_eq!(calls.load(Ordering::SeqCst), 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_healer_url_inside_the_cluster_costs_the_cycle_with_the_setting_to_change() {
    let (healer, calls) = reference_healer().await;
    let mut heal = Heal::new("healrun-internal-healer", &syntax_project(), Hold::default()).await;
    heal.start_operator_with(&["--allow-file-sources"]);
    heal.apply(heal.spec(&healer, json!({"maxCycles": 1})));
    let run = heal.wait_phase(HealRunPhase::Failed).await;
    let s = status(&run);
    let call = s.cycles[0].healer_call.as_ref().expect("a call");
    assert_eq!(call.outcome, HealerOutcome::Error);
    assert!(
        call.reason
            .as_deref()
            .unwrap_or_default()
            .contains("--allow-cluster-internal-healers"),
        "{call:?}"
    );
    assert_eq!(calls.load(Ordering::SeqCst), 0, "no file was sent");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_repository_with_links_out_never_gets_the_operators_secrets_or_files_to_the_healer() {
    const SECRETS: [(&str, &str); 2] = [
        ("CODE_HEALER_TOKEN", "operator-healer-token-77aa11"),
        ("KUBEHEAL_GIT_PASSWORD", "operator-git-password-88bb22"),
    ];
    let outside = tempfile::tempdir().expect("a temp dir");
    let marker = "operator-disk-content-99cc33";
    std::fs::write(
        outside.path().join("secret.py"),
        format!("def broken(:\n    X = '{marker}'\n"),
    )
    .expect("write");
    let target = outside.path().join("secret.py").display().to_string();
    let test =
        "def test_leak():\n    import leak  # noqa: F401\n\n\ndef test_other():\n    import other  # noqa: F401\n";
    let mut heal = Heal::with_links(
        "healrun-hostile",
        &[("test_hostile.py", test)],
        &[("leak.py", "/proc/self/environ"), ("other.py", &target)],
        Hold::default(),
    )
    .await;
    let (healer, seen) = crate::support::http::recording_healer().await;
    heal.operator_env = SECRETS.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    heal.start_operator();
    heal.apply(heal.spec(&healer, json!({"maxCycles": 1})));
    heal.wait_phase(HealRunPhase::Failed).await;
    let requests = seen.lock().unwrap().clone();
    assert!(!requests.is_empty(), "the healer was asked");
    for request in &requests {
        for (name, value) in SECRETS {
            assert!(!request.contains(value), "the operator's {name} reached the healer");
        }
        assert!(
            !request.contains(marker),
            "a file on the operator's disk reached the healer"
        );
        let body: serde_json::Value = serde_json::from_str(request).expect("JSON");
        let files = body["failed_files"].as_object().expect("failed_files");
        assert!(
            !files.contains_key("leak.py") && !files.contains_key("other.py"),
            "{files:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn an_infrastructure_failure_stops_the_run_without_asking_the_healer() {
    let (healer, calls) = reference_healer().await;
    let mut heal = Heal::new("healrun-infra", &syntax_project(), Hold::default()).await;
    heal.start_operator();
    let mut spec = heal.spec(&healer, json!({}));
    spec["executor"]["image"] = json!("kubeheal-test/oom");
    heal.apply(spec);
    let run = heal.wait_phase(HealRunPhase::Failed).await;
    let s = status(&run);
    assert_eq!(s.reason, Some(HealRunReason::InfraFailure));
    assert!(
        s.message.as_deref().unwrap_or_default().contains("OOM_KILLED"),
        "{:?}",
        s.message
    );
    assert_eq!(calls.load(Ordering::SeqCst), 0);
    assert_eq!(s.healer_calls, 0);
    assert!(
        s.proposed_fix.is_none(),
        "no code fix is proposed for an infrastructure failure"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_healer_that_is_down_ends_the_run_as_healer_unavailable_with_a_proposed_fix() {
    let down = format!("http://{}/api/heal", free_port());
    // A logic bug: the built-in fixers have no fix, so only the (down) service could heal it.
    let mut heal = Heal::new("healrun-healer-down", &logic_project(), Hold::default()).await;
    heal.start_operator();
    heal.apply(heal.spec(&down, json!({"maxCycles": 2})));
    let run = heal
        .wait("failed with a proposed fix", |r| {
            r.status
                .as_ref()
                .is_some_and(|s| s.phase == Some(HealRunPhase::Failed) && s.proposed_fix.is_some())
        })
        .await;
    let s = status(&run);
    assert_eq!(s.reason, Some(HealRunReason::HealerUnavailable));
    assert_eq!(s.cycles.len(), 2);
    for cycle in &s.cycles {
        let call = cycle.healer_call.as_ref().expect("a call");
        assert_eq!(call.outcome, HealerOutcome::Unreachable);
        assert!(
            call.reason
                .as_deref()
                .unwrap_or_default()
                .contains("cannot reach the healer")
        );
    }
    assert_eq!(
        heal.jobs().await.len(),
        1,
        "the code did not change, so it is not run again"
    );
    let orders: Api<CodeFixDDS> = Api::namespaced(heal.client.clone(), &heal.ns.name);
    let order = orders
        .get(s.proposed_fix.as_deref().expect("a name"))
        .await
        .expect("the CodeFixDDS");
    assert!(
        order.spec.allowed_paths.iter().any(|p| p.ends_with("calc.py")),
        "{:?}",
        order.spec.allowed_paths
    );
    assert!(
        order.spec.instructions[0].contains("LOGIC error in"),
        "{:?}",
        order.spec.instructions
    );
    heal.wait_for_event("HealerUnavailable").await;
    heal.wait_for_event("HealerFailed").await;
    let warnings: Vec<String> = heal
        .events()
        .await
        .into_iter()
        .filter(|(t, _)| t == "Warning")
        .map(|(_, r)| r)
        .collect();
    assert!(warnings.contains(&"HealerFailed".to_owned()) && warnings.contains(&"HealerUnavailable".to_owned()));
}

#[tokio::test(flavor = "multi_thread")]
async fn an_operator_killed_mid_cycle_resumes_without_a_second_job_healer_call_or_commit() {
    let (healer, calls) = logic_healer().await;
    let hold = Hold::new(&["calc-c0-", "calc-c1-"]);
    let mut heal = Heal::new("healrun-crash", &logic_project(), hold).await;
    heal.start_operator();
    heal.apply(heal.spec(&healer, json!({})));

    // Killed while the baseline Job runs.
    heal.wait_for_job("calc-c0-").await;
    heal.kill_operator();
    heal.start_operator();
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(heal.jobs().await.len(), 1, "the restarted operator found its Job");
    heal.hold.release("calc-c0-");

    // Killed after the healer answered and the fix was committed, while cycle 1's Job runs.
    heal.wait_for_job("calc-c1-").await;
    heal.kill_operator();
    heal.start_operator();
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(heal.jobs().await.len(), 2);
    heal.hold.release("calc-c1-");

    let run = heal.wait_phase(HealRunPhase::Healed).await;
    assert_eq!(
        calls.load(Ordering::SeqCst),
        1,
        "the answered cycle was not asked again"
    );
    assert_eq!(status(&run).healer_calls, 1);
    let log = heal.branch_log("kubeheal/calc");
    assert_eq!(log.len(), 2, "exactly one fix commit on top of the source: {log:?}");
    assert_eq!(heal.jobs().await.len(), 2);
}

#[tokio::test(flavor = "multi_thread")]
async fn an_operator_killed_at_fifty_random_moments_heals_as_if_it_never_was() {
    let seed = std::env::var("KUBEHEAL_KILL_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| fastrand::u64(..));
    eprintln!("the kill moments come from seed {seed}: KUBEHEAL_KILL_SEED={seed} repeats them");
    let mut moments = fastrand::Rng::with_seed(seed);
    let (healer, calls) = logic_healer().await;
    let mut heal = Heal::new("healrun-kills", &logic_project(), Hold::default()).await;
    heal.start_operator();
    heal.apply(heal.spec(&healer, json!({})));
    let mut kills = 0;
    while kills < 50 {
        tokio::time::sleep(Duration::from_millis(moments.u64(0..400))).await;
        let ended = heal
            .runs()
            .get_opt(RUN)
            .await
            .ok()
            .flatten()
            .is_some_and(|r| r.status.as_ref().is_some_and(|s| s.phase == Some(HealRunPhase::Healed)));
        if ended {
            break;
        }
        heal.kill_operator();
        heal.start_operator();
        kills += 1;
    }
    let run = heal.wait_phase(HealRunPhase::Healed).await;
    let s = status(&run);
    eprintln!(
        "{kills} kills; the service was called {} time(s)",
        calls.load(Ordering::SeqCst)
    );
    // The same end as a run never interrupted: one cycle, one answer, one fix commit, one Job
    // per execution.
    assert_eq!((s.cycle, s.cycles.len(), s.healer_calls), (1, 1, 1), "seed {seed}");
    let log = heal.branch_log("kubeheal/calc");
    assert_eq!(log.len(), 2, "seed {seed}: one fix commit on the source: {log:?}");
    assert_eq!(
        s.cycles[0].patch.as_ref().and_then(|p| p.commit.clone()),
        Some(log[0].0.clone())
    );
    assert_eq!(heal.jobs().await.len(), 2, "seed {seed}: one Job for each execution");
    assert_eq!(heal.file_on_branch("kubeheal/calc", "calc.py"), LOGIC_FIXED.trim_end());
}

#[tokio::test(flavor = "multi_thread")]
async fn deleting_a_run_removes_its_clone_from_the_operators_disk() {
    let (healer, _) = logic_healer().await;
    let mut heal = Heal::new("healrun-finalizer", &logic_project(), Hold::default()).await;
    heal.start_operator();
    // Without a push the heal branch lives only in the clone, so the clone outlives the run...
    heal.apply(heal.spec(&healer, json!({"delivery": {"push": false}})));
    let run = heal.wait_phase(HealRunPhase::Healed).await;
    assert!(
        run.metadata
            .finalizers
            .iter()
            .flatten()
            .any(|f| f == "kubeheal.dev/cleanup"),
        "{:?}",
        run.metadata.finalizers
    );
    let clone = heal.work.path().join("cache").join(&heal.ns.name).join(RUN);
    assert!(clone.join(".git").exists(), "the clone holds the heal branch");
    // ...until the run is deleted.
    let out = heal
        .plane
        .kubectl(["delete", "hr", RUN, "-n", &heal.ns.name, "--wait=true", "--timeout=60s"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(
        !clone.exists(),
        "the finalizer removed the clone before the run was deleted"
    );
    assert!(heal.runs().get_opt(RUN).await.expect("a get").is_none());
}

/// The value of the gauge `kubeheal_leader` an operator serves on `listen` (`None` while it
/// does not answer).
async fn leader_gauge(listen: SocketAddr) -> Option<i64> {
    let text = crate::support::http::client()
        .get(format!("http://{listen}/metrics"))
        .send()
        .await
        .ok()?
        .text()
        .await
        .ok()?;
    text.lines()
        .find_map(|l| l.strip_prefix("kubeheal_leader "))
        .and_then(|v| v.trim().parse().ok())
}

/// Waits until the operator on `listen` says it leads (`true`) or follows (`false`).
async fn wait_leader(listen: SocketAddr, leading: bool, within: Duration) {
    let deadline = Instant::now() + within;
    while leader_gauge(listen).await != Some(i64::from(leading)) {
        assert!(
            Instant::now() < deadline,
            "the operator on {listen} never became {}",
            if leading { "the leader" } else { "a follower" }
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn of_two_operators_only_the_lease_holder_reconciles_and_the_other_takes_over() {
    let (healer, calls) = logic_healer().await;
    let hold = Hold::new(&["calc-c0-"]);
    let heal = Heal::new("healrun-leader", &logic_project(), hold).await;
    // The chart's Lease Role (and its binding of the chart's ServiceAccount), rendered for the
    // test's namespace as a release with leader election would install it.
    let role = heal
        .plane
        .helm_template(
            &heal.ns.name,
            &[
                "--set",
                "replicas=2",
                "--show-only",
                "templates/operator-leader-election-role.yaml",
            ],
        )
        .unwrap_or_else(|e| panic!("{e}"));
    let file = heal.work.path().join("leader-election-role.yaml");
    std::fs::write(&file, role).expect("write the Lease Role");
    let out = heal
        .plane
        .kubectl(["apply", "-n", &heal.ns.name, "-f", &file.display().to_string()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let out = heal.plane.kubectl([
        "create",
        "rolebinding",
        "kubeheal-operator-leader-election-test",
        "-n",
        &heal.ns.name,
        "--role=kubeheal-operator-leader-election",
        "--group=kubeheal:operators",
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let flags = [
        "--allow-file-sources",
        "--allow-cluster-internal-healers",
        "--leader-elect",
        "--lease-namespace",
        &heal.ns.name,
        "--lease-seconds",
        "4",
    ];
    let (first_at, second_at) = (free_port(), free_port());
    let mut first = heal.operator_process(&flags, first_at);
    wait_leader(first_at, true, Duration::from_secs(30)).await;
    let mut second = heal.operator_process(&flags, second_at);
    wait_leader(second_at, false, Duration::from_secs(30)).await;

    heal.apply(heal.spec(&healer, json!({})));
    heal.wait_for_job("calc-c0-").await;
    // The leader is killed while the baseline runs: the follower takes the Lease once it
    // expires, finds the Job, and heals the run, with nothing done twice.
    first.kill();
    wait_leader(second_at, true, Duration::from_secs(20)).await;
    heal.hold.release("calc-c0-");
    let run = heal.wait_phase(HealRunPhase::Healed).await;
    let s = status(&run);
    assert_eq!((s.cycles.len(), s.healer_calls), (1, 1));
    assert_eq!(calls.load(Ordering::SeqCst), 1, "the service was asked once");
    assert_eq!(heal.jobs().await.len(), 2, "one Job for each execution");
    assert_eq!(heal.branch_log("kubeheal/calc").len(), 2, "one fix commit");

    // SIGTERM: the leader finishes, releases the Lease and exits; the Lease has no holder.
    assert!(
        second.terminate(Duration::from_secs(20)),
        "the operator stopped on SIGTERM"
    );
    let leases: Api<k8s_openapi::api::coordination::v1::Lease> = Api::namespaced(heal.client.clone(), &heal.ns.name);
    let lease = leases.get("kubeheal-operator").await.expect("the Lease");
    let holder = lease.spec.and_then(|s| s.holder_identity).unwrap_or_default();
    assert!(
        holder.is_empty(),
        "the Lease was released on SIGTERM, not left to expire: held by {holder}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn shards_split_the_runs_between_operators_by_label() {
    let (healer, _) = logic_healer().await;
    let heal = Heal::new("healrun-shards", &logic_project(), Hold::default()).await;
    for (name, shard) in [(RUN, "a"), ("calc-b", "b")] {
        let manifest = json!({"apiVersion": "kubeheal.dev/v1alpha1", "kind": "HealRun",
                              "metadata": {"name": name, "labels": {"kubeheal.dev/shard": shard}},
                              "spec": heal.spec(&healer, json!({}))});
        let file = heal.work.path().join(format!("{name}.json"));
        std::fs::write(&file, manifest.to_string()).expect("write the manifest");
        let out = heal
            .plane
            .kubectl(["apply", "-n", &heal.ns.name, "-f", &file.display().to_string()]);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }
    let allow = ["--allow-file-sources", "--allow-cluster-internal-healers"];
    let shard_a = [&allow[..], &["--watch-label-selector", "kubeheal.dev/shard in (a)"]].concat();
    let _a = heal.operator_process(&shard_a, free_port());
    heal.wait_phase(HealRunPhase::Healed).await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    let other = heal.runs().get("calc-b").await.expect("the other run");
    assert!(
        other.status.is_none(),
        "shard a reconciled a run of shard b: {:?}",
        other.status
    );

    let main = [&allow[..], &["--watch-label-selector", "kubeheal.dev/shard notin (a)"]].concat();
    let _rest = heal.operator_process(&main, free_port());
    let deadline = Instant::now() + Duration::from_secs(150);
    loop {
        let run = heal.runs().get("calc-b").await.expect("the other run");
        if run.status.as_ref().and_then(|s| s.phase) == Some(HealRunPhase::Healed) {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the second shard never healed its run: {:?}",
            run.status
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

#[test]
fn a_selector_the_api_server_refuses_stops_the_operator_with_what_is_wrong() {
    let plane = control_plane();
    let ns = plane.namespace("healrun-bad-selector");
    bind_operator_role(plane);
    let out = Command::new(env!("CARGO_BIN_EXE_kubeheal"))
        .args([
            "operator",
            "--namespace",
            &ns.name,
            "--listen",
            &free_port().to_string(),
        ])
        .args(["--watch-label-selector", "kubeheal.dev/shard in a"])
        .env("KUBECONFIG", plane.kubeconfig_as("kubeheal-operator"))
        .env("KUBEHEAL_HEALER_LISTEN", "off")
        .output()
        .expect("the operator runs");
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("cannot list HealRuns with the label selector 'kubeheal.dev/shard in a'"),
        "{stderr}"
    );
}

/// Lets the `kubeheal:approvers` group (the harness user alice) decide on CodeFixDDS in the
/// test's namespace — what a platform team grants its reviewers.
pub(crate) fn grant_approvers(heal: &Heal) {
    grant_approvers_of(heal, "codefixdds");
}

/// [`grant_approvers`] for `resource` (`codefixdds` or `healertickets`).
pub(crate) fn grant_approvers_of(heal: &Heal, resource: &str) {
    let rbac = json!({"apiVersion": "v1", "kind": "List", "items": [
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
         "metadata": {"name": "kubeheal-approver"},
         "rules": [{"apiGroups": ["kubeheal.dev"], "resources": [resource],
                    "verbs": ["get", "list", "watch", "patch", "update", "approve"]}]},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
         "metadata": {"name": "kubeheal-approvers"},
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "kubeheal-approver"},
         "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "kubeheal:approvers"}]}
    ]});
    let file = heal.work.path().join("rbac.json");
    std::fs::write(&file, rbac.to_string()).expect("write RBAC");
    let out = heal
        .plane
        .kubectl(["apply", "-n", &heal.ns.name, "-f", &file.display().to_string()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

#[tokio::test(flavor = "multi_thread")]
async fn the_operators_identity_cannot_approve_a_codefixdds() {
    let plane = control_plane();
    bind_operator_role(plane);
    let ns = plane.namespace("operator-cannot-approve");
    let example = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/seed-002/codefixdds.yaml");
    let out = plane.kubectl(["apply", "-n", &ns.name, "-f", &example.display().to_string()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let approval = json!({"spec": {"approval": {"decision": "Approved", "approvedBy": "kubeheal-operator"}}});
    let out = plane.kubectl_as(
        "kubeheal-operator",
        [
            "patch",
            "codefixdds",
            "dds-fix-20260202-001",
            "-n",
            &ns.name,
            "--type",
            "merge",
            "-p",
            &approval.to_string(),
        ],
    );
    assert!(!out.status.success(), "the operator could set an approval");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("forbidden") && stderr.contains("cannot patch"),
        "{stderr}"
    );
    // It can read it (to see a decision) and create work orders, nothing else on them.
    let out = plane.kubectl_as("kubeheal-operator", ["get", "codefixdds", "-n", &ns.name]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

#[tokio::test(flavor = "multi_thread")]
async fn suspend_pauses_a_run_between_steps_and_cancel_ends_it_keeping_what_was_done() {
    let (healer, calls) = logic_healer().await;
    let hold = Hold::new(&["calc-c0-"]);
    let mut heal = Heal::new("healrun-suspend-cancel", &logic_project(), hold).await;
    heal.start_operator();
    heal.apply(heal.spec(&healer, json!({})));
    heal.wait_for_job("calc-c0-").await;
    let patch = |spec: serde_json::Value| {
        let out = heal.plane.kubectl([
            "patch",
            "hr",
            RUN,
            "-n",
            &heal.ns.name,
            "--type",
            "merge",
            "-p",
            &json!({ "spec": spec }).to_string(),
        ]);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    };

    // Suspended while the baseline runs: the Job finishes, nothing further happens.
    patch(json!({"suspend": true}));
    heal.wait("suspended", |r| {
        r.status.as_ref().is_some_and(|s| {
            s.conditions
                .iter()
                .any(|c| c.type_ == "Reconciling" && c.reason == "Suspended")
        })
    })
    .await;
    heal.hold.release("calc-c0-");
    tokio::time::sleep(Duration::from_secs(4)).await;
    let run = heal.runs().get(RUN).await.expect("the HealRun");
    assert!(status(&run).baseline.is_none(), "a suspended run takes no step");
    assert_eq!(calls.load(Ordering::SeqCst), 0);

    // Resumed: it picks up the finished Job and goes on.
    heal.hold.add("calc-c1-");
    patch(json!({"suspend": false}));
    heal.wait_for_job("calc-c1-").await;
    assert_eq!(calls.load(Ordering::SeqCst), 1);

    // Cancelled while cycle 1's Job is held: the commit stays, the run ends.
    patch(json!({"cancel": true}));
    let run = heal.wait_phase(HealRunPhase::Cancelled).await;
    let s = status(&run);
    assert_eq!(s.reason, Some(HealRunReason::Cancelled));
    let committed = s.cycles[0]
        .patch
        .as_ref()
        .and_then(|p| p.commit.clone())
        .expect("a commit");
    assert_eq!(
        heal.branch_log("kubeheal/calc")[0].0,
        committed,
        "what was done is kept"
    );
    // Cancel cannot be undone.
    let out = heal.plane.kubectl([
        "patch",
        "hr",
        RUN,
        "-n",
        &heal.ns.name,
        "--type",
        "merge",
        "-p",
        r#"{"spec":{"cancel":false}}"#,
    ]);
    assert!(!out.status.success());
}

/// The operator as the chart installs it: under the chart's ServiceAccount (a token from the
/// TokenRequest API, as its Pod would hold) with exactly the chart's RBAC and admission policies,
/// it heals a run end to end; and that identity can do nothing beyond its part.
#[tokio::test(flavor = "multi_thread")]
async fn under_the_charts_service_account_the_operator_heals_a_run_and_can_do_nothing_more() {
    let (healer, _) = logic_healer().await;
    let mut heal = Heal::new("healrun-chart-sa", &logic_project(), Hold::default()).await;
    let token = heal.as_charts_service_account();
    heal.start_operator();
    heal.apply(heal.spec(&healer, json!({})));
    let run = heal.wait_phase(HealRunPhase::Healed).await;
    assert_eq!(status(&run).cycles.len(), 1, "{:?}", status(&run).message);
    assert_eq!(heal.file_on_branch("kubeheal/calc", "calc.py"), LOGIC_FIXED.trim_end());

    let as_operator = |args: &[&str]| heal.plane.kubectl_with_token(&token, args);
    let ns = heal.ns.name.as_str();
    // What RBAC refuses it: enumerating or writing Secrets, deleting what people made, running
    // Pods of its own, and deciding on fixes.
    for (verb, resource) in [
        ("list", "secrets"),
        ("watch", "secrets"),
        ("create", "secrets"),
        ("delete", "secrets"),
        ("delete", "healruns.kubeheal.dev"),
        ("delete", "jobs.batch"),
        ("create", "pods"),
        ("create", "pods/exec"),
        ("patch", "codefixdds.kubeheal.dev"),
        ("patch", "healertickets.kubeheal.dev"),
        ("create", "rolebindings.rbac.authorization.k8s.io"),
    ] {
        let (resource, subresource) = resource.split_once('/').unwrap_or((resource, ""));
        let subresource = format!("--subresource={subresource}");
        let out = as_operator(&["auth", "can-i", verb, resource, &subresource, "-n", ns]);
        assert_eq!(
            String::from_utf8_lossy(&out.stdout).trim(),
            "no",
            "the chart's operator may {verb} {resource}"
        );
    }
    // What RBAC must allow for its finalizer, the admission policy refuses: a change of the spec.
    let out = as_operator(&[
        "patch",
        "healrun",
        RUN,
        "-n",
        ns,
        "--type=merge",
        "-p",
        r#"{"spec":{"maxCycles":1}}"#,
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "the operator changed a run's spec");
    assert!(
        stderr.contains("may not change the spec of healruns/calc") && stderr.contains("never the spec people wrote"),
        "{stderr}"
    );
    // Its metadata it may change (that is how the finalizer gets there).
    let out = as_operator(&["label", "healrun", RUN, "-n", ns, "kubeheal.dev/checked=yes"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}
