//! `kubeheal probe`: seed 003's "OpenAPI in" — runtime checks of a running service. The document
//! is read and validated (`document`), each endpoint's inputs are generated from its schema
//! (`inputs`), each endpoint is called once with a timeout and answered with a RunEnvelope
//! (`call`), and failed calls can be posted to a ticket ingest endpoint as seed 004 runtime
//! errors (`report`).
//!
//! It sits beside the executor: it observes a service and never interprets or fixes anything;
//! it uses the API types and the redaction rules below it, nothing above.

pub mod call;
pub mod document;
pub mod inputs;
pub mod ready;
pub mod report;
pub mod verify;

use std::time::{Duration, Instant};

use reqwest::Url;
use serde_json::Value;

use crate::api::shared::{RunEnvelope, RunStatus};
use crate::core::redact::{looks_secret_name, secret_values};
use call::{Failure, Target};
use document::{Document, Endpoint};

/// Bad input: the probe cannot start (exit code 2). The message says what is wrong and what to
/// do.
#[derive(Debug, thiserror::Error)]
pub enum ProbeError {
    /// The command line is wrong.
    #[error("{0}")]
    Usage(String),
    /// The document could not be read.
    #[error("{0}")]
    Read(String),
    /// The document is not an OpenAPI 3.x document with endpoints.
    #[error("{0}")]
    Document(String),
}

/// The `kubeheal probe` command line.
#[derive(Debug, Clone, clap::Args)]
pub struct ProbeArgs {
    /// The OpenAPI 3.x document (JSON or YAML): a file, or an http(s) URL.
    #[arg(long = "openapi", value_name = "FILE|URL")]
    pub document: String,
    /// Where the service runs, e.g. http://localhost:8000 (a path prefix such as /api is kept).
    #[arg(long, value_name = "URL")]
    pub base_url: String,
    /// An endpoint to call, as seed 003's endpoint ID `"METHOD /path"` (repeatable; default: every
    /// endpoint of the document).
    #[arg(long = "endpoint", value_name = "METHOD /path")]
    pub endpoints: Vec<String>,
    /// Seconds one call may take (connecting, answering and sending the whole body).
    #[arg(long, value_name = "SECONDS", default_value_t = 30.0)]
    pub timeout: f64,
    /// A header sent on every call, `Name: value` (repeatable); its value never appears in the
    /// output.
    #[arg(long = "header", value_name = "NAME:VALUE")]
    pub headers: Vec<String>,
    /// A ticket ingest endpoint (seed 004's `POST /healer/ingest`): every failed call is posted
    /// there as a runtime error of the contract `--contract-fqn` names.
    #[arg(long, value_name = "INGEST_URL", requires = "contract_fqn")]
    pub report_to: Option<String>,
    /// The contract the service's errors are filed under with `--report-to` (seed 004's
    /// `contract_fqn`, e.g. entity/helpdesk/ticket): a probe knows the endpoint, not the contract.
    #[arg(long, value_name = "FQN")]
    pub contract_fqn: Option<String>,
    /// The ingest's bearer token (the key `token` of the namespace's Secret `kubeheal-ingest`),
    /// sent with every report; best given in the environment variable, where no process listing
    /// shows it. It never appears in the output.
    #[arg(long, value_name = "TOKEN", env = "KUBEHEAL_INGEST_TOKEN", hide_env_values = true)]
    pub report_token: Option<String>,
    /// Wait up to this many seconds for the service to accept connections before the first
    /// call (for a service started just before the probe). Default: call at once.
    #[arg(long, value_name = "SECONDS")]
    pub wait_ready: Option<f64>,
    /// In an executor Pod: wait until this file exists; when it says `skip` (the build failed),
    /// call nothing.
    #[arg(long, value_name = "FILE", hide = true, requires = "output")]
    pub after: Option<std::path::PathBuf>,
    /// In an executor Pod: write the envelopes (kubeheal's own form) to this file, whole or not
    /// at all, and end with 0 whatever the calls did; the build container reports them.
    #[arg(long, value_name = "FILE", hide = true, requires = "after")]
    pub output: Option<std::path::PathBuf>,
}

/// What a probe found.
#[derive(Debug, Clone)]
pub struct ProbeReport {
    /// One envelope per endpoint, in the order called.
    pub envelopes: Vec<RunEnvelope>,
    /// Failed calls that could not be posted to `--report-to`, and why.
    pub report_errors: Vec<String>,
}

impl ProbeReport {
    pub fn all_succeeded(&self) -> bool {
        self.envelopes.iter().all(|e| e.status == RunStatus::Success)
    }

    /// The JSON array `kubeheal probe` prints: seed 003 envelopes, each with its `endpoint`.
    pub fn seed_json(&self) -> Value {
        Value::Array(self.envelopes.iter().map(RunEnvelope::seed_json).collect())
    }
}

/// Runs a probe: validates the inputs, calls each endpoint in turn, and reports failed calls.
pub async fn probe(args: &ProbeArgs) -> Result<ProbeReport, ProbeError> {
    probe_hiding(args, &[]).await
}

/// [`probe`], also keeping `hidden` (the build's secret values) out of every envelope.
pub async fn probe_hiding(args: &ProbeArgs, hidden: &[String]) -> Result<ProbeReport, ProbeError> {
    probe_document(args, None, hidden, std::future::pending()).await
}

/// [`probe_hiding`] with the document's text already read (`None`: read from `args.document`);
/// the wait for the service (`--wait-ready`) ends early when `gave_up` says why it will never
/// answer (it exited with an error), and every call then carries that as a warning.
pub async fn probe_document(
    args: &ProbeArgs,
    document: Option<String>,
    hidden: &[String],
    gave_up: impl Future<Output = String>,
) -> Result<ProbeReport, ProbeError> {
    let timeout = match args.timeout {
        t if t.is_finite() && t > 0.0 && t <= 86_400.0 => Duration::from_secs_f64(t),
        t => {
            return Err(ProbeError::Usage(format!(
                "--timeout {t} is not a number of seconds above 0 and at most 86400"
            )));
        }
    };
    let base = parse_http_url("--base-url", &args.base_url)?;
    let report_to = args
        .report_to
        .as_deref()
        .map(|u| parse_http_url("--report-to", u))
        .transpose()?
        .map(|url| report::Ingest::new(url, args.contract_fqn.as_deref(), args.report_token.clone()))
        .transpose()
        .map_err(ProbeError::Usage)?;
    let headers = args
        .headers
        .iter()
        .map(|h| parse_header(h))
        .collect::<Result<Vec<_>, _>>()?;
    let wanted = args
        .endpoints
        .iter()
        .map(|e| document::endpoint_id(e))
        .collect::<Result<Vec<_>, _>>()?;
    let wait_ready = match args.wait_ready {
        None => None,
        Some(t) if t.is_finite() && t > 0.0 && t <= 3600.0 => Some(Duration::from_secs_f64(t)),
        Some(t) => {
            return Err(ProbeError::Usage(format!(
                "--wait-ready {t} is not a number of seconds between 0 and 3600"
            )));
        }
    };
    let client = call::client().map_err(ProbeError::Usage)?;
    let text = match document {
        Some(text) => text,
        None => read_document(&client, &args.document, timeout).await?,
    };
    let doc = Document::parse(&text, &args.document)?;
    let mut secrets = secrets(&headers, &base);
    secrets.extend(hidden.iter().filter(|s| s.trim().len() >= 4).cloned());
    // Not ready in time is not an error here: the calls then fail, each saying so.
    let not_up = match wait_ready {
        Some(limit) => match ready::wait_unless(&base, limit, gave_up).await {
            ready::Waited::GaveUp(why) => Some(why),
            ready::Waited::Ready | ready::Waited::TimedOut => None,
        },
        None => None,
    };
    let target = Target {
        client,
        secrets,
        base,
        headers,
        timeout,
    };
    let endpoints = doc.endpoints();
    let chosen: Vec<Result<&Endpoint, String>> = if wanted.is_empty() {
        endpoints.iter().map(Ok).collect()
    } else {
        wanted
            .into_iter()
            .map(|id| endpoints.iter().find(|e| e.id == id).ok_or(id))
            .collect()
    };
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis())
        .unwrap_or_default();
    let mut envelopes = Vec::new();
    let mut failed_calls = Vec::new();
    for (i, choice) in chosen.into_iter().enumerate() {
        let run_id = format!("probe-{stamp}-{}", i + 1);
        let mut envelope = match choice {
            Ok(endpoint) => match inputs::build(&doc, endpoint) {
                Ok(inputs) => {
                    let path = call::url(&target.base, endpoint, &inputs).map(|u| u.path().to_owned());
                    let envelope = call::call(&target, run_id, endpoint, inputs).await;
                    if let (RunStatus::Error | RunStatus::Timeout, Ok(path)) = (envelope.status, path) {
                        failed_calls.push((envelopes.len(), path));
                    }
                    envelope
                }
                Err(why) => call::failed(run_id, endpoint, Instant::now(), Vec::new(), Failure::Inputs(why)),
            },
            Err(id) => {
                let unknown = Endpoint {
                    method: id.split(' ').next().unwrap_or("").to_owned(),
                    path: id.split_once(' ').map(|(_, p)| p.to_owned()).unwrap_or_default(),
                    id,
                    operation: Value::Null,
                    shared_parameters: Vec::new(),
                };
                let known = endpoints.iter().map(|e| e.id.clone()).collect();
                call::failed(
                    run_id,
                    &unknown,
                    Instant::now(),
                    Vec::new(),
                    Failure::NotInDocument { known },
                )
            }
        };
        if let Some(why) = &not_up {
            envelope.warnings.push(why.clone());
        }
        envelopes.push(envelope);
    }
    let mut report_errors = Vec::new();
    if let Some(ingest) = report_to {
        for (index, path) in failed_calls {
            if let Err(why) = ingest.post(&target.client, &envelopes[index], &path, timeout).await {
                report_errors.push(why);
            }
        }
    }
    Ok(ProbeReport {
        envelopes,
        report_errors,
    })
}

/// `text` as an http(s) URL with a host, the only kind kubeheal calls (a service, a healer, an
/// ingest); `None` for anything else.
pub fn http_url(text: &str) -> Option<Url> {
    Url::parse(text)
        .ok()
        .filter(|url| matches!(url.scheme(), "http" | "https") && url.host().is_some())
}

fn parse_http_url(flag: &str, text: &str) -> Result<Url, ProbeError> {
    http_url(text).ok_or_else(|| {
        ProbeError::Usage(format!(
            "{flag} {text:?} is not an http(s) URL; give one such as http://localhost:8000"
        ))
    })
}

/// `Name: value` (or `Name:value`) as a header that reqwest will send.
fn parse_header(text: &str) -> Result<(String, String), ProbeError> {
    let bad = |why: &str| ProbeError::Usage(format!("--header: {why}; write it as \"Name: value\""));
    let (name, value) = text
        .split_once(':')
        .ok_or_else(|| bad("it has no ':' between name and value"))?;
    let (name, value) = (name.trim(), value.trim());
    reqwest::header::HeaderName::from_bytes(name.as_bytes()).map_err(|_| bad("the name is not a valid header name"))?;
    reqwest::header::HeaderValue::from_str(value).map_err(|_| bad("the value has characters a header cannot carry"))?;
    Ok((name.to_owned(), value.to_owned()))
}

/// What must never be printed: credentials in the headers (the whole value and the token after
/// an `Authorization` scheme), a password in the base URL, and kubeheal's own secret variables.
fn secrets(headers: &[(String, String)], base: &Url) -> Vec<String> {
    let mut out = secret_values(std::env::vars());
    for (name, value) in headers {
        let upper = name.to_ascii_uppercase().replace('-', "_");
        let credential = matches!(upper.as_str(), "AUTHORIZATION" | "PROXY_AUTHORIZATION" | "COOKIE")
            || looks_secret_name(&upper)
            || upper.ends_with("KEY");
        if credential {
            out.push(value.clone());
            if let Some((_, token)) = value.split_once(' ') {
                out.push(token.trim().to_owned());
            }
        }
    }
    if let Some(password) = base.password() {
        out.push(password.to_owned());
    }
    out.retain(|s| s.trim().len() >= 4);
    out
}

/// The document's text, from a file or an http(s) URL.
async fn read_document(client: &reqwest::Client, source: &str, timeout: Duration) -> Result<String, ProbeError> {
    if source.starts_with("http://") || source.starts_with("https://") {
        let url = parse_http_url("--openapi", source)?;
        let response = client
            .get(url)
            .timeout(timeout)
            .send()
            .await
            .map_err(|e| ProbeError::Read(format!("cannot fetch {source}: {}", e.without_url())))?;
        if !response.status().is_success() {
            return Err(ProbeError::Read(format!(
                "cannot fetch {source}: it answered {}; give the document's URL or a file",
                response.status()
            )));
        }
        return response
            .text()
            .await
            .map_err(|e| ProbeError::Read(format!("cannot read {source}: {}", e.without_url())));
    }
    std::fs::read_to_string(source).map_err(|e| {
        ProbeError::Read(format!(
            "cannot read {source}: {e}; give an OpenAPI document's file or http(s) URL"
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_are_parsed_and_bad_ones_refused_with_the_form_to_use() {
        assert_eq!(
            parse_header("Authorization: Bearer abc").expect("a header"),
            ("Authorization".to_owned(), "Bearer abc".to_owned())
        );
        let err = parse_header("no colon").unwrap_err().to_string();
        assert!(err.contains("\"Name: value\""), "{err}");
        assert!(parse_header("bad name: x").is_err());
    }

    #[test]
    fn credential_headers_and_the_token_after_their_scheme_are_secrets() {
        let base = Url::parse("http://user:hunter22@localhost").expect("a URL");
        let found = secrets(
            &[
                ("Authorization".into(), "Bearer tok-123456".into()),
                ("X-Api-Key".into(), "k-987654".into()),
                ("Accept".into(), "application/json".into()),
            ],
            &base,
        );
        for s in ["Bearer tok-123456", "tok-123456", "k-987654", "hunter22"] {
            assert!(found.iter().any(|f| f == s), "{s} in {found:?}");
        }
        assert!(!found.iter().any(|f| f == "application/json"));
    }
}
