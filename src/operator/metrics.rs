//! The operator's Prometheus metrics, served on `/metrics` in the OpenMetrics text format.

use std::time::Duration;

use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

use crate::api::heal_run::HealerOutcome;
use crate::api::shared::wire_name;

type Labels = Vec<(&'static str, String)>;

/// Counters and histograms of every controller.
pub struct Metrics {
    registry: Registry,
    reconciles: Family<Labels, Counter>,
    failures: Family<Labels, Counter>,
    duration: Family<Labels, Histogram>,
    finished: Family<Labels, Counter>,
    healer_calls: Family<Labels, Counter>,
    leader: Gauge,
}

impl Default for Metrics {
    fn default() -> Self {
        let mut registry = Registry::with_prefix("kubeheal");
        let reconciles = Family::<Labels, Counter>::default();
        let failures = Family::<Labels, Counter>::default();
        let duration =
            Family::<Labels, Histogram>::new_with_constructor(|| Histogram::new(exponential_buckets(0.01, 2.0, 14)));
        let finished = Family::<Labels, Counter>::default();
        let healer_calls = Family::<Labels, Counter>::default();
        registry.register("reconciliations", "Reconciles run, by kind", reconciles.clone());
        registry.register(
            "reconcile_failures",
            "Reconciles that failed, by kind and error category",
            failures.clone(),
        );
        registry.register(
            "reconcile_duration_seconds",
            "How long a reconcile took, by kind",
            duration.clone(),
        );
        registry.register("heal_runs_finished", "HealRuns that ended, by reason", finished.clone());
        registry.register(
            "healer_calls",
            "Calls to a healer, by healer and outcome",
            healer_calls.clone(),
        );
        let leader = Gauge::default();
        registry.register(
            "leader",
            "1 while this replica reconciles (holds the leader Lease, or runs alone), else 0",
            leader.clone(),
        );
        Metrics {
            leader,
            registry,
            reconciles,
            failures,
            duration,
            finished,
            healer_calls,
        }
    }
}

impl Metrics {
    pub fn reconciled(&self, kind: &str, took: Duration, failure: Option<&str>) {
        let labels = vec![("kind", kind.to_owned())];
        self.reconciles.get_or_create(&labels).inc();
        self.duration.get_or_create(&labels).observe(took.as_secs_f64());
        if let Some(category) = failure {
            self.failures
                .get_or_create(&vec![("kind", kind.to_owned()), ("category", category.to_owned())])
                .inc();
        }
    }

    pub fn finished(&self, reason: &str) {
        self.finished.get_or_create(&vec![("reason", reason.to_owned())]).inc();
    }

    pub fn healer_called(&self, healer: &str, outcome: HealerOutcome) {
        let outcome = wire_name(&outcome);
        self.healer_calls
            .get_or_create(&vec![("healer", healer.to_owned()), ("outcome", outcome)])
            .inc();
    }

    pub fn set_leader(&self, leading: bool) {
        self.leader.set(i64::from(leading));
    }

    /// The OpenMetrics text of every metric.
    pub fn render(&self) -> String {
        let mut out = String::new();
        encode(&mut out, &self.registry).expect("writing to a String cannot fail");
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_appear_in_the_openmetrics_text_with_their_labels() {
        let metrics = Metrics::default();
        metrics.reconciled("HealRun", Duration::from_millis(30), Some("GitError"));
        metrics.finished("Healed");
        metrics.healer_called("builtin", HealerOutcome::Healed);
        let text = metrics.render();
        assert!(
            text.contains("kubeheal_reconciliations_total{kind=\"HealRun\"} 1"),
            "{text}"
        );
        assert!(text.contains("kubeheal_reconcile_failures_total{kind=\"HealRun\",category=\"GitError\"} 1"));
        assert!(text.contains("kubeheal_heal_runs_finished_total{reason=\"Healed\"} 1"));
        assert!(text.contains("kubeheal_healer_calls_total{healer=\"builtin\",outcome=\"healed\"} 1"));
        assert!(text.contains("kubeheal_reconcile_duration_seconds_count{kind=\"HealRun\"} 1"));
        assert!(text.ends_with("# EOF\n"));
    }
}
