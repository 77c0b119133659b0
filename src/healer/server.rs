//! The reference Code Healer server: `POST /api/heal` speaks seed 000 (and reads the optional
//! `history`), `GET /healthz` answers `{"status":"ok"}`. It finds the bug reports in the request's
//! `pytest_errors` with kubeheal's own parser and answers with the built-in deterministic fixers:
//! the healer a cluster can run with no LLM at all, and the real server the heal-loop tests talk to.
//!
//! What one client can hold is bounded by crates' own settings ([`ServerConfig`]): hyper's
//! header read timeout (which also closes idle keep-alive connections), tower-http's deadline on
//! the whole request body, axum's body limit, tower's concurrency limit with load shedding (503,
//! not a queue) on heal requests, and a cap on connections taken from the listener. The parsing
//! and the fixers run on a blocking thread, so a big request does not hold up `/healthz`.

use std::future::Future;
use std::io;
use std::pin::pin;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::error_handling::HandleErrorLayer;
use axum::extract::rejection::BytesRejection;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Json, Response};
use axum::routing::{get, post};
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use serde_json::json;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tower::ServiceBuilder;
use tower::limit::ConcurrencyLimitLayer;
use tower::load_shed::LoadShedLayer;
use tower::load_shed::error::Overloaded;
use tower_http::timeout::{RequestBodyDeadlineLayer, TimeoutError};

use super::code_healer_api::{MAX_BODY, WireRequest};
use super::{Chain, HealRequest, Healer, ReportWithSnippet, validate};
use crate::api::heal_run::HealerOutcome;
use crate::core::heal_run::cycle_timeout;
use crate::parse::{self, Workspace};

/// The healers the server tries, in order.
pub struct ServerState {
    pub healers: Chain,
}

/// What the server takes on at once, and how long it waits for a client.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerConfig {
    /// A request's line and headers must arrive within this, or the connection is closed. hyper
    /// starts the same timer when a keep-alive connection goes idle, so it is also how long an
    /// idle connection is kept.
    pub header_read_timeout: Duration,
    /// A heal request's whole body must arrive within this (from the end of its headers), or
    /// it is answered 408.
    pub body_read_timeout: Duration,
    /// Connections served at once; further ones wait in the listen backlog until one closes.
    pub max_connections: usize,
    /// Heal requests in flight at once (reading the body, parsing, fixing); one more is
    /// answered 503 at once.
    pub max_heal_requests: usize,
}

/// The defaults of [`ServerConfig`] (and of `kubeheal healer serve`'s flags).
pub const DEFAULT_HEADER_READ_TIMEOUT_SECS: u64 = 10;
pub const DEFAULT_BODY_READ_TIMEOUT_SECS: u64 = 30;
pub const DEFAULT_MAX_CONNECTIONS: u32 = 256;
pub const DEFAULT_MAX_HEAL_REQUESTS: u32 = 8;

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            header_read_timeout: Duration::from_secs(DEFAULT_HEADER_READ_TIMEOUT_SECS),
            body_read_timeout: Duration::from_secs(DEFAULT_BODY_READ_TIMEOUT_SECS),
            max_connections: DEFAULT_MAX_CONNECTIONS as usize,
            max_heal_requests: DEFAULT_MAX_HEAL_REQUESTS as usize,
        }
    }
}

/// What the handlers share: the healers, and the permits of the blocking heal work.
#[derive(Clone)]
struct Shared {
    state: Arc<ServerState>,
    /// A permit goes into each blocking heal task, so that work whose client has gone (and whose
    /// request permit `ConcurrencyLimitLayer` has already given back) still counts.
    work: Arc<Semaphore>,
}

/// The server's routes with the default limits.
pub fn router(state: Arc<ServerState>) -> Router {
    router_with(state, &ServerConfig::default())
}

/// The server's routes: `/api/heal` with the body limit, the body deadline and the in-flight
/// limit; `/healthz` with none of them. The connection settings are [`serve_on`]'s.
pub fn router_with(state: Arc<ServerState>, config: &ServerConfig) -> Router {
    let limits = ServiceBuilder::new()
        .layer(HandleErrorLayer::new(overloaded))
        .layer(LoadShedLayer::new())
        .layer(ConcurrencyLimitLayer::new(config.max_heal_requests))
        .layer(RequestBodyDeadlineLayer::new(config.body_read_timeout))
        .layer(DefaultBodyLimit::max(MAX_BODY));
    Router::new()
        .route("/api/heal", post(heal).layer(limits))
        .route(
            "/healthz",
            get(|| async { Json(json!({"status": "ok", "service": "kubeheal-healer"})) }),
        )
        // Seed 000's error body for every answer, not an empty one.
        .fallback(|uri: axum::http::Uri| async move {
            error(
                StatusCode::NOT_FOUND,
                format!(
                    "no such endpoint {}: the Code Healer API is POST /api/heal (and GET /healthz)",
                    uri.path()
                ),
            )
        })
        .method_not_allowed_fallback(|method: axum::http::Method, uri: axum::http::Uri| async move {
            error(
                StatusCode::METHOD_NOT_ALLOWED,
                format!(
                    "{method} is not allowed on {}: the Code Healer API is POST /api/heal (and GET /healthz)",
                    uri.path()
                ),
            )
        })
        .with_state(Shared {
            state,
            work: Arc::new(Semaphore::new(config.max_heal_requests)),
        })
}

/// Binds `listen` and serves on it until `shutdown` completes.
pub async fn serve(
    listen: std::net::SocketAddr,
    state: Arc<ServerState>,
    config: ServerConfig,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> io::Result<()> {
    let listener = TcpListener::bind(listen).await?;
    tracing::info!(address = %listener.local_addr()?, ?config, "healer server listening");
    serve_on(listener, state, config, shutdown).await
}

/// Serves HTTP/1 on `listener` until `shutdown` completes, then waits for the requests in
/// flight. At most `max_connections` connections are accepted at once; each has hyper's header
/// read timeout (which also closes it when idle).
pub async fn serve_on(
    listener: TcpListener,
    state: Arc<ServerState>,
    config: ServerConfig,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> io::Result<()> {
    let app = router_with(state, &config);
    serve_app(listener, app, &config, shutdown).await
}

/// Serves `app` over HTTP/1 on `listener` with `config`'s connection limit and header read
/// timeout until `shutdown` completes, then waits for the requests in flight. Each request
/// carries the client's address (`ConnectInfo<SocketAddr>`), for limits per caller.
pub async fn serve_app(
    listener: TcpListener,
    app: Router,
    config: &ServerConfig,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> io::Result<()> {
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(config.header_read_timeout);
    let connections = Arc::new(Semaphore::new(config.max_connections));
    let graceful = GracefulShutdown::new();
    let mut shutdown = pin!(shutdown);
    loop {
        // A free place first: past the limit, new connections wait in the kernel's backlog.
        let permit = tokio::select! {
            permit = Arc::clone(&connections).acquire_owned() => {
                permit.map_err(|_| io::Error::other("the connection limit was closed"))?
            }
            () = &mut shutdown => break,
        };
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    accept_error(e).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let with_peer = tower::ServiceExt::map_request(
            app.clone(),
            move |mut request: hyper::Request<hyper::body::Incoming>| {
                request.extensions_mut().insert(axum::extract::ConnectInfo(peer));
                request
            },
        );
        let service = TowerToHyperService::new(with_peer);
        let connection = graceful.watch(http.serve_connection(TokioIo::new(stream), service));
        tokio::spawn(async move {
            if let Err(e) = connection.await {
                tracing::debug!(error = %e, "connection ended with an error");
            }
            drop(permit);
        });
    }
    drop(listener);
    graceful.shutdown().await;
    Ok(())
}

/// An error of one connection (reset before it was accepted) is no reason to wait; others (too
/// many open files) are, as axum's own `serve` does.
async fn accept_error(e: io::Error) {
    use io::ErrorKind::{ConnectionAborted, ConnectionRefused, ConnectionReset};
    if matches!(e.kind(), ConnectionAborted | ConnectionRefused | ConnectionReset) {
        return;
    }
    tracing::error!(error = %e, "cannot accept a connection; retrying in 1 s");
    tokio::time::sleep(Duration::from_secs(1)).await;
}

fn error(status: StatusCode, message: impl Into<String>) -> Response {
    (status, Json(json!({"status": "error", "message": message.into()}))).into_response()
}

/// The in-flight limit's answer: 503 at once rather than a queue.
async fn overloaded(e: tower::BoxError) -> Response {
    if e.is::<Overloaded>() {
        return error(
            StatusCode::SERVICE_UNAVAILABLE,
            "the healer is busy with other requests; try again later",
        );
    }
    error(StatusCode::INTERNAL_SERVER_ERROR, format!("the healer failed: {e}"))
}

/// The body that could not be read, as a seed-000 error.
fn body_error(rejection: BytesRejection) -> Response {
    let (status, message) = unreadable_body(&rejection, MAX_BODY);
    error(status, message)
}

/// Why a request body (limited to `max` bytes) could not be read, and the status that says so:
/// too large (413), too slow (408, the body deadline), or broken off (400). Shared by every
/// listener built on [`serve_app`].
pub fn unreadable_body(rejection: &BytesRejection, max: usize) -> (StatusCode, String) {
    let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(rejection);
    while let Some(e) = cause {
        if e.is::<TimeoutError>() {
            return (
                StatusCode::REQUEST_TIMEOUT,
                "the request body did not arrive in time".into(),
            );
        }
        cause = e.source();
    }
    let status = rejection.status();
    if status == StatusCode::PAYLOAD_TOO_LARGE {
        let size = if max >= 1024 * 1024 {
            format!("{} MiB", max / (1024 * 1024))
        } else {
            format!("{} KiB", max / 1024)
        };
        return (status, format!("the request is larger than {size}"));
    }
    (status, format!("cannot read the request: {}", rejection.body_text()))
}

async fn heal(State(shared): State<Shared>, body: Result<Bytes, BytesRejection>) -> Response {
    let body = match body {
        Ok(body) => body,
        Err(rejection) => return body_error(rejection),
    };
    // Waits only for work whose client has gone (see `Shared::work`); the semaphore is never
    // closed, which is the only way `acquire_owned` fails.
    let Ok(permit) = Arc::clone(&shared.work).acquire_owned().await else {
        return error(StatusCode::INTERNAL_SERVER_ERROR, "the heal work queue is closed");
    };
    // Parsing the log and the fixers are CPU work: a blocking thread does it, so the async
    // workers go on serving other connections (and /healthz). The healers' own futures (an
    // OpenAI endpoint's request) are driven from that thread too.
    let runtime = tokio::runtime::Handle::current();
    let state = shared.state;
    let task = tokio::task::spawn_blocking(move || {
        let _permit = permit;
        runtime.block_on(heal_body(&state.healers, &body))
    });
    match task.await {
        Ok(response) => response,
        Err(e) => error(StatusCode::INTERNAL_SERVER_ERROR, format!("the heal task failed: {e}")),
    }
}

async fn heal_body(healers: &Chain, body: &[u8]) -> Response {
    let wire: WireRequest = match serde_json::from_slice(body) {
        Ok(w) => w,
        Err(e) => {
            return error(
                StatusCode::BAD_REQUEST,
                format!("invalid request: {e}; see the Code Healer API"),
            );
        }
    };
    let request = to_request(wire);
    if request.reports.is_empty() {
        return error(
            StatusCode::UNPROCESSABLE_ENTITY,
            "no bug report could be read from pytest_errors (stderr and stdout); nothing to fix",
        );
    }
    let response = healers.heal(&request).await;
    if response.outcome == HealerOutcome::Healed {
        return Json(json!({
            "status": "healed",
            "modified_files": response.modified_files,
            "changes_summary": response.changes_summary.unwrap_or_default(),
            "confidence": response.confidence,
        }))
        .into_response();
    }
    error(
        StatusCode::UNPROCESSABLE_ENTITY,
        format!("no fix found ({})", response.reason.unwrap_or_default()),
    )
}

/// The request as the healers see it: bug reports parsed from the error context, with snippets.
fn to_request(wire: WireRequest) -> HealRequest {
    let files: Vec<String> = wire.failed_files.keys().cloned().collect();
    let workspace = Workspace::new("").with_files(files).with_package_manifests(|path| {
        let text = wire.failed_files.get(path)?;
        (text.len() as u64 <= parse::MAX_PACKAGE_MANIFEST_BYTES).then(|| text.as_bytes().to_vec())
    });
    let log = format!("{}\n{}", wire.pytest_errors.stderr, wire.pytest_errors.stdout);
    let parsed = parse::parse(&log, &workspace);
    let reports = parsed
        .reports
        .into_iter()
        .filter_map(|r| {
            let content = wire.failed_files.get(&r.file_path)?;
            Some(ReportWithSnippet::new(r.clone(), content))
        })
        .collect();
    let allowed_paths = wire.failed_files.keys().cloned().collect();
    HealRequest {
        project_id: wire.project_id,
        cycle: wire.cycle,
        failed_files: wire.failed_files,
        reports,
        error_context: wire.pytest_errors,
        history: wire.history,
        timeout: Duration::from_secs(u64::from(cycle_timeout(&[], wire.cycle))),
        // The server changes only files it was sent.
        limits: validate::Limits {
            allowed_paths,
            ..validate::Limits::default()
        },
    }
}
