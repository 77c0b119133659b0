//! `spec.verify.openapi` in a cluster: the build passes, the build container starts the service,
//! and the probe container — kubeheal's image as a native sidecar, sharing the Pod's network and
//! workspace — calls it from its OpenAPI document; a failing endpoint is healed like a failing
//! test. The project is `examples/python-service` (its tests pass; one endpoint answers 500).

use std::path::Path;

use k8s_openapi::api::batch::v1::Job;
use kube::Api;
use kubeheal::api::heal_run::{HealRunPhase, HealRunReason};
use serde_json::json;

use crate::heal_run::{Heal, reference_healer, status};
use crate::support::node::Hold;

/// The image the tests' node runs as kubeheal's own (the probe container).
const PROBE_IMAGE: &str = "kubeheal-test/kubeheal";

fn service_project() -> Vec<(String, String)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/python-service");
    ["app.py", "test_app.py", "openapi.json"]
        .iter()
        .map(|name| {
            let text = std::fs::read_to_string(dir.join(name)).expect("the example's file");
            (name.to_string(), text)
        })
        .collect()
}

fn verify(port: u16) -> serde_json::Value {
    json!({"openapi": {
        "document": "openapi.json",
        "start": format!("PORT={port} python3 app.py"),
        "baseUrl": format!("http://127.0.0.1:{port}"),
        "readyTimeoutSeconds": 20, "callTimeoutSeconds": 10,
    }})
}

#[tokio::test(flavor = "multi_thread")]
async fn a_run_whose_service_answers_500_after_the_tests_pass_is_healed_when_the_fix_makes_it_answer() {
    let (healer, _) = reference_healer().await;
    let files = service_project();
    let files: Vec<(&str, &str)> = files.iter().map(|(n, t)| (n.as_str(), t.as_str())).collect();
    let mut heal = Heal::new("healrun-verify", &files, Hold::default()).await;
    heal.start_operator_with(&[
        "--allow-file-sources",
        "--allow-cluster-internal-healers",
        "--probe-image",
        PROBE_IMAGE,
    ]);
    let port = crate::heal_run::free_port().port();
    heal.apply(heal.spec(&healer, json!({"verify": verify(port)})));
    let run = heal.wait_phase(HealRunPhase::Healed).await;
    let status = status(&run);
    assert_eq!(
        status.cycle,
        1,
        "{}",
        serde_json::to_string_pretty(status).unwrap_or_default()
    );

    // The baseline's tests passed and its endpoint failed; the fix's execution called it again.
    let baseline = status.baseline.as_ref().expect("a baseline");
    assert_eq!(baseline.envelope.exit_code, Some(0), "the tests passed");
    let endpoints: Vec<(&str, u16)> = baseline
        .endpoint_calls
        .iter()
        .map(|c| (c.endpoint.as_str(), c.http_status))
        .collect();
    assert_eq!(endpoints, [("GET /health", 200), ("GET /items/{item_id}", 500)]);
    let report = &baseline.bug_reports[0];
    assert_eq!(
        (report.file_path.as_str(), report.line_number),
        ("app.py", 25),
        "{report:?}"
    );
    assert!(
        report.message.contains("NameError: name 'json' is not defined"),
        "{report:?}"
    );
    let cycle = &status.cycles[0];
    let after = cycle.execution.as_ref().expect("the fix's execution");
    assert!(after.endpoint_calls.iter().all(|c| c.http_status == 200), "{after:?}");
    assert_eq!(cycle.tests.as_ref().expect("a diff").fixed, ["GET /items/{item_id}"]);
    let result = status.result.as_ref().expect("a result");
    let fixed = crate::support::git::git(
        &heal.origin,
        &[
            "show",
            &format!("{}:app.py", result.branch.as_deref().expect("a branch")),
        ],
    );
    assert!(fixed.contains("import json\n"), "{fixed}");

    // The Job ran the probe as a native sidecar of kubeheal's image beside the build.
    let jobs: Api<Job> = Api::namespaced(heal.client.clone(), &heal.ns.name);
    let job = jobs.get(&heal.jobs().await[0]).await.expect("the baseline Job");
    let pod = job.spec.expect("a spec").template.spec.expect("a Pod spec");
    let probe = &pod.init_containers.expect("init containers")[1];
    assert_eq!(
        (
            probe.name.as_str(),
            probe.image.as_deref(),
            probe.restart_policy.as_deref()
        ),
        ("probe", Some(PROBE_IMAGE), Some("Always"))
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_operator_without_a_probe_image_fails_a_run_that_asks_to_verify_saying_which_setting() {
    let (healer, calls) = reference_healer().await;
    let files = service_project();
    let files: Vec<(&str, &str)> = files.iter().map(|(n, t)| (n.as_str(), t.as_str())).collect();
    let mut heal = Heal::new("healrun-verify-noimage", &files, Hold::default()).await;
    heal.start_operator();
    let port = crate::heal_run::free_port().port();
    heal.apply(heal.spec(&healer, json!({"verify": verify(port)})));
    let run = heal.wait_phase(HealRunPhase::Failed).await;
    let status = status(&run);
    assert_eq!(status.reason, Some(HealRunReason::InfraFailure), "{status:?}");
    let message = status.message.clone().unwrap_or_default();
    assert!(message.contains("--probe-image"), "{message}");
    assert_eq!(calls.load(std::sync::atomic::Ordering::SeqCst), 0, "no healer is asked");
}
