//! Where the controllers' Events go: a queue that posts them beside the reconciles, not in them.
//!
//! An Event is what a person reads after the fact (`kubectl describe`); nothing in the heal loop
//! waits on it. Posted inline, each one put an API round trip between a status write and the
//! next step — between a run's first status and its Job, the latency a cluster feels most. So
//! `publish` only queues the Event, and a few workers post them: an object's Events always go to
//! the same worker, so they are posted in the order they were published; a full queue makes
//! `publish` wait (an API server too slow for the Events slows the reconciles, it does not grow
//! the operator's memory); and `flush` waits for everything queued before it, which the operator
//! does (for a few seconds at most) before it lets go of the Lease.

use std::hash::{Hash, Hasher};

use k8s_openapi::api::core::v1::ObjectReference;
use kube::runtime::events::{Event, Recorder};
use tokio::sync::{mpsc, oneshot};
use tracing::warn;

/// How many Events wait per worker before `publish` waits.
const QUEUED_PER_WORKER: usize = 256;

enum Queued {
    Event(Box<(Event, ObjectReference)>),
    /// Answered once everything queued before it is posted.
    Flush(oneshot::Sender<()>),
}

/// The Events queue; cheap to share (`Context` holds one).
pub struct EventQueue {
    workers: Vec<mpsc::Sender<Queued>>,
}

impl EventQueue {
    /// Starts `workers` posting tasks (at least one) on the current Tokio runtime.
    pub fn start(recorder: Recorder, workers: usize) -> Self {
        let workers = (0..workers.max(1))
            .map(|_| {
                let (send, mut receive) = mpsc::channel::<Queued>(QUEUED_PER_WORKER);
                let recorder = recorder.clone();
                tokio::spawn(async move {
                    while let Some(queued) = receive.recv().await {
                        match queued {
                            Queued::Event(event) => {
                                let (event, object) = *event;
                                if let Err(error) = recorder.publish(&event, &object).await {
                                    warn!(%error, reason = event.reason, "failed to publish an event");
                                }
                            }
                            Queued::Flush(done) => {
                                let _ = done.send(());
                            }
                        }
                    }
                });
                send
            })
            .collect();
        EventQueue { workers }
    }

    /// Queues `event` about `object`, after the Events published about it before.
    pub async fn publish(&self, event: Event, object: ObjectReference) {
        let worker = &self.workers[worker_of(&object, self.workers.len())];
        if worker.send(Queued::Event(Box::new((event, object)))).await.is_err() {
            warn!("the Events queue has stopped; an event is lost");
        }
    }

    /// How many Events wait to be posted.
    pub fn queued(&self) -> usize {
        self.workers.iter().map(|w| w.max_capacity() - w.capacity()).sum()
    }

    /// Waits until every Event queued before this call has been posted (or has failed).
    pub async fn flush(&self) {
        let waits = self.workers.iter().map(|worker| async move {
            let (done, posted) = oneshot::channel();
            if worker.send(Queued::Flush(done)).await.is_ok() {
                let _ = posted.await;
            }
        });
        futures::future::join_all(waits).await;
    }
}

/// The worker that posts `object`'s Events: always the same one, so they keep their order.
fn worker_of(object: &ObjectReference, workers: usize) -> usize {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    (&object.namespace, &object.kind, &object.name).hash(&mut hasher);
    (hasher.finish() % workers as u64) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    fn object(name: &str) -> ObjectReference {
        ObjectReference {
            kind: Some("HealRun".into()),
            namespace: Some("team".into()),
            name: Some(name.into()),
            ..ObjectReference::default()
        }
    }

    #[test]
    fn an_objects_events_always_go_to_one_worker_and_objects_spread_over_all() {
        let first = worker_of(&object("run-1"), 4);
        assert!((0..10).all(|_| worker_of(&object("run-1"), 4) == first));
        let used: std::collections::BTreeSet<usize> =
            (0..64).map(|n| worker_of(&object(&format!("run-{n}")), 4)).collect();
        assert_eq!(used.len(), 4, "{used:?}");
    }
}
