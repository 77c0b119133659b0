//! The complete instruction for the heal loop's next step: [`next_action`]'s decision with
//! everything a driver needs to carry it out — the execution's key and patch set, the healers
//! to ask, the branch, the commit to build on, the revert target and the messages — decided
//! here, from the spec and the status alone, so that both drivers do exactly the same thing and
//! a restarted driver finds what it started (a Job by its key, a commit by its trailers).

use sha2::{Digest, Sha256};

use crate::api::heal_run::{HealRunSpec, HealRunStatus, ProjectType};
use crate::core::format::{commit_message, revert_message};
use crate::core::heal_run::{Action, HealerKind, applied_cycles, healers, latest_observation, next_action};

/// The run a step belongs to.
#[derive(Debug, Clone, Copy)]
pub struct Run<'a> {
    /// Identifies the run in commit trailers: `namespace/name` in a cluster, the folder's name
    /// for `kubeheal heal`.
    pub id: &'a str,
    /// The run's name: the default heal branch is `kubeheal/<name>`, executions are keyed by it.
    pub name: &'a str,
    pub spec: &'a HealRunSpec,
}

impl Run<'_> {
    /// `spec.delivery.branch`, or `kubeheal/<name>`.
    pub fn branch(&self) -> String {
        self.spec
            .delivery
            .branch
            .clone()
            .unwrap_or_else(|| format!("kubeheal/{}", self.name))
    }
}

/// One build to run: the source commit plus the committed, unreverted patches of `patches`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExecutionOrder {
    pub cycle: u32,
    /// Names the execution (the Job, its log): the same commit and patch set always get the
    /// same key, so a driver that restarts finds the execution it launched.
    pub key: String,
    pub commit: String,
    /// The cycles whose patches are applied on top of `commit`, oldest first.
    pub patches: Vec<u32>,
    pub project_type: ProjectType,
}

/// One cycle's question to the healers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HealerQuestion {
    pub cycle: u32,
    pub timeout_seconds: u32,
    /// Asked in this order until one proposes a fix the gate accepts.
    pub healers: Vec<HealerKind>,
    /// Where the heal branch is: the files the healer sees are read at this commit.
    pub head: String,
    /// The key of the execution whose log and reports the healer is given.
    pub log_key: Option<String>,
    /// The heal branch's tree as an execution fetches it (the source commit and the applied
    /// patches), keyed `<execution key>-tool`: what a tool's Job checks out and changes.
    pub checkout: ExecutionOrder,
}

/// A commit to make on the heal branch (a fix, or the revert of one).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommitOrder {
    pub cycle: u32,
    pub branch: String,
    /// The branch's tip the commit goes on.
    pub tip: String,
    /// The commit the run started from (the diff stat is measured against it).
    pub source: String,
    pub message: String,
}

/// What a driver must do next, complete.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    ResolveSource,
    Execute(ExecutionOrder),
    AskHealers(HealerQuestion),
    RequestApproval {
        cycle: u32,
    },
    AwaitApproval {
        cycle: u32,
        name: String,
    },
    /// Commit `cycle`'s approved patch.
    Commit(CommitOrder),
    /// Revert `target`, `cycle`'s commit: it made tests fail that passed before.
    Revert {
        order: CommitOrder,
        target: String,
    },
    ProposeFix,
    Suspended,
    Done,
}

/// The next step of `run`, from its status alone.
pub fn next_step(run: &Run<'_>, status: &HealRunStatus) -> Step {
    let source = status.source_commit.clone().unwrap_or_default();
    let order = |cycle: u32, message: String| CommitOrder {
        cycle,
        branch: run.branch(),
        tip: head(status),
        source: source.clone(),
        message,
    };
    match next_action(run.spec, status) {
        Action::ResolveSource => Step::ResolveSource,
        Action::Execute { cycle } => Step::Execute(ExecutionOrder {
            cycle,
            key: execution_key(run.name, status, cycle),
            commit: source.clone(),
            patches: applied_cycles(status, cycle),
            project_type: status.project_type.unwrap_or(run.spec.executor.project_type),
        }),
        Action::AskHealer { cycle, timeout_seconds } => Step::AskHealers(HealerQuestion {
            cycle,
            timeout_seconds,
            healers: healers(run.spec.healer.as_ref()),
            head: head(status),
            log_key: latest_observation(status).map(|o| o.envelope.run_id.clone()),
            checkout: ExecutionOrder {
                cycle,
                key: format!("{}-tool", execution_key(run.name, status, cycle)),
                commit: source.clone(),
                patches: applied_cycles(status, cycle),
                project_type: status.project_type.unwrap_or(run.spec.executor.project_type),
            },
        }),
        Action::RequestApproval { cycle } => Step::RequestApproval { cycle },
        Action::AwaitApproval { cycle, name } => Step::AwaitApproval { cycle, name },
        Action::Commit { cycle } => Step::Commit(order(cycle, commit_message(status, cycle, run.id))),
        Action::Revert { cycle } => {
            let target = status
                .cycles
                .iter()
                .find(|c| c.cycle == cycle)
                .and_then(|c| c.patch.as_ref()?.commit.clone())
                .unwrap_or_default();
            Step::Revert {
                order: order(cycle, revert_message(status, cycle, &target, run.id)),
                target,
            }
        }
        Action::ProposeFix => Step::ProposeFix,
        Action::Suspended => Step::Suspended,
        Action::Done => Step::Done,
    }
}

/// The heal branch's tip: the run's last commit (a fix or a revert), else the source commit.
pub fn head(status: &HealRunStatus) -> String {
    status
        .result
        .as_ref()
        .and_then(|r| r.commit.clone())
        .or_else(|| status.source_commit.clone())
        .unwrap_or_default()
}

/// `<name>-c<cycle>-<8 hex>`, the hex from the source commit and the digests of the patches the
/// execution applies: at most 52 characters, a valid Kubernetes name when `name` is one.
pub fn execution_key(name: &str, status: &HealRunStatus, cycle: u32) -> String {
    let mut hash = Sha256::new();
    hash.update(status.source_commit.as_deref().unwrap_or_default());
    for applied in applied_cycles(status, cycle) {
        if let Some(patch) = status
            .cycles
            .iter()
            .find(|c| c.cycle == applied)
            .and_then(|c| c.patch.as_ref())
        {
            hash.update(b"\n");
            hash.update(&patch.digest);
        }
    }
    let hex: String = hash.finalize()[..4].iter().map(|b| format!("{b:02x}")).collect();
    let mut owner = name.to_owned();
    owner.truncate(40);
    format!("{}-c{cycle}-{hex}", owner.trim_end_matches(['-', '.']))
}
