//! `--report-to`: a failed call becomes a seed 004 runtime error posted to a ticket ingest
//! endpoint (`POST /healer/ingest`), the way seed 004's generated apps report their own 500s, so
//! that the healer pipeline opens a HealerTicket for it.

use std::time::Duration;

use reqwest::Url;
use serde_json::{Value, json};

use crate::api::shared::{RunEnvelope, wire_name};
use crate::core::ticket_api::is_contract_fqn;

/// Where failed calls are reported: the ingest endpoint, the contract they are filed under and
/// the ingest's bearer token.
pub struct Ingest {
    url: Url,
    contract_fqn: String,
    token: Option<String>,
}

impl Ingest {
    /// Checks the contract FQN as the ingest will (kubeheal's own refuses a report without one).
    pub fn new(url: Url, contract_fqn: Option<&str>, token: Option<String>) -> Result<Ingest, String> {
        let contract_fqn = contract_fqn
            .ok_or("--report-to needs --contract-fqn: the contract the service's errors are filed under")?;
        if !is_contract_fqn(contract_fqn) {
            return Err(format!(
                "--contract-fqn {contract_fqn:?} must be slash-separated names without spaces, e.g. entity/helpdesk/ticket"
            ));
        }
        Ok(Ingest {
            url,
            contract_fqn: contract_fqn.to_owned(),
            token: token.filter(|t| !t.is_empty()),
        })
    }

    /// Posts one failed call; the error says which call and why, for stderr.
    pub async fn post(
        &self,
        client: &reqwest::Client,
        envelope: &RunEnvelope,
        request_path: &str,
        timeout: Duration,
    ) -> Result<(), String> {
        let what = envelope.endpoint.as_deref().unwrap_or("a call");
        let ingest = &self.url;
        let mut request = client.post(ingest.clone()).timeout(timeout).json(&ingest_request(
            envelope,
            request_path,
            &self.contract_fqn,
        ));
        if let Some(token) = &self.token {
            request = request.bearer_auth(token);
        }
        let response = request
            .send()
            .await
            .map_err(|e| format!("cannot report {what} to {ingest}: {}", e.without_url()))?;
        match response.status() {
            status if status.is_success() => Ok(()),
            reqwest::StatusCode::UNAUTHORIZED => Err(format!(
                "cannot report {what} to {ingest}: it answered 401; give the ingest's token (KUBEHEAL_INGEST_TOKEN)"
            )),
            status => Err(format!("cannot report {what} to {ingest}: it answered {status}")),
        }
    }
}

/// Seed 004's `IngestRequest` for a failed call: `source: runtime`, the contract, the error, the
/// (redacted) response as the stack trace, and the request in `context`.
pub fn ingest_request(envelope: &RunEnvelope, request_path: &str, contract_fqn: &str) -> Value {
    let endpoint = envelope.endpoint.clone().unwrap_or_default();
    let method = endpoint.split(' ').next().unwrap_or("").to_owned();
    let body = envelope
        .text_preview
        .clone()
        .or_else(|| envelope.json.as_ref().map(|j| j.to_string()))
        .unwrap_or_default();
    let mut request = json!({
        "source": "runtime",
        "contract_fqn": contract_fqn,
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
