//! The configuration of one run, its validation and its URL encoding.
//!
//! URL query keys: `op` (a [`Primitive::name`]: allreduce | reducescatter |
//! allgather | broadcast | reduce | scatter | gather | alltoall | alltoallv |
//! barrier | sendrecv), `algo` (auto or an [`Algorithm::name`]: ring | mesh |
//! rhd | tree | star | pairwise | nb | dbtree | hier), `root` (the root of a rooted
//! primitive, 0..ranks, default 0; written only for rooted primitives or a
//! non-zero root), `topo` (a [`Topology::preset`] name: 910b-8, 910a-8,
//! h100-8, 910b-{S}x8), `bytes` (an integer, or a number
//! with unit B, KB, KiB, MB, MiB, GB, GiB), `dtype` (fp32 | fp16 | bf16 |
//! int32 | int8), `redop` (sum | prod | max | min), `ranks` (2..=devices of
//! the topology), `seed` (0..=2^64-1).
//!
//! Every link starts with the format version `v` ([`LINK_VERSION`]); a link
//! without `v` is a version-0 link (before versioning) and is rewritten by
//! [`migrate`] before decoding, so old links keep opening after the format
//! changes. An unknown `v` or an unknown key is a *notice*
//! ([`Severity::Notice`]): reported, and the rest of the link still applies.
//!
//! Decoding never fails as a whole: each invalid value yields a
//! [`ConfigError`] naming the key, the value and what is allowed, and that key
//! keeps its default; every valid key still applies.

use super::algorithm::Algorithm;
use super::collective::Primitive;
use super::dtype::{DType, ReduceOp};
use super::topology::Topology;
use serde::{Deserialize, Serialize};
use std::cell::RefCell;
use thiserror::Error;

/// The link format [`Config::to_query`] writes (its first key, `v=1`).
/// Version 0 is a link without `v`, written before links were versioned.
pub const LINK_VERSION: u32 = 1;

/// The `allowed` text of an unknown key.
pub const UNKNOWN_KEY: &str = "unknown key, ignored";

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
    /// Root rank of a rooted primitive ([`Primitive::rooted`]), `0..ranks`.
    #[serde(default)]
    pub root: usize,
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
            root: 0,
        }
    }
}

/// How serious a [`ConfigError`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Severity {
    /// An invalid value: the key keeps its default.
    Error,
    /// Nothing was lost that the page understands (an unknown key, an
    /// unknown link version): reported, and otherwise ignored.
    Notice,
}

/// One invalid value (or ignored key) in a configuration.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[error("{key}={value:?}: {allowed}")]
pub struct ConfigError {
    /// The URL key (truncated to 80 characters for display).
    pub key: String,
    /// The value given (truncated to 80 characters for display).
    pub value: String,
    /// What is allowed, or what was done instead.
    pub allowed: String,
    /// Error or notice.
    pub severity: Severity,
}

impl ConfigError {
    /// True for a notice (unknown key or link version), false for an error.
    pub fn is_notice(&self) -> bool {
        self.severity == Severity::Notice
    }
}

/// Rewrites the `(key, value)` pairs of a link written in format `version`
/// into the current format ([`LINK_VERSION`]), one version at a time.
/// Unknown versions (newer than this page) are returned unchanged, to be
/// read as the current format ([`Config::from_query`] says so in a notice).
///
/// - 0 -> 1: version 0 (no `v`) had exactly version 1's keys and values;
///   version 1 only added `v` itself, so nothing is rewritten.
///
/// A future change (say, renaming `bytes` to `size` in version 2) adds an
/// arm `1 => ...` that rewrites the old key, and bumps [`LINK_VERSION`].
pub fn migrate(version: u32, pairs: Vec<(String, String)>) -> Vec<(String, String)> {
    let mut pairs = pairs;
    for from in version..LINK_VERSION {
        pairs = match from {
            // 0 -> 1: version 1 only added `v`; keys and values are the same.
            0 => pairs,
            // Each later format change gets its rewrite here.
            _ => pairs,
        };
    }
    pairs
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
        let errors = RefCell::new(Vec::new());
        let q = query.strip_prefix('?').unwrap_or(query);
        let push = |key: &str, value: &str, allowed: String, severity: Severity| {
            errors.borrow_mut().push(ConfigError {
                key: shorten(key),
                value: shorten(value),
                allowed,
                severity,
            });
        };
        let bad =
            |key: &str, value: &str, allowed: String| push(key, value, allowed, Severity::Error);
        let note =
            |key: &str, value: &str, allowed: String| push(key, value, allowed, Severity::Notice);
        let pairs: Vec<(String, String)> =
            form_urlencoded::parse(q.as_bytes()).into_owned().collect();
        let version = match pairs.iter().find(|(k, _)| k == "v") {
            None => 0,
            Some((_, v)) => match v.trim().parse::<u32>() {
                Ok(n) if (1..=LINK_VERSION).contains(&n) => n,
                _ => {
                    note(
                        "v",
                        v,
                        format!("unknown link version; allowed: 1..={LINK_VERSION}; read as version {LINK_VERSION}"),
                    );
                    LINK_VERSION
                }
            },
        };
        let pairs = migrate(version, pairs);
        let mut bytes_raw: Option<String> = None;
        let mut ranks_raw: Option<String> = None;
        let mut root_raw: Option<String> = None;
        for (k, v) in pairs.iter().map(|(k, v)| (k.as_str(), v.as_str())) {
            let v = v.trim();
            match k {
                "v" => {}
                "op" => match Primitive::from_name(v) {
                    Some(p) => c.op = p,
                    None => bad(
                        "op",
                        v,
                        format!("one of {}", Primitive::ALL.map(|p| p.name()).join(", ")),
                    ),
                },
                "algo" => match AlgoChoice::from_name(v) {
                    Some(a) => c.algo = a,
                    None => bad(
                        "algo",
                        v,
                        format!(
                            "one of auto, {}",
                            Algorithm::ALL.map(|a| a.name()).join(", ")
                        ),
                    ),
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
                "root" => root_raw = Some(v.to_string()),
                other => note(other, v, UNKNOWN_KEY.into()),
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
        // root depends on ranks.
        if let Some(v) = root_raw {
            match v.parse::<usize>() {
                Ok(r) if r < c.ranks => c.root = r,
                _ => bad(
                    "root",
                    &v,
                    format!("an integer 0..={} (a rank; ranks={})", c.ranks - 1, c.ranks),
                ),
            }
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
        // algo depends on op and ranks: an algorithm that does not implement
        // the primitive is named, and auto runs instead.
        if let AlgoChoice::Fixed(a) = c.algo {
            if !a.supports(c.op, c.ranks) {
                let names: Vec<&str> = Algorithm::applicable(c.op, c.ranks)
                    .iter()
                    .map(|x| x.name())
                    .collect();
                // No algorithm at all (AlltoAllV above MAX_ALLTOALLV_RANKS):
                // say "none", not a dangling "auto, ".
                let applicable = if names.is_empty() {
                    "none".to_string()
                } else {
                    format!("auto, {}", names.join(", "))
                };
                bad(
                    "algo",
                    a.name(),
                    format!(
                        "{} does not implement {} on {} ranks; applicable: {applicable}; using auto",
                        a.name(),
                        c.op.title(),
                        c.ranks,
                    ),
                );
                c.algo = AlgoChoice::Auto;
            }
        }
        (c, errors.into_inner())
    }

    /// Encodes every field as a URL query string (without `?`), the version
    /// first (`v=1`), then a fixed key order; `from_query(to_query(c)) ==
    /// (c, [])`.
    pub fn to_query(&self) -> String {
        let mut q = form_urlencoded::Serializer::new(String::new())
            .append_pair("v", &LINK_VERSION.to_string())
            .append_pair("op", self.op.name())
            .append_pair("algo", self.algo.name())
            .append_pair("topo", &self.topo)
            .append_pair("bytes", &self.bytes.to_string())
            .append_pair("dtype", self.dtype.name())
            .append_pair("redop", self.redop.name())
            .append_pair("ranks", &self.ranks.to_string())
            .append_pair("seed", &self.seed.to_string())
            .finish();
        if self.op.rooted() || self.root != 0 {
            q.push_str(&format!("&root={}", self.root));
        }
        q
    }

    /// Number of elements per rank buffer (`bytes / dtype size`).
    pub fn elems(&self) -> usize {
        (self.bytes / self.dtype.size_bytes() as u64) as usize
    }

    /// Will the workers execute this run, or is it model-only?
    pub fn executable(&self) -> bool {
        self.bytes <= MAX_EXECUTED_BYTES
            && self.ranks <= MAX_EXECUTED_RANKS
            && self.buffer_bytes().saturating_mul(self.ranks as u64) <= MAX_EXECUTED_TOTAL_BYTES
    }

    /// Bytes of one rank's buffer: the message size `S` for most
    /// primitives, about `2S` with send and receive areas (AlltoAll,
    /// AlltoAllV, SendRecv; [`Primitive::buffer_elems`]), 0 for Barrier.
    pub fn buffer_bytes(&self) -> u64 {
        self.op.buffer_elems(self.ranks, self.elems()) as u64 * self.dtype.size_bytes() as u64
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
            root: 0,
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
    fn an_algorithm_that_does_not_apply_falls_back_to_auto_with_a_message() {
        let (c, e) = Config::from_query("op=allreduce&algo=pairwise&ranks=8");
        assert_eq!(c.algo, AlgoChoice::Auto);
        assert_eq!(e.len(), 1);
        assert_eq!(e[0].key, "algo");
        assert!(
            e[0].allowed
                .contains("does not implement AllReduce on 8 ranks"),
            "{}",
            e[0]
        );
        assert!(
            e[0].allowed.contains("ring") && e[0].allowed.contains("using auto"),
            "{}",
            e[0]
        );
    }

    #[test]
    fn an_algorithm_where_none_applies_says_none() {
        // AlltoAllV has no algorithm above MAX_ALLTOALLV_RANKS (16) ranks.
        let (c, e) = Config::from_query("op=alltoallv&algo=mesh&topo=910b-4x8&ranks=32");
        assert_eq!(c.algo, AlgoChoice::Auto);
        assert_eq!(e.len(), 1, "{e:?}");
        assert!(
            e[0].allowed.ends_with(
                "does not implement AlltoAllV on 32 ranks; applicable: none; using auto"
            ),
            "{}",
            e[0]
        );
    }

    #[test]
    fn bytes_are_rounded_to_whole_elements_with_a_notice() {
        let (c, e) = Config::from_query("bytes=1027&dtype=fp32");
        assert_eq!(c.bytes, 1024);
        assert_eq!(e.len(), 1);
        assert!(e[0].allowed.contains("using 1024"));
    }

    fn all_configs() -> Vec<Config> {
        let d = Config::default();
        let mut all = Vec::new();
        for op in Primitive::ALL {
            all.push(Config { op, ..d.clone() });
        }
        all.push(Config {
            algo: AlgoChoice::Auto,
            ..d.clone()
        });
        // Every algorithm, on a primitive it implements (hier needs 8·S ranks
        // of a multi-server topology).
        for a in Algorithm::ALL {
            for (topo, ranks) in [("910b-8", 8), ("910b-2x8", 16)] {
                if let Some(op) = Primitive::ALL.into_iter().find(|p| a.supports(*p, ranks)) {
                    all.push(Config {
                        algo: AlgoChoice::Fixed(a),
                        op,
                        topo: topo.into(),
                        ranks,
                        ..d.clone()
                    });
                    break;
                }
            }
        }
        for topo in Topology::PRESETS
            .iter()
            .copied()
            .chain(["910b-2x8", "910b-128x8"])
        {
            let n = Topology::preset(topo).unwrap().devices.len();
            for ranks in [2, n / 2, n] {
                all.push(Config {
                    topo: topo.into(),
                    ranks,
                    ..d.clone()
                });
            }
        }
        for dtype in DType::ALL {
            for bytes in [MIN_BYTES, 3 << 20, 1_000_000, MAX_BYTES] {
                let bytes = bytes - bytes % dtype.size_bytes() as u64;
                all.push(Config {
                    dtype,
                    bytes,
                    ..d.clone()
                });
            }
        }
        for redop in ReduceOp::ALL {
            all.push(Config { redop, ..d.clone() });
        }
        for seed in [0, 1, 42, u64::MAX] {
            all.push(Config { seed, ..d.clone() });
        }
        for (op, root) in [(Primitive::Broadcast, 0), (Primitive::Reduce, 7)] {
            all.push(Config {
                op,
                root,
                ..d.clone()
            });
        }
        all
    }

    #[test]
    fn every_field_round_trips_and_the_version_comes_first() {
        for c in all_configs() {
            let q = c.to_query();
            assert!(q.starts_with("v=1&"), "{q}");
            assert_eq!(Config::from_query(&q), (c.clone(), vec![]), "{q}");
        }
    }

    #[test]
    fn legacy_links_without_a_version_are_migrated() {
        let legacy = "op=allreduce&algo=ring&bytes=64MiB&dtype=fp32&ranks=8";
        let (c, e) = Config::from_query(legacy);
        assert!(e.is_empty(), "{e:?}");
        assert_eq!(c.algo, AlgoChoice::Fixed(Algorithm::Ring));
        assert_eq!(c.bytes, 64 << 20);
        assert_eq!(
            Config::from_query(&format!("v=1&{legacy}")),
            (c.clone(), vec![])
        );
        for c in all_configs() {
            let q = c.to_query();
            let v0 = q.strip_prefix("v=1&").unwrap();
            assert_eq!(Config::from_query(v0), (c, vec![]), "{v0}");
        }
        let pairs = vec![("op".to_string(), "allgather".to_string())];
        assert_eq!(migrate(0, pairs.clone()), pairs);
        assert_eq!(migrate(LINK_VERSION, pairs.clone()), pairs);
        assert_eq!(migrate(99, pairs.clone()), pairs);
    }

    #[test]
    fn unknown_versions_and_keys_are_notices_not_errors() {
        for v in ["2", "0", "abc", "-1", "99999999999999999999"] {
            let (c, e) = Config::from_query(&format!("v={v}&op=allgather"));
            assert_eq!(c.op, Primitive::AllGather);
            assert_eq!(e.len(), 1, "{v}: {e:?}");
            assert_eq!(e[0].key, "v");
            assert!(e[0].is_notice());
            assert!(e[0].allowed.contains("allowed: 1..=1"), "{}", e[0]);
        }
        let (c, e) = Config::from_query("v=1&zzz=3&ranks=4&dtype=nope");
        assert_eq!(c.ranks, 4);
        assert_eq!(e.len(), 2);
        assert!(e[0].is_notice() && e[0].key == "zzz" && e[0].allowed == UNKNOWN_KEY);
        assert!(!e[1].is_notice() && e[1].key == "dtype");
    }

    #[test]
    fn every_bad_value_names_key_value_and_allowed() {
        let long = "9".repeat(10_000);
        let cases: Vec<(String, &str, &str)> = vec![
            ("op=7".into(), "op", "allreduce"),
            ("algo=tree%00".into(), "algo", "auto"),
            ("topo=dgx-a100".into(), "topo", "910b-8"),
            ("dtype=fp64".into(), "dtype", "fp32"),
            ("redop=avg".into(), "redop", "sum"),
            ("seed=1.5".into(), "seed", "integer"),
            ("seed=18446744073709551616".into(), "seed", "integer"),
            ("bytes=1e400".into(), "bytes", "KiB"),
            ("bytes=-5".into(), "bytes", "non-negative"),
            ("bytes=0".into(), "bytes", "1 KiB"),
            ("bytes=2GiB".into(), "bytes", "1 GiB"),
            ("bytes=NaN".into(), "bytes", "KiB"),
            (format!("bytes={long}"), "bytes", "1 GiB"),
            ("ranks=1".into(), "ranks", "2..=8"),
            ("ranks=0".into(), "ranks", "2..=8"),
            ("ranks=9".into(), "ranks", "2..=8"),
            ("topo=910b-2x8&ranks=17".into(), "ranks", "2..=16"),
            ("ranks=four".into(), "ranks", "2..=8"),
            ("ranks=%FF%FE".into(), "ranks", "2..=8"),
            ("op=%E0%A4%A".into(), "op", "allreduce"),
            ("op=%zz".into(), "op", "allreduce"),
            (format!("op={}", "é".repeat(10_000)), "op", "allreduce"),
        ];
        for (q, key, allowed) in cases {
            let (c, e) = Config::from_query(&format!("{q}&redop=max"));
            assert_eq!(c.redop, ReduceOp::Max, "the rest applies: {q}");
            let bad: Vec<&ConfigError> = e.iter().filter(|x| !x.is_notice()).collect();
            assert_eq!(bad.len(), 1, "{q}: {e:?}");
            assert_eq!(bad[0].key, key, "{q}");
            assert!(bad[0].allowed.contains(allowed), "{q}: {}", bad[0]);
            assert!(bad[0].value.chars().count() <= 81, "{q}");
            assert!(bad[0].to_string().chars().count() < 400, "{q}");
        }
    }

    #[test]
    fn hostile_values_are_truncated_and_never_panic() {
        let long = "x".repeat(10_000);
        let (_, e) = Config::from_query(&format!("op={long}&bytes=%FF%FE&seed=-1&ranks=%3Cimg%3E"));
        assert_eq!(e.len(), 4);
        assert!(e[0].value.chars().count() <= 81);
    }
}
