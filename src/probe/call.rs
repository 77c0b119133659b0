//! One call of one endpoint, and its RunEnvelope: the status code, the content by seed 003's
//! content-type table (`json` for JSON, the first 10 KB as `text_preview` for text, neither for
//! anything else), redacted before it is kept, and an error class with a next step whenever the
//! call did not succeed.

use std::time::{Duration, Instant};

use reqwest::Url;
use serde_json::Value;

use super::document::Endpoint;
use super::inputs::{Inputs, is_json};
use crate::api::shared::{ErrorClass, RunEnvelope, RunStatus, text_preview};
use crate::core::redact::{SECRET_PLACEHOLDER, looks_secret_name, redact};

/// Most response bytes read; a longer body is cut here (and said so in a warning).
pub const MAX_BODY: usize = 5 * 1024 * 1024;

/// Redirects followed on the same host and port; one to another host is never followed, so the
/// headers (credentials) go only where the user sent them.
const MAX_REDIRECTS: usize = 5;

/// Where and how calls are made.
#[derive(Debug, Clone)]
pub struct Target {
    pub client: reqwest::Client,
    pub base: Url,
    /// `--header` values, sent on every call (they override generated headers of the same name).
    pub headers: Vec<(String, String)>,
    pub timeout: Duration,
    /// Values never to print: the credentials in `--header`s and kubeheal's own secret variables.
    pub secrets: Vec<String>,
}

/// The HTTP client for probes: the TLS provider installed, redirects only within a host.
pub fn client() -> Result<reqwest::Client, String> {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let policy = reqwest::redirect::Policy::custom(|attempt| {
        let first = attempt.previous().first().cloned();
        let same_origin = first.is_some_and(|f| {
            f.host_str() == attempt.url().host_str()
                && f.port_or_known_default() == attempt.url().port_or_known_default()
        });
        if attempt.previous().len() > MAX_REDIRECTS || !same_origin {
            attempt.stop()
        } else {
            attempt.follow()
        }
    });
    reqwest::Client::builder()
        .redirect(policy)
        .build()
        .map_err(|e| format!("cannot build the HTTP client: {e}"))
}

/// The URL of `endpoint` under `base` with the path parameters filled in (each percent-encoded as
/// one segment) and the query appended.
pub fn url(base: &Url, endpoint: &Endpoint, inputs: &Inputs) -> Result<Url, String> {
    let mut url = base.clone();
    {
        let mut segments = url
            .path_segments_mut()
            .map_err(|()| format!("{base} cannot be a base URL; give one such as http://localhost:8000"))?;
        segments.pop_if_empty();
        for template in endpoint.path.split('/').filter(|s| !s.is_empty()) {
            let mut segment = template.to_owned();
            for (name, value) in &inputs.path {
                segment = segment.replace(&format!("{{{name}}}"), value);
            }
            if segment.contains('{') && segment.contains('}') {
                return Err(format!(
                    "{}: the path parameter in {template} is not declared in the document",
                    endpoint.id
                ));
            }
            segments.push(&segment);
        }
    }
    if !inputs.query.is_empty() {
        url.query_pairs_mut().extend_pairs(&inputs.query);
    }
    Ok(url)
}

/// Calls `endpoint` once and returns its envelope.
pub async fn call(target: &Target, run_id: String, endpoint: &Endpoint, inputs: Inputs) -> RunEnvelope {
    let started = Instant::now();
    let mut warnings = inputs.warnings.clone();
    let url = match url(&target.base, endpoint, &inputs) {
        Ok(url) => url,
        Err(message) => {
            return failed(run_id, endpoint, started, warnings, Failure::Inputs(message));
        }
    };
    let method = reqwest::Method::from_bytes(endpoint.method.as_bytes()).unwrap_or(reqwest::Method::GET);
    let mut request = target.client.request(method, url.clone()).timeout(target.timeout);
    for (name, value) in &inputs.headers {
        if !target.headers.iter().any(|(n, _)| n.eq_ignore_ascii_case(name)) {
            request = request.header(name, value);
        }
    }
    for (name, value) in &target.headers {
        request = request.header(name, value);
    }
    if let Some(body) = &inputs.body {
        request = request.json(body);
    }
    let result = async {
        let mut response = request.send().await?;
        let mut body = Vec::new();
        let mut cut = false;
        while let Some(chunk) = response.chunk().await? {
            let room = MAX_BODY - body.len();
            body.extend_from_slice(&chunk[..chunk.len().min(room)]);
            if chunk.len() > room {
                cut = true;
                break;
            }
        }
        Ok::<_, reqwest::Error>((response, body, cut))
    }
    .await;
    let (response, body, cut) = match result {
        Ok(answer) => answer,
        Err(e) if e.is_timeout() => {
            return failed(run_id, endpoint, started, warnings, Failure::Timeout(target.timeout));
        }
        Err(e) => {
            // Without the URL: it may carry credentials (`user:password@`).
            let (message, _) = redact(&e.without_url().to_string(), &target.secrets);
            return failed(run_id, endpoint, started, warnings, Failure::Network(message));
        }
    };
    if cut {
        warnings.push(format!(
            "the response is longer than {} MiB; only its start was read",
            MAX_BODY >> 20
        ));
    }
    let status = response.status();
    let content_type = response
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(|v| v.split(';').next().unwrap_or("").trim().to_ascii_lowercase())
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| "application/octet-stream".to_owned());
    let (json, preview, redactions) = content(&content_type, &body, &target.secrets, &mut warnings);
    let mut envelope = RunEnvelope {
        run_id,
        endpoint: Some(endpoint.id.clone()),
        status: RunStatus::Success,
        duration_ms: started.elapsed().as_millis() as u64,
        http_status: status.as_u16(),
        content_type,
        json,
        text_preview: preview,
        exit_code: None,
        error_class: None,
        error_message: None,
        suggested_fix: None,
        warnings,
        redactions_applied: redactions > 0,
        artifacts: Vec::new(),
        log_excerpt: None,
        environment_metadata: Default::default(),
    };
    if !status.is_success() {
        let (class, message, fix) = http_failure(endpoint, status.as_u16(), &response, &url);
        envelope.status = RunStatus::Error;
        envelope.error_class = Some(class);
        envelope.error_message = Some(redact(&message, &target.secrets).0);
        envelope.suggested_fix = Some(fix);
    }
    envelope
}

/// The envelope's content fields for a response body, redacted; and the redactions made.
fn content(
    content_type: &str,
    body: &[u8],
    secrets: &[String],
    warnings: &mut Vec<String>,
) -> (Option<Value>, Option<String>, usize) {
    if is_json(content_type) {
        match serde_json::from_slice::<Value>(body) {
            Ok(mut value) => {
                let n = redact_json(&mut value, secrets);
                return (Some(value), None, n);
            }
            Err(e) => warnings.push(format!(
                "the response says it is JSON but does not parse ({e}); shown as text"
            )),
        }
    } else if !content_type.starts_with("text/") {
        return (None, None, 0);
    }
    // Redacted whole, then cut: a secret cut in half at 10 KB would no longer be recognised.
    let (text, n) = redact(&String::from_utf8_lossy(body), secrets);
    (None, Some(text_preview(&text)), n)
}

/// Redacts what an envelope says (its body, messages and warnings) with `secrets`, for values
/// learnt after the call (a build's secrets, which the probe container does not know). Returns
/// how many were redacted; `redactions_applied` says so.
pub fn redact_envelope(envelope: &mut RunEnvelope, secrets: &[String]) -> usize {
    let mut n = 0;
    let texts = [
        &mut envelope.text_preview,
        &mut envelope.error_message,
        &mut envelope.suggested_fix,
    ];
    for text in texts.into_iter().flatten().chain(envelope.warnings.iter_mut()) {
        let (redacted, count) = redact(text, secrets);
        *text = redacted;
        n += count;
    }
    if let Some(json) = envelope.json.as_mut() {
        n += redact_json(json, secrets);
    }
    envelope.redactions_applied |= n > 0;
    n
}

/// Redacts every string of `value` and every value whose key names a secret (`api_key`,
/// `password`, `token`, ...). Returns how many were redacted.
pub fn redact_json(value: &mut Value, secrets: &[String]) -> usize {
    match value {
        Value::String(s) => {
            let (text, n) = redact(s, secrets);
            *s = text;
            n
        }
        Value::Array(items) => items.iter_mut().map(|v| redact_json(v, secrets)).sum(),
        Value::Object(map) => map
            .iter_mut()
            .map(|(key, v)| {
                let named = looks_secret_name(&key.to_ascii_uppercase().replace('-', "_"));
                match v {
                    Value::String(s) if named && s.trim().len() >= 4 && !s.starts_with("[REDACTED") => {
                        *v = Value::String(SECRET_PLACEHOLDER.to_owned());
                        1
                    }
                    Value::Number(_) if named => {
                        *v = Value::String(SECRET_PLACEHOLDER.to_owned());
                        1
                    }
                    _ => redact_json(v, secrets),
                }
            })
            .sum(),
        _ => 0,
    }
}

/// The class, message and next step of an answer that is not 2xx.
fn http_failure(
    endpoint: &Endpoint,
    status: u16,
    response: &reqwest::Response,
    url: &Url,
) -> (ErrorClass, String, String) {
    let id = &endpoint.id;
    match status {
        500..=599 => (
            ErrorClass::RuntimeError,
            format!("{id} answered {status}: the service failed while handling the call"),
            "read the redacted response and the service's log for the exception, fix it, and probe again".to_owned(),
        ),
        404 | 405 => (
            ErrorClass::EndpointNotFound,
            format!("{id} answered {status}: the service does not serve this documented endpoint at {url}"),
            "check --base-url (a path prefix such as /api?) and that the running service matches the document".to_owned(),
        ),
        401 | 403 => (
            ErrorClass::ValidationError,
            format!("{id} answered {status}: the service refused the call's credentials"),
            "give credentials with --header, e.g. --header 'Authorization: Bearer …'".to_owned(),
        ),
        400..=499 => (
            ErrorClass::ValidationError,
            format!("{id} answered {status}: the service refused the inputs generated from the document"),
            "add defaults or examples to the document's parameters and request body, so the generated inputs are ones the service takes".to_owned(),
        ),
        300..=399 => {
            let to = response
                .headers()
                .get(reqwest::header::LOCATION)
                .and_then(|l| l.to_str().ok())
                .unwrap_or("(no Location)");
            (
                ErrorClass::NetworkError,
                format!("{id} answered {status}, a redirect to {to}; kubeheal follows redirects only on the same host, so that headers go nowhere else"),
                "give the final address as --base-url".to_owned(),
            )
        }
        _ => (
            ErrorClass::Unknown,
            format!("{id} answered {status}"),
            "check what the service means by this status".to_owned(),
        ),
    }
}

/// Why a call ended without a response to judge.
pub enum Failure {
    /// Inputs could not be generated or placed (no call was made).
    Inputs(String),
    /// The endpoint is not in the document (no call was made).
    NotInDocument {
        known: Vec<String>,
    },
    Timeout(Duration),
    Network(String),
}

/// The envelope of a call that got no response: seed 003 still wants an HTTP status, so the
/// probe answers as a gateway would (502 no response, 504 timeout), 400 for inputs it could not
/// make and 404 for an endpoint the document does not have.
pub fn failed(
    run_id: String,
    endpoint: &Endpoint,
    started: Instant,
    warnings: Vec<String>,
    failure: Failure,
) -> RunEnvelope {
    let id = &endpoint.id;
    let (status, http, class, message, fix) = match failure {
        Failure::Inputs(why) => (
            RunStatus::Error,
            400,
            ErrorClass::ValidationError,
            format!("no call was made: {why}"),
            "fix the endpoint's parameters or request body in the document".to_owned(),
        ),
        Failure::NotInDocument { known } => {
            let mut list = known.iter().take(20).cloned().collect::<Vec<_>>().join(", ");
            if known.len() > 20 {
                list.push_str(", …");
            }
            (
                RunStatus::Error,
                404,
                ErrorClass::EndpointNotFound,
                format!("{id} is not in the OpenAPI document; no call was made"),
                format!("give one of the document's endpoints: {list}"),
            )
        }
        Failure::Timeout(limit) => (
            RunStatus::Timeout,
            504,
            ErrorClass::Timeout,
            format!("{id} did not answer within {} s", limit.as_secs_f64()),
            "make the endpoint faster, or give a longer --timeout".to_owned(),
        ),
        Failure::Network(why) => (
            RunStatus::Error,
            502,
            ErrorClass::NetworkError,
            format!("{id} could not be called: {why}"),
            "check that the service is running and --base-url points at it".to_owned(),
        ),
    };
    RunEnvelope {
        run_id,
        endpoint: Some(id.clone()),
        status,
        duration_ms: started.elapsed().as_millis() as u64,
        http_status: http,
        content_type: "text/plain".to_owned(),
        json: None,
        text_preview: None,
        exit_code: None,
        error_class: Some(class),
        error_message: Some(message),
        suggested_fix: Some(fix),
        warnings,
        redactions_applied: false,
        artifacts: Vec::new(),
        log_excerpt: None,
        environment_metadata: Default::default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn json_values_named_as_secrets_and_credential_shapes_are_redacted() {
        let mut value = json!({
            "api_key": "abcd1234efgh",
            "result": "ok",
            "nested": [{"password": "hunter22"}, "ghp_0123456789abcdefghijklmnopqrstuvwxyz"],
            "token_count": 12,
            "given": "my-header-secret"
        });
        let n = redact_json(&mut value, &["my-header-secret".to_owned()]);
        assert_eq!(value["api_key"], SECRET_PLACEHOLDER);
        assert_eq!(value["result"], "ok");
        assert_eq!(value["nested"][0]["password"], SECRET_PLACEHOLDER);
        assert!(value["nested"][1].as_str().expect("a string").starts_with("[REDACTED"));
        assert!(!value.to_string().contains("my-header-secret"));
        assert!(n >= 4, "{n}");
    }

    #[test]
    fn an_envelope_is_redacted_field_by_field_with_secrets_json_would_escape() {
        // A secret with a quote and a backslash: in JSON text it would read `p\"ss\\word-99`.
        let secret = r#"p"ss\word-99"#.to_owned();
        let mut envelope: RunEnvelope = serde_json::from_value(json!({
            "runId": "p-1", "endpoint": "GET /x", "status": "error", "durationMs": 1, "httpStatus": 500,
            "json": {"detail": format!("login {secret} refused"), "durationMs": 99},
            "errorMessage": format!("GET /x answered 500: {secret}"),
            "warnings": [format!("saw {secret}")],
        }))
        .expect("an envelope");
        let n = redact_envelope(&mut envelope, std::slice::from_ref(&secret));
        assert!(n >= 3, "{n}");
        assert!(envelope.redactions_applied);
        let text = serde_json::to_string(&envelope).expect("JSON");
        assert!(!text.contains("ss\\\\word"), "{text}");
        assert!(!format!("{envelope:?}").contains(&secret));
        // Numbers and the envelope's own fields are left as they were.
        assert_eq!(envelope.json.as_ref().expect("json")["durationMs"], 99);
        assert_eq!(envelope.http_status, 500);
    }

    #[test]
    fn path_parameters_are_encoded_as_one_segment_under_the_base_path() {
        let endpoint = Endpoint {
            id: "GET /items/{id}".into(),
            method: "GET".into(),
            path: "/items/{id}".into(),
            operation: json!({}),
            shared_parameters: Vec::new(),
        };
        let inputs = Inputs {
            path: vec![("id".into(), "a/b c".into())],
            query: vec![("q".into(), "x&y".into())],
            ..Inputs::default()
        };
        let base = Url::parse("http://localhost:8000/api/").expect("a URL");
        assert_eq!(
            url(&base, &endpoint, &inputs).expect("a URL").as_str(),
            "http://localhost:8000/api/items/a%2Fb%20c?q=x%26y"
        );
        let undeclared = url(&base, &endpoint, &Inputs::default()).unwrap_err();
        assert!(undeclared.contains("not declared"), "{undeclared}");
    }
}
