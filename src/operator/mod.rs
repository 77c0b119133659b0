//! `kubeheal operator`: the controllers on kube-runtime, and the operator's HTTP endpoints
//! (`/metrics`, `/healthz`, `/readyz`). `heal_run` drives the HealRun state machine with
//! executor Jobs, the configured healer, the Git agent and CodeFixDDS approvals;
//! `code_fix_dds` validates work orders and has the approved ones executed by HealRuns;
//! `healer_ticket` classifies HealerTickets and `notify` announces their transitions to webhooks.

pub mod code_fix_dds;
pub mod events;
pub mod heal_run;
pub mod healer_ticket;
pub mod ingest;
pub mod ingest_auth;
pub mod leader;
pub mod metrics;
pub mod notify;
pub mod session;
pub mod ticket_fix;
pub mod ticket_queue;
pub mod url_policy;
pub mod written;

use std::future::Future;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use futures::{FutureExt, StreamExt};
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::api::core::v1::Pod;
use kube::ResourceExt;
use kube::runtime::controller::{self, Controller};
use kube::runtime::events::{Event, EventType, Recorder, Reporter};
use kube::runtime::reflector::{self, ObjectRef};
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Api, Client};
use tracing::{info, warn};

use crate::api::shared::{HEAL_RUN_LABEL, MANAGED_BY};
use crate::api::{CodeFixDDS, HealRun, HealerTicket};
use crate::core::heal_run::Note;
use crate::core::redact::redact;
use crate::executor::job::{JobCache, JobExecutor};
use crate::parse::truncate_bytes;
use metrics::Metrics;

/// How many tasks post Events (an object's Events always go through the same one).
const EVENT_WORKERS: usize = 4;
/// How long a stopping operator waits for its queued Events to be posted.
const EVENTS_FLUSH_LIMIT: std::time::Duration = std::time::Duration::from_secs(5);

/// How the operator was started.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Watch only this namespace; all namespaces when `None`.
    pub namespace: Option<String>,
    /// Where the clones of the sources are kept.
    pub work_dir: PathBuf,
    /// Where `/metrics`, `/healthz` and `/readyz` are served.
    pub listen: SocketAddr,
    /// The Code Healer API used when a HealRun names no healer (`CODE_HEALER_URL`).
    pub healer_url: Option<String>,
    /// Its bearer token (`CODE_HEALER_TOKEN`).
    pub healer_token: Option<String>,
    /// Which source and healer URLs a HealRun may name.
    pub url_policy: url_policy::UrlPolicy,
    /// Most HealRuns reconciled at once: bounds the operator's connections to the API server
    /// when many runs change together (the rest wait in the queue).
    pub max_concurrent_reconciles: u16,
    /// Reconcile only while holding this Lease (several replicas); `None`: always (one replica).
    pub leader_election: Option<leader::Election>,
    /// Reconcile only the HealRuns this label selector matches (a shard); `None`: all of them.
    pub watch_label_selector: Option<String>,
    /// Seed 004's `/healer` API (ingest and reads); `None`: not served.
    pub ingest: Option<ingest::IngestSettings>,
    /// Webhook notifications of HealerTicket transitions (`--notify-secret`); `None`: Events only.
    pub notify: Option<notify::NotifySettings>,
    /// The executor tools work orders may name (`--tool NAME=IMAGE`): name → image.
    pub tools: std::collections::BTreeMap<String, String>,
    /// Where HealerTickets' contract fixes go when their `spec.target` does not say
    /// (`--ticket-target`).
    pub ticket_target: Option<crate::api::healer_ticket::TicketTarget>,
    /// Most tickets analysed at once (`--ticket-workers`): the rest wait their turn in seed
    /// 004's priority order.
    pub ticket_workers: u16,
    /// kubeheal's image, run beside a build to call the service `spec.verify.openapi` starts
    /// (`--probe-image`); `None`: such runs fail saying so.
    pub probe_image: Option<String>,
}

/// How many reconciles of each object failed in a row: the error policy backs off by it.
#[derive(Default)]
pub struct Failures(std::sync::Mutex<std::collections::HashMap<String, u32>>);

impl Failures {
    /// Counts one more failure of `key`; returns how many in a row.
    pub fn record(&self, key: &str) -> u32 {
        let mut counts = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let count = counts.entry(key.to_owned()).or_default();
        *count = count.saturating_add(1);
        *count
    }

    /// `key` reconciled: its next failure starts the backoff over.
    pub fn clear(&self, key: &str) {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).remove(key);
    }
}

/// What every reconcile shares.
pub struct Context {
    pub failures: Failures,
    pub client: Client,
    /// Where Events are queued for posting (beside the reconciles, in order per object).
    pub events: events::EventQueue,
    pub metrics: Arc<Metrics>,
    pub settings: Settings,
    pub jobs: JobExecutor,
    /// Where HealerTicket transitions are announced; `None` when no `--notify-secret` is set.
    pub notifier: Option<notify::Notifier>,
    /// The workers of the tickets' analysis queue.
    pub analysis: ticket_queue::AnalysisQueue,
    /// The HealRun statuses written a moment ago (a cached run older than them waits).
    pub written: written::WrittenStatuses,
}

impl Context {
    /// Publishes `note` as an Event about `object`, `action` saying which controller acted.
    /// Messages carry git's, a healer's and applications' words, which may quote a credential:
    /// redacted and cut to the API's size here, the one door every Event goes through.
    pub async fn publish(&self, note: &Note, action: &str, object: &ObjectReference) {
        let event = Event {
            type_: if note.warning {
                EventType::Warning
            } else {
                EventType::Normal
            },
            reason: note.reason.to_owned(),
            note: Some(truncate_bytes(&redact(&note.message, &[]).0, 1024).to_owned()),
            action: action.into(),
            secondary: None,
        };
        self.events.publish(event, object.clone()).await;
    }
}

/// Serves the endpoints and, while this replica leads, runs the controllers — until `terminated`
/// completes (SIGTERM, Ctrl-C), or the Lease is lost (an error: the process exits, and its restart
/// joins the election again).
pub async fn run(settings: Settings, terminated: impl Future<Output = ()> + Send + 'static) -> Result<(), String> {
    let client = Client::try_default()
        .await
        .map_err(|e| format!("cannot reach the Kubernetes API (kubeconfig or in-cluster config): {e}"))?;
    crate::core::redact::prepare();
    std::fs::create_dir_all(&settings.work_dir)
        .map_err(|e| format!("cannot create the work folder {}: {e}", settings.work_dir.display()))?;
    let metrics = Arc::new(Metrics::default());
    let ready = Arc::new(AtomicBool::new(false));
    let listener = tokio::net::TcpListener::bind(settings.listen)
        .await
        .map_err(|e| format!("cannot listen on {}: {e}", settings.listen))?;
    info!(listen = %settings.listen, "serving /metrics, /healthz and /readyz");
    tokio::spawn(serve(listener, metrics.clone(), ready.clone()));

    let reporter = Reporter {
        controller: "kubeheal".into(),
        instance: std::env::var("POD_NAME").ok(),
    };
    let notifier = match &settings.notify {
        Some(notify) => Some(notify::Notifier::start(client.clone(), notify.clone())?),
        None => None,
    };
    // The Jobs the operator launched and their Pods, watched once: the watch events wake their
    // runs, and a run that looks at its Job reads these caches, not the API server.
    let (job_cache, job_writer) = reflector::store::<Job>();
    let (pod_cache, pod_writer) = reflector::store::<Pod>();
    let (wake_ticket, woken_tickets) = futures::channel::mpsc::unbounded();
    let ctx = Arc::new(Context {
        analysis: ticket_queue::AnalysisQueue::new(
            settings.ticket_workers,
            settings.ticket_target.clone(),
            settings.healer_url.is_some(),
            wake_ticket,
        ),
        notifier,
        failures: Failures::default(),
        events: events::EventQueue::start(Recorder::new(client.clone(), reporter), EVENT_WORKERS),
        jobs: JobExecutor::new(client.clone()).with_cache(JobCache::new(job_cache, pod_cache)),
        client: client.clone(),
        metrics,
        settings: settings.clone(),
        written: written::WrittenStatuses::default(),
    });
    let (runs, jobs, pods, orders): (Api<HealRun>, Api<Job>, Api<Pod>, Api<CodeFixDDS>) = match &settings.namespace {
        Some(ns) => (
            Api::namespaced(client.clone(), ns),
            Api::namespaced(client.clone(), ns),
            Api::namespaced(client.clone(), ns),
            Api::namespaced(client.clone(), ns),
        ),
        None => (
            Api::all(client.clone()),
            Api::all(client.clone()),
            Api::all(client.clone()),
            Api::all(client.clone()),
        ),
    };
    let selected = match &settings.watch_label_selector {
        Some(selector) => watcher::Config::default().labels(selector),
        None => watcher::Config::default(),
    };
    let mut listed = kube::api::ListParams::default().limit(1);
    if let Some(selector) = &settings.watch_label_selector {
        listed = listed.labels(selector);
    }
    runs.list(&listed).await.map_err(|e| match &settings.watch_label_selector {
        Some(selector) => format!(
            "cannot list HealRuns with the label selector '{selector}' (a valid selector, e.g. 'kubeheal.dev/shard in (a)'? are the CRDs installed?): {e}"
        ),
        None => format!(
            "cannot list HealRuns (are the CRDs installed? `kubeheal crdgen --stdout | kubectl apply -f -`): {e}"
        ),
    })?;
    // Every replica serves the /healer API: ingests from several replicas add up (see ingest).
    let intake = match &settings.ingest {
        Some(ingest) => {
            let intake = ingest::start(client.clone(), ingest.clone()).await?;
            info!(listen = %intake.bound, namespace = %ingest.access.home, "ingesting errors into HealerTickets");
            Some(intake)
        }
        None => None,
    };
    ready.store(true, Ordering::Relaxed);
    let mut terminated = std::pin::pin!(terminated);
    let mut leadership = match &settings.leader_election {
        None => None,
        Some(election) => {
            let held = tokio::select! {
                held = leader::acquire(client.clone(), election) => Some(held),
                () = &mut terminated => None,
            };
            match held {
                Some(Ok(held)) => Some(held),
                // Stopped or failed before leading: what the /healer API accepted is written first.
                stopped_or_failed => {
                    if let Some(intake) = intake {
                        intake.stop().await;
                    }
                    return stopped_or_failed.transpose().map(|_| ());
                }
            }
        }
    };
    ctx.metrics.set_leader(true);
    info!(
        namespace = settings.namespace.as_deref().unwrap_or("<all>"),
        "kubeheal operator started"
    );
    let ours = format!("{}={}", MANAGED_BY.0, MANAGED_BY.1);
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    // Waiting is driven by events: a run's Job, its Pod (an image that cannot be pulled changes
    // only the Pod) and its CodeFixDDS wake it; timers are only a safety net.
    // Managed fields are dropped from the caches: nothing reads them, and they are a large part
    // of each object.
    let job_events = watcher(jobs, watcher::Config::default().labels(&ours))
        .default_backoff()
        .modify(|job| job.managed_fields_mut().clear())
        .reflect(job_writer)
        .touched_objects();
    let pod_events = watcher(pods, watcher::Config::default().labels(&ours))
        .default_backoff()
        .modify(|pod| pod.managed_fields_mut().clear())
        .reflect(pod_writer)
        .touched_objects();
    let controller = Controller::new(runs, selected.clone())
        .with_config(controller::Config::default().concurrency(settings.max_concurrent_reconciles))
        .owns_stream(job_events)
        .watches_stream(pod_events, |pod: Pod| {
            let run = pod.labels().get(HEAL_RUN_LABEL)?.clone();
            Some(ObjectRef::<HealRun>::new(&run).within(&pod.namespace()?))
        })
        .owns(orders, watcher::Config::default())
        // The reconciles in flight finish before the controller stops (and the Lease is released).
        .graceful_shutdown_on(async move {
            let _ = stopped.await;
        })
        .run(heal_run::reconcile, heal_run::error_policy, ctx.clone())
        .for_each(|result| async move {
            if let Err(error) = result {
                warn!(%error, "HealRun reconcile error");
            }
        });
    // The work orders: re-checked when their source, a rival or their executing run changes.
    let (order_stop, order_stopped) = tokio::sync::oneshot::channel::<()>();
    let (runs_all, orders_all): (Api<HealRun>, Api<CodeFixDDS>) = match &settings.namespace {
        Some(ns) => (Api::namespaced(client.clone(), ns), Api::namespaced(client.clone(), ns)),
        None => (Api::all(client.clone()), Api::all(client.clone())),
    };
    let order_controller = Controller::new(orders_all.clone(), selected.clone())
        .with_config(controller::Config::default().concurrency(settings.max_concurrent_reconciles));
    let store = order_controller.store();
    let (by_run, by_order) = (store.clone(), store);
    let order_controller = order_controller
        .watches(runs_all, watcher::Config::default(), move |run: HealRun| {
            code_fix_dds::orders_of_run(&run, &by_run)
        })
        .watches(orders_all, watcher::Config::default(), move |order: CodeFixDDS| {
            code_fix_dds::orders_of_order(&order, &by_order)
        })
        .graceful_shutdown_on(async move {
            let _ = order_stopped.await;
        })
        .run(code_fix_dds::reconcile, code_fix_dds::error_policy, ctx.clone())
        .for_each(|result| async move {
            if let Err(error) = result {
                warn!(%error, "CodeFixDDS reconcile error");
            }
        });
    // The tickets: classified and queued as they arrive, however they arrive.
    let (ticket_stop, ticket_stopped) = tokio::sync::oneshot::channel::<()>();
    let tickets_all: Api<HealerTicket> = match &settings.namespace {
        Some(ns) => Api::namespaced(client.clone(), ns),
        None => Api::all(client.clone()),
    };
    // A ticket fixed in code follows the HealRun it owns.
    let ticket_runs: Api<HealRun> = match &settings.namespace {
        Some(ns) => Api::namespaced(client.clone(), ns),
        None => Api::all(client.clone()),
    };
    // And a contract ticket's regeneration Job wakes it when it ends.
    let ticket_jobs: Api<Job> = match &settings.namespace {
        Some(ns) => Api::namespaced(client.clone(), ns),
        None => Api::all(client.clone()),
    };
    let ticket_controller = Controller::new(tickets_all, selected.clone());
    ctx.analysis.attach(ticket_controller.store());
    let ticket_controller = ticket_controller
        // A ticket whose turn in the analysis queue has come.
        .reconcile_on(woken_tickets)
        .owns(ticket_runs, watcher::Config::default().labels(ticket_fix::TICKET_LABEL))
        .owns(ticket_jobs, watcher::Config::default().labels(ticket_fix::TICKET_LABEL))
        .with_config(controller::Config::default().concurrency(settings.max_concurrent_reconciles))
        .graceful_shutdown_on(async move {
            let _ = ticket_stopped.await;
        })
        .run(healer_ticket::reconcile, healer_ticket::error_policy, ctx.clone())
        .for_each(|result| async move {
            if let Err(error) = result {
                warn!(%error, "HealerTicket reconcile error");
            }
        });
    let controller = futures::future::join3(controller, order_controller, ticket_controller).map(|_| ());
    let mut controller = std::pin::pin!(controller);
    let lost = async {
        match leadership.as_mut() {
            Some(leadership) => leadership.lost().await,
            None => std::future::pending().await,
        }
    };
    let (ended, lost) = tokio::select! {
        () = &mut controller => (true, false),
        () = &mut terminated => (false, false),
        () = lost => (false, true),
    };
    let _ = stop.send(());
    let _ = order_stop.send(());
    let _ = ticket_stop.send(());
    // What the /healer API accepted is written before the process exits: the listener stops now,
    // beside the controllers' drain, not after it (the Pod's grace period counts for both).
    ready.store(false, Ordering::Relaxed);
    let intake_stopped = async move {
        if let Some(intake) = intake {
            intake.stop().await;
        }
    };
    // On SIGTERM the reconciles in flight finish before the Lease is released. A replica that
    // lost the Lease does not wait for its reconciles: another one already reconciles, and the
    // steps it drops are found again from the status (every effect is idempotent).
    let drained = async {
        if !ended && !lost {
            controller.await;
        }
        ctx.metrics.set_leader(false);
        // The Events of the steps taken are posted before the Lease is released, for a few
        // seconds at most: an API server that does not answer must not hold the Lease.
        if tokio::time::timeout(EVENTS_FLUSH_LIMIT, ctx.events.flush())
            .await
            .is_err()
        {
            warn!(
                queued = ctx.events.queued(),
                "stopping with Events not yet posted: the API server did not take them in time"
            );
        }
        if let Some(leadership) = leadership {
            leadership.release().await;
        }
    };
    futures::join!(drained, intake_stopped);
    if lost {
        return Err(
            "lost the leader Lease to another replica; exiting so that a restart joins the election again".into(),
        );
    }
    info!("kubeheal operator stopped");
    Ok(())
}

async fn serve(listener: tokio::net::TcpListener, metrics: Arc<Metrics>, ready: Arc<AtomicBool>) {
    use axum::http::{StatusCode, header};
    use axum::routing::get;
    let app = axum::Router::new()
        .route(
            "/metrics",
            get(move || {
                let metrics = metrics.clone();
                async move {
                    (
                        [(
                            header::CONTENT_TYPE,
                            "application/openmetrics-text; version=1.0.0; charset=utf-8",
                        )],
                        metrics.render(),
                    )
                }
            }),
        )
        .route("/healthz", get(|| async { "ok" }))
        .route(
            "/readyz",
            get(move || {
                let ready = ready.clone();
                async move {
                    if ready.load(Ordering::Relaxed) {
                        (StatusCode::OK, "ready")
                    } else {
                        (StatusCode::SERVICE_UNAVAILABLE, "starting")
                    }
                }
            }),
        );
    if let Err(error) = axum::serve(listener, app).await {
        warn!(%error, "the HTTP endpoints stopped");
    }
}
