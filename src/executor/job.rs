//! The Kubernetes Job executor: one Job per execution, deterministically named and owned by its
//! resource. An init container fetches the source at the exact revision (credentials from the
//! source's `secretRef`) and applies the patch set from a ConfigMap the run owns; the user's
//! image runs the command. The Pod has no service-account token, runs as non-root with every
//! capability dropped and the RuntimeDefault seccomp profile, within resource limits and a
//! deadline. When the container ends, its log is read through the API, redacted, compressed and
//! kept (bounded) in a ConfigMap the run owns, so it survives Pod cleanup; the exit code comes
//! from the container status, and OOMKilled, eviction, image pull failures and the deadline map
//! to their own error classes.

use std::collections::BTreeMap;
use std::io::Write;
use std::time::Duration;

use k8s_openapi::ByteString;
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{ConfigMap, Pod};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kube::Client;
use kube::api::{Api, ListParams, LogParams, Patch, PatchParams};
use serde_json::json;

use super::detect::{self, Runner};
use super::{Ending, Execution, RunRequest, classify, excerpt};
use crate::api::shared::{ErrorClass, RunEnvelope, RunStatus};
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
/// Installs pytest for the build's user (HOME is the writable workspace) when the image lacks it.
const INSTALL_PYTEST: &str = "python3 -c 'import pytest' 2>/dev/null || python3 -m pip install --quiet --user --disable-pip-version-check pytest";

/// One execution to run as a Job: seed 001's input, the exact commit, and the resource that owns
/// the Job.
#[derive(Debug, Clone)]
pub struct JobRequest {
    /// The Job's name (the execution's key): the same execution always has the same name, so a
    /// restarted operator finds its Job instead of creating a second one.
    pub name: String,
    /// The owning resource's name (the HealRun), and its owner reference.
    pub owner_name: String,
    pub owner: OwnerReference,
    pub namespace: String,
    /// The exact commit to fetch (the run's revision, resolved).
    pub commit: String,
    pub run: RunRequest,
    /// The build container's own settings (`spec.executor`): environment and resources.
    pub container: ContainerSettings,
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
        crate::api::shared::heal_run_labels(&self.owner_name)
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
        let (command, _) = self.command_and_runner();
        let image = self
            .run
            .image
            .clone()
            .unwrap_or_else(|| detect::default_image(self.run.project_type).to_owned());
        let fetch = r#"set -eu
git clone --quiet --no-checkout "$SOURCE_URL" "$WORKSPACE/src"
cd "$WORKSPACE/src"
git -c advice.detachedHead=false checkout --quiet "$SOURCE_COMMIT"
for p in $(ls "$PATCHES" 2>/dev/null | sort); do git apply --whitespace=nowarn "$PATCHES/$p"; done"#;
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
        let subpath = self.run.source.sub_path.clone().unwrap_or_default();
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
        build_env.extend([
            json!({"name": "WORKSPACE", "value": "/workspace"}),
            json!({"name": "KUBEHEAL_ARTIFACTS", "value": "/workspace/artifacts"}),
            json!({"name": "HOME", "value": "/workspace"}),
            json!({"name": "CI", "value": "true"}),
        ]);
        serde_json::from_value(json!({
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
                        "volumes": [
                            {"name": "workspace", "emptyDir": {}},
                            {"name": "patches", "configMap": {"name": format!("{}-patches", self.job_name())}}
                        ],
                        "initContainers": [{
                            "name": FETCH_CONTAINER, "image": FETCH_IMAGE,
                            "command": ["sh", "-c", fetch], "env": fetch_env,
                            "securityContext": security, "resources": limits,
                            "volumeMounts": [{"name": "workspace", "mountPath": "/workspace"},
                                             {"name": "patches", "mountPath": "/patches", "readOnly": true}]
                        }],
                        "containers": [{
                            "name": BUILD_CONTAINER, "image": image,
                            "command": ["sh", "-c", format!("cd \"$WORKSPACE/src/{subpath}\" && exec 2>&1 && {command}")],
                            "env": build_env, "envFrom": self.container.env_from,
                            "securityContext": security, "resources": build_resources,
                            "volumeMounts": [{"name": "workspace", "mountPath": "/workspace"}]
                        }]
                    }
                }
            }
        }))
        .expect("a Job")
    }
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
    failed.map(|_| (Ending::Exited(-1), Some(ErrorClass::Unknown)))
}

/// Runs builds as Kubernetes Jobs.
pub struct JobExecutor {
    client: Client,
}

impl JobExecutor {
    pub fn new(client: Client) -> Self {
        JobExecutor { client }
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

    /// Applies the patches ConfigMap and the Job. Idempotent: the same request names the same
    /// objects, so a repeated launch finds the Job it created before.
    pub async fn launch(&self, request: &JobRequest) -> Result<(), kube::Error> {
        let name = request.job_name();
        let ns = &request.namespace;
        let jobs: Api<Job> = Api::namespaced(self.client.clone(), ns);
        // Launched before (a controller re-checks its Job often): nothing to write.
        if jobs.get_opt(&name).await?.is_some() {
            return Ok(());
        }
        let params = PatchParams::apply(FIELD_MANAGER).force();
        let cm = request.patches_config_map();
        Api::<ConfigMap>::namespaced(self.client.clone(), ns)
            .patch(
                cm.metadata.name.as_deref().unwrap_or_default(),
                &params,
                &Patch::Apply(&cm),
            )
            .await?;
        jobs.patch(&name, &params, &Patch::Apply(&request.job())).await?;
        Ok(())
    }

    /// Whether the Job `name` has ended (`None` when there is no such Job): a cheap look that
    /// reads no Secret, for a controller that checks on a running Job often.
    pub async fn ended(&self, namespace: &str, name: &str, timeout: Duration) -> Result<Option<bool>, kube::Error> {
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
        Ok(Some(
            job_ending(&job, pod.as_ref()).is_some() || past_deadline(&job, timeout),
        ))
    }

    /// The execution, once the launched Job has ended: its log read through the API, redacted
    /// and kept, and the envelope. `None` while it runs (or before it is launched).
    pub async fn collect(&self, request: &JobRequest) -> Result<Option<Execution>, kube::Error> {
        let name = request.job_name();
        let ns = &request.namespace;
        let jobs: Api<Job> = Api::namespaced(self.client.clone(), ns);
        let pods: Api<Pod> = Api::namespaced(self.client.clone(), ns);
        let Some(job) = jobs.get_opt(&name).await? else {
            return Ok(None);
        };
        let pod = pods
            .list(&ListParams::default().labels(&format!("job-name={name}")))
            .await?
            .items
            .into_iter()
            .next();
        let (ending, class) = match job_ending(&job, pod.as_ref()) {
            Some(ended) => ended,
            None if past_deadline(&job, request.run.timeout) => (Ending::TimedOut, None),
            None => return Ok(None),
        };

        let raw_log = match &pod {
            Some(p)
                if matches!(ending, Ending::Exited(_) | Ending::TimedOut) && class != Some(ErrorClass::ImagePull) =>
            {
                let params = LogParams {
                    container: Some(BUILD_CONTAINER.into()),
                    limit_bytes: Some(8 * 1024 * 1024),
                    ..LogParams::default()
                };
                pods.logs(p.metadata.name.as_deref().unwrap_or_default(), &params)
                    .await
                    .unwrap_or_default()
            }
            _ => String::new(),
        };
        // The operator's own secrets too: a build must not get them out even by guessing.
        let secrets: Vec<String> = request
            .run
            .secrets
            .iter()
            .cloned()
            .chain(secret_values(std::env::vars()))
            .collect();
        let (log, redactions) = redact(&raw_log, &secrets);
        self.keep_log(request, &name, &log).await?;

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
                ErrorClass::ImagePull => (
                    "the executor image could not be pulled",
                    "check spec.executor.image: the name, the tag and the registry's pull secret",
                ),
                ErrorClass::Evicted => (
                    "the Pod was evicted from its node",
                    "give the executor more ephemeral storage or memory requests, then run again",
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
        let envelope = RunEnvelope {
            run_id: name.clone(),
            status,
            duration_ms: run_time(&job).unwrap_or_else(|| age(&job)).as_millis() as u64,
            exit_code,
            error_class,
            error_message,
            suggested_fix,
            warnings: Vec::new(),
            redactions_applied: redactions > 0,
            artifacts: Vec::new(),
            log_excerpt: Some(excerpt(&log)),
            environment_metadata: BTreeMap::from([("image".to_owned(), image), ("job".to_owned(), name)]),
        };
        Ok(Some(Execution { envelope, log }))
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

/// The Job executor bound to the resource that owns its Jobs: the shape the operator uses it in.
pub struct OwnedJobExecutor {
    pub executor: JobExecutor,
    pub namespace: String,
    pub owner_name: String,
    pub owner: OwnerReference,
}

impl super::Executor for OwnedJobExecutor {
    fn execute<'a>(&'a self, request: &'a super::RunRequest) -> super::ExecFuture<'a> {
        Box::pin(async move {
            let commit = request
                .revision
                .clone()
                .ok_or_else(|| "the Job executor runs an exact commit; resolve the revision first".to_owned())?;
            let job = JobRequest {
                name: format!(
                    "{}-c{}-{}",
                    self.owner_name,
                    request.cycle,
                    &commit[..8.min(commit.len())]
                ),
                owner_name: self.owner_name.clone(),
                owner: self.owner.clone(),
                namespace: self.namespace.clone(),
                commit,
                run: request.clone(),
                container: ContainerSettings::default(),
            };
            self.executor
                .execute(&job)
                .await
                .map_err(|e| format!("failed to run the Job: {e}"))
        })
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::heal_run::ProjectType;
    use crate::api::shared::GitSource;

    fn request(container: ContainerSettings) -> JobRequest {
        JobRequest {
            name: "calc-c1-0123abcd".into(),
            owner_name: "calc".into(),
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
            },
            container,
        }
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

    #[test]
    fn without_settings_the_build_container_has_the_default_limits() {
        let build = build(&request(ContainerSettings::default()).job());
        assert_eq!(build["resources"]["limits"], json!({"cpu": "2", "memory": "2Gi"}));
        assert_eq!(build["image"], "python:3.12-slim");
    }
}
