//! Types shared by the three resources: where the code lives (`GitSource`), which healer to ask
//! (`HealerSpec`), what the parser found (`BugReport`), what an execution returned
//! (`RunEnvelope`), and a human's answer to a proposal (`Decision`).
//!
//! These are API types: their `///` comments are what `kubectl explain` prints.

use std::collections::BTreeMap;

use kube::KubeSchema;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A Git repository at a revision: the code a HealRun heals or a CodeFixDDS changes.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, KubeSchema)]
#[serde(rename_all = "camelCase")]
pub struct GitSource {
    /// Clone URL of the repository: `https://`, `http://`, `ssh://`, `git://`, scp-like
    /// `git@host:org/repo.git`, or `file://` (local mode and tests). Required.
    #[x_kube(validation = Rule::new(r"self.matches('^(https?|ssh|git|file)://[^ ]+$') || self.matches('^[A-Za-z0-9._-]+@[A-Za-z0-9.-]+:[^ ]+$')")
        .message("source url must be an https://, http://, ssh://, git://, file:// or git@host:path clone URL"))]
    #[schemars(length(min = 1, max = 2048))]
    pub url: String,

    /// Branch, tag or full commit SHA to start from. Default: the remote's HEAD (its default
    /// branch). The run pins the exact commit it resolved in `status`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 255))]
    pub revision: Option<String>,

    /// Secret in the same namespace with the credentials to fetch and push: key `token` for
    /// HTTPS (sent as the password of user `x-access-token`), or keys `ssh-privatekey` and
    /// `known_hosts` for SSH. Default: no credentials (public or `file://` repositories).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret_ref: Option<LocalSecretRef>,

    /// Folder inside the repository that holds the project (relative, forward slashes).
    /// Default: the repository root.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[x_kube(validation = Rule::new(r"!self.startsWith('/') && !self.split('/').exists(s, s == '..')")
        .message("subPath must be relative to the repository root and must not contain '..'"))]
    #[schemars(length(max = 1024))]
    pub sub_path: Option<String>,
}

/// A Secret in the same namespace as the object that names it.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LocalSecretRef {
    /// Name of the Secret. Required.
    #[schemars(length(min = 1, max = 253))]
    pub name: String,
}

/// One key of a Secret in the same namespace as the object that names it.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SecretKeyRef {
    /// Name of the Secret. Required.
    #[schemars(length(min = 1, max = 253))]
    pub name: String,
    /// Key inside the Secret. Default: `token`.
    #[serde(default = "default_secret_key")]
    #[schemars(length(min = 1, max = 253))]
    pub key: String,
}

fn default_secret_key() -> String {
    "token".to_owned()
}

/// Which code healer proposes the fixes the built-in deterministic fixers cannot make (those are
/// always asked first, except before a `tool`). Set exactly one of `codeHealerApi`, `openAI`,
/// `builtin` (the built-in fixers alone) or `tool`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, KubeSchema)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = Rule::new("[has(self.codeHealerApi), has(self.openAI), has(self.builtin), has(self.tool)].exists_one(x, x)")
    .message("healer must set exactly one of codeHealerApi, openAI, builtin or tool"))]
pub struct HealerSpec {
    /// A service that speaks the Code Healer API (`POST` JSON with `project_id`, `cycle`,
    /// `failed_files`, `pytest_errors`), such as SAM.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code_healer_api: Option<CodeHealerApiHealer>,

    /// Any OpenAI-compatible chat-completions endpoint (OpenAI, Azure OpenAI, vLLM, Ollama,
    /// LiteLLM, ...).
    #[serde(default, rename = "openAI", skip_serializing_if = "Option::is_none")]
    pub open_ai: Option<OpenAiHealer>,

    /// The deterministic fixers built into kubeheal (missing colons, indentation, missing
    /// imports, unused imports, contract normalisation). No LLM, no network.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub builtin: Option<BuiltinHealer>,

    /// An executor tool the operator is configured with (`--tool NAME=IMAGE`, the chart's
    /// `tools`), such as a CodeFixDDS's `tool: aider`: its image runs in a Job over the checkout,
    /// and the files it changed are the cycle's patch, gated like any other.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<ToolHealer>,
}

/// An executor tool, by the name the operator knows it under.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, KubeSchema)]
pub struct ToolHealer {
    /// The tool's name (`aider`), as the operator's `--tool NAME=IMAGE` gives it.
    #[schemars(length(min = 1, max = 63), regex(pattern = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"))]
    pub name: String,
}

/// A Code Healer API endpoint.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, KubeSchema)]
#[serde(rename_all = "camelCase")]
pub struct CodeHealerApiHealer {
    /// URL of the heal endpoint, e.g. `http://sam.healers:3000/api/heal`. Default: the
    /// operator's `CODE_HEALER_URL`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[x_kube(validation = Rule::new("self.matches('^https?://[^ ]+$')").message("codeHealerApi.url must be an http:// or https:// URL"))]
    #[schemars(length(max = 2048))]
    pub url: Option<String>,
    /// Secret key holding a bearer token sent as `Authorization: Bearer ...`. Default: none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret_ref: Option<SecretKeyRef>,
}

/// An OpenAI-compatible chat-completions endpoint.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, KubeSchema)]
#[serde(rename_all = "camelCase")]
pub struct OpenAiHealer {
    /// Base URL of the API, e.g. `https://api.openai.com/v1` or `http://ollama:11434/v1`.
    /// Required.
    #[x_kube(validation = Rule::new("self.matches('^https?://[^ ]+$')").message("openAI.baseUrl must be an http:// or https:// URL"))]
    #[schemars(length(min = 1, max = 2048))]
    pub base_url: String,
    /// Model name as the endpoint knows it. Required.
    #[schemars(length(min = 1, max = 253))]
    pub model: String,
    /// Secret key holding the API key. Default: none (local endpoints such as Ollama).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret_ref: Option<SecretKeyRef>,
    /// Upper bound on completion tokens per request. Default: 4096.
    #[serde(default = "default_max_tokens")]
    #[schemars(range(min = 256, max = 200000))]
    pub max_tokens: u32,
}

fn default_max_tokens() -> u32 {
    4096
}

/// The built-in deterministic fixers. Takes no settings.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
pub struct BuiltinHealer {}

/// The six bug types of the execution contract.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, JsonSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ErrorType {
    /// A linter finding (ruff, flake8, pylint, eslint, clippy).
    Linting,
    /// Code that does not parse.
    Syntax,
    /// A failing assertion or another runtime error of the code's own logic.
    Logic,
    /// A type-checker or compiler type error, or a runtime TypeError/AttributeError on a wrong type.
    TypeError,
    /// A module or name that cannot be resolved.
    Import,
    /// A Python IndentationError or TabError.
    Indentation,
}

/// One problem the parser found in a build log: where it is, what kind it is, and which test
/// showed it.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BugReport {
    /// Path of the file, relative to the repository root, with forward slashes.
    pub file_path: String,
    /// Line number in that file (1-based).
    #[schemars(range(min = 1))]
    pub line_number: u32,
    /// One of LINTING, SYNTAX, LOGIC, TYPE_ERROR, IMPORT, INDENTATION.
    pub error_type: ErrorType,
    /// The tool's own error message (redacted, capped at 1000 characters).
    #[schemars(length(max = 1000))]
    pub message: String,
    /// The failing test, in the tool's own notation (pytest node id, `module::test` for cargo,
    /// `TestX/sub` for go, jest's full name), when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub test_name: Option<String>,
    /// How sure the parser is of this location and type, from 0 to 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0.0, max = 1.0))]
    pub confidence_score: Option<f64>,
}

/// How an execution ended.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum RunStatus {
    /// The command exited with code 0.
    Success,
    /// The command failed, or could not be run.
    Error,
    /// The command ran past its timeout and was stopped.
    Timeout,
}

/// Machine-readable class of a failed execution. Every class comes with an actionable
/// `suggestedFix`.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ErrorClass {
    /// A module the code needs could not be imported.
    ImportError,
    /// The program's entry point was not found.
    EntrypointNotFound,
    /// An endpoint the run needed is not in the OpenAPI spec.
    EndpointNotFound,
    /// The inputs were invalid.
    ValidationError,
    /// An uncaught exception in the project's code.
    RuntimeError,
    /// The run exceeded its time limit.
    Timeout,
    /// An outbound network request failed.
    NetworkError,
    /// Tests ran and at least one failed.
    TestFailure,
    /// The project did not compile or build.
    BuildFailure,
    /// The build command or an interpreter it needs was not found.
    CommandNotFound,
    /// The container exceeded its memory limit and was killed.
    OomKilled,
    /// The Pod was evicted from its node.
    Evicted,
    /// The executor image could not be pulled.
    ImagePull,
    /// The source could not be fetched at the requested revision, or the patch did not apply.
    SourceFetch,
    /// The infrastructure failed (disk full, DNS, node lost): not a problem in the code.
    Infra,
    /// None of the above.
    Unknown,
}

/// A file an execution produced and kept, such as a JUnit XML report.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ArtifactRef {
    /// File name.
    pub name: String,
    /// Size in bytes.
    pub size: u64,
    /// MIME type.
    pub mime: String,
    /// Where it can be read: a local path, or `configmap://<namespace>/<name>/<key>`.
    pub url: String,
}

/// What one execution returned — a run of the build command, or one call of a service's endpoint
/// (`kubeheal probe`): seed 003's RunEnvelope plus seed 001's executor output (exit code, log
/// excerpt, environment).
///
/// For a build there is no HTTP response, so kubeheal gives the seed's HTTP fields the meaning
/// the seed's own examples give them: `httpStatus` is 200 when the build succeeded, 500 when it
/// failed and 504 when it timed out; `contentType` is `text/plain` (the content is the build's
/// redacted log) and `textPreview` its first 10 KB. (The same rule for a probe that got no
/// response: 502 or 504, as a gateway answers.)
//
// The resources store this camelCase form; [`RunEnvelope::seed_json`] is seed 003's snake_case.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RunEnvelope {
    /// Unique id of the run; in a cluster, the name of the executor Job.
    pub run_id: String,
    /// The endpoint a probe called (`METHOD /path`, seed 003's endpoint ID); empty for a build.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 2048))]
    pub endpoint: Option<String>,
    /// `success`, `error` or `timeout`.
    pub status: RunStatus,
    /// Wall-clock duration in milliseconds.
    pub duration_ms: u64,
    /// The response's HTTP status; for a build 200 (success), 500 (error) or 504 (timeout); for a
    /// probe that got no response, 502 (no connection) or 504 (timeout), and 400 or 404 when no
    /// call was made (inputs that cannot be sent, an endpoint not in the document).
    #[serde(default)]
    pub http_status: u16,
    /// The response's media type (`application/json`, `text/csv`, ...); `text/plain` for a build.
    #[serde(default)]
    #[schemars(length(max = 256))]
    pub content_type: String,
    /// The response parsed, when its content type is JSON.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "any_json")]
    pub json: Option<serde_json::Value>,
    /// The first 10 KB of a text response (a build's redacted log), when the content is not JSON.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 10240))]
    pub text_preview: Option<String>,
    /// Exit code of the build command, when it ran to an end.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// Machine-readable class of the failure; set whenever `status` is not `success`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_class: Option<ErrorClass>,
    /// What went wrong, for people.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_message: Option<String>,
    /// The next step that would fix it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suggested_fix: Option<String>,
    /// Non-fatal issues met during the run.
    #[serde(default)]
    pub warnings: Vec<String>,
    /// True when secrets were replaced by `[REDACTED:KIND]` in anything the run returned.
    #[serde(default)]
    pub redactions_applied: bool,
    /// Files the run produced and kept.
    #[serde(default)]
    pub artifacts: Vec<ArtifactRef>,
    /// First and last sections of the redacted log, for quick display (at most 8 KiB).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 8192))]
    pub log_excerpt: Option<String>,
    /// Image, runtime versions and detected tools of the environment the run used.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub environment_metadata: BTreeMap<String, String>,
}

/// The schema of a field that holds any JSON a service answered: the API server keeps it as is.
fn any_json(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({ "x-kubernetes-preserve-unknown-fields": true })
}

/// Seed 003's `text_preview`: at most the first 10 KB.
pub const TEXT_PREVIEW_BYTES: usize = 10 * 1024;

/// The first [`TEXT_PREVIEW_BYTES`] of `text`, cut at a character boundary.
pub fn text_preview(text: &str) -> String {
    let mut end = text.len().min(TEXT_PREVIEW_BYTES);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text[..end].to_owned()
}

/// The HTTP status a build's envelope carries (see [`RunEnvelope`]): the status codes seed 003's
/// examples use for the same outcomes.
pub fn build_http_status(status: RunStatus) -> u16 {
    match status {
        RunStatus::Success => 200,
        RunStatus::Error => 500,
        RunStatus::Timeout => 504,
    }
}

/// The content type of a build's envelope: its content is the log.
pub const BUILD_CONTENT_TYPE: &str = "text/plain";

impl RunEnvelope {
    /// Seed 003's wire form: the same fields with snake_case names (`runId` → `run_id`). What is
    /// data rather than a field name — the service's `json`, the environment metadata — keeps its
    /// keys as they are.
    pub fn seed_json(&self) -> serde_json::Value {
        use serde_json::Value;
        fn snake(name: &str) -> String {
            let mut out = String::with_capacity(name.len() + 4);
            for c in name.chars() {
                if c.is_ascii_uppercase() {
                    out.push('_');
                    out.push(c.to_ascii_lowercase());
                } else {
                    out.push(c);
                }
            }
            out
        }
        fn rename(value: Value) -> Value {
            match value {
                Value::Object(map) => Value::Object(
                    map.into_iter()
                        .map(|(k, v)| {
                            let v = if k == "environmentMetadata" || k == "json" {
                                v
                            } else {
                                rename(v)
                            };
                            (snake(&k), v)
                        })
                        .collect(),
                ),
                Value::Array(items) => Value::Array(items.into_iter().map(rename).collect()),
                other => other,
            }
        }
        // Plain data (strings, numbers, a JSON value): serialising cannot fail.
        rename(serde_json::to_value(self).unwrap_or(Value::Null))
    }
}

/// A human's answer to a proposal.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, JsonSchema)]
pub enum Verdict {
    /// Go ahead with exactly the proposed patch.
    Approved,
    /// Do not apply it.
    Rejected,
}

/// A human's decision on a proposal. It is written into `spec` by someone allowed to
/// approve, and cannot be changed or removed once made.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, KubeSchema)]
#[serde(rename_all = "camelCase")]
pub struct Decision {
    /// `Approved` or `Rejected`. Required.
    pub decision: Verdict,
    /// Why: shown in events, notifications and the audit trail. Default: empty.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 1024))]
    pub reason: Option<String>,
    /// Who took the decision (a user name as the API server knows it). Required.
    #[schemars(length(min = 1, max = 253))]
    pub approved_by: String,
    /// Digest of the patch the decision is about (`sha256:` + 64 hex digits), copied from the
    /// proposal; an approval is valid only for the patch with this digest.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[x_kube(validation = Rule::new("self.matches('^sha256:[0-9a-f]{64}$')").message("patchDigest must be 'sha256:' followed by 64 lower-case hex digits"))]
    #[schemars(length(max = 71))]
    pub patch_digest: Option<String>,
}

/// Condition types every kubeheal resource reports (kstatus-compatible).
pub mod condition {
    /// The resource reached its goal (healed, executed, applied).
    pub const READY: &str = "Ready";
    /// The controller is working on the resource.
    pub const RECONCILING: &str = "Reconciling";
    /// The resource cannot progress without a change from a person.
    pub const STALLED: &str = "Stalled";
}

/// The name a unit enum variant has on the wire (`OOM_KILLED`, `unreachable`, ...), for
/// messages and metric labels that must match what `kubectl get -o yaml` shows.
pub fn wire_name<T: Serialize>(value: &T) -> String {
    serde_json::to_value(value)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default()
}

/// The label every object kubeheal creates carries (`app.kubernetes.io/managed-by=kubeheal`): the
/// operator watches only the Jobs that have it.
pub const MANAGED_BY: (&str, &str) = ("app.kubernetes.io/managed-by", "kubeheal");

/// The label naming the HealRun an object (a Job, its Pod, a ConfigMap) belongs to.
pub const HEAL_RUN_LABEL: &str = "kubeheal.dev/healrun";

/// The labels of an object a HealRun owns: managed by kubeheal, and the run's name.
pub fn heal_run_labels(run: &str) -> std::collections::BTreeMap<String, String> {
    std::collections::BTreeMap::from([
        (MANAGED_BY.0.to_owned(), MANAGED_BY.1.to_owned()),
        (HEAL_RUN_LABEL.to_owned(), run.to_owned()),
    ])
}
