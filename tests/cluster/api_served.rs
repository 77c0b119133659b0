//! The three CRDs install, are served with their names, columns and docs, accept the examples a
//! user would write, and keep status in its own subresource.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use kube::api::{Api, Patch, PatchParams, PostParams};
use kubeheal::api::heal_run::{HealRunPhase, HealRunStatus};
use kubeheal::api::{CodeFixDDS, HealRun, HealerTicket};
use serde_json::json;

use crate::support::cluster::control_plane;

fn stdout(out: &std::process::Output) -> String {
    assert!(
        out.status.success(),
        "kubectl failed: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn examples_dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples")
}

/// The manifests in `examples/` and its `seed-002/` pair, each applied with `kubectl apply
/// --server-side`.
fn example_manifests() -> Vec<std::path::PathBuf> {
    let mut files: Vec<_> = [examples_dir(), examples_dir().join("seed-002")]
        .iter()
        .flat_map(|dir| std::fs::read_dir(dir).expect("the examples folder exists"))
        .map(|e| e.expect("examples/ is readable").path())
        .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
        .collect();
    files.sort();
    files
}

#[test]
fn all_three_crds_are_served_with_short_names_and_the_kubeheal_category() {
    let plane = control_plane();
    let resources = stdout(&plane.kubectl(["api-resources", "--api-group=kubeheal.dev", "-o", "wide"]));
    for (plural, short, kind) in [
        ("healruns", "hr", "HealRun"),
        ("codefixdds", "cfd", "CodeFixDDS"),
        ("healertickets", "ht", "HealerTicket"),
    ] {
        let line = resources
            .lines()
            .find(|l| l.split_whitespace().next() == Some(plural))
            .unwrap_or_else(|| panic!("{plural} is not served:\n{resources}"));
        let words: Vec<&str> = line.split_whitespace().collect();
        assert!(words.contains(&short), "{plural} has no short name {short}: {line}");
        assert!(words.contains(&kind), "{plural} is not kind {kind}: {line}");
        assert!(
            words.contains(&"kubeheal.dev/v1alpha1"),
            "{plural} is not v1alpha1: {line}"
        );
        assert!(
            line.contains("kubeheal"),
            "{plural} is not in category kubeheal: {line}"
        );
        assert!(line.contains("true"), "{plural} is not namespaced: {line}");
    }
}

#[test]
fn examples_are_accepted_by_server_side_apply_and_twice_is_a_no_op() {
    let plane = control_plane();
    let ns = plane.namespace("examples-apply");
    let manifests = example_manifests();
    let kinds: Vec<String> = manifests
        .iter()
        .map(|p| std::fs::read_to_string(p).expect("example is readable"))
        .filter_map(|text| text.lines().find_map(|l| l.strip_prefix("kind: ").map(str::to_owned)))
        .collect();
    for kind in ["HealRun", "CodeFixDDS", "HealerTicket"] {
        assert!(kinds.iter().any(|k| k == kind), "examples/ has no {kind} manifest");
    }
    for file in &manifests {
        let path = file.display().to_string();
        let first = stdout(&plane.kubectl(["apply", "--server-side", "-n", &ns.name, "-f", &path]));
        assert!(first.contains("serverside-applied"), "{path}: {first}");
        let second = stdout(&plane.kubectl(["apply", "--server-side", "-n", &ns.name, "-f", &path]));
        assert!(second.contains("serverside-applied"), "{path} applied twice: {second}");
    }
}

#[tokio::test]
async fn examples_read_back_into_the_rust_types_with_defaults_filled_in() {
    let plane = control_plane();
    let ns = plane.namespace("examples-read-back");
    for file in example_manifests() {
        stdout(&plane.kubectl([
            "apply",
            "--server-side",
            "-n",
            &ns.name,
            "-f",
            &file.display().to_string(),
        ]));
    }
    let client = plane.client().await;

    let run = Api::<HealRun>::namespaced(client.clone(), &ns.name)
        .get("payments-api")
        .await
        .expect("the example HealRun reads back as a HealRun");
    // Set in the example.
    assert_eq!(run.spec.executor.timeout_seconds, 600);
    assert_eq!(run.spec.policy.max_files_changed, 2);
    // Defaulted by the API server from the schema.
    assert_eq!(run.spec.cycle_timeouts, vec![30, 45, 60, 90, 120]);
    assert_eq!(run.spec.policy.change_window_lines, 3);
    assert!(run.spec.policy.no_new_dependencies);
    assert!(run.spec.delivery.push);
    assert!(!run.spec.cancel);

    let fix = Api::<CodeFixDDS>::namespaced(client.clone(), &ns.name)
        .get("dds-fix-20260202-001")
        .await
        .expect("the example CodeFixDDS reads back as a CodeFixDDS");
    assert_eq!(fix.spec.id, "DDS-FIX-20260202-001");
    assert_eq!(fix.spec.tool, "aider");
    assert!(fix.spec.approval.is_none());

    let ticket = Api::<HealerTicket>::namespaced(client, &ns.name)
        .get("helpdesk-ticket-keyerror-resolution")
        .await
        .expect("the example HealerTicket reads back as a HealerTicket");
    assert_eq!(
        ticket.spec.target.contract_fqn.as_deref(),
        Some("entity/helpdesk/ticket")
    );
    assert_eq!(ticket.spec.context.get("status_code").map(String::as_str), Some("500"));
}

#[tokio::test]
async fn kubectl_get_kubeheal_lists_all_three_kinds_with_their_printer_columns() {
    let plane = control_plane();
    let ns = plane.namespace("get-kubeheal");
    for file in example_manifests() {
        stdout(&plane.kubectl([
            "apply",
            "--server-side",
            "-n",
            &ns.name,
            "-f",
            &file.display().to_string(),
        ]));
    }
    // Give the HealRun a status, as the operator would, so its columns have values to show.
    let runs = Api::<HealRun>::namespaced(plane.client().await, &ns.name);
    let status = HealRunStatus {
        phase: Some(HealRunPhase::Running),
        cycle: 2,
        ..Default::default()
    };
    runs.patch_status(
        "payments-api",
        &PatchParams::apply("kubeheal-test").force(),
        &Patch::Apply(json!({"apiVersion": "kubeheal.dev/v1alpha1", "kind": "HealRun", "status": status})),
    )
    .await
    .expect("status can be applied through the status subresource");

    let table = stdout(&plane.kubectl(["get", "kubeheal", "-n", &ns.name]));
    let headers: Vec<Vec<&str>> = table
        .lines()
        .filter(|l| l.starts_with("NAME"))
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(headers.len(), 3, "expected one table per kind:\n{table}");
    for expected in [
        vec!["NAME", "PHASE", "CYCLE", "REASON", "AGE"],
        vec!["NAME", "ID", "SOURCE", "PHASE", "REASON", "DECISION", "AGE"],
        vec!["NAME", "SOURCE", "PHASE", "TIER", "PRIORITY", "SEEN", "AGE"],
    ] {
        assert!(
            headers.contains(&expected),
            "no table with columns {expected:?}:\n{table}"
        );
    }
    let run_row = table
        .lines()
        .find(|l| l.contains("healrun.kubeheal.dev/payments-api"))
        .unwrap_or_else(|| panic!("the HealRun is not listed:\n{table}"));
    assert_eq!(
        run_row.split_whitespace().collect::<Vec<_>>()[1..3],
        ["Running", "2"],
        "{run_row}"
    );
    let fix_row = table
        .lines()
        .find(|l| l.contains("codefixdds.kubeheal.dev/dds-fix-20260202-001"))
        .unwrap_or_else(|| panic!("the CodeFixDDS is not listed:\n{table}"));
    assert!(
        fix_row.contains("DDS-FIX-20260202-001") && fix_row.contains("DDS-20260202-CODE-001"),
        "{fix_row}"
    );
    assert!(
        table.contains("healerticket.kubeheal.dev/helpdesk-ticket-keyerror-resolution   runtime"),
        "the HealerTicket row does not show its source:\n{table}"
    );
}

#[test]
fn kubectl_explain_shows_the_field_documentation() {
    let plane = control_plane();
    let spec = stdout(&plane.kubectl(["explain", "healrun.spec"]));
    assert!(spec.contains("The repository and revision to heal"), "{spec}");
    assert!(spec.contains("Most heal cycles"), "{spec}");
    let kind = stdout(&plane.kubectl(["explain", "healrun"]));
    assert!(kind.contains("A healing run: execute the build"), "{kind}");
    let approval = stdout(&plane.kubectl(["explain", "codefixdds.spec.approval"]));
    assert!(approval.contains("cannot change afterwards"), "{approval}");
    let tier = stdout(&plane.kubectl(["explain", "healerticket.status.classification.tier"]));
    assert!(tier.contains("1 (deterministic, automatic)"), "{tier}");
}

#[tokio::test]
async fn status_is_a_subresource_and_conditions_merge_by_type() {
    let plane = control_plane();
    let ns = plane.namespace("status-subresource");
    let path = examples_dir().join("healrun.yaml").display().to_string();
    stdout(&plane.kubectl(["apply", "--server-side", "-n", &ns.name, "-f", &path]));
    let runs = Api::<HealRun>::namespaced(plane.client().await, &ns.name);

    // Two field managers each own one condition; a list-map keyed by `type` keeps both.
    for (manager, condition_type) in [("kubeheal-a", "Ready"), ("kubeheal-b", "Reconciling")] {
        let condition = Condition {
            type_: condition_type.to_owned(),
            status: "False".to_owned(),
            reason: "Testing".to_owned(),
            message: format!("set by {manager}"),
            last_transition_time: Time(k8s_openapi::jiff::Timestamp::now()),
            observed_generation: Some(1),
        };
        runs.patch_status(
            "payments-api",
            &PatchParams::apply(manager),
            &Patch::Apply(json!({
                "apiVersion": "kubeheal.dev/v1alpha1", "kind": "HealRun",
                "status": {"conditions": [condition]}
            })),
        )
        .await
        .expect("a condition can be applied");
    }
    let run = runs.get("payments-api").await.expect("the HealRun exists");
    let mut types: Vec<String> = run
        .status
        .clone()
        .expect("status was written")
        .conditions
        .into_iter()
        .map(|c| c.type_)
        .collect();
    types.sort();
    assert_eq!(types, ["Ready", "Reconciling"]);

    // Status written through the main resource is ignored: only /status writes it.
    let mut changed = run.clone();
    changed.metadata.managed_fields = None;
    changed.status = Some(HealRunStatus {
        phase: Some(HealRunPhase::Healed),
        ..Default::default()
    });
    let after = runs
        .replace("payments-api", &PostParams::default(), &changed)
        .await
        .expect("the HealRun can be replaced");
    assert_ne!(after.status.and_then(|s| s.phase), Some(HealRunPhase::Healed));
}

#[test]
fn the_readme_invalid_code_fix_example_is_rejected_with_the_message_the_readme_shows() {
    let readme = std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md"))
        .expect("README.md is readable");
    let start = readme
        .find("<<'YAML'\n")
        .expect("the README has the invalid CodeFixDDS example")
        + "<<'YAML'\n".len();
    let end = start + readme[start..].find("YAML\n").expect("the example ends with YAML");
    let manifest = &readme[start..end];
    let shown = readme[end + "YAML\n".len()..]
        .lines()
        .next()
        .expect("the README shows the answer");

    let plane = control_plane();
    let ns = plane.namespace("readme-invalid-codefix");
    let file = std::env::temp_dir().join(format!("{}-readme.yaml", ns.name));
    std::fs::write(&file, manifest).expect("the manifest can be written");
    let out = plane.kubectl(["apply", "-n", &ns.name, "-f", &file.display().to_string()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "the README's invalid CodeFixDDS was accepted");
    assert!(
        stderr.contains(shown),
        "kubectl said:\n{stderr}\nthe README shows:\n{shown}"
    );
}
