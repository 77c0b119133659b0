//! The CodeFixDDS decisions on seed 002's own example pair (`examples/seed-002/`), and each rule
//! broken on its own.

use super::*;
use crate::api::code_fix_dds::{CodeFixDDS, SourceRef};
use crate::api::heal_run::{CycleStatus, GateVerdict, HealResult, HealRun, PatchStatus};
use crate::api::shared::Decision as Verdict2;

fn example<K: serde::de::DeserializeOwned>(file: &str) -> K {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("examples/seed-002")
        .join(file);
    serde_yaml_ng::from_str(&std::fs::read_to_string(&path).expect("the example")).expect("an object")
}

fn at(second: i64) -> Timestamp {
    Timestamp::from_second(1_790_000_000 + second).expect("a time")
}

struct World {
    order: CodeFixDDS,
    run: HealRun,
    status: CodeFixDDSStatus,
}

impl World {
    /// Seed 002's pair, the source run failed.
    fn seed() -> World {
        let mut run: HealRun = example("healrun.yaml");
        run.status = Some(HealRunStatus {
            phase: Some(HealRunPhase::Failed),
            ..HealRunStatus::default()
        });
        World {
            order: example("codefixdds.yaml"),
            run,
            status: CodeFixDDSStatus::default(),
        }
    }

    fn order(&self) -> Order<'_> {
        Order {
            name: "dds-fix-20260202-001",
            spec: &self.order.spec,
            created: at(0),
            status: &self.status,
        }
    }

    fn facts(&self) -> Facts<'_> {
        Facts {
            sources: vec![Source::HealRun {
                name: "dds-20260202-code-001",
                spec: &self.run.spec,
                status: self.run.status.as_ref(),
            }],
            ..Facts::default()
        }
    }

    fn decide(&mut self, now: Timestamp) -> Decision {
        let decision = decide(&self.order(), &self.facts(), now);
        self.status = decision.status.clone();
        decision
    }

    fn approve(&mut self, who: &str) {
        self.order.spec.approval = Some(Verdict2 {
            decision: Verdict::Approved,
            reason: None,
            approved_by: who.into(),
            patch_digest: None,
        });
    }
}

fn broken(decision: &Decision) -> Vec<&str> {
    decision
        .status
        .validation
        .iter()
        .filter(|r| !r.passed)
        .map(|r| r.rule.as_str())
        .collect()
}

#[test]
fn seed_002s_example_pair_is_valid_and_waits_for_a_decision() {
    let mut world = World::seed();
    let decision = world.decide(at(1));
    assert_eq!(decision.status.validation.len(), 10, "every rule is reported");
    assert!(broken(&decision).is_empty(), "{:?}", decision.status.validation);
    assert_eq!(decision.status.phase, Some(CodeFixPhase::Proposed));
    assert_eq!(decision.next, Next::Wait);
    let note = decision.note.expect("a transition is an Event");
    assert_eq!(note.reason, "Proposed");
    assert!(
        note.message.contains("kubeheal approve cfd dds-fix-20260202-001"),
        "{}",
        note.message
    );
    // The same facts again: no transition, no Event.
    assert!(world.decide(at(2)).note.is_none());
}

#[test]
fn an_order_whose_source_is_missing_or_has_not_failed_is_invalid_until_it_has() {
    let mut world = World::seed();
    let decision = decide(&world.order(), &Facts::default(), at(1));
    assert_eq!(
        broken(&decision),
        ["SourceDdsFailed", "AllowedPathsSubset", "ConstraintsNotLooser"]
    );
    assert_eq!(decision.status.phase, Some(CodeFixPhase::Invalid));
    assert_eq!(decision.status.reason.as_deref(), Some("SourceDdsFailed"));
    assert!(decision.note.as_ref().is_some_and(|n| n.warning));
    world.run.status = Some(HealRunStatus {
        phase: Some(HealRunPhase::Running),
        ..HealRunStatus::default()
    });
    let decision = world.decide(at(2));
    assert_eq!(broken(&decision), ["SourceDdsFailed"]);
    let message = decision.status.message.expect("a message");
    assert!(message.contains("has not failed (phase Running)"), "{message}");
    // The run fails: the same order becomes valid without being touched.
    world.run.status.as_mut().expect("a status").phase = Some(HealRunPhase::Failed);
    assert_eq!(world.decide(at(3)).status.phase, Some(CodeFixPhase::Proposed));
}

#[test]
fn two_sources_with_one_id_make_the_order_invalid_naming_both() {
    let world = World::seed();
    let mut facts = world.facts();
    facts.sources.push(facts.sources[0].clone());
    let decision = decide(&world.order(), &facts, at(1));
    assert!(decision.status.message.expect("why").contains("ambiguous"));
}

#[test]
fn paths_outside_the_sources_scope_or_climbing_out_break_rule_6_only() {
    for path in ["lib/calculator.py", "src/../etc/passwd", "/src/calculator.py"] {
        let mut world = World::seed();
        world.order.spec.allowed_paths.push(path.into());
        let decision = world.decide(at(1));
        assert_eq!(broken(&decision), ["AllowedPathsSubset"], "{path}");
        assert!(decision.status.message.expect("why").contains(path));
    }
    // A source with no allowed paths allows the whole repository.
    let mut world = World::seed();
    world.run.spec.policy.allowed_paths.clear();
    world.order.spec.allowed_paths.push("lib/x.py".into());
    assert!(broken(&world.decide(at(1))).is_empty());
}

#[test]
fn constraints_looser_than_the_source_break_rule_7_only() {
    let mut world = World::seed();
    world.run.spec.policy.max_files_changed = 1;
    let decision = world.decide(at(1));
    assert_eq!(broken(&decision), ["ConstraintsNotLooser"]);
    assert!(decision.status.message.expect("why").contains("at most 1"));
    let mut world = World::seed();
    world.order.spec.constraints.no_refactor = false;
    assert_eq!(broken(&world.decide(at(1))), ["ConstraintsNotLooser"]);
}

#[test]
fn the_oldest_order_per_source_stands_and_later_ones_name_it() {
    let world = World::seed();
    let mut facts = world.facts();
    facts.rivals = vec![Rival {
        name: "first-fix".into(),
        created: at(-60),
    }];
    let decision = decide(&world.order(), &facts, at(1));
    assert_eq!(broken(&decision), ["NoDuplicate"]);
    assert!(decision.status.message.expect("why").contains("first-fix"));
    // A younger rival does not matter; at the same second the name decides.
    facts.rivals = vec![
        Rival {
            name: "later".into(),
            created: at(60),
        },
        Rival {
            name: "zz-same-second".into(),
            created: at(0),
        },
    ];
    assert!(broken(&decide(&world.order(), &facts, at(1))).is_empty());
}

#[test]
fn the_rules_on_the_order_alone_are_checked_again() {
    let mut world = World::seed();
    world.order.spec.id = "DDS-FIX-2026-1".into();
    world.order.spec.error_context.error_message = "x".repeat(501);
    assert_eq!(broken(&world.decide(at(1))), ["IdFormat", "ErrorMessageLength"]);
}

#[test]
fn a_rejected_order_ends_rejected_and_stays_so() {
    let mut world = World::seed();
    world.decide(at(1));
    world.order.spec.approval = Some(Verdict2 {
        decision: Verdict::Rejected,
        reason: Some("fix the data".into()),
        approved_by: "alice".into(),
        patch_digest: None,
    });
    let decision = world.decide(at(2));
    assert_eq!(decision.status.phase, Some(CodeFixPhase::Rejected));
    assert_eq!(decision.status.approved_by.as_deref(), Some("alice"));
    assert_eq!(decision.next, Next::Wait);
    // Even if its source disappears later.
    assert_eq!(
        decide(&world.order(), &Facts::default(), at(3)).status.phase,
        Some(CodeFixPhase::Rejected)
    );
}

#[test]
fn an_order_not_decided_by_its_deadline_expires_and_a_late_approval_does_not_run_it() {
    let mut world = World::seed();
    world.order.spec.approval_deadline = Some("1h".into());
    let decision = world.decide(at(10));
    assert_eq!(decision.next, Next::At(at(3600)), "woken at the deadline");
    let decision = world.decide(at(3600));
    assert_eq!(decision.status.phase, Some(CodeFixPhase::Expired));
    world.approve("alice");
    let decision = world.decide(at(3700));
    assert_eq!(decision.status.phase, Some(CodeFixPhase::Expired));
    assert_eq!(decision.next, Next::Wait);
    // An approval first seen after the deadline is too late even if no reconcile ran in between.
    let mut world = World::seed();
    world.order.spec.approval_deadline = Some("30m".into());
    world.order.spec.tool = HEALER_TOOL.into();
    world.approve("alice");
    assert_eq!(world.decide(at(1801)).status.phase, Some(CodeFixPhase::Expired));
    // Seen in time, it stands after the deadline too.
    let mut world = World::seed();
    world.order.spec.approval_deadline = Some("30m".into());
    world.order.spec.tool = HEALER_TOOL.into();
    world.approve("alice");
    assert_eq!(world.decide(at(60)).next, Next::Execute);
    assert_eq!(world.decide(at(7200)).status.phase, Some(CodeFixPhase::Approved));
}

#[test]
fn an_approved_invalid_order_is_never_executed() {
    let mut world = World::seed();
    world.order.spec.tool = HEALER_TOOL.into();
    world.approve("alice");
    world.run.status.as_mut().expect("a status").phase = Some(HealRunPhase::Running);
    let decision = world.decide(at(1));
    assert_eq!(decision.status.phase, Some(CodeFixPhase::Invalid));
    assert_eq!(decision.next, Next::Wait);
}

#[test]
fn an_approved_order_for_a_tool_the_operator_lacks_fails_without_running_and_names_those_it_has() {
    let mut world = World::seed();
    world.approve("alice");
    let facts = Facts {
        tools: vec!["sweep"],
        ..world.facts()
    };
    let decision = decide(&world.order(), &facts, at(1));
    assert_eq!(decision.status.phase, Some(CodeFixPhase::Failed));
    assert_eq!(decision.status.reason.as_deref(), Some("ToolUnavailable"));
    let message = decision.status.message.unwrap_or_default();
    assert!(
        message.contains(r#"tool "aider""#) && message.contains(r#""healer", "sweep""#),
        "{message}"
    );
    assert!(message.contains("--tool aider=IMAGE"), "{message}");
    assert_eq!(decision.next, Next::Wait);
}

#[test]
fn an_approved_order_for_a_configured_tool_is_executed_by_that_tool() {
    let mut world = World::seed();
    world.approve("alice");
    let facts = Facts {
        tools: vec!["aider"],
        ..world.facts()
    };
    let decision = decide(&world.order(), &facts, at(1));
    assert_eq!(decision.status.phase, Some(CodeFixPhase::Approved));
    assert_eq!(decision.next, Next::Execute);
    let spec = execution_run(&world.order(), Some(&world.run.spec)).expect("a spec");
    let healer = spec.healer.expect("a healer");
    assert_eq!(healer.tool.map(|t| t.name).as_deref(), Some("aider"));
    assert_eq!(
        (healer.code_healer_api, healer.open_ai, healer.builtin),
        (None, None, None),
        "the tool alone"
    );
}

fn executing(phase: HealRunPhase, gate: GateVerdict, commit: Option<&str>) -> HealRunStatus {
    HealRunStatus {
        phase: Some(phase),
        message: Some("the run says".into()),
        cycles: vec![CycleStatus {
            cycle: 1,
            execution: None,
            tests: None,
            healer_call: None,
            patch: Some(PatchStatus {
                digest: format!("sha256:{}", "b".repeat(64)),
                files: Vec::new(),
                confidence: 0.9,
                gate,
                approved_by: None,
                commit: commit.map(str::to_owned),
                reverted_by: None,
            }),
            approval_request: None,
        }],
        result: Some(HealResult {
            branch: Some("kubeheal/dds-fix-20260202-001".into()),
            commit: commit.map(str::to_owned),
            diff_stat: Some(" 1 file changed".into()),
            fixed_tests: Vec::new(),
        }),
        ..HealRunStatus::default()
    }
}

#[test]
fn an_approved_order_is_executed_by_its_heal_run_and_follows_it() {
    let mut world = World::seed();
    world.order.spec.tool = HEALER_TOOL.into();
    world.approve("alice");
    let decision = world.decide(at(1));
    assert_eq!(decision.status.phase, Some(CodeFixPhase::Approved));
    assert_eq!(decision.next, Next::Execute);
    assert_eq!(decision.status.approved_by.as_deref(), Some("alice"));

    let accepted = GateVerdict {
        accepted: true,
        reasons: Vec::new(),
    };
    let steps = [
        (
            executing(HealRunPhase::Running, accepted.clone(), None),
            CodeFixPhase::Executing,
        ),
        (
            executing(HealRunPhase::Running, accepted.clone(), Some("c0ffee")),
            CodeFixPhase::Executing,
        ),
        (
            executing(HealRunPhase::Healed, accepted.clone(), Some("c0ffee")),
            CodeFixPhase::Executed,
        ),
    ];
    for (run_status, phase) in steps {
        let mut facts = world.facts();
        facts.execution = Some(Execution {
            name: "dds-fix-20260202-001-exec",
            status: Some(&run_status),
        });
        let decision = decide(&world.order(), &facts, at(2));
        assert_eq!(decision.status.phase, Some(phase));
        assert_eq!(decision.next, Next::Wait, "the run is created once");
        world.status = decision.status;
    }
    let execution = world.status.execution.as_ref().expect("an execution");
    assert_eq!(execution.commit.as_deref(), Some("c0ffee"));
    assert_eq!(execution.branch.as_deref(), Some("kubeheal/dds-fix-20260202-001"));
    assert_eq!(execution.heal_run.as_deref(), Some("dds-fix-20260202-001-exec"));
    let ready = world
        .status
        .conditions
        .iter()
        .find(|c| c.type_ == "Ready")
        .expect("Ready");
    assert_eq!(ready.status, "True");
}

#[test]
fn a_diff_the_gate_refuses_fails_the_order_with_the_violations() {
    let mut world = World::seed();
    world.order.spec.tool = HEALER_TOOL.into();
    world.approve("alice");
    world.decide(at(1));
    let refused = executing(
        HealRunPhase::Failed,
        GateVerdict {
            accepted: false,
            reasons: vec!["lib/x.py is outside allowedPaths".into()],
        },
        None,
    );
    let mut facts = world.facts();
    facts.execution = Some(Execution {
        name: "run",
        status: Some(&refused),
    });
    let decision = decide(&world.order(), &facts, at(2));
    assert_eq!(decision.status.phase, Some(CodeFixPhase::Failed));
    assert_eq!(decision.status.reason.as_deref(), Some("ConstraintViolated"));
    let execution = decision.status.execution.expect("an execution");
    assert_eq!(execution.constraint_violations, ["lib/x.py is outside allowedPaths"]);
    assert_eq!(execution.commit, None, "nothing committed");
}

#[test]
fn a_heal_runs_approval_request_follows_the_runs_commit_of_that_cycle() {
    let world = World::seed();
    let mut order = world.order.spec.clone();
    order.source_dds = "HealRun/calc".into();
    order.error_context.original_dds = order.source_dds.clone();
    order.source_ref = Some(SourceRef {
        kind: SourceKind::HealRun,
        name: "calc".into(),
        cycle: Some(1),
    });
    order.allowed_paths = vec!["src/calculator.py".into()];
    let mut run = world.run.clone();
    let mut run_status = executing(
        HealRunPhase::AwaitingApproval,
        GateVerdict {
            accepted: true,
            reasons: Vec::new(),
        },
        None,
    );
    run_status.cycles[0].approval_request = Some("calc-c1".into());
    run.status = Some(run_status.clone());
    let status = CodeFixDDSStatus::default();
    let view = Order {
        name: "calc-c1",
        spec: &order,
        created: at(0),
        status: &status,
    };
    let facts = Facts {
        sources: vec![Source::HealRun {
            name: "calc",
            spec: &run.spec,
            status: run.status.as_ref(),
        }],
        rivals: Vec::new(),
        execution: Some(Execution {
            name: "calc",
            status: run.status.as_ref(),
        }),
        tools: Vec::new(),
    };
    let decision = decide(&view, &facts, at(1));
    assert_eq!(
        decision.status.phase,
        Some(CodeFixPhase::Proposed),
        "the run asks it: its source counts as failed — {:?}",
        decision.status.validation
    );
    let mut approved = order.clone();
    approved.approval = Some(Verdict2 {
        decision: Verdict::Approved,
        reason: None,
        approved_by: "alice".into(),
        patch_digest: None,
    });
    let view = Order {
        spec: &approved,
        ..view
    };
    let decision = decide(&view, &facts, at(2));
    assert_eq!(decision.status.phase, Some(CodeFixPhase::Approved));
    assert_eq!(
        decision.next,
        Next::Wait,
        "the run that asked commits it; nothing is created"
    );
}

#[test]
fn the_execution_run_is_the_orders_constraints_over_the_sources_build() {
    let mut world = World::seed();
    world.order.spec.tool = HEALER_TOOL.into();
    world.order.spec.target = None;
    world.run.spec.source.secret_ref = Some(crate::api::shared::LocalSecretRef { name: "git".into() });
    let spec = execution_run(&world.order(), Some(&world.run.spec)).expect("a spec");
    assert_eq!(spec.work_order.as_deref(), Some("dds-fix-20260202-001"));
    assert_eq!(spec.max_cycles, 1);
    assert_eq!(spec.policy.allowed_paths, world.order.spec.allowed_paths);
    assert_eq!(spec.policy.max_files_changed, 2);
    assert!(spec.policy.no_new_dependencies);
    assert_eq!(
        spec.policy.approval,
        ApprovalMode::Automatic,
        "the order was the question"
    );
    assert_eq!(spec.source.url, world.run.spec.source.url);
    assert_eq!(spec.source.secret_ref, world.run.spec.source.secret_ref);
    assert_eq!(spec.delivery.branch.as_deref(), Some("kubeheal/dds-fix-20260202-001"));
    assert_eq!(spec.executor, world.run.spec.executor);
    // Without a target or a HealRun to lead to, there is nothing to execute on.
    assert!(execution_run(&world.order(), None).is_err());
}

#[test]
fn the_task_carries_the_goal_the_instructions_and_the_error() {
    let world = World::seed();
    let text = task(&world.order.spec);
    assert!(text.contains("DDS-FIX-20260202-001"));
    assert!(text.contains("- Identify type mismatch between int and str operands"));
    assert!(text.contains("unsupported operand type(s)"));
}

#[test]
fn a_deleted_execution_run_is_not_replaced_by_a_second_execution() {
    let mut world = World::seed();
    world.order.spec.tool = HEALER_TOOL.into();
    world.approve("alice");
    world.decide(at(1));
    let running = executing(
        HealRunPhase::Running,
        GateVerdict {
            accepted: true,
            reasons: Vec::new(),
        },
        None,
    );
    let mut facts = world.facts();
    facts.execution = Some(Execution {
        name: "dds-fix-20260202-001-exec",
        status: Some(&running),
    });
    let decision = decide(&world.order(), &facts, at(2));
    assert_eq!(decision.status.phase, Some(CodeFixPhase::Executing));
    world.status = decision.status;
    // The run is deleted mid-execution.
    let decision = world.decide(at(3));
    assert_eq!(decision.status.phase, Some(CodeFixPhase::Failed));
    assert_eq!(decision.status.reason.as_deref(), Some("ExecutionGone"));
    assert_eq!(decision.next, Next::Wait);
}

#[test]
fn rules_are_not_judged_again_while_approved_work_runs() {
    let mut world = World::seed();
    world.order.spec.tool = HEALER_TOOL.into();
    world.approve("alice");
    assert_eq!(world.decide(at(1)).next, Next::Execute);
    // A second run declares the same DDS id afterwards: the source is now ambiguous, but the
    // execution the approval started goes on.
    let mut facts = world.facts();
    facts.sources.push(facts.sources[0].clone());
    let decision = decide(&world.order(), &facts, at(2));
    assert_eq!(decision.status.phase, Some(CodeFixPhase::Approved));
    assert!(broken(&decision).is_empty());
}

#[test]
fn an_invalid_order_with_a_deadline_is_woken_at_it() {
    let mut world = World::seed();
    world.order.spec.approval_deadline = Some("2h".into());
    world.run.status.as_mut().expect("a status").phase = Some(HealRunPhase::Running);
    let decision = world.decide(at(1));
    assert_eq!(decision.status.phase, Some(CodeFixPhase::Invalid));
    assert_eq!(decision.next, Next::At(at(7200)));
    assert_eq!(world.decide(at(7200)).status.phase, Some(CodeFixPhase::Expired));
}

#[test]
fn the_execution_run_never_uses_credentials_for_another_repository() {
    let mut world = World::seed();
    world.run.spec.source.secret_ref = Some(crate::api::shared::LocalSecretRef { name: "git".into() });
    world.order.spec.target =
        Some(serde_json::from_value(serde_json::json!({"url": "https://evil.example.com/x.git"})).expect("a source"));
    let spec = execution_run(&world.order(), Some(&world.run.spec)).expect("a spec");
    assert_eq!(spec.source.secret_ref, None);
}
