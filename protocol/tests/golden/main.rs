//! Golden frames captured from a real ZooKeeper 3.8 (see `tests/golden/README.md`): every frame
//! is decoded with the crate's public API, re-encoded with its encoders, and must come back
//! byte for byte.
//!
//! The only tolerated differences are the normalizations the crate makes on purpose, each
//! checked narrowly and counted (see [`Normalization`]); a request whose opcode the crate
//! rejects is tolerated only where the fixture's comments call that opcode unknown or invalid.

mod check;
mod fixture;
mod normalize;

use std::collections::BTreeMap;
use std::path::PathBuf;

use shepherd_protocol::OpCode;

use check::{Coverage, check_frame};
use fixture::{Dir, Kind, golden_dir, load};
use normalize::{Normalization, Outcome};

#[test]
fn golden_frames_round_trip() {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(golden_dir())
        .expect("tests/golden exists")
        .map(|e| e.expect("readable dir entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "frames"))
        .collect();
    paths.sort();
    assert!(!paths.is_empty(), "no .frames files in {:?}", golden_dir());

    let mut cov = Coverage::default();
    let mut failures = Vec::new();
    let mut per_kind: BTreeMap<(Dir, Kind), usize> = BTreeMap::new();
    let mut normalized: BTreeMap<Normalization, Vec<String>> = BTreeMap::new();
    let mut rejected = Vec::new();
    let mut per_file = Vec::new();
    let mut frames = 0;

    for path in &paths {
        let fixture = load(path);
        assert!(!fixture.frames.is_empty(), "{}: no frames", fixture.name);
        per_file.push(format!("{} {}", fixture.name, fixture.frames.len()));
        for f in &fixture.frames {
            frames += 1;
            *per_kind.entry((f.dir, f.kind)).or_default() += 1;
            match check_frame(&fixture, f, &mut cov) {
                Ok(Outcome::Exact) => {}
                Ok(Outcome::Normalized(list)) => {
                    for n in list {
                        normalized.entry(n).or_default().push(f.at());
                    }
                }
                Ok(Outcome::RejectedOpcode(op)) => rejected.push(format!("{} (op {op})", f.at())),
                Err(e) => failures.push(format!(
                    "{} {:?} {:?} op {:?}: {e}",
                    f.at(),
                    f.dir,
                    f.kind,
                    f.op
                )),
            }
        }
    }

    println!("golden: checked {frames} frames in {} files", paths.len());
    println!("  per file: {}", per_file.join(", "));
    for ((dir, kind), n) in &per_kind {
        println!("  {dir:?} {kind:?}: {n}");
    }
    println!(
        "  successful replies: {}, error replies: {}",
        cov.ok_reply_ops.values().sum::<usize>(),
        cov.err_replies
    );
    for (n, at) in &normalized {
        println!("  normalized {n:?}: {} ({})", at.len(), at.join(", "));
    }
    println!(
        "  rejected opcodes (fixture says unknown/invalid): {}",
        rejected.join(", ")
    );

    assert!(
        failures.is_empty(),
        "{} of {frames} golden frames failed:\n{}",
        failures.len(),
        failures.join("\n")
    );

    // Minimum coverage: the scenarios the codec must be proven against.
    let req = |op: OpCode| cov.request_ops.get(&op.into()).copied().unwrap_or(0);
    let ok = |op: OpCode| cov.ok_reply_ops.get(&op.into()).copied().unwrap_or(0);
    let conn_req = |len| cov.connect_request_lens.get(&len).copied().unwrap_or(0);
    let conn_resp = |len| cov.connect_response_lens.get(&len).copied().unwrap_or(0);
    let checks = [
        ("connect_45 (45-byte ConnectRequest)", conn_req(45)),
        ("connect_45 (37-byte ConnectResponse)", conn_resp(37)),
        ("connect_44 (44-byte ConnectRequest)", conn_req(44)),
        ("connect_44 (36-byte ConnectResponse)", conn_resp(36)),
        ("create2 request (15)", req(OpCode::Create2)),
        ("create2 reply (15)", ok(OpCode::Create2)),
        ("getChildren2 request (12)", req(OpCode::GetChildren2)),
        ("getChildren2 reply (12)", ok(OpCode::GetChildren2)),
        ("failing multi reply (14)", cov.failing_multi),
        ("watch event", cov.events),
        ("ping request (11)", req(OpCode::Ping)),
        ("ping reply (xid -2)", cov.ping_replies),
        ("auth request (100)", req(OpCode::Auth)),
        ("auth reply (100)", ok(OpCode::Auth)),
        (
            "expired-session handshake (timeout 0)",
            cov.expired_handshake,
        ),
        (
            "top-level check (13) as Request::Check",
            cov.top_level_check,
        ),
        ("error reply (header only)", cov.err_replies),
    ];
    let missing: Vec<&str> = checks
        .iter()
        .filter(|(_, n)| *n == 0)
        .map(|(what, _)| *what)
        .collect();
    assert!(missing.is_empty(), "golden coverage missing: {missing:?}");
    assert_eq!(
        cov.connect_response_lens
            .keys()
            .copied()
            .collect::<Vec<_>>(),
        [36, 37],
        "ConnectResponse payload lengths"
    );
    // Every header-only request the crate refuses is an unknown/invalid opcode by the comments;
    // those are the only ones, and they must be seen (or the fixture changed under us).
    assert!(
        !rejected.is_empty(),
        "expected the unknown-opcode requests of raw_misc"
    );
}
