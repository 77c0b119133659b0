//! The CodeFixDDS controller: gathers what `core::code_fix_dds` decides from — the order, the
//! source its `sourceDds` names, the other orders answering the same failure, the HealRun that
//! executes it — writes the decided status by server-side apply with an Event on every
//! transition, and creates the HealRun that executes an approved order. Orders are re-checked
//! whenever a related HealRun or CodeFixDDS changes (see [`related_orders`]): GitOps applies
//! objects in any order, and an order whose source appears later becomes valid by itself.

use std::sync::Arc;
use std::time::{Duration, Instant};

use k8s_openapi::jiff::Timestamp;
use kube::api::{Api, ListParams, Patch, PatchParams, PostParams};
use kube::runtime::controller::Action as Requeue;
use kube::runtime::reflector::{ObjectRef, Store};
use kube::{Resource, ResourceExt};
use serde_json::json;
use thiserror::Error;
use tracing::{instrument, warn};

use super::Context;
use crate::api::code_fix_dds::{CodeFixDDS, CodeFixDDSStatus, CodeFixPhase, SourceKind};
use crate::api::heal_run::HealRun;
use crate::api::shared::MANAGED_BY;
use crate::core::code_fix_dds::{Execution, Facts, Next, Order, RECHECK, Rival, Source, decide, execution_run, fail};
use crate::parse::truncate_bytes;

/// The field manager of the CodeFixDDS status.
pub const FIELD_MANAGER: &str = "kubeheal-codefixdds";
/// The label naming the CodeFixDDS a HealRun executes.
pub const WORK_ORDER_LABEL: &str = "kubeheal.dev/codefixdds";
/// How `sourceDds` names a HealRun directly.
const HEAL_RUN_PREFIX: &str = "HealRun/";

/// Errors of the CodeFixDDS controller.
#[derive(Debug, Error)]
pub enum Error {
    #[error("failed to talk to the API server: {0}")]
    Kube(#[from] kube::Error),
}

/// One reconcile of one CodeFixDDS.
#[instrument(skip_all, fields(name = %order.name_any(), namespace = order.namespace().unwrap_or_default()))]
pub async fn reconcile(order: Arc<CodeFixDDS>, ctx: Arc<Context>) -> Result<Requeue, Error> {
    let started = Instant::now();
    let result = reconcile_order(&order, &ctx).await;
    ctx.metrics.reconciled(
        "CodeFixDDS",
        started.elapsed(),
        result.as_ref().err().map(|_| "ApiError"),
    );
    let key = failure_key(&order);
    if result.is_ok() {
        ctx.failures.clear(&key);
    }
    result
}

/// Backs off like the HealRun controller: the API server is the only thing that can fail here.
pub fn error_policy(order: Arc<CodeFixDDS>, error: &Error, ctx: Arc<Context>) -> Requeue {
    warn!(%error, name = %order.name_any(), "CodeFixDDS reconcile failed");
    let failures = ctx.failures.record(&failure_key(&order));
    Requeue::requeue(Duration::from_secs(
        (5u64 << failures.saturating_sub(1).min(7)).min(600),
    ))
}

fn failure_key(order: &CodeFixDDS) -> String {
    format!(
        "CodeFixDDS/{}/{}",
        order.namespace().unwrap_or_default(),
        order.name_any()
    )
}

async fn reconcile_order(order: &CodeFixDDS, ctx: &Context) -> Result<Requeue, Error> {
    let namespace = order.namespace().unwrap_or_else(|| "default".into());
    let runs: Api<HealRun> = Api::namespaced(ctx.client.clone(), &namespace);
    let orders: Api<CodeFixDDS> = Api::namespaced(ctx.client.clone(), &namespace);
    let name = order.name_any();
    let status = order.status.clone().unwrap_or_default();
    let view = Order {
        name: &name,
        spec: &order.spec,
        created: created(order).unwrap_or_else(Timestamp::now),
        status: &status,
    };

    // The objects the decision looks at, read from the API server.
    let all_orders = orders.list(&ListParams::default()).await?.items;
    let source_dds = order.spec.source_dds.as_str();
    let named_runs: Vec<HealRun> = match source_dds.strip_prefix(HEAL_RUN_PREFIX) {
        Some(run) => runs.get_opt(run).await?.into_iter().collect(),
        None => runs
            .list(&ListParams::default())
            .await?
            .items
            .into_iter()
            .filter(|r| r.spec.dds_id.as_deref() == Some(source_dds))
            .collect(),
    };
    let named_orders: Vec<&CodeFixDDS> = all_orders
        .iter()
        .filter(|o| o.spec.id == source_dds && o.name_any() != name)
        .collect();
    let executor = match view.asked_by() {
        Some((run, _)) => runs.get_opt(run).await?,
        None => runs
            .get_opt(&execution_run_name(&name))
            .await?
            .filter(|r| is_owned_by(r, order)),
    };

    let run_names: Vec<String> = named_runs.iter().map(ResourceExt::name_any).collect();
    let order_names: Vec<String> = named_orders.iter().map(|o| o.name_any()).collect();
    let mut sources: Vec<Source<'_>> = named_runs
        .iter()
        .zip(&run_names)
        .map(|(r, n)| Source::HealRun {
            name: n,
            spec: &r.spec,
            status: r.status.as_ref(),
        })
        .collect();
    sources.extend(named_orders.iter().zip(&order_names).map(|(o, n)| Source::Order {
        name: n,
        spec: &o.spec,
        phase: o.status.as_ref().and_then(|s| s.phase),
    }));
    let key = view.duplicate_key();
    let rivals = all_orders
        .iter()
        .filter(|o| o.name_any() != name)
        .filter(|o| {
            let other = Order {
                name: "",
                spec: &o.spec,
                created: Timestamp::UNIX_EPOCH,
                status: &Default::default(),
            };
            other.duplicate_key() == key
        })
        .map(|o| Rival {
            name: o.name_any(),
            created: created(o).unwrap_or(Timestamp::UNIX_EPOCH),
        })
        .collect();
    let executor_name = executor.as_ref().map(ResourceExt::name_any).unwrap_or_default();
    let facts = Facts {
        sources,
        rivals,
        execution: executor.as_ref().map(|r| Execution {
            name: &executor_name,
            status: r.status.as_ref(),
        }),
        tools: ctx.settings.tools.keys().map(String::as_str).collect(),
    };
    let now = Timestamp::now();
    let decision = decide(&view, &facts, now);
    let mut written = decision.status.clone();
    written.observed_generation = order.metadata.generation;
    let mut note = decision.note.clone();

    if order.status.as_ref() != Some(&written) {
        write_status(&orders, &name, &written).await?;
    }
    // Created only once the status says Approved: the run checks that phase before it
    // executes anything, and a crash in between creates it on the next reconcile.
    if decision.next == Next::Execute {
        // The HealRun the source leads to lends its build and healer to the execution.
        let base = match facts.sources.first() {
            Some(Source::HealRun { spec, .. }) => Some((*spec).clone()),
            Some(Source::Order { spec, .. }) => match &spec.source_ref {
                Some(r) if r.kind == SourceKind::HealRun => runs.get_opt(&r.name).await?.map(|r| r.spec),
                _ => None,
            },
            None => None,
        };
        let failed = match execution_run(&view, base.as_ref()) {
            Ok(spec) => create_execution_run(&runs, order, spec)
                .await?
                .err()
                .map(|why| ("NameTaken", why)),
            Err(why) => Some(("NoTarget", why)),
        };
        if let Some((reason, why)) = failed {
            note = Some(fail(&mut written, reason, why, now));
            write_status(&orders, &name, &written).await?;
        }
    }

    if let Some(note) = &note {
        ctx.publish(note, "Validate", &order.object_ref(&())).await;
    }
    Ok(match decision.next {
        Next::Execute => Requeue::requeue(Duration::from_secs(1)),
        Next::At(at) => Requeue::requeue(
            Duration::try_from(at.duration_since(now))
                .unwrap_or_default()
                .max(Duration::from_secs(1)),
        ),
        Next::Wait => match written.phase {
            Some(CodeFixPhase::Executed | CodeFixPhase::Failed | CodeFixPhase::Rejected | CodeFixPhase::Expired) => {
                Requeue::await_change()
            }
            _ => Requeue::requeue(RECHECK),
        },
    })
}

/// When `order` was created.
fn created(order: &CodeFixDDS) -> Option<Timestamp> {
    order.metadata.creation_timestamp.as_ref().map(|t| t.0)
}

/// Writes the order's status by server-side apply.
async fn write_status(orders: &Api<CodeFixDDS>, name: &str, status: &CodeFixDDSStatus) -> Result<(), Error> {
    let patch = json!({
        "apiVersion": "kubeheal.dev/v1alpha1",
        "kind": "CodeFixDDS",
        "status": status,
    });
    orders
        .patch_status(name, &PatchParams::apply(FIELD_MANAGER).force(), &Patch::Apply(&patch))
        .await?;
    Ok(())
}

/// The name of the HealRun that executes the order `order`.
pub fn execution_run_name(order: &str) -> String {
    format!("{}-exec", truncate_bytes(order, 240).trim_end_matches('-'))
}

fn is_owned_by(run: &HealRun, order: &CodeFixDDS) -> bool {
    let uid = order.metadata.uid.as_deref();
    run.owner_references().iter().any(|o| Some(o.uid.as_str()) == uid)
}

/// Creates the HealRun that executes `order`, owned by it; one of ours that exists already (a
/// retry) is kept. `Ok(Err(why))`: the name is taken by a run that is not the order's.
async fn create_execution_run(
    runs: &Api<HealRun>,
    order: &CodeFixDDS,
    spec: crate::api::heal_run::HealRunSpec,
) -> Result<Result<(), String>, Error> {
    let name = execution_run_name(&order.name_any());
    let mut run = HealRun::new(&name, spec);
    // The order's labels go on (a sharded operator's selector matches its executions too).
    let mut labels = order.labels().clone();
    labels.insert(MANAGED_BY.0.to_owned(), MANAGED_BY.1.to_owned());
    labels.insert(WORK_ORDER_LABEL.to_owned(), order.name_any());
    run.metadata.labels = Some(labels);
    run.metadata.owner_references = order.controller_owner_ref(&()).map(|o| vec![o]);
    match runs.create(&PostParams::default(), &run).await {
        Ok(_) => Ok(Ok(())),
        Err(kube::Error::Api(e)) if e.code == 409 => match runs.get_opt(&name).await? {
            Some(existing) if !is_owned_by(&existing, order) => Ok(Err(format!(
                "a HealRun named {name} exists and is not this order's; the order's execution needs that name — delete that run and create a new order"
            ))),
            _ => Ok(Ok(())),
        },
        Err(e) => Err(e.into()),
    }
}

/// The orders to look at again when `run` changes: those naming it as their source (directly
/// or by its `ddsId`), the one it executes, and the approval requests it wrote.
pub fn orders_of_run(run: &HealRun, orders: &Store<CodeFixDDS>) -> Vec<ObjectRef<CodeFixDDS>> {
    let namespace = run.namespace();
    let name = run.name_any();
    let direct = format!("{HEAL_RUN_PREFIX}{name}");
    related_orders(orders, namespace.as_deref(), |o| {
        o.spec.source_dds == direct
            || run.spec.dds_id.as_deref() == Some(o.spec.source_dds.as_str())
            || run.spec.work_order.as_deref() == Some(o.name_any().as_str())
    })
}

/// The orders to look at again when `changed` changes: those answering the same source (rule
/// 10) and those naming it as their source (its phase decides rule 5).
pub fn orders_of_order(changed: &CodeFixDDS, orders: &Store<CodeFixDDS>) -> Vec<ObjectRef<CodeFixDDS>> {
    let namespace = changed.namespace();
    let name = changed.name_any();
    related_orders(orders, namespace.as_deref(), |o| {
        o.name_any() != name && (o.spec.source_dds == changed.spec.source_dds || o.spec.source_dds == changed.spec.id)
    })
}

fn related_orders(
    orders: &Store<CodeFixDDS>,
    namespace: Option<&str>,
    related: impl Fn(&CodeFixDDS) -> bool,
) -> Vec<ObjectRef<CodeFixDDS>> {
    orders
        .state()
        .iter()
        .filter(|o| o.namespace().as_deref() == namespace && related(o))
        .map(|o| ObjectRef::from_obj(o.as_ref()))
        .collect()
}
