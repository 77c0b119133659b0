//! The one heal loop both drivers run: `next_step → perform → apply → persist`, over and over.
//! What "perform" and "persist" mean is the driver's [`Effects`]: the operator launches Jobs,
//! stores answers in ConfigMaps and writes the status to the API server; `kubeheal heal` runs
//! processes and writes `.kubeheal/status.json`. The loop itself does no I/O: every decision is
//! `heal_run`'s, every instruction `step`'s, so the drivers are only lists of effects.
//!
//! Each effect must be idempotent with respect to the persisted status: a driver that stops
//! after an effect and before its result is persisted resumes from the status alone, and must
//! then find what the effect did (a Job by its key, an answer by its cycle, a commit by its
//! trailers) instead of doing it again.

use std::future::Future;
use std::time::Duration;

use k8s_openapi::jiff::Timestamp;

use crate::api::heal_run::HealRunStatus;
use crate::core::heal_run::{Input, Note, apply};
use crate::core::step::{CommitOrder, ExecutionOrder, HealerQuestion, Run, Step, next_step};

/// An effect that may have to be waited for: a Job that still runs, a decision not yet made.
#[derive(Debug)]
pub enum Ready<T> {
    Now(T),
    /// Not yet: look again after this long (or when something the driver watches changes).
    Later(Duration),
}

/// What the world must do for the heal loop. Futures are `Send` so that the operator can drive
/// many runs on a multi-threaded runtime.
pub trait Effects {
    type Error;

    /// Resolves `spec.source.revision` to a commit and the project type there.
    fn resolve_source(&mut self) -> impl Future<Output = Result<Input, Self::Error>> + Send;
    /// Launches the execution (once) and reports its result when it has ended.
    fn execute(
        &mut self,
        order: &ExecutionOrder,
        status: &HealRunStatus,
    ) -> impl Future<Output = Result<Ready<Input>, Self::Error>> + Send;
    /// Asks the healers for a cycle's fix (or returns the answer stored for the cycle). A healer
    /// that runs as an executor Job (a tool) is launched once and waited for like an execution.
    fn ask_healers(
        &mut self,
        question: &HealerQuestion,
        status: &HealRunStatus,
    ) -> impl Future<Output = Result<Ready<Input>, Self::Error>> + Send;
    /// Creates the CodeFixDDS that asks a human to approve `cycle`'s patch.
    fn request_approval(
        &mut self,
        cycle: u32,
        status: &HealRunStatus,
    ) -> impl Future<Output = Result<Input, Self::Error>> + Send;
    /// The decision in the CodeFixDDS `name`, once there is one.
    fn await_approval(
        &mut self,
        cycle: u32,
        name: &str,
    ) -> impl Future<Output = Result<Ready<Input>, Self::Error>> + Send;
    /// Commits `order.cycle`'s patch on the heal branch (and pushes it).
    fn commit(&mut self, order: &CommitOrder) -> impl Future<Output = Result<Input, Self::Error>> + Send;
    /// Reverts `target` on the heal branch (and pushes it).
    fn revert(&mut self, order: &CommitOrder, target: &str) -> impl Future<Output = Result<Input, Self::Error>> + Send;
    /// Writes the CodeFixDDS that proposes a fix for people.
    fn propose_fix(&mut self, status: &HealRunStatus) -> impl Future<Output = Result<Input, Self::Error>> + Send;
    /// Stores `status` (when it differs from `previous`) and publishes `notes`.
    fn persist(
        &mut self,
        previous: &HealRunStatus,
        status: &HealRunStatus,
        notes: &[Note],
    ) -> impl Future<Output = Result<(), Self::Error>> + Send;
    /// The run is over and nothing remains to do: release what it held.
    fn finished(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send;
}

/// Why [`drive`] returned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Pause {
    /// The run is over.
    Done,
    /// `spec.suspend` is set.
    Suspended,
    /// An effect must be waited for: come back after this long.
    Wait(Duration),
    /// `max_steps` were taken: come back soon (lets other runs have their turn).
    StepLimit,
}

/// Runs `run` from `status` until it ends, must wait, or has taken `max_steps` steps. When
/// `interrupted` completes, the step in flight is dropped (a driver's effects stop what they
/// started when dropped) and the run is cancelled ([`Input::Interrupted`]).
pub async fn drive<E: Effects>(
    run: &Run<'_>,
    mut status: HealRunStatus,
    effects: &mut E,
    max_steps: usize,
    interrupted: impl Future<Output = ()>,
) -> Result<(HealRunStatus, Pause), E::Error> {
    let mut spec = run.spec.clone();
    let mut interrupted = std::pin::pin!(interrupted);
    // A tick first: a cancel, a suspend or a spent budget is seen before anything is done.
    let mut input = Input::Tick;
    for _ in 0..=max_steps {
        let (next, notes) = apply(&spec, &status, input, Timestamp::now());
        effects.persist(&status, &next, &notes).await?;
        status = next;
        let run = Run { spec: &spec, ..*run };
        let step = match next_step(&run, &status) {
            Step::Done => {
                effects.finished().await?;
                return Ok((status, Pause::Done));
            }
            Step::Suspended => return Ok((status, Pause::Suspended)),
            step => step,
        };
        let performed = tokio::select! {
            performed = perform(effects, step, &status) => Some(performed?),
            () = &mut interrupted, if !spec.cancel => None,
        };
        input = match performed {
            Some(Ready::Now(input)) => input,
            Some(Ready::Later(after)) => return Ok((status, Pause::Wait(after))),
            None => {
                // Also keeps the interrupt from being taken again.
                spec.cancel = true;
                Input::Interrupted
            }
        };
    }
    Ok((status, Pause::StepLimit))
}

/// Carries out `step` (anything but `Done` and `Suspended`, which have nothing to carry out).
async fn perform<E: Effects>(effects: &mut E, step: Step, status: &HealRunStatus) -> Result<Ready<Input>, E::Error> {
    Ok(match step {
        Step::Done | Step::Suspended => Ready::Now(Input::Tick),
        Step::ResolveSource => Ready::Now(effects.resolve_source().await?),
        Step::Execute(order) => effects.execute(&order, status).await?,
        Step::AskHealers(question) => effects.ask_healers(&question, status).await?,
        Step::RequestApproval { cycle } => Ready::Now(effects.request_approval(cycle, status).await?),
        Step::AwaitApproval { cycle, name } => effects.await_approval(cycle, &name).await?,
        Step::Commit(order) => Ready::Now(effects.commit(&order).await?),
        Step::Revert { order, target } => Ready::Now(effects.revert(&order, &target).await?),
        Step::ProposeFix => Ready::Now(effects.propose_fix(status).await?),
    })
}

#[cfg(test)]
#[path = "drive_tests.rs"]
mod tests;
