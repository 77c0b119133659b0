//! Approval is enforced by the API server: the chart's ValidatingAdmissionPolicy, installed on
//! the test control plane as a user installs it (`helm template` of `charts/kubeheal`, applied;
//! see `tests/support/cluster.rs`), judged with the real users' tokens. The chart's values there
//! name the operator's test identity `kubeheal-operator` as never-approve and Argo CD's
//! application controller as a GitOps identity.

use std::process::Output;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::cluster::{
    ControlPlane, GITOPS_NAMESPACE, GITOPS_SERVICE_ACCOUNT, RELEASE_NAMESPACE, TestNamespace, chart_test_values,
    control_plane,
};

const FIX: &str = "dds-fix-20260202-001";
const TICKET: &str = "helpdesk-ticket-keyerror-resolution";
/// The chart's approver ClusterRole (release `kubeheal`).
const APPROVER_ROLE: &str = "kubeheal-approver";

/// Who sends a request: a harness user (by its static token) or a ServiceAccount (by a token
/// from the TokenRequest API).
enum Who<'a> {
    User(&'a str),
    Token(&'a str),
}

fn kubectl(plane: &ControlPlane, who: &Who, args: &[&str]) -> Output {
    match who {
        Who::User(user) => plane.kubectl_as(user, args),
        Who::Token(token) => {
            let mut all = vec![format!("--token={token}")];
            all.extend(args.iter().map(|a| a.to_string()));
            plane.kubectl(all)
        }
    }
}

fn ok(out: &Output) -> String {
    assert!(
        out.status.success(),
        "kubectl failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Asserts the API server refused the request, and that its message says each of `says`.
fn refused(out: &Output, what: &str, says: &[&str]) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{what} was admitted");
    for part in says {
        assert!(
            stderr.contains(part),
            "{what}: the refusal does not say {part:?}:\n{stderr}"
        );
    }
}

fn decision_patch(field: &str, decision: &str, approved_by: &str) -> String {
    json!({"spec": {field: {"decision": decision, "approvedBy": approved_by, "reason": "reviewed"}}}).to_string()
}

/// `kubectl patch` of a decision (`spec.approval` of a CodeFixDDS, `spec.decision` of a
/// HealerTicket) by `who`.
fn decide(plane: &ControlPlane, who: &Who, ns: &str, resource: &str, name: &str, decision: &str, by: &str) -> Output {
    let field = field_of(resource);
    kubectl(
        plane,
        who,
        &[
            "patch",
            resource,
            name,
            "-n",
            ns,
            "--type=merge",
            "-p",
            &decision_patch(field, decision, by),
        ],
    )
}

fn field_of(resource: &str) -> &'static str {
    if resource == "codefixdds" {
        "approval"
    } else {
        "decision"
    }
}

/// The object's decision as the API server stores it (`null` when there is none).
fn stored_decision(plane: &ControlPlane, ns: &str, resource: &str, name: &str) -> Value {
    let text = ok(&plane.kubectl(["get", resource, name, "-n", ns, "-o", "json"]));
    let object: Value = serde_json::from_str(&text).expect("kubectl prints JSON");
    object["spec"][field_of(resource)].clone()
}

fn apply_example(plane: &ControlPlane, ns: &str, file: &str) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("examples")
        .join(file);
    ok(&plane.kubectl(["apply", "-n", ns, "-f", &path.display().to_string()]));
}

/// Binds a ClusterRole in `ns` to a subject (`--user=…` or `--serviceaccount=ns:name`), then waits
/// until the authorizer answers for it, so that a refusal later is the policy's, not a binding
/// the API server has not seen yet.
fn bind(
    plane: &ControlPlane,
    ns: &str,
    binding: &str,
    role_kind: &str,
    role: &str,
    subject: &str,
    check: (&Who, &str, &str),
) {
    ok(&plane.kubectl([
        "create",
        "rolebinding",
        binding,
        "-n",
        ns,
        &format!("--{role_kind}={role}"),
        subject,
    ]));
    let (who, verb, object) = check;
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let out = kubectl(plane, who, &["auth", "can-i", verb, object, "-n", ns]);
        if String::from_utf8_lossy(&out.stdout).trim() == "yes" {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "the binding {binding} in {ns} was not effective after 30 s: can-i {verb} {object} says {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Binds the chart's approver ClusterRole in `ns` to a subject, and waits until it may approve.
fn grant_approver(plane: &ControlPlane, ns: &str, binding: &str, subject: &str, who: &Who) {
    let target = format!("codefixdds/{FIX}");
    bind(
        plane,
        ns,
        binding,
        "clusterrole",
        APPROVER_ROLE,
        subject,
        (who, "approve", &target),
    );
}

/// Lets bob edit CodeFixDDS and HealerTickets in `ns`, without the `approve` verb: what a
/// team's `edit` rights give. Waits until he may patch `object`.
fn let_bob_edit(plane: &ControlPlane, ns: &str, object: &str) -> Who<'static> {
    ok(&plane.kubectl([
        "create",
        "role",
        "kubeheal-editor",
        "-n",
        ns,
        "--verb=get,list,watch,patch,update",
        "--resource=codefixdds.kubeheal.dev,healertickets.kubeheal.dev",
    ]));
    let bob = Who::User("bob");
    bind(
        plane,
        ns,
        "bob-edits",
        "role",
        "kubeheal-editor",
        "--user=bob",
        (&bob, "patch", object),
    );
    bob
}

fn setup(test: &str) -> (&'static ControlPlane, TestNamespace) {
    let plane = control_plane();
    let ns = plane.namespace(test);
    apply_example(plane, &ns.name, "seed-002/codefixdds.yaml");
    apply_example(plane, &ns.name, "healerticket.yaml");
    (plane, ns)
}

#[test]
fn a_decision_without_the_approve_verb_is_refused_by_the_api_server_and_says_why() {
    let (plane, ns) = setup("policy-no-approve-verb");
    let bob = let_bob_edit(plane, &ns.name, &format!("codefixdds/{FIX}"));

    for (resource, name) in [("codefixdds", FIX), ("healertickets", TICKET)] {
        for decision in ["Approved", "Rejected"] {
            let out = decide(plane, &bob, &ns.name, resource, name, decision, "bob");
            let verb = if decision == "Approved" { "approve" } else { "reject" };
            refused(
                &out,
                &format!("{decision} on {resource} by bob without the approve verb"),
                &[
                    "(Forbidden)",
                    "ValidatingAdmissionPolicy 'kubeheal-approval' with binding 'kubeheal-approval' denied request",
                    &format!("bob may not {verb} {resource}/{name} in namespace {}", ns.name),
                    &format!("needs the 'approve' verb on {resource}.kubeheal.dev"),
                    &format!("bind the {APPROVER_ROLE} ClusterRole"),
                ],
            );
            assert!(stored_decision(plane, &ns.name, resource, name).is_null());
        }
    }

    // Edits that set no decision are not the policy's business: bob's patch rights stand.
    for (resource, name) in [("codefixdds", FIX), ("healertickets", TICKET)] {
        ok(&kubectl(
            plane,
            &bob,
            &["label", resource, name, "-n", &ns.name, "team=payments"],
        ));
    }
}

#[test]
fn an_approver_is_refused_under_another_name_and_admitted_under_her_own_and_the_decision_is_final() {
    let (plane, ns) = setup("policy-approver-own-name");
    let alice = Who::User("alice");
    grant_approver(plane, &ns.name, "alice-approves", "--user=alice", &alice);

    for (resource, name) in [("codefixdds", FIX), ("healertickets", TICKET)] {
        let field = field_of(resource);
        for someone_else in ["bob", "system:serviceaccount:argocd:argocd-application-controller"] {
            let out = decide(plane, &alice, &ns.name, resource, name, "Approved", someone_else);
            refused(
                &out,
                &format!("alice approving {resource} as {someone_else}"),
                &[
                    &format!("alice may not write approvedBy '{someone_else}' in spec.{field} of {resource}/{name}"),
                    "approvedBy must be your own user name as the API server knows it ('alice')",
                ],
            );
            assert!(stored_decision(plane, &ns.name, resource, name).is_null());
        }

        ok(&decide(plane, &alice, &ns.name, resource, name, "Approved", "alice"));
        let stored = stored_decision(plane, &ns.name, resource, name);
        assert_eq!(stored["decision"], "Approved", "{stored}");
        assert_eq!(stored["approvedBy"], "alice", "{stored}");

        // Once decided, it stays decided (the CRD's own CEL rule), even for an approver.
        let out = decide(plane, &alice, &ns.name, resource, name, "Rejected", "alice");
        refused(
            &out,
            &format!("alice turning her approval of {resource} into a rejection"),
            &[&format!("{field} cannot be changed or removed")],
        );
        assert_eq!(stored_decision(plane, &ns.name, resource, name), stored);
    }
}

#[test]
fn approval_rights_can_be_scoped_to_single_objects_by_resource_names() {
    let plane = control_plane();
    let ns = plane.namespace("policy-resource-names");
    let example = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/seed-002/codefixdds.yaml");
    let manifest = std::fs::read_to_string(&example).expect("the example is readable");
    for name in ["fix-a", "fix-b"] {
        let file = std::env::temp_dir().join(format!("{}-{name}.yaml", ns.name));
        std::fs::write(&file, manifest.replace(FIX, name)).expect("write a CodeFixDDS");
        ok(&plane.kubectl(["apply", "-n", &ns.name, "-f", &file.display().to_string()]));
    }
    let bob = let_bob_edit(plane, &ns.name, "codefixdds/fix-b");
    ok(&plane.kubectl([
        "create",
        "role",
        "approve-fix-a",
        "-n",
        &ns.name,
        "--verb=approve",
        "--resource=codefixdds.kubeheal.dev",
        "--resource-name=fix-a",
    ]));
    bind(
        plane,
        &ns.name,
        "bob-approves-a",
        "role",
        "approve-fix-a",
        "--user=bob",
        (&bob, "approve", "codefixdds/fix-a"),
    );

    refused(
        &decide(plane, &bob, &ns.name, "codefixdds", "fix-b", "Approved", "bob"),
        "bob approving fix-b, which his approve rule does not name",
        &["bob may not approve codefixdds/fix-b", "needs the 'approve' verb"],
    );
    ok(&decide(plane, &bob, &ns.name, "codefixdds", "fix-a", "Approved", "bob"));
    assert_eq!(
        stored_decision(plane, &ns.name, "codefixdds", "fix-a")["approvedBy"],
        "bob"
    );
}

#[test]
fn the_operators_identities_cannot_decide_even_when_bound_to_the_approver_role() {
    let (plane, ns) = setup("policy-operator-never-approves");
    // The operator's test identity, named in the values' approval.neverApprove.
    let operator = Who::User("kubeheal-operator");
    grant_approver(
        plane,
        &ns.name,
        "operator-approves",
        "--user=kubeheal-operator",
        &operator,
    );
    // The chart's own ServiceAccount, never-approve whatever the values say.
    let chart_sa = format!("system:serviceaccount:{RELEASE_NAMESPACE}:kubeheal");
    let token = plane.service_account_token(RELEASE_NAMESPACE, "kubeheal");
    let service_account = Who::Token(&token);
    grant_approver(
        plane,
        &ns.name,
        "operator-sa-approves",
        &format!("--serviceaccount={RELEASE_NAMESPACE}:kubeheal"),
        &service_account,
    );

    for (who, name) in [(&operator, "kubeheal-operator"), (&service_account, chart_sa.as_str())] {
        for (resource, object) in [("codefixdds", FIX), ("healertickets", TICKET)] {
            for decision in ["Approved", "Rejected"] {
                let verb = if decision == "Approved" { "approve" } else { "reject" };
                refused(
                    &decide(plane, who, &ns.name, resource, object, decision, name),
                    &format!("{decision} on {resource} by {name}"),
                    &[
                        &format!("{name} may not {verb} {resource}/{object}"),
                        "can never decide, whatever RBAC it is given",
                    ],
                );
                assert!(stored_decision(plane, &ns.name, resource, object).is_null());
            }
        }
    }
    // Bound to a role that may update work orders and tickets, the operator's identity still
    // changes no spec people wrote: the operator-spec policy refuses it, naming the object.
    for (resource, object, change) in [
        (
            "codefixdds",
            FIX,
            r#"{"spec":{"goal":"Do something else about DDS-20260202-CODE-001"}}"#,
        ),
        ("healertickets", TICKET, r#"{"spec":{"priority":"low"}}"#),
    ] {
        refused(
            &kubectl(
                plane,
                &operator,
                &["patch", resource, object, "-n", &ns.name, "--type=merge", "-p", change],
            ),
            &format!("a spec change of {resource}/{object} by kubeheal-operator"),
            &[
                &format!("kubeheal-operator may not change the spec of {resource}/{object}"),
                "never the spec people wrote",
            ],
        );
    }
}

#[test]
fn a_gitops_identity_named_in_the_values_may_apply_a_decision_carrying_a_persons_name() {
    let (plane, ns) = setup("policy-gitops");
    let token = plane.service_account_token(GITOPS_NAMESPACE, GITOPS_SERVICE_ACCOUNT);
    let argo = Who::Token(&token);
    grant_approver(
        plane,
        &ns.name,
        "argocd-approves",
        &format!("--serviceaccount={GITOPS_NAMESPACE}:{GITOPS_SERVICE_ACCOUNT}"),
        &argo,
    );
    let argo_name = format!("system:serviceaccount:{GITOPS_NAMESPACE}:{GITOPS_SERVICE_ACCOUNT}");

    // A commit that names a tool instead of a person is refused.
    for tool in [argo_name.as_str(), "kubeheal-operator"] {
        refused(
            &decide(plane, &argo, &ns.name, "codefixdds", FIX, "Approved", tool),
            &format!("Argo CD applying an approval by {tool}"),
            &[&format!("is '{tool}', which is a tool, not a person")],
        );
    }

    // The manifest as committed to Git, with the reviewer's decision in it, applied as Argo CD
    // applies it (server-side apply of the whole object).
    for (file, resource, name, field) in [
        ("seed-002/codefixdds.yaml", "codefixdds", FIX, "approval"),
        ("healerticket.yaml", "healertickets", TICKET, "decision"),
    ] {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("examples")
            .join(file);
        let mut object: Value =
            serde_yaml_ng::from_str(&std::fs::read_to_string(&path).expect("the example is readable")).expect("YAML");
        object["spec"][field] = json!({"decision": "Approved", "approvedBy": "alice", "reason": "approved in PR 42"});
        let committed = std::env::temp_dir().join(format!("{}-{}.json", ns.name, file.replace('/', "-")));
        std::fs::write(&committed, object.to_string()).expect("write the committed manifest");
        ok(&kubectl(
            plane,
            &argo,
            &[
                "apply",
                "--server-side",
                "--field-manager=argocd-controller",
                "-n",
                &ns.name,
                "-f",
                &committed.display().to_string(),
            ],
        ));
        let stored = stored_decision(plane, &ns.name, resource, name);
        assert_eq!(stored["approvedBy"], "alice", "{stored}");
    }

    // The same manifest applied by someone who is not a GitOps identity is refused: bob cannot
    // carry alice's name even with the approve verb.
    let bob = Who::User("bob");
    let ns2 = plane.namespace("policy-gitops-not-bob");
    apply_example(plane, &ns2.name, "seed-002/codefixdds.yaml");
    grant_approver(plane, &ns2.name, "bob-approves", "--user=bob", &bob);
    refused(
        &decide(plane, &bob, &ns2.name, "codefixdds", FIX, "Approved", "alice"),
        "bob applying an approval carrying alice's name",
        &["bob may not write approvedBy 'alice'"],
    );
}

/// bob, who may file and edit HealerTickets in `ns` and nothing more.
fn ticket_filer(plane: &ControlPlane, ns: &str) -> Who<'static> {
    ok(&plane.kubectl([
        "create",
        "role",
        "ticket-filer",
        "-n",
        ns,
        "--verb=get,list,create,patch,update",
        "--resource=healertickets.kubeheal.dev",
    ]));
    let bob = Who::User("bob");
    bind(
        plane,
        ns,
        "bob-files-tickets",
        "role",
        "ticket-filer",
        "--user=bob",
        (&bob, "create", "healertickets"),
    );
    bob
}

/// A HealerTicket `name` with `target`, written in `dir` for `kubectl create -f`: its path.
fn ticket_file(dir: &std::path::Path, name: &str, target: Value) -> String {
    let ticket = json!({"apiVersion": "kubeheal.dev/v1alpha1", "kind": "HealerTicket",
                        "metadata": {"name": name},
                        "spec": {"source": "runtime", "error": format!("KeyError: '{name}'"), "target": target}});
    let path = dir.join(format!("{name}.json"));
    std::fs::write(&path, ticket.to_string()).expect("write the ticket");
    path.display().to_string()
}

#[test]
fn a_ticket_target_that_makes_the_operator_act_needs_the_right_to_do_it_oneself() {
    let plane = control_plane();
    let ns = plane.namespace("ticket-target-policy");
    // bob may file and edit tickets, nothing more.
    let bob = ticket_filer(plane, &ns.name);
    let dir = tempfile::tempdir().expect("a temp dir");
    let file = |name: &str, target: Value| ticket_file(dir.path(), name, target);
    let create = |path: &str| kubectl(plane, &bob, &["create", "-n", &ns.name, "-f", path]);
    let code = file(
        "code",
        json!({"path": "app.py", "healRun": {"source": {"url": "https://git.example.com/app.git"}}}),
    );
    refused(
        &create(&code),
        "a healRun target by bob",
        &["bob may not name target.healRun", "create healruns"],
    );
    let regenerate = file(
        "regen",
        json!({"contractFqn": "entity/helpdesk/ticket", "regenerate": {"image": "python:3.12", "command": "make gen"}}),
    );
    refused(
        &create(&regenerate),
        "a regenerate target by bob",
        &["target.regenerate"],
    );
    let validate = file(
        "validate",
        json!({"contractFqn": "entity/helpdesk/ticket", "validate": {"image": "python:3.12", "command": "make check"}}),
    );
    refused(
        &create(&validate),
        "a validate target by bob",
        &["target.validate", "create healruns"],
    );
    let healer_token = file(
        "healer-token",
        json!({"contractFqn": "entity/helpdesk/ticket",
               "healer": {"codeHealerApi": {"url": "https://sam.example.com/api/heal", "secretRef": {"name": "sam", "key": "token"}}}}),
    );
    refused(
        &create(&healer_token),
        "a Code Healer API token bob may not read",
        &["bob may not name the Secrets sam"],
    );
    let secret = file(
        "secret",
        json!({"contractFqn": "entity/helpdesk/ticket",
               "repository": {"url": "https://git.example.com/app.git", "secretRef": {"name": "app-git"}},
               "healer": {"openAI": {"baseUrl": "https://llm.example.com/v1", "model": "m", "secretRef": {"name": "llm", "key": "k"}}}}),
    );
    refused(
        &create(&secret),
        "a target naming Secrets bob may not read",
        &["bob may not name the Secrets app-git, llm"],
    );
    // What names nothing the operator would act on is admitted; and once bob may read the
    // Secrets, so is the target that names them.
    ok(&create(&file(
        "plain",
        json!({"contractFqn": "entity/helpdesk/ticket"}),
    )));
    ok(&plane.kubectl([
        "create",
        "role",
        "secret-reader",
        "-n",
        &ns.name,
        "--verb=get",
        "--resource=secrets",
        "--resource-name=app-git",
        "--resource-name=llm",
    ]));
    bind(
        plane,
        &ns.name,
        "bob-reads-secrets",
        "role",
        "secret-reader",
        "--user=bob",
        (&bob, "get", "secrets/app-git"),
    );
    ok(&create(&secret));
}

/// The ticket-target policy of a release whose `tickets.target` gives every ticket a repository
/// with a Secret and a validate command, bound to `namespace` alone (the shared control plane's
/// own release has no `tickets.target`), applied and enforced.
fn release_with_ticket_defaults(plane: &'static ControlPlane, namespace: &str, bob: &Who<'_>) -> String {
    let fullname = format!("kubeheal-{namespace}");
    let label = format!("kubeheal-test/defaults={namespace}");
    ok(&plane.kubectl(["label", "namespace", namespace, &label]));
    let mut args = chart_test_values();
    args.extend([
        "--show-only".to_owned(),
        "templates/ticket-target-policy.yaml".to_owned(),
        "--set".to_owned(),
        format!("fullnameOverride={fullname}"),
        "--set-json".to_owned(),
        format!(r#"approval.policy.namespaceSelector={{"matchLabels":{{"kubeheal-test/defaults":"{namespace}"}}}}"#),
        "--set-json".to_owned(),
        r#"tickets.target={"repository":{"url":"https://git.example.com/helpdesk.git","secretRef":{"name":"helpdesk-git"}},"validate":{"image":"ghcr.io/acme/forge:1.4","command":"make check"}}"#.to_owned(),
    ]);
    let rendered = plane.helm_template(namespace, &args).expect("the policy renders");
    let dir = tempfile::tempdir().expect("a temp dir");
    let file = dir.path().join("policy.yaml");
    std::fs::write(&file, rendered).expect("write the policy");
    ok(&plane.kubectl(["apply", "-f", &file.display().to_string()]));
    // Enforced once a dry run of a ticket naming its own repository is refused as inheriting the
    // validate command.
    let probe_file = ticket_file(
        dir.path(),
        "probe",
        json!({"contractFqn": "entity/helpdesk/ticket", "repository": {"url": "https://git.example.com/mine.git"}}),
    );
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let out = kubectl(
            plane,
            bob,
            &["create", "--dry-run=server", "-n", namespace, "-f", &probe_file],
        );
        if String::from_utf8_lossy(&out.stderr).contains("nor target.repository") {
            return fullname;
        }
        assert!(Instant::now() < deadline, "the policy was not enforced within 60 s");
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
fn what_a_ticket_would_take_from_the_operators_defaults_needs_the_same_rights_as_naming_it() {
    let plane = control_plane();
    let ns = plane.namespace("ticket-target-defaults");
    let bob = ticket_filer(plane, &ns.name);
    let fullname = release_with_ticket_defaults(plane, &ns.name, &bob);
    let dir = tempfile::tempdir().expect("a temp dir");
    let file = |name: &str, target: Value| ticket_file(dir.path(), name, target);
    let create = |path: &str| kubectl(plane, &bob, &["create", "-n", &ns.name, "-f", path]);
    // A repository of bob's own would have the operator's validate command run over it.
    refused(
        &create(&file(
            "own-repository",
            json!({"contractFqn": "entity/helpdesk/ticket", "repository": {"url": "https://git.example.com/bobs.git"}}),
        )),
        "bob's own repository under the operator's validate command",
        &["nor target.repository", "create healruns"],
    );
    // A healer of bob's own would get the operator's repository's contracts.
    refused(
        &create(&file(
            "own-healer",
            json!({"contractFqn": "entity/helpdesk/ticket",
                   "healer": {"openAI": {"baseUrl": "https://llm.bob.example/v1", "model": "m"}}}),
        )),
        "bob's own healer with the operator's repository",
        &[
            "bob may not name the Secrets helpdesk-git",
            "its contracts would go to that healer",
        ],
    );
    // Taking everything from the operator, as ingested tickets do, is admitted.
    ok(&create(&file(
        "defaults",
        json!({"contractFqn": "entity/helpdesk/ticket"}),
    )));
    // With the rights, both are.
    ok(&plane.kubectl([
        "create",
        "role",
        "runs-and-secret",
        "-n",
        &ns.name,
        "--verb=create,get",
        "--resource=healruns.kubeheal.dev,secrets",
    ]));
    bind(
        plane,
        &ns.name,
        "bob-runs",
        "role",
        "runs-and-secret",
        "--user=bob",
        (&bob, "create", "healruns"),
    );
    ok(&create(&file(
        "own-repository-2",
        json!({"contractFqn": "entity/helpdesk/ticket", "repository": {"url": "https://git.example.com/bobs.git"}}),
    )));
    ok(&create(&file(
        "own-healer-2",
        json!({"contractFqn": "entity/helpdesk/ticket",
               "healer": {"openAI": {"baseUrl": "https://llm.bob.example/v1", "model": "m"}}}),
    )));
    for kind in ["validatingadmissionpolicybinding", "validatingadmissionpolicy"] {
        ok(&plane.kubectl(["delete", kind, &format!("{fullname}-ticket-target")]));
    }
}
