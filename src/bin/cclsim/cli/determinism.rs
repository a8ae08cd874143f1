//! `cclsim determinism`: one AllReduce's result against another
//! algorithm's or fp32's on the same inputs.

use super::*;

pub(super) fn determinism_cmd(
    m: &Machine,
    bytes: &str,
    versus: &str,
    fixed: bool,
    element: usize,
    json: bool,
) -> Res<()> {
    use ccl_playground::engine::determinism::{compare, Versus};
    let c = config(m, bytes, "--bytes")?;
    let v = Versus::from_name(versus).map_err(|e| format!("--versus {versus:?}: {e}"))?;
    let algorithm = plan(&c)?.algorithm;
    let r = compare(&c, algorithm, v, fixed, element).map_err(|e| format!("--{e}"))?;
    if json {
        let v = serde_json::to_value(&r).map_err(|e| e.to_string())?;
        return out(&format!("{v}\n"));
    }
    let mut t = format!(
        "{} vs {}: {} of {} elements differ, max {} ulps (dtype {}, {} ranks, seed {})\n",
        r.sides[0], r.sides[1], r.differing, r.elements, r.max_ulps, c.dtype, c.ranks, c.seed
    );
    t.push_str("ulps     elements\n");
    for (lo, hi, k) in &r.histogram {
        let label = match (lo, hi) {
            (l, h) if l == h => format!("{l}"),
            (l, &u64::MAX) => format!(">={l}"),
            (l, h) => format!("{l}-{h}"),
        };
        t.push_str(&format!("{label:<8} {k}\n"));
    }
    t.push_str(&format!(
        "element {}: {} = {}\n            {} = {}\n",
        r.element, r.values[0], r.orders[0], r.values[1], r.orders[1]
    ));
    if let Some(f) = &r.fixed {
        t.push_str(&format!(
            "fixed order (chain Reduce to rank 0 + chain Broadcast, as HCCL_DETERMINISTIC's order-preserving mode promises one order): {:.2} + {:.2} = {:.2} µs vs {:.2} µs for {} AllReduce\n",
            f.reduce_us,
            f.broadcast_us,
            f.reduce_us + f.broadcast_us,
            f.allreduce_us,
            algorithm.name()
        ));
    }
    out(&t)
}
