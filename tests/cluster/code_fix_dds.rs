//! CodeFixDDS work orders end to end: the real operator binary judges orders applied the way a
//! GitOps tool applies them (`kubectl apply --server-side`, in any order), people decide with
//! `kubeheal approve|reject` under their own identity, and an approved order is executed by a
//! HealRun through executor Jobs, gated on its real diff and committed with its trailers.

use std::net::SocketAddr;
use std::process::{Command, Output};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Router;
use axum::routing::post;
use kube::api::{Api, DeleteParams, ListParams};
use kubeheal::api::code_fix_dds::{CodeFixDDSStatus, CodeFixPhase, FixExecution};
use kubeheal::api::heal_run::{HealRunPhase, HealRunReason};
use kubeheal::api::{CodeFixDDS, HealRun};
use serde_json::json;

use crate::heal_run::{Heal, LOGIC_FIXED, REGRESS_TEST, free_port, grant_approvers, logic_project, status};
use crate::support::git::git;
use crate::support::node::Hold;

const DDS: &str = "DDS-20261122-CODE-001";

fn orders(heal: &Heal) -> Api<CodeFixDDS> {
    Api::namespaced(heal.client.clone(), &heal.ns.name)
}

/// Waits until order `name` satisfies `done`; fails with its status and the operator's log.
async fn wait_order(heal: &Heal, name: &str, what: &str, done: impl Fn(&CodeFixDDSStatus) -> bool) -> CodeFixDDS {
    let deadline = Instant::now() + Duration::from_secs(150);
    loop {
        let order = orders(heal).get_opt(name).await.ok().flatten();
        if let Some(order) = &order
            && order.status.as_ref().is_some_and(&done)
        {
            return order.clone();
        }
        if Instant::now() > deadline {
            panic!(
                "CodeFixDDS {name} never became {what}; status: {}\noperator log:\n{}",
                serde_json::to_string_pretty(&order.and_then(|o| o.status)).unwrap_or_default(),
                heal.operator.as_ref().map(|p| p.log_tail(80)).unwrap_or_default()
            );
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

async fn wait_phase(heal: &Heal, name: &str, phase: CodeFixPhase) -> CodeFixDDS {
    wait_order(heal, name, &format!("{phase:?}"), |s| s.phase == Some(phase)).await
}

fn reason(order: &CodeFixDDS) -> String {
    order.status.as_ref().and_then(|s| s.reason.clone()).unwrap_or_default()
}

/// `kubectl apply --server-side` of `manifest` (YAML or JSON text), as a GitOps tool applies.
fn apply(heal: &Heal, manifest: &str) {
    let file = heal.work.path().join(format!("manifest-{}.yaml", fastrand_name()));
    std::fs::write(&file, manifest).expect("write the manifest");
    let out = heal.plane.kubectl([
        "apply",
        "--server-side",
        "--field-manager=gitops",
        "-n",
        &heal.ns.name,
        "-f",
        &file.display().to_string(),
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

fn fastrand_name() -> String {
    format!(
        "{}",
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .expect("time")
            .as_nanos()
    )
}

fn example(file: &str) -> String {
    std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("examples/seed-002")
            .join(file),
    )
    .expect("the example")
}

/// Seed 002's example HealRun with a source that cannot be cloned: the run fails at once, the
/// way the seed's DDS-20260202-CODE-001 failed.
fn failing_example_run() -> String {
    example("healrun.yaml").replace(
        "https://git.example.com/acme/ai-system.git",
        "file:///nonexistent/kubeheal-test/ai-system.git",
    )
}

/// `kubeheal ARGS` run as `user` (their kubeconfig).
fn kubeheal_as(heal: &Heal, user: &str, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_kubeheal"))
        .args(args)
        .env("KUBECONFIG", heal.plane.kubeconfig_as(user))
        .output()
        .expect("kubeheal runs")
}

fn kubectl_text(heal: &Heal, args: &[&str]) -> String {
    let mut all = args.to_vec();
    all.extend(["-n", heal.ns.name.as_str()]);
    let out = heal.plane.kubectl(all);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[tokio::test(flavor = "multi_thread")]
async fn seed_002s_example_pair_applied_in_either_order_ends_proposed_and_each_rule_is_rechecked() {
    // Order first: invalid until its source exists and has failed, valid then without an edit.
    let mut heal = Heal::new("cfd-gitops-order-first", &logic_project(), Hold::default()).await;
    heal.start_operator();
    apply(&heal, &example("codefixdds.yaml"));
    let name = "dds-fix-20260202-001";
    let order = wait_phase(&heal, name, CodeFixPhase::Invalid).await;
    assert_eq!(reason(&order), "SourceDdsFailed");
    let message = order
        .status
        .as_ref()
        .and_then(|s| s.message.clone())
        .unwrap_or_default();
    assert!(message.contains("spec.ddsId: DDS-20260202-CODE-001"), "{message}");
    apply(&heal, &failing_example_run());
    let order = wait_phase(&heal, name, CodeFixPhase::Proposed).await;
    let validation = &order.status.as_ref().expect("a status").validation;
    assert_eq!(validation.len(), 10);
    assert!(validation.iter().all(|r| r.passed), "{validation:?}");
    let table = kubectl_text(&heal, &["get", "cfd"]);
    assert!(
        table.contains("Proposed") && table.contains("AwaitingDecision"),
        "{table}"
    );
    let described = kubectl_text(&heal, &["describe", "cfd", name]);
    assert!(
        described.contains("No Duplicate") || described.contains("NoDuplicate"),
        "{described}"
    );

    // Rule 6: the source narrows its scope; the order is re-checked and says what to change.
    let runs: Api<HealRun> = Api::namespaced(heal.client.clone(), &heal.ns.name);
    let narrow = |paths: serde_json::Value, files: u32| {
        let patch = json!({"spec": {"policy": {"allowedPaths": paths, "maxFilesChanged": files}}}).to_string();
        let out = heal.plane.kubectl([
            "patch",
            "hr",
            "dds-20260202-code-001",
            "-n",
            &heal.ns.name,
            "--type",
            "merge",
            "-p",
            &patch,
        ]);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    };
    narrow(json!(["lib/"]), 5);
    let order = wait_phase(&heal, name, CodeFixPhase::Invalid).await;
    assert_eq!(reason(&order), "AllowedPathsSubset");
    // Rule 7: the source allows fewer files than the order.
    narrow(json!(["src/", "tests/"]), 1);
    let order = wait_order(&heal, name, "ConstraintsNotLooser", |s| {
        s.reason.as_deref() == Some("ConstraintsNotLooser")
    })
    .await;
    assert_eq!(order.status.and_then(|s| s.phase), Some(CodeFixPhase::Invalid));
    narrow(json!(["src/", "tests/"]), 5);
    wait_phase(&heal, name, CodeFixPhase::Proposed).await;
    assert!(runs.get("dds-20260202-code-001").await.is_ok());

    // Rule 10: a second order for the same source is invalid, naming the one that stands, and
    // becomes valid when that one is deleted.
    let second = example("codefixdds.yaml")
        .replace("name: dds-fix-20260202-001", "name: dds-fix-20260202-002")
        .replace("id: DDS-FIX-20260202-001", "id: DDS-FIX-20260202-002");
    apply(&heal, &second);
    let order = wait_phase(&heal, "dds-fix-20260202-002", CodeFixPhase::Invalid).await;
    assert_eq!(reason(&order), "NoDuplicate");
    let message = order.status.and_then(|s| s.message).unwrap_or_default();
    assert!(message.contains("dds-fix-20260202-001"), "{message}");
    orders(&heal)
        .delete(name, &DeleteParams::default())
        .await
        .expect("delete");
    wait_phase(&heal, "dds-fix-20260202-002", CodeFixPhase::Proposed).await;

    // Source first: valid as soon as the order arrives.
    let mut heal = Heal::new("cfd-gitops-source-first", &logic_project(), Hold::default()).await;
    heal.start_operator();
    apply(&heal, &failing_example_run());
    let runs: Api<HealRun> = Api::namespaced(heal.client.clone(), &heal.ns.name);
    let deadline = Instant::now() + Duration::from_secs(60);
    while runs
        .get("dds-20260202-code-001")
        .await
        .ok()
        .and_then(|r| r.status)
        .and_then(|s| s.phase)
        != Some(HealRunPhase::Failed)
    {
        assert!(Instant::now() < deadline, "the example run never failed");
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    apply(&heal, &example("codefixdds.yaml"));
    wait_phase(&heal, name, CodeFixPhase::Proposed).await;
}

/// A Code Healer API on `addr` that answers every request with `files` and keeps the request
/// bodies.
async fn healer_on(addr: SocketAddr, files: serde_json::Value) -> Arc<Mutex<Vec<String>>> {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let record = seen.clone();
    let app = Router::new().route(
        "/api/heal",
        post(move |body: String| {
            record.lock().expect("the record").push(body);
            let files = files.clone();
            async move {
                axum::Json(json!({"status": "healed", "modified_files": files,
                                  "changes_summary": "add adds", "confidence": 0.9}))
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind(addr).await.expect("the healer's port");
    tokio::spawn(async move { axum::serve(listener, app).await.expect("the healer runs") });
    seen
}

/// A HealRun (declaring `DDS`) whose healer is down at `healer` fails with a proposed fix.
async fn failed_run(heal: &Heal, healer: &str) -> HealRun {
    heal.apply(heal.spec(healer, json!({"maxCycles": 1, "ddsId": DDS})));
    heal.wait("failed with a proposed fix", |r| {
        r.status
            .as_ref()
            .is_some_and(|s| s.phase == Some(HealRunPhase::Failed) && s.proposed_fix.is_some())
    })
    .await
}

fn human_order(name: &str, id: &str, paths: &[&str], extra: serde_json::Value) -> String {
    let mut order = json!({"apiVersion": "kubeheal.dev/v1alpha1", "kind": "CodeFixDDS", "metadata": {"name": name},
        "spec": {"id": id, "version": 2, "type": "code_fix", "project": "calc",
                 "goal": format!("Fix execution failure in {DDS}: add subtracts"),
                 "instructions": ["make add return the sum of its arguments"],
                 "allowedPaths": paths, "tool": "healer",
                 "constraints": {"maxFilesChanged": 1, "noNewDependencies": true, "noRefactor": true},
                 "sourceDds": DDS,
                 "errorContext": {"originalDds": DDS, "errorMessage": "assert -1 == 5", "failedAt": "2026-11-22T10:00:00Z"}}});
    for (k, v) in extra.as_object().expect("an object") {
        order["spec"][k] = v.clone();
    }
    order.to_string()
}

#[tokio::test(flavor = "multi_thread")]
async fn an_approved_order_is_executed_gated_on_its_real_diff_and_committed_with_its_trailers() {
    let healer_addr = free_port();
    let healer = format!("http://{healer_addr}/api/heal");
    let mut heal = Heal::new("cfd-execute", &logic_project(), Hold::default()).await;
    grant_approvers(&heal);
    heal.start_operator();
    failed_run(&heal, &healer).await;
    apply(
        &heal,
        &human_order("fix-add", "DDS-FIX-20261122-001", &["calc.py"], json!({})),
    );
    wait_phase(&heal, "fix-add", CodeFixPhase::Proposed).await;
    let runs: Api<HealRun> = Api::namespaced(heal.client.clone(), &heal.ns.name);
    assert!(
        runs.get_opt("fix-add-exec").await.expect("get").is_none(),
        "nothing runs before a decision"
    );

    // The healer is back; alice approves as herself.
    let seen = healer_on(healer_addr, json!({"calc.py": LOGIC_FIXED})).await;
    let out = kubeheal_as(
        &heal,
        "alice",
        &[
            "approve",
            "cfd",
            "fix-add",
            "-n",
            &heal.ns.name,
            "--reason",
            "scoped to calc.py",
        ],
    );
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(said.contains("approved by alice"), "{said}");
    // A crash once the execution run exists: the restarted operator creates no second run,
    // Job or commit.
    let deadline = Instant::now() + Duration::from_secs(60);
    while runs.get_opt("fix-add-exec").await.expect("get").is_none() {
        assert!(Instant::now() < deadline, "the execution run was never created");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    heal.kill_operator();
    heal.start_operator();

    let order = wait_phase(&heal, "fix-add", CodeFixPhase::Executed).await;
    let s = order.status.clone().expect("a status");
    assert_eq!(s.approved_by.as_deref(), Some("alice"));
    let execution = s.execution.expect("an execution");
    assert_eq!(execution.heal_run.as_deref(), Some("fix-add-exec"));
    assert_eq!(execution.branch.as_deref(), Some("kubeheal/fix-add"));
    assert_eq!(execution.files_changed, ["calc.py"]);
    let commit = execution.commit.expect("a commit");
    assert!(execution.job_name.is_some_and(|j| j.starts_with("fix-add-exec-c1-")));
    assert_eq!(
        heal.file_on_branch("kubeheal/fix-add", "calc.py").trim_end(),
        LOGIC_FIXED.trim_end()
    );
    let message = git(&heal.origin, &["log", "-1", "--format=%B", &commit]);
    assert!(message.starts_with("[AI-AGENT] "), "{message}");
    assert!(message.contains("Kubeheal-DDS: DDS-FIX-20261122-001"), "{message}");
    assert!(message.contains("Approved-by: alice"), "{message}");
    let fixes = git(&heal.origin, &["rev-list", "--count", "main..kubeheal/fix-add"]);
    assert_eq!(fixes.trim(), "1", "one commit, made once");
    let owned = runs
        .list(&ListParams::default().labels("kubeheal.dev/codefixdds=fix-add"))
        .await
        .expect("list");
    assert_eq!(owned.items.len(), 1, "one execution run");
    let jobs: Vec<String> = heal
        .jobs()
        .await
        .into_iter()
        .filter(|j| j.starts_with("fix-add-exec-"))
        .collect();
    assert_eq!(
        jobs.len(),
        2,
        "the baseline and the verifying build, once each: {jobs:?}"
    );
    // The healer was given the order as its task.
    let bodies = seen.lock().expect("the record").clone();
    assert!(
        bodies
            .iter()
            .any(|b| b.contains("Work order DDS-FIX-20261122-001") && b.contains("make add return the sum")),
        "{bodies:?}"
    );
}

/// Waits until order `name` fails `ConstraintViolated` with a violation `violated` accepts (its
/// execution run's status is printed when the reason differs); returns its execution.
async fn refused_for(heal: &Heal, name: &str, violated: impl Fn(&str) -> bool) -> FixExecution {
    let order = wait_phase(heal, name, CodeFixPhase::Failed).await;
    let runs: Api<HealRun> = Api::namespaced(heal.client.clone(), &heal.ns.name);
    let run = runs.get(&format!("{name}-exec")).await.expect("the execution run");
    assert_eq!(
        reason(&order),
        "ConstraintViolated",
        "{}",
        serde_json::to_string_pretty(&run.status).unwrap_or_default()
    );
    let execution = order.status.and_then(|s| s.execution).expect("an execution");
    assert!(
        execution.constraint_violations.iter().any(|v| violated(v)),
        "{:?}",
        execution.constraint_violations
    );
    execution
}

#[tokio::test(flavor = "multi_thread")]
async fn a_diff_that_breaks_the_orders_constraints_is_refused_with_the_violation_and_nothing_is_committed() {
    let healer_addr = free_port();
    let healer = format!("http://{healer_addr}/api/heal");
    let mut heal = Heal::new("cfd-violation", &logic_project(), Hold::default()).await;
    grant_approvers(&heal);
    heal.start_operator();
    failed_run(&heal, &healer).await;
    // The order allows one file; the healer's diff changes two (both inside its paths).
    apply(
        &heal,
        &human_order(
            "one-file",
            "DDS-FIX-20261122-002",
            &["calc.py", "test_calc.py"],
            json!({}),
        ),
    );
    wait_phase(&heal, "one-file", CodeFixPhase::Proposed).await;
    let test_file = format!("{REGRESS_TEST}\n\ndef test_add_more():\n    assert add(1, 1) == 2\n");
    healer_on(healer_addr, json!({"calc.py": LOGIC_FIXED, "test_calc.py": test_file})).await;
    let out = kubeheal_as(&heal, "alice", &["approve", "cfd", "one-file", "-n", &heal.ns.name]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let execution = refused_for(&heal, "one-file", |v| v == "2 files changed; at most 1 are allowed").await;
    assert_eq!(execution.commit, None);
    assert!(heal.branch_log("kubeheal/one-file").is_empty(), "nothing committed");
}

#[tokio::test(flavor = "multi_thread")]
async fn rejected_expired_and_unknown_tool_orders_never_run() {
    let mut heal = Heal::new("cfd-never-run", &logic_project(), Hold::default()).await;
    grant_approvers(&heal);
    heal.start_operator();
    // Two failed sources: the seed's example run, and another declaring DDS.
    apply(&heal, &failing_example_run());
    apply(
        &heal,
        &failing_example_run()
            .replace("name: dds-20260202-code-001", "name: other-run")
            .replace("ddsId: DDS-20260202-CODE-001", &format!("ddsId: {DDS}")),
    );
    let runs: Api<HealRun> = Api::namespaced(heal.client.clone(), &heal.ns.name);

    // Rejected, with the reason kubeheal insists on.
    apply(
        &heal,
        &human_order("no", "DDS-FIX-20261122-003", &["src/calculator.py"], json!({})),
    );
    wait_phase(&heal, "no", CodeFixPhase::Proposed).await;
    let out = kubeheal_as(&heal, "alice", &["reject", "cfd", "no", "-n", &heal.ns.name]);
    assert!(!out.status.success(), "a rejection without a reason");
    assert!(String::from_utf8_lossy(&out.stderr).contains("--reason"));
    let out = kubeheal_as(
        &heal,
        "alice",
        &["reject", "cfd", "no", "-n", &heal.ns.name, "--reason", "wrong file"],
    );
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let order = wait_phase(&heal, "no", CodeFixPhase::Rejected).await;
    assert!(
        order
            .status
            .and_then(|s| s.message)
            .unwrap_or_default()
            .contains("wrong file")
    );
    // A decision cannot change.
    let out = kubeheal_as(&heal, "alice", &["approve", "cfd", "no", "-n", &heal.ns.name]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("already decided"));

    // Expired: not decided in time; a late approval does not run it.
    let late = human_order(
        "late",
        "DDS-FIX-20261122-004",
        &["src/calculator.py"],
        json!({"approvalDeadline": "3s", "sourceDds": "HealRun/dds-20260202-code-001",
               "goal": "Fix execution failure in HealRun/dds-20260202-code-001",
               "errorContext": {"originalDds": "HealRun/dds-20260202-code-001", "errorMessage": "boom",
                                "failedAt": "2026-11-22T10:00:00Z"}}),
    );
    apply(&heal, &late);
    let order = wait_phase(&heal, "late", CodeFixPhase::Expired).await;
    assert_eq!(reason(&order), "DeadlineExpired");
    let approval = json!({"spec": {"approval": {"decision": "Approved", "approvedBy": "alice"}}}).to_string();
    let out = heal.plane.kubectl_as(
        "alice",
        [
            "patch",
            "cfd",
            "late",
            "-n",
            &heal.ns.name,
            "--type",
            "merge",
            "-p",
            &approval,
        ],
    );
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));

    // Seed 002's own example names the tool aider, which is not an executor this operator has:
    // approved, it fails saying so, without running.
    apply(&heal, &example("codefixdds.yaml"));
    wait_phase(&heal, "dds-fix-20260202-001", CodeFixPhase::Proposed).await;
    let out = kubeheal_as(
        &heal,
        "alice",
        &["approve", "cfd", "dds-fix-20260202-001", "-n", &heal.ns.name],
    );
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let order = wait_phase(&heal, "dds-fix-20260202-001", CodeFixPhase::Failed).await;
    assert_eq!(reason(&order), "ToolUnavailable");

    let order = orders(&heal).get("late").await.expect("the order");
    assert_eq!(order.status.and_then(|s| s.phase), Some(CodeFixPhase::Expired));
    let mut names: Vec<String> = runs
        .list(&ListParams::default())
        .await
        .expect("list")
        .items
        .iter()
        .map(|r| r.metadata.name.clone().unwrap_or_default())
        .collect();
    names.sort();
    assert_eq!(names, ["dds-20260202-code-001", "other-run"], "no order ran");
    let source = runs.get("dds-20260202-code-001").await.expect("the run");
    assert_eq!(status(&source).reason, Some(HealRunReason::SourceUnavailable));

    // Nobody but the operator may borrow an approval: a HealRun naming the approved order, or an
    // order claiming a run asked it, is refused by the API server — even from a cluster admin.
    let borrowed = failing_example_run()
        .replace("name: dds-20260202-code-001", "name: borrowed")
        .replace(
            "  ddsId: DDS-20260202-CODE-001\n",
            "  workOrder: dds-fix-20260202-001\n",
        );
    let file = heal.work.path().join("borrowed.yaml");
    std::fs::write(&file, &borrowed).expect("write");
    let out = heal
        .plane
        .kubectl(["apply", "-n", &heal.ns.name, "-f", &file.display().to_string()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "a HealRun borrowed an approval");
    assert!(
        stderr.contains("spec.workOrder is written by kubeheal's operator only"),
        "{stderr}"
    );
    let forged = human_order(
        "forged",
        "DDS-FIX-20261122-005",
        &["src/calculator.py"],
        json!({"sourceRef": {"kind": "HealRun", "name": "other-run", "cycle": 1}}),
    );
    let file = heal.work.path().join("forged.json");
    std::fs::write(&file, &forged).expect("write");
    let out = heal
        .plane
        .kubectl(["apply", "-n", &heal.ns.name, "-f", &file.display().to_string()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "an order claimed a run asked it");
    assert!(
        stderr.contains("spec.sourceRef is written by kubeheal's operator only"),
        "{stderr}"
    );
}

/// A HealRun `name` over this repository that fails at once (its healer is down at `healer`):
/// the failed source a tool's order answers.
fn failed_source(heal: &Heal, name: &str, healer: &str) -> String {
    json!({"apiVersion": "kubeheal.dev/v1alpha1", "kind": "HealRun", "metadata": {"name": name},
           "spec": heal.spec(healer, json!({"maxCycles": 1}))})
    .to_string()
}

/// An order for `tool` answering the failed HealRun `source`, allowed to change calc.py only.
fn tool_order(name: &str, id: &str, source: &str, tool: &str) -> String {
    let source = format!("HealRun/{source}");
    human_order(
        name,
        id,
        &["calc.py"],
        json!({"tool": tool, "sourceDds": source, "goal": format!("Fix execution failure in {source}: add subtracts"),
               "errorContext": {"originalDds": source, "errorMessage": "assert -1 == 5", "failedAt": "2026-11-22T10:00:00Z"}}),
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn an_order_for_a_configured_tool_runs_its_image_over_the_checkout_and_only_a_diff_within_the_order_is_committed()
{
    use crate::support::node::publish_image;
    let healer = format!("http://{}/api/heal", free_port());
    let mut heal = Heal::new("cfd-tool", &logic_project(), Hold::default()).await;
    grant_approvers(&heal);
    // Three tools, as images with entrypoints: one fixes calc.py when given the task and its key,
    // one also writes a file the order does not allow, one fails printing its key.
    let image = |tool: &str| format!("kubeheal-test/{tool}-{}", heal.ns.name);
    let write_fix = format!("cat > calc.py <<'PY'\n{LOGIC_FIXED}PY\n");
    publish_image(
        &image("fixer"),
        &format!(
            "case \"$KUBEHEAL_TASK\" in *'make add return the sum'*) ;; *) echo \"no task: $KUBEHEAL_TASK\" >&2; exit 2;; esac\n\
             [ \"$MODEL_KEY\" = fixer-key-0123456789 ] || {{ echo 'no key' >&2; exit 3; }}\n{write_fix}"
        ),
    );
    publish_image(
        &image("sprawler"),
        &format!("{write_fix}echo 'from setuptools import setup' > setup.py\n"),
    );
    publish_image(
        &image("broken"),
        "echo \"the model refused the key $MODEL_KEY\" >&2; exit 4\n",
    );
    // One that leaves git configuration behind for the step that reports its changes to run.
    let marker = heal.work.path().join("the-report-step-ran-the-tools-filter");
    publish_image(
        &image("sneaky"),
        &format!(
            "git config filter.sneak.clean 'touch {}; cat'\necho '* filter=sneak' > .gitattributes\n{write_fix}",
            marker.display()
        ),
    );
    for (tool, key) in [("fixer", "fixer-key-0123456789"), ("broken", "broken-key-9876543210")] {
        let secret = json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": format!("kubeheal-tool-{tool}")},
                            "stringData": {"MODEL_KEY": key}});
        apply(&heal, &secret.to_string());
    }
    let tools: Vec<String> = ["fixer", "sprawler", "broken", "sneaky"]
        .iter()
        .map(|t| format!("--tool={t}={}", image(t)))
        .collect();
    let mut flags = vec!["--allow-file-sources", "--allow-cluster-internal-healers"];
    flags.extend(tools.iter().map(String::as_str));
    heal.start_operator_with(&flags);
    for source in ["src-fixer", "src-sprawler", "src-broken", "src-sneaky"] {
        apply(&heal, &failed_source(&heal, source, &healer));
    }
    let orders_of = [
        ("by-fixer", "DDS-FIX-20261123-001", "src-fixer", "fixer"),
        ("by-sprawler", "DDS-FIX-20261123-002", "src-sprawler", "sprawler"),
        ("by-broken", "DDS-FIX-20261123-003", "src-broken", "broken"),
        ("by-sneaky", "DDS-FIX-20261123-004", "src-sneaky", "sneaky"),
    ];
    for (name, id, source, tool) in orders_of {
        apply(&heal, &tool_order(name, id, source, tool));
    }
    for (name, ..) in orders_of {
        wait_phase(&heal, name, CodeFixPhase::Proposed).await;
        let out = kubeheal_as(&heal, "alice", &["approve", "cfd", name, "-n", &heal.ns.name]);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }

    // The fixer's change is gated, committed with the order's trailers and verified by a build.
    let order = wait_phase(&heal, "by-fixer", CodeFixPhase::Executed).await;
    let execution = order.status.and_then(|s| s.execution).expect("an execution");
    assert_eq!(execution.files_changed, ["calc.py"]);
    let commit = execution.commit.expect("a commit");
    assert_eq!(
        heal.file_on_branch("kubeheal/by-fixer", "calc.py").trim_end(),
        LOGIC_FIXED.trim_end()
    );
    let message = git(&heal.origin, &["log", "-1", "--format=%B", &commit]);
    assert!(message.contains("Kubeheal-DDS: DDS-FIX-20261123-001"), "{message}");
    assert!(message.contains("Approved-by: alice"), "{message}");
    let runs: Api<HealRun> = Api::namespaced(heal.client.clone(), &heal.ns.name);
    let run = runs.get("by-fixer-exec").await.expect("the execution run");
    let call = status(&run).cycles[0].healer_call.clone().expect("a healer call");
    assert_eq!(call.healer, "fixer");

    // The sprawler's diff leaves the order's paths: refused, nothing committed.
    let execution = refused_for(&heal, "by-sprawler", |v| v.contains("setup.py")).await;
    assert_eq!(execution.commit, None);
    assert!(heal.branch_log("kubeheal/by-sprawler").is_empty(), "nothing committed");

    // The broken tool fails saying what it printed, with its key redacted everywhere.
    let order = wait_phase(&heal, "by-broken", CodeFixPhase::Failed).await;
    let run = runs.get("by-broken-exec").await.expect("the execution run");
    let said = serde_json::to_string(&(&order.status, &run.status)).expect("json");
    assert!(said.contains("the model refused the key"), "{said}");
    assert!(!said.contains("broken-key-9876543210"), "the tool's key leaked: {said}");
    let events = kubectl_text(&heal, &["get", "events", "-o", "json"]);
    assert!(
        !events.contains("broken-key-9876543210"),
        "the tool's key leaked into an Event"
    );

    // The sneaky tool's filter never runs: its change is read with the repository's untouched
    // copy, and its .gitattributes is a file outside the order's paths like any other.
    refused_for(&heal, "by-sneaky", |v| v.contains(".gitattributes")).await;
    assert!(!marker.exists(), "the report step ran a filter the tool configured");
}
