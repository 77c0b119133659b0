//! One cycle's call to the healer, the same for both drivers: the request from the newest
//! observation and the history of earlier cycles, the call within the cycle's timeout, and the
//! answer turned into the patch (diff, digest, changed lines) with the gate's verdict on it.

use std::collections::BTreeMap;
use std::time::Duration;

use super::{HealRequest, Healer, RequestInputs};
use crate::api::heal_run::{HealRunSpec, HealRunStatus, HealerCall, HealerOutcome, PatchStatus};
use crate::core::heal_run::{history, latest_observation};
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
    /// A file's content by repository-relative path.
    pub read: &'a (dyn Fn(&str) -> Option<String> + Sync),
}

/// Asks `healer` for `cycle`'s fix.
pub async fn ask_for_fix(
    healer: &dyn Healer,
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
            exit_code: observation.and_then(|o| o.envelope.exit_code).unwrap_or(-1),
            error_message: observation
                .and_then(|o| o.envelope.error_message.as_deref())
                .unwrap_or_default(),
            log: workspace.log,
            history: history(status),
            timeout: Duration::from_secs(u64::from(timeout_seconds)),
            allowed_paths: spec.policy.allowed_paths.clone(),
        },
        workspace.read,
    );
    let response = healer.heal(&request).await;
    let call = HealerCall {
        healer: response.answered_by.unwrap_or(healer.name()).to_owned(),
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
    let after = &response.modified_files;
    let before: BTreeMap<String, String> = after
        .keys()
        .filter_map(|p| (workspace.read)(p).map(|c| (p.clone(), c)))
        .collect();
    let diff = patch::unified_diff(&before, after);
    let patch = PatchStatus {
        digest: patch::digest(&diff),
        files: gate::changes(&before, after),
        confidence: response.confidence.clamp(0.0, 1.0),
        gate: gate::check(&spec.policy, response.confidence, &reports, &before, after),
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
