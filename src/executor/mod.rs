//! The Executor layer (seed 001): run the resolved build command against a workspace at an exact
//! revision plus the patches of earlier cycles, and return a RunEnvelope (seed 003) with the exit
//! code, the full redacted log, an excerpt, the duration and the environment. It observes only:
//! it never fixes, commits or reads meaning into the log (that is the parser's job); its error
//! class comes from how the process ended.
//!
//! `local` runs a local process (used by `kubeheal exec`, `kubeheal heal` and tests); `job` a
//! Kubernetes Job; `detect` picks the project type, command and image. Redaction is
//! `core::redact`.

pub mod detect;
pub mod job;
pub mod local;
pub mod output;
pub mod tool;

use std::path::PathBuf;
use std::time::Duration;

use crate::api::heal_run::{OpenApiCheck, ProjectType};
use crate::api::shared::{ErrorClass, GitSource, RunEnvelope, RunStatus};

/// Default time one execution may take.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(300);

/// What to run, where.
#[derive(Debug, Clone)]
pub struct ExecutionRequest {
    /// A unique id for the run (in a cluster, the Job's name).
    pub run_id: String,
    /// The project: a local folder (a Git repository or not).
    pub source: PathBuf,
    /// Branch, tag or commit to check out when `source` is a Git repository; default: as is.
    pub revision: Option<String>,
    /// Unified diffs of earlier cycles, applied in order with `git apply`.
    pub patches: Vec<String>,
    pub project_type: ProjectType,
    /// The build command; default: from the project type.
    pub command: Option<String>,
    pub timeout: Duration,
    /// Extra environment variables for the command.
    pub env: Vec<(String, String)>,
    /// Values that must never appear in what the executor returns (secret env values, tokens).
    pub secrets: Vec<String>,
    /// Where the files the run wrote to `$KUBEHEAL_ARTIFACTS` are kept.
    pub artifacts_dir: PathBuf,
    /// The service to start and call once the build passes (`spec.verify.openapi`).
    pub verify: Option<OpenApiCheck>,
}

/// Seed 001's executor input, whichever executor runs it.
#[derive(Debug, Clone)]
pub struct RunRequest {
    /// The heal cycle the run belongs to (0 for the baseline).
    pub cycle: u32,
    /// Where the code lives (`file://` URLs and plain paths for the local executor).
    pub source: GitSource,
    /// The exact revision to run; default: the source as it is.
    pub revision: Option<String>,
    /// Unified diffs of earlier cycles, applied in order.
    pub patches: Vec<String>,
    pub project_type: ProjectType,
    /// The executor image (the Job executor; the local executor runs on the host).
    pub image: Option<String>,
    pub command: Option<String>,
    pub timeout: Duration,
    /// Values that must never leave the executor.
    pub secrets: Vec<String>,
    /// The service to start and call once the build passes (`spec.verify.openapi`).
    pub verify: Option<OpenApiCheck>,
}

/// What an execution returned: the envelope, and the whole redacted (bounded) log.
#[derive(Debug, Clone)]
pub struct Execution {
    pub envelope: RunEnvelope,
    pub log: String,
    /// The end of what the build wrote to stderr (its last 8 KiB), redacted, when the executor
    /// can tell the streams apart: the local one can; a Job's log joins them, so it is empty
    /// there. Seed 000 gives a healer its last 1000 characters.
    pub stderr_tail: String,
    /// One envelope per endpoint called by `verify`, in the order called; empty when there is
    /// nothing to verify or the build failed.
    pub endpoint_calls: Vec<RunEnvelope>,
    /// What the service started for `verify` printed (redacted, its first and last 256 KiB).
    pub service_output: String,
}

/// The first 40 and last 60 lines of `log`, at most 8 KiB: what a person looks at first.
pub fn excerpt(log: &str) -> String {
    let lines: Vec<&str> = log.lines().collect();
    let text = if lines.len() <= 100 {
        log.to_owned()
    } else {
        format!(
            "{}\n[... {} lines ...]\n{}",
            lines[..40].join("\n"),
            lines.len() - 100,
            lines[lines.len() - 60..].join("\n")
        )
    };
    if text.len() <= 8192 {
        return text;
    }
    // Keep the end: the summary of a test run is there.
    let mut start = text.len() - 8192 + 32;
    while !text.is_char_boundary(start) {
        start += 1;
    }
    format!("[... excerpt shortened ...]\n{}", &text[start..])
}

/// How a run ended, as the executor sees it (no log reading).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    Exited(i32),
    /// Killed by a signal the executor did not send.
    Signalled(i32),
    TimedOut,
    /// The workspace could not be prepared (checkout, patch).
    SourceFailed,
    /// The command could not be started at all.
    StartFailed,
    /// No command was given and the project's type, which would have named one, was not found.
    NoCommand,
}

/// The envelope's status, error class, message and suggested fix for an ending.
pub fn classify(
    ending: Ending,
    runner: Option<detect::Runner>,
    timeout: Duration,
    detail: &str,
) -> (RunStatus, Option<(ErrorClass, String, String)>) {
    use detect::Runner;
    let err = |class, message: String, fix: &str| (RunStatus::Error, Some((class, message, fix.to_owned())));
    match ending {
        Ending::Exited(0) => (RunStatus::Success, None),
        Ending::TimedOut => (
            RunStatus::Timeout,
            Some((
                ErrorClass::Timeout,
                format!(
                    "the build ran longer than its {} s limit and was stopped",
                    timeout.as_secs()
                ),
                "raise the time limit (spec.executor.timeoutSeconds; --timeout for kubeheal heal and exec), or find the test that hangs (run it alone with a per-test timeout)"
                    .to_owned(),
            )),
        ),
        Ending::SourceFailed => err(
            ErrorClass::SourceFetch,
            format!("the workspace could not be prepared: {detail}"),
            "check that the revision exists and that the earlier patches still apply to it",
        ),
        Ending::StartFailed => err(
            ErrorClass::Infra,
            format!("the build command could not be started: {detail}"),
            "check that the executor has a shell (/bin/sh) and the workspace is readable",
        ),
        Ending::NoCommand => err(
            ErrorClass::CommandNotFound,
            "no build command was given, and the project's type (which names a default one) could not be told: there is no Cargo.toml, go.mod, package.json or Python project file, and no test_*.py".to_owned(),
            "give the build command (--command for kubeheal heal and exec, spec.executor.command in a HealRun) or the project type (spec.executor.projectType)",
        ),
        Ending::Exited(127) => err(
            ErrorClass::CommandNotFound,
            "the build command, or an interpreter it needs, was not found (exit code 127)".to_owned(),
            "install the missing tool in the executor image, or fix the command (see the last lines of the log)",
        ),
        Ending::Exited(126) => err(
            ErrorClass::CommandNotFound,
            "the build command is not executable (exit code 126)".to_owned(),
            "make the script executable (chmod +x) or run it through its interpreter",
        ),
        // Out of memory is known only where the container runtime says so (the Job executor reads
        // `OOMKilled` from the container status); a bare SIGKILL has many senders.
        Ending::Exited(137) | Ending::Signalled(9) => err(
            ErrorClass::Infra,
            "the build was killed with SIGKILL, which kubeheal did not send (the kernel's out-of-memory killer, or another process)".to_owned(),
            "check the machine's memory (dmesg shows the OOM killer) and what else stops processes there, then run again",
        ),
        Ending::Signalled(sig) => err(
            ErrorClass::RuntimeError,
            format!("the build was stopped by signal {sig}"),
            "look at the end of the log for what crashed",
        ),
        Ending::Exited(5) if runner == Some(Runner::Pytest) => err(
            ErrorClass::ValidationError,
            "pytest collected no tests (exit code 5)".to_owned(),
            "check the test paths and naming (test_*.py, test_* functions) or the build command",
        ),
        Ending::Exited(code @ 2..=4) if runner == Some(Runner::Pytest) => err(
            ErrorClass::BuildFailure,
            format!("pytest could not run the tests (exit code {code}: collection or usage error)"),
            "fix the import or syntax error the log shows in the collected modules",
        ),
        Ending::Exited(code) if runner.is_some() => err(
            ErrorClass::TestFailure,
            format!("the tests failed (exit code {code})"),
            "fix the failing tests; the bug reports say where",
        ),
        Ending::Exited(code) => err(
            ErrorClass::RuntimeError,
            format!("the build command exited with code {code}"),
            "look at the bug reports and the end of the log",
        ),
    }
}
