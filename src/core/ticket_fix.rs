//! A HealerTicket's fixing decisions (seed 004's propose → approve → apply), after intake
//! (`core::healer_ticket`) has queued it: what the controller does next (`next_step`), where the
//! fix goes (`effective_target`, `contract_path`), what a model's answer may contain
//! (`sanitize`), what a proposal changes (`changes`) and the digest an approval is bound to
//! (`patch_digest`). Pure: the operator's `ticket_fix` driver does the reading and writing.

use std::collections::BTreeMap;

use serde_yaml_ng::{Mapping, Value};

use crate::api::heal_run::{HealRunPhase, HealRunSpec, HealRunStatus, Incident};
use crate::api::healer_ticket::{
    ApplyStatus, FixableBy, HealerTicketSpec, HealerTicketStatus, ProposalMethod, TicketPhase, TicketTarget,
};
use crate::api::shared::{HealerSpec, Verdict};
use crate::core::patch::{digest, unified_diff};

/// Seed 004's layout: `entity/helpdesk/ticket` → `domains/helpdesk/entities/ticket.contract.yaml`.
pub const DEFAULT_LAYOUT: &str = "domains/{domain}/{kinds}/{name}.contract.yaml";

/// The properties a contract's field may have (seed 004's whitelist).
pub const FIELD_PROPERTIES: &[&str] = &[
    "type",
    "required",
    "description",
    "enum",
    "default",
    "immutable",
    "computed",
    "constraints",
    "references",
    "format",
    "items_type",
];

/// The keys a field's `constraints` may have (seed 004's whitelist).
pub const CONSTRAINT_KEYS: &[&str] = &["min", "max", "maxLength", "minLength", "pattern"];

/// Most changes a proposal lists; a longer list ends in `… and N more`.
const MAX_CHANGES: usize = 50;

/// What the controller does next for a ticket.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// Nothing now: intake has not queued it, it waits for a decision, or it has ended.
    Wait,
    /// A contract ticket with nowhere to fix it: the message says what is missing.
    Unconfigured(String),
    /// Ask for a proposal (tier 1: the normaliser, then applied at once; tiers 2-3: the model).
    Propose,
    /// Apply the proposal: tier 1, or approved with the proposal's digest.
    Apply,
    /// The fix is pushed and the target has a regenerate command: run it (once), wait for it,
    /// and commit what it changed (or revert the fix when it failed).
    Regenerate,
    /// A human rejected the proposal: end `Rejected` with their reason.
    Reject,
    /// A ticket fixed in code: create its HealRun, or follow the one it has.
    HealRun,
    /// End `Failed` with this message (nothing applied).
    Fail(String),
}

/// The HealRun that heals a ticket fixed in code: one per ticket, so one per fingerprint at a
/// time (a recurrence is a ticket of its own, and gets a run of its own).
pub fn heal_run_name(ticket: &str) -> String {
    format!(
        "{}-heal",
        crate::parse::truncate_bytes(ticket, 240).trim_end_matches('-')
    )
}

/// The HealRun for a ticket fixed in code: the ticket's template, with the error and its stack
/// trace as the run's incident.
pub fn heal_run_spec(template: &HealRunSpec, spec: &HealerTicketSpec, ticket: &str) -> HealRunSpec {
    let mut run = template.clone();
    run.incident = Some(Incident {
        error: spec.error.clone(),
        stacktrace: spec.stacktrace.clone(),
        ticket: Some(ticket.to_owned()),
    });
    run
}

/// Where a ticket fixed in code stands, from its HealRun's status (`None`: not created yet):
/// the ticket's phase, why, and the fix's commit once healed. A run that healed without
/// committing anything did not fix the incident: the ticket fails saying so.
pub fn follow(run_name: &str, run: Option<&HealRunStatus>) -> (TicketPhase, String, Option<ApplyStatus>) {
    let said = run.and_then(|r| r.message.clone()).unwrap_or_default();
    let phase = run.and_then(|r| r.phase);
    match phase {
        Some(HealRunPhase::AwaitingApproval) => (
            TicketPhase::Proposed,
            format!("HealRun {run_name} proposed a fix that waits for approval: {said}"),
            None,
        ),
        Some(HealRunPhase::Healed) => {
            let result = run.and_then(|r| r.result.as_ref());
            match result.and_then(|r| r.commit.clone()) {
                Some(commit) => (
                    TicketPhase::Applied,
                    format!("healed by HealRun {run_name}: {said}"),
                    Some(ApplyStatus {
                        branch: result.and_then(|r| r.branch.clone()),
                        commit: Some(commit),
                        rolled_back: false,
                        error: None,
                    }),
                ),
                None => (
                    TicketPhase::Failed,
                    format!(
                        "HealRun {run_name} committed no fix ({said}): the stack trace names no file of the repository, or the build does not run the failing code"
                    ),
                    None,
                ),
            }
        }
        Some(HealRunPhase::Failed | HealRunPhase::Cancelled) => (
            TicketPhase::Failed,
            format!("HealRun {run_name} ended without a fix: {said}"),
            None,
        ),
        _ if run.is_none() => (TicketPhase::Analyzing, format!("creating HealRun {run_name}"), None),
        _ => (
            TicketPhase::Analyzing,
            format!("healing in HealRun {run_name}: {said}"),
            None,
        ),
    }
}

/// `spec.target` with what it leaves out taken from the operator's `--ticket-target`.
pub fn effective_target(target: &TicketTarget, defaults: Option<&TicketTarget>) -> TicketTarget {
    let Some(defaults) = defaults else {
        return target.clone();
    };
    TicketTarget {
        contract_fqn: target.contract_fqn.clone(),
        path: target.path.clone(),
        heal_run: target.heal_run.clone(),
        repository: target.repository.clone().or_else(|| defaults.repository.clone()),
        contract_layout: target
            .contract_layout
            .clone()
            .or_else(|| defaults.contract_layout.clone()),
        contract_schema: target
            .contract_schema
            .clone()
            .or_else(|| defaults.contract_schema.clone()),
        healer: target.healer.clone().or_else(|| defaults.healer.clone()),
        validate: target.validate.clone().or_else(|| defaults.validate.clone()),
        regenerate: target.regenerate.clone().or_else(|| defaults.regenerate.clone()),
    }
}

/// Why `healer` cannot propose contract fixes, if it cannot: exactly one of `openAI` (a chat
/// model) and `codeHealerApi` (seed 000) must be set. The CRD's rules say so for a ticket's own
/// target; the operator's `--ticket-target` file is checked with this.
pub fn healer_problem(healer: &HealerSpec) -> Option<String> {
    match (&healer.open_ai, &healer.code_healer_api) {
        (Some(_), None) | (None, Some(_)) => None,
        (Some(_), Some(_)) => Some(
            "healer names both openAI and codeHealerApi: set one, the service that proposes contract fixes".into(),
        ),
        (None, None) => Some(
            "healer must be openAI or codeHealerApi: contract fixes are proposed by an OpenAI-compatible model or a Code Healer API service (builtin and tool fix code, not contracts)".into(),
        ),
    }
}

/// What the controller does next for a ticket whose fix goes to `target` (already merged with
/// the operator's defaults). `default_code_healer`: the operator has a Code Healer API of its own
/// (`CODE_HEALER_URL`), which a `codeHealerApi` without a URL asks.
pub fn next_step(
    spec: &HealerTicketSpec,
    status: &HealerTicketStatus,
    target: &TicketTarget,
    default_code_healer: bool,
) -> Step {
    let Some(classification) = &status.classification else {
        return Step::Wait;
    };
    let proposal = status.proposal.as_ref();
    match status.phase {
        // A ticket fixed in code follows its HealRun until the run ends.
        Some(TicketPhase::Queued | TicketPhase::Analyzing | TicketPhase::Proposed)
            if classification.fixable_by == FixableBy::Code && target.heal_run.is_some() =>
        {
            Step::HealRun
        }
        Some(TicketPhase::Queued | TicketPhase::Analyzing) if classification.fixable_by == FixableBy::Code => {
            Step::Unconfigured(
                "fixed in code, but the ticket names no HealRun to heal it with: set spec.target.healRun".into(),
            )
        }
        Some(TicketPhase::Queued | TicketPhase::Analyzing) => {
            if classification.fixable_by != FixableBy::Contract {
                return Step::Wait;
            }
            if target.contract_fqn.is_none() {
                return Step::Unconfigured(
                    "a contract fix needs the contract: the ticket names none (set spec.target.contractFqn)".into(),
                );
            }
            let mut missing = Vec::new();
            if target.repository.is_none() {
                missing.push("the repository the contract lives in (target.repository)");
            }
            if target.contract_schema.is_none() && target.validate.is_none() {
                missing.push(
                    "what contracts must satisfy (target.contractSchema, a JSON Schema, or target.validate, a command)",
                );
            }
            if classification.tier > 1 && target.healer.is_none() {
                missing.push(
                    "the model that proposes structural and runtime fixes (target.healer.openAI or target.healer.codeHealerApi)",
                );
            }
            // Like the other settings, a URL set later (in the spec, or the operator started with
            // one) lets the ticket go on; failing it would leave nothing to resume.
            let api_without_url = target.healer.as_ref().is_some_and(|h| {
                h.open_ai.is_none() && h.code_healer_api.as_ref().is_some_and(|api| api.url.is_none())
            });
            if classification.tier > 1 && api_without_url && !default_code_healer {
                missing.push(
                    "the Code Healer API's URL (target.healer.codeHealerApi.url, or the operator's CODE_HEALER_URL)",
                );
            }
            if missing.is_empty() {
                Step::Propose
            } else {
                Step::Unconfigured(format!(
                    "waiting for {}: set it in the ticket's spec.target or the operator's --ticket-target",
                    missing.join(", ")
                ))
            }
        }
        Some(TicketPhase::Proposed | TicketPhase::Approved) => {
            let go = match (&spec.decision, proposal) {
                (_, None) => Step::Propose,
                // Only a tier-1 ticket's deterministic fix goes without a person.
                (None, Some(p)) if p.method == ProposalMethod::Deterministic && classification.tier == 1 => Step::Apply,
                (None, Some(_)) => Step::Wait,
                (Some(decision), Some(p)) => match decision.decision {
                    Verdict::Rejected => Step::Reject,
                    // Checked again at every step: an approval applies only the patch it names.
                    Verdict::Approved if decision.patch_digest.as_deref() == Some(p.patch_digest.as_str()) => {
                        Step::Apply
                    }
                    Verdict::Approved => Step::Fail(format!(
                        "the approval by {} is for patch {}, but the proposal is patch {}: nothing was applied (approve the proposal shown by `kubeheal ticket show`)",
                        decision.approved_by,
                        decision.patch_digest.as_deref().unwrap_or("(none)"),
                        p.patch_digest
                    )),
                },
            };
            // A pushed fix waits in `Approved` for its regeneration; without a regenerate command
            // (or one removed meanwhile) the apply finds its pushed commit and ends `Applied`.
            let pushed = status.apply.as_ref().is_some_and(|a| a.commit.is_some());
            if go == Step::Apply && status.phase == Some(TicketPhase::Approved) && pushed && target.regenerate.is_some()
            {
                Step::Regenerate
            } else {
                go
            }
        }
        _ => Step::Wait,
    }
}

/// The contract's file for `fqn` (`kind/domain/name`, or `kind/name`) under `layout`.
pub fn contract_path(fqn: &str, layout: Option<&str>) -> Result<String, String> {
    let parts: Vec<&str> = fqn.split('/').collect();
    let (kind, domain, name) = match parts.as_slice() {
        [kind, domain, name] => (*kind, *domain, *name),
        [kind, name] => (*kind, "", *name),
        _ => {
            return Err(format!(
                "contract FQN {fqn} is not kind/domain/name (e.g. entity/helpdesk/ticket)"
            ));
        }
    };
    let safe = |part: &str| {
        !part.is_empty()
            && part != "."
            && part != ".."
            && part
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
    };
    if ![kind, name].into_iter().all(safe) || !(domain.is_empty() || safe(domain)) {
        return Err(format!(
            "contract FQN {fqn} has a part that is not a plain name (letters, digits, '_', '-', '.'): it cannot name a file"
        ));
    }
    let layout = layout.unwrap_or(DEFAULT_LAYOUT);
    if layout.contains("{domain}") && domain.is_empty() {
        return Err(format!(
            "contract FQN {fqn} has no domain, and the layout {layout} needs one"
        ));
    }
    let kinds = match kind.strip_suffix('y') {
        Some(stem) if !stem.ends_with(['a', 'e', 'i', 'o', 'u']) => format!("{stem}ies"),
        _ if kind.ends_with('s') => format!("{kind}es"),
        _ => format!("{kind}s"),
    };
    let path = layout
        .replace("{kinds}", &kinds)
        .replace("{kind}", kind)
        .replace("{domain}", domain)
        .replace("{name}", name);
    let path = path.split('/').filter(|p| !p.is_empty()).collect::<Vec<_>>().join("/");
    if layout.starts_with('/')
        || path.split('/').any(|p| p == ".." || p == ".")
        || !path
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '/'))
    {
        return Err(format!("the contract layout {layout} leads outside the repository"));
    }
    Ok(path)
}

/// Removes from `after`'s fields the properties and constraint keys seed 004's whitelist does
/// not allow — unless `before` already had that very key there (the contract's own, not the
/// model's invention). Returns the removed keys' paths, e.g. `spec.fields.resolution.required_when`.
pub fn sanitize(before: &Value, after: &mut Value) -> Vec<String> {
    let mut removed = Vec::new();
    let old_fields = fields(before);
    let Some(new_fields) = after
        .get_mut("spec")
        .and_then(|s| s.get_mut("fields"))
        .and_then(Value::as_mapping_mut)
    else {
        return removed;
    };
    for (name, field) in new_fields.iter_mut() {
        let name = key_text(name);
        let Some(field) = field.as_mapping_mut() else { continue };
        let old = old_fields
            .and_then(|f| f.get(name.as_str()))
            .and_then(Value::as_mapping);
        let had = |key: &str| old.is_some_and(|o| o.contains_key(key));
        strip(
            field,
            FIELD_PROPERTIES,
            &had,
            &format!("spec.fields.{name}"),
            &mut removed,
        );
        if let Some(constraints) = field.get_mut("constraints").and_then(Value::as_mapping_mut) {
            let old_constraints = old.and_then(|o| o.get("constraints")).and_then(Value::as_mapping);
            let had = |key: &str| old_constraints.is_some_and(|c| c.contains_key(key));
            strip(
                constraints,
                CONSTRAINT_KEYS,
                &had,
                &format!("spec.fields.{name}.constraints"),
                &mut removed,
            );
        }
    }
    removed
}

fn fields(contract: &Value) -> Option<&Mapping> {
    contract.get("spec")?.get("fields")?.as_mapping()
}

fn strip(map: &mut Mapping, allowed: &[&str], had: &dyn Fn(&str) -> bool, at: &str, removed: &mut Vec<String>) {
    let invented: Vec<Value> = map
        .keys()
        .filter(|k| {
            let key = key_text(k);
            !allowed.contains(&key.as_str()) && !had(&key)
        })
        .cloned()
        .collect();
    for key in invented {
        map.remove(&key);
        removed.push(format!("{at}.{}", key_text(&key)));
    }
}

fn key_text(key: &Value) -> String {
    match key {
        Value::String(s) => s.clone(),
        other => serde_yaml_ng::to_string(other)
            .map(|s| s.trim_end().to_owned())
            .unwrap_or_default(),
    }
}

/// Every difference from `before` to `after`, as seed 004's page lists them:
/// `added: spec.fields.resolution = {type: text}`, `modified: spec.fields.resolution.required =
/// true`, `removed: spec.fields.old`.
pub fn changes(before: &Value, after: &Value) -> Vec<String> {
    let mut out = Vec::new();
    diff(before, after, "", &mut out);
    if out.len() > MAX_CHANGES {
        let more = out.len() - MAX_CHANGES;
        out.truncate(MAX_CHANGES);
        out.push(format!("… and {more} more"));
    }
    out
}

fn diff(before: &Value, after: &Value, at: &str, out: &mut Vec<String>) {
    let join = |key: &Value| {
        let key = key_text(key);
        if at.is_empty() { key } else { format!("{at}.{key}") }
    };
    match (before, after) {
        (Value::Mapping(old), Value::Mapping(new)) => {
            for (key, value) in new {
                match old.get(key) {
                    Some(previous) => diff(previous, value, &join(key), out),
                    None => out.push(format!("added: {} = {}", join(key), inline(value))),
                }
            }
            for key in old.keys().filter(|k| !new.contains_key(*k)) {
                out.push(format!("removed: {}", join(key)));
            }
        }
        (old, new) if old != new => out.push(format!("modified: {at} = {}", inline(new))),
        _ => {}
    }
}

/// A value on one line, in YAML's flow style: `true`, `text`, `{type: text, required: true}`.
fn inline(value: &Value) -> String {
    match value {
        Value::Mapping(map) => {
            let entries: Vec<String> = map
                .iter()
                .map(|(k, v)| format!("{}: {}", key_text(k), inline(v)))
                .collect();
            format!("{{{}}}", entries.join(", "))
        }
        Value::Sequence(items) => format!("[{}]", items.iter().map(inline).collect::<Vec<_>>().join(", ")),
        Value::Tagged(tagged) => inline(&tagged.value),
        scalar => key_text(scalar),
    }
}

/// The unified diff of the contract's file from `before` to `after`, and its digest: an
/// approval names the digest, and the apply commits exactly this diff.
pub fn patch_digest(path: &str, before: &str, after: &str) -> (String, String) {
    let patch = unified_diff(
        &BTreeMap::from([(path.to_owned(), before.to_owned())]),
        &BTreeMap::from([(path.to_owned(), after.to_owned())]),
    );
    let digest = digest(&patch);
    (patch, digest)
}

/// The messages a validator gives the fixed contract (`after`) beyond those it gave the contract
/// before: a fix may leave the errors other tickets are about, but must add none. Compared as
/// multisets, so a second error like one the contract had is a new error.
pub fn introduced(before: &[String], after: &[String]) -> Vec<String> {
    introduced_by(before, after, |e| e.to_owned())
}

/// [`introduced`] for the lines a repository's validate command prints, compared with their
/// numbers ignored: a count (`2 error(s)`) or a line number that moves is the same error, not a
/// new one. (A JSON Schema's messages are compared whole: their numbers are list indexes and
/// values.)
pub fn introduced_ignoring_numbers(before: &[String], after: &[String]) -> Vec<String> {
    introduced_by(before, after, without_numbers)
}

fn introduced_by(before: &[String], after: &[String], key: impl Fn(&str) -> String) -> Vec<String> {
    let mut known: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for e in before {
        *known.entry(key(e)).or_default() += 1;
    }
    after
        .iter()
        .filter(|e| match known.get_mut(&key(e)) {
            Some(left) if *left > 0 => {
                *left -= 1;
                false
            }
            _ => true,
        })
        .cloned()
        .collect()
}

/// `message` with each run of digits as `#`.
fn without_numbers(message: &str) -> String {
    let mut out = String::with_capacity(message.len());
    for c in message.chars() {
        if !c.is_ascii_digit() {
            out.push(c);
        } else if !out.ends_with('#') {
            out.push('#');
        }
    }
    out
}

/// The branch a ticket's fix is committed to: the ticket's own, since it is rebuilt from the
/// target revision and force-pushed (a branch two tickets shared would lose one's fix).
pub fn branch(ticket: &str) -> String {
    format!("kubeheal/{ticket}")
}

/// The trailer naming the ticket a commit fixes.
pub const TICKET_TRAILER: &str = "Kubeheal-Ticket";
/// The trailer naming the proposal (its patch digest) a commit applies.
pub const PATCH_TRAILER: &str = "Kubeheal-Patch";

/// The commit message of an applied fix: `fix(<fqn>): <explanation>`, the changes, who approved
/// it, and the trailers by which a restarted operator finds the commit instead of making it again.
pub fn commit_message(
    ticket: &str,
    fqn: &str,
    explanation: &str,
    changes: &[String],
    approved_by: Option<&str>,
    patch_digest: &str,
) -> String {
    let subject = crate::parse::truncate(explanation.lines().next().unwrap_or("contract fix"), 100);
    let body: String = changes.iter().map(|c| format!("- {c}\n")).collect();
    let approved = approved_by
        .map(|who| format!("Approved-by: {who}\n"))
        .unwrap_or_default();
    format!("fix({fqn}): {subject}\n\n{body}\n{TICKET_TRAILER}: {ticket}\n{PATCH_TRAILER}: {patch_digest}\n{approved}")
}

#[cfg(test)]
#[path = "ticket_fix_tests.rs"]
mod tests;
