//! A heal loop's `spec.verify.openapi`: the probe run by an executor against the service it
//! started once the build passed. The local executor calls [`check`] in process; in a Job the
//! `probe` container (kubeheal's own image, beside the build container, sharing its network and
//! workspace) runs `kubeheal probe --after F --output F`, which is [`in_pod`]: it prints the calls
//! to its own log, where the operator reads them ([`reported_calls`]).
//!
//! A check that cannot start (the document is missing or not OpenAPI 3.x) is one envelope
//! without an endpoint ([`refused`]): the execution then reports a configuration problem, not a
//! bug for a healer.

use std::path::Path;
use std::time::Duration;

use super::{ProbeArgs, ProbeError, probe_document};
use crate::api::heal_run::OpenApiCheck;
use crate::api::shared::{ErrorClass, RunEnvelope, RunStatus};
use crate::confined::ConfinedDir;

/// What the build container writes to the `--after` file when the build failed: nothing is
/// started, so nothing is called.
pub const SKIP: &str = "skip";

/// The file, beside the `--after` file, where the build container writes the service's exit
/// code when the start command ends: a non-zero one while the probe waits for the service ends
/// the wait (an exit with 0 is a start command that left the service running in the background).
pub const EXITED: &str = "exited";

/// The probe's arguments for `check`, with the document at `document`.
pub fn args(document: String, check: &OpenApiCheck) -> ProbeArgs {
    ProbeArgs {
        document,
        base_url: check.base_url.clone(),
        endpoints: check.endpoints.clone(),
        timeout: f64::from(check.call_timeout_seconds),
        headers: Vec::new(),
        report_to: None,
        contract_fqn: None,
        report_token: None,
        wait_ready: Some(f64::from(check.ready_timeout_seconds)),
        after: None,
        output: None,
    }
}

/// Most bytes of an OpenAPI document read from a repository.
pub const MAX_DOCUMENT: u64 = 8 * 1024 * 1024;

/// Calls the service `check` describes, its document read from the project at `root` (through
/// [`ConfinedDir`]: a regular file inside it, at most [`MAX_DOCUMENT`] bytes); `hidden` are the
/// build's secret values (kept out of the envelopes like the probe's own). `gave_up` says why,
/// when the service ends with an error before it answers (the wait for it stops there).
pub async fn check(
    root: &Path,
    check: &OpenApiCheck,
    hidden: &[String],
    gave_up: impl Future<Output = String>,
) -> Vec<RunEnvelope> {
    let text = ConfinedDir::open(root).and_then(|dir| dir.read_text(&check.document, MAX_DOCUMENT));
    let text = match text {
        Ok(text) => text,
        Err(e) => {
            return vec![refused(
                &check.document,
                &ProbeError::Read(format!("cannot read the document: {e}")),
            )];
        }
    };
    match probe_document(&args(check.document.clone(), check), Some(text), hidden, gave_up).await {
        Ok(report) => report.envelopes,
        Err(error) => vec![refused(&check.document, &error)],
    }
}

/// The envelope of a check that could not start: no endpoint, `VALIDATION_ERROR`, and what to
/// change in `spec.verify.openapi`.
pub fn refused(document: &str, error: &ProbeError) -> RunEnvelope {
    RunEnvelope {
        run_id: "verify-openapi".into(),
        endpoint: None,
        status: RunStatus::Error,
        duration_ms: 0,
        http_status: 400,
        content_type: "text/plain".into(),
        json: None,
        text_preview: None,
        exit_code: None,
        error_class: Some(ErrorClass::ValidationError),
        error_message: Some(format!("the endpoints could not be checked: {error}")),
        suggested_fix: Some(format!(
            "fix spec.verify.openapi: document {document:?} must be an OpenAPI 3.x document with paths, in the repository, relative to the project's root"
        )),
        warnings: Vec::new(),
        redactions_applied: false,
        artifacts: Vec::new(),
        log_excerpt: None,
        environment_metadata: Default::default(),
    }
}

/// `kubeheal probe --after F --output F` in an executor Pod: waits for the build container to say
/// the service is started (or `skip`), probes, and writes the envelopes to `--output` through a
/// temporary file and a rename, so that the build container reads them whole or not at all.
pub async fn in_pod(args: &ProbeArgs, after: &Path, output: &Path) -> Result<(), String> {
    if let Ok(reported) = std::fs::read_to_string(output) {
        // Restarted after it reported (the kubelet restarts a native sidecar that ended): the
        // service is not called twice, and this container's log says the calls again.
        println!("{}", reported.trim());
        return Ok(());
    }
    let said = loop {
        match std::fs::read_to_string(after) {
            Ok(text) => break text,
            // The Job's deadline ends the wait if the build never says anything.
            Err(_) => tokio::time::sleep(Duration::from_millis(200)).await,
        }
    };
    if said.trim() == SKIP {
        return Ok(());
    }
    let exited = after.with_file_name(EXITED);
    let mut envelopes = match probe_document(args, None, &[], service_failed(&exited)).await {
        Ok(report) => report.envelopes,
        Err(error) => vec![refused(&args.document, &error)],
    };
    for envelope in &mut envelopes {
        slim(envelope);
    }
    let json = serde_json::to_string(&envelopes).map_err(|e| format!("cannot render the envelopes: {e}"))?;
    // The operator reads the calls from this container's log, which nothing the build or the
    // service runs can write to; the file tells the build container that the calls are done.
    println!("{json}");
    let partial = output.with_extension("partial");
    std::fs::write(&partial, &json).map_err(|e| format!("cannot write {}: {e}", partial.display()))?;
    std::fs::rename(&partial, output).map_err(|e| format!("cannot write {}: {e}", output.display()))
}

/// Completes when the build container wrote a non-zero exit code of the service's start command
/// to `exited`: why the service will not answer.
async fn service_failed(exited: &Path) -> String {
    loop {
        if let Ok(code) = std::fs::read_to_string(exited) {
            let code = code.trim();
            if !code.is_empty() && code != "0" {
                return format!(
                    "the service's start command exited with code {code} before the service accepted a connection"
                );
            }
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// The calls a probe container's log reports: its last line that is a JSON array.
pub fn reported_calls(log: &str) -> Option<Result<Vec<RunEnvelope>, String>> {
    let line = log.lines().rev().map(str::trim).find(|l| l.starts_with('['))?;
    Some(serde_json::from_str(line).map_err(|e| e.to_string()))
}

/// Most bytes of a failed call's JSON body a Pod reports (it travels in the build's log).
const MAX_REPORTED_JSON: usize = 64 * 1024;

/// An envelope as the probe container reports it: what a judge of the calls needs. A body that
/// succeeded is left out; a failed call's JSON body over [`MAX_REPORTED_JSON`] is kept as its
/// first 10 KB of text.
fn slim(envelope: &mut RunEnvelope) {
    if envelope.status == RunStatus::Success {
        envelope.json = None;
        envelope.text_preview = None;
        return;
    }
    let Some(json) = envelope.json.as_ref() else { return };
    let text = json.to_string();
    if text.len() > MAX_REPORTED_JSON {
        envelope.json = None;
        envelope.text_preview = Some(crate::api::shared::text_preview(&text));
        envelope.warnings.push(format!(
            "the JSON body was {} bytes; its first 10 KB are kept as text",
            text.len()
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn envelope(status: &str, json: serde_json::Value) -> RunEnvelope {
        serde_json::from_value(serde_json::json!({
            "runId": "p-1", "endpoint": "GET /x", "status": status, "durationMs": 1,
            "httpStatus": if status == "success" { 200 } else { 500 },
            "contentType": "application/json", "json": json,
        }))
        .expect("an envelope")
    }

    #[test]
    fn the_calls_are_the_last_json_array_line_of_the_probes_log() {
        let log = "kubeheal: waiting\n[{\"runId\":\"p-1\",\"endpoint\":\"GET /x\",\"status\":\"success\",\"durationMs\":1,\"httpStatus\":200}]\n";
        let calls = reported_calls(log).expect("a report").expect("envelopes");
        assert_eq!(calls[0].endpoint.as_deref(), Some("GET /x"));
        assert!(reported_calls("nothing reported\n").is_none());
        assert!(reported_calls("[not json\n").expect("a report").is_err());
    }

    #[test]
    fn a_pod_reports_no_body_of_a_call_that_succeeded_and_at_most_64_kib_of_one_that_failed() {
        let mut ok = envelope("success", serde_json::json!({"items": [1, 2, 3]}));
        slim(&mut ok);
        assert!(ok.json.is_none() && ok.text_preview.is_none());

        let mut small = envelope("error", serde_json::json!({"detail": "KeyError: 'x'"}));
        slim(&mut small);
        assert_eq!(small.json, Some(serde_json::json!({"detail": "KeyError: 'x'"})));

        let mut big = envelope("error", serde_json::json!({"detail": "x".repeat(100_000)}));
        slim(&mut big);
        assert!(big.json.is_none());
        assert_eq!(
            big.text_preview.as_ref().map(String::len),
            Some(crate::api::shared::TEXT_PREVIEW_BYTES)
        );
        assert!(big.warnings[0].contains("100013 bytes"), "{:?}", big.warnings);
    }
}
