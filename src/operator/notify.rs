//! Notify, the sending half: posts the payloads `core::notify` builds to the receivers named in
//! the `--notify-secret` Secret (keys `slack`, `discord`, `teams`, `json`, each optional).
//!
//! Never on a reconcile's path: the controller hands a transition to [`Notifier::enqueue`], which
//! only puts it in a bounded queue (full: dropped with a warning, the reconcile goes on). One task
//! reads the Secret for each transition (so a rotated URL is used at once) and hands each
//! receiver its payload in that receiver's own bounded queue; each receiver has its own task
//! posting a few at a time, each POST with a timeout and retried with exponential backoff. A
//! receiver that is down or hangs fills only its own queue.
//!
//! The URLs are credentials (whoever has one can post to the channel): they are never logged,
//! only the receiver's kind, and reqwest's errors are logged without their URL.

use std::collections::HashMap;
use std::time::Duration;

use futures::StreamExt;
use k8s_openapi::api::core::v1::Secret;
use kube::{Api, Client};
use serde_json::Value;
use tokio::sync::mpsc;
use tracing::{info, warn};

use crate::core::notify::{Receiver, Transition, payload};

/// How notifications are configured (`--notify-secret`, `--ticket-page-url`).
#[derive(Debug, Clone)]
pub struct NotifySettings {
    /// The Secret holding the receivers' URLs.
    pub secret: String,
    /// Its namespace (the ticket namespace, else `POD_NAMESPACE`).
    pub namespace: String,
    /// The ticket page's base URL, for links; none: notifications carry no link.
    pub ticket_page_url: Option<String>,
}

/// Transitions waiting to be announced; beyond this, new ones are dropped (with a warning).
const QUEUE: usize = 256;
/// Payloads waiting for one receiver.
const RECEIVER_QUEUE: usize = 64;
/// POSTs in flight to one receiver.
const IN_FLIGHT: usize = 4;
/// One POST's whole time, connection included.
const TIMEOUT: Duration = Duration::from_secs(10);
/// Tries per payload; the waits between them double from [`FIRST_WAIT`].
const TRIES: u32 = 4;
const FIRST_WAIT: Duration = Duration::from_secs(1);

/// The handle the controller enqueues with.
#[derive(Clone)]
pub struct Notifier {
    queue: mpsc::Sender<Transition>,
    settings: NotifySettings,
}

impl Notifier {
    /// Starts the sender tasks.
    pub fn start(client: Client, settings: NotifySettings) -> Result<Notifier, String> {
        let http = crate::healer::http_client()?;
        let (queue, transitions) = mpsc::channel(QUEUE);
        let mut receivers = HashMap::new();
        for receiver in Receiver::ALL {
            let (to, from) = mpsc::channel::<(String, Value, String)>(RECEIVER_QUEUE);
            tokio::spawn(deliver_all(receiver, http.clone(), from));
            receivers.insert(receiver, to);
        }
        tokio::spawn(dispatch(
            Api::namespaced(client, &settings.namespace),
            settings.secret.clone(),
            transitions,
            receivers,
        ));
        info!(secret = %settings.secret, namespace = %settings.namespace, "announcing HealerTicket transitions to the Secret's receivers");
        Ok(Notifier { queue, settings })
    }

    /// Where the ticket pages are, for the links; `None` without `--ticket-page-url`.
    pub fn ticket_pages(&self) -> Option<crate::core::notify::Pages<'_>> {
        Some(crate::core::notify::Pages {
            base: self.settings.ticket_page_url.as_deref()?,
            home: &self.settings.namespace,
        })
    }

    /// Queues `transition` without waiting: a full queue drops it (and says so).
    pub fn enqueue(&self, transition: Transition) {
        if let Err(error) = self.queue.try_send(transition) {
            let transition = match &error {
                mpsc::error::TrySendError::Full(t) | mpsc::error::TrySendError::Closed(t) => t,
            };
            warn!(ticket = %transition.ticket, event = ?transition.event, "the notification queue is full: this transition is not announced");
        }
    }
}

/// For each transition, the Secret's receivers at that moment, each given its payload.
async fn dispatch(
    secrets: Api<Secret>,
    name: String,
    mut transitions: mpsc::Receiver<Transition>,
    receivers: HashMap<Receiver, mpsc::Sender<(String, Value, String)>>,
) {
    while let Some(transition) = transitions.recv().await {
        let secret = match tokio::time::timeout(TIMEOUT, secrets.get_opt(&name)).await {
            Ok(Ok(Some(secret))) => secret,
            Ok(Ok(None)) => {
                warn!(secret = %name, ticket = %transition.ticket, "the notify Secret does not exist: transition not announced");
                continue;
            }
            Ok(Err(error)) => {
                warn!(secret = %name, %error, ticket = %transition.ticket, "cannot read the notify Secret: transition not announced");
                continue;
            }
            Err(_) => {
                warn!(secret = %name, ticket = %transition.ticket, "reading the notify Secret timed out: transition not announced");
                continue;
            }
        };
        let data = secret.data.unwrap_or_default();
        for receiver in Receiver::ALL {
            let Some(url) = data
                .get(receiver.key())
                .and_then(|bytes| String::from_utf8(bytes.0.clone()).ok())
                .map(|url| url.trim().to_owned())
                .filter(|url| !url.is_empty())
            else {
                continue;
            };
            if !(url.starts_with("https://") || url.starts_with("http://")) {
                warn!(receiver = receiver.key(), "the receiver's URL is not http(s): skipped");
                continue;
            }
            let body = payload(receiver, &transition);
            let label = format!("{}/{} {:?}", transition.namespace, transition.ticket, transition.event);
            if receivers[&receiver].try_send((url, body, label)).is_err() {
                warn!(receiver = receiver.key(), ticket = %transition.ticket, "this receiver's queue is full (down or slow?): transition not announced to it");
            }
        }
    }
}

/// One receiver's task: its payloads, a few at a time.
async fn deliver_all(receiver: Receiver, http: reqwest::Client, payloads: mpsc::Receiver<(String, Value, String)>) {
    let stream = futures::stream::unfold(payloads, |mut rx| async move { rx.recv().await.map(|p| (p, rx)) });
    stream
        .for_each_concurrent(IN_FLIGHT, |(url, body, label)| {
            let http = http.clone();
            async move { deliver(receiver, &http, &url, &body, &label).await }
        })
        .await;
}

/// POSTs `body` until it is taken, a receiver refuses it for good (4xx but 408/429), or
/// [`TRIES`] are used up.
async fn deliver(receiver: Receiver, http: &reqwest::Client, url: &str, body: &Value, label: &str) {
    let mut wait = FIRST_WAIT;
    for attempt in 1..=TRIES {
        let outcome = http.post(url).timeout(TIMEOUT).json(body).send().await;
        let retry = match outcome {
            Ok(response) if response.status().is_success() => {
                info!(receiver = receiver.key(), transition = label, "notification sent");
                return;
            }
            Ok(response) => {
                let status = response.status();
                let again = status.is_server_error() || status.as_u16() == 408 || status.as_u16() == 429;
                warn!(
                    receiver = receiver.key(),
                    transition = label,
                    status = status.as_u16(),
                    attempt,
                    "the receiver refused the notification"
                );
                again
            }
            Err(error) => {
                warn!(receiver = receiver.key(), transition = label, error = %error.without_url(), attempt, "the notification could not be sent");
                true
            }
        };
        if !retry || attempt == TRIES {
            break;
        }
        // Jitter: receivers that failed together do not all retry in the same instant.
        let jitter = Duration::from_millis(fastrand::u64(0..=wait.as_millis() as u64 / 4));
        tokio::time::sleep(wait + jitter).await;
        wait *= 2;
    }
    warn!(receiver = receiver.key(), transition = label, "notification given up");
}
