//! A real Kubernetes control plane for tests: etcd + kube-apiserver (and, for tests that need
//! Jobs and garbage collection, kube-controller-manager) on loopback, like controller-runtime's
//! envtest.
//!
//! One control plane is started per test binary, on first use, and shared by its tests; each test
//! gets its own namespace ([`ControlPlane::namespace`]) and, when it panics, the objects in that
//! namespace are printed. The binaries come from `KUBEBUILDER_ASSETS`, or from
//! `tests/control-plane/build.sh`, which builds them from the Go module proxy once and caches them
//! under `~/.cache/kubeheal/k8s/<version>/`.
//!
//! There is no kubelet and no container runtime: tests that need a Pod to run play the node's
//! part themselves (they run the container's command as a local process and report its result
//! through the API).
//!
//! Every process runs in its own process group, watched by a small `bash` watchdog in another
//! group: when the test binary ends — normally, by a panic, or killed — the watchdog stops the
//! process group and removes the temporary directory, so no etcd or apiserver outlives its tests.

use std::net::TcpListener;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::{Client, Config};

/// The admin user's static bearer token; the user is in `system:masters`.
const ADMIN_TOKEN: &str = "kubeheal-test-admin-token";

/// Extra users for RBAC tests: (token, user name, groups).
pub const TEST_USERS: [(&str, &str, &str); 3] = [
    ("kubeheal-test-alice-token", "alice", "kubeheal:approvers"),
    ("kubeheal-test-bob-token", "bob", "kubeheal:viewers"),
    // The operator under test, bound to the chart's ClusterRole and nothing else.
    (
        "kubeheal-test-operator-token",
        "kubeheal-operator",
        "kubeheal:operators",
    ),
];

/// The namespace the chart is installed in on every test control plane (as `helm template
/// kubeheal charts/kubeheal -n kubeheal-system` applied), so the chart's admission policy judges
/// every test's approvals, as it would a user's.
pub const RELEASE_NAMESPACE: &str = "kubeheal-system";

/// A GitOps applier the installed chart names in `approval.gitopsIdentities`: Argo CD's
/// application controller, a ServiceAccount (tests get its token with `kubectl create token`).
pub const GITOPS_NAMESPACE: &str = "argocd";
pub const GITOPS_SERVICE_ACCOUNT: &str = "argocd-application-controller";

/// The values the test control plane's chart is rendered with: the operator's test identity may
/// never approve, and Argo CD applies decisions from Git.
pub fn chart_test_values() -> Vec<String> {
    vec![
        "--set-json".to_owned(),
        r#"approval.operatorIdentities=["kubeheal-operator"]"#.to_owned(),
        "--set-json".to_owned(),
        format!(r#"approval.gitopsIdentities=["system:serviceaccount:{GITOPS_NAMESPACE}:{GITOPS_SERVICE_ACCOUNT}"]"#),
    ]
}

static CONTROL_PLANE: OnceLock<Result<ControlPlane, String>> = OnceLock::new();

/// The shared control plane of this test binary, started on first use with the CRDs in `crds/`
/// installed and Established, and the chart (`charts/kubeheal`, rendered by `helm template` with
/// [`chart_test_values`]) applied in [`RELEASE_NAMESPACE`] with its approval policy enforced. Panics with the reason when it cannot start: a cluster test
/// never passes by skipping.
pub fn control_plane() -> &'static ControlPlane {
    match CONTROL_PLANE.get_or_init(ControlPlane::start_retrying) {
        Ok(plane) => plane,
        Err(reason) => panic!("the test control plane could not start: {reason}"),
    }
}

/// A running etcd + kube-apiserver.
pub struct ControlPlane {
    dir: PathBuf,
    assets: PathBuf,
    kubeconfig: PathBuf,
    server: String,
    processes: Mutex<Vec<Process>>,
    controller_manager: Mutex<Option<Result<(), String>>>,
}

impl ControlPlane {
    /// [`ControlPlane::start`], again (up to three times, in a new folder) when a server could not
    /// bind its port: ports are picked free and bound a moment later by etcd or kube-apiserver,
    /// and another process on the machine may take one in between. Any other failure is final.
    fn start_retrying() -> Result<Self, String> {
        let mut reasons = Vec::new();
        for attempt in 1..=3 {
            let mut started = Vec::new();
            match Self::start(attempt, &mut started) {
                Ok(plane) => return Ok(plane),
                Err(reason) => {
                    for process in &mut started {
                        process.kill();
                    }
                    if !reason.contains("address already in use") {
                        return Err(reason);
                    }
                    eprintln!("the control plane lost a port to another process (attempt {attempt}); starting again");
                    reasons.push(reason);
                }
            }
        }
        Err(reasons.join("\n"))
    }

    /// Starts etcd and kube-apiserver (each pushed on `started` as soon as it runs, so that a
    /// failed start can be stopped) and installs the CRDs and the chart.
    fn start(attempt: u32, started: &mut Vec<Process>) -> Result<Self, String> {
        let assets = assets_dir()?;
        let dir = std::env::temp_dir().join(format!("kubeheal-cp-{}-{attempt}", std::process::id()));
        std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;

        let pki = Pki::generate(&dir)?;
        let tokens = dir.join("tokens.csv");
        let mut token_lines = vec![format!("{ADMIN_TOKEN},admin,admin,system:masters")];
        for (token, user, group) in TEST_USERS {
            token_lines.push(format!("{token},{user},{user},{group}"));
        }
        write(&tokens, &(token_lines.join("\n") + "\n"))?;

        let etcd_client_port = free_port()?;
        let etcd_peer_port = free_port()?;
        let etcd_url = format!("http://127.0.0.1:{etcd_client_port}");
        let peer_url = format!("http://127.0.0.1:{etcd_peer_port}");
        let etcd_data = dir.join("etcd");
        // The etcd watchdog also removes the whole directory once everything is stopped.
        let etcd = spawn_watched(
            &dir,
            "etcd",
            Command::new(assets.join("etcd")).args([
                "--name=default",
                &format!("--data-dir={}", etcd_data.display()),
                &format!("--listen-client-urls={etcd_url}"),
                &format!("--advertise-client-urls={etcd_url}"),
                &format!("--listen-peer-urls={peer_url}"),
                &format!("--initial-advertise-peer-urls={peer_url}"),
                &format!("--initial-cluster=default={peer_url}"),
                "--unsafe-no-fsync=true",
                "--log-level=warn",
            ]),
            Some(&dir),
        )?;
        started.push(etcd);

        let secure_port = free_port()?;
        let server = format!("https://127.0.0.1:{secure_port}");
        let apiserver = spawn_watched(
            &dir,
            "kube-apiserver",
            Command::new(assets.join("kube-apiserver")).args([
                &format!("--etcd-servers={etcd_url}"),
                "--bind-address=127.0.0.1",
                "--advertise-address=127.0.0.1",
                &format!("--secure-port={secure_port}"),
                &format!("--cert-dir={}", dir.join("apiserver-certs").display()),
                &format!("--tls-cert-file={}", pki.server_cert.display()),
                &format!("--tls-private-key-file={}", pki.server_key.display()),
                &format!("--client-ca-file={}", pki.ca_cert.display()),
                &format!("--token-auth-file={}", tokens.display()),
                "--authorization-mode=RBAC",
                "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
                &format!(
                    "--service-account-key-file={}",
                    pki.service_account_public_key.display()
                ),
                &format!(
                    "--service-account-signing-key-file={}",
                    pki.service_account_key.display()
                ),
                "--service-cluster-ip-range=10.0.0.0/24",
                "--allow-privileged=true",
                "--v=0",
            ]),
            None,
        )?;
        started.push(apiserver);

        let kubeconfig = dir.join("kubeconfig");
        write(&kubeconfig, &kubeconfig_yaml(&server, &pki.ca_cert, ADMIN_TOKEN))?;

        let mut plane = ControlPlane {
            dir,
            assets,
            kubeconfig,
            server,
            processes: Mutex::new(std::mem::take(started)),
            controller_manager: Mutex::new(None),
        };
        let installed = plane
            .wait_ready()
            .and_then(|()| plane.install_crds())
            .and_then(|()| plane.install_chart());
        match installed {
            Ok(()) => Ok(plane),
            Err(reason) => {
                *started = plane.processes.into_inner().unwrap_or_else(|e| e.into_inner());
                Err(reason)
            }
        }
    }

    /// Polls `/readyz` until the API server answers; fails at once when a server process exits.
    fn wait_ready(&mut self) -> Result<(), String> {
        let deadline = Instant::now() + Duration::from_secs(120);
        loop {
            if self.kubectl(["get", "--raw=/readyz"]).status.success() {
                return Ok(());
            }
            let processes = self.processes.get_mut().unwrap_or_else(|e| e.into_inner());
            if let Some(reason) = processes.iter_mut().find_map(Process::exited) {
                return Err(reason);
            }
            if Instant::now() > deadline {
                let logs: Vec<String> = processes
                    .iter()
                    .map(|p| format!("{} log ends with:\n{}", p.name, tail(&p.log, 20)))
                    .collect();
                return Err(format!("kube-apiserver was not ready after 120 s\n{}", logs.join("\n")));
            }
            std::thread::sleep(Duration::from_millis(250));
        }
    }

    fn install_crds(&self) -> Result<(), String> {
        let crds = repo_root().join("crds");
        let out = self.kubectl(["apply", "--server-side", "-f", &crds.display().to_string()]);
        if !out.status.success() {
            return Err(format!(
                "kubectl apply of crds/ failed: {}",
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        let out = self.kubectl([
            "wait",
            "--for=condition=Established",
            "--timeout=60s",
            "crd/healruns.kubeheal.dev",
            "crd/codefixdds.kubeheal.dev",
            "crd/healertickets.kubeheal.dev",
        ]);
        if !out.status.success() {
            return Err(format!(
                "the CRDs did not become Established: {}",
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        Ok(())
    }

    /// Applies the chart as a user gets it (`helm template` of `charts/kubeheal`, CRDs aside) and
    /// waits until the API server enforces its approval policy.
    fn install_chart(&self) -> Result<(), String> {
        let out = self.kubectl(["create", "namespace", RELEASE_NAMESPACE]);
        if !out.status.success() {
            return Err(format!(
                "cannot create namespace {RELEASE_NAMESPACE}: {}",
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        let rendered = self.helm_template(RELEASE_NAMESPACE, &chart_test_values())?;
        let file = self.dir.join("chart.yaml");
        write(&file, &rendered)?;
        let out = self.kubectl(["apply", "-f", &file.display().to_string()]);
        if !out.status.success() {
            return Err(format!(
                "kubectl apply of the rendered chart failed: {}",
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        self.wait_approval_policy_enforced()
    }

    /// A ValidatingAdmissionPolicy is enforced only once the API server has loaded it and its
    /// binding, a moment after they are created. Polls with a server-side dry run of a decision
    /// under another person's name until it is refused with the policy's message.
    fn wait_approval_policy_enforced(&self) -> Result<(), String> {
        let example = repo_root().join("examples/seed-002/codefixdds.yaml");
        let out = self.kubectl(["apply", "-n", RELEASE_NAMESPACE, "-f", &example.display().to_string()]);
        if !out.status.success() {
            return Err(format!(
                "cannot create the CodeFixDDS that probes the approval policy: {}",
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        let decision = r#"{"spec":{"approval":{"decision":"Rejected","approvedBy":"policy-probe"}}}"#;
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let out = self.kubectl([
                "patch",
                "codefixdds",
                "dds-fix-20260202-001",
                "-n",
                RELEASE_NAMESPACE,
                "--dry-run=server",
                "--type=merge",
                "-p",
                decision,
            ]);
            let stderr = String::from_utf8_lossy(&out.stderr);
            if !out.status.success() && stderr.contains("approvedBy must be your own user name") {
                // No controller under test should ever see the probe.
                self.kubectl([
                    "delete",
                    "codefixdds",
                    "dds-fix-20260202-001",
                    "-n",
                    RELEASE_NAMESPACE,
                    "--wait=false",
                ]);
                return Ok(());
            }
            if Instant::now() > deadline {
                return Err(format!(
                    "the chart's approval policy was not enforced 60 s after it was applied: a decision \
                     by admin under the name policy-probe was {}",
                    if out.status.success() {
                        "admitted".to_owned()
                    } else {
                        format!("refused otherwise: {stderr}")
                    }
                ));
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// Renders `charts/kubeheal` as release `kubeheal` in `namespace` with extra `helm template`
    /// arguments (`--set`, `--show-only`…).
    pub fn helm_template<S: AsRef<std::ffi::OsStr>>(&self, namespace: &str, args: &[S]) -> Result<String, String> {
        render_chart(&self.assets, &self.dir, namespace, args)
    }

    /// Starts kube-controller-manager (Job, Deployment, ReplicaSet, garbage-collector, namespace
    /// and service-account controllers) once, for tests that need Jobs or Deployments to create
    /// Pods or owned objects to be collected. (No scheduler: the chart's own Deployment in
    /// [`RELEASE_NAMESPACE`] gets a Pod that stays Pending; the test node binds only its test's.)
    pub fn ensure_controller_manager(&self) {
        let mut started = self.controller_manager.lock().unwrap_or_else(|e| e.into_inner());
        let result = started.get_or_insert_with(|| {
            let process = spawn_watched(
                &self.dir,
                "kube-controller-manager",
                Command::new(self.assets.join("kube-controller-manager")).args([
                    &format!("--kubeconfig={}", self.kubeconfig.display()),
                    "--controllers=job,deployment-controller,replicaset-controller,garbage-collector-controller,namespace-controller,serviceaccount-controller,ttl-after-finished-controller",
                    "--leader-elect=false",
                    "--secure-port=0",
                    "--concurrent-gc-syncs=5",
                    "--v=0",
                ]),
                None,
            )?;
            self.processes.lock().unwrap_or_else(|e| e.into_inner()).push(process);
            Ok(())
        });
        if let Err(reason) = result {
            panic!("kube-controller-manager could not start: {reason}");
        }
    }

    /// The API server's URL.
    pub fn server(&self) -> &str {
        &self.server
    }

    /// Path of an admin kubeconfig for this control plane.
    pub fn kubeconfig(&self) -> &Path {
        &self.kubeconfig
    }

    /// Runs this control plane's `kubectl` with the admin kubeconfig.
    pub fn kubectl<I, S>(&self, args: I) -> Output
    where
        I: IntoIterator<Item = S>,
        S: AsRef<std::ffi::OsStr>,
    {
        Command::new(self.assets.join("kubectl"))
            .arg(format!("--kubeconfig={}", self.kubeconfig.display()))
            .args(args)
            .stdin(Stdio::null())
            .output()
            .expect("kubectl from KUBEBUILDER_ASSETS could not be run")
    }

    /// Runs `kubectl` acting as one of [`TEST_USERS`], authenticated by that user's token.
    pub fn kubectl_as<I, S>(&self, user: &str, args: I) -> Output
    where
        I: IntoIterator<Item = S>,
        S: AsRef<std::ffi::OsStr>,
    {
        let (token, _, _) = TEST_USERS
            .iter()
            .find(|(_, name, _)| *name == user)
            .unwrap_or_else(|| panic!("{user} is not one of the test users"));
        self.kubectl_with_token(token, args)
    }

    /// Runs `kubectl` authenticated by `token` (a ServiceAccount's, say).
    pub fn kubectl_with_token<I, S>(&self, token: &str, args: I) -> Output
    where
        I: IntoIterator<Item = S>,
        S: AsRef<std::ffi::OsStr>,
    {
        Command::new(self.assets.join("kubectl"))
            .arg(format!("--kubeconfig={}", self.kubeconfig.display()))
            .arg(format!("--token={token}"))
            .args(args)
            .stdin(Stdio::null())
            .output()
            .expect("kubectl from KUBEBUILDER_ASSETS could not be run")
    }

    /// A kubeconfig that authenticates as one of [`TEST_USERS`].
    pub fn kubeconfig_as(&self, user: &str) -> PathBuf {
        let (token, _, _) = TEST_USERS
            .iter()
            .find(|(_, name, _)| *name == user)
            .unwrap_or_else(|| panic!("{user} is not one of the test users"));
        self.kubeconfig_with_token(user, token)
    }

    /// A kubeconfig (named after `who`) that authenticates with `token`.
    ///
    /// Tests running at once ask for the same user's file, and an operator one of them started
    /// may be reading it while another test writes it: the file is written beside its name and
    /// renamed over it, so a reader sees the old whole file or the new one, never a truncated one.
    pub fn kubeconfig_with_token(&self, who: &str, token: &str) -> PathBuf {
        static WRITES: AtomicU32 = AtomicU32::new(0);
        let admin = std::fs::read_to_string(&self.kubeconfig).expect("the admin kubeconfig is readable");
        let name = format!("kubeconfig-{}", who.replace([':', '/'], "-"));
        let path = self.dir.join(&name);
        let draft = self
            .dir
            .join(format!("{name}.draft-{}", WRITES.fetch_add(1, Ordering::Relaxed)));
        std::fs::write(&draft, admin.replace(ADMIN_TOKEN, token)).expect("write a kubeconfig");
        std::fs::rename(&draft, &path).expect("move the kubeconfig into place");
        path
    }

    /// A token of the ServiceAccount `ns/name` (both created when missing) from the TokenRequest
    /// API, as a Pod running under it would hold.
    pub fn service_account_token(&self, ns: &str, name: &str) -> String {
        for create in [
            vec!["create", "namespace", ns],
            vec!["create", "serviceaccount", name, "-n", ns],
        ] {
            let out = self.kubectl(&create);
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(out.status.success() || stderr.contains("already exists"), "{stderr}");
        }
        let out = self.kubectl(["create", "token", name, "-n", ns, "--duration=1h"]);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    }

    /// A client with admin rights, bound to the calling test's runtime.
    pub async fn client(&self) -> Client {
        let kubeconfig = Kubeconfig::read_from(&self.kubeconfig).expect("the test kubeconfig is readable");
        let config = Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
            .await
            .expect("the test kubeconfig is valid");
        Client::try_from(config).expect("a client can be built from the test kubeconfig")
    }

    /// A fresh namespace for one test, named after it. When the test panics, the objects in the
    /// namespace are printed before it is deleted.
    pub fn namespace(&'static self, test: &str) -> TestNamespace {
        static COUNTER: AtomicU32 = AtomicU32::new(0);
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let mut stem: String = test
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() {
                    c.to_ascii_lowercase()
                } else {
                    '-'
                }
            })
            .collect();
        stem.truncate(50);
        let name = format!("{}-{n}", stem.trim_matches('-'));
        let out = self.kubectl(["create", "namespace", &name]);
        assert!(
            out.status.success(),
            "cannot create namespace {name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        TestNamespace { name, plane: self }
    }
}

/// A namespace that belongs to one test.
pub struct TestNamespace {
    pub name: String,
    plane: &'static ControlPlane,
}

impl Drop for TestNamespace {
    fn drop(&mut self) {
        if std::thread::panicking() {
            let out = self.plane.kubectl([
                "get",
                "kubeheal,jobs,pods,configmaps,secrets,events",
                "-n",
                &self.name,
                "-o",
                "yaml",
            ]);
            eprintln!(
                "---- objects in namespace {} when the test failed ----\n{}{}",
                self.name,
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
        } else {
            self.plane.kubectl(["delete", "namespace", &self.name, "--wait=false"]);
        }
    }
}

/// Binds the chart's operator ClusterRole to the operator's test identity: the operator under
/// test has exactly the permissions the chart grants.
pub fn bind_operator_role(plane: &ControlPlane) {
    // Once per test binary: parallel applies of one new object race to create it.
    static BOUND: std::sync::OnceLock<()> = std::sync::OnceLock::new();
    BOUND.get_or_init(|| apply_operator_role_binding(plane));
}

fn apply_operator_role_binding(plane: &ControlPlane) {
    let role = plane
        .helm_template(
            RELEASE_NAMESPACE,
            &["--show-only", "templates/operator-clusterrole.yaml"],
        )
        .unwrap_or_else(|e| panic!("{e}"));
    let file = std::env::temp_dir().join(format!("kubeheal-operator-role-{}.yaml", std::process::id()));
    std::fs::write(&file, role).expect("write the operator's ClusterRole");
    let out = plane.kubectl(["apply", "-f", &file.display().to_string()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let binding = serde_json::json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
        "metadata": {"name": "kubeheal-operator-test"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "kubeheal-operator"},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "kubeheal:operators"}]});
    let file = std::env::temp_dir().join(format!("kubeheal-operator-binding-{}.json", std::process::id()));
    std::fs::write(&file, binding.to_string()).expect("write the binding");
    let out = plane.kubectl(["apply", "-f", &file.display().to_string()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

/// `helm template kubeheal charts/kubeheal --namespace NS ARGS…` with the `helm` of `assets`,
/// its config and cache kept under `scratch` (never the user's own). The rendered YAML, or what
/// helm said when it failed.
pub fn render_chart<S: AsRef<std::ffi::OsStr>>(
    assets: &Path,
    scratch: &Path,
    namespace: &str,
    args: &[S],
) -> Result<String, String> {
    let home = scratch.join("helm-home");
    let out = Command::new(assets.join("helm"))
        .env("HELM_CONFIG_HOME", home.join("config"))
        .env("HELM_CACHE_HOME", home.join("cache"))
        .env("HELM_DATA_HOME", home.join("data"))
        .args(["template", "kubeheal"])
        .arg(repo_root().join("charts/kubeheal"))
        .args(["--namespace", namespace])
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run {}: {e}", assets.join("helm").display()))?;
    if !out.status.success() {
        return Err(format!(
            "helm template failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    String::from_utf8(out.stdout).map_err(|e| format!("helm template printed something else than UTF-8: {e}"))
}

/// The folder with etcd, kube-apiserver, kube-controller-manager, kubectl and helm.
pub fn assets_dir() -> Result<PathBuf, String> {
    if let Some(dir) = std::env::var_os("KUBEBUILDER_ASSETS") {
        let dir = PathBuf::from(dir);
        for bin in ["etcd", "kube-apiserver", "kube-controller-manager", "kubectl", "helm"] {
            if !dir.join(bin).is_file() {
                return Err(format!(
                    "KUBEBUILDER_ASSETS={} has no {bin}; tests/control-plane/build.sh builds it there",
                    dir.display()
                ));
            }
        }
        return Ok(dir);
    }
    let script = repo_root().join("tests/control-plane/build.sh");
    let out = Command::new("bash")
        .arg(&script)
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| format!("cannot run {}: {e}", script.display()))?;
    if !out.status.success() {
        return Err(format!("{} failed (see its output above)", script.display()));
    }
    Ok(PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()))
}

fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A port that was free a moment ago. Racy by nature, as envtest's; loopback only.
fn free_port() -> Result<u16, String> {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .map_err(|e| format!("no free loopback port: {e}"))
}

/// Starts `command` in its own process group with its output in `<dir>/<name>.log`, and a
/// watchdog that stops the group when this test process is gone (and then removes `cleanup`).
pub fn spawn_watched(dir: &Path, name: &str, command: &mut Command, cleanup: Option<&Path>) -> Result<Process, String> {
    let log = dir.join(format!("{name}.log"));
    let file = std::fs::File::create(&log).map_err(|e| format!("cannot create {}: {e}", log.display()))?;
    let err = file.try_clone().map_err(|e| e.to_string())?;
    let child: Child = command
        .stdin(Stdio::null())
        .stdout(file)
        .stderr(err)
        .process_group(0)
        .spawn()
        .map_err(|e| format!("cannot start {name}: {e}"))?;
    let pgid = child.id();
    let script = r#"
        while kill -0 "$1" 2>/dev/null; do sleep 0.5; done
        kill -TERM -- "-$2" 2>/dev/null
        for _ in 1 2 3 4 5 6 7 8 9 10; do kill -0 -- "-$2" 2>/dev/null || break; sleep 0.3; done
        kill -KILL -- "-$2" 2>/dev/null
        if [ -n "$3" ]; then sleep 1; rm -rf -- "$3"; fi
    "#;
    // bash, not sh: dash's `kill` cannot signal a process group.
    Command::new("bash")
        .args(["-c", script, "kubeheal-test-watchdog"])
        .arg(std::process::id().to_string())
        .arg(pgid.to_string())
        .arg(cleanup.map(|p| p.display().to_string()).unwrap_or_default())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .map_err(|e| format!("cannot start the watchdog for {name}: {e}"))?;
    Ok(Process {
        name: name.to_owned(),
        child,
        log,
    })
}

/// A process started by [`spawn_watched`]: a server of the control plane (it lives as long as
/// the test binary) or an operator under test (stopped when dropped).
pub struct Process {
    name: String,
    child: Child,
    log: PathBuf,
}

impl Process {
    /// The process's id (to read its memory from `/proc`).
    pub fn id(&self) -> u32 {
        self.child.id()
    }

    /// Stops the process group at once (SIGKILL): a crash, not a shutdown.
    pub fn kill(&mut self) {
        let _ = nix::sys::signal::killpg(
            nix::unistd::Pid::from_raw(self.child.id() as i32),
            nix::sys::signal::Signal::SIGKILL,
        );
        let _ = self.child.wait();
    }

    /// Asks the process to stop (SIGTERM, as a Pod is stopped) and waits up to `grace` for it
    /// to exit; then kills it. Returns whether it exited by itself.
    pub fn terminate(&mut self, grace: std::time::Duration) -> bool {
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(self.child.id() as i32),
            nix::sys::signal::Signal::SIGTERM,
        );
        let deadline = std::time::Instant::now() + grace;
        while std::time::Instant::now() < deadline {
            if matches!(self.child.try_wait(), Ok(Some(_))) {
                return true;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        self.kill();
        false
    }

    /// The last `lines` lines of the process's output.
    pub fn log_tail(&self, lines: usize) -> String {
        tail(&self.log, lines)
    }

    /// Why the process is no longer running, with the end of its log; `None` while it runs.
    pub fn exited(&mut self) -> Option<String> {
        match self.child.try_wait() {
            Ok(None) => None,
            Ok(Some(status)) => Some(format!(
                "{} exited ({status}); its log ends with:\n{}",
                self.name,
                tail(&self.log, 30)
            )),
            Err(e) => Some(format!("cannot check on {}: {e}", self.name)),
        }
    }
}

fn write(path: &Path, contents: &str) -> Result<(), String> {
    std::fs::write(path, contents).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

fn tail(path: &Path, lines: usize) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

fn kubeconfig_yaml(server: &str, ca: &Path, token: &str) -> String {
    format!(
        "apiVersion: v1
kind: Config
clusters:
- name: test
  cluster:
    server: {server}
    certificate-authority: {ca}
users:
- name: admin
  user:
    token: {token}
contexts:
- name: test
  context:
    cluster: test
    user: admin
current-context: test
",
        ca = ca.display()
    )
}

/// The certificates and keys of a test control plane, generated fresh for each run.
struct Pki {
    ca_cert: PathBuf,
    server_cert: PathBuf,
    server_key: PathBuf,
    service_account_key: PathBuf,
    service_account_public_key: PathBuf,
}

impl Pki {
    fn generate(dir: &Path) -> Result<Self, String> {
        use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair, KeyUsagePurpose};
        let e = |err: rcgen::Error| format!("cannot generate test certificates: {err}");

        let ca_key = KeyPair::generate().map_err(e)?;
        let mut ca_params = CertificateParams::new(Vec::<String>::new()).map_err(e)?;
        ca_params
            .distinguished_name
            .push(DnType::CommonName, "kubeheal-test-ca");
        ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        ca_params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
        let ca_cert = ca_params.self_signed(&ca_key).map_err(e)?;
        let issuer = Issuer::new(ca_params, &ca_key);

        let server_key = KeyPair::generate().map_err(e)?;
        let mut server_params = CertificateParams::new(vec![
            "127.0.0.1".to_owned(),
            "localhost".to_owned(),
            "kubernetes.default.svc".to_owned(),
        ])
        .map_err(e)?;
        server_params
            .distinguished_name
            .push(DnType::CommonName, "kube-apiserver");
        let server_cert = server_params.signed_by(&server_key, &issuer).map_err(e)?;

        let sa_key = KeyPair::generate().map_err(e)?;

        let pki = Pki {
            ca_cert: dir.join("ca.crt"),
            server_cert: dir.join("apiserver.crt"),
            server_key: dir.join("apiserver.key"),
            service_account_key: dir.join("sa.key"),
            service_account_public_key: dir.join("sa.pub"),
        };
        write(&pki.ca_cert, &ca_cert.pem())?;
        write(&pki.server_cert, &server_cert.pem())?;
        write(&pki.server_key, &server_key.serialize_pem())?;
        write(&pki.service_account_key, &sa_key.serialize_pem())?;
        write(&pki.service_account_public_key, &sa_key.public_key_pem())?;
        Ok(pki)
    }
}
