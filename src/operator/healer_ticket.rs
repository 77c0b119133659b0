//! The HealerTicket controller: intake (seed 004) classifies each ticket, however it arrived
//! (`POST /healer/ingest`, `kubectl apply`, `kubeheal ticket ingest`), gives it its fingerprint
//! and phase, and announces each transition as an Event; then `ticket_fix` takes a queued
//! contract ticket on through proposal, approval and apply. The decisions are
//! `core::healer_ticket`'s and `core::ticket_fix`'s; this module reads the ticket and writes
//! what was decided.
//!
//! A transition to one of seed 004's announced phases is also handed to `operator::notify`; the
//! status write that records the phase records it in `notified` too, so each is announced once,
//! across restarts (at most once: a crash between the write and the send loses it, which is
//! preferred to announcing twice).
//!
//! Status fields have two writers that never overwrite each other: this controller (phase,
//! classification, fingerprint, conditions, resolution) and the ingest (`occurrences`,
//! `firstSeen`, `lastSeen`, see `operator::ingest`). A ticket applied by hand is counted here
//! once.

use std::sync::Arc;
use std::time::{Duration, Instant};

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;
use kube::api::{Api, Patch, PatchParams};
use kube::runtime::controller::Action as Requeue;
use kube::{Resource, ResourceExt};
use serde_json::json;
use tracing::{instrument, warn};

use super::Context;
use crate::api::healer_ticket::HealerTicket;
use crate::core::healer_ticket::decide;
pub use crate::core::healer_ticket::report;
use crate::core::notify;

/// The annotation the ingest puts on the tickets it creates: it counts their occurrences.
pub use crate::core::ticket_api::INGESTED;

/// One reconcile of one HealerTicket.
#[instrument(skip_all, fields(name = %ticket.name_any(), namespace = ticket.namespace().unwrap_or_default()))]
pub async fn reconcile(ticket: Arc<HealerTicket>, ctx: Arc<Context>) -> Result<Requeue, kube::Error> {
    let started = Instant::now();
    let result = reconcile_ticket(&ticket, &ctx).await;
    ctx.metrics.reconciled(
        "HealerTicket",
        started.elapsed(),
        result.as_ref().err().map(|_| "ApiError"),
    );
    result
}

/// A failed reconcile (the API server) is retried after a short, growing wait.
pub fn error_policy(ticket: Arc<HealerTicket>, error: &kube::Error, ctx: Arc<Context>) -> Requeue {
    warn!(%error, name = %ticket.name_any(), "HealerTicket reconcile failed");
    let key = format!(
        "HealerTicket/{}/{}",
        ticket.namespace().unwrap_or_default(),
        ticket.name_any()
    );
    let failures = ctx.failures.record(&key);
    Requeue::requeue(Duration::from_secs(
        (5u64 << failures.saturating_sub(1).min(7)).min(600),
    ))
}

async fn reconcile_ticket(ticket: &HealerTicket, ctx: &Context) -> Result<Requeue, kube::Error> {
    let namespace = ticket.namespace().unwrap_or_else(|| "default".into());
    let tickets: Api<HealerTicket> = Api::namespaced(ctx.client.clone(), &namespace);
    let previous = ticket.status.clone().unwrap_or_default();
    let now = Timestamp::now();
    let (mut status, note) = decide(&report(ticket), &previous, now);
    // Announced only where a receiver is configured: a ticket failed before notifications were
    // set up is not marked as announced.
    let announce = ctx.notifier.as_ref().and_then(|notifier| {
        let event = notify::to_announce(&status)?;
        status.notified = notify::with_notified(&status.notified, event);
        Some((notifier, event))
    });
    let mut written = json!({
        "observedGeneration": ticket.metadata.generation,
        "phase": status.phase,
        "classification": status.classification,
        "fingerprint": status.fingerprint,
        "conditions": status.conditions,
        "resolvedAt": status.resolved_at,
        "resolutionNote": status.resolution_note,
    });
    if announce.is_some() {
        written["notified"] = json!(status.notified);
    }
    // A ticket applied by hand is one occurrence; the ingest counts its own.
    let ingested = ticket.annotations().contains_key(INGESTED);
    if previous.occurrences == 0 && !ingested {
        let created = ticket.metadata.creation_timestamp.clone().unwrap_or(Time(now));
        written["occurrences"] = json!(1);
        written["firstSeen"] = json!(created);
        written["lastSeen"] = json!(created);
    }
    let unchanged = previous.phase == status.phase
        && previous.classification == status.classification
        && previous.fingerprint == status.fingerprint
        && previous.conditions == status.conditions
        && previous.observed_generation == ticket.metadata.generation
        && written.get("occurrences").is_none()
        && announce.is_none();
    let mut current = ticket.clone();
    if !unchanged {
        let mut patch = json!({ "status": written });
        // An announcement is written only over the status it was decided from: a reconcile that
        // started from a cache not yet showing the previous write's `notified` gets a conflict
        // instead of announcing a second time, and runs again on the fresh object.
        if announce.is_some() {
            patch["metadata"] = json!({ "resourceVersion": ticket.resource_version() });
        }
        let written = tickets
            .patch_status(&ticket.name_any(), &PatchParams::default(), &Patch::Merge(&patch))
            .await;
        match written {
            Err(kube::Error::Api(status)) if announce.is_some() && status.code == 409 => {
                return Ok(Requeue::requeue(Duration::from_secs(1)));
            }
            written => {
                current = written?;
            }
        }
    }
    // Only once the status says it was announced: a failed write is retried, and announced then.
    if let Some((notifier, event)) = announce {
        notifier.enqueue(notify::Transition::of(ticket, &status, event, notifier.ticket_pages()));
    }
    if let Some(note) = note {
        ctx.publish(&note, "Classify", &ticket.object_ref(&())).await;
    }
    // The fixing half goes on from what intake wrote.
    let status = current.status.clone().unwrap_or(status);
    Ok(super::ticket_fix::advance(&current, &status, ctx)
        .await?
        .unwrap_or_else(Requeue::await_change))
}
