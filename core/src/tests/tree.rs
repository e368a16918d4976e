//! The tree's own invariants: the fresh tree's odd stats, exact rollback, and the cached child
//! encoding following every change.

use shepherd_protocol::Codec;

use crate::tree::*;
use shepherd_protocol::Acl;

#[test]
fn fresh_tree_stats() {
    let tree = Tree::new();
    assert_eq!(tree.len(), 4);
    assert_eq!(tree.data_size(), 44);
    let root = tree.get("/").unwrap().stat();
    assert_eq!((root.cversion, root.num_children), (-1, 1));
    assert_eq!(tree.get("/zookeeper").unwrap().stat().cversion, -2);
    let config = tree.get("/zookeeper/config").unwrap();
    assert_eq!(config.stat().aversion, -1);
    assert_eq!(config.acl(), Acl::read_unsafe());
    assert_eq!(tree.descendants("/"), 3);
}

#[test]
fn rollback_restores_everything() {
    let mut tree = Tree::new();
    let mut undo = Vec::new();
    tree.create(
        "/a",
        Some(b"x".to_vec()),
        Acl::open_unsafe(),
        Owner::Persistent,
        (1, 5),
        &mut undo,
    );
    let before_root = tree.get("/").unwrap().stat();
    let size = tree.data_size();
    let mut undo = Vec::new();
    tree.create(
        "/a/e",
        None,
        Acl::open_unsafe(),
        Owner::Ephemeral(7),
        (2, 6),
        &mut undo,
    );
    tree.set_data("/a", None, (2, 6), &mut undo);
    tree.delete("/a/e", 2, &mut undo);
    tree.create(
        "/c",
        None,
        Acl::open_unsafe(),
        Owner::Container,
        (2, 6),
        &mut undo,
    );
    tree.rollback(undo);
    assert_eq!(tree.get("/").unwrap().stat(), before_root);
    assert_eq!(tree.get("/a").unwrap().stat().version, 0);
    assert_eq!(tree.get("/a").unwrap().data(), Some(&b"x"[..]));
    assert_eq!(tree.data_size(), size);
    assert!(tree.get("/a/e").is_none() && tree.containers().is_empty());
    assert_eq!(tree.ephemerals_count(), 0);
    assert_eq!(tree.get("/a").unwrap().stat().cversion, 0);
}

/// The cached wire form always matches encoding the names afresh, through creates,
/// deletes and a rollback.
#[test]
fn children_wire_follows_every_change() {
    fn fresh(tree: &Tree, node: &Node) -> Vec<u8> {
        tree.child_names(node)
            .map(str::to_string)
            .collect::<Vec<String>>()
            .to_bytes()
    }
    let mut tree = Tree::new();
    let mut undo = Vec::new();
    let open = Acl::open_unsafe;
    tree.create("/d", None, open(), Owner::Persistent, (1, 1), &mut undo);
    let check = |tree: &mut Tree| {
        let expected = fresh(tree, tree.get("/d").unwrap());
        let index = tree.lookup("/d").unwrap();
        assert_eq!(tree.children_wire(index), &expected[..]);
    };
    check(&mut tree);
    for name in ["/d/b", "/d/a", "/d/c"] {
        tree.create(name, None, open(), Owner::Persistent, (2, 2), &mut undo);
        check(&mut tree);
    }
    let mut undo = Vec::new();
    tree.delete("/d/a", 3, &mut undo);
    check(&mut tree);
    tree.create("/d/e", None, open(), Owner::Persistent, (3, 3), &mut undo);
    check(&mut tree);
    tree.rollback(undo);
    check(&mut tree);
    let names: Vec<&str> = tree.child_names(tree.get("/d").unwrap()).collect();
    assert_eq!(names, ["a", "b", "c"]);
}

/// The per-node layout docs/bench/scale.md ("Layout") accounts for, byte by byte: a change
/// that grows it must update that breakdown.
#[test]
fn a_node_is_as_small_as_the_layout_says() {
    let slot = std::mem::size_of::<Option<Node>>();
    assert_eq!(
        slot,
        std::mem::size_of::<Node>(),
        "the arena slot adds nothing"
    );
    assert!(slot <= 144, "Node is {slot} bytes");
}
