//! The local executor: the workspace in a fresh temporary copy (or checkout at the revision)
//! with the earlier patches applied, the command in its own process group with stdout and
//! stderr interleaved, the timeout enforced on the whole group (TERM, then KILL), the output
//! bounded in memory, and the envelope filled in.

use std::collections::BTreeMap;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use tokio::io::AsyncReadExt;
use tokio::process::Command;

use super::detect::{self, Runner};
use super::output::BoundedLog;
use super::{Ending, Execution, ExecutionRequest, classify, excerpt};
use crate::api::shared::{ArtifactRef, RunEnvelope};
use crate::core::redact::redact;

/// Bytes of output kept from the start and from the end of a run.
pub const KEEP_HEAD: usize = 4 * 1024 * 1024;
pub const KEEP_TAIL: usize = 4 * 1024 * 1024;
/// Grace between TERM and KILL when a run times out.
const GRACE: Duration = Duration::from_secs(5);
/// Seed 003's artifact limits.
const MAX_ARTIFACTS: usize = 50;
const MAX_ARTIFACT_BYTES: u64 = 50 * 1024 * 1024;

/// Runs builds as local processes.
#[derive(Debug, Default, Clone)]
pub struct LocalExecutor;

impl super::Executor for LocalExecutor {
    fn execute<'a>(&'a self, request: &'a super::RunRequest) -> super::ExecFuture<'a> {
        Box::pin(async move {
            let url = &request.source.url;
            let path = url.strip_prefix("file://").unwrap_or(url);
            if url.contains("://") && !url.starts_with("file://") {
                return Err(format!(
                    "the local executor runs local folders and file:// URLs, not {url}"
                ));
            }
            let mut source = PathBuf::from(path);
            if let Some(sub) = &request.source.sub_path {
                source = source.join(sub);
            }
            let run_id = format!("local-cycle-{}", request.cycle);
            let execution = ExecutionRequest {
                artifacts_dir: std::env::temp_dir()
                    .join("kubeheal-artifacts")
                    .join(format!("{}-{run_id}", std::process::id())),
                run_id,
                source,
                revision: request.revision.clone(),
                patches: request.patches.clone(),
                project_type: request.project_type,
                command: request.command.clone(),
                timeout: request.timeout,
                env: Vec::new(),
                secrets: request.secrets.clone(),
            };
            Ok(self.execute(&execution).await)
        })
    }
}

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
                    BoundedLog::new(0, 0),
                    BTreeMap::new(),
                );
            }
        };
        let workspace = scratch.path().join("workspace");
        if let Err(reason) = prepare(request, &workspace).await {
            return finish(
                request,
                started,
                Ending::SourceFailed,
                None,
                &reason,
                BoundedLog::new(0, 0),
                BTreeMap::new(),
            );
        }
        let project = detect::detect(&workspace, request.project_type);
        let (command, runner) = match (&request.command, detect::default_command(project)) {
            (Some(c), _) => (c.clone(), detect::runner_of(c)),
            (None, Some((c, r))) => (c.to_owned(), Some(r)),
            (None, None) => {
                return finish(
                    request,
                    started,
                    Ending::StartFailed,
                    None,
                    "no build command was given and the project type could not be detected (no pyproject.toml, package.json, Cargo.toml or go.mod); give --command",
                    BoundedLog::new(0, 0),
                    BTreeMap::new(),
                );
            }
        };
        let mut environment = environment(project).await;
        environment.insert("command".into(), command.clone());
        if let Err(e) = std::fs::create_dir_all(&request.artifacts_dir) {
            return finish(
                request,
                started,
                Ending::StartFailed,
                runner,
                &format!("cannot create {}: {e}", request.artifacts_dir.display()),
                BoundedLog::new(0, 0),
                environment,
            );
        }
        let (ending, log) = run(request, &workspace, &command).await;
        finish(request, started, ending, runner, "", log, environment)
    }
}

/// A fresh copy of the source: a checkout of `revision` when one is given, else the working tree;
/// then every patch applied in order.
async fn prepare(request: &ExecutionRequest, workspace: &Path) -> Result<(), String> {
    let source = &request.source;
    if !source.is_dir() {
        return Err(format!("{} is not a folder", source.display()));
    }
    match &request.revision {
        Some(revision) => {
            git(
                None,
                &[
                    "clone",
                    "--quiet",
                    "--no-hardlinks",
                    &source.display().to_string(),
                    &workspace.display().to_string(),
                ],
            )
            .await?;
            git(Some(workspace), &["checkout", "--quiet", revision]).await?;
        }
        None => copy_tree(source, workspace).map_err(|e| format!("cannot copy {}: {e}", source.display()))?,
    }
    for (i, patch) in request.patches.iter().enumerate() {
        let file = workspace.join(format!(".kubeheal-patch-{i}.diff"));
        std::fs::write(&file, patch).map_err(|e| format!("cannot write patch {}: {e}", i + 1))?;
        let applied = git(
            Some(workspace),
            &["apply", "--whitespace=nowarn", &file.display().to_string()],
        )
        .await;
        let _ = std::fs::remove_file(&file);
        applied.map_err(|e| format!("patch {} does not apply: {e}", i + 1))?;
    }
    Ok(())
}

async fn git(dir: Option<&Path>, args: &[&str]) -> Result<(), String> {
    let mut command = Command::new("git");
    if let Some(dir) = dir {
        command.current_dir(dir);
    }
    let out = command
        .args(args)
        .env("GIT_TERMINAL_PROMPT", "0")
        .stdin(Stdio::null())
        .output()
        .await
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

/// Copies a working tree, leaving out kubeheal's own state and the Git database.
fn copy_tree(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let name = entry.file_name();
        if name == ".kubeheal" || name == ".git" {
            continue;
        }
        let target = to.join(&name);
        let kind = entry.file_type()?;
        if kind.is_symlink() {
            std::os::unix::fs::symlink(std::fs::read_link(entry.path())?, &target)?;
        } else if kind.is_dir() {
            copy_tree(&entry.path(), &target)?;
        } else {
            std::fs::copy(entry.path(), &target)?;
        }
    }
    Ok(())
}

/// Runs `command` by `sh` in its own process group, stderr joined to stdout so the log keeps
/// their order, until it ends or the timeout stops the whole group.
async fn run(request: &ExecutionRequest, workspace: &Path, command: &str) -> (Ending, BoundedLog) {
    let mut log = BoundedLog::new(KEEP_HEAD, KEEP_TAIL);
    let mut child = match Command::new("sh")
        .arg("-c")
        .arg(format!("exec 2>&1\n{command}"))
        .current_dir(workspace)
        .env("KUBEHEAL_ARTIFACTS", &request.artifacts_dir)
        .env("CI", "true")
        .envs(request.env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .process_group(0)
        .kill_on_drop(true)
        .spawn()
    {
        Ok(c) => c,
        Err(e) => {
            log.write(format!("cannot start sh: {e}\n").as_bytes());
            return (Ending::StartFailed, log);
        }
    };
    let group = child.id().map(|id| Pid::from_raw(id as i32));
    let mut stdout = child.stdout.take().expect("stdout is piped");
    let deadline = tokio::time::sleep(request.timeout);
    tokio::pin!(deadline);
    let mut buf = vec![0u8; 64 * 1024];
    let mut timed_out = false;
    let mut output_open = true;
    let status = loop {
        tokio::select! {
            read = stdout.read(&mut buf), if output_open => match read {
                Ok(0) | Err(_) => output_open = false,
                Ok(n) => log.write(&buf[..n]),
            },
            status = child.wait() => break status,
            () = &mut deadline, if !timed_out => {
                timed_out = true;
                stop_group(group).await;
            }
        }
    };
    // Background processes the command left behind must not outlive it, nor hold the pipe open.
    if let Some(pid) = group {
        let _ = killpg(pid, Signal::SIGKILL);
    }
    while output_open {
        match tokio::time::timeout(Duration::from_secs(2), stdout.read(&mut buf)).await {
            Ok(Ok(n)) if n > 0 => log.write(&buf[..n]),
            _ => output_open = false,
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
    (ending, log)
}

/// TERM the whole group, give it a grace period, then KILL what is left.
async fn stop_group(group: Option<Pid>) {
    let Some(pid) = group else { return };
    if killpg(pid, Signal::SIGTERM).is_err() {
        return;
    }
    let deadline = Instant::now() + GRACE;
    while Instant::now() < deadline {
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
            Command::new(tool).args(*args).stdin(Stdio::null()).output(),
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

fn artifacts(dir: &Path, warnings: &mut Vec<String>) -> Vec<ArtifactRef> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|entries| entries.flatten().map(|e| e.path()).filter(|p| p.is_file()).collect())
        .unwrap_or_default();
    files.sort();
    let mut out = Vec::new();
    let mut total = 0u64;
    for path in files {
        let size = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
        if out.len() >= MAX_ARTIFACTS || total + size > MAX_ARTIFACT_BYTES {
            warnings.push(format!(
                "artifact {} left out: more than {MAX_ARTIFACTS} files or 50 MB",
                path.display()
            ));
            continue;
        }
        total += size;
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let mime = match path.extension().and_then(|e| e.to_str()) {
            Some("xml") => "application/xml",
            Some("json") => "application/json",
            Some("html") => "text/html",
            Some("txt" | "log") => "text/plain",
            _ => "application/octet-stream",
        };
        out.push(ArtifactRef {
            name,
            size,
            mime: mime.into(),
            url: path.display().to_string(),
        });
    }
    out
}

fn finish(
    request: &ExecutionRequest,
    started: Instant,
    ending: Ending,
    runner: Option<Runner>,
    detail: &str,
    output: BoundedLog,
    environment: BTreeMap<String, String>,
) -> Execution {
    let mut warnings = Vec::new();
    if output.dropped() > 0 {
        warnings.push(format!(
            "the build printed {} bytes; the middle {} bytes were dropped (the first and last 4 MiB are kept)",
            output.total(),
            output.dropped()
        ));
    }
    let secrets: Vec<String> = request
        .secrets
        .iter()
        .cloned()
        .chain(
            request
                .env
                .iter()
                .filter(|(k, _)| looks_secret(k))
                .map(|(_, v)| v.clone()),
        )
        .collect();
    let (log, mut redactions) = redact(&output.text(), &secrets);
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
    let artifacts = artifacts(&request.artifacts_dir, &mut warnings);
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
        status,
        duration_ms: started.elapsed().as_millis() as u64,
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
    Execution { envelope, log }
}

/// Environment variable names whose values are treated as secrets.
fn looks_secret(name: &str) -> bool {
    let n = name.to_ascii_uppercase();
    [
        "TOKEN",
        "SECRET",
        "PASSWORD",
        "PASSWD",
        "API_KEY",
        "APIKEY",
        "CREDENTIAL",
        "PRIVATE_KEY",
    ]
    .iter()
    .any(|w| n.contains(w))
}
