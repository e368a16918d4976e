//! Client connections: the accept loop (`listener.rs`), one task per connection (`conn/`), TLS
//! (`tls/`), and what the first two share: the time and queue limits (`limits.rs`), the rate
//! limit of refusal lines (`refusals.rs`) and the descriptors kept from connections
//! (`descriptors.rs`).

pub(crate) mod conn;
pub(crate) mod descriptors;
pub(crate) mod limits;
pub(crate) mod listener;
pub(crate) mod refusals;
pub mod tls;
