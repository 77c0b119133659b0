//! The Code Healer API client (seed 000): `POST` JSON with `project_id`, `cycle`, `failed_files`
//! and `pytest_errors`, plus the earlier attempts in `history` (healers that do not know it ignore
//! it); a bearer token when configured; the cycle's timeout. `200 {status: healed,
//! modified_files, changes_summary}` is success — SAM's `files` / `explanation` are read too;
//! 504 or a timeout is `timeout`; anything else is `error` with the healer's own message, and a
//! 3xx is `error` saying the URL redirects (redirects are not followed: a 307 would send the
//! source files again, wherever its `Location` points). The body is read up to a bound, and the
//! files pass validation before they are returned.

use std::collections::BTreeMap;
use std::time::Instant;

use serde::{Deserialize, Serialize};

use super::{ErrorContext, HealFuture, HealRequest, HealResponse, Healer, PreviousAttempt, validate};
use crate::api::heal_run::HealerOutcome;

/// Largest response body read; a larger one is an error, not a fix.
pub const MAX_BODY: usize = 16 * 1024 * 1024;

/// Seed 000's request body.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct WireRequest {
    pub project_id: String,
    pub cycle: u32,
    pub failed_files: BTreeMap<String, String>,
    pub pytest_errors: ErrorContext,
    /// An extension of seed 000 ("Healing History"): what earlier cycles tried.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub history: Vec<PreviousAttempt>,
}

impl WireRequest {
    pub fn from_request(request: &HealRequest) -> Self {
        WireRequest {
            project_id: request.project_id.clone(),
            cycle: request.cycle,
            failed_files: request.failed_files.clone(),
            pytest_errors: request.error_context.clone(),
            history: request.history.clone(),
        }
    }
}

/// A client of one Code Healer API endpoint.
pub struct CodeHealerApi {
    url: String,
    token: Option<String>,
    client: reqwest::Client,
}

impl CodeHealerApi {
    /// A client for `url` (e.g. `http://localhost:3000/api/heal`), with an optional bearer token.
    pub fn new(url: impl Into<String>, token: Option<String>) -> Result<Self, String> {
        Ok(CodeHealerApi {
            url: url.into(),
            token,
            client: super::http_client()?,
        })
    }

    async fn call(&self, request: &HealRequest) -> HealResponse {
        let started = Instant::now();
        let mut http = self
            .client
            .post(&self.url)
            .timeout(request.timeout)
            .json(&WireRequest::from_request(request));
        if let Some(token) = &self.token {
            http = http.bearer_auth(token);
        }
        let seconds = request.timeout.as_secs();
        let response = match http.send().await {
            Ok(r) => r,
            Err(e) if e.is_timeout() => {
                return HealResponse::failed(
                    HealerOutcome::Timeout,
                    format!("the healer did not answer within {seconds} s"),
                    started.elapsed(),
                );
            }
            Err(e) => {
                return HealResponse::failed(
                    HealerOutcome::Unreachable,
                    format!("cannot reach the healer at {}: {}", self.url, root_cause(&e)),
                    started.elapsed(),
                );
            }
        };
        let status = response.status();
        if status.is_redirection() {
            return HealResponse::failed(
                HealerOutcome::Error,
                format!("the healer URL {}", super::redirect_message(&self.url, &response)),
                started.elapsed(),
            );
        }
        let body = match read_bounded(response, MAX_BODY).await {
            Ok(b) => b,
            Err(BodyError::Timeout) => {
                return HealResponse::failed(
                    HealerOutcome::Timeout,
                    format!("the healer did not finish its answer within {seconds} s"),
                    started.elapsed(),
                );
            }
            Err(BodyError::Other(reason)) => {
                return HealResponse::failed(HealerOutcome::Error, reason, started.elapsed());
            }
        };
        let elapsed = started.elapsed();
        if status == reqwest::StatusCode::GATEWAY_TIMEOUT {
            let message = error_message(&body).unwrap_or_else(|| "504 Gateway Timeout".into());
            return HealResponse::failed(HealerOutcome::Timeout, message, elapsed);
        }
        if !status.is_success() {
            let message = error_message(&body).unwrap_or_else(|| format!("HTTP {status}: {}", snippet(&body)));
            return HealResponse::failed(
                HealerOutcome::Error,
                format!("the healer answered {}: {message}", status.as_u16()),
                elapsed,
            );
        }
        match parse_success(&body) {
            Ok((files, summary)) => match validate::validate(&files, &request.limits) {
                Ok(files) => HealResponse {
                    outcome: HealerOutcome::Healed,
                    reason: None,
                    modified_files: files,
                    changes_summary: summary,
                    // Seed 000 has no confidence; a healer may add one.
                    confidence: confidence(&body).unwrap_or(0.7),
                    duration: elapsed,
                    tokens_used: None,
                    answered_by: None,
                },
                Err(e) => HealResponse::failed(
                    HealerOutcome::Error,
                    format!("the healer's answer was rejected: {e}"),
                    elapsed,
                ),
            },
            Err(e) => HealResponse::failed(HealerOutcome::Error, e, elapsed),
        }
    }
}

impl Healer for CodeHealerApi {
    fn name(&self) -> &'static str {
        "code-healer-api"
    }

    fn heal<'a>(&'a self, request: &'a HealRequest) -> HealFuture<'a> {
        Box::pin(self.call(request))
    }
}

enum BodyError {
    Timeout,
    Other(String),
}

async fn read_bounded(mut response: reqwest::Response, max: usize) -> Result<Vec<u8>, BodyError> {
    let mut body = Vec::new();
    loop {
        match response.chunk().await {
            Ok(Some(chunk)) => {
                if body.len() + chunk.len() > max {
                    return Err(BodyError::Other(format!(
                        "the healer's answer is larger than {} MiB",
                        max / (1024 * 1024)
                    )));
                }
                body.extend_from_slice(&chunk);
            }
            Ok(None) => return Ok(body),
            Err(e) if e.is_timeout() => return Err(BodyError::Timeout),
            Err(e) => {
                return Err(BodyError::Other(format!(
                    "the healer's answer broke off: {}",
                    root_cause(&e)
                )));
            }
        }
    }
}

/// Seed 000's success body, or SAM's own keys.
#[derive(Deserialize)]
struct Success {
    status: Option<String>,
    #[serde(alias = "files")]
    modified_files: Option<BTreeMap<String, String>>,
    #[serde(alias = "explanation")]
    changes_summary: Option<String>,
}

fn parse_success(body: &[u8]) -> Result<(BTreeMap<String, String>, Option<String>), String> {
    let text = std::str::from_utf8(body).map_err(|_| "the healer's answer is not UTF-8 text".to_owned())?;
    let value: serde_json::Value =
        serde_json::from_str(text).map_err(|_| format!("the healer's answer is not JSON: {}", snippet(body)))?;
    let success: Success =
        serde_json::from_value(value).map_err(|e| format!("the healer's answer has the wrong shape: {e}"))?;
    match success.status.as_deref() {
        Some("healed") | None => {}
        Some(other) => return Err(format!("the healer answered status {other:?}, not \"healed\"")),
    }
    let files = success
        .modified_files
        .ok_or_else(|| "the healer's answer has no modified_files".to_owned())?;
    Ok((files, success.changes_summary))
}

fn error_message(body: &[u8]) -> Option<String> {
    let v: serde_json::Value = serde_json::from_slice(body).ok()?;
    v.get("message")
        .or_else(|| v.get("error"))
        .and_then(|m| m.as_str())
        .map(|m| crate::parse::truncate(m, 500))
}

fn confidence(body: &[u8]) -> Option<f64> {
    let v: serde_json::Value = serde_json::from_slice(body).ok()?;
    v.get("confidence")
        .and_then(serde_json::Value::as_f64)
        .filter(|c| (0.0..=1.0).contains(c))
}

fn snippet(body: &[u8]) -> String {
    let text = String::from_utf8_lossy(&body[..body.len().min(200)]);
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn root_cause(e: &(dyn std::error::Error + 'static)) -> String {
    let mut cause: &dyn std::error::Error = e;
    while let Some(next) = cause.source() {
        cause = next;
    }
    cause.to_string()
}
