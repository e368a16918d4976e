//! [`Pacer`]: the open loop's clock. A thread of its own releases each scheduled request, at
//! its instant, to the session it belongs to, as one permit on that session's [`Semaphore`].
//!
//! Why a thread rather than a tokio timer per session: tokio's timers fire on a 1 ms tick. A
//! request scheduled through one leaves up to 1 ms late, together with every other request due
//! within the same millisecond: at 29,000 requests a second that is a burst of 29 once a
//! millisecond, not an even stream. Each latency, measured from the schedule, then carries the
//! client's own lateness, and the server sees bursts it was never offered. A thread sleeping
//! to each instant on the OS timer wakes tens of microseconds late, so the requests leave
//! spread as scheduled, whatever the server.
//!
//! Invariants:
//! * request `j` of session `k` is released no earlier than [`Schedule::due`]`(k, j)`, and the
//!   requests of all sessions are released in due order, one permit each;
//! * after its last request, a session is given `lanes` permits more, so that every one of its
//!   lanes wakes to find the schedule over;
//! * dropping the pacer stops its thread at once and waits for it;
//! * if the thread panics, every semaphore is closed, which ends every lane.

use std::sync::Arc;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use tokio::sync::Semaphore;

/// When an open loop's requests are due: session `k`'s `j`-th at
/// `start + (j + k / sessions) · every`, so that the sessions interleave into one even stream.
#[derive(Debug, Clone, Copy)]
pub(super) struct Schedule {
    /// When the first request of session 0 is due.
    pub start: Instant,
    /// The gap between two of one session's requests.
    pub every: Duration,
    /// Sessions sharing the stream: at least 1.
    pub sessions: usize,
}

impl Schedule {
    /// When request `j` of session `k` is due.
    pub fn due(&self, k: usize, j: usize) -> Instant {
        let offset = k as f64 / self.sessions as f64;
        self.start + self.every.mul_f64(j as f64 + offset)
    }
}

/// The thread releasing an open loop's requests; see the module docs.
#[derive(Debug)]
pub(super) struct Pacer {
    /// Dropped to stop the thread: its wait ends at once.
    stop: Option<mpsc::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl Pacer {
    /// Starts releasing `counts[k]` requests to session `k` by `schedule`, and returns the
    /// pacer with one semaphore per session to take them from.
    ///
    /// # Errors
    /// The OS's, if it cannot start a thread.
    pub fn start(
        schedule: Schedule,
        counts: Vec<usize>,
        lanes: usize,
    ) -> std::io::Result<(Pacer, Vec<Arc<Semaphore>>)> {
        let permits: Vec<Arc<Semaphore>> =
            counts.iter().map(|_| Arc::new(Semaphore::new(0))).collect();
        let (stop, stopped) = mpsc::channel();
        let given = permits.clone();
        let thread = std::thread::Builder::new()
            .name("bench-pacer".to_owned())
            .spawn(move || release(&schedule, &counts, &given, lanes, &stopped))?;
        Ok((
            Pacer {
                stop: Some(stop),
                thread: Some(thread),
            },
            permits,
        ))
    }
}

impl Drop for Pacer {
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(thread) = self.thread.take() {
            // A panic was printed when it happened, and [`Closer`] ended the lanes' waits.
            let _ = thread.join();
        }
    }
}

/// Closes the semaphores if the pacer's thread unwinds, so that no lane waits for a permit
/// that will never come (a lane ends when its semaphore is closed). Not on a normal end:
/// closing throws away permits not yet taken.
struct Closer<'a>(&'a [Arc<Semaphore>]);

impl Drop for Closer<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.iter().for_each(|permits| permits.close());
        }
    }
}

/// The pacer's thread: every request in due order, then the closing permits. Returns early
/// when the pacer is dropped.
fn release(
    schedule: &Schedule,
    counts: &[usize],
    permits: &[Arc<Semaphore>],
    lanes: usize,
    stopped: &mpsc::Receiver<()>,
) {
    let _closer = Closer(permits);
    let rounds = counts.iter().copied().max().unwrap_or(0);
    for j in 0..rounds {
        for (k, (&count, permit)) in counts.iter().zip(permits).enumerate() {
            if j >= count {
                continue;
            }
            let due = schedule.due(k, j);
            // The receiver is only a wait that the pacer's drop cuts short.
            while let Some(left) = due
                .checked_duration_since(Instant::now())
                .filter(|left| !left.is_zero())
            {
                if let Err(RecvTimeoutError::Disconnected) = stopped.recv_timeout(left) {
                    return;
                }
            }
            permit.add_permits(1);
        }
    }
    for permit in permits {
        permit.add_permits(lanes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sessions_interleave_into_one_even_stream() {
        let schedule = Schedule {
            start: Instant::now(),
            every: Duration::from_millis(4),
            sessions: 4,
        };
        let gaps: Vec<Duration> = [(0, 0), (1, 0), (2, 0), (3, 0), (0, 1), (1, 1)]
            .windows(2)
            .map(|w| schedule.due(w[1].0, w[1].1) - schedule.due(w[0].0, w[0].1))
            .collect();
        assert!(
            gaps.iter()
                .all(|gap| gap.abs_diff(Duration::from_millis(1)) < Duration::from_micros(1)),
            "{gaps:?}"
        );
    }

    #[tokio::test]
    async fn every_request_is_released_no_earlier_than_due_then_the_lanes_are_closed() {
        let schedule = Schedule {
            start: Instant::now() + Duration::from_millis(2),
            every: Duration::from_millis(1),
            sessions: 2,
        };
        let (pacer, permits) = Pacer::start(schedule, vec![3, 2], 4).unwrap();
        for (k, count) in [(0, 3), (1, 2)] {
            for j in 0..count {
                permits[k].acquire().await.unwrap().forget();
                assert!(
                    Instant::now() >= schedule.due(k, j),
                    "session {k} request {j} early"
                );
            }
        }
        drop(pacer);
        // The thread has ended: every closing permit is there, and nothing more.
        assert_eq!(permits[0].available_permits(), 4);
        assert_eq!(permits[1].available_permits(), 4);
    }

    #[tokio::test]
    async fn a_panic_in_the_pacer_ends_the_lanes_waits() {
        // Session 1's first instant is past what an Instant can hold: computing it panics.
        let schedule = Schedule {
            start: Instant::now(),
            every: Duration::MAX,
            sessions: 2,
        };
        let (pacer, permits) = Pacer::start(schedule, vec![1, 1], 1).unwrap();
        // Bounded: without the closing, the wait would never end.
        let taken = tokio::time::timeout(Duration::from_secs(60), permits[1].acquire())
            .await
            .expect("the wait ends");
        assert!(taken.is_err(), "the semaphore is closed");
        drop(pacer);
    }

    #[test]
    fn dropping_the_pacer_stops_a_long_wait() {
        let schedule = Schedule {
            start: Instant::now() + Duration::from_secs(3600),
            every: Duration::from_secs(1),
            sessions: 1,
        };
        let (pacer, permits) = Pacer::start(schedule, vec![1], 1).unwrap();
        let (dropped, done) = mpsc::channel();
        std::thread::spawn(move || {
            drop(pacer);
            let _ = dropped.send(());
        });
        // Bounded: a pacer that ignored its drop would wait an hour.
        done.recv_timeout(Duration::from_secs(60))
            .expect("the pacer's thread ends when it is dropped");
        assert_eq!(permits[0].available_permits(), 0);
    }
}
