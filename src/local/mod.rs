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

use crate::api::heal_run::{ApprovalMode, HealPolicy, HealRunReason, HealRunSpec, HealRunStatus};
use crate::confined::ConfinedDir;
use crate::core::format::RUN_TRAILER;
use crate::core::format::{commit_message, render, revert_message};
use crate::core::heal_run::{Action, Input, Note, apply, latest_observation, next_action, reason_name};
use crate::core::monitor;
use crate::core::proposal::{self, Origin};
use crate::core::redact::{looks_secret_name, secret_values};
use crate::executor::local::{KEEP_HEAD, KEEP_TAIL, LocalExecutor};
use crate::executor::{ExecutionRequest, detect};
use crate::git::Repo;
use crate::healer::Healer;
use crate::healer::cycle::{Workspace as HealerWorkspace, ask_for_fix};
use crate::parse::{Workspace, parse};

/// What `kubeheal heal` was asked to do.
pub struct HealOptions {
    pub dir: PathBuf,
    pub command: Option<String>,
    /// Variables given to the build besides the allow-listed part of kubeheal's own.
    pub env: Vec<(String, String)>,
    pub max_cycles: u32,
    pub timeout: Duration,
    pub policy: HealPolicy,
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
    healer: &dyn Healer,
    progress: &mut dyn FnMut(String),
    cancelled: impl Future<Output = ()>,
) -> Result<HealSummary, String> {
    let dir = options
        .dir
        .canonicalize()
        .map_err(|e| format!("cannot open {}: {e}", options.dir.display()))?;
    let user_repo = dir.join(".git").exists().then(|| Repo::at(&dir));
    if let Some(user) = &user_repo
        && user
            .git(&["ls-files", "--", STATE_DIR])
            .await
            .is_ok_and(|tracked| !tracked.is_empty())
    {
        return Err(format!(
            "{} tracks {STATE_DIR}/; kubeheal keeps its state in a folder of its own there — remove it from the repository (git rm -r --cached {STATE_DIR})",
            dir.display()
        ));
    }
    let state = ConfinedDir::state_dir(&dir, STATE_DIR).map_err(|e| e.to_string())?;
    // Git ignores the whole folder, this file included.
    state.write(".gitignore", b"*\n").map_err(|e| e.to_string())?;
    let _lock = lock(&state)?;
    state.remove_all("repo").map_err(|e| e.to_string())?;
    let repo = Repo::prepare(&dir, &state.path().join("repo"))
        .await
        .map_err(|e| e.to_string())?;
    let name: String = dir
        .file_name()
        .map(|n| {
            n.to_string_lossy()
                .chars()
                .map(|c| if c.is_ascii_alphanumeric() || c == '-' { c } else { '-' })
                .collect()
        })
        .unwrap_or_else(|| "project".into());
    let branch = free_branch(user_repo.as_ref(), &format!("kubeheal/{name}")).await;
    repo.heal_branch(&branch).await.map_err(|e| e.to_string())?;
    let base = repo.head().await.map_err(|e| e.to_string())?;
    let mut driver = LocalDriver {
        options,
        healer,
        spec: spec(options, &dir),
        repo,
        state,
        name,
        branch,
        base,
        patches: BTreeMap::new(),
        commits: Vec::new(),
        started: Instant::now(),
    };
    if let Some(user) = &user_repo
        && user.git(&["status", "--porcelain"]).await.is_ok_and(|s| !s.is_empty())
    {
        driver.say(
            progress,
            "the folder has uncommitted changes: kubeheal heals its last commit (HEAD); commit them first to include them".into(),
        );
    }
    let status = driver.run(progress, cancelled).await?;
    driver.finish(user_repo.as_ref(), &status).await
}

/// Holds the folder's lock for as long as it lives: a second heal of the folder is refused.
fn lock(state: &ConfinedDir) -> Result<Flock<std::fs::File>, String> {
    let file = state.open_for_update("lock").map_err(|e| e.to_string())?;
    Flock::lock(file, FlockArg::LockExclusiveNonblock).map_err(|(_, errno)| {
        if errno == nix::errno::Errno::EWOULDBLOCK {
            format!(
                "another kubeheal heal is running on {}; wait for it to end (or stop it) and try again",
                state.path().parent().unwrap_or(state.path()).display()
            )
        } else {
            format!("cannot lock {}: {errno}", state.path().join("lock").display())
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
fn spec(options: &HealOptions, dir: &Path) -> HealRunSpec {
    let mut spec: HealRunSpec = serde_json::from_value(serde_json::json!({
        "source": {"url": format!("file://{}", dir.display())},
    }))
    .expect("a minimal HealRun spec");
    spec.max_cycles = options.max_cycles;
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
    spec
}

struct LocalDriver<'a> {
    options: &'a HealOptions,
    healer: &'a dyn Healer,
    spec: HealRunSpec,
    repo: Repo,
    state: ConfinedDir,
    name: String,
    branch: String,
    base: String,
    /// Each answered cycle's patch (a unified diff).
    patches: BTreeMap<u32, String>,
    commits: Vec<String>,
    started: Instant,
}

impl LocalDriver<'_> {
    fn say(&self, progress: &mut dyn FnMut(String), line: String) {
        progress(format!("{:>6.1}s  {line}", self.started.elapsed().as_secs_f64()));
    }

    async fn run(
        &mut self,
        progress: &mut dyn FnMut(String),
        cancelled: impl Future<Output = ()>,
    ) -> Result<HealRunStatus, String> {
        let mut status = HealRunStatus::default();
        let mut cancelled = std::pin::pin!(cancelled);
        loop {
            let action = next_action(&self.spec, &status);
            if matches!(action, Action::Done | Action::Suspended) {
                return Ok(status);
            }
            // A cancel drops the step in flight: its build is killed and its copy removed.
            let performed = tokio::select! {
                input = self.perform(&status, action, progress) => Some(input),
                () = &mut cancelled, if !self.spec.cancel => None,
            };
            let input = match performed {
                Some(input) => input?,
                None => {
                    self.spec.cancel = true;
                    Input::Tick
                }
            };
            let found: Vec<String> = match &input {
                Input::Executed { observation, .. } => observation.bug_reports.iter().take(5).map(render).collect(),
                _ => Vec::new(),
            };
            let (next, notes) = apply(&self.spec, &status, input, Timestamp::now());
            for Note { message, .. } in &notes {
                self.say(progress, message.clone());
            }
            for line in found {
                progress(format!("         found: {line}"));
            }
            status = next;
            let json = serde_json::to_string_pretty(&status).map_err(|e| e.to_string())?;
            self.state
                .write("status.json", json.as_bytes())
                .map_err(|e| e.to_string())?;
        }
    }

    /// Carries out one action and returns what came of it.
    async fn perform(
        &mut self,
        status: &HealRunStatus,
        action: Action,
        progress: &mut dyn FnMut(String),
    ) -> Result<Input, String> {
        Ok(match action {
            Action::Done | Action::Suspended => Input::Tick,
            Action::ResolveSource => Input::SourceResolved {
                commit: self.base.clone(),
                project_type: detect::detect(&self.repo.dir, self.spec.executor.project_type),
            },
            Action::Execute { cycle } => {
                self.say(progress, format!("cycle {cycle}: running the build"));
                self.execute(cycle).await?
            }
            Action::AskHealer { cycle, timeout_seconds } => {
                self.say(
                    progress,
                    format!("cycle {cycle}: asking for a fix ({timeout_seconds} s allowed)"),
                );
                self.ask_healer(status, cycle, timeout_seconds).await?
            }
            Action::Commit { cycle } => self.commit(status, cycle).await?,
            Action::Revert { cycle } => self.revert(status, cycle).await?,
            Action::ProposeFix => self.propose_fix(status)?,
            Action::RequestApproval { .. } | Action::AwaitApproval { .. } => {
                return Err("a local heal approves automatically; no approval can be asked here".into());
            }
        })
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

    async fn execute(&self, cycle: u32) -> Result<Input, String> {
        let run_id = format!("cycle-{cycle}");
        let artifacts_dir = self
            .state
            .create_dir_all(&format!("artifacts/{run_id}"))
            .map_err(|e| e.to_string())?;
        let request = ExecutionRequest {
            artifacts_dir,
            run_id,
            source: self.repo.dir.clone(),
            revision: None,
            patches: Vec::new(),
            project_type: self.spec.executor.project_type,
            command: self.options.command.clone(),
            timeout: self.options.timeout,
            env: self.options.env.clone(),
            secrets: self.secrets(),
        };
        let execution = LocalExecutor.execute(&request).await;
        self.state
            .write(&format!("cycle-{cycle}.log"), execution.log.as_bytes())
            .map_err(|e| e.to_string())?;
        let files = self.repo.tracked_files().await;
        let parsed = parse(&execution.log, &Workspace::new("").with_files(files));
        let (observation, outcome) = monitor::judge(&execution.envelope, &parsed);
        Ok(Input::Executed {
            cycle,
            observation,
            outcome,
        })
    }

    async fn ask_healer(&mut self, status: &HealRunStatus, cycle: u32, timeout_seconds: u32) -> Result<Input, String> {
        let files = self.repo.tracked_files().await;
        let log = latest_observation(status)
            .and_then(|o| {
                self.state
                    .read_text(
                        &format!("{}.log", o.envelope.run_id),
                        2 * (KEEP_HEAD + KEEP_TAIL) as u64,
                    )
                    .ok()
            })
            .unwrap_or_default();
        let tree = self.repo.files().map_err(|e| e.to_string())?;
        let secrets = self.secrets();
        let workspace = HealerWorkspace {
            project: &self.name,
            files: &files,
            log: &log,
            tree: &tree,
            secrets: &secrets,
        };
        let answer = ask_for_fix(self.healer, &self.spec, status, cycle, timeout_seconds, workspace).await;
        if answer.patch.is_some() {
            self.patches.insert(cycle, answer.diff);
        }
        Ok(Input::HealerAnswered {
            cycle,
            call: answer.call,
            patch: answer.patch,
        })
    }

    async fn commit(&mut self, status: &HealRunStatus, cycle: u32) -> Result<Input, String> {
        let head = self.repo.head().await.map_err(|e| e.to_string())?;
        let diff = self.patches.get(&cycle).cloned().unwrap_or_default();
        let commit = match self
            .repo
            .commit_patch(&self.branch, &head, &diff, &commit_message(status, cycle, &self.name))
            .await
        {
            Ok(commit) => commit,
            Err(error) if error.is_patch_refused() => {
                return Ok(Input::CommitFailed {
                    cycle,
                    reason: error.to_string(),
                });
            }
            Err(error) => return Err(error.to_string()),
        };
        self.commits.push(commit.clone());
        Ok(Input::Committed {
            cycle,
            diff_stat: self.repo.diff_stat(&self.base).await.unwrap_or_default(),
            commit,
            branch: self.branch.clone(),
        })
    }

    async fn revert(&mut self, status: &HealRunStatus, cycle: u32) -> Result<Input, String> {
        let entry = status.cycles.iter().find(|c| c.cycle == cycle);
        let target = entry
            .and_then(|c| c.patch.as_ref())
            .and_then(|p| p.commit.clone())
            .unwrap_or_default();
        let head = self.repo.head().await.map_err(|e| e.to_string())?;
        let message = revert_message(status, cycle, &target, &self.name);
        let commit = self
            .repo
            .revert_on(&self.branch, &head, &target, &message)
            .await
            .map_err(|e| e.to_string())?;
        self.commits.push(commit.clone());
        Ok(Input::Reverted {
            cycle,
            diff_stat: self.repo.diff_stat(&self.base).await.unwrap_or_default(),
            commit,
        })
    }

    /// Writes the CodeFixDDS the loop proposes for people to `.kubeheal/`, ready for
    /// `kubectl apply`.
    fn propose_fix(&self, status: &HealRunStatus) -> Result<Input, String> {
        let origin = Origin {
            name: &self.name,
            spec: &self.spec,
            status,
            now: Timestamp::now(),
        };
        let order = proposal::fix_proposal(&origin).ok_or("the last execution names nothing to fix")?;
        let name = order.metadata.name.clone().unwrap_or_default();
        let yaml = serde_yaml_ng::to_string(&order).map_err(|e| e.to_string())?;
        self.state
            .write("proposed-fix.yaml", yaml.as_bytes())
            .map_err(|e| e.to_string())?;
        Ok(Input::FixProposed { name })
    }

    async fn finish(&self, user: Option<&Repo>, status: &HealRunStatus) -> Result<HealSummary, String> {
        // Make the heal branch visible in the user's own repository. Forced: `free_branch` chose
        // a name that is free or holds only kubeheal's own earlier commits.
        if let Some(user) = user
            && !self.commits.is_empty()
        {
            user.git(&[
                "fetch",
                "--quiet",
                &self.repo.dir.display().to_string(),
                &format!("+refs/heads/{0}:refs/heads/{0}", self.branch),
            ])
            .await
            .map_err(|e| {
                format!(
                    "the heal branch {} stays in {}: {e}",
                    self.branch,
                    self.repo.dir.display()
                )
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
            branch: self.branch.clone(),
            base: self.base.clone(),
            repo: self.repo.dir.clone(),
            proposed_fix: status
                .proposed_fix
                .as_ref()
                .map(|_| self.state.path().join("proposed-fix.yaml")),
        })
    }
}
