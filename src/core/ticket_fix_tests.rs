use std::collections::BTreeMap;

use super::*;
use crate::api::healer_ticket::{Classification, Priority, Regenerate, TicketProposal, TicketSource};
use crate::api::shared::{CodeHealerApiHealer, Decision, GitSource, HealerSpec, OpenAiHealer};

fn yaml(text: &str) -> Value {
    serde_yaml_ng::from_str(text).expect("YAML")
}

#[test]
fn seed_004_s_layout_maps_an_fqn_to_its_file_and_nothing_leads_outside() {
    assert_eq!(
        contract_path("entity/helpdesk/ticket", None).as_deref(),
        Ok("domains/helpdesk/entities/ticket.contract.yaml")
    );
    assert_eq!(
        contract_path("workflow/helpdesk/ticket_lifecycle", None).as_deref(),
        Ok("domains/helpdesk/workflows/ticket_lifecycle.contract.yaml")
    );
    assert_eq!(
        contract_path("route/shop/orders", Some("contracts/{kind}/{domain}-{name}.yaml")).as_deref(),
        Ok("contracts/route/shop-orders.yaml")
    );
    assert_eq!(
        contract_path("page/home", Some("{kinds}/{name}.yaml")).as_deref(),
        Ok("pages/home.yaml")
    );
    for hostile in [
        "entity/../../etc/passwd",
        "entity/../x",
        "entity/helpdesk/..",
        "a/b/c/d",
        "entity",
    ] {
        assert!(contract_path(hostile, None).is_err(), "{hostile}");
    }
    let why = contract_path("page/home", None).expect_err("no domain");
    assert!(why.contains("has no domain"), "{why}");
    assert!(contract_path("entity/helpdesk/ticket", Some("../{name}.yaml")).is_err());
    assert!(contract_path("entity/helpdesk/ticket", Some("/etc/{name}")).is_err());
}

#[test]
fn invented_properties_are_removed_and_listed_but_the_contract_s_own_are_kept() {
    let before = yaml(
        "spec:\n  fields:\n    title: {type: string, x_ui: wide}\n    status: {type: string, constraints: {pattern: '^[a-z]+$'}}\n",
    );
    let mut after = yaml(
        "spec:\n  fields:\n    title: {type: string, x_ui: wide, required_when: open}\n    status: {type: string, constraints: {pattern: '^[a-z]+$', regex: x}}\n    resolution: {type: text, description: Resolution notes, conditional_required: true, constraints: {maxLength: 2000, step: 1}}\n",
    );
    let removed = sanitize(&before, &mut after);
    assert_eq!(
        removed,
        [
            "spec.fields.title.required_when",
            "spec.fields.status.constraints.regex",
            "spec.fields.resolution.conditional_required",
            "spec.fields.resolution.constraints.step",
        ]
    );
    assert_eq!(
        after,
        yaml(
            "spec:\n  fields:\n    title: {type: string, x_ui: wide}\n    status: {type: string, constraints: {pattern: '^[a-z]+$'}}\n    resolution: {type: text, description: Resolution notes, constraints: {maxLength: 2000}}\n"
        )
    );
    // A contract without fields has nothing to strip.
    let mut other = yaml("kind: Workflow\nspec: {states: [open]}");
    assert!(sanitize(&before, &mut other).is_empty());
}

#[test]
fn changes_read_as_seed_004_s_page_lists_them() {
    let before = yaml("spec:\n  fields:\n    resolution: {type: text}\n    old: {type: string}\n");
    let after = yaml(
        "spec:\n  fields:\n    resolution: {type: text, required: true}\n    severity: {type: string, enum: [critical, high]}\n",
    );
    assert_eq!(
        changes(&before, &after),
        [
            "added: spec.fields.resolution.required = true",
            "added: spec.fields.severity = {type: string, enum: [critical, high]}",
            "removed: spec.fields.old",
        ]
    );
    let before = yaml("spec: {fields: {resolution: {type: text, required: false}}}");
    let after = yaml("spec: {fields: {resolution: {type: text, required: true}}}");
    assert_eq!(
        changes(&before, &after),
        ["modified: spec.fields.resolution.required = true"]
    );
    assert!(changes(&after, &after).is_empty());
}

#[test]
fn the_digest_is_the_diff_s_so_another_proposal_has_another_digest() {
    let (patch, first) = patch_digest("c.yaml", "a: 1\n", "a: 2\n");
    assert!(patch.contains("-a: 1\n+a: 2"), "{patch}");
    assert!(first.starts_with("sha256:") && first.len() == 71);
    assert_eq!(patch_digest("c.yaml", "a: 1\n", "a: 2\n").1, first);
    assert_ne!(patch_digest("c.yaml", "a: 1\n", "a: 3\n").1, first);
    assert_ne!(patch_digest("d.yaml", "a: 1\n", "a: 2\n").1, first);
}

fn spec(decision: Option<Decision>) -> HealerTicketSpec {
    HealerTicketSpec {
        source: TicketSource::Runtime,
        target: TicketTarget {
            contract_fqn: Some("entity/helpdesk/ticket".into()),
            ..TicketTarget::default()
        },
        error: "KeyError: 'resolution'".into(),
        stacktrace: None,
        context: BTreeMap::new(),
        priority: None,
        decision,
    }
}

fn status(phase: TicketPhase, tier: u8, fixable_by: FixableBy, method: Option<ProposalMethod>) -> HealerTicketStatus {
    HealerTicketStatus {
        phase: Some(phase),
        classification: Some(Classification {
            error_type: "runtime_500".into(),
            tier,
            fixable_by,
            priority: Priority::Critical,
        }),
        proposal: method.map(|method| TicketProposal {
            method,
            confidence: 0.5,
            explanation: "add resolution".into(),
            changes: vec![],
            removed: vec![],
            contract_path: None,
            base_commit: None,
            before: None,
            after: None,
            patch_digest: format!("sha256:{}", "a".repeat(64)),
        }),
        ..HealerTicketStatus::default()
    }
}

fn configured() -> TicketTarget {
    TicketTarget {
        contract_fqn: Some("entity/helpdesk/ticket".into()),
        repository: Some(GitSource {
            url: "https://git.example/app.git".into(),
            ..GitSource::default()
        }),
        contract_schema: Some("contract.schema.json".into()),
        healer: Some(HealerSpec {
            open_ai: Some(OpenAiHealer {
                base_url: "https://llm.example/v1".into(),
                model: "m".into(),
                secret_ref: None,
                max_tokens: 4096,
            }),
            ..HealerSpec::default()
        }),
        ..TicketTarget::default()
    }
}

fn decision(verdict: Verdict, digest: char) -> Option<Decision> {
    Some(Decision {
        decision: verdict,
        reason: Some("because".into()),
        approved_by: "alice".into(),
        patch_digest: Some(format!("sha256:{}", digest.to_string().repeat(64))),
    })
}

#[test]
fn each_phase_and_decision_leads_to_one_step() {
    use TicketPhase::*;
    let target = configured();
    let contract = FixableBy::Contract;
    let cases: Vec<(&str, Option<Decision>, HealerTicketStatus, Step)> = vec![
        ("queued", None, status(Queued, 3, contract, None), Step::Propose),
        (
            "crashed while analysing",
            None,
            status(Analyzing, 3, contract, None),
            Step::Propose,
        ),
        (
            "a generator bug failed at intake",
            None,
            status(Failed, 3, FixableBy::Generator, None),
            Step::Wait,
        ),
        (
            "awaits a human",
            None,
            status(Proposed, 3, contract, Some(ProposalMethod::LlmRuntime)),
            Step::Wait,
        ),
        (
            "tier 1 needs no human",
            None,
            status(Proposed, 1, contract, Some(ProposalMethod::Deterministic)),
            Step::Apply,
        ),
        (
            "approved this patch",
            decision(Verdict::Approved, 'a'),
            status(Proposed, 3, contract, Some(ProposalMethod::LlmRuntime)),
            Step::Apply,
        ),
        (
            "rejected",
            decision(Verdict::Rejected, 'a'),
            status(Proposed, 3, contract, Some(ProposalMethod::LlmRuntime)),
            Step::Reject,
        ),
        (
            "crashed while applying",
            decision(Verdict::Approved, 'a'),
            status(Approved, 3, contract, Some(ProposalMethod::LlmRuntime)),
            Step::Apply,
        ),
        (
            "ended",
            decision(Verdict::Approved, 'a'),
            status(Applied, 3, contract, Some(ProposalMethod::LlmRuntime)),
            Step::Wait,
        ),
    ];
    for (case, decided, status, expected) in cases {
        assert_eq!(next_step(&spec(decided), &status, &target, false), expected, "{case}");
    }
    // A deterministic proposal on a tier-3 ticket still waits for a person.
    assert_eq!(
        next_step(
            &spec(None),
            &status(Proposed, 3, contract, Some(ProposalMethod::Deterministic)),
            &target,
            false
        ),
        Step::Wait
    );
    // Approved, then the proposal changed under it: the digest is checked again.
    let Step::Fail(why) = next_step(
        &spec(decision(Verdict::Approved, 'b')),
        &status(Approved, 3, contract, Some(ProposalMethod::LlmRuntime)),
        &target,
        false,
    ) else {
        panic!("an approval of another patch applied")
    };
    assert!(why.contains("nothing was applied"), "{why}");
    // A ticket fixed in code without a HealRun template, or a contract ticket naming no
    // contract, says what it waits for instead of waiting silently.
    let Step::Unconfigured(why) = next_step(&spec(None), &status(Queued, 3, FixableBy::Code, None), &target, false)
    else {
        panic!()
    };
    assert!(why.contains("spec.target.healRun"), "{why}");
    let no_contract = TicketTarget {
        contract_fqn: None,
        path: Some("app.py".into()),
        ..configured()
    };
    let Step::Unconfigured(why) = next_step(&spec(None), &status(Queued, 3, contract, None), &no_contract, false)
    else {
        panic!()
    };
    assert!(why.contains("spec.target.contractFqn"), "{why}");
    let stale = next_step(
        &spec(decision(Verdict::Approved, 'b')),
        &status(Proposed, 3, contract, Some(ProposalMethod::LlmRuntime)),
        &target,
        false,
    );
    let Step::Fail(why) = stale else { panic!("{stale:?}") };
    assert!(
        why.contains("is for patch sha256:bbbb") && why.contains("nothing was applied"),
        "{why}"
    );
}

#[test]
fn a_pushed_fix_with_a_regenerate_command_waits_for_its_regeneration_in_approved() {
    use TicketPhase::*;
    let regenerate = Regenerate {
        image: "ghcr.io/acme/forge:1.4".into(),
        command: "python3 generate.py".into(),
        timeout_seconds: 600,
    };
    let with_command = TicketTarget {
        regenerate: Some(regenerate.clone()),
        ..configured()
    };
    let approved = status(Approved, 1, FixableBy::Contract, Some(ProposalMethod::Deterministic));
    let mut pushed = approved.clone();
    pushed.apply = Some(ApplyStatus {
        branch: Some("kubeheal/ht-1".into()),
        commit: Some("0123abcd".into()),
        ..ApplyStatus::default()
    });
    let cases = [
        ("not pushed yet: applied first", &approved, &with_command, Step::Apply),
        ("pushed: regenerated", &pushed, &with_command, Step::Regenerate),
        (
            "pushed, the command removed since: the apply ends it",
            &pushed,
            &configured(),
            Step::Apply,
        ),
    ];
    for (case, status, target, expected) in cases {
        assert_eq!(next_step(&spec(None), status, target, false), expected, "{case}");
    }
    let mut applied = pushed.clone();
    applied.phase = Some(Applied);
    assert_eq!(
        next_step(&spec(None), &applied, &with_command, false),
        Step::Wait,
        "ended"
    );
    // The operator's `--ticket-target` may name the command; a ticket's own wins.
    let bare = TicketTarget {
        contract_fqn: Some("entity/helpdesk/ticket".into()),
        ..TicketTarget::default()
    };
    let merged = effective_target(&bare, Some(&with_command));
    assert_eq!(merged.regenerate.as_ref(), Some(&regenerate));
    let own = Regenerate {
        command: "make generate".into(),
        ..regenerate
    };
    let mine = TicketTarget {
        regenerate: Some(own.clone()),
        ..bare
    };
    assert_eq!(effective_target(&mine, Some(&with_command)).regenerate, Some(own));
}

#[test]
fn a_contract_ticket_with_nowhere_to_go_says_what_is_missing() {
    let queued = status(TicketPhase::Queued, 3, FixableBy::Contract, None);
    let bare = TicketTarget {
        contract_fqn: Some("entity/helpdesk/ticket".into()),
        ..TicketTarget::default()
    };
    let Step::Unconfigured(why) = next_step(&spec(None), &queued, &bare, false) else {
        panic!()
    };
    assert!(
        why.contains("target.repository")
            && why.contains("target.contractSchema")
            && why.contains("target.healer.openAI"),
        "{why}"
    );
    // Tier 1 needs no model; the operator's defaults fill in what the ticket leaves out.
    let tier1 = status(TicketPhase::Queued, 1, FixableBy::Contract, None);
    let defaults = TicketTarget {
        healer: None,
        ..configured()
    };
    let merged = effective_target(&bare, Some(&defaults));
    assert_eq!(merged.contract_fqn, bare.contract_fqn);
    assert_eq!(next_step(&spec(None), &tier1, &merged, false), Step::Propose);
    let Step::Unconfigured(why) = next_step(&spec(None), &queued, &merged, false) else {
        panic!()
    };
    assert!(
        why.contains("target.healer.openAI") && !why.contains("target.repository"),
        "{why}"
    );
    // A Code Healer API without a URL asks the operator's own; without one the ticket waits for
    // a URL instead of failing, so that setting it later lets it go on.
    let api_without_url = TicketTarget {
        healer: Some(HealerSpec {
            code_healer_api: Some(CodeHealerApiHealer::default()),
            ..HealerSpec::default()
        }),
        ..configured()
    };
    let Step::Unconfigured(why) = next_step(&spec(None), &queued, &api_without_url, false) else {
        panic!()
    };
    assert!(
        why.contains("codeHealerApi.url") && why.contains("CODE_HEALER_URL"),
        "{why}"
    );
    assert_eq!(next_step(&spec(None), &queued, &api_without_url, true), Step::Propose);
    assert_eq!(next_step(&spec(None), &tier1, &api_without_url, false), Step::Propose);
}

#[test]
fn the_commit_names_the_ticket_and_the_patch_it_applies() {
    let message = commit_message(
        "ht-0123",
        "entity/helpdesk/ticket",
        "Add 'resolution' field (type: text) to fix KeyError on PATCH.",
        &["added: spec.fields.resolution = {type: text}".into()],
        Some("alice"),
        "sha256:abc",
    );
    assert!(
        message.starts_with("fix(entity/helpdesk/ticket): Add 'resolution' field (type: text) to fix KeyError on PATCH.\n\n- added: spec.fields.resolution = {type: text}\n"),
        "{message}"
    );
    assert!(
        message.contains("\nKubeheal-Ticket: ht-0123\nKubeheal-Patch: sha256:abc\nApproved-by: alice\n"),
        "{message}"
    );
    assert_eq!(branch("ht-0123"), "kubeheal/ht-0123");
}

#[test]
fn a_ticket_fixed_in_code_follows_its_heal_run_to_the_end() {
    use crate::api::heal_run::{HealResult, HealRunPhase, HealRunStatus};
    let mut target = configured();
    target.heal_run = Some(
        serde_json::from_value(serde_json::json!({"source": {"url": "https://git.example/app.git"}})).expect("a spec"),
    );
    for phase in [TicketPhase::Queued, TicketPhase::Analyzing, TicketPhase::Proposed] {
        assert_eq!(
            next_step(&spec(None), &status(phase, 3, FixableBy::Code, None), &target, false),
            Step::HealRun,
            "{phase:?}"
        );
    }
    let run = |phase, commit: Option<&str>| HealRunStatus {
        phase: Some(phase),
        message: Some("the build passes after 1 cycle(s)".into()),
        result: Some(HealResult {
            branch: Some("kubeheal/app".into()),
            commit: commit.map(Into::into),
            ..HealResult::default()
        }),
        ..HealRunStatus::default()
    };
    assert_eq!(follow("ht-1-heal", None).0, TicketPhase::Analyzing);
    assert_eq!(
        follow("ht-1-heal", Some(&run(HealRunPhase::Running, None))).0,
        TicketPhase::Analyzing
    );
    assert_eq!(
        follow("ht-1-heal", Some(&run(HealRunPhase::AwaitingApproval, None))).0,
        TicketPhase::Proposed
    );
    let (phase, why, apply) = follow("ht-1-heal", Some(&run(HealRunPhase::Healed, Some("c0ffee"))));
    assert_eq!(
        (phase, apply.and_then(|a| a.commit)),
        (TicketPhase::Applied, Some("c0ffee".into()))
    );
    assert!(why.contains("healed by HealRun ht-1-heal"), "{why}");
    let (phase, why, _) = follow("ht-1-heal", Some(&run(HealRunPhase::Healed, None)));
    assert_eq!(phase, TicketPhase::Failed, "healed without a commit fixed nothing");
    assert!(why.contains("committed no fix"), "{why}");
    assert_eq!(
        follow("ht-1-heal", Some(&run(HealRunPhase::Failed, None))).0,
        TicketPhase::Failed
    );
    // The run carries the error and its trace as its incident, named after the ticket.
    let made = heal_run_spec(target.heal_run.as_ref().expect("a template"), &spec(None), "ht-1");
    let incident = made.incident.expect("an incident");
    assert_eq!(
        (incident.error.as_str(), incident.ticket.as_deref()),
        ("KeyError: 'resolution'", Some("ht-1"))
    );
    assert_eq!(heal_run_name("ht-1"), "ht-1-heal");
}

#[test]
fn contract_fixes_are_proposed_by_a_model_or_a_code_healer_and_by_one_of_them() {
    use crate::api::shared::BuiltinHealer;
    let model = configured().healer.expect("a model");
    let code_healer = HealerSpec {
        code_healer_api: Some(CodeHealerApiHealer {
            url: Some("http://sam.healers:3000/api/heal".into()),
            secret_ref: None,
        }),
        ..HealerSpec::default()
    };
    assert_eq!(healer_problem(&model), None);
    assert_eq!(healer_problem(&code_healer), None);
    let both = HealerSpec {
        code_healer_api: code_healer.code_healer_api.clone(),
        ..model
    };
    assert!(
        healer_problem(&both)
            .expect("refused")
            .contains("both openAI and codeHealerApi")
    );
    let builtin = HealerSpec {
        builtin: Some(BuiltinHealer {}),
        ..HealerSpec::default()
    };
    let why = healer_problem(&builtin).expect("refused");
    assert!(why.contains("must be openAI or codeHealerApi"), "{why}");
    // A tier-2 ticket whose target names a Code Healer API is proposed like one naming a model.
    let queued = status(TicketPhase::Queued, 2, FixableBy::Contract, None);
    let target = TicketTarget {
        healer: Some(code_healer),
        ..configured()
    };
    assert_eq!(next_step(&spec(None), &queued, &target, false), Step::Propose);
}

#[test]
fn a_command_line_whose_numbers_moved_is_not_a_new_error_but_a_schema_message_with_another_index_is() {
    let before = vec![
        "Compilation failed: 2 error(s)".to_owned(),
        "domains/helpdesk/ticket.contract.yaml:14: 'tkt' does not match '^[A-Z]+$'".to_owned(),
    ];
    let after = vec![
        "Compilation failed: 3 error(s)".to_owned(),
        "domains/helpdesk/ticket.contract.yaml:15: 'tkt' does not match '^[A-Z]+$'".to_owned(),
        "Contract 'entity/helpdesk/ticket' requires 'entity/helpdesk/customer' which does not exist".to_owned(),
    ];
    assert_eq!(introduced_ignoring_numbers(&before, &after), [after[2].clone()]);
    // A number is not a wildcard for words: a different value is a different error.
    assert_eq!(
        introduced_ignoring_numbers(
            &["'tkt' does not match".to_owned()],
            &["'abc' does not match".to_owned()]
        ),
        ["'abc' does not match"]
    );
    assert!(introduced_ignoring_numbers(&before, &before).is_empty());
    // A JSON Schema's numbers are indexes and values: the same error elsewhere is new.
    let schema = vec!["spec.transitions.0.to: 'x' is not one of ['open']".to_owned()];
    let moved = vec![
        schema[0].clone(),
        "spec.transitions.2.to: 'x' is not one of ['open']".to_owned(),
    ];
    assert_eq!(introduced(&schema, &moved), [moved[1].clone()]);
    // Twice the error the contract had once is one more.
    let twice = vec![schema[0].clone(), schema[0].clone()];
    assert_eq!(introduced(&schema, &twice), [schema[0].clone()]);
}
