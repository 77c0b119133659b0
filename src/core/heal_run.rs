//! The HealRun state machine — the Orchestrator of seed 001 with the cycles of seed 000, as pure
//! functions. [`next_action`] reads a spec and a status and says what the driver must do next;
//! [`apply`] records what came of it (an execution, a healer answer, an approval, a commit) and
//! returns the next status with the notes to publish. No I/O, no clock of its own (`now` is an
//! argument), so every phase and reason is reached by plain tests, and a driver that crashes
//! resumes from the status alone.
//!
//! A run is: resolve the source commit → baseline execution (cycle 0) → cycles 1..=maxCycles of
//! ask the healer → gate → (approval) → commit → execute. A cycle's entry in `status.cycles` is
//! created by the healer's answer and then filled in order, so the first missing field of the
//! last entry is the next step.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use k8s_openapi::jiff::Timestamp;
use serde::{Deserialize, Serialize};

use crate::api::heal_run::{
    ApprovalMode, CycleStatus, DEFAULT_CYCLE_TIMEOUTS, HealResult, HealRunPhase, HealRunReason, HealRunSpec,
    HealRunStatus, HealerCall, HealerOutcome, Observation, PatchStatus, ProjectType, TestDiff, WorkOrderStatus,
};
use crate::api::shared::{Decision, HealerSpec, RunStatus, Verdict, condition, wire_name};
use crate::core::format::short_commit;

/// Most test names kept in each list of a status.
const MAX_TESTS: usize = 50;

/// A healer a cycle may ask. Which ones, and in which order, is decided by [`healers`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HealerKind {
    /// The deterministic fixers built into kubeheal.
    Builtin,
    /// A Code Healer API service: `spec.healer.codeHealerApi`, or the driver's default one.
    CodeHealerApi,
    /// An OpenAI-compatible model: `spec.healer.openAI`.
    OpenAi,
    /// An executor tool run in a Job over the checkout: `spec.healer.tool`.
    Tool,
}

/// The healers each cycle asks, in order, until one proposes a fix the gate accepts: the
/// deterministic fixers first (cheap, offline, and committed without a human under `Tiered`),
/// then every service `spec.healer` names. A spec that names no healer uses the driver's default
/// Code Healer API when there is one; a spec that names only `builtin` asks nothing else. A
/// `tool` is asked alone: it executes a work order a person approved for that tool.
pub fn healers(named: Option<&HealerSpec>) -> Vec<HealerKind> {
    let named = named.cloned().unwrap_or_default();
    if named.tool.is_some() {
        return vec![HealerKind::Tool];
    }
    let mut kinds = vec![HealerKind::Builtin];
    if named.code_healer_api.is_some() || (named.open_ai.is_none() && named.builtin.is_none()) {
        kinds.push(HealerKind::CodeHealerApi);
    }
    if named.open_ai.is_some() {
        kinds.push(HealerKind::OpenAi);
    }
    kinds
}

/// The healer's timeout for `cycle` (1-based), in seconds, from `timeouts` (seed 000's table
/// when empty): cycle N uses entry N, later cycles the last.
pub fn cycle_timeout(timeouts: &[u32], cycle: u32) -> u32 {
    let table: &[u32] = if timeouts.is_empty() {
        &DEFAULT_CYCLE_TIMEOUTS
    } else {
        timeouts
    };
    table[(cycle.max(1) as usize - 1).min(table.len() - 1)]
}

/// How an execution ended, as the CI monitor judges it (exit code and parsed results together).
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// Exit code 0 and the suite really ran.
    Passed,
    /// The code is at fault: tests, compilation or lint failed.
    Failed,
    /// The environment is at fault (out of memory, network, disk, image, missing tool).
    Infrastructure { message: String },
}

/// What the driver observed after performing an [`Action`].
#[derive(Debug, Clone, PartialEq)]
pub enum Input {
    /// Nothing new: re-read the spec (cancel, suspend) and the clock (budget).
    Tick,
    /// The process driving the run was interrupted (Ctrl-C, SIGTERM to `kubeheal heal`): the run
    /// ends `Cancelled` as by `spec.cancel`, saying what stopped it.
    Interrupted,
    /// `spec.source.revision` resolved to this commit, where the project is of `project_type`
    /// (`auto` when nothing told it apart).
    /// `work_order` is the approved CodeFixDDS the run executes (`spec.workOrder`), verified.
    SourceResolved {
        commit: String,
        project_type: ProjectType,
        work_order: Option<WorkOrderStatus>,
    },
    /// `spec.source` cannot be used, and trying again will not change that: `message` says
    /// what to fix.
    SourceUnavailable { message: String },
    /// The execution of `cycle` (0 for the baseline) ended.
    Executed {
        cycle: u32,
        observation: Observation,
        outcome: Outcome,
    },
    /// The healer answered for `cycle`; `patch` is set (with the gate's verdict) when it proposed
    /// one.
    HealerAnswered {
        cycle: u32,
        call: HealerCall,
        patch: Option<PatchStatus>,
    },
    /// The CodeFixDDS `name` asks a human to approve `cycle`'s patch.
    ApprovalRequested { cycle: u32, name: String },
    /// A human decided on `cycle`'s patch.
    Decided { cycle: u32, decision: Decision },
    /// `cycle`'s patch is committed (and pushed) on `branch`.
    Committed {
        cycle: u32,
        commit: String,
        branch: String,
        diff_stat: String,
    },
    /// `cycle`'s patch does not apply to the heal branch (`reason`, from git): it costs the
    /// cycle, as a patch the gate rejects does.
    CommitFailed { cycle: u32, reason: String },
    /// `cycle`'s patch regressed and `commit` reverts it.
    Reverted {
        cycle: u32,
        commit: String,
        diff_stat: String,
    },
    /// The CodeFixDDS `name` proposes a fix after the loop ended without one.
    FixProposed { name: String },
}

/// What the driver must do next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// Resolve `spec.source.revision` to a commit.
    ResolveSource,
    /// Run the build at the source commit plus the committed, unreverted patches of cycles
    /// `1..=cycle` ([`applied_cycles`]).
    Execute { cycle: u32 },
    /// Ask the healer for `cycle`'s patch, within `timeout_seconds`.
    AskHealer { cycle: u32, timeout_seconds: u32 },
    /// Create the CodeFixDDS that asks a human to approve `cycle`'s patch.
    RequestApproval { cycle: u32 },
    /// Wait until the CodeFixDDS `name` carries a decision.
    AwaitApproval { cycle: u32, name: String },
    /// Commit (and push) `cycle`'s approved patch.
    Commit { cycle: u32 },
    /// Revert `cycle`'s commit: it made tests fail that passed before.
    Revert { cycle: u32 },
    /// Create the CodeFixDDS that proposes a fix for people, the loop having ended without one.
    ProposeFix,
    /// `spec.suspend` is set: do nothing until it is cleared.
    Suspended,
    /// The run is over.
    Done,
}

/// Something worth telling people: published as a Kubernetes Event or a progress line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Note {
    pub warning: bool,
    /// CamelCase, as an Event reason.
    pub reason: &'static str,
    pub message: String,
}

impl Note {
    fn normal(reason: &'static str, message: String) -> Self {
        Note {
            warning: false,
            reason,
            message,
        }
    }

    fn warning(reason: &'static str, message: String) -> Self {
        Note {
            warning: true,
            reason,
            message,
        }
    }
}

/// Whether the run has ended.
pub fn is_terminal(status: &HealRunStatus) -> bool {
    matches!(
        status.phase,
        Some(HealRunPhase::Healed | HealRunPhase::Failed | HealRunPhase::Cancelled)
    )
}

/// Whether `call`'s patch must wait for a human, by `spec.policy.approval`.
pub fn needs_approval(spec: &HealRunSpec, call: &HealerCall) -> bool {
    match spec.policy.approval {
        ApprovalMode::Automatic => false,
        ApprovalMode::Manual => true,
        ApprovalMode::Tiered => !call.deterministic,
    }
}

/// The cycles whose patches are committed and not reverted, up to `cycle`, oldest first: what an
/// execution of `cycle` applies on top of the source commit.
pub fn applied_cycles(status: &HealRunStatus, cycle: u32) -> Vec<u32> {
    status
        .cycles
        .iter()
        .filter(|c| c.cycle <= cycle)
        .filter(|c| {
            c.patch
                .as_ref()
                .is_some_and(|p| p.commit.is_some() && p.reverted_by.is_none())
        })
        .map(|c| c.cycle)
        .collect()
}

/// The newest execution of the code as it is: the last verification of a fix that was not
/// reverted (a reverted fix's run describes code that is gone), or the baseline.
pub fn latest_observation(status: &HealRunStatus) -> Option<&Observation> {
    status
        .cycles
        .iter()
        .rev()
        .filter(|c| !is_reverted(c))
        .find_map(|c| c.execution.as_ref())
        .or(status.baseline.as_ref())
}

fn is_reverted(cycle: &CycleStatus) -> bool {
    cycle.patch.as_ref().is_some_and(|p| p.reverted_by.is_some())
}

/// What an earlier cycle tried, so a healer is not asked the same thing twice.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PreviousAttempt {
    pub cycle: u32,
    pub outcome: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub changes_summary: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<String>,
}

/// What earlier cycles tried, for the healer (seed 000's history), oldest first.
pub fn history(status: &HealRunStatus) -> Vec<PreviousAttempt> {
    status
        .cycles
        .iter()
        .filter_map(|c| {
            let call = c.healer_call.as_ref()?;
            let outcome = match (&c.patch, call.outcome) {
                (Some(p), _) if !p.gate.accepted => "rejected".to_owned(),
                (Some(p), _) if p.reverted_by.is_some() => "reverted".to_owned(),
                (_, outcome) => wire_name(&outcome),
            };
            let result = match (&c.patch, &c.tests) {
                (Some(p), _) if !p.gate.accepted => Some(p.gate.reasons.join("; ")),
                (_, Some(t)) => Some(format!(
                    "fixed: {}; still failing: {}; newly failing: {}",
                    t.fixed.len(),
                    t.still_failing.len(),
                    t.newly_failing.len()
                )),
                _ => call.reason.clone(),
            };
            Some(PreviousAttempt {
                cycle: c.cycle,
                outcome,
                changes_summary: call.changes_summary.clone(),
                files: c
                    .patch
                    .iter()
                    .flat_map(|p| p.files.iter().map(|f| f.path.clone()))
                    .collect(),
                result,
            })
        })
        .collect()
}

/// What the driver must do next, from the spec and the status alone.
pub fn next_action(spec: &HealRunSpec, status: &HealRunStatus) -> Action {
    if is_terminal(status) {
        return if wants_proposal(status) {
            Action::ProposeFix
        } else {
            Action::Done
        };
    }
    if spec.suspend {
        return Action::Suspended;
    }
    if status.source_commit.is_none() {
        return Action::ResolveSource;
    }
    if status.baseline.is_none() {
        return Action::Execute { cycle: 0 };
    }
    let Some(last) = status.cycles.last() else {
        return ask(spec, 1);
    };
    let n = last.cycle;
    let (Some(call), Some(patch)) = (&last.healer_call, &last.patch) else {
        return ask(spec, n + 1);
    };
    if !patch.gate.accepted {
        return ask(spec, n + 1);
    }
    if needs_approval(spec, call) && patch.approved_by.is_none() {
        return match &last.approval_request {
            None => Action::RequestApproval { cycle: n },
            Some(name) => Action::AwaitApproval {
                cycle: n,
                name: name.clone(),
            },
        };
    }
    if patch.commit.is_none() {
        return Action::Commit { cycle: n };
    }
    if last.execution.is_none() {
        return Action::Execute { cycle: n };
    }
    if regressed(status, last) && patch.reverted_by.is_none() {
        return Action::Revert { cycle: n };
    }
    ask(spec, n + 1)
}

fn ask(spec: &HealRunSpec, cycle: u32) -> Action {
    Action::AskHealer {
        cycle,
        timeout_seconds: cycle_timeout(&spec.cycle_timeouts, cycle),
    }
}

/// The digests of the patches this run already rejected or reverted, with the cycle of each:
/// asking to gate one again would only get it rejected again.
pub fn spent_patches(status: &HealRunStatus) -> BTreeMap<String, u32> {
    status
        .cycles
        .iter()
        .filter_map(|c| Some((c.patch.as_ref()?, c.cycle)))
        .filter(|(p, _)| !p.gate.accepted || p.reverted_by.is_some())
        .map(|(p, cycle)| (p.digest.clone(), cycle))
        .collect()
}

/// A run that ended without a fix proposes one to people — unless there is nothing a code fix
/// could address (infrastructure, a human's no, a cancel), or nothing the log points at.
fn wants_proposal(status: &HealRunStatus) -> bool {
    status.proposed_fix.is_none()
        && status.phase == Some(HealRunPhase::Failed)
        && matches!(
            status.reason,
            Some(
                HealRunReason::CyclesExhausted
                    | HealRunReason::BudgetExceeded
                    | HealRunReason::Regressed
                    | HealRunReason::HealerUnavailable
                    | HealRunReason::GateRejected
            )
        )
        && latest_observation(status).is_some_and(|o| !o.bug_reports.is_empty())
}

/// The execution before `cycle`'s: the previous verification, or the baseline.
fn previous_observation(status: &HealRunStatus, cycle: u32) -> Option<&Observation> {
    status
        .cycles
        .iter()
        .rev()
        .filter(|c| c.cycle < cycle && !is_reverted(c))
        .find_map(|c| c.execution.as_ref())
        .or(status.baseline.as_ref())
}

/// A cycle regressed when tests fail that the previous execution ran and did not fail. After a
/// run that could not even start its suite (a collection error), newly visible failures are not
/// regressions.
fn regressed(status: &HealRunStatus, cycle: &CycleStatus) -> bool {
    let newly = cycle.tests.as_ref().is_some_and(|t| !t.newly_failing.is_empty());
    newly && previous_observation(status, cycle.cycle).is_some_and(|o| o.tests_ran > 0)
}

fn test_diff(previous: &Observation, now: &Observation) -> TestDiff {
    let before: BTreeSet<&String> = previous.failing_tests.iter().collect();
    let after: BTreeSet<&String> = now.failing_tests.iter().collect();
    let list = |set: Vec<&&String>| set.into_iter().take(MAX_TESTS).map(|s| (*s).clone()).collect();
    TestDiff {
        fixed: list(before.difference(&after).collect()),
        still_failing: list(before.intersection(&after).collect()),
        newly_failing: list(after.difference(&before).collect()),
    }
}

/// Records `input` and returns the next status and the notes to publish. An input that does not
/// answer the current [`next_action`] (a stale or repeated observation) changes nothing.
pub fn apply(spec: &HealRunSpec, status: &HealRunStatus, input: Input, now: Timestamp) -> (HealRunStatus, Vec<Note>) {
    let mut next = status.clone();
    let mut notes = Vec::new();
    if is_terminal(status) {
        if let Input::FixProposed { name } = input
            && status.proposed_fix.is_none()
        {
            notes.push(Note::normal(
                "FixProposed",
                format!("proposed a fix for people to review in CodeFixDDS {name}"),
            ));
            next.proposed_fix = Some(name);
        }
        return (next, notes);
    }
    let expected = next_action(spec, status);
    match (input, expected) {
        (Input::Tick, _) => {}
        (Input::Interrupted, _) => finish(
            &mut next,
            HealRunPhase::Cancelled,
            HealRunReason::Cancelled,
            "interrupted (Ctrl-C or SIGTERM); commits made so far are kept".into(),
            now,
            &mut notes,
        ),
        (
            Input::SourceResolved {
                commit,
                project_type,
                work_order,
            },
            Action::ResolveSource,
        ) => {
            next.project_type = Some(project_type);
            next.work_order = work_order;
            let message = format!("healing {} at commit {}", spec.source.url, short_commit(&commit));
            notes.push(Note::normal("Started", message.clone()));
            next.message = Some(message);
            next.source_commit = Some(commit);
            next.started_at = Some(Time(now));
            next.phase = Some(HealRunPhase::Running);
        }
        (Input::SourceUnavailable { message }, Action::ResolveSource) => finish(
            &mut next,
            HealRunPhase::Failed,
            HealRunReason::SourceUnavailable,
            message,
            now,
            &mut notes,
        ),
        (
            Input::Executed {
                cycle,
                observation,
                outcome,
            },
            Action::Execute { cycle: expected },
        ) if cycle == expected => {
            // An incident the build does not show is still a failure to heal: the baseline's
            // reports from its stack trace are what the healer is asked about.
            match outcome {
                Outcome::Passed if cycle == 0 && spec.incident.is_some() => {
                    if observation.bug_reports.is_empty() {
                        // Nothing points into the repository: "healed" would claim a fix
                        // nobody made.
                        next.baseline = Some(observation);
                        finish(
                            &mut next,
                            HealRunPhase::Failed,
                            HealRunReason::Undiagnosed,
                            "the build passes, and the incident's stack trace names no file of the repository: nothing points at what to fix".into(),
                            now,
                            &mut notes,
                        );
                    } else {
                        record_execution(&mut next, cycle, observation, Outcome::Failed, now, &mut notes);
                    }
                }
                outcome => record_execution(&mut next, cycle, observation, outcome, now, &mut notes),
            }
        }
        (Input::HealerAnswered { cycle, call, patch }, Action::AskHealer { cycle: expected, .. })
            if cycle == expected =>
        {
            // A patch this run already rejected or reverted would only be rejected again, and a
            // deterministic healer (or a model) that repeats itself would repeat it every cycle.
            let repeated = patch
                .as_ref()
                .and_then(|p| spent_patches(&next).get(&p.digest).copied());
            let mut patch = patch;
            if let (Some(earlier), Some(p)) = (repeated, patch.as_mut()) {
                p.gate.accepted = false;
                p.gate.reasons.push(format!(
                    "the same patch as cycle {earlier}, which was rejected or reverted"
                ));
            }
            notes.push(answer_note(cycle, &call, patch.as_ref()));
            next.cycle = cycle;
            next.healer_calls += 1;
            next.message = Some(notes[0].message.clone());
            let healer = call.healer.clone();
            next.cycles.push(CycleStatus {
                cycle,
                execution: None,
                tests: None,
                healer_call: Some(call),
                patch,
                approval_request: None,
            });
            if let Some(earlier) = repeated {
                finish(
                    &mut next,
                    HealRunPhase::Failed,
                    HealRunReason::GateRejected,
                    format!(
                        "cycle {cycle}: {healer} proposed the same patch as cycle {earlier}, which was rejected or reverted; asking again would only get it again"
                    ),
                    now,
                    &mut notes,
                );
            }
        }
        (Input::ApprovalRequested { cycle, name }, Action::RequestApproval { cycle: expected })
            if cycle == expected =>
        {
            let message = format!(
                "cycle {cycle}: the fix waits for approval: kubectl patch codefixdds {name} --type merge -p '{{\"spec\":{{\"approval\":{{...}}}}}}'"
            );
            notes.push(Note::normal("ApprovalRequested", message.clone()));
            next.message = Some(message);
            if let Some(c) = next.cycles.last_mut() {
                c.approval_request = Some(name);
            }
        }
        (Input::Decided { cycle, decision }, Action::AwaitApproval { cycle: expected, name }) if cycle == expected => {
            // `next_action` asks for a decision only on a cycle with a patch; a status edited by
            // hand that breaks this is ignored, not a crash.
            let Some(patch) = next.cycles.last_mut().and_then(|c| c.patch.as_mut()) else {
                return (next, notes);
            };
            match decision.decision {
                Verdict::Approved if decision.patch_digest.as_deref() == Some(patch.digest.as_str()) => {
                    notes.push(Note::normal(
                        "Approved",
                        format!("cycle {cycle}: {} approved the fix in {name}", decision.approved_by),
                    ));
                    patch.approved_by = Some(decision.approved_by);
                }
                Verdict::Approved => notes.push(Note::warning(
                    "ApprovalMismatch",
                    format!(
                        "cycle {cycle}: the approval in {name} names a different patch digest than {}; ignored",
                        patch.digest
                    ),
                )),
                Verdict::Rejected => {
                    let why = decision.reason.clone().unwrap_or_else(|| "no reason given".into());
                    finish(
                        &mut next,
                        HealRunPhase::Failed,
                        HealRunReason::Rejected,
                        format!("{} rejected the fix of cycle {cycle}: {why}", decision.approved_by),
                        now,
                        &mut notes,
                    );
                }
            }
        }
        (
            Input::Committed {
                cycle,
                commit,
                branch,
                diff_stat,
            },
            Action::Commit { cycle: expected },
        ) if cycle == expected => {
            let message = format!("cycle {cycle}: committed {} on {branch}", short_commit(&commit));
            notes.push(Note::normal("Committed", message.clone()));
            next.message = Some(message);
            if let Some(p) = next.cycles.last_mut().and_then(|c| c.patch.as_mut()) {
                p.commit = Some(commit.clone());
            }
            let result = next.result.get_or_insert_with(HealResult::default);
            result.branch = Some(branch);
            result.commit = Some(commit);
            result.diff_stat = Some(diff_stat);
        }
        (Input::CommitFailed { cycle, reason }, Action::Commit { cycle: expected }) if cycle == expected => {
            let message = format!("cycle {cycle}: the patch does not apply to the heal branch: {reason}");
            notes.push(Note::warning("PatchNotApplied", message.clone()));
            next.message = Some(message.clone());
            if let Some(p) = next.cycles.last_mut().and_then(|c| c.patch.as_mut()) {
                p.gate.accepted = false;
                p.gate.reasons.push(message);
            }
        }
        (
            Input::Reverted {
                cycle,
                commit,
                diff_stat,
            },
            Action::Revert { cycle: expected },
        ) if cycle == expected => {
            let Some(last) = next.cycles.last_mut() else {
                return (next, notes);
            };
            let newly = last
                .tests
                .as_ref()
                .map(|t| t.newly_failing.join(", "))
                .unwrap_or_default();
            if let Some(p) = last.patch.as_mut() {
                p.reverted_by = Some(commit.clone());
            }
            let result = next.result.get_or_insert_with(HealResult::default);
            result.commit = Some(commit.clone());
            result.diff_stat = Some(diff_stat);
            let message =
                format!("the fix of cycle {cycle} made tests fail that passed before ({newly}); it was reverted");
            notes.push(Note::warning(
                "Reverted",
                format!("cycle {cycle}: reverted by {}", short_commit(&commit)),
            ));
            if spec.policy.continue_on_regression && cycle < spec.max_cycles {
                next.message = Some(format!("{message}; going on (policy.continueOnRegression)"));
            } else {
                finish(
                    &mut next,
                    HealRunPhase::Failed,
                    HealRunReason::Regressed,
                    message,
                    now,
                    &mut notes,
                );
            }
        }
        // Stale or repeated: the status already moved on.
        _ => {}
    }
    settle(spec, &mut next, now, &mut notes);
    (next, notes)
}

fn record_execution(
    next: &mut HealRunStatus,
    cycle: u32,
    observation: Observation,
    outcome: Outcome,
    now: Timestamp,
    notes: &mut Vec<Note>,
) {
    let failing = observation.failing_tests.len();
    let reports = observation.bug_reports.len();
    if cycle == 0 {
        next.baseline = Some(observation);
    } else {
        let previous = previous_observation(next, cycle).cloned();
        // `next_action` asks to execute a cycle only once it has an entry.
        let Some(entry) = next.cycles.iter_mut().find(|c| c.cycle == cycle) else {
            return;
        };
        entry.tests = previous.map(|p| test_diff(&p, &observation));
        entry.execution = Some(observation);
    }
    let label = if cycle == 0 {
        "baseline".to_owned()
    } else {
        format!("cycle {cycle}")
    };
    match outcome {
        Outcome::Passed => {
            let message = if cycle == 0 {
                "the build already passes: nothing to heal".to_owned()
            } else {
                format!("the build passes after {cycle} cycle(s)")
            };
            finish(next, HealRunPhase::Healed, HealRunReason::Healed, message, now, notes);
        }
        Outcome::Infrastructure { message } => finish(
            next,
            HealRunPhase::Failed,
            HealRunReason::InfraFailure,
            format!("{label}: the environment failed, not the code: {message}"),
            now,
            notes,
        ),
        Outcome::Failed => {
            let message = format!("{label}: {failing} failing test(s), {reports} bug report(s)");
            notes.push(Note::normal("Executed", message.clone()));
            next.message = Some(message);
        }
    }
}

fn answer_note(cycle: u32, call: &HealerCall, patch: Option<&PatchStatus>) -> Note {
    match (call.outcome, patch) {
        (HealerOutcome::Healed, Some(p)) if p.gate.accepted => Note::normal(
            "FixAccepted",
            format!(
                "cycle {cycle}: {} proposed a fix to {} file(s); the gate accepted it",
                call.healer,
                p.files.len()
            ),
        ),
        (HealerOutcome::Healed, Some(p)) => Note::warning(
            "GateRejected",
            format!(
                "cycle {cycle}: the gate rejected {}'s fix: {}",
                call.healer,
                p.gate.reasons.join("; ")
            ),
        ),
        (outcome, _) => Note::warning(
            "HealerFailed",
            format!(
                "cycle {cycle}: no fix from {} ({}): {}",
                call.healer,
                wire_name(&outcome),
                call.reason.clone().unwrap_or_default()
            ),
        ),
    }
}

/// Ends the run: phase, reason, message, result, and a note.
fn finish(
    next: &mut HealRunStatus,
    phase: HealRunPhase,
    reason: HealRunReason,
    message: String,
    now: Timestamp,
    notes: &mut Vec<Note>,
) {
    next.phase = Some(phase);
    next.reason = Some(reason);
    next.message = Some(message.clone());
    next.finished_at = Some(Time(now));
    let fixed = match (next.baseline.as_ref(), latest_observation(next)) {
        (Some(base), Some(last)) => test_diff(base, last).fixed,
        _ => Vec::new(),
    };
    if let Some(result) = next.result.as_mut() {
        result.fixed_tests = fixed;
    } else if !fixed.is_empty() {
        next.result = Some(HealResult {
            fixed_tests: fixed,
            ..HealResult::default()
        });
    }
    let reason_text: &'static str = reason_name(reason);
    if phase == HealRunPhase::Failed {
        notes.push(Note::warning(reason_text, message));
    } else {
        notes.push(Note::normal(reason_text, message));
    }
}

/// The reason as its wire name (also the Event reason and the condition reason).
pub fn reason_name(reason: HealRunReason) -> &'static str {
    match reason {
        HealRunReason::Healed => "Healed",
        HealRunReason::CyclesExhausted => "CyclesExhausted",
        HealRunReason::BudgetExceeded => "BudgetExceeded",
        HealRunReason::InfraFailure => "InfraFailure",
        HealRunReason::Regressed => "Regressed",
        HealRunReason::HealerUnavailable => "HealerUnavailable",
        HealRunReason::GateRejected => "GateRejected",
        HealRunReason::Rejected => "Rejected",
        HealRunReason::Undiagnosed => "Undiagnosed",
        HealRunReason::Cancelled => "Cancelled",
        HealRunReason::SourceUnavailable => "SourceUnavailable",
    }
}

/// After every input: the end conditions that need no observation (cancel, budget, cycles spent,
/// nothing to fix), the phase, and the conditions.
fn settle(spec: &HealRunSpec, next: &mut HealRunStatus, now: Timestamp, notes: &mut Vec<Note>) {
    if !is_terminal(next) {
        if next.phase.is_none() {
            next.phase = Some(HealRunPhase::Pending);
            next.message = Some("waiting to resolve the source revision".into());
        }
        if spec.cancel {
            finish(
                next,
                HealRunPhase::Cancelled,
                HealRunReason::Cancelled,
                "cancelled by spec.cancel; commits made so far are kept".into(),
                now,
                notes,
            );
        } else if let Some(reason) = budget_spent(spec, next, now) {
            finish(
                next,
                HealRunPhase::Failed,
                HealRunReason::BudgetExceeded,
                reason,
                now,
                notes,
            );
        } else if let Action::AskHealer { cycle, .. } = next_action(spec, next) {
            let latest = latest_observation(next);
            let undiagnosed = latest.is_some_and(|o| o.bug_reports.is_empty());
            // A build stopped at its time limit says so: the limit may be what to change.
            let timed_out = latest
                .map(|o| &o.envelope)
                .filter(|e| e.status == RunStatus::Timeout)
                .map(|e| {
                    format!(
                        "{}, and its log names no file and line a fix could target: {}",
                        e.error_message.as_deref().unwrap_or("the build ran out of time"),
                        e.suggested_fix.as_deref().unwrap_or("raise the time limit")
                    )
                });
            if cycle > spec.max_cycles {
                let (reason, message) = out_of_cycles(spec, next);
                finish(next, HealRunPhase::Failed, reason, message, now, notes);
            } else if undiagnosed {
                let message = timed_out.unwrap_or_else(|| {
                    "the build fails but its log names no file and line a fix could target; see the log excerpt".into()
                });
                finish(
                    next,
                    HealRunPhase::Failed,
                    HealRunReason::Undiagnosed,
                    message,
                    now,
                    notes,
                );
            } else if let Some(max) = spec.budget.as_ref().and_then(|b| b.max_healer_calls)
                && next.healer_calls >= max
            {
                finish(
                    next,
                    HealRunPhase::Failed,
                    HealRunReason::BudgetExceeded,
                    format!("the budget of {max} healer call(s) is spent"),
                    now,
                    notes,
                );
            }
        }
        if !is_terminal(next) {
            next.phase = Some(match next_action(spec, next) {
                Action::AwaitApproval { .. } => HealRunPhase::AwaitingApproval,
                Action::ResolveSource => HealRunPhase::Pending,
                _ => HealRunPhase::Running,
            });
        }
    }
    set_conditions(spec, next, now);
}

fn budget_spent(spec: &HealRunSpec, status: &HealRunStatus, now: Timestamp) -> Option<String> {
    let max = spec.budget.as_ref()?.max_duration_seconds?;
    let started = status.started_at.as_ref()?.0;
    let elapsed = now.as_second() - started.as_second();
    (elapsed >= max as i64).then(|| format!("the budget of {max} s is spent ({elapsed} s since the first execution)"))
}

/// Why a run that used every cycle failed: the healer never answered, the gate refused every
/// fix, or the fixes did not make the build green.
fn out_of_cycles(spec: &HealRunSpec, status: &HealRunStatus) -> (HealRunReason, String) {
    let calls: Vec<&HealerCall> = status.cycles.iter().filter_map(|c| c.healer_call.as_ref()).collect();
    let unreachable = calls
        .iter()
        .all(|c| matches!(c.outcome, HealerOutcome::Unreachable | HealerOutcome::Timeout));
    let rejected = status
        .cycles
        .iter()
        .all(|c| c.patch.as_ref().is_some_and(|p| !p.gate.accepted));
    let n = spec.max_cycles;
    if !calls.is_empty() && unreachable {
        (
            HealRunReason::HealerUnavailable,
            format!("the healer could not be reached or timed out in all {n} cycle(s)"),
        )
    } else if !status.cycles.is_empty() && rejected {
        (
            HealRunReason::GateRejected,
            format!("the gate rejected the fix of all {n} cycle(s); see cycles[].patch.gate"),
        )
    } else {
        (
            HealRunReason::CyclesExhausted,
            format!("the build still fails after {n} cycle(s)"),
        )
    }
}

/// Ready, Reconciling and Stalled (kstatus), each with a reason; `lastTransitionTime` moves only
/// when a condition's status changes, so a status write does not wake the controller again.
fn set_conditions(spec: &HealRunSpec, status: &mut HealRunStatus, now: Timestamp) {
    let phase = status.phase.unwrap_or(HealRunPhase::Pending);
    let reason = status.reason.map(reason_name);
    let message = status.message.clone().unwrap_or_default();
    let suspended = spec.suspend && !is_terminal(status);
    let (ready, reconciling, stalled) = match phase {
        HealRunPhase::Healed => (("True", "Healed"), ("False", "Healed"), ("False", "Healed")),
        HealRunPhase::Failed => {
            let r = reason.unwrap_or("Failed");
            (("False", r), ("False", r), ("True", r))
        }
        HealRunPhase::Cancelled => (("False", "Cancelled"), ("False", "Cancelled"), ("False", "Cancelled")),
        HealRunPhase::AwaitingApproval => (
            ("False", "AwaitingApproval"),
            ("False", "AwaitingApproval"),
            ("False", "AwaitingApproval"),
        ),
        _ if suspended => (("False", "Suspended"), ("False", "Suspended"), ("False", "Suspended")),
        _ => (("False", "Healing"), ("True", "Healing"), ("False", "Healing")),
    };
    for (kind, (value, why)) in [
        (condition::READY, ready),
        (condition::RECONCILING, reconciling),
        (condition::STALLED, stalled),
    ] {
        upsert_condition(&mut status.conditions, kind, value, why, &message, now);
    }
}

pub(crate) fn upsert_condition(
    conditions: &mut Vec<Condition>,
    kind: &str,
    value: &str,
    reason: &str,
    message: &str,
    now: Timestamp,
) {
    let message = crate::parse::truncate_bytes(message, 1024).to_owned();
    match conditions.iter_mut().find(|c| c.type_ == kind) {
        Some(c) => {
            if c.status != value {
                c.last_transition_time = Time(now);
            }
            c.status = value.to_owned();
            c.reason = reason.to_owned();
            c.message = message;
        }
        None => conditions.push(Condition {
            type_: kind.to_owned(),
            status: value.to_owned(),
            reason: reason.to_owned(),
            message,
            last_transition_time: Time(now),
            observed_generation: None,
        }),
    }
}

#[cfg(test)]
#[path = "heal_run_tests.rs"]
mod tests;
