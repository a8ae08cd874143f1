//! `cclsim compress`: the error and wire size of one quantisation round
//! trip.

use super::*;

pub(super) fn compress_cmd(
    scheme: &str,
    block: usize,
    scale: &str,
    shape: &str,
    elems: usize,
    json: bool,
) -> Res<()> {
    use ccl_playground::engine::quantization::{
        self, Compression, GradientShape, ScaleType, Scheme,
    };
    let scheme = Scheme::from_name(scheme)
        .filter(|s| *s != Scheme::None)
        .ok_or_else(|| format!("--scheme {scheme:?}: allowed int8, fp8e4m3, fp8e5m2"))?;
    let scale = match scale {
        "fp16" => ScaleType::Fp16,
        "fp32" => ScaleType::Fp32,
        _ => return Err(format!("--scale {scale:?}: allowed fp16, fp32")),
    };
    // The page's names (grad=normal|heavy|layers); the first spellings
    // of this CLI still work.
    let shape = match shape {
        "heavytailed" => GradientShape::HeavyTailed,
        "layered" => GradientShape::Layered,
        s => GradientShape::from_name(s)
            .ok_or_else(|| format!("--shape {s:?}: allowed normal, heavy, layers"))?,
    };
    if elems == 0 || elems > 1 << 28 {
        return Err(format!("--elems {elems}: allowed 1..=268435456"));
    }
    let c = Compression {
        scheme,
        block,
        scale,
    };
    c.validate().map_err(|e| e.to_string())?;
    let x = quantization::gradients(shape, 1, 0, elems);
    let y = quantization::round_trip(&c, &x);
    let exact: Vec<f64> = x.iter().map(|v| *v as f64).collect();
    let approx: Vec<f64> = y.iter().map(|v| *v as f64).collect();
    let st = quantization::error_stats(&exact, &approx);
    let wire = c.wire_bytes(elems as u64, 2);
    let ratio = wire as f64 / (elems as f64 * 2.0);
    if json {
        println!(
            "{}",
            serde_json::json!({"stats": st, "wire_bytes": wire, "fp16_bytes": elems * 2, "wire_ratio_vs_fp16": ratio})
        );
    } else {
        println!("{} block {} scale {:?} on {} {:?} values (a what-if: HCCL has no gradient compression)", scheme, block, scale, elems, shape);
        println!(
            "max abs error {:.3e}  RMSE {:.3e}  relative L2 {:.3}%  flushed to zero {:.2}%",
            st.max_abs_error,
            st.rmse,
            st.rel_l2_error * 100.0,
            st.flushed_fraction * 100.0
        );
        println!("wire {} bytes = {:.4} of fp16", wire, ratio);
    }
    Ok(())
}
