//! CodeFixDDS: a `code_fix` work order (DDS v2, type `code_fix`) — a proposed fix that a human
//! approves by editing `spec.approval`, that the operator then executes and audits.
//!
//! Seed 002's rules that need only the object itself are CEL rules in the schema, so the API
//! server rejects a broken manifest before any controller sees it; the rules that need other
//! objects (the source exists and failed, paths and constraints no looser than the source, no
//! duplicate per source) are checked by the controller and reported in `status.validation`.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use kube::{CustomResource, KubeSchema};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::heal_run::FileChange;
use super::shared::{BugReport, Decision, GitSource, RunEnvelope};

/// Desired state of a CodeFixDDS: seed 002's `code_fix` schema in camelCase, plus where the fix
/// applies, the concrete patch when the operator generated one, and the human's decision.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, PartialEq, KubeSchema)]
#[kube(
    group = "kubeheal.dev",
    version = "v1alpha1",
    kind = "CodeFixDDS",
    plural = "codefixdds",
    singular = "codefixdds",
    shortname = "cfd",
    category = "kubeheal",
    namespaced,
    status = "CodeFixDDSStatus",
    doc = "A code_fix work order (DDS v2): a conservative fix for a failed execution, approved by a human writing spec.approval, then executed and audited by the operator.",
    printcolumn = r#"{"name":"ID","type":"string","jsonPath":".spec.id"}"#,
    printcolumn = r#"{"name":"Source","type":"string","jsonPath":".spec.sourceDds"}"#,
    printcolumn = r#"{"name":"Phase","type":"string","jsonPath":".status.phase"}"#,
    printcolumn = r#"{"name":"Reason","type":"string","jsonPath":".status.reason"}"#,
    printcolumn = r#"{"name":"Decision","type":"string","jsonPath":".spec.approval.decision"}"#,
    printcolumn = r#"{"name":"By","type":"string","jsonPath":".spec.approval.approvedBy","priority":1}"#,
    printcolumn = r#"{"name":"Age","type":"date","jsonPath":".metadata.creationTimestamp"}"#
)]
#[serde(rename_all = "camelCase")]
#[x_kube(
    validation = Rule::new("self.goal.contains(self.sourceDds)")
        .message("goal must name the source DDS id given in sourceDds (seed 002: goal must reference the original DDS)")
        .field_path(".goal"),
    validation = Rule::new("self.errorContext.originalDds == self.sourceDds")
        .message("errorContext.originalDds must equal sourceDds")
        .field_path(".errorContext.originalDds"),
    validation = Rule::new("oldSelf.hasValue() || !has(self.approval)")
        .optional_old_self(true)
        .message("approval must be empty when a CodeFixDDS is created: a fix is always proposed first and decided by a human afterwards")
        .field_path(".approval"),
    validation = Rule::new("!has(oldSelf.approval) || (has(self.approval) && self.approval == oldSelf.approval)")
        .message("approval cannot be changed or removed once a decision has been made; create a new CodeFixDDS for a different decision")
        .field_path(".approval"),
    validation = Rule::new("!has(self.target) || !has(self.target.secretRef)")
        .message("target.secretRef is not allowed on a CodeFixDDS: an order never names credentials; the HealRun that executes it uses its source run's credentials for the same repository")
        .field_path(".target.secretRef"),
    validation = Rule::new("!has(oldSelf.approval) || self == oldSelf")
        .message("a decided CodeFixDDS cannot be edited: the decision is about exactly this order; create a new CodeFixDDS instead"),
    validation = Rule::new("!has(self.approval) || !has(self.proposal) || self.approval.decision != 'Approved' || (has(self.approval.patchDigest) && self.approval.patchDigest == self.proposal.digest)")
        .message("an approval must carry patchDigest equal to proposal.digest: it approves exactly one patch")
        .field_path(".approval.patchDigest"),
)]
pub struct CodeFixDDSSpec {
    /// Unique id of the work order, `DDS-FIX-YYYYMMDD-XXX` (e.g. `DDS-FIX-20260202-001`).
    /// Required.
    #[x_kube(validation = Rule::new(r"self.matches('^DDS-FIX-[0-9]{8}-[0-9]{3}$')").message("id must have the form DDS-FIX-YYYYMMDD-XXX, e.g. DDS-FIX-20260202-001"))]
    #[schemars(length(max = 20))]
    pub id: String,

    /// DDS schema version. Must be 2. Required.
    #[x_kube(validation = Rule::new("self == 2").message("version must be 2 (DDS schema v2)"))]
    pub version: i64,

    /// DDS type discriminator. Must be `code_fix`. Required.
    #[serde(rename = "type")]
    #[x_kube(validation = Rule::new("self == 'code_fix'").message("type must be 'code_fix'"))]
    #[schemars(length(max = 32))]
    pub dds_type: String,

    /// Project name, inherited from the failed DDS. Required.
    #[schemars(length(min = 1, max = 253))]
    pub project: String,

    /// Fix objective; must name the source DDS id. Required.
    #[schemars(length(min = 1, max = 1024))]
    pub goal: String,

    /// Step-by-step, conservative, error-focused fix instructions. At least one. Required.
    #[schemars(length(min = 1, max = 50), inner(length(min = 1, max = 2048)))]
    pub instructions: Vec<String>,

    /// Files or folders (ending in `/`) the fix may change, relative to the repository root; no
    /// wider than the failed DDS's. At least one. Required.
    #[schemars(length(min = 1, max = 100), inner(length(min = 1, max = 1024)))]
    #[x_kube(validation = Rule::new("self.all(p, !p.startsWith('/') && !p.contains('..'))").message("allowedPaths must be relative to the repository root: no leading '/' and no '..'"))]
    pub allowed_paths: Vec<String>,

    /// Tool that executes the fix: `healer` (the configured code healer) or another executor
    /// such as `aider`. Default: `healer`.
    #[serde(default = "default_tool")]
    #[schemars(length(min = 1, max = 63))]
    pub tool: String,

    /// Execution constraints, never looser than the failed DDS's. Required.
    pub constraints: FixConstraints,

    /// Id of the failed DDS this fix answers. Required.
    #[schemars(length(min = 1, max = 253))]
    pub source_dds: String,

    /// Structured information about the failure. Required.
    pub error_context: ErrorContext,

    /// The kubeheal object the fix came from, when the operator generated it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_ref: Option<SourceRef>,

    /// Repository the fix applies to. Default: the source HealRun's `spec.source`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<GitSource>,

    /// The concrete patch, when the operator generated one; an approval binds to its digest.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proposal: Option<FixProposal>,

    /// The human decision: `Approved` or `Rejected`, who decided, why, and the digest of the
    /// approved patch. Empty at creation; set once by someone allowed the `approve` verb on
    /// `codefixdds`; cannot change afterwards.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval: Option<Decision>,

    /// How long after its creation the order may still be decided, as a duration (`24h`,
    /// `90m`, `1h30m`). An order not decided in time becomes `Expired` and is never executed.
    /// Default: no deadline.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 32))]
    #[x_kube(validation = Rule::new("duration(self) > duration('0s')").message("approvalDeadline must be a positive duration such as 24h, 90m or 1h30m"))]
    pub approval_deadline: Option<String>,
}

fn default_tool() -> String {
    "healer".to_owned()
}

/// Seed 002's constraints for a `code_fix`: at most 3 files, no new dependencies, no refactoring.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, KubeSchema)]
#[serde(rename_all = "camelCase")]
pub struct FixConstraints {
    /// Most files the fix may change: at least 1, at most 3. Required.
    #[x_kube(validation = Rule::new("self >= 1 && self <= 3").message("constraints.maxFilesChanged must be between 1 and 3 for a code_fix"))]
    pub max_files_changed: i64,
    /// Must be true: a code_fix never adds dependencies. Required.
    #[x_kube(validation = Rule::new("self == true").message("constraints.noNewDependencies must be true for a code_fix"))]
    pub no_new_dependencies: bool,
    /// Must be true: a code_fix never refactors. Required.
    #[x_kube(validation = Rule::new("self == true").message("constraints.noRefactor must be true for a code_fix"))]
    pub no_refactor: bool,
}

/// What failed, where and when.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, KubeSchema)]
#[serde(rename_all = "camelCase")]
pub struct ErrorContext {
    /// Id of the DDS that failed; must equal `sourceDds`. Required, non-empty.
    #[x_kube(validation = Rule::new("size(self) > 0").message("errorContext.originalDds must not be empty"))]
    #[schemars(length(max = 253))]
    pub original_dds: String,
    /// Error output of the failed execution: sanitised, at most 500 characters. Required,
    /// non-empty.
    #[x_kube(validation = Rule::new("size(self) > 0").message("errorContext.errorMessage must not be empty"))]
    #[x_kube(validation = Rule::new("size(self) <= 500").message("errorContext.errorMessage must be at most 500 characters; keep the first 500"))]
    #[x_kube(validation = Rule::new(r"!self.contains('\u0000') && !self.contains('\r')").message("errorContext.errorMessage must be sanitised: no NUL or carriage-return characters"))]
    pub error_message: String,
    /// When the execution failed, ISO-8601 (e.g. `2026-02-02T15:30:45.123456` or
    /// `2026-02-02T15:30:45Z`). Required, non-empty.
    #[x_kube(validation = Rule::new("size(self) > 0").message("errorContext.failedAt must not be empty"))]
    #[x_kube(validation = Rule::new(r"size(self) == 0 || self.matches('^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\\.[0-9]+)?(Z|[+-][0-9]{2}:[0-9]{2})?$')")
        .message("errorContext.failedAt must be an ISO-8601 timestamp such as 2026-02-02T15:30:45Z"))]
    #[schemars(length(max = 64))]
    pub failed_at: String,
}

/// The kubeheal object a CodeFixDDS came from.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SourceRef {
    /// `HealRun` or `CodeFixDDS`.
    pub kind: SourceKind,
    /// Name of the object, in this namespace.
    #[schemars(length(min = 1, max = 253))]
    pub name: String,
    /// The HealRun cycle the fix was proposed in, when the source is a HealRun.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cycle: Option<u32>,
}

/// Kinds a CodeFixDDS can come from.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, JsonSchema)]
pub enum SourceKind {
    /// A HealRun that needed approval or ended without a fix.
    HealRun,
    /// An earlier CodeFixDDS whose execution failed.
    CodeFixDDS,
}

/// A concrete patch proposed for approval.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, KubeSchema)]
#[serde(rename_all = "camelCase")]
pub struct FixProposal {
    /// `sha256:` digest of `patch`; an approval must carry the same digest. Required.
    #[x_kube(validation = Rule::new("self.matches('^sha256:[0-9a-f]{64}$')").message("proposal.digest must be 'sha256:' followed by 64 lower-case hex digits"))]
    #[schemars(length(max = 71))]
    pub digest: String,
    /// The patch as a unified diff against the target revision (at most 256 KiB). Required.
    #[schemars(length(min = 1, max = 262144))]
    pub patch: String,
    /// Files the patch changes, with added and removed line counts.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 50))]
    pub files: Vec<FileChange>,
    /// The healer's summary of the change.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 4096))]
    pub changes_summary: Option<String>,
    /// The healer's confidence, from 0 to 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0.0, max = 1.0))]
    pub confidence: Option<f64>,
    /// The bug reports the patch answers (at most 20).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 20))]
    pub bug_reports: Vec<BugReport>,
    /// Tests failing before the patch (at most 50 names).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 50))]
    pub failing_tests: Vec<String>,
}

/// Observed state of a CodeFixDDS, written by the operator only.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, KubeSchema)]
#[serde(rename_all = "camelCase")]
pub struct CodeFixDDSStatus {
    /// The `metadata.generation` this status describes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// `Ready`, `Reconciling` and `Stalled`, each with a reason.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[x_kube(merge_strategy = ListMerge::Map(vec!["type".into()]))]
    pub conditions: Vec<Condition>,
    /// Proposed, Approved, Executing, Executed, Failed, Rejected, Expired or Invalid.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<CodeFixPhase>,
    /// Why the order is in its phase, CamelCase: the rule that broke when `Invalid`
    /// (e.g. `SourceDdsFailed`), `AwaitingDecision`, `Approved`, `ConstraintViolated`, ...
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// What happened last and what to do, for people.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// Each of seed 002's ten validation rules, passed or with the reason it failed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[x_kube(merge_strategy = ListMerge::Map(vec!["rule".into()]))]
    pub validation: Vec<RuleResult>,
    /// Who approved or rejected the fix, copied from `spec.approval` when it was accepted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approved_by: Option<String>,
    /// When the decision was seen.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approved_at: Option<Time>,
    /// How the approved fix was executed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub execution: Option<FixExecution>,
}

/// Where a CodeFixDDS is in its life.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, JsonSchema)]
pub enum CodeFixPhase {
    /// Valid, waiting for a human decision.
    Proposed,
    /// A human approved it; execution is about to start.
    Approved,
    /// The fix is being executed.
    Executing,
    /// The fix was applied and verified (terminal).
    Executed,
    /// Execution failed or broke a constraint (terminal).
    Failed,
    /// A human rejected it (terminal).
    Rejected,
    /// A validation rule failed; see `validation`. Re-checked whenever the order or an object
    /// it refers to changes: an order whose source appears or fails later becomes `Proposed`.
    Invalid,
    /// Not decided before `spec.approvalDeadline` (terminal): never executed.
    Expired,
}

/// The outcome of one validation rule.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RuleResult {
    /// The rule, e.g. `SourceDdsFailed` or `AllowedPathsSubset`.
    pub rule: String,
    /// True when the rule holds.
    pub passed: bool,
    /// Why the rule failed, for people.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// How an approved fix was executed.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, KubeSchema)]
#[serde(rename_all = "camelCase")]
pub struct FixExecution {
    /// The HealRun that executes the order: the one the operator created for it, or the
    /// HealRun that asked for this approval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub heal_run: Option<String>,
    /// The executor Job of the verifying build.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job_name: Option<String>,
    /// What the verifying execution returned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub envelope: Option<RunEnvelope>,
    /// Files the fix changed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 50))]
    pub files_changed: Vec<String>,
    /// `git diff --shortstat` of the fix.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diff_stat: Option<String>,
    /// The branch the fix was committed to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    /// The commit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    /// Constraints the execution broke, for people.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub constraint_violations: Vec<String>,
}
