//! The CodeFixDDS work orders a HealRun writes (seed 002): an approval request carrying the
//! concrete patch of one cycle and its digest, and — when the loop ends without a fix — a
//! proposal for people, with the constraints inherited (never looser), the error context
//! sanitised, and one per HealRun (the name is deterministic, so a retry finds it).

use k8s_openapi::jiff::Timestamp;
use sha2::{Digest, Sha256};

use crate::api::code_fix_dds::{
    CodeFixDDS, CodeFixDDSSpec, ErrorContext, FixConstraints, FixProposal, SourceKind, SourceRef,
};
use crate::api::heal_run::{HealRunSpec, HealRunStatus};
use crate::core::format::render;
use crate::core::heal_run::latest_observation;
use crate::parse::truncate_bytes;

/// Seed 002's hard limit on files for a `code_fix`.
const MAX_FILES: u32 = 3;
/// Most bytes of a patch a CodeFixDDS carries.
pub const MAX_PATCH: usize = 256 * 1024;

/// The HealRun a work order comes from.
pub struct Origin<'a> {
    pub name: &'a str,
    pub spec: &'a HealRunSpec,
    pub status: &'a HealRunStatus,
    pub now: Timestamp,
}

impl Origin<'_> {
    /// The id seed 002's `source_dds` names: the HealRun, as `HealRun/<name>`.
    pub fn source_dds(&self) -> String {
        format!("HealRun/{}", self.name)
    }

    fn project(&self) -> String {
        let url = self.spec.source.url.trim_end_matches('/');
        let last = url.rsplit(['/', ':']).next().unwrap_or(url);
        let name = last.trim_end_matches(".git");
        if name.is_empty() {
            self.name.to_owned()
        } else {
            name.to_owned()
        }
    }
}

/// The name of the CodeFixDDS that asks for approval of `cycle`'s patch.
pub fn approval_request_name(run: &str, cycle: u32) -> String {
    format!("{}-c{cycle}", truncate_bytes(run, 240).trim_end_matches('-'))
}

/// The name of the CodeFixDDS proposed when the run ended without a fix.
pub fn proposal_name(run: &str) -> String {
    format!("{}-fix", truncate_bytes(run, 240).trim_end_matches('-'))
}

/// `DDS-FIX-YYYYMMDD-NNN`: the day, and a number derived from `seed` (the object's name), so
/// that a retried creation carries the same id.
pub fn fix_id(now: Timestamp, seed: &str) -> String {
    let day = now.strftime("%Y%m%d").to_string();
    let hash = Sha256::digest(seed.as_bytes());
    let number = u32::from_be_bytes([hash[0], hash[1], hash[2], hash[3]]) % 1000;
    format!("DDS-FIX-{day}-{number:03}")
}

/// Seed 002's sanitisation: the first 500 characters, NUL removed, carriage returns as newlines.
pub fn sanitize(message: &str) -> String {
    let cut: String = message.chars().take(500).collect();
    cut.replace('\0', "").replace('\r', "\n")
}

/// The CodeFixDDS asking a human to approve `cycle`'s patch (`patch` is its unified diff).
pub fn approval_request(origin: &Origin<'_>, cycle: u32, patch: &str) -> Result<CodeFixDDS, String> {
    let entry = origin
        .status
        .cycles
        .iter()
        .find(|c| c.cycle == cycle)
        .ok_or_else(|| format!("cycle {cycle} has no entry"))?;
    let status = entry
        .patch
        .as_ref()
        .ok_or_else(|| format!("cycle {cycle} has no patch"))?;
    if patch.len() > MAX_PATCH {
        return Err(format!(
            "the patch of cycle {cycle} is {} bytes, more than a CodeFixDDS carries ({MAX_PATCH})",
            patch.len()
        ));
    }
    let name = approval_request_name(origin.name, cycle);
    let observation = latest_observation(origin.status);
    let mut spec = base_spec(origin, &name);
    spec.allowed_paths = status.files.iter().map(|f| f.path.clone()).collect();
    spec.instructions = vec![
        format!("Review the patch proposed in cycle {cycle} (digest {})", status.digest),
        format!(
            "Approve with: kubectl patch codefixdds {name} --type merge -p '{{\"spec\":{{\"approval\":{{\"decision\":\"Approved\",\"approvedBy\":\"<you>\",\"patchDigest\":\"{}\"}}}}}}'",
            status.digest
        ),
        "Reject with decision Rejected and a reason; the HealRun then stops".to_owned(),
    ];
    spec.proposal = Some(FixProposal {
        digest: status.digest.clone(),
        patch: patch.to_owned(),
        files: status.files.clone(),
        changes_summary: entry.healer_call.as_ref().and_then(|c| c.changes_summary.clone()),
        confidence: Some(status.confidence),
        bug_reports: observation.map(|o| o.bug_reports.clone()).unwrap_or_default(),
        failing_tests: observation.map(|o| o.failing_tests.clone()).unwrap_or_default(),
    });
    spec.source_ref = Some(SourceRef {
        kind: SourceKind::HealRun,
        name: origin.name.to_owned(),
        cycle: Some(cycle),
    });
    Ok(CodeFixDDS::new(&name, spec))
}

/// The CodeFixDDS proposing a fix for people after the loop ended without one; `None` when the
/// last execution names nothing to fix.
pub fn fix_proposal(origin: &Origin<'_>) -> Option<CodeFixDDS> {
    let observation = latest_observation(origin.status)?;
    if observation.bug_reports.is_empty() {
        return None;
    }
    let name = proposal_name(origin.name);
    let mut spec = base_spec(origin, &name);
    let mut paths: Vec<String> = Vec::new();
    for report in &observation.bug_reports {
        if !paths.contains(&report.file_path) {
            paths.push(report.file_path.clone());
        }
    }
    spec.allowed_paths = paths;
    spec.instructions = observation
        .bug_reports
        .iter()
        .take(10)
        .map(|r| format!("Analyze error: {}", render(r)))
        .chain([
            "Fix only the reported lines; do not refactor, do not add dependencies".to_owned(),
            "Verify the fix resolves the errors without breaking existing tests".to_owned(),
        ])
        .collect();
    spec.source_ref = Some(SourceRef {
        kind: SourceKind::HealRun,
        name: origin.name.to_owned(),
        cycle: None,
    });
    Some(CodeFixDDS::new(&name, spec))
}

fn base_spec(origin: &Origin<'_>, name: &str) -> CodeFixDDSSpec {
    let source_dds = origin.source_dds();
    let observation = latest_observation(origin.status);
    let first = observation.and_then(|o| o.bug_reports.first());
    let what = first
        .map(|r| format!("{:?} in {}", r.error_type, r.file_path))
        .unwrap_or_else(|| "a failing build".into());
    let error = observation
        .map(|o| {
            let reports: Vec<String> = o
                .bug_reports
                .iter()
                .take(5)
                .map(|r| format!("{}: {}", r.file_path, r.message))
                .collect();
            if reports.is_empty() {
                o.envelope.error_message.clone().unwrap_or_default()
            } else {
                reports.join("\n")
            }
        })
        .filter(|m| !m.trim().is_empty())
        .unwrap_or_else(|| "the build failed".into());
    let failed_at = observation
        .and(origin.status.finished_at.as_ref().or(origin.status.started_at.as_ref()))
        .map(|t| t.0)
        .unwrap_or(origin.now);
    let mut target = origin.spec.source.clone();
    target.revision = origin.status.source_commit.clone().or(target.revision);
    target.secret_ref = None;
    CodeFixDDSSpec {
        id: fix_id(origin.now, name),
        version: 2,
        dds_type: "code_fix".into(),
        project: origin.project(),
        goal: format!("Fix execution failure in {source_dds}: {what}"),
        instructions: Vec::new(),
        allowed_paths: Vec::new(),
        tool: "healer".into(),
        constraints: FixConstraints {
            max_files_changed: i64::from(origin.spec.policy.max_files_changed.clamp(1, MAX_FILES)),
            no_new_dependencies: true,
            no_refactor: true,
        },
        source_dds: source_dds.clone(),
        error_context: ErrorContext {
            original_dds: source_dds,
            error_message: sanitize(&error),
            failed_at: failed_at.to_string(),
        },
        source_ref: None,
        target: Some(target),
        proposal: None,
        approval: None,
        approval_deadline: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::heal_run::{
        CycleStatus, FileChange, GateVerdict, HealerCall, HealerOutcome, Observation, PatchStatus,
    };
    use crate::api::shared::{BugReport, ErrorType, RunEnvelope};
    use serde_json::json;

    fn status() -> HealRunStatus {
        let envelope: RunEnvelope =
            serde_json::from_value(json!({"runId": "demo-c0", "status": "error", "durationMs": 5}))
                .expect("an envelope");
        let observation = Observation {
            envelope,
            bug_reports: vec![BugReport {
                file_path: "app/calc.py".into(),
                line_number: 3,
                error_type: ErrorType::Syntax,
                message: "expected ':'\r\0 and more".into(),
                test_name: None,
                confidence_score: Some(1.0),
            }],
            failing_tests: vec!["test_calc.py".into()],
            tests_ran: 0,
            endpoint_calls: Vec::new(),
        };
        HealRunStatus {
            source_commit: Some("abc123".into()),
            baseline: Some(observation),
            cycles: vec![CycleStatus {
                cycle: 1,
                execution: None,
                tests: None,
                healer_call: Some(HealerCall {
                    healer: "openai".into(),
                    deterministic: false,
                    outcome: HealerOutcome::Healed,
                    reason: None,
                    duration_ms: 3,
                    timeout_seconds: 30,
                    changes_summary: Some("added the colon".into()),
                }),
                patch: Some(PatchStatus {
                    digest: format!("sha256:{}", "a".repeat(64)),
                    files: vec![FileChange {
                        path: "app/calc.py".into(),
                        added: 1,
                        removed: 1,
                    }],
                    confidence: 0.8,
                    gate: GateVerdict {
                        accepted: true,
                        reasons: Vec::new(),
                    },
                    commit: None,
                    reverted_by: None,
                    approved_by: None,
                }),
                approval_request: None,
            }],
            ..HealRunStatus::default()
        }
    }

    fn spec() -> HealRunSpec {
        serde_json::from_value(
            json!({"source": {"url": "https://git.example.com/acme/payments-api.git", "secretRef": {"name": "git"}},
                                      "policy": {"maxFilesChanged": 10}}),
        )
        .expect("a spec")
    }

    #[test]
    fn an_approval_request_carries_the_patch_its_digest_and_inherited_constraints() {
        let (spec, status) = (spec(), status());
        let origin = Origin {
            name: "demo",
            spec: &spec,
            status: &status,
            now: Timestamp::from_second(1_790_000_000).expect("t"),
        };
        let cfd = approval_request(&origin, 1, "diff --git a/app/calc.py b/app/calc.py\n").expect("a request");
        assert_eq!(cfd.metadata.name.as_deref(), Some("demo-c1"));
        let s = &cfd.spec;
        assert!(
            regex::Regex::new(r"^DDS-FIX-\d{8}-\d{3}$").expect("re").is_match(&s.id),
            "{}",
            s.id
        );
        assert_eq!(s.project, "payments-api");
        assert!(s.goal.contains(&s.source_dds));
        assert_eq!(s.error_context.original_dds, s.source_dds);
        assert_eq!(s.constraints.max_files_changed, 3, "never looser than seed 002's limit");
        assert_eq!(s.allowed_paths, vec!["app/calc.py"]);
        let proposal = s.proposal.as_ref().expect("a proposal");
        assert_eq!(proposal.digest, format!("sha256:{}", "a".repeat(64)));
        assert_eq!(proposal.changes_summary.as_deref(), Some("added the colon"));
        assert!(!s.error_context.error_message.contains(['\r', '\0']));
        let target = s.target.as_ref().expect("a target");
        assert_eq!(target.revision.as_deref(), Some("abc123"));
        assert!(
            target.secret_ref.is_none(),
            "the work order does not hand out the run's credentials"
        );
        assert!(s.approval.is_none());
        // The same run and cycle give the same id (a retried creation is the same work order).
        assert_eq!(approval_request(&origin, 1, "x").expect("again").spec.id, s.id);
    }

    #[test]
    fn a_fix_proposal_is_scoped_to_the_reported_files_and_is_one_per_run() {
        let (spec, status) = (spec(), status());
        let origin = Origin {
            name: "demo",
            spec: &spec,
            status: &status,
            now: Timestamp::from_second(1_790_000_000).expect("t"),
        };
        let cfd = fix_proposal(&origin).expect("a proposal");
        assert_eq!(cfd.metadata.name.as_deref(), Some("demo-fix"));
        assert_eq!(cfd.spec.allowed_paths, vec!["app/calc.py"]);
        assert!(cfd.spec.instructions[0].starts_with("Analyze error: SYNTAX error in app/calc.py line 3"));
        assert!(cfd.spec.proposal.is_none());
    }

    #[test]
    fn sanitising_keeps_500_characters_and_removes_nul_and_carriage_returns() {
        let long = format!("a\r\0b{}", "x".repeat(1000));
        let clean = sanitize(&long);
        assert!(clean.starts_with("a\nb"));
        assert!(clean.chars().count() <= 500);
    }
}
