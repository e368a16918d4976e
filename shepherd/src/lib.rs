//! Shepherd: a ZooKeeper-compatible coordination server you can embed in any process, its
//! client, and a library of distributed lock recipes.
//!
//! This facade re-exports the workspace's public crates so that users depend on one name:
//! [`protocol`] (the sans-IO wire codec), [`server`] (the embeddable server), [`client`] (an
//! async ZooKeeper client) and [`recipes`] (the lock recipes, which speak only the public
//! ZooKeeper API and so run on real ZooKeeper too).
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> std::io::Result<()> {
//! let server = shepherd::Server::builder().start().await?;
//! println!("ZooKeeper at {}", server.connect_string());
//! server.shutdown().await;
//! # Ok(())
//! # }
//! ```

pub use shepherd_client as client;
pub use shepherd_protocol as protocol;
pub use shepherd_recipes as recipes;
pub use shepherd_server as server;
pub use shepherd_server::{Server, ServerBuilder};
