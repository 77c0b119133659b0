//! Every phase and terminal reason of a HealRun, reached through `apply` and `next_action` alone.

use k8s_openapi::jiff::Timestamp;
use serde_json::json;

use super::*;
use crate::api::heal_run::{FileChange, GateVerdict, HealRunSpec, ProjectType};
use crate::api::shared::{BugReport, ErrorClass, ErrorType, RunEnvelope, RunStatus};

const COMMIT: &str = "0123456789abcdef0123456789abcdef01234567";
const DIGEST: &str = "sha256:1111111111111111111111111111111111111111111111111111111111111111";

fn spec(extra: serde_json::Value) -> HealRunSpec {
    let mut value = json!({"source": {"url": "file:///repo.git"}});
    if let (Some(target), Some(extra)) = (value.as_object_mut(), extra.as_object()) {
        for (k, v) in extra {
            target.insert(k.clone(), v.clone());
        }
    }
    serde_json::from_value(value).expect("a spec")
}

fn at(seconds: i64) -> Timestamp {
    Timestamp::from_second(1_800_000_000 + seconds).expect("a time")
}

fn observation(failing: &[&str], reports: usize, ran: u32) -> Observation {
    Observation {
        envelope: RunEnvelope {
            run_id: "job".into(),
            endpoint: None,
            http_status: 200,
            content_type: "text/plain".into(),
            json: None,
            text_preview: None,
            status: if failing.is_empty() {
                RunStatus::Success
            } else {
                RunStatus::Error
            },
            duration_ms: 10,
            exit_code: Some(if failing.is_empty() { 0 } else { 1 }),
            error_class: None,
            error_message: None,
            suggested_fix: None,
            warnings: Vec::new(),
            redactions_applied: false,
            artifacts: Vec::new(),
            log_excerpt: None,
            environment_metadata: Default::default(),
        },
        bug_reports: (0..reports)
            .map(|i| BugReport {
                file_path: "app/calc.py".into(),
                line_number: 3 + i as u32,
                error_type: ErrorType::Logic,
                message: "assert 1 == 2".into(),
                test_name: None,
                confidence_score: Some(0.9),
            })
            .collect(),
        failing_tests: failing.iter().map(|s| s.to_string()).collect(),
        tests_ran: ran,
        endpoint_calls: Vec::new(),
    }
}

fn call(healer: &str, outcome: HealerOutcome) -> HealerCall {
    HealerCall {
        healer: healer.into(),
        deterministic: healer == "builtin",
        outcome,
        reason: (outcome != HealerOutcome::Healed).then(|| "connection refused".into()),
        duration_ms: 5,
        timeout_seconds: 30,
        changes_summary: None,
    }
}

fn patch(accepted: bool) -> PatchStatus {
    PatchStatus {
        digest: DIGEST.into(),
        files: vec![FileChange {
            path: "app/calc.py".into(),
            added: 1,
            removed: 1,
        }],
        confidence: 0.9,
        gate: GateVerdict {
            accepted,
            reasons: if accepted {
                Vec::new()
            } else {
                vec!["app/calc.py is protected".into()]
            },
        },
        commit: None,
        reverted_by: None,
        approved_by: None,
    }
}

/// Applies `inputs` in order from an empty status, each at `at(i)`; returns the status and every
/// note.
fn run(spec: &HealRunSpec, inputs: Vec<Input>) -> (HealRunStatus, Vec<Note>) {
    let mut status = HealRunStatus::default();
    let mut notes = Vec::new();
    for (i, input) in inputs.into_iter().enumerate() {
        let (next, mut n) = apply(spec, &status, input, at(i as i64));
        status = next;
        notes.append(&mut n);
    }
    (status, notes)
}

fn resolved() -> Input {
    Input::SourceResolved {
        commit: COMMIT.into(),
        project_type: ProjectType::Python,
        work_order: None,
    }
}

fn executed(cycle: u32, observation: Observation, outcome: Outcome) -> Input {
    Input::Executed {
        cycle,
        observation,
        outcome,
    }
}

fn baseline_failing() -> Input {
    executed(0, observation(&["t::a", "t::b"], 2, 5), Outcome::Failed)
}

fn answered(cycle: u32, healer: &str, patch: Option<PatchStatus>) -> Input {
    let outcome = if patch.is_some() {
        HealerOutcome::Healed
    } else {
        HealerOutcome::Error
    };
    Input::HealerAnswered {
        cycle,
        call: call(healer, outcome),
        patch,
    }
}

fn committed(cycle: u32) -> Input {
    Input::Committed {
        cycle,
        commit: format!("c0ffee{cycle:034}"),
        branch: "kubeheal/demo".into(),
        diff_stat: "1 file changed, 1 insertion(+), 1 deletion(-)".into(),
    }
}

fn condition<'a>(status: &'a HealRunStatus, kind: &str) -> &'a Condition {
    status
        .conditions
        .iter()
        .find(|c| c.type_ == kind)
        .expect("the condition")
}

fn ended(status: &HealRunStatus) -> (Option<HealRunPhase>, Option<HealRunReason>) {
    (status.phase, status.reason)
}

#[test]
fn a_new_run_is_pending_until_its_source_commit_is_resolved() {
    let spec = spec(json!({}));
    let (status, _) = run(&spec, vec![Input::Tick]);
    assert_eq!(status.phase, Some(HealRunPhase::Pending));
    assert_eq!(next_action(&spec, &status), Action::ResolveSource);
    assert_eq!(condition(&status, "Reconciling").status, "True");
    assert_eq!(condition(&status, "Ready").status, "False");
}

#[test]
fn a_source_that_cannot_be_used_fails_the_run_with_what_to_fix_and_nothing_more_is_done() {
    let spec = spec(json!({}));
    let message = "the revision v9 is neither a branch, a tag nor a commit; fix spec.source.revision";
    let (status, notes) = run(
        &spec,
        vec![Input::SourceUnavailable {
            message: message.into(),
        }],
    );
    assert_eq!(
        ended(&status),
        (Some(HealRunPhase::Failed), Some(HealRunReason::SourceUnavailable))
    );
    assert_eq!(status.message.as_deref(), Some(message));
    assert_eq!(next_action(&spec, &status), Action::Done);
    assert!(notes.iter().any(|n| n.reason == "SourceUnavailable" && n.warning));
}

#[test]
fn a_resolved_run_is_running_and_executes_the_baseline_first() {
    let spec = spec(json!({}));
    let (status, notes) = run(&spec, vec![resolved()]);
    assert_eq!(status.phase, Some(HealRunPhase::Running));
    assert_eq!(status.source_commit.as_deref(), Some(COMMIT));
    assert_eq!(status.started_at, Some(Time(at(0))));
    assert_eq!(next_action(&spec, &status), Action::Execute { cycle: 0 });
    assert_eq!(notes[0].reason, "Started");
}

#[test]
fn a_baseline_that_passes_ends_healed_without_asking_the_healer() {
    let spec = spec(json!({}));
    let (status, notes) = run(
        &spec,
        vec![resolved(), executed(0, observation(&[], 0, 5), Outcome::Passed)],
    );
    assert_eq!(
        ended(&status),
        (Some(HealRunPhase::Healed), Some(HealRunReason::Healed))
    );
    assert_eq!(status.healer_calls, 0);
    assert_eq!(next_action(&spec, &status), Action::Done);
    assert_eq!(condition(&status, "Ready").status, "True");
    assert_eq!(condition(&status, "Reconciling").status, "False");
    assert!(notes.iter().any(|n| n.reason == "Healed" && !n.warning));
}

#[test]
fn a_passing_baseline_with_an_incident_asks_for_a_fix_and_heals_once_one_is_committed() {
    let spec = spec(json!({"policy": {"approval": "Automatic"},
                           "incident": {"error": "KeyError: 'resolution'", "ticket": "ht-1"}}));
    // The incident's frames are reports of the baseline (the driver adds them): not healed.
    let (status, _) = run(
        &spec,
        vec![resolved(), executed(0, observation(&[], 1, 5), Outcome::Passed)],
    );
    assert_eq!(status.phase, Some(HealRunPhase::Running));
    assert!(matches!(
        next_action(&spec, &status),
        Action::AskHealer { cycle: 1, .. }
    ));
    let (status, _) = apply(&spec, &status, answered(1, "code-healer-api", Some(patch(true))), at(5));
    let (status, _) = apply(&spec, &status, committed(1), at(6));
    let (status, _) = apply(
        &spec,
        &status,
        executed(1, observation(&[], 0, 5), Outcome::Passed),
        at(7),
    );
    assert_eq!(
        ended(&status),
        (Some(HealRunPhase::Healed), Some(HealRunReason::Healed))
    );
    // An incident whose trace names no file of the repository gives no report: the run fails
    // saying so, rather than claiming a heal nobody made.
    let (status, _) = run(
        &spec,
        vec![resolved(), executed(0, observation(&[], 0, 5), Outcome::Passed)],
    );
    assert_eq!(
        ended(&status),
        (Some(HealRunPhase::Failed), Some(HealRunReason::Undiagnosed))
    );
    assert!(
        status
            .message
            .as_deref()
            .unwrap_or_default()
            .contains("names no file of the repository")
    );
}

#[test]
fn a_failing_baseline_asks_the_healer_with_the_first_cycle_timeout() {
    let spec = spec(json!({"cycleTimeouts": [7, 9]}));
    let (status, _) = run(&spec, vec![resolved(), baseline_failing()]);
    assert_eq!(status.phase, Some(HealRunPhase::Running));
    assert_eq!(
        next_action(&spec, &status),
        Action::AskHealer {
            cycle: 1,
            timeout_seconds: 7
        }
    );
}

#[test]
fn an_accepted_automatic_fix_is_committed_then_verified_and_the_run_heals() {
    let spec = spec(json!({"policy": {"approval": "Automatic"}}));
    let (status, _) = run(
        &spec,
        vec![
            resolved(),
            baseline_failing(),
            answered(1, "code-healer-api", Some(patch(true))),
        ],
    );
    assert_eq!(next_action(&spec, &status), Action::Commit { cycle: 1 });
    let (status, _) = apply(&spec, &status, committed(1), at(10));
    assert_eq!(next_action(&spec, &status), Action::Execute { cycle: 1 });
    assert_eq!(applied_cycles(&status, 1), vec![1]);
    let (status, _) = apply(
        &spec,
        &status,
        executed(1, observation(&[], 0, 5), Outcome::Passed),
        at(20),
    );
    assert_eq!(
        ended(&status),
        (Some(HealRunPhase::Healed), Some(HealRunReason::Healed))
    );
    let result = status.result.clone().expect("a result");
    assert_eq!(result.branch.as_deref(), Some("kubeheal/demo"));
    assert_eq!(result.fixed_tests, vec!["t::a", "t::b"]);
    assert_eq!(
        status.cycles[0].tests.as_ref().expect("a diff").fixed,
        vec!["t::a", "t::b"]
    );
    assert_eq!(status.finished_at, Some(Time(at(20))));
}

#[test]
fn a_manual_policy_waits_for_approval_and_goes_on_when_the_digest_matches() {
    let spec = spec(json!({"policy": {"approval": "Manual"}}));
    let (status, _) = run(
        &spec,
        vec![
            resolved(),
            baseline_failing(),
            answered(1, "builtin", Some(patch(true))),
        ],
    );
    assert_eq!(next_action(&spec, &status), Action::RequestApproval { cycle: 1 });
    let (status, _) = apply(
        &spec,
        &status,
        Input::ApprovalRequested {
            cycle: 1,
            name: "demo-c1".into(),
        },
        at(10),
    );
    assert_eq!(status.phase, Some(HealRunPhase::AwaitingApproval));
    assert_eq!(condition(&status, "Reconciling").reason, "AwaitingApproval");
    assert_eq!(
        next_action(&spec, &status),
        Action::AwaitApproval {
            cycle: 1,
            name: "demo-c1".into()
        }
    );
    let approval = |digest: &str| Input::Decided {
        cycle: 1,
        decision: Decision {
            decision: Verdict::Approved,
            reason: None,
            approved_by: "alice".into(),
            patch_digest: Some(digest.into()),
        },
    };
    // An approval of another patch changes nothing.
    let other = format!("sha256:{}", "2".repeat(64));
    let (same, notes) = apply(&spec, &status, approval(&other), at(11));
    assert_eq!(same.phase, Some(HealRunPhase::AwaitingApproval));
    assert_eq!(notes[0].reason, "ApprovalMismatch");
    let (status, _) = apply(&spec, &status, approval(DIGEST), at(12));
    assert_eq!(status.phase, Some(HealRunPhase::Running));
    assert_eq!(
        status.cycles[0].patch.as_ref().expect("a patch").approved_by.as_deref(),
        Some("alice")
    );
    assert_eq!(next_action(&spec, &status), Action::Commit { cycle: 1 });
}

#[test]
fn tiered_approval_commits_deterministic_fixes_and_asks_for_healer_fixes() {
    let spec = spec(json!({}));
    let (builtin, _) = run(
        &spec,
        vec![
            resolved(),
            baseline_failing(),
            answered(1, "builtin", Some(patch(true))),
        ],
    );
    assert_eq!(next_action(&spec, &builtin), Action::Commit { cycle: 1 });
    let (service, _) = run(
        &spec,
        vec![resolved(), baseline_failing(), answered(1, "openai", Some(patch(true)))],
    );
    assert_eq!(next_action(&spec, &service), Action::RequestApproval { cycle: 1 });
}

#[test]
fn a_rejected_approval_fails_the_run_and_proposes_nothing() {
    let spec = spec(json!({"policy": {"approval": "Manual"}}));
    let (status, notes) = run(
        &spec,
        vec![
            resolved(),
            baseline_failing(),
            answered(1, "builtin", Some(patch(true))),
            Input::ApprovalRequested {
                cycle: 1,
                name: "demo-c1".into(),
            },
            Input::Decided {
                cycle: 1,
                decision: Decision {
                    decision: Verdict::Rejected,
                    reason: Some("wrong file".into()),
                    approved_by: "bob".into(),
                    patch_digest: None,
                },
            },
        ],
    );
    assert_eq!(
        ended(&status),
        (Some(HealRunPhase::Failed), Some(HealRunReason::Rejected))
    );
    assert!(status.message.as_deref().unwrap_or_default().contains("bob rejected"));
    assert_eq!(condition(&status, "Stalled").reason, "Rejected");
    assert!(notes.iter().any(|n| n.reason == "Rejected" && n.warning));
    assert_eq!(next_action(&spec, &status), Action::Done);
}

#[test]
fn a_fix_that_breaks_passing_tests_is_reverted_and_the_run_regresses() {
    let spec = spec(json!({"policy": {"approval": "Automatic"}}));
    let (status, _) = run(
        &spec,
        vec![
            resolved(),
            baseline_failing(),
            answered(1, "builtin", Some(patch(true))),
            committed(1),
            executed(1, observation(&["t::c"], 1, 5), Outcome::Failed),
        ],
    );
    let tests = status.cycles[0].tests.clone().expect("a diff");
    assert_eq!(tests.newly_failing, vec!["t::c"]);
    assert_eq!(next_action(&spec, &status), Action::Revert { cycle: 1 });
    let (status, notes) = apply(
        &spec,
        &status,
        Input::Reverted {
            cycle: 1,
            commit: "beef".repeat(10),
            diff_stat: String::new(),
        },
        at(30),
    );
    assert_eq!(
        ended(&status),
        (Some(HealRunPhase::Failed), Some(HealRunReason::Regressed))
    );
    assert!(status.message.as_deref().unwrap_or_default().contains("t::c"));
    assert!(notes.iter().any(|n| n.reason == "Reverted"));
    assert_eq!(applied_cycles(&status, 1), Vec::<u32>::new());
    assert_eq!(next_action(&spec, &status), Action::ProposeFix);
}

#[test]
fn with_continue_on_regression_the_next_cycle_starts_from_the_code_before_the_reverted_fix() {
    let spec = spec(json!({"policy": {"approval": "Automatic", "continueOnRegression": true}}));
    let (status, _) = run(
        &spec,
        vec![
            resolved(),
            baseline_failing(),
            answered(1, "builtin", Some(patch(true))),
            committed(1),
            executed(1, observation(&["t::c"], 1, 5), Outcome::Failed),
            Input::Reverted {
                cycle: 1,
                commit: "beef".repeat(10),
                diff_stat: String::new(),
            },
        ],
    );
    assert_eq!(status.phase, Some(HealRunPhase::Running));
    assert!(status.message.as_deref().unwrap_or_default().contains("going on"));
    assert!(matches!(
        next_action(&spec, &status),
        Action::AskHealer { cycle: 2, .. }
    ));
    // The healer is shown the run of the code as it now is: the baseline, not the reverted run.
    assert_eq!(
        latest_observation(&status).expect("one").failing_tests,
        vec!["t::a", "t::b"]
    );
    let other = PatchStatus {
        digest: DIGEST.replace('1', "2"),
        ..patch(true)
    };
    let (status, _) = apply(&spec, &status, answered(2, "builtin", Some(other)), at(40));
    let (status, _) = apply(&spec, &status, committed(2), at(41));
    assert_eq!(
        applied_cycles(&status, 2),
        vec![2],
        "the reverted fix is not applied again"
    );
    let (status, _) = apply(
        &spec,
        &status,
        executed(2, observation(&["t::b"], 1, 5), Outcome::Failed),
        at(42),
    );
    let tests = status.cycles[1].tests.clone().expect("a diff");
    assert_eq!(
        tests.fixed,
        vec!["t::a"],
        "compared with the baseline, not the reverted run"
    );
    assert!(tests.newly_failing.is_empty());
}

#[test]
fn tests_newly_visible_after_a_collection_error_are_not_a_regression() {
    let spec = spec(json!({"policy": {"approval": "Automatic"}}));
    let (status, _) = run(
        &spec,
        vec![
            resolved(),
            executed(0, observation(&["test_calc.py"], 1, 0), Outcome::Failed),
            answered(1, "builtin", Some(patch(true))),
            committed(1),
            executed(1, observation(&["test_calc.py::test_add"], 1, 3), Outcome::Failed),
        ],
    );
    assert_eq!(
        next_action(&spec, &status),
        Action::AskHealer {
            cycle: 2,
            timeout_seconds: 45
        }
    );
}

#[test]
fn an_infrastructure_failure_stops_the_run_before_any_healer_call() {
    let spec = spec(json!({}));
    let (status, notes) = run(
        &spec,
        vec![
            resolved(),
            executed(
                0,
                observation(&[], 0, 0),
                Outcome::Infrastructure {
                    message: "OOMKilled".into(),
                },
            ),
        ],
    );
    assert_eq!(
        ended(&status),
        (Some(HealRunPhase::Failed), Some(HealRunReason::InfraFailure))
    );
    assert_eq!(status.healer_calls, 0);
    assert!(notes.iter().any(|n| n.reason == "InfraFailure" && n.warning));
    assert_eq!(
        next_action(&spec, &status),
        Action::Done,
        "no proposal for an infrastructure failure"
    );
}

#[test]
fn a_healer_that_is_never_reachable_ends_the_run_as_healer_unavailable() {
    let spec = spec(json!({"maxCycles": 2}));
    let unreachable = |cycle| Input::HealerAnswered {
        cycle,
        call: call("code-healer-api", HealerOutcome::Unreachable),
        patch: None,
    };
    let (status, _) = run(
        &spec,
        vec![resolved(), baseline_failing(), unreachable(1), unreachable(2)],
    );
    assert_eq!(
        ended(&status),
        (Some(HealRunPhase::Failed), Some(HealRunReason::HealerUnavailable))
    );
    assert_eq!(status.healer_calls, 2);
    assert_eq!(next_action(&spec, &status), Action::ProposeFix);
}

#[test]
fn a_healer_error_costs_its_cycle_and_the_next_cycle_asks_again() {
    let spec = spec(json!({"maxCycles": 3}));
    let (status, notes) = run(&spec, vec![resolved(), baseline_failing(), answered(1, "openai", None)]);
    assert!(notes.iter().any(|n| n.reason == "HealerFailed" && n.warning));
    assert_eq!(
        next_action(&spec, &status),
        Action::AskHealer {
            cycle: 2,
            timeout_seconds: 45
        }
    );
}

#[test]
fn a_gate_that_rejects_every_fix_ends_the_run_as_gate_rejected() {
    let spec = spec(json!({"maxCycles": 2}));
    let (status, notes) = run(
        &spec,
        vec![
            resolved(),
            baseline_failing(),
            answered(1, "builtin", Some(patch(false))),
            answered(2, "builtin", Some(patch(false))),
        ],
    );
    assert_eq!(
        ended(&status),
        (Some(HealRunPhase::Failed), Some(HealRunReason::GateRejected))
    );
    assert_eq!(notes.iter().filter(|n| n.reason == "GateRejected").count(), 3);
}

#[test]
fn a_patch_that_does_not_apply_costs_its_cycle_and_the_next_cycle_asks_again() {
    let spec = spec(json!({"maxCycles": 2, "policy": {"approval": "Automatic"}}));
    let (status, notes) = run(
        &spec,
        vec![
            resolved(),
            baseline_failing(),
            answered(1, "builtin", Some(patch(true))),
            Input::CommitFailed {
                cycle: 1,
                reason: "error: app/calc.py: patch does not apply".into(),
            },
        ],
    );
    assert_eq!(status.phase, Some(HealRunPhase::Running));
    let gate = &status.cycles[0].patch.as_ref().expect("a patch").gate;
    assert!(!gate.accepted);
    assert!(gate.reasons[0].contains("does not apply"), "{gate:?}");
    assert!(matches!(
        next_action(&spec, &status),
        Action::AskHealer { cycle: 2, .. }
    ));
    assert!(notes.iter().any(|n| n.reason == "PatchNotApplied" && n.warning));
}

#[test]
fn a_healer_that_repeats_a_rejected_patch_is_asked_at_most_twice() {
    let spec = spec(json!({"maxCycles": 5}));
    let (status, notes) = run(
        &spec,
        vec![
            resolved(),
            baseline_failing(),
            answered(1, "builtin", Some(patch(false))),
            answered(2, "builtin", Some(patch(false))),
        ],
    );
    assert_eq!(
        ended(&status),
        (Some(HealRunPhase::Failed), Some(HealRunReason::GateRejected))
    );
    assert_eq!(status.healer_calls, 2);
    assert!(
        status
            .message
            .as_deref()
            .unwrap_or_default()
            .contains("same patch as cycle 1"),
        "{:?}",
        status.message
    );
    assert_eq!(next_action(&spec, &status), Action::ProposeFix);
    assert!(notes.iter().any(|n| n.reason == "GateRejected" && n.warning));
}

#[test]
fn fixes_that_do_not_make_the_build_green_exhaust_the_cycles() {
    let spec = spec(json!({"maxCycles": 1, "policy": {"approval": "Automatic"}}));
    let (status, _) = run(
        &spec,
        vec![
            resolved(),
            baseline_failing(),
            answered(1, "builtin", Some(patch(true))),
            committed(1),
            executed(1, observation(&["t::a"], 1, 5), Outcome::Failed),
        ],
    );
    assert_eq!(
        ended(&status),
        (Some(HealRunPhase::Failed), Some(HealRunReason::CyclesExhausted))
    );
    assert_eq!(status.result.as_ref().expect("a result").fixed_tests, vec!["t::b"]);
    let (status, notes) = apply(
        &spec,
        &status,
        Input::FixProposed {
            name: "demo-fix".into(),
        },
        at(40),
    );
    assert_eq!(status.proposed_fix.as_deref(), Some("demo-fix"));
    assert_eq!(notes[0].reason, "FixProposed");
    assert_eq!(next_action(&spec, &status), Action::Done);
}

#[test]
fn the_healer_call_budget_stops_the_run_before_the_next_call() {
    let spec = spec(json!({"budget": {"maxHealerCalls": 1}}));
    let (status, _) = run(&spec, vec![resolved(), baseline_failing(), answered(1, "openai", None)]);
    assert_eq!(
        ended(&status),
        (Some(HealRunPhase::Failed), Some(HealRunReason::BudgetExceeded))
    );
}

#[test]
fn the_duration_budget_stops_the_run_on_the_next_tick() {
    let spec = spec(json!({"budget": {"maxDurationSeconds": 60}}));
    let (status, _) = run(&spec, vec![resolved(), baseline_failing()]);
    let (early, _) = apply(&spec, &status, Input::Tick, at(59));
    assert_eq!(early.phase, Some(HealRunPhase::Running));
    let (late, notes) = apply(&spec, &status, Input::Tick, at(60));
    assert_eq!(
        ended(&late),
        (Some(HealRunPhase::Failed), Some(HealRunReason::BudgetExceeded))
    );
    assert!(notes[0].message.contains("60 s"));
}

#[test]
fn a_failing_build_whose_log_names_no_file_is_undiagnosed() {
    let spec = spec(json!({}));
    let (status, _) = run(
        &spec,
        vec![resolved(), executed(0, observation(&["t::a"], 0, 3), Outcome::Failed)],
    );
    assert_eq!(
        ended(&status),
        (Some(HealRunPhase::Failed), Some(HealRunReason::Undiagnosed))
    );
    assert_eq!(status.healer_calls, 0);
    assert_eq!(next_action(&spec, &status), Action::Done);
    assert!(
        status
            .message
            .as_deref()
            .unwrap_or_default()
            .contains("see the log excerpt")
    );
    // Stopped at its time limit with nothing placed: the message says so, and what to change.
    let mut timed_out = observation(&[], 0, 0);
    timed_out.envelope.status = RunStatus::Timeout;
    timed_out.envelope.error_class = Some(ErrorClass::Timeout);
    timed_out.envelope.error_message = Some("the build ran longer than its 2 s limit and was stopped".into());
    timed_out.envelope.suggested_fix = Some("raise the time limit".into());
    let (status, _) = run(&spec, vec![resolved(), executed(0, timed_out, Outcome::Failed)]);
    assert_eq!(
        ended(&status),
        (Some(HealRunPhase::Failed), Some(HealRunReason::Undiagnosed))
    );
    let message = status.message.as_deref().unwrap_or_default();
    assert!(
        message.contains("2 s limit") && message.contains("raise the time limit"),
        "{message}"
    );
}

#[test]
fn cancel_ends_the_run_and_keeps_its_commits() {
    let mut spec = spec(json!({"policy": {"approval": "Automatic"}}));
    let (status, _) = run(
        &spec,
        vec![
            resolved(),
            baseline_failing(),
            answered(1, "builtin", Some(patch(true))),
            committed(1),
        ],
    );
    spec.cancel = true;
    let (status, notes) = apply(&spec, &status, Input::Tick, at(50));
    assert_eq!(
        ended(&status),
        (Some(HealRunPhase::Cancelled), Some(HealRunReason::Cancelled))
    );
    assert!(status.result.as_ref().expect("a result").commit.is_some());
    assert_eq!(notes[0].reason, "Cancelled");
    assert_eq!(next_action(&spec, &status), Action::Done);
}

#[test]
fn suspend_pauses_between_steps_and_resuming_continues_where_it_stopped() {
    let mut spec = spec(json!({}));
    let (status, _) = run(&spec, vec![resolved(), baseline_failing()]);
    spec.suspend = true;
    let (paused, _) = apply(&spec, &status, Input::Tick, at(5));
    assert_eq!(next_action(&spec, &paused), Action::Suspended);
    assert_eq!(condition(&paused, "Reconciling").reason, "Suspended");
    spec.suspend = false;
    let (resumed, _) = apply(&spec, &paused, Input::Tick, at(6));
    assert!(matches!(
        next_action(&spec, &resumed),
        Action::AskHealer { cycle: 1, .. }
    ));
}

#[test]
fn a_repeated_or_stale_observation_changes_nothing() {
    let spec = spec(json!({}));
    let (status, _) = run(&spec, vec![resolved(), baseline_failing()]);
    let (again, notes) = apply(&spec, &status, baseline_failing(), at(2));
    assert_eq!(again, status);
    assert!(notes.is_empty());
    let (wrong_cycle, _) = apply(&spec, &status, answered(3, "builtin", None), at(2));
    assert_eq!(wrong_cycle, status);
}

#[test]
fn a_condition_keeps_its_transition_time_while_its_status_stays() {
    let spec = spec(json!({}));
    let (first, _) = run(&spec, vec![resolved()]);
    let (second, _) = apply(&spec, &first, baseline_failing(), at(100));
    let time = |s: &HealRunStatus| condition(s, "Reconciling").last_transition_time.clone();
    assert_eq!(time(&first), time(&second));
    let (healed, _) = apply(&spec, &second, answered(1, "builtin", Some(patch(true))), at(101));
    let (healed, _) = apply(&spec, &healed, committed(1), at(102));
    let (healed, _) = apply(
        &spec,
        &healed,
        executed(1, observation(&[], 0, 5), Outcome::Passed),
        at(103),
    );
    assert_eq!(time(&healed), Time(at(103)));
}

#[test]
fn once_the_source_is_resolved_the_message_no_longer_says_it_waits_for_it() {
    let spec = spec(json!({}));
    let (status, _) = run(&spec, vec![Input::Tick, resolved()]);
    let message = status.message.clone().unwrap_or_default();
    assert!(
        message.starts_with("healing file:///repo.git at commit 0123456789ab"),
        "{message}"
    );
    let ready = status.conditions.iter().find(|c| c.type_ == "Ready").expect("Ready");
    assert_eq!(ready.message, message);
}
