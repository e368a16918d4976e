//! Client connections: the listeners, one task per connection, and TLS.

pub(crate) mod conn;
pub(crate) mod limits;
pub(crate) mod listener;
pub(crate) mod refusals;
pub mod tls;
