//! How long reading a log file takes at recovery when the file is what a server leaves behind:
//! a few entries at the start of a 64 MiB preallocated file, the rest zeros, mostly a hole.
//! Reading it all (`read_logs`) is what recovery does on every start with a data directory, so
//! the cost of reaching the end of the file (is the zero length the end, or damage?) is start-up
//! time.
//!
//! ```text
//! cargo run --release -p shepherd-zk-storage --example log_scan [RUNS]
//! ```
//!
//! Prints the median of RUNS (default 15) and every run, in ms.

use std::time::Instant;

use shepherd_protocol::txn::{CreateTxn, TxnBody, TxnEntry, TxnHeader};
use shepherd_protocol::{Acl, OpCode};
use shepherd_zk_storage::{DEFAULT_PREALLOC, TxnLog, read_logs};

fn main() {
    let runs: usize = std::env::args()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or(15)
        .max(1);
    let dir = tempfile::tempdir().expect("a scratch directory");
    let mut log = TxnLog::new(dir.path(), DEFAULT_PREALLOC);
    for zxid in 1..=10 {
        let entry = TxnEntry {
            header: TxnHeader {
                client_id: 1,
                cxid: 1,
                zxid,
                time: 0,
                op_type: OpCode::Create as i32,
            },
            body: TxnBody::Create(CreateTxn {
                path: format!("/n{zxid}"),
                data: Some(vec![1; 100]),
                acl: Acl::open_unsafe(),
                ephemeral: false,
                parent_c_version: 1,
            }),
            digest: None,
        };
        log.append(&entry).expect("append");
        log.commit(true).expect("commit");
    }
    drop(log);
    let mut ms: Vec<f64> = (0..runs)
        .map(|_| {
            let started = Instant::now();
            let entries = read_logs(dir.path(), 0).expect("read").count();
            assert_eq!(entries, 10);
            started.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    let every: Vec<String> = ms.iter().map(|m| format!("{m:.2}")).collect();
    ms.sort_by(f64::total_cmp);
    println!(
        "read_logs, one 64 MiB preallocated log of 10 entries: median {:.2} ms over {runs} runs ({})",
        ms[runs / 2],
        every.join(", ")
    );
}
