//! The shape of a production ZooKeeper tree, scaled to any node count: the statistics that
//! ClickHouse's `keeper-utils snapshot-analyzer` printed for a 111 M-node production snapshot
//! (ClickHouse pull request #106270), which are what a tree's memory, snapshot and recovery
//! cost depend on:
//!
//! | statistic | that snapshot | here |
//! |---|---:|---|
//! | mean path length, bytes | 115.1 | [`Stats::mean_path`] |
//! | mean last component, bytes | 23.7 | [`Stats::mean_name`] |
//! | nodes with data | 56.8 % | [`DATA_SHARE`] |
//! | data per node (all nodes) | 46.5 B | uniform 1..=163 B on those with data |
//! | the widest parent's share of all nodes | 10.55 % | [`WIDE_SHARE`] |
//!
//! The widest parent is an object-storage folder (`/ch-s3-UUID/mergetree/_objects`) of
//! 24-character names; every other leaf is a data part of one replica of one table
//! (`/clickhouse/tables/UUID/01/replicas/REPLICA/parts/PART`), [`PARTS_PER_FOLDER`] to a
//! `parts` folder and two replicas to a table, the way replicated tables lay out their parts.
//!
//! Invariants: the shape is a pure function of the node count (no randomness that is not
//! derived from an index), so that both servers get the same tree; every path is unique; every
//! folder comes before its children in [`Shape::folders`], and leaves are independent of
//! each other, so that they can be created in any order once the folders exist.

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// Share of the nodes under the one wide parent.
pub const WIDE_SHARE: f64 = 0.1055;
/// Share of the nodes that have data.
pub const DATA_SHARE: f64 = 0.568;
/// The largest data, bytes: data is uniform in `1..=MAX_DATA` (mean 82 on the nodes that have
/// it, 46.5 over all nodes).
pub const MAX_DATA: usize = 163;
/// Data parts per `parts` folder.
pub const PARTS_PER_FOLDER: usize = 1000;

/// The wide parent.
pub const WIDE_PARENT: &str = "/ch-s3-131ac5a5-f6aa-4a8f-9827-457a195d2494/mergetree/_objects";

/// A tree of about `nodes` nodes in the production shape.
#[derive(Debug, Clone, Copy)]
pub struct Shape {
    /// Leaves under the wide parent.
    wide: usize,
    /// Data-part leaves.
    parts: usize,
}

impl Shape {
    /// The shape for `nodes` nodes in all, folders included (the count is met to within the
    /// last folder's few nodes).
    pub fn new(nodes: usize) -> Shape {
        let wide = (nodes as f64 * WIDE_SHARE).round() as usize;
        // Each parts folder brings itself and its replica's node, and half of its table's
        // three (the table, its shard, `replicas`).
        let per_folder = PARTS_PER_FOLDER as f64 + 3.5;
        let parts = ((nodes - wide) as f64 * PARTS_PER_FOLDER as f64 / per_folder) as usize;
        Shape { wide, parts }
    }

    /// Every folder, each after its parent, with its data length.
    pub fn folders(&self) -> Vec<(String, usize)> {
        let mut out = Vec::new();
        let mut add = |path: String| {
            let data = data_len(&path);
            out.push((path, data));
        };
        let mut prefix = String::new();
        for part in WIDE_PARENT.split('/').skip(1) {
            prefix.push('/');
            prefix.push_str(part);
            add(prefix.clone());
        }
        add("/clickhouse".to_owned());
        add("/clickhouse/tables".to_owned());
        let folders = self.parts.div_ceil(PARTS_PER_FOLDER);
        for folder in 0..folders {
            let (table, replica) = (folder / 2, folder % 2);
            let shard = format!("/clickhouse/tables/{}/01", table_uuid(table));
            if replica == 0 {
                add(shard[..shard.len() - 3].to_owned());
                add(shard.clone());
                add(format!("{shard}/replicas"));
            }
            let replica = format!("{shard}/replicas/{}", replica_name(table, replica));
            add(replica.clone());
            add(format!("{replica}/parts"));
        }
        out
    }

    /// How many leaves there are.
    pub fn leaves(&self) -> usize {
        self.wide + self.parts
    }

    /// Leaf `index` (`0..leaves()`): its path and data length.
    pub fn leaf(&self, index: usize) -> (String, usize) {
        let mut rng = StdRng::seed_from_u64(index as u64 ^ 0x5eed_1eaf);
        let path = if index < self.wide {
            // 24 characters: the index makes it unique, the rest is noise.
            format!(
                "{WIDE_PARENT}/{index:010x}{:014x}",
                rng.random::<u64>() >> 8
            )
        } else {
            let part = index - self.wide;
            let folder = part / PARTS_PER_FOLDER;
            let (table, replica) = (folder / 2, folder % 2);
            // `PARTITION_MINBLOCK_MAXBLOCK_LEVEL`, block numbers of a long-lived table.
            let month = 202_401 + (part % 12) as u32;
            let first = 1_000_000 + part;
            let last = first + rng.random_range(0..100);
            let level: u8 = rng.random_range(0..6);
            format!(
                "/clickhouse/tables/{}/01/replicas/{}/parts/{month}_{first}_{last}_{level}",
                table_uuid(table),
                replica_name(table, replica)
            )
        };
        let data = data_len(&path);
        (path, data)
    }
}

/// A folder's or leaf's data length, derived from its path: none on `1 - DATA_SHARE` of them.
fn data_len(path: &str) -> usize {
    // FNV-1a: a fixed, portable hash (std's is randomly keyed per process).
    let hash = path.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    let mut rng = StdRng::seed_from_u64(hash);
    if rng.random_bool(DATA_SHARE) {
        rng.random_range(1..=MAX_DATA)
    } else {
        0
    }
}

/// Table `table`'s UUID, in the 8-4-4-4-12 form.
fn table_uuid(table: usize) -> String {
    let mut rng = StdRng::seed_from_u64(table as u64 ^ 0x7ab1e);
    let (a, b): (u64, u64) = (rng.random(), rng.random());
    format!(
        "{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
        a >> 32,
        (a >> 16) & 0xffff,
        a & 0xffff,
        b >> 48,
        b & 0xffff_ffff_ffff
    )
}

/// A replica's name: a host name, as replicated tables name them.
fn replica_name(table: usize, replica: usize) -> String {
    format!("chi-prod-shd{:03}-{replica}-0", table % 1000)
}

/// What a tree of this shape measures as: the figures of the table in the module docs.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Stats {
    /// Nodes, folders included (the root not counted).
    pub nodes: usize,
    /// Nodes with data.
    pub with_data: usize,
    /// Data bytes in all.
    pub data_bytes: usize,
    /// Path bytes in all.
    pub path_bytes: usize,
    /// Last-component bytes in all.
    pub name_bytes: usize,
    /// Children of the widest parent.
    pub widest: usize,
}

impl Stats {
    /// Counts one node.
    pub fn add(&mut self, path: &str, data: usize) {
        self.nodes += 1;
        self.with_data += usize::from(data > 0);
        self.data_bytes += data;
        self.path_bytes += path.len();
        self.name_bytes += path.len() - path.rfind('/').map_or(0, |i| i + 1);
    }

    /// Mean path length, bytes.
    pub fn mean_path(&self) -> f64 {
        self.path_bytes as f64 / self.nodes.max(1) as f64
    }

    /// Mean last-component length, bytes.
    pub fn mean_name(&self) -> f64 {
        self.name_bytes as f64 / self.nodes.max(1) as f64
    }

    /// Share of the nodes with data.
    pub fn data_share(&self) -> f64 {
        self.with_data as f64 / self.nodes.max(1) as f64
    }

    /// Mean data per node, all nodes.
    pub fn mean_data(&self) -> f64 {
        self.data_bytes as f64 / self.nodes.max(1) as f64
    }

    /// The widest parent's share of the nodes.
    pub fn wide_share(&self) -> f64 {
        self.widest as f64 / self.nodes.max(1) as f64
    }
}

impl Shape {
    /// The statistics of the whole tree (walks every node: a second per few million).
    pub fn stats(&self) -> Stats {
        let mut stats = Stats {
            widest: self.wide.max(PARTS_PER_FOLDER.min(self.parts)),
            ..Stats::default()
        };
        for (path, data) in self.folders() {
            stats.add(&path, data);
        }
        for index in 0..self.leaves() {
            let (path, data) = self.leaf(index);
            stats.add(&path, data);
        }
        stats
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;

    /// The statistics land near the production snapshot's, every path is unique and valid,
    /// and every node's parent comes before it.
    #[test]
    fn a_hundred_thousand_nodes_have_the_production_shape() {
        let shape = Shape::new(100_000);
        let stats = shape.stats();
        assert!((99_500..=100_500).contains(&stats.nodes), "{}", stats.nodes);
        assert!((110.0..=120.0).contains(&stats.mean_path()), "{stats:?}");
        assert!((22.0..=25.5).contains(&stats.mean_name()), "{stats:?}");
        assert!((0.55..=0.59).contains(&stats.data_share()), "{stats:?}");
        assert!((44.0..=49.0).contains(&stats.mean_data()), "{stats:?}");
        assert!((0.10..=0.11).contains(&stats.wide_share()), "{stats:?}");
        let mut seen: HashSet<String> = HashSet::from(["".to_owned()]);
        let folders = shape.folders();
        let leaves = (0..shape.leaves()).map(|i| shape.leaf(i));
        for (path, _) in folders.into_iter().chain(leaves) {
            assert!(path.starts_with('/') && !path.ends_with('/'), "{path}");
            let parent = &path[..path.rfind('/').unwrap()];
            assert!(seen.contains(parent), "{path} before its parent");
            assert!(seen.insert(path.clone()), "{path} twice");
        }
    }

    #[test]
    fn the_shape_is_the_same_every_time() {
        let (a, b) = (Shape::new(5_000), Shape::new(5_000));
        assert_eq!(a.folders(), b.folders());
        assert_eq!(a.leaf(4_000), b.leaf(4_000));
        assert_eq!(a.stats(), b.stats());
    }
}
