//! Bruck's algorithm (Bruck, Ho, Kipnis, Upfal & Weathersby, "Efficient
//! algorithms for all-to-all communications in multiport message-passing
//! systems", IEEE TPDS 1997; MPICH `allgather_intra_brucks.c`), which HCCL
//! runs as NB, "nonuniform Bruck" (hccl
//! `docs/en/user_guide/coll_algo_intro/NB.md`): `ceil(log2 n)` steps for
//! any rank count, no fold needed.
//!
//! - AllGather: at step `k` (distance `d = 2^k`, `cnt = min(d, n - d)`) rank
//!   `r` sends the blocks `r, …, r + cnt - 1` (mod n) it holds to `r - d`.
//!   After the step it holds `r, …, r + 2d - 1`.
//! - ReduceScatter: the dual, in reverse step order: at distance `d` rank
//!   `q` sends its partial sums of blocks `q + d, …, q + d + cnt - 1` to
//!   `q + d`, which reduces them.
//! - AllReduce: ReduceScatter then AllGather. Barrier: the AllGather of
//!   tokens (the dissemination barrier, Hensgen, Finkel & Manber 1988).
//!
//! - AlltoAll (Bruck et al. 1997, section 3; MPICH
//!   `src/mpi/coll/alltoall/alltoall_intra_brucks.c`): call *position* `i`
//!   of rank `h` its send block `h + i` (mod n), which starts with `h`'s
//!   piece for rank `h + i`. In step `k` (`d = 2^k`) every rank sends to
//!   `h + d` every position `i` whose bit `k` is set; the piece there has
//!   travelled the lower bits of `i` so far. If bit `k` is the highest bit
//!   of `i` the piece has arrived: the receiver stores it in its receive
//!   block `n + origin` (`origin = h + d - i`); otherwise it stores it at its
//!   own position `i`, which it sends on in this same step (the send reads
//!   the block as it was at the start of the step). MPICH rotates into a
//!   temporary buffer instead; here the send area itself is the scratch
//!   (the collective leaves it unspecified after the call, except rank
//!   `r`'s own piece in block `r`, which never moves), so no extra buffer is
//!   needed. The positions of one step are not contiguous: one transfer per
//!   run of consecutive blocks, all to the same peer in the same step.
//!
//! A range that wraps past block `n - 1` is sent as two messages to the
//! same peer in the same step (they share the link; the data term is the
//! same as for one message).
//!
//! Cost (uncontended, `L = ceil(log2 n)`): AllGather `Lα + (n-1)/n·Sβ`;
//! ReduceScatter `Lα + (n-1)/n·S(β + γ)`; AllReduce twice the data term
//! plus `(n-1)/n·Sγ`; Barrier `Lα`; AlltoAll `Σ_{k<L} (α + c_k·S/n·β)`
//! with `c_k = #{1 <= i < n : bit k of i set}`, which is `Lα + L·S/2·β` for
//! `n = 2^L` (Thakur, Rabenseifner & Gropp 2005: `log p·α + (n/2)·log p·β`
//! with `n` = bytes each rank sends). The several transfers of one step
//! between the same two ranks start together and pay their latency in
//! parallel (cost model), so a step costs one `α`, as the aggregated
//! message of the textbook does.

use super::{span, step};
use super::{CostTerms, Lazy, LazyIter};
use crate::engine::collective::Primitive;
use crate::engine::schedule::{Step, Transfer, TransferKind};

fn distances(n: usize) -> Vec<usize> {
    let mut v = Vec::new();
    let mut d = 1;
    while d < n {
        v.push(d);
        d *= 2;
    }
    v
}

fn all_gather(n: usize, phase: &str) -> Vec<Step> {
    distances(n)
        .into_iter()
        .map(|d| {
            let cnt = d.min(n - d);
            step(
                phase,
                (0..n)
                    .flat_map(|r| span(r, (r + n - d) % n, r, cnt, n, 1, TransferKind::Copy))
                    .collect(),
            )
        })
        .collect()
}

fn reduce_scatter(n: usize) -> Vec<Step> {
    distances(n)
        .into_iter()
        .rev()
        .map(|d| {
            let cnt = d.min(n - d);
            step(
                "ReduceScatter",
                (0..n)
                    .flat_map(|q| span(q, (q + d) % n, q + d, cnt, n, 1, TransferKind::Reduce))
                    .collect(),
            )
        })
        .collect()
}

/// `c_k`: the positions `1 <= i < n` with bit `k` set, the blocks every
/// rank sends in AlltoAll step `k`.
pub fn alltoall_blocks_at(n: usize, k: usize) -> usize {
    (1..n).filter(|i| i >> k & 1 == 1).count()
}

/// AlltoAll step `k` (`d = 2^k`): every rank `h` sends to `h + d` the
/// positions with bit `k` set, one transfer per run of positions whose
/// source and destination blocks both continue.
fn all_to_all_step(n: usize, k: usize) -> Step {
    let d = 1 << k;
    let mut t: Vec<Transfer> = Vec::new();
    for h in 0..n {
        let to = (h + d) % n;
        for i in (1..n).filter(|i| i >> k & 1 == 1) {
            let from = (h + i) % n;
            let at = if i < 2 * d {
                n + (to + n - i) % n
            } else {
                (to + i) % n
            };
            // Extend the previous transfer if both ranges continue.
            match t.last_mut() {
                Some(p)
                    if p.src == h && p.first + p.count == from && p.dst_first + p.count == at =>
                {
                    p.count += 1
                }
                _ => t.push(Transfer::copy(h, to, from, 1).to_chunk(at)),
            }
        }
    }
    step("AlltoAll", t)
}

/// The transfers of [`all_to_all_step`] `k` on `n` ranks, counted without
/// making it. Positions with bit `k` set come in blocks `[d + 2dm, d +
/// 2dm + d)` (`d = 2^k`, cut at `n`). In the first block (`m = 0`) a
/// piece arrives: its destination block `n + (h + d - i) mod n` falls as
/// `i` rises, so no two positions merge (`n >= 3`): `n` transfers per
/// position over the `n` senders. In a later block source `h + i` and
/// destination `h + d + i` (mod n) both rise by one, so a block is one
/// run but where either wraps past block `n - 1`: for each position but
/// the block's first, exactly one sender wraps its source there and
/// another its destination (`d < n`), two more transfers in all. Checked
/// against the made step for every `n` up to 130, 1000 and 1024 (a test).
pub fn alltoall_width(n: usize, k: usize) -> usize {
    let d = 1usize << k;
    if n < 2 || d >= n {
        return 0;
    }
    let first = (2 * d).min(n) - d;
    let mut width = n * first;
    let mut start = 3 * d;
    while start < n {
        let len = (start + d).min(n) - start;
        width += n + 2 * (len - 1);
        start += 2 * d;
    }
    width
}

fn all_to_all(n: usize) -> Vec<Step> {
    (0..distances(n).len())
        .map(|k| all_to_all_step(n, k))
        .collect()
}

/// [`steps`] as [`Lazy`] steps: each AlltoAll step a [`Lazy::Shift`]
/// (rank `h` sends its [`alltoall_blocks_at`] blocks to `h + 2^k` in
/// [`alltoall_width`] transfers), which the cost model's bound need not
/// make (an AlltoAll on 1024 ranks is 2 091 032 transfers over its 10
/// steps); the other primitives' steps made.
pub fn stream_lazy(primitive: Primitive, n: usize) -> (usize, LazyIter) {
    if primitive == Primitive::AlltoAll {
        let l = distances(n).len();
        let steps = (0..l).map(move |k| Lazy::Shift {
            ranks: n,
            shift: 1 << k,
            count: alltoall_blocks_at(n, k),
            width: alltoall_width(n, k),
            make: Box::new(move || all_to_all_step(n, k)),
        });
        return (2 * n, Box::new(steps));
    }
    let (chunks, v) = steps(primitive, n);
    (chunks, Box::new(v.into_iter().map(Lazy::Made)))
}

/// The Bruck steps for `primitive` on `n >= 2` ranks and the chunk count
/// (one chunk per block). Only AllGather, ReduceScatter, AllReduce,
/// Barrier, AlltoAll.
pub fn steps(primitive: Primitive, n: usize) -> (usize, Vec<Step>) {
    if primitive == Primitive::AlltoAll {
        return (2 * n, all_to_all(n));
    }
    let steps = match primitive {
        Primitive::AllGather => all_gather(n, "AllGather"),
        Primitive::Barrier => all_gather(n, "Barrier"),
        Primitive::ReduceScatter => reduce_scatter(n),
        _ => {
            let mut s = reduce_scatter(n);
            s.extend(all_gather(n, "AllGather"));
            s
        }
    };
    (n, steps)
}

/// Uncontended closed form (HCCL `NB.md`), µs, `L = ceil(log2 n)`:
/// AllGather `Lα + (n-1)/n·Sβ`, ReduceScatter `Lα + (n-1)/n·S(β + γ)`,
/// AllReduce `2Lα + 2(n-1)/n·Sβ + (n-1)/n·Sγ`, Barrier `Lα`; AlltoAll
/// (Bruck) `Σ_{k<L} (α + c_k·S/n·β)`, `c_k = #{1 <= i < n : bit k of i set}`
/// ([`alltoall_blocks_at`]; `Lα + L·S/2·β` for `n = 2^L`, the textbook
/// form).
pub fn closed_form(p: Primitive, t: &CostTerms) -> Option<f64> {
    use Primitive::*;
    let (a, s, beta, nf, n) = (t.alpha_us, t.s, t.beta, t.nf(), t.n);
    let l = t.log2_ceil();
    Some(match p {
        AllGather => l * a + t.frac() * s * beta,
        ReduceScatter => l * a + t.frac() * s * beta + t.red(),
        Barrier => l * a,
        AlltoAll => (0..l as usize)
            .map(|k| a + alltoall_blocks_at(n, k) as f64 * s / nf * beta)
            .sum(),
        _ => 2.0 * l * a + 2.0 * t.frac() * s * beta + t.red(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alltoall_width_counts_the_made_step() {
        for n in (2..=130).chain([1000, 1024]) {
            for k in 0..distances(n).len() {
                assert_eq!(
                    alltoall_width(n, k),
                    all_to_all_step(n, k).transfers.len(),
                    "n = {n}, step {k}"
                );
            }
        }
        // 1024 ranks: 10 steps, 2 091 032 transfers in all.
        let all: usize = (0..10).map(|k| alltoall_width(1024, k)).sum();
        assert_eq!(all, 2_091_032);
    }
}
