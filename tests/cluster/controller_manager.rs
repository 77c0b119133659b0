//! The harness's kube-controller-manager: Jobs get Pods, and objects owned by a HealRun are
//! garbage-collected with it — the two behaviours the executor and the log store rely on.

use std::time::{Duration, Instant};

use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{ConfigMap, Pod};
use kube::Resource;
use kube::api::{Api, DeleteParams, ListParams, PostParams};
use kubeheal::api::HealRun;
use serde_json::json;

use crate::support::cluster::control_plane;

async fn eventually<F, Fut>(what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = Instant::now() + Duration::from_secs(60);
    while !check().await {
        assert!(Instant::now() < deadline, "gave up after 60 s waiting until {what}");
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

#[tokio::test]
async fn objects_owned_by_a_deleted_heal_run_are_garbage_collected() {
    let plane = control_plane();
    plane.ensure_controller_manager();
    let ns = plane.namespace("gc-owned-by-healrun");
    let client = plane.client().await;
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/healrun.yaml");
    let out = plane.kubectl([
        "apply",
        "--server-side",
        "-n",
        &ns.name,
        "-f",
        &path.display().to_string(),
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));

    let runs = Api::<HealRun>::namespaced(client.clone(), &ns.name);
    let run = runs.get("payments-api").await.expect("the HealRun exists");
    let owner = run.controller_owner_ref(&()).expect("a HealRun can own objects");
    let logs: ConfigMap = serde_json::from_value(json!({
        "metadata": {"name": "payments-api-logs", "ownerReferences": [owner]},
        "data": {"cycle-1.log": "FAILED tests/test_api.py::test_refund"}
    }))
    .expect("a ConfigMap");
    let config_maps = Api::<ConfigMap>::namespaced(client.clone(), &ns.name);
    config_maps
        .create(&PostParams::default(), &logs)
        .await
        .expect("the owned ConfigMap is created");

    runs.delete("payments-api", &DeleteParams::background())
        .await
        .expect("the HealRun is deleted");
    eventually("the owned ConfigMap is collected", || async {
        matches!(config_maps.get_opt("payments-api-logs").await, Ok(None))
    })
    .await;
}

#[tokio::test]
async fn a_job_gets_a_pod_from_the_job_controller() {
    let plane = control_plane();
    plane.ensure_controller_manager();
    let ns = plane.namespace("job-gets-pod");
    let client = plane.client().await;
    let job: Job = serde_json::from_value(json!({
        "metadata": {"name": "probe"},
        "spec": {
            "backoffLimit": 0,
            "template": {"spec": {
                "restartPolicy": "Never",
                "automountServiceAccountToken": false,
                "containers": [{"name": "build", "image": "python:3.12-slim", "command": ["true"]}]
            }}
        }
    }))
    .expect("a Job");
    Api::<Job>::namespaced(client.clone(), &ns.name)
        .create(&PostParams::default(), &job)
        .await
        .expect("the Job is created");
    let pods = Api::<Pod>::namespaced(client, &ns.name);
    eventually("the Job has a Pod", || async {
        pods.list(&ListParams::default().labels("job-name=probe"))
            .await
            .is_ok_and(|list| !list.items.is_empty())
    })
    .await;
}
