//! Seed 004's API over HealerTickets, without I/O, for both of its doors — the operator's
//! `/healer` HTTP API and `kubeheal ticket`: an ingest body checked field by field, the ticket
//! name it files under, a ticket in seed 004's field names, the list filters, the queue order and
//! the `/healer/status` summary.

use std::borrow::Borrow;
use std::collections::BTreeMap;

use k8s_openapi::jiff::Timestamp;
use kube::ResourceExt;
use serde_json::{Value, json};

use crate::api::healer_ticket::{
    ApplyStatus, HealerTicket, HealerTicketSpec, Priority, RegenerateStatus, TicketPhase, TicketProposal, TicketSource,
    TicketTarget,
};
use crate::api::shared::wire_name;
use crate::core::healer_ticket::{classify, fingerprint, queue_key, report, ticket_name};
use crate::core::redact::redact;

/// The annotation of a ticket created by an ingest: its occurrences are counted by the ingest,
/// not set by the controller.
pub const INGESTED: &str = "kubeheal.dev/ingested";

/// Whether `fqn` has a contract FQN's shape: slash-separated names without spaces
/// (`entity/helpdesk/ticket`).
pub fn is_contract_fqn(fqn: &str) -> bool {
    fqn.split('/').count() >= 2 && !fqn.split('/').any(|p| p.is_empty() || p.contains(char::is_whitespace))
}

/// Seed 004's IngestRequest, checked field by field so that a refusal says which and why.
pub fn ingest_spec(body: &[u8]) -> Result<HealerTicketSpec, String> {
    let value: Value = serde_json::from_slice(body).map_err(|e| format!("the body is not JSON: {e}"))?;
    let object = value
        .as_object()
        .ok_or("the body must be a JSON object with source, error and optionally contract_fqn, stacktrace, context")?;
    for key in object.keys() {
        if !["source", "contract_fqn", "error", "stacktrace", "context"].contains(&key.as_str()) {
            return Err(format!(
                "unknown field {key:?}: the fields are source, contract_fqn, error, stacktrace and context"
            ));
        }
    }
    let text = |key: &str, max: usize, required: bool| -> Result<Option<String>, String> {
        match object.get(key) {
            None | Some(Value::Null) if !required => Ok(None),
            None | Some(Value::Null) => Err(format!("{key} is required")),
            Some(Value::String(s)) if s.trim().is_empty() && required => Err(format!("{key} must not be empty")),
            Some(Value::String(s)) if s.len() > max => {
                Err(format!("{key} is {} bytes, at most {max} are accepted", s.len()))
            }
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(other) => Err(format!("{key} must be a string, not {}", kind(other))),
        }
    };
    let source = match text("source", 32, true)?.as_deref() {
        Some("validation") => TicketSource::Validation,
        Some("compilation") => TicketSource::Compilation,
        Some("runtime") => TicketSource::Runtime,
        Some("manual") => TicketSource::Manual,
        Some(other) => {
            return Err(format!(
                "source {other:?} is not one of validation, compilation, runtime, manual"
            ));
        }
        None => unreachable!("required"),
    };
    let error = text("error", 8192, true)?.unwrap_or_default();
    let stacktrace = text("stacktrace", 65536, false)?;
    // Required: a ticket names what its error points at (the CRD refuses one that names
    // nothing), and an ingest accepted now must not be refused by the API server later.
    let contract_fqn = text("contract_fqn", 253, true)?;
    if let Some(fqn) = &contract_fqn
        && !is_contract_fqn(fqn)
    {
        return Err(format!(
            "contract_fqn {fqn:?} must be slash-separated names without spaces, e.g. entity/helpdesk/ticket"
        ));
    }
    let mut context = BTreeMap::new();
    match object.get("context") {
        None | Some(Value::Null) => {}
        Some(Value::Object(map)) => {
            if map.len() > 50 {
                return Err(format!("context has {} keys, at most 50 are accepted", map.len()));
            }
            for (key, value) in map {
                let value = match value {
                    Value::String(s) => s.clone(),
                    Value::Number(n) => n.to_string(),
                    Value::Bool(b) => b.to_string(),
                    other => {
                        return Err(format!(
                            "context.{key} must be a string, number or boolean, not {}",
                            kind(other)
                        ));
                    }
                };
                if value.len() > 4096 {
                    return Err(format!(
                        "context.{key} is {} bytes, at most 4096 are accepted",
                        value.len()
                    ));
                }
                context.insert(key.clone(), value);
            }
        }
        Some(other) => return Err(format!("context must be an object, not {}", kind(other))),
    }
    Ok(HealerTicketSpec {
        source,
        target: TicketTarget {
            contract_fqn: contract_fqn.clone(),
            ..TicketTarget::default()
        },
        error,
        stacktrace,
        context,
        priority: None,
        decision: None,
    })
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The ticket an ingested error is filed under: its name from the fingerprint, so every door
/// and every replica files the same error under the same ticket.
pub fn ticket_id(spec: &HealerTicketSpec) -> String {
    let probe = HealerTicket::new("", spec.clone());
    let report = report(&probe);
    let classification = classify(&report);
    ticket_name(&fingerprint(&report, &classification))
}

/// Seed 004's lower-case status names.
pub fn phase_name(phase: TicketPhase) -> String {
    format!("{phase:?}").to_lowercase()
}

/// The priority a ticket is queued with: the classifier's, else the spec's, else medium.
pub fn priority(ticket: &HealerTicket) -> Priority {
    ticket
        .status
        .as_ref()
        .and_then(|s| s.classification.as_ref())
        .map(|c| c.priority)
        .or(ticket.spec.priority)
        .unwrap_or(Priority::Medium)
}

/// Sorts tickets into queue order: critical first, oldest first within a priority.
pub fn in_queue_order<T: Borrow<HealerTicket>>(tickets: &mut [T]) {
    tickets.sort_by_key(|t| {
        let t = t.borrow();
        queue_key(
            priority(t),
            t.metadata
                .creation_timestamp
                .as_ref()
                .map_or(Timestamp::UNIX_EPOCH, |c| c.0),
            &t.name_any(),
        )
    });
}

/// A ticket in seed 004's field names, with how its fix was applied (`apply`) and the code
/// regenerated after it (`regenerate`).
pub fn describe(ticket: &HealerTicket) -> Value {
    let status = ticket.status.clone().unwrap_or_default();
    let classification = status.classification.as_ref();
    json!({
        "id": ticket.name_any(),
        "source": wire_name(&ticket.spec.source),
        "contract_fqn": ticket.spec.target.contract_fqn,
        "error_type": classification.map(|c| c.error_type.clone()),
        // Error texts and context come from applications: credentials in them are redacted
        // before anyone reads them back.
        "raw_error": redact(&ticket.spec.error, &[]).0,
        "context": ticket.spec.context.iter().map(|(k, v)| (k.clone(), redact(v, &[]).0)).collect::<BTreeMap<_, _>>(),
        "status": status.phase.map(phase_name).unwrap_or_else(|| "queued".into()),
        "tier": classification.map(|c| c.tier),
        "fixable_by": classification.map(|c| wire_name(&c.fixable_by)),
        "priority": wire_name(&priority(ticket)),
        "proposal": status.proposal.as_ref().map(proposal),
        "fingerprint": status.fingerprint,
        "occurrences": status.occurrences,
        "created_at": ticket.metadata.creation_timestamp,
        "first_seen": status.first_seen,
        "last_seen": status.last_seen,
        "resolved_at": status.resolved_at,
        "resolution_note": status.resolution_note.map(|n| redact(&n, &[]).0),
        "recurrence_of": status.recurrence_of,
        "apply": status.apply.as_ref().map(|a| json!({
            "branch": a.branch,
            "commit": a.commit,
            "rolled_back": a.rolled_back,
            "error": a.error.as_deref().map(|e| redact(e, &[]).0),
        })),
        "regenerate": status.regenerate.as_ref().map(|r| regeneration(r, status.apply.as_ref())),
    })
}

/// A proposal as a ticket's description shows it: in the API's snake_case names (the digest a
/// client reads back is `patch_digest`, as `POST /healer/approve/{id}` takes it), its texts
/// redacted as the ticket's page shows them (an explanation or a contract may quote an
/// application's error).
fn proposal(p: &TicketProposal) -> Value {
    let redacted = |s: &String| redact(s, &[]).0;
    json!({
        "method": wire_name(&p.method),
        "confidence": p.confidence,
        "explanation": redacted(&p.explanation),
        "changes": p.changes.iter().map(redacted).collect::<Vec<_>>(),
        "removed": p.removed,
        "contract_path": p.contract_path,
        "base_commit": p.base_commit,
        "before": p.before.as_ref().map(redacted),
        "after": p.after.as_ref().map(redacted),
        "patch_digest": p.patch_digest,
    })
}

/// Seed 004's Regenerate step as a ticket's description shows it: the Job, what it reported and
/// how many files it committed, their commit; after a failure the commit that reverted the fix
/// and why (the apply's error: the command's words, redacted again here like every text that
/// may quote an application).
fn regeneration(regenerate: &RegenerateStatus, apply: Option<&ApplyStatus>) -> Value {
    let why = regenerate
        .revert_commit
        .as_ref()
        .and(apply.and_then(|a| a.error.as_deref()))
        .map(|e| redact(e, &[]).0);
    json!({
        "job_name": regenerate.job_name,
        "result": regenerate.result.as_deref().map(|r| redact(r, &[]).0),
        "files": regenerate.files,
        "commit": regenerate.commit,
        "revert_commit": regenerate.revert_commit,
        "error": why,
    })
}

/// Seed 004's list filters (`GET /healer/tickets?status=&priority=&contract_fqn=`).
#[derive(Debug, Default, Clone, serde::Deserialize)]
pub struct Filters {
    pub status: Option<String>,
    pub priority: Option<String>,
    pub contract_fqn: Option<String>,
}

impl Filters {
    /// Whether a [`describe`]d ticket passes every filter given.
    pub fn admit(&self, described: &Value) -> bool {
        self.status.as_deref().is_none_or(|s| described["status"] == s)
            && self.priority.as_deref().is_none_or(|p| described["priority"] == p)
            && self
                .contract_fqn
                .as_deref()
                .is_none_or(|f| described["contract_fqn"] == f)
    }
}

/// The tickets in queue order, [`describe`]d, those the filters admit.
pub fn listing<T: Borrow<HealerTicket>>(tickets: &mut [T], filters: &Filters) -> Vec<Value> {
    in_queue_order(tickets);
    tickets
        .iter()
        .map(|t| describe(t.borrow()))
        .filter(|t| filters.admit(t))
        .collect()
}

/// Seed 004's `/healer/status`: counts by phase, success rate per tier (applied among the
/// finished), errors that recur per (contract, error type), the ten newest tickets.
pub fn summary<T: Borrow<HealerTicket>>(tickets: &[T]) -> Value {
    let mut queue: BTreeMap<String, u64> = BTreeMap::new();
    let mut finished: BTreeMap<u8, (u64, u64)> = BTreeMap::new();
    let mut recurring: BTreeMap<(String, String), u64> = BTreeMap::new();
    for ticket in tickets.iter().map(Borrow::borrow) {
        let phase = ticket
            .status
            .as_ref()
            .and_then(|s| s.phase)
            .map_or_else(|| "queued".to_owned(), phase_name);
        *queue.entry(phase.clone()).or_default() += 1;
        if let Some(c) = ticket.status.as_ref().and_then(|s| s.classification.as_ref()) {
            if ["applied", "failed", "rejected"].contains(&phase.as_str()) {
                let slot = finished.entry(c.tier).or_default();
                slot.1 += 1;
                if phase == "applied" {
                    slot.0 += 1;
                }
            }
            let fqn = ticket.spec.target.contract_fqn.clone().unwrap_or_default();
            let occurrences = u64::from(ticket.status.as_ref().map_or(0, |s| s.occurrences.max(1)));
            *recurring.entry((fqn, c.error_type.clone())).or_default() += occurrences;
        }
    }
    let success_rate: BTreeMap<String, f64> = finished
        .iter()
        .map(|(tier, (applied, all))| (format!("tier_{tier}"), *applied as f64 / *all as f64))
        .collect();
    let mut recent: Vec<&HealerTicket> = tickets.iter().map(Borrow::borrow).collect();
    recent.sort_by_key(|t| {
        (
            std::cmp::Reverse(t.metadata.creation_timestamp.as_ref().map(|c| c.0)),
            t.name_any(),
        )
    });
    json!({
        "queue": queue,
        "success_rate": success_rate,
        "recurring": recurring
            .into_iter()
            .filter(|(_, count)| *count > 1)
            .map(|((fqn, error_type), count)| json!({"contract_fqn": fqn, "error_type": error_type, "count": count}))
            .collect::<Vec<_>>(),
        "recent": recent
            .iter()
            .take(10)
            .map(|t| {
                let d = describe(t);
                json!({"id": d["id"], "fqn": d["contract_fqn"], "status": d["status"], "tier": d["tier"]})
            })
            .collect::<Vec<_>>(),
    })
}

#[cfg(test)]
#[path = "ticket_api_tests.rs"]
mod tests;
