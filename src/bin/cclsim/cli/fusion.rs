//! `cclsim fusion`: DDP's buckets of a model's gradients, fused against
//! unfused.

use super::*;

/// `cclsim fusion`'s flags as clap parses them, kept next to the code
/// that reads them so the command line's dispatch stays one line per
/// subcommand.
#[derive(clap::Args)]
pub(super) struct FusionOptions {
    /// Topology preset.
    #[arg(long, default_value = "910b-8")]
    topo: String,
    /// Ranks.
    #[arg(long, default_value_t = 8)]
    ranks: usize,
    /// Tensors: llama3-8b, llama3-70b or COUNTxSIZE (30x4MiB).
    #[arg(long)]
    fusion: String,
    /// DDP's bucket_cap_mb as a size (0 = one AllReduce per tensor);
    /// not given: DDP's default 25 MiB with its 1 MiB first bucket.
    #[arg(long)]
    bucket: Option<String>,
    /// Gradient dtype.
    #[arg(long, default_value = "bf16")]
    dtype: String,
    /// Compress the buckets (what-if): none, int8, fp8e4m3, fp8e5m2.
    #[arg(long, default_value = "none")]
    compress: String,
    /// With --compress: buckets smaller than this size are sent
    /// uncompressed ("compress only large gradients"); 0 = all.
    #[arg(long = "compress-min", default_value = "0")]
    compress_min: String,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

impl FusionOptions {
    /// Runs `cclsim fusion` with these flags ([`fusion_cmd`]).
    pub(super) fn run(&self) -> Res<()> {
        fusion_cmd(
            &self.topo,
            self.ranks,
            &self.fusion,
            self.bucket.as_deref(),
            &self.dtype,
            (&self.compress, &self.compress_min),
            self.json,
        )
    }
}

pub(super) fn fusion_cmd(
    topo: &str,
    ranks: usize,
    spec: &str,
    bucket: Option<&str>,
    dtype: &str,
    (compress, compress_min): (&str, &str),
    json: bool,
) -> Res<()> {
    let mut q = form_urlencoded::Serializer::new(String::new());
    q.append_pair("v", "1")
        .append_pair("op", "allreduce")
        .append_pair("topo", topo)
        .append_pair("ranks", &ranks.to_string())
        .append_pair("dtype", dtype)
        .append_pair("fusion", spec)
        .append_pair("compress", compress)
        .append_pair("compress_min", compress_min);
    if let Some(b) = bucket {
        q.append_pair("bucket", b);
    }
    let (c, errors) = Config::from_query(&q.finish());
    if let Some(e) = errors.iter().find(|e| !e.is_notice()) {
        return Err(format!(
            "--{} {:?}: {}",
            e.key.replace('_', "-"),
            e.value,
            e.allowed
        ));
    }
    let p = Plan::new(&c).map_err(|e| e.to_string())?;
    let Some(f) = &p.fusion else {
        return Err(format!("--fusion {spec:?}: no fusion plan"));
    };
    let plan = &f.plan;
    if json {
        let v = serde_json::json!({
            "tensors": f.tensors.len(),
            "buckets": plan.buckets.len(),
            "bucket_cap": c.bucket,
            "bucket_sizes": plan.buckets.iter().map(|(b, _)| b.tensors.len()).collect::<Vec<_>>(),
            "total_bytes": plan.total_bytes,
            "unfused_us": plan.unfused_us,
            "fused_us": plan.fused_us,
            "crossover_bytes": plan.crossover_bytes,
            "compression": f.compression,
            "link": format!("?{}", c.to_query()),
        });
        out(&format!("{v}\n"))
    } else {
        let mut text = format!("{}\n", plan.summary(f.tensors.len()));
        if let Some(z) = &f.compression {
            text.push_str(&format!(
                "compression ({} what-if; HCCL and NCCL have none): {}\n",
                c.compress.scheme.name(),
                z.summary(plan.fused_us)
            ));
        }
        text.push_str(&format!(
            "{:>6} {:>8} {:>12} {:>10} {:>12} {:>10}\n",
            "bucket", "tensors", "bytes", "algorithm", "time(us)", "compressed"
        ));
        for (i, (b, cost)) in plan.buckets.iter().enumerate() {
            let z = f.compression.as_ref().map(|z| z.compressed[i]);
            text.push_str(&format!(
                "{:>6} {:>8} {:>12} {:>10} {:>12.2} {:>10}\n",
                i,
                b.tensors.len(),
                b.bytes,
                cost.algorithm.name(),
                cost.time_us,
                match z {
                    Some(true) => "yes",
                    Some(false) => "no",
                    None => "-",
                }
            ));
        }
        out(&text)
    }
}
