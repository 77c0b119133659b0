//! The pure core of the heal loop: decisions without I/O.
//!
//! - `heal_run`: the HealRun state machine — what to do next (`next_action`) and what came of it
//!   (`apply`);
//! - `step`: that decision as a complete instruction (key, patch set, healers, branch, messages);
//! - `drive`: the one loop both drivers run, over their `Effects`;
//! - `format`: the one place human-facing strings (reports, commit messages) are rendered;
//! - `gate`: whether a patch may be committed; `patch`: a healer's answer as a diff and digest;
//! - `code_fix_dds`: the CodeFixDDS work orders' rules and phases;
//! - `proposal`: the CodeFixDDS a run writes; `monitor`: how an execution is judged;
//! - `redact`: the one rule for what secrets look like, applied wherever text leaves;
//! - `healer_ticket`: a HealerTicket's intake — classification, fingerprint, name, queue order.
//! - `ticket_api`: seed 004's API over tickets (ingest body, name, description, filters, status summary);
//! - `ticket_page`: the same tickets as HTML pages (list and detail, everything escaped);
//! - `ticket_queue`: seed 004's priority queue as a rule — which tickets' analysis starts now;
//! - `ticket_fix` and `ticket_regenerate`: a contract ticket's propose → approve → apply, and
//!   the Regenerate step after it;
//! - `ticket_validate`: a repository's own contract validator, run on each version a fix judges;
//! - `notify`: the payloads announcing a ticket's transitions (Slack, Discord, Teams, JSON).

pub mod code_fix_dds;
pub mod drive;
pub mod format;
pub mod gate;
pub mod heal_run;
pub mod healer_ticket;
pub mod incident;
pub mod monitor;
pub mod notify;
pub mod patch;
pub mod proposal;
pub mod redact;
pub mod step;
pub mod ticket_api;
pub mod ticket_fix;
pub mod ticket_page;
pub mod ticket_queue;
pub mod ticket_regenerate;
pub mod ticket_validate;
pub mod verify;
