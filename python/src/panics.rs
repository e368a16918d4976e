//! Panics on the embedded servers' threads, kept for the next Python call instead of lost.
//!
//! tokio catches a panic inside a task, so the interpreter never aborts; but the task is gone
//! and nobody is told. A process-wide panic hook, chained before the previous one, records the
//! message of any panic on a thread named `shepherd-zk-<server>-…`; every call on that server
//! takes the record first and raises it ([`take`]). Invariant: a record is reported once, to
//! the server whose thread panicked.

use std::collections::HashMap;
use std::sync::{Mutex, Once};

/// The prefix of every runtime thread's name: `shepherd-zk-<server id>-`.
pub(crate) const THREAD_PREFIX: &str = "shepherd-zk-";

/// Panics not yet reported, by server id.
static PANICS: Mutex<Option<HashMap<u64, String>>> = Mutex::new(None);

/// Installs the hook once per process; the previous hook still runs (and prints).
pub(crate) fn install() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if let Some(server) = std::thread::current().name().and_then(server_of) {
                let payload = info.payload();
                let message = payload
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| payload.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "a panic".to_string());
                let place = info
                    .location()
                    .map(|l| format!(" at {}:{}", l.file(), l.line()))
                    .unwrap_or_default();
                if let Ok(mut panics) = PANICS.lock() {
                    panics
                        .get_or_insert_with(HashMap::new)
                        .entry(server)
                        .or_insert(format!("{message}{place}"));
                }
            }
            previous(info);
        }));
    });
}

/// The server id in a runtime thread's name.
fn server_of(name: &str) -> Option<u64> {
    let rest = name.strip_prefix(THREAD_PREFIX)?;
    rest.split('-').next()?.parse().ok()
}

/// The first unreported panic on `server`'s threads, if any.
pub(crate) fn take(server: u64) -> Option<String> {
    let mut panics = PANICS.lock().ok()?;
    panics.as_mut()?.remove(&server)
}

#[cfg(test)]
mod tests {
    #[test]
    fn thread_names_give_the_server() {
        assert_eq!(super::server_of("shepherd-zk-7-worker"), Some(7));
        assert_eq!(super::server_of("shepherd-zk-x"), None);
        assert_eq!(super::server_of("main"), None);
    }
}
