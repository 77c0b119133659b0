//! Seed 004's Regenerate step: after a contract fix is pushed, the target's regenerate command
//! runs in an executor Job over the fix's commit (the tool machinery of `executor::tool`: the
//! command in its image over the checkout, then git reports what it changed); what it changed is
//! committed on the ticket's branch as a second commit and pushed, and the ticket ends `Applied`
//! with the count. A regeneration that fails reverts the fix on the branch and ends the ticket
//! `Failed`. The decisions are `core::ticket_regenerate`'s.
//!
//! The Job is named after the ticket and owned by it, so a restarted operator finds it rather
//! than launching a second one; its changes wake the ticket (the controller owns such Jobs), and
//! a short requeue is the safety net. Both commits carry trailers naming the ticket and the fix's
//! commit, so an operator interrupted after a push finds its commit instead of making another.

use std::collections::BTreeMap;
use std::time::Duration;

use k8s_openapi::jiff::Timestamp;
use kube::ResourceExt;

use super::{Failure, Outcome, checkout, command_job, finish, note};
use crate::api::healer_ticket::{HealerTicket, HealerTicketStatus, RegenerateStatus, TicketPhase, TicketTarget};
use crate::core::format::short_commit;
use crate::core::patch::unified_diff;
use crate::core::redact::redact;
use crate::core::ticket_fix::{TICKET_TRAILER, branch, contract_path};
use crate::core::ticket_regenerate::{
    REGENERATED_FROM_TRAILER, REVERTS_TRAILER, Ran, commit_message, job_name, judge, problem, regenerated,
    revert_message, timeout,
};
use crate::executor::job::{JobRequest, TOOL_CONTAINER, container_exit_code, container_log_tail, kept_artifacts};
use crate::executor::tool;
use crate::git::Repo;

/// How often a running regeneration is looked at when no change of its Job woke the ticket.
const RECHECK: Duration = Duration::from_secs(10);
/// Lines of the command's own output quoted when it fails.
const FAILURE_LINES: i64 = 20;
/// Largest file read back from the fix's commit to diff a regenerated file against.
const MAX_FILE: u64 = 1024 * 1024;

/// Where the regeneration stands.
pub(super) enum Progress {
    /// Its Job was launched or still runs: look again after this long.
    Waiting(Duration),
    /// It ended: the ticket's outcome (`Applied` with the count, or `Failed` with the fix
    /// reverted).
    Done(Box<Outcome>),
}

/// The message shown while the fix waits for its regeneration (`Approved`).
pub(super) fn waiting_message(commit: &str, branch: &str, job: &str) -> String {
    format!(
        "the fix is committed as {} on {branch}; regenerating the code in Job {job}",
        short_commit(commit)
    )
}

/// The regeneration's status as the apply leaves it: the Job named, nothing reported yet.
pub(super) fn started(ticket: &str) -> RegenerateStatus {
    RegenerateStatus {
        job_name: Some(job_name(ticket)),
        ..RegenerateStatus::default()
    }
}

/// Launches the ticket's regeneration Job once, waits for it, then commits what it changed or
/// reverts the fix.
pub(super) async fn step(
    ticket: &HealerTicket,
    target: &TicketTarget,
    status: &HealerTicketStatus,
    ctx: &super::Context,
) -> Result<Progress, Failure> {
    let regenerate = target
        .regenerate
        .as_ref()
        .ok_or_else(|| Failure::Final("there is no regenerate command".into()))?;
    if let Some(why) = problem(regenerate) {
        return Err(Failure::Final(why));
    }
    let fix = status
        .apply
        .as_ref()
        .and_then(|a| a.commit.clone())
        .ok_or_else(|| Failure::Final("the fix has no commit to regenerate the code from".into()))?;
    let name = ticket.name_any();
    let namespace = ticket.namespace().unwrap_or_default();
    let job = job_name(&name);
    let api = |e: kube::Error| Failure::Transient(format!("the API server, about Job {job}: {e}"));
    // A cheap look first (the watch cache): the request, which reads the repository's Secret,
    // only to launch the Job or to read it back.
    let ended = ctx
        .jobs
        .ended(&namespace, &job, timeout(regenerate))
        .await
        .map_err(api)?;
    if ended == Some(false) {
        return Ok(Progress::Waiting(RECHECK));
    }
    let request = job_request(ticket, target, &fix, ctx).await?;
    if ended.is_none() {
        ctx.jobs.launch(&request).await.map_err(api)?;
        return Ok(Progress::Waiting(RECHECK));
    }
    let Some(execution) = ctx.jobs.collect(&request).await.map_err(api)? else {
        return Ok(Progress::Waiting(RECHECK));
    };
    let client = ctx.client.clone();
    let artifacts = kept_artifacts(client.clone(), &namespace, &execution.envelope)
        .await
        .map_err(api)?;
    let command_exit = container_exit_code(client.clone(), &namespace, &job, TOOL_CONTAINER)
        .await
        .map_err(api)?;
    let report_exit = execution.envelope.exit_code;
    let printed = if command_exit == Some(0) && report_exit == Some(0) {
        String::new()
    } else {
        let tail = container_log_tail(client, &namespace, &job, TOOL_CONTAINER, FAILURE_LINES)
            .await
            .map_err(api)?
            .unwrap_or_default();
        redact(&tail, &request.run.secrets).0
    };
    let ran = Ran {
        command_exit,
        report_exit,
        executor_said: execution.envelope.error_message.clone(),
        changes: tool::changed_files(&artifacts),
        printed,
    };
    let fqn = target.contract_fqn.as_deref().unwrap_or_default();
    let contract = contract_path(fqn, target.contract_layout.as_deref()).map_err(Failure::Final)?;
    let outcome = match judge(ran, &contract) {
        Ok(files) => commit_regenerated(ticket, target, status, ctx, &fix, files).await?,
        Err(why) => revert(ticket, target, status, ctx, &fix, &why).await?,
    };
    Ok(Progress::Done(Box::new(outcome)))
}

/// The regeneration's Job for `ticket`, with the values its output is redacted of.
async fn job_request(
    ticket: &HealerTicket,
    target: &TicketTarget,
    fix: &str,
    ctx: &super::Context,
) -> Result<JobRequest, Failure> {
    let secrets = command_job::secrets(ticket, target, ctx).await?;
    regeneration_job(ticket, target, fix, secrets).map_err(Failure::Final)
}

/// The regeneration's Job: the fix's commit fetched, the command run with `sh -c` in the image,
/// in the repository's root, within the target's `timeoutSeconds`, and the changes reported;
/// owned by the ticket.
fn regeneration_job(
    ticket: &HealerTicket,
    target: &TicketTarget,
    fix: &str,
    secrets: Vec<String>,
) -> Result<JobRequest, String> {
    let regenerate = target.regenerate.as_ref().ok_or("there is no regenerate command")?;
    let fqn = target.contract_fqn.as_deref().unwrap_or_default();
    let contract = contract_path(fqn, target.contract_layout.as_deref())?;
    let run = command_job::Command {
        name: job_name(&ticket.name_any()),
        commit: fix,
        patches: Vec::new(),
        image: &regenerate.image,
        command: &regenerate.command,
        timeout: timeout(regenerate),
        task: format!("regenerate the code from the contracts after the fix of {fqn} ({contract})"),
    };
    command_job::request(ticket, target, run, secrets)
}

/// The ticket's clone, synced, and the tip of its branch on the remote.
async fn branch_tip(
    ticket: &HealerTicket,
    target: &TicketTarget,
    ctx: &super::Context,
    branch: &str,
) -> Result<(Repo, String), Failure> {
    let (repo, _) = checkout(ticket, target, ctx).await?;
    let tip = repo
        .git(&[
            "rev-parse",
            "--verify",
            &format!("refs/remotes/origin/{branch}^{{commit}}"),
        ])
        .await?;
    Ok((repo, tip))
}

/// Refuses to add to a branch that moved past the fix since it was pushed (someone else's
/// commits there are not kubeheal's to build on or force-push away).
fn at_fix(branch: &str, tip: &str, fix: &str) -> Result<(), Failure> {
    if tip == fix {
        return Ok(());
    }
    Err(Failure::Final(format!(
        "the branch {branch} is at {}, not at the fix {} kubeheal pushed: it moved since, and kubeheal commits nothing over it",
        short_commit(tip),
        short_commit(fix)
    )))
}

/// Commits the regenerated `files` over the fix on the ticket's branch (unless an earlier
/// attempt did) and pushes; the outcome is `Applied` with the count.
async fn commit_regenerated(
    ticket: &HealerTicket,
    target: &TicketTarget,
    status: &HealerTicketStatus,
    ctx: &super::Context,
    fix: &str,
    files: BTreeMap<String, String>,
) -> Result<Outcome, Failure> {
    let name = ticket.name_any();
    let branch = branch(&name);
    let commit = if files.is_empty() {
        None
    } else {
        let (repo, tip) = branch_tip(ticket, target, ctx, &branch).await?;
        let trailers = [(TICKET_TRAILER, name.as_str()), (REGENERATED_FROM_TRAILER, fix)];
        match repo
            .commit_with(&format!("refs/remotes/origin/{branch}"), &trailers)
            .await
        {
            // An earlier attempt committed and pushed it, then stopped before recording it.
            Some(commit) => Some(commit),
            None => {
                at_fix(&branch, &tip, fix)?;
                commit_files(&repo, target, &name, &branch, fix, &files).await?
            }
        }
    };
    let count = match &commit {
        Some(commit) => count_files(ticket, target, ctx, fix, commit).await?,
        None => 0,
    };
    let mut next = status.clone();
    let result = regenerated(count);
    let explanation = status
        .proposal
        .as_ref()
        .map(|p| p.explanation.clone())
        .unwrap_or_default();
    let why = match &commit {
        Some(commit) => format!(
            "{explanation} — committed as {} on {branch}; {result} (commit {})",
            short_commit(fix),
            short_commit(commit)
        ),
        None => format!(
            "{explanation} — committed as {} on {branch}; {result}: the generated code was up to date",
            short_commit(fix)
        ),
    };
    next.regenerate = Some(RegenerateStatus {
        result: Some(result),
        files: Some(u32::try_from(count).unwrap_or(u32::MAX)),
        commit,
        ..started(&name)
    });
    finish(&mut next, TicketPhase::Applied, &why, Timestamp::now());
    Ok(Outcome {
        status: next,
        note: note(false, "Applied", why),
    })
}

/// Commits `files` as they differ from the fix's commit on `branch` and pushes; `None` when
/// none differs after all.
async fn commit_files(
    repo: &Repo,
    target: &TicketTarget,
    ticket: &str,
    branch: &str,
    fix: &str,
    files: &BTreeMap<String, String>,
) -> Result<Option<String>, Failure> {
    repo.checkout(fix).await?;
    let tree = repo.files().map_err(|e| Failure::Final(e.to_string()))?;
    let mut before = BTreeMap::new();
    for path in files.keys() {
        match tree.read_text(path, MAX_FILE) {
            Ok(text) => {
                before.insert(path.clone(), text);
            }
            Err(e) if e.is_not_found() => {}
            Err(e) => {
                return Err(Failure::Final(format!(
                    "cannot read {path} at the fix's commit to commit its regenerated text: {e}"
                )));
            }
        }
    }
    let changed: Vec<&String> = files.keys().filter(|p| before.get(*p) != files.get(*p)).collect();
    let patch = unified_diff(&before, files);
    if changed.is_empty() || patch.is_empty() {
        return Ok(None);
    }
    let fqn = target.contract_fqn.as_deref().unwrap_or_default();
    let message = commit_message(ticket, fqn, fix, &changed);
    let commit = repo.commit_patch(branch, fix, &patch, &message).await?;
    repo.push(branch).await?;
    Ok(Some(commit))
}

/// How many files `commit` changed after the fix (read from Git, so a commit found from an
/// interrupted attempt is counted like a new one).
async fn count_files(
    ticket: &HealerTicket,
    target: &TicketTarget,
    ctx: &super::Context,
    fix: &str,
    commit: &str,
) -> Result<usize, Failure> {
    let (repo, _) = checkout(ticket, target, ctx).await?;
    let names = repo.git(&["diff", "--name-only", fix, commit]).await?;
    Ok(names.lines().filter(|l| !l.is_empty()).count())
}

/// Reverts the fix on the ticket's branch (unless an earlier attempt did) and pushes; the
/// outcome is `Failed` with why, and the fix rolled back.
async fn revert(
    ticket: &HealerTicket,
    target: &TicketTarget,
    status: &HealerTicketStatus,
    ctx: &super::Context,
    fix: &str,
    why: &str,
) -> Result<Outcome, Failure> {
    let name = ticket.name_any();
    let branch = branch(&name);
    let (repo, tip) = branch_tip(ticket, target, ctx, &branch).await?;
    let trailers = [(TICKET_TRAILER, name.as_str()), (REVERTS_TRAILER, fix)];
    let reverted = match repo
        .commit_with(&format!("refs/remotes/origin/{branch}"), &trailers)
        .await
    {
        Some(commit) => commit,
        None => {
            at_fix(&branch, &tip, fix)?;
            let fqn = target.contract_fqn.as_deref().unwrap_or_default();
            let commit = repo
                .revert_on(&branch, fix, fix, &revert_message(&name, fqn, fix, why))
                .await?;
            repo.push(&branch).await?;
            commit
        }
    };
    let mut next = status.clone();
    let apply = next.apply.get_or_insert_default();
    apply.rolled_back = true;
    apply.error = Some(why.to_owned());
    next.regenerate = Some(RegenerateStatus {
        result: Some(format!(
            "failed: {}",
            crate::parse::truncate(why.lines().next().unwrap_or(why), 200)
        )),
        revert_commit: Some(reverted.clone()),
        ..started(&name)
    });
    let message = format!(
        "the code regeneration failed, so the fix {} was reverted by {} on {branch}: {why}",
        short_commit(fix),
        short_commit(&reverted)
    );
    finish(&mut next, TicketPhase::Failed, &message, Timestamp::now());
    Ok(Outcome {
        status: next,
        note: note(true, "Failed", message),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::healer_ticket::HealerTicketSpec;

    /// A ticket as the API server gives it (a uid to own its Job), with `regenerate` in its target.
    fn ticket(regenerate: &str) -> (HealerTicket, TicketTarget) {
        let spec: HealerTicketSpec = serde_json::from_value(serde_json::json!({
            "source": "runtime",
            "error": "KeyError: 'resolution'",
            "target": {
                "contractFqn": "entity/helpdesk/ticket",
                "repository": {"url": "https://git.example/helpdesk.git", "subPath": "app"},
                "regenerate": serde_yaml_ng::from_str::<serde_json::Value>(regenerate).expect("YAML"),
            },
        }))
        .expect("a spec");
        let mut ticket = HealerTicket::new("ht-0123456789abcdef", spec);
        ticket.metadata.namespace = Some("helpdesk".into());
        ticket.metadata.uid = Some("6f1c1c44-7a4e-4d7e-9d0e-1c2b3a4d5e6f".into());
        let target = ticket.spec.target.clone();
        (ticket, target)
    }

    #[test]
    fn the_job_runs_within_the_targets_timeout_and_600_seconds_when_it_does_not_say() {
        let fix = "0123456789abcdef0123456789abcdef01234567";
        let (given, target) = ticket("{image: forge:1.4, command: make generate, timeoutSeconds: 1800}");
        let request = regeneration_job(&given, &target, fix, vec![]).expect("a Job");
        assert_eq!(request.run.timeout, Duration::from_secs(1800));
        let job = request.job();
        assert_eq!(
            job.spec.as_ref().and_then(|s| s.active_deadline_seconds),
            Some(1800),
            "the Job's own deadline"
        );
        assert_eq!(request.name, "ht-0123456789abcdef-regenerate");
        assert_eq!(request.run.revision.as_deref(), Some(fix));
        assert_eq!(
            request.run.source.sub_path, None,
            "generators run in the repository's root"
        );
        let (unsaid, target) = ticket("{image: forge:1.4, command: make generate}");
        let request = regeneration_job(&unsaid, &target, fix, vec![]).expect("a Job");
        assert_eq!(request.run.timeout, Duration::from_secs(600));
        assert_eq!(request.job().spec.and_then(|s| s.active_deadline_seconds), Some(600));
    }
}
