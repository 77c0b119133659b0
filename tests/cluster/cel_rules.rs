//! Every CEL rule in the CRDs, proven by the API server: for each rule a manifest that breaks
//! only that rule is rejected with the rule's own message, and the valid base is accepted. A
//! last test checks that no rule in the generated CRDs is left without such a case.

use std::collections::BTreeSet;

use kube::CustomResourceExt;
use kube::api::{Api, ApiResource, DynamicObject, Patch, PatchParams, PostParams};
use kubeheal::api::{CodeFixDDS, HealRun, HealerTicket};
use serde_json::{Value, json};

use crate::support::cluster::control_plane;

const DIGEST: &str = "sha256:1f2e3d4c5b6a79881f2e3d4c5b6a79881f2e3d4c5b6a79881f2e3d4c5b6a7988";
const OTHER_DIGEST: &str = "sha256:0000000000000000000000000000000000000000000000000000000000000000";

/// How a case breaks the valid base object.
enum Break {
    /// Create the base with these changes (pointer, new value; `Value::Null` removes the field).
    OnCreate(Vec<(&'static str, Value)>),
    /// Create the base with the first changes, then update it with the second.
    OnUpdate(Vec<(&'static str, Value)>, Vec<(&'static str, Value)>),
}

struct Case {
    what: &'static str,
    breaks: Break,
    /// The rule messages the API server must answer with (all of them, and nothing else).
    messages: &'static [&'static str],
}

fn case(what: &'static str, changes: Vec<(&'static str, Value)>, messages: &'static [&'static str]) -> Case {
    Case {
        what,
        breaks: Break::OnCreate(changes),
        messages,
    }
}

fn update_case(
    what: &'static str,
    before: Vec<(&'static str, Value)>,
    after: Vec<(&'static str, Value)>,
    messages: &'static [&'static str],
) -> Case {
    Case {
        what,
        breaks: Break::OnUpdate(before, after),
        messages,
    }
}

fn set(object: &mut Value, pointer: &str, value: Value) {
    let (parent, key) = pointer.rsplit_once('/').expect("pointers start with /");
    let parent = object
        .pointer_mut(parent)
        .unwrap_or_else(|| panic!("the base object has no {parent}"));
    match parent {
        Value::Object(map) if value.is_null() => {
            map.remove(key);
        }
        Value::Object(map) => {
            map.insert(key.to_owned(), value);
        }
        Value::Array(items) => items[key.parse::<usize>().expect("array index")] = value,
        other => panic!("cannot set {pointer} inside {other}"),
    }
}

fn with(base: &Value, changes: &[(&'static str, Value)], name: &str) -> Value {
    let mut object = base.clone();
    for (pointer, value) in changes {
        set(&mut object, pointer, value.clone());
    }
    set(&mut object, "/metadata/name", json!(name));
    object
}

/// A decision as the test's requester writes it: these tests act as the control plane's admin,
/// and the chart's approval policy admits a decision only under the requester's own name.
fn approval(decision: &str, digest: Option<&str>) -> Value {
    let mut value = json!({"decision": decision, "approvedBy": "admin", "reason": "reviewed"});
    if let Some(digest) = digest {
        value["patchDigest"] = json!(digest);
    }
    value
}

fn example(file: &str) -> Value {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("examples")
        .join(file);
    let text = std::fs::read_to_string(&path).expect("the example is readable");
    serde_yaml_ng::from_str(&text).expect("the example is YAML")
}

fn proposal() -> Value {
    json!({
        "digest": DIGEST,
        "patch": "--- a/src/calculator.py\n+++ b/src/calculator.py\n@@ -42 +42 @@\n-    result = value1 + value2\n+    result = int(value1) + int(value2)\n",
        "files": [{"path": "src/calculator.py", "added": 1, "removed": 1}],
        "confidence": 0.8
    })
}

/// Runs every case against the API server and reports all that did not behave, at once.
async fn check_cases(resource: ApiResource, base: Value, cases: Vec<Case>, test: &str) {
    let plane = control_plane();
    let ns = plane.namespace(test);
    let api: Api<DynamicObject> = Api::namespaced_with(plane.client().await, &ns.name, &resource);
    let post = PostParams::default();

    let valid: DynamicObject = serde_json::from_value(with(&base, &[], "valid-base")).expect("base is an object");
    api.create(&post, &valid)
        .await
        .unwrap_or_else(|e| panic!("the valid base {} was rejected: {e}", resource.kind));

    let mut failures = Vec::new();
    for (i, case) in cases.iter().enumerate() {
        let name = format!("case-{i}");
        let result = match &case.breaks {
            Break::OnCreate(changes) => {
                let object: DynamicObject = serde_json::from_value(with(&base, changes, &name)).expect("an object");
                api.create(&post, &object).await.map(|_| ())
            }
            Break::OnUpdate(before, after) => {
                let object: DynamicObject = serde_json::from_value(with(&base, before, &name)).expect("an object");
                if let Err(e) = api.create(&post, &object).await {
                    failures.push(format!("{}: the object before the update was rejected: {e}", case.what));
                    continue;
                }
                let mut all = before.clone();
                all.extend(after.iter().cloned());
                let updated = with(&base, &all, &name);
                api.patch(
                    &name,
                    &PatchParams::default(),
                    &Patch::Merge(json!({"spec": updated["spec"]})),
                )
                .await
                .map(|_| ())
            }
        };
        match result {
            Ok(()) => failures.push(format!(
                "{}: accepted, but should be rejected with {:?}",
                case.what, case.messages
            )),
            Err(kube::Error::Api(status)) => {
                let causes: Vec<String> = status
                    .details
                    .as_ref()
                    .map(|d| d.causes.iter().map(|c| c.message.clone()).collect())
                    .unwrap_or_default();
                let unexpected: Vec<&String> = causes
                    .iter()
                    .filter(|c| !case.messages.iter().any(|m| c.contains(m)))
                    .collect();
                let missing: Vec<&&str> = case.messages.iter().filter(|m| !status.message.contains(**m)).collect();
                if status.code != 422 || !missing.is_empty() || !unexpected.is_empty() {
                    failures.push(format!(
                        "{}: got {} {:?}; missing {missing:?}; unexpected {unexpected:?}",
                        case.what, status.code, status.message
                    ));
                }
            }
            Err(other) => failures.push(format!("{}: failed without an API answer: {other}", case.what)),
        }
    }
    assert!(
        failures.is_empty(),
        "{} case(s) misbehaved:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

fn code_fix_cases() -> Vec<Case> {
    vec![
        case(
            "id without the DDS-FIX-YYYYMMDD-XXX form",
            vec![("/spec/id", json!("DDS-FIX-2026-1"))],
            &["id must have the form DDS-FIX-YYYYMMDD-XXX"],
        ),
        case("version 3", vec![("/spec/version", json!(3))], &["version must be 2"]),
        case(
            "type code_change",
            vec![("/spec/type", json!("code_change"))],
            &["type must be 'code_fix'"],
        ),
        case(
            "goal that does not name the source DDS",
            vec![("/spec/goal", json!("Fix the calculator"))],
            &["goal must name the source DDS id"],
        ),
        case(
            "four files",
            vec![("/spec/constraints/maxFilesChanged", json!(4))],
            &["constraints.maxFilesChanged must be between 1 and 3"],
        ),
        case(
            "zero files",
            vec![("/spec/constraints/maxFilesChanged", json!(0))],
            &["constraints.maxFilesChanged must be between 1 and 3"],
        ),
        case(
            "new dependencies allowed",
            vec![("/spec/constraints/noNewDependencies", json!(false))],
            &["constraints.noNewDependencies must be true"],
        ),
        case(
            "refactoring allowed",
            vec![("/spec/constraints/noRefactor", json!(false))],
            &["constraints.noRefactor must be true"],
        ),
        // An empty originalDds cannot equal the (non-empty) sourceDds either.
        case(
            "empty errorContext.originalDds",
            vec![("/spec/errorContext/originalDds", json!(""))],
            &[
                "errorContext.originalDds must not be empty",
                "errorContext.originalDds must equal sourceDds",
            ],
        ),
        case(
            "empty errorContext.errorMessage",
            vec![("/spec/errorContext/errorMessage", json!(""))],
            &["errorContext.errorMessage must not be empty"],
        ),
        case(
            "empty errorContext.failedAt",
            vec![("/spec/errorContext/failedAt", json!(""))],
            &["errorContext.failedAt must not be empty"],
        ),
        case(
            "failedAt that is not ISO-8601",
            vec![("/spec/errorContext/failedAt", json!("yesterday at noon"))],
            &["errorContext.failedAt must be an ISO-8601 timestamp"],
        ),
        case(
            "originalDds differs from sourceDds",
            vec![("/spec/errorContext/originalDds", json!("DDS-20260101-CODE-009"))],
            &["errorContext.originalDds must equal sourceDds"],
        ),
        case(
            "errorMessage of 501 characters",
            vec![("/spec/errorContext/errorMessage", json!("E".repeat(501)))],
            &["errorContext.errorMessage must be at most 500 characters"],
        ),
        case(
            "errorMessage with a carriage return",
            vec![("/spec/errorContext/errorMessage", json!("TypeError\r\nat line 42"))],
            &["errorContext.errorMessage must be sanitised"],
        ),
        case(
            "allowedPaths with ..",
            vec![("/spec/allowedPaths", json!(["src/../../etc/passwd"]))],
            &["allowedPaths must be relative to the repository root"],
        ),
        case(
            "allowedPaths with a leading /",
            vec![("/spec/allowedPaths", json!(["/etc/passwd"]))],
            &["allowedPaths must be relative to the repository root"],
        ),
        case(
            "approval at creation",
            vec![("/spec/approval", approval("Approved", None))],
            &["approval must be empty when a CodeFixDDS is created"],
        ),
        case(
            "proposal digest that is not sha256",
            vec![("/spec/proposal", json!({"digest": "md5:abc", "patch": "x"}))],
            &["proposal.digest must be 'sha256:' followed by 64"],
        ),
        case(
            "target url that is not a clone URL",
            vec![("/spec/target/url", json!("ftp://example.com/repo"))],
            &["source url must be an https://"],
        ),
        case(
            "target subPath with ..",
            vec![("/spec/target/subPath", json!("../other"))],
            &["subPath must be relative to the repository root"],
        ),
        update_case(
            "approval of a different patch",
            vec![("/spec/proposal", proposal())],
            vec![("/spec/approval", approval("Approved", Some(OTHER_DIGEST)))],
            &["an approval must carry patchDigest equal to proposal.digest"],
        ),
        update_case(
            "approval without the patch digest",
            vec![("/spec/proposal", proposal())],
            vec![("/spec/approval", approval("Approved", None))],
            &["an approval must carry patchDigest equal to proposal.digest"],
        ),
        case(
            "credentials named by an order",
            vec![("/spec/target/secretRef", json!({"name": "git"}))],
            &["target.secretRef is not allowed on a CodeFixDDS"],
        ),
        case(
            "a deadline that is not positive",
            vec![("/spec/approvalDeadline", json!("-1h"))],
            &["approvalDeadline must be a positive duration"],
        ),
        update_case(
            "decision with a malformed digest",
            vec![],
            vec![("/spec/approval", approval("Rejected", Some("sha256:xyz")))],
            &["patchDigest must be 'sha256:' followed by 64"],
        ),
    ]
}

#[tokio::test]
async fn every_code_fix_dds_rule_rejects_a_manifest_that_breaks_only_it() {
    check_cases(
        ApiResource::erase::<CodeFixDDS>(&()),
        example("seed-002/codefixdds.yaml"),
        code_fix_cases(),
        "cel-codefixdds",
    )
    .await;
}

#[tokio::test]
async fn a_decided_approval_cannot_be_changed_or_removed() {
    let plane = control_plane();
    let ns = plane.namespace("cel-decided-approval");
    let api: Api<DynamicObject> =
        Api::namespaced_with(plane.client().await, &ns.name, &ApiResource::erase::<CodeFixDDS>(&()));
    let mut base = example("seed-002/codefixdds.yaml");
    set(&mut base, "/spec/proposal", proposal());
    let object: DynamicObject = serde_json::from_value(with(&base, &[], "decided")).expect("an object");
    api.create(&PostParams::default(), &object)
        .await
        .expect("the proposal is created");

    // A person approves exactly the proposed patch: accepted.
    let approve = json!({"spec": {"approval": approval("Approved", Some(DIGEST))}});
    api.patch("decided", &PatchParams::default(), &Patch::Merge(&approve))
        .await
        .expect("approving the proposed digest is accepted");
    // Re-sending the same decision changes nothing and is accepted.
    api.patch("decided", &PatchParams::default(), &Patch::Merge(&approve))
        .await
        .expect("an unchanged decision is accepted");

    // Nor can the order it decided.
    let edit = json!({"spec": {"instructions": ["do something else"]}});
    match api
        .patch("decided", &PatchParams::default(), &Patch::Merge(&edit))
        .await
    {
        Err(kube::Error::Api(status)) => {
            assert_eq!(status.code, 422, "{status:?}");
            assert!(
                status.message.contains("a decided CodeFixDDS cannot be edited"),
                "{}",
                status.message
            );
        }
        other => panic!("a decided order was edited: {other:?}"),
    }

    let message = "approval cannot be changed or removed once a decision has been made";
    for (what, patch) in [
        (
            "turned into a rejection",
            json!({"spec": {"approval": approval("Rejected", Some(DIGEST))}}),
        ),
        (
            "given another reason",
            json!({"spec": {"approval": {"reason": "changed my mind"}}}),
        ),
        ("removed", json!({"spec": {"approval": null}})),
    ] {
        match api
            .patch("decided", &PatchParams::default(), &Patch::Merge(&patch))
            .await
        {
            Err(kube::Error::Api(status)) => {
                assert_eq!(status.code, 422, "decision {what}: {status:?}");
                assert!(status.message.contains(message), "decision {what}: {}", status.message);
            }
            other => panic!("a decided approval {what} was not rejected: {other:?}"),
        }
    }
}

/// A `spec.verify` with these values.
fn verify(document: &str, start: &str, base_url: &str, endpoints: &[&str]) -> Value {
    json!({"openapi": {"document": document, "start": start, "baseUrl": base_url, "endpoints": endpoints}})
}

fn heal_run_cases() -> Vec<Case> {
    vec![
        case(
            "source url that is not a clone URL",
            vec![("/spec/source/url", json!("ftp://example.com/repo.git"))],
            &["source url must be an https://"],
        ),
        case(
            "subPath that leaves the repository",
            vec![("/spec/source/subPath", json!("../../etc"))],
            &["subPath must be relative to the repository root"],
        ),
        case(
            "healer with nothing set",
            vec![("/spec/healer", json!({}))],
            &["healer must set exactly one of codeHealerApi, openAI, builtin or tool"],
        ),
        case(
            "healer with two set",
            vec![("/spec/healer/builtin", json!({}))],
            &["healer must set exactly one of codeHealerApi, openAI, builtin or tool"],
        ),
        case(
            "healer with a tool beside a service",
            vec![("/spec/healer/tool", json!({"name": "aider"}))],
            &[
                "healer must set exactly one of codeHealerApi, openAI, builtin or tool",
                "healer.tool runs an approved work order's tool",
            ],
        ),
        case(
            "a tool without a work order",
            vec![("/spec/healer", json!({"tool": {"name": "aider"}}))],
            &["healer.tool runs an approved work order's tool"],
        ),
        case(
            "codeHealerApi url without a scheme",
            vec![("/spec/healer/codeHealerApi/url", json!("sam:3000/api/heal"))],
            &["codeHealerApi.url must be an http:// or https:// URL"],
        ),
        case(
            "openAI baseUrl without a scheme",
            vec![(
                "/spec/healer",
                json!({"openAI": {"baseUrl": "localhost:11434/v1", "model": "qwen2.5-coder"}}),
            )],
            &["openAI.baseUrl must be an http:// or https:// URL"],
        ),
        case(
            "allowedPaths with a leading /",
            vec![("/spec/policy/allowedPaths", json!(["/src"]))],
            &["allowedPaths must be relative to the repository root"],
        ),
        case(
            "protectedPaths with ..",
            vec![("/spec/policy/protectedPaths", json!(["src/../secrets"]))],
            &["protectedPaths must be relative to the repository root"],
        ),
        case(
            "heal branch main",
            vec![("/spec/delivery/branch", json!("main"))],
            &["delivery.branch must start with kubeheal/"],
        ),
        case(
            "heal branch that looks like a release branch",
            vec![("/spec/delivery/branch", json!("release/1.0"))],
            &["delivery.branch must start with kubeheal/"],
        ),
        case(
            "heal branch git refuses: trailing dot",
            vec![("/spec/delivery/branch", json!("kubeheal/a."))],
            &["delivery.branch must be a valid Git branch name"],
        ),
        case(
            "heal branch git refuses: a component starting with a dot",
            vec![("/spec/delivery/branch", json!("kubeheal/a/.b"))],
            &["delivery.branch must be a valid Git branch name"],
        ),
        case(
            "heal branch with ..",
            vec![("/spec/delivery/branch", json!("kubeheal/a..b"))],
            &["delivery.branch must be a valid Git branch name"],
        ),
        case(
            "author e-mail that is not an address",
            vec![("/spec/delivery/author/email", json!("kubeheal"))],
            &["author.email must be an e-mail address"],
        ),
        case(
            "a verify document outside the project",
            vec![(
                "/spec/verify",
                verify("../openapi.json", "python3 app.py", "http://127.0.0.1:8000", &[]),
            )],
            &["verify.openapi.document must be a path inside the project"],
        ),
        case(
            "a blank start command",
            vec![(
                "/spec/verify",
                verify("openapi.json", "  ", "http://127.0.0.1:8000", &[]),
            )],
            &["verify.openapi.start must not be blank"],
        ),
        case(
            "a base URL without a host",
            vec![("/spec/verify", verify("openapi.json", "python3 app.py", "http://", &[]))],
            &["verify.openapi.baseUrl must be an http:// or https:// URL with a host"],
        ),
        case(
            "a base URL that is not http",
            vec![(
                "/spec/verify",
                verify("openapi.json", "python3 app.py", "ftp://127.0.0.1/", &[]),
            )],
            &["verify.openapi.baseUrl must be an http:// or https:// URL with a host"],
        ),
        case(
            "an endpoint that is not METHOD /path",
            vec![(
                "/spec/verify",
                verify("openapi.json", "python3 app.py", "http://127.0.0.1:8000", &["/items"]),
            )],
            &["verify.openapi.endpoints are seed 003's endpoint IDs"],
        ),
        update_case(
            "cancel undone",
            vec![("/spec/cancel", json!(true))],
            vec![("/spec/cancel", json!(false))],
            &["cancel cannot be undone"],
        ),
        update_case(
            "the DDS id changed",
            vec![("/spec/ddsId", json!("DDS-20260202-CODE-001"))],
            vec![("/spec/ddsId", json!("DDS-20260202-CODE-002"))],
            &["ddsId cannot be set, changed or removed"],
        ),
        update_case(
            "a DDS id added after creation",
            vec![],
            vec![("/spec/ddsId", json!("DDS-20260202-CODE-001"))],
            &["ddsId cannot be set, changed or removed"],
        ),
    ]
}

#[tokio::test]
async fn every_heal_run_rule_rejects_a_manifest_that_breaks_only_it() {
    check_cases(
        ApiResource::erase::<HealRun>(&()),
        example("healrun.yaml"),
        heal_run_cases(),
        "cel-healrun",
    )
    .await;
}

fn healer_ticket_cases() -> Vec<Case> {
    vec![
        case(
            "decision at creation",
            vec![("/spec/decision", approval("Approved", None))],
            &["decision must be empty when a HealerTicket is created"],
        ),
        case(
            "target with nothing set",
            vec![("/spec/target", json!({}))],
            &["target must name a contractFqn, a path, or a healRun template"],
        ),
        case(
            "contractFqn with spaces",
            vec![("/spec/target/contractFqn", json!("entity helpdesk ticket"))],
            &["contractFqn must be slash-separated names"],
        ),
        case(
            "path outside the repository",
            vec![("/spec/target/path", json!("/etc/passwd"))],
            &["target.path must be relative to the repository root"],
        ),
        case(
            "contract layout leading out of the repository",
            vec![("/spec/target/contractLayout", json!("../{name}.yaml"))],
            &["contractLayout must be a relative path without '..'"],
        ),
        case(
            "contract layout without the contract's name",
            vec![("/spec/target/contractLayout", json!("contracts/all.yaml"))],
            &["contractLayout must be a relative path without '..'"],
        ),
        case(
            "contract schema outside the repository",
            vec![("/spec/target/contractSchema", json!("/etc/kubeheal/schema.json"))],
            &["contractSchema must be a path relative to the repository root"],
        ),
        case(
            "a contract healer that is neither a model nor a Code Healer API",
            vec![("/spec/target/healer", json!({"builtin": {}}))],
            &["target.healer must be openAI or codeHealerApi"],
        ),
        case(
            "a contract healer naming a model and a Code Healer API",
            vec![(
                "/spec/target/healer",
                json!({"openAI": {"baseUrl": "https://llm.example/v1", "model": "m"},
                       "codeHealerApi": {"url": "http://sam.healers:3000/api/heal"}}),
            )],
            &["healer must set exactly one of codeHealerApi, openAI, builtin or tool"],
        ),
        case(
            "a regenerate image with a space in it",
            vec![(
                "/spec/target/regenerate",
                json!({"image": "ghcr.io/acme/forge 1.4", "command": "make generate"}),
            )],
            &["regenerate.image must be an image reference without spaces"],
        ),
        case(
            "a regenerate timeout of no time",
            vec![(
                "/spec/target/regenerate",
                json!({"image": "ghcr.io/acme/forge:1.4", "command": "make generate", "timeoutSeconds": 0}),
            )],
            &["timeoutSeconds in body should be greater than or equal to 1"],
        ),
        case(
            "a regenerate timeout past a day",
            vec![(
                "/spec/target/regenerate",
                json!({"image": "ghcr.io/acme/forge:1.4", "command": "make generate", "timeoutSeconds": 86401}),
            )],
            &["timeoutSeconds in body should be less than or equal to 86400"],
        ),
        case(
            "a blank regenerate command",
            vec![(
                "/spec/target/regenerate",
                json!({"image": "ghcr.io/acme/forge:1.4", "command": "   "}),
            )],
            &["regenerate.command must not be blank"],
        ),
        case(
            "a validate image with a space in it",
            vec![(
                "/spec/target/validate",
                json!({"image": "ghcr.io/acme/forge 1.4", "command": "forge validate domains"}),
            )],
            &["validate.image must be an image reference without spaces"],
        ),
        case(
            "a blank validate command",
            vec![(
                "/spec/target/validate",
                json!({"image": "ghcr.io/acme/forge:1.4", "command": " \t "}),
            )],
            &["validate.command must not be blank"],
        ),
        case(
            "a validate timeout past a day",
            vec![(
                "/spec/target/validate",
                json!({"image": "ghcr.io/acme/forge:1.4", "command": "forge validate domains", "timeoutSeconds": 86401}),
            )],
            &["timeoutSeconds in body should be less than or equal to 86400"],
        ),
    ]
}

#[tokio::test]
async fn every_healer_ticket_rule_rejects_a_manifest_that_breaks_only_it() {
    let plane = control_plane();
    // The "decision changed" case needs a ticket that already has a decision: create one, add the
    // decision, and then change it.
    let ns = plane.namespace("cel-ticket-decision");
    let api: Api<DynamicObject> =
        Api::namespaced_with(plane.client().await, &ns.name, &ApiResource::erase::<HealerTicket>(&()));
    let object: DynamicObject =
        serde_json::from_value(with(&example("healerticket.yaml"), &[], "decided")).expect("an object");
    api.create(&PostParams::default(), &object)
        .await
        .expect("the ticket is created");
    api.patch(
        "decided",
        &PatchParams::default(),
        &Patch::Merge(json!({"spec": {"decision": approval("Approved", None)}})),
    )
    .await
    .expect("a first decision is accepted");
    match api
        .patch(
            "decided",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"decision": approval("Rejected", None)}})),
        )
        .await
    {
        Err(kube::Error::Api(status)) => assert!(
            status
                .message
                .contains("decision cannot be changed or removed once it has been made"),
            "{}",
            status.message
        ),
        other => panic!("changing a decided ticket was not rejected: {other:?}"),
    }

    check_cases(
        ApiResource::erase::<HealerTicket>(&()),
        example("healerticket.yaml"),
        healer_ticket_cases(),
        "cel-healerticket",
    )
    .await;
}

/// Every `message` of every `x-kubernetes-validations` rule in a CRD schema.
fn rule_messages(schema: &Value, found: &mut BTreeSet<String>) {
    match schema {
        Value::Object(map) => {
            if let Some(Value::Array(rules)) = map.get("x-kubernetes-validations") {
                for rule in rules {
                    found.insert(rule["message"].as_str().expect("every rule has a message").to_owned());
                }
            }
            map.values().for_each(|v| rule_messages(v, found));
        }
        Value::Array(items) => items.iter().for_each(|v| rule_messages(v, found)),
        _ => {}
    }
}

#[test]
fn every_cel_rule_in_the_crds_has_a_case_above() {
    let mut covered: Vec<&str> = Vec::new();
    for cases in [code_fix_cases(), heal_run_cases(), healer_ticket_cases()] {
        covered.extend(cases.iter().flat_map(|c| c.messages.iter().copied()));
    }
    // Tested by their own two-step tests above.
    covered.push("approval cannot be changed or removed once a decision has been made");
    covered.push("a decided CodeFixDDS cannot be edited");
    covered.push("decision cannot be changed or removed once it has been made");
    let mut uncovered = Vec::new();
    for crd in [HealRun::crd(), CodeFixDDS::crd(), HealerTicket::crd()] {
        let mut messages = BTreeSet::new();
        rule_messages(&serde_json::to_value(&crd).expect("a CRD is JSON"), &mut messages);
        assert!(!messages.is_empty(), "{} has no CEL rules", crd.spec.names.kind);
        for message in messages {
            if !covered.iter().any(|c| message.contains(c)) {
                uncovered.push(format!("{}: {message}", crd.spec.names.kind));
            }
        }
    }
    assert!(
        uncovered.is_empty(),
        "CEL rules without a rejection case:\n{}",
        uncovered.join("\n")
    );
}
