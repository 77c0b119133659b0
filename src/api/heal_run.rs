//! HealRun: one healing run for one repository and build command — the heal loop's resource.
//!
//! The spec says what to heal and within which limits; the status records every cycle
//! (execution, bug reports, healer call, gated patch, commit) so that a restarted operator
//! resumes exactly where it stopped and a person can follow each step with `kubectl get -o yaml`.

use k8s_openapi::api::core::v1::{EnvFromSource, EnvVar, ResourceRequirements};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use kube::{CustomResource, KubeSchema};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::shared::{BugReport, ErrorClass, GitSource, HealerSpec, RunEnvelope, RunStatus};

/// Desired state of a HealRun: the repository to heal, how to build it, who proposes fixes,
/// and the limits every fix must respect.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, PartialEq, KubeSchema)]
#[kube(
    group = "kubeheal.dev",
    version = "v1alpha1",
    kind = "HealRun",
    plural = "healruns",
    shortname = "hr",
    category = "kubeheal",
    namespaced,
    status = "HealRunStatus",
    doc = "A healing run: execute the build, parse the log into bug reports, ask a healer for a patch, gate it, commit it to the heal branch and run again, until the build is green or the budget is spent.",
    printcolumn = r#"{"name":"Phase","type":"string","jsonPath":".status.phase"}"#,
    printcolumn = r#"{"name":"Cycle","type":"integer","jsonPath":".status.cycle"}"#,
    printcolumn = r#"{"name":"Reason","type":"string","jsonPath":".status.reason"}"#,
    printcolumn = r#"{"name":"Branch","type":"string","jsonPath":".status.result.branch","priority":1}"#,
    printcolumn = r#"{"name":"Age","type":"date","jsonPath":".metadata.creationTimestamp"}"#
)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = Rule::new("has(oldSelf.ddsId) == has(self.ddsId) && (!has(self.ddsId) || self.ddsId == oldSelf.ddsId)")
    .message("ddsId cannot be set, changed or removed after creation: create a new HealRun for another DDS")
    .field_path(".ddsId"))]
#[x_kube(validation = Rule::new("!has(self.healer) || !has(self.healer.tool) || has(self.workOrder)")
    .message("healer.tool runs an approved work order's tool: only the run kubeheal's operator creates to execute a CodeFixDDS (spec.workOrder) may name one; use codeHealerApi, openAI or builtin")
    .field_path(".healer.tool"))]
pub struct HealRunSpec {
    /// The repository and revision to heal. Required.
    pub source: GitSource,

    /// How the build runs. Default: detected from the repository.
    #[serde(default)]
    pub executor: ExecutorSpec,

    /// Who proposes fixes. Default: the operator's healer (`CODE_HEALER_URL` when set, the
    /// built-in deterministic fixers otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub healer: Option<HealerSpec>,

    /// Most heal cycles (execute, propose, gate, commit) before the run gives up. 1 to 10.
    /// Default: 5.
    #[serde(default = "default_max_cycles")]
    #[schemars(range(min = 1, max = 10))]
    pub max_cycles: u32,

    /// Seconds the healer may take in each cycle; cycle N uses entry N, later cycles the last
    /// entry. Default: [30, 45, 60, 90, 120].
    #[serde(default = "default_cycle_timeouts")]
    #[schemars(length(min = 1, max = 10), inner(range(min = 1, max = 3600)))]
    pub cycle_timeouts: Vec<u32>,

    /// What a fix may change and who must approve it.
    #[serde(default)]
    pub policy: HealPolicy,

    /// Where accepted fixes are committed.
    #[serde(default)]
    pub delivery: Delivery,

    /// Limits on healer calls and wall-clock time. Default: no limit beyond `maxCycles`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget: Option<Budget>,

    /// Pause the run between steps; a step under way finishes first. Default: false.
    #[serde(default)]
    pub suspend: bool,

    /// Stop the run for good, keeping every commit made so far. Cannot be undone. Default:
    /// false.
    #[serde(default)]
    #[x_kube(validation = Rule::new("oldSelf == false || self == true").message("cancel cannot be undone: create a new HealRun instead"))]
    pub cancel: bool,

    /// The id of the DDS this run executes (e.g. `DDS-20260202-CODE-001`): a CodeFixDDS whose
    /// `sourceDds` names it answers this run's failure (seed 002's `source_dds`). Optional; a
    /// CodeFixDDS can always name the run itself as `HealRun/<name>`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 253))]
    pub dds_id: Option<String>,

    /// The approved CodeFixDDS, in this namespace, that this run executes: its goal,
    /// instructions and error context are the healer's task, and its id and approver go into
    /// the commit's trailers. The operator sets it on the runs it creates to execute an order;
    /// a run naming an order that is not approved (or is not valid) fails without executing.
    /// Only the operator may set it (the chart's admission policy).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 253))]
    pub work_order: Option<String>,

    /// A runtime error of the running application that the build does not show, such as the
    /// one a HealerTicket reports: its stack frames in the project's own files are bug reports
    /// of the baseline, so a run whose build already passes still asks for a fix, and is healed
    /// once a fix is committed and the build passes. The operator sets it on the runs it creates
    /// for tickets fixed in code; anyone may set it on a run of their own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub incident: Option<Incident>,

    /// Checks beyond the build: after the build passes, the service is started and its
    /// endpoints are called (seed 003's OpenAPI in); a failing endpoint fails the execution
    /// like a failing test. Default: the build alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verify: Option<Verify>,
}

/// What else an execution checks once the build passes.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Verify {
    /// The service's endpoints, called from its OpenAPI document. Required.
    pub openapi: OpenApiCheck,
}

/// A service started from the project and called from its OpenAPI 3.x document, each endpoint
/// once with inputs generated from its schema (as `kubeheal probe` does). A call that fails
/// (an HTTP error status, no answer, a timeout) fails the execution: its endpoint counts as a
/// failing test, and the service's output (its stack traces) and the redacted answer are what the
/// healer is given.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, KubeSchema)]
#[serde(rename_all = "camelCase")]
pub struct OpenApiCheck {
    /// The OpenAPI 3.x document (JSON or YAML), a path relative to the project's root
    /// (`source.subPath`), e.g. `openapi.json`. Required.
    #[schemars(length(min = 1, max = 1024))]
    #[x_kube(validation = Rule::new("!self.startsWith('/') && !self.contains('..')").message("verify.openapi.document must be a path inside the project, relative to its root, without '..'"))]
    pub document: String,
    /// The command that starts the service, run by `sh -c` at the project's root with the
    /// build's environment once the build has passed, e.g. `python3 -m uvicorn app:app --port
    /// 8000`. It is stopped when the calls are done (TERM, then KILL after 5 s). In a Job, the
    /// service's start and calls count against `executor.timeoutSeconds`. Required.
    #[schemars(length(min = 1, max = 4096))]
    #[x_kube(validation = Rule::new("self.trim() != ''").message("verify.openapi.start must not be blank"))]
    pub start: String,
    /// Where the started service answers, seen from the build: `http://127.0.0.1:PORT`, with a
    /// path prefix if it has one. Required.
    #[schemars(length(min = 1, max = 2048))]
    #[x_kube(validation = Rule::new("isURL(self) && url(self).getScheme() in ['http', 'https'] && url(self).getHostname() != ''").message("verify.openapi.baseUrl must be an http:// or https:// URL with a host, e.g. http://127.0.0.1:8000"))]
    pub base_url: String,
    /// The endpoints to call, as seed 003's endpoint IDs (`METHOD /path`). Default: every
    /// endpoint of the document.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 100), inner(length(min = 1, max = 2048)))]
    #[x_kube(validation = Rule::new("self.all(e, e.matches('^[A-Za-z]+ +/'))").message("verify.openapi.endpoints are seed 003's endpoint IDs, METHOD /path, e.g. 'GET /items/{id}'"))]
    pub endpoints: Vec<String>,
    /// Seconds the service may take to accept connections after it is started. 1 to 600.
    /// Default: 30.
    #[serde(default = "default_ready_timeout_seconds")]
    #[schemars(range(min = 1, max = 600))]
    pub ready_timeout_seconds: u32,
    /// Seconds one call may take. 1 to 600. Default: 30.
    #[serde(default = "default_call_timeout_seconds")]
    #[schemars(range(min = 1, max = 600))]
    pub call_timeout_seconds: u32,
}

impl OpenApiCheck {
    /// The longest the calls may take once the service is started: the time to become ready,
    /// each call's limit (for the named endpoints, else for a hundred), and a margin. Past it
    /// the check is given up as not reporting.
    pub fn time_limit_seconds(&self) -> u32 {
        let calls = if self.endpoints.is_empty() {
            100
        } else {
            self.endpoints.len() as u32
        };
        self.ready_timeout_seconds + self.call_timeout_seconds * calls + 30
    }
}

fn default_ready_timeout_seconds() -> u32 {
    30
}

fn default_call_timeout_seconds() -> u32 {
    30
}

/// A runtime error to heal, as an application reported it.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Incident {
    /// The error message, e.g. `KeyError: 'resolution'`. Required.
    #[schemars(length(min = 1, max = 8192))]
    pub error: String,
    /// The stack trace (Python or JavaScript); its frames in the project's files become the
    /// bug reports. Default: none (the run then has nothing to point the healer at).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 65536))]
    pub stacktrace: Option<String>,
    /// The HealerTicket that reported it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 253))]
    pub ticket: Option<String>,
}

fn default_max_cycles() -> u32 {
    5
}

/// Seed 000's progressive per-cycle healer timeouts, in seconds: cycle N uses entry N, later
/// cycles the last.
pub const DEFAULT_CYCLE_TIMEOUTS: [u32; 5] = [30, 45, 60, 90, 120];

fn default_cycle_timeouts() -> Vec<u32> {
    DEFAULT_CYCLE_TIMEOUTS.to_vec()
}

/// How the build runs in an executor Job (or a local process with `kubeheal heal`).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, KubeSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExecutorSpec {
    /// Container image that runs the build. Default: chosen by project type
    /// (python, node, rust or go official image).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 512))]
    pub image: Option<String>,

    /// Build command, run by `sh -c` at the project root. Default: from the project type, with
    /// flags that make the output parseable (`pytest -rA --junitxml=...`, `cargo test`,
    /// `go test -json ./...`, `npm test`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 4096))]
    pub command: Option<String>,

    /// `auto`, `python`, `node`, `rust` or `go`. Default: `auto` (detected from the files in the
    /// repository).
    #[serde(default)]
    pub project_type: ProjectType,

    /// Environment variables for the build container. Default: none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub env: Vec<EnvVar>,

    /// ConfigMaps and Secrets whose keys become environment variables of the build container.
    /// Secret values are redacted from every log. Default: none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub env_from: Vec<EnvFromSource>,

    /// CPU and memory for the build container. Default: requests 500m CPU / 512Mi, limits
    /// 2 CPU / 2Gi.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources: Option<ResourceRequirements>,

    /// Seconds one execution may take before it is stopped and reported as `timeout`.
    /// 1 to 86400. Default: 300.
    #[serde(default = "default_timeout_seconds")]
    #[schemars(range(min = 1, max = 86400))]
    pub timeout_seconds: u32,
}

impl Default for ExecutorSpec {
    fn default() -> Self {
        Self {
            image: None,
            command: None,
            project_type: ProjectType::default(),
            env: Vec::new(),
            env_from: Vec::new(),
            resources: None,
            timeout_seconds: default_timeout_seconds(),
        }
    }
}

fn default_timeout_seconds() -> u32 {
    300
}

/// The kind of project, which picks the default image, command and parser hints.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ProjectType {
    /// Detect from the repository (pyproject.toml / requirements.txt, package.json, Cargo.toml,
    /// go.mod).
    #[default]
    Auto,
    /// A Python project tested with pytest.
    Python,
    /// A Node.js project tested with `npm test`.
    Node,
    /// A Rust project tested with `cargo test`.
    Rust,
    /// A Go project tested with `go test`.
    Go,
}

/// The limits a fix must respect before it is committed, and who approves it.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, KubeSchema)]
#[serde(rename_all = "camelCase")]
pub struct HealPolicy {
    /// `Automatic` (commit every fix that passes the gate), `Manual` (every fix waits for a
    /// human approval in a CodeFixDDS) or `Tiered` (deterministic fixes are automatic, healer
    /// fixes wait for approval). Default: `Tiered`.
    #[serde(default)]
    pub approval: ApprovalMode,

    /// Fixes whose confidence is below this are rejected by the gate. 0 to 1. Default: 0.5.
    #[serde(default = "default_confidence_threshold")]
    #[schemars(range(min = 0.0, max = 1.0))]
    pub confidence_threshold: f64,

    /// Most files one fix may change. 1 to 50. Default: 3.
    #[serde(default = "default_max_files_changed")]
    #[schemars(range(min = 1, max = 50))]
    pub max_files_changed: u32,

    /// Paths (files or folders ending in `/`, relative to the repository root) a fix may
    /// change. Default: empty, meaning the whole repository.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 100), inner(length(min = 1, max = 1024)))]
    #[x_kube(validation = Rule::new("self.all(p, !p.startsWith('/') && !p.contains('..'))").message("allowedPaths must be relative to the repository root and must not contain '..'"))]
    pub allowed_paths: Vec<String>,

    /// Paths a fix may never change, even inside `allowedPaths`. Default: empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 100), inner(length(min = 1, max = 1024)))]
    #[x_kube(validation = Rule::new("self.all(p, !p.startsWith('/') && !p.contains('..'))").message("protectedPaths must be relative to the repository root and must not contain '..'"))]
    pub protected_paths: Vec<String>,

    /// Allow fixes to change test files. A fix that deletes or weakens a test is not a fix.
    /// Default: false.
    #[serde(default)]
    pub allow_test_changes: bool,

    /// Reject fixes that add a dependency to any dependency manifest (requirements*.txt,
    /// pyproject.toml, package.json, Cargo.toml, go.mod). Default: true.
    #[serde(default = "default_true")]
    pub no_new_dependencies: bool,

    /// A fix may change only the reported lines plus or minus this many lines. 0 to 100.
    /// Default: 3.
    #[serde(default = "default_change_window_lines")]
    #[schemars(range(min = 0, max = 100))]
    pub change_window_lines: u32,

    /// After a fix is reverted for making passing tests fail, go on with the next cycle (when
    /// one remains) instead of ending the run as `Regressed`. Default: false.
    #[serde(default)]
    pub continue_on_regression: bool,
}

impl Default for HealPolicy {
    fn default() -> Self {
        Self {
            approval: ApprovalMode::default(),
            confidence_threshold: default_confidence_threshold(),
            max_files_changed: default_max_files_changed(),
            allowed_paths: Vec::new(),
            protected_paths: Vec::new(),
            allow_test_changes: false,
            no_new_dependencies: true,
            change_window_lines: default_change_window_lines(),
            continue_on_regression: false,
        }
    }
}

fn default_confidence_threshold() -> f64 {
    0.5
}

fn default_max_files_changed() -> u32 {
    3
}

fn default_change_window_lines() -> u32 {
    3
}

fn default_true() -> bool {
    true
}

/// Who approves a fix before it is committed.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, JsonSchema)]
pub enum ApprovalMode {
    /// Every fix that passes the gate is committed without asking.
    Automatic,
    /// Every fix waits for a human approval in a CodeFixDDS.
    Manual,
    /// Deterministic fixes are committed without asking; healer fixes wait for approval.
    #[default]
    Tiered,
}

/// Where accepted fixes are committed.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, KubeSchema)]
#[serde(rename_all = "camelCase")]
pub struct Delivery {
    /// Branch the fixes are committed to, under `kubeheal/`: the operator force-pushes it, so it
    /// is never a branch people work on (the default branch, `release/…`).
    /// Default: `kubeheal/<HealRun name>`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 255))]
    #[x_kube(validation = Rule::new(r"self.matches('^[A-Za-z0-9._/-]+$') && !self.endsWith('/') && !self.endsWith('.') && !self.endsWith('.lock') && !self.contains('..') && !self.contains('//') && !self.contains('/.') && !self.contains('/-')")
        .message("delivery.branch must be a valid Git branch name (letters, digits, '.', '_', '-', '/'; no '..', no component that starts with '.' or '-', no trailing '.', '/' or '.lock')"))]
    #[x_kube(validation = Rule::new("self.startsWith('kubeheal/')").message("delivery.branch must start with kubeheal/: the operator force-pushes the heal branch, so it must be kubeheal's own, never main, master or a release branch"))]
    pub branch: Option<String>,

    /// Push the heal branch to the source repository after each commit. Default: true.
    #[serde(default = "default_true")]
    pub push: bool,

    /// Author of the commits. Default: `kubeheal <kubeheal@kubeheal.dev>`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub author: Option<GitAuthor>,
}

impl Default for Delivery {
    fn default() -> Self {
        Self {
            branch: None,
            push: true,
            author: None,
        }
    }
}

/// A Git commit author.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, KubeSchema)]
#[serde(rename_all = "camelCase")]
pub struct GitAuthor {
    /// Name. Required.
    #[schemars(length(min = 1, max = 253))]
    pub name: String,
    /// E-mail address. Required.
    #[schemars(length(min = 3, max = 253))]
    #[x_kube(validation = Rule::new("self.matches('^[^@ ]+@[^@ ]+$')").message("author.email must be an e-mail address"))]
    pub email: String,
}

/// Limits beyond `maxCycles`; the run stops with reason `BudgetExceeded` when one is reached.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Budget {
    /// Most healer calls over the whole run. Default: no limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub max_healer_calls: Option<u32>,
    /// Most seconds from the first execution to the end of the run. Default: no limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub max_duration_seconds: Option<u64>,
}

/// Observed state of a HealRun, written by the operator only.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, KubeSchema)]
#[serde(rename_all = "camelCase")]
pub struct HealRunStatus {
    /// The `metadata.generation` this status describes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,

    /// `Ready`, `Reconciling` and `Stalled`, each with a reason.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[x_kube(merge_strategy = ListMerge::Map(vec!["type".into()]))]
    pub conditions: Vec<Condition>,

    /// Where the run is: Pending, Running, AwaitingApproval, Healed, Failed or Cancelled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<HealRunPhase>,

    /// Why the run ended; set with a terminal phase.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<HealRunReason>,

    /// What happened last, for people.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,

    /// The current cycle (0 while the baseline runs).
    #[serde(default)]
    pub cycle: u32,

    /// The commit the run started from, resolved from `spec.source.revision`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_commit: Option<String>,

    /// The project type the build runs as: `spec.executor.projectType`, or for `auto` what the
    /// repository holds at the source commit (which picks the default image and command).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project_type: Option<ProjectType>,

    /// When the first execution started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<Time>,

    /// When the run reached a terminal phase.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finished_at: Option<Time>,

    /// Healer calls made so far (counted against `spec.budget.maxHealerCalls`).
    #[serde(default)]
    pub healer_calls: u32,

    /// The first execution, before any fix.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline: Option<Observation>,

    /// One entry per cycle, oldest first (at most `maxCycles`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 10))]
    pub cycles: Vec<CycleStatus>,

    /// What the run delivered, once it ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<HealResult>,

    /// Where the full redacted logs of every execution are kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logs_ref: Option<LogsRef>,

    /// Name of the CodeFixDDS proposed when the run ended without a fix.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proposed_fix: Option<String>,

    /// The approved work order the run executes (`spec.workOrder`), as the operator verified it
    /// before the first execution.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub work_order: Option<WorkOrderStatus>,
}

/// An approved CodeFixDDS a HealRun executes, as verified from the CodeFixDDS itself.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WorkOrderStatus {
    /// The CodeFixDDS's name.
    pub name: String,
    /// Its `spec.id` (`DDS-FIX-YYYYMMDD-XXX`): the commit's `Kubeheal-DDS` trailer.
    pub id: String,
    /// Who approved it: the commit's `Approved-by` trailer.
    pub approved_by: String,
}

/// Where a HealRun is in its life.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, JsonSchema)]
pub enum HealRunPhase {
    /// Accepted, nothing run yet.
    Pending,
    /// Executing, parsing, asking the healer, gating or committing.
    Running,
    /// A fix waits for a human decision in the CodeFixDDS named in the current cycle.
    AwaitingApproval,
    /// The build is green (terminal).
    Healed,
    /// The run ended without a green build; `reason` says why (terminal).
    Failed,
    /// `spec.cancel` stopped the run; commits made so far are kept (terminal).
    Cancelled,
}

/// Why a HealRun ended.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, JsonSchema)]
pub enum HealRunReason {
    /// The build and its tests pass.
    Healed,
    /// Every cycle was used without a green build.
    CyclesExhausted,
    /// `spec.budget` was reached.
    BudgetExceeded,
    /// The build failed for reasons outside the code (out of memory, network, disk, missing
    /// command): no healer was asked.
    InfraFailure,
    /// A fix made tests fail that passed before; it was reverted.
    Regressed,
    /// The healer could not be reached in any cycle.
    HealerUnavailable,
    /// The gate rejected every proposed fix.
    GateRejected,
    /// A person rejected the proposed fix.
    Rejected,
    /// The build fails but its log names no file and line a fix could target (or the build
    /// passes and the incident's stack trace names no file of the repository); no healer was
    /// asked.
    Undiagnosed,
    /// `spec.cancel` was set.
    Cancelled,
    /// The source cannot be used: the repository or revision does not exist, the credentials
    /// are refused, or the operator does not allow the URL. Fix `spec.source` and create the
    /// run again.
    SourceUnavailable,
}

/// One execution and what was learnt from it.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, KubeSchema)]
#[serde(rename_all = "camelCase")]
pub struct Observation {
    /// What the executor returned (`runId` is the executor Job's name).
    pub envelope: RunEnvelope,
    /// The first bug reports the parser found (at most 20).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 20))]
    pub bug_reports: Vec<BugReport>,
    /// Tests that failed (at most 50 names).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 50))]
    pub failing_tests: Vec<String>,
    /// How many tests ran (0 when the suite could not even start, e.g. a collection error).
    #[serde(default)]
    pub tests_ran: u32,
    /// The endpoint calls of `spec.verify`, when the build passed (at most 100).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 100))]
    pub endpoint_calls: Vec<EndpointCall>,
}

/// One endpoint call of `spec.verify.openapi`, as its RunEnvelope summed it up.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct EndpointCall {
    /// Seed 003's endpoint ID, `METHOD /path`.
    #[schemars(length(max = 2048))]
    pub endpoint: String,
    /// `success`, `error` or `timeout`.
    pub status: RunStatus,
    /// The answer's HTTP status (502 or 504 when none came).
    pub http_status: u16,
    /// Why the call failed, when it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_class: Option<ErrorClass>,
}

/// One heal cycle: execute, parse, propose, gate, approve, commit.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, KubeSchema)]
#[serde(rename_all = "camelCase")]
pub struct CycleStatus {
    /// Cycle number, from 1.
    pub cycle: u32,
    /// The execution that verified this cycle's committed fix.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub execution: Option<Observation>,
    /// Tests fixed and newly failing compared with the previous cycle.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tests: Option<TestDiff>,
    /// The call to the healer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub healer_call: Option<HealerCall>,
    /// The patch the healer proposed and what the gate said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub patch: Option<PatchStatus>,
    /// The CodeFixDDS that asks a human to approve this cycle's patch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval_request: Option<String>,
}

/// Failing tests compared with the previous cycle (each list at most 50 names).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, KubeSchema)]
#[serde(rename_all = "camelCase")]
pub struct TestDiff {
    /// Tests that failed before and pass now.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 50))]
    pub fixed: Vec<String>,
    /// Tests that failed before and still fail.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 50))]
    pub still_failing: Vec<String>,
    /// Tests that passed before and fail now.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 50))]
    pub newly_failing: Vec<String>,
}

/// How a healer call ended.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum HealerOutcome {
    /// The healer returned modified files.
    Healed,
    /// The healer answered with an error, or with a response that failed validation.
    Error,
    /// The healer did not answer within the cycle's timeout.
    Timeout,
    /// The healer could not be reached (connection refused, DNS, TLS).
    Unreachable,
}

/// One call to the healer.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HealerCall {
    /// Which healer answered: `builtin` (deterministic fixers), `code-healer-api` or `openai`.
    pub healer: String,
    /// Whether the healer's fixes are deterministic (the built-in fixers): under the `Tiered`
    /// approval policy such a fix is committed without asking a human.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub deterministic: bool,
    /// `healed`, `error`, `timeout` or `unreachable`.
    pub outcome: HealerOutcome,
    /// Why the call failed, when it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// How long the healer took, in milliseconds.
    pub duration_ms: u64,
    /// The timeout this cycle allowed, in seconds.
    pub timeout_seconds: u32,
    /// The healer's own summary of its changes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub changes_summary: Option<String>,
}

/// A proposed patch, the gate's verdict on it, and where it was committed.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, KubeSchema)]
#[serde(rename_all = "camelCase")]
pub struct PatchStatus {
    /// `sha256:` digest of the patch; an approval must name the same digest.
    pub digest: String,
    /// Files the patch changes, with added and removed line counts.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 50))]
    pub files: Vec<FileChange>,
    /// The healer's confidence in the patch, from 0 to 1.
    #[schemars(range(min = 0.0, max = 1.0))]
    pub confidence: f64,
    /// Whether the gate accepted the patch, and why not.
    pub gate: GateVerdict,
    /// Who approved the patch in its CodeFixDDS, when the policy asked for approval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approved_by: Option<String>,
    /// The commit on the heal branch, once committed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    /// The commit that reverted this patch, if it regressed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reverted_by: Option<String>,
}

/// Lines a patch changes in one file.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FileChange {
    /// Path relative to the repository root.
    pub path: String,
    /// Lines added.
    pub added: u32,
    /// Lines removed.
    pub removed: u32,
}

/// The gate's verdict on a patch.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GateVerdict {
    /// True when the patch respects every policy limit.
    pub accepted: bool,
    /// Each limit the patch broke, for people.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reasons: Vec<String>,
}

/// What a finished run delivered.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, KubeSchema)]
#[serde(rename_all = "camelCase")]
pub struct HealResult {
    /// The heal branch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    /// The last commit on the heal branch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    /// `git diff --shortstat` of the heal branch against the source commit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diff_stat: Option<String>,
    /// Tests that failed in the baseline and pass at the end (at most 50 names).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 50))]
    pub fixed_tests: Vec<String>,
}

/// Where the full redacted, compressed logs of a run's executions are kept.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LogsRef {
    /// Kind of the object holding the logs (`ConfigMap`), owned by the HealRun.
    pub kind: String,
    /// Its name, in the HealRun's namespace.
    pub name: String,
}
