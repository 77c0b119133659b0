//! The workers of seed 004's priority queue (`--ticket-workers`): a ticket whose next step is a
//! proposal takes a worker when it is its turn (`core::ticket_queue`), holds it while the
//! normaliser or the model works, and hands it on when done by waking the tickets next in line.
//! A ticket whose turn it is not yet waits without being reconciled again.
//!
//! Nothing of the queue is remembered but the workers in use: the order is read from the ticket
//! controller's cache each time, so it sees tickets as they arrive and survives a restart (the
//! first take waits until the cache holds every ticket, so a restarted operator does not start
//! whichever ticket happened to be listed first).

use std::collections::BTreeSet;
use std::sync::{Mutex, OnceLock};

use futures::channel::mpsc::UnboundedSender;
use kube::ResourceExt;
use kube::runtime::reflector::{ObjectRef, Store};
use tracing::debug;

use crate::api::healer_ticket::{HealerTicket, HealerTicketStatus, TicketTarget};
use crate::core::ticket_queue::{Place, place, waits, whose_turn};

/// Workers by default: proposals are mostly waiting on a model, so a few run side by side.
pub const DEFAULT_WORKERS: u16 = 4;

/// A ticket, by namespace and name.
type Key = (String, String);

fn key(ticket: &HealerTicket) -> Key {
    (ticket.namespace().unwrap_or_default(), ticket.name_any())
}

fn key_of(place: &Place) -> Key {
    (place.3.clone(), place.2.clone())
}

#[derive(Default)]
struct Workers {
    /// The tickets being analysed now, one worker each.
    running: BTreeSet<Key>,
    /// Tickets analysed here whose cached copy may still show them waiting (the cache trails
    /// the writes a moment): left out of the queue until the cache shows them done, or until
    /// they ask for a worker again.
    finished: BTreeSet<Key>,
}

/// The queue's workers: shared by every reconcile of the ticket controller.
pub struct AnalysisQueue {
    workers: usize,
    /// The operator's `--ticket-target`, which decides whether a ticket can be proposed for.
    defaults: Option<TicketTarget>,
    /// Whether the operator has a Code Healer API of its own (`CODE_HEALER_URL`).
    default_code_healer: bool,
    /// The ticket controller's cache, attached once the controller exists.
    tickets: OnceLock<Store<HealerTicket>>,
    state: Mutex<Workers>,
    /// Reconciles the tickets whose turn has come (the ticket controller's `reconcile_on`).
    wake: UnboundedSender<ObjectRef<HealerTicket>>,
}

/// A worker held by one ticket; dropping it hands the worker to the next ticket in line.
pub struct Worker<'a> {
    queue: &'a AnalysisQueue,
    key: Key,
}

impl Drop for Worker<'_> {
    fn drop(&mut self) {
        let queue = self.queue;
        let next = {
            let mut state = queue.lock();
            state.running.remove(&self.key);
            state.finished.insert(self.key.clone());
            let free = queue.workers.saturating_sub(state.running.len());
            whose_turn(queue.waiting(&mut state, None), free)
        };
        for place in next {
            let (namespace, name) = key_of(&place);
            let _ = queue.wake.unbounded_send(ObjectRef::new(&name).within(&namespace));
        }
    }
}

impl AnalysisQueue {
    pub fn new(
        workers: u16,
        defaults: Option<TicketTarget>,
        default_code_healer: bool,
        wake: UnboundedSender<ObjectRef<HealerTicket>>,
    ) -> Self {
        AnalysisQueue {
            workers: usize::from(workers.max(1)),
            defaults,
            default_code_healer,
            tickets: OnceLock::new(),
            state: Mutex::default(),
            wake,
        }
    }

    /// Gives the queue the ticket controller's cache, where it reads the order from.
    pub fn attach(&self, tickets: Store<HealerTicket>) {
        let _ = self.tickets.set(tickets);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Workers> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The tickets waiting for a worker, as the cache shows them (`me` as its reconcile read
    /// it): not those analysed now, nor those just analysed here that the cache still shows
    /// waiting.
    fn waiting(&self, state: &mut Workers, me: Option<(&HealerTicket, &HealerTicketStatus)>) -> Vec<Place> {
        let defaults = self.defaults.as_ref();
        let cached = self.tickets.get().map(Store::state).unwrap_or_default();
        let still_waiting = |t: &HealerTicket| {
            t.status
                .as_ref()
                .is_some_and(|s| waits(t, s, defaults, self.default_code_healer))
        };
        // A finished ticket leaves the set once the cache has caught up with it (or lost it).
        state
            .finished
            .retain(|k| cached.iter().any(|t| key(t) == *k && still_waiting(t)));
        let mut waiting: Vec<Place> = cached
            .iter()
            .filter(|t| still_waiting(t))
            .map(|t| (key(t), place(t)))
            .filter(|(k, _)| !state.running.contains(k) && !state.finished.contains(k))
            .filter(|(k, _)| me.is_none_or(|(m, _)| key(m) != *k))
            .map(|(_, p)| p)
            .collect();
        if let Some((ticket, status)) = me {
            let mut current = ticket.clone();
            current.status = Some(status.clone());
            waiting.push(place(&current));
        }
        waiting
    }

    /// A worker for `ticket` (its status as this reconcile has it) when it is its turn, else
    /// `None`: a worker that comes free wakes it when its turn has come.
    pub async fn take<'a>(&'a self, ticket: &HealerTicket, status: &HealerTicketStatus) -> Option<Worker<'a>> {
        if let Some(tickets) = self.tickets.get() {
            // A writer that is gone has no more tickets to add: the order is what it holds.
            let _ = tickets.wait_until_ready().await;
        }
        let me = key(ticket);
        let mut state = self.lock();
        state.finished.remove(&me);
        let free = self.workers.saturating_sub(state.running.len());
        let turn = whose_turn(self.waiting(&mut state, Some((ticket, status))), free);
        if turn.iter().any(|p| key_of(p) == me) {
            state.running.insert(me.clone());
            Some(Worker { queue: self, key: me })
        } else {
            debug!(ticket = %me.1, free, "waiting for its turn in the ticket queue");
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use futures::StreamExt;
    use kube::runtime::reflector;
    use kube::runtime::watcher::Event;

    use super::*;
    use crate::api::healer_ticket::Priority;
    use crate::core::ticket_queue::fixtures::{proposed, queued as ticket, target};

    /// A queue of `workers` over a cache holding `tickets`, and what it wakes.
    fn queue(
        workers: u16,
        tickets: &[HealerTicket],
    ) -> (
        AnalysisQueue,
        reflector::store::Writer<HealerTicket>,
        futures::channel::mpsc::UnboundedReceiver<ObjectRef<HealerTicket>>,
    ) {
        let (store, mut writer) = reflector::store();
        writer.apply_watcher_event(&Event::Init);
        for t in tickets {
            writer.apply_watcher_event(&Event::InitApply(t.clone()));
        }
        writer.apply_watcher_event(&Event::InitDone);
        let (wake, woken) = futures::channel::mpsc::unbounded();
        let queue = AnalysisQueue::new(workers, Some(target()), false, wake);
        queue.attach(store);
        (queue, writer, woken)
    }

    fn status(t: &HealerTicket) -> HealerTicketStatus {
        t.status.clone().expect("a status")
    }

    #[tokio::test]
    async fn one_worker_goes_to_the_first_ticket_in_line_and_is_handed_to_the_next_when_done() {
        let low = ticket("low", Priority::Low, 0);
        let critical = ticket("critical", Priority::Critical, 5);
        let high = ticket("high", Priority::High, 3);
        let (queue, mut writer, mut woken) = queue(1, &[low.clone(), critical.clone(), high.clone()]);
        // The low ticket was reconciled first, but it is not its turn.
        assert!(queue.take(&low, &status(&low)).await.is_none());
        let worker = queue
            .take(&critical, &status(&critical))
            .await
            .expect("critical's turn");
        // Busy: nobody else starts, not even the next in line.
        assert!(queue.take(&high, &status(&high)).await.is_none());
        // Done (the cache does not show it yet): the worker goes to the high ticket, which is woken.
        drop(worker);
        let next = woken.next().await.expect("a wake");
        assert_eq!(next.name, "high");
        assert!(queue.take(&low, &status(&low)).await.is_none());
        let worker = queue.take(&high, &status(&high)).await.expect("high's turn");
        // The cache catches up with the critical ticket's proposal.
        writer.apply_watcher_event(&Event::Apply(proposed(critical.clone())));
        drop(worker);
        assert_eq!(woken.next().await.expect("a wake").name, "low");
        assert!(queue.take(&low, &status(&low)).await.is_some());
    }

    #[tokio::test]
    async fn several_workers_serve_as_many_tickets_at_once_in_queue_order() {
        let tickets: Vec<HealerTicket> = (0..5).map(|i| ticket(&format!("t{i}"), Priority::Medium, i)).collect();
        let (queue, _writer, _woken) = queue(2, &tickets);
        let t3 = queue.take(&tickets[3], &status(&tickets[3])).await;
        assert!(t3.is_none(), "t0 and t1 come first");
        let first = queue.take(&tickets[0], &status(&tickets[0])).await.expect("t0's turn");
        let second = queue.take(&tickets[1], &status(&tickets[1])).await.expect("t1's turn");
        assert!(queue.take(&tickets[2], &status(&tickets[2])).await.is_none());
        drop((first, second));
        assert!(queue.take(&tickets[2], &status(&tickets[2])).await.is_some());
    }
}
