//! Leader election: of several operator replicas, only the holder of a Lease reconciles and
//! writes; the others serve their probes and metrics and wait to take over when the holder stops
//! renewing. The Lease is held and renewed by `kube-lease-manager` (server-side apply on a
//! `coordination.k8s.io/v1` Lease), and released when the operator stops, so that a rollout hands
//! over at once instead of after the lease duration.

use std::time::Duration;

use kube::Client;
use kube_lease_manager::{LeaseManagerBuilder, LeaseManagerError};
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tracing::{info, warn};

/// Which Lease the replicas compete for, and who this one is.
#[derive(Debug, Clone)]
pub struct Election {
    pub lease: String,
    pub namespace: String,
    /// Unique per replica: the Pod's name in a cluster.
    pub identity: String,
    /// How long a holder that stops renewing keeps the Lease.
    pub duration: Duration,
}

/// The Lease, held.
pub struct Leadership {
    held: watch::Receiver<bool>,
    task: JoinHandle<Result<kube_lease_manager::LeaseManager, LeaseManagerError>>,
}

/// Waits until this replica holds the Lease.
pub async fn acquire(client: Client, election: &Election) -> Result<Leadership, String> {
    let seconds = election.duration.as_secs().max(2);
    let manager = LeaseManagerBuilder::new(client, &election.lease)
        .with_namespace(&election.namespace)
        .with_identity(&election.identity)
        .with_duration(seconds)
        .with_grace((seconds / 3).max(1))
        .with_field_manager("kubeheal-operator")
        .build()
        .await
        .map_err(|e| {
            format!(
                "cannot use the Lease {}/{} for leader election: {e}",
                election.namespace, election.lease
            )
        })?;
    let (mut held, task) = manager.watch().await;
    info!(lease = %election.lease, identity = %election.identity, "waiting to hold the leader Lease");
    while !*held.borrow_and_update() {
        held.changed()
            .await
            .map_err(|_| "leader election stopped before this replica became the leader".to_owned())?;
    }
    info!(lease = %election.lease, identity = %election.identity, "holding the leader Lease");
    Ok(Leadership { held, task })
}

impl Leadership {
    /// Completes when the Lease is lost (another replica took it, or it could not be renewed).
    pub async fn lost(&mut self) {
        while *self.held.borrow_and_update() {
            if self.held.changed().await.is_err() {
                return;
            }
        }
    }

    /// Gives the Lease up, so that another replica takes over at once.
    pub async fn release(self) {
        drop(self.held);
        match self.task.await {
            Ok(Ok(_)) => info!("released the leader Lease"),
            Ok(Err(error)) => warn!(%error, "failed to release the leader Lease"),
            Err(error) => warn!(%error, "the leader election task failed"),
        }
    }
}
