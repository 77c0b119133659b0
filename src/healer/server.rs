//! The reference Code Healer server: `POST /api/heal` speaks seed 000 (and reads the optional
//! `history`), `GET /healthz` answers `{"status":"ok"}`. It finds the bug reports in the request's
//! `pytest_errors` with kubeheal's own parser and answers with the built-in deterministic fixers:
//! the healer a cluster can run with no LLM at all, and the real server the heal-loop tests talk to.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Json, Response};
use axum::routing::{get, post};
use serde_json::json;

use super::code_healer_api::{MAX_BODY, WireRequest};
use super::{Chain, HealRequest, Healer, ReportWithSnippet, cycle_timeout, validate};
use crate::api::heal_run::HealerOutcome;
use crate::parse::{self, Workspace};

/// The healers the server tries, in order.
pub struct ServerState {
    pub healers: Chain,
}

/// The server's routes.
pub fn router(state: Arc<ServerState>) -> Router {
    Router::new()
        .route("/api/heal", post(heal))
        .route(
            "/healthz",
            get(|| async { Json(json!({"status": "ok", "service": "kubeheal-healer"})) }),
        )
        .layer(DefaultBodyLimit::max(MAX_BODY))
        .with_state(state)
}

/// Serves on `listen` until `shutdown` completes.
pub async fn serve(
    listen: SocketAddr,
    state: Arc<ServerState>,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let listener = tokio::net::TcpListener::bind(listen).await?;
    tracing::info!(address = %listener.local_addr()?, "healer server listening");
    axum::serve(listener, router(state))
        .with_graceful_shutdown(shutdown)
        .await
}

fn error(status: StatusCode, message: impl Into<String>) -> Response {
    (status, Json(json!({"status": "error", "message": message.into()}))).into_response()
}

async fn heal(State(state): State<Arc<ServerState>>, body: Bytes) -> Response {
    let wire: WireRequest = match serde_json::from_slice(&body) {
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
    let response = state.healers.heal(&request).await;
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
    let workspace = Workspace::new("").with_files(files);
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
        timeout: cycle_timeout(&[], wire.cycle),
        // The server changes only files it was sent.
        limits: validate::Limits {
            allowed_paths,
            ..validate::Limits::default()
        },
    }
}
