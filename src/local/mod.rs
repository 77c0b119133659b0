//! The local driver of the heal loop (`kubeheal heal DIR`): the state machine of
//! `core::heal_run` — the same one the operator runs — with the local executor, a local heal
//! branch and state under `DIR/.kubeheal/` (the work repository, each execution's log, the run's
//! status as `status.json`, and a CodeFixDDS manifest when the loop ends without a fix).
//! Approval is automatic here: the branch is the proposal, and nothing leaves the machine.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use k8s_openapi::jiff::Timestamp;

use crate::api::heal_run::{ApprovalMode, HealPolicy, HealRunReason, HealRunSpec, HealRunStatus};
use crate::core::heal_run::{Action, Input, Note, apply, latest_observation, next_action, reason_name};
use crate::core::monitor;
use crate::core::proposal::{self, Origin};
use crate::executor::ExecutionRequest;
use crate::executor::local::LocalExecutor;
use crate::git::Repo;
use crate::healer::Healer;
use crate::healer::cycle::{Workspace as HealerWorkspace, ask_for_fix};
use crate::parse::format::{commit_message, render, revert_message};
use crate::parse::{Workspace, parse};

/// What `kubeheal heal` was asked to do.
pub struct HealOptions {
    pub dir: PathBuf,
    pub command: Option<String>,
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

/// Runs the loop; `progress` receives one line per step.
pub async fn heal(
    options: &HealOptions,
    healer: &dyn Healer,
    progress: &mut dyn FnMut(String),
) -> Result<HealSummary, String> {
    let dir = options
        .dir
        .canonicalize()
        .map_err(|e| format!("cannot open {}: {e}", options.dir.display()))?;
    let state = dir.join(".kubeheal");
    let work = state.join("repo");
    if work.exists() {
        std::fs::remove_dir_all(&work).map_err(|e| format!("cannot reset {}: {e}", work.display()))?;
    }
    let repo = Repo::prepare(&dir, &work).await.map_err(|e| e.to_string())?;
    let name: String = dir
        .file_name()
        .map(|n| {
            n.to_string_lossy()
                .chars()
                .map(|c| if c.is_ascii_alphanumeric() || c == '-' { c } else { '-' })
                .collect()
        })
        .unwrap_or_else(|| "project".into());
    let branch = format!("kubeheal/{name}");
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
    let status = driver.run(progress).await?;
    driver.finish(&dir, &status).await
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
    spec.executor.timeout_seconds = options.timeout.as_secs().clamp(1, u64::from(u32::MAX)) as u32;
    spec
}

struct LocalDriver<'a> {
    options: &'a HealOptions,
    healer: &'a dyn Healer,
    spec: HealRunSpec,
    repo: Repo,
    state: PathBuf,
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

    async fn run(&mut self, progress: &mut dyn FnMut(String)) -> Result<HealRunStatus, String> {
        let mut status = HealRunStatus::default();
        loop {
            let input = match next_action(&self.spec, &status) {
                Action::Done | Action::Suspended => return Ok(status),
                Action::ResolveSource => Input::SourceResolved {
                    commit: self.base.clone(),
                },
                Action::Execute { cycle } => {
                    self.say(progress, format!("cycle {cycle}: running the build"));
                    self.execute(cycle).await
                }
                Action::AskHealer { cycle, timeout_seconds } => {
                    self.say(
                        progress,
                        format!("cycle {cycle}: asking for a fix ({timeout_seconds} s allowed)"),
                    );
                    self.ask_healer(&status, cycle, timeout_seconds).await
                }
                Action::Commit { cycle } => self.commit(&status, cycle).await?,
                Action::Revert { cycle } => self.revert(&status, cycle).await?,
                Action::ProposeFix => self.propose_fix(&status)?,
                Action::RequestApproval { .. } | Action::AwaitApproval { .. } => {
                    return Err("a local heal approves automatically; no approval can be asked here".into());
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
            std::fs::write(self.state.join("status.json"), json)
                .map_err(|e| format!("cannot write {}: {e}", self.state.join("status.json").display()))?;
        }
    }

    async fn execute(&self, cycle: u32) -> Input {
        let run_id = format!("cycle-{cycle}");
        let request = ExecutionRequest {
            artifacts_dir: self.state.join("artifacts").join(&run_id),
            run_id,
            source: self.repo.dir.clone(),
            revision: None,
            patches: Vec::new(),
            project_type: self.spec.executor.project_type,
            command: self.options.command.clone(),
            timeout: self.options.timeout,
            env: Vec::new(),
            secrets: Vec::new(),
        };
        let execution = LocalExecutor.execute(&request).await;
        let _ = std::fs::write(self.state.join(format!("cycle-{cycle}.log")), &execution.log);
        let files = self.repo.tracked_files().await;
        let parsed = parse(&execution.log, &Workspace::new("").with_files(files));
        let (observation, outcome) = monitor::judge(&execution.envelope, &parsed);
        Input::Executed {
            cycle,
            observation,
            outcome,
        }
    }

    async fn ask_healer(&mut self, status: &HealRunStatus, cycle: u32, timeout_seconds: u32) -> Input {
        let files = self.repo.tracked_files().await;
        let log = latest_observation(status)
            .and_then(|o| std::fs::read_to_string(self.state.join(format!("{}.log", o.envelope.run_id))).ok())
            .unwrap_or_default();
        let repo = &self.repo;
        let read = |path: &str| repo.read(path);
        let workspace = HealerWorkspace {
            project: &self.name,
            files: &files,
            log: &log,
            read: &read,
        };
        let answer = ask_for_fix(self.healer, &self.spec, status, cycle, timeout_seconds, workspace).await;
        if answer.patch.is_some() {
            self.patches.insert(cycle, answer.diff);
        }
        Input::HealerAnswered {
            cycle,
            call: answer.call,
            patch: answer.patch,
        }
    }

    async fn commit(&mut self, status: &HealRunStatus, cycle: u32) -> Result<Input, String> {
        let head = self.repo.head().await.map_err(|e| e.to_string())?;
        let diff = self.patches.get(&cycle).cloned().unwrap_or_default();
        let commit = self
            .repo
            .commit_patch(&self.branch, &head, &diff, &commit_message(status, cycle, &self.name))
            .await
            .map_err(|e| e.to_string())?;
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
        let file = self.state.join("proposed-fix.yaml");
        std::fs::write(&file, yaml).map_err(|e| format!("cannot write {}: {e}", file.display()))?;
        Ok(Input::FixProposed { name })
    }

    async fn finish(&self, dir: &Path, status: &HealRunStatus) -> Result<HealSummary, String> {
        // Make the heal branch visible in the user's own repository.
        if dir.join(".git").exists() && !self.commits.is_empty() {
            let user = Repo::at(dir);
            let _ = user
                .git(&[
                    "fetch",
                    "--quiet",
                    &self.repo.dir.display().to_string(),
                    &format!("+{0}:{0}", self.branch),
                ])
                .await;
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
                .map(|_| self.state.join("proposed-fix.yaml")),
        })
    }
}
