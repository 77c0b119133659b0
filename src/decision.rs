//! A person's decision on a proposal, written as that person and bound to the proposal's digest:
//! the decision's shape (shared with `kubeheal approve|reject` on a CodeFixDDS), and the decision
//! on a HealerTicket that `kubeheal ticket approve|reject` and the operator's `/healer` approve and
//! reject (endpoints and page forms) share — with the caller's own client, so the API server's
//! RBAC and admission policy judge the person, never kubeheal.

use k8s_openapi::api::authentication::v1::SelfSubjectReview;
use kube::api::{Api, Patch, PatchParams, PostParams};
use kube::{Client, ResourceExt};
use serde_json::{Value, json};

use crate::api::healer_ticket::HealerTicket;
use crate::api::shared::HEAL_RUN_LABEL;
use crate::core::ticket_api::phase_name;
use crate::core::ticket_fix::heal_run_name;

/// The decision to write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Approve,
    Reject,
}

/// A decision (`spec.approval` of a CodeFixDDS, `spec.decision` of a HealerTicket): the
/// verdict, who took it, why, and the digest of the patch it is about.
pub fn decision(verdict: Verdict, user: &str, reason: Option<&str>, patch_digest: Option<&str>) -> Value {
    let mut decision = json!({
        "decision": match verdict { Verdict::Approve => "Approved", Verdict::Reject => "Rejected" },
        "approvedBy": user,
    });
    if let Some(reason) = reason.filter(|r| !r.trim().is_empty()) {
        decision["reason"] = json!(reason);
    }
    if let Some(digest) = patch_digest {
        decision["patchDigest"] = json!(digest);
    }
    decision
}

/// Why a decision on a ticket was not written: the HTTP status that says so, and the message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub status: u16,
    pub message: String,
}

fn refusal(status: u16, message: impl Into<String>) -> Refusal {
    Refusal {
        status,
        message: message.into(),
    }
}

/// The refusal for an API server error: its own status when it is the caller's (401, 403, 404,
/// 409, 422), 502 otherwise (the API server could not be asked).
fn api_refusal(error: kube::Error, doing: &str) -> Refusal {
    match error {
        kube::Error::Api(status) if [401, 403, 404, 409, 422].contains(&status.code) => refusal(
            status.code,
            format!("the API server refused {doing}: {}", status.message),
        ),
        other => refusal(502, format!("cannot reach the API server for {doing}: {other}")),
    }
}

/// A ticket decided: who decided, and the patch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decided {
    pub user: String,
    pub patch_digest: String,
}

/// Writes `verdict` on HealerTicket `id` in `namespace` as the user of `client` — the CLI's
/// kubeconfig, or the bearer token a person sent to the `/healer` API — bound to the proposal's
/// digest (which must be `seen`, the one the person was shown, when given), only if the ticket
/// has not changed since it was read. Refused, saying why, for a
/// ticket without a proposal (a ticket fixed in code is decided on its HealRun's work order) or
/// already decided.
pub async fn decide_ticket(
    client: &Client,
    namespace: &str,
    id: &str,
    verdict: Verdict,
    reason: Option<&str>,
    seen: Option<&str>,
) -> Result<Decided, Refusal> {
    let api: Api<HealerTicket> = Api::namespaced(client.clone(), namespace);
    let what = format!("healerticket/{id}");
    let ticket = api
        .get_opt(id)
        .await
        .map_err(|e| api_refusal(e, &format!("reading {what}")))?
        .ok_or_else(|| {
            refusal(
                404,
                format!("{what} does not exist in namespace {namespace} (kubeheal ticket list -n {namespace})"),
            )
        })?;
    let verb = match verdict {
        Verdict::Approve => "approve",
        Verdict::Reject => "reject",
    };
    let Some(proposal) = ticket.status.as_ref().and_then(|s| s.proposal.as_ref()) else {
        if ticket.spec.target.heal_run.is_some() {
            let run = heal_run_name(id);
            return Err(refusal(
                409,
                format!(
                    "{what} is fixed in code by HealRun {run}: {verb} the fix it proposes on its work order (kubectl get cfd -l {HEAL_RUN_LABEL}={run} -n {namespace}; kubeheal {verb} cfd NAME)"
                ),
            ));
        }
        let phase = ticket
            .status
            .as_ref()
            .and_then(|s| s.phase)
            .map_or_else(|| "queued".to_owned(), phase_name);
        return Err(refusal(
            409,
            format!(
                "{what} has no proposed fix to {verb} (status {phase}): a fix is proposed for a contract ticket once the operator knows where its contract lives and which model to ask (its spec.target or the operator's --ticket-target); its conditions say what it waits for (kubectl describe healerticket/{id} -n {namespace})"
            ),
        ));
    };
    // A decision on what the person saw: a proposal that changed since is not decided on.
    // (The ticket page tells its readers so by the words "changed since you saw it".)
    if let Some(seen) = seen.filter(|seen| *seen != proposal.patch_digest) {
        return Err(refusal(
            409,
            format!(
                "{what}'s proposal changed since you saw it: you saw patch {seen}, the proposal is now patch {}. Nothing was written; look at it again (kubeheal ticket show {id} -n {namespace}) before you {verb} it",
                proposal.patch_digest
            ),
        ));
    }
    if let Some(made) = &ticket.spec.decision {
        return Err(refusal(
            409,
            format!(
                "{what} was already decided: {:?} by {}; a decision cannot change",
                made.decision, made.approved_by
            ),
        ));
    }
    let user = whoami(client).await?;
    let made = decision(verdict, &user, reason, Some(&proposal.patch_digest));
    let patch = json!({
        "metadata": {"resourceVersion": ticket.resource_version()},
        "spec": {"decision": made},
    });
    api.patch(id, &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .map_err(|e| match e {
            kube::Error::Api(status) if status.code == 409 => refusal(
                409,
                format!(
                    "{what} changed while it was being decided; look at it again (kubectl describe {what}) and retry"
                ),
            ),
            other => api_refusal(other, &format!("the decision on {what}")),
        })?;
    Ok(Decided {
        user,
        patch_digest: proposal.patch_digest.clone(),
    })
}

/// The user name the API server knows the client's holder by (a SelfSubjectReview, as `kubectl
/// auth whoami` asks): a decision is signed with it.
pub async fn whoami(client: &Client) -> Result<String, Refusal> {
    let reviews: Api<SelfSubjectReview> = Api::all(client.clone());
    reviews
        .create(&PostParams::default(), &SelfSubjectReview::default())
        .await
        .map_err(|e| match e {
            kube::Error::Api(status) if status.code == 401 => refusal(
                401,
                "the API server does not accept this token (expired, or not a token of this cluster)",
            ),
            other => api_refusal(other, "asking who you are (SelfSubjectReview, Kubernetes 1.28+)"),
        })?
        .status
        .and_then(|s| s.user_info)
        .and_then(|u| u.username)
        .filter(|u| !u.is_empty())
        .ok_or_else(|| {
            refusal(
                403,
                "the API server did not say who you are; a decision needs a user name",
            )
        })
}
