//! The HealRun controller: the operator driver of the state machine in `core::heal_run`.
//!
//! Each reconcile reads the status, asks `next_action` what to do, does it (a Job, a healer
//! call, a CodeFixDDS, a commit), feeds the result to `apply`, publishes the notes as Events and
//! writes the status by server-side apply — one step at a time, so that a crash between any two
//! steps resumes from the status. Every effect is idempotent: Jobs and CodeFixDDS have
//! deterministic names, a healer's answer is stored in an owned ConfigMap before the status
//! records it (a restarted operator reuses it instead of calling again), and commits are found
//! again on the heal branch by their trailers.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use k8s_openapi::jiff::Timestamp;
use kube::api::{Api, Patch, PatchParams, PostParams};
use kube::runtime::controller::Action as Requeue;
use kube::runtime::events::{Event, EventType};
use kube::{Resource, ResourceExt};
use serde::{Deserialize, Serialize};
use serde_json::json;
use thiserror::Error;
use tracing::{info, instrument, warn};

use super::Context;
use crate::api::code_fix_dds::CodeFixDDS;
use crate::api::heal_run::{HealRun, HealRunStatus, HealerCall, HealerOutcome, LogsRef, PatchStatus, ProjectType};
use crate::api::shared::{Decision, SecretKeyRef};
use crate::core::format::{CYCLE_TRAILER, REVERT_TRAILER};
use crate::core::format::{commit_message, revert_message};
use crate::core::heal_run::{
    Action, Input, Note, applied_cycles, apply, is_terminal, latest_observation, next_action, reason_name,
};
use crate::core::monitor;
use crate::core::proposal::{self, Origin};
use crate::core::redact::{redact, secret_values};
use crate::executor::job::{ContainerSettings, JobRequest, kept_log};
use crate::executor::{RunRequest, detect};
use crate::git::{GitError, Repo};
use crate::healer::Healer;
use crate::healer::builtin::Builtin;
use crate::healer::code_healer_api::CodeHealerApi;
use crate::healer::cycle::{Workspace as HealerWorkspace, ask_for_fix};
use crate::healer::openai::OpenAi;
use crate::parse::{Workspace, parse, truncate_bytes};

/// The field manager of the HealRun status and of what the controller applies.
pub const FIELD_MANAGER: &str = "kubeheal-healrun";
/// How often a running Job is looked at besides the watch (a safety net, not the mechanism).
const JOB_RECHECK: Duration = Duration::from_secs(10);
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
    #[error("failed to set up the healer: {0}")]
    Healer(String),
    #[error("failed to find the patch of cycle {cycle}: {reason}")]
    Patch { cycle: u32, reason: String },
    #[error("failed to write the work order: {0}")]
    Proposal(String),
}

impl Error {
    /// The metric label and the Warning event's reason.
    pub fn category(&self) -> &'static str {
        match self {
            Error::Kube(_) => "ApiError",
            Error::Git(_) => "GitError",
            Error::Secret { .. } => "SecretError",
            Error::Healer(_) => "HealerSetupError",
            Error::Patch { .. } => "PatchMissing",
            Error::Proposal(_) => "ProposalError",
        }
    }

    /// Whether waiting helps (the API server or the remote may come back), or only a change of
    /// the spec or of a Secret will.
    pub fn is_transient(&self) -> bool {
        match self {
            Error::Kube(_) => true,
            Error::Git(e) => e.is_transient(),
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

/// One reconcile of one HealRun.
#[instrument(skip_all, fields(name = %run.name_any(), namespace = run.namespace().unwrap_or_default()))]
pub async fn reconcile(run: Arc<HealRun>, ctx: Arc<Context>) -> Result<Requeue, Error> {
    let started = Instant::now();
    let driver = Driver::new(run.clone(), ctx.clone());
    let result = driver.drive().await;
    ctx.metrics
        .reconciled("HealRun", started.elapsed(), result.as_ref().err().map(Error::category));
    if let Err(error) = &result {
        warn!(%error, "reconcile failed");
        driver
            .publish(&Note {
                warning: true,
                reason: error.category(),
                message: error.to_string(),
            })
            .await;
    }
    result
}

/// How long to wait after a failed reconcile: soon (with jitter, so that many runs failing on
/// one outage do not come back together) when waiting may help; else a while, since only a
/// change of a Secret or the spec (which wakes the run anyway) will.
pub fn error_policy(_run: Arc<HealRun>, error: &Error, _ctx: Arc<Context>) -> Requeue {
    let base = if error.is_transient() { 15 } else { 300 };
    Requeue::requeue(jittered(Duration::from_secs(base)))
}

/// `base` plus up to half of it again, chosen at random.
fn jittered(base: Duration) -> Duration {
    use std::hash::{BuildHasher, RandomState};
    let random = RandomState::new().hash_one(Instant::now());
    base + base.mul_f64((random % 1000) as f64 / 2000.0)
}

struct Driver {
    run: Arc<HealRun>,
    ctx: Arc<Context>,
    name: String,
    namespace: String,
}

impl Driver {
    fn new(run: Arc<HealRun>, ctx: Arc<Context>) -> Self {
        let name = run.name_any();
        let namespace = run.namespace().unwrap_or_else(|| "default".into());
        Driver {
            run,
            ctx,
            name,
            namespace,
        }
    }

    fn api<K>(&self) -> Api<K>
    where
        K: Resource<Scope = k8s_openapi::NamespaceResourceScope, DynamicType = ()>,
    {
        Api::namespaced(self.ctx.client.clone(), &self.namespace)
    }

    async fn drive(&self) -> Result<Requeue, Error> {
        let spec = &self.run.spec;
        let mut status = self.run.status.clone().unwrap_or_default();
        status = self.record(&status, Input::Tick).await?;
        for _ in 0..MAX_STEPS {
            let action = next_action(spec, &status);
            let input = match action {
                Action::Suspended => return Ok(Requeue::await_change()),
                Action::Done => {
                    self.forget_clone();
                    return Ok(Requeue::await_change());
                }
                Action::ResolveSource => self.resolve_source().await?,
                Action::Execute { cycle } => match self.execute(&status, cycle).await? {
                    Some(input) => input,
                    None => return Ok(Requeue::requeue(JOB_RECHECK)),
                },
                Action::AskHealer { cycle, timeout_seconds } => {
                    self.ask_healer(&status, cycle, timeout_seconds).await?
                }
                Action::RequestApproval { cycle } => self.request_approval(&status, cycle).await?,
                Action::AwaitApproval { cycle, name } => match self.decision(&name).await? {
                    Some(decision) => Input::Decided { cycle, decision },
                    None => return Ok(Requeue::requeue(APPROVAL_RECHECK)),
                },
                Action::Commit { cycle } => self.commit(&status, cycle).await?,
                Action::Revert { cycle } => self.revert(&status, cycle).await?,
                Action::ProposeFix => self.propose_fix(&status).await?,
            };
            status = self.record(&status, input).await?;
        }
        Ok(Requeue::requeue(Duration::from_secs(1)))
    }

    /// Applies `input`, publishes its notes, and writes the status when it changed.
    async fn record(&self, status: &HealRunStatus, input: Input) -> Result<HealRunStatus, Error> {
        let executed_job = match &input {
            Input::Executed { observation, .. } => Some(observation.envelope.run_id.clone()),
            _ => None,
        };
        let (mut next, notes) = apply(&self.run.spec, status, input, Timestamp::now());
        if let Some(job) = executed_job {
            next.logs_ref = Some(LogsRef {
                kind: "ConfigMap".into(),
                name: format!("{job}-log"),
            });
        }
        next.observed_generation = self.run.metadata.generation;
        if &next != status || self.run.status.is_none() {
            let patch = json!({
                "apiVersion": "kubeheal.dev/v1alpha1",
                "kind": "HealRun",
                "status": next,
            });
            self.api::<HealRun>()
                .patch_status(
                    &self.name,
                    &PatchParams::apply(FIELD_MANAGER).force(),
                    &Patch::Apply(&patch),
                )
                .await?;
        }
        if let Some(reason) = next.reason.filter(|_| is_terminal(&next) && !is_terminal(status)) {
            self.ctx.metrics.finished(reason_name(reason));
        }
        for note in &notes {
            info!(reason = note.reason, "{}", note.message);
            self.publish(note).await;
        }
        Ok(next)
    }

    async fn publish(&self, note: &Note) {
        let event = Event {
            type_: if note.warning {
                EventType::Warning
            } else {
                EventType::Normal
            },
            reason: note.reason.to_owned(),
            // Messages carry git's and the healer's words, which may quote a URL with a password
            // in it: redacted here, the one door every Event goes through.
            note: Some(truncate_bytes(&redact(&note.message, &[]).0, 1024).to_owned()),
            action: "Heal".into(),
            secondary: None,
        };
        if let Err(error) = self.ctx.recorder.publish(&event, &self.run.object_ref(&())).await {
            warn!(%error, "failed to publish an event");
        }
    }

    fn branch(&self) -> String {
        self.run
            .spec
            .delivery
            .branch
            .clone()
            .unwrap_or_else(|| format!("kubeheal/{}", self.name))
    }

    fn run_id(&self) -> String {
        format!("{}/{}", self.namespace, self.name)
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

    /// A finished run's clone is not needed once its branch is pushed; without a push the clone
    /// holds the heal branch, so it stays.
    fn forget_clone(&self) {
        let dir = self.clone_dir();
        if self.run.spec.delivery.push
            && dir.exists()
            && let Err(error) = std::fs::remove_dir_all(&dir)
        {
            warn!(%error, dir = %dir.display(), "failed to remove a finished run's clone");
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

    /// The clone, checked out where the heal branch is: the last commit, or the source commit.
    async fn repo_at_head(&self, status: &HealRunStatus) -> Result<Repo, Error> {
        let repo = self.repo().await?;
        let head = status
            .result
            .as_ref()
            .and_then(|r| r.commit.clone())
            .or_else(|| status.source_commit.clone())
            .unwrap_or_default();
        repo.checkout(&head).await?;
        Ok(repo)
    }

    /// The commit to heal; a source that can never resolve (refused URL, a repository or
    /// revision that does not exist, refused credentials) ends the run instead of retrying.
    async fn resolve_source(&self) -> Result<Input, Error> {
        let source = &self.run.spec.source;
        if let Some(message) = self.ctx.settings.url_policy.refuse_source(&source.url) {
            return Ok(Input::SourceUnavailable {
                message: redact(&message, &[]).0,
            });
        }
        let resolved = match self.repo().await {
            Ok(repo) => self.resolve_in(&repo).await,
            Err(error) => Err(error),
        };
        match resolved {
            Ok((commit, project_type)) => Ok(Input::SourceResolved { commit, project_type }),
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

    async fn execute(&self, status: &HealRunStatus, cycle: u32) -> Result<Option<Input>, Error> {
        let spec = &self.run.spec;
        let mut patches = Vec::new();
        for applied in applied_cycles(status, cycle) {
            patches.push(self.stored_patch(applied).await?);
        }
        let commit = status.source_commit.clone().unwrap_or_default();
        let secrets = self.build_secrets().await?;
        let request = JobRequest {
            owner_name: self.name.clone(),
            owner: self
                .run
                .controller_owner_ref(&())
                .expect("a HealRun has an owner reference"),
            namespace: self.namespace.clone(),
            commit: commit.clone(),
            run: RunRequest {
                cycle,
                source: spec.source.clone(),
                revision: Some(commit),
                patches,
                project_type: status.project_type.unwrap_or(spec.executor.project_type),
                image: spec.executor.image.clone(),
                command: spec.executor.command.clone(),
                timeout: Duration::from_secs(u64::from(spec.executor.timeout_seconds)),
                secrets,
            },
            container: ContainerSettings {
                env: spec.executor.env.clone(),
                env_from: spec.executor.env_from.clone(),
                resources: spec.executor.resources.clone(),
            },
        };
        self.ctx.jobs.launch(&request).await?;
        let Some(execution) = self.ctx.jobs.collect(&request).await? else {
            return Ok(None);
        };
        let repo = self.repo_at_head(status).await?;
        let files = repo.tracked_files().await;
        let parsed = parse(&execution.log, &Workspace::new("").with_files(files));
        let (observation, outcome) = monitor::judge(&execution.envelope, &parsed);
        Ok(Some(Input::Executed {
            cycle,
            observation,
            outcome,
        }))
    }

    async fn secret_key(&self, key: Option<&SecretKeyRef>) -> Result<Option<String>, Error> {
        match key {
            Some(key) => self.secret(&key.name, &key.key).await,
            None => Ok(None),
        }
    }

    /// The healer `spec.healer` names; without one, the operator's Code Healer API
    /// (`CODE_HEALER_URL`) or else the built-in fixers.
    async fn healer(&self) -> Result<Box<dyn Healer>, Error> {
        let settings = &self.ctx.settings;
        let spec = self.run.spec.healer.clone().unwrap_or_default();
        let policy = settings.url_policy;
        for url in [
            spec.open_ai.as_ref().map(|ai| ai.base_url.as_str()),
            spec.code_healer_api.as_ref().and_then(|api| api.url.as_deref()),
        ]
        .into_iter()
        .flatten()
        {
            if let Some(refusal) = policy.refuse_healer(url) {
                return Err(Error::Healer(refusal));
            }
        }
        if let Some(ai) = &spec.open_ai {
            let key = self.secret_key(ai.secret_ref.as_ref()).await?;
            let healer = OpenAi::new(&ai.base_url, &ai.model, key, ai.max_tokens).map_err(Error::Healer)?;
            return Ok(Box::new(healer));
        }
        if spec.builtin.is_some() || (spec.code_healer_api.is_none() && settings.healer_url.is_none()) {
            return Ok(Box::new(Builtin));
        }
        let api = spec.code_healer_api.unwrap_or_default();
        let url = api.url.or_else(|| settings.healer_url.clone()).ok_or_else(|| {
            Error::Healer("healer.codeHealerApi has no url and the operator has no CODE_HEALER_URL".into())
        })?;
        let token = match &api.secret_ref {
            Some(key) => self.secret_key(Some(key)).await?,
            None => settings.healer_token.clone(),
        };
        Ok(Box::new(CodeHealerApi::new(url, token).map_err(Error::Healer)?))
    }

    async fn ask_healer(&self, status: &HealRunStatus, cycle: u32, timeout_seconds: u32) -> Result<Input, Error> {
        // An answer stored before a crash is used as it is: the healer is not asked twice.
        if let Some(answer) = self
            .stored_fix(cycle)
            .await?
            .and_then(|d| d.get("answer.json").cloned())
            .and_then(|a| serde_json::from_str::<StoredAnswer>(&a).ok())
        {
            return Ok(Input::HealerAnswered {
                cycle,
                call: answer.call,
                patch: answer.patch,
            });
        }
        let healer = match self.healer().await {
            Ok(healer) => healer,
            // A healer the spec names wrongly costs the cycle and says why, like one that is down.
            Err(Error::Healer(reason)) => {
                return Ok(Input::HealerAnswered {
                    cycle,
                    call: HealerCall {
                        healer: "none".into(),
                        outcome: HealerOutcome::Error,
                        reason: Some(reason),
                        duration_ms: 0,
                        timeout_seconds,
                        changes_summary: None,
                    },
                    patch: None,
                });
            }
            Err(error) => return Err(error),
        };
        let repo = self.repo_at_head(status).await?;
        let files = repo.tracked_files().await;
        let job = latest_observation(status)
            .map(|o| o.envelope.run_id.clone())
            .unwrap_or_default();
        let log = kept_log(self.ctx.client.clone(), &self.namespace, &job)
            .await?
            .unwrap_or_default();
        let tree = repo.files().map_err(GitError::from)?;
        // What the build could see, and the operator's own secrets, never reach the healer.
        let mut secrets = self.build_secrets().await?;
        secrets.extend(secret_values(std::env::vars()));
        let workspace = HealerWorkspace {
            project: &self.name,
            files: &files,
            log: &log,
            tree: &tree,
            secrets: &secrets,
        };
        let answer = ask_for_fix(
            healer.as_ref(),
            &self.run.spec,
            status,
            cycle,
            timeout_seconds,
            workspace,
        )
        .await;
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
        Ok(Input::HealerAnswered {
            cycle,
            call: answer.call,
            patch: answer.patch,
        })
    }

    async fn apply_owned_config_map(&self, name: &str, data: BTreeMap<String, String>) -> Result<(), Error> {
        let cm = json!({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "labels": self.labels(),
                         "ownerReferences": [self.run.controller_owner_ref(&())]},
            "data": data,
        });
        self.api::<ConfigMap>()
            .patch(name, &PatchParams::apply(FIELD_MANAGER).force(), &Patch::Apply(&cm))
            .await?;
        Ok(())
    }

    fn labels(&self) -> BTreeMap<String, String> {
        BTreeMap::from([
            ("app.kubernetes.io/managed-by".to_owned(), "kubeheal".to_owned()),
            ("kubeheal.dev/healrun".to_owned(), self.name.clone()),
        ])
    }

    fn origin<'a>(&'a self, status: &'a HealRunStatus) -> Origin<'a> {
        Origin {
            name: &self.name,
            spec: &self.run.spec,
            status,
            now: Timestamp::now(),
        }
    }

    /// Creates `cfd` owned by the run; one that exists already (a retry) is kept as it is.
    async fn create_work_order(&self, mut cfd: CodeFixDDS) -> Result<String, Error> {
        let name = cfd.metadata.name.clone().unwrap_or_default();
        cfd.metadata.labels = Some(self.labels());
        cfd.metadata.owner_references = Some(vec![self.run.controller_owner_ref(&()).expect("an owner")]);
        match self.api::<CodeFixDDS>().create(&PostParams::default(), &cfd).await {
            Ok(_) => Ok(name),
            Err(kube::Error::Api(e)) if e.code == 409 => Ok(name),
            Err(e) => Err(e.into()),
        }
    }

    async fn request_approval(&self, status: &HealRunStatus, cycle: u32) -> Result<Input, Error> {
        let diff = self.stored_patch(cycle).await?;
        let cfd = proposal::approval_request(&self.origin(status), cycle, &diff).map_err(Error::Proposal)?;
        let name = self.create_work_order(cfd).await?;
        Ok(Input::ApprovalRequested { cycle, name })
    }

    async fn decision(&self, name: &str) -> Result<Option<Decision>, Error> {
        Ok(self
            .api::<CodeFixDDS>()
            .get_opt(name)
            .await?
            .and_then(|cfd| cfd.spec.approval))
    }

    async fn propose_fix(&self, status: &HealRunStatus) -> Result<Input, Error> {
        let cfd = proposal::fix_proposal(&self.origin(status))
            .ok_or_else(|| Error::Proposal("the last execution names nothing to fix".into()))?;
        let name = self.create_work_order(cfd).await?;
        Ok(Input::FixProposed { name })
    }

    async fn commit(&self, status: &HealRunStatus, cycle: u32) -> Result<Input, Error> {
        let diff = self.stored_patch(cycle).await?;
        let message = commit_message(status, cycle, &self.run_id());
        let committed = self
            .on_heal_branch(status, CYCLE_TRAILER, cycle, async |repo, branch, tip| {
                Ok(repo.commit_patch(branch, tip, &diff, &message).await?)
            })
            .await;
        let (commit, diff_stat) = match committed {
            Ok(committed) => committed,
            Err(Error::Git(error)) if error.is_patch_refused() => {
                return Ok(Input::CommitFailed {
                    cycle,
                    reason: error.to_string(),
                });
            }
            Err(error) => return Err(error),
        };
        Ok(Input::Committed {
            cycle,
            commit,
            branch: self.branch(),
            diff_stat,
        })
    }

    async fn revert(&self, status: &HealRunStatus, cycle: u32) -> Result<Input, Error> {
        let target = status
            .cycles
            .iter()
            .find(|c| c.cycle == cycle)
            .and_then(|c| c.patch.as_ref())
            .and_then(|p| p.commit.clone())
            .unwrap_or_default();
        let message = revert_message(status, cycle, &target, &self.run_id());
        let (commit, diff_stat) = self
            .on_heal_branch(status, REVERT_TRAILER, cycle, async |repo, branch, tip| {
                Ok(repo.revert_on(branch, tip, &target, &message).await?)
            })
            .await?;
        Ok(Input::Reverted {
            cycle,
            commit,
            diff_stat,
        })
    }

    /// Makes one commit on the heal branch with `make` (given the clone, the branch and its tip),
    /// pushes it, and returns it with the branch's diff stat against the source commit — or
    /// adopts the commit an attempt that crashed already made, found by `trailer: cycle`.
    async fn on_heal_branch(
        &self,
        status: &HealRunStatus,
        trailer: &str,
        cycle: u32,
        make: impl AsyncFnOnce(&Repo, &str, &str) -> Result<String, Error>,
    ) -> Result<(String, String), Error> {
        let branch = self.branch();
        let repo = self.repo().await?;
        let source = status.source_commit.clone().unwrap_or_default();
        let push = self.run.spec.delivery.push;
        let existing = repo
            .commit_for(&remote_ref(&branch, push), &self.run_id(), trailer, cycle)
            .await;
        let commit = match existing {
            Some(commit) => commit,
            None => {
                let tip = status
                    .result
                    .as_ref()
                    .and_then(|r| r.commit.clone())
                    .unwrap_or(source.clone());
                let commit = make(&repo, &branch, &tip).await?;
                if push {
                    repo.push(&branch).await?;
                }
                commit
            }
        };
        let diff_stat = repo
            .git(&["diff", "--shortstat", &format!("{source}..{commit}")])
            .await?;
        Ok((commit, diff_stat))
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
