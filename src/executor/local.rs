//! The local executor: the workspace in a fresh temporary copy (or checkout at the revision)
//! with the earlier patches applied, the command in its own process group with stdout and
//! stderr interleaved, the timeout enforced on the whole group (TERM, then KILL), the output
//! bounded in memory, and the envelope filled in.

use std::collections::BTreeMap;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use tokio::io::AsyncReadExt;
use tokio::process::Command;

use super::detect::{self, Runner};
use super::output::{BoundedLog, collect_artifacts};
use super::{Ending, Execution, ExecutionRequest, classify, excerpt};
use crate::api::shared::{BUILD_CONTENT_TYPE, RunEnvelope, build_http_status, text_preview};
use crate::confined::ConfinedDir;
use crate::core::redact::{looks_secret_name, redact, secret_values};

/// Bytes of output kept from the start and from the end of a run.
pub const KEEP_HEAD: usize = 4 * 1024 * 1024;
pub const KEEP_TAIL: usize = 4 * 1024 * 1024;
/// Grace between TERM and KILL when a run times out.
const GRACE: Duration = Duration::from_secs(5);

/// Runs builds as local processes.
#[derive(Debug, Default, Clone)]
pub struct LocalExecutor;

impl LocalExecutor {
    pub async fn execute(&self, request: &ExecutionRequest) -> Execution {
        let started = Instant::now();
        let scratch = match tempfile::Builder::new().prefix("kubeheal-run-").tempdir() {
            Ok(d) => d,
            Err(e) => {
                return finish(
                    request,
                    started,
                    Ending::StartFailed,
                    None,
                    &e.to_string(),
                    Captured::default(),
                    Setting::default(),
                );
            }
        };
        let workspace = scratch.path().join("workspace");
        let warnings = match prepare(request, scratch.path(), &workspace).await {
            Ok(warnings) => warnings,
            Err(reason) => {
                return finish(
                    request,
                    started,
                    Ending::SourceFailed,
                    None,
                    &reason,
                    Captured::default(),
                    Setting::default(),
                );
            }
        };
        let project = detect::detect(&workspace, request.project_type);
        let (command, runner) = match (&request.command, detect::default_command(project)) {
            (Some(c), _) => (c.clone(), detect::runner_of(c)),
            (None, Some((c, r))) => (c.to_owned(), Some(r)),
            (None, None) => {
                return finish(
                    request,
                    started,
                    Ending::NoCommand,
                    None,
                    "",
                    Captured::default(),
                    Setting::default(),
                );
            }
        };
        let mut environment = environment(project).await;
        environment.insert("command".into(), command.clone());
        let setting = Setting { environment, warnings };
        if let Err(e) = std::fs::create_dir_all(&request.artifacts_dir) {
            return finish(
                request,
                started,
                Ending::StartFailed,
                runner,
                &format!("cannot create {}: {e}", request.artifacts_dir.display()),
                Captured::default(),
                setting,
            );
        }
        let (ending, captured) = run(request, &workspace, &command).await;
        let verified = match (&request.verify, ending) {
            (Some(check), Ending::Exited(0)) => {
                let limit = Duration::from_secs(check.time_limit_seconds().into());
                // Dropped at the limit, the service's reaper stops it.
                Some(
                    tokio::time::timeout(limit, serve_and_check(request, &workspace, check))
                        .await
                        .unwrap_or_else(|_| {
                            let why = format!("the calls did not end within {} s of the service's start", limit.as_secs());
                            let fix = "name the endpoints to call (verify.openapi.endpoints), or lower readyTimeoutSeconds and callTimeoutSeconds";
                            (vec![refused(check, why, fix)], String::new())
                        }),
                )
            }
            _ => None,
        };
        let mut execution = finish(request, started, ending, runner, "", captured, setting);
        if let (Some((calls, printed)), Some(check)) = (verified, &request.verify) {
            let secrets = all_secrets(request);
            let (printed, n) = redact(&printed, &secrets);
            execution.envelope.redactions_applied |= n > 0;
            let section = crate::core::verify::log_section(&check.start, &calls, &printed);
            execution.log.push_str(&redact(&section, &secrets).0);
            execution.endpoint_calls = calls;
            execution.service_output = printed;
        }
        execution
    }
}

/// The envelope of a check that could not be made: why, and what to do.
fn refused(check: &crate::api::heal_run::OpenApiCheck, why: String, fix: &str) -> RunEnvelope {
    let mut envelope = crate::probe::verify::refused(&check.document, &crate::probe::ProbeError::Usage(why));
    envelope.suggested_fix = Some(fix.to_owned());
    envelope
}

/// Bytes of the started service's output kept from its start and from its end.
const KEEP_SERVICE: usize = 256 * 1024;

/// `spec.verify.openapi` after the build passed: the service started by `sh -c START` in the
/// workspace, with the build's environment and in a process group of its own, is called from
/// its document; then the whole group is stopped. Returns the calls' envelopes and what the
/// service printed (not yet redacted).
async fn serve_and_check(
    request: &ExecutionRequest,
    workspace: &Path,
    check: &crate::api::heal_run::OpenApiCheck,
) -> (Vec<RunEnvelope>, String) {
    // Another process on the service's port would answer in its place.
    if let Ok(base) = reqwest::Url::parse(&check.base_url)
        && crate::probe::ready::answers(&base).await
    {
        let why = format!(
            "something already answers at {} before the service is started",
            check.base_url
        );
        let fix = "stop what holds the port, or start the service on another port (verify.openapi.start and baseUrl)";
        return (vec![refused(check, why, fix)], String::new());
    }
    let Started {
        mut child,
        group,
        mut reaper,
        mut stdout,
        mut stderr,
    } = match start(request, workspace, &check.start) {
        Ok(started) => started,
        Err(e) => {
            let why = format!("the service could not be started: {e}");
            return (
                vec![refused(check, why, "check that the executor has a shell (/bin/sh)")],
                String::new(),
            );
        }
    };
    let mut printed = BoundedLog::new(KEEP_SERVICE, KEEP_SERVICE);
    let hidden = all_secrets(request);
    // A start command that fails ends the wait for the service at once (see the loop).
    let (failed, gave_up) = tokio::sync::oneshot::channel::<String>();
    let mut failed = Some(failed);
    let gave_up = async move {
        match gave_up.await {
            Ok(why) => why,
            // It ended well (a start command that left the service running in the background):
            // nothing ends the wait early.
            Err(_) => std::future::pending().await,
        }
    };
    let calls = crate::probe::verify::check(workspace, check, &hidden, gave_up);
    tokio::pin!(calls);
    let (mut out_buf, mut err_buf) = (vec![0u8; 16 * 1024], vec![0u8; 16 * 1024]);
    let (mut output_open, mut errors_open, mut exited) = (true, true, false);
    // Once the calls are done the service gets TERM and a grace period: a server prints what it
    // was doing on the way out, and that belongs in the log. Its output is read all along, so
    // that a full pipe cannot hold it up.
    let mut done: Option<Vec<RunEnvelope>> = None;
    let grace = tokio::time::sleep(Duration::MAX);
    tokio::pin!(grace);
    loop {
        tokio::select! {
            calls = &mut calls, if done.is_none() => {
                done = Some(calls);
                if let Some(pid) = group {
                    let _ = killpg(pid, Signal::SIGTERM);
                }
                grace.as_mut().reset(tokio::time::Instant::now() + GRACE);
            },
            ended = child.wait(), if !exited => {
                exited = true;
                if let (Ok(status), Some(failed)) = (ended, failed.take())
                    && !status.success()
                {
                    let _ = failed.send(format!(
                        "the service's start command exited ({status}) before the service accepted a connection"
                    ));
                }
            },
            read = stdout.read(&mut out_buf), if output_open => match read {
                Ok(0) | Err(_) => output_open = false,
                Ok(n) => printed.write(&out_buf[..n]),
            },
            read = stderr.read(&mut err_buf), if errors_open => match read {
                Ok(0) | Err(_) => errors_open = false,
                Ok(n) => printed.write(&err_buf[..n]),
            },
            () = &mut grace, if done.is_some() => break,
        }
        if done.is_some() && exited {
            if !(output_open || errors_open) {
                break;
            }
            // What it started may hold the pipes open: the group's end closes them.
            reaper.reap();
        }
    }
    let calls = done.unwrap_or_default();
    reaper.reap();
    (calls, printed.text())
}

/// A fresh copy of the source in `workspace` (under `scratch`): the working tree, or a checkout of
/// `revision` when one is given, copied through [`ConfinedDir::copy_tree`] so that no link in it
/// leads out of the workspace; then every patch applied in order. Returns warnings for what the
/// copy left out.
async fn prepare(request: &ExecutionRequest, scratch: &Path, workspace: &Path) -> Result<Vec<String>, String> {
    let source = &request.source;
    if !source.is_dir() {
        return Err(format!("{} is not a folder", source.display()));
    }
    let tree = match &request.revision {
        Some(revision) => {
            if !source.join(".git").exists() {
                return Err(format!(
                    "{} is not a Git repository, and a revision ({revision}) is checked out of one: leave --revision out to build the folder as it is, or give the repository's folder",
                    source.display()
                ));
            }
            let checkout = scratch.join("checkout");
            git(
                None,
                &[
                    "clone",
                    "--quiet",
                    "--no-hardlinks",
                    &source.display().to_string(),
                    &checkout.display().to_string(),
                ],
            )
            .await?;
            git(Some(&checkout), &["checkout", "--quiet", revision]).await?;
            checkout
        }
        None => source.clone(),
    };
    // The copy keeps `.git` (tests may ask git about the project) and leaves out kubeheal's state.
    let report = ConfinedDir::open(&tree)
        .and_then(|dir| dir.copy_tree(workspace, &[".kubeheal"]))
        .map_err(|e| format!("cannot copy the workspace: {e}"))?;
    if tree != *source {
        let _ = std::fs::remove_dir_all(&tree);
    }
    for (i, patch) in request.patches.iter().enumerate() {
        let file = scratch.join(format!("patch-{i}.diff"));
        std::fs::write(&file, patch).map_err(|e| format!("cannot write {}: {e}", file.display()))?;
        let applied = git(
            Some(workspace),
            &["apply", "--whitespace=nowarn", &file.display().to_string()],
        )
        .await;
        applied.map_err(|e| format!("patch {} does not apply: {e}", i + 1))?;
    }
    Ok(report.warnings())
}

/// How long one local git command of the executor may take.
const LOCAL_GIT_TIMEOUT: Duration = Duration::from_secs(300);

async fn git(dir: Option<&Path>, args: &[&str]) -> Result<(), String> {
    let mut command = Command::new("git");
    if let Some(dir) = dir {
        command.current_dir(dir);
    }
    // Only local work (a clone of a folder, a checkout, `git apply`), bounded all the same, and
    // a git left behind by a timeout or a cancel is killed.
    let output = command
        .args(args)
        .env("GIT_TERMINAL_PROMPT", "0")
        .stdin(Stdio::null())
        .kill_on_drop(true)
        .output();
    let out = tokio::time::timeout(LOCAL_GIT_TIMEOUT, output)
        .await
        .map_err(|_| format!("git {} took longer than {} s", args[0], LOCAL_GIT_TIMEOUT.as_secs()))?
        .map_err(|e| format!("cannot run git: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "git {} failed: {}",
            args[0],
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

/// Most bytes of the build's stderr kept apart from the log (seed 000 sends its last 1000
/// characters to the healer).
const STDERR_TAIL: usize = 8 * 1024;

/// Runs `command` by `sh` in its own process group until it ends or the timeout stops the whole
/// group. Stdout and stderr go into one log in the order they arrive (read from two pipes in one
/// loop), and the end of stderr is also kept on its own.
async fn run(request: &ExecutionRequest, workspace: &Path, command: &str) -> (Ending, Captured) {
    let mut log = BoundedLog::new(KEEP_HEAD, KEEP_TAIL);
    let mut stderr_tail: std::collections::VecDeque<u8> = std::collections::VecDeque::new();
    // Whatever way this function ends (the run is over, or the caller dropped it on Ctrl-C),
    // nothing the build started outlives it: the reaper stops it.
    let Started {
        mut child,
        group,
        mut reaper,
        mut stdout,
        mut stderr,
    } = match start(request, workspace, command) {
        Ok(started) => started,
        Err(e) => {
            log.write(format!("cannot start sh: {e}\n").as_bytes());
            return (
                Ending::StartFailed,
                Captured {
                    log,
                    stderr: Vec::new(),
                },
            );
        }
    };
    let deadline = tokio::time::sleep(request.timeout);
    tokio::pin!(deadline);
    let mut buf = vec![0u8; 64 * 1024];
    let mut err_buf = vec![0u8; 16 * 1024];
    let mut timed_out = false;
    let mut output_open = true;
    let mut errors_open = true;
    let mut keep_stderr = |bytes: &[u8], log: &mut BoundedLog| {
        log.write(bytes);
        stderr_tail.extend(bytes);
        let excess = stderr_tail.len().saturating_sub(STDERR_TAIL);
        stderr_tail.drain(..excess);
    };
    let status = loop {
        tokio::select! {
            read = stdout.read(&mut buf), if output_open => match read {
                Ok(0) | Err(_) => output_open = false,
                Ok(n) => log.write(&buf[..n]),
            },
            read = stderr.read(&mut err_buf), if errors_open => match read {
                Ok(0) | Err(_) => errors_open = false,
                Ok(n) => keep_stderr(&err_buf[..n], &mut log),
            },
            status = child.wait() => break status,
            () = &mut deadline, if !timed_out => {
                timed_out = true;
                stop_group(group, &mut child).await;
            }
        }
    };
    // Background processes the command left behind must not outlive it, nor hold the pipe open.
    reaper.reap();
    while output_open {
        match tokio::time::timeout(Duration::from_secs(2), stdout.read(&mut buf)).await {
            Ok(Ok(n)) if n > 0 => log.write(&buf[..n]),
            _ => output_open = false,
        }
    }
    while errors_open {
        match tokio::time::timeout(Duration::from_secs(2), stderr.read(&mut err_buf)).await {
            Ok(Ok(n)) if n > 0 => keep_stderr(&err_buf[..n], &mut log),
            _ => errors_open = false,
        }
    }
    let ending = match status {
        _ if timed_out => Ending::TimedOut,
        Ok(s) => match (s.code(), s.signal()) {
            (Some(code), _) => Ending::Exited(code),
            (None, Some(sig)) => Ending::Signalled(sig),
            (None, None) => Ending::Exited(-1),
        },
        Err(e) => {
            log.write(format!("cannot wait for the build: {e}\n").as_bytes());
            Ending::StartFailed
        }
    };
    (
        ending,
        Captured {
            log,
            stderr: stderr_tail.into(),
        },
    )
}

/// A process started by [`start`]: the child, its process group, the reaper that stops it and
/// everything it starts, and its output's pipes.
struct Started {
    child: tokio::process::Child,
    group: Option<Pid>,
    reaper: Reaper,
    stdout: tokio::process::ChildStdout,
    stderr: tokio::process::ChildStderr,
}

/// Starts `command` by `sh` in `workspace`, in a process group of its own, with the build's
/// environment and a marker of its own, its output piped.
fn start(request: &ExecutionRequest, workspace: &Path, command: &str) -> std::io::Result<Started> {
    let marker = format!("{}-{}", std::process::id(), NEXT_RUN.fetch_add(1, Ordering::Relaxed));
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(command)
        .current_dir(workspace)
        // The build sees an allow-list of the host's variables, never kubeheal's own secrets.
        .env_clear()
        .envs(build_environment(std::env::vars()))
        .env("KUBEHEAL_ARTIFACTS", &request.artifacts_dir)
        .env("CI", "true")
        .env(RUN_MARKER, &marker)
        .envs(request.env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true)
        .spawn()?;
    let group = child.id().map(|id| Pid::from_raw(id as i32));
    Ok(Started {
        group,
        reaper: Reaper {
            group,
            marker: Some(marker),
        },
        stdout: child.stdout.take().expect("stdout is piped"),
        stderr: child.stderr.take().expect("stderr is piped"),
        child,
    })
}

/// What a run printed: the log (both streams, bounded) and the end of stderr on its own.
struct Captured {
    log: BoundedLog,
    stderr: Vec<u8>,
}

impl Default for Captured {
    /// Nothing printed: the run did not start.
    fn default() -> Self {
        Captured {
            log: BoundedLog::new(0, 0),
            stderr: Vec::new(),
        }
    }
}

/// Names the processes of one run in their environment, so that those that left the process
/// group (`setsid`, a daemonising server) are found and stopped too.
const RUN_MARKER: &str = "KUBEHEAL_RUN_MARKER";
static NEXT_RUN: AtomicU64 = AtomicU64::new(0);

/// The host's variables a build keeps: where tools are, the locale, the user, the proxies.
/// Everything else — kubeheal's tokens, the user's cloud credentials — stays out; a build that
/// needs more is given it explicitly (`--env`, `spec.executor.env`).
const INHERITED: &[&str] = &[
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "LANG",
    "LANGUAGE",
    "LC_ALL",
    "LC_CTYPE",
    "TZ",
    "TERM",
    "TMPDIR",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
    "http_proxy",
    "https_proxy",
    "no_proxy",
    "PYENV_ROOT",
    "PYENV_VERSION",
    "VIRTUAL_ENV",
    "CONDA_PREFIX",
    "JAVA_HOME",
    "GOROOT",
    "GOPATH",
    "GOCACHE",
    "GOMODCACHE",
    "GOFLAGS",
    "CARGO_HOME",
    "RUSTUP_HOME",
    "RUSTUP_TOOLCHAIN",
    "NVM_DIR",
    "NVM_BIN",
];

/// The allow-listed part of `vars` (kubeheal's own environment).
pub fn build_environment(vars: impl IntoIterator<Item = (String, String)>) -> Vec<(String, String)> {
    vars.into_iter()
        .filter(|(name, _)| INHERITED.contains(&name.as_str()) && !looks_secret_name(name))
        .collect()
}

/// Stops a run's processes, once: when asked, or when dropped.
struct Reaper {
    group: Option<Pid>,
    /// The run's marker, until the run is reaped.
    marker: Option<String>,
}

impl Reaper {
    /// KILLs the run's process group and every process that carries its marker.
    fn reap(&mut self) {
        let Some(marker) = self.marker.take() else { return };
        if let Some(pid) = self.group {
            let _ = killpg(pid, Signal::SIGKILL);
        }
        let needle = format!("{RUN_MARKER}={marker}\0");
        let Ok(entries) = std::fs::read_dir("/proc") else {
            return;
        };
        for entry in entries.flatten() {
            let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse::<i32>().ok()) else {
                continue;
            };
            if let Ok(environ) = std::fs::read(entry.path().join("environ"))
                && memchr::memmem::find(&environ, needle.as_bytes()).is_some()
            {
                let _ = nix::sys::signal::kill(Pid::from_raw(pid), Signal::SIGKILL);
            }
        }
    }
}

impl Drop for Reaper {
    fn drop(&mut self) {
        self.reap();
    }
}

/// TERM the whole group, give it a grace period, then KILL what is left. `leader`, the group's
/// first process, is reaped as soon as it ends: until then it stays a zombie, and the group would
/// seem to live on for the whole grace period.
async fn stop_group(group: Option<Pid>, leader: &mut tokio::process::Child) {
    let Some(pid) = group else { return };
    if killpg(pid, Signal::SIGTERM).is_err() {
        return;
    }
    let deadline = Instant::now() + GRACE;
    while Instant::now() < deadline {
        // The status is kept: the caller's `wait` has it at once.
        let _ = leader.try_wait();
        // Signal 0 only asks whether the group still exists.
        if killpg(pid, None).is_err() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let _ = killpg(pid, Signal::SIGKILL);
}

async fn environment(project: crate::api::heal_run::ProjectType) -> BTreeMap<String, String> {
    let mut env = BTreeMap::new();
    env.insert("image".into(), "local".into());
    env.insert(
        "os".into(),
        format!("{}-{}", std::env::consts::OS, std::env::consts::ARCH),
    );
    env.insert("projectType".into(), format!("{project:?}").to_lowercase());
    for (tool, args) in detect::tools(project) {
        let version = tokio::time::timeout(
            Duration::from_secs(10),
            Command::new(tool)
                .args(*args)
                .stdin(Stdio::null())
                .kill_on_drop(true)
                .output(),
        )
        .await;
        let value = match version {
            Ok(Ok(out)) if out.status.success() => {
                let text = String::from_utf8_lossy(if out.stdout.is_empty() {
                    &out.stderr
                } else {
                    &out.stdout
                })
                .into_owned();
                text.lines().next().unwrap_or("").trim().to_owned()
            }
            _ => "not found".to_owned(),
        };
        env.insert(tool.to_string(), value);
    }
    env
}

/// What is known of a run besides how it ended and what it printed.
#[derive(Default)]
struct Setting {
    /// Seed 001's environment metadata.
    environment: BTreeMap<String, String>,
    /// What the workspace's copy left out, and the like.
    warnings: Vec<String>,
}

fn finish(
    request: &ExecutionRequest,
    started: Instant,
    ending: Ending,
    runner: Option<Runner>,
    detail: &str,
    captured: Captured,
    setting: Setting,
) -> Execution {
    let Captured { log: output, stderr } = captured;
    let Setting {
        environment,
        mut warnings,
    } = setting;
    if output.dropped() > 0 {
        warnings.push(format!(
            "the build printed {} bytes; the middle {} bytes were dropped (the first and last 4 MiB are kept)",
            output.total(),
            output.dropped()
        ));
    }
    let secrets = all_secrets(request);
    let (log, mut redactions) = redact(&output.text(), &secrets);
    let (stderr, n) = redact(&String::from_utf8_lossy(&stderr), &secrets);
    redactions += n;
    // The command itself may carry a credential.
    let environment: BTreeMap<String, String> = environment
        .into_iter()
        .map(|(k, v)| {
            let (v, n) = redact(&v, &secrets);
            redactions += n;
            (k, v)
        })
        .collect();
    let (status, error) = classify(ending, runner, request.timeout, detail);
    let artifacts = collect_artifacts(&request.artifacts_dir, &mut warnings);
    let exit_code = match ending {
        Ending::Exited(code) => Some(code),
        Ending::Signalled(sig) => Some(128 + sig),
        _ => None,
    };
    let (error_class, error_message, suggested_fix) = match error {
        Some((class, message, fix)) => (Some(class), Some(redact(&message, &secrets).0), Some(fix)),
        None => (None, None, None),
    };
    let envelope = RunEnvelope {
        run_id: request.run_id.clone(),
        endpoint: None,
        status,
        duration_ms: started.elapsed().as_millis() as u64,
        http_status: build_http_status(status),
        content_type: BUILD_CONTENT_TYPE.to_owned(),
        json: None,
        text_preview: Some(text_preview(&log)),
        exit_code,
        error_class,
        error_message,
        suggested_fix,
        warnings,
        redactions_applied: redactions > 0,
        artifacts,
        log_excerpt: Some(excerpt(&log)),
        environment_metadata: environment,
    };
    Execution {
        envelope,
        log,
        stderr_tail: stderr,
        endpoint_calls: Vec::new(),
        service_output: String::new(),
    }
}

/// The values nothing the executor returns may hold: the request's secrets, the values of its
/// secret-looking variables and kubeheal's own (a build can read its parent's environment in
/// /proc).
fn all_secrets(request: &ExecutionRequest) -> Vec<String> {
    request
        .secrets
        .iter()
        .cloned()
        .chain(
            request
                .env
                .iter()
                .filter(|(k, _)| looks_secret_name(k))
                .map(|(_, v)| v.clone()),
        )
        .chain(secret_values(std::env::vars()))
        .collect()
}
