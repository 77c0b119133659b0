//! `kubeheal approve` / `kubeheal reject`: a person's decision on a CodeFixDDS, written as the
//! current kubeconfig user (asked of the API server, as `kubectl auth whoami` does) and bound to
//! the proposal's digest, so nobody copies names or digests by hand. The API server's admission
//! policy decides whether that user may approve; its refusal is shown as it is.

use kube::api::{Api, Patch, PatchParams};
use kube::{Client, Resource, ResourceExt};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use crate::api::CodeFixDDS;
use crate::decision::{Verdict, decision, whoami};

/// Writes `verdict` on CodeFixDDS `name` in `namespace` (the kubeconfig's namespace when
/// `None`) as the current user; returns what was written, for people.
pub async fn decide(
    name: &str,
    namespace: Option<&str>,
    verdict: Verdict,
    reason: Option<&str>,
) -> Result<String, String> {
    let (client, namespace) = connect(namespace).await?;
    let user = whoami(&client).await.map_err(|r| r.message)?;
    let orders: Api<CodeFixDDS> = Api::namespaced(client, &namespace);
    let order = orders
        .get_opt(name)
        .await
        .map_err(|e| format!("cannot read codefixdds/{name} in namespace {namespace}: {e}"))?
        .ok_or_else(|| {
            format!("codefixdds/{name} does not exist in namespace {namespace} (kubectl get cfd -n {namespace})")
        })?;
    if let Some(decision) = &order.spec.approval {
        return Err(format!(
            "codefixdds/{name} was already decided: {:?} by {}; a decision cannot change — create a new CodeFixDDS for a different one",
            decision.decision, decision.approved_by
        ));
    }
    let phase = order.status.as_ref().and_then(|s| s.phase);
    if verdict == Verdict::Approve && phase != Some(crate::api::code_fix_dds::CodeFixPhase::Proposed) {
        let why = order
            .status
            .as_ref()
            .and_then(|s| s.message.clone())
            .unwrap_or_default();
        return Err(format!(
            "codefixdds/{name} is not waiting for approval (phase {}){}: see kubectl describe cfd {name} -n {namespace}",
            phase
                .map(|p| format!("{p:?}"))
                .unwrap_or_else(|| "not judged yet".into()),
            if why.is_empty() {
                String::new()
            } else {
                format!(": {why}")
            }
        ));
    }
    let approval = decision(
        verdict,
        &user,
        reason,
        order.spec.proposal.as_ref().map(|p| p.digest.as_str()),
    );
    write(&orders, &format!("codefixdds/{name}"), &order, "approval", approval).await?;
    Ok(format!(
        "codefixdds/{name} {} by {user}{}",
        match verdict {
            Verdict::Approve => "approved",
            Verdict::Reject => "rejected",
        },
        order
            .spec
            .proposal
            .as_ref()
            .map(|p| format!(" (patch {})", p.digest))
            .unwrap_or_default()
    ))
}

/// A client for the current kubeconfig, and `namespace` or else the kubeconfig context's.
pub async fn connect(namespace: Option<&str>) -> Result<(Client, String), String> {
    let client = Client::try_default()
        .await
        .map_err(|e| format!("cannot reach the Kubernetes API (kubeconfig): {e}"))?;
    let namespace = namespace.map_or_else(|| client.default_namespace().to_owned(), str::to_owned);
    Ok((client, namespace))
}

/// Writes `decision` at `spec.<field>` of `object` (called `what`, e.g. `codefixdds/x`), on
/// condition that it has not changed since it was read: an object edited since (a new proposal)
/// is not decided on the strength of the old one.
pub async fn write<K>(api: &Api<K>, what: &str, object: &K, field: &str, decision: Value) -> Result<(), String>
where
    K: Resource + Clone + DeserializeOwned + std::fmt::Debug,
{
    let patch = json!({
        "metadata": {"resourceVersion": object.resource_version()},
        "spec": {field: decision},
    });
    api.patch(&object.name_any(), &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .map_err(|e| match e {
            kube::Error::Api(status) if status.code == 409 => format!(
                "{what} changed while it was being decided; look at it again (kubectl describe {what}) and retry"
            ),
            kube::Error::Api(status) => format!("the API server refused the decision: {}", status.message),
            other => format!("cannot write the decision: {other}"),
        })?;
    Ok(())
}
