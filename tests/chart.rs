//! The Helm chart `charts/kubeheal`, rendered by the `helm` that `tests/control-plane/build.sh`
//! builds (beside the control plane, in `KUBEBUILDER_ASSETS`): `helm lint`, `helm template` with
//! several value sets and what the rendered objects must carry, and `values.schema.json`
//! refusing wrong values. That the API server accepts the rendered objects and enforces the
//! approval policy is proven by the cluster tests (`tests/cluster/approval_policy.rs`).

mod support;

use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;

use serde_json::{Value, json};

const NS: &str = "kubeheal-system";

fn assets() -> &'static PathBuf {
    static ASSETS: OnceLock<PathBuf> = OnceLock::new();
    ASSETS.get_or_init(|| {
        support::cluster::assets_dir().unwrap_or_else(|e| panic!("helm is needed for the chart tests: {e}"))
    })
}

/// Where helm keeps its config and cache during these tests (never the user's own).
fn scratch() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("chart-tests")
}

fn try_render(args: &[&str]) -> Result<String, String> {
    support::cluster::render_chart(assets(), &scratch(), NS, args)
}

/// The chart rendered with `args`, as JSON values, one per object.
fn render(args: &[&str]) -> Vec<Value> {
    let text = try_render(args).unwrap_or_else(|e| panic!("{e}"));
    let mut objects = Vec::new();
    for document in serde_yaml_ng::Deserializer::from_str(&text) {
        let value: Value = serde::Deserialize::deserialize(document)
            .unwrap_or_else(|e| panic!("helm template printed YAML that does not parse: {e}\n{text}"));
        if value.is_null() {
            continue;
        }
        for field in ["apiVersion", "kind"] {
            assert!(value[field].is_string(), "an object without {field}: {value}");
        }
        assert!(
            value["metadata"]["name"].is_string(),
            "an object without a name: {value}"
        );
        objects.push(value);
    }
    objects
}

fn find<'a>(objects: &'a [Value], kind: &str, name: &str) -> &'a Value {
    objects
        .iter()
        .find(|o| o["kind"] == kind && o["metadata"]["name"] == name)
        .unwrap_or_else(|| panic!("no {kind} {name} in {:#?}", names(objects)))
}

fn has(objects: &[Value], kind: &str, name: &str) -> bool {
    objects
        .iter()
        .any(|o| o["kind"] == kind && o["metadata"]["name"] == name)
}

fn names(objects: &[Value]) -> Vec<String> {
    objects
        .iter()
        .map(|o| {
            format!(
                "{} {}",
                o["kind"].as_str().unwrap_or(""),
                o["metadata"]["name"].as_str().unwrap_or("")
            )
        })
        .collect()
}

fn container(objects: &[Value]) -> &Value {
    &find(objects, "Deployment", "kubeheal")["spec"]["template"]["spec"]["containers"][0]
}

fn args(objects: &[Value]) -> Vec<String> {
    container(objects)["args"]
        .as_array()
        .expect("the operator has args")
        .iter()
        .map(|a| a.as_str().expect("string args").to_owned())
        .collect()
}

fn env_var<'a>(objects: &'a [Value], name: &str) -> Option<&'a Value> {
    container(objects)["env"]
        .as_array()
        .and_then(|env| env.iter().find(|e| e["name"] == name))
}

/// A CEL list literal of strings the chart writes into the policy's variables.
fn policy_list(objects: &[Value], variable: &str) -> Vec<String> {
    let policy = find(objects, "ValidatingAdmissionPolicy", "kubeheal-approval");
    let expression = policy["spec"]["variables"]
        .as_array()
        .expect("variables")
        .iter()
        .find(|v| v["name"] == variable)
        .unwrap_or_else(|| panic!("no variable {variable}"))["expression"]
        .as_str()
        .expect("an expression")
        .to_owned();
    serde_json::from_str(&expression)
        .unwrap_or_else(|e| panic!("{variable} is not a list of strings ({e}): {expression}"))
}

fn helm(args: &[&str]) -> std::process::Output {
    let home = scratch().join("helm-home");
    Command::new(assets().join("helm"))
        .env("HELM_CONFIG_HOME", home.join("config"))
        .env("HELM_CACHE_HOME", home.join("cache"))
        .env("HELM_DATA_HOME", home.join("data"))
        .args(args)
        .output()
        .expect("helm runs")
}

const VALUE_SETS: [&[&str]; 6] = [
    &[],
    &["--set-json", r#"watchNamespaces=["team-a"]"#],
    &["--set", "replicas=3"],
    &[
        "--set-json",
        r#"approval.gitopsIdentities=["system:serviceaccount:argocd:argocd-application-controller"]"#,
    ],
    &["--set-json", r#"shards=[{"name":"a"},{"name":"b","replicas":2}]"#],
    &[
        "--set-json",
        r#"tools={"aider":"registry.example/kubeheal-aider:0.86"}"#,
    ],
];

#[test]
fn helm_lint_is_clean_with_every_value_set() {
    let chart = concat!(env!("CARGO_MANIFEST_DIR"), "/charts/kubeheal");
    for set in VALUE_SETS {
        let mut all = vec!["lint", "--strict", chart, "--namespace", NS];
        all.extend_from_slice(set);
        let out = helm(&all);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && stdout.contains("1 chart(s) linted, 0 chart(s) failed"),
            "helm lint {set:?}:\n{stdout}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            !stdout.contains("[WARNING]") && !stdout.contains("[ERROR]"),
            "helm lint {set:?}:\n{stdout}"
        );
    }
}

#[test]
fn the_operator_runs_only_with_flags_the_binary_has() {
    let help = Command::new(env!("CARGO_BIN_EXE_kubeheal"))
        .args(["operator", "--help"])
        .output()
        .expect("kubeheal runs");
    let help = String::from_utf8_lossy(&help.stdout);
    let all_on = [
        "--set",
        "replicas=2",
        "--set",
        "watchLabelSelector=kubeheal.dev/shard in (a)",
        "--set",
        "allowFileSources=true",
        "--set",
        "allowClusterInternalHealers=true",
        "--set-json",
        r#"watchNamespaces=["team-a"]"#,
        "--set-json",
        r#"tools={"aider":"registry.example/kubeheal-aider:0.86","sweep":"sweep:1"}"#,
    ];
    let objects = render(&all_on);
    let args = args(&objects);
    assert!(
        args.contains(&"--tool=aider=registry.example/kubeheal-aider:0.86".to_owned())
            && args.contains(&"--tool=sweep=sweep:1".to_owned()),
        "{args:?}"
    );
    // The probe container of a verifying build runs the operator's own image.
    let image = container(&objects)["image"].as_str().expect("an image").to_owned();
    assert!(args.contains(&format!("--probe-image={image}")), "{args:?}");
    assert_eq!(args[0], "operator");
    for arg in &args[1..] {
        let flag = arg.split('=').next().expect("a flag");
        assert!(flag.starts_with("--"), "{arg} is not a flag");
        assert!(
            help.contains(&format!("{flag} ")) || help.contains(&format!("{flag}\n")),
            "the chart passes {flag}, which `kubeheal operator` does not have:\n{help}"
        );
    }
    for env in ["POD_NAMESPACE", "POD_NAME"] {
        assert!(env_var(&objects, env).is_some(), "no {env}");
    }
}

#[test]
fn by_default_one_restricted_replica_reconciles_every_namespace_without_leader_election() {
    let objects = render(&[]);
    for (kind, name) in [
        ("ServiceAccount", "kubeheal"),
        ("ClusterRole", "kubeheal-operator"),
        ("ClusterRoleBinding", "kubeheal-operator"),
        ("ClusterRole", "kubeheal-approver"),
        ("ClusterRole", "kubeheal-viewer"),
        ("Deployment", "kubeheal"),
        ("Service", "kubeheal-metrics"),
        ("PodDisruptionBudget", "kubeheal"),
        ("ValidatingAdmissionPolicy", "kubeheal-approval"),
        ("ValidatingAdmissionPolicyBinding", "kubeheal-approval"),
        ("ValidatingAdmissionPolicy", "kubeheal-operator-spec"),
        ("ValidatingAdmissionPolicyBinding", "kubeheal-operator-spec"),
    ] {
        assert!(has(&objects, kind, name), "no {kind} {name} in {:#?}", names(&objects));
    }
    for kind in [
        "Role",
        "RoleBinding",
        "ServiceMonitor",
        "NetworkPolicy",
        "CustomResourceDefinition",
    ] {
        assert!(!objects.iter().any(|o| o["kind"] == kind), "an unexpected {kind}");
    }
    for o in objects
        .iter()
        .filter(|o| !o["kind"].as_str().unwrap().starts_with("Cluster"))
    {
        let cluster_scoped = o["kind"].as_str().unwrap().starts_with("ValidatingAdmission");
        assert_eq!(o["metadata"]["namespace"].is_null(), cluster_scoped, "namespace of {o}");
    }

    let deployment = find(&objects, "Deployment", "kubeheal");
    let spec = &deployment["spec"];
    assert_eq!(spec["replicas"], 1);
    assert_eq!(
        spec["strategy"]["type"], "Recreate",
        "without a Lease two operators must not overlap"
    );
    let args = args(&objects);
    assert!(!args.iter().any(|a| a.starts_with("--leader-elect")), "{args:?}");
    assert!(!args.iter().any(|a| a.starts_with("--namespace")), "{args:?}");

    // Restricted: the Pod Security Standard's checks, one by one.
    let pod = &spec["template"]["spec"];
    assert_eq!(pod["securityContext"]["runAsNonRoot"], true);
    assert_eq!(pod["securityContext"]["seccompProfile"]["type"], "RuntimeDefault");
    let c = container(&objects);
    let sc = &c["securityContext"];
    assert_eq!(sc["allowPrivilegeEscalation"], false);
    assert_eq!(sc["readOnlyRootFilesystem"], true);
    assert_eq!(sc["runAsNonRoot"], true);
    assert_eq!(sc["capabilities"]["drop"], json!(["ALL"]));
    assert_eq!(sc["seccompProfile"]["type"], "RuntimeDefault");
    assert!(c["resources"]["requests"]["cpu"].is_string() && c["resources"]["limits"]["memory"].is_string());

    // The work dir is a writable emptyDir at the path --work-dir names.
    let work_dir = args
        .iter()
        .find_map(|a| a.strip_prefix("--work-dir="))
        .expect("--work-dir");
    let mount = c["volumeMounts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["mountPath"] == work_dir)
        .unwrap_or_else(|| panic!("nothing is mounted at {work_dir}"));
    let volume = pod["volumes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["name"] == mount["name"])
        .expect("the mounted volume");
    assert!(volume["emptyDir"].is_object(), "{volume}");

    // The probes ask the port --listen serves.
    let listen_port: u64 = args
        .iter()
        .find_map(|a| a.strip_prefix("--listen=0.0.0.0:"))
        .expect("--listen")
        .parse()
        .expect("a port");
    assert_eq!(c["ports"][0]["containerPort"], listen_port);
    assert_eq!(c["ports"][0]["name"], "http");
    assert_eq!(
        c["livenessProbe"]["httpGet"],
        json!({"path": "/healthz", "port": "http"})
    );
    assert_eq!(
        c["readinessProbe"]["httpGet"],
        json!({"path": "/readyz", "port": "http"})
    );

    // Selectors select the Pods.
    let labels = &pod_labels(deployment);
    for selector in [
        &spec["selector"]["matchLabels"],
        &pod["topologySpreadConstraints"][0]["labelSelector"]["matchLabels"],
        &find(&objects, "Service", "kubeheal-metrics")["spec"]["selector"],
        &find(&objects, "PodDisruptionBudget", "kubeheal")["spec"]["selector"]["matchLabels"],
    ] {
        for (k, v) in selector.as_object().expect("a selector") {
            assert_eq!(
                &labels[k], v,
                "the selector {selector} does not select the Pods ({labels})"
            );
        }
    }

    // The operator is bound to its ClusterRole as its ServiceAccount, and never approves.
    let binding = find(&objects, "ClusterRoleBinding", "kubeheal-operator");
    assert_eq!(
        binding["subjects"],
        json!([{"kind": "ServiceAccount", "name": "kubeheal", "namespace": NS}])
    );
    assert_eq!(pod["serviceAccountName"], "kubeheal");
    assert_eq!(
        policy_list(&objects, "neverApprove"),
        vec![format!("system:serviceaccount:{NS}:kubeheal")]
    );
    assert!(policy_list(&objects, "gitopsIdentities").is_empty());
    let operator_verbs: Vec<&Value> = find(&objects, "ClusterRole", "kubeheal-operator")["rules"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["resources"].as_array().unwrap().contains(&json!("codefixdds")))
        .flat_map(|r| r["verbs"].as_array().unwrap())
        .collect();
    for verb in ["approve", "patch", "update"] {
        assert!(
            !operator_verbs.contains(&&json!(verb)),
            "the operator may {verb} codefixdds"
        );
    }
    let approver = find(&objects, "ClusterRole", "kubeheal-approver");
    assert!(
        approver["rules"][0]["verbs"]
            .as_array()
            .unwrap()
            .contains(&json!("approve"))
    );
    assert_eq!(
        find(&objects, "ClusterRole", "kubeheal-viewer")["metadata"]["labels"]["rbac.authorization.k8s.io/aggregate-to-view"],
        "true"
    );
}

fn pod_labels(deployment: &Value) -> Value {
    deployment["spec"]["template"]["metadata"]["labels"].clone()
}

#[test]
fn with_three_replicas_the_operators_elect_a_leader_on_a_lease_they_may_use() {
    let objects = render(&["--set", "replicas=3"]);
    let deployment = find(&objects, "Deployment", "kubeheal");
    assert_eq!(deployment["spec"]["replicas"], 3);
    assert!(
        deployment["spec"]["strategy"].is_null(),
        "a rolling update is safe with a Lease"
    );
    let flags = args(&objects);
    for expected in [
        "--leader-elect",
        "--lease-name=kubeheal-operator",
        &format!("--lease-namespace={NS}"),
        "--lease-seconds=15",
    ] {
        assert!(flags.iter().any(|a| a == expected), "{expected} is not in {flags:?}");
    }
    let role = find(&objects, "Role", "kubeheal-operator-leader-election");
    assert_eq!(role["metadata"]["namespace"], NS);
    assert_eq!(role["rules"][0]["resources"], json!(["leases"]));
    let binding = find(&objects, "RoleBinding", "kubeheal-operator-leader-election");
    assert_eq!(binding["metadata"]["namespace"], NS);
    assert_eq!(binding["roleRef"]["name"], "kubeheal-operator-leader-election");
    assert_eq!(
        binding["subjects"],
        json!([{"kind": "ServiceAccount", "name": "kubeheal", "namespace": NS}])
    );
    assert!(has(&objects, "PodDisruptionBudget", "kubeheal"));

    // One replica can ask for the Lease too, and then rolls like three.
    let objects = render(&["--set", "leaderElection.enabled=true"]);
    assert!(args(&objects).contains(&"--leader-elect".to_owned()));
    assert!(find(&objects, "Deployment", "kubeheal")["spec"]["strategy"].is_null());
}

#[test]
fn with_watch_namespaces_the_operator_gets_a_role_there_and_nothing_cluster_wide() {
    let cluster_wide = render(&[]);
    let objects = render(&["--set-json", r#"watchNamespaces=["team-a"]"#]);
    assert!(!has(&objects, "ClusterRole", "kubeheal-operator"));
    assert!(!has(&objects, "ClusterRoleBinding", "kubeheal-operator"));
    let role = find(&objects, "Role", "kubeheal-operator");
    assert_eq!(role["metadata"]["namespace"], "team-a");
    assert_eq!(
        role["rules"],
        find(&cluster_wide, "ClusterRole", "kubeheal-operator")["rules"],
        "the Role grants what the ClusterRole would"
    );
    let binding = find(&objects, "RoleBinding", "kubeheal-operator");
    assert_eq!(binding["metadata"]["namespace"], "team-a");
    assert_eq!(
        binding["subjects"],
        json!([{"kind": "ServiceAccount", "name": "kubeheal", "namespace": NS}])
    );
    assert!(args(&objects).contains(&"--namespace=team-a".to_owned()));
    // People still need the approver role and the policy.
    assert!(has(&objects, "ClusterRole", "kubeheal-approver"));
    assert!(has(&objects, "ValidatingAdmissionPolicy", "kubeheal-approval"));
}

#[test]
fn gitops_and_never_approve_identities_reach_the_admission_policy() {
    let argo = "system:serviceaccount:argocd:argocd-application-controller";
    let objects = render(&[
        "--set-json",
        &format!(r#"approval.gitopsIdentities=["{argo}"]"#),
        "--set-json",
        r#"approval.neverApprove=["ci-bot"]"#,
        "--set-json",
        r#"approval.policy.namespaceSelector={"matchLabels":{"kubeheal.dev/approvals":"enforced"}}"#,
    ]);
    assert_eq!(policy_list(&objects, "gitopsIdentities"), vec![argo]);
    assert_eq!(
        policy_list(&objects, "neverApprove"),
        vec![format!("system:serviceaccount:{NS}:kubeheal"), "ci-bot".to_owned()]
    );
    let binding = find(&objects, "ValidatingAdmissionPolicyBinding", "kubeheal-approval");
    assert_eq!(binding["spec"]["policyName"], "kubeheal-approval");
    assert_eq!(binding["spec"]["validationActions"], json!(["Deny"]));
    assert_eq!(
        binding["spec"]["matchResources"]["namespaceSelector"],
        json!({"matchLabels": {"kubeheal.dev/approvals": "enforced"}})
    );
    let policy = find(&objects, "ValidatingAdmissionPolicy", "kubeheal-approval");
    assert_eq!(policy["spec"]["failurePolicy"], "Fail");
    assert_eq!(
        policy["spec"]["matchConstraints"]["resourceRules"][0]["resources"],
        json!(["codefixdds", "healertickets"])
    );

    // A release that turns the policy off renders none (and NOTES.txt warns).
    let objects = render(&["--set", "approval.policy.enabled=false"]);
    assert!(
        !objects
            .iter()
            .any(|o| o["kind"].as_str().unwrap().starts_with("ValidatingAdmission"))
    );
}

#[test]
fn the_healer_token_comes_from_a_secret_and_optional_objects_render_when_asked() {
    let objects = render(&[
        "--set",
        "healer.url=https://healer.example.com/api/heal",
        "--set",
        "healer.tokenSecret.name=healer-token",
        "--set",
        "serviceMonitor.enabled=true",
        "--set",
        "networkPolicy.enabled=true",
    ]);
    assert_eq!(
        env_var(&objects, "CODE_HEALER_URL").expect("CODE_HEALER_URL")["value"],
        "https://healer.example.com/api/heal"
    );
    assert_eq!(
        env_var(&objects, "CODE_HEALER_TOKEN").expect("CODE_HEALER_TOKEN")["valueFrom"],
        json!({"secretKeyRef": {"name": "healer-token", "key": "token"}})
    );
    let monitor = find(&objects, "ServiceMonitor", "kubeheal");
    assert_eq!(monitor["spec"]["endpoints"][0]["path"], "/metrics");
    assert_eq!(monitor["spec"]["endpoints"][0]["port"], "http");
    let policy = find(&objects, "NetworkPolicy", "kubeheal");
    assert_eq!(policy["spec"]["policyTypes"], json!(["Ingress"]));
    assert_eq!(policy["spec"]["ingress"], json!([]));
    assert!(env_var(&render(&[]), "CODE_HEALER_TOKEN").is_none());
}

#[test]
fn every_replica_serves_the_healer_api_behind_its_service_with_the_token_from_a_secret() {
    let objects = render(&[
        "--set",
        "tickets.tokenSecret.name=ingest",
        "--set",
        "tickets.notifySecret=webhooks",
        "--set",
        "tickets.pageUrl=https://kubeheal.example.com",
        "--set",
        "networkPolicy.enabled=true",
        "--set-json",
        r#"networkPolicy.ticketsFrom=[{"namespaceSelector":{"matchLabels":{"team":"payments"}}}]"#,
    ]);
    let flags = args(&objects);
    assert!(flags.contains(&"--healer-listen=0.0.0.0:8083".to_owned()), "{flags:?}");
    assert!(flags.iter().any(|a| a.starts_with("--ticket-namespace=")), "{flags:?}");
    assert!(!flags.contains(&"--ingest-allow-anonymous".to_owned()));
    assert!(flags.contains(&"--notify-secret=webhooks".to_owned()), "{flags:?}");
    assert!(
        flags.contains(&"--ticket-page-url=https://kubeheal.example.com".to_owned()),
        "{flags:?}"
    );
    assert_eq!(
        env_var(&objects, "KUBEHEAL_INGEST_TOKEN").expect("the token")["valueFrom"],
        json!({"secretKeyRef": {"name": "ingest", "key": "token"}})
    );
    let service = find(&objects, "Service", "kubeheal-healer");
    assert_eq!(service["spec"]["ports"][0]["port"], 8083);
    assert_eq!(service["spec"]["ports"][0]["targetPort"], "tickets");
    let ports = &container(&objects)["ports"];
    assert!(
        ports
            .as_array()
            .is_some_and(|p| p.iter().any(|p| p["name"] == "tickets" && p["containerPort"] == 8083)),
        "{ports}"
    );
    let policy = find(&objects, "NetworkPolicy", "kubeheal");
    assert_eq!(policy["spec"]["ingress"][0]["ports"][0]["port"], "tickets");

    let off = render(&["--set", "tickets.enabled=false"]);
    assert!(args(&off).contains(&"--healer-listen=off".to_owned()));
    assert!(!has(&off, "Service", "kubeheal-healer"));
}

/// The args of Deployment `name`'s operator container.
fn deployment_args(objects: &[Value], name: &str) -> Vec<String> {
    find(objects, "Deployment", name)["spec"]["template"]["spec"]["containers"][0]["args"]
        .as_array()
        .expect("the operator has args")
        .iter()
        .map(|a| a.as_str().expect("string args").to_owned())
        .collect()
}

#[test]
fn shards_are_deployments_of_their_own_that_split_the_objects_by_label_without_overlap() {
    let objects = render(&["--set-json", r#"shards=[{"name":"a"},{"name":"b","replicas":2}]"#]);
    let deployments: Vec<&Value> = objects.iter().filter(|o| o["kind"] == "Deployment").collect();
    assert_eq!(deployments.len(), 3, "{:?}", names(&objects));
    let main = deployment_args(&objects, "kubeheal");
    let a = deployment_args(&objects, "kubeheal-shard-a");
    let b = deployment_args(&objects, "kubeheal-shard-b");
    assert!(
        main.contains(&"--watch-label-selector=kubeheal.dev/shard notin (a,b)".to_owned()),
        "{main:?}"
    );
    assert!(
        a.contains(&"--watch-label-selector=kubeheal.dev/shard in (a)".to_owned()),
        "{a:?}"
    );
    assert!(
        b.contains(&"--watch-label-selector=kubeheal.dev/shard in (b)".to_owned()),
        "{b:?}"
    );
    // Each holds a Lease of its own, in the namespace the Lease Role is for.
    let leases: Vec<&String> = [&main, &a, &b]
        .iter()
        .map(|args| args.iter().find(|x| x.starts_with("--lease-name=")).expect("a Lease"))
        .collect();
    assert_eq!(leases.len(), 3);
    assert!(
        leases[0] != leases[1] && leases[1] != leases[2] && leases[0] != leases[2],
        "{leases:?}"
    );
    assert!(has(&objects, "Role", "kubeheal-operator-leader-election"));
    // Only the main Deployment serves the /healer API behind its Service.
    assert!(main.contains(&"--healer-listen=0.0.0.0:8083".to_owned()));
    assert!(a.contains(&"--healer-listen=off".to_owned()) && b.contains(&"--healer-listen=off".to_owned()));
    // No Deployment's selector matches another's Pods (ReplicaSets would fight over them).
    for one in &deployments {
        let selector = one["spec"]["selector"]["matchLabels"].as_object().expect("a selector");
        for other in &deployments {
            let labels = &other["spec"]["template"]["metadata"]["labels"];
            let matches = selector.iter().all(|(k, v)| &labels[k] == v);
            assert_eq!(
                matches,
                one["metadata"]["name"] == other["metadata"]["name"],
                "{} selects the Pods of {}",
                one["metadata"]["name"],
                other["metadata"]["name"]
            );
        }
    }
    assert_eq!(find(&objects, "Deployment", "kubeheal-shard-b")["spec"]["replicas"], 2);
    // Each Deployment's Pods have a disruption budget of their own.
    for name in ["kubeheal", "kubeheal-shard-a", "kubeheal-shard-b"] {
        let budget = &find(&objects, "PodDisruptionBudget", name)["spec"]["selector"]["matchLabels"];
        let deployment = &find(&objects, "Deployment", name)["spec"]["selector"]["matchLabels"];
        assert_eq!(budget, deployment, "{name}");
    }
    // A shard name that is not a label value is refused by the schema.
    let refused = try_render(&["--set-json", r#"shards=[{"name":"Not A Label"}]"#]).expect_err("refused");
    assert!(refused.contains("shards"), "{refused}");
}

#[test]
fn the_values_schema_refuses_wrong_values_and_says_which() {
    for (args, says) in [
        (vec!["--set", "replicas=0"], "at '/replicas': minimum: got 0, want 1"),
        (
            vec!["--set", "approval.gitopsIdentity=argocd"],
            "at '/approval': additional properties 'gitopsIdentity' not allowed",
        ),
        (
            vec!["--set-json", r#"watchNamespaces=["a","b"]"#],
            "at '/watchNamespaces': maxItems: got 2, want 1",
        ),
        (
            vec!["--set", "image.pullPolicy=Sometimes"],
            "at '/image/pullPolicy': value must be one of 'Always', 'IfNotPresent', 'Never'",
        ),
        (
            vec!["--set-json", r#"approval.neverApprove=["two words"]"#],
            "at '/approval/neverApprove/0'",
        ),
        (
            vec!["--set", "securityContext.allowPrivilegeEscalation=true"],
            "at '/securityContext/allowPrivilegeEscalation'",
        ),
        (
            vec!["--set", "maxConcurrentReconciles=0"],
            "at '/maxConcurrentReconciles'",
        ),
        (
            vec![
                "--set-json",
                r#"tickets.target={"regenerate":{"image":"forge:1","command":"make generate","timeoutSeconds":0}}"#,
            ],
            "at '/tickets/target/regenerate/timeoutSeconds'",
        ),
        (
            vec!["--set-json", r#"tickets.target={"healer":{"builtin":{}}}"#],
            "at '/tickets/target/healer'",
        ),
        (vec!["--set-json", r#"tools={"Aider":"aider:1"}"#], "at '/tools'"),
        (
            vec!["--set-json", r#"tools={"aider":"two words"}"#],
            "at '/tools/aider'",
        ),
    ] {
        match try_render(&args) {
            Ok(_) => panic!("helm template {args:?} was accepted"),
            Err(e) => {
                assert!(
                    e.contains("values don't meet the specifications of the schema"),
                    "{args:?}: {e}"
                );
                assert!(e.contains(says), "{args:?}: the error does not say {says:?}: {e}");
            }
        }
    }
}

#[test]
fn the_ticket_target_reaches_the_operator_as_its_file_with_its_code_healer_and_regeneration_timeout() {
    let objects = render(&[
        "--set-json",
        r#"tickets.target={"repository":{"url":"https://git.example.com/helpdesk.git"},"contractSchema":"spec/meta/{kind}.meta.yaml","healer":{"codeHealerApi":{"url":"http://sam.healers:3000/api/heal","secretRef":{"name":"sam"}}},"regenerate":{"image":"ghcr.io/acme/forge:1.4","command":"make generate","timeoutSeconds":1800}}"#,
    ]);
    let map = objects
        .iter()
        .find(|o| {
            o["kind"] == "ConfigMap"
                && o["metadata"]["name"]
                    .as_str()
                    .is_some_and(|n| n.ends_with("-ticket-target"))
        })
        .expect("the ticket target's ConfigMap");
    let file = map["data"]["target.yaml"].as_str().expect("target.yaml");
    // Read as the operator reads --ticket-target.
    let target: kubeheal::api::healer_ticket::TicketTarget = serde_yaml_ng::from_str(file).expect("a ticket target");
    let regenerate = target.regenerate.expect("the regenerate command");
    assert_eq!(regenerate.timeout_seconds, 1800);
    assert_eq!(kubeheal::core::ticket_regenerate::problem(&regenerate), None);
    let healer = target.healer.expect("the healer");
    assert_eq!(kubeheal::core::ticket_fix::healer_problem(&healer), None);
    assert_eq!(
        healer.code_healer_api.and_then(|api| api.url).as_deref(),
        Some("http://sam.healers:3000/api/heal")
    );
}
