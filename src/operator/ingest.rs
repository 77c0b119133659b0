//! Seed 004's HTTP API on the operator's `--healer-listen` (default `0.0.0.0:8083`): errors come
//! in at `POST /healer/ingest` and become HealerTickets; `GET /healer/health`, `/healer/status`,
//! `/healer/tickets` and `/healer/tickets/{id}` read them from a watch cache, never one API call
//! per request.
//!
//! An ingest never waits on the API server: the report is validated, classified and
//! fingerprinted here, counted in memory under its ticket's name, and answered at once; a writer
//! flushes the counts every half second — one create or one status write per ticket however
//! many times its error arrived (a storm of identical errors is counted exactly and written at a
//! bounded rate). Counts are written with the object's resourceVersion, so replicas that ingest
//! at the same time add up instead of overwriting each other. The ticket's name comes from its
//! fingerprint, so every replica files the same error under the same ticket.

use std::collections::{BTreeMap, HashMap};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::{DefaultBodyLimit, Path, Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use futures::StreamExt;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;
use kube::api::{Api, Patch, PatchParams, PostParams};
use kube::runtime::reflector::{self, Store};
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Client, ResourceExt};
use serde::Deserialize;
use serde_json::{Value, json};
use tracing::{info, warn};

use crate::api::healer_ticket::{HealerTicket, HealerTicketSpec, Priority, TicketPhase, TicketSource, TicketTarget};
use crate::api::shared::{MANAGED_BY, wire_name};
use crate::core::healer_ticket::{classify, fingerprint, queue_key, ticket_name};
use crate::operator::healer_ticket::{INGESTED, report};

/// Largest ingest body accepted.
const MAX_BODY: usize = 256 * 1024;
/// Most distinct tickets waiting to be written; beyond it an ingest is answered 503.
const MAX_PENDING: usize = 10_000;
/// How often the counts are written.
const FLUSH_EVERY: Duration = Duration::from_millis(500);

/// How the ingest is reached and who may use it.
#[derive(Debug, Clone)]
pub struct IngestSettings {
    pub listen: SocketAddr,
    /// Where tickets are created.
    pub namespace: String,
    /// The bearer token callers present (`KUBEHEAL_INGEST_TOKEN`, from a Secret).
    pub token: Option<String>,
    /// Serve without a token (inside a NetworkPolicy, say).
    pub allow_anonymous: bool,
}

/// One ticket's occurrences not yet written.
struct Pending {
    spec: HealerTicketSpec,
    count: u32,
    first: Timestamp,
    last: Timestamp,
}

struct Shared {
    settings: IngestSettings,
    tickets: Store<HealerTicket>,
    pending: Mutex<HashMap<String, Pending>>,
}

/// Binds the listener and serves until the process ends; the counts are flushed by a task of
/// its own.
pub async fn start(client: Client, settings: IngestSettings) -> Result<SocketAddr, String> {
    let listener = tokio::net::TcpListener::bind(settings.listen)
        .await
        .map_err(|e| format!("cannot listen on {} (--healer-listen): {e}", settings.listen))?;
    let bound = listener.local_addr().map_err(|e| e.to_string())?;
    let api: Api<HealerTicket> = Api::namespaced(client.clone(), &settings.namespace);
    let (tickets, writer) = reflector::store();
    let cache = watcher(api.clone(), watcher::Config::default())
        .default_backoff()
        .reflect(writer)
        .applied_objects()
        .for_each(|_| std::future::ready(()));
    tokio::spawn(cache);
    let shared = Arc::new(Shared {
        settings,
        tickets,
        pending: Mutex::new(HashMap::new()),
    });
    tokio::spawn(flush_forever(api, shared.clone()));
    let app = Router::new()
        .route(
            "/healer/health",
            get(|| async { Json(json!({"status": "ok", "service": "healer"})) }),
        )
        .route("/healer/ingest", post(ingest))
        .route("/healer/status", get(status))
        .route("/healer/tickets", get(list))
        .route("/healer/tickets/{id}", get(show))
        .layer(DefaultBodyLimit::max(MAX_BODY))
        .with_state(shared);
    info!(listen = %bound, "serving seed 004's /healer API");
    tokio::spawn(async move {
        if let Err(error) = axum::serve(listener, app).await {
            warn!(%error, "the /healer API stopped");
        }
    });
    Ok(bound)
}

/// A 4xx or 5xx with seed 004's `{"detail": ...}` body.
fn refuse(code: StatusCode, detail: impl Into<String>) -> Response {
    (code, Json(json!({"detail": detail.into()}))).into_response()
}

/// The refusal of a caller without the token, or `None` when the caller may go on.
fn refused(shared: &Shared, headers: &HeaderMap) -> Option<Response> {
    let Some(token) = &shared.settings.token else {
        return if shared.settings.allow_anonymous {
            None
        } else {
            Some(refuse(
                StatusCode::UNAUTHORIZED,
                "this operator has no ingest token: set KUBEHEAL_INGEST_TOKEN (from a Secret), or start it with --ingest-allow-anonymous",
            ))
        };
    };
    let given = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .unwrap_or_default();
    // Compared in constant time: the comparison must not tell how much of a guess was right.
    let same =
        given.len() == token.len() && given.bytes().zip(token.bytes()).fold(0u8, |acc, (a, b)| acc | (a ^ b)) == 0;
    if same {
        None
    } else {
        Some(refuse(
            StatusCode::UNAUTHORIZED,
            "missing or wrong bearer token: send Authorization: Bearer <the ingest token>",
        ))
    }
}

/// Seed 004's IngestRequest, checked field by field so that a refusal says which and why.
fn ingest_spec(body: &[u8]) -> Result<HealerTicketSpec, String> {
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
    let contract_fqn = text("contract_fqn", 253, false)?;
    if let Some(fqn) = &contract_fqn
        && (fqn.split('/').count() < 2 || fqn.split('/').any(|p| p.is_empty() || p.contains(char::is_whitespace)))
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
            path: None,
            heal_run: None,
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

async fn ingest(State(shared): State<Arc<Shared>>, headers: HeaderMap, body: axum::body::Bytes) -> Response {
    if let Some(refusal) = refused(&shared, &headers) {
        return refusal;
    }
    let spec = match ingest_spec(&body) {
        Ok(spec) => spec,
        Err(why) => return refuse(StatusCode::UNPROCESSABLE_ENTITY, why),
    };
    let probe = HealerTicket::new("", spec.clone());
    let report = report(&probe);
    let classification = classify(&report);
    let name = ticket_name(&fingerprint(&report, &classification));
    let now = Timestamp::now();
    {
        let mut pending = shared.pending.lock().unwrap_or_else(|e| e.into_inner());
        let waiting = pending.len();
        match pending.get_mut(&name) {
            Some(entry) => {
                entry.count = entry.count.saturating_add(1);
                entry.last = now;
            }
            None if waiting >= MAX_PENDING => {
                return (
                    StatusCode::SERVICE_UNAVAILABLE,
                    [(header::RETRY_AFTER, "1")],
                    Json(json!({"detail": "too many distinct errors are waiting to be written; retry in a second"})),
                )
                    .into_response();
            }
            None => {
                pending.insert(
                    name.clone(),
                    Pending {
                        spec,
                        count: 1,
                        first: now,
                        last: now,
                    },
                );
            }
        }
    }
    let phase = shared
        .tickets
        .get(&reflector::ObjectRef::new(&name).within(&shared.settings.namespace))
        .and_then(|t| t.status.as_ref().and_then(|s| s.phase))
        .unwrap_or(TicketPhase::Queued);
    (
        StatusCode::ACCEPTED,
        Json(json!({"ticket_id": name, "status": phase_name(phase)})),
    )
        .into_response()
}

/// Seed 004's lower-case status names.
fn phase_name(phase: TicketPhase) -> String {
    format!("{phase:?}").to_lowercase()
}

/// Writes the counts, forever; a write that fails is counted again in the next round.
async fn flush_forever(api: Api<HealerTicket>, shared: Arc<Shared>) {
    let mut tick = tokio::time::interval(FLUSH_EVERY);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        let batch: Vec<(String, Pending)> = {
            let mut pending = shared.pending.lock().unwrap_or_else(|e| e.into_inner());
            pending.drain().collect()
        };
        for (name, entry) in batch {
            if let Err(error) = write(&api, &name, &entry).await {
                warn!(%error, ticket = %name, "could not record occurrences; retrying");
                let mut pending = shared.pending.lock().unwrap_or_else(|e| e.into_inner());
                let slot = pending.entry(name).or_insert(Pending {
                    spec: entry.spec.clone(),
                    count: 0,
                    first: entry.first,
                    last: entry.last,
                });
                slot.count = slot.count.saturating_add(entry.count);
                slot.first = slot.first.min(entry.first);
                slot.last = slot.last.max(entry.last);
            }
        }
    }
}

/// Creates the ticket if it is new, then adds `entry.count` to its occurrences with the
/// object's resourceVersion (a conflict reads it again).
async fn write(api: &Api<HealerTicket>, name: &str, entry: &Pending) -> Result<(), String> {
    for _ in 0..8 {
        let current = match api.get_opt(name).await.map_err(|e| e.to_string())? {
            Some(ticket) => ticket,
            None => {
                let mut ticket = HealerTicket::new(name, entry.spec.clone());
                ticket.metadata.annotations = Some(BTreeMap::from([(INGESTED.to_owned(), "true".to_owned())]));
                ticket.metadata.labels = Some(BTreeMap::from([(MANAGED_BY.0.to_owned(), MANAGED_BY.1.to_owned())]));
                match api.create(&PostParams::default(), &ticket).await {
                    Ok(created) => created,
                    Err(kube::Error::Api(e)) if e.code == 409 => continue,
                    Err(e) => return Err(e.to_string()),
                }
            }
        };
        let status = current.status.clone().unwrap_or_default();
        let patch = json!({
            "metadata": {"resourceVersion": current.resource_version()},
            "status": {
                "occurrences": status.occurrences.saturating_add(entry.count),
                "firstSeen": status.first_seen.clone().unwrap_or(Time(entry.first)),
                "lastSeen": Time(status.last_seen.as_ref().map_or(entry.last, |t| t.0.max(entry.last))),
            }
        });
        match api
            .patch_status(name, &PatchParams::default(), &Patch::Merge(&patch))
            .await
        {
            Ok(_) => return Ok(()),
            Err(kube::Error::Api(e)) if e.code == 409 => continue,
            Err(e) => return Err(e.to_string()),
        }
    }
    Err(format!(
        "ticket {name} kept changing while its occurrences were written"
    ))
}

#[derive(Deserialize)]
struct Filters {
    status: Option<String>,
    priority: Option<String>,
    contract_fqn: Option<String>,
}

/// The tickets of the namespace, in queue order.
fn ours(shared: &Shared) -> Vec<Arc<HealerTicket>> {
    let mut tickets: Vec<Arc<HealerTicket>> = shared
        .tickets
        .state()
        .into_iter()
        .filter(|t| t.namespace().as_deref() == Some(shared.settings.namespace.as_str()))
        .collect();
    tickets.sort_by_key(|t| {
        queue_key(
            priority(t),
            t.metadata
                .creation_timestamp
                .as_ref()
                .map_or(Timestamp::UNIX_EPOCH, |c| c.0),
            &t.name_any(),
        )
    });
    tickets
}

fn priority(ticket: &HealerTicket) -> Priority {
    ticket
        .status
        .as_ref()
        .and_then(|s| s.classification.as_ref())
        .map(|c| c.priority)
        .or(ticket.spec.priority)
        .unwrap_or(Priority::Medium)
}

/// A ticket in seed 004's field names.
fn describe(ticket: &HealerTicket) -> Value {
    let status = ticket.status.clone().unwrap_or_default();
    let classification = status.classification.as_ref();
    json!({
        "id": ticket.name_any(),
        "source": wire_name(&ticket.spec.source),
        "contract_fqn": ticket.spec.target.contract_fqn,
        "error_type": classification.map(|c| c.error_type.clone()),
        "raw_error": ticket.spec.error,
        "context": ticket.spec.context,
        "status": status.phase.map(phase_name).unwrap_or_else(|| "queued".into()),
        "tier": classification.map(|c| c.tier),
        "fixable_by": classification.map(|c| wire_name(&c.fixable_by)),
        "priority": wire_name(&priority(ticket)),
        "proposal": status.proposal,
        "fingerprint": status.fingerprint,
        "occurrences": status.occurrences,
        "created_at": ticket.metadata.creation_timestamp,
        "first_seen": status.first_seen,
        "last_seen": status.last_seen,
        "resolved_at": status.resolved_at,
        "resolution_note": status.resolution_note,
    })
}

async fn list(State(shared): State<Arc<Shared>>, headers: HeaderMap, Query(filters): Query<Filters>) -> Response {
    if let Some(refusal) = refused(&shared, &headers) {
        return refusal;
    }
    let tickets: Vec<Value> = ours(&shared)
        .iter()
        .map(|t| describe(t))
        .filter(|t| filters.status.as_deref().is_none_or(|s| t["status"] == s))
        .filter(|t| filters.priority.as_deref().is_none_or(|p| t["priority"] == p))
        .filter(|t| filters.contract_fqn.as_deref().is_none_or(|f| t["contract_fqn"] == f))
        .collect();
    Json(Value::Array(tickets)).into_response()
}

async fn show(State(shared): State<Arc<Shared>>, headers: HeaderMap, Path(id): Path<String>) -> Response {
    if let Some(refusal) = refused(&shared, &headers) {
        return refusal;
    }
    match shared
        .tickets
        .get(&reflector::ObjectRef::new(&id).within(&shared.settings.namespace))
    {
        Some(ticket) => Json(describe(&ticket)).into_response(),
        None => refuse(StatusCode::NOT_FOUND, format!("no ticket {id:?}")),
    }
}

/// Seed 004's `/healer/status`: counts by phase, success rate per tier (applied among the
/// finished), errors that recur per (contract, error type), the newest tickets.
async fn status(State(shared): State<Arc<Shared>>, headers: HeaderMap) -> Response {
    if let Some(refusal) = refused(&shared, &headers) {
        return refusal;
    }
    let tickets = ours(&shared);
    let mut queue: BTreeMap<String, u64> = BTreeMap::new();
    let mut finished: BTreeMap<u8, (u64, u64)> = BTreeMap::new();
    let mut recurring: BTreeMap<(String, String), u64> = BTreeMap::new();
    for ticket in &tickets {
        let described = describe(ticket);
        let phase = described["status"].as_str().unwrap_or("queued").to_owned();
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
    let mut recent: Vec<&Arc<HealerTicket>> = tickets.iter().collect();
    recent.sort_by_key(|t| std::cmp::Reverse(t.metadata.creation_timestamp.as_ref().map(|c| c.0)));
    Json(json!({
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
    }))
    .into_response()
}
