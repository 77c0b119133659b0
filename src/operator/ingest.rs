//! Seed 004's HTTP API on the operator's `--healer-listen` (default `0.0.0.0:8083`): errors come
//! in at `POST /healer/ingest` and become HealerTickets; `GET /healer/health`, `/healer/status`,
//! `/healer/tickets` and `/healer/tickets/{id}` read them from a watch cache, never one API call
//! per request, and so do the pages `/healer/view` and `/healer/tickets/{id}/view`. `POST
//! /healer/approve/{id}` and `/healer/reject/{id}` decide on a ticket's proposal as the person
//! whose Kubernetes token they carry.
//!
//! An ingest never waits on the API server: the report is validated, classified and
//! fingerprinted here, counted in memory under its ticket's name, and answered at once; a writer
//! flushes the counts every half second — one create or one status write per ticket however
//! many times its error arrived (a storm of identical errors is counted exactly and written at a
//! bounded rate). Counts are written with the object's resourceVersion, so replicas that ingest
//! at the same time add up instead of overwriting each other. The ticket's name comes from its
//! fingerprint, so every replica files the same error under the same ticket.
//!
//! What one caller can hold is bounded: the body's size, the time its headers and body may take
//! (the healer server's [`ServerConfig`]), the connections served at once, and the requests per
//! second from one address (`--ingest-rate-limit`, a token bucket whose burst absorbs a storm).
//! On shutdown the listener stops, the requests in flight finish, and what is counted is written
//! once more before the process exits: an accepted ingest is not lost to a rollout.

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::num::NonZeroU32;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::rejection::BytesRejection;
use axum::extract::{ConnectInfo, DefaultBodyLimit, Path, Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use futures::StreamExt;
use k8s_openapi::jiff::Timestamp;
use kube::api::Api;
use kube::runtime::reflector::{self, Store};
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Client, ResourceExt};
use serde_json::{Value, json};
use tracing::{info, warn};

use crate::api::healer_ticket::{HealerTicket, HealerTicketSpec, TicketPhase};
use crate::core::healer_ticket::{next_recurrence, recurs_after};
use crate::core::ticket_api::{Filters, describe, ingest_spec, listing, phase_name, summary, ticket_id};
use crate::core::ticket_page::{Viewer, list_page, namespace_query, sign_in_html, sign_in_link, ticket_page};
use crate::decision::{Decided, Refusal, Verdict, decide_ticket};
use crate::healer::server::{ServerConfig, serve_app};
use crate::intake::{Occurrences, record};
use crate::operator::ingest_auth::{Access, AccessSettings, Denied, bearer, same_secret};
use crate::operator::session;

/// Largest ingest body accepted.
const MAX_BODY: usize = 256 * 1024;
/// Most distinct tickets waiting to be written; beyond it an ingest is answered 503.
const MAX_PENDING: usize = 10_000;
/// Most bytes of error text waiting to be written (a distinct error may carry 256 KiB): the
/// operator's memory limit, not the count of errors, is what a flood of large ones would hit.
const MAX_PENDING_BYTES: usize = 64 * 1024 * 1024;
/// Tickets written at once by a flush, and how long one write may take: a hung call delays only
/// its own ticket.
const FLUSH_CONCURRENCY: usize = 8;
const WRITE_TIMEOUT: Duration = Duration::from_secs(10);
/// How often the counts are written.
const FLUSH_EVERY: Duration = Duration::from_millis(500);
/// How long the requests in flight may take at shutdown, then the last flush.
const DRAIN: Duration = Duration::from_secs(5);
const FINAL_FLUSH: Duration = Duration::from_secs(15);
/// A caller may send this many seconds' worth of its rate at once (a storm's burst).
const BURST_SECONDS: u32 = 10;

/// Requests per second each caller address may make (`--ingest-rate-limit`) by default.
pub const DEFAULT_RATE_LIMIT: u32 = 1000;

/// How the ingest is reached and who may use it.
#[derive(Debug, Clone)]
pub struct IngestSettings {
    pub listen: SocketAddr,
    /// Which namespaces requests may name, and whose tokens let them in.
    pub access: AccessSettings,
    /// Requests per second one caller address may make, with a burst of ten seconds' worth;
    /// `None`: no limit.
    pub rate_limit: Option<NonZeroU32>,
    /// How long a request's body may take to arrive before it is answered 408.
    pub body_read_timeout: std::time::Duration,
}

/// Requests per caller address, as a token bucket.
type Limiter = governor::DefaultKeyedRateLimiter<IpAddr>;

/// One ticket's occurrences not yet written.
struct Pending {
    spec: HealerTicketSpec,
    seen: Occurrences,
}

impl Pending {
    /// What the entry holds in memory, about.
    fn size(&self) -> usize {
        let spec = &self.spec;
        spec.error.len()
            + spec.stacktrace.as_ref().map_or(0, String::len)
            + spec.context.iter().map(|(k, v)| k.len() + v.len()).sum::<usize>()
            + 256
    }
}

/// A ticket by namespace and name.
type TicketKey = (String, String);

/// The tickets waiting to be written, and their size.
#[derive(Default)]
struct Waiting {
    tickets: HashMap<TicketKey, Pending>,
    bytes: usize,
}

impl Waiting {
    /// Puts `entry` back after a failed write, merging it with what arrived meanwhile.
    fn put_back(&mut self, key: TicketKey, entry: Pending) {
        match self.tickets.get_mut(&key) {
            Some(slot) => slot.seen = slot.seen.merge(entry.seen),
            None => {
                self.bytes += entry.size();
                self.tickets.insert(key, entry);
            }
        }
    }
}

struct Shared {
    settings: IngestSettings,
    /// Who may use the API, for which namespace.
    access: Access,
    /// The operator's own client: ingests are written with it.
    client: Client,
    /// How the operator reaches the API server: a person's decision goes there with the
    /// person's own token instead of the operator's credentials.
    api_config: kube::Config,
    tickets: Store<HealerTicket>,
    pending: Mutex<Waiting>,
    limiter: Option<Limiter>,
    /// What the API server said lately of the session tokens that read the pages.
    readers: session::Remembered,
}

/// The running `/healer` API: [`Ingest::stop`] ends it without losing what was accepted.
pub struct Ingest {
    pub bound: SocketAddr,
    stop_serving: tokio::sync::oneshot::Sender<()>,
    server: tokio::task::JoinHandle<()>,
    stop_flushing: tokio::sync::oneshot::Sender<()>,
    flusher: tokio::task::JoinHandle<()>,
}

impl Ingest {
    /// Stops accepting, lets the requests in flight finish (for at most [`DRAIN`]: a client that
    /// stops reading its answer does not hold the stop), and writes what was counted.
    pub async fn stop(self) {
        let _ = self.stop_serving.send(());
        if tokio::time::timeout(DRAIN, self.server).await.is_err() {
            warn!("requests to the /healer API were still open after {DRAIN:?}; writing the counts anyway");
        }
        let _ = self.stop_flushing.send(());
        if tokio::time::timeout(FINAL_FLUSH + Duration::from_secs(1), self.flusher)
            .await
            .is_err()
        {
            warn!("the last write of ingested errors took longer than {FINAL_FLUSH:?}");
        }
    }
}

/// Binds the listener and serves until [`Ingest::stop`]; the counts are flushed by a task of
/// its own.
pub async fn start(client: Client, settings: IngestSettings) -> Result<Ingest, String> {
    let listener = tokio::net::TcpListener::bind(settings.listen)
        .await
        .map_err(|e| format!("cannot listen on {} (--healer-listen): {e}", settings.listen))?;
    let bound = listener.local_addr().map_err(|e| e.to_string())?;
    let config = ServerConfig {
        body_read_timeout: settings.body_read_timeout,
        ..ServerConfig::default()
    };
    let api_config = kube::Config::infer()
        .await
        .map_err(|e| format!("cannot read how to reach the Kubernetes API: {e}"))?;
    // Every namespace a request may name is in the cache: one watch, not one per namespace.
    let watched: Api<HealerTicket> = match &settings.access.watched {
        Some(namespace) => Api::namespaced(client.clone(), namespace),
        None => Api::all(client.clone()),
    };
    let (tickets, writer) = reflector::store();
    let cache = watcher(watched, watcher::Config::default())
        .default_backoff()
        .reflect(writer)
        .applied_objects()
        .for_each(|_| std::future::ready(()));
    tokio::spawn(cache);
    let limiter = settings.rate_limit.map(|rate| {
        let burst = rate.saturating_mul(NonZeroU32::new(BURST_SECONDS).expect("not zero"));
        governor::RateLimiter::keyed(governor::Quota::per_second(rate).allow_burst(burst))
    });
    let shared = Arc::new(Shared {
        access: Access::new(settings.access.clone(), client.clone()),
        client,
        settings,
        api_config,
        tickets,
        pending: Mutex::new(Waiting::default()),
        limiter,
        readers: session::Remembered::default(),
    });
    let (stop_flushing, flush_stopped) = tokio::sync::oneshot::channel();
    let flusher = tokio::spawn(flush_until(shared.clone(), flush_stopped));
    let app = Router::new()
        .route(
            "/healer/health",
            get(|| async { Json(json!({"status": "ok", "service": "healer"})) }),
        )
        .route("/healer/ingest", post(ingest))
        .route("/healer/status", get(status))
        .route("/healer/tickets", get(list))
        .route("/healer/tickets/{id}", get(show))
        .route("/healer/view", get(list_view))
        .route("/healer/tickets/{id}/view", get(show_view))
        .route("/healer/approve/{id}", post(approve))
        .route("/healer/reject/{id}", post(reject))
        .route("/healer/approve/{id}/action", post(approve_action))
        .route("/healer/reject/{id}/action", post(reject_action))
        .route("/healer/sign-in", get(sign_in_page).post(sign_in))
        .route("/healer/sign-out", post(sign_out))
        .layer(DefaultBodyLimit::max(MAX_BODY))
        .layer(tower_http::timeout::RequestBodyDeadlineLayer::new(
            config.body_read_timeout,
        ))
        .with_state(shared);
    info!(listen = %bound, "serving seed 004's /healer API");
    let (stop_serving, serving_stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(async move {
        let stopped = async move {
            let _ = serving_stopped.await;
        };
        if let Err(error) = serve_app(listener, app, &config, stopped).await {
            warn!(%error, "the /healer API stopped");
        }
    });
    Ok(Ingest {
        bound,
        stop_serving,
        server,
        stop_flushing,
        flusher,
    })
}

/// A 4xx or 5xx with seed 004's `{"detail": ...}` body.
fn refuse(code: StatusCode, detail: impl Into<String>) -> Response {
    let mut response = (code, Json(json!({"detail": detail.into()}))).into_response();
    if code == StatusCode::UNAUTHORIZED {
        challenge(&mut response);
    }
    response
}

/// A 401 says how to authenticate (RFC 9110 §11.6.1): with a bearer token (RFC 6750 §3) — the
/// ingest token, or the caller's Kubernetes token for a decision.
fn challenge(response: &mut Response) {
    response.headers_mut().insert(
        header::WWW_AUTHENTICATE,
        HeaderValue::from_static("Bearer realm=\"kubeheal\""),
    );
}

/// `?namespace=`: the namespace a request is about (default: the ticket namespace).
#[derive(Debug, Default, serde::Deserialize)]
struct Asked {
    #[serde(default)]
    namespace: Option<String>,
}

fn denied(denied: Denied) -> Response {
    refuse(denied.status, denied.message)
}

/// The namespace a request is about, when it is one this operator serves; else the refusal.
fn namespace_of(shared: &Shared, asked: &Asked) -> Result<String, Denied> {
    shared.access.namespace(asked.namespace.as_deref())
}

/// The namespace a request is about, when its bearer token lets it in there (see
/// [`ingest_auth`](super::ingest_auth)); else the refusal.
async fn admitted(shared: &Shared, headers: &HeaderMap, asked: &Asked) -> Result<String, Denied> {
    let namespace = namespace_of(shared, asked)?;
    shared.access.admit(&namespace, headers).await?;
    Ok(namespace)
}

/// `POST /healer/approve/{id}`: approves the ticket's proposal as the person whose Kubernetes
/// token the request carries; with `{"patch_digest": ...}`, only if that is still the proposal.
async fn approve(
    State(shared): State<Arc<Shared>>,
    Path(id): Path<String>,
    Query(asked): Query<Asked>,
    headers: HeaderMap,
    body: axum::body::Bytes,
) -> Response {
    let namespace = match namespace_of(&shared, &asked) {
        Ok(namespace) => namespace,
        Err(refusal) => return denied(refusal),
    };
    let seen = serde_json::from_slice::<Value>(&body)
        .ok()
        .and_then(|v| v.get("patch_digest").and_then(Value::as_str).map(str::to_owned));
    let ticket = Ticket {
        namespace: &namespace,
        id: &id,
    };
    decide_as_caller(&shared, ticket, &headers, Verdict::Approve, None, seen.as_deref()).await
}

/// `POST /healer/reject/{id}` with `{"reason": "..."}`: rejects it likewise.
async fn reject(
    State(shared): State<Arc<Shared>>,
    Path(id): Path<String>,
    Query(asked): Query<Asked>,
    headers: HeaderMap,
    body: Result<axum::body::Bytes, BytesRejection>,
) -> Response {
    let namespace = match namespace_of(&shared, &asked) {
        Ok(namespace) => namespace,
        Err(refusal) => return denied(refusal),
    };
    let body = match body {
        Ok(body) => body,
        Err(rejection) => {
            let (status, why) = crate::healer::server::unreadable_body(&rejection, MAX_BODY);
            return refuse(status, why);
        }
    };
    let body = serde_json::from_slice::<Value>(&body).unwrap_or(Value::Null);
    let seen = body.get("patch_digest").and_then(Value::as_str);
    let reason = body
        .get("reason")
        .and_then(Value::as_str)
        .map(str::to_owned)
        .filter(|r| !r.trim().is_empty());
    let Some(reason) = reason else {
        return refuse(
            StatusCode::UNPROCESSABLE_ENTITY,
            "a rejection needs a reason: send {\"reason\": \"...\"}, so the people who proposed it know",
        );
    };
    let ticket = Ticket {
        namespace: &namespace,
        id: &id,
    };
    decide_as_caller(&shared, ticket, &headers, Verdict::Reject, Some(&reason), seen).await
}

/// A ticket by its namespace and name.
#[derive(Debug, Clone, Copy)]
struct Ticket<'a> {
    namespace: &'a str,
    id: &'a str,
}

impl Ticket<'_> {
    /// Its page, relative to the `/healer` API.
    fn page(self, shared: &Shared) -> String {
        format!("tickets/{}/view{}", self.id, query(shared, self.namespace))
    }
}

/// How addresses name `namespace` (see [`namespace_query`]).
fn query(shared: &Shared, namespace: &str) -> String {
    namespace_query(namespace, &shared.settings.access.home)
}

/// `page` with one more query parameter.
fn and_query(page: &str, parameter: &str) -> String {
    let then = if page.contains('?') { '&' } else { '?' };
    format!("{page}{then}{parameter}")
}

/// Writes the decision as the caller: the operator forwards the caller's token to the API
/// server instead of using its own credentials, so RBAC and the approval policy judge the real
/// person, and `approvedBy` is whoever the API server says the token belongs to. The token is
/// never kept or logged. The ingest token is not asked for: it is the applications', not a
/// person's. The JSON endpoints take the token from `Authorization` only (a cookie is the
/// pages' forms', which carry a CSRF token besides).
async fn decide_as_caller(
    shared: &Shared,
    ticket: Ticket<'_>,
    headers: &HeaderMap,
    verdict: Verdict,
    reason: Option<&str>,
    seen: Option<&str>,
) -> Response {
    let Some(token) = bearer(headers) else {
        return refuse(
            StatusCode::UNAUTHORIZED,
            "send Authorization: Bearer <your Kubernetes token> (kubectl create token, or your OIDC id-token): the decision is taken as you, and the API server decides whether you may",
        );
    };
    match decide_with_token(shared, ticket, token, verdict, reason, seen).await {
        Ok(decided) => Json(json!({
            "ticket_id": ticket.id,
            "status": match verdict { Verdict::Approve => "approved", Verdict::Reject => "rejected" },
            "approved_by": decided.user,
            "patch_digest": decided.patch_digest,
        }))
        .into_response(),
        Err(refusal) => refuse(
            StatusCode::from_u16(refusal.status).unwrap_or(StatusCode::BAD_GATEWAY),
            refusal.message,
        ),
    }
}

async fn decide_with_token(
    shared: &Shared,
    ticket: Ticket<'_>,
    token: &str,
    verdict: Verdict,
    reason: Option<&str>,
    seen: Option<&str>,
) -> Result<Decided, Refusal> {
    let client = session::client_as(&shared.api_config, token).map_err(|message| Refusal { status: 500, message })?;
    decide_ticket(&client, ticket.namespace, ticket.id, verdict, reason, seen).await
}

/// The fields of the sign-in form.
#[derive(serde::Deserialize)]
struct SignInForm {
    token: String,
    #[serde(default)]
    next: Option<String>,
}

/// The fields of the approve and reject forms.
#[derive(serde::Deserialize)]
struct DecisionForm {
    #[serde(default)]
    csrf: String,
    /// The patch the page showed: the decision is only on that one.
    #[serde(default)]
    patch_digest: String,
    #[serde(default)]
    reason: Option<String>,
}

/// `GET /healer/sign-in`: the form where a person pastes their Kubernetes token.
async fn sign_in_page(Query(query): Query<HashMap<String, String>>) -> Response {
    let next = session::after_sign_in(query.get("next").map(String::as_str));
    html_page(sign_in_html(&next, None))
}

/// `POST /healer/sign-in`: the token is checked with the API server (who is this?) and kept in
/// the browser's session cookie; back to the page the person came from.
async fn sign_in(
    State(shared): State<Arc<Shared>>,
    ConnectInfo(caller): ConnectInfo<SocketAddr>,
    headers: HeaderMap,
    axum::Form(form): axum::Form<SignInForm>,
) -> Response {
    let next = session::after_sign_in(form.next.as_deref());
    if let Some(refusal) = over_rate(&shared, caller) {
        return refusal;
    }
    if let Some(why) = session::cross_site(&headers) {
        return refuse(StatusCode::FORBIDDEN, why);
    }
    let token = form.token.trim();
    let checked = match session::client_as(&shared.api_config, token) {
        Ok(client) => session::who(&client).await,
        Err(e) => Err(e),
    };
    match checked {
        Ok(user) => {
            info!(%user, "signed in to the ticket pages");
            (
                StatusCode::SEE_OTHER,
                [
                    (
                        header::SET_COOKIE,
                        session::set_cookie(Some(token), session::secure_cookie(&headers)),
                    ),
                    (header::LOCATION, next),
                ],
            )
                .into_response()
        }
        Err(why) => {
            let mut response = (StatusCode::UNAUTHORIZED, html_page(sign_in_html(&next, Some(&why)))).into_response();
            challenge(&mut response);
            response
        }
    }
}

/// `POST /healer/sign-out`: forgets the session cookie.
async fn sign_out(headers: HeaderMap) -> Response {
    (
        StatusCode::SEE_OTHER,
        [
            (
                header::SET_COOKIE,
                session::set_cookie(None, session::secure_cookie(&headers)),
            ),
            (header::LOCATION, "view".to_owned()),
        ],
    )
        .into_response()
}

/// `POST /healer/approve/{id}/action`: the ticket page's approve form.
async fn approve_action(
    State(shared): State<Arc<Shared>>,
    ConnectInfo(caller): ConnectInfo<SocketAddr>,
    Path(id): Path<String>,
    Query(asked): Query<Asked>,
    headers: HeaderMap,
    axum::Form(form): axum::Form<DecisionForm>,
) -> Response {
    decide_by_form(&shared, caller, (&id, &asked), &headers, form, Verdict::Approve).await
}

/// `POST /healer/reject/{id}/action`: the ticket page's reject form (a reason is required).
async fn reject_action(
    State(shared): State<Arc<Shared>>,
    ConnectInfo(caller): ConnectInfo<SocketAddr>,
    Path(id): Path<String>,
    Query(asked): Query<Asked>,
    headers: HeaderMap,
    axum::Form(form): axum::Form<DecisionForm>,
) -> Response {
    decide_by_form(&shared, caller, (&id, &asked), &headers, form, Verdict::Reject).await
}

/// The refusal of a caller past `--ingest-rate-limit` (which bounds sign-ins and form posts as it
/// bounds ingests: each one asks the API server something), or `None`.
fn over_rate(shared: &Shared, caller: SocketAddr) -> Option<Response> {
    let limiter = shared.limiter.as_ref()?;
    let not_until = limiter.check_key(&caller.ip()).err()?;
    let seconds = not_until
        .wait_time_from(governor::clock::Clock::now(limiter.clock()))
        .as_secs()
        + 1;
    Some(
        (
            StatusCode::TOO_MANY_REQUESTS,
            [(header::RETRY_AFTER, seconds.to_string())],
            Json(json!({"detail": format!("{caller} sent too many requests (--ingest-rate-limit); retry in {seconds} s")})),
        )
            .into_response(),
    )
}

/// A form's decision, as the signed-in person, then back to the ticket's page saying how it
/// went (seed 004: the form redirects to the view).
async fn decide_by_form(
    shared: &Shared,
    caller: SocketAddr,
    (id, asked): (&str, &Asked),
    headers: &HeaderMap,
    form: DecisionForm,
    verdict: Verdict,
) -> Response {
    if let Some(refusal) = over_rate(shared, caller) {
        return refusal;
    }
    let namespace = match namespace_of(shared, asked) {
        Ok(namespace) => namespace,
        Err(refusal) => return denied(refusal),
    };
    let ticket = Ticket {
        namespace: &namespace,
        id,
    };
    // The form's address is `approve/{id}/action`: its page is two folders up.
    let page = format!("../../{}", ticket.page(shared));
    let Some(token) = session::session_token(headers) else {
        return see_other(&format!("../../{}", sign_in_link(&ticket.page(shared))));
    };
    if let Some(why) = session::cross_site(headers) {
        return refuse(StatusCode::FORBIDDEN, why);
    }
    if !same_secret(&form.csrf, &session::csrf(&token)) {
        return refuse(
            StatusCode::FORBIDDEN,
            "the form's CSRF token is missing or wrong: reload the ticket's page and decide again",
        );
    }
    let reason = form.reason.as_deref().map(str::trim).filter(|r| !r.is_empty());
    if verdict == Verdict::Reject && reason.is_none() {
        return see_other(&and_query(&page, "error=reason"));
    }
    let Some(seen) = Some(form.patch_digest.as_str()).filter(|d| !d.is_empty()) else {
        return see_other(&and_query(&page, "error=changed"));
    };
    match decide_with_token(shared, ticket, &token, verdict, reason, Some(seen)).await {
        Ok(_) => see_other(&and_query(
            &page,
            match verdict {
                Verdict::Approve => "done=approved",
                Verdict::Reject => "done=rejected",
            },
        )),
        Err(refusal) => {
            // The page says what happened in its own words (a link cannot put text on it); the
            // API server's words go to the log.
            warn!(ticket = %ticket.id, namespace = %ticket.namespace, status = refusal.status, message = %refusal.message, "a decision on the ticket page was refused");
            let code = match refusal.status {
                401 => "sign-in",
                403 => "forbidden",
                409 if refusal.message.contains("changed since you saw it") => "changed",
                409 => "decided",
                _ => "failed",
            };
            see_other(&and_query(&page, &format!("error={code}")))
        }
    }
}

fn see_other(location: &str) -> Response {
    (StatusCode::SEE_OTHER, [(header::LOCATION, location.to_owned())]).into_response()
}

/// Whether the request may read the tickets of `namespace`, and as whom when a person signed
/// in: the namespace's ingest token (or a ticket namespace open to all) lets it; else a session
/// whose person may list HealerTickets there. The refusal otherwise: for a page, its sign-in.
async fn reader(
    shared: &Shared,
    headers: &HeaderMap,
    namespace: &str,
    page: Option<&str>,
) -> Result<Option<Viewer>, Response> {
    let open = shared.access.admit(namespace, headers).await.err().map(denied);
    // `page` is where the sign-in sends the person back, relative to /healer/; the sign-in's
    // own address relative to the page is as many `../` as the page is deep.
    let sign_in = |next: &str| {
        let path = next.split('?').next().unwrap_or_default();
        let up = "../".repeat(path.matches('/').count());
        see_other(&format!("{up}{}", sign_in_link(next)))
    };
    let Some(token) = session::session_token(headers) else {
        return match (open, page) {
            (None, _) => Ok(None),
            (Some(_), Some(next)) => Err(sign_in(next)),
            (Some(refusal), None) => Err(refusal),
        };
    };
    let must_ask = open.is_some();
    let now = std::time::Instant::now();
    let known = shared
        .readers
        .get(&token, namespace, now)
        .filter(|r| !must_ask || r.may_read.is_some());
    let reader = match known {
        Some(reader) => reader,
        None => {
            let client = session::client_as(&shared.api_config, &token)
                .map_err(|e| refuse(StatusCode::INTERNAL_SERVER_ERROR, e))?;
            let user = match session::who(&client).await {
                Ok(user) => user,
                Err(why) => {
                    info!(%why, "a session's token was refused; signing in again");
                    return match (open, page) {
                        (None, _) => Ok(None),
                        (_, Some(next)) => Err(sign_in(next)),
                        (Some(refusal), None) => Err(refusal),
                    };
                }
            };
            let may_read = if must_ask {
                Some(
                    session::may_read_tickets(&client, namespace)
                        .await
                        .map_err(|e| refuse(StatusCode::BAD_GATEWAY, e))?,
                )
            } else {
                None
            };
            let reader = session::Reader { user, may_read };
            shared.readers.keep(&token, namespace, reader.clone(), now);
            reader
        }
    };
    let user = reader.user;
    if reader.may_read == Some(false) {
        return Err(refuse(
            StatusCode::FORBIDDEN,
            format!("{user} may not list healertickets in namespace {namespace}"),
        ));
    }
    Ok(Some(Viewer {
        user,
        csrf: session::csrf(&token),
    }))
}

async fn ingest(
    State(shared): State<Arc<Shared>>,
    ConnectInfo(caller): ConnectInfo<SocketAddr>,
    Query(asked): Query<Asked>,
    headers: HeaderMap,
    body: Result<axum::body::Bytes, BytesRejection>,
) -> Response {
    let namespace = match admitted(&shared, &headers, &asked).await {
        Ok(namespace) => namespace,
        Err(refusal) => return denied(refusal),
    };
    let body = match body {
        Ok(body) => body,
        Err(rejection) => {
            let (status, why) = crate::healer::server::unreadable_body(&rejection, MAX_BODY);
            return refuse(status, why);
        }
    };
    if let Some(limiter) = &shared.limiter
        && let Err(not_until) = limiter.check_key(&caller.ip())
    {
        let wait = not_until.wait_time_from(governor::clock::Clock::now(limiter.clock()));
        let seconds = wait.as_secs() + 1;
        return (
            StatusCode::TOO_MANY_REQUESTS,
            [(header::RETRY_AFTER, seconds.to_string())],
            Json(json!({"detail": format!(
                "{caller} sent more than {} ingests a second (--ingest-rate-limit); retry in {seconds} s, or report a repeated error less often (its count is kept per ticket)",
                shared.settings.rate_limit.map_or(0, NonZeroU32::get)
            )})),
        )
            .into_response();
    }
    let spec = match ingest_spec(&body) {
        Ok(spec) => spec,
        Err(why) => return refuse(StatusCode::UNPROCESSABLE_ENTITY, why),
    };
    let name = ticket_id(&spec);
    let now = Timestamp::now();
    let key = (namespace, name);
    {
        let mut pending = shared.pending.lock().unwrap_or_else(|e| e.into_inner());
        let full = pending.tickets.len() >= MAX_PENDING || pending.bytes >= MAX_PENDING_BYTES;
        match pending.tickets.get_mut(&key) {
            Some(entry) => {
                entry.seen.count = entry.seen.count.saturating_add(1);
                entry.seen.last = now;
            }
            None if full => {
                return (
                    StatusCode::SERVICE_UNAVAILABLE,
                    [(header::RETRY_AFTER, "1")],
                    Json(json!({"detail": "too many distinct errors are waiting to be written; retry in a second"})),
                )
                    .into_response();
            }
            None => {
                let entry = Pending {
                    spec,
                    seen: Occurrences {
                        count: 1,
                        first: now,
                        last: now,
                    },
                };
                pending.bytes += entry.size();
                pending.tickets.insert(key.clone(), entry);
            }
        }
    }
    let (namespace, name) = key;
    let (id, phase) = filed_under(&shared, &namespace, &name, now);
    (
        StatusCode::ACCEPTED,
        Json(json!({"ticket_id": id, "status": phase_name(phase)})),
    )
        .into_response()
}

/// The ticket an occurrence of `first`'s error at `now` is counted on, as the watch cache knows
/// it: `first`, or its open recurrence when fixes were applied before (see `intake::record`).
fn filed_under(shared: &Shared, namespace: &str, first: &str, now: Timestamp) -> (String, TicketPhase) {
    let mut name = first.to_owned();
    loop {
        let status = shared
            .tickets
            .get(&reflector::ObjectRef::new(&name).within(namespace))
            .and_then(|t| t.status.clone());
        match next_recurrence(first, &name) {
            Some(next) if recurs_after(status.as_ref(), now) => name = next,
            _ => return (name, status.and_then(|s| s.phase).unwrap_or(TicketPhase::Queued)),
        }
    }
}

/// Writes the counts every [`FLUSH_EVERY`] until `stopped`, then once more.
async fn flush_until(shared: Arc<Shared>, stopped: tokio::sync::oneshot::Receiver<()>) {
    let mut tick = tokio::time::interval(FLUSH_EVERY);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut stopped = std::pin::pin!(stopped);
    loop {
        tokio::select! {
            _ = tick.tick() => flush(&shared).await,
            _ = &mut stopped => break,
        }
        // Callers that stopped calling are forgotten: the limiter's memory stays bounded.
        if let Some(limiter) = &shared.limiter {
            limiter.retain_recent();
        }
    }
    // The last rounds: a write that fails is tried again until the deadline, then what is left
    // is said, ticket by ticket (those counts are lost with the process).
    let deadline = tokio::time::Instant::now() + FINAL_FLUSH;
    loop {
        let _ = tokio::time::timeout_at(deadline, flush(&shared)).await;
        {
            let pending = shared.pending.lock().unwrap_or_else(|e| e.into_inner());
            if pending.tickets.is_empty() {
                return;
            }
            if tokio::time::Instant::now() >= deadline {
                for ((namespace, name), entry) in &pending.tickets {
                    tracing::error!(ticket = %name, %namespace, count = entry.seen.count, "occurrences not written before the operator stopped");
                }
                return;
            }
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Writes the counts once, several tickets at a time; a write that fails is counted again in
/// the next round, unless the API server refused it for good (it is dropped, said once).
async fn flush(shared: &Arc<Shared>) {
    {
        let batch: Vec<(TicketKey, Pending)> = {
            let mut pending = shared.pending.lock().unwrap_or_else(|e| e.into_inner());
            pending.bytes = 0;
            pending.tickets.drain().collect()
        };
        futures::stream::iter(batch)
            .for_each_concurrent(FLUSH_CONCURRENCY, |((namespace, name), entry)| {
                let api: Api<HealerTicket> = Api::namespaced(shared.client.clone(), &namespace);
                async move {
                    let written =
                        tokio::time::timeout(WRITE_TIMEOUT, record(&api, &name, &entry.spec, entry.seen)).await;
                    let error = match written {
                        Ok(Ok(_)) => return,
                        Ok(Err(error)) if !error.is_retryable() => {
                            warn!(%error, ticket = %name, %namespace, count = entry.seen.count, "dropped occurrences the API server refuses");
                            return;
                        }
                        Ok(Err(error)) => error.to_string(),
                        Err(_) => format!("the write took longer than {WRITE_TIMEOUT:?}"),
                    };
                    warn!(%error, ticket = %name, %namespace, "could not record occurrences; retrying");
                    shared
                        .pending
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .put_back((namespace, name), entry);
                }
            })
            .await;
    }
}

/// The tickets of `namespace`.
fn tickets_in(shared: &Shared, namespace: &str) -> Vec<Arc<HealerTicket>> {
    shared
        .tickets
        .state()
        .into_iter()
        .filter(|t| t.namespace().as_deref() == Some(namespace))
        .collect()
}

/// Ticket `id` of `namespace`, or the 404 that says so.
fn ticket_in(shared: &Shared, namespace: &str, id: &str) -> Result<Arc<HealerTicket>, Denied> {
    shared
        .tickets
        .get(&reflector::ObjectRef::new(id).within(namespace))
        .ok_or_else(|| {
            Denied::new(
                StatusCode::NOT_FOUND,
                format!("no ticket {id:?} in namespace {namespace}"),
            )
        })
}

async fn list(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    Query(asked): Query<Asked>,
    Query(filters): Query<Filters>,
) -> Response {
    match admitted(&shared, &headers, &asked).await {
        Ok(namespace) => Json(Value::Array(listing(&mut tickets_in(&shared, &namespace), &filters))).into_response(),
        Err(refusal) => denied(refusal),
    }
}

async fn show(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    Path(id): Path<String>,
    Query(asked): Query<Asked>,
) -> Response {
    let ticket = admitted(&shared, &headers, &asked)
        .await
        .and_then(|namespace| ticket_in(&shared, &namespace, &id));
    match ticket {
        Ok(ticket) => Json(describe(&ticket)).into_response(),
        Err(refusal) => denied(refusal),
    }
}

/// An HTML page with headers that keep a browser from running or loading anything in it: the
/// page has no script, and an error text that slipped through would still not run.
fn html_page(html: String) -> Response {
    (
        [
            (
                header::CONTENT_SECURITY_POLICY,
                "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
            ),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
            (header::REFERRER_POLICY, "no-referrer"),
        ],
        Html(html),
    )
        .into_response()
}

async fn list_view(State(shared): State<Arc<Shared>>, headers: HeaderMap, Query(asked): Query<Asked>) -> Response {
    let namespace = match namespace_of(&shared, &asked) {
        Ok(namespace) => namespace,
        Err(refusal) => return denied(refusal),
    };
    let query = query(&shared, &namespace);
    if let Err(refusal) = reader(&shared, &headers, &namespace, Some(&format!("view{query}"))).await {
        return refusal;
    }
    let described = listing(&mut tickets_in(&shared, &namespace), &Filters::default());
    html_page(list_page(&described, &namespace, &query))
}

/// The ticket's page; `?done=` or `?error=` say how a decision taken by its forms went.
async fn show_view(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    Path(id): Path<String>,
    Query(asked): Query<Asked>,
    Query(said): Query<HashMap<String, String>>,
) -> Response {
    let namespace = match namespace_of(&shared, &asked) {
        Ok(namespace) => namespace,
        Err(refusal) => return denied(refusal),
    };
    let ticket = Ticket {
        namespace: &namespace,
        id: &id,
    };
    let viewer = match reader(&shared, &headers, &namespace, Some(&ticket.page(&shared))).await {
        Ok(viewer) => viewer,
        Err(refusal) => return refusal,
    };
    let flash = match (
        said.get("done").map(String::as_str),
        said.get("error").map(String::as_str),
    ) {
        (Some("approved"), _) => Some("The proposal was approved."),
        (Some("rejected"), _) => Some("The proposal was rejected."),
        (_, Some("reason")) => Some("A rejection needs a reason: say why, so the people who proposed it know."),
        (_, Some("changed")) => {
            Some("The proposal changed since this page was shown: look at it again before deciding.")
        }
        (_, Some("decided")) => Some("The ticket was decided already: a decision cannot change."),
        (_, Some("forbidden")) => Some(
            "The API server refused your decision: you need the approve verb on healertickets in this namespace, under your own name.",
        ),
        (_, Some("sign-in")) => Some("Your sign-in expired: sign in again."),
        (_, Some(_)) => Some("The decision could not be written; try again (the operator's log says why)."),
        _ => None,
    };
    match ticket_in(&shared, &namespace, &id) {
        Ok(found) => html_page(ticket_page(
            &found,
            viewer.as_ref(),
            flash,
            &query(&shared, ticket.namespace),
        )),
        Err(refusal) => denied(refusal),
    }
}

/// Seed 004's `/healer/status`: counts by phase, success rate per tier (applied among the
/// finished), errors that recur per (contract, error type), the newest tickets.
async fn status(State(shared): State<Arc<Shared>>, headers: HeaderMap, Query(asked): Query<Asked>) -> Response {
    match admitted(&shared, &headers, &asked).await {
        Ok(namespace) => Json(summary(&tickets_in(&shared, &namespace))).into_response(),
        Err(refusal) => denied(refusal),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refusal_for_want_of_a_token_says_how_to_authenticate_and_others_do_not() {
        let unauthorized = refuse(StatusCode::UNAUTHORIZED, "send a token");
        assert_eq!(
            unauthorized.headers().get(header::WWW_AUTHENTICATE),
            Some(&HeaderValue::from_static("Bearer realm=\"kubeheal\""))
        );
        let forbidden = refuse(StatusCode::FORBIDDEN, "not yours");
        assert_eq!(forbidden.headers().get(header::WWW_AUTHENTICATE), None);
    }
}
