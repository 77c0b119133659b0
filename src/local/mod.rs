//! The local driver of the heal loop (`kubeheal heal DIR`): the state machine of
//! `core::heal_run` — the same one the operator runs — with the local executor, a local heal
//! branch and state under `DIR/.kubeheal/` (the work repository, each execution's log, the run's
//! status as `status.json`, and a CodeFixDDS manifest when the loop ends without a fix).
//! Approval is automatic here: the branch is the proposal, and nothing leaves the machine.
//!
//! The folder is untrusted: `.kubeheal/` is created by kubeheal and refused when it is a link or
//! tracked by the repository; every file in it is written through [`ConfinedDir`]; a lock stops
//! two heals of one folder from mixing their state; the user's branches are never rewritten; and
//! a cancel (Ctrl-C, SIGTERM) stops the build, and leaves a `Cancelled` status.

use std::collections::BTreeMap;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::EnvVar;
use k8s_openapi::jiff::Timestamp;
use nix::fcntl::{Flock, FlockArg};
use thiserror::Error;

use crate::api::heal_run::{ApprovalMode, HealPolicy, HealRunReason, HealRunSpec, HealRunStatus, Verify};
use crate::api::shared::HealerSpec;
use crate::confined::{ConfinedDir, ConfinedError};
use crate::core::drive::{Effects, Ready, drive};
use crate::core::format::{RUN_TRAILER, render};
use crate::core::heal_run::{Input, Note, reason_name};
use crate::core::monitor;
use crate::core::proposal::{self, Origin};
use crate::core::redact::{looks_secret_name, secret_values};
use crate::core::step::{CommitOrder, ExecutionOrder, HealerQuestion, Run};
use crate::core::{incident, verify};
use crate::executor::local::{KEEP_HEAD, KEEP_TAIL, LocalExecutor};
use crate::executor::{ExecutionRequest, detect};
use crate::git::{GitError, Repo};
use crate::healer::cycle::{Workspace as HealerWorkspace, ask_for_fix, no_healer};
use crate::healer::factory::{self, Credentials};
use crate::parse::{MAX_PACKAGE_MANIFEST_BYTES, Workspace};

/// What `kubeheal heal` was asked to do.
pub struct HealOptions {
    pub dir: PathBuf,
    pub command: Option<String>,
    /// Variables given to the build besides the allow-listed part of kubeheal's own.
    pub env: Vec<(String, String)>,
    pub max_cycles: u32,
    pub timeout: Duration,
    pub policy: HealPolicy,
    /// The services asked after the built-in fixers (none: the built-in fixers alone).
    pub healer: HealerSpec,
    /// Their credentials, from kubeheal's environment.
    pub credentials: Credentials,
    /// The service to start and call after the build passes (`spec.verify`).
    pub verify: Option<Verify>,
}

/// Why a local heal could not run (a build or a fix that fails is not an error: the summary
/// says how the run ended).
#[derive(Debug, Error)]
pub enum HealError {
    #[error("cannot open {}: {source}", path.display())]
    Open { path: PathBuf, source: std::io::Error },
    #[error("{} tracks {STATE_DIR}/; kubeheal keeps its state in a folder of its own there — remove it from the repository (git rm -r --cached {STATE_DIR})", dir.display())]
    StateTracked { dir: PathBuf },
    #[error("{}/{STATE_DIR} is a symbolic link; kubeheal keeps its state in a folder of its own there and does not follow links — remove or rename the link and run again", dir.display())]
    StateLinked { dir: PathBuf },
    #[error("another kubeheal heal is running on {}; wait for it to end (or stop it) and try again", dir.display())]
    Busy { dir: PathBuf },
    #[error("cannot lock {}: {source}", path.display())]
    Lock { path: PathBuf, source: nix::Error },
    #[error(transparent)]
    State(#[from] ConfinedError),
    #[error(transparent)]
    Git(#[from] GitError),
    #[error("the heal branch {branch} stays in {}: {source}", repo.display())]
    Publish {
        branch: String,
        repo: PathBuf,
        source: GitError,
    },
    #[error("cannot write the proposed fix: {0}")]
    Proposal(String),
    #[error("cannot record the run's status: {0}")]
    Status(#[from] serde_json::Error),
    #[error("a local heal approves automatically; no approval can be asked here")]
    Approval,
}

/// How the run ended.
#[derive(Debug, Clone)]
pub struct HealSummary {
    pub reason: HealRunReason,
    pub message: String,
    pub cycles: u32,
    pub fixed_tests: Vec<String>,
    pub commits: Vec<String>,
    pub diff_stat: String,
    pub branch: String,
    /// The commit the run started from.
    pub base: String,
    pub repo: PathBuf,
    /// The CodeFixDDS manifest written when the loop ended without a fix.
    pub proposed_fix: Option<PathBuf>,
}

impl HealSummary {
    pub fn healed(&self) -> bool {
        self.reason == HealRunReason::Healed
    }
}

/// The folder under the project that holds kubeheal's state.
pub const STATE_DIR: &str = ".kubeheal";

/// Runs the loop; `progress` receives one line per step. When `cancelled` completes, the step
/// in flight is stopped (its build killed, its copy removed) and the run ends `Cancelled`.
pub async fn heal(
    options: &HealOptions,
    progress: &mut (dyn FnMut(String) + Send),
    cancelled: impl Future<Output = ()>,
) -> Result<HealSummary, HealError> {
    let dir = options.dir.canonicalize().map_err(|source| HealError::Open {
        path: options.dir.clone(),
        source,
    })?;
    let user_repo = dir.join(".git").exists().then(|| Repo::at(&dir));
    if let Some(user) = &user_repo
        && user
            .git(&["ls-files", "--", STATE_DIR])
            .await
            .is_ok_and(|tracked| !tracked.is_empty())
    {
        return Err(HealError::StateTracked { dir });
    }
    let state = ConfinedDir::state_dir(&dir, STATE_DIR).map_err(|e| match e {
        ConfinedError::Symlink { .. } => HealError::StateLinked { dir: dir.clone() },
        e => e.into(),
    })?;
    // Git ignores the whole folder, this file included.
    state.write(".gitignore", b"*\n")?;
    let _lock = lock(&state)?;
    state.remove_all("repo")?;
    let repo = Repo::prepare(&dir, &state.path().join("repo")).await?;
    let name: String = dir
        .file_name()
        .map(|n| {
            n.to_string_lossy()
                .chars()
                .map(|c| if c.is_ascii_alphanumeric() || c == '-' { c } else { '-' })
                .collect()
        })
        .unwrap_or_else(|| "project".into());
    let wanted = format!("kubeheal/{name}");
    let branch = free_branch(user_repo.as_ref(), &wanted).await;
    repo.heal_branch(&branch).await?;
    let base = repo.head().await?;
    let spec = spec(options, &dir, &branch);
    let mut world = LocalWorld {
        options,
        spec: &spec,
        repo,
        state,
        name: &name,
        base,
        patches: BTreeMap::new(),
        commits: Vec::new(),
        started: Instant::now(),
        progress,
        events: String::new(),
    };
    if branch != wanted {
        world.say(format!(
            "the branch {wanted} holds commits kubeheal did not make: it is left alone, and the fix goes to {branch}"
        ));
    }
    if let Some(user) = &user_repo
        && user.git(&["status", "--porcelain"]).await.is_ok_and(|s| !s.is_empty())
    {
        world.say(
            "the folder has uncommitted changes: kubeheal heals its last commit (HEAD); commit them first to include them".into(),
        );
    }
    let run = Run {
        id: &name,
        name: &name,
        spec: &spec,
    };
    // The local world never waits (each effect blocks until it is done) and never suspends: one
    // call runs the loop to its end.
    let (status, _) = drive(&run, HealRunStatus::default(), &mut world, usize::MAX - 1, cancelled).await?;
    world.finish(user_repo.as_ref(), &branch, &status).await
}

/// Holds the folder's lock for as long as it lives: a second heal of the folder is refused.
fn lock(state: &ConfinedDir) -> Result<Flock<std::fs::File>, HealError> {
    let file = state.open_for_update("lock")?;
    Flock::lock(file, FlockArg::LockExclusiveNonblock).map_err(|(_, errno)| {
        if errno == nix::errno::Errno::EWOULDBLOCK {
            HealError::Busy {
                dir: state.path().parent().unwrap_or(state.path()).to_owned(),
            }
        } else {
            HealError::Lock {
                path: state.path().join("lock"),
                source: errno,
            }
        }
    })
}

/// `wanted`, or `wanted-2`, `wanted-3`… when the user's repository has a branch of that name with
/// a commit kubeheal did not make (a person's work is never rewritten). A branch that holds only
/// kubeheal's commits (each with its `Kubeheal-Run` trailer) is the previous heal's, and is reused.
async fn free_branch(user: Option<&Repo>, wanted: &str) -> String {
    let Some(user) = user else {
        return wanted.to_owned();
    };
    let free = async |name: &str| {
        let reference = format!("refs/heads/{name}");
        if user
            .git(&["rev-parse", "--verify", "--quiet", &reference])
            .await
            .is_err()
        {
            return true;
        }
        let count = async |extra: &[&str]| {
            let mut args = vec!["rev-list", "--count"];
            args.extend_from_slice(extra);
            let range = format!("HEAD..{reference}");
            args.push(&range);
            user.git(&args).await.ok().and_then(|n| n.parse::<u64>().ok())
        };
        let grep = format!("--grep=^{RUN_TRAILER}: ");
        matches!((count(&[]).await, count(&[&grep]).await), (Some(all), Some(ours)) if all == ours)
    };
    if free(wanted).await {
        return wanted.to_owned();
    }
    for n in 2.. {
        let candidate = format!("{wanted}-{n}");
        if free(&candidate).await {
            return candidate;
        }
    }
    unreachable!("some branch name is free")
}

/// The HealRun a local heal stands for: the folder as its source, automatic approval.
fn spec(options: &HealOptions, dir: &Path, branch: &str) -> HealRunSpec {
    let mut spec: HealRunSpec = serde_json::from_value(serde_json::json!({
        "source": {"url": format!("file://{}", dir.display())},
    }))
    .expect("a minimal HealRun spec");
    spec.max_cycles = options.max_cycles;
    spec.delivery.branch = Some(branch.to_owned());
    spec.delivery.push = false;
    spec.healer = Some(options.healer.clone());
    spec.policy = HealPolicy {
        approval: ApprovalMode::Automatic,
        ..options.policy.clone()
    };
    spec.executor.command = options.command.clone();
    spec.executor.env = options
        .env
        .iter()
        .map(|(name, value)| EnvVar {
            name: name.clone(),
            value: Some(value.clone()),
            value_from: None,
        })
        .collect();
    spec.executor.timeout_seconds = options.timeout.as_secs().clamp(1, u64::from(u32::MAX)) as u32;
    spec.verify = options.verify.clone();
    spec
}

/// The local world of the heal loop: a process per execution, a work repository under
/// `.kubeheal/`, the healers called from here, and the status in `.kubeheal/status.json`.
struct LocalWorld<'a> {
    options: &'a HealOptions,
    spec: &'a HealRunSpec,
    repo: Repo,
    state: ConfinedDir,
    name: &'a str,
    base: String,
    /// Each answered cycle's patch (a unified diff).
    patches: BTreeMap<u32, String>,
    commits: Vec<String>,
    started: Instant,
    progress: &'a mut (dyn FnMut(String) + Send),
    /// Every note so far, one JSON object per line of `events.jsonl`: what a cluster keeps as
    /// the run's Events.
    events: String,
}

impl LocalWorld<'_> {
    fn say(&mut self, line: String) {
        (self.progress)(format!("{:>6.1}s  {line}", self.started.elapsed().as_secs_f64()));
    }

    /// Every secret value kubeheal knows of: its own (tokens in its environment) and those
    /// given to the build.
    fn secrets(&self) -> Vec<String> {
        secret_values(std::env::vars())
            .into_iter()
            .chain(
                self.options
                    .env
                    .iter()
                    .filter(|(name, _)| looks_secret_name(name))
                    .map(|(_, value)| value.clone()),
            )
            .collect()
    }

    /// Makes one commit on the heal branch with `make` and records it.
    async fn committed(&mut self, made: Result<String, GitError>) -> Result<(String, String), HealError> {
        let commit = made?;
        self.commits.push(commit.clone());
        Ok((commit, self.repo.diff_stat(&self.base).await.unwrap_or_default()))
    }

    async fn finish(
        &self,
        user: Option<&Repo>,
        branch: &str,
        status: &HealRunStatus,
    ) -> Result<HealSummary, HealError> {
        // Make the heal branch visible in the user's own repository. Forced: `free_branch` chose
        // a name that is free or holds only kubeheal's own earlier commits.
        if let Some(user) = user
            && !self.commits.is_empty()
        {
            user.git(&[
                "fetch",
                "--quiet",
                &self.repo.dir.display().to_string(),
                &format!("+refs/heads/{branch}:refs/heads/{branch}"),
            ])
            .await
            .map_err(|source| HealError::Publish {
                branch: branch.to_owned(),
                repo: self.repo.dir.clone(),
                source,
            })?;
        }
        let reason = status.reason.unwrap_or(HealRunReason::CyclesExhausted);
        let result = status.result.clone().unwrap_or_default();
        Ok(HealSummary {
            reason,
            message: status.message.clone().unwrap_or_else(|| reason_name(reason).to_owned()),
            cycles: status.cycle,
            fixed_tests: result.fixed_tests,
            commits: self.commits.clone(),
            diff_stat: self.repo.diff_stat(&self.base).await.unwrap_or_default(),
            branch: branch.to_owned(),
            base: self.base.clone(),
            repo: self.repo.dir.clone(),
            proposed_fix: status
                .proposed_fix
                .as_ref()
                .map(|_| self.state.path().join("proposed-fix.yaml")),
        })
    }
}

impl Effects for LocalWorld<'_> {
    type Error = HealError;

    async fn resolve_source(&mut self) -> Result<Input, HealError> {
        Ok(Input::SourceResolved {
            commit: self.base.clone(),
            project_type: detect::detect(&self.repo.dir, self.spec.executor.project_type),
            // Work orders are cluster objects: a local heal executes none.
            work_order: None,
        })
    }

    async fn execute(&mut self, order: &ExecutionOrder, _status: &HealRunStatus) -> Result<Ready<Input>, HealError> {
        let cycle = order.cycle;
        self.say(format!("cycle {cycle}: running the build"));
        let artifacts_dir = self.state.create_dir_all(&format!("artifacts/{}", order.key))?;
        let request = ExecutionRequest {
            artifacts_dir,
            run_id: order.key.clone(),
            // The work repository's checkout is the heal branch's tip: the source commit plus the
            // committed, unreverted patches — what `order` asks for.
            source: self.repo.dir.clone(),
            revision: None,
            patches: Vec::new(),
            project_type: order.project_type,
            command: self.options.command.clone(),
            timeout: self.options.timeout,
            env: self.options.env.clone(),
            secrets: self.secrets(),
            verify: self.spec.verify.as_ref().map(|v| v.openapi.clone()),
        };
        let execution = LocalExecutor.execute(&request).await;
        self.state
            .write(&format!("{}.log", order.key), execution.log.as_bytes())?;
        self.state
            .write(&format!("{}.stderr", order.key), execution.stderr_tail.as_bytes())?;
        let files = self.repo.tracked_files().await;
        // The packages' manifests name them as monorepo runners do (read inside the repository only).
        let tree = self.repo.files().ok();
        let workspace = Workspace::new("")
            .with_files(files.clone())
            .with_package_manifests(|path| tree.as_ref()?.read(path, MAX_PACKAGE_MANIFEST_BYTES).ok());
        let (mut observation, outcome) = monitor::judge_log(&execution.envelope, &execution.log, &workspace);
        let outcome = verify::observe(
            &mut observation,
            outcome,
            self.spec.verify.as_ref(),
            &execution.endpoint_calls,
            &execution.service_output,
            &files,
        );
        for call in &observation.endpoint_calls {
            (self.progress)(format!("         called {}: HTTP {}", call.endpoint, call.http_status));
        }
        incident::observe(&mut observation, cycle, self.spec.incident.as_ref(), &files);
        for report in observation.bug_reports.iter().take(5) {
            (self.progress)(format!("         found: {}", render(report)));
        }
        Ok(Ready::Now(Input::Executed {
            cycle,
            observation,
            outcome,
        }))
    }

    async fn ask_healers(
        &mut self,
        question: &HealerQuestion,
        status: &HealRunStatus,
    ) -> Result<Ready<Input>, HealError> {
        let (cycle, timeout_seconds) = (question.cycle, question.timeout_seconds);
        self.say(format!("cycle {cycle}: asking for a fix ({timeout_seconds} s allowed)"));
        let healers = match factory::build(
            &question.healers,
            self.spec.healer.as_ref().unwrap_or(&HealerSpec::default()),
            &self.options.credentials,
        ) {
            Ok(healers) => healers,
            Err(reason) => {
                let answer = no_healer(reason, timeout_seconds);
                return Ok(Ready::Now(Input::HealerAnswered {
                    cycle,
                    call: answer.call,
                    patch: None,
                }));
            }
        };
        let files = self.repo.tracked_files().await;
        let log = question
            .log_key
            .as_ref()
            .and_then(|key| {
                self.state
                    .read_text(&format!("{key}.log"), 2 * (KEEP_HEAD + KEEP_TAIL) as u64)
                    .ok()
            })
            .unwrap_or_default();
        let stderr = question
            .log_key
            .as_ref()
            .and_then(|key| self.state.read_text(&format!("{key}.stderr"), 16 * 1024).ok())
            .unwrap_or_default();
        let tree = self.repo.files()?;
        let secrets = self.secrets();
        let workspace = HealerWorkspace {
            task: "",
            project: self.name,
            files: &files,
            log: &log,
            stderr: &stderr,
            tree: &tree,
            secrets: &secrets,
        };
        let answer = ask_for_fix(&healers, self.spec, status, cycle, timeout_seconds, workspace).await;
        if answer.patch.is_some() {
            self.patches.insert(cycle, answer.diff);
        }
        Ok(Ready::Now(Input::HealerAnswered {
            cycle,
            call: answer.call,
            patch: answer.patch,
        }))
    }

    async fn request_approval(&mut self, _cycle: u32, _status: &HealRunStatus) -> Result<Input, HealError> {
        Err(HealError::Approval)
    }

    async fn await_approval(&mut self, _cycle: u32, _name: &str) -> Result<Ready<Input>, HealError> {
        Err(HealError::Approval)
    }

    async fn commit(&mut self, order: &CommitOrder) -> Result<Input, HealError> {
        let diff = self.patches.get(&order.cycle).cloned().unwrap_or_default();
        let made = self
            .repo
            .commit_patch(&order.branch, &order.tip, &diff, &order.message)
            .await;
        match made {
            Err(error) if error.is_patch_refused() => Ok(Input::CommitFailed {
                cycle: order.cycle,
                reason: error.to_string(),
            }),
            made => {
                let (commit, diff_stat) = self.committed(made).await?;
                Ok(Input::Committed {
                    cycle: order.cycle,
                    commit,
                    branch: order.branch.clone(),
                    diff_stat,
                })
            }
        }
    }

    async fn revert(&mut self, order: &CommitOrder, target: &str) -> Result<Input, HealError> {
        let made = self
            .repo
            .revert_on(&order.branch, &order.tip, target, &order.message)
            .await;
        let (commit, diff_stat) = self.committed(made).await?;
        Ok(Input::Reverted {
            cycle: order.cycle,
            commit,
            diff_stat,
        })
    }

    /// Writes the CodeFixDDS the loop proposes for people to `.kubeheal/`, ready for
    /// `kubectl apply`.
    async fn propose_fix(&mut self, status: &HealRunStatus) -> Result<Input, HealError> {
        let origin = Origin {
            name: self.name,
            spec: self.spec,
            status,
            now: Timestamp::now(),
        };
        let mut order = proposal::fix_proposal(&origin)
            .ok_or_else(|| HealError::Proposal("the last execution names nothing to fix".into()))?;
        // A person applies it, as their own order: no HealRun of this name is in a cluster, and
        // the chart's admission policy lets only the operator set sourceRef.
        order.spec.source_ref = None;
        let name = order.metadata.name.clone().unwrap_or_default();
        let yaml = serde_yaml_ng::to_string(&order).map_err(|e| HealError::Proposal(e.to_string()))?;
        self.state.write("proposed-fix.yaml", yaml.as_bytes())?;
        Ok(Input::FixProposed { name })
    }

    async fn persist(
        &mut self,
        _previous: &HealRunStatus,
        status: &HealRunStatus,
        notes: &[Note],
    ) -> Result<(), HealError> {
        for note in notes {
            self.say(note.message.clone());
            let event = serde_json::json!({
                "time": Timestamp::now().to_string(),
                "type": if note.warning { "Warning" } else { "Normal" },
                "reason": note.reason,
                "message": note.message,
                "phase": status.phase,
            });
            self.events.push_str(&event.to_string());
            self.events.push('\n');
        }
        if !notes.is_empty() {
            self.state.write("events.jsonl", self.events.as_bytes())?;
        }
        let json = serde_json::to_string_pretty(status)?;
        self.state.write("status.json", json.as_bytes())?;
        Ok(())
    }

    async fn finished(&mut self) -> Result<(), HealError> {
        Ok(())
    }
}
