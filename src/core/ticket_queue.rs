//! Seed 004's priority queue, as a rule: the tickets waiting for analysis (a proposal from the
//! normaliser or the model, the costly step) are taken CRITICAL → HIGH → MEDIUM → LOW, oldest
//! first within a priority, by a bounded number of workers. The order is derived from the
//! tickets themselves (priority and creation time), never from memory, so a restarted operator
//! takes them in the same order. The operator's `ticket_queue` hands out the workers.

use k8s_openapi::jiff::Timestamp;
use kube::ResourceExt;

use crate::api::healer_ticket::{HealerTicket, HealerTicketStatus, TicketTarget};
use crate::core::healer_ticket::queue_key;
use crate::core::ticket_api::priority;
use crate::core::ticket_fix::{Step, effective_target, next_step};

/// A ticket's place in the queue: earlier sorts first (priority, creation time, name,
/// namespace — the last two only to make the order total).
pub type Place = (u8, Timestamp, String, String);

/// Where `ticket` stands in the queue.
pub fn place(ticket: &HealerTicket) -> Place {
    let created = ticket
        .metadata
        .creation_timestamp
        .as_ref()
        .map_or(Timestamp::UNIX_EPOCH, |c| c.0);
    let (order, created, name) = queue_key(priority(ticket), created, &ticket.name_any());
    (order, created, name, ticket.namespace().unwrap_or_default())
}

/// Whether a ticket with `status` waits for analysis: its next step is a proposal, with the
/// operator's `defaults` filling in what its own target leaves out (`default_code_healer`: the
/// operator has a Code Healer API of its own, [`next_step`]). A ticket fixed in code does not:
/// its analysis is its HealRun, which executor Jobs bound.
pub fn waits(
    ticket: &HealerTicket,
    status: &HealerTicketStatus,
    defaults: Option<&TicketTarget>,
    default_code_healer: bool,
) -> bool {
    let target = effective_target(&ticket.spec.target, defaults);
    next_step(&ticket.spec, status, &target, default_code_healer) == Step::Propose
}

/// Whose turn it is when `free` workers are idle: the first `free` of `waiting` in queue order.
pub fn whose_turn(mut waiting: Vec<Place>, free: usize) -> Vec<Place> {
    waiting.sort();
    waiting.dedup();
    waiting.truncate(free);
    waiting
}

/// Tickets and targets for the tests of the queue and its workers.
#[cfg(test)]
pub(crate) mod fixtures {
    use serde_json::json;

    use super::*;
    use crate::api::healer_ticket::Priority;

    /// A runtime-exception contract ticket of `priority`, created `second`s after a fixed time,
    /// queued by intake.
    pub fn queued(name: &str, priority: Priority, second: i64) -> HealerTicket {
        let created = Timestamp::from_second(1_800_000_000 + second).expect("a time");
        serde_json::from_value(json!({
            "apiVersion": "kubeheal.dev/v1alpha1",
            "kind": "HealerTicket",
            "metadata": {"name": name, "namespace": "apps", "creationTimestamp": created.to_string()},
            "spec": {
                "source": "runtime",
                "target": {"contractFqn": "entity/helpdesk/ticket"},
                "error": format!("KeyError: '{name}'"),
            },
            "status": {
                "phase": "Queued",
                "classification": {"errorType": "runtime_exception", "tier": 3, "fixableBy": "contract", "priority": priority},
            },
        }))
        .expect("a ticket")
    }

    /// Everything a contract ticket needs to be proposed for.
    pub fn target() -> TicketTarget {
        serde_json::from_value(json!({
            "repository": {"url": "https://git.example/app.git"},
            "contractSchema": "spec/meta/{kind}.meta.yaml",
            "healer": {"openAI": {"baseUrl": "https://models.example/v1", "model": "fixer"}},
        }))
        .expect("a target")
    }

    /// A proposal waiting for a person.
    pub fn proposed(mut ticket: HealerTicket) -> HealerTicket {
        let status = ticket.status.get_or_insert_with(HealerTicketStatus::default);
        status.phase = Some(crate::api::healer_ticket::TicketPhase::Proposed);
        status.proposal = Some(
            serde_json::from_value(json!({
                "method": "llm_runtime", "confidence": 0.5, "explanation": "add the field",
                "patchDigest": "sha256:00",
            }))
            .expect("a proposal"),
        );
        ticket
    }
}

#[cfg(test)]
mod tests {
    use super::fixtures::{proposed, queued, target};
    use super::*;
    use crate::api::healer_ticket::{Priority, TicketPhase};

    fn names(places: &[Place]) -> Vec<&str> {
        places.iter().map(|p| p.2.as_str()).collect()
    }

    #[test]
    fn critical_goes_before_high_before_medium_before_low_and_the_oldest_first_within_each() {
        let tickets = [
            queued("low-old", Priority::Low, 0),
            queued("medium-new", Priority::Medium, 9),
            queued("critical-new", Priority::Critical, 8),
            queued("high", Priority::High, 5),
            queued("medium-old", Priority::Medium, 1),
            queued("critical-old", Priority::Critical, 7),
        ];
        let waiting = tickets.iter().map(place).collect();
        assert_eq!(
            names(&whose_turn(waiting, 10)),
            [
                "critical-old",
                "critical-new",
                "high",
                "medium-old",
                "medium-new",
                "low-old"
            ]
        );
    }

    #[test]
    fn only_as_many_tickets_start_as_workers_are_free_and_none_when_all_are_busy() {
        let tickets = [
            queued("a", Priority::Low, 0),
            queued("b", Priority::High, 3),
            queued("c", Priority::High, 2),
        ];
        let waiting: Vec<Place> = tickets.iter().map(place).collect();
        assert_eq!(names(&whose_turn(waiting.clone(), 1)), ["c"]);
        assert_eq!(names(&whose_turn(waiting.clone(), 2)), ["c", "b"]);
        assert!(whose_turn(waiting, 0).is_empty());
    }

    #[test]
    fn an_unclassified_ticket_is_placed_by_its_spec_priority() {
        // The classifier's priority is the queue's (spec.priority overrides the table there);
        // before classification the spec's is.
        let mut unclassified = queued("manual", Priority::Low, 0);
        unclassified.status = None;
        unclassified.spec.priority = Some(Priority::Critical);
        let high = queued("high", Priority::High, 5);
        let waiting = vec![place(&high), place(&unclassified)];
        assert_eq!(names(&whose_turn(waiting, 1)), ["manual"]);
    }

    #[test]
    fn a_ticket_waits_for_analysis_only_while_its_next_step_is_a_proposal() {
        let defaults = target();
        let ticket = queued("t", Priority::High, 0);
        let status = ticket.status.clone().expect("a status");
        assert!(waits(&ticket, &status, Some(&defaults), false));
        // Interrupted while analysing: proposed again, so it waits again.
        let mut analysing = status.clone();
        analysing.phase = Some(TicketPhase::Analyzing);
        assert!(waits(&ticket, &analysing, Some(&defaults), false));
        // Nowhere to fix it: it says what is missing instead of taking a worker.
        assert!(!waits(&ticket, &status, None, false));
        // Proposed, waiting for a person: no worker.
        let waiting_for_a_person = proposed(ticket.clone()).status.expect("a status");
        assert!(!waits(&ticket, &waiting_for_a_person, Some(&defaults), false));
        // Ended: no worker.
        let mut failed = status.clone();
        failed.phase = Some(TicketPhase::Failed);
        assert!(!waits(&ticket, &failed, Some(&defaults), false));
        // Not yet classified by intake: not yet queued.
        assert!(!waits(&ticket, &HealerTicketStatus::default(), Some(&defaults), false));
    }
}
