//! NCCL's double binary tree AllReduce (Sanders, Speck & Träff, "Two-tree
//! algorithms for full bandwidth broadcast, reduction and scan", Parallel
//! Computing 2009; NCCL `src/graph/trees.cc`, `ncclGetBtree` /
//! `ncclGetDtree`; NVIDIA blog "Massively Scale Your Deep Learning Training
//! with NCCL 2.4", 2019).
//!
//! Tree 1 is NCCL's binary tree over ranks `0..n`: rank `r > 0` with lowest
//! set bit `b` has parent `(r XOR b) | 2b`, or `r XOR b` if that is `>= n`;
//! rank 0 is the root. Tree 2 is tree 1 mirrored (`r -> n-1-r`) for even
//! `n`, shifted by one (`r -> r+1 mod n`) for odd `n`, so that most
//! interior nodes of one tree are leaves of the other. Each tree carries
//! half of the buffer (chunks `0..n` and `n..2n`, two chunks per block):
//! a reduce up the tree (a node at depth `d` sends its partial sum to its
//! parent at step `D - d`, `D` the larger depth), then a broadcast down (a
//! node at depth `d` receives at step `D + d - 1`). Both trees run in the
//! same steps. NCCL pipelines the halves in small slices; this schedule does
//! not (no slicing), which is the textbook latency form.
//!
//! Cost (uncontended, `B` bytes): `2D·α + Σ_s m_s·B/2·β + Σ_{reduce s}
//! k_s·B/2·γ`, where in step `s`, `m_s` is the most messages between one
//! pair of ranks (1 unless a rank's parents in both trees coincide at the
//! same level) and `k_s` the most partial sums one rank reduces (≤ 4: two
//! children in each tree) — [`shape`] computes `D`, `m_s`, `k_s`.

use super::step;
use crate::engine::collective::Primitive;
use crate::engine::schedule::{Step, Transfer};

/// Parent of `r` in NCCL's binary tree over `n` ranks (`None` for the root 0).
fn btree_parent(n: usize, r: usize) -> Option<usize> {
    if r == 0 {
        return None;
    }
    let bit = r & r.wrapping_neg();
    let up = (r ^ bit) | (bit << 1);
    Some(if up >= n { r ^ bit } else { up })
}

/// Parent of `r` in tree `t` (0 or 1).
fn parent(n: usize, t: usize, r: usize) -> Option<usize> {
    if t == 0 {
        btree_parent(n, r)
    } else if n % 2 == 1 {
        btree_parent(n, (r + n - 1) % n).map(|u| (u + 1) % n)
    } else {
        btree_parent(n, n - 1 - r).map(|u| n - 1 - u)
    }
}

fn depth(n: usize, t: usize, mut r: usize) -> usize {
    let mut d = 0;
    while let Some(p) = parent(n, t, r) {
        d += 1;
        r = p;
    }
    d
}

/// The steps' transfers as (tree, child, parent, reduce?) per step.
fn plan(n: usize) -> Vec<Vec<(usize, usize, usize, bool)>> {
    let depths: Vec<[usize; 2]> = (0..n).map(|r| [depth(n, 0, r), depth(n, 1, r)]).collect();
    let dmax = depths
        .iter()
        .flat_map(|d| d.iter())
        .copied()
        .max()
        .unwrap_or(0);
    let mut steps = vec![Vec::new(); 2 * dmax];
    for t in 0..2 {
        for r in 0..n {
            if let Some(p) = parent(n, t, r) {
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

/// `(D, [(m_s, k_s)])`: the larger tree depth, and per step the most
/// messages between one pair of ranks and the most reduces at one rank (0
/// in broadcast steps). See the module's cost formula.
pub fn shape(n: usize) -> (usize, Vec<(usize, usize)>) {
    let steps = plan(n);
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

/// The double-binary-tree steps for AllReduce on `n >= 2` ranks and the
/// chunk count (`2n`: two chunks per block, one half per tree).
pub fn steps(primitive: Primitive, n: usize) -> (usize, Vec<Step>) {
    let _ = primitive;
    let steps = plan(n)
        .into_iter()
        .map(|s| {
            let name = if s.first().is_some_and(|x| x.3) {
                "Reduce (both trees)"
            } else {
                "Broadcast (both trees)"
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
