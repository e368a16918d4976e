//! The proof workloads in `cargo test`: each workload briefly on the embedded server, with its
//! nemesis, judged VALID by its checker ([`workloads`]); and each check shown to fail a server
//! broken on purpose in the way it checks, while the same workload on the same server unbroken
//! passes ([`broken`]).

mod broken;
mod workloads;
