//! The independent checker of a failover case: it trusts no lock's own account of who holds it.
//!
//! * **Occupancy**, in this process: a holder enters when its acquisition returns and leaves
//!   before it releases; a second occupant is a double holder. Used where no session may
//!   expire, so that every holder knows exactly when it holds.
//! * **The fenced record**, on the server: every holder appends a persistent sequential node
//!   `<fence>/<who>-<seq>` through its guard's write (a multi that first checks the lock node
//!   exists). The server's sequence numbers order the appends, whether or not their replies
//!   arrived; read in that order, the writers must form one unbroken run each, in the order
//!   they were granted the lock. A holder whose session expired (so that its lock went to
//!   another) and that still managed to write afterwards would break the run.

use std::sync::Mutex;

use shepherd_client::{Client, CreateMode, CreateOptions};
use shepherd_recipes::Guard;
use shepherd_testkit::children;
use shepherd_testkit::locks::AnyGuard;

/// One lock's checker.
#[derive(Debug)]
pub struct Fence {
    dir: String,
    occupant: Mutex<Option<&'static str>>,
}

impl Fence {
    /// A fence in the folder `dir` (created, persistent).
    pub async fn new(admin: &Client, dir: String) -> Fence {
        admin
            .create(&dir, b"", &CreateOptions::persistent())
            .await
            .unwrap_or_else(|e| panic!("create {dir}: {e}"));
        Fence {
            dir,
            occupant: Mutex::new(None),
        }
    }

    /// `who` holds the lock now; panics if someone else does.
    pub fn enter(&self, who: &'static str) {
        let mut occupant = self.occupant.lock().expect("occupancy");
        assert!(
            occupant.is_none(),
            "double holder: {who} got the lock while {occupant:?} holds it ({})",
            self.dir
        );
        *occupant = Some(who);
    }

    /// `who` is about to release.
    pub fn leave(&self, who: &'static str) {
        let mut occupant = self.occupant.lock().expect("occupancy");
        assert_eq!(*occupant, Some(who), "{}: leave by a non-holder", self.dir);
        *occupant = None;
    }

    /// Appends `who` to the fenced record through `guard`; `false` if the write did not apply
    /// (the lock node is gone, or the session or connection is).
    pub async fn write(&self, guard: &AnyGuard, who: &str) -> bool {
        let node = format!("{}/{who}-", self.dir);
        let seq = CreateOptions::new(CreateMode::PersistentSequential);
        guard.write(|m| m.create(&node, b"", &seq)).await.is_ok()
    }

    /// Checks the fenced record: the writers' runs, in sequence order, are exactly `order`.
    pub async fn verify(&self, admin: &Client, order: &[&str]) {
        let mut appends: Vec<(String, String)> = children(admin, &self.dir)
            .await
            .into_iter()
            .map(|name| match name.rsplit_once('-') {
                Some((who, seq)) => (seq.to_owned(), who.to_owned()),
                None => panic!("{}: unexpected node {name}", self.dir),
            })
            .collect();
        // Ten-digit, zero-padded sequence numbers sort as text.
        appends.sort();
        let mut runs: Vec<&str> = Vec::new();
        for (_, who) in &appends {
            if runs.last() != Some(&who.as_str()) {
                runs.push(who);
            }
        }
        assert_eq!(
            runs, order,
            "{}: the fenced record's writers, in order: {appends:?}",
            self.dir
        );
    }
}
