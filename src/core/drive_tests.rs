//! The loop over a fake world, scenario by scenario: run straight through, and stopped after
//! every effect before its result is persisted, then resumed from the persisted status alone.
//! The fake world keeps what a cluster keeps (Jobs by key, answers by cycle, commits by
//! trailer), so these tests show that the status and the steps' instructions are enough for a
//! driver to find what it did instead of doing it twice.

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::{Value, json};

use super::*;
use crate::api::heal_run::{
    FileChange, GateVerdict, HealRunPhase, HealRunReason, HealRunSpec, HealerCall, HealerOutcome, Observation,
    PatchStatus, ProjectType,
};
use crate::api::shared::{BugReport, Decision, ErrorType, RunEnvelope, RunStatus, Verdict};
use crate::core::heal_run::Outcome;

/// A healer's answer for a cycle: the patch's name (its digest is derived from it) and whether
/// the gate accepts it; `None` when the healer has no fix.
type Answer = Option<(&'static str, bool)>;

struct Scenario {
    name: &'static str,
    spec: Value,
    /// The tests that fail with these patches (by name) applied.
    failing: fn(&[String]) -> Vec<&'static str>,
    answer: fn(u32) -> Answer,
    ends: HealRunReason,
}

fn scenarios() -> Vec<Scenario> {
    vec![
        Scenario {
            name: "healed in one cycle",
            spec: json!({"policy": {"approval": "Automatic"}}),
            failing: |applied| if applied.is_empty() { vec!["t::a"] } else { vec![] },
            answer: |_| Some(("fix-a", true)),
            ends: HealRunReason::Healed,
        },
        Scenario {
            name: "healed in two cycles",
            spec: json!({"policy": {"approval": "Automatic"}}),
            failing: |applied| match applied.len() {
                0 => vec!["t::a", "t::b"],
                1 => vec!["t::b"],
                _ => vec![],
            },
            answer: |cycle| Some((if cycle == 1 { "fix-a" } else { "fix-b" }, true)),
            ends: HealRunReason::Healed,
        },
        Scenario {
            name: "a regression is reverted and the next fix heals",
            spec: json!({"policy": {"approval": "Automatic", "continueOnRegression": true}}),
            failing: |applied| {
                if applied.iter().any(|p| p == "breaks-c") {
                    vec!["t::a", "t::c"]
                } else if applied.iter().any(|p| p == "fix-a") {
                    vec![]
                } else {
                    vec!["t::a"]
                }
            },
            answer: |cycle| Some((if cycle == 1 { "breaks-c" } else { "fix-a" }, true)),
            ends: HealRunReason::Healed,
        },
        Scenario {
            name: "a human approves each fix",
            spec: json!({"policy": {"approval": "Manual"}}),
            failing: |applied| if applied.is_empty() { vec!["t::a"] } else { vec![] },
            answer: |_| Some(("fix-a", true)),
            ends: HealRunReason::Healed,
        },
        Scenario {
            name: "a rejected patch asked for again ends the run",
            spec: json!({"policy": {"approval": "Automatic"}}),
            failing: |_| vec!["t::a"],
            answer: |_| Some(("protected", false)),
            ends: HealRunReason::GateRejected,
        },
        Scenario {
            name: "the cycles run out and a fix is proposed to people",
            spec: json!({"policy": {"approval": "Automatic"}, "maxCycles": 2}),
            failing: |_| vec!["t::a"],
            answer: |cycle| Some((if cycle == 1 { "try-1" } else { "try-2" }, true)),
            ends: HealRunReason::CyclesExhausted,
        },
    ]
}

#[derive(Debug)]
struct Crash;

/// What a cluster would hold, and what every effect did.
struct World<'a> {
    scenario: &'a Scenario,
    persisted: HealRunStatus,
    /// Fail the persist with this index (counted from 0 over the whole run).
    crash_at: Option<usize>,
    persists: usize,
    /// Executions by key: launched, and their result once collected.
    jobs: BTreeMap<String, Input>,
    launches: Vec<String>,
    answers: BTreeMap<u32, (HealerCall, Option<PatchStatus>)>,
    healer_calls: Vec<u32>,
    /// Commits by (kind, cycle), as the trailers find them.
    commits: BTreeMap<(&'static str, u32), String>,
    commits_made: Vec<(&'static str, u32)>,
    approvals: BTreeMap<u32, String>,
    proposals: Vec<String>,
    /// Each note's reason, with the phase after it.
    events: Vec<(String, String)>,
}

impl<'a> World<'a> {
    fn new(scenario: &'a Scenario, crash_at: Option<usize>) -> Self {
        World {
            scenario,
            persisted: HealRunStatus::default(),
            crash_at,
            persists: 0,
            jobs: BTreeMap::new(),
            launches: Vec::new(),
            answers: BTreeMap::new(),
            healer_calls: Vec::new(),
            commits: BTreeMap::new(),
            commits_made: Vec::new(),
            approvals: BTreeMap::new(),
            proposals: Vec::new(),
            events: Vec::new(),
        }
    }

    fn commit_once(&mut self, kind: &'static str, cycle: u32) -> String {
        if let Some(commit) = self.commits.get(&(kind, cycle)) {
            return commit.clone();
        }
        self.commits_made.push((kind, cycle));
        let commit = format!("{kind}{cycle}{}", "0".repeat(30));
        self.commits.insert((kind, cycle), commit.clone());
        commit
    }
}

fn observation(key: &str, failing: &[&str]) -> Observation {
    Observation {
        envelope: RunEnvelope {
            run_id: key.into(),
            endpoint: None,
            http_status: if failing.is_empty() { 200 } else { 500 },
            content_type: "text/plain".into(),
            json: None,
            text_preview: None,
            status: if failing.is_empty() {
                RunStatus::Success
            } else {
                RunStatus::Error
            },
            duration_ms: 10,
            exit_code: Some(i32::from(!failing.is_empty())),
            error_class: None,
            error_message: None,
            suggested_fix: None,
            warnings: Vec::new(),
            redactions_applied: false,
            artifacts: Vec::new(),
            log_excerpt: None,
            environment_metadata: Default::default(),
        },
        bug_reports: failing
            .iter()
            .map(|t| BugReport {
                file_path: "app/calc.py".into(),
                line_number: 3,
                error_type: ErrorType::Logic,
                message: format!("{t} failed"),
                test_name: Some((*t).into()),
                confidence_score: Some(0.9),
            })
            .collect(),
        failing_tests: failing.iter().map(|s| s.to_string()).collect(),
        tests_ran: 3,
        endpoint_calls: Vec::new(),
    }
}

impl Effects for World<'_> {
    type Error = Crash;

    async fn resolve_source(&mut self) -> Result<Input, Crash> {
        Ok(Input::SourceResolved {
            commit: "c0ffee".repeat(6) + "0000",
            project_type: ProjectType::Python,
            work_order: None,
        })
    }

    async fn execute(&mut self, order: &ExecutionOrder, status: &HealRunStatus) -> Result<Ready<Input>, Crash> {
        if let Some(result) = self.jobs.get(&order.key) {
            return Ok(Ready::Now(result.clone()));
        }
        // Launched now, collected at the next look: the split a Job has.
        self.launches.push(order.key.clone());
        let applied = patch_names(status, &order.patches);
        let failing = (self.scenario.failing)(&applied);
        let outcome = if failing.is_empty() {
            Outcome::Passed
        } else {
            Outcome::Failed
        };
        self.jobs.insert(
            order.key.clone(),
            Input::Executed {
                cycle: order.cycle,
                observation: observation(&order.key, &failing),
                outcome,
            },
        );
        Ok(Ready::Later(Duration::ZERO))
    }

    async fn ask_healers(&mut self, question: &HealerQuestion, _status: &HealRunStatus) -> Result<Ready<Input>, Crash> {
        let cycle = question.cycle;
        if !self.answers.contains_key(&cycle) {
            self.healer_calls.push(cycle);
            let answer = (self.scenario.answer)(cycle);
            let call = HealerCall {
                healer: "model".into(),
                deterministic: false,
                outcome: if answer.is_some() {
                    HealerOutcome::Healed
                } else {
                    HealerOutcome::Error
                },
                reason: None,
                duration_ms: 1,
                timeout_seconds: question.timeout_seconds,
                changes_summary: None,
            };
            let patch = answer.map(|(name, accepted)| PatchStatus {
                digest: format!("sha256:{name}"),
                files: vec![FileChange {
                    path: "app/calc.py".into(),
                    added: 1,
                    removed: 1,
                }],
                confidence: 0.9,
                gate: GateVerdict {
                    accepted,
                    reasons: if accepted { vec![] } else { vec!["protected".into()] },
                },
                commit: None,
                reverted_by: None,
                approved_by: None,
            });
            self.answers.insert(cycle, (call, patch));
            // Asked now, answered at the next look: the split a tool's Job has.
            return Ok(Ready::Later(Duration::ZERO));
        }
        let (call, patch) = self.answers[&cycle].clone();
        Ok(Ready::Now(Input::HealerAnswered { cycle, call, patch }))
    }

    async fn request_approval(&mut self, cycle: u32, _status: &HealRunStatus) -> Result<Input, Crash> {
        let name = self
            .approvals
            .entry(cycle)
            .or_insert_with(|| format!("fix-c{cycle}"))
            .clone();
        Ok(Input::ApprovalRequested { cycle, name })
    }

    async fn await_approval(&mut self, cycle: u32, _name: &str) -> Result<Ready<Input>, Crash> {
        let digest = self.answers[&cycle].1.as_ref().map(|p| p.digest.clone());
        Ok(Ready::Now(Input::Decided {
            cycle,
            decision: Decision {
                decision: Verdict::Approved,
                approved_by: "alice".into(),
                reason: None,
                patch_digest: digest,
            },
        }))
    }

    async fn commit(&mut self, order: &CommitOrder) -> Result<Input, Crash> {
        let commit = self.commit_once("fix", order.cycle);
        Ok(Input::Committed {
            cycle: order.cycle,
            commit,
            branch: order.branch.clone(),
            diff_stat: "1 file changed".into(),
        })
    }

    async fn revert(&mut self, order: &CommitOrder, _target: &str) -> Result<Input, Crash> {
        let commit = self.commit_once("revert", order.cycle);
        Ok(Input::Reverted {
            cycle: order.cycle,
            commit,
            diff_stat: "0 files changed".into(),
        })
    }

    async fn propose_fix(&mut self, _status: &HealRunStatus) -> Result<Input, Crash> {
        if self.proposals.is_empty() {
            self.proposals.push("proposal".into());
        }
        Ok(Input::FixProposed {
            name: "proposal".into(),
        })
    }

    async fn persist(
        &mut self,
        _previous: &HealRunStatus,
        status: &HealRunStatus,
        notes: &[Note],
    ) -> Result<(), Crash> {
        let index = self.persists;
        self.persists += 1;
        if self.crash_at == Some(index) {
            return Err(Crash);
        }
        self.persisted = status.clone();
        let phase = serde_json::to_value(status.phase).expect("a phase");
        for note in notes {
            self.events
                .push((note.reason.to_owned(), phase.as_str().unwrap_or_default().to_owned()));
        }
        Ok(())
    }

    async fn finished(&mut self) -> Result<(), Crash> {
        Ok(())
    }
}

/// The names of the patches of `cycles` (their digests are `sha256:<name>` here).
fn patch_names(status: &HealRunStatus, cycles: &[u32]) -> Vec<String> {
    cycles
        .iter()
        .filter_map(|c| status.cycles.iter().find(|e| e.cycle == *c)?.patch.as_ref())
        .map(|p| p.digest.trim_start_matches("sha256:").to_owned())
        .collect()
}

/// Drives the scenario to its end, resuming from the persisted status after every wait and
/// every crash; returns the final status.
async fn run_to_end(world: &mut World<'_>) -> HealRunStatus {
    let spec: HealRunSpec = {
        let mut value = json!({"source": {"url": "file:///repo.git"}});
        for (k, v) in world.scenario.spec.as_object().expect("an object") {
            value[k] = v.clone();
        }
        serde_json::from_value(value).expect("a spec")
    };
    let run = Run {
        id: "team/calc",
        name: "calc",
        spec: &spec,
    };
    for _ in 0..200 {
        match drive(&run, world.persisted.clone(), world, 8, std::future::pending()).await {
            Ok((status, Pause::Done)) => return status,
            Ok(_) | Err(Crash) => continue,
        }
    }
    panic!("{}: the run did not end", world.scenario.name);
}

/// The status without the clock's readings.
fn timeless(status: &HealRunStatus) -> Value {
    let mut value = serde_json::to_value(status).expect("a status");
    fn strip(value: &mut Value) {
        match value {
            Value::Object(map) => {
                for key in ["lastTransitionTime", "startedAt", "finishedAt"] {
                    map.remove(key);
                }
                map.values_mut().for_each(strip);
            }
            Value::Array(items) => items.iter_mut().for_each(strip),
            _ => {}
        }
    }
    strip(&mut value);
    value
}

fn no_repeats<T: Ord + Clone + std::fmt::Debug>(items: &[T], what: &str, scenario: &str, crash: usize) {
    let mut sorted = items.to_vec();
    sorted.sort();
    sorted.dedup();
    assert_eq!(
        sorted.len(),
        items.len(),
        "{scenario}, crash at persist {crash}: {what} twice: {items:?}"
    );
}

#[tokio::test]
async fn every_scenario_ends_as_it_should() {
    for scenario in scenarios() {
        let mut world = World::new(&scenario, None);
        let status = run_to_end(&mut world).await;
        assert_eq!(status.reason, Some(scenario.ends), "{}: {status:#?}", scenario.name);
        let phase = if scenario.ends == HealRunReason::Healed {
            HealRunPhase::Healed
        } else {
            HealRunPhase::Failed
        };
        assert_eq!(status.phase, Some(phase), "{}", scenario.name);
    }
}

#[tokio::test]
async fn a_run_stopped_after_any_effect_resumes_from_its_status_and_does_nothing_twice() {
    for scenario in scenarios() {
        let mut straight = World::new(&scenario, None);
        let expected = timeless(&run_to_end(&mut straight).await);
        let points = straight.persists;
        assert!(points > 5, "{}: only {points} persists", scenario.name);
        for crash in 0..points {
            let mut world = World::new(&scenario, Some(crash));
            let status = run_to_end(&mut world).await;
            assert_eq!(
                timeless(&status),
                expected,
                "{}: stopped at persist {crash}, the run ended differently",
                scenario.name
            );
            no_repeats(&world.launches, "an execution was launched", scenario.name, crash);
            no_repeats(&world.healer_calls, "a cycle's healer was asked", scenario.name, crash);
            no_repeats(&world.commits_made, "a commit was made", scenario.name, crash);
            assert_eq!(world.launches, straight.launches, "{}: crash at {crash}", scenario.name);
            assert_eq!(
                world.commits_made, straight.commits_made,
                "{}: crash at {crash}",
                scenario.name
            );
        }
    }
}

#[test]
fn an_execution_key_names_the_commit_and_the_patch_set() {
    let mut status = HealRunStatus {
        source_commit: Some("a".repeat(40)),
        ..HealRunStatus::default()
    };
    let base = execution_key_of(&status, 0);
    assert!(
        base.starts_with("calc-c0-") && base.len() == "calc-c0-".len() + 8,
        "{base}"
    );
    status.source_commit = Some("b".repeat(40));
    assert_ne!(execution_key_of(&status, 0), base, "another commit, another key");
    let long = crate::core::step::execution_key(&"x".repeat(80), &status, 3);
    assert!(long.len() <= 52, "{long}");
}

fn execution_key_of(status: &HealRunStatus, cycle: u32) -> String {
    crate::core::step::execution_key("calc", status, cycle)
}

#[tokio::test]
async fn the_fake_world_tells_the_story_every_driver_tells() {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/scenarios/healed_in_one_cycle.json");
    let expected: Value = serde_json::from_str(&std::fs::read_to_string(path).expect("the scenario")).expect("JSON");
    let expected: Vec<(String, String)> = serde_json::from_value(expected["events"].clone()).expect("pairs");
    let scenarios = scenarios();
    let scenario = scenarios
        .iter()
        .find(|s| s.name == "healed in one cycle")
        .expect("the scenario");
    let mut world = World::new(scenario, None);
    run_to_end(&mut world).await;
    assert_eq!(world.events, expected);
}

#[tokio::test]
async fn a_healer_that_repeats_a_rejected_patch_is_asked_twice() {
    let scenarios = scenarios();
    let scenario = scenarios
        .iter()
        .find(|s| s.name == "a rejected patch asked for again ends the run")
        .expect("the scenario");
    let mut world = World::new(scenario, None);
    let status = run_to_end(&mut world).await;
    assert_eq!(world.healer_calls, [1, 2]);
    assert!(
        status
            .message
            .as_deref()
            .unwrap_or_default()
            .contains("the same patch as cycle 1"),
        "{:?}",
        status.message
    );
}
