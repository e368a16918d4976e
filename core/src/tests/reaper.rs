//! The container and TTL reaper (docs/protocol.md §8.3, §8.4), driven by tick().

use shepherd_protocol::{CreateTTLRequest, Request};

use super::*;

fn container(path: &str) -> Request {
    Request::CreateContainer(create_req(path, None, 4))
}

fn fast() -> CoreConfig {
    CoreConfig {
        container_check_interval_ms: 1000,
        extended_types_enabled: true,
        ..CoreConfig::default()
    }
}

#[test]
fn containers_go_only_after_having_had_a_child() {
    let mut h = H::with(fast());
    let mut a = h.connect();
    let mut b = h.connect();
    h.send(&mut a, container("/c"));
    h.send(&mut a, container("/never"));
    assert_eq!(h.core.next_deadline(), Some(T0.mono_ms + 1000));
    h.send(&mut a, create("/c/x", b""));
    h.advance(1000);
    assert!(h.tick().is_empty(), "a container with a child stays");
    h.send(&mut a, delete("/c/x", -1));
    h.send(&mut b, exists("/c", true));
    h.send(&mut b, get_children("/", true));
    let zxid = h.core.last_zxid();
    h.advance(1000);
    let actions = h.tick();
    assert_eq!(h.core.last_zxid(), zxid + 1, "deleteContainer is a txn");
    assert_eq!(
        all_events(&actions),
        [
            (b.conn, EventType::NodeDeleted, "/c".into()),
            (b.conn, EventType::NodeChildrenChanged, "/".into())
        ]
    );
    assert_eq!(h.send(&mut a, exists("/c", false)).err(), -101);
    // Never used: kept forever by default.
    h.advance(3_600_000);
    assert!(all_events(&h.tick()).is_empty());
    let mut c = h.connect();
    assert_eq!(h.send(&mut c, exists("/never", false)).err(), 0);
}

#[test]
fn never_used_containers_with_max_never_used_interval() {
    let mut h = H::with(CoreConfig {
        max_never_used_interval_ms: 5000,
        ..fast()
    });
    let mut a = h.connect();
    h.send(&mut a, container("/n"));
    h.advance(5000);
    h.tick();
    assert_eq!(h.send(&mut a, exists("/n", false)).err(), 0);
    h.advance(1000);
    h.tick();
    assert_eq!(h.send(&mut a, exists("/n", false)).err(), -101);
}

#[test]
fn ttl_nodes_expire_when_childless_and_unmodified() {
    let mut h = H::with(fast());
    let mut a = h.connect();
    let ttl = |path: &str| {
        Request::CreateTTL(CreateTTLRequest {
            path: path.into(),
            data: None,
            acl: open_acl(),
            flags: 5,
            ttl: 3000,
        })
    };
    h.send(&mut a, ttl("/t"));
    h.send(&mut a, ttl("/u"));
    h.send(&mut a, create("/u/kid", b""));
    h.advance(2000);
    h.send(&mut a, set_data("/t", b"", -1));
    h.advance(2000);
    h.tick();
    assert_eq!(
        h.send(&mut a, exists("/t", false)).err(),
        0,
        "mtime was refreshed"
    );
    h.advance(2000);
    h.tick();
    assert_eq!(h.send(&mut a, exists("/t", false)).err(), -101);
    assert_eq!(h.send(&mut a, exists("/u", false)).err(), 0, "has a child");
    h.send(&mut a, delete("/u/kid", -1));
    h.advance(1000);
    h.tick();
    assert_eq!(h.send(&mut a, exists("/u", false)).err(), -101);
    assert_eq!(
        h.core.next_deadline(),
        h.core.sessions().iter().map(|s| s.expires_at_ms).min()
    );
}

#[test]
fn reaping_is_rate_limited() {
    // 1000 ms × 120 per minute / 60 000 = 2 per run.
    let mut h = H::with(CoreConfig {
        container_max_per_minute: 120,
        ..fast()
    });
    let mut a = h.connect();
    for i in 0..5 {
        let p = format!("/c{i}");
        h.send(&mut a, container(&p));
        h.send(&mut a, create(&format!("{p}/x"), b""));
        h.send(&mut a, delete(&format!("{p}/x"), -1));
    }
    let zxid = h.core.last_zxid();
    h.advance(1000);
    h.tick();
    assert_eq!(h.core.last_zxid(), zxid + 2);
    h.advance(1000);
    h.tick();
    h.advance(1000);
    h.tick();
    assert_eq!(h.core.last_zxid(), zxid + 5);
    assert_eq!(h.core.node_count(), 4);
}

/// The reaper's next run is in `next_deadline` as soon as there is a TTL node, on the grid of
/// runs every `container_check_interval_ms` from the start, even after an idle spell; the node
/// goes on the first run after its TTL has passed since its mtime. ZooKeeper 3.8
/// (`ContainerManager`, a fixed-rate timer from server start; observed on Debian's 3.8.0 with
/// `znode.container.checkIntervalMs=1000`: a 100 ms TTL node was gone 0.3 s after its create,
/// at the timer's next run).
#[test]
fn the_reaper_runs_on_its_grid_once_there_is_a_candidate() {
    let mut h = H::with(fast());
    let mut a = h.connect();
    assert!(
        h.core.next_deadline() > Some(T0.mono_ms + 20_000),
        "a session only"
    );
    // Idle for five and a half runs, then a TTL node.
    h.advance(5500);
    h.send(
        &mut a,
        Request::CreateTTL(CreateTTLRequest {
            path: "/t".into(),
            data: None,
            acl: open_acl(),
            flags: 5,
            ttl: 1500,
        }),
    );
    assert_eq!(h.core.next_deadline(), Some(T0.mono_ms + 6000));
    for (at, left) in [(6000, true), (7000, true), (8000, false)] {
        h.now.mono_ms = T0.mono_ms + at;
        h.now.wall_ms = T0.wall_ms + at as i64;
        h.tick();
        let exists = h.core.tree.get("/t").is_some();
        assert_eq!(exists, left, "after the run at +{at} ms");
    }
    assert_eq!(
        h.core.next_deadline(),
        h.core.sessions().iter().map(|s| s.expires_at_ms).min(),
        "no candidate left: the session's deadline only"
    );
}
