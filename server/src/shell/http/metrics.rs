//! `/metrics`: the figures of [`report::monitor`] in the Prometheus text exposition format,
//! under the names and types ZooKeeper 3.8's `PrometheusMetricsProvider` gives them.
//!
//! ZooKeeper's names are its mntr keys without `zk_`: gauges for what `ZooKeeperServer`
//! registers as gauges, counters for `ServerMetrics` counters (written without a `_total`
//! suffix, as its Prometheus client of the time did), and summaries for `ServerMetrics`
//! summaries (`<name>_count`, `<name>_sum`, and `<name>{quantile=...}`: 0.5, 0.9 and 0.99 for
//! its ADVANCED ones such as `readlatency`). The watch-trigger summaries carry count and sum
//! only: the core keeps no samples to take quantiles from. docs/operations.md compares the
//! names with ZooKeeper's.
//!
//! Invariant: a scrape gathers once and formats after, never holding the core lock while
//! encoding.

use prometheus::proto::{Counter, Gauge, Metric, MetricFamily, MetricType, Quantile, Summary};
use prometheus::{Encoder, TextEncoder};

use crate::shell::observe::report::{self, Figure, Kind};
use crate::shell::state::shared::Shared;

/// The Content-Type of the text format.
pub(crate) const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// The quantiles ZooKeeper's provider reports for its ADVANCED summaries.
const ADVANCED_QUANTILES: [f64; 3] = [0.5, 0.9, 0.99];

/// One scrape, encoded.
///
/// # Errors
/// The encoder's error, which only a malformed family could cause (none is built here).
pub(crate) fn scrape(shared: &Shared) -> prometheus::Result<String> {
    // One endpoint for the whole server: member 1's view, for an ensemble.
    let monitor = report::monitor(shared, 1);
    let mut families = Vec::new();
    for (name, kind, value) in monitor.figures {
        let value = match value {
            Figure::Int(n) => n as f64,
            Figure::Float(x) => x,
            Figure::Text(_) => continue,
        };
        let mut metric = Metric::default();
        let kind = match kind {
            Kind::Gauge => {
                let mut gauge = Gauge::default();
                gauge.set_value(value);
                metric.set_gauge(gauge);
                MetricType::GAUGE
            }
            Kind::Counter => {
                let mut counter = Counter::default();
                counter.set_value(value);
                metric.set_counter(counter);
                MetricType::COUNTER
            }
            Kind::Text => continue,
        };
        families.push(family(name, kind, metric));
    }
    for (name, s) in monitor.triggers {
        families.push(summary(name, s.count, s.sum as f64, &[]));
    }
    for (name, r) in monitor.latencies {
        let quantiles: Vec<_> = ADVANCED_QUANTILES
            .iter()
            .map(|&q| (q, r.quantile_ms(q)))
            .collect();
        families.push(summary(name, r.count, r.sum_ms, &quantiles));
    }
    let mut out = Vec::new();
    TextEncoder::new().encode(&families, &mut out)?;
    Ok(String::from_utf8_lossy(&out).into_owned())
}

fn family(name: &str, kind: MetricType, metric: Metric) -> MetricFamily {
    let mut family = MetricFamily::default();
    family.set_name(name.to_string());
    // ZooKeeper's provider uses the name as the help text.
    family.set_help(name.to_string());
    family.set_field_type(kind);
    family.set_metric(vec![metric]);
    family
}

fn summary(name: &str, count: u64, sum: f64, quantiles: &[(f64, f64)]) -> MetricFamily {
    let mut s = Summary::default();
    s.set_sample_count(count);
    s.set_sample_sum(sum);
    s.set_quantile(
        quantiles
            .iter()
            .map(|&(q, value)| {
                let mut quantile = Quantile::default();
                quantile.set_quantile(q);
                quantile.set_value(value);
                quantile
            })
            .collect(),
    );
    let mut metric = Metric::default();
    metric.set_summary(s);
    family(name, MetricType::SUMMARY, metric)
}
