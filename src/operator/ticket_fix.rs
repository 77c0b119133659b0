//! The HealerTicket controller, fixing half (seed 004): after intake queued a contract ticket,
//! proposes its fix (tier 1: the deterministic normaliser, applied at once; tiers 2-3: the
//! model, then `Proposed` until a human decides), applies an approved fix as a commit on the
//! ticket's heal branch, and records a rejection. A ticket fixed in code gets a HealRun, and
//! follows it. What to do is `core::ticket_fix`'s decision;
//! this module does the Git, Secret and model work and writes the outcome.
//!
//! Nothing is written to the repository before the new contract passes the repository's schema:
//! a failed validation leaves the branch exactly as it was. An apply finds the commit an
//! interrupted earlier attempt made (by its trailers) instead of committing twice. With a
//! regenerate command the pushed fix waits in `Approved` for its code regeneration
//! (`regenerate`), which commits the generated code after it or reverts it.

mod command_job;
mod regenerate;
mod validate;

use std::time::Duration;

use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;
use kube::api::{Api, Patch, PatchParams, PostParams};
use kube::runtime::controller::Action as Requeue;
use kube::{Resource, ResourceExt};
use serde_json::json;
use tracing::info;

use super::Context;
use crate::api::heal_run::HealRun;
use crate::api::healer_ticket::{
    ApplyStatus, HealerTicket, HealerTicketStatus, ProposalMethod, TicketEvent, TicketPhase, TicketProposal,
    TicketTarget,
};
use crate::api::shared::{MANAGED_BY, SecretKeyRef, wire_name};
use crate::confined::ConfinedDir;
use crate::core::format::short_commit;
use crate::core::heal_run::HealerKind;
use crate::core::heal_run::Note;
use crate::core::healer_ticket::settle;
use crate::core::notify;
use crate::core::redact::redact;
use crate::core::ticket_fix::{
    PATCH_TRAILER, Step, TICKET_TRAILER, branch, changes, commit_message, contract_path, effective_target, follow,
    heal_run_name, heal_run_spec, healer_problem, next_step, patch_digest, sanitize,
};
use crate::git::Repo;
use crate::healer::Healer;
use crate::healer::contract::{ContractSchema, normalize_contract, own_violations};
use crate::healer::contract_model::{self, Answer, Proposer, Question, Refusal};
use crate::healer::factory::{self, Credentials, service_urls};
use crate::healer::openai::OpenAi;
use validate::{Found, Validators};

/// The label naming the HealerTicket a HealRun heals: the ticket controller watches those runs.
pub const TICKET_LABEL: &str = "kubeheal.dev/healerticket";

/// Largest contract a proposal carries (the status holds it twice, before and after).
const MAX_CONTRACT: u64 = 64 * 1024;
/// Largest contract schema read.
const MAX_SCHEMA: u64 = 1024 * 1024;
/// Most schemas read beside the contract schema for its `$ref`s.
const MAX_SIBLINGS: usize = 50;
/// How long to wait before trying again after the repository or the API server failed.
const RETRY: Duration = Duration::from_secs(30);
/// How often a ticket waiting for its turn in the analysis queue looks again by itself.
const QUEUE_RECHECK: Duration = Duration::from_secs(300);

/// Why a step did not finish.
enum Failure {
    /// The repository or a Secret could not be reached: tried again later.
    Transient(String),
    /// No fix can come of it: the ticket ends `Failed` with this message.
    Final(String),
}

impl From<crate::git::GitError> for Failure {
    fn from(error: crate::git::GitError) -> Self {
        if error.is_transient() {
            Failure::Transient(format!("the repository: {error}"))
        } else {
            Failure::Final(format!("the repository: {error}"))
        }
    }
}

/// What a step ended in: the status to write and the event to announce.
struct Outcome {
    status: HealerTicketStatus,
    note: Note,
}

/// Takes the ticket one step further in the fixing half, if it has one to take; `None` when it
/// has nothing to do now (intake's or a human's turn).
pub async fn advance(
    ticket: &HealerTicket,
    status: &HealerTicketStatus,
    ctx: &Context,
) -> Result<Option<Requeue>, kube::Error> {
    let target = effective_target(&ticket.spec.target, ctx.settings.ticket_target.as_ref());
    let step = next_step(&ticket.spec, status, &target, ctx.settings.healer_url.is_some());
    let now = Timestamp::now();
    let mut written = Written {
        version: ticket.resource_version(),
        status: status.clone(),
    };
    // Dropped when this step's outcome is written: the next ticket in line starts then.
    let mut worker = None;
    let outcome = match step {
        Step::Wait => return Ok(None),
        Step::Unconfigured(why) => {
            // Said once in the conditions; the ticket waits for its spec or the operator to change.
            let shown = status
                .conditions
                .iter()
                .any(|c| c.type_ == crate::api::shared::condition::RECONCILING && c.message == why);
            if !shown {
                let mut next = status.clone();
                settle(&mut next, TicketPhase::Queued, &why, now);
                write(ticket, ctx, &mut written, next, None).await?;
            }
            return Ok(None);
        }
        Step::Reject => {
            let decision = ticket.spec.decision.as_ref();
            let why = format!(
                "Rejected by {}{}",
                decision.map_or("someone", |d| d.approved_by.as_str()),
                decision
                    .and_then(|d| d.reason.as_deref())
                    .map(|r| format!(": {r}"))
                    .unwrap_or_default()
            );
            Ok(ended(status.clone(), TicketPhase::Rejected, why))
        }
        Step::Fail(why) => Ok(ended(status.clone(), TicketPhase::Failed, why)),
        Step::HealRun => return heal_in_code(ticket, &target, status, ctx, &mut written).await,
        Step::Propose => {
            // Seed 004's queue: a worker when it is this ticket's turn, held until the outcome
            // is written; otherwise the worker that comes free wakes it. The slow re-check is
            // only a safety net (a ticket ahead in line deleted while it waited, say).
            let Some(held) = ctx.analysis.take(ticket, status).await else {
                return Ok(Some(Requeue::requeue(QUEUE_RECHECK)));
            };
            worker = Some(held);
            // Claimed with a write over the version this reconcile read, before the model is
            // paid: a reconcile that started from a cache not yet showing an earlier outcome
            // gets a cheap conflict instead of proposing twice. A restart in the middle
            // proposes again.
            let mut analysing = status.clone();
            settle(&mut analysing, TicketPhase::Analyzing, "proposing a fix", now);
            if !write(ticket, ctx, &mut written, analysing, None).await? {
                return Ok(Some(Requeue::requeue(Duration::from_secs(1))));
            }
            let mut next = written.status.clone();
            match propose(ticket, &target, &next, ctx).await {
                Ok(proposal) if proposal.method == ProposalMethod::Deterministic => {
                    // Tier 1 needs no approval (seed 004): applied at once.
                    next.proposal = Some(proposal);
                    apply(ticket, &target, &next, ctx).await.or_else(|f| failed(f, next))
                }
                Ok(proposal) => {
                    let message = format!(
                        "{} (confidence {}): waiting for approval of patch {}",
                        proposal.explanation, proposal.confidence, proposal.patch_digest
                    );
                    next.proposal = Some(proposal);
                    settle(&mut next, TicketPhase::Proposed, &message, Timestamp::now());
                    Ok(Outcome {
                        status: next,
                        note: note(false, "Proposed", message),
                    })
                }
                Err(failure) => failed(failure, next),
            }
        }
        Step::Apply => {
            // Claimed like a proposal (above) before the repository is touched; a human's
            // approval is shown while the work goes on.
            let mut approved = status.clone();
            settle(&mut approved, TicketPhase::Approved, "applying the fix", now);
            if !write(ticket, ctx, &mut written, approved, None).await? {
                return Ok(Some(Requeue::requeue(Duration::from_secs(1))));
            }
            let next = written.status.clone();
            apply(ticket, &target, &next, ctx).await.or_else(|f| failed(f, next))
        }
        Step::Regenerate => match regenerate::step(ticket, &target, status, ctx).await {
            // Its Job's changes wake the ticket; the requeue is the safety net.
            Ok(regenerate::Progress::Waiting(after)) => return Ok(Some(Requeue::requeue(after))),
            Ok(regenerate::Progress::Done(outcome)) => Ok(*outcome),
            Err(failure) => failed(failure, status.clone()),
        },
    };
    match outcome {
        Ok(outcome) => {
            let done = write(ticket, ctx, &mut written, outcome.status, Some(&outcome.note)).await?;
            drop(worker);
            Ok(Some(if done {
                Requeue::await_change()
            } else {
                Requeue::requeue(Duration::from_secs(1))
            }))
        }
        Err(why) => {
            info!(ticket = %ticket.name_any(), %why, "a ticket's fix will be tried again");
            let mut waiting = written.status.clone();
            let phase = waiting.phase.unwrap_or(TicketPhase::Queued);
            settle(&mut waiting, phase, &format!("will try again: {why}"), now);
            write(ticket, ctx, &mut written, waiting, None).await?;
            Ok(Some(Requeue::requeue(RETRY)))
        }
    }
}

/// The ticket's status as this reconcile last wrote it, and the object's version then.
struct Written {
    version: Option<String>,
    status: HealerTicketStatus,
}

/// `status` ended in `phase` (`Failed` is announced as a warning).
fn ended(mut status: HealerTicketStatus, phase: TicketPhase, why: String) -> Outcome {
    finish(&mut status, phase, &why, Timestamp::now());
    let (warning, reason) = match phase {
        TicketPhase::Failed => (true, "Failed"),
        TicketPhase::Rejected => (false, "Rejected"),
        _ => (false, "Applied"),
    };
    Outcome {
        status,
        note: note(warning, reason, why),
    }
}

/// A ticket fixed in code: creates its HealRun (owned by the ticket, so the run's changes wake
/// the ticket and the run goes when the ticket does) and takes the run's progress as its own.
async fn heal_in_code(
    ticket: &HealerTicket,
    target: &TicketTarget,
    status: &HealerTicketStatus,
    ctx: &Context,
    written: &mut Written,
) -> Result<Option<Requeue>, kube::Error> {
    let namespace = ticket.namespace().unwrap_or_default();
    let runs: Api<HealRun> = Api::namespaced(ctx.client.clone(), &namespace);
    let name = heal_run_name(&ticket.name_any());
    let run = match runs.get_opt(&name).await? {
        Some(run) => Some(run),
        None => {
            let Some(template) = &target.heal_run else {
                return Ok(None);
            };
            let mut run = HealRun::new(&name, heal_run_spec(template, &ticket.spec, &ticket.name_any()));
            run.metadata.owner_references = ticket.controller_owner_ref(&()).map(|o| vec![o]);
            run.metadata.labels = Some(
                [
                    (MANAGED_BY.0.to_owned(), MANAGED_BY.1.to_owned()),
                    (TICKET_LABEL.to_owned(), label_value(&ticket.name_any())),
                ]
                .into(),
            );
            match runs.create(&PostParams::default(), &run).await {
                Ok(run) => Some(run),
                Err(kube::Error::Api(e)) if e.code == 409 => runs.get_opt(&name).await?,
                // The template is refused by the API server: nothing will change that but a new
                // ticket, so the ticket ends saying why.
                Err(kube::Error::Api(e)) if e.code == 422 => {
                    let why = format!("the HealRun {name} from target.healRun was refused: {}", e.message);
                    let outcome = ended(status.clone(), TicketPhase::Failed, why);
                    write(ticket, ctx, written, outcome.status, Some(&outcome.note)).await?;
                    return Ok(None);
                }
                Err(e) => return Err(e),
            }
        }
    };
    let (phase, why, apply) = follow(&name, run.as_ref().and_then(|r| r.status.as_ref()));
    if status.phase == Some(phase) {
        return Ok(None); // the run's progress within a phase is the run's to show
    }
    let mut next = status.clone();
    next.apply = apply.or(next.apply);
    let outcome = match phase {
        TicketPhase::Applied | TicketPhase::Failed => ended(next, phase, why),
        _ => {
            settle(&mut next, phase, &why, Timestamp::now());
            let reason = if phase == TicketPhase::Proposed {
                "Proposed"
            } else {
                "Healing"
            };
            Outcome {
                status: next,
                note: note(false, reason, why),
            }
        }
    };
    write(ticket, ctx, written, outcome.status, Some(&outcome.note)).await?;
    Ok(None)
}

/// A label value naming the ticket: its name, or for a name past a label's 63 characters, its
/// start and a digest of the whole (the label only selects the runs tickets own).
fn label_value(name: &str) -> String {
    if name.len() <= 63 {
        return name.to_owned();
    }
    let digest = crate::core::patch::digest(name);
    let hex = digest.trim_start_matches("sha256:");
    format!(
        "{}-{}",
        crate::parse::truncate_bytes(name, 50).trim_end_matches(['-', '.']),
        &hex[..12]
    )
}

/// A failed step: `Final` ends the ticket `Failed` (from `status`), `Transient` is retried.
fn failed(failure: Failure, status: HealerTicketStatus) -> Result<Outcome, String> {
    match failure {
        Failure::Transient(why) => Err(why),
        Failure::Final(why) => Ok(ended(status, TicketPhase::Failed, why)),
    }
}

fn finish(status: &mut HealerTicketStatus, phase: TicketPhase, why: &str, now: Timestamp) {
    status.resolved_at = Some(Time(now));
    status.resolution_note = Some(why.to_owned());
    settle(status, phase, why, now);
}

fn note(warning: bool, reason: &'static str, message: String) -> Note {
    Note {
        warning,
        reason,
        message,
    }
}

/// The ticket's clone, fetched, checked out at the target's revision; and that commit.
async fn checkout(ticket: &HealerTicket, target: &TicketTarget, ctx: &Context) -> Result<(Repo, String), Failure> {
    let source = target
        .repository
        .as_ref()
        .ok_or_else(|| Failure::Final("no repository to fix the contract in".into()))?;
    // The operator's own defaults are the administrator's choice; a ticket's are its author's.
    if ticket.spec.target.repository.is_some()
        && let Some(why) = ctx.settings.url_policy.refuse_source(&source.url)
    {
        return Err(Failure::Final(why));
    }
    let token = repository_token(ticket, target, ctx).await?;
    let namespace = ticket.namespace().unwrap_or_default();
    // `.tickets` cannot be a namespace's name, so no HealRun's clone is ever this folder.
    let dir = ctx
        .settings
        .work_dir
        .join(".tickets")
        .join(namespace)
        .join(ticket.name_any());
    let repo = Repo::at(dir).with_token(token);
    repo.sync(&source.url).await?;
    let commit = repo.resolve(source.revision.as_deref()).await?;
    repo.checkout(&commit).await?;
    Ok((repo, commit))
}

/// The token of the repository's `secretRef` (key `token`, as for a HealRun's source).
async fn repository_token(
    ticket: &HealerTicket,
    target: &TicketTarget,
    ctx: &Context,
) -> Result<Option<String>, Failure> {
    match target.repository.as_ref().and_then(|s| s.secret_ref.as_ref()) {
        Some(r) => {
            let key = SecretKeyRef {
                name: r.name.clone(),
                key: "token".into(),
            };
            secret(ticket, ctx, &key).await
        }
        None => Ok(None),
    }
}

/// A key of a Secret in the ticket's namespace.
async fn secret(ticket: &HealerTicket, ctx: &Context, key: &SecretKeyRef) -> Result<Option<String>, Failure> {
    let namespace = ticket.namespace().unwrap_or_default();
    let secrets: Api<Secret> = Api::namespaced(ctx.client.clone(), &namespace);
    let secret = secrets
        .get_opt(&key.name)
        .await
        .map_err(|e| Failure::Transient(format!("reading Secret {}: {e}", key.name)))?
        .ok_or_else(|| {
            Failure::Final(format!(
                "Secret {} does not exist in namespace {namespace}; create it or fix the secretRef",
                key.name
            ))
        })?;
    Ok(secret
        .data
        .and_then(|d| d.get(&key.key).cloned())
        .map(|v| String::from_utf8_lossy(&v.0).trim().to_owned()))
}

/// The contract's path, its text, and the repository's schema (when the target names one), at
/// the clone's checkout.
async fn read_contract(
    repo: &Repo,
    target: &TicketTarget,
    commit: &str,
) -> Result<(String, String, Option<ContractSchema>), Failure> {
    let fqn = target.contract_fqn.as_deref().unwrap_or_default();
    let path = contract_path(fqn, target.contract_layout.as_deref()).map_err(Failure::Final)?;
    let files: ConfinedDir = repo.files().map_err(|e| Failure::Final(e.to_string()))?;
    let contract = files.read_text(&path, MAX_CONTRACT).map_err(|e| {
        Failure::Final(if e.is_not_found() {
            format!(
                "the contract {fqn} is not in the repository at commit {}: {path} does not exist (check target.contractLayout)",
                short_commit(commit)
            )
        } else {
            format!("cannot read the contract {path}: {e}")
        })
    })?;
    let Some(template) = target.contract_schema.as_deref() else {
        return Ok((path, contract, None));
    };
    let kind = serde_yaml_ng::from_str::<serde_yaml_ng::Value>(&contract)
        .ok()
        .and_then(|c| c.get("kind").and_then(|k| k.as_str()).map(str::to_lowercase));
    let schema_path = match (template.contains("{kind}"), kind) {
        (false, _) => template.to_owned(),
        (true, Some(kind)) if kind.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') => {
            template.replace("{kind}", &kind)
        }
        (true, _) => {
            return Err(Failure::Final(format!(
                "{path} has no plain `kind`, and the contract schema {template} is chosen by it"
            )));
        }
    };
    let at = short_commit(commit);
    let schema_text = files.read_text(&schema_path, MAX_SCHEMA).map_err(|e| {
        Failure::Final(format!(
            "cannot read the contract schema {schema_path} at commit {at}: {e} (check target.contractSchema)"
        ))
    })?;
    // The other schemas beside it, which its `$ref`s may name by their `$id`.
    let folder = schema_path.rsplit_once('/').map_or("", |(folder, _)| folder);
    let mut siblings = Vec::new();
    for sibling in repo.tracked_files().await {
        let beside = sibling.rsplit_once('/').map_or("", |(folder, _)| folder) == folder;
        let schema_like = [".json", ".yaml", ".yml"].iter().any(|e| sibling.ends_with(e));
        if beside
            && schema_like
            && sibling != schema_path
            && siblings.len() < MAX_SIBLINGS
            && let Ok(text) = files.read_text(&sibling, MAX_SCHEMA)
        {
            siblings.push((sibling, text));
        }
    }
    let schema = ContractSchema::parse_with(&schema_text, &schema_path, &siblings).map_err(Failure::Final)?;
    Ok((path, contract, Some(schema)))
}

/// A proposal for the ticket: tier 1 from the normaliser, tiers 2-3 from the model.
async fn propose(
    ticket: &HealerTicket,
    target: &TicketTarget,
    status: &HealerTicketStatus,
    ctx: &Context,
) -> Result<TicketProposal, Failure> {
    let tier = status.classification.as_ref().map_or(2, |c| c.tier);
    let (repo, commit) = checkout(ticket, target, ctx).await?;
    let (path, before, schema) = read_contract(&repo, target, &commit).await?;
    let at = short_commit(&commit).to_owned();
    let validators = Validators::new(ticket, target, ctx, schema, (&commit, &path, &before)).await?;
    let found = validators.errors(&before).await.map_err(|failure| match failure {
        Failure::Final(e) => Failure::Final(format!("{path} at {at}: {e}")),
        transient => transient,
    })?;
    let errors = found.all();
    let (after, changed, removed, explanation, method, confidence) = if tier == 1 {
        // A ticket fixes its own error: the contract's other errors have tickets of their own.
        let path_said = ticket.spec.context.get("path").map(String::as_str);
        let mine = own_violations(&ticket.spec.error, path_said, &errors).unwrap_or_else(|| errors.clone());
        let Some((after, changed)) = normalize_contract(&before, &mine).map_err(Failure::Final)? else {
            return Err(Failure::Final(if errors.is_empty() {
                format!("{path} passes validation at {at}: there is nothing to normalise (was it fixed already?)")
            } else {
                format!(
                    "{path} at {at} has no error the deterministic normaliser can fix: {}",
                    errors.join("; ")
                )
            }));
        };
        let added = validators.errors(&after).await?.introduced_since(&found);
        if !added.is_empty() {
            return Err(Failure::Final(format!(
                "normalising {path} ({}) would add errors: {}",
                changed.join(", "),
                added.join("; ")
            )));
        }
        let explanation = format!("Deterministic normalization: {}", changed.join(", "));
        (
            after,
            changed,
            Vec::new(),
            explanation,
            ProposalMethod::Deterministic,
            1.0,
        )
    } else {
        let accepted = ask_model(ticket, target, &repo, (&path, &before, &found), &validators, tier, ctx).await?;
        let method = if tier >= 3 {
            ProposalMethod::LlmRuntime
        } else {
            ProposalMethod::LlmStructural
        };
        let confidence = if tier >= 3 { 0.5 } else { 0.7 };
        (
            accepted.after,
            accepted.changes,
            accepted.removed,
            accepted.explanation,
            method,
            confidence,
        )
    };
    let (_, digest) = patch_digest(&path, &before, &after);
    Ok(TicketProposal {
        method,
        confidence,
        explanation,
        changes: changed,
        removed,
        contract_path: Some(path),
        base_commit: Some(commit),
        before: Some(before),
        after: Some(after),
        patch_digest: digest,
    })
}

/// The service a ticket's `target.healer` names.
enum Service {
    Model(OpenAi),
    CodeHealer(Box<dyn Healer>),
}

/// A model's answer that passed the checks.
struct Accepted {
    after: String,
    changes: Vec<String>,
    removed: Vec<String>,
    explanation: String,
}

/// Asks the ticket's model for the fix; what it is given is redacted, and what it answers is
/// sanitised, validated and must change something (seed 004's proposer).
#[allow(clippy::too_many_arguments)]
async fn ask_model(
    ticket: &HealerTicket,
    target: &TicketTarget,
    repo: &Repo,
    (path, before, errors): (&str, &str, &Found),
    validators: &Validators<'_>,
    tier: u8,
    ctx: &Context,
) -> Result<Accepted, Failure> {
    let healer = target.healer.as_ref().ok_or_else(|| {
        Failure::Final(
            "no model to propose a structural or runtime fix: set target.healer.openAI or target.healer.codeHealerApi"
                .into(),
        )
    })?;
    if let Some(why) = healer_problem(healer) {
        return Err(Failure::Final(why));
    }
    // The operator's own defaults are the administrator's choice; a ticket's are its author's.
    if ticket.spec.target.healer.is_some()
        && let Some(why) = service_urls(healer).find_map(|url| ctx.settings.url_policy.refuse_healer(url))
    {
        return Err(Failure::Final(why));
    }
    let (service, credential) = match (&healer.open_ai, &healer.code_healer_api) {
        (Some(open_ai), None) => {
            let key = match &open_ai.secret_ref {
                Some(key) => secret(ticket, ctx, key).await?,
                None => None,
            };
            let model = OpenAi::new(&open_ai.base_url, &open_ai.model, key.clone(), open_ai.max_tokens)
                .map_err(Failure::Final)?;
            (Service::Model(model), key.into_iter().collect::<Vec<_>>())
        }
        (None, Some(api)) => {
            let token = match &api.secret_ref {
                Some(key) => secret(ticket, ctx, key).await?,
                None => None,
            };
            // The one Code Healer API client, made as for a HealRun: the spec's URL and token,
            // else the operator's CODE_HEALER_URL and its token.
            let credentials = Credentials {
                code_healer_token: token,
                default_code_healer: ctx
                    .settings
                    .healer_url
                    .clone()
                    .map(|url| (url, ctx.settings.healer_token.clone())),
                ..Credentials::default()
            };
            let client = factory::build(&[HealerKind::CodeHealerApi], healer, &credentials)
                .map_err(Failure::Final)?
                .pop()
                .ok_or_else(|| Failure::Final("no Code Healer API to ask".into()))?;
            // Whichever token the client sends, neither reaches it in the text.
            let tokens = [credentials.code_healer_token, ctx.settings.healer_token.clone()];
            (Service::CodeHealer(client), tokens.into_iter().flatten().collect())
        }
        // Refused by healer_problem above.
        _ => return Err(Failure::Final("target.healer names no service".into())),
    };
    // The values no service may see: its own credentials and the repository's token.
    let mut secrets: Vec<String> = credential;
    secrets.extend(repository_token(ticket, target, ctx).await?);
    let hide = |text: &str| redact(text, &secrets);
    let (contract, hidden) = hide(before);
    if hidden > 0 {
        return Err(Failure::Final(format!(
            "{path} holds what looks like a secret ({hidden} value(s)); kubeheal does not send it to a model: move the secret out of the contract"
        )));
    }
    let spec = &ticket.spec;
    let error = hide(&spec.error).0;
    let stacktrace = spec.stacktrace.as_deref().map(|t| hide(t).0);
    let context = spec.context.iter().map(|(k, v)| (k.clone(), hide(v).0)).collect();
    let recent = repo.recent_changes(path, 3).await.unwrap_or_default();
    let recent = hide(&recent).0;
    let name = ticket.name_any();
    let question = Question {
        ticket: &name,
        fqn: target.contract_fqn.as_deref().unwrap_or_default(),
        contract_path: path,
        contract: &contract,
        error: &error,
        stacktrace: stacktrace.as_deref(),
        context: &context,
        recent_changes: &recent,
        tier,
    };
    let old: serde_yaml_ng::Value =
        serde_yaml_ng::from_str(before).map_err(|e| Failure::Final(format!("{path} is not YAML: {e}")))?;
    let proposer = match &service {
        Service::Model(model) => Proposer::Model(model),
        Service::CodeHealer(client) => Proposer::CodeHealer(client.as_ref()),
    };
    // Either answer is checked alike: sanitised, validated, and it must change something. A
    // validation that gave no verdict is no fault of the answer: the model is not paid for
    // another; the step is tried again later (the API server away) or ends (no verdict).
    let old = &old;
    let proposed = contract_model::propose(proposer, &question, |answer: Answer| async move {
        let refused = Refusal::Refused;
        let mut new: serde_yaml_ng::Value =
            serde_yaml_ng::from_str(&answer.contract).map_err(|e| refused(format!("not YAML: {e}")))?;
        let removed = sanitize(old, &mut new);
        let after = if removed.is_empty() {
            answer.contract.clone()
        } else {
            serde_yaml_ng::to_string(&new).map_err(|e| refused(e.to_string()))?
        };
        // The answer is YAML here, so a validator that fails gave no verdict on it (the API
        // server away, a command out of time): no fault of the answer.
        let added = validators
            .errors(&after)
            .await
            .map_err(Refusal::Undecided)?
            .introduced_since(errors);
        if !added.is_empty() {
            return Err(refused(format!(
                "the contract it gives fails validation: {}",
                added.join("; ")
            )));
        }
        let changed = changes(old, &new);
        if changed.is_empty() {
            return Err(refused("it changes nothing in the contract".into()));
        }
        let explanation = answer
            .explanation
            .clone()
            .unwrap_or_else(|| format!("Change {}", changed.join(", ")));
        Ok(Accepted {
            after,
            changes: changed,
            removed,
            explanation,
        })
    })
    .await;
    proposed.map_err(|refusal| match refusal {
        Refusal::Refused(why) => Failure::Final(why),
        Refusal::Undecided(failure) => failure,
    })
}

/// Commits the proposal's contract on the ticket's branch and pushes it; the outcome is
/// `Applied` with the commit.
async fn apply(
    ticket: &HealerTicket,
    target: &TicketTarget,
    status: &HealerTicketStatus,
    ctx: &Context,
) -> Result<Outcome, Failure> {
    let proposal = status
        .proposal
        .as_ref()
        .ok_or_else(|| Failure::Final("there is no proposal to apply".into()))?;
    let (Some(path), Some(before), Some(after)) = (&proposal.contract_path, &proposal.before, &proposal.after) else {
        return Err(Failure::Final(
            "the proposal does not carry the contract it changes".into(),
        ));
    };
    let (patch, digest) = patch_digest(path, before, after);
    if digest != proposal.patch_digest {
        return Err(Failure::Final(format!(
            "the proposal's contract does not match its digest {} (it was edited): nothing was applied",
            proposal.patch_digest
        )));
    }
    let name = ticket.name_any();
    let branch = branch(&name);
    let (repo, tip) = checkout(ticket, target, ctx).await?;
    let trailers = [(TICKET_TRAILER, name.as_str()), (PATCH_TRAILER, digest.as_str())];
    let done = repo
        .commit_with(&format!("refs/remotes/origin/{branch}"), &trailers)
        .await;
    let commit = match done {
        // An earlier attempt committed and pushed it, then stopped before recording it.
        Some(commit) => commit,
        None => {
            let (_, current, schema) = read_contract(&repo, target, &tip).await?;
            if &current != before {
                return Err(Failure::Final(format!(
                    "{path} changed since the proposal (made at {}, now at {}): nothing was applied; report the error again for a new proposal",
                    proposal.base_commit.as_deref().map(short_commit).unwrap_or("?"),
                    short_commit(&tip)
                )));
            }
            // Validated before anything is written: a contract that fails leaves the branch as it was.
            let validators = Validators::new(ticket, target, ctx, schema, (&tip, path, before)).await?;
            let errors = validators
                .errors(after)
                .await?
                .introduced_since(&validators.errors(before).await?);
            if !errors.is_empty() {
                return Err(Failure::Final(format!(
                    "the fixed contract fails validation at {}: {}; nothing was committed",
                    short_commit(&tip),
                    errors.join("; ")
                )));
            }
            let approved_by = ticket.spec.decision.as_ref().map(|d| d.approved_by.as_str());
            let fqn = target.contract_fqn.as_deref().unwrap_or_default();
            let message = commit_message(
                &name,
                fqn,
                &proposal.explanation,
                &proposal.changes,
                approved_by,
                &digest,
            );
            let commit = repo.commit_patch(&branch, &tip, &patch, &message).await?;
            repo.push(&branch).await?;
            commit
        }
    };
    let mut next = status.clone();
    next.apply = Some(ApplyStatus {
        branch: Some(branch.clone()),
        commit: Some(commit.clone()),
        rolled_back: false,
        error: None,
    });
    if target.regenerate.is_some() {
        // Not applied until the code follows (seed 004's Regenerate step): it waits, approved,
        // for its regeneration Job, which the next reconcile launches.
        let started = regenerate::started(&name);
        let why = regenerate::waiting_message(&commit, &branch, started.job_name.as_deref().unwrap_or_default());
        next.regenerate = Some(started);
        settle(&mut next, TicketPhase::Approved, &why, Timestamp::now());
        return Ok(Outcome {
            status: next,
            note: note(false, "Regenerating", why),
        });
    }
    let why = format!(
        "{} — committed as {} on {branch}",
        proposal.explanation,
        short_commit(&commit)
    );
    finish(&mut next, TicketPhase::Applied, &why, Timestamp::now());
    Ok(Outcome {
        status: next,
        note: note(false, "Applied", why),
    })
}

/// Writes the fixing half's fields of `next` over the status last written (`written`: a write
/// made from an older version is not forced), announcing its transition once. Another writer
/// in between (the ingest counting occurrences) is written over when it left the phase as it
/// was; `Ok(false)` when it moved the ticket on, which is then reconciled again.
async fn write(
    ticket: &HealerTicket,
    ctx: &Context,
    written: &mut Written,
    mut next: HealerTicketStatus,
    note: Option<&Note>,
) -> Result<bool, kube::Error> {
    let announce = ctx.notifier.as_ref().and_then(|notifier| {
        let event: TicketEvent = notify::to_announce(&next)?;
        next.notified = notify::with_notified(&next.notified, event);
        Some((notifier, event))
    });
    let mut status = json!({
        "phase": next.phase,
        "conditions": next.conditions,
        "proposal": next.proposal,
        "apply": next.apply,
        "regenerate": next.regenerate,
        "resolvedAt": next.resolved_at,
        "resolutionNote": next.resolution_note,
    });
    if announce.is_some() {
        status["notified"] = json!(next.notified);
    }
    let namespace = ticket.namespace().unwrap_or_default();
    let tickets: Api<HealerTicket> = Api::namespaced(ctx.client.clone(), &namespace);
    let name = ticket.name_any();
    let mut version = written.version.clone();
    for _ in 0..3 {
        let patch = json!({ "metadata": { "resourceVersion": version }, "status": status });
        match tickets
            .patch_status(&name, &PatchParams::default(), &Patch::Merge(&patch))
            .await
        {
            Ok(object) => {
                written.version = object.resource_version();
                written.status = next.clone();
                if let Some((notifier, event)) = announce {
                    notifier.enqueue(notify::Transition::of(ticket, &next, event, notifier.ticket_pages()));
                }
                if let Some(note) = note {
                    ctx.publish(note, "Fix", &ticket.object_ref(&())).await;
                    info!(
                        ticket = %name,
                        phase = %next.phase.map(|p| wire_name(&p)).unwrap_or_default(),
                        "{}",
                        redact(&note.message, &[]).0
                    );
                }
                return Ok(true);
            }
            Err(kube::Error::Api(e)) if e.code == 409 => {
                let fresh = tickets.get(&name).await?;
                let current = fresh.status.clone().unwrap_or_default();
                if current.phase != written.status.phase || current.notified != written.status.notified {
                    return Ok(false);
                }
                version = fresh.resource_version();
            }
            Err(e) => return Err(e),
        }
    }
    Ok(false)
}
