//! Determinism on real data: the same inputs reduced by two configurations
//! (two algorithms, or fp16 / bf16 against fp32 of the same inputs) through
//! the reference executor, compared element by element in ulps, with the
//! two reduction orders of a chosen element (the verifier's expression
//! trees).
//!
//! ## Fixed reduction order
//! HCCL's deterministic mode (`HCCL_DETERMINISTIC=true`; `strict` =
//! 保序, "order-preserving": the same reduction order for every bit, CANN
//! environment variable reference `envref_07_0099`) makes reductions
//! repeatable and documents a performance cost without saying which
//! algorithm it runs. NCCL has no such switch (none among its documented
//! environment variables, docs.nvidia.com/deeplearning/nccl `env.html`):
//! each kernel reduces in a fixed order, so a run repeats bit for bit only
//! while the algorithm, protocol and rank count stay the same
//! (`NCCL_ALGO` / `NCCL_PROTO` pin the first two). Here a
//! fixed order is modelled as the simplest schedule whose order does not
//! depend on the algorithm: a chain Reduce to rank 0 (every element
//! `x0 + (x1 + (… + x(n-1)))`) then a chain Broadcast, both our `ring`
//! schedules, run through the same executor; its cost is the two modelled
//! times against the AllReduce's. A fixed order removes the differences
//! between algorithms, not those between rank counts: fewer ranks regroup
//! the contributions (local sums first), which no schedule undoes.

use super::algorithm::{self, Algorithm};
use super::collective::Primitive;
use super::config::{AlgoChoice, Config};
use super::dtype::DType;
use super::execute::{execute_elems, initial_buffer_with};
use super::input;
use super::plan::Plan;
use super::schedule::Schedule;
use super::verify::{verify, Expr, ExprId, Verified};
use serde::{Deserialize, Serialize};

/// Most elements compared (the message's first ones): 2^18, so a
/// comparison of 64 ranks stays a few tens of MB of buffers.
pub const MAX_COMPARED_ELEMS: usize = 1 << 18;

/// Most ranks compared: the ranks a plan verifies symbolically
/// ([`super::plan::MAX_DRAWN_RANKS`]). A comparison verifies both
/// schedules and runs both on real data, whose cost grows about as n³
/// (natively 1 s and 90 MB at 64 ranks, 13 s and 2 GB at 256): at 1024
/// ranks it would exhaust the page's 4 GiB of wasm memory.
pub const MAX_COMPARED_RANKS: usize = super::plan::MAX_DRAWN_RANKS;

/// What the current configuration is compared with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Versus {
    /// Another algorithm, same dtype and ranks.
    Algorithm(Algorithm),
    /// The same algorithm computing in fp32 on the same (fp16 / bf16)
    /// inputs, its result rounded to the dtype (PyTorch DDP's fp32
    /// AllReduce against HCCL's fp16 one).
    Fp32,
    /// The same contributions on fewer ranks `m` (`m` divides the rank
    /// count `n`, `2 <= m < n`): rank `j` first adds the `n/m`
    /// contributions `j·n/m ..` locally in the dtype, in order (gradient
    /// accumulation over a smaller data-parallel group), then the same
    /// algorithm AllReduces over `m` ranks.
    Ranks(usize),
}

impl Versus {
    /// Parses `fp32`, a rank count or an algorithm name.
    ///
    /// Errors: what is allowed, in words.
    pub fn from_name(s: &str) -> Result<Versus, String> {
        if s == "fp32" {
            return Ok(Versus::Fp32);
        }
        if let Ok(m) = s.parse::<usize>() {
            return Ok(Versus::Ranks(m));
        }
        Algorithm::from_name(s).map(Versus::Algorithm).ok_or_else(|| {
            "fp32, a smaller rank count dividing the ranks (e.g. 4), or an algorithm name (ring, mesh, rhd, nb, nhr, …)".into()
        })
    }

    /// `fp32`, the rank count or the algorithm's name.
    pub fn name(self) -> String {
        match self {
            Versus::Fp32 => "fp32".into(),
            Versus::Ranks(m) => m.to_string(),
            Versus::Algorithm(a) => a.name().into(),
        }
    }
}

/// The modelled cost of the fixed order.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FixedCost {
    /// Chain Reduce to rank 0, µs.
    pub reduce_us: f64,
    /// Chain Broadcast from rank 0, µs.
    pub broadcast_us: f64,
    /// The configuration's own AllReduce, µs.
    pub allreduce_us: f64,
}

/// A comparison of two runs of the same inputs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    /// The two sides, in words (`ring fp16`, `mesh fp16`, `fixed order`).
    pub sides: [String; 2],
    /// Elements compared (rank 0's output, the first [`MAX_COMPARED_ELEMS`]).
    pub elements: usize,
    /// Elements whose bits differ.
    pub differing: usize,
    /// Largest distance in units in the last place of the dtype.
    pub max_ulps: u64,
    /// `(lowest, highest, count)` of ulp distances: 0, 1, 2, 3–4, 5–8,
    /// 9–16, 17–32, ≥ 33 (`highest` = `u64::MAX`).
    pub histogram: Vec<(u64, u64, usize)>,
    /// The element shown, its two values and its two reduction orders
    /// (`((r0 + r1) + r2)`, leaves are ranks' inputs).
    pub element: usize,
    /// Its value on each side.
    pub values: [f64; 2],
    /// Its reduction order on each side.
    pub orders: [String; 2],
    /// With a fixed order: its modelled cost.
    pub fixed: Option<FixedCost>,
}

/// Distance of two values of `dtype` in ulps: the difference of their
/// bit patterns mapped to a monotone integer line (+0 and −0 are 0 apart).
/// Integers: the difference of the values.
pub fn ulps(dtype: DType, a: &[u8], b: &[u8]) -> u64 {
    fn line(bits: u64, sign: u64) -> i128 {
        if bits & sign != 0 {
            -((bits & !sign) as i128)
        } else {
            bits as i128
        }
    }
    let (x, y) = match dtype {
        DType::Fp32 => {
            let f = |v: &[u8]| line(u32::from_le_bytes([v[0], v[1], v[2], v[3]]) as u64, 1 << 31);
            (f(a), f(b))
        }
        DType::Fp16 | DType::Bf16 => {
            let f = |v: &[u8]| line(u16::from_le_bytes([v[0], v[1]]) as u64, 1 << 15);
            (f(a), f(b))
        }
        DType::Int32 | DType::Int8 => (dtype.read_f64(a, 0) as i128, dtype.read_f64(b, 0) as i128),
    };
    (x - y).unsigned_abs() as u64
}

const EDGES: [(u64, u64); 8] = [
    (0, 0),
    (1, 1),
    (2, 2),
    (3, 4),
    (5, 8),
    (9, 16),
    (17, 32),
    (33, u64::MAX),
];

/// Rank 0's output of `schedule` on the inputs of `input_dtype` from
/// `seed`, computed in `dtype` (the inputs converted exactly), rounded back
/// to `input_dtype`.
fn run(
    schedule: &Schedule,
    input_dtype: DType,
    dtype: DType,
    config: &Config,
    elems: usize,
    group: usize,
) -> Vec<u8> {
    let mut bufs: Vec<Vec<u8>> = (0..schedule.ranks)
        .map(|rank| {
            initial_buffer_with(schedule, dtype, rank, elems, |r, out| {
                // Contribution `rank·group`, then the group's others added
                // in order in the dtype (local accumulation).
                let mut acc = vec![0u8; out.len()];
                let mut tmp = vec![0u8; out.len()];
                for (g, q) in (rank * group..(rank + 1) * group).enumerate() {
                    let target = if g == 0 { &mut acc } else { &mut tmp };
                    fill_as(input_dtype, dtype, config.seed, q, r.clone(), target);
                    if g > 0 {
                        super::dtype::reduce_into(dtype, config.redop, &mut acc, &tmp);
                    }
                }
                out.copy_from_slice(&acc);
            })
        })
        .collect();
    // Shapes are consistent by construction.
    let _ = execute_elems(schedule, dtype, config.redop, &mut bufs, elems);
    let out = std::mem::take(&mut bufs[0]);
    if dtype == input_dtype {
        return out;
    }
    (0..elems)
        .flat_map(|i| {
            let v = dtype.read_f64(&out, i) as f32;
            match input_dtype {
                DType::Fp16 => half::f16::from_f32(v).to_le_bytes().to_vec(),
                DType::Bf16 => half::bf16::from_f32(v).to_le_bytes().to_vec(),
                _ => v.to_le_bytes().to_vec(),
            }
        })
        .collect()
}

/// Rank `q`'s inputs of `input_dtype` over `r`, written exactly as `dtype`.
fn fill_as(
    input_dtype: DType,
    dtype: DType,
    seed: u64,
    q: usize,
    r: std::ops::Range<usize>,
    out: &mut [u8],
) {
    let vals = input::values(input_dtype, seed, q, r);
    for (k, v) in vals.iter().enumerate() {
        let s = dtype.size_bytes();
        let o = &mut out[k * s..(k + 1) * s];
        match dtype {
            DType::Fp32 => o.copy_from_slice(&(*v as f32).to_le_bytes()),
            DType::Fp16 => o.copy_from_slice(&half::f16::from_f64(*v).to_le_bytes()),
            DType::Bf16 => o.copy_from_slice(&half::bf16::from_f64(*v).to_le_bytes()),
            DType::Int32 => o.copy_from_slice(&(*v as i32).to_le_bytes()),
            DType::Int8 => o[0] = *v as i8 as u8,
        }
    }
}

/// The reduction order of element `i` of rank 0 in `schedule`, as text.
fn order(schedule: &Schedule, v: &Verified, elems: usize, i: usize) -> String {
    fn text(v: &Verified, e: ExprId, out: &mut String) {
        match v.exprs[e as usize] {
            Expr::Input { rank, .. } => out.push_str(&format!("r{rank}")),
            Expr::Reduce(a, b) => {
                out.push('(');
                text(v, a, out);
                out.push_str(" + ");
                text(v, b, out);
                out.push(')');
            }
        }
    }
    let chunk = (0..schedule.chunks).find(|&c| schedule.chunk_elems(elems, c).contains(&i));
    match chunk.and_then(|c| v.final_exprs[0][c]) {
        Some(e) => {
            let mut s = String::new();
            text(v, e, &mut s);
            s
        }
        None => "-".into(),
    }
}

/// Compares the AllReduce of `config` run with `algorithm` against
/// `versus` on the same inputs (rank 0's output, the first
/// [`MAX_COMPARED_ELEMS`] elements), and shows element `element`'s two
/// orders. With `fixed`, both sides reduce in the fixed order (module doc)
/// and the cost of that order is modelled.
///
/// Errors: a sentence naming the field, the value and what is allowed: the
/// primitive is not AllReduce; `versus` is fp32 for a dtype that is not
/// fp16 / bf16; an algorithm does not implement AllReduce on these ranks;
/// `element` outside the compared elements; more than
/// [`MAX_COMPARED_RANKS`] ranks.
pub fn compare(
    config: &Config,
    algorithm: Algorithm,
    versus: Versus,
    fixed: bool,
    element: usize,
) -> Result<Comparison, String> {
    if config.primitive != Primitive::AllReduce {
        return Err(format!(
            "op {}: the determinism comparison runs AllReduce (op=allreduce)",
            config.primitive.name()
        ));
    }
    let (n, dtype) = (config.ranks, config.dtype);
    if n > MAX_COMPARED_RANKS {
        return Err(format!(
            "ranks={n}: the determinism comparison runs on 2..={MAX_COMPARED_RANKS} ranks (it verifies and runs both schedules on real data, as the page does up to {MAX_COMPARED_RANKS} ranks)"
        ));
    }
    let elems = config.elems().clamp(1, MAX_COMPARED_ELEMS);
    if element >= elems {
        return Err(format!(
            "element {element}: an index 0..={} (the compared elements)",
            elems - 1
        ));
    }
    let build = |a: Algorithm| {
        algorithm::build(a, Primitive::AllReduce, n)
            .map_err(|e| format!("versus {}: {e}", a.name()))
    };
    let (b_alg, b_dtype, m) = match versus {
        Versus::Algorithm(b) => (b, dtype, n),
        Versus::Ranks(m) if m >= 2 && m < n && n % m == 0 => {
            if config.redop == super::dtype::ReduceOp::Avg {
                return Err(format!(
                    "versus {m} ranks with redop avg: avg divides by the rank count, so {m} and {n} ranks compute different values; use redop sum"
                ));
            }
            (algorithm, dtype, m)
        }
        Versus::Ranks(m) => {
            return Err(format!(
                "versus {m} ranks: a rank count 2..{n} that divides the {n} ranks"
            ))
        }
        Versus::Fp32 if matches!(dtype, DType::Fp16 | DType::Bf16) => (algorithm, DType::Fp32, n),
        Versus::Fp32 => {
            return Err(format!(
                "versus fp32 with dtype {dtype}: fp32 is compared with fp16 or bf16 inputs"
            ))
        }
    };
    let side = |a: Algorithm, d: DType, k: usize| {
        let ranks = if k == n {
            String::new()
        } else {
            format!(", {k} ranks")
        };
        if fixed {
            format!("{} {d}{ranks}, fixed order", a.name())
        } else {
            format!("{} {d}{ranks}", a.name())
        }
    };
    let sides = [side(algorithm, dtype, n), side(b_alg, b_dtype, m)];
    let build_m = |a: Algorithm, k: usize| {
        algorithm::build(a, Primitive::AllReduce, k).map_err(|e| format!("versus {k} ranks: {e}"))
    };
    let (sa, sb) = if fixed {
        let chain = |k: usize| {
            algorithm::build_with_root(Algorithm::Ring, Primitive::Reduce, k, 0)
                .map_err(|e| e.to_string())
        };
        (chain(n)?, chain(m)?)
    } else if m != n {
        (build(algorithm)?, build_m(b_alg, m)?)
    } else {
        (build(algorithm)?, build(b_alg)?)
    };
    let va = verify(&sa).map_err(|e| e.to_string())?;
    let vb = verify(&sb).map_err(|e| e.to_string())?;
    let a = run(&sa, dtype, dtype, config, elems, 1);
    let b = run(&sb, dtype, b_dtype, config, elems, n / m);
    let es = dtype.size_bytes();
    let mut histogram: Vec<(u64, u64, usize)> = EDGES.iter().map(|&(l, h)| (l, h, 0)).collect();
    let (mut differing, mut max_ulps) = (0, 0);
    for i in 0..elems {
        let d = ulps(dtype, &a[i * es..(i + 1) * es], &b[i * es..(i + 1) * es]);
        if d > 0 {
            differing += 1;
        }
        max_ulps = max_ulps.max(d);
        if let Some(h) = histogram.iter_mut().find(|h| d >= h.0 && d <= h.1) {
            h.2 += 1;
        }
    }
    let fixed_cost = if fixed {
        let at = |op: Primitive| {
            let mut c = config.clone();
            c.primitive = op;
            c.algo = AlgoChoice::Fixed(Algorithm::Ring);
            c.root = 0;
            c.compress.scheme = super::quantization::Scheme::None;
            c.fusion = None;
            Plan::headline(&c)
                .map(|p| p.estimate.time_us)
                .map_err(|e| e.to_string())
        };
        let mut own = config.clone();
        own.algo = AlgoChoice::Fixed(algorithm);
        own.fusion = None;
        Some(FixedCost {
            reduce_us: at(Primitive::Reduce)?,
            broadcast_us: at(Primitive::Broadcast)?,
            allreduce_us: Plan::headline(&own)
                .map(|p| p.estimate.time_us)
                .map_err(|e| e.to_string())?,
        })
    } else {
        None
    };
    Ok(Comparison {
        sides,
        elements: elems,
        differing,
        max_ulps,
        histogram,
        element,
        values: [dtype.read_f64(&a, element), dtype.read_f64(&b, element)],
        orders: [
            order(&sa, &va, elems, element),
            order(&sb, &vb, elems, element),
        ],
        fixed: fixed_cost,
    })
}
