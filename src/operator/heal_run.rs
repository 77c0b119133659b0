//! The HealRun controller: the operator's world for the heal loop of `core::drive`.
//!
//! Each reconcile runs the loop from the status: the loop asks `core` for the next step, this
//! module carries it out (a Job, a healer call, a CodeFixDDS, a commit), and the loop records
//! the result and writes the status by server-side apply — one step at a time, so that a crash
//! between any two steps resumes from the status. Every effect is idempotent: Jobs are named by
//! the execution's key, a healer's answer is stored in an owned ConfigMap before the status
//! records it (a restarted operator reuses it instead of calling again), CodeFixDDS have
//! deterministic names, and commits are found again on the heal branch by their trailers.
//! The finalizer `kubeheal.dev/cleanup` removes a deleted run's clone from the operator's disk.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::api::{Api, Patch, PatchParams, PostParams};
use kube::runtime::controller::Action as Requeue;
use kube::runtime::finalizer::{self, Event as Finalizer};
use kube::{Resource, ResourceExt};
use serde::{Deserialize, Serialize};
use serde_json::json;
use thiserror::Error;
use tracing::{info, instrument, warn};

use super::Context;
use crate::api::code_fix_dds::{CodeFixDDS, CodeFixPhase};
use crate::api::heal_run::{HealRun, HealRunStatus, HealerCall, LogsRef, PatchStatus, ProjectType, WorkOrderStatus};
use crate::api::shared::{HealerSpec, SecretKeyRef, Verdict, heal_run_labels};
use crate::core::code_fix_dds;
use crate::core::drive::{Effects, Pause, Ready, drive};
use crate::core::format::{CYCLE_TRAILER, REVERT_TRAILER};
use crate::core::heal_run::{Input, Note, is_terminal, latest_observation, reason_name};
use crate::core::proposal::{self, Origin};
use crate::core::redact::{redact, secret_values};
use crate::core::step::{CommitOrder, ExecutionOrder, HealerQuestion, Run};
use crate::core::{incident, monitor, verify};
use crate::executor::job::{ContainerSettings, JobRequest, kept_log, log_config_map};
use crate::executor::{RunRequest, detect};
use crate::git::{GitError, Repo};
use crate::healer::Healer;
use crate::healer::cycle::{Workspace as HealerWorkspace, ask_for_fix, no_healer};
use crate::healer::factory::{self, Credentials};
use crate::parse::{MAX_PACKAGE_MANIFEST_BYTES, Workspace, truncate_bytes};

mod tool;

/// The field manager of the HealRun status and of what the controller applies.
pub const FIELD_MANAGER: &str = "kubeheal-healrun";
/// The finalizer that removes a deleted run's clone.
pub const CLEANUP_FINALIZER: &str = "kubeheal.dev/cleanup";
/// How often a running Job is looked at besides the watches of Jobs and Pods (a safety net for a
/// lost watch event, not the mechanism).
const JOB_RECHECK: Duration = Duration::from_secs(120);
/// When a run the cache has from before this process's last status write is looked at again,
/// if the watch event of that write has not woken it first.
const BEHIND_RECHECK: Duration = Duration::from_millis(500);
/// How often a pending approval is looked at besides the watch.
const APPROVAL_RECHECK: Duration = Duration::from_secs(300);
/// Most steps one reconcile takes before handing back to the queue.
const MAX_STEPS: usize = 32;

/// Errors of the HealRun controller.
#[derive(Debug, Error)]
pub enum Error {
    #[error("failed to talk to the API server: {0}")]
    Kube(#[from] kube::Error),
    #[error("failed to work with the repository: {0}")]
    Git(#[from] GitError),
    #[error("failed to read Secret {name}: {reason}")]
    Secret { name: String, reason: String },
    #[error("failed to find the patch of cycle {cycle}: {reason}")]
    Patch { cycle: u32, reason: String },
    #[error("failed to write the work order: {0}")]
    Proposal(String),
    #[error("failed to add or remove the finalizer: {0}")]
    Finalizer(#[source] Box<finalizer::Error<Error>>),
}

impl Error {
    /// The metric label and the Warning event's reason.
    pub fn category(&self) -> &'static str {
        match self {
            Error::Kube(_) => "ApiError",
            Error::Git(_) => "GitError",
            Error::Secret { .. } => "SecretError",
            Error::Patch { .. } => "PatchMissing",
            Error::Proposal(_) => "ProposalError",
            Error::Finalizer(inner) => match inner.as_ref() {
                finalizer::Error::ApplyFailed(e) | finalizer::Error::CleanupFailed(e) => e.category(),
                _ => "FinalizerError",
            },
        }
    }

    /// Whether waiting helps (the API server or the remote may come back), or only a change of
    /// the spec or of a Secret will.
    pub fn is_transient(&self) -> bool {
        match self {
            Error::Kube(_) => true,
            Error::Git(e) => e.is_transient(),
            Error::Finalizer(inner) => match inner.as_ref() {
                finalizer::Error::ApplyFailed(e) | finalizer::Error::CleanupFailed(e) => e.is_transient(),
                _ => true,
            },
            _ => false,
        }
    }
}

/// What a healer's answer is kept as, in the cycle's ConfigMap, before the status records it.
#[derive(Serialize, Deserialize)]
struct StoredAnswer {
    call: HealerCall,
    patch: Option<PatchStatus>,
}

/// One reconcile of one HealRun: the loop until it must wait, behind the cleanup finalizer.
#[instrument(skip_all, fields(name = %run.name_any(), namespace = run.namespace().unwrap_or_default()))]
pub async fn reconcile(run: Arc<HealRun>, ctx: Arc<Context>) -> Result<Requeue, Error> {
    let started = Instant::now();
    let namespace = run.namespace().unwrap_or_else(|| "default".into());
    if run.meta().deletion_timestamp.is_none()
        && ctx
            .written
            .is_behind(&run.uid().unwrap_or_default(), run.status.as_ref())
    {
        // The cache has the run from before this process's last status write: the watch event
        // of that write is on its way, and wakes the run (the requeue is a safety net).
        return Ok(Requeue::requeue(BEHIND_RECHECK));
    }
    let runs: Api<HealRun> = Api::namespaced(ctx.client.clone(), &namespace);
    let mut result = behind_finalizer(&runs, run.clone(), &ctx).await;
    let adding = !run.finalizers().iter().any(|f| f == CLEANUP_FINALIZER) && run.meta().deletion_timestamp.is_none();
    if adding {
        match &result {
            // kube's helper ends a reconcile once it has added the finalizer, leaving the rest to
            // the watch event of that patch: a second pass through the queue, behind every run
            // that arrived meanwhile (in a burst, all of them), before a new run's Job. The run
            // goes on at once instead, as the patch left it.
            Ok(_) => {
                let mut held = HealRun::clone(&run);
                held.finalizers_mut().push(CLEANUP_FINALIZER.into());
                result = behind_finalizer(&runs, Arc::new(held), &ctx).await;
            }
            // The patch tests the finalizers it extends: refused (422), the run's finalizers are
            // not those of the cached copy (another client changed them) or the run is being
            // deleted, when no finalizer may be added. The run as it is now, read once, goes on.
            Err(Error::Finalizer(error)) if is_stale_finalizers(error) => {
                result = match runs.get(&run.name_any()).await {
                    Ok(now) => behind_finalizer(&runs, Arc::new(now), &ctx).await,
                    Err(error) => Err(error.into()),
                };
            }
            Err(_) => {}
        }
    }
    ctx.metrics
        .reconciled("HealRun", started.elapsed(), result.as_ref().err().map(Error::category));
    if result.is_ok() {
        ctx.failures.clear(&failure_key(&run));
    }
    if let Err(error) = &result {
        warn!(%error, "reconcile failed");
        ClusterWorld::new(run, ctx.clone())
            .publish(&Note {
                warning: true,
                reason: error.category(),
                message: error.to_string(),
            })
            .await;
    }
    result
}

/// The heal loop, or the clone's removal once the run is deleted, behind the cleanup finalizer
/// (which is added first when the run has none).
async fn behind_finalizer(runs: &Api<HealRun>, run: Arc<HealRun>, ctx: &Arc<Context>) -> Result<Requeue, Error> {
    finalizer::finalizer(runs, CLEANUP_FINALIZER, run, |event| async {
        match event {
            Finalizer::Apply(run) => ClusterWorld::new(run, ctx.clone()).reconcile().await,
            Finalizer::Cleanup(run) => {
                ctx.written.forget(&run.uid().unwrap_or_default());
                ClusterWorld::new(run, ctx.clone()).remove_clone();
                Ok(Requeue::await_change())
            }
        }
    })
    .await
    .map_err(|e| match e {
        finalizer::Error::ApplyFailed(inner) | finalizer::Error::CleanupFailed(inner) => inner,
        other => Error::Finalizer(Box::new(other)),
    })
}

/// Whether adding the finalizer was refused because the run's finalizers were no longer those of
/// the copy the patch was made from (its `test` operation failed: 422).
fn is_stale_finalizers(error: &finalizer::Error<Error>) -> bool {
    matches!(error, finalizer::Error::AddFinalizer(kube::Error::Api(status)) if status.code == 422)
}

/// How long to wait after a failed reconcile: exponentially longer for each failure in a row of
/// this run (15 s, 30 s, 60 s … up to 10 min when waiting may help; 5 min, then up to 30 min when
/// only a change of a Secret or the spec will, which wakes the run anyway), with jitter so that
/// many runs failing on one outage do not come back together.
pub fn error_policy(run: Arc<HealRun>, error: &Error, ctx: Arc<Context>) -> Requeue {
    let failures = ctx.failures.record(&failure_key(&run));
    Requeue::requeue(jittered(backoff(failures, error.is_transient())))
}

/// The wait before the next try after `failures` failures in a row, before jitter.
fn backoff(failures: u32, transient: bool) -> Duration {
    let (base, cap): (u64, u64) = if transient { (15, 600) } else { (300, 1800) };
    Duration::from_secs((base << failures.saturating_sub(1).min(10)).min(cap))
}

/// How a run is known in the failure counts.
fn failure_key(run: &HealRun) -> String {
    format!("{}/{}", run.namespace().unwrap_or_default(), run.name_any())
}

/// `base` plus up to half of it again, chosen at random.
fn jittered(base: Duration) -> Duration {
    base + base.mul_f64(fastrand::f64() / 2.0)
}

/// The operator's world for one HealRun.
struct ClusterWorld {
    run: Arc<HealRun>,
    ctx: Arc<Context>,
    name: String,
    namespace: String,
    /// `namespace/name`: the run's id in commit trailers.
    id: String,
}

impl ClusterWorld {
    fn new(run: Arc<HealRun>, ctx: Arc<Context>) -> Self {
        let name = run.name_any();
        let namespace = run.namespace().unwrap_or_else(|| "default".into());
        ClusterWorld {
            id: format!("{namespace}/{name}"),
            run,
            ctx,
            name,
            namespace,
        }
    }

    async fn reconcile(mut self) -> Result<Requeue, Error> {
        let run = self.run.clone();
        let (id, name) = (self.id.clone(), self.name.clone());
        let heal = Run {
            id: &id,
            name: &name,
            spec: &run.spec,
        };
        let status = run.status.clone().unwrap_or_default();
        let (_, pause) = drive(&heal, status, &mut self, MAX_STEPS, std::future::pending()).await?;
        Ok(match pause {
            Pause::Done | Pause::Suspended => Requeue::await_change(),
            Pause::Wait(after) => Requeue::requeue(after),
            Pause::StepLimit => Requeue::requeue(Duration::from_secs(1)),
        })
    }

    fn api<K>(&self) -> Api<K>
    where
        K: Resource<Scope = k8s_openapi::NamespaceResourceScope, DynamicType = ()>,
    {
        Api::namespaced(self.ctx.client.clone(), &self.namespace)
    }

    async fn publish(&self, note: &Note) {
        self.ctx.publish(note, "Heal", &self.run.object_ref(&())).await;
    }

    /// The status as it is written: the loop's, with what only the cluster has (where the logs
    /// are kept, the generation it describes).
    fn as_written(&self, status: &HealRunStatus) -> HealRunStatus {
        let mut written = status.clone();
        written.logs_ref = latest_observation(status).map(|o| LogsRef {
            kind: "ConfigMap".into(),
            name: log_config_map(&o.envelope.run_id),
        });
        written.observed_generation = self.run.metadata.generation;
        written
    }

    async fn secret(&self, name: &str, key: &str) -> Result<Option<String>, Error> {
        let secret = self
            .api::<Secret>()
            .get_opt(name)
            .await
            .map_err(|e| Error::Secret {
                name: name.into(),
                reason: e.to_string(),
            })?
            .ok_or_else(|| Error::Secret {
                name: name.into(),
                reason: format!(
                    "it does not exist in namespace {}; create it or fix the secretRef",
                    self.namespace
                ),
            })?;
        Ok(secret
            .data
            .and_then(|d| d.get(key).cloned())
            .map(|v| String::from_utf8_lossy(&v.0).trim().to_owned()))
    }

    async fn secret_key(&self, key: Option<&SecretKeyRef>) -> Result<Option<String>, Error> {
        match key {
            Some(key) => self.secret(&key.name, &key.key).await,
            None => Ok(None),
        }
    }

    async fn source_token(&self) -> Result<Option<String>, Error> {
        match &self.run.spec.source.secret_ref {
            Some(r) => self.secret(&r.name, "token").await,
            None => Ok(None),
        }
    }

    /// Every secret value the build can see (the source token, Secrets named by `env` and
    /// `envFrom`), so that the executor redacts them from the log. A Secret that is missing is
    /// not an error here: the Pod then fails to start and says so.
    async fn build_secrets(&self) -> Result<Vec<String>, Error> {
        let mut values: Vec<String> = self.source_token().await?.into_iter().collect();
        let secrets = self.api::<Secret>();
        let executor = &self.run.spec.executor;
        for source in executor.env_from.iter().filter_map(|e| e.secret_ref.as_ref()) {
            if let Some(secret) = secrets.get_opt(&source.name).await? {
                values.extend(
                    secret
                        .data
                        .into_iter()
                        .flatten()
                        .map(|(_, v)| String::from_utf8_lossy(&v.0).into_owned()),
                );
            }
        }
        for key in executor
            .env
            .iter()
            .filter_map(|e| e.value_from.as_ref()?.secret_key_ref.as_ref())
        {
            if let Some(value) = secrets
                .get_opt(&key.name)
                .await?
                .and_then(|s| s.data)
                .and_then(|d| d.get(&key.key).cloned())
            {
                values.push(String::from_utf8_lossy(&value.0).into_owned());
            }
        }
        values.retain(|v| !v.trim().is_empty());
        Ok(values)
    }

    fn clone_dir(&self) -> std::path::PathBuf {
        self.ctx.settings.work_dir.join(&self.namespace).join(&self.name)
    }

    /// Removes the run's clone from the operator's disk.
    fn remove_clone(&self) {
        let dir = self.clone_dir();
        if dir.exists()
            && let Err(error) = std::fs::remove_dir_all(&dir)
        {
            warn!(%error, dir = %dir.display(), "failed to remove a run's clone");
        }
    }

    /// The operator's clone of the source, fetched.
    async fn repo(&self) -> Result<Repo, Error> {
        let mut repo = Repo::at(self.clone_dir()).with_token(self.source_token().await?);
        if let Some(author) = &self.run.spec.delivery.author {
            repo = repo.with_author(&author.name, &author.email);
        }
        repo.sync(&self.run.spec.source.url).await?;
        Ok(repo)
    }

    /// The clone, checked out at `commit`.
    async fn repo_at(&self, commit: &str) -> Result<Repo, Error> {
        let repo = self.repo().await?;
        repo.checkout(commit).await?;
        Ok(repo)
    }

    /// The source commit when the baseline Job needs nothing else: a project type is given and
    /// the revision is a branch or a tag, which `git ls-remote` resolves. The clone is then made
    /// when the Job has ended and its log is read, so a run's first Job does not wait for it.
    async fn resolve_without_clone(&self) -> Result<Option<(String, ProjectType)>, Error> {
        let requested = self.run.spec.executor.project_type;
        if requested == ProjectType::Auto {
            return Ok(None);
        }
        let repo = Repo::at(self.clone_dir()).with_token(self.source_token().await?);
        let source = &self.run.spec.source;
        let commit = repo.resolve_remote(&source.url, source.revision.as_deref()).await?;
        Ok(commit.map(|commit| (commit, requested)))
    }

    /// The source commit, and the project type there (for `auto`, from the files at that commit:
    /// the default image and command are chosen before the Job starts).
    async fn resolve_in(&self, repo: &Repo) -> Result<(String, ProjectType), Error> {
        let commit = repo.resolve(self.run.spec.source.revision.as_deref()).await?;
        let requested = self.run.spec.executor.project_type;
        if requested != ProjectType::Auto {
            return Ok((commit, requested));
        }
        repo.checkout(&commit).await?;
        Ok((commit, detect::detect(&repo.dir, requested)))
    }

    fn fix_map_name(&self, cycle: u32) -> String {
        format!("{}-fix-c{cycle}", truncate_bytes(&self.name, 200))
    }

    async fn stored_fix(&self, cycle: u32) -> Result<Option<BTreeMap<String, String>>, Error> {
        Ok(self
            .api::<ConfigMap>()
            .get_opt(&self.fix_map_name(cycle))
            .await?
            .and_then(|cm| cm.data))
    }

    async fn stored_patch(&self, cycle: u32) -> Result<String, Error> {
        self.stored_fix(cycle)
            .await?
            .and_then(|d| d.get("patch.diff").cloned())
            .ok_or_else(|| Error::Patch {
                cycle,
                reason: format!("ConfigMap {} has no patch.diff", self.fix_map_name(cycle)),
            })
    }

    /// The Job for `order`; the patches are read only to launch it (`with_patches`).
    async fn job_request(&self, order: &ExecutionOrder, with_patches: bool) -> Result<JobRequest, Error> {
        let spec = &self.run.spec;
        let mut patches = Vec::new();
        if with_patches {
            for cycle in &order.patches {
                patches.push(self.stored_patch(*cycle).await?);
            }
        }
        Ok(JobRequest {
            name: order.key.clone(),
            labels: self.labels(),
            owner: self.owner(),
            namespace: self.namespace.clone(),
            commit: order.commit.clone(),
            run: RunRequest {
                cycle: order.cycle,
                source: spec.source.clone(),
                revision: Some(order.commit.clone()),
                patches,
                project_type: order.project_type,
                image: spec.executor.image.clone(),
                command: spec.executor.command.clone(),
                timeout: Duration::from_secs(u64::from(spec.executor.timeout_seconds)),
                secrets: self.build_secrets().await?,
                verify: spec.verify.as_ref().map(|v| v.openapi.clone()),
            },
            container: ContainerSettings {
                env: spec.executor.env.clone(),
                env_from: spec.executor.env_from.clone(),
                resources: spec.executor.resources.clone(),
            },
            tool: None,
            probe_image: self.ctx.settings.probe_image.clone(),
        })
    }

    fn owner(&self) -> k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference {
        self.run
            .controller_owner_ref(&())
            .expect("a HealRun from the API server has a name and a uid")
    }

    /// The credentials `spec.healer`'s secretRefs name, and the operator's default service.
    async fn credentials(&self, spec: &HealerSpec) -> Result<Credentials, Error> {
        let settings = &self.ctx.settings;
        Ok(Credentials {
            openai_key: self
                .secret_key(spec.open_ai.as_ref().and_then(|ai| ai.secret_ref.as_ref()))
                .await?,
            code_healer_token: self
                .secret_key(spec.code_healer_api.as_ref().and_then(|api| api.secret_ref.as_ref()))
                .await?,
            default_code_healer: settings
                .healer_url
                .clone()
                .map(|url| (url, settings.healer_token.clone())),
        })
    }

    async fn apply_owned_config_map(&self, name: &str, data: BTreeMap<String, String>) -> Result<(), Error> {
        let cm = json!({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "labels": self.labels(),
                         "ownerReferences": [self.owner()]},
            "data": data,
        });
        self.api::<ConfigMap>()
            .patch(name, &PatchParams::apply(FIELD_MANAGER).force(), &Patch::Apply(&cm))
            .await?;
        Ok(())
    }

    fn labels(&self) -> BTreeMap<String, String> {
        heal_run_labels(&self.name)
    }

    fn origin<'a>(&'a self, status: &'a HealRunStatus) -> Origin<'a> {
        Origin {
            name: &self.name,
            spec: &self.run.spec,
            status,
            now: k8s_openapi::jiff::Timestamp::now(),
        }
    }

    /// Creates `cfd` owned by the run; one that exists already (a retry) is kept as it is.
    async fn create_work_order(&self, mut cfd: CodeFixDDS) -> Result<String, Error> {
        let name = cfd.metadata.name.clone().unwrap_or_default();
        // The run's own labels go on (a sharded operator's selector matches its orders too).
        let mut labels = self.run.labels().clone();
        labels.extend(self.labels());
        cfd.metadata.labels = Some(labels);
        cfd.metadata.owner_references = Some(vec![self.owner()]);
        match self.api::<CodeFixDDS>().create(&PostParams::default(), &cfd).await {
            Ok(_) => Ok(name),
            Err(kube::Error::Api(e)) if e.code == 409 => Ok(name),
            Err(e) => Err(e.into()),
        }
    }

    /// The work order the run executes, checked against the CodeFixDDS itself: it must exist,
    /// be approved (the API server checked who may approve), and be judged valid by the
    /// CodeFixDDS controller. `Err` says why the run may not execute it.
    async fn verified_work_order(&self) -> Result<Result<Option<WorkOrderStatus>, String>, Error> {
        let Some(name) = &self.run.spec.work_order else {
            return Ok(Ok(None));
        };
        let Some(order) = self.api::<CodeFixDDS>().get_opt(name).await? else {
            return Ok(Err(format!(
                "spec.workOrder names CodeFixDDS {name}, which does not exist in namespace {}",
                self.namespace
            )));
        };
        let approval = order.spec.approval.as_ref().filter(|d| d.decision == Verdict::Approved);
        let phase = order.status.as_ref().and_then(|s| s.phase);
        match (approval, phase) {
            (Some(approval), Some(CodeFixPhase::Approved | CodeFixPhase::Executing)) => Ok(Ok(Some(WorkOrderStatus {
                name: name.clone(),
                id: order.spec.id.clone(),
                approved_by: approval.approved_by.clone(),
            }))),
            (None, _) => Ok(Err(format!(
                "CodeFixDDS {name} is not approved: a run executes only an approved work order"
            ))),
            (Some(_), phase) => Ok(Err(format!(
                "CodeFixDDS {name} is approved but in phase {}: only a valid order is executed (see its status.validation)",
                phase.map(|p| format!("{p:?}")).unwrap_or_else(|| "none yet".into())
            ))),
        }
    }

    /// The healer's task when the run executes a work order, else empty.
    async fn work_order_task(&self) -> Result<String, Error> {
        let Some(name) = &self.run.spec.work_order else {
            return Ok(String::new());
        };
        Ok(self
            .api::<CodeFixDDS>()
            .get_opt(name)
            .await?
            .map(|order| code_fix_dds::task(&order.spec))
            .unwrap_or_default())
    }

    /// Makes one commit on the heal branch with `make` (given the clone), pushes it, and returns
    /// it with the branch's diff stat against the source commit — or adopts the commit an
    /// attempt that crashed already made, found by `trailer: cycle`.
    async fn on_heal_branch(
        &self,
        order: &CommitOrder,
        trailer: &str,
        make: impl AsyncFnOnce(&Repo) -> Result<String, Error>,
    ) -> Result<(String, String), Error> {
        let repo = self.repo().await?;
        let push = self.run.spec.delivery.push;
        let existing = repo
            .commit_for(&remote_ref(&order.branch, push), &self.id, trailer, order.cycle)
            .await;
        let commit = match existing {
            Some(commit) => commit,
            None => {
                let commit = make(&repo).await?;
                if push {
                    repo.push(&order.branch).await?;
                }
                commit
            }
        };
        let diff_stat = repo
            .git(&["diff", "--shortstat", &format!("{}..{commit}", order.source)])
            .await?;
        Ok((commit, diff_stat))
    }
}

impl Effects for ClusterWorld {
    type Error = Error;

    /// The commit to heal; a source that can never resolve (refused URL, a repository or
    /// revision that does not exist, refused credentials) ends the run instead of retrying.
    async fn resolve_source(&mut self) -> Result<Input, Error> {
        let source = &self.run.spec.source;
        if let Some(message) = self.ctx.settings.url_policy.refuse_source(&source.url) {
            return Ok(Input::SourceUnavailable {
                message: redact(&message, &[]).0,
            });
        }
        let resolved = match self.resolve_without_clone().await {
            Ok(Some(found)) => Ok(found),
            Ok(None) => match self.repo().await {
                Ok(repo) => self.resolve_in(&repo).await,
                Err(error) => Err(error),
            },
            Err(error) => Err(error),
        };
        let work_order = match self.verified_work_order().await? {
            Ok(order) => order,
            Err(message) => return Ok(Input::SourceUnavailable { message }),
        };
        match resolved {
            Ok((commit, project_type)) => Ok(Input::SourceResolved {
                commit,
                project_type,
                work_order,
            }),
            Err(Error::Git(error)) if !error.is_transient() => Ok(Input::SourceUnavailable {
                message: redact(
                    &format!(
                        "the source cannot be used: {error}; fix spec.source (url, revision or secretRef) and create the run again"
                    ),
                    &[],
                )
                .0,
            }),
            Err(error) => Err(error),
        }
    }

    /// Launches the Job once; while it runs, a look at it reads nothing else (no Secret, no
    /// patch); once it has ended, its log is read, redacted, kept and parsed.
    async fn execute(&mut self, order: &ExecutionOrder, status: &HealRunStatus) -> Result<Ready<Input>, Error> {
        let timeout = Duration::from_secs(u64::from(self.run.spec.executor.timeout_seconds));
        match self.ctx.jobs.ended(&self.namespace, &order.key, timeout).await? {
            None => {
                let request = self.job_request(order, true).await?;
                self.ctx.jobs.launch(&request).await?;
                return Ok(Ready::Later(JOB_RECHECK));
            }
            Some(false) => return Ok(Ready::Later(JOB_RECHECK)),
            Some(true) => {}
        }
        let request = self.job_request(order, false).await?;
        let Some(execution) = self.ctx.jobs.collect(&request).await? else {
            return Ok(Ready::Later(JOB_RECHECK));
        };
        let repo = self.repo_at(&crate::core::step::head(status)).await?;
        let files = repo.tracked_files().await;
        // The packages' manifests name them as monorepo runners do (read inside the clone only).
        let tree = repo.files().ok();
        let workspace = Workspace::new("")
            .with_files(files.clone())
            .with_package_manifests(|path| tree.as_ref()?.read(path, MAX_PACKAGE_MANIFEST_BYTES).ok());
        let (mut observation, outcome) = monitor::judge_log(&execution.envelope, &execution.log, &workspace);
        let outcome = verify::observe(
            &mut observation,
            outcome,
            self.run.spec.verify.as_ref(),
            &execution.endpoint_calls,
            &execution.service_output,
            &files,
        );
        incident::observe(&mut observation, order.cycle, self.run.spec.incident.as_ref(), &files);
        Ok(Ready::Now(Input::Executed {
            cycle: order.cycle,
            observation,
            outcome,
        }))
    }

    async fn ask_healers(&mut self, question: &HealerQuestion, status: &HealRunStatus) -> Result<Ready<Input>, Error> {
        let (cycle, timeout_seconds) = (question.cycle, question.timeout_seconds);
        // An answer stored before a crash is used as it is: the healer is not asked twice.
        if let Some(answer) = self
            .stored_fix(cycle)
            .await?
            .and_then(|d| d.get("answer.json").cloned())
            .and_then(|a| serde_json::from_str::<StoredAnswer>(&a).ok())
        {
            return Ok(Ready::Now(Input::HealerAnswered {
                cycle,
                call: answer.call,
                patch: answer.patch,
            }));
        }
        let spec = self.run.spec.healer.clone().unwrap_or_default();
        let policy = self.ctx.settings.url_policy;
        let healers: Result<Vec<Box<dyn Healer>>, String> = match &spec.tool {
            // A tool runs as a Job: its answer is ready once the Job has ended.
            Some(tool) => match self.run_tool(question, &tool.name).await? {
                Ready::Later(after) => return Ok(Ready::Later(after)),
                Ready::Now(answer) => Ok(vec![Box::new(answer)]),
            },
            None => match factory::service_urls(&spec).find_map(|url| policy.refuse_healer(url)) {
                Some(refusal) => Err(refusal),
                None => factory::build(&question.healers, &spec, &self.credentials(&spec).await?),
            },
        };
        let answer = match healers {
            // A healer the spec names wrongly costs the cycle and says why, like one that is down.
            Err(reason) => no_healer(reason, timeout_seconds),
            Ok(healers) => {
                let repo = self.repo_at(&question.head).await?;
                let files = repo.tracked_files().await;
                let log = match &question.log_key {
                    Some(key) => kept_log(self.ctx.client.clone(), &self.namespace, key)
                        .await?
                        .unwrap_or_default(),
                    None => String::new(),
                };
                let tree = repo.files().map_err(GitError::from)?;
                let task = self.work_order_task().await?;
                // What the build could see, and the operator's own secrets, never reach the healer.
                let mut secrets = self.build_secrets().await?;
                secrets.extend(secret_values(std::env::vars()));
                let workspace = HealerWorkspace {
                    project: &self.name,
                    files: &files,
                    log: &log,
                    // A Job's log joins stdout and stderr: the log stands for both.
                    stderr: "",
                    task: &task,
                    tree: &tree,
                    secrets: &secrets,
                };
                let mut answer = ask_for_fix(&healers, &self.run.spec, status, cycle, timeout_seconds, workspace).await;
                if let Some(tool) = &spec.tool {
                    answer.call.healer = tool.name.clone();
                }
                answer
            }
        };
        self.ctx.metrics.healer_called(&answer.call.healer, answer.call.outcome);
        let stored = serde_json::to_string(&StoredAnswer {
            call: answer.call.clone(),
            patch: answer.patch.clone(),
        })
        .expect("an answer serialises");
        self.apply_owned_config_map(
            &self.fix_map_name(cycle),
            BTreeMap::from([
                ("answer.json".to_owned(), stored),
                ("patch.diff".to_owned(), answer.diff),
            ]),
        )
        .await?;
        Ok(Ready::Now(Input::HealerAnswered {
            cycle,
            call: answer.call,
            patch: answer.patch,
        }))
    }

    async fn request_approval(&mut self, cycle: u32, status: &HealRunStatus) -> Result<Input, Error> {
        let diff = self.stored_patch(cycle).await?;
        let cfd = proposal::approval_request(&self.origin(status), cycle, &diff).map_err(Error::Proposal)?;
        let name = self.create_work_order(cfd).await?;
        Ok(Input::ApprovalRequested { cycle, name })
    }

    /// A rejection counts at once; an approval only once the CodeFixDDS controller has judged
    /// the order valid and in time (an invalid or expired order is never executed).
    async fn await_approval(&mut self, cycle: u32, name: &str) -> Result<Ready<Input>, Error> {
        let Some(order) = self.api::<CodeFixDDS>().get_opt(name).await? else {
            return Ok(Ready::Later(APPROVAL_RECHECK));
        };
        let judged = order
            .status
            .as_ref()
            .filter(|s| s.observed_generation == order.metadata.generation)
            .and_then(|s| s.phase);
        Ok(match (order.spec.approval, judged) {
            (Some(decision), _) if decision.decision == Verdict::Rejected => {
                Ready::Now(Input::Decided { cycle, decision })
            }
            (Some(decision), Some(CodeFixPhase::Approved | CodeFixPhase::Executing | CodeFixPhase::Executed)) => {
                Ready::Now(Input::Decided { cycle, decision })
            }
            // Expired: the decision came too late; the run stops as if it were rejected.
            (Some(mut decision), Some(CodeFixPhase::Expired)) => {
                decision.decision = Verdict::Rejected;
                decision.reason = Some(format!("CodeFixDDS {name} expired before it was decided"));
                Ready::Now(Input::Decided { cycle, decision })
            }
            _ => Ready::Later(APPROVAL_RECHECK),
        })
    }

    async fn commit(&mut self, order: &CommitOrder) -> Result<Input, Error> {
        let diff = self.stored_patch(order.cycle).await?;
        let committed = self
            .on_heal_branch(order, CYCLE_TRAILER, async |repo| {
                Ok(repo
                    .commit_patch(&order.branch, &order.tip, &diff, &order.message)
                    .await?)
            })
            .await;
        Ok(match committed {
            Ok((commit, diff_stat)) => Input::Committed {
                cycle: order.cycle,
                commit,
                branch: order.branch.clone(),
                diff_stat,
            },
            Err(Error::Git(error)) if error.is_patch_refused() => Input::CommitFailed {
                cycle: order.cycle,
                reason: error.to_string(),
            },
            Err(error) => return Err(error),
        })
    }

    async fn revert(&mut self, order: &CommitOrder, target: &str) -> Result<Input, Error> {
        let (commit, diff_stat) = self
            .on_heal_branch(order, REVERT_TRAILER, async |repo| {
                Ok(repo
                    .revert_on(&order.branch, &order.tip, target, &order.message)
                    .await?)
            })
            .await?;
        Ok(Input::Reverted {
            cycle: order.cycle,
            commit,
            diff_stat,
        })
    }

    async fn propose_fix(&mut self, status: &HealRunStatus) -> Result<Input, Error> {
        let cfd = proposal::fix_proposal(&self.origin(status))
            .ok_or_else(|| Error::Proposal("the last execution names nothing to fix".into()))?;
        let name = self.create_work_order(cfd).await?;
        Ok(Input::FixProposed { name })
    }

    /// Writes the status by server-side apply when it changed, then publishes the notes.
    async fn persist(&mut self, previous: &HealRunStatus, status: &HealRunStatus, notes: &[Note]) -> Result<(), Error> {
        let written = self.as_written(status);
        if written != self.as_written(previous) || self.run.status.is_none() {
            let patch = json!({
                "apiVersion": "kubeheal.dev/v1alpha1",
                "kind": "HealRun",
                "status": written,
            });
            let stored = self
                .api::<HealRun>()
                .patch_status(
                    &self.name,
                    &PatchParams::apply(FIELD_MANAGER).force(),
                    &Patch::Apply(&patch),
                )
                .await;
            let uid = self.run.uid().unwrap_or_default();
            let stored = stored.inspect_err(|_| self.ctx.written.forget(&uid))?;
            self.ctx.written.record(&uid, stored.status.as_ref());
        }
        if let Some(reason) = status.reason.filter(|_| is_terminal(status) && !is_terminal(previous)) {
            self.ctx.metrics.finished(reason_name(reason));
        }
        for note in notes {
            info!(reason = note.reason, "{}", note.message);
            self.publish(note).await;
        }
        Ok(())
    }

    /// A finished run's clone is not needed once its branch is pushed; without a push the clone
    /// holds the heal branch, so it stays (until the run is deleted).
    async fn finished(&mut self) -> Result<(), Error> {
        if self.run.spec.delivery.push {
            self.remove_clone();
        }
        Ok(())
    }
}

/// Where a commit made before a crash would be: the remote branch when pushing, else the
/// clone's own branch.
fn remote_ref(branch: &str, push: bool) -> String {
    if push {
        format!("refs/remotes/origin/{branch}")
    } else {
        format!("refs/heads/{branch}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_failure_in_a_row_doubles_the_wait_up_to_a_cap() {
        let waits: Vec<u64> = (1..=8).map(|n| backoff(n, true).as_secs()).collect();
        assert_eq!(waits, [15, 30, 60, 120, 240, 480, 600, 600]);
        assert_eq!(backoff(1, false).as_secs(), 300);
        assert_eq!(backoff(40, false).as_secs(), 1800);
        for _ in 0..100 {
            let wait = jittered(Duration::from_secs(100));
            assert!(
                wait >= Duration::from_secs(100) && wait <= Duration::from_secs(150),
                "{wait:?}"
            );
        }
    }

    #[test]
    fn a_success_starts_the_count_over() {
        let failures = super::super::Failures::default();
        assert_eq!(
            (failures.record("a/x"), failures.record("a/x"), failures.record("b/y")),
            (1, 2, 1)
        );
        failures.clear("a/x");
        assert_eq!(failures.record("a/x"), 1);
    }
}
