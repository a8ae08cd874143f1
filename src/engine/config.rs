//! The configuration of one run, its validation and its URL encoding.
//!
//! URL query keys: `op` (allreduce | reducescatter | allgather), `algo`
//! (auto | ring | mesh), `topo` (a [`Topology::preset`] name: 910b-8, 910a-8,
//! h100-8, 910b-{S}x8), `bytes` (an integer, or a number
//! with unit B, KB, KiB, MB, MiB, GB, GiB), `dtype` (fp32 | fp16 | bf16 |
//! int32 | int8), `redop` (sum | prod | max | min), `ranks` (2..=devices of
//! the topology), `seed` (0..=2^64-1).
//!
//! Decoding never fails as a whole: each invalid value yields a
//! [`ConfigError`] naming the key, the value and what is allowed, and that key
//! keeps its default; every valid key still applies.

use super::algorithm::Algorithm;
use super::collective::Primitive;
use super::dtype::{DType, ReduceOp};
use super::topology::Topology;
use serde::{Deserialize, Serialize};
use std::fmt;

/// Smallest message the controls offer, bytes (1 KiB).
pub const MIN_BYTES: u64 = 1 << 10;
/// Largest message the controls offer, bytes (1 GiB).
pub const MAX_BYTES: u64 = 1 << 30;
/// Largest message the workers execute for real, bytes per rank buffer
/// (128 MiB: 8 ranks then hold 1 GiB in the browser). Larger runs are
/// model-only.
pub const MAX_EXECUTED_BYTES: u64 = 128 << 20;
/// Most ranks the browser executes for real (one web worker each). More
/// ranks are model-only.
pub const MAX_EXECUTED_RANKS: usize = 16;
/// Most bytes all rank buffers together may hold in the browser (1 GiB).
pub const MAX_EXECUTED_TOTAL_BYTES: u64 = 1 << 30;

/// The algorithm choice: a concrete one, or the cheapest by the model.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum AlgoChoice {
    /// Cheapest predicted ([`super::select`]).
    Auto,
    /// This one.
    Fixed(Algorithm),
}

impl AlgoChoice {
    /// URL name (`auto`, `ring`, `mesh`).
    pub fn name(self) -> &'static str {
        match self {
            AlgoChoice::Auto => "auto",
            AlgoChoice::Fixed(a) => a.name(),
        }
    }

    /// Parses a URL name.
    pub fn from_name(s: &str) -> Option<AlgoChoice> {
        if s == "auto" {
            Some(AlgoChoice::Auto)
        } else {
            Algorithm::from_name(s).map(AlgoChoice::Fixed)
        }
    }
}

/// Everything that defines a run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Config {
    /// The primitive.
    pub op: Primitive,
    /// The algorithm or auto.
    pub algo: AlgoChoice,
    /// Topology preset name.
    pub topo: String,
    /// Message size S in bytes (nccl-tests' size), a multiple of the dtype size.
    pub bytes: u64,
    /// Element type.
    pub dtype: DType,
    /// Reduce op (ignored by AllGather).
    pub redop: ReduceOp,
    /// Number of ranks.
    pub ranks: usize,
    /// Seed of the deterministic inputs.
    pub seed: u64,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            op: Primitive::AllReduce,
            algo: AlgoChoice::Auto,
            topo: "910b-8".into(),
            bytes: 16 << 20,
            dtype: DType::Fp32,
            redop: ReduceOp::Sum,
            ranks: 8,
            seed: 1,
        }
    }
}

/// One invalid value in a configuration.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigError {
    /// The URL key.
    pub key: String,
    /// The value given (truncated to 80 characters for display).
    pub value: String,
    /// What is allowed, or what was done instead.
    pub allowed: String,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}={:?}: {}", self.key, self.value, self.allowed)
    }
}

fn shorten(v: &str) -> String {
    if v.chars().count() > 80 {
        format!("{}…", v.chars().take(80).collect::<String>())
    } else {
        v.to_string()
    }
}

/// Parses a byte size: an integer (`1048576`) or a number with a unit
/// (`B`, `KB` = 1e3, `KiB` = 1024, `MB`, `MiB`, `GB`, `GiB`; case-insensitive
/// on the letters before `i`, spaces allowed: `1.5 MiB`, `64MiB`, `2gb`).
///
/// Errors: a message saying what is allowed, if the text is not such a size,
/// is negative, or is not a whole number of bytes.
pub fn parse_bytes(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let split = t.find(|c: char| c.is_ascii_alphabetic()).unwrap_or(t.len());
    let (num, unit) = (t[..split].trim(), t[split..].trim());
    let mult: u64 = match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "kb" => 1_000,
        "kib" | "k" => 1 << 10,
        "mb" => 1_000_000,
        "mib" | "m" => 1 << 20,
        "gb" => 1_000_000_000,
        "gib" | "g" => 1 << 30,
        _ => {
            return Err(format!(
                "unknown unit `{unit}`; allowed: B, KB, KiB, MB, MiB, GB, GiB"
            ))
        }
    };
    if num.is_empty()
        || !num.chars().all(|c| c.is_ascii_digit() || c == '.')
        || num.matches('.').count() > 1
    {
        return Err(
            "a non-negative number, optionally with a unit (e.g. 4096, 64MiB, 1.5 GB)".into(),
        );
    }
    let v: f64 = num
        .parse()
        .map_err(|_| "a non-negative number (e.g. 4096, 64MiB)".to_string())?;
    let b = v * mult as f64;
    if !b.is_finite() || b > u64::MAX as f64 / 2.0 {
        return Err("a size up to 1 GiB".into());
    }
    if b.fract() != 0.0 {
        return Err(format!(
            "a whole number of bytes ({num} {unit} is {b} bytes)"
        ));
    }
    Ok(b as u64)
}

impl Config {
    /// Decodes a URL query string (with or without the leading `?`).
    /// Returns the configuration (defaults for missing or invalid keys) and
    /// one [`ConfigError`] per invalid value or unknown key.
    pub fn from_query(query: &str) -> (Config, Vec<ConfigError>) {
        let mut c = Config::default();
        let mut errors = Vec::new();
        let q = query.strip_prefix('?').unwrap_or(query);
        let mut bad = |key: &str, value: &str, allowed: String| {
            errors.push(ConfigError {
                key: key.to_string(),
                value: shorten(value),
                allowed,
            });
        };
        let mut bytes_raw: Option<String> = None;
        let mut ranks_raw: Option<String> = None;
        for (k, v) in form_urlencoded::parse(q.as_bytes()) {
            let v = v.trim();
            match k.as_ref() {
                "op" => match Primitive::from_name(v) {
                    Some(p) => c.op = p,
                    None => bad("op", v, "one of allreduce, reducescatter, allgather".into()),
                },
                "algo" => match AlgoChoice::from_name(v) {
                    Some(a) => c.algo = a,
                    None => bad("algo", v, "one of auto, ring, mesh".into()),
                },
                "topo" => match Topology::preset(v) {
                    Ok(_) => c.topo = v.to_string(),
                    Err(_) => bad(
                        "topo",
                        v,
                        format!("one of {}", Topology::PRESETS.join(", ")),
                    ),
                },
                "dtype" => match DType::from_name(v) {
                    Some(d) => c.dtype = d,
                    None => bad("dtype", v, "one of fp32, fp16, bf16, int32, int8".into()),
                },
                "redop" => match ReduceOp::from_name(v) {
                    Some(o) => c.redop = o,
                    None => bad("redop", v, "one of sum, prod, max, min".into()),
                },
                "seed" => match v.parse::<u64>() {
                    Ok(s) => c.seed = s,
                    Err(_) => bad("seed", v, "an integer 0..=18446744073709551615".into()),
                },
                "bytes" => bytes_raw = Some(v.to_string()),
                "ranks" => ranks_raw = Some(v.to_string()),
                other => bad(other, v, "unknown key, ignored".into()),
            }
        }
        // Keys that depend on others: ranks on topo, bytes on dtype.
        if let Some(v) = ranks_raw {
            let devices = Topology::preset(&c.topo)
                .map(|t| t.devices.len())
                .unwrap_or(8);
            match v.parse::<usize>() {
                Ok(n) if (2..=devices).contains(&n) => c.ranks = n,
                _ => bad(
                    "ranks",
                    &v,
                    format!(
                        "an integer 2..={devices} (topology {} has {devices} devices)",
                        c.topo
                    ),
                ),
            }
        } else if let Ok(t) = Topology::preset(&c.topo) {
            c.ranks = c.ranks.min(t.devices.len());
        }
        if let Some(v) = bytes_raw {
            match parse_bytes(&v) {
                Ok(b) if !(MIN_BYTES..=MAX_BYTES).contains(&b) => bad(
                    "bytes",
                    &v,
                    "a size from 1 KiB (1024) to 1 GiB (1073741824)".into(),
                ),
                Ok(b) => {
                    let es = c.dtype.size_bytes() as u64;
                    if b % es != 0 {
                        c.bytes = b - b % es;
                        bad(
                            "bytes",
                            &v,
                            format!(
                                "a whole number of {} elements ({es} bytes each); using {}",
                                c.dtype, c.bytes
                            ),
                        );
                    } else {
                        c.bytes = b;
                    }
                }
                Err(why) => bad("bytes", &v, why),
            }
        }
        (c, errors)
    }

    /// Encodes every field as a URL query string (without `?`), in a fixed
    /// key order; `from_query(to_query(c)) == (c, [])`.
    pub fn to_query(&self) -> String {
        form_urlencoded::Serializer::new(String::new())
            .append_pair("op", self.op.name())
            .append_pair("algo", self.algo.name())
            .append_pair("topo", &self.topo)
            .append_pair("bytes", &self.bytes.to_string())
            .append_pair("dtype", self.dtype.name())
            .append_pair("redop", self.redop.name())
            .append_pair("ranks", &self.ranks.to_string())
            .append_pair("seed", &self.seed.to_string())
            .finish()
    }

    /// Number of elements per rank buffer (`bytes / dtype size`).
    pub fn elems(&self) -> usize {
        (self.bytes / self.dtype.size_bytes() as u64) as usize
    }

    /// Will the workers execute this run, or is it model-only?
    pub fn executable(&self) -> bool {
        self.bytes <= MAX_EXECUTED_BYTES
            && self.ranks <= MAX_EXECUTED_RANKS
            && self.bytes.saturating_mul(self.ranks as u64) <= MAX_EXECUTED_TOTAL_BYTES
    }

    /// Why this run is model-only, in words; `None` if the workers run it.
    pub fn model_only_reason(&self) -> Option<String> {
        if self.bytes > MAX_EXECUTED_BYTES {
            Some(format!(
                "messages above {} are modelled, not executed in the browser",
                super::select::format_bytes(MAX_EXECUTED_BYTES)
            ))
        } else if self.ranks > MAX_EXECUTED_RANKS {
            Some(format!("more than {MAX_EXECUTED_RANKS} ranks are modelled, not executed (one web worker per rank)"))
        } else if !self.executable() {
            Some(format!(
                "all ranks' buffers together would exceed {} in the browser; modelled only",
                super::select::format_bytes(MAX_EXECUTED_TOTAL_BYTES)
            ))
        } else {
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_units() {
        assert_eq!(parse_bytes("4096"), Ok(4096));
        assert_eq!(parse_bytes("64MiB"), Ok(64 << 20));
        assert_eq!(parse_bytes("1.5 KiB"), Ok(1536));
        assert_eq!(parse_bytes("2GB"), Ok(2_000_000_000));
        assert_eq!(parse_bytes("1 kb"), Ok(1000));
        assert!(parse_bytes("-5").is_err());
        assert!(parse_bytes("1e400").is_err());
        assert!(parse_bytes("12 parsecs").is_err());
        assert!(parse_bytes("").is_err());
        assert!(parse_bytes("0.3 B").is_err());
    }

    #[test]
    fn round_trip() {
        let c = Config {
            op: Primitive::AllGather,
            algo: AlgoChoice::Fixed(Algorithm::Ring),
            topo: "910b-8".into(),
            bytes: 3 << 20,
            dtype: DType::Bf16,
            redop: ReduceOp::Max,
            ranks: 5,
            seed: u64::MAX,
        };
        assert_eq!(Config::from_query(&c.to_query()), (c.clone(), vec![]));
        assert_eq!(Config::from_query(&format!("?{}", c.to_query())).0, c);
    }

    #[test]
    fn invalid_values_name_key_value_and_allowed_and_the_rest_applies() {
        let (c, e) =
            Config::from_query("op=allgather&ranks=9&bytes=1e400&dtype=fp64&algo=mesh&foo=1");
        assert_eq!(c.op, Primitive::AllGather);
        assert_eq!(c.algo, AlgoChoice::Fixed(Algorithm::Mesh));
        assert_eq!(c.ranks, 8);
        assert_eq!(c.bytes, Config::default().bytes);
        let keys: Vec<&str> = e.iter().map(|x| x.key.as_str()).collect();
        assert_eq!(keys, vec!["dtype", "foo", "ranks", "bytes"]);
        assert_eq!(
            e[0].to_string(),
            "dtype=\"fp64\": one of fp32, fp16, bf16, int32, int8"
        );
        assert_eq!(
            e[2].to_string(),
            "ranks=\"9\": an integer 2..=8 (topology 910b-8 has 8 devices)"
        );
    }

    #[test]
    fn bytes_are_rounded_to_whole_elements_with_a_notice() {
        let (c, e) = Config::from_query("bytes=1027&dtype=fp32");
        assert_eq!(c.bytes, 1024);
        assert_eq!(e.len(), 1);
        assert!(e[0].allowed.contains("using 1024"));
    }

    #[test]
    fn hostile_values_are_truncated_and_never_panic() {
        let long = "x".repeat(10_000);
        let (_, e) = Config::from_query(&format!("op={long}&bytes=%FF%FE&seed=-1&ranks=%3Cimg%3E"));
        assert_eq!(e.len(), 4);
        assert!(e[0].value.chars().count() <= 81);
    }
}
