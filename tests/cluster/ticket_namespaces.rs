//! One operator's `/healer` API for several teams (issue #14): a request names its namespace with
//! `?namespace=`, and each namespace takes only the bearer token in its own Secret
//! `kubeheal-ingest` — a team's token files and reads nothing of another team's, anonymity stays
//! in the ticket namespace, and a namespace without the Secret takes nothing.

use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, PostParams};
use kubeheal::api::healer_ticket::HealerTicket;
use serde_json::{Value, json};

use crate::heal_run::{Heal, logic_project};
use crate::healer_ticket::{seed_error, serve_intake};
use crate::support::http::client;
use crate::support::node::Hold;

async fn ingest_token_secret(heal: &Heal, namespace: &str, token: &str) {
    let secret: Secret = serde_json::from_value(json!({
        "metadata": {"name": "kubeheal-ingest"},
        "stringData": {"token": token},
    }))
    .expect("a Secret");
    Api::<Secret>::namespaced(heal.client.clone(), namespace)
        .create(&PostParams::default(), &secret)
        .await
        .expect("the Secret is created");
}

/// `POST {base}/ingest?namespace=...` of `body` with `token` (when given): the status and body.
async fn ingest(base: &str, namespace: Option<&str>, token: Option<&str>, body: &Value) -> (u16, Value) {
    // Namespace names need no escaping in a query (nor does the one malformed name sent here).
    let url = match namespace {
        Some(namespace) => format!("{base}/ingest?namespace={namespace}"),
        None => format!("{base}/ingest"),
    };
    let mut request = client().post(url).json(body);
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    let response = request.send().await.expect("the ingest answers");
    let code = response.status().as_u16();
    (code, response.json().await.unwrap_or(Value::Null))
}

async fn get(url: &str, namespace: &str, token: &str) -> (u16, Value) {
    let response = client()
        .get(format!("{url}?namespace={namespace}"))
        .bearer_auth(token)
        .send()
        .await
        .expect("the API answers");
    let code = response.status().as_u16();
    (code, response.json().await.unwrap_or(Value::Null))
}

/// Waits until ticket `name` of `namespace` has counted `count` occurrences.
async fn wait_count(heal: &Heal, namespace: &str, name: &str, count: u32) -> HealerTicket {
    let tickets: Api<HealerTicket> = Api::namespaced(heal.client.clone(), namespace);
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let ticket = tickets.get_opt(name).await.expect("the API server answers");
        if let Some(ticket) = &ticket
            && ticket.status.as_ref().is_some_and(|s| s.occurrences == count)
        {
            return ticket.clone();
        }
        assert!(
            Instant::now() < deadline,
            "ticket {namespace}/{name} never counted {count}: {:?}\n{}",
            ticket.and_then(|t| t.status),
            heal.operator.as_ref().map(|p| p.log_tail(40)).unwrap_or_default()
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

fn detail(body: &Value) -> &str {
    body["detail"].as_str().unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread")]
async fn each_namespace_takes_errors_only_with_its_own_token() {
    let mut heal = Heal::new("ticket-namespaces", &logic_project(), Hold::default()).await;
    let (team_a, team_b, no_secret) = (
        heal.plane.namespace("ticket-namespaces-a"),
        heal.plane.namespace("ticket-namespaces-b"),
        heal.plane.namespace("ticket-namespaces-c"),
    );
    ingest_token_secret(&heal, &team_a.name, "token-of-team-a").await;
    ingest_token_secret(&heal, &team_b.name, "token-of-team-b").await;
    // One operator for every namespace, as the chart installs it; its controllers are kept off
    // the other tests' objects by a label nothing else carries (its /healer API is not).
    heal.every_namespace = true;
    let selector = format!("--watch-label-selector=kubeheal.dev/test={}", heal.ns.name);
    let home = format!("--ticket-namespace={}", heal.ns.name);
    let base = serve_intake(&mut heal, &[&selector, &home]).await;

    // Team a files seed 004's example error in its namespace with its token; team b the same
    // error in its own: two tickets of one name, counted apart.
    let error = seed_error("7");
    let (code, filed) = ingest(&base, Some(&team_a.name), Some("token-of-team-a"), &error).await;
    assert_eq!(code, 202, "{filed}");
    let name = filed["ticket_id"].as_str().expect("a ticket id").to_owned();
    for _ in 0..2 {
        let (code, again) = ingest(&base, Some(&team_b.name), Some("token-of-team-b"), &error).await;
        assert_eq!(
            (code, again["ticket_id"].as_str()),
            (202, Some(name.as_str())),
            "{again}"
        );
    }
    wait_count(&heal, &team_a.name, &name, 1).await;
    wait_count(&heal, &team_b.name, &name, 2).await;

    // A team's token opens no other namespace; anonymity (the ticket namespace is open here)
    // does not reach a team's; a namespace without the Secret takes nothing.
    let (code, refused) = ingest(&base, Some(&team_a.name), Some("token-of-team-b"), &error).await;
    assert_eq!(code, 401, "{refused}");
    assert!(
        detail(&refused).contains(&team_a.name) && detail(&refused).contains("kubeheal-ingest"),
        "the refusal names the namespace and the Secret whose token it wants: {refused}"
    );
    let (code, refused) = ingest(&base, Some(&team_a.name), None, &error).await;
    assert_eq!(code, 401, "{refused}");
    let (code, refused) = ingest(&base, Some(&no_secret.name), Some("token-of-team-a"), &error).await;
    assert_eq!(code, 401, "{refused}");
    assert!(
        detail(&refused).contains("takes no ingests") && detail(&refused).contains("create secret generic"),
        "the refusal says how to open the namespace: {refused}"
    );
    let (code, refused) = ingest(&base, Some("Not_A_Namespace"), Some("token-of-team-a"), &error).await;
    assert_eq!(code, 400, "{refused}");
    // Without ?namespace= the error goes to the ticket namespace, open to all here.
    let (code, home_filed) = ingest(&base, None, None, &error).await;
    assert_eq!(code, 202, "{home_filed}");
    wait_count(&heal, &heal.ns.name, &name, 1).await;
    let no_tickets: Api<HealerTicket> = Api::namespaced(heal.client.clone(), &no_secret.name);
    assert!(
        no_tickets
            .list(&Default::default())
            .await
            .expect("a list")
            .items
            .is_empty(),
        "nothing was filed where no token lets anyone in"
    );
    // The refused ingests counted nothing: team a's ticket is still at one (a flush has passed:
    // the home namespace's ticket, posted after them, is written).
    wait_count(&heal, &team_a.name, &name, 1).await;

    // Reads are per namespace and per token too.
    let (code, listed) = get(&format!("{base}/tickets"), &team_b.name, "token-of-team-b").await;
    assert_eq!(code, 200, "{listed}");
    let listed = listed.as_array().expect("a list");
    assert_eq!(listed.len(), 1, "{listed:?}");
    assert_eq!(listed[0]["occurrences"], 2, "{listed:?}");
    let (code, refused) = get(&format!("{base}/tickets"), &team_b.name, "token-of-team-a").await;
    assert_eq!(code, 401, "{refused}");
    let (code, shown) = get(&format!("{base}/tickets/{name}"), &team_a.name, "token-of-team-a").await;
    assert_eq!((code, &shown["id"]), (200, &json!(name)), "{shown}");
    let (code, status) = get(&format!("{base}/status"), &team_b.name, "token-of-team-b").await;
    assert_eq!(code, 200, "{status}");
    let recent = status["recent"].as_array().expect("recent tickets");
    assert_eq!(recent.len(), 1, "only team b's ticket: {status}");

    // The ticket page of team a's ticket, for team a's token, links within team a.
    let page = client()
        .get(format!("{base}/tickets/{name}/view?namespace={}", team_a.name))
        .bearer_auth("token-of-team-a")
        .send()
        .await
        .expect("the page answers");
    assert_eq!(page.status().as_u16(), 200);
    let page = page.text().await.expect("the page");
    assert!(
        page.contains(&format!("../../view?namespace={}", team_a.name)),
        "the page's links keep its namespace:\n{page}"
    );
}
