//! The chart's shards (values `shards`, Flux's pattern) on the real control plane: the rendered
//! release with two shards is accepted by the API server (a server-side dry run of every object),
//! and the operator run with each shard Deployment's own arguments, under the chart's
//! ServiceAccount, reconciles only the runs labelled for its shard and holds a Lease of its own.

use std::time::{Duration, Instant};

use k8s_openapi::api::coordination::v1::Lease;
use kube::Api;
use kubeheal::api::heal_run::HealRunPhase;
use serde_json::{Value, json};

use crate::heal_run::{Heal, RUN, free_port, logic_healer, logic_project};
use crate::support::cluster::{RELEASE_NAMESPACE, chart_test_values};
use crate::support::node::Hold;

/// The chart rendered with `values` (and the tests' own), as JSON objects.
fn render(heal: &Heal, values: &[&str]) -> (String, Vec<Value>) {
    let mut args = chart_test_values();
    args.extend(values.iter().map(|v| v.to_string()));
    let text = heal
        .plane
        .helm_template(RELEASE_NAMESPACE, &args)
        .expect("the chart renders");
    let objects = serde_yaml_ng::Deserializer::from_str(&text)
        .map(|document| serde::Deserialize::deserialize(document).expect("YAML"))
        .filter(|v: &Value| !v.is_null())
        .collect();
    (text, objects)
}

fn apply(heal: &Heal, name: &str, text: &str, extra: &[&str]) {
    let file = heal.work.path().join(name);
    std::fs::write(&file, text).expect("write the manifests");
    let file = file.display().to_string();
    let mut args = vec!["apply", "--server-side", "--force-conflicts", "-f", &file];
    args.extend(extra);
    let out = heal.plane.kubectl(&args);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

/// The operator's arguments in the Deployment `name`, without those that place it in a Pod
/// (`--listen`, `--work-dir`: the test gives its own).
fn shard_flags(objects: &[Value], name: &str) -> Vec<String> {
    let deployment = objects
        .iter()
        .find(|o| o["kind"] == "Deployment" && o["metadata"]["name"] == name)
        .unwrap_or_else(|| panic!("no Deployment {name}"));
    deployment["spec"]["template"]["spec"]["containers"][0]["args"]
        .as_array()
        .expect("args")
        .iter()
        .map(|a| a.as_str().expect("a string").to_owned())
        .filter(|a| a != "operator" && !a.starts_with("--listen=") && !a.starts_with("--work-dir="))
        .collect()
}

async fn wait_healed(heal: &Heal, name: &str) {
    let deadline = Instant::now() + Duration::from_secs(150);
    loop {
        let run = heal.runs().get(name).await.expect("the run");
        if run.status.as_ref().and_then(|s| s.phase) == Some(HealRunPhase::Healed) {
            return;
        }
        assert!(Instant::now() < deadline, "{name} was never healed: {:?}", run.status);
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_charts_shards_are_accepted_by_the_api_server_and_each_reconciles_only_its_own_runs() {
    let (healer, _) = logic_healer().await;
    let mut heal = Heal::new("chart-shards", &logic_project(), Hold::default()).await;
    for (name, shard) in [(RUN, "a"), ("calc-b", "b")] {
        let manifest = json!({"apiVersion": "kubeheal.dev/v1alpha1", "kind": "HealRun",
                              "metadata": {"name": name, "namespace": heal.ns.name, "labels": {"kubeheal.dev/shard": shard}},
                              "spec": heal.spec(&healer, json!({}))});
        apply(&heal, &format!("{name}.json"), &manifest.to_string(), &[]);
    }
    let values = [
        "--set-json",
        r#"shards=[{"name":"a"},{"name":"b","replicas":2}]"#,
        "--set",
        "allowFileSources=true",
        "--set",
        "allowClusterInternalHealers=true",
    ];
    let (text, objects) = render(&heal, &values);
    // Every object of the release with shards, as the API server would take it.
    apply(&heal, "release.yaml", &text, &["--dry-run=server"]);
    let deployments: Vec<(&str, i64)> = objects
        .iter()
        .filter(|o| o["kind"] == "Deployment")
        .map(|o| {
            (
                o["metadata"]["name"].as_str().expect("a name"),
                o["spec"]["replicas"].as_i64().expect("replicas"),
            )
        })
        .collect();
    assert_eq!(
        deployments,
        [("kubeheal", 1), ("kubeheal-shard-a", 1), ("kubeheal-shard-b", 2)]
    );
    let main = shard_flags(&objects, "kubeheal");
    assert!(
        main.contains(&"--watch-label-selector=kubeheal.dev/shard notin (a,b)".to_owned()),
        "{main:?}"
    );
    // The Lease Role comes with leader election, which shards turn on (the tests' own release
    // has one replica and none): applied for real.
    let (lease_rbac, _) = render(
        &heal,
        &[
            &values[..],
            &["--show-only", "templates/operator-leader-election-role.yaml"],
        ]
        .concat(),
    );
    apply(&heal, "lease-rbac.yaml", &lease_rbac, &[]);

    // The operator with shard a's arguments, as the chart's ServiceAccount.
    heal.as_charts_service_account();
    let flags_a = shard_flags(&objects, "kubeheal-shard-a");
    for expected in [
        "--watch-label-selector=kubeheal.dev/shard in (a)",
        "--leader-elect",
        "--lease-name=kubeheal-operator-a",
    ] {
        assert!(flags_a.contains(&expected.to_owned()), "{expected} in {flags_a:?}");
    }
    let flags: Vec<&str> = flags_a.iter().map(String::as_str).collect();
    let _a = heal.operator_process(&flags, free_port());
    wait_healed(&heal, RUN).await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    let other = heal.runs().get("calc-b").await.expect("the other run");
    assert!(
        other.status.is_none(),
        "shard a reconciled a run of shard b: {:?}",
        other.status
    );

    // Shard b's two replicas: one holds its Lease and heals its run.
    let flags_b = shard_flags(&objects, "kubeheal-shard-b");
    let flags: Vec<&str> = flags_b.iter().map(String::as_str).collect();
    let _b1 = heal.operator_process(&flags, free_port());
    let _b2 = heal.operator_process(&flags, free_port());
    wait_healed(&heal, "calc-b").await;
    let leases: Api<Lease> = Api::namespaced(heal.client.clone(), RELEASE_NAMESPACE);
    let holder = |name: &'static str| {
        let leases = leases.clone();
        async move {
            leases
                .get(name)
                .await
                .unwrap_or_else(|e| panic!("the Lease {name}: {e}"))
                .spec
                .and_then(|s| s.holder_identity)
                .unwrap_or_default()
        }
    };
    let (a, b) = (holder("kubeheal-operator-a").await, holder("kubeheal-operator-b").await);
    assert!(
        !a.is_empty() && !b.is_empty() && a != b,
        "each shard holds its own Lease: {a:?} {b:?}"
    );
}
