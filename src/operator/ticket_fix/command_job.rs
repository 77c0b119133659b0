//! The executor Job that runs one of a repository's own commands for a ticket — the regenerate
//! command after a fix (`regenerate`), the validate command on each version of a contract
//! (`validate`): the commit fetched (with a candidate contract patched in, for a validation), the
//! command run with `sh -c` in its image in the repository's root, with the contract named in its
//! environment, then git reports what it changed (the tool machinery of `executor::tool`). The
//! Job is owned by the ticket, so its changes wake the ticket and it goes when the ticket does.

use std::time::Duration;

use kube::{Resource, ResourceExt};

use super::{Failure, TICKET_LABEL, repository_token};
use crate::api::heal_run::ProjectType;
use crate::api::healer_ticket::{HealerTicket, TicketTarget};
use crate::api::shared::MANAGED_BY;
use crate::core::redact::secret_values;
use crate::core::ticket_fix::contract_path;
use crate::core::ticket_regenerate::bounded;
use crate::executor::RunRequest;
use crate::executor::job::{ContainerSettings, JobRequest, ToolStep};

/// One run of a repository command.
pub(super) struct Command<'a> {
    /// The Job's name.
    pub name: String,
    /// The commit it runs over.
    pub commit: &'a str,
    /// Unified diffs applied over the commit first (a candidate contract); none for the commit
    /// as it is.
    pub patches: Vec<String>,
    pub image: &'a str,
    pub command: &'a str,
    pub timeout: Duration,
    /// What it is for, as the tool's `$KUBEHEAL_TASK` says.
    pub task: String,
}

/// The values a command Job's output is redacted of: the repository's token and the operator's
/// own secrets.
pub(super) async fn secrets(
    ticket: &HealerTicket,
    target: &TicketTarget,
    ctx: &super::Context,
) -> Result<Vec<String>, Failure> {
    let mut secrets: Vec<String> = repository_token(ticket, target, ctx).await?.into_iter().collect();
    secrets.extend(secret_values(std::env::vars()));
    Ok(secrets)
}

/// The Job that runs `run` for `ticket` over the target's repository, in its root, with
/// `$KUBEHEAL_CONTRACT` (the contract's path) and `$KUBEHEAL_CONTRACT_FQN` set; owned by the ticket.
pub(super) fn request(
    ticket: &HealerTicket,
    target: &TicketTarget,
    run: Command<'_>,
    secrets: Vec<String>,
) -> Result<JobRequest, String> {
    let mut source = target.repository.clone().ok_or("no repository to run the command in")?;
    // Contract paths, validators and generators work from the repository's root.
    source.sub_path = None;
    let name = ticket.name_any();
    let owner = ticket
        .controller_owner_ref(&())
        .ok_or("the ticket has no uid to own its Job")?;
    let fqn = target.contract_fqn.clone().unwrap_or_default();
    let contract = contract_path(&fqn, target.contract_layout.as_deref())?;
    Ok(JobRequest {
        name: run.name,
        labels: [
            (MANAGED_BY.0.to_owned(), MANAGED_BY.1.to_owned()),
            (TICKET_LABEL.to_owned(), bounded(&name, "", 63)),
        ]
        .into(),
        owner,
        namespace: ticket.namespace().unwrap_or_default(),
        commit: run.commit.to_owned(),
        run: RunRequest {
            cycle: 0,
            source,
            revision: Some(run.commit.to_owned()),
            patches: run.patches,
            project_type: ProjectType::Auto,
            image: Some(run.image.to_owned()),
            command: None,
            timeout: run.timeout,
            secrets,
            verify: None,
        },
        container: ContainerSettings::default(),
        tool: Some(ToolStep {
            image: run.image.to_owned(),
            task: run.task,
            command: Some(run.command.to_owned()),
            env: vec![
                ("KUBEHEAL_CONTRACT".into(), contract),
                ("KUBEHEAL_CONTRACT_FQN".into(), fqn),
            ],
            env_secret: None,
        }),
        probe_image: None,
    })
}
