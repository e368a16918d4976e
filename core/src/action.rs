//! [`Action`]: what a call asks the shell to do, the core's only output.

use crate::ids::ConnId;

/// What the shell must do, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// Send this frame payload (without the length prefix) to the connection.
    Send(ConnId, Vec<u8>),
    /// Close the connection once everything queued before this action is flushed.
    Close(ConnId),
}
