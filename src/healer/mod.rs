//! The Fix Agent side: a `Healer` takes the failing files, the bug reports with their snippets,
//! the executor's error context and what earlier cycles tried, and answers with full-file
//! replacements, a summary and a confidence — or an error or timeout outcome with a reason.
//!
//! Implementations: the Code Healer API client (`code_healer_api`, seed 000), the built-in
//! deterministic fixers (`builtin`), and the reference server that serves them (`server`).
//! Whatever a healer returns passes [`validate::validate`] before anything is written.

pub mod builtin;
pub mod code_healer_api;
pub mod compiles;
pub mod contract;
pub mod contract_model;
pub mod cycle;
pub mod factory;
pub mod files;
pub mod openai;
pub mod server;
pub mod tool;
pub mod validate;

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::api::heal_run::HealerOutcome;
use crate::api::shared::BugReport;
pub use crate::core::heal_run::PreviousAttempt;
use crate::core::redact::redact;

/// The HTTP client every healer uses: rustls with ring (the provider kube is built with, so no
/// second TLS stack), a 10 s connect timeout; each request sets the cycle's own timeout.
/// Redirects are not followed: a 307 or 308 would send the source files (and, to the same
/// origin, the token) again to wherever the `Location` points; a healer reports a 3xx instead
/// (see [`redirect_message`]).
pub fn http_client() -> Result<reqwest::Client, String> {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder()
        .connect_timeout(Duration::from_secs(10))
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(|e| format!("cannot build the HTTP client: {e}"))
}

/// Why a 3xx is an error, for a healer's reason: `{url} redirects (307 to {location}); ...`.
pub fn redirect_message(url: &str, response: &reqwest::Response) -> String {
    let to = response
        .headers()
        .get(reqwest::header::LOCATION)
        .and_then(|l| l.to_str().ok())
        .map(|l| format!(" to {}", crate::parse::truncate(l, 200)))
        .unwrap_or_default();
    format!(
        "{url} redirects ({}{to}); kubeheal does not follow redirects, so that the source files go only \
         where they were configured to go: configure the final URL instead",
        response.status().as_u16()
    )
}

/// The executor's error context, as seed 000's `pytest_errors`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorContext {
    pub exit_code: i32,
    pub error_count: u32,
    pub error_summary: String,
    /// The last 1000 characters of stderr.
    pub stderr: String,
    /// The last 2000 characters of stdout.
    pub stdout: String,
}

impl ErrorContext {
    /// Keeps the tails seed 000 asks for: stderr's last 1000, stdout's last 2000 characters.
    pub fn new(exit_code: i32, error_count: u32, error_summary: String, stderr: &str, stdout: &str) -> Self {
        ErrorContext {
            exit_code,
            error_count,
            error_summary,
            stderr: tail_chars(stderr, 1000),
            stdout: tail_chars(stdout, 2000),
        }
    }
}

fn tail_chars(s: &str, n: usize) -> String {
    let count = s.chars().count();
    s.chars().skip(count.saturating_sub(n)).collect()
}

/// A bug report with the source around it (±3 lines), for the healer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReportWithSnippet {
    pub report: BugReport,
    pub snippet: String,
}

impl ReportWithSnippet {
    /// The report with lines `line-3 ..= line+3` of `content`, each prefixed with its number.
    pub fn new(report: BugReport, content: &str) -> Self {
        let line = report.line_number as usize;
        let snippet = content
            .lines()
            .enumerate()
            .skip(line.saturating_sub(4))
            .take(7)
            .map(|(i, text)| format!("{:>5} | {text}", i + 1))
            .collect::<Vec<_>>()
            .join("\n");
        ReportWithSnippet { report, snippet }
    }
}

/// Everything a healer is given for one cycle.
#[derive(Debug, Clone, PartialEq)]
pub struct HealRequest {
    pub project_id: String,
    pub cycle: u32,
    /// Repository-relative path → full content of each failing file.
    pub failed_files: BTreeMap<String, String>,
    pub reports: Vec<ReportWithSnippet>,
    pub error_context: ErrorContext,
    pub history: Vec<PreviousAttempt>,
    pub timeout: Duration,
    pub limits: validate::Limits,
}

/// What a driver knows when it asks for a fix; [`HealRequest::build`] adds the files' contents.
pub struct RequestInputs<'a> {
    pub project: &'a str,
    pub cycle: u32,
    /// The newest execution's bug reports.
    pub reports: &'a [BugReport],
    /// The repository's tracked files.
    pub files: &'a [String],
    /// Values that must never reach a healer (the run's and kubeheal's own secrets); credential
    /// shapes are redacted too.
    pub secrets: &'a [String],
    pub exit_code: i32,
    pub error_message: &'a str,
    /// The newest execution's (redacted) log.
    pub log: &'a str,
    /// The end of its stderr, when the executor kept it apart (else empty).
    pub stderr: &'a str,
    /// A work order's task (goal, instructions, error context), else empty: it leads the error
    /// summary, the one free-text field of seed 000's request.
    pub task: &'a str,
    pub history: Vec<PreviousAttempt>,
    pub timeout: Duration,
    pub allowed_paths: Vec<String>,
}

impl HealRequest {
    /// The request for `inputs`, reading file contents with `read` (repository-relative path, at
    /// most that many bytes). Every file and the log are redacted before they are put in.
    pub fn build(inputs: RequestInputs<'_>, read: &dyn Fn(&str, u64) -> Option<String>) -> HealRequest {
        let failed_files: BTreeMap<String, String> = files::select(inputs.reports, inputs.files, read)
            .into_iter()
            .map(|(path, content)| (path, redact(&content, inputs.secrets).0))
            .collect();
        let reports = inputs
            .reports
            .iter()
            .filter_map(|r| {
                let report = BugReport {
                    message: redact(&r.message, inputs.secrets).0,
                    test_name: r.test_name.as_ref().map(|t| redact(t, inputs.secrets).0),
                    ..r.clone()
                };
                failed_files
                    .get(&r.file_path)
                    .map(|c| ReportWithSnippet::new(report, c))
            })
            .collect();
        HealRequest {
            project_id: inputs.project.to_owned(),
            cycle: inputs.cycle,
            failed_files,
            reports,
            error_context: ErrorContext::new(
                inputs.exit_code,
                inputs.reports.len() as u32,
                redact(&summary(inputs.task, inputs.error_message), inputs.secrets).0,
                &redact(inputs.stderr, inputs.secrets).0,
                &redact(inputs.log, inputs.secrets).0,
            ),
            history: inputs.history,
            timeout: inputs.timeout,
            limits: validate::Limits {
                allowed_paths: inputs.allowed_paths,
                ..validate::Limits::default()
            },
        }
    }
}

/// The error summary a healer reads: the work order's task first, when there is one.
fn summary(task: &str, error_message: &str) -> String {
    if task.is_empty() {
        error_message.to_owned()
    } else {
        format!("{task}\n{error_message}")
    }
}

/// A healer's answer, validated.
#[derive(Debug, Clone, PartialEq)]
pub struct HealResponse {
    pub outcome: HealerOutcome,
    /// Why the healer did not heal, for people.
    pub reason: Option<String>,
    /// Path → full new content; empty unless `outcome` is `Healed`.
    pub modified_files: BTreeMap<String, String>,
    pub changes_summary: Option<String>,
    /// From 0 to 1: 1.0 for deterministic fixes.
    pub confidence: f64,
    pub duration: Duration,
    /// Tokens the call used, when the healer reports them (for budgets).
    pub tokens_used: Option<u64>,
    /// Which healer of a [`Chain`] gave this answer; `None` from a single healer (its own
    /// [`Healer::name`] then).
    pub answered_by: Option<&'static str>,
}

impl HealResponse {
    pub fn failed(outcome: HealerOutcome, reason: impl Into<String>, duration: Duration) -> Self {
        HealResponse {
            outcome,
            reason: Some(reason.into()),
            modified_files: BTreeMap::new(),
            changes_summary: None,
            confidence: 0.0,
            duration,
            tokens_used: None,
            answered_by: None,
        }
    }
}

/// A boxed future, so that healers can be used as trait objects.
pub type HealFuture<'a> = Pin<Box<dyn Future<Output = HealResponse> + Send + 'a>>;

/// Anything that proposes fixes.
pub trait Healer: Send + Sync {
    /// A short name for logs and status (`code-healer-api`, `builtin`, ...).
    fn name(&self) -> &'static str;
    /// Whether the same request always gets the same fix, made by rules rather than a model:
    /// the `Tiered` approval policy commits such fixes without asking a human.
    fn deterministic(&self) -> bool {
        false
    }
    /// Asks for a fix. Never fails: errors and timeouts are outcomes.
    fn heal<'a>(&'a self, request: &'a HealRequest) -> HealFuture<'a>;
}

/// Healers asked in order until one heals: the deterministic fixers first, then a service.
pub struct Chain(pub Vec<Box<dyn Healer>>);

impl Healer for Chain {
    fn name(&self) -> &'static str {
        "chain"
    }

    fn heal<'a>(&'a self, request: &'a HealRequest) -> HealFuture<'a> {
        Box::pin(async move {
            let mut reasons = Vec::new();
            let mut last = None;
            let mut total = Duration::ZERO;
            for healer in &self.0 {
                let response = healer.heal(request).await;
                total += response.duration;
                if response.outcome == HealerOutcome::Healed {
                    return HealResponse {
                        duration: total,
                        answered_by: Some(healer.name()),
                        ..response
                    };
                }
                reasons.push(format!(
                    "{}: {}",
                    healer.name(),
                    response.reason.clone().unwrap_or_default()
                ));
                last = Some((response.outcome, healer.name()));
            }
            let (outcome, name) = last.unwrap_or((HealerOutcome::Error, "chain"));
            HealResponse {
                answered_by: Some(name),
                ..HealResponse::failed(outcome, reasons.join("; "), total)
            }
        })
    }
}
