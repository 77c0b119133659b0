//! `--report-to`: a failed call becomes a seed 004 runtime error posted to a ticket ingest
//! endpoint (`POST /healer/ingest`), the way seed 004's generated apps report their own 500s, so
//! that the healer pipeline opens a HealerTicket for it.

use std::time::Duration;

use reqwest::Url;
use serde_json::{Value, json};

use crate::api::shared::{RunEnvelope, wire_name};

/// Seed 004's `IngestRequest` for a failed call: `source: runtime`, the error, the (redacted)
/// response as the stack trace, and the request in `context`. There is no `contract_fqn`: a probe
/// knows the endpoint, not the contract behind it.
pub fn ingest_request(envelope: &RunEnvelope, request_path: &str) -> Value {
    let endpoint = envelope.endpoint.clone().unwrap_or_default();
    let method = endpoint.split(' ').next().unwrap_or("").to_owned();
    let body = envelope
        .text_preview
        .clone()
        .or_else(|| envelope.json.as_ref().map(|j| j.to_string()))
        .unwrap_or_default();
    let mut request = json!({
        "source": "runtime",
        "error": envelope.error_message.clone().unwrap_or_else(|| format!("{endpoint} failed")),
        "context": {
            "request_path": request_path,
            "method": method,
            "status_code": envelope.http_status,
            "endpoint": endpoint,
            "error_class": envelope.error_class.map(|c| wire_name(&c)).unwrap_or_default(),
            "run_id": envelope.run_id,
        },
    });
    if !body.is_empty() {
        request["stacktrace"] = Value::String(body);
    }
    request
}

/// Posts one failed call; the error says which call and why, for stderr.
pub async fn post(
    client: &reqwest::Client,
    ingest: &Url,
    envelope: &RunEnvelope,
    request_path: &str,
    timeout: Duration,
) -> Result<(), String> {
    let what = envelope.endpoint.as_deref().unwrap_or("a call");
    let response = client
        .post(ingest.clone())
        .timeout(timeout)
        .json(&ingest_request(envelope, request_path))
        .send()
        .await
        .map_err(|e| format!("cannot report {what} to {ingest}: {}", e.without_url()))?;
    if response.status().is_success() {
        Ok(())
    } else {
        Err(format!(
            "cannot report {what} to {ingest}: it answered {}",
            response.status()
        ))
    }
}
