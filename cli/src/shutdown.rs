//! How a long-running command (`shepherd serve`) stops: on SIGINT (Ctrl-C) or SIGTERM (a
//! service manager, `docker stop`, `kill`) it runs its clean stop and exits 0; a second
//! signal during a slow clean stop exits at once.
//!
//! Invariants: the handlers are installed before the command announces itself, so that a
//! signal sent as soon as the `listening` line is read is never the default, fatal one; once
//! installed they stay for the life of the process (tokio cannot uninstall them), which is why
//! the second signal must be handled here rather than left to the default action; the last log
//! line of a clean stop is `stopped`, written after the clean stop has finished.

use std::future::Future;
use std::process::ExitCode;

/// A signal that asks the process to stop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stop {
    /// SIGINT, as Ctrl-C sends.
    Interrupt,
    /// SIGTERM, as service managers send.
    Terminate,
}

impl Stop {
    /// The signal's name, as logged.
    pub fn name(self) -> &'static str {
        match self {
            Stop::Interrupt => "SIGINT",
            Stop::Terminate => "SIGTERM",
        }
    }

    /// The exit status of a process that this signal ended without a clean stop: 128 + the
    /// signal's number, as a shell reports a process killed by it.
    pub fn forced_exit_code(self) -> u8 {
        match self {
            Stop::Interrupt => 128 + 2,
            Stop::Terminate => 128 + 15,
        }
    }
}

/// The process's SIGINT and SIGTERM handlers, as a stream of [`Stop`]s.
pub struct StopSignals {
    #[cfg(unix)]
    interrupt: tokio::signal::unix::Signal,
    #[cfg(unix)]
    terminate: tokio::signal::unix::Signal,
}

impl StopSignals {
    /// Installs the handlers, replacing the default (fatal) action of both signals for the rest
    /// of the process's life.
    ///
    /// # Errors
    /// When the handlers cannot be registered with the OS.
    ///
    /// # Panics
    /// Outside a tokio runtime with its I/O driver enabled.
    pub fn install() -> std::io::Result<StopSignals> {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            Ok(StopSignals {
                interrupt: signal(SignalKind::interrupt())?,
                terminate: signal(SignalKind::terminate())?,
            })
        }
        #[cfg(not(unix))]
        {
            Ok(StopSignals {})
        }
    }

    /// The next stop signal. Signals that arrived since the last call are not lost: each kind
    /// is remembered once.
    ///
    /// Cancellation safe: dropping the future loses no signal.
    pub async fn recv(&mut self) -> Stop {
        #[cfg(unix)]
        {
            // `recv` yields `None` only once the runtime is going away; such a source never
            // fires again, and the other may still.
            let interrupt = async {
                match self.interrupt.recv().await {
                    Some(()) => Stop::Interrupt,
                    None => std::future::pending().await,
                }
            };
            let terminate = async {
                match self.terminate.recv().await {
                    Some(()) => Stop::Terminate,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                stop = interrupt => stop,
                stop = terminate => stop,
            }
        }
        #[cfg(not(unix))]
        {
            match tokio::signal::ctrl_c().await {
                Ok(()) => Stop::Interrupt,
                Err(_) => std::future::pending().await,
            }
        }
    }
}

/// How a clean stop ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ending {
    /// The clean stop ran to its end.
    Clean,
    /// This signal came first, and the clean stop was abandoned.
    Forced(Stop),
}

/// Runs `clean_stop` to its end unless `again` (the next stop signal) comes first. When both
/// are ready, the clean stop wins.
pub async fn unless_signalled_again(
    clean_stop: impl Future<Output = ()>,
    again: impl Future<Output = Stop>,
) -> Ending {
    tokio::select! {
        biased;
        () = clean_stop => Ending::Clean,
        stop = again => Ending::Forced(stop),
    }
}

/// Waits for a stop signal, then runs `clean_stop`, logging `stopping` and, once it has
/// finished, `stopped`, and returns success. A second signal during `clean_stop` exits the
/// process at once with [`Stop::forced_exit_code`] (logs flushed, nothing else run).
pub async fn on_signal(
    signals: &mut StopSignals,
    clean_stop: impl Future<Output = ()>,
) -> ExitCode {
    let stop = signals.recv().await;
    tracing::info!(
        signal = stop.name(),
        "stopping; send the signal again to exit at once"
    );
    match unless_signalled_again(clean_stop, signals.recv()).await {
        Ending::Clean => {
            tracing::info!("stopped");
            crate::logging::flush();
            ExitCode::SUCCESS
        }
        Ending::Forced(again) => {
            tracing::warn!(
                signal = again.name(),
                "exiting at once; the clean stop did not finish"
            );
            crate::logging::flush();
            // Not a return: the runtime's drop would wait for the tasks this abandons.
            std::process::exit(i32::from(again.forced_exit_code()))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_second_signal_abandons_a_stuck_clean_stop() {
        let ending =
            unless_signalled_again(std::future::pending(), async { Stop::Interrupt }).await;
        assert_eq!(ending, Ending::Forced(Stop::Interrupt));
    }

    #[tokio::test]
    async fn a_finished_clean_stop_wins_over_a_ready_signal() {
        let ending = unless_signalled_again(async {}, async { Stop::Terminate }).await;
        assert_eq!(ending, Ending::Clean);
    }

    #[tokio::test]
    async fn a_clean_stop_runs_to_its_end_without_a_second_signal() {
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let clean_stop = async {
            // Yields to the select at least once before finishing.
            let _ = rx.await;
        };
        let finisher = async {
            let _ = tx.send(());
            std::future::pending::<Stop>().await
        };
        let ending = unless_signalled_again(clean_stop, finisher).await;
        assert_eq!(ending, Ending::Clean);
    }

    #[test]
    fn forced_exit_codes_are_the_shells() {
        assert_eq!(Stop::Interrupt.forced_exit_code(), 130);
        assert_eq!(Stop::Terminate.forced_exit_code(), 143);
    }
}
