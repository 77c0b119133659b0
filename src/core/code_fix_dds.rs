//! The CodeFixDDS controller's decisions (seed 002), without I/O: which of the ten rules a work
//! order passes given the objects it refers to, and where it is in its life given its decision,
//! its deadline and the HealRun that executes it. The operator only gathers these facts
//! (`operator::code_fix_dds`) and writes what this module decides.
//!
//! Where an order stands:
//! - no decision: `Proposed` when every rule holds, else `Invalid` naming the rule — re-checked
//!   whenever a related object changes, so an order applied before its source becomes valid
//!   once the source exists and has failed; `Expired` once `approvalDeadline` passed;
//! - `Rejected`: terminal;
//! - `Approved` and valid: executed by a HealRun — the one that asked for this approval (its
//!   commit of that cycle is the execution), or one the operator creates from the order
//!   ([`execution_run`]) — and `Executing` → `Executed` | `Failed` as that run goes.

use std::time::Duration;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::{SignedDuration, Timestamp};

use crate::api::code_fix_dds::{CodeFixDDSSpec, CodeFixDDSStatus, CodeFixPhase, FixExecution, RuleResult, SourceKind};
use crate::api::heal_run::{ApprovalMode, HealRunPhase, HealRunSpec, HealRunStatus};
use crate::api::shared::{HealerSpec, ToolHealer, Verdict, condition};
use crate::core::heal_run::{Note, latest_observation, upsert_condition};

/// The `tool` that means the operator's configured code healer.
pub const HEALER_TOOL: &str = "healer";

/// Seed 002's hard limit on the files a `code_fix` changes.
pub const MAX_FILES: i64 = 3;

/// Seed 002's ten rules, in its order, by the names `status.validation[].rule` uses.
pub const RULES: [&str; 10] = [
    "IdFormat",
    "Version",
    "Type",
    "StatusProposed",
    "SourceDdsFailed",
    "AllowedPathsSubset",
    "ConstraintsNotLooser",
    "ErrorContextComplete",
    "ErrorMessageLength",
    "NoDuplicate",
];

/// The work order being decided.
#[derive(Debug, Clone, Copy)]
pub struct Order<'a> {
    pub name: &'a str,
    pub spec: &'a CodeFixDDSSpec,
    pub created: Timestamp,
    pub status: &'a CodeFixDDSStatus,
}

impl Order<'_> {
    /// The HealRun cycle this order asks approval for, when a HealRun wrote it to ask.
    pub fn asked_by(&self) -> Option<(&str, u32)> {
        let source = self.spec.source_ref.as_ref()?;
        match (source.kind, source.cycle) {
            (SourceKind::HealRun, Some(cycle)) => Some((source.name.as_str(), cycle)),
            _ => None,
        }
    }

    /// What rule 10 compares: the source, and for a HealRun's approval requests the cycle
    /// (each cycle of a run is its own failed execution, asking its own question).
    pub fn duplicate_key(&self) -> (String, Option<u32>) {
        (self.spec.source_dds.clone(), self.asked_by().map(|(_, cycle)| cycle))
    }

    /// When the order must be decided by, if it has a deadline.
    pub fn deadline(&self) -> Result<Option<Timestamp>, String> {
        let Some(text) = &self.spec.approval_deadline else {
            return Ok(None);
        };
        let duration = parse_duration(text)?;
        self.created
            .checked_add(duration)
            .map(Some)
            .map_err(|e| format!("approvalDeadline {text} is too far away: {e}"))
    }
}

/// A Go-style or friendly duration (`24h`, `1h30m`, `90m`).
pub fn parse_duration(text: &str) -> Result<SignedDuration, String> {
    let duration: SignedDuration = text
        .parse()
        .map_err(|e| format!("approvalDeadline {text:?} is not a duration such as 24h or 1h30m: {e}"))?;
    if duration.is_positive() {
        Ok(duration)
    } else {
        Err(format!("approvalDeadline {text:?} must be positive"))
    }
}

/// A failed execution an order may answer: rule 5's source.
#[derive(Debug, Clone)]
pub enum Source<'a> {
    /// A HealRun (named `HealRun/<name>`, or declaring the DDS id in `spec.ddsId`).
    HealRun {
        name: &'a str,
        spec: &'a HealRunSpec,
        status: Option<&'a HealRunStatus>,
    },
    /// An earlier CodeFixDDS whose `spec.id` is the source id.
    Order {
        name: &'a str,
        spec: &'a CodeFixDDSSpec,
        phase: Option<CodeFixPhase>,
    },
}

impl Source<'_> {
    fn describe(&self) -> String {
        match self {
            Source::HealRun { name, .. } => format!("HealRun {name}"),
            Source::Order { name, .. } => format!("CodeFixDDS {name}"),
        }
    }

    /// The paths the source may change; empty means the whole repository.
    fn allowed_paths(&self) -> &[String] {
        match self {
            Source::HealRun { spec, .. } => &spec.policy.allowed_paths,
            Source::Order { spec, .. } => &spec.allowed_paths,
        }
    }

    fn max_files_changed(&self) -> i64 {
        match self {
            Source::HealRun { spec, .. } => i64::from(spec.policy.max_files_changed),
            Source::Order { spec, .. } => spec.constraints.max_files_changed,
        }
    }

    /// Whether the source has failed — the HealRun's approval requests stand on a run that has
    /// not ended: its build failed and the run asks this very order.
    fn failed(&self, order: &Order<'_>) -> Result<(), String> {
        match self {
            Source::HealRun { name, status, .. } => {
                let phase = status.and_then(|s| s.phase);
                if phase == Some(HealRunPhase::Failed) {
                    return Ok(());
                }
                let asks = status.is_some_and(|s| {
                    s.cycles
                        .iter()
                        .any(|c| c.approval_request.as_deref() == Some(order.name))
                });
                if asks {
                    return Ok(());
                }
                Err(format!(
                    "HealRun {name} has not failed (phase {}); an order answers a failed execution — it becomes valid by itself if the run fails",
                    phase.map(|p| format!("{p:?}")).unwrap_or_else(|| "not started".into())
                ))
            }
            Source::Order { name, phase, .. } => match phase {
                Some(CodeFixPhase::Failed) => Ok(()),
                other => Err(format!(
                    "CodeFixDDS {name} has not failed (phase {}); it becomes valid by itself if that order's execution fails",
                    other.map(|p| format!("{p:?}")).unwrap_or_else(|| "none yet".into())
                )),
            },
        }
    }
}

/// Another order with the same [`Order::duplicate_key`].
#[derive(Debug, Clone)]
pub struct Rival {
    pub name: String,
    pub created: Timestamp,
}

/// Everything the decision needs besides the order.
#[derive(Debug, Clone, Default)]
pub struct Facts<'a> {
    /// Every object that matches `sourceDds`: none (missing), one, or several (ambiguous).
    pub sources: Vec<Source<'a>>,
    /// Other orders in the namespace with the same duplicate key.
    pub rivals: Vec<Rival>,
    /// The HealRun executing the order, when there is one: the run that asked for this
    /// approval, or the one created from the order.
    pub execution: Option<Execution<'a>>,
    /// The executor tools the operator is configured with (`--tool`), besides the code healer.
    pub tools: Vec<&'a str>,
}

/// The HealRun that executes an approved order.
#[derive(Debug, Clone, Copy)]
pub struct Execution<'a> {
    pub name: &'a str,
    pub status: Option<&'a HealRunStatus>,
}

/// What the controller does with the order after writing its status.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Next {
    /// Nothing until the order or a related object changes.
    Wait,
    /// Look again at this time (the approval deadline).
    At(Timestamp),
    /// Create the HealRun that executes the approved order ([`execution_run`]).
    Execute,
}

/// The decision: the status to write, what to do next, and the Event of a transition.
#[derive(Debug, Clone)]
pub struct Decision {
    pub status: CodeFixDDSStatus,
    pub next: Next,
    pub note: Option<Note>,
}

/// Checks the ten rules: those that need only the order (also CEL rules in the CRD, checked
/// again so that an order stored before a rule existed is judged the same) and those that need
/// the source and the other orders.
pub fn validate(order: &Order<'_>, facts: &Facts<'_>) -> Vec<RuleResult> {
    let spec = order.spec;
    let id_ok = {
        let id = spec.id.as_bytes();
        id.len() == 20
            && spec.id.starts_with("DDS-FIX-")
            && id[8..16].iter().all(u8::is_ascii_digit)
            && id[16] == b'-'
            && id[17..].iter().all(u8::is_ascii_digit)
    };
    let context = &spec.error_context;
    let results: [Result<(), String>; 10] = [
        check(id_ok, || {
            format!("id {:?} must have the form DDS-FIX-YYYYMMDD-XXX", spec.id)
        }),
        check(spec.version == 2, || format!("version is {}, must be 2", spec.version)),
        check(spec.dds_type == "code_fix", || {
            format!("type is {:?}, must be \"code_fix\"", spec.dds_type)
        }),
        // "Never approved on creation": the API server refuses an order created with an
        // approval (a CEL transition rule), so every stored order was created proposed.
        Ok(()),
        source(order, facts).and_then(|s| s.failed(order)),
        source(order, facts).and_then(|s| paths_subset(spec, s.allowed_paths(), &s.describe())),
        source(order, facts).and_then(|s| constraints_not_looser(spec, s.max_files_changed(), &s.describe())),
        check(
            !context.original_dds.is_empty() && !context.error_message.is_empty() && !context.failed_at.is_empty(),
            || "errorContext needs originalDds, errorMessage and failedAt, all non-empty".into(),
        )
        .and_then(|()| {
            check(context.original_dds == spec.source_dds, || {
                format!(
                    "errorContext.originalDds {:?} must equal sourceDds {:?}",
                    context.original_dds, spec.source_dds
                )
            })
        }),
        check(context.error_message.chars().count() <= 500, || {
            format!(
                "errorContext.errorMessage has {} characters, at most 500 are allowed: keep the first 500",
                context.error_message.chars().count()
            )
        }),
        standing(order, &facts.rivals),
    ];
    RULES
        .iter()
        .zip(results)
        .map(|(rule, result)| RuleResult {
            rule: (*rule).to_owned(),
            passed: result.is_ok(),
            message: result.err(),
        })
        .collect()
}

fn check(holds: bool, why: impl FnOnce() -> String) -> Result<(), String> {
    if holds { Ok(()) } else { Err(why()) }
}

/// Rule 5's source: exactly one object must match `sourceDds`.
fn source<'f>(order: &Order<'_>, facts: &'f Facts<'_>) -> Result<&'f Source<'f>, String> {
    match facts.sources.as_slice() {
        [one] => Ok(one),
        [] => Err(format!(
            "no source named {:?} in this namespace: create the failed HealRun (named in sourceDds as HealRun/<name>, or with spec.ddsId: {}) or the failed CodeFixDDS with that spec.id — the order becomes valid by itself when it appears",
            order.spec.source_dds, order.spec.source_dds
        )),
        several => Err(format!(
            "sourceDds {:?} is ambiguous: {} all match it; give each DDS id to one object only",
            order.spec.source_dds,
            several.iter().map(Source::describe).collect::<Vec<_>>().join(", ")
        )),
    }
}

/// Rule 6, seed 002's `validate_allowed_paths`: each path starts with one of the source's
/// (the whole repository when the source names none) and never climbs out of the repository.
fn paths_subset(spec: &CodeFixDDSSpec, source_paths: &[String], source: &str) -> Result<(), String> {
    for path in &spec.allowed_paths {
        if path.starts_with('/') || path.split(['/', '\\']).any(|part| part == "..") || path.contains("..") {
            return Err(format!(
                "allowedPaths entry {path:?} is not a path inside the repository (no '..', no leading '/')"
            ));
        }
        if !source_paths.is_empty() && !source_paths.iter().any(|s| path.starts_with(s.as_str())) {
            return Err(format!(
                "allowedPaths entry {path:?} is outside {source}'s allowed paths ({}): a fix may not widen the scope — remove it or narrow it",
                source_paths.join(", ")
            ));
        }
    }
    Ok(())
}

/// Rule 7: at most `min(source's maxFilesChanged, 3)` files, no new dependencies, no refactor.
fn constraints_not_looser(spec: &CodeFixDDSSpec, source_max: i64, source: &str) -> Result<(), String> {
    let c = &spec.constraints;
    let limit = source_max.clamp(1, MAX_FILES);
    if c.max_files_changed > limit {
        return Err(format!(
            "constraints.maxFilesChanged is {}, but may be at most {limit} (min of {source}'s {source_max} and seed 002's {MAX_FILES})",
            c.max_files_changed
        ));
    }
    if !c.no_new_dependencies || !c.no_refactor {
        return Err("constraints.noNewDependencies and constraints.noRefactor must both be true for a code_fix".into());
    }
    Ok(())
}

/// Rule 10: of the orders answering the same failure, the oldest (creation time, then name)
/// stands.
fn standing(order: &Order<'_>, rivals: &[Rival]) -> Result<(), String> {
    let ours = (order.created, order.name);
    match rivals
        .iter()
        .filter(|r| r.name != order.name)
        .min_by_key(|r| (r.created, r.name.as_str()))
    {
        Some(first) if (first.created, first.name.as_str()) < ours => Err(format!(
            "CodeFixDDS {} already answers sourceDds {:?} (created {}); one order per source — a rejected one is never replaced: delete this order, or delete {} first",
            first.name, order.spec.source_dds, first.created, first.name
        )),
        _ => Ok(()),
    }
}

/// Decides the order's status and next step at `now`.
pub fn decide(order: &Order<'_>, facts: &Facts<'_>, now: Timestamp) -> Decision {
    let previous = order.status;
    let mut status = previous.clone();
    // Once approved work is under way, the verdict the approval was given on stands: objects
    // changing around a running execution (another run declaring the same DDS id, a source
    // narrowed afterwards) do not turn it invalid half-way.
    let started = matches!(previous.phase, Some(CodeFixPhase::Approved | CodeFixPhase::Executing));
    if !started {
        status.validation = validate(order, facts);
    }
    let broken = status.validation.iter().find(|r| !r.passed).cloned();
    let mut next = Next::Wait;
    let terminal = matches!(
        previous.phase,
        Some(CodeFixPhase::Executed | CodeFixPhase::Failed | CodeFixPhase::Rejected | CodeFixPhase::Expired)
    );
    let deadline = order.deadline();
    let (phase, reason, message): (CodeFixPhase, String, String) = if terminal {
        (
            previous.phase.unwrap_or(CodeFixPhase::Failed),
            previous.reason.clone().unwrap_or_default(),
            previous.message.clone().unwrap_or_default(),
        )
    } else if let Some(decision) = order
        .spec
        .approval
        .as_ref()
        // A decision seen before the deadline stands; one first seen after it came too late.
        .filter(|_| previous.approved_at.is_some() || !past(&deadline, now))
    {
        status.approved_by = Some(decision.approved_by.clone());
        status.approved_at.get_or_insert(Time(now));
        match decision.decision {
            Verdict::Rejected => (
                CodeFixPhase::Rejected,
                "Rejected".into(),
                format!(
                    "rejected by {}{}; it is never executed or proposed again",
                    decision.approved_by,
                    decision.reason.as_deref().map(|r| format!(": {r}")).unwrap_or_default()
                ),
            ),
            Verdict::Approved => match &broken {
                Some(rule) => invalid(rule, " — it was approved, but an invalid order is never executed"),
                None => {
                    let (phase, reason, message, wanted) = executed(order, facts, &mut status);
                    if wanted {
                        next = Next::Execute;
                    }
                    (phase, reason, message)
                }
            },
        }
    } else if past(&deadline, now) {
        let text = order.spec.approval_deadline.as_deref().unwrap_or_default();
        (
            CodeFixPhase::Expired,
            "DeadlineExpired".into(),
            format!(
                "not decided within approvalDeadline {text} of its creation; it is never executed — create a new order to try again"
            ),
        )
    } else if let Err(why) = &deadline {
        (CodeFixPhase::Invalid, "ApprovalDeadline".into(), why.clone())
    } else if let Some(rule) = &broken {
        if let Ok(Some(at)) = deadline {
            next = Next::At(at);
        }
        invalid(rule, "")
    } else {
        if let Ok(Some(at)) = deadline {
            next = Next::At(at);
        }
        (
            CodeFixPhase::Proposed,
            "AwaitingDecision".into(),
            format!(
                "valid; waiting for a person allowed the approve verb: kubeheal approve cfd {} (or reject with a reason)",
                order.name
            ),
        )
    };
    status.phase = Some(phase);
    status.reason = Some(reason.clone());
    status.message = Some(message.clone());
    set_conditions(&mut status, phase, &reason, &message, now);
    let note = (previous.phase != Some(phase) || previous.reason.as_deref() != Some(reason.as_str())).then(|| Note {
        warning: matches!(
            phase,
            CodeFixPhase::Invalid | CodeFixPhase::Failed | CodeFixPhase::Expired
        ),
        reason: phase_reason(phase),
        message,
    });
    Decision { status, next, note }
}

/// Ends an approved order `Failed` for a reason only the driver can find (e.g. nothing to
/// execute on), with its conditions and the Event to publish.
pub fn fail(status: &mut CodeFixDDSStatus, reason: &str, message: String, now: Timestamp) -> Note {
    status.phase = Some(CodeFixPhase::Failed);
    status.reason = Some(reason.to_owned());
    status.message = Some(message.clone());
    set_conditions(status, CodeFixPhase::Failed, reason, &message, now);
    Note {
        warning: true,
        reason: phase_reason(CodeFixPhase::Failed),
        message,
    }
}

fn past(deadline: &Result<Option<Timestamp>, String>, now: Timestamp) -> bool {
    matches!(deadline, Ok(Some(at)) if now >= *at)
}

fn invalid(rule: &RuleResult, suffix: &str) -> (CodeFixPhase, String, String) {
    (
        CodeFixPhase::Invalid,
        rule.rule.clone(),
        format!(
            "rule {} broken: {}{suffix}",
            rule.rule,
            rule.message.as_deref().unwrap_or("no reason given")
        ),
    )
}

/// Where an approved, valid order is in its execution; the last value says whether the
/// execution run must be created.
fn executed(
    order: &Order<'_>,
    facts: &Facts<'_>,
    status: &mut CodeFixDDSStatus,
) -> (CodeFixPhase, String, String, bool) {
    let Some(run) = facts.execution else {
        if let Some(gone) = status.execution.as_ref().and_then(|e| e.heal_run.clone()) {
            // Executed once already: a deleted run is not replaced by a second execution.
            return (
                CodeFixPhase::Failed,
                "ExecutionGone".into(),
                format!(
                    "HealRun {gone}, which was executing the order, no longer exists; an order is executed once — create a new order to try again"
                ),
                false,
            );
        }
        return match order.asked_by() {
            Some((name, _)) => (
                CodeFixPhase::Failed,
                "SourceGone".into(),
                format!("HealRun {name}, which asked for this approval and would commit the patch, no longer exists"),
                false,
            ),
            None if order.spec.tool != HEALER_TOOL && !facts.tools.contains(&order.spec.tool.as_str()) => (
                CodeFixPhase::Failed,
                "ToolUnavailable".into(),
                format!(
                    "tool {:?} is not an executor this operator has (it has {}): configure it with the operator's --tool {}=IMAGE (the chart's tools), or create a new order with one of those",
                    order.spec.tool,
                    std::iter::once(HEALER_TOOL)
                        .chain(facts.tools.iter().copied())
                        .map(|t| format!("{t:?}"))
                        .collect::<Vec<_>>()
                        .join(", "),
                    order.spec.tool
                ),
                false,
            ),
            None => (
                CodeFixPhase::Approved,
                "Approved".into(),
                "approved; starting the HealRun that executes it".into(),
                true,
            ),
        };
    };
    let run_status = run.status.cloned().unwrap_or_default();
    let mut execution = FixExecution {
        heal_run: Some(run.name.to_owned()),
        ..status.execution.clone().unwrap_or_default()
    };
    // The patch that is this order's execution: the approved cycle's, or for a run created
    // from the order, the one it committed.
    let cycle = match order.asked_by() {
        Some((_, cycle)) => run_status.cycles.iter().find(|c| c.cycle == cycle),
        None => run_status
            .cycles
            .iter()
            .rev()
            .find(|c| c.patch.as_ref().is_some_and(|p| p.commit.is_some())),
    };
    let patch = cycle.and_then(|c| c.patch.as_ref());
    if let Some(patch) = patch {
        execution.files_changed = patch.files.iter().take(50).map(|f| f.path.clone()).collect();
        execution.commit = patch.commit.clone();
    }
    execution.constraint_violations = run_status
        .cycles
        .iter()
        .filter_map(|c| c.patch.as_ref())
        .filter(|p| !p.gate.accepted)
        .flat_map(|p| p.gate.reasons.iter().cloned())
        .take(20)
        .collect();
    if let Some(observation) = latest_observation(&run_status) {
        execution.job_name = Some(observation.envelope.run_id.clone());
        execution.envelope = Some(observation.envelope.clone());
    }
    if let Some(result) = &run_status.result {
        execution.branch = result.branch.clone().or(execution.branch);
        execution.diff_stat = result.diff_stat.clone().or(execution.diff_stat);
    }
    let reverted = patch.is_some_and(|p| p.reverted_by.is_some());
    let committed = patch.is_some_and(|p| p.commit.is_some());
    // What the run said, and when no patch reached the gate, why the healer's answer did not.
    let healer_reason = run_status
        .cycles
        .iter()
        .rev()
        .find_map(|c| c.healer_call.as_ref().and_then(|h| h.reason.clone()));
    let run_message = match (&healer_reason, patch) {
        (Some(why), None) => format!("{}; the healer: {why}", run_status.message.clone().unwrap_or_default()),
        _ => run_status.message.clone().unwrap_or_default(),
    };
    let outcome = match run_status.phase {
        Some(HealRunPhase::Healed) if committed && !reverted => (
            CodeFixPhase::Executed,
            "Executed".into(),
            format!(
                "committed {} on {} and the build passes",
                execution
                    .commit
                    .as_deref()
                    .map(crate::core::format::short_commit)
                    .unwrap_or("the fix"),
                execution.branch.as_deref().unwrap_or("the heal branch")
            ),
        ),
        Some(HealRunPhase::Healed) if order.asked_by().is_some() => (
            CodeFixPhase::Failed,
            "NotCommitted".into(),
            format!("HealRun {} ended healed without this patch: {run_message}", run.name),
        ),
        Some(HealRunPhase::Healed | HealRunPhase::Failed | HealRunPhase::Cancelled) => {
            let reason = if execution.constraint_violations.is_empty() {
                "ExecutionFailed"
            } else {
                "ConstraintViolated"
            };
            (
                CodeFixPhase::Failed,
                reason.into(),
                format!("HealRun {} ended without a verified fix: {run_message}", run.name),
            )
        }
        _ if reverted => (
            CodeFixPhase::Failed,
            "Reverted".into(),
            format!("HealRun {} reverted the patch: it broke other tests", run.name),
        ),
        _ if committed => (
            CodeFixPhase::Executing,
            "Verifying".into(),
            format!("committed; HealRun {} re-runs the build", run.name),
        ),
        _ if order.asked_by().is_some() => (
            CodeFixPhase::Approved,
            "Approved".into(),
            format!("approved; HealRun {} commits the patch next", run.name),
        ),
        _ => (
            CodeFixPhase::Executing,
            "Executing".into(),
            format!("HealRun {} is executing the order: {run_message}", run.name),
        ),
    };
    status.execution = Some(execution);
    (outcome.0, outcome.1, outcome.2, false)
}

fn phase_reason(phase: CodeFixPhase) -> &'static str {
    match phase {
        CodeFixPhase::Proposed => "Proposed",
        CodeFixPhase::Approved => "Approved",
        CodeFixPhase::Executing => "Executing",
        CodeFixPhase::Executed => "Executed",
        CodeFixPhase::Failed => "Failed",
        CodeFixPhase::Rejected => "Rejected",
        CodeFixPhase::Invalid => "Invalid",
        CodeFixPhase::Expired => "Expired",
    }
}

/// kstatus: `Ready` once executed; `Reconciling` while approved work is under way; `Stalled`
/// when only a person can move it (invalid, failed, expired). Proposed and Rejected are
/// neither: the first waits for a decision, the second is one.
fn set_conditions(status: &mut CodeFixDDSStatus, phase: CodeFixPhase, reason: &str, message: &str, now: Timestamp) {
    let (ready, reconciling, stalled) = match phase {
        CodeFixPhase::Executed => ("True", "False", "False"),
        CodeFixPhase::Approved | CodeFixPhase::Executing => ("False", "True", "False"),
        CodeFixPhase::Invalid | CodeFixPhase::Failed | CodeFixPhase::Expired => ("False", "False", "True"),
        CodeFixPhase::Proposed | CodeFixPhase::Rejected => ("False", "False", "False"),
    };
    for (kind, value) in [
        (condition::READY, ready),
        (condition::RECONCILING, reconciling),
        (condition::STALLED, stalled),
    ] {
        upsert_condition(&mut status.conditions, kind, value, reason, message, now);
    }
}

/// The HealRun that executes an approved order that no HealRun asked for: the source run's
/// build and healer (when the source leads to a HealRun), the order's target, one heal cycle,
/// and a policy that is the order's constraints — its allowed paths, its file limit, no new
/// dependencies, changes only near the reported lines — committed without asking again (the
/// order was the question). `base` is the HealRun the order's source leads to, if any.
pub fn execution_run(order: &Order<'_>, base: Option<&HealRunSpec>) -> Result<HealRunSpec, String> {
    let source = order
        .spec
        .target
        .clone()
        .or_else(|| base.map(|b| b.source.clone()))
        .ok_or_else(|| {
            "the order names no spec.target and its source leads to no HealRun: add spec.target (the repository to fix)"
                .to_owned()
        })?;
    let mut spec: HealRunSpec = serde_json::from_value(serde_json::json!({ "source": source }))
        .map_err(|e| format!("spec.target is not a usable source: {e}"))?;
    if let Some(base) = base {
        spec.executor = base.executor.clone();
        spec.healer = base.healer.clone();
        spec.delivery.push = base.delivery.push;
        spec.delivery.author = base.delivery.author.clone();
        spec.policy.change_window_lines = base.policy.change_window_lines;
        spec.policy.protected_paths = base.policy.protected_paths.clone();
    }
    // An order never names credentials (its author is not the source run's owner): the run
    // that executes it borrows the source run's, and only for that run's own repository.
    spec.source.secret_ref = base
        .filter(|b| b.source.url == spec.source.url)
        .and_then(|b| b.source.secret_ref.clone());
    // `tool: healer` is the source run's (or the operator's) code healer; any other tool is
    // the executor the operator is configured with under that name.
    if order.spec.tool != HEALER_TOOL {
        spec.healer = Some(HealerSpec {
            tool: Some(ToolHealer {
                name: order.spec.tool.clone(),
            }),
            ..HealerSpec::default()
        });
    }
    spec.max_cycles = 1;
    spec.work_order = Some(order.name.to_owned());
    spec.policy.approval = ApprovalMode::Automatic;
    spec.policy.allowed_paths = order.spec.allowed_paths.clone();
    spec.policy.max_files_changed =
        u32::try_from(order.spec.constraints.max_files_changed.clamp(1, MAX_FILES)).unwrap_or(1);
    spec.policy.no_new_dependencies = true;
    spec.policy.allow_test_changes = order
        .spec
        .allowed_paths
        .iter()
        .any(|p| crate::core::gate::is_test_file(p));
    spec.delivery.branch = Some(format!(
        "kubeheal/{}",
        crate::parse::truncate_bytes(order.name, 200).trim_end_matches('-')
    ));
    Ok(spec)
}

/// The healer's task for a HealRun that executes an order: the goal, the instructions and the
/// error context, as the order states them.
pub fn task(spec: &CodeFixDDSSpec) -> String {
    let mut text = format!(
        "Work order {} ({}): {}\nInstructions:\n",
        spec.id, spec.source_dds, spec.goal
    );
    for step in &spec.instructions {
        text.push_str("- ");
        text.push_str(step);
        text.push('\n');
    }
    text.push_str(&format!(
        "Error of the failed execution (at {}):\n{}\nChange only: {}\n",
        spec.error_context.failed_at,
        spec.error_context.error_message,
        spec.allowed_paths.join(", ")
    ));
    text
}

/// How often an order in a phase that waits on nothing but a watch is looked at anyway.
pub const RECHECK: Duration = Duration::from_secs(600);

#[cfg(test)]
#[path = "code_fix_dds_tests.rs"]
mod tests;
