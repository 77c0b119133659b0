//! One cycle's call to the healers, the same for both drivers: the request from the newest
//! observation and the history of earlier cycles, each healer in order within the cycle's
//! timeout, and the answer turned into the patch (diff, digest, changed lines) with the gate's
//! verdict on it.

use std::collections::BTreeMap;
use std::time::Duration;

use super::{HealRequest, Healer, RequestInputs, files};
use crate::api::heal_run::{HealRunSpec, HealRunStatus, HealerCall, HealerOutcome, PatchStatus};
use crate::api::shared::BugReport;
use crate::confined::ConfinedDir;
use crate::core::heal_run::{history, latest_observation, spent_patches};
use crate::core::redact::redact;
use crate::core::{gate, patch};

/// What the healer said for one cycle.
pub struct CycleAnswer {
    pub call: HealerCall,
    /// The proposed patch and the gate's verdict, when the healer proposed one.
    pub patch: Option<PatchStatus>,
    /// The patch as a unified diff (empty without a patch).
    pub diff: String,
}

/// What a driver knows of the repository at the heal branch's head.
pub struct Workspace<'a> {
    /// The project's name for the healer.
    pub project: &'a str,
    /// Tracked files.
    pub files: &'a [String],
    /// The newest execution's (redacted) log.
    pub log: &'a str,
    /// The end of its stderr, when the executor kept it apart (else empty).
    pub stderr: &'a str,
    /// The working tree at the heal branch's head; files are read only through it.
    pub tree: &'a ConfinedDir,
    /// Values that must never reach the healer.
    pub secrets: &'a [String],
    /// What a work order the run executes asks for (its goal, instructions and error context);
    /// empty for a plain heal.
    pub task: &'a str,
}

impl Workspace<'_> {
    /// A file's text when it is a regular file inside the tree of at most `limit` bytes.
    fn read(&self, path: &str, limit: u64) -> Option<String> {
        match self.tree.read_text(path, limit) {
            Ok(text) => Some(text),
            Err(error) => {
                if !error.is_not_found() {
                    tracing::warn!(%error, "a file was not sent to the healer");
                }
                None
            }
        }
    }
}

/// Asks `healers` in order for `cycle`'s fix, until one proposes a patch the gate accepts that
/// this run has not already rejected or reverted (the deterministic fixers come first, and
/// would otherwise return the same patch every cycle). Without such a patch, the answer is the
/// first new patch the gate rejected (its reasons are the evidence), else the failure of the
/// last healer with every healer's reason, else the repeated patch (the run then ends saying so).
pub async fn ask_for_fix(
    healers: &[Box<dyn Healer>],
    spec: &HealRunSpec,
    status: &HealRunStatus,
    cycle: u32,
    timeout_seconds: u32,
    workspace: Workspace<'_>,
) -> CycleAnswer {
    let observation = latest_observation(status);
    let reports = observation.map(|o| o.bug_reports.clone()).unwrap_or_default();
    let request = HealRequest::build(
        RequestInputs {
            project: workspace.project,
            cycle,
            reports: &reports,
            files: workspace.files,
            secrets: workspace.secrets,
            exit_code: observation.and_then(|o| o.envelope.exit_code).unwrap_or(-1),
            error_message: observation
                .and_then(|o| o.envelope.error_message.as_deref())
                .unwrap_or_default(),
            log: workspace.log,
            stderr: workspace.stderr,
            task: workspace.task,
            history: history(status),
            timeout: Duration::from_secs(u64::from(timeout_seconds)),
            allowed_paths: spec.policy.allowed_paths.clone(),
        },
        &|path, limit| workspace.read(path, limit),
    );
    let spent = spent_patches(status);
    let mut rejected: Option<CycleAnswer> = None;
    let mut repeated: Option<CycleAnswer> = None;
    let mut failures: Vec<String> = Vec::new();
    let mut last_failure: Option<CycleAnswer> = None;
    for healer in healers {
        let answer = answer_of(healer.as_ref(), &request, spec, &reports, timeout_seconds, &workspace).await;
        match &answer.patch {
            Some(p) if spent.contains_key(&p.digest) => {
                repeated.get_or_insert(answer);
            }
            Some(p) if p.gate.accepted => return answer,
            Some(_) => {
                rejected.get_or_insert(answer);
            }
            None => {
                failures.push(format!(
                    "{}: {}",
                    answer.call.healer,
                    answer.call.reason.clone().unwrap_or_default()
                ));
                last_failure = Some(answer);
            }
        }
    }
    if let Some(answer) = rejected {
        return answer;
    }
    if let Some(mut answer) = last_failure {
        answer.call.reason = Some(failures.join("; "));
        return answer;
    }
    repeated.unwrap_or_else(|| no_healer("no healer is configured".into(), timeout_seconds))
}

/// The answer of a cycle whose healers could not be set up (`reason` says why): it costs the
/// cycle and says so, as a healer that is down does.
pub fn no_healer(reason: String, timeout_seconds: u32) -> CycleAnswer {
    CycleAnswer {
        call: HealerCall {
            healer: "none".into(),
            deterministic: false,
            outcome: HealerOutcome::Error,
            reason: Some(reason),
            duration_ms: 0,
            timeout_seconds,
            changes_summary: None,
        },
        patch: None,
        diff: String::new(),
    }
}

/// One healer's answer to `request`, turned into the patch and the gate's verdict.
async fn answer_of(
    healer: &dyn Healer,
    request: &HealRequest,
    spec: &HealRunSpec,
    reports: &[BugReport],
    timeout_seconds: u32,
    workspace: &Workspace<'_>,
) -> CycleAnswer {
    let response = healer.heal(request).await;
    let call = HealerCall {
        healer: response.answered_by.unwrap_or(healer.name()).to_owned(),
        deterministic: healer.deterministic(),
        outcome: response.outcome,
        reason: response.reason.clone(),
        duration_ms: response.duration.as_millis() as u64,
        timeout_seconds,
        changes_summary: response.changes_summary.clone(),
    };
    if response.outcome != HealerOutcome::Healed {
        return CycleAnswer {
            call,
            patch: None,
            diff: String::new(),
        };
    }
    let before: BTreeMap<String, String> = response
        .modified_files
        .keys()
        .filter_map(|p| workspace.read(p, files::MAX_REPORTED_FILE).map(|c| (p.clone(), c)))
        .collect();
    let after = match unredact(&before, &response.modified_files, workspace.secrets) {
        Ok(after) => after,
        Err(path) => {
            let call = HealerCall {
                outcome: HealerOutcome::Error,
                reason: Some(format!(
                    "the fix changes a line of {path} that held a redacted secret; kubeheal does not write [REDACTED] placeholders into code"
                )),
                ..call
            };
            return CycleAnswer {
                call,
                patch: None,
                diff: String::new(),
            };
        }
    };
    let after = &after;
    let diff = patch::unified_diff(&before, after);
    let patch = PatchStatus {
        digest: patch::digest(&diff),
        files: gate::changes(&before, after),
        confidence: response.confidence.clamp(0.0, 1.0),
        gate: gate::check(&spec.policy, response.confidence, reports, &before, after),
        commit: None,
        reverted_by: None,
        approved_by: None,
    };
    CycleAnswer {
        call,
        patch: Some(patch),
        diff,
    }
}

/// The healer saw redacted files: a line it left as it was comes back with its placeholder, and
/// is given back its original text. A placeholder on a line the healer changed is an error (the
/// path is returned): writing it would destroy the secret's real value.
fn unredact(
    before: &BTreeMap<String, String>,
    after: &BTreeMap<String, String>,
    secrets: &[String],
) -> Result<BTreeMap<String, String>, String> {
    let mut restored = BTreeMap::new();
    for (path, content) in after {
        if !content.contains("[REDACTED:") {
            restored.insert(path.clone(), content.clone());
            continue;
        }
        let original = before.get(path).map(String::as_str).unwrap_or_default();
        let originals: BTreeMap<String, &str> = original
            .split_inclusive('\n')
            .map(|line| (redact(line, secrets).0, line))
            .collect();
        let mut text = String::with_capacity(content.len());
        for line in content.split_inclusive('\n') {
            match originals.get(line) {
                Some(original) if line.contains("[REDACTED:") => text.push_str(original),
                _ if line.contains("[REDACTED:") && !original.contains(line) => return Err(path.clone()),
                _ => text.push_str(line),
            }
        }
        restored.insert(path.clone(), text);
    }
    Ok(restored)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_the_healer_kept_get_their_secret_back_and_changed_ones_are_refused() {
        let before = BTreeMap::from([(
            "app.py".to_owned(),
            "KEY = 'ghp_abcdefghijklmnopqrstuvwxyz0123456789AB'\ndef f()\n    return KEY\n".to_owned(),
        )]);
        let seen = redact(&before["app.py"], &[]).0;
        assert!(seen.contains("[REDACTED:"), "{seen}");
        let fixed = seen.replace("def f()", "def f():");
        let after = unredact(&before, &BTreeMap::from([("app.py".to_owned(), fixed)]), &[]).unwrap();
        assert_eq!(
            after["app.py"],
            "KEY = 'ghp_abcdefghijklmnopqrstuvwxyz0123456789AB'\ndef f():\n    return KEY\n"
        );
        let changed = seen.replace("KEY = ", "TOKEN = ");
        assert_eq!(
            unredact(&before, &BTreeMap::from([("app.py".to_owned(), changed)]), &[]),
            Err("app.py".to_owned())
        );
    }
}
