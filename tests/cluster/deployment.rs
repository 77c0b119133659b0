//! `helm install`, as far as a node without a container runtime allows: the chart rendered as a
//! release of its own, applied to the real control plane, whose Deployment and ReplicaSet
//! controllers make the operator's Pod. The test plays the kubelet for that Pod, reading
//! everything from the Pod as the ReplicaSet wrote it: the container's arguments and
//! environment (`fieldRef`s resolved), its ServiceAccount's token mounted where in-cluster
//! configuration looks for it, the `emptyDir` volumes as the only folders the container's user
//! may write (the root is read-only to it), `runAsUser`, and the image's entrypoint — the
//! runtime root the Dockerfile assembles, with this build's binary, in a chroot. It probes the
//! Pod as its `readinessProbe` and `livenessProbe` say and reports it Ready, and the Deployment
//! becomes Available (`kubectl rollout status`). The operator in the Pod takes its Lease and
//! heals a run in the namespace the release watches, under the chart's least-privilege Role.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{Container, Pod};
use kube::Api;
use kube::api::{ListParams, Patch, PatchParams, PostParams};
use serde_json::{Value, json};

use crate::heal_run::{Heal, free_port, logic_healer, logic_project};
use crate::image::{assert_root, forge_source, heals_from};
use crate::support::cluster::{Process, chart_test_values, spawn_watched};
use crate::support::image::{ENTRYPOINT, assemble_image, chroot, run};
use crate::support::node::{Hold, NODE};

/// Where a container finds its ServiceAccount's token, CA and namespace.
const SERVICE_ACCOUNT_DIR: &str = "var/run/secrets/kubernetes.io/serviceaccount";

/// Waits up to `seconds` for `found` to give something.
async fn within<T, F: std::future::Future<Output = Option<T>>>(
    seconds: u64,
    what: &str,
    mut found: impl FnMut() -> F,
) -> T {
    let deadline = Instant::now() + Duration::from_secs(seconds);
    loop {
        if let Some(value) = found().await {
            return value;
        }
        assert!(Instant::now() < deadline, "{what}: not within {seconds} s");
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

/// The Pod's container run as a kubelet would run it, in the image's root: its process, and
/// the root, for what it wrote.
struct Running {
    _process: Process,
    root: std::path::PathBuf,
}

/// Runs the Pod's only container in a chroot of the image at `root` (a fresh copy): the image's
/// entrypoint with the container's `args`, its `env` (values and `fieldRef`s), the in-cluster
/// variables and token a kubelet gives, its `emptyDir` mounts writable by its user alone.
fn start_container(heal: &Heal, pod: &Pod, root: &Path) -> Running {
    let spec = pod.spec.as_ref().expect("a Pod spec");
    assert_eq!(spec.containers.len(), 1, "one container");
    let container: &Container = &spec.containers[0];
    assert_eq!(container.command, None, "the image's entrypoint is used");
    let namespace = pod.metadata.namespace.clone().expect("a namespace");
    let name = pod.metadata.name.clone().expect("a name");

    assemble_image(root);
    // The image's /tmp is everyone's to write (`chmod 1777` in its root); on a read-only root
    // it is not, so here no folder of the image is the container's to write but its mounts.
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(root.join("tmp"), std::fs::Permissions::from_mode(0o755)).expect("chmod tmp");
    // The user the Pod runs as, and the read-only root: nothing of the image is its to write.
    let context = container.security_context.clone().unwrap_or_default();
    let pod_context = spec.security_context.clone().unwrap_or_default();
    let user = context.run_as_user.or(pod_context.run_as_user).expect("runAsUser");
    let group = context.run_as_group.or(pod_context.run_as_group).unwrap_or(user);
    assert_eq!(context.read_only_root_filesystem, Some(true), "a read-only root");
    assert_eq!(context.allow_privilege_escalation, Some(false));
    assert_ne!(user, 0, "not root");
    // The volumes this node mounts: emptyDirs (empty folders of the container's user) and the
    // ServiceAccount's projected token, bound to the Pod, with the cluster's CA and the
    // namespace, as the API server's ServiceAccount admission adds it to every Pod.
    let account = spec.service_account_name.clone().expect("a ServiceAccount");
    for mount in container.volume_mounts.iter().flatten() {
        let volume = spec
            .volumes
            .iter()
            .flatten()
            .find(|v| v.name == mount.name)
            .unwrap_or_else(|| panic!("no volume {}", mount.name));
        let dir = root.join(mount.mount_path.trim_start_matches('/'));
        std::fs::create_dir_all(&dir).expect("mkdir a volume");
        let projected = volume.projected.iter().flat_map(|p| p.sources.iter().flatten());
        if volume.empty_dir.is_some() {
            run(Command::new("chown").arg(format!("{user}:{group}")).arg(&dir));
        } else if projected.clone().any(|s| s.service_account_token.is_some()) {
            assert_eq!(mount.read_only, Some(true), "the token is mounted read-only");
            let token = heal.plane.kubectl([
                "create",
                "token",
                &account,
                "-n",
                &namespace,
                "--bound-object-kind=Pod",
                &format!("--bound-object-name={name}"),
                &format!("--bound-object-uid={}", pod.metadata.uid.clone().unwrap_or_default()),
            ]);
            assert!(token.status.success(), "{}", String::from_utf8_lossy(&token.stderr));
            std::fs::write(dir.join("token"), String::from_utf8_lossy(&token.stdout).trim()).expect("the token");
            std::fs::write(dir.join("namespace"), &namespace).expect("the namespace");
            let kubeconfig = std::fs::read_to_string(heal.plane.kubeconfig()).expect("the kubeconfig");
            let ca = kubeconfig
                .lines()
                .find_map(|l| l.trim().strip_prefix("certificate-authority: "))
                .expect("the kubeconfig names its CA file");
            std::fs::copy(ca, dir.join("ca.crt")).expect("the CA");
        } else {
            panic!("this node mounts emptyDirs and the ServiceAccount token only, not {volume:?}");
        }
    }
    assert!(
        root.join(SERVICE_ACCOUNT_DIR).join("token").exists(),
        "the Pod has its ServiceAccount's token where in-cluster configuration looks"
    );

    // The environment: the image's (Dockerfile `ENV`), the kubelet's service variables for the
    // API server, then the container's own.
    let (host, port) = heal
        .plane
        .server()
        .strip_prefix("https://")
        .and_then(|a| a.rsplit_once(':'))
        .expect("the API server's URL is https://host:port");
    let mut env: BTreeMap<String, String> = [
        ("HOME", "/tmp".to_owned()),
        ("PATH", "/usr/local/bin:/usr/bin".to_owned()),
        ("KUBERNETES_SERVICE_HOST", host.to_owned()),
        ("KUBERNETES_SERVICE_PORT", port.to_owned()),
        ("RUST_LOG", "info,kube_client=warn,kube_runtime=warn".to_owned()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v))
    .collect();
    for var in container.env.iter().flatten() {
        let value = match (&var.value, var.value_from.as_ref().and_then(|f| f.field_ref.as_ref())) {
            (Some(value), _) => value.clone(),
            (None, Some(field)) => match field.field_path.as_str() {
                "metadata.name" => name.clone(),
                "metadata.namespace" => namespace.clone(),
                other => panic!("this node resolves no fieldRef {other}"),
            },
            _ => panic!("this node sets no variable like {var:?}"),
        };
        env.insert(var.name.clone(), value);
    }
    let mut command = Command::new(chroot());
    command
        .arg(format!("--userspec={user}:{group}"))
        .arg(root)
        .arg(ENTRYPOINT)
        .args(container.args.iter().flatten())
        .env_clear()
        .envs(&env);
    let process = spawn_watched(heal.work.path(), "operator-pod", &mut command, None).expect("the container starts");
    Running {
        _process: process,
        root: root.to_owned(),
    }
}

/// The port a probe's `httpGet` names (by number or by the container's port name).
fn probe_url(container: &Container, probe: &k8s_openapi::api::core::v1::Probe) -> String {
    let get = probe.http_get.as_ref().expect("an httpGet probe");
    let port = match &get.port {
        k8s_openapi::apimachinery::pkg::util::intstr::IntOrString::Int(n) => *n,
        k8s_openapi::apimachinery::pkg::util::intstr::IntOrString::String(name) => {
            container
                .ports
                .iter()
                .flatten()
                .find(|p| p.name.as_deref() == Some(name))
                .unwrap_or_else(|| panic!("no container port named {name}"))
                .container_port
        }
    };
    format!("http://127.0.0.1:{port}{}", get.path.as_deref().unwrap_or("/"))
}

/// Status 200 from `url`.
async fn answers(url: &str) -> bool {
    reqwest::get(url).await.is_ok_and(|r| r.status().is_success())
}

#[tokio::test(flavor = "multi_thread")]
async fn the_charts_deployment_runs_its_pod_becomes_available_and_heals_a_run_in_the_namespace_it_watches() {
    assert_root("the test node runs the Pod in a chroot");
    let (healer, _) = logic_healer().await;
    let heal = Heal::new("deployment", &logic_project(), Hold::default()).await;
    let release = heal.plane.namespace("deployment-release");
    let fullname = format!("kubeheal-{}", release.name);

    // The chart as a user installs it for one namespace, with a release name of its own (its
    // cluster-wide objects beside the test control plane's release) and ports of its own (the
    // Pod shares the machine's network).
    let (port, tickets_port) = (free_port().port(), free_port().port());
    let mut args = chart_test_values();
    for set in [
        format!("fullnameOverride={fullname}"),
        format!("port={port}"),
        format!("tickets.port={tickets_port}"),
        "leaderElection.enabled=true".to_owned(),
        "allowClusterInternalHealers=true".to_owned(),
        "approval.policy.enabled=false".to_owned(),
    ] {
        args.extend(["--set".to_owned(), set]);
    }
    args.extend([
        "--set-json".to_owned(),
        format!("watchNamespaces=[\"{}\"]", heal.ns.name),
    ]);
    let rendered = heal
        .plane
        .helm_template(&release.name, &args)
        .expect("the chart renders");
    let file = heal.work.path().join("release.yaml");
    std::fs::write(&file, &rendered).expect("write the release");
    let out = heal
        .plane
        .kubectl(["apply", "--server-side", "-f", &file.display().to_string()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));

    // The ReplicaSet controller makes the Pod; the node binds it and runs its container.
    let pods: Api<Pod> = Api::namespaced(heal.client.clone(), &release.name);
    let selector = "app.kubernetes.io/component=operator";
    let pod = within(60, "the Deployment's Pod", || {
        let pods = pods.clone();
        async move {
            pods.list(&ListParams::default().labels(selector))
                .await
                .ok()?
                .items
                .into_iter()
                .next()
        }
    })
    .await;
    let name = pod.metadata.name.clone().expect("a name");
    let binding = json!({"apiVersion": "v1", "kind": "Binding", "metadata": {"name": name},
                         "target": {"apiVersion": "v1", "kind": "Node", "name": NODE}});
    pods.create_subresource::<Value, Value>("binding", &name, &PostParams::default(), &binding)
        .await
        .expect("bind the Pod to the node");
    let container = pod.spec.as_ref().expect("a spec").containers[0].clone();
    let running = start_container(&heal, &pod, &heal.work.path().join("pod-root"));

    // Probed as the Pod says: Ready once /readyz answers, reported as a kubelet reports it.
    let readiness = probe_url(
        &container,
        container.readiness_probe.as_ref().expect("a readinessProbe"),
    );
    let liveness = probe_url(&container, container.liveness_probe.as_ref().expect("a livenessProbe"));
    within(60, &format!("{readiness} answering"), || {
        let url = readiness.clone();
        async move { answers(&url).await.then_some(()) }
    })
    .await;
    assert!(answers(&liveness).await, "{liveness}");
    let now = k8s_openapi::jiff::Timestamp::now().to_string();
    let condition = |kind: &str| json!({"type": kind, "status": "True", "lastTransitionTime": now});
    let ready = json!({"status": {
        "phase": "Running",
        "hostIP": "127.0.0.1",
        "podIP": "127.0.0.1",
        "startTime": now,
        "conditions": [condition("PodScheduled"), condition("Initialized"), condition("ContainersReady"), condition("Ready")],
        "containerStatuses": [{"name": container.name, "image": container.image, "imageID": "", "ready": true,
                               "started": true, "restartCount": 0, "state": {"running": {"startedAt": now}}}],
    }});
    pods.patch_status(&name, &PatchParams::default(), &Patch::Merge(ready))
        .await
        .expect("report the Pod Ready");
    let rollout = heal.plane.kubectl([
        "rollout",
        "status",
        &format!("deployment/{fullname}"),
        "-n",
        &release.name,
        "--timeout=60s",
    ]);
    assert!(
        rollout.status.success(),
        "{}{}",
        String::from_utf8_lossy(&rollout.stdout),
        String::from_utf8_lossy(&rollout.stderr)
    );

    // The operator in the Pod holds the release's Lease under the Pod's name (its fieldRef).
    let leases: Api<Lease> = Api::namespaced(heal.client.clone(), &release.name);
    let holder = within(60, "the Lease taken", || {
        let leases = leases.clone();
        async move {
            leases
                .list(&ListParams::default())
                .await
                .ok()?
                .items
                .into_iter()
                .find_map(|l| l.spec?.holder_identity)
        }
    })
    .await;
    assert!(
        holder.contains(&name),
        "the Lease is held by {holder}, not the Pod {name}"
    );

    // It heals a run from a forge that demands a token, in the namespace it watches.
    let source = forge_source(&heal).await;
    heals_from(&heal, &healer, source).await;
    // Its clones are in its work dir: the emptyDir the chart gives it.
    let work = container
        .args
        .iter()
        .flatten()
        .find_map(|a| a.strip_prefix("--work-dir="))
        .expect("--work-dir");
    assert!(
        std::fs::read_dir(running.root.join(work.trim_start_matches('/')))
            .expect("the work dir")
            .next()
            .is_some(),
        "the operator kept its clone in its work dir"
    );
}
