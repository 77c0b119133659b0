//! The local driver of the heal loop (`kubeheal heal DIR`): execute → parse → propose → gate →
//! commit → execute again, with the local executor, a local heal branch and state under
//! `DIR/.kubeheal/`, until the build is green, the cycles are spent, or the environment fails.
//! Approval is automatic here: the branch is the proposal, and nothing leaves the machine.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use crate::api::heal_run::{HealPolicy, HealRunReason, HealerOutcome, ProjectType};
use crate::api::shared::RunStatus;
use crate::core::gate;
use crate::executor::local::LocalExecutor;
use crate::executor::{Execution, ExecutionRequest};
use crate::git::Repo;
use crate::healer::validate::Limits;
use crate::healer::{ErrorContext, HealRequest, Healer, PreviousAttempt, ReportWithSnippet, cycle_timeout};
use crate::parse::format::render;
use crate::parse::{ParseOutput, Verdict, Workspace, parse};

/// What `kubeheal heal` was asked to do.
pub struct HealOptions {
    pub dir: PathBuf,
    pub command: Option<String>,
    pub max_cycles: u32,
    pub timeout: Duration,
    pub policy: HealPolicy,
}

/// How the run ended.
#[derive(Debug, Clone)]
pub struct HealSummary {
    pub reason: HealRunReason,
    pub message: String,
    pub cycles: u32,
    pub fixed_tests: Vec<String>,
    pub commits: Vec<String>,
    pub diff_stat: String,
    pub branch: String,
    /// The commit the run started from.
    pub base: String,
    pub repo: PathBuf,
}

impl HealSummary {
    pub fn healed(&self) -> bool {
        self.reason == HealRunReason::Healed
    }
}

/// Runs the loop; `progress` receives one line per step.
pub async fn heal(
    options: &HealOptions,
    healer: &dyn Healer,
    progress: &mut dyn FnMut(String),
) -> Result<HealSummary, String> {
    let started = Instant::now();
    let dir = options
        .dir
        .canonicalize()
        .map_err(|e| format!("cannot open {}: {e}", options.dir.display()))?;
    let state = dir.join(".kubeheal");
    let work = state.join("repo");
    if work.exists() {
        std::fs::remove_dir_all(&work).map_err(|e| format!("cannot reset {}: {e}", work.display()))?;
    }
    let repo = Repo::prepare(&dir, &work).await.map_err(|e| e.to_string())?;
    let name: String = dir
        .file_name()
        .map(|n| {
            n.to_string_lossy()
                .chars()
                .map(|c| if c.is_ascii_alphanumeric() || c == '-' { c } else { '-' })
                .collect()
        })
        .unwrap_or_else(|| "project".into());
    let branch = format!("kubeheal/{name}");
    repo.heal_branch(&branch).await.map_err(|e| e.to_string())?;
    let base = repo.head().await.map_err(|e| e.to_string())?;
    let elapsed = |started: Instant| format!("{:>5.1}s", started.elapsed().as_secs_f64());

    let mut summary = HealSummary {
        reason: HealRunReason::CyclesExhausted,
        message: String::new(),
        cycles: 0,
        fixed_tests: Vec::new(),
        commits: Vec::new(),
        diff_stat: String::new(),
        branch: branch.clone(),
        base: base.clone(),
        repo: work.clone(),
    };
    let mut history: Vec<PreviousAttempt> = Vec::new();
    let mut baseline_failing: Option<BTreeSet<String>> = None;
    let mut previous_failing: BTreeSet<String> = BTreeSet::new();
    let mut healer_unreachable = 0u32;
    let mut gate_rejections = 0u32;
    let mut last_commit: Option<String> = None;

    for cycle in 0..=options.max_cycles {
        progress(format!("{} cycle {cycle}: running the build", elapsed(started)));
        let execution = execute(options, &repo, &state, cycle).await;
        let files = tracked_files(&repo).await;
        let parsed = parse(&execution.log, &Workspace::new("").with_files(files.clone()));
        let exit = execution.envelope.exit_code.unwrap_or(-1);
        let verdict = if execution.envelope.status == RunStatus::Timeout {
            Verdict::Failed
        } else {
            parsed.verdict(exit)
        };
        let failing: BTreeSet<String> = parsed.failing_tests().into_iter().collect();
        let baseline = baseline_failing.get_or_insert_with(|| failing.clone()).clone();
        summary.fixed_tests = baseline.difference(&failing).cloned().collect();
        progress(format!(
            "{} cycle {cycle}: exit {exit}, {} failing test(s), {} bug report(s)",
            elapsed(started),
            failing.len(),
            parsed.reports.len()
        ));
        for report in parsed.reports.iter().take(5) {
            progress(format!("        found: {}", render(report)));
        }

        match verdict {
            Verdict::Passed => {
                summary.reason = HealRunReason::Healed;
                summary.message = if cycle == 0 {
                    "the build already passes".into()
                } else {
                    format!("the build passes after {cycle} cycle(s)")
                };
                break;
            }
            Verdict::Infrastructure(kind) => {
                summary.reason = HealRunReason::InfraFailure;
                summary.message = format!("{kind:?}: {}", kind.suggested_fix());
                break;
            }
            Verdict::Failed => {}
        }
        // A fix that made passing tests fail is reverted, and the run stops.
        if let Some(commit) = last_commit.take() {
            let newly: Vec<String> = failing.difference(&previous_failing).cloned().collect();
            if !newly.is_empty() {
                let revert = repo
                    .revert(&commit, &format!("it made {} fail", newly.join(", ")))
                    .await
                    .map_err(|e| e.to_string())?;
                summary.commits.push(revert);
                summary.reason = HealRunReason::Regressed;
                summary.message = format!(
                    "cycle {} made tests fail that passed before ({}); reverted",
                    cycle,
                    newly.join(", ")
                );
                break;
            }
        }
        previous_failing = failing;
        if cycle == options.max_cycles {
            summary.reason = if healer_unreachable == options.max_cycles && options.max_cycles > 0 {
                HealRunReason::HealerUnavailable
            } else if gate_rejections == options.max_cycles && options.max_cycles > 0 {
                HealRunReason::GateRejected
            } else {
                HealRunReason::CyclesExhausted
            };
            summary.message = format!("the build still fails after {} cycle(s)", options.max_cycles);
            break;
        }
        if parsed.reports.is_empty() {
            summary.reason = HealRunReason::CyclesExhausted;
            summary.message = format!(
                "the build fails ({}) but its log names no file and line to fix",
                execution.envelope.error_message.clone().unwrap_or_default()
            );
            break;
        }

        let next = cycle + 1;
        summary.cycles = next;
        let request = heal_request(options, &repo, &name, &files, &parsed, &execution, next, &history);
        progress(format!(
            "{} cycle {next}: asking the healer ({} s allowed)",
            elapsed(started),
            request.timeout.as_secs()
        ));
        let response = healer.heal(&request).await;
        if response.outcome != HealerOutcome::Healed {
            let reason = response.reason.clone().unwrap_or_default();
            if matches!(response.outcome, HealerOutcome::Timeout | HealerOutcome::Unreachable) {
                healer_unreachable += 1;
            }
            progress(format!(
                "{} cycle {next}: no fix ({:?}): {reason}",
                elapsed(started),
                response.outcome
            ));
            history.push(PreviousAttempt {
                cycle: next,
                outcome: format!("{:?}", response.outcome).to_lowercase(),
                changes_summary: None,
                files: Vec::new(),
                result: Some(reason),
            });
            continue;
        }
        let before: BTreeMap<String, String> = response
            .modified_files
            .keys()
            .map(|p| (p.clone(), repo.read(p).unwrap_or_default()))
            .collect();
        let verdict = gate::check(
            &options.policy,
            response.confidence,
            &parsed.reports,
            &before,
            &response.modified_files,
        );
        if !verdict.accepted {
            gate_rejections += 1;
            progress(format!(
                "{} cycle {next}: the gate rejected the fix: {}",
                elapsed(started),
                verdict.reasons.join("; ")
            ));
            history.push(PreviousAttempt {
                cycle: next,
                outcome: "rejected".into(),
                changes_summary: response.changes_summary.clone(),
                files: response.modified_files.keys().cloned().collect(),
                result: Some(verdict.reasons.join("; ")),
            });
            continue;
        }
        let subject = parsed
            .reports
            .iter()
            .find(|r| response.modified_files.contains_key(&r.file_path))
            .or(parsed.reports.first())
            .map(render)
            .unwrap_or_default();
        let message = format!(
            "[AI-AGENT] {subject}\n\n{}\n\nKubeheal-Run: {name}\nKubeheal-Cycle: {next}\n",
            response.changes_summary.clone().unwrap_or_default()
        );
        let commit = repo
            .commit(&response.modified_files, &message)
            .await
            .map_err(|e| e.to_string())?;
        progress(format!(
            "{} cycle {next}: committed {} ({})",
            elapsed(started),
            &commit[..12.min(commit.len())],
            response.changes_summary.clone().unwrap_or_default()
        ));
        history.push(PreviousAttempt {
            cycle: next,
            outcome: "healed".into(),
            changes_summary: response.changes_summary.clone(),
            files: response.modified_files.keys().cloned().collect(),
            result: None,
        });
        summary.commits.push(commit.clone());
        last_commit = Some(commit);
    }

    summary.diff_stat = repo.diff_stat(&base).await.unwrap_or_default();
    // Make the heal branch visible in the user's own repository.
    if dir.join(".git").exists() && !summary.commits.is_empty() {
        let user = Repo::at(&dir);
        let _ = user
            .git(&[
                "fetch",
                "--quiet",
                &work.display().to_string(),
                &format!("+{branch}:{branch}"),
            ])
            .await;
    }
    Ok(summary)
}

async fn execute(options: &HealOptions, repo: &Repo, state: &std::path::Path, cycle: u32) -> Execution {
    let run_id = format!("cycle-{cycle}");
    let request = ExecutionRequest {
        artifacts_dir: state.join("artifacts").join(&run_id),
        run_id,
        source: repo.dir.clone(),
        revision: None,
        patches: Vec::new(),
        project_type: ProjectType::Auto,
        command: options.command.clone(),
        timeout: options.timeout,
        env: Vec::new(),
        secrets: Vec::new(),
    };
    let execution = LocalExecutor.execute(&request).await;
    let _ = std::fs::write(state.join(format!("cycle-{cycle}.log")), &execution.log);
    execution
}

async fn tracked_files(repo: &Repo) -> Vec<String> {
    repo.git(&["ls-files"])
        .await
        .map(|out| out.lines().map(str::to_owned).collect())
        .unwrap_or_default()
}

#[allow(clippy::too_many_arguments)] // one call site; a struct would only rename the arguments
fn heal_request(
    options: &HealOptions,
    repo: &Repo,
    project: &str,
    files: &[String],
    parsed: &ParseOutput,
    execution: &Execution,
    cycle: u32,
    history: &[PreviousAttempt],
) -> HealRequest {
    let mut failed_files = BTreeMap::new();
    for report in &parsed.reports {
        if let Some(content) = repo.read(&report.file_path) {
            failed_files.insert(report.file_path.clone(), content);
        }
    }
    // Small projects: give the healer the other Python modules too, so names they define can be
    // imported.
    for path in files.iter().filter(|p| p.ends_with(".py")).take(20) {
        if !failed_files.contains_key(path)
            && let Some(content) = repo.read(path).filter(|c| c.len() < 64 * 1024)
        {
            failed_files.insert(path.clone(), content);
        }
    }
    let reports = parsed
        .reports
        .iter()
        .filter_map(|r| {
            failed_files
                .get(&r.file_path)
                .map(|c| ReportWithSnippet::new(r.clone(), c))
        })
        .collect();
    let envelope = &execution.envelope;
    HealRequest {
        project_id: project.to_owned(),
        cycle,
        failed_files,
        reports,
        error_context: ErrorContext::new(
            envelope.exit_code.unwrap_or(-1),
            parsed.reports.len() as u32,
            envelope.error_message.clone().unwrap_or_default(),
            "",
            &execution.log,
        ),
        history: history.to_vec(),
        timeout: cycle_timeout(&[], cycle),
        limits: Limits {
            allowed_paths: options.policy.allowed_paths.clone(),
            ..Limits::default()
        },
    }
}
