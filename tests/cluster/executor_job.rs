//! The Job executor against the real control plane. There is no kubelet or container runtime
//! here, so this file plays the node's part, and says exactly how:
//!
//! - A Node object `kubeheal-test-node` points the API server at a small HTTPS server on loopback
//!   that answers `GET /containerLogs/<ns>/<pod>/<container>` — the kubelet endpoint the API
//!   server proxies `pods/log` to — with what the "container" printed.
//! - A node loop binds each Pod of the test's namespace to that Node and "runs" it: the init and
//!   build containers' `sh -c` scripts run as local processes, with `$WORKSPACE` and `$PATCHES`
//!   set to local folders (the Pod's volumes; the patches folder is filled from the ConfigMap the
//!   volume names), then the Pod's status is written through the API as a kubelet would
//!   (container states, exit codes, phase).
//! - Images named `kubeheal-test/...` stand for what a real node would meet:
//!   `kubeheal-test/missing` cannot be pulled (`ErrImagePull`), `kubeheal-test/oom` is killed for
//!   memory (`OOMKilled`, 137) after running, `kubeheal-test/hang` runs until the Job's deadline.
//!
//! Everything else — the Job, its Pod, the deadline, the failure policy, the log proxying, the
//! ConfigMaps, owner references — is the real API server and kube-controller-manager.

use std::collections::HashMap;
use std::path::Path;
use std::process::Command;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{ConfigMap, Pod};
use kube::Resource;
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams};
use kubeheal::api::HealRun;
use kubeheal::api::heal_run::ProjectType;
use kubeheal::api::shared::{ErrorClass, GitSource, RunStatus};
use kubeheal::executor::job::{JobExecutor, JobRequest, OwnedJobExecutor, kept_log};
use kubeheal::executor::{Executor, RunRequest};
use serde_json::json;

use crate::support::cluster::{ControlPlane, control_plane};
use crate::support::git::git;

const NODE: &str = "kubeheal-test-node";

/// What each Pod's build container printed, served to the API server as the kubelet would.
type Logs = Arc<Mutex<HashMap<String, String>>>;

static KUBELET: OnceLock<Logs> = OnceLock::new();

/// Starts the fake kubelet (once per test binary) and registers the Node that points at it.
fn kubelet(plane: &'static ControlPlane) -> Logs {
    KUBELET
        .get_or_init(|| {
            let logs: Logs = Arc::new(Mutex::new(HashMap::new()));
            let (tx, rx) = std::sync::mpsc::channel();
            let served = logs.clone();
            std::thread::spawn(move || {
                let runtime = tokio::runtime::Runtime::new().expect("a runtime");
                runtime.block_on(serve_kubelet(served, tx));
            });
            let port: u16 = rx.recv().expect("the fake kubelet starts");
            let node = json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": NODE}});
            let file = std::env::temp_dir().join(format!("kubeheal-node-{}.json", std::process::id()));
            std::fs::write(&file, node.to_string()).expect("write the node");
            let out = plane.kubectl(["apply", "-f", &file.display().to_string()]);
            assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
            let status = json!({"status": {
                "addresses": [{"type": "InternalIP", "address": "127.0.0.1"}],
                "daemonEndpoints": {"kubeletEndpoint": {"Port": port}},
                "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady", "message": "kubeheal test node"}]
            }});
            let out = plane.kubectl(["patch", "node", NODE, "--subresource=status", "--type=merge", "-p", &status.to_string()]);
            assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
            logs
        })
        .clone()
}

async fn serve_kubelet(logs: Logs, port: std::sync::mpsc::Sender<u16>) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let _ = rustls::crypto::ring::default_provider().install_default();
    let key = rcgen::KeyPair::generate().expect("a key");
    let cert = rcgen::CertificateParams::new(vec!["127.0.0.1".to_owned()])
        .expect("params")
        .self_signed(&key)
        .expect("a cert");
    let config = rustls::ServerConfig::builder()
        .with_no_client_auth()
        .with_single_cert(
            vec![cert.der().clone()],
            rustls::pki_types::PrivateKeyDer::Pkcs8(key.serialize_der().into()),
        )
        .expect("a TLS config");
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("a port");
    port.send(listener.local_addr().expect("addr").port())
        .expect("report the port");
    loop {
        let Ok((tcp, _)) = listener.accept().await else {
            continue;
        };
        let (acceptor, logs) = (acceptor.clone(), logs.clone());
        tokio::spawn(async move {
            let Ok(mut tls) = acceptor.accept(tcp).await else {
                return;
            };
            let mut request = Vec::new();
            let mut buf = [0u8; 4096];
            while !request.windows(4).any(|w| w == b"\r\n\r\n") {
                match tls.read(&mut buf).await {
                    Ok(0) | Err(_) => return,
                    Ok(n) => request.extend_from_slice(&buf[..n]),
                }
            }
            let text = String::from_utf8_lossy(&request);
            let path = text.split_whitespace().nth(1).unwrap_or("/");
            // /containerLogs/<namespace>/<pod>/<container>?...
            let parts: Vec<&str> = path.split('?').next().unwrap_or("").split('/').collect();
            let body = (parts.len() >= 5 && parts[1] == "containerLogs")
                .then(|| logs.lock().expect("logs").get(parts[3]).cloned())
                .flatten();
            let response = match body {
                Some(body) => format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                ),
                None => "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".to_owned(),
            };
            let _ = tls.write_all(response.as_bytes()).await;
            let _ = tls.shutdown().await;
        });
    }
}

/// The node loop: binds and "runs" every Pod of `namespace` until the test ends.
fn run_node(client: kube::Client, namespace: String, logs: Logs) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let pods: Api<Pod> = Api::namespaced(client.clone(), &namespace);
        let config_maps: Api<ConfigMap> = Api::namespaced(client.clone(), &namespace);
        let mut handled = std::collections::HashSet::new();
        loop {
            for pod in pods
                .list(&ListParams::default())
                .await
                .map(|l| l.items)
                .unwrap_or_default()
            {
                let name = pod.metadata.name.clone().unwrap_or_default();
                if pod.metadata.deletion_timestamp.is_some() || !handled.insert(name.clone()) {
                    continue;
                }
                let binding = json!({"apiVersion": "v1", "kind": "Binding", "metadata": {"name": name},
                                     "target": {"apiVersion": "v1", "kind": "Node", "name": NODE}});
                let _ = pods
                    .create_subresource::<serde_json::Value, serde_json::Value>(
                        "binding",
                        &name,
                        &PostParams::default(),
                        &binding,
                    )
                    .await;
                let status = play_pod(&pod, &config_maps, &logs).await;
                let _ = pods
                    .patch_status(&name, &PatchParams::default(), &Patch::Merge(json!({"status": status})))
                    .await;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    })
}

fn container_status(name: &str, image: &str, state: serde_json::Value) -> serde_json::Value {
    json!({"name": name, "image": image, "imageID": "", "ready": false, "restartCount": 0, "state": state})
}

fn terminated(code: i32, reason: &str) -> serde_json::Value {
    let now = k8s_openapi::jiff::Timestamp::now().to_string();
    json!({"terminated": {"exitCode": code, "reason": reason, "startedAt": now, "finishedAt": now}})
}

/// Runs the Pod's containers as local processes and returns the status a kubelet would report.
async fn play_pod(pod: &Pod, config_maps: &Api<ConfigMap>, logs: &Logs) -> serde_json::Value {
    let spec = pod.spec.clone().expect("a pod spec");
    let init = spec.init_containers.clone().unwrap_or_default();
    let build = spec.containers[0].clone();
    let image = build.image.clone().unwrap_or_default();
    let fetch_image = init.first().and_then(|c| c.image.clone()).unwrap_or_default();
    let fetch_ok = || vec![container_status("fetch", &fetch_image, terminated(0, "Completed"))];
    if image == "kubeheal-test/missing" {
        return json!({"phase": "Pending", "initContainerStatuses": fetch_ok(), "containerStatuses": [container_status(
            "build", &image, json!({"waiting": {"reason": "ErrImagePull", "message": "pull access denied for kubeheal-test/missing"}}))]});
    }
    if image == "kubeheal-test/hang" {
        let now = k8s_openapi::jiff::Timestamp::now().to_string();
        return json!({"phase": "Running", "initContainerStatuses": fetch_ok(),
                      "containerStatuses": [container_status("build", &image, json!({"running": {"startedAt": now}}))]});
    }
    // The Pod's volumes, as local folders.
    let volumes = tempfile::tempdir().expect("a temp dir").keep();
    let workspace = volumes.join("workspace");
    let patches = volumes.join("patches");
    std::fs::create_dir_all(&workspace).expect("mkdir");
    std::fs::create_dir_all(&patches).expect("mkdir");
    for volume in spec.volumes.iter().flatten() {
        if let Some(cm) = volume.config_map.as_ref()
            && let Ok(cm) = config_maps.get(&cm.name).await
        {
            for (key, value) in cm.data.unwrap_or_default() {
                std::fs::write(patches.join(key), value).expect("write patch");
            }
        }
    }
    let run = |container: &k8s_openapi::api::core::v1::Container| {
        let mut command = Command::new("sh");
        command.args(&container.command.as_ref().expect("a command")[1..]);
        for env in container.env.iter().flatten() {
            if let Some(value) = &env.value {
                command.env(&env.name, value);
            }
        }
        command
            .env("WORKSPACE", &workspace)
            .env("PATCHES", &patches)
            .env("HOME", &workspace)
            .env("KUBEHEAL_ARTIFACTS", workspace.join("artifacts"));
        command.output().expect("the container's command runs")
    };
    let fetch = run(&init[0]);
    if !fetch.status.success() {
        logs.lock().expect("logs").insert(
            pod.metadata.name.clone().unwrap_or_default(),
            String::from_utf8_lossy(&fetch.stderr).into_owned(),
        );
        return json!({"phase": "Failed", "initContainerStatuses": [container_status("fetch", &fetch_image, terminated(fetch.status.code().unwrap_or(1), "Error"))],
                      "containerStatuses": [container_status("build", &image, json!({"waiting": {"reason": "PodInitializing"}}))]});
    }
    let out = run(&build);
    logs.lock().expect("logs").insert(
        pod.metadata.name.clone().unwrap_or_default(),
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    );
    let (code, reason) = match (image.as_str(), out.status.code().unwrap_or(1)) {
        ("kubeheal-test/oom", _) => (137, "OOMKilled"),
        (_, 0) => (0, "Completed"),
        (_, code) => (code, "Error"),
    };
    json!({"phase": if code == 0 { "Succeeded" } else { "Failed" }, "initContainerStatuses": fetch_ok(),
           "containerStatuses": [container_status("build", &image, terminated(code, reason))]})
}

/// A Git repository with a build script, as a `file://` source; returns (url, commit).
fn repository(dir: &Path, script: &str) -> (String, String) {
    let git = |args: &[&str]| git(dir, args);
    git(&["init", "-q"]);
    std::fs::write(dir.join("check.sh"), script).expect("write");
    std::fs::write(dir.join("greeting.txt"), "hello\n").expect("write");
    git(&["add", "."]);
    git(&["commit", "-qm", "initial"]);
    (format!("file://{}", dir.display()), git(&["rev-parse", "HEAD"]))
}

struct Setup {
    ns: crate::support::cluster::TestNamespace,
    client: kube::Client,
    request: JobRequest,
    _repo: tempfile::TempDir,
    node: tokio::task::JoinHandle<()>,
}

async fn setup(test: &str, script: &str, image: &str, timeout: Duration) -> Setup {
    let plane = control_plane();
    plane.ensure_controller_manager();
    let logs = kubelet(plane);
    let ns = plane.namespace(test);
    let client = plane.client().await;
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/healrun.yaml");
    let out = plane.kubectl([
        "apply",
        "--server-side",
        "-n",
        &ns.name,
        "-f",
        &path.display().to_string(),
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let run = Api::<HealRun>::namespaced(client.clone(), &ns.name)
        .get("payments-api")
        .await
        .expect("the HealRun");
    let repo = tempfile::tempdir().expect("a temp dir");
    let (url, commit) = repository(repo.path(), script);
    let request = JobRequest {
        owner_name: "payments-api".into(),
        owner: run.controller_owner_ref(&()).expect("an owner reference"),
        namespace: ns.name.clone(),
        commit: commit.clone(),
        run: RunRequest {
            cycle: 1,
            source: GitSource {
                url,
                ..GitSource::default()
            },
            revision: Some(commit),
            patches: vec!["--- a/greeting.txt\n+++ b/greeting.txt\n@@ -1 +1 @@\n-hello\n+hello, patched\n".into()],
            project_type: ProjectType::Auto,
            image: Some(image.into()),
            command: Some("sh ./check.sh".into()),
            timeout,
            secrets: vec!["s3cr3t-value-from-a-secret".into()],
        },
    };
    let node = run_node(client.clone(), ns.name.clone(), logs);
    Setup {
        ns,
        client,
        request,
        _repo: repo,
        node,
    }
}

#[tokio::test]
async fn a_failing_build_in_a_job_gives_its_exit_code_and_a_redacted_log_that_survives_the_pod() {
    let script = "cat greeting.txt\necho 'token s3cr3t-value-from-a-secret'\necho 'FAILED tests/test_x.py::test_y' >&2\nexit 3\n";
    let s = setup(
        "job-failing-build",
        script,
        "python:3.12-slim",
        Duration::from_secs(120),
    )
    .await;
    let execution = JobExecutor::new(s.client.clone())
        .execute(&s.request)
        .await
        .expect("the Job runs");
    let e = &execution.envelope;
    assert_eq!(e.run_id, s.request.job_name());
    assert_eq!(e.status, RunStatus::Error, "{e:?}");
    assert_eq!(e.exit_code, Some(3));
    assert_eq!(e.error_class, Some(ErrorClass::RuntimeError));
    assert!(
        execution.log.contains("hello, patched"),
        "the patch was not applied: {}",
        execution.log
    );
    assert!(
        execution.log.contains("FAILED tests/test_x.py::test_y"),
        "{}",
        execution.log
    );
    assert!(
        !execution.log.contains("s3cr3t-value") && e.redactions_applied,
        "{}",
        execution.log
    );

    // The Job as the API server stored it: hardened, bounded, owned.
    let job = Api::<Job>::namespaced(s.client.clone(), &s.ns.name)
        .get(&s.request.job_name())
        .await
        .expect("the Job");
    let spec = job.spec.clone().expect("spec");
    assert_eq!(spec.backoff_limit, Some(0));
    assert_eq!(spec.active_deadline_seconds, Some(120));
    assert!(spec.ttl_seconds_after_finished.is_some() && spec.pod_failure_policy.is_some());
    let pod_spec = spec.template.spec.expect("pod spec");
    assert_eq!(pod_spec.automount_service_account_token, Some(false));
    for c in pod_spec
        .containers
        .iter()
        .chain(pod_spec.init_containers.iter().flatten())
    {
        let sc = c.security_context.clone().expect("a security context");
        assert_eq!(sc.run_as_non_root, Some(true));
        assert_eq!(sc.allow_privilege_escalation, Some(false));
        assert_eq!(sc.capabilities.and_then(|c| c.drop), Some(vec!["ALL".to_owned()]));
        assert_eq!(sc.seccomp_profile.map(|p| p.type_), Some("RuntimeDefault".to_owned()));
        assert!(
            c.resources
                .as_ref()
                .and_then(|r| r.limits.as_ref())
                .is_some_and(|l| l.contains_key("memory"))
        );
    }
    assert_eq!(job.metadata.owner_references.expect("owned")[0].name, "payments-api");

    // The kept log outlives the Pod.
    let pods: Api<Pod> = Api::namespaced(s.client.clone(), &s.ns.name);
    pods.delete_collection(&DeleteParams::default().grace_period(0), &ListParams::default())
        .await
        .expect("pods deleted");
    let kept = kept_log(s.client.clone(), &s.ns.name, &s.request.job_name())
        .await
        .expect("read")
        .expect("the log is kept");
    assert_eq!(kept, execution.log);
    s.node.abort();
}

#[tokio::test]
async fn the_same_execution_twice_reuses_its_job_and_a_passing_build_succeeds() {
    let s = setup(
        "job-idempotent",
        "cat greeting.txt\n",
        "python:3.12-slim",
        Duration::from_secs(120),
    )
    .await;
    let executor = JobExecutor::new(s.client.clone());
    let first = executor.execute(&s.request).await.expect("the Job runs");
    assert_eq!(first.envelope.status, RunStatus::Success, "{:?}", first.envelope);
    // The second time through the Executor trait, bound to the HealRun, as the operator uses it.
    let bound: Box<dyn Executor> = Box::new(OwnedJobExecutor {
        executor: JobExecutor::new(s.client.clone()),
        namespace: s.ns.name.clone(),
        owner_name: s.request.owner_name.clone(),
        owner: s.request.owner.clone(),
    });

    let second = bound.execute(&s.request.run).await.expect("the Job is found");
    assert_eq!(second.envelope.run_id, first.envelope.run_id);
    let jobs = Api::<Job>::namespaced(s.client.clone(), &s.ns.name)
        .list(&ListParams::default())
        .await
        .expect("list");
    assert_eq!(jobs.items.len(), 1, "a second Job was created");
    s.node.abort();
}

#[tokio::test]
async fn each_node_failure_reason_gives_its_error_class() {
    for (image, timeout, class) in [
        ("kubeheal-test/oom", Duration::from_secs(120), ErrorClass::OomKilled),
        ("kubeheal-test/missing", Duration::from_secs(120), ErrorClass::ImagePull),
        ("kubeheal-test/hang", Duration::from_secs(3), ErrorClass::Timeout),
    ] {
        let s = setup(
            &format!("job-{}", image.rsplit('/').next().unwrap_or("x")),
            "echo running\n",
            image,
            timeout,
        )
        .await;
        let execution = JobExecutor::new(s.client.clone())
            .execute(&s.request)
            .await
            .expect("the Job runs");
        assert_eq!(
            execution.envelope.error_class,
            Some(class),
            "{image}: {:?}",
            execution.envelope
        );
        assert!(execution.envelope.suggested_fix.is_some());
        s.node.abort();
    }
}
