//! The Kubernetes Job executor: one Job per execution, deterministically named and owned by its
//! resource. An init container fetches the source at the exact revision (credentials from the
//! source's `secretRef`) and applies the patch set from a ConfigMap the run owns; the user's
//! image runs the command. The Pod has no service-account token, runs as non-root with every
//! capability dropped and the RuntimeDefault seccomp profile, within resource limits and a
//! deadline. When the container ends, its log is read through the API, redacted, compressed and
//! kept (bounded) in a ConfigMap the run owns, so it survives Pod cleanup; the exit code comes
//! from the container status, and OOMKilled, eviction, image pull failures and the deadline map
//! to their own error classes. The build container's script also prints, in marked sections of
//! the same log, the tools' versions (before the command) and the artifacts (after it); they are
//! taken out of the log, and the artifacts kept (redacted, bounded) in a second ConfigMap.

use std::collections::{BTreeMap, HashMap};
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use k8s_openapi::ByteString;
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{ConfigMap, Pod};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kube::api::{Api, ListParams, LogParams, Patch, PatchParams};
use kube::runtime::reflector::{ObjectRef, Store};
use kube::{Client, ResourceExt};
use serde_json::json;

use super::detect::{self, Runner};
use super::{Ending, Execution, RunRequest, classify, excerpt};
use crate::api::shared::{
    ArtifactRef, BUILD_CONTENT_TYPE, ErrorClass, RunEnvelope, RunStatus, build_http_status, text_preview,
};
use crate::core::redact::{redact, secret_values};

/// The field manager of everything the executor applies.
pub const FIELD_MANAGER: &str = "kubeheal-executor";
/// The image of the init step that fetches the source.
pub const FETCH_IMAGE: &str = "alpine/git:2.47.2";
/// Most compressed log bytes kept per execution (a ConfigMap holds at most 1 MiB).
pub const MAX_KEPT_LOG: usize = 512 * 1024;
/// Container names.
pub const FETCH_CONTAINER: &str = "fetch";
pub const BUILD_CONTAINER: &str = "build";
/// The init container that runs a tool's image in a tool's Job.
pub const TOOL_CONTAINER: &str = "tool";
/// The sidecar that calls the service `spec.verify` starts (kubeheal's image, `kubeheal probe`).
pub const PROBE_CONTAINER: &str = "probe";
/// Where the build and probe containers meet, beside the checkout (`$WORKSPACE/<this>`): the
/// build writes `after` (`start` once the service runs, `skip` when the build failed), the
/// probe writes `calls.json` when it is done (its calls it prints to its own log, which the
/// operator reads), the service's output goes to `service.log`.
const VERIFY_DIR: &str = ".kubeheal-verify";
/// Bytes of the service's output the build container prints (its end).
const SERVICE_OUTPUT_BYTES: usize = 512 * 1024;
/// Seconds a service is given to end after TERM, before KILL (as the local executor does).
const SERVICE_GRACE_SECONDS: u32 = 5;
/// Installs pytest for the build's user (HOME is the writable workspace) when the image lacks it.
const INSTALL_PYTEST: &str = "python3 -c 'import pytest' 2>/dev/null || python3 -m pip install --quiet --user --disable-pip-version-check pytest";

/// One execution to run as a Job: seed 001's input, the exact commit, and the resource that owns
/// the Job.
#[derive(Debug, Clone)]
pub struct JobRequest {
    /// The Job's name (the execution's key): the same execution always has the same name, so a
    /// restarted operator finds its Job instead of creating a second one.
    pub name: String,
    /// The labels of the Job, its Pod and its ConfigMaps: kubeheal's, and the owner's (the
    /// controller that waits on the Job is woken by them, see `heal_run_labels`).
    pub labels: BTreeMap<String, String>,
    /// The owning resource (a HealRun, or a HealerTicket's regeneration).
    pub owner: OwnerReference,
    pub namespace: String,
    /// The exact commit to fetch (the run's revision, resolved).
    pub commit: String,
    pub run: RunRequest,
    /// The build container's own settings (`spec.executor`): environment and resources.
    pub container: ContainerSettings,
    /// Run this tool over the checkout instead of the build, and report what it changed
    /// ([`super::tool`]).
    pub tool: Option<ToolStep>,
    /// The image with kubeheal that calls the service `run.verify` starts (the operator's own,
    /// `--probe-image`); without one, nothing is verified beyond the build.
    pub probe_image: Option<String>,
}

/// A tool's step in a Job: its image (run with its own entrypoint, or `command`) and what it
/// is asked to do.
#[derive(Debug, Clone)]
pub struct ToolStep {
    pub image: String,
    /// The work order's task, redacted: `$KUBEHEAL_TASK` in the tool's container.
    pub task: String,
    /// Run with `sh -c` instead of the image's entrypoint (a repository's regenerate command).
    pub command: Option<String>,
    /// More variables for the tool's container (before kubeheal's own, which win).
    pub env: Vec<(String, String)>,
    /// A Secret of the namespace whose keys become the tool's environment (its API keys), when
    /// it exists; `None`: no Secret is looked for.
    pub env_secret: Option<String>,
}

/// What a HealRun's `spec.executor` adds to the build container.
#[derive(Debug, Clone, Default)]
pub struct ContainerSettings {
    pub env: Vec<k8s_openapi::api::core::v1::EnvVar>,
    pub env_from: Vec<k8s_openapi::api::core::v1::EnvFromSource>,
    /// Default: requests 500m CPU / 512Mi, limits 2 CPU / 2Gi.
    pub resources: Option<k8s_openapi::api::core::v1::ResourceRequirements>,
}

impl JobRequest {
    pub fn job_name(&self) -> String {
        self.name.clone()
    }

    /// The build command (`spec.executor.command`, else the project type's default) and the
    /// test runner it uses.
    fn command_and_runner(&self) -> (String, Option<Runner>) {
        match (&self.run.command, detect::default_command(self.run.project_type)) {
            (Some(c), _) => (c.clone(), detect::runner_of(c)),
            // The public python image has no pytest: installed for the build's user when missing.
            (None, Some((c, r @ Runner::Pytest))) => (format!("{INSTALL_PYTEST}\n{c}"), Some(r)),
            (None, Some((c, r))) => (c.to_owned(), Some(r)),
            (None, None) => (
                "echo 'kubeheal found no pyproject.toml, setup.py, requirements.txt, test_*.py, package.json, Cargo.toml or go.mod at the source commit: set spec.executor.projectType or spec.executor.command' >&2; exit 127".to_owned(),
                None,
            ),
        }
    }

    fn labels(&self) -> BTreeMap<String, String> {
        self.labels.clone()
    }

    /// The ConfigMap with the patch set, mounted by the fetch step.
    pub fn patches_config_map(&self) -> ConfigMap {
        let data: BTreeMap<String, String> = self
            .run
            .patches
            .iter()
            .enumerate()
            .map(|(i, p)| (format!("{i:03}.diff"), p.clone()))
            .collect();
        serde_json::from_value(json!({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": format!("{}-patches", self.job_name()), "namespace": self.namespace,
                         "labels": self.labels(), "ownerReferences": [self.owner]},
            "data": data,
        }))
        .expect("a ConfigMap")
    }

    /// The Job. Paths are passed as `$WORKSPACE` and `$PATCHES` so that the commands do not depend
    /// on where the volumes are mounted.
    pub fn job(&self) -> Job {
        let (mut command, _) = self.command_and_runner();
        let mut image = self
            .run
            .image
            .clone()
            .unwrap_or_else(|| detect::default_image(self.run.project_type).to_owned());
        let mut fetch = r#"set -eu
git clone --quiet --no-checkout "$SOURCE_URL" "$WORKSPACE/src"
cd "$WORKSPACE/src"
git -c advice.detachedHead=false checkout --quiet "$SOURCE_COMMIT"
for p in $(ls "$PATCHES" 2>/dev/null | sort); do git apply --whitespace=nowarn "$PATCHES/$p"; done"#
            .to_owned();
        let mut subpath = self.run.source.sub_path.clone().unwrap_or_default();
        if self.tool.is_some() {
            // The last step reports the tool's changes, with git, from the repository's root.
            fetch = format!("{fetch}\n{}", super::tool::RECORD_BASE);
            command = super::tool::report_changes_script();
            image = FETCH_IMAGE.to_owned();
            subpath = String::new();
        }
        let mut fetch_env = vec![
            json!({"name": "SOURCE_URL", "value": self.run.source.url}),
            json!({"name": "SOURCE_COMMIT", "value": self.commit}),
            json!({"name": "WORKSPACE", "value": "/workspace"}),
            json!({"name": "PATCHES", "value": "/patches"}),
            json!({"name": "HOME", "value": "/workspace"}),
        ];
        if let Some(secret) = &self.run.source.secret_ref {
            // An HTTPS token as the password of `x-access-token`, through git's credential helper
            // so it never appears in a URL or a process list.
            fetch_env.push(json!({"name": "GIT_TOKEN", "valueFrom": {"secretKeyRef": {"name": secret.name, "key": "token", "optional": true}}}));
            fetch_env.push(json!({"name": "GIT_CONFIG_COUNT", "value": "1"}));
            fetch_env.push(json!({"name": "GIT_CONFIG_KEY_0", "value": "credential.helper"}));
            fetch_env.push(json!({"name": "GIT_CONFIG_VALUE_0", "value": "!f() { echo username=x-access-token; echo \"password=$GIT_TOKEN\"; }; f"}));
        }
        let security = json!({
            "runAsNonRoot": true, "runAsUser": 65532, "runAsGroup": 65532,
            "allowPrivilegeEscalation": false, "readOnlyRootFilesystem": false,
            "capabilities": {"drop": ["ALL"]}, "seccompProfile": {"type": "RuntimeDefault"},
        });
        let limits = json!({"requests": {"cpu": "500m", "memory": "512Mi"}, "limits": {"cpu": "2", "memory": "2Gi"}});
        let build_resources = self
            .container
            .resources
            .as_ref()
            .map(|r| serde_json::to_value(r).expect("resources serialise"))
            .unwrap_or_else(|| limits.clone());
        // kubeheal's own variables come last so that a user's cannot move the workspace.
        let mut build_env: Vec<serde_json::Value> = self
            .container
            .env
            .iter()
            .map(|e| serde_json::to_value(e).expect("an env var serialises"))
            .collect();
        if self.tool.is_some() {
            // The user's build settings are the build's: the step that reports changes gets none.
            build_env.clear();
        }
        build_env.extend([
            json!({"name": "WORKSPACE", "value": "/workspace"}),
            json!({"name": "KUBEHEAL_ARTIFACTS", "value": "/workspace/artifacts"}),
            json!({"name": "HOME", "value": "/workspace"}),
            json!({"name": "CI", "value": "true"}),
        ]);
        // No patches (a baseline): an empty folder, and no ConfigMap to write before the Job.
        let patches = if self.run.patches.is_empty() {
            json!({"name": "patches", "emptyDir": {}})
        } else {
            json!({"name": "patches", "configMap": {"name": format!("{}-patches", self.job_name())}})
        };
        let mut volumes = vec![json!({"name": "workspace", "emptyDir": {}}), patches];
        let mut fetch_mounts = vec![
            json!({"name": "workspace", "mountPath": "/workspace"}),
            json!({"name": "patches", "mountPath": "/patches", "readOnly": true}),
        ];
        let mut build_mounts = vec![json!({"name": "workspace", "mountPath": "/workspace"})];
        if self.tool.is_some() {
            // The repository's untouched copy: mounted by the fetch and the report, never by the tool.
            let pristine = json!({"name": "pristine", "mountPath": super::tool::PRISTINE_MOUNT});
            volumes.push(json!({"name": "pristine", "emptyDir": {}}));
            fetch_mounts.push(pristine.clone());
            build_mounts.push(pristine);
            let variable = json!({"name": "KUBEHEAL_PRISTINE", "value": super::tool::PRISTINE_MOUNT});
            fetch_env.push(variable.clone());
            build_env.push(variable);
        }
        let mut init_containers = vec![json!({
            "name": FETCH_CONTAINER, "image": FETCH_IMAGE,
            "command": ["sh", "-c", fetch], "env": fetch_env,
            "securityContext": security, "resources": limits,
            "volumeMounts": fetch_mounts
        })];
        if let Some(sidecar) = self.probe_sidecar(&security) {
            init_containers.push(sidecar);
        }
        let mut env_from = serde_json::to_value(&self.container.env_from).expect("envFrom serialises");
        if let Some(tool) = &self.tool {
            let tool_dir = format!(
                "/workspace/src/{}",
                self.run.source.sub_path.clone().unwrap_or_default()
            );
            let mut env: Vec<serde_json::Value> = tool
                .env
                .iter()
                .map(|(name, value)| json!({"name": name, "value": value}))
                .collect();
            env.extend([
                json!({"name": "KUBEHEAL_TASK", "value": tool.task}),
                json!({"name": "WORKSPACE", "value": "/workspace"}),
                json!({"name": "HOME", "value": "/workspace"}),
            ]);
            let mut container = json!({
                "name": TOOL_CONTAINER, "image": tool.image,
                "workingDir": tool_dir.trim_end_matches('/'),
                "env": env,
                "securityContext": security, "resources": build_resources,
                "volumeMounts": [{"name": "workspace", "mountPath": "/workspace"}]
            });
            if let Some(secret) = &tool.env_secret {
                container["envFrom"] = json!([{"secretRef": {"name": secret, "optional": true}}]);
            }
            if let Some(command) = &tool.command {
                container["command"] = json!(["sh", "-c", command]);
            }
            init_containers.push(container);
            env_from = json!([]);
        }
        let mut job = json!({
            "apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": self.job_name(), "namespace": self.namespace, "labels": self.labels(),
                         "ownerReferences": [self.owner]},
            "spec": {
                "backoffLimit": 0,
                "activeDeadlineSeconds": self.run.timeout.as_secs().max(1),
                "ttlSecondsAfterFinished": 3600,
                "podFailurePolicy": {"rules": [
                    {"action": "FailJob", "onExitCodes": {"containerName": BUILD_CONTAINER, "operator": "NotIn", "values": [0]}},
                    {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]}
                ]},
                "template": {
                    "metadata": {"labels": self.labels()},
                    "spec": {
                        "restartPolicy": "Never",
                        "automountServiceAccountToken": false,
                        "enableServiceLinks": false,
                        "securityContext": {"runAsNonRoot": true, "fsGroup": 65532, "seccompProfile": {"type": "RuntimeDefault"}},
                        "volumes": volumes,
                        "initContainers": init_containers,
                        "containers": [{
                            "name": BUILD_CONTAINER, "image": image,
                            "command": ["sh", "-c", self.build_script(&subpath, &command)],
                            "env": build_env, "envFrom": env_from,
                            "securityContext": security, "resources": build_resources,
                            "volumeMounts": build_mounts
                        }]
                    }
                }
            }
        });
        if self.tool.is_some() {
            // A tool's run is not repeatable (a model answers differently, and costs): its
            // finished Job stays until its HealRun is deleted, so an operator that was away for
            // longer than an hour finds its answer instead of running the tool again.
            job["spec"]
                .as_object_mut()
                .expect("a Job spec")
                .remove("ttlSecondsAfterFinished");
        }
        serde_json::from_value(job).expect("a Job")
    }
}

impl JobRequest {
    /// The endpoint check `run.verify` asks for, when this Job runs the build and there is a
    /// probe image to run it with.
    fn verify(&self) -> Option<&crate::api::heal_run::OpenApiCheck> {
        self.run
            .verify
            .as_ref()
            .filter(|_| self.tool.is_none() && self.probe_image.is_some())
    }

    /// The probe container: a native sidecar (an init container that keeps running, which the
    /// kubelet stops once the build container has ended, so a build that dies cannot leave the
    /// Pod running), in kubeheal's image, sharing the Pod's network (the service's `127.0.0.1`)
    /// and the workspace. `$(WORKSPACE)` in its arguments is expanded by the kubelet.
    fn probe_sidecar(&self, security: &serde_json::Value) -> Option<serde_json::Value> {
        let check = self.verify()?;
        let root = match self.run.source.sub_path.as_deref().map(|p| p.trim_matches('/')) {
            Some(sub) if !sub.is_empty() => format!("$(WORKSPACE)/src/{sub}"),
            _ => "$(WORKSPACE)/src".to_owned(),
        };
        let mut args = vec![
            "probe".to_owned(),
            "--openapi".to_owned(),
            format!("{root}/{}", check.document),
            "--base-url".to_owned(),
            check.base_url.clone(),
            "--timeout".to_owned(),
            check.call_timeout_seconds.to_string(),
            "--wait-ready".to_owned(),
            check.ready_timeout_seconds.to_string(),
            "--after".to_owned(),
            format!("$(WORKSPACE)/{VERIFY_DIR}/after"),
            "--output".to_owned(),
            format!("$(WORKSPACE)/{VERIFY_DIR}/calls.json"),
        ];
        for endpoint in &check.endpoints {
            args.extend(["--endpoint".to_owned(), endpoint.clone()]);
        }
        let mut security = security.clone();
        security["readOnlyRootFilesystem"] = json!(true);
        Some(json!({
            "name": PROBE_CONTAINER, "image": self.probe_image,
            "restartPolicy": "Always",
            "command": ["/usr/local/bin/kubeheal"], "args": args,
            "env": [{"name": "WORKSPACE", "value": "/workspace"}],
            "securityContext": security,
            "resources": {"requests": {"cpu": "50m", "memory": "64Mi"}, "limits": {"cpu": "500m", "memory": "256Mi"}},
            "volumeMounts": [{"name": "workspace", "mountPath": "/workspace"}]
        }))
    }

    /// The build script's part for `verify`, after the command: once it passed, the service is
    /// started in the background and the probe told so; the build waits for the calls to be
    /// done, stops the service, then prints its output in a section of its own. A failed build
    /// tells the probe to call nothing.
    fn verify_script(&self, mark: &str) -> String {
        let Some(check) = self.verify() else {
            return String::new();
        };
        format!(
            r#"kubeheal_verify="$WORKSPACE/{VERIFY_DIR}"
if [ "$kubeheal_status" -eq 0 ]; then
  # A session (and process group) of its own where setsid exists, so that TERM and KILL reach
  # whatever the start command started. When the start command ends, its exit code goes to the
  # probe: one that failed ends the probe's wait for the service.
  kubeheal_run_service='sh -c "$1"; echo $? > "$2.partial" && mv "$2.partial" "$2"'
  if command -v setsid >/dev/null 2>&1; then
    setsid sh -c "$kubeheal_run_service" kubeheal-service {start} "$kubeheal_verify/{exited}" > "$kubeheal_verify/service.log" 2>&1 &
  else
    sh -c "$kubeheal_run_service" kubeheal-service {start} "$kubeheal_verify/{exited}" > "$kubeheal_verify/service.log" 2>&1 &
  fi
  kubeheal_service=$!
  echo start > "$kubeheal_verify/after.partial" && mv "$kubeheal_verify/after.partial" "$kubeheal_verify/after"
  kubeheal_waited=0
  while [ ! -e "$kubeheal_verify/calls.json" ] && [ "$kubeheal_waited" -lt {wait} ]; do
    sleep 1
    kubeheal_waited=$((kubeheal_waited + 1))
  done
  # TERM, then KILL after {grace} s if it has not ended (what it prints on the way out counts).
  kill -TERM -"$kubeheal_service" 2>/dev/null || kill -TERM "$kubeheal_service" 2>/dev/null
  ( sleep {grace}; kill -KILL -"$kubeheal_service" 2>/dev/null || kill -KILL "$kubeheal_service" 2>/dev/null ) &
  kubeheal_killer=$!
  wait "$kubeheal_service" 2>/dev/null
  kill "$kubeheal_killer" 2>/dev/null
  echo "{SERVICE_BEGIN} {mark}"
  if [ "$(wc -c < "$kubeheal_verify/service.log")" -gt {bytes} ]; then
    # Its end, from a whole line: a cut character would not be text.
    tail -c {bytes} "$kubeheal_verify/service.log" | tail -n +2
  else
    cat "$kubeheal_verify/service.log"
  fi
  echo
  echo "{SERVICE_END} {mark}"
else
  echo {skip} > "$kubeheal_verify/after.partial" && mv "$kubeheal_verify/after.partial" "$kubeheal_verify/after"
fi
"#,
            start = shell_quote(&check.start),
            exited = crate::probe::verify::EXITED,
            wait = check.time_limit_seconds(),
            bytes = SERVICE_OUTPUT_BYTES,
            grace = SERVICE_GRACE_SECONDS,
            skip = crate::probe::verify::SKIP,
        )
    }
}

/// `text` as one single-quoted `sh` word.
fn shell_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// Where a line of the build container's log belongs: kubeheal's own sections (the environment
/// before the command, the artifacts after it) carry these prefixes and the Job's mark; they are
/// taken out of the log before anyone reads it.
const META_BEGIN: &str = "@@kubeheal-environment-begin";
const META_END: &str = "@@kubeheal-environment-end";
const ARTIFACTS_BEGIN: &str = "@@kubeheal-artifacts-begin";
const ARTIFACTS_END: &str = "@@kubeheal-artifacts-end";
const ARTIFACT_FILE: &str = "@@kubeheal-artifact";
const ARTIFACT_OVER: &str = "@@kubeheal-artifact-over";
const SERVICE_BEGIN: &str = "@@kubeheal-service-begin";
const SERVICE_END: &str = "@@kubeheal-service-end";
/// Most artifact bytes a Job keeps: they go into one ConfigMap (at most 1 MiB), beside the
/// base64 text they take in the log. Seed 003's 50 MB hold for the local executor; a Job's
/// artifacts are bounded like its log, and what is left out is named in a warning.
pub const MAX_KEPT_ARTIFACT_BYTES: u64 = 768 * 1024;
/// Lines of the log's end read again when the first read (at most 8 MiB from the start) missed
/// the artifacts section: the section is at most this long.
const SECTION_LINES: i64 = 16 * 1024;

impl JobRequest {
    /// The mark that tells kubeheal's sections from what the build printed.
    fn section_mark(&self) -> String {
        format!("kubeheal-{}", self.job_name())
    }

    /// The build container's script: the environment's tool versions, then the command in a
    /// subshell (its `exit` ends only itself), then the files under `$KUBEHEAL_ARTIFACTS`
    /// (recursively, links not followed, at most 50 files and [`MAX_KEPT_ARTIFACT_BYTES`]) as
    /// base64, since a finished Pod's log is the one thing the API still serves; the exit code
    /// is the command's.
    fn build_script(&self, subpath: &str, command: &str) -> String {
        use crate::api::heal_run::ProjectType;
        let mark = self.section_mark();
        // Not detected yet (the source is fetched in the Pod): ask for every project type's tools.
        let tools = match self.run.project_type {
            ProjectType::Auto => [
                ProjectType::Python,
                ProjectType::Node,
                ProjectType::Rust,
                ProjectType::Go,
            ]
            .iter()
            .flat_map(|p| detect::tools(*p).iter())
            .collect::<Vec<_>>(),
            p => detect::tools(p).iter().collect(),
        };
        let versions: String = tools
            .iter()
            .map(|(tool, args)| {
                format!(
                    "if command -v {tool} >/dev/null 2>&1; then echo \"{tool}=$({tool} {} 2>&1 | head -n 1)\"; else echo '{tool}=not found'; fi\n",
                    args.join(" ")
                )
            })
            .collect();
        format!(
            r#"cd "$WORKSPACE/src/{subpath}" || exit 1
exec 2>&1
mkdir -p "$WORKSPACE/{VERIFY_DIR}"
echo "{META_BEGIN} {mark}"
{versions}echo "os=$(uname -sm 2>/dev/null)"
echo "{META_END} {mark}"
(
{command}
)
kubeheal_status=$?
{verify}if [ -d "$KUBEHEAL_ARTIFACTS" ]; then
  echo "{ARTIFACTS_BEGIN} {mark}"
  if command -v base64 >/dev/null 2>&1; then kubeheal_b64=1; else kubeheal_b64=0; fi
  find "$KUBEHEAL_ARTIFACTS" -type f 2>/dev/null | LC_ALL=C sort | {{
    kubeheal_n=0
    kubeheal_kept=0
    while IFS= read -r kubeheal_f; do
      kubeheal_size=$(wc -c < "$kubeheal_f" | tr -d ' ')
      kubeheal_rel=${{kubeheal_f#"$KUBEHEAL_ARTIFACTS"/}}
      if [ "$kubeheal_b64" != 1 ]; then
        echo "{ARTIFACT_OVER} {mark} base64 $kubeheal_size $kubeheal_rel"
      elif [ "$kubeheal_n" -ge {max_files} ]; then
        echo "{ARTIFACT_OVER} {mark} files $kubeheal_size $kubeheal_rel"
      elif [ $((kubeheal_kept + kubeheal_size)) -gt {max_bytes} ]; then
        echo "{ARTIFACT_OVER} {mark} bytes $kubeheal_size $kubeheal_rel"
      else
        kubeheal_n=$((kubeheal_n + 1))
        kubeheal_kept=$((kubeheal_kept + kubeheal_size))
        echo "{ARTIFACT_FILE} {mark} $kubeheal_size $kubeheal_rel"
        base64 < "$kubeheal_f"
      fi
    done
  }}
  echo "{ARTIFACTS_END} {mark}"
fi
exit $kubeheal_status"#,
            max_files = super::output::MAX_ARTIFACTS,
            max_bytes = MAX_KEPT_ARTIFACT_BYTES,
            verify = self.verify_script(&mark),
        )
    }
}

/// A file the build container printed in its artifacts section.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PrintedArtifact {
    /// Its path under `$KUBEHEAL_ARTIFACTS`.
    pub name: String,
    pub bytes: Vec<u8>,
}

/// The build container's log taken apart: what the build printed, and kubeheal's sections.
#[derive(Debug, Default)]
pub struct BuildOutput {
    /// What the build printed, without kubeheal's sections.
    pub log: String,
    /// Tool versions and the OS, from the environment section.
    pub environment: BTreeMap<String, String>,
    pub artifacts: Vec<PrintedArtifact>,
    /// Artifacts left out, and sections that did not arrive whole.
    pub warnings: Vec<String>,
    /// Whether the artifacts section ended (the build ran to its end and the section was read).
    pub artifacts_read: bool,
    /// What the service started for `verify` printed.
    pub service_output: String,
}

/// Takes `raw` (the build container's log) apart into the build's own output and kubeheal's
/// sections, marked with `mark`.
pub fn read_build_output(raw: &str, mark: &str) -> BuildOutput {
    use base64::Engine;
    enum In {
        Log,
        Environment,
        Artifacts,
        Service,
    }
    let mut out = BuildOutput::default();
    let mut state = In::Log;
    // The artifact being read: its name, its size, and its base64 text so far.
    let mut current: Option<(String, u64, String)> = None;
    let finish = |current: &mut Option<(String, u64, String)>, out: &mut BuildOutput| {
        if let Some((name, size, text)) = current.take() {
            match base64::engine::general_purpose::STANDARD.decode(text.as_bytes()) {
                Ok(bytes) if bytes.len() as u64 == size => out.artifacts.push(PrintedArtifact { name, bytes }),
                _ => out
                    .warnings
                    .push(format!("artifact {name} left out: it did not arrive whole in the log")),
            }
        }
    };
    for line in raw.split_inclusive('\n') {
        let bare = line.trim_end_matches(['\n', '\r']);
        let ours = |prefix: &str| {
            bare.strip_prefix(prefix)
                .and_then(|rest| rest.strip_prefix(' '))
                .and_then(|rest| rest.strip_prefix(mark))
                .filter(|rest| rest.is_empty() || rest.starts_with(' '))
                .map(str::trim_start)
        };
        match state {
            In::Log if ours(META_BEGIN) == Some("") => state = In::Environment,
            In::Log if ours(ARTIFACTS_BEGIN) == Some("") => state = In::Artifacts,
            In::Log if ours(SERVICE_BEGIN) == Some("") => state = In::Service,
            In::Log => out.log.push_str(line),
            In::Service if ours(SERVICE_END) == Some("") => state = In::Log,
            In::Service => out.service_output.push_str(line),
            In::Environment if ours(META_END) == Some("") => state = In::Log,
            In::Environment => {
                if let Some((key, value)) = bare.split_once('=') {
                    out.environment.insert(key.to_owned(), value.trim().to_owned());
                }
            }
            In::Artifacts => {
                if ours(ARTIFACTS_END) == Some("") {
                    finish(&mut current, &mut out);
                    out.artifacts_read = true;
                    state = In::Log;
                } else if let Some(rest) = ours(ARTIFACT_OVER) {
                    finish(&mut current, &mut out);
                    let mut parts = rest.splitn(3, ' ');
                    let (why, size, name) = (parts.next(), parts.next(), parts.next().unwrap_or(""));
                    let size = size.unwrap_or("?");
                    out.warnings.push(match why {
                        Some("base64") => {
                            format!("artifact {name} ({size} bytes) left out: the executor image has no base64 command")
                        }
                        Some("files") => format!(
                            "artifact {name} left out: an execution keeps at most {} files",
                            super::output::MAX_ARTIFACTS
                        ),
                        _ => format!(
                            "artifact {name} ({size} bytes) left out: a Job keeps at most {} KiB of artifacts (they are kept in a ConfigMap)",
                            MAX_KEPT_ARTIFACT_BYTES / 1024
                        ),
                    });
                } else if let Some(rest) = ours(ARTIFACT_FILE) {
                    finish(&mut current, &mut out);
                    if let Some((size, name)) = rest.split_once(' ') {
                        current = Some((name.to_owned(), size.parse().unwrap_or(0), String::new()));
                    }
                } else if let Some((_, _, text)) = current.as_mut() {
                    text.push_str(bare.trim());
                } else {
                    // Printed by something the build left running: it is the build's output.
                    out.log.push_str(line);
                }
            }
        }
    }
    if matches!(state, In::Artifacts) {
        finish(&mut current, &mut out);
        out.warnings
            .push("the artifacts section of the log was cut short; the artifacts read so far are kept".to_owned());
    }
    out
}

/// The calls the probe container made and what the service printed, redacted with `secrets` (the
/// probe did not know the build's): the count of values replaced. Calls that never arrived are
/// one envelope without an endpoint that says so.
fn verified(
    check: &crate::api::heal_run::OpenApiCheck,
    reported: Option<Result<Vec<RunEnvelope>, String>>,
    service_output: &str,
    secrets: &[String],
) -> (Vec<RunEnvelope>, String, usize) {
    let (printed, mut redactions) = redact(service_output, secrets);
    let calls = match reported {
        Some(Ok(mut calls)) => {
            // Parsed first, then redacted field by field: a secret is matched as the text it
            // is, not as the escaped form JSON gives it.
            for call in &mut calls {
                redactions += crate::probe::call::redact_envelope(call, secrets);
            }
            Ok(calls)
        }
        Some(Err(e)) => Err(format!(
            "the probe container's log does not hold the envelopes it prints ({e})"
        )),
        None => Err(format!(
            "the probe container did not report its calls within {} s of the service's start",
            check.time_limit_seconds()
        )),
    };
    let calls = calls.unwrap_or_else(|why| {
        let mut missing =
            crate::probe::verify::refused(&check.document, &crate::probe::ProbeError::Read(why));
        missing.error_class = Some(ErrorClass::Unknown);
        missing.suggested_fix = Some(
            "look at the probe container's log (kubectl logs JOB_POD -c probe) and check that the operator's --probe-image is kubeheal's image".to_owned(),
        );
        vec![missing]
    });
    (calls, printed, redactions)
}

/// Whether the Pod's container `name` waits for an image that cannot be pulled.
fn pulling(pod: Option<&Pod>, name: &str) -> bool {
    let status = pod.and_then(|p| p.status.as_ref());
    status
        .into_iter()
        .flat_map(|s| {
            s.init_container_statuses
                .iter()
                .flatten()
                .chain(s.container_statuses.iter().flatten())
        })
        .filter(|c| c.name == name)
        .filter_map(|c| c.state.as_ref()?.waiting.as_ref()?.reason.as_deref())
        .any(|reason| matches!(reason, "ErrImagePull" | "ImagePullBackOff" | "InvalidImageName"))
}

/// How a Job's Pod ended, read from the Job's conditions and the Pod's statuses.
pub fn job_ending(job: &Job, pod: Option<&Pod>) -> Option<(Ending, Option<ErrorClass>)> {
    let conditions = job
        .status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .cloned()
        .unwrap_or_default();
    let failed = conditions.iter().find(|c| c.type_ == "Failed" && c.status == "True");
    if let Some(c) = failed
        && c.reason.as_deref() == Some("DeadlineExceeded")
    {
        return Some((Ending::TimedOut, None));
    }
    let status = pod.and_then(|p| p.status.as_ref());
    if status.and_then(|s| s.reason.as_deref()) == Some("Evicted") {
        return Some((Ending::Exited(-1), Some(ErrorClass::Evicted)));
    }
    let containers = status.into_iter().flat_map(|s| {
        s.init_container_statuses
            .iter()
            .flatten()
            .chain(s.container_statuses.iter().flatten())
    });
    for c in containers {
        let state = c.state.as_ref();
        if let Some(waiting) = state.and_then(|s| s.waiting.as_ref())
            && matches!(
                waiting.reason.as_deref(),
                Some("ErrImagePull" | "ImagePullBackOff" | "InvalidImageName")
            )
        {
            return Some((Ending::Exited(-1), Some(ErrorClass::ImagePull)));
        }
        if let Some(t) = state.and_then(|s| s.terminated.as_ref()) {
            // The probe sidecar's own end (the kubelet stops it) says nothing of the build's.
            if c.name == PROBE_CONTAINER {
                continue;
            }
            if t.reason.as_deref() == Some("OOMKilled") {
                return Some((Ending::Exited(137), Some(ErrorClass::OomKilled)));
            }
            if c.name == FETCH_CONTAINER && t.exit_code != 0 {
                return Some((Ending::SourceFailed, None));
            }
            if c.name == BUILD_CONTAINER {
                return Some((Ending::Exited(t.exit_code), None));
            }
        }
    }
    // Ended with its Pod gone (the cluster's Pod garbage collector, or a person): what the
    // container did went with the Pod. `pod` must be the API server's word here, not a cache's:
    // `collect` reads it again before anything is concluded.
    let complete = conditions.iter().any(|c| c.type_ == "Complete" && c.status == "True");
    if pod.is_none() && (complete || failed.is_some()) {
        return Some((Ending::Exited(-1), Some(ErrorClass::Infra)));
    }
    failed.map(|_| (Ending::Exited(-1), Some(ErrorClass::Unknown)))
}

/// Runs builds as Kubernetes Jobs.
pub struct JobExecutor {
    client: Client,
    cache: Option<JobCache>,
}

/// The operator's watch caches of the Jobs it launched and their Pods (the controller watches
/// both to be woken when they change): a look at a running Job reads them instead of the API
/// server, so a thousand runs waiting on their Jobs cost the API server nothing.
#[derive(Clone)]
pub struct JobCache {
    jobs: Store<Job>,
    pods: Store<Pod>,
    /// The Jobs this process created that the Job cache has not seen yet, and when: the reconcile
    /// that follows a launch (woken by the status it wrote) often comes before the watch event of
    /// the Job, and must neither read the API server nor apply the Job again to learn that it
    /// runs. (Kubernetes' own controllers keep such "expectations" for the Pods they create.)
    launched: Arc<Mutex<HashMap<ObjectRef<Job>, Instant>>>,
    /// Whether the Job store has been listed once (and so holds every Job, a moment behind).
    listed: Arc<AtomicBool>,
}

/// How long a launched Job may stay unseen by the cache before the API server is asked about it
/// (a watch far behind, or a Job deleted at once).
const UNSEEN_AFTER_LAUNCH: Duration = Duration::from_secs(30);

/// What the caches know of one Job.
enum Cached {
    /// The Job, and its Pod when there is one.
    Found(Box<(Job, Option<Pod>)>),
    /// Created by this process a moment ago; the cache has not seen it yet.
    JustLaunched,
    /// The cache holds every Job, and not this one.
    Absent,
    /// No cache, or one still listing: only the API server knows.
    Unknown,
}

impl JobCache {
    /// The caches over `jobs` and `pods`, which count as complete once the Job store has been
    /// listed (learnt by a task of the current Tokio runtime that waits for it).
    pub fn new(jobs: Store<Job>, pods: Store<Pod>) -> Self {
        let listed = Arc::new(AtomicBool::new(false));
        // Waited for by one task, not polled by each look: a store's readiness has one waker
        // slot, which a poll from elsewhere would take from a task awaiting it.
        let (store, flag) = (jobs.clone(), listed.clone());
        tokio::spawn(async move {
            if store.wait_until_ready().await.is_ok() {
                flag.store(true, Ordering::Release);
            }
        });
        JobCache {
            jobs,
            pods,
            launched: Arc::default(),
            listed,
        }
    }

    fn look(&self, job: &ObjectRef<Job>) -> Cached {
        if let Some(found) = self.jobs.get(job) {
            self.launched.lock().unwrap_or_else(|e| e.into_inner()).remove(job);
            // By the Job's uid, not its name: a Pod left from an earlier Job of the same name
            // (one that expired and was launched again) is not this Job's.
            let Some(uid) = found.metadata.uid.as_deref() else {
                return Cached::Unknown;
            };
            let pod = self
                .pods
                .find(|p| p.owner_references().iter().any(|owner| owner.uid == uid));
            return Cached::Found(Box::new((Job::clone(&found), pod.map(|p| Pod::clone(&p)))));
        }
        let launched_at = self
            .launched
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(job)
            .copied();
        match launched_at {
            Some(at) if at.elapsed() < UNSEEN_AFTER_LAUNCH => Cached::JustLaunched,
            // Created long ago and still not shown by the watch: the watch is the suspect, so
            // the API server is asked (the safety net a lost watch event needs).
            Some(_) => Cached::Unknown,
            // Listed once, the cache holds every Job the operator made (a watch a moment behind
            // only makes an apply run again, which changes nothing).
            None if self.listed.load(Ordering::Acquire) => Cached::Absent,
            None => Cached::Unknown,
        }
    }

    fn just_launched(&self, job: ObjectRef<Job>) {
        let mut launched = self.launched.lock().unwrap_or_else(|e| e.into_inner());
        // Entries the watch never confirmed are kept twice as long as they count, so that the
        // API server is asked about them (above) before they are dropped.
        launched.retain(|_, at| at.elapsed() < 2 * UNSEEN_AFTER_LAUNCH);
        launched.insert(job, Instant::now());
    }
}

impl JobExecutor {
    pub fn new(client: Client) -> Self {
        JobExecutor { client, cache: None }
    }

    /// Looks at running Jobs in `cache` first.
    pub fn with_cache(mut self, cache: JobCache) -> Self {
        self.cache = Some(cache);
        self
    }

    /// What the watch caches know of the Job `name`.
    fn cached(&self, namespace: &str, name: &str) -> Cached {
        match &self.cache {
            Some(cache) => cache.look(&ObjectRef::new(name).within(namespace)),
            None => Cached::Unknown,
        }
    }

    /// The Job `name` and its Pod, read from the API server.
    async fn job_and_pod(&self, namespace: &str, name: &str) -> Result<Option<(Job, Option<Pod>)>, kube::Error> {
        let Some(job) = Api::<Job>::namespaced(self.client.clone(), namespace)
            .get_opt(name)
            .await?
        else {
            return Ok(None);
        };
        let pod = Api::<Pod>::namespaced(self.client.clone(), namespace)
            .list(&ListParams::default().labels(&format!("job-name={name}")))
            .await?
            .items
            .into_iter()
            .next();
        Ok(Some((job, pod)))
    }

    /// Creates (or finds) the Job, waits for it to end, and returns the envelope and the log.
    pub async fn execute(&self, request: &JobRequest) -> Result<Execution, kube::Error> {
        self.launch(request).await?;
        loop {
            if let Some(execution) = self.collect(request).await? {
                return Ok(execution);
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
    }

    /// Applies the patches ConfigMap (when there are patches) and the Job. Idempotent: the same
    /// request names the same objects, so a repeated launch finds the Job it created before.
    /// With the watch cache, a first launch costs one write (a baseline) or two, and no read.
    pub async fn launch(&self, request: &JobRequest) -> Result<(), kube::Error> {
        let name = request.job_name();
        let ns = &request.namespace;
        let jobs: Api<Job> = Api::namespaced(self.client.clone(), ns);
        // Launched before (a controller re-checks its Job often): nothing to write. A cache a
        // moment behind only makes the applies below run again, which changes nothing.
        let launched = match self.cached(ns, &name) {
            Cached::Found(_) | Cached::JustLaunched => true,
            Cached::Absent => false,
            Cached::Unknown => jobs.get_opt(&name).await?.is_some(),
        };
        if launched {
            return Ok(());
        }
        let params = PatchParams::apply(FIELD_MANAGER).force();
        if !request.run.patches.is_empty() {
            let cm = request.patches_config_map();
            Api::<ConfigMap>::namespaced(self.client.clone(), ns)
                .patch(
                    cm.metadata.name.as_deref().unwrap_or_default(),
                    &params,
                    &Patch::Apply(&cm),
                )
                .await?;
        }
        match jobs.patch(&name, &params, &Patch::Apply(&request.job())).await {
            Ok(_) => {
                if let Some(cache) = &self.cache {
                    cache.just_launched(ObjectRef::new(&name).within(ns));
                }
                Ok(())
            }
            // A Job the cache did not have yet, made by another version of kubeheal: its
            // template cannot change, and it is this request's Job all the same.
            Err(error) => match jobs.get_opt(&name).await? {
                Some(_) => {
                    if let Some(cache) = &self.cache {
                        cache.just_launched(ObjectRef::new(&name).within(ns));
                    }
                    Ok(())
                }
                None => Err(error),
            },
        }
    }

    /// Whether the Job `name` has ended (`None` when there is no such Job): a cheap look that
    /// reads no Secret, for a controller that checks on a running Job often.
    pub async fn ended(&self, namespace: &str, name: &str, timeout: Duration) -> Result<Option<bool>, kube::Error> {
        // The caches can be a moment behind: a Job just launched counts as running until its
        // watch event, which wakes the run again; a Job the listed cache lacks counts as not
        // launched, and applying it again changes nothing; `collect` reads the ending itself
        // from the API server.
        let found = match self.cached(namespace, name) {
            Cached::Found(found) => Some(*found),
            Cached::JustLaunched => return Ok(Some(false)),
            Cached::Absent => None,
            Cached::Unknown => self.job_and_pod(namespace, name).await?,
        };
        let Some((job, pod)) = found else {
            return Ok(None);
        };
        Ok(Some(
            job_ending(&job, pod.as_ref()).is_some() || past_deadline(&job, timeout),
        ))
    }

    /// The execution, once the launched Job has ended: its log read through the API, redacted
    /// and kept, and the envelope. `None` while it runs (or before it is launched).
    pub async fn collect(&self, request: &JobRequest) -> Result<Option<Execution>, kube::Error> {
        let name = request.job_name();
        let ns = &request.namespace;
        let pods: Api<Pod> = Api::namespaced(self.client.clone(), ns);
        let Some((job, pod)) = self.job_and_pod(ns, &name).await? else {
            return Ok(None);
        };
        let (ending, class) = match job_ending(&job, pod.as_ref()) {
            Some(ended) => ended,
            None if past_deadline(&job, request.run.timeout) => (Ending::TimedOut, None),
            None => return Ok(None),
        };

        let mark = request.section_mark();
        let mut output = BuildOutput::default();
        if let Some(p) = &pod
            && matches!(ending, Ending::Exited(_) | Ending::TimedOut)
            && class != Some(ErrorClass::ImagePull)
        {
            let pod_name = p.metadata.name.as_deref().unwrap_or_default();
            let params = LogParams {
                container: Some(BUILD_CONTAINER.into()),
                limit_bytes: Some(LOG_READ_LIMIT),
                ..LogParams::default()
            };
            let raw_log = read_log(&pods, pod_name, &params).await;
            output = read_build_output(&raw_log, &mark);
            if raw_log.len() as i64 >= LOG_READ_LIMIT {
                output.warnings.push(format!(
                    "the build printed more than {} MiB; kubeheal read the first {} MiB of its log",
                    LOG_READ_LIMIT >> 20,
                    LOG_READ_LIMIT >> 20
                ));
                // The artifacts section is at the end, past what was read: read the end again.
                let params = LogParams {
                    container: Some(BUILD_CONTAINER.into()),
                    tail_lines: Some(SECTION_LINES),
                    ..LogParams::default()
                };
                let tail = read_build_output(&read_log(&pods, pod_name, &params).await, &mark);
                if tail.artifacts_read {
                    output.artifacts = tail.artifacts;
                    output.warnings.retain(|w| !w.starts_with("the artifacts section"));
                    output.warnings.extend(tail.warnings);
                }
                // So is the service's output, just before it.
                if !tail.service_output.is_empty() {
                    output.service_output = tail.service_output;
                }
            }
        }
        // The operator's own secrets too: a build must not get them out even by guessing.
        let secrets: Vec<String> = request
            .run
            .secrets
            .iter()
            .cloned()
            .chain(secret_values(std::env::vars()))
            .collect();
        let (mut log, mut redactions) = redact(&output.log, &secrets);
        let (endpoint_calls, service_output) = match (request.verify(), &pod) {
            (Some(check), Some(p)) if ending == Ending::Exited(0) => {
                // The calls as the probe container printed them: its log is its own, where
                // nothing the build or the service runs can write.
                let params = LogParams {
                    container: Some(PROBE_CONTAINER.into()),
                    limit_bytes: Some(LOG_READ_LIMIT),
                    ..LogParams::default()
                };
                let reported = read_log(&pods, p.metadata.name.as_deref().unwrap_or_default(), &params).await;
                let calls = crate::probe::verify::reported_calls(&reported);
                let (calls, printed, n) = verified(check, calls, &output.service_output, &secrets);
                redactions += n;
                let section = crate::core::verify::log_section(&check.start, &calls, &printed);
                log.push_str(&redact(&section, &secrets).0);
                (calls, printed)
            }
            // Asked to verify, with no image to do it: the run must not pass unverified.
            _ if request.run.verify.is_some()
                && request.probe_image.is_none()
                && request.tool.is_none()
                && ending == Ending::Exited(0) =>
            {
                let check = request.run.verify.as_ref().expect("a check");
                let why = crate::probe::ProbeError::Usage(
                    "the operator runs without --probe-image (KUBEHEAL_PROBE_IMAGE), so nothing can call the service; the chart sets it to the operator's image".into(),
                );
                (
                    vec![crate::probe::verify::refused(&check.document, &why)],
                    String::new(),
                )
            }
            _ => (Vec::new(), String::new()),
        };
        self.keep_log(request, &name, &log).await?;
        let mut warnings = std::mem::take(&mut output.warnings);
        let (kept, n) = redact_artifacts(std::mem::take(&mut output.artifacts), &secrets, &mut warnings);
        redactions += n;
        let artifacts = self.keep_artifacts(request, &name, kept).await?;

        let (_, runner) = request.command_and_runner();
        let detail = pod
            .as_ref()
            .and_then(|p| p.status.as_ref())
            .and_then(|s| s.message.clone())
            .unwrap_or_default();
        let (mut status, mut error) = classify(ending, runner, request.run.timeout, &detail);
        if let Some(class) = class {
            let (message, fix) = match class {
                ErrorClass::OomKilled => (
                    "the build container ran out of memory (OOMKilled)",
                    "raise spec.executor.resources.limits.memory or reduce the build's parallelism",
                ),
                ErrorClass::ImagePull if pulling(pod.as_ref(), PROBE_CONTAINER) => (
                    "kubeheal's probe image could not be pulled",
                    "check the operator's --probe-image (the chart's image.repository and image.tag) and the registry's pull secret",
                ),
                ErrorClass::ImagePull => (
                    "the executor image could not be pulled",
                    "check spec.executor.image: the name, the tag and the registry's pull secret",
                ),
                ErrorClass::Evicted => (
                    "the Pod was evicted from its node",
                    "give the executor more ephemeral storage or memory requests, then run again",
                ),
                ErrorClass::Infra if pod.is_none() => (
                    "the Job ended and its Pod is gone (garbage-collected or deleted), and with it the build's result",
                    "run it again; if Pods of finished Jobs vanish often, raise the cluster's terminated-pod-gc-threshold",
                ),
                _ => (
                    "the Job failed without a container result",
                    "look at the Job's events (kubectl describe job)",
                ),
            };
            status = RunStatus::Error;
            error = Some((class, message.to_owned(), fix.to_owned()));
        }
        let exit_code = pod
            .as_ref()
            .and_then(|p| p.status.as_ref())
            .and_then(|s| s.container_statuses.as_ref())
            .and_then(|cs| cs.iter().find(|c| c.name == BUILD_CONTAINER))
            .and_then(|c| c.state.as_ref()?.terminated.as_ref().map(|t| t.exit_code));
        let (error_class, error_message, suggested_fix) = match error {
            Some((c, m, f)) => (Some(c), Some(m), Some(f)),
            None => (None, None, None),
        };
        let image = request
            .run
            .image
            .clone()
            .unwrap_or_else(|| detect::default_image(request.run.project_type).to_owned());
        let mut environment = BTreeMap::from([("image".to_owned(), image), ("job".to_owned(), name)]);
        // The digest the node really ran (`imageID`), which a tag does not pin.
        if let Some(digest) = pod
            .as_ref()
            .and_then(|p| p.status.as_ref())
            .and_then(|s| s.container_statuses.as_ref())
            .and_then(|cs| cs.iter().find(|c| c.name == BUILD_CONTAINER))
            .map(|c| c.image_id.clone())
            .filter(|id| !id.is_empty())
        {
            environment.insert("imageDigest".to_owned(), digest);
        }
        for (tool, version) in output.environment {
            let (version, n) = redact(&version, &secrets);
            redactions += n;
            environment.entry(tool).or_insert(version);
        }
        let envelope = RunEnvelope {
            run_id: environment["job"].clone(),
            endpoint: None,
            status,
            duration_ms: run_time(&job).unwrap_or_else(|| age(&job)).as_millis() as u64,
            http_status: build_http_status(status),
            content_type: BUILD_CONTENT_TYPE.to_owned(),
            json: None,
            text_preview: Some(text_preview(&log)),
            exit_code,
            error_class,
            error_message,
            suggested_fix,
            warnings,
            redactions_applied: redactions > 0,
            artifacts,
            log_excerpt: Some(excerpt(&log)),
            environment_metadata: environment,
        };
        // The API server returns one log for both streams: stderr cannot be told apart here.
        Ok(Some(Execution {
            envelope,
            log,
            stderr_tail: String::new(),
            endpoint_calls,
            service_output,
        }))
    }

    /// Keeps the artifacts in a ConfigMap the run owns (one key each), and returns their
    /// references (`configmap://<namespace>/<name>/<key>`).
    async fn keep_artifacts(
        &self,
        request: &JobRequest,
        job: &str,
        artifacts: Vec<PrintedArtifact>,
    ) -> Result<Vec<ArtifactRef>, kube::Error> {
        if artifacts.is_empty() {
            return Ok(Vec::new());
        }
        let cm_name = format!("{job}-artifacts");
        let mut data = BTreeMap::new();
        let mut refs = Vec::new();
        for (i, artifact) in artifacts.into_iter().enumerate() {
            let key = artifact_key(i, &artifact.name);
            refs.push(ArtifactRef {
                size: artifact.bytes.len() as u64,
                mime: super::output::mime_of(&artifact.name).to_owned(),
                url: format!("configmap://{}/{cm_name}/{key}", request.namespace),
                name: artifact.name,
            });
            data.insert(key, ByteString(artifact.bytes));
        }
        let cm: ConfigMap = serde_json::from_value(json!({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": cm_name, "namespace": request.namespace,
                         "labels": request.labels(), "ownerReferences": [request.owner]},
            "binaryData": data,
        }))
        .expect("a ConfigMap");
        Api::<ConfigMap>::namespaced(self.client.clone(), &request.namespace)
            .patch(&cm_name, &PatchParams::apply(FIELD_MANAGER).force(), &Patch::Apply(&cm))
            .await?;
        Ok(refs)
    }

    /// Keeps the redacted log, gzip-compressed and bounded, in a ConfigMap the run owns.
    async fn keep_log(&self, request: &JobRequest, job: &str, log: &str) -> Result<(), kube::Error> {
        let compressed = gzip_bounded(log);
        let cm: ConfigMap = serde_json::from_value(json!({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": log_config_map(job), "namespace": request.namespace,
                         "labels": request.labels(), "ownerReferences": [request.owner]},
            "binaryData": {"log.gz": ByteString(compressed)},
        }))
        .expect("a ConfigMap");
        Api::<ConfigMap>::namespaced(self.client.clone(), &request.namespace)
            .patch(
                &log_config_map(job),
                &PatchParams::apply(FIELD_MANAGER).force(),
                &Patch::Apply(&cm),
            )
            .await?;
        Ok(())
    }
}

/// How long ago the Job was created.
fn age(job: &Job) -> Duration {
    job.metadata
        .creation_timestamp
        .as_ref()
        .map(|c| Duration::from_secs((k8s_openapi::jiff::Timestamp::now().as_second() - c.0.as_second()).max(0) as u64))
        .unwrap_or_default()
}

/// The deadline is the Job's own; past it (and a minute's grace to report) the run is over
/// whatever the Job says.
fn past_deadline(job: &Job, timeout: Duration) -> bool {
    age(job) > timeout + Duration::from_secs(60)
}

/// Most log bytes read from the build container at once.
const LOG_READ_LIMIT: i64 = 8 * 1024 * 1024;

/// A ConfigMap key for the `index`th artifact: keys allow only `[-._a-zA-Z0-9]`, so the path's
/// other characters become `_`, and the index keeps two paths that look alike apart.
fn artifact_key(index: usize, name: &str) -> String {
    let clean: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-._".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    let mut key = format!("{index:02}-{clean}");
    key.truncate(253);
    key
}

/// Artifacts as they may be kept: text redacted like the log; a binary file that holds a secret
/// value is left out (its bytes cannot be rewritten safely) and named in a warning. Returns the
/// artifacts and how many redactions were made.
fn redact_artifacts(
    artifacts: Vec<PrintedArtifact>,
    secrets: &[String],
    warnings: &mut Vec<String>,
) -> (Vec<PrintedArtifact>, usize) {
    let mut kept = Vec::new();
    let mut redactions = 0;
    for artifact in artifacts {
        match String::from_utf8(artifact.bytes) {
            Ok(text) => {
                let (text, n) = redact(&text, secrets);
                redactions += n;
                kept.push(PrintedArtifact {
                    name: artifact.name,
                    bytes: text.into_bytes(),
                });
            }
            Err(binary) => {
                let bytes = binary.into_bytes();
                let leaks = secrets
                    .iter()
                    .filter(|s| !s.is_empty())
                    .any(|s| memchr::memmem::find(&bytes, s.as_bytes()).is_some());
                if leaks {
                    redactions += 1;
                    warnings.push(format!(
                        "artifact {} left out: it is a binary file that holds a secret value",
                        artifact.name
                    ));
                } else {
                    kept.push(PrintedArtifact {
                        name: artifact.name,
                        bytes,
                    });
                }
            }
        }
    }
    (kept, redactions)
}

/// How long the Job ran: from its start to its completion or failure.
fn run_time(job: &Job) -> Option<Duration> {
    let status = job.status.as_ref()?;
    let start = status.start_time.as_ref()?.0;
    let end = status.completion_time.as_ref().map(|t| t.0).or_else(|| {
        status
            .conditions
            .iter()
            .flatten()
            .find(|c| c.type_ == "Failed" && c.status == "True")
            .and_then(|c| c.last_transition_time.as_ref().map(|t| t.0))
    })?;
    Some(Duration::from_secs((end.as_second() - start.as_second()).max(0) as u64))
}

/// gzip of `log`, keeping its end when the whole would be larger than [`MAX_KEPT_LOG`].
pub fn gzip_bounded(log: &str) -> Vec<u8> {
    let mut text = log;
    loop {
        let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        let _ = encoder.write_all(text.as_bytes());
        let bytes = encoder.finish().unwrap_or_default();
        if bytes.len() <= MAX_KEPT_LOG || text.len() < 1024 {
            return bytes;
        }
        let mut start = text.len() / 2;
        while !text.is_char_boundary(start) {
            start += 1;
        }
        text = &text[start..];
    }
}

/// The ConfigMap that keeps the redacted, compressed log of the Job `job`.
pub fn log_config_map(job: &str) -> String {
    format!("{job}-log")
}

/// The kept log of a Job, decompressed.
pub async fn kept_log(client: Client, namespace: &str, job: &str) -> Result<Option<String>, kube::Error> {
    let cm = Api::<ConfigMap>::namespaced(client, namespace)
        .get_opt(&log_config_map(job))
        .await?;
    let Some(bytes) = cm.and_then(|c| c.binary_data).and_then(|d| d.get("log.gz").cloned()) else {
        return Ok(None);
    };
    let mut text = String::new();
    let _ = std::io::Read::read_to_string(&mut flate2::read::GzDecoder::new(&bytes.0[..]), &mut text);
    Ok(Some(text))
}

/// The artifacts `envelope` names, read back from the ConfigMap that keeps them (redacted as
/// kept): name → bytes. An artifact whose ConfigMap or key is gone is left out.
pub async fn kept_artifacts(
    client: Client,
    namespace: &str,
    envelope: &RunEnvelope,
) -> Result<BTreeMap<String, Vec<u8>>, kube::Error> {
    let configmaps: Api<ConfigMap> = Api::namespaced(client, namespace);
    let mut read: BTreeMap<String, BTreeMap<String, ByteString>> = BTreeMap::new();
    let mut artifacts = BTreeMap::new();
    for artifact in &envelope.artifacts {
        // configmap://<namespace>/<name>/<key>
        let Some((cm, key)) = artifact
            .url
            .strip_prefix(&format!("configmap://{namespace}/"))
            .and_then(|rest| rest.split_once('/'))
        else {
            continue;
        };
        if !read.contains_key(cm) {
            let data = configmaps
                .get_opt(cm)
                .await?
                .and_then(|c| c.binary_data)
                .unwrap_or_default();
            read.insert(cm.to_owned(), data);
        }
        if let Some(bytes) = read[cm].get(key) {
            artifacts.insert(artifact.name.clone(), bytes.0.clone());
        }
    }
    Ok(artifacts)
}

/// The exit code `container` (an init container or the main one) of the Job `job`'s Pod ended
/// with; `None` while it has not ended, or when the Pod is gone.
pub async fn container_exit_code(
    client: Client,
    namespace: &str,
    job: &str,
    container: &str,
) -> Result<Option<i32>, kube::Error> {
    let pods: Api<Pod> = Api::namespaced(client, namespace);
    let pod = pods
        .list(&ListParams::default().labels(&format!("job-name={job}")))
        .await?
        .items
        .into_iter()
        .next();
    let status = pod.and_then(|p| p.status);
    Ok(status.and_then(|s| {
        s.init_container_statuses
            .into_iter()
            .flatten()
            .chain(s.container_statuses.into_iter().flatten())
            .find(|c| c.name == container)
            .and_then(|c| c.state?.terminated.map(|t| t.exit_code))
    }))
}

/// Whether the Job `job` still has a Pod (a Job's ended Pods are kept until the Job goes, unless
/// the cluster's Pod garbage collector or a person removed them).
pub async fn job_has_pod(client: Client, namespace: &str, job: &str) -> Result<bool, kube::Error> {
    let pods: Api<Pod> = Api::namespaced(client, namespace);
    let listed = pods
        .list(&ListParams::default().labels(&format!("job-name={job}")).limit(1))
        .await?;
    Ok(!listed.items.is_empty())
}

/// The last `lines` lines `container` of the Job `job`'s Pod printed, while the API server still
/// serves them (a Pod that is gone has no log).
pub async fn container_log_tail(
    client: Client,
    namespace: &str,
    job: &str,
    container: &str,
    lines: i64,
) -> Result<Option<String>, kube::Error> {
    let pods: Api<Pod> = Api::namespaced(client, namespace);
    let Some(pod) = pods
        .list(&ListParams::default().labels(&format!("job-name={job}")))
        .await?
        .items
        .into_iter()
        .next()
    else {
        return Ok(None);
    };
    // No `limitBytes`: the API server would apply it from the start of the tail, cutting off
    // its end, where a command's verdict or summary is. The end is kept here instead.
    let params = LogParams {
        container: Some(container.to_owned()),
        tail_lines: Some(lines),
        ..LogParams::default()
    };
    let mut bytes = Vec::new();
    if let Ok(stream) = pods.log_stream(&pod.name_any(), &params).await {
        bytes = keep_end(stream, LOG_TAIL_BYTES).await;
    }
    Ok(Some(String::from_utf8_lossy(&bytes).into_owned()))
}

/// Most bytes of a container's log tail kept ([`container_log_tail`]): its last lines however
/// long they are.
const LOG_TAIL_BYTES: usize = 64 * 1024;

/// The last `max` bytes of `reader` (what arrived before an error included), from the start of
/// a line when the front was dropped; memory stays within about twice `max`.
async fn keep_end(reader: impl futures::AsyncRead, max: usize) -> Vec<u8> {
    use futures::AsyncReadExt;
    let mut reader = std::pin::pin!(reader);
    let mut kept: Vec<u8> = Vec::new();
    let mut dropped = false;
    let mut chunk = vec![0u8; 16 * 1024];
    while let Ok(n) = reader.read(&mut chunk).await {
        if n == 0 {
            break;
        }
        kept.extend_from_slice(&chunk[..n]);
        if kept.len() > 2 * max {
            kept.drain(..kept.len() - max);
            dropped = true;
        }
    }
    if kept.len() > max {
        kept.drain(..kept.len() - max);
        dropped = true;
    }
    if dropped && let Some(newline) = kept.iter().position(|&b| b == b'\n') {
        kept.drain(..=newline);
    }
    kept
}

/// A container's log as text, bytes that are not UTF-8 replaced (a build prints what it likes,
/// and a byte limit can cut a character in two): `Api::logs` would refuse the whole log for one
/// such byte. Empty when the API server cannot give it.
async fn read_log(pods: &Api<Pod>, pod: &str, params: &LogParams) -> String {
    use futures::AsyncReadExt;
    let mut bytes = Vec::new();
    if let Ok(stream) = pods.log_stream(pod, params).await {
        let mut stream = std::pin::pin!(stream);
        // What arrived before an error is kept: it is the start of the log.
        let _ = stream.read_to_end(&mut bytes).await;
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::heal_run::ProjectType;

    #[tokio::test]
    async fn a_log_tail_keeps_its_end_from_a_line_start_however_long_its_lines() {
        let short = b"one\ntwo\n".to_vec();
        assert_eq!(keep_end(futures::io::Cursor::new(short.clone()), 64).await, short);
        let mut long = "x".repeat(100_000).into_bytes();
        long.extend_from_slice(b"\nsummary: 2 errors\nlast line\n");
        let kept = keep_end(futures::io::Cursor::new(long), 64).await;
        assert_eq!(kept, b"summary: 2 errors\nlast line\n");
        let huge: Vec<u8> = (0..50_000).flat_map(|i| format!("line {i}\n").into_bytes()).collect();
        let kept = keep_end(futures::io::Cursor::new(huge), 1024).await;
        assert!(kept.len() <= 1024 && kept.starts_with(b"line ") && kept.ends_with(b"line 49999\n"));
    }
    #[tokio::test]
    async fn the_job_cache_knows_a_job_once_listed_and_a_launched_one_until_its_watch_event() {
        use kube::runtime::{reflector, watcher};
        let (jobs, mut job_writer) = reflector::store::<Job>();
        let (pods, _) = reflector::store::<Pod>();
        let cache = JobCache::new(jobs, pods);
        let key = ObjectRef::new("calc-c0-0123abcd").within("team");
        // Still listing: only the API server knows whether the Job exists.
        assert!(matches!(cache.look(&key), Cached::Unknown));
        job_writer.apply_watcher_event(&watcher::Event::Init);
        job_writer.apply_watcher_event(&watcher::Event::InitDone);
        // Listed (which the cache's own task learns), and not there: not launched.
        for _ in 0..100 {
            if cache.listed.load(Ordering::Acquire) {
                break;
            }
            tokio::task::yield_now().await;
        }
        assert!(matches!(cache.look(&key), Cached::Absent));
        // Created by this process: running, without a read, until the watch brings it...
        cache.just_launched(key.clone());
        assert!(matches!(cache.look(&key), Cached::JustLaunched));
        let mut job: Job = serde_json::from_value(json!({
            "metadata": {"name": "calc-c0-0123abcd", "namespace": "team", "uid": "j-1"}
        }))
        .expect("a Job");
        job_writer.apply_watcher_event(&watcher::Event::Apply(job.clone()));
        assert!(matches!(cache.look(&key), Cached::Found(_)));
        // ...after which the cache alone answers: deleted, it is gone.
        job.metadata.uid = Some("j-1".into());
        job_writer.apply_watcher_event(&watcher::Event::Delete(job));
        assert!(matches!(cache.look(&key), Cached::Absent));
        // A launch the watch has not shown after a while is asked of the API server.
        let other = ObjectRef::new("calc-c1-0123abcd").within("team");
        cache
            .launched
            .lock()
            .unwrap()
            .insert(other.clone(), Instant::now() - UNSEEN_AFTER_LAUNCH);
        assert!(matches!(cache.look(&other), Cached::Unknown));
    }

    use crate::api::shared::GitSource;

    fn request(container: ContainerSettings) -> JobRequest {
        JobRequest {
            name: "calc-c1-0123abcd".into(),
            labels: crate::api::shared::heal_run_labels("calc"),
            owner: OwnerReference {
                api_version: "kubeheal.dev/v1alpha1".into(),
                kind: "HealRun".into(),
                name: "calc".into(),
                uid: "u-1".into(),
                controller: Some(true),
                block_owner_deletion: Some(true),
            },
            namespace: "team".into(),
            commit: "0123456789abcdef".into(),
            run: RunRequest {
                cycle: 2,
                source: GitSource {
                    url: "https://git.example.com/acme/calc.git".into(),
                    ..GitSource::default()
                },
                revision: Some("0123456789abcdef".into()),
                patches: vec!["diff".into()],
                project_type: ProjectType::Python,
                image: None,
                command: Some("pytest".into()),
                timeout: Duration::from_secs(60),
                secrets: Vec::new(),
                verify: None,
            },
            container,
            tool: None,
            probe_image: None,
        }
    }

    #[test]
    fn a_baseline_mounts_an_empty_folder_for_patches_and_a_fix_mounts_its_config_map() {
        let volume = |request: &JobRequest| {
            let job = serde_json::to_value(request.job()).unwrap();
            job["spec"]["template"]["spec"]["volumes"]
                .as_array()
                .unwrap()
                .iter()
                .find(|v| v["name"] == "patches")
                .cloned()
                .unwrap()
        };
        let fix = request(ContainerSettings::default());
        assert_eq!(
            volume(&fix),
            json!({"name": "patches", "configMap": {"name": "calc-c1-0123abcd-patches"}})
        );
        let mut baseline = request(ContainerSettings::default());
        baseline.run.patches.clear();
        assert_eq!(volume(&baseline), json!({"name": "patches", "emptyDir": {}}));
    }

    #[test]
    fn a_tool_job_runs_the_tools_image_after_the_fetch_and_reports_its_changes_with_git() {
        let mut request = request(ContainerSettings {
            env: vec![serde_json::from_value(json!({"name": "BUILD_ONLY", "value": "x"})).unwrap()],
            ..ContainerSettings::default()
        });
        request.run.source.sub_path = Some("backend".into());
        request.tool = Some(ToolStep {
            image: "registry.example/aider:0.86".into(),
            task: "Work order DDS-FIX-1".into(),
            command: None,
            env: Vec::new(),
            env_secret: Some("kubeheal-tool-aider".into()),
        });
        let job = serde_json::to_value(request.job()).unwrap();
        assert!(
            job["spec"].get("ttlSecondsAfterFinished").is_none(),
            "a tool's Job is kept until its run is deleted"
        );
        let pod = &job["spec"]["template"]["spec"];
        let init = pod["initContainers"].as_array().unwrap();
        assert_eq!(init.len(), 2);
        assert!(
            init[0]["command"][2]
                .as_str()
                .unwrap()
                .ends_with(crate::executor::tool::RECORD_BASE)
        );
        let tool = &init[1];
        assert_eq!(tool["name"], TOOL_CONTAINER);
        assert_eq!(tool["image"], "registry.example/aider:0.86");
        assert!(tool.get("command").is_none(), "the image's own entrypoint runs");
        assert_eq!(tool["workingDir"], "/workspace/src/backend");
        assert_eq!(
            tool["env"][0],
            json!({"name": "KUBEHEAL_TASK", "value": "Work order DDS-FIX-1"})
        );
        assert_eq!(tool["envFrom"][0]["secretRef"]["name"], "kubeheal-tool-aider");
        assert_eq!(tool["securityContext"]["runAsNonRoot"], true);
        let last = build(&request.job());
        assert_eq!(last["image"], FETCH_IMAGE);
        let script = last["command"][2].as_str().unwrap();
        assert!(
            script.contains(r#"git --git-dir="$KUBEHEAL_PRISTINE/git""#)
                && script.contains("GIT_CONFIG_GLOBAL=/dev/null"),
            "{script}"
        );
        let mounts = |c: &serde_json::Value| c["volumeMounts"].to_string();
        assert!(mounts(&init[0]).contains("/kubeheal") && mounts(&last).contains("/kubeheal"));
        assert!(
            !mounts(tool).contains("/kubeheal"),
            "the tool never sees the repository's untouched copy"
        );
        assert!(script.contains(r#"cd "$WORKSPACE/src/" || exit 1"#), "{script}");
        assert!(
            !last["env"].to_string().contains("BUILD_ONLY"),
            "the build's settings stay the build's"
        );
    }

    #[test]
    fn a_tool_with_a_command_runs_it_with_sh_in_the_repositorys_root_with_its_variables() {
        let mut request = request(ContainerSettings::default());
        request.tool = Some(ToolStep {
            image: "registry.example/forge:1.4".into(),
            task: "regenerate".into(),
            command: Some("python3 generate.py".into()),
            env: vec![("KUBEHEAL_CONTRACT".into(), "domains/a.yaml".into())],
            env_secret: None,
        });
        let job = serde_json::to_value(request.job()).unwrap();
        let tool = &job["spec"]["template"]["spec"]["initContainers"][1];
        assert_eq!(tool["command"], json!(["sh", "-c", "python3 generate.py"]));
        assert_eq!(tool["workingDir"], "/workspace/src");
        assert_eq!(
            tool["env"][0],
            json!({"name": "KUBEHEAL_CONTRACT", "value": "domains/a.yaml"})
        );
        assert!(tool.get("envFrom").is_none(), "no Secret is named: {tool}");
    }

    fn build(job: &Job) -> serde_json::Value {
        serde_json::to_value(job).expect("a Job")["spec"]["template"]["spec"]["containers"][0].clone()
    }

    #[test]
    fn the_build_container_gets_the_specs_env_and_resources_and_keeps_its_own_variables_last() {
        let container: ContainerSettings = ContainerSettings {
            env: vec![serde_json::from_value(json!({"name": "WORKSPACE", "value": "/elsewhere"})).expect("env")],
            env_from: vec![serde_json::from_value(json!({"secretRef": {"name": "build-secrets"}})).expect("envFrom")],
            resources: Some(serde_json::from_value(json!({"limits": {"memory": "8Gi"}})).expect("resources")),
        };
        let job = request(container).job();
        let build = build(&job);
        assert_eq!(build["resources"], json!({"limits": {"memory": "8Gi"}}));
        assert_eq!(build["envFrom"], json!([{"secretRef": {"name": "build-secrets"}}]));
        let env = build["env"].as_array().expect("env");
        let workspace: Vec<&serde_json::Value> = env.iter().filter(|e| e["name"] == "WORKSPACE").collect();
        assert_eq!(
            workspace.last().expect("set")["value"],
            "/workspace",
            "the last definition wins"
        );
    }

    /// Runs the build container's real script with `sh`, as the container would, in a workspace
    /// under `dir`; returns the exit code and what it printed.
    fn run_build_script(request: &JobRequest, dir: &std::path::Path) -> (i32, String) {
        let build = build(&request.job());
        let script = build["command"][2].as_str().expect("a script").to_owned();
        std::fs::create_dir_all(dir.join("src")).expect("mkdir");
        let out = std::process::Command::new("sh")
            .arg("-c")
            .arg(script)
            .env("WORKSPACE", dir)
            .env("KUBEHEAL_ARTIFACTS", dir.join("artifacts"))
            .output()
            .expect("sh runs");
        (
            out.status.code().expect("an exit code"),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    }

    fn verifying(mut request: JobRequest) -> JobRequest {
        request.run.verify = Some(
            serde_json::from_value(json!({
                "document": "api/openapi.yaml", "start": "python3 -m app --port '8000'",
                "baseUrl": "http://127.0.0.1:8000", "endpoints": ["GET /health"],
                "readyTimeoutSeconds": 5, "callTimeoutSeconds": 2,
            }))
            .expect("a check"),
        );
        request.probe_image = Some("ghcr.io/kubeheal/kubeheal:0.1".into());
        request
    }

    #[test]
    fn the_probe_sidecars_end_says_nothing_of_the_build_and_its_image_pull_is_named() {
        let job: Job = serde_json::from_value(json!({"metadata": {"name": "j"}})).expect("a Job");
        let pod = |probe: serde_json::Value, build: serde_json::Value| -> Pod {
            serde_json::from_value(json!({"metadata": {"name": "p"}, "status": {
                "initContainerStatuses": [
                    {"name": FETCH_CONTAINER, "image": "git", "imageID": "", "ready": false, "restartCount": 0,
                     "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}},
                    {"name": PROBE_CONTAINER, "image": "kubeheal", "imageID": "", "ready": false, "restartCount": 0, "state": probe}],
                "containerStatuses": [
                    {"name": BUILD_CONTAINER, "image": "python", "imageID": "", "ready": false, "restartCount": 0, "state": build}]
            }}))
            .expect("a Pod")
        };
        // Stopped by the kubelet (or killed for memory) after the build passed: the build passed.
        for reason in ["Error", "OOMKilled"] {
            let ended = pod(
                json!({"terminated": {"exitCode": 137, "reason": reason}}),
                json!({"terminated": {"exitCode": 0, "reason": "Completed"}}),
            );
            assert_eq!(
                job_ending(&job, Some(&ended)),
                Some((Ending::Exited(0), None)),
                "{reason}"
            );
        }
        let unpulled = pod(
            json!({"waiting": {"reason": "ImagePullBackOff"}}),
            json!({"waiting": {"reason": "PodInitializing"}}),
        );
        assert_eq!(
            job_ending(&job, Some(&unpulled)),
            Some((Ending::Exited(-1), Some(ErrorClass::ImagePull)))
        );
        assert!(pulling(Some(&unpulled), PROBE_CONTAINER) && !pulling(Some(&unpulled), BUILD_CONTAINER));
    }

    #[test]
    fn a_job_that_ended_without_its_pod_ended_with_its_result_lost() {
        let complete: Job = serde_json::from_value(json!({"metadata": {"name": "j"},
            "status": {"conditions": [{"type": "Complete", "status": "True"}]}}))
        .expect("a Job");
        assert_eq!(
            job_ending(&complete, None),
            Some((Ending::Exited(-1), Some(ErrorClass::Infra)))
        );
        // Still running, its Pod not made yet: not ended.
        let running: Job =
            serde_json::from_value(json!({"metadata": {"name": "j"}, "status": {"active": 1}})).expect("a Job");
        assert_eq!(job_ending(&running, None), None);
    }

    #[test]
    fn a_verifying_build_has_the_probe_as_a_native_sidecar_of_kubeheals_image_in_the_pods_network() {
        let mut verifying_job = verifying(request(ContainerSettings::default()));
        verifying_job.run.source.sub_path = Some("backend/".into());
        let job = serde_json::to_value(verifying_job.job()).expect("JSON");
        let init = &job["spec"]["template"]["spec"]["initContainers"];
        let probe = &init[1];
        assert_eq!(init[0]["name"], FETCH_CONTAINER, "the checkout comes first");
        assert_eq!(probe["name"], PROBE_CONTAINER);
        assert_eq!(
            probe["restartPolicy"], "Always",
            "stopped by the kubelet when the build ends"
        );
        assert_eq!(probe["image"], "ghcr.io/kubeheal/kubeheal:0.1");
        assert_eq!(probe["securityContext"]["readOnlyRootFilesystem"], true);
        let args: Vec<&str> = probe["args"]
            .as_array()
            .expect("args")
            .iter()
            .map(|a| a.as_str().expect("a string"))
            .collect();
        assert_eq!(
            args,
            [
                "probe",
                "--openapi",
                "$(WORKSPACE)/src/backend/api/openapi.yaml",
                "--base-url",
                "http://127.0.0.1:8000",
                "--timeout",
                "2",
                "--wait-ready",
                "5",
                "--after",
                "$(WORKSPACE)/.kubeheal-verify/after",
                "--output",
                "$(WORKSPACE)/.kubeheal-verify/calls.json",
                "--endpoint",
                "GET /health",
            ]
        );
        // Without a probe image (or for a tool's Job) nothing is added.
        let mut plain = verifying(request(ContainerSettings::default()));
        plain.probe_image = None;
        let job = serde_json::to_value(plain.job()).expect("JSON");
        assert_eq!(
            job["spec"]["template"]["spec"]["initContainers"]
                .as_array()
                .map(Vec::len),
            Some(1)
        );
    }

    #[test]
    fn the_build_script_starts_the_service_after_a_passing_build_and_prints_the_probes_calls() {
        let dir = tempfile::tempdir().expect("a folder");
        let mut request = verifying(request(ContainerSettings::default()));
        // The service: prints a trace and keeps running (the script stops it).
        request.run.verify.as_mut().expect("a check").start =
            r#"echo "Traceback: it's broken" >&2; exec sleep 30"#.into();
        request.run.command = Some("echo tests pass".into());
        // The probe container's part, played by a shell: wait for `start`, then write the calls.
        let verify = dir.path().join(".kubeheal-verify");
        std::fs::create_dir_all(&verify).expect("mkdir");
        let probe = std::process::Command::new("sh")
            .arg("-c")
            .arg(
                r#"while [ ! -e "$V/after" ]; do sleep 0.1; done
[ "$(cat "$V/after")" = start ] && printf '[{"runId":"p-1","endpoint":"GET /health","status":"error","durationMs":1,"httpStatus":500}]' > "$V/calls.json""#,
            )
            .env("V", &verify)
            .spawn()
            .expect("sh runs");
        let started = std::time::Instant::now();
        let (code, printed) = run_build_script(&request, dir.path());
        drop(probe);
        assert_eq!(code, 0, "the build's exit code: {printed}");
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "the service was stopped, not waited for"
        );
        let output = read_build_output(&printed, &request.section_mark());
        assert_eq!(
            output.log, "tests pass\n",
            "kubeheal's sections are taken out of the log"
        );
        assert_eq!(output.service_output.trim(), "Traceback: it's broken");
        // The calls are the probe container's to report, in its own log: not in the build's.
        assert!(!printed.contains("GET /health"), "{printed}");

        // A failing build starts nothing and tells the probe to call nothing.
        let dir = tempfile::tempdir().expect("a folder");
        request.run.command = Some("exit 4".into());
        let (code, printed) = run_build_script(&request, dir.path());
        assert_eq!(code, 4);
        let output = read_build_output(&printed, &request.section_mark());
        assert!(output.service_output.is_empty());
        let said = std::fs::read_to_string(dir.path().join(".kubeheal-verify/after")).expect("the probe was told");
        assert_eq!(said.trim(), crate::probe::verify::SKIP);
    }

    #[test]
    fn a_start_command_that_fails_tells_the_probe_its_exit_code() {
        let dir = tempfile::tempdir().expect("a folder");
        let mut request = verifying(request(ContainerSettings::default()));
        request.run.verify.as_mut().expect("a check").start =
            r#"echo "ModuleNotFoundError: No module named 'flask'" >&2; exit 3"#.into();
        request.run.command = Some("echo tests pass".into());
        // The probe container's part, played by a shell: it reports its calls only once the
        // start command said how it ended, as the probe stops waiting then.
        let verify = dir.path().join(".kubeheal-verify");
        std::fs::create_dir_all(&verify).expect("mkdir");
        let probe = std::process::Command::new("sh")
            .arg("-c")
            .arg(format!(
                r#"while [ ! -e "$V/{exited}" ]; do sleep 0.1; done
printf '[]' > "$V/calls.json""#,
                exited = crate::probe::verify::EXITED
            ))
            .env("V", &verify)
            .spawn()
            .expect("sh runs");
        let (code, printed) = run_build_script(&request, dir.path());
        drop(probe);
        assert_eq!(code, 0, "the build passed: {printed}");
        let exited = std::fs::read_to_string(verify.join(crate::probe::verify::EXITED)).expect("the probe was told");
        assert_eq!(exited.trim(), "3");
        let output = read_build_output(&printed, &request.section_mark());
        assert!(
            output.service_output.contains("ModuleNotFoundError"),
            "{}",
            output.service_output
        );
    }

    #[test]
    fn the_build_script_reports_tool_versions_and_artifacts_and_keeps_the_commands_exit_code() {
        let dir = tempfile::tempdir().expect("a folder");
        let mut request = request(ContainerSettings::default());
        request.run.command = Some(
            "echo building\nmkdir -p \"$KUBEHEAL_ARTIFACTS/reports\"\n\
             printf '<testsuite tests=\"1\"/>' > \"$KUBEHEAL_ARTIFACTS/reports/junit.xml\"\n\
             printf '\\001\\002\\377' > \"$KUBEHEAL_ARTIFACTS/blob.bin\"\n\
             exit 3"
                .into(),
        );
        let (code, printed) = run_build_script(&request, dir.path());
        assert_eq!(code, 3, "the command's exit code is the container's: {printed}");
        let output = read_build_output(&printed, &request.section_mark());
        assert_eq!(output.log, "building\n", "kubeheal's sections are taken out of the log");
        assert!(output.artifacts_read);
        assert!(output.warnings.is_empty(), "{:?}", output.warnings);
        assert_eq!(
            output.artifacts,
            vec![
                PrintedArtifact {
                    name: "blob.bin".into(),
                    bytes: vec![1, 2, 255]
                },
                PrintedArtifact {
                    name: "reports/junit.xml".into(),
                    bytes: b"<testsuite tests=\"1\"/>".to_vec()
                },
            ]
        );
        // Python's tools, found or not on this machine, and the OS: each a real answer of the shell.
        assert!(output.environment.contains_key("python3"), "{:?}", output.environment);
        assert!(output.environment.contains_key("pip"));
        assert!(
            output.environment["os"].starts_with("Linux"),
            "{:?}",
            output.environment
        );
    }

    #[test]
    fn a_job_keeps_at_most_fifty_artifacts_and_names_the_rest_in_warnings() {
        let dir = tempfile::tempdir().expect("a folder");
        let mut request = request(ContainerSettings::default());
        request.run.command = Some(
            "mkdir -p \"$KUBEHEAL_ARTIFACTS\"; i=0; while [ $i -lt 52 ]; do echo $i > \"$KUBEHEAL_ARTIFACTS/f$(printf %02d $i).txt\"; i=$((i+1)); done\n\
             head -c 900000 /dev/zero > \"$KUBEHEAL_ARTIFACTS/big.dat\""
                .into(),
        );
        let (code, printed) = run_build_script(&request, dir.path());
        assert_eq!(code, 0);
        let output = read_build_output(&printed, &request.section_mark());
        assert_eq!(output.artifacts.len(), 50);
        assert!(
            output
                .warnings
                .iter()
                .any(|w| w.starts_with("artifact big.dat (900000 bytes) left out")),
            "{:?}",
            output.warnings
        );
        assert_eq!(
            output
                .warnings
                .iter()
                .filter(|w| w.contains("at most 50 files"))
                .count(),
            2
        );
    }

    #[test]
    fn a_section_cut_short_keeps_what_arrived_and_says_so() {
        let mark = "kubeheal-x";
        let raw = format!(
            "out\n{ARTIFACTS_BEGIN} {mark}\n{ARTIFACT_FILE} {mark} 2 a.txt\naGk=\n{ARTIFACT_FILE} {mark} 9 b.txt\naGk="
        );
        let output = read_build_output(&raw, mark);
        assert_eq!(output.log, "out\n");
        assert_eq!(output.artifacts.len(), 1);
        assert!(output.warnings.iter().any(|w| w.contains("b.txt left out")));
        assert!(output.warnings.iter().any(|w| w.contains("cut short")));
    }

    #[test]
    fn a_binary_artifact_holding_a_secret_is_left_out_and_text_is_redacted() {
        let secret = "s3cr3t-value-123456".to_owned();
        let mut binary = vec![0xff, 0x00];
        binary.extend_from_slice(secret.as_bytes());
        let artifacts = vec![
            PrintedArtifact {
                name: "a.bin".into(),
                bytes: binary,
            },
            PrintedArtifact {
                name: "b.txt".into(),
                bytes: format!("token={secret}\n").into_bytes(),
            },
        ];
        let mut warnings = Vec::new();
        let (kept, n) = redact_artifacts(artifacts, std::slice::from_ref(&secret), &mut warnings);
        assert!(n >= 2);
        assert_eq!(kept.len(), 1);
        assert!(!String::from_utf8_lossy(&kept[0].bytes).contains(&secret));
        assert!(warnings[0].contains("a.bin left out"));
    }

    #[test]
    fn artifact_keys_are_valid_config_map_keys() {
        assert_eq!(
            artifact_key(3, "reports/junit result.xml"),
            "03-reports_junit_result.xml"
        );
    }

    #[test]
    fn without_settings_the_build_container_has_the_default_limits() {
        let job = request(ContainerSettings::default()).job();
        assert_eq!(job.spec.as_ref().and_then(|s| s.ttl_seconds_after_finished), Some(3600));
        let build = build(&job);
        assert_eq!(build["resources"]["limits"], json!({"cpu": "2", "memory": "2Gi"}));
        assert_eq!(build["image"], "python:3.12-slim");
    }
}
