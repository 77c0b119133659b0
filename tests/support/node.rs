//! The node's part, played by the test: there is no kubelet or container runtime here.
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
//! - A container without a command runs its image's entrypoint: the node's "registry" holds, for
//!   each image a test publishes with [`publish_image`], the `sh` script that entrypoint is. It
//!   runs in the container's `workingDir` (mapped to the local volumes) with its `env` and the
//!   keys of the Secrets its `envFrom` names (optional ones may be missing), as a kubelet would.
//!
//! Everything else — Jobs, Pods, deadlines, failure policies, log proxying, ConfigMaps, owner
//! references — is the real API server and kube-controller-manager.

use std::collections::HashMap;
use std::os::unix::process::CommandExt;
use std::process::Command;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use k8s_openapi::api::core::v1::{ConfigMap, Pod, Secret};
use kube::api::{Api, ListParams, Patch, PatchParams, PostParams};
use serde_json::json;

use super::cluster::ControlPlane;

pub const NODE: &str = "kubeheal-test-node";

/// What each Pod's build container printed, served to the API server as the kubelet would.
pub type Logs = Arc<Mutex<HashMap<String, String>>>;

static KUBELET: OnceLock<Logs> = OnceLock::new();

/// Images that have an entrypoint, by name: the `sh` script the entrypoint runs.
static IMAGES: OnceLock<Mutex<HashMap<String, String>>> = OnceLock::new();

/// Publishes `image` (a unique name per test) with an entrypoint that runs `script` under `sh`.
pub fn publish_image(image: &str, script: &str) {
    IMAGES
        .get_or_init(Default::default)
        .lock()
        .expect("images")
        .insert(image.to_owned(), script.to_owned());
}

fn entrypoint(image: &str) -> Option<String> {
    IMAGES.get()?.lock().expect("images").get(image).cloned()
}

/// Starts the fake kubelet (once per test binary) and registers the Node that points at it.
pub fn kubelet(plane: &'static ControlPlane) -> Logs {
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
            // A sidecar's own log is kept as `<pod>/<container>`; the build's as `<pod>`.
            let body = (parts.len() >= 5 && parts[1] == "containerLogs")
                .then(|| {
                    let logs = logs.lock().expect("logs");
                    logs.get(&format!("{}/{}", parts[3], parts[4]))
                        .or_else(|| logs.get(parts[3]))
                        .cloned()
                })
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
pub fn run_node(client: kube::Client, namespace: String, logs: Logs) -> tokio::task::JoinHandle<()> {
    run_node_held(client, namespace, logs, Hold::default())
}

/// Pods whose names contain one of these strings are left alone (a node that is slow to start
/// them) until the string is released.
#[derive(Clone, Default)]
pub struct Hold(Arc<Mutex<Vec<String>>>);

impl Hold {
    pub fn new(names: &[&str]) -> Self {
        Hold(Arc::new(Mutex::new(names.iter().map(|s| s.to_string()).collect())))
    }

    pub fn add(&self, name: &str) {
        self.0.lock().expect("hold").push(name.to_owned());
    }

    pub fn release(&self, name: &str) {
        self.0.lock().expect("hold").retain(|n| n != name);
    }

    fn holds(&self, pod: &str) -> bool {
        self.0.lock().expect("hold").iter().any(|n| pod.contains(n.as_str()))
    }
}

/// The node loop, which leaves the Pods `hold` names alone until they are released.
pub fn run_node_held(client: kube::Client, namespace: String, logs: Logs, hold: Hold) -> tokio::task::JoinHandle<()> {
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
                if pod.metadata.deletion_timestamp.is_some() || hold.holds(&name) || !handled.insert(name.clone()) {
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
    // A tool Job's untouched copy of the repository, seen only by containers that mount it.
    let pristine = volumes.join("pristine");
    for dir in [&workspace, &patches, &pristine] {
        std::fs::create_dir_all(dir).expect("mkdir");
    }
    for volume in spec.volumes.iter().flatten() {
        if let Some(cm) = volume.config_map.as_ref()
            && let Ok(cm) = config_maps.get(&cm.name).await
        {
            for (key, value) in cm.data.unwrap_or_default() {
                std::fs::write(patches.join(key), value).expect("write patch");
            }
        }
    }
    let secrets: Api<Secret> = Api::namespaced(
        config_maps.clone().into_client(),
        &pod.metadata.namespace.clone().unwrap_or_default(),
    );
    let mut secret_env: HashMap<String, Vec<(String, String)>> = HashMap::new();
    for container in init.iter().chain(&spec.containers) {
        for name in container
            .env_from
            .iter()
            .flatten()
            .filter_map(|e| Some(e.secret_ref.as_ref()?.name.clone()))
        {
            let data = secrets
                .get_opt(&name)
                .await
                .ok()
                .flatten()
                .and_then(|s| s.data)
                .unwrap_or_default();
            let values = data
                .into_iter()
                .map(|(k, v)| (k, String::from_utf8_lossy(&v.0).into_owned()))
                .collect();
            secret_env.insert(name, values);
        }
    }
    // `env` entries from a Secret's key (the fetch step's Git token).
    let mut secret_keys: HashMap<(String, String), String> = HashMap::new();
    for container in init.iter().chain(&spec.containers) {
        for selector in container
            .env
            .iter()
            .flatten()
            .filter_map(|e| e.value_from.as_ref()?.secret_key_ref.as_ref())
        {
            let value = secrets
                .get_opt(&selector.name)
                .await
                .ok()
                .flatten()
                .and_then(|s| s.data?.remove(&selector.key))
                .map(|v| String::from_utf8_lossy(&v.0).into_owned());
            if let Some(value) = value {
                secret_keys.insert((selector.name.clone(), selector.key.clone()), value);
            }
        }
    }
    let command_of = |container: &k8s_openapi::api::core::v1::Container| {
        // kubeheal's own image (the probe sidecar) runs the kubeheal this test binary was built
        // with; everything else is a `sh` script. `$(VAR)` in the arguments is expanded from the
        // container's variables, as the kubelet does, with the volumes' local folders.
        let expand = |arg: &String| {
            let mut arg = arg.replace("$(WORKSPACE)", &workspace.display().to_string());
            for env in container.env.iter().flatten() {
                if let Some(value) = &env.value {
                    arg = arg.replace(&format!("$({})", env.name), value);
                }
            }
            arg
        };
        let mut command;
        match &container.command {
            Some(cmd) if cmd[0] == "/usr/local/bin/kubeheal" => {
                command = Command::new(env!("CARGO_BIN_EXE_kubeheal"));
                command.args(cmd[1..].iter().chain(container.args.iter().flatten()).map(expand));
            }
            Some(cmd) => {
                command = Command::new("sh");
                command.args(&cmd[1..]);
            }
            None => {
                command = Command::new("sh");
                command
                    .arg("-c")
                    .arg(entrypoint(container.image.as_deref().unwrap_or_default()).expect("the image is published"));
            }
        };
        if let Some(dir) = &container.working_dir {
            command.current_dir(workspace.join(dir.trim_start_matches("/workspace").trim_start_matches('/')));
        }
        for name in container
            .env_from
            .iter()
            .flatten()
            .filter_map(|e| Some(e.secret_ref.as_ref()?.name.clone()))
        {
            command.envs(secret_env.get(&name).into_iter().flatten().map(|(k, v)| (k, v)));
        }
        for env in container.env.iter().flatten() {
            let from_secret = env
                .value_from
                .as_ref()
                .and_then(|v| v.secret_key_ref.as_ref())
                .and_then(|s| secret_keys.get(&(s.name.clone(), s.key.clone())));
            if let Some(value) = env.value.as_ref().or(from_secret) {
                command.env(&env.name, value);
            }
        }
        let mounts_pristine = container.volume_mounts.iter().flatten().any(|m| m.name == "pristine");
        if mounts_pristine {
            command.env("KUBEHEAL_PRISTINE", &pristine);
        }
        command
            .env("WORKSPACE", &workspace)
            .env("PATCHES", &patches)
            .env("HOME", &workspace)
            .env("KUBEHEAL_ARTIFACTS", workspace.join("artifacts"));
        // A group of its own: what the container started ends with it, as a container's
        // processes do when its first process exits.
        command.process_group(0);
        command
    };
    let run = |container: &k8s_openapi::api::core::v1::Container| {
        let child = command_of(container)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("the container's command runs");
        let group = child.id();
        let output = child.wait_with_output().expect("the container's command ends");
        // The group may be gone already.
        let _ = Command::new("kill")
            .args(["-KILL", "--", &format!("-{group}")])
            .output();
        output
    };
    // Native sidecars (init containers that keep running) start in order with the other init
    // containers and are stopped once the main container has ended.
    let mut sidecars: Vec<(std::process::Child, String, String)> = Vec::new();
    let is_sidecar = |c: &k8s_openapi::api::core::v1::Container| c.restart_policy.as_deref() == Some("Always");
    // What the kubelet serves as the Pod's log: the last container that ran.
    let keep_log = |out: &std::process::Output| {
        logs.lock().expect("logs").insert(
            pod.metadata.name.clone().unwrap_or_default(),
            format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ),
        );
    };
    // The init containers in order; the first that fails fails the Pod.
    let mut init_statuses = Vec::new();
    for container in &init {
        if is_sidecar(container) {
            let child = command_of(container)
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .expect("the sidecar's command runs");
            sidecars.push((
                child,
                container.name.clone(),
                container.image.clone().unwrap_or_default(),
            ));
            continue;
        }
        let out = run(container);
        let init_image = container.image.clone().unwrap_or_default();
        if !out.status.success() {
            keep_log(&out);
            init_statuses.push(container_status(
                &container.name,
                &init_image,
                terminated(out.status.code().unwrap_or(1), "Error"),
            ));
            return json!({"phase": "Failed", "initContainerStatuses": init_statuses,
                          "containerStatuses": [container_status("build", &image, json!({"waiting": {"reason": "PodInitializing"}}))]});
        }
        init_statuses.push(container_status(
            &container.name,
            &init_image,
            terminated(0, "Completed"),
        ));
    }
    let out = run(&build);
    keep_log(&out);
    for (child, name, sidecar_image) in sidecars {
        let _ = Command::new("kill")
            .args(["-TERM", "--", &format!("-{}", child.id())])
            .output();
        let ended = child.wait_with_output().expect("the sidecar ends");
        let printed = String::from_utf8_lossy(&ended.stderr);
        if !printed.trim().is_empty() {
            eprintln!("[node] sidecar {name} printed: {printed}");
        }
        logs.lock().expect("logs").insert(
            format!("{}/{name}", pod.metadata.name.clone().unwrap_or_default()),
            String::from_utf8_lossy(&ended.stdout).into_owned(),
        );
        init_statuses.push(container_status(&name, &sidecar_image, terminated(143, "Error")));
    }
    let (code, reason) = match (image.as_str(), out.status.code().unwrap_or(1)) {
        ("kubeheal-test/oom", _) => (137, "OOMKilled"),
        (_, 0) => (0, "Completed"),
        (_, code) => (code, "Error"),
    };
    json!({"phase": if code == 0 { "Succeeded" } else { "Failed" }, "initContainerStatuses": init_statuses,
           "containerStatuses": [container_status("build", &image, terminated(code, reason))]})
}
