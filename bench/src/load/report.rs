//! [`PhaseResult`]: what one phase of one run measured, as a table row and a CSV row.
//!
//! Percentiles are exact (nearest rank over every latency of the phase), not estimated from
//! buckets. CPU figures are per request and come from `/proc` (10 ms ticks), so they are only
//! as precise as the phase is long: a phase of a second or more keeps them within 1 %.

use std::time::Duration;

use super::phase::{Phase, Sample};

/// One phase of one run.
#[derive(Debug, Clone)]
pub struct PhaseResult {
    /// The server measured (`shepherd serve (child)`, `--connect …` or `--label`).
    pub server: String,
    /// Sessions.
    pub sessions: usize,
    /// Most requests outstanding per session.
    pub in_flight: usize,
    /// Data bytes of creates and sets.
    pub value_size: usize,
    /// The phase.
    pub phase: Phase,
    /// The offered rate (open loop), requests per second; `None`: as fast as replies come.
    pub rate: Option<f64>,
    /// Requests answered without error.
    pub ops: u64,
    /// Requests answered with an error.
    pub errors: u64,
    /// The first error, to say why.
    pub first_error: Option<String>,
    /// From the first request's schedule to the last reply.
    pub wall: Duration,
    /// Latency percentiles: p50, p99, p99.9, max.
    pub latency: [Duration; 4],
    /// The server's CPU time over the phase, if its process is known.
    pub server_cpu: Option<Duration>,
    /// This process's CPU time over the phase (the clients).
    pub client_cpu: Duration,
}

impl PhaseResult {
    /// Builds the result of a phase from its sample and context.
    pub fn new(context: &PhaseResult, phase: Phase, mut sample: Sample) -> PhaseResult {
        sample.latencies.sort_unstable();
        let at = |q: f64| percentile(&sample.latencies, q);
        PhaseResult {
            phase,
            ops: sample.latencies.len() as u64,
            errors: sample.errors,
            first_error: sample.first_error,
            wall: sample.wall,
            latency: [at(0.50), at(0.99), at(0.999), at(1.0)],
            ..context.clone()
        }
    }

    /// A context to fill with [`PhaseResult::new`].
    pub fn context(
        server: &str,
        sessions: usize,
        in_flight: usize,
        value_size: usize,
        rate: Option<f64>,
    ) -> PhaseResult {
        PhaseResult {
            server: server.to_owned(),
            sessions,
            in_flight,
            value_size,
            phase: Phase::Create,
            rate,
            ops: 0,
            errors: 0,
            first_error: None,
            wall: Duration::ZERO,
            latency: [Duration::ZERO; 4],
            server_cpu: None,
            client_cpu: Duration::ZERO,
        }
    }

    /// Replies per second over the phase (errors included: they are replies too).
    pub fn ops_per_sec(&self) -> f64 {
        (self.ops + self.errors) as f64 / self.wall.as_secs_f64().max(1e-9)
    }

    /// The server's CPU time per request, µs.
    pub fn server_cpu_per_op(&self) -> Option<f64> {
        self.server_cpu
            .map(|cpu| per_op(cpu, self.ops + self.errors))
    }

    /// The clients' CPU time per request, µs.
    pub fn client_cpu_per_op(&self) -> f64 {
        per_op(self.client_cpu, self.ops + self.errors)
    }
}

/// µs of `cpu` per request.
fn per_op(cpu: Duration, requests: u64) -> f64 {
    cpu.as_secs_f64() * 1e6 / requests.max(1) as f64
}

/// The nearest-rank percentile `q` (0..=1) of sorted values; zero when there are none.
pub(crate) fn percentile(sorted: &[Duration], q: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let rank = (q * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// The table's header line.
pub fn table_header() -> String {
    format!(
        "{:>8} {:>6} {:<7} {:>8} {:>8} {:>6} {:>10} {:>9} {:>9} {:>9} {:>9} {:>10} {:>10}",
        "sessions",
        "window",
        "phase",
        "rate",
        "ops",
        "errors",
        "ops/s",
        "p50 ms",
        "p99 ms",
        "p999 ms",
        "max ms",
        "srv µs/op",
        "cli µs/op"
    )
}

/// A phase as a table row (and, on the next line, its first error if any).
pub fn table_row(r: &PhaseResult) -> String {
    let ms = |d: Duration| format!("{:.3}", d.as_secs_f64() * 1e3);
    let rate = r.rate.map_or("max".to_owned(), |rate| format!("{rate:.0}"));
    let server_cpu = r
        .server_cpu_per_op()
        .map_or("-".to_owned(), |us| format!("{us:.1}"));
    let mut row = format!(
        "{:>8} {:>6} {:<7} {:>8} {:>8} {:>6} {:>10.0} {:>9} {:>9} {:>9} {:>9} {:>10} {:>10.1}",
        r.sessions,
        r.in_flight,
        r.phase.name(),
        rate,
        r.ops,
        r.errors,
        r.ops_per_sec(),
        ms(r.latency[0]),
        ms(r.latency[1]),
        ms(r.latency[2]),
        ms(r.latency[3]),
        server_cpu,
        r.client_cpu_per_op()
    );
    if let Some(error) = &r.first_error {
        row.push_str(&format!("\n         first error: {error}"));
    }
    row
}

/// The CSV's header line.
pub const CSV_HEADER: &str = "server,sessions,in_flight,value_size,phase,offered_rate,ops,errors,seconds,ops_per_sec,p50_us,p99_us,p999_us,max_us,server_cpu_us_per_op,client_cpu_us_per_op";

/// Every result as CSV, header first. An unknown figure is an empty field.
pub fn csv(results: &[PhaseResult]) -> String {
    let mut out = format!("{CSV_HEADER}\n");
    for r in results {
        let us = |d: Duration| d.as_micros().to_string();
        let fields = [
            // Server names are ours or `--label`'s; keep the CSV one field each.
            r.server.replace(',', ";"),
            r.sessions.to_string(),
            r.in_flight.to_string(),
            r.value_size.to_string(),
            r.phase.name().to_owned(),
            r.rate.map_or(String::new(), |rate| format!("{rate:.0}")),
            r.ops.to_string(),
            r.errors.to_string(),
            format!("{:.3}", r.wall.as_secs_f64()),
            format!("{:.0}", r.ops_per_sec()),
            us(r.latency[0]),
            us(r.latency[1]),
            us(r.latency[2]),
            us(r.latency[3]),
            r.server_cpu_per_op()
                .map_or(String::new(), |v| format!("{v:.2}")),
            format!("{:.2}", r.client_cpu_per_op()),
        ];
        out.push_str(&fields.join(","));
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_percentiles() {
        let us = Duration::from_micros;
        let sorted: Vec<Duration> = (1..=1000).map(us).collect();
        assert_eq!(percentile(&sorted, 0.5), us(500));
        assert_eq!(percentile(&sorted, 0.99), us(990));
        assert_eq!(percentile(&sorted, 0.999), us(999));
        assert_eq!(percentile(&sorted, 1.0), us(1000));
        assert_eq!(percentile(&[us(7)], 0.999), us(7));
        assert_eq!(percentile(&[], 0.5), Duration::ZERO);
    }

    #[test]
    fn csv_has_one_row_per_phase() {
        let context = PhaseResult::context("a,b", 4, 16, 16, Some(1000.0));
        let sample = Sample {
            latencies: vec![Duration::from_micros(300), Duration::from_micros(100)],
            errors: 1,
            first_error: Some("create /x: NodeExists".to_owned()),
            wall: Duration::from_millis(3),
            ..Sample::default()
        };
        let r = PhaseResult::new(&context, Phase::Set, sample);
        assert_eq!(r.ops_per_sec().round(), 1000.0);
        let text = csv(std::slice::from_ref(&r));
        let mut lines = text.lines();
        assert_eq!(lines.next(), Some(CSV_HEADER));
        assert_eq!(
            lines.next(),
            Some("a;b,4,16,16,set,1000,2,1,0.003,1000,100,300,300,300,,0.00")
        );
        assert!(table_row(&r).contains("NodeExists"));
    }
}
