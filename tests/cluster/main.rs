//! Cluster tests: the kubeheal API against a real kube-apiserver + etcd (see
//! `tests/support/cluster.rs`). None is ignored; a control plane that cannot start fails them.

#[path = "../support/mod.rs"]
mod support;

mod api_served;
mod approval_policy;
mod cel_rules;
mod chart_shards;
mod code_fix_dds;
mod controller_manager;
mod deployment;
mod executor_job;
mod heal_run;
mod healer_ticket;
mod image;
mod notify;
mod ticket_cli;
mod ticket_fix;
mod ticket_namespaces;
mod verify;
