//! Checks rank outputs, as they arrive, against two references:
//!
//! 1. **bit for bit** against the reference executor: the expected bytes of
//!    each output chunk are computed by evaluating the chunk's expression tree
//!    ([`super::verify::Verified::final_exprs`], i.e. the schedule's exact
//!    reduction order) with the kernels of [`super::dtype`] on inputs
//!    regenerated from the seed. This equals [`super::execute::reference_run`]
//!    (a native test asserts it) but needs memory for one output, not `n`
//!    buffers.
//! 2. **against the exact result** (f64; wrapping for integers), within a
//!    tolerance per dtype: sum `1.01·(k-1)·u·Σ|x_i|`, prod
//!    `1.01·(k-1)·u·|exact| + k·(smallest subnormal)`, max/min and integers
//!    exact (Higham, *Accuracy and Stability of Numerical Algorithms*, 2002,
//!    §4.2 for recursive summation; `u` the unit roundoff, `k` the number of
//!    contributions).
//!
//! Expected chunks are cached by (expression, chunk), so ranks holding the same
//! value (every rank after an AllReduce) cost one evaluation.

use super::collective::Primitive;
use super::dtype::{post_op, pre_op, reduce_into, DType, ReduceOp};
use super::input;
use super::schedule::Schedule;
use super::verify::{Expr, ExprId, RankSet, Verified};
use std::collections::HashMap;

/// The first element of a rank's output that differs from the reference.
#[derive(Clone, Debug, PartialEq)]
pub struct Mismatch {
    /// Element index in the rank's buffer.
    pub element: usize,
    /// The value the rank holds.
    pub got: f64,
    /// The reference executor's value.
    pub want: f64,
}

/// The check of one rank's output.
#[derive(Clone, Debug, PartialEq)]
pub struct RankReport {
    /// The rank.
    pub rank: usize,
    /// Output elements that differ from the reference executor's bits.
    pub mismatched_elements: usize,
    /// The first of them.
    pub first_mismatch: Option<Mismatch>,
    /// Max |output − exact| over the output elements.
    pub max_abs_error: f64,
    /// Output elements whose error exceeds the dtype's tolerance.
    pub beyond_tolerance: usize,
    /// Output elements checked.
    pub checked_elements: usize,
}

impl RankReport {
    /// The report of `rank` before any element is checked (all counts 0).
    pub fn empty(rank: usize) -> RankReport {
        RankReport {
            rank,
            mismatched_elements: 0,
            first_mismatch: None,
            max_abs_error: 0.0,
            beyond_tolerance: 0,
            checked_elements: 0,
        }
    }

    /// Bit-exact and within tolerance.
    pub fn ok(&self) -> bool {
        self.mismatched_elements == 0 && self.beyond_tolerance == 0
    }
}

struct Reference {
    bytes: Vec<u8>,
    max_abs_error: f64,
    beyond_tolerance: usize,
}

/// The largest |output − exact| allowed for one element that reduces `k`
/// contributions (module doc): sum `1.01·(k-1)·u·Σ|x_i|`, prod
/// `1.01·(k-1)·u·|exact| + k·(smallest subnormal)`, max/min and integers 0.
fn tolerance(dtype: DType, op: ReduceOp, k: f64, u: f64, exact: f64, abs_sum: f64) -> f64 {
    if !dtype.is_float() {
        return 0.0;
    }
    match op {
        ReduceOp::Sum => 1.01 * (k - 1.0) * u * abs_sum,
        // Each term x·s carries the scalar's and the product's rounding (2u
        // relative), then (k-1) additions: 1.01·(k+1)·u·Σ|x|/k.
        ReduceOp::Avg => 1.01 * (k + 1.0) * u * abs_sum / k.max(1.0),
        ReduceOp::Prod => 1.01 * (k - 1.0) * u * exact.abs() + k * dtype.min_subnormal(),
        ReduceOp::Max | ReduceOp::Min => 0.0,
    }
}

/// The exact values and `Σ|x_i|` of one chunk reduced over `ranks` (for
/// `avg`, the sum divided by the rank count, [`ReduceOp::exact_finish`]).
fn exact_of(
    dtype: DType,
    op: ReduceOp,
    seed: u64,
    ranks: &[usize],
    r: std::ops::Range<usize>,
) -> (Vec<f64>, Vec<f64>) {
    let (mut exact, abs_sum) = fold_exact(dtype, op, seed, ranks, r);
    for x in exact.iter_mut() {
        *x = op.exact_finish(dtype, *x, ranks.len());
    }
    (exact, abs_sum)
}

/// [`exact_of`] of input pieces already made ([`input::fill`] bytes of
/// every contributor, in rank order): the same values, read back exactly
/// ([`DType::decode_f64`]) instead of hashed again.
fn exact_of_inputs(
    dtype: DType,
    op: ReduceOp,
    inputs: &[(usize, Vec<u8>)],
) -> (Vec<f64>, Vec<f64>) {
    let read = |b: &[u8]| dtype.decode_f64(b);
    let Some(((_, first), rest)) = inputs.split_first() else {
        return (Vec::new(), Vec::new());
    };
    let mut exact = read(first);
    let mut abs_sum: Vec<f64> = exact.iter().map(|x| x.abs()).collect();
    for (_, b) in rest {
        let xs = read(b);
        op.exact_into(dtype, &mut exact, &xs);
        for (a, x) in abs_sum.iter_mut().zip(&xs) {
            *a += x.abs();
        }
    }
    for x in exact.iter_mut() {
        *x = op.exact_finish(dtype, *x, inputs.len());
    }
    (exact, abs_sum)
}

fn fold_exact(
    dtype: DType,
    op: ReduceOp,
    seed: u64,
    ranks: &[usize],
    r: std::ops::Range<usize>,
) -> (Vec<f64>, Vec<f64>) {
    let mut exact = input::values(dtype, seed, ranks[0], r.clone());
    let mut abs_sum: Vec<f64> = exact.iter().map(|x| x.abs()).collect();
    for &q in &ranks[1..] {
        let xs = input::values(dtype, seed, q, r.clone());
        op.exact_into(dtype, &mut exact, &xs);
        for (a, x) in abs_sum.iter_mut().zip(&xs) {
            *a += x.abs();
        }
    }
    (exact, abs_sum)
}

/// Checks rank outputs of one run (see module docs).
pub struct Checker<'a> {
    schedule: &'a Schedule,
    verified: &'a Verified,
    dtype: DType,
    op: ReduceOp,
    seed: u64,
    elems: usize,
    /// Keyed by (expression, origin chunk, first element of the piece
    /// relative to the chunk).
    cache: HashMap<(ExprId, usize, usize), Reference>,
}

/// Most elements of one piece of a check: the unit [`Checker::advance`]
/// checks (a few ms natively; the page yields between pieces, so checking
/// a large output never blocks it for long). Pieces start at multiples of
/// the piece length ([`piece_elems`]) from their chunk's start, so ranks
/// holding the same expression share them.
pub const CHECK_PIECE_ELEMS: usize = 1 << 16;

/// Input elements one piece may read to make its expected values: a full
/// [`CHECK_PIECE_ELEMS`] piece of an 8-rank reduction. The expected value
/// of a reduced element reads one input per contributing rank, so a piece
/// of a 64-rank AllReduce at full length cost 8 times as much (a trace of
/// the 64-rank page showed checking tasks of 400 ms).
pub const CHECK_PIECE_WORK: usize = 8 * CHECK_PIECE_ELEMS;

/// Whether `a` and `b` hold the same bytes, compared 64 bytes at a time.
///
/// Slice `==` calls `memcmp`, which on wasm32 is compiler-builtins' loop of
/// one byte a step (the profile of the 8 × 64 MiB page's check showed it as
/// the last ~0.35 s of main-thread work, comparing 512 MiB against the
/// cached reference). Here eight 64-bit words are XOR-ed and OR-ed per
/// block, one branch a block. Equal to `a == b` (a test compares them).
pub fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let (xs, ys) = (a.chunks_exact(64), b.chunks_exact(64));
    let tails_equal = xs.remainder() == ys.remainder();
    let word = |c: &[u8], k: usize| {
        let mut w = [0u8; 8];
        w.copy_from_slice(&c[8 * k..8 * k + 8]);
        u64::from_le_bytes(w)
    };
    tails_equal
        && xs
            .zip(ys)
            .all(|(x, y)| (0..8).fold(0u64, |d, k| d | (word(x, k) ^ word(y, k))) == 0)
}

/// Elements of one piece of a check on `ranks` ranks:
/// [`CHECK_PIECE_WORK`] / `ranks`, within 1024 ..= [`CHECK_PIECE_ELEMS`].
pub fn piece_elems(ranks: usize) -> usize {
    (CHECK_PIECE_WORK / ranks.max(1)).clamp(1024, CHECK_PIECE_ELEMS)
}

/// A rank's output as [`Checker::advance`] reads it, a piece at a time:
/// bytes in memory, or (the page) a buffer a worker transferred, left
/// outside wasm memory and copied in a piece at a time
/// (`runtime::browser::codec::DoneBytes`), so a 64 × 16 MiB run never
/// holds its outputs in the page's heap.
pub trait OutputBytes {
    /// Its length, bytes.
    fn len(&self) -> usize;
    /// Is it empty?
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Bytes `range` (inside `0..len()`): borrowed, or copied into
    /// `scratch` (which keeps its capacity for the next piece).
    fn piece<'s>(&'s self, range: std::ops::Range<usize>, scratch: &'s mut Vec<u8>) -> &'s [u8];
}

impl OutputBytes for [u8] {
    fn len(&self) -> usize {
        <[u8]>::len(self)
    }
    fn piece<'s>(&'s self, range: std::ops::Range<usize>, _: &'s mut Vec<u8>) -> &'s [u8] {
        &self[range]
    }
}

impl OutputBytes for Vec<u8> {
    fn len(&self) -> usize {
        self.as_slice().len()
    }
    fn piece<'s>(&'s self, range: std::ops::Range<usize>, _: &'s mut Vec<u8>) -> &'s [u8] {
        &self[range]
    }
}

/// One rank's check in progress ([`Checker::begin`], [`Checker::advance`]).
#[derive(Clone, Debug)]
pub struct RankCheck {
    /// What is known so far (complete once `advance` returned `true`).
    pub report: RankReport,
    wrong_len: bool,
    /// The output chunks still to check, in order, and the next piece's
    /// offset in the first of them.
    chunks: Vec<usize>,
    next_chunk: usize,
    next_offset: usize,
    /// A piece copied out of an output that is not in memory.
    scratch: Vec<u8>,
}

impl<'a> Checker<'a> {
    /// A checker for `schedule` (already verified) run on buffers of `elems`
    /// elements of `dtype` with inputs from `seed`. `avg` is checked as the
    /// executor computes it ([`super::execute::pre_op_rank`],
    /// [`super::execute::post_op_rank`]); on a primitive that does not
    /// reduce, the op is irrelevant.
    pub fn new(
        schedule: &'a Schedule,
        verified: &'a Verified,
        dtype: DType,
        op: ReduceOp,
        seed: u64,
        elems: usize,
    ) -> Self {
        let op = if schedule.primitive.reduces() {
            op
        } else {
            op.combine()
        };
        Checker {
            schedule,
            verified,
            dtype,
            op,
            seed,
            elems,
            cache: HashMap::new(),
        }
    }

    /// The input chunk every leaf of `e` reads (the verifier only reduces
    /// values of the same origin).
    fn origin(&self, e: ExprId) -> usize {
        match self.verified.exprs[e as usize] {
            Expr::Input { chunk, .. } => chunk,
            Expr::Reduce(a, _) => self.origin(a),
        }
    }

    /// The bytes of `e` on elements `part` (relative to its origin chunk
    /// `origin`). `inputs` holds contributors' input pieces of the origin
    /// chunk (rank, bytes), made once for both this and the exact values;
    /// a leaf found there is not made again.
    fn eval(
        &self,
        e: ExprId,
        part: &std::ops::Range<usize>,
        origin: usize,
        inputs: &[(usize, Vec<u8>)],
    ) -> Vec<u8> {
        let es = self.dtype.size_bytes();
        match self.verified.exprs[e as usize] {
            Expr::Input { rank, chunk } => {
                let made = inputs.iter().find(|(q, _)| *q == rank && chunk == origin);
                let mut out = match made {
                    Some((_, b)) => b.clone(),
                    None => {
                        let c = self.schedule.chunk_elems(self.elems, chunk);
                        let r = c.start + part.start..c.start + part.end;
                        let mut out = vec![0u8; r.len() * es];
                        input::fill(self.dtype, self.seed, rank, r, &mut out);
                        out
                    }
                };
                pre_op(self.dtype, self.op, self.schedule.ranks, &mut out);
                out
            }
            Expr::Reduce(a, b) => {
                let mut out = self.eval(a, part, origin, inputs);
                let inc = self.eval(b, part, origin, inputs);
                reduce_into(self.dtype, self.op, &mut out, &inc);
                out
            }
        }
    }

    fn contributions(&self, e: ExprId, into: &mut RankSet) {
        match self.verified.exprs[e as usize] {
            Expr::Input { rank, .. } => into.insert(rank),
            Expr::Reduce(a, b) => {
                self.contributions(a, into);
                self.contributions(b, into);
            }
        }
    }

    /// The reference of `e` on elements `part` of its chunk.
    fn reference(&mut self, e: ExprId, part: std::ops::Range<usize>) -> &Reference {
        let chunk = self.origin(e);
        let key = (e, chunk, part.start);
        if !self.cache.contains_key(&key) {
            let mut set = RankSet::empty();
            self.contributions(e, &mut set);
            let ranks: Vec<usize> = set.iter().collect();
            let (dtype, op, seed) = (self.dtype, self.op, self.seed);
            let u = dtype.unit_roundoff();
            let k = ranks.len() as f64;
            let c = self.schedule.chunk_elems(self.elems, chunk);
            let r = c.start + part.start..c.start + part.end;
            // Each contributor's input piece, generated once: the leaves of
            // the reduction in the schedule's order and the exact values
            // (hashing the inputs was half the reference's work when each
            // side made its own).
            let es = dtype.size_bytes();
            let inputs: Vec<(usize, Vec<u8>)> = ranks
                .iter()
                .map(|&q| {
                    let mut b = vec![0u8; r.len() * es];
                    input::fill(dtype, seed, q, r.clone(), &mut b);
                    (q, b)
                })
                .collect();
            let mut bytes = self.eval(e, &part, chunk, &inputs);
            post_op(self.dtype, self.op, self.schedule.ranks, &mut bytes);
            let (mut max_abs_error, mut beyond_tolerance) = (0.0f64, 0usize);
            // Exact result and Σ|x| of every element, one contributor at a time.
            let (exact, abs_sum) = exact_of_inputs(dtype, op, &inputs);
            let got = dtype.decode_f64(&bytes);
            for ((&got, &exact), &abs_sum) in got.iter().zip(&exact).zip(&abs_sum) {
                let err = (got - exact).abs();
                let tol = tolerance(dtype, op, k, u, exact, abs_sum);
                max_abs_error = max_abs_error.max(err);
                if err > tol {
                    beyond_tolerance += 1;
                }
            }
            self.cache.insert(
                key,
                Reference {
                    bytes,
                    max_abs_error,
                    beyond_tolerance,
                },
            );
        }
        &self.cache[&key]
    }

    /// Checks `output` (rank `rank`'s whole final buffer,
    /// [`Schedule::buffer_elems`]`(elems)` elements) on the chunks the
    /// primitive defines as output.
    ///
    /// A buffer of the wrong length counts every output element as mismatched.
    pub fn check_rank<O: OutputBytes + ?Sized>(&mut self, rank: usize, output: &O) -> RankReport {
        let mut c = self.begin(rank, output);
        while !self.advance(&mut c, output) {}
        c.report
    }

    /// Starts [`Self::check_rank`] of `output` one piece at a time
    /// ([`Self::advance`]); the same report in the end.
    pub fn begin<O: OutputBytes + ?Sized>(&self, rank: usize, output: &O) -> RankCheck {
        let es = self.dtype.size_bytes();
        RankCheck {
            report: RankReport::empty(rank),
            wrong_len: output.len() != self.schedule.buffer_elems(self.elems) * es,
            chunks: (0..self.schedule.chunks)
                .filter(|&c| self.schedule.expected_after(rank, c).is_some())
                .collect(),
            next_chunk: 0,
            next_offset: 0,
            scratch: Vec::new(),
        }
    }

    /// Checks the next piece ([`piece_elems`] of the schedule's ranks) of
    /// `check`'s rank's `output` (the buffer given to [`Self::begin`]);
    /// `true` once the whole output is checked (`check.report` is then
    /// [`Self::check_rank`]'s).
    pub fn advance<O: OutputBytes + ?Sized>(&mut self, check: &mut RankCheck, output: &O) -> bool {
        let es = self.dtype.size_bytes();
        let Some(&chunk) = check.chunks.get(check.next_chunk) else {
            return true;
        };
        let rank = check.report.rank;
        let range = self.schedule.chunk_elems(self.elems, chunk);
        let piece = piece_elems(self.schedule.ranks);
        let part = check.next_offset..(check.next_offset + piece).min(range.len());
        if part.end >= range.len() {
            check.next_chunk += 1;
            check.next_offset = 0;
        } else {
            check.next_offset = part.end;
        }
        let rep = &mut check.report;
        rep.checked_elements += part.len();
        let e = match self.verified.final_exprs[rank][chunk] {
            Some(e) if !check.wrong_len => e,
            _ => {
                rep.mismatched_elements += part.len();
                return check.next_chunk >= check.chunks.len();
            }
        };
        let dtype = self.dtype;
        let first = range.start + part.start;
        let got = output.piece(
            first * es..(range.start + part.end) * es,
            &mut check.scratch,
        );
        let reference = self.reference(e, part);
        if same_bytes(got, &reference.bytes) {
            rep.max_abs_error = rep.max_abs_error.max(reference.max_abs_error);
            rep.beyond_tolerance += reference.beyond_tolerance;
        } else {
            // Slow path: find the differing elements.
            let want_bytes = &reference.bytes;
            for j in 0..got.len() / es {
                if got[j * es..(j + 1) * es] != want_bytes[j * es..(j + 1) * es] {
                    rep.mismatched_elements += 1;
                    let (g, w) = (dtype.read_f64(got, j), dtype.read_f64(want_bytes, j));
                    rep.max_abs_error = rep.max_abs_error.max((g - w).abs());
                    if rep.first_mismatch.is_none() {
                        rep.first_mismatch = Some(Mismatch {
                            element: first + j,
                            got: g,
                            want: w,
                        });
                    }
                }
            }
        }
        check.next_chunk >= check.chunks.len()
    }

    /// Checks `output` as [`Self::check_rank`] does, but against the exact
    /// result only (within the dtype's tolerance): for an output made in an
    /// order that is not the schedule's (the MPI library's own collective,
    /// `cclrun --algo library`), so there are no reference bits to match.
    /// `mismatched_elements` and `first_mismatch` then count and name the
    /// elements beyond tolerance (`want` is the exact value);
    /// `beyond_tolerance` is the same count.
    pub fn check_rank_exact(&mut self, rank: usize, output: &[u8]) -> RankReport {
        let es = self.dtype.size_bytes();
        let mut rep = RankReport::empty(rank);
        let wrong_len = output.len() != self.schedule.buffer_elems(self.elems) * es;
        let u = self.dtype.unit_roundoff();
        for chunk in 0..self.schedule.chunks {
            if self.schedule.expected_after(rank, chunk).is_none() {
                continue;
            }
            let range = self.schedule.chunk_elems(self.elems, chunk);
            rep.checked_elements += range.len();
            let e = match self.verified.final_exprs[rank][chunk] {
                Some(e) if !wrong_len => e,
                _ => {
                    rep.mismatched_elements += range.len();
                    rep.beyond_tolerance += range.len();
                    continue;
                }
            };
            let mut set = RankSet::empty();
            self.contributions(e, &mut set);
            let ranks: Vec<usize> = set.iter().collect();
            let origin = self.schedule.chunk_elems(self.elems, self.origin(e));
            let (exact, abs_sum) = exact_of(self.dtype, self.op, self.seed, &ranks, origin);
            let got = &output[range.start * es..range.end * es];
            for (j, (&x, &a)) in exact.iter().zip(&abs_sum).enumerate() {
                let g = self.dtype.read_f64(got, j);
                let err = (g - x).abs();
                rep.max_abs_error = rep.max_abs_error.max(err);
                let tol = tolerance(self.dtype, self.op, ranks.len() as f64, u, x, a);
                // NaN never passes (an exact input never makes one).
                if err.is_nan() || err > tol {
                    rep.mismatched_elements += 1;
                    rep.beyond_tolerance += 1;
                    if rep.first_mismatch.is_none() {
                        rep.first_mismatch = Some(Mismatch {
                            element: range.start + j,
                            got: g,
                            want: x,
                        });
                    }
                }
            }
        }
        rep
    }

    /// The primitive being checked.
    pub fn primitive(&self) -> Primitive {
        self.schedule.primitive
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::engine::algorithm::{build, Algorithm};
    use crate::engine::execute::reference_run;
    use crate::engine::verify::verify;

    #[test]
    fn exact_values_of_made_inputs_are_the_hashed_ones() {
        let ranks = [0, 2, 3, 7];
        let r = 1000..1000 + 3 * 64 + 5;
        for dtype in DType::ALL {
            for op in ReduceOp::ALL {
                let inputs: Vec<(usize, Vec<u8>)> = ranks
                    .iter()
                    .map(|&q| {
                        let mut b = vec![0u8; r.len() * dtype.size_bytes()];
                        input::fill(dtype, 11, q, r.clone(), &mut b);
                        (q, b)
                    })
                    .collect();
                let (e1, a1) = exact_of_inputs(dtype, op, &inputs);
                let (e2, a2) = exact_of(dtype, op, 11, &ranks, r.clone());
                assert_eq!(e1.len(), r.len());
                let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<u64>>();
                assert_eq!(bits(&e1), bits(&e2), "{dtype:?} {op:?}");
                assert_eq!(bits(&a1), bits(&a2), "{dtype:?} {op:?}");
            }
        }
    }

    #[test]
    fn same_bytes_is_slice_equality() {
        // Every length through two blocks and a tail, equal and with one
        // byte flipped at every position (first, inside a block, the tail).
        let a: Vec<u8> = (0..200u32).map(|i| (i * 37 % 251) as u8).collect();
        for len in 0..=a.len() {
            let x = &a[..len];
            assert!(same_bytes(x, x), "len {len}");
            for at in 0..len {
                let mut y = x.to_vec();
                y[at] ^= 0x80;
                assert!(!same_bytes(x, &y), "len {len}, byte {at}");
                assert_eq!(same_bytes(x, &y), x == y.as_slice());
            }
        }
        assert!(!same_bytes(&a[..64], &a[..63]));
        assert!(!same_bytes(&a[..65], &a[1..66]));
    }

    #[test]
    fn the_exact_check_accepts_another_order_and_names_a_wrong_element() {
        let (n, elems, dtype, op) = (4, 1001, DType::Fp32, ReduceOp::Sum);
        let ring = build(Algorithm::Ring, Primitive::AllReduce, n).unwrap();
        let v = verify(&ring).unwrap();
        let mut c = Checker::new(&ring, &v, dtype, op, 9, elems);
        // Another algorithm's outputs: another reduction order, the same
        // exact result within tolerance.
        let rhd = build(Algorithm::Rhd, Primitive::AllReduce, n).unwrap();
        let other = reference_run(&rhd, dtype, op, 9, elems).unwrap();
        for (r, out) in other.iter().enumerate() {
            let rep = c.check_rank_exact(r, out);
            assert_eq!(rep.mismatched_elements, 0, "rank {r}");
            assert_eq!(rep.checked_elements, elems);
            assert!(rep.ok());
        }
        // One element far off: counted once, named with the exact value.
        let mut bad = other[2].clone();
        let at = 600 * 4;
        let want = dtype.read_f64(&bad, 600);
        bad[at..at + 4].copy_from_slice(&(want as f32 + 1.0).to_le_bytes());
        let rep = c.check_rank_exact(2, &bad);
        assert_eq!((rep.mismatched_elements, rep.beyond_tolerance), (1, 1));
        let m = rep.first_mismatch.unwrap();
        assert_eq!(m.element, 600);
        assert!(
            (m.want - want).abs() < 1e-5 && (m.got - want - 1.0).abs() < 1e-5,
            "{m:?}"
        );
        // A buffer of the wrong length: every output element is wrong.
        assert_eq!(c.check_rank_exact(0, &bad[4..]).beyond_tolerance, elems);
    }

    #[test]
    fn a_check_in_pieces_spans_chunks_and_names_a_wrong_element() {
        // Chunks of several pieces each, and a ragged last piece.
        let (n, dtype, op) = (4, DType::Fp32, ReduceOp::Sum);
        let elems = 4 * (2 * CHECK_PIECE_ELEMS + 123);
        let ring = build(Algorithm::Ring, Primitive::AllReduce, n).unwrap();
        let v = verify(&ring).unwrap();
        let outs = reference_run(&ring, dtype, op, 5, elems).unwrap();
        let mut c = Checker::new(&ring, &v, dtype, op, 5, elems);
        for (r, out) in outs.iter().enumerate() {
            let mut k = c.begin(r, out);
            let mut pieces = 1;
            while !c.advance(&mut k, out) {
                pieces += 1;
            }
            assert_eq!(pieces, 4 * 3, "rank {r}");
            assert!(k.report.ok(), "rank {r}: {:?}", k.report);
            assert_eq!(k.report.checked_elements, elems);
        }
        // One element wrong in the middle piece of chunk 1.
        let at = ring.chunk_elems(elems, 1).start + CHECK_PIECE_ELEMS + 7;
        let mut bad = outs[3].clone();
        bad[at * 4] ^= 1;
        let rep = c.check_rank(3, &bad);
        assert_eq!(rep.mismatched_elements, 1);
        assert_eq!(rep.first_mismatch.unwrap().element, at);
        assert_eq!(c.check_rank(3, &bad[4..]).mismatched_elements, elems);
    }

    /// An output the checker can only copy pieces out of (the page's
    /// transferred buffers), counting the bytes it copied. Shared with the
    /// compressed check's tests.
    pub(crate) struct Outside(pub(crate) Vec<u8>, pub(crate) std::cell::Cell<usize>);

    impl OutputBytes for Outside {
        fn len(&self) -> usize {
            self.0.len()
        }
        fn piece<'s>(
            &'s self,
            range: std::ops::Range<usize>,
            scratch: &'s mut Vec<u8>,
        ) -> &'s [u8] {
            self.1.set(self.1.get() + range.len());
            scratch.clear();
            scratch.extend_from_slice(&self.0[range]);
            scratch
        }
    }

    #[test]
    fn an_output_outside_memory_is_checked_piece_by_piece_as_in_memory() {
        let (n, dtype, op) = (4, DType::Bf16, ReduceOp::Max);
        let elems = 4 * (CHECK_PIECE_ELEMS + 301);
        let ring = build(Algorithm::Ring, Primitive::AllReduce, n).unwrap();
        let v = verify(&ring).unwrap();
        let outs = reference_run(&ring, dtype, op, 3, elems).unwrap();
        let mut c = Checker::new(&ring, &v, dtype, op, 3, elems);
        let mut bad = outs[2].clone();
        let at = ring.chunk_elems(elems, 3).start + CHECK_PIECE_ELEMS + 5;
        bad[at * 2 + 1] ^= 0x40;
        for (r, out) in outs.iter().take(2).chain([&bad]).enumerate() {
            let outside = Outside(out.clone(), std::cell::Cell::new(0));
            let mut k = c.begin(r, &outside);
            while !c.advance(&mut k, &outside) {}
            assert_eq!(k.report, c.check_rank(r, out), "rank {r}");
            // Every output byte was read once, a piece at a time.
            assert_eq!(outside.1.get(), out.len(), "rank {r}");
        }
        let outside = Outside(bad, std::cell::Cell::new(0));
        let mut k = c.begin(2, &outside);
        while !c.advance(&mut k, &outside) {}
        assert_eq!(k.report.mismatched_elements, 1);
        assert_eq!(k.report.first_mismatch.map(|m| m.element), Some(at));
    }

    #[test]
    fn a_piece_reads_about_the_same_inputs_at_any_rank_count() {
        assert_eq!(piece_elems(2), CHECK_PIECE_ELEMS);
        assert_eq!(piece_elems(8), CHECK_PIECE_ELEMS);
        assert_eq!(piece_elems(64), CHECK_PIECE_ELEMS / 8);
        assert_eq!(piece_elems(1 << 20), 1024);
        // 64 ranks: more, shorter pieces, the same verdict and counts.
        let (n, dtype, op) = (64, DType::Fp32, ReduceOp::Sum);
        let elems = n * (piece_elems(n) + 17);
        let ring = build(Algorithm::Ring, Primitive::AllReduce, n).unwrap();
        let v = verify(&ring).unwrap();
        let outs = reference_run(&ring, dtype, op, 9, elems).unwrap();
        let mut c = Checker::new(&ring, &v, dtype, op, 9, elems);
        let mut k = c.begin(5, &outs[5]);
        let mut pieces = 1;
        while !c.advance(&mut k, &outs[5]) {
            pieces += 1;
        }
        assert_eq!(pieces, 2 * n, "two pieces per chunk");
        assert!(k.report.ok(), "{:?}", k.report);
        assert_eq!(k.report.checked_elements, elems);
        assert_eq!(k.report, c.check_rank(5, &outs[5]));
    }
}
