//! NCCL's double binary tree AllReduce, built the way NCCL builds it:
//! two binary trees over the *nodes* and a chain of GPUs inside each node
//! (Sanders, Speck & Träff, "Two-tree algorithms for full bandwidth
//! broadcast, reduction and scan", Parallel Computing 2009; NVIDIA/nccl
//! 2.30.7 `src/graph/trees.cc` `ncclGetBtree` / `ncclGetDtree`,
//! `src/graph/connect.cc` `ncclTopoPreset` / `connectTrees`).
//!
//! - **Trees over nodes** (`ncclGetBtree(nNodes, node)`): node 0 is the
//!   root with one child; node `v > 0` with lowest set bit `b` has parent
//!   `(v XOR b) | 2b`, or `v XOR b` if that is `>= nNodes`; it is its
//!   parent's child 0 if `v < parent`, else child 1. Tree 1 is tree 0
//!   mirrored (`v -> nNodes-1-v`) for an even node count, shifted by one
//!   (`v -> v+1 mod nNodes`) for an odd one.
//! - **Inside a node** the GPUs form a chain `g0 -> g1 -> … -> g(L-1)` (rank
//!   order: NCCL's tree graph search on NVSwitch machines keeps GPU order):
//!   `g(i+1)`'s parent is `g(i)`. NCCL's default pattern
//!   (`NCCL_TOPO_PATTERN_BALANCED_TREE`) links `g0` to the parent node,
//!   child node 0 to `g1` and child node 1 to `g0` (`g0` alone when a node
//!   has one GPU). A child node's `g0` has as parent its parent node's `g1`
//!   (child 0) or `g0` (child 1).
//! - **Data**: NCCL runs tree 0 on channels `0..c` and tree 1 on channels
//!   `c..2c`, each on its channels' share of the buffer: with every channel
//!   in use, half each. Here chunks `0..n` (the first half of the buffer,
//!   two chunks per block) go up and down tree 0, chunks `n..2n` tree 1.
//!   On one node both trees are the same chain.
//! - **Steps**: a reduce up each tree (a rank at depth `d` sends its partial
//!   sum to its parent at step `D - d`, `D` the largest depth over both
//!   trees), then a broadcast down (a rank at depth `d` receives at step
//!   `D + d - 1`). NCCL overlaps the two and pipelines them in chunks; the
//!   cost model's slices (`slices=auto`: NCCL's 512 KiB tree chunks are in
//!   the same range as its 1 MiB ring slices) give that overlap.
//!
//! Cost (uncontended, one α and β): `2D·α + Σ_s m_s·S/2·β + Σ_{reduce s}
//! k_s·S/2·γ` unsliced, `m_s` the most messages between one pair of ranks
//! in step `s` and `k_s` the most partial sums one rank reduces ([`shape`]).
//! On one node of `L` GPUs `D = L - 1` and every step moves both halves
//! over one link: `2(L-1)(α + S·β)`, whose latency part is NCCL's own tree
//! latency `2·((nRanks/nNodes − 1)·intraLat + log2(nNodes)·interLat)`
//! (`tuning.cc`) with one node. Across nodes NCCL's form counts
//! `log2(nNodes)` network hops; the trees here have that depth plus the
//! intra-node hops to `g1` that the balanced pattern adds.

use super::step;
use super::CostTerms;
use crate::engine::collective::Primitive;
use crate::engine::schedule::{Step, Transfer};

/// `(up, child type)` of node `v` in NCCL's binary tree over `n` nodes
/// (`ncclGetBtree`): `None` for the root 0; child type 0 if `v` is its
/// parent's `down[0]`, 1 if `down[1]`.
pub fn btree_up(n: usize, v: usize) -> Option<(usize, usize)> {
    if v == 0 || n < 2 {
        return None;
    }
    let bit = v & v.wrapping_neg();
    let mut up = (v ^ bit) | (bit << 1);
    if up >= n {
        up = v ^ bit;
    }
    Some((up, usize::from(v >= up)))
}

/// `(up, child type)` of node `v` in tree `t` (0 or 1) of NCCL's double
/// binary tree over `n` nodes (`ncclGetDtree`: tree 1 mirrored for even
/// `n`, shifted by one for odd `n`).
pub fn dtree_up(n: usize, t: usize, v: usize) -> Option<(usize, usize)> {
    if t == 0 {
        btree_up(n, v)
    } else if n % 2 == 1 {
        btree_up(n, (v + n - 1) % n).map(|(u, c)| ((u + 1) % n, c))
    } else {
        btree_up(n, n - 1 - v).map(|(u, c)| (n - 1 - u, c))
    }
}

/// The parent rank of every rank in tree `t` for nodes of `nodes[i]`
/// consecutive ranks (module doc: chain inside, balanced pattern between).
pub fn parents(nodes: &[usize], t: usize) -> Vec<Option<usize>> {
    let mut base = Vec::with_capacity(nodes.len());
    let mut at = 0;
    for &k in nodes {
        base.push(at);
        at += k;
    }
    let mut out = vec![None; at];
    for (v, &size) in nodes.iter().enumerate() {
        for i in 1..size {
            out[base[v] + i] = Some(base[v] + i - 1);
        }
        if let Some((u, child)) = dtree_up(nodes.len(), t, v) {
            // Child 0 hangs off the parent node's g1 (if it has one), child 1 off g0.
            let local = if child == 0 && nodes[u] > 1 { 1 } else { 0 };
            out[base[v]] = Some(base[u] + local);
        }
    }
    out
}

fn depth(parent: &[Option<usize>], mut r: usize) -> usize {
    let mut d = 0;
    while let Some(p) = parent[r] {
        d += 1;
        r = p;
    }
    d
}

/// The steps' transfers as (tree, child, parent, reduce?) per step.
fn plan(nodes: &[usize]) -> Vec<Vec<(usize, usize, usize, bool)>> {
    let trees = [parents(nodes, 0), parents(nodes, 1)];
    let n = trees[0].len();
    let depths: Vec<[usize; 2]> = (0..n)
        .map(|r| [depth(&trees[0], r), depth(&trees[1], r)])
        .collect();
    let dmax = depths
        .iter()
        .flat_map(|d| d.iter())
        .copied()
        .max()
        .unwrap_or(0);
    let mut steps = vec![Vec::new(); 2 * dmax];
    for (t, parent) in trees.iter().enumerate() {
        for r in 0..n {
            if let Some(p) = parent[r] {
                let d = depths[r][t];
                steps[dmax - d].push((t, r, p, true));
                steps[dmax + d - 1].push((t, r, p, false));
            }
        }
    }
    // Reduce order: by receiver, then tree, then sender.
    for s in steps.iter_mut() {
        s.sort_by_key(|&(t, c, p, _)| (p, t, c));
    }
    steps
}

/// `(D, [(m_s, k_s)])` for nodes `nodes`: the larger tree depth, and per
/// step the most messages between one pair of ranks and the most reduces
/// at one rank (0 in broadcast steps). See the module's cost formula.
pub fn shape(nodes: &[usize]) -> (usize, Vec<(usize, usize)>) {
    let steps = plan(nodes);
    let per = steps
        .iter()
        .map(|s| {
            let mut pairs = std::collections::HashMap::new();
            let mut reduces = std::collections::HashMap::new();
            for &(_, c, p, red) in s {
                let (a, b) = if red { (c, p) } else { (p, c) };
                *pairs.entry((a, b)).or_insert(0usize) += 1;
                if red {
                    *reduces.entry(p).or_insert(0usize) += 1;
                }
            }
            (
                pairs.values().copied().max().unwrap_or(0),
                reduces.values().copied().max().unwrap_or(0),
            )
        })
        .collect();
    (steps.len() / 2, per)
}

/// The double-binary-tree steps for AllReduce on `n >= 2` ranks laid out on
/// nodes of `nodes[i]` ranks (summing to `n`), and the chunk count (`2n`:
/// two chunks per block, one half per tree).
pub fn steps(primitive: Primitive, n: usize, nodes: &[usize]) -> (usize, Vec<Step>) {
    let _ = primitive;
    let steps = plan(nodes)
        .into_iter()
        .map(|s| {
            let name = if s.first().is_some_and(|x| x.3) {
                "Reduce up (both trees)"
            } else {
                "Broadcast down (both trees)"
            };
            step(
                name,
                s.into_iter()
                    .map(|(t, c, p, red)| {
                        if red {
                            Transfer::reduce(c, p, t * n, n)
                        } else {
                            Transfer::copy(p, c, t * n, n)
                        }
                    })
                    .collect(),
            )
        })
        .collect();
    (2 * n, steps)
}

/// Uncontended closed form on one node (the chain NCCL builds inside a
/// node), µs: AllReduce `2D·α + Σ_s m_s·S/2·β + Σ_s k_s·S/2·γ` (tree depth
/// `D`, per-step pair multiplicity `m_s` and fan-in `k_s`, [`shape`]).
pub fn closed_form(_p: Primitive, t: &CostTerms) -> Option<f64> {
    let (_, per) = shape(&[t.n]);
    Some(
        per.iter()
            .map(|&(m, k)| {
                t.alpha_us + m as f64 * t.s / 2.0 * t.beta + k as f64 * t.s / 2.0 * t.gamma
            })
            .sum(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ncclgetdtree_tables() {
        // The parent tables of NCCL 2.30.7's trees.cc, compiled and run
        // (research notes): 4 nodes: T0 0→2→(1,3); T1 3→1→(2,0).
        let up = |n, t, v| dtree_up(n, t, v).map(|x| x.0);
        assert_eq!(
            (0..4).map(|v| up(4, 0, v)).collect::<Vec<_>>(),
            [None, Some(2), Some(0), Some(2)]
        );
        assert_eq!(
            (0..4).map(|v| up(4, 1, v)).collect::<Vec<_>>(),
            [Some(1), Some(3), Some(1), None]
        );
        // 3 nodes: T0 chain 0→2→1; T1 chain 1→0→2.
        assert_eq!(
            (0..3).map(|v| up(3, 0, v)).collect::<Vec<_>>(),
            [None, Some(2), Some(0)]
        );
        assert_eq!(
            (0..3).map(|v| up(3, 1, v)).collect::<Vec<_>>(),
            [Some(1), None, Some(0)]
        );
        // 8 nodes: T0 0→4→(2,6), 2→(1,3), 6→(5,7).
        assert_eq!(
            (0..8).map(|v| up(8, 0, v)).collect::<Vec<_>>(),
            [
                None,
                Some(2),
                Some(4),
                Some(2),
                Some(0),
                Some(6),
                Some(4),
                Some(6)
            ]
        );
        // Child types: 2 is 4's down[0] (2 < 4), 6 is 4's down[1].
        assert_eq!(dtree_up(8, 0, 2).unwrap().1, 0);
        assert_eq!(dtree_up(8, 0, 6).unwrap().1, 1);
    }

    #[test]
    fn one_node_is_a_chain_of_fourteen_hops() {
        let (d, per) = shape(&[8]);
        assert_eq!(d, 7);
        assert_eq!(per.len(), 14);
        // Both halves cross the same link in every step.
        assert!(per.iter().all(|&(m, _)| m == 2));
        let p = parents(&[8], 0);
        assert_eq!(
            p,
            [
                None,
                Some(0),
                Some(1),
                Some(2),
                Some(3),
                Some(4),
                Some(5),
                Some(6)
            ]
        );
        assert_eq!(parents(&[8], 1), p);
    }

    #[test]
    fn two_nodes_join_chains_by_the_balanced_pattern() {
        // 2 nodes of 4: tree 0 root node 0, node 1 is child type 1 -> hangs off g0.
        let p0 = parents(&[4, 4], 0);
        assert_eq!(p0[4], Some(0));
        // Tree 1 mirrored: root node 1, node 0 is its child (type 1) -> off node 1's g0.
        let p1 = parents(&[4, 4], 1);
        assert_eq!(p1[0], Some(4));
        assert_eq!(p1[4], None);
    }
}
