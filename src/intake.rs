//! The one write of an ingested error, for both doors — the operator's `POST /healer/ingest`
//! and `kubeheal ticket ingest`: create the ticket under its fingerprint's name if it is new,
//! then add the occurrences to its status with the object's resourceVersion, so writers that
//! count the same error at the same time add up instead of overwriting each other. An error that
//! comes back after its ticket's fix was applied is filed as a recurrence (`<name>-r2`, …),
//! linked by `status.recurrenceOf`, not counted on the closed ticket.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;
use kube::ResourceExt;
use kube::api::{Api, Patch, PatchParams, PostParams};
use serde_json::json;

use crate::api::healer_ticket::{HealerTicket, HealerTicketSpec};
use crate::api::shared::MANAGED_BY;
use crate::core::healer_ticket::{next_recurrence, recurs_after};
use crate::core::ticket_api::INGESTED;

/// Occurrences of one error not yet written: how many, first and last seen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Occurrences {
    pub count: u32,
    pub first: Timestamp,
    pub last: Timestamp,
}

impl Occurrences {
    /// One occurrence, now.
    pub fn once() -> Self {
        let now = Timestamp::now();
        Self {
            count: 1,
            first: now,
            last: now,
        }
    }

    /// Both counts as one.
    pub fn merge(self, other: Self) -> Self {
        Self {
            count: self.count.saturating_add(other.count),
            first: self.first.min(other.first),
            last: self.last.max(other.last),
        }
    }
}

/// Why occurrences were not written.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    /// The API server will never take this write (invalid, forbidden): trying again only fills
    /// memory.
    #[error("the API server refused ticket {name}: {message}")]
    Refused { name: String, message: String },
    /// The API server could not be reached or kept changing the ticket: worth another try.
    #[error("{0}")]
    Failed(String),
}

impl RecordError {
    fn of(name: &str, error: kube::Error) -> Self {
        match error {
            kube::Error::Api(status) if (400..500).contains(&status.code) && status.code != 429 => {
                RecordError::Refused {
                    name: name.to_owned(),
                    message: status.message.clone(),
                }
            }
            other => RecordError::Failed(other.to_string()),
        }
    }

    /// Whether another try may succeed.
    pub fn is_retryable(&self) -> bool {
        matches!(self, RecordError::Failed(_))
    }
}

/// Creates ticket `name` from `spec` if it is new, then adds `seen` to its occurrences with the
/// object's resourceVersion (a conflict reads it again); returns the ticket as written. When
/// `name`'s fix was applied before `seen`, the occurrences go to its recurrence instead.
pub async fn record(
    api: &Api<HealerTicket>,
    first: &str,
    spec: &HealerTicketSpec,
    seen: Occurrences,
) -> Result<HealerTicket, RecordError> {
    let mut name = first.to_owned();
    let mut recurrence_of: Option<String> = None;
    let mut conflicts = 0;
    while conflicts < 8 {
        let current = match api.get_opt(&name).await.map_err(|e| RecordError::of(&name, e))? {
            Some(ticket) if recurs_after(ticket.status.as_ref(), seen.last) => match next_recurrence(first, &name) {
                Some(next) => {
                    recurrence_of = Some(std::mem::replace(&mut name, next));
                    continue;
                }
                // Past the last recurrence kubeheal files, the last one counts them.
                None => ticket,
            },
            Some(ticket) => ticket,
            None => {
                let mut ticket = HealerTicket::new(&name, spec.clone());
                ticket.metadata.annotations = Some(BTreeMap::from([(INGESTED.to_owned(), "true".to_owned())]));
                ticket.metadata.labels = Some(BTreeMap::from([(MANAGED_BY.0.to_owned(), MANAGED_BY.1.to_owned())]));
                match api.create(&PostParams::default(), &ticket).await {
                    Ok(created) => created,
                    Err(kube::Error::Api(e)) if e.code == 409 => {
                        conflicts += 1;
                        continue;
                    }
                    Err(e) => return Err(RecordError::of(&name, e)),
                }
            }
        };
        let status = current.status.clone().unwrap_or_default();
        let mut patch = json!({
            "metadata": {"resourceVersion": current.resource_version()},
            "status": {
                "occurrences": status.occurrences.saturating_add(seen.count),
                "firstSeen": status.first_seen.clone().unwrap_or(Time(seen.first)),
                "lastSeen": Time(status.last_seen.as_ref().map_or(seen.last, |t| t.0.max(seen.last))),
            }
        });
        if let Some(previous) = &recurrence_of
            && status.recurrence_of.is_none()
        {
            patch["status"]["recurrenceOf"] = json!(previous);
        }
        match api
            .patch_status(&name, &PatchParams::default(), &Patch::Merge(&patch))
            .await
        {
            Ok(written) => return Ok(written),
            Err(kube::Error::Api(e)) if e.code == 409 => conflicts += 1,
            Err(e) => return Err(RecordError::of(&name, e)),
        }
    }
    let name = first;
    Err(RecordError::Failed(format!(
        "ticket {name} kept changing while its occurrences were written"
    )))
}
