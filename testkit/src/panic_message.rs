//! What a failed task said: the text of its panic, for suites that run bodies in their own
//! tasks so that one failure is reported beside the others instead of ending the run.

use tokio::task::JoinError;

/// The message of the panic that ended a task (`panic!` with a literal or with a format), or
/// what else ended it (a cancellation).
pub fn panic_message(error: JoinError) -> String {
    match error.try_into_panic() {
        Ok(panic) => panic
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
            .unwrap_or_else(|| "a panic without a message".to_owned()),
        Err(error) => error.to_string(),
    }
}
