//! How a long-running command (`shepherd serve`) stops: on SIGINT (Ctrl-C) or SIGTERM (a
//! service manager, `docker stop`, `kill`), or, when asked (`--exit-with-stdin`), at the end of
//! its standard input (the launcher that holds the pipe is gone), it runs its clean stop and
//! exits 0; a second signal during a slow clean stop exits at once.
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
    /// Standard input reached its end (or could no longer be read): whoever held the other
    /// end of the pipe closed it or died.
    InputClosed,
    /// The server was asked to stop from inside (the test controls' `/command/shutdown`).
    Requested,
}

impl Stop {
    /// The signal's name, as logged.
    pub fn name(self) -> &'static str {
        match self {
            Stop::Interrupt => "SIGINT",
            Stop::Terminate => "SIGTERM",
            Stop::InputClosed => "end of standard input",
            Stop::Requested => "a shutdown command",
        }
    }

    /// The exit status of a process that this signal ended without a clean stop: 128 + the
    /// signal's number, as a shell reports a process killed by it. The end of input and a
    /// shutdown command come only once, so they never force a stop; 1 should it ever be asked.
    pub fn forced_exit_code(self) -> u8 {
        match self {
            Stop::Interrupt => 128 + 2,
            Stop::Terminate => 128 + 15,
            Stop::InputClosed | Stop::Requested => 1,
        }
    }
}

/// The process's SIGINT and SIGTERM handlers, and the end of standard input once
/// [`StopSignals::watch_input`] was called, as a stream of [`Stop`]s.
pub struct StopSignals {
    #[cfg(unix)]
    interrupt: tokio::signal::unix::Signal,
    #[cfg(unix)]
    terminate: tokio::signal::unix::Signal,
    /// Fires once when standard input ends; `None` when not watched, or once it has fired.
    input: Option<tokio::sync::oneshot::Receiver<()>>,
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
                input: None,
            })
        }
        #[cfg(not(unix))]
        {
            Ok(StopSignals { input: None })
        }
    }

    /// Also stops at the end of standard input: a thread reads and discards it until end of
    /// file or an error. A plain thread, not the runtime's blocking pool, so that it never
    /// holds up the process's exit while it waits in `read`.
    ///
    /// # Errors
    /// When the OS refuses the thread.
    pub fn watch_input(&mut self) -> std::io::Result<()> {
        let (ended, input) = tokio::sync::oneshot::channel();
        std::thread::Builder::new()
            .name("stdin-watch".into())
            .spawn(move || {
                read_to_end(std::io::stdin().lock());
                let _ = ended.send(());
            })?;
        self.input = Some(input);
        Ok(())
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
                stop = input_closed(&mut self.input) => stop,
            }
        }
        #[cfg(not(unix))]
        {
            tokio::select! {
                stop = async {
                    match tokio::signal::ctrl_c().await {
                        Ok(()) => Stop::Interrupt,
                        Err(_) => std::future::pending().await,
                    }
                } => stop,
                stop = input_closed(&mut self.input) => stop,
            }
        }
    }
}

/// [`Stop::InputClosed`] once `input` fires (or its thread is gone); pending forever when
/// there is nothing to watch, and after it fired, since the end of input comes once.
///
/// Cancellation safe: a receiver polled and dropped keeps its message.
async fn input_closed(input: &mut Option<tokio::sync::oneshot::Receiver<()>>) -> Stop {
    match input.as_mut() {
        Some(ended) => {
            // An error is the watching thread gone without a word: no longer watched, so
            // treated as the end too rather than ignored.
            let _ = ended.await;
            *input = None;
            Stop::InputClosed
        }
        None => std::future::pending().await,
    }
}

/// Reads `input` until end of file or an error other than an interrupted call, discarding
/// what it reads: a launcher writes nothing, so this ends only when its pipe does.
fn read_to_end(mut input: impl std::io::Read) {
    let mut scratch = [0u8; 512];
    loop {
        match input.read(&mut scratch) {
            Ok(0) => return,
            Ok(_) => {}
            Err(error) if error.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return,
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

/// Waits for a stop signal or `requested` (the server asked to stop from inside), then runs
/// `clean_stop`, logging `stopping` and, once it has finished, `stopped`, and returns success.
/// A second signal during `clean_stop` exits the process at once with
/// [`Stop::forced_exit_code`] (logs flushed, nothing else run).
pub async fn on_signal(
    signals: &mut StopSignals,
    requested: impl Future<Output = ()>,
    clean_stop: impl Future<Output = ()>,
) -> ExitCode {
    let stop = tokio::select! {
        stop = signals.recv() => stop,
        () = requested => Stop::Requested,
    };
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
    fn reading_to_the_end_returns_at_end_of_file_and_on_an_error() {
        read_to_end(&b"anything written is ignored"[..]);
        struct Broken;
        impl std::io::Read for Broken {
            fn read(&mut self, _: &mut [u8]) -> std::io::Result<usize> {
                Err(std::io::Error::other("gone"))
            }
        }
        read_to_end(Broken);
    }

    #[tokio::test]
    async fn the_end_of_input_stops_once_then_never_again() {
        let (ended, input) = tokio::sync::oneshot::channel();
        let mut input = Some(input);
        let _ = ended.send(());
        assert_eq!(input_closed(&mut input).await, Stop::InputClosed);
        assert!(input.is_none());
        let again = futures_util::FutureExt::now_or_never(input_closed(&mut input));
        assert_eq!(again, None, "fired twice");
        // The watching thread gone without a word is the end too.
        let (ended, input) = tokio::sync::oneshot::channel::<()>();
        drop(ended);
        assert_eq!(input_closed(&mut Some(input)).await, Stop::InputClosed);
    }

    #[test]
    fn forced_exit_codes_are_the_shells() {
        assert_eq!(Stop::Interrupt.forced_exit_code(), 130);
        assert_eq!(Stop::Terminate.forced_exit_code(), 143);
    }
}
