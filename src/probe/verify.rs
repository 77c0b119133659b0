//! A heal loop's `spec.verify.openapi`: the probe run by an executor against the service it
//! started once the build passed. The local executor calls [`check`] in process; in a Job the
//! `probe` container (kubeheal's own image, beside the build container, sharing its network and
//! workspace) runs `kubeheal probe --after F --output F`, which is [`in_pod`].
//!
//! A check that cannot start (the document is missing or not OpenAPI 3.x) is one envelope
//! without an endpoint ([`refused`]): the execution then reports a configuration problem, not a
//! bug for a healer.

use std::path::Path;
use std::time::Duration;

use super::{ProbeArgs, ProbeError, probe_hiding};
use crate::api::heal_run::OpenApiCheck;
use crate::api::shared::{ErrorClass, RunEnvelope, RunStatus};

/// What the build container writes to the `--after` file when the build failed: nothing is
/// started, so nothing is called.
pub const SKIP: &str = "skip";

/// The probe's arguments for `check`, with the document at `document`.
pub fn args(document: String, check: &OpenApiCheck) -> ProbeArgs {
    ProbeArgs {
        document,
        base_url: check.base_url.clone(),
        endpoints: check.endpoints.clone(),
        timeout: f64::from(check.call_seconds),
        headers: Vec::new(),
        report_to: None,
        wait_ready: Some(f64::from(check.ready_seconds)),
        after: None,
        output: None,
    }
}

/// Calls the service `check` describes, its document read from the project at `root`; `hidden`
/// are the build's secret values (kept out of the envelopes like the probe's own).
pub async fn check(root: &Path, check: &OpenApiCheck, hidden: &[String]) -> Vec<RunEnvelope> {
    let document = root.join(&check.document).display().to_string();
    match probe_hiding(&args(document, check), hidden).await {
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
    let envelopes = match probe_hiding(args, &[]).await {
        Ok(report) => report.envelopes,
        Err(error) => vec![refused(&args.document, &error)],
    };
    let json = serde_json::to_vec(&envelopes).map_err(|e| format!("cannot render the envelopes: {e}"))?;
    let partial = output.with_extension("partial");
    std::fs::write(&partial, json).map_err(|e| format!("cannot write {}: {e}", partial.display()))?;
    std::fs::rename(&partial, output).map_err(|e| format!("cannot write {}: {e}", output.display()))
}
