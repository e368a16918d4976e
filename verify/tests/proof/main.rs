//! The proof workloads in `cargo test`: each workload briefly on the embedded server, with its
//! nemesis, judged VALID by its checker ([`workloads`]); each test-only broken mode of the
//! server doing the lie it is named for ([`modes`]); and each check shown to fail a server
//! broken that way, while the same workload on the same server unbroken passes ([`broken`]).

mod broken;
mod modes;
mod workloads;
