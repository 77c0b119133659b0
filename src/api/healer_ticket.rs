//! HealerTicket: an error report on its way through the healer pipeline — ingest, classify,
//! propose, approve, apply (with rollback), regenerate, notify.
//!
//! Tickets enter through the operator's HTTP ingest endpoint, through `kubectl`, or from a failed
//! run. The operator fingerprints and deduplicates them, classifies them into tiers, and either
//! fixes them deterministically (tier 1), proposes a fix for approval (tiers 2-3), or closes them
//! as not fixable by code.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use kube::{CustomResource, KubeSchema};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::heal_run::HealRunSpec;
use super::shared::{Decision, GitSource, HealerSpec};

/// Desired state of a HealerTicket: the error, where it points, and the human's decision on the
/// proposed fix.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, PartialEq, KubeSchema)]
#[kube(
    group = "kubeheal.dev",
    version = "v1alpha1",
    kind = "HealerTicket",
    plural = "healertickets",
    shortname = "ht",
    category = "kubeheal",
    namespaced,
    status = "HealerTicketStatus",
    doc = "An error report in the healer pipeline: classified into a tier, fixed deterministically, proposed for human approval, or closed as not fixable by code.",
    printcolumn = r#"{"name":"Source","type":"string","jsonPath":".spec.source"}"#,
    printcolumn = r#"{"name":"Phase","type":"string","jsonPath":".status.phase"}"#,
    printcolumn = r#"{"name":"Tier","type":"integer","jsonPath":".status.classification.tier"}"#,
    printcolumn = r#"{"name":"Priority","type":"string","jsonPath":".status.classification.priority"}"#,
    printcolumn = r#"{"name":"Seen","type":"integer","jsonPath":".status.occurrences"}"#,
    printcolumn = r#"{"name":"Age","type":"date","jsonPath":".metadata.creationTimestamp"}"#
)]
#[serde(rename_all = "camelCase")]
#[x_kube(
    validation = Rule::new("oldSelf.hasValue() || !has(self.decision)")
        .optional_old_self(true)
        .message("decision must be empty when a HealerTicket is created: a fix is proposed first and decided by a human afterwards")
        .field_path(".decision"),
    validation = Rule::new("!has(oldSelf.decision) || (has(self.decision) && self.decision == oldSelf.decision)")
        .message("decision cannot be changed or removed once it has been made")
        .field_path(".decision"),
)]
pub struct HealerTicketSpec {
    /// How the error entered: `validation`, `compilation`, `runtime` or `manual`. Required.
    pub source: TicketSource,

    /// What the error points at. Required.
    pub target: TicketTarget,

    /// The original error message. Required.
    #[schemars(length(min = 1, max = 8192))]
    pub error: String,

    /// The stack trace, when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 65536))]
    pub stacktrace: Option<String>,

    /// More context, such as `request_path`, `method` and `status_code`. Default: empty.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub context: BTreeMap<String, String>,

    /// Overrides the priority the classifier would give. Default: from the classifier.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority: Option<Priority>,

    /// The human decision on the proposed fix (tiers 2 and 3). Empty at creation; cannot change
    /// once made.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decision: Option<Decision>,
}

/// How an error entered the pipeline.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum TicketSource {
    /// A contract validation error.
    Validation,
    /// A compiler error (unresolved reference, cycle).
    Compilation,
    /// An HTTP 500 or unhandled exception of the running application.
    Runtime,
    /// Submitted by a person.
    Manual,
}

/// What a ticket's error points at: a contract, a file, or a repository to heal.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, KubeSchema)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = Rule::new("has(self.contractFqn) || has(self.path) || has(self.healRun)")
    .message("target must name a contractFqn, a path, or a healRun template"))]
pub struct TicketTarget {
    /// Fully qualified name of the contract, e.g. `entity/helpdesk/ticket`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 253))]
    #[x_kube(validation = Rule::new(r"self.matches('^[^\\s/]+(/[^\\s/]+)+$')").message("contractFqn must be slash-separated names without spaces, e.g. entity/helpdesk/ticket"))]
    pub contract_fqn: Option<String>,

    /// Path of the file the error points at, relative to the repository root.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 1024))]
    #[x_kube(validation = Rule::new("!self.startsWith('/') && !self.contains('..')").message("target.path must be relative to the repository root and must not contain '..'"))]
    pub path: Option<String>,

    /// For errors fixed in code: the HealRun to create for them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub heal_run: Option<HealRunSpec>,

    /// The repository the contract lives in; the fix is committed to the ticket's own branch
    /// there, `kubeheal/<ticket name>`, and pushed.
    /// Default: the operator's `--ticket-target`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repository: Option<GitSource>,

    /// Where a contract's file is, from its FQN `kind/domain/name`: `{kind}`, `{kinds}` (the
    /// plural: `entity` → `entities`), `{domain}` and `{name}`. Default:
    /// `domains/{domain}/{kinds}/{name}.contract.yaml` (seed 004's layout, so
    /// `entity/helpdesk/ticket` is `domains/helpdesk/entities/ticket.contract.yaml`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 1024))]
    #[x_kube(validation = Rule::new(r"!self.startsWith('/') && !self.split('/').exists(s, s == '..') && self.contains('{name}')")
        .message("contractLayout must be a relative path without '..' that contains {name}, e.g. domains/{domain}/{kinds}/{name}.contract.yaml"))]
    pub contract_layout: Option<String>,

    /// Repository path of the JSON Schema contracts must satisfy: a proposal is checked against
    /// it, and a fix is committed only when it adds no error the schema finds. `{kind}` is the
    /// contract's `kind` in lower case (Specora's `spec/meta/{kind}.meta.yaml`); a `$ref` may name
    /// the `$id` of another schema in the same folder, and nothing else. Contract fixes need
    /// this or `validate` (here or in `--ticket-target`); with both, a contract must pass both.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 1024))]
    #[x_kube(validation = Rule::new(r"!self.startsWith('/') && !self.split('/').exists(s, s == '..')")
        .message("contractSchema must be a path relative to the repository root, without '..'"))]
    pub contract_schema: Option<String>,

    /// The service that proposes tier 2 and 3 fixes: `openAI` (an OpenAI-compatible model,
    /// asked in a chat) or `codeHealerApi` (a Code Healer API service: sent the contract as
    /// the file to fix, with the error, stack trace and context as the task, it answers with
    /// the fixed file). Either answer is checked alike before it is proposed. Default: the
    /// operator's `--ticket-target`; without one, such tickets wait in `Queued`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[x_kube(validation = Rule::new("has(self.openAI) || has(self.codeHealerApi)")
        .message("target.healer must be openAI or codeHealerApi: contract fixes are proposed by an OpenAI-compatible model or a Code Healer API service"))]
    pub healer: Option<HealerSpec>,

    /// The repository's own validator, for contracts a JSON Schema does not capture (or
    /// beside `contractSchema`): run in an executor Job on the contract as it is and on each
    /// candidate fix, in place at its path. Default: the operator's `--ticket-target`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub validate: Option<Validate>,

    /// The command that regenerates the code from the contracts (seed 004's Regenerate step):
    /// run after a contract fix is committed and pushed, in an executor Job over the fix's
    /// commit; the files it changes are committed on the ticket's branch as a second commit. A
    /// regeneration that fails (or changes what kubeheal does not commit) reverts the fix, and
    /// the ticket ends `Failed`. Default: the operator's `--ticket-target`; without one, the
    /// ticket is `Applied` once the fix is pushed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub regenerate: Option<Regenerate>,
}

/// How a repository regenerates its code from its contracts.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, KubeSchema)]
#[serde(rename_all = "camelCase")]
pub struct Regenerate {
    /// The container image that has the generators, e.g. `ghcr.io/acme/helpdesk-forge:1.4`.
    /// Required.
    #[schemars(length(min = 1, max = 512))]
    #[x_kube(validation = Rule::new(r"self.matches('^[^\\s]+$')").message("regenerate.image must be an image reference without spaces, e.g. ghcr.io/acme/forge:1.4"))]
    pub image: String,
    /// The command, run with `sh -c` (not the image's entrypoint) in the root of the fix's
    /// checkout, with `$KUBEHEAL_CONTRACT` (the fixed contract's path) and
    /// `$KUBEHEAL_CONTRACT_FQN` set, e.g. `make generate`. What it adds or
    /// changes is committed (regular text files, at most 49; a deletion is refused); it gets no
    /// credential of the repository. Required.
    #[schemars(length(min = 1, max = 4096))]
    #[x_kube(validation = Rule::new("self.trim() != ''").message("regenerate.command must not be blank"))]
    pub command: String,
    /// How long the command may run, in seconds, from 1 to 86400: the regeneration Job's
    /// deadline (`activeDeadlineSeconds`), and how long the operator waits for it. A command
    /// still running then is stopped, the regeneration fails and the fix is reverted.
    /// Default: 600 (10 minutes).
    #[serde(default = "default_regenerate_timeout")]
    #[schemars(range(min = 1, max = MAX_COMMAND_TIMEOUT_SECONDS))]
    pub timeout_seconds: u32,
}

/// How a repository validates a contract with its own command.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, KubeSchema)]
#[serde(rename_all = "camelCase")]
pub struct Validate {
    /// The container image that has the validator, e.g. `ghcr.io/acme/helpdesk-forge:1.4`.
    /// Required.
    #[schemars(length(min = 1, max = 512))]
    #[x_kube(validation = Rule::new(r"self.matches('^[^\\s]+$')").message("validate.image must be an image reference without spaces, e.g. ghcr.io/acme/forge:1.4"))]
    pub image: String,
    /// The command, run with `sh -c` (not the image's entrypoint) in the root of a checkout
    /// whose contract file (`$KUBEHEAL_CONTRACT`; its FQN is `$KUBEHEAL_CONTRACT_FQN`) holds the
    /// version being judged, e.g. `specora-core forge validate domains`. It exits with 0 when
    /// the contract is valid; otherwise each line it prints is an error. Lines are compared
    /// with their numbers ignored, so a count or a line number that moves is not a new error;
    /// a line in the form `path: 'value' does not match 'pattern'` is one tier 1 can fix. It
    /// gets no credential of the repository. Required.
    #[schemars(length(min = 1, max = 4096))]
    #[x_kube(validation = Rule::new("self.trim() != ''").message("validate.command must not be blank"))]
    pub command: String,
    /// How long one validation may run, in seconds, from 1 to 86400: each validation Job's
    /// deadline. A command still running then fails the fix it was judging. Default: 300.
    #[serde(default = "default_validate_timeout")]
    #[schemars(range(min = 1, max = MAX_COMMAND_TIMEOUT_SECONDS))]
    pub timeout_seconds: u32,
}

/// `validate.timeoutSeconds` when a target does not say.
pub const DEFAULT_VALIDATE_TIMEOUT_SECONDS: u32 = 300;

fn default_validate_timeout() -> u32 {
    DEFAULT_VALIDATE_TIMEOUT_SECONDS
}

/// `regenerate.timeoutSeconds` when a target does not say.
pub const DEFAULT_REGENERATE_TIMEOUT_SECONDS: u32 = 600;
/// The most a repository command may run (`regenerate.timeoutSeconds`, `validate.timeoutSeconds`): a day.
pub const MAX_COMMAND_TIMEOUT_SECONDS: u32 = 86_400;

fn default_regenerate_timeout() -> u32 {
    DEFAULT_REGENERATE_TIMEOUT_SECONDS
}

/// How urgent a ticket is; tickets are analysed CRITICAL first, first-in first-out within a
/// priority.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Priority {
    /// An outage: runtime 500s.
    Critical,
    /// Other runtime exceptions.
    High,
    /// Structural contract errors.
    Medium,
    /// Cosmetic errors such as naming.
    Low,
}

/// Observed state of a HealerTicket, written by the operator only.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, KubeSchema)]
#[serde(rename_all = "camelCase")]
pub struct HealerTicketStatus {
    /// The `metadata.generation` this status describes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// `Ready`, `Reconciling` and `Stalled`, each with a reason.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[x_kube(merge_strategy = ListMerge::Map(vec!["type".into()]))]
    pub conditions: Vec<Condition>,
    /// Queued, Analyzing, Proposed, Approved, Applied, Failed or Rejected.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<TicketPhase>,
    /// What the classifier decided.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub classification: Option<Classification>,
    /// Stable hash of source, target and normalised error; equal fingerprints are one ticket.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fingerprint: Option<String>,
    /// How many times this error was reported.
    #[serde(default)]
    pub occurrences: u32,
    /// When the error was first reported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_seen: Option<Time>,
    /// When the error was last reported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_seen: Option<Time>,
    /// The ticket whose applied fix this error came back after: this one is its recurrence.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recurrence_of: Option<String>,
    /// The proposed fix.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proposal: Option<TicketProposal>,
    /// How the fix was applied.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub apply: Option<ApplyStatus>,
    /// The code regeneration that followed the apply.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub regenerate: Option<RegenerateStatus>,
    /// When the ticket reached a terminal phase.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolved_at: Option<Time>,
    /// How it ended, for people.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolution_note: Option<String>,
    /// The transitions already announced to the notification receivers (`--notify-secret`), each
    /// at most once: written in the same status update that queues the announcement, so a
    /// restarted operator does not announce it again. At most the four events, each once.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 4))]
    pub notified: Vec<TicketEvent>,
}

/// A transition the notification receivers hear about (seed 004's table of events).
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum TicketEvent {
    /// A fix has been proposed and awaits approval.
    Proposed,
    /// A fix was applied and the code regenerated.
    Applied,
    /// Classification, proposal or apply failed.
    Failed,
    /// A human rejected the proposed fix.
    Rejected,
}

/// Where a HealerTicket is in the pipeline.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, JsonSchema)]
pub enum TicketPhase {
    /// Waiting for analysis.
    Queued,
    /// Being classified and a fix proposed.
    Analyzing,
    /// A fix waits for a human decision.
    Proposed,
    /// Approved, about to be applied.
    Approved,
    /// The fix was applied and the code regenerated (terminal).
    Applied,
    /// Not fixable by a contract or code change, no proposal, or the apply failed (terminal).
    Failed,
    /// A human rejected the fix (terminal).
    Rejected,
}

/// What the classifier decided about a ticket.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Classification {
    /// e.g. `naming`, `missing_field`, `runtime_500`.
    pub error_type: String,
    /// 1 (deterministic, automatic), 2 (structural, approval) or 3 (runtime, approval).
    #[schemars(range(min = 1, max = 3))]
    pub tier: u8,
    /// Who can fix it: `contract`, `generator`, `data` or `code`.
    pub fixable_by: FixableBy,
    /// How urgent it is.
    pub priority: Priority,
}

/// Who can fix an error.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum FixableBy {
    /// A change to the contract.
    Contract,
    /// A bug in a code generator: not fixable by a contract change.
    Generator,
    /// A data or infrastructure issue: not fixable by code.
    Data,
    /// A change to hand-written code, through a HealRun.
    Code,
}

/// A fix proposed for a ticket.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TicketProposal {
    /// `deterministic`, `llm_structural` or `llm_runtime`.
    pub method: ProposalMethod,
    /// From 0 to 1 (1.0 for deterministic fixes).
    #[schemars(range(min = 0.0, max = 1.0))]
    pub confidence: f64,
    /// What the fix does, for people.
    pub explanation: String,
    /// Each change, e.g. `spec.fields.myField -> spec.fields.my_field` or
    /// `modified: spec.fields.resolution.required = true`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub changes: Vec<String>,
    /// Properties the model invented that seed 004's whitelist does not allow: removed from the
    /// proposal before it was validated, listed here.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub removed: Vec<String>,
    /// The contract's file in the repository.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contract_path: Option<String>,
    /// The commit the proposal was made at.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_commit: Option<String>,
    /// The contract before the fix.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 65536))]
    pub before: Option<String>,
    /// The contract after the fix: what an approval applies.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 65536))]
    pub after: Option<String>,
    /// `sha256:` digest of the change (the unified diff of `before` to `after`); an approval
    /// must carry the same digest.
    pub patch_digest: String,
}

/// How a fix was proposed.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ProposalMethod {
    /// Deterministic normalisation, no LLM (tier 1).
    Deterministic,
    /// An LLM's structural contract fix (tier 2).
    LlmStructural,
    /// An LLM's fix for a runtime error (tier 3).
    LlmRuntime,
}

/// How a fix was applied.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ApplyStatus {
    /// The branch the fix was committed to and pushed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    /// The commit that applied the fix.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    /// True when the fix was undone: it failed validation and the previous content was
    /// restored, or the code regeneration after it failed and the fix was reverted on the
    /// branch by a commit of its own (`regenerate.revertCommit`).
    #[serde(default)]
    pub rolled_back: bool,
    /// Why the apply failed, when it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// The code regeneration after an apply.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RegenerateStatus {
    /// The Job that regenerated the code.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job_name: Option<String>,
    /// What it reported, e.g. `42 files regenerated`, or why it failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<String>,
    /// How many files the regeneration committed (0 when the generated code was already up to
    /// date); none while it runs or when it failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub files: Option<u32>,
    /// The commit of the regenerated files on the ticket's branch, after the fix's commit
    /// (`apply.commit`); none when the regeneration changed nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    /// The commit that reverted the fix because the regeneration failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revert_commit: Option<String>,
}
