//! What a contract must satisfy, asked of every version the fixing half judges (the contract as
//! committed, a tier-1 normalisation, each model answer, the re-check before commit): the
//! repository's JSON Schema (`contractSchema`, checked in the operator) and its own validate
//! command (`validate`, run in an executor Job over the repository with the version in place).
//! The decisions are `core::ticket_validate`'s.
//!
//! A validation is waited for where it is asked, inside the step, rather than over several
//! reconciles: a model's answer cannot be asked for again on each reconcile without paying for
//! it again, and the steps that ask are few at a time (proposals hold a worker of the analysis
//! queue). A Job is named after what it judges, so a restarted operator, or the re-check before
//! commit asking of the same text, finds the Job that already answered instead of running another.

use std::time::Duration;

use kube::ResourceExt;
use tokio::time::Instant;
use tracing::info;

use super::{Context, Failure, command_job};
use crate::api::healer_ticket::{HealerTicket, TicketTarget, Validate};
use crate::api::shared::RunStatus;
use crate::core::patch::unified_diff;
use crate::core::redact::redact;
use crate::core::ticket_fix::{introduced, introduced_ignoring_numbers};
use crate::core::ticket_validate::{MAX_ERRORS, Validated, errors, job_name, timeout};
use crate::executor::Execution;
use crate::executor::job::{JobRequest, TOOL_CONTAINER, container_exit_code, container_log_tail, job_has_pod};
use crate::healer::contract::ContractSchema;

/// How often a running validation Job is looked at (in the watch cache: no API request).
const LOOK_EVERY: Duration = Duration::from_secs(1);
/// How long past its deadline a validation Job is waited for before the step is tried again
/// later (the Job controller ends a Job at its deadline; this covers a lost Pod).
const GRACE: Duration = Duration::from_secs(120);

/// The validators of one ticket's contract at one commit.
pub(super) struct Validators<'a> {
    schema: Option<ContractSchema>,
    command: Option<CommandCheck<'a>>,
}

/// The validate command, and what it needs to run a Job.
struct CommandCheck<'a> {
    validate: &'a Validate,
    ticket: &'a HealerTicket,
    target: &'a TicketTarget,
    ctx: &'a Context,
    /// The commit the contract versions are judged at.
    commit: String,
    /// The contract's path, and its text at `commit`: a version is the patch from it.
    path: String,
    committed: String,
    /// Redacted from what the command prints.
    secrets: Vec<String>,
}

impl<'a> Validators<'a> {
    /// The target's validators for the contract at `path`, whose text at `commit` is `committed`.
    pub(super) async fn new(
        ticket: &'a HealerTicket,
        target: &'a TicketTarget,
        ctx: &'a Context,
        schema: Option<ContractSchema>,
        (commit, path, committed): (&str, &str, &str),
    ) -> Result<Validators<'a>, Failure> {
        let command = match &target.validate {
            Some(validate) => {
                if let Some(why) = crate::core::ticket_validate::problem(validate) {
                    return Err(Failure::Final(why));
                }
                Some(CommandCheck {
                    validate,
                    ticket,
                    target,
                    ctx,
                    commit: commit.to_owned(),
                    path: path.to_owned(),
                    committed: committed.to_owned(),
                    secrets: command_job::secrets(ticket, target, ctx).await?,
                })
            }
            None => None,
        };
        if schema.is_none() && command.is_none() {
            return Err(Failure::Final(
                "nothing to validate the contract with: set target.contractSchema or target.validate".into(),
            ));
        }
        Ok(Validators { schema, command })
    }

    /// Every error the validators find in `contract` (a version of the contract at the commit).
    /// `Final` when the contract is not YAML or the command gave no verdict.
    pub(super) async fn errors(&self, contract: &str) -> Result<Found, Failure> {
        let schema = match &self.schema {
            Some(schema) => schema.check(contract).map_err(Failure::Final)?,
            None => Vec::new(),
        };
        let command = match &self.command {
            Some(command) => command.run(contract).await?,
            None => Vec::new(),
        };
        Ok(Found { schema, command })
    }
}

/// What the validators found in one version of the contract, each validator's apart: they are
/// compared differently ([`Found::introduced_since`]).
#[derive(Debug, Default)]
pub(super) struct Found {
    schema: Vec<String>,
    command: Vec<String>,
}

impl Found {
    /// Every error: the schema's, then the command's.
    pub(super) fn all(&self) -> Vec<String> {
        self.schema.iter().chain(&self.command).cloned().collect()
    }

    /// The errors found here and not in `before` (an earlier version): the schema's messages
    /// whole, the command's lines with their numbers ignored.
    pub(super) fn introduced_since(&self, before: &Found) -> Vec<String> {
        let mut added = introduced(&before.schema, &self.schema);
        added.extend(introduced_ignoring_numbers(&before.command, &self.command));
        added
    }
}

/// A failure of the API server about Job `name`: final when it refuses the Job itself (403: the
/// operator may not create Jobs there; 422: a Job it would never take), which waiting does not
/// mend; transient otherwise.
fn api_failure(name: &str, e: kube::Error) -> Failure {
    let said = format!("the API server, about Job {name}: {e}");
    match &e {
        kube::Error::Api(status) if (400..500).contains(&status.code) && ![409, 429].contains(&status.code) => {
            Failure::Final(said)
        }
        _ => Failure::Transient(said),
    }
}

impl CommandCheck<'_> {
    /// Runs (or finds) the Job that validates `contract`, waits for it, and reads its verdict.
    async fn run(&self, contract: &str) -> Result<Vec<String>, Failure> {
        let ticket = self.ticket.name_any();
        let namespace = self.ticket.namespace().unwrap_or_default();
        let client = self.ctx.client.clone();
        let mut again = false;
        let (name, execution, exit) = loop {
            let name = job_name(&ticket, &self.commit, contract, self.validate, again);
            let api = |e| api_failure(&name, e);
            let execution = self.wait(&self.request(&name, contract)?, &namespace).await?;
            let exit = container_exit_code(client.clone(), &namespace, &name, TOOL_CONTAINER)
                .await
                .map_err(api)?;
            // A Job that answered long ago (the re-check before a commit can come days after
            // the proposal) may have lost its Pod to the cluster's garbage collector, and its
            // answer with it: asked once more, in a Job of another name.
            if exit.is_none()
                && !again
                && execution.envelope.status != RunStatus::Timeout
                && !job_has_pod(client.clone(), &namespace, &name).await.map_err(api)?
            {
                info!(ticket = %ticket, job = %name, "the validation Job's Pod is gone: asking again");
                again = true;
                continue;
            }
            break (name, execution, exit);
        };
        let printed = match exit {
            Some(0) | None => String::new(),
            Some(_) => {
                let lines = i64::try_from(MAX_ERRORS * 2).unwrap_or(i64::MAX);
                let tail = container_log_tail(client, &namespace, &name, TOOL_CONTAINER, lines)
                    .await
                    .map_err(|e| api_failure(&name, e))?
                    .unwrap_or_default();
                redact(&tail, &self.secrets).0
            }
        };
        let validated = Validated {
            exit,
            timed_out: execution.envelope.status == RunStatus::Timeout,
            executor_said: execution.envelope.error_message.clone(),
            printed,
        };
        errors(self.validate, &name, &validated).map_err(Failure::Final)
    }

    /// The Job `name` that runs the command over the commit with `contract` in place.
    fn request(&self, name: &str, contract: &str) -> Result<JobRequest, Failure> {
        let patches = if contract == self.committed {
            Vec::new()
        } else {
            vec![unified_diff(
                &[(self.path.clone(), self.committed.clone())].into(),
                &[(self.path.clone(), contract.to_owned())].into(),
            )]
        };
        let run = command_job::Command {
            name: name.to_owned(),
            commit: &self.commit,
            patches,
            image: &self.validate.image,
            command: &self.validate.command,
            timeout: timeout(self.validate),
            task: format!("validate the contract {}", self.path),
        };
        command_job::request(self.ticket, self.target, run, self.secrets.clone()).map_err(Failure::Final)
    }

    /// Launches (or finds) the Job `request` asks for and waits until it has ended.
    async fn wait(&self, request: &JobRequest, namespace: &str) -> Result<Execution, Failure> {
        let name = request.job_name();
        let api = |e| api_failure(&name, e);
        let jobs = &self.ctx.jobs;
        jobs.launch(request).await.map_err(api)?;
        info!(ticket = %self.ticket.name_any(), job = %name, "validating a version of the contract");
        let give_up = Instant::now() + timeout(self.validate) + GRACE;
        loop {
            match jobs
                .ended(namespace, &name, timeout(self.validate))
                .await
                .map_err(api)?
            {
                // Gone since it was launched (deleted with its ticket, or by hand).
                None => {
                    return Err(Failure::Transient(format!(
                        "the validation Job {name} is gone (deleted while it ran?); it is asked again later"
                    )));
                }
                Some(true) => {
                    if let Some(execution) = jobs.collect(request).await.map_err(api)? {
                        return Ok(execution);
                    }
                }
                Some(false) => {}
            }
            if Instant::now() > give_up {
                return Err(Failure::Transient(format!(
                    "the validation Job {name} has not ended {}s after its deadline",
                    GRACE.as_secs()
                )));
            }
            tokio::time::sleep(LOOK_EVERY).await;
        }
    }
}
