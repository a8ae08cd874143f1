//! The configuration of one run, its validation and its URL encoding.
//!
//! URL query keys: `op` (a [`Primitive::name`]: allreduce | reducescatter |
//! allgather | broadcast | reduce | scatter | gather | alltoall | alltoallv |
//! barrier | sendrecv), `algo` (auto or an [`Algorithm::name`]: ring | mesh |
//! rhd | tree | star | pairwise | nb | dbtree | hier | nhr | pipeline), `root` (the root of a rooted
//! primitive, 0..ranks, default 0; written only for rooted primitives or a
//! non-zero root), `topo` (a [`Topology::preset`] name: 910b-8, 910a-8,
//! h100-8, 910b-{S}x8), `bytes` (an integer, or a number
//! with unit B, KB, KiB, MB, MiB, GB, GiB), `dtype` (fp32 | fp16 | bf16 |
//! int32 | int8), `redop` (sum | prod | max | min), `ranks` (2..=devices of
//! the topology), `seed` (0..=2^64-1), `slices` (auto | 1..=256: the cost
//! model's slices per transfer, [`super::cost::estimate_sliced`]; written
//! only when not `auto`).
//!
//! A user-defined machine: `topo=custom` with `topology=` its compact JSON
//! ([`CustomTopology::to_json`], schema in [`super::custom_topology`]), at
//! most [`MAX_TOPOLOGY_PARAM_CHARS`] characters after percent-decoding. A
//! fitted profile the model uses instead of the topology's link figures
//! ([`Profile::apply`]): `profile=` its JSON ([`Profile`]'s serde form; the
//! page writes it without its `rows`), at most [`MAX_PROFILE_PARAM_CHARS`]
//! characters. Both are written last; longer values, invalid JSON, a
//! `topology` without `topo=custom` and `topo=custom` without `topology`
//! are errors naming the key.
//!
//! The what-ifs (written only when on): compression ([`super::compressed`];
//! HCCL has none) `compress` (none | int8 | fp8e4m3 | fp8e5m2, float dtypes
//! only), `block` (32..=4096 elements per scale, default 256), `scale`
//! (fp16 | fp32, the stored scale), `placement` (hop | once; once is
//! AllReduce only), `grad` (normal | heavy | layers: the gradient-like
//! inputs), `compress_min` (a size: smaller messages and fusion buckets
//! are sent uncompressed, [`Config::compresses`]); fusion
//! ([`super::fusion`]) `fusion` (llama3-8b | llama3-70b | COUNTxSIZE,
//! AllReduce only; with compression, the buckets of at least
//! `compress_min` are compressed) and `bucket` (DDP's
//! `bucket_cap_mb` as a size; 0 = one AllReduce per tensor; absent = not
//! given: DDP's default 25 MiB with its small 1 MiB first bucket, which a
//! given `bucket=25MiB` does not make).
//!
//! The degraded machine ([`super::degrade`], written only when set): `slow`
//! (`R:F,...`: rank R at speed factor F, 0.01..=1), `late` (`R:D,...`:
//! rank R starts D µs late, 0..=1000000) and `down` (`A-B,...` the link
//! between devices A and B, `A-port` device A's link to its switch).
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
use super::calibrate::Profile;
use super::collective::{Primitive, MAX_ALLTOALLV_RANKS};
use super::compressed::Placement;
use super::cost::Slices;
use super::custom_topology::{CustomTopology, CUSTOM};
use super::degrade::{self, Degradation};
use super::dtype::{DType, ReduceOp};
use super::quantization::{Compression, GradientShape, ScaleType, Scheme, BLOCK_RANGE};
use super::topology::Topology;
pub use super::units::parse_bytes;
use serde::{Deserialize, Serialize};
use thiserror::Error;

/// Largest message the compression what-if models, bytes (its codec
/// counts elements in `usize`, 32 bits in the browser).
pub const MAX_COMPRESSED_BYTES: u64 = 1 << 30;
/// Parses a `compress_min` value (the link key, the page's field and
/// `cclsim fusion --compress-min`): a size by [`parse_bytes`], 0 ..=
/// [`MAX_COMPRESSED_BYTES`].
///
/// Errors: what is allowed, in words.
pub fn parse_compress_min(v: &str) -> Result<u64, String> {
    match parse_bytes(v.trim()) {
        Ok(b) if b <= MAX_COMPRESSED_BYTES => Ok(b),
        _ => Err("a size from 0 (compress every message) to 1 GiB, e.g. 4MiB: messages and fusion buckets below it are sent uncompressed".into()),
    }
}

/// Largest DDP bucket cap a link may give (`bucket=`), bytes.
pub const MAX_BUCKET_BYTES: u64 = 1 << 30;

/// The `topo` value of the machine a fitted profile measured (a star of
/// its rank count with its link figures; needs `profile=`).
pub const MEASURED: &str = "measured";

/// The link format [`Config::to_query`] writes (its first key, `v=1`).
/// Version 0 is a link without `v`, written before links were versioned.
pub const LINK_VERSION: u32 = 1;

/// The `allowed` text of an unknown key.
pub const UNKNOWN_KEY: &str = "unknown key, ignored";

/// Smallest message the controls offer, bytes (1 KiB).
pub const MIN_BYTES: u64 = super::units::MIN_MESSAGE_BYTES;
/// Largest message the controls offer, bytes (1 GiB).
pub const MAX_BYTES: u64 = super::units::MAX_MESSAGE_BYTES;
/// Largest message the workers execute for real, bytes per rank buffer
/// (128 MiB: 8 ranks then hold 1 GiB in the browser). Larger runs are
/// model-only.
pub const MAX_EXECUTED_BYTES: u64 = 128 << 20;
/// Most ranks the browser executes for real (64: as many as the page
/// draws). They share a few web workers (`runtime::placement`: at most
/// `min(ranks, hardwareConcurrency clamped to 4..=16)` workers, each hosting
/// a contiguous block of ranks). More ranks are model-only.
pub const MAX_EXECUTED_RANKS: usize = 64;
/// Most bytes all rank buffers together may hold in the browser (1 GiB, so
/// 16 MiB per rank at 64 ranks). This also bounds each worker's wasm
/// memory: a worker holds its ranks' buffers (at most 1 GiB / workers, 256
/// MiB on 4 workers) plus a chunk of scratch each, far below wasm32's 4 GiB;
/// the page holds one rank's output at a time while checking it.
pub const MAX_EXECUTED_TOTAL_BYTES: u64 = 1 << 30;

/// Most bytes of all ranks' buffers together in a *compressed* run: its
/// checker runs the compressed reference for every rank on the page's main
/// thread and keeps each rank's reference output (two copies of every
/// rank's buffer at its peak), so it is a quarter of
/// [`MAX_EXECUTED_TOTAL_BYTES`].
pub const MAX_EXECUTED_COMPRESSED_TOTAL_BYTES: u64 = 256 << 20;
/// Longest `topology=` value (compact JSON, after percent-decoding),
/// characters: [`super::custom_topology::MAX_COMPACT_CHARS`] (16 KiB; the
/// percent-encoded link stays far below browsers' URL limits, 2 MB in
/// Chromium).
pub const MAX_TOPOLOGY_PARAM_CHARS: usize = super::custom_topology::MAX_COMPACT_CHARS;
/// Longest `profile=` value (JSON, after percent-decoding), characters. A
/// profile without rows is about 300 characters plus 100 per segment
/// ([`super::calibrate::MAX_SEGMENTS`] at most) and its knots, plus, when
/// the library model was fitted too ([`Profile::physical`]), about 2 700
/// for the machine, the corrections and their 13 × 13 covariance (a
/// 2-node Polaris fit: 4 244 in all). As for `topology=`, 16 KiB: the
/// percent-encoded link stays far below browsers' URL limits.
pub const MAX_PROFILE_PARAM_CHARS: usize = 16 * 1024;
/// Most ranks the measured machine (`topo=measured`) is modelled with
/// (the rank count of a 512-node run of 8 GPUs).
pub const MAX_MEASURED_RANKS: usize = 4096;
/// Most ranks a linked profile may claim (its link conversion uses the
/// ring's step count of that many ranks).
pub const MAX_PROFILE_RANKS: usize = 1 << 16;

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
    /// The collective primitive (the link key and `cclsim --op` call it
    /// `op`, as nccl-tests' binaries do; serde also reads `op`).
    #[serde(alias = "op")]
    pub primitive: Primitive,
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
    /// Slices per transfer in the cost model (`auto` = like the real
    /// library, [`super::cost::Slices`]).
    #[serde(default)]
    pub slices: Slices,
    /// The user-defined topology; `Some` exactly when `topo` is
    /// [`CUSTOM`] (`custom`).
    #[serde(default)]
    pub custom: Option<CustomTopology>,
    /// The fitted profile whose link figures replace the topology's
    /// ([`Profile::apply`]); `None` = the topology's own figures.
    #[serde(default)]
    pub profile: Option<Profile>,
    /// The compression what-if ([`super::compressed`]; HCCL has none):
    /// scheme (`none` = off), block size, scale storage. Float dtypes only.
    #[serde(default)]
    pub compress: Compression,
    /// Where compression applies (`once`: AllReduce only).
    #[serde(default)]
    pub placement: Placement,
    /// The gradient-like inputs of a compressed run.
    #[serde(default = "default_grad")]
    pub grad: GradientShape,
    /// The fusion what-if: the tensors AllReduced after a backward pass, as
    /// written in the link ([`super::fusion::parse_fusion`]); `None` = off.
    #[serde(default)]
    pub fusion: Option<String>,
    /// DDP's bucket cap in bytes for `fusion` (0 = one AllReduce per
    /// tensor); `None` = not given (DDP's default, [`super::fusion::buckets`]).
    #[serde(default)]
    pub bucket: Option<u64>,
    /// With compression: messages (fusion buckets) smaller than this many
    /// bytes are sent uncompressed ("compress only large gradients"); 0 =
    /// compress everything. URL key `compress_min`, 0 ..= 1 GiB.
    #[serde(default)]
    pub compress_min: u64,
    /// Slow ranks, late ranks and failed links (URL keys `slow`, `late`,
    /// `down`; [`super::degrade`]); empty = the healthy machine.
    #[serde(default)]
    pub faults: Degradation,
}

fn default_grad() -> GradientShape {
    GradientShape::Normal
}

impl Default for Config {
    fn default() -> Self {
        Config {
            primitive: Primitive::AllReduce,
            algo: AlgoChoice::Auto,
            topo: "910b-8".into(),
            bytes: 16 << 20,
            dtype: DType::Fp32,
            redop: ReduceOp::Sum,
            ranks: 8,
            seed: 1,
            root: 0,
            slices: Slices::Auto,
            custom: None,
            profile: None,
            compress: Compression::default(),
            placement: Placement::Hop,
            grad: GradientShape::Normal,
            fusion: None,
            bucket: None,
            compress_min: 0,
            faults: Degradation::default(),
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

mod link;
pub use link::{migrate, parse_profile_param, parse_topology_param};

impl Config {
    /// The topology this configuration runs on: the preset `topo`, or the
    /// user-defined one when `topo` is `custom` (without the profile;
    /// [`Profile::apply`] turns it into the profile's figures).
    ///
    /// Errors: a sentence (unknown preset, `custom` without a topology, an
    /// invalid custom topology).
    pub fn topology(&self) -> Result<Topology, String> {
        if self.topo == MEASURED {
            return match &self.profile {
                Some(p) => {
                    let mut q = p.clone();
                    q.ranks = q.ranks.max(self.ranks);
                    Ok(q.topology_at(self.bytes))
                }
                None => Err("topo=measured but no fitted profile was given".into()),
            };
        }
        if self.topo == CUSTOM {
            match &self.custom {
                Some(t) => t.topology().map_err(|e| format!("custom topology: {e}")),
                None => Err("topo=custom but no custom topology was given".into()),
            }
        } else {
            Topology::preset(&self.topo).map_err(|e| e.to_string())
        }
    }

    /// Device count of [`Config::topology`] (`None` if it has none): the
    /// measured machine scales to [`MAX_MEASURED_RANKS`] ranks (or the
    /// profile's own count, if larger).
    pub fn devices(&self) -> Option<usize> {
        if self.topo == MEASURED {
            self.profile
                .as_ref()
                .map(|p| p.ranks.max(MAX_MEASURED_RANKS))
        } else if self.topo == CUSTOM {
            self.custom.as_ref().map(|t| t.devices.len())
        } else {
            Topology::preset_devices(&self.topo)
        }
    }

    /// The rank count a link without `ranks` uses: every device of a preset
    /// or custom topology, the profile's measured ranks on the measured
    /// machine.
    pub fn default_ranks(&self) -> Option<usize> {
        if self.topo == MEASURED {
            self.profile.as_ref().map(|p| p.ranks)
        } else {
            self.devices()
        }
    }

    /// The fusion what-if's tensors, buckets and the bucket the page runs
    /// for real ([`super::fusion::run_bucket`]); `None` without `fusion`
    /// or if it does not parse.
    pub fn fusion_buckets(
        &self,
    ) -> Option<(
        Vec<super::fusion::Tensor>,
        Vec<super::fusion::Bucket>,
        Option<usize>,
    )> {
        use super::fusion;
        let tensors = fusion::parse_fusion(self.fusion.as_deref()?, self.dtype).ok()?;
        let buckets = fusion::buckets(&tensors, self.dtype, self.bucket);
        let run = fusion::run_bucket(
            &buckets,
            fusion::RUN_BUCKET_MAX_BYTES
                .min(MAX_EXECUTED_BYTES)
                .min(MAX_EXECUTED_TOTAL_BYTES / self.ranks.max(1) as u64),
        );
        Some((tensors, buckets, run))
    }

    /// Bytes of the fusion's run bucket (see [`Self::fusion_buckets`]).
    pub fn fusion_run_bytes(&self) -> Option<u64> {
        let (_, buckets, run) = self.fusion_buckets()?;
        Some(buckets[run?].bytes)
    }

    /// Number of elements per rank buffer (`bytes / dtype size`).
    pub fn elems(&self) -> usize {
        (self.bytes / self.dtype.size_bytes() as u64) as usize
    }

    /// Will the workers execute this run, or is it model-only?
    pub fn executable(&self) -> bool {
        self.bytes <= MAX_EXECUTED_BYTES
            && self.ranks <= MAX_EXECUTED_RANKS
            && self.buffer_bytes().saturating_mul(self.ranks as u64) <= self.max_total_bytes()
    }

    /// The cap on all ranks' buffers together for this run:
    /// [`MAX_EXECUTED_COMPRESSED_TOTAL_BYTES`] when compressed, else
    /// [`MAX_EXECUTED_TOTAL_BYTES`].
    pub fn max_total_bytes(&self) -> u64 {
        if !self.compresses(self.bytes) {
            MAX_EXECUTED_TOTAL_BYTES
        } else {
            MAX_EXECUTED_COMPRESSED_TOTAL_BYTES
        }
    }

    /// Bytes of one rank's buffer: the message size `S` for most
    /// primitives, about `2S` with send and receive areas (AlltoAll,
    /// AlltoAllV, SendRecv; [`Primitive::buffer_elems`]), 0 for Barrier;
    /// with `placement=once` compression, the AllGather buffer of every
    /// rank's compressed input (`ranks ·` [`super::compressed::wire_len`]).
    pub fn buffer_bytes(&self) -> u64 {
        if self.compresses(self.bytes) && self.placement == Placement::Once {
            return (self.ranks as u64)
                .saturating_mul(super::compressed::wire_len(&self.compress, self.elems()) as u64)
                .max(self.bytes);
        }
        self.primitive.buffer_elems(self.ranks, self.elems()) as u64
            * self.dtype.size_bytes() as u64
    }

    /// Makes the what-ifs consistent with the rest of the configuration:
    /// the one set of cross-key rules, which [`Self::from_query`] applies to
    /// a link (each adjustment becomes a [`ConfigError`]) and the page to a
    /// control change (a control change can break them). Compression off
    /// for integer dtypes and above [`MAX_COMPRESSED_BYTES`];
    /// `placement=once` only for AllReduce; fusion only for AllReduce; slow
    /// and late ranks only among the run's ranks. Returns what changed:
    /// `(key, value it had, why)`, empty when nothing did.
    pub fn normalize(&mut self) -> Vec<(&'static str, String, String)> {
        let mut changed = Vec::new();
        if self.compress.scheme != Scheme::None && !self.dtype.is_float() {
            changed.push((
                "compress",
                self.compress.scheme.name().to_string(),
                format!(
                    "compression applies to fp32, fp16 and bf16 (dtype is {}); using none",
                    self.dtype
                ),
            ));
            self.compress.scheme = Scheme::None;
        }
        if self.compress.scheme != Scheme::None && self.bytes > MAX_COMPRESSED_BYTES {
            changed.push((
                "compress",
                self.compress.scheme.name().to_string(),
                format!(
                    "the compression what-if models messages up to 1 GiB (bytes is {}); using none",
                    super::units::format_bytes(self.bytes)
                ),
            ));
            self.compress.scheme = Scheme::None;
        }
        if self.placement == Placement::Once && self.primitive != Primitive::AllReduce {
            if self.compress.scheme != Scheme::None {
                changed.push((
                    "placement",
                    "once".to_string(),
                    format!(
                        "once (quantise, AllGather, reduce locally) is defined for AllReduce, not {}; using hop",
                        self.primitive.title()
                    ),
                ));
            }
            self.placement = Placement::Hop;
        }
        if let Some(f) = &self.fusion {
            if self.primitive != Primitive::AllReduce {
                changed.push((
                    "fusion",
                    f.clone(),
                    format!(
                        "fusion buckets AllReduces; set op=allreduce (op is {}); ignored",
                        self.primitive.name()
                    ),
                ));
                self.fusion = None;
            }
        }
        // Slow and late ranks name ranks: drop those the run no longer has.
        let ranks = self.ranks;
        let (slow, late) = (self.faults.slow.len(), self.faults.late.len());
        self.faults.slow.retain(|&(r, _)| r < ranks);
        self.faults.late.retain(|&(r, _)| r < ranks);
        for (key, before, after) in [
            ("slow", slow, self.faults.slow.len()),
            ("late", late, self.faults.late.len()),
        ] {
            if after < before {
                changed.push((
                    key,
                    format!("{} entries", before),
                    format!("only ranks 0..{ranks} exist; the others were dropped"),
                ));
            }
        }
        changed
    }

    /// [`Self::normalize`] for a control change: whether anything changed.
    pub fn normalize_what_ifs(&mut self) -> bool {
        let before = self.clone();
        self.normalize();
        *self != before
    }

    /// Whether a message (or fusion bucket) of `bytes` bytes is compressed:
    /// compression is on and `bytes >= compress_min` (the seed's remedy for
    /// compression jitter, "compress only large gradients"). The one
    /// decision the plan, the fusion view, the page and `cclsim` use.
    pub fn compresses(&self, bytes: u64) -> bool {
        self.compress.scheme != Scheme::None && bytes >= self.compress_min
    }

    /// Why this run is model-only, in English (`cclsim`, tests); `None` if
    /// the workers run it. The page words [`Self::model_only`] itself.
    pub fn model_only_reason(&self) -> Option<String> {
        self.model_only().map(|m| m.to_string())
    }

    /// Why this run is model-only; `None` if the workers run it.
    pub fn model_only(&self) -> Option<ModelOnly> {
        if self.bytes > MAX_EXECUTED_BYTES {
            Some(ModelOnly::Bytes {
                max: MAX_EXECUTED_BYTES,
            })
        } else if self.ranks > MAX_EXECUTED_RANKS {
            Some(ModelOnly::Ranks {
                max: MAX_EXECUTED_RANKS,
            })
        } else if !self.executable() {
            Some(ModelOnly::Buffers {
                cap: self.max_total_bytes(),
                compressed: match (self.compress.scheme, self.placement) {
                    (Scheme::None, _) => None,
                    (_, Placement::Once) => Some(Some((self.ranks, self.buffer_bytes()))),
                    _ => Some(None),
                },
            })
        } else {
            None
        }
    }
}

/// Why a configuration is modelled but not executed in the browser.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ModelOnly {
    /// The message exceeds what a rank may hold (`max` bytes).
    Bytes { max: u64 },
    /// More ranks than the page runs workers for.
    Ranks { max: usize },
    /// All ranks' buffers together exceed `cap` bytes. `compressed`:
    /// `None` uncompressed; `Some(None)` compressed (the page computes a
    /// reference for every rank); `Some(Some((ranks, per_rank)))` with
    /// placement=once, where every rank holds all `ranks` compressed
    /// inputs, `per_rank` bytes.
    Buffers {
        cap: u64,
        compressed: Option<Option<(usize, u64)>>,
    },
}

impl std::fmt::Display for ModelOnly {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        use super::units::format_bytes;
        match *self {
            ModelOnly::Bytes { max } => write!(
                f,
                "messages above {} are modelled, not executed in the browser",
                format_bytes(max)
            ),
            ModelOnly::Ranks { max } => {
                write!(
                    f,
                    "more than {max} ranks are modelled, not executed in the browser"
                )
            }
            ModelOnly::Buffers { cap, compressed } => {
                write!(
                    f,
                    "all ranks' buffers together would exceed {} in the browser; modelled only",
                    format_bytes(cap)
                )?;
                match compressed {
                    None => Ok(()),
                    Some(Some((ranks, per))) => write!(
                        f,
                        " (the cap for compressed runs; with placement=once every rank holds all {ranks} compressed inputs, {} per rank)",
                        format_bytes(per)
                    ),
                    Some(None) => f.write_str(
                        " (the cap for compressed runs, whose reference the page computes for every rank)",
                    ),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compressed_runs_count_their_real_buffers_and_a_lower_cap() {
        // once: every rank holds all 64 compressed inputs: 64 · (S/2 + scales).
        let (c, e) = Config::from_query(
            "topo=910b-8x8&ranks=64&bytes=16MiB&dtype=fp16&compress=int8&placement=once",
        );
        assert_eq!(e, vec![]);
        let w = crate::engine::compressed::wire_len(&c.compress, c.elems()) as u64;
        assert_eq!(c.buffer_bytes(), 64 * w);
        assert!(!c.executable());
        assert!(c.model_only_reason().unwrap().contains("compressed runs"));
        // The compression card's 16 MiB fp16 case on 8 ranks runs (128 MiB in all).
        let (c, _) = Config::from_query("bytes=16MiB&dtype=fp16&compress=int8");
        assert!(c.executable());
        assert_eq!(c.max_total_bytes(), MAX_EXECUTED_COMPRESSED_TOTAL_BYTES);
    }

    #[test]
    fn control_changes_are_normalised_like_links() {
        let (mut c, _) = Config::from_query("dtype=fp16&compress=int8&placement=once");
        c.primitive = Primitive::AllGather;
        assert!(c.normalize_what_ifs());
        assert_eq!(c.placement, Placement::Hop);
        c.dtype = DType::Int32;
        assert!(c.normalize_what_ifs());
        assert_eq!(c.compress.scheme, Scheme::None);
        let (mut f, _) = Config::from_query("dtype=bf16&fusion=llama3-8b");
        assert!(!f.clone().normalize_what_ifs());
        f.primitive = Primitive::Broadcast;
        assert!(f.normalize_what_ifs());
        assert_eq!(f.fusion, None);
        // Both normalised configs round-trip through a link.
        for x in [c, f] {
            assert_eq!(Config::from_query(&x.to_query()), (x.clone(), vec![]));
        }
    }

    #[test]
    fn a_link_and_a_control_change_get_the_same_adjustments() {
        // One set of cross-key rules: what from_query reports for a link is
        // what normalize says for the same configuration reached by controls.
        let link = "op=broadcast&dtype=int32&compress=int8&placement=once&fusion=30x4MiB";
        let (from_link, errors) = Config::from_query(link);
        let got: Vec<(String, String)> = errors
            .iter()
            .map(|e| (e.key.clone(), e.value.clone()))
            .collect();
        assert_eq!(
            got,
            vec![
                ("compress".to_string(), "int8".to_string()),
                ("fusion".to_string(), "30x4MiB".to_string()),
            ],
            "{errors:?}"
        );
        let (mut by_controls, _) =
            Config::from_query("dtype=fp16&compress=int8&placement=once&fusion=30x4MiB");
        by_controls.primitive = Primitive::Broadcast;
        by_controls.dtype = DType::Int32;
        let adjusted = by_controls.normalize();
        let keys: Vec<&str> = adjusted.iter().map(|a| a.0).collect();
        assert_eq!(keys, vec!["compress", "fusion"]);
        for ((_, _, why), e) in adjusted.iter().zip(&errors) {
            assert_eq!(why, &e.allowed);
        }
        assert_eq!(by_controls.placement, Placement::Hop);
        assert_eq!(
            (by_controls.compress.scheme, &by_controls.fusion),
            (from_link.compress.scheme, &from_link.fusion)
        );
    }

    #[test]
    fn up_to_64_ranks_execute_within_the_byte_caps() {
        let (c, e) = Config::from_query("topo=910b-8x8&ranks=64&bytes=16MiB&dtype=fp32");
        assert_eq!(e, vec![]);
        assert!(c.executable(), "64 x 16 MiB = 1 GiB in all");
        assert_eq!(c.model_only_reason(), None);
        let (c, _) = Config::from_query("topo=910b-8x8&ranks=64&bytes=32MiB&dtype=fp32");
        assert!(!c.executable(), "64 x 32 MiB exceeds 1 GiB");
        let (c, _) = Config::from_query("topo=910b-16x8&ranks=65&bytes=1MiB");
        assert!(!c.executable());
        assert_eq!(
            c.model_only_reason().as_deref(),
            Some("more than 64 ranks are modelled, not executed in the browser")
        );
    }

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
            primitive: Primitive::AllGather,
            algo: AlgoChoice::Fixed(Algorithm::Ring),
            topo: "910b-8".into(),
            bytes: 3 << 20,
            dtype: DType::Bf16,
            redop: ReduceOp::Max,
            ranks: 5,
            seed: u64::MAX,
            root: 0,
            ..Config::default()
        };
        assert_eq!(Config::from_query(&c.to_query()), (c.clone(), vec![]));
        assert_eq!(Config::from_query(&format!("?{}", c.to_query())).0, c);
    }

    #[test]
    fn invalid_values_name_key_value_and_allowed_and_the_rest_applies() {
        let (c, e) =
            Config::from_query("op=allgather&ranks=9&bytes=1e400&dtype=fp64&algo=mesh&foo=1");
        assert_eq!(c.primitive, Primitive::AllGather);
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
        // What runs instead is the reader's to say (the page shows the
        // configuration's algo=auto; cclsim refuses the flag), not this
        // message's.
        assert!(
            e[0].allowed.ends_with(
                "applicable: auto, ring, mesh, rhd, nb, dbtree, hier, hier-nhr, nhr, pipeline"
            ),
            "{}",
            e[0]
        );
    }

    #[test]
    fn alltoallv_says_its_rank_limit_once() {
        // AlltoAllV runs on at most MAX_ALLTOALLV_RANKS (16) ranks: said on
        // `ranks`, once; the algorithm then applies.
        let (c, e) = Config::from_query("op=alltoallv&algo=mesh&topo=910b-4x8&ranks=32");
        assert_eq!(c.ranks, 16);
        assert_eq!(c.algo, AlgoChoice::Fixed(Algorithm::Mesh));
        assert_eq!(e.len(), 1, "{e:?}");
        assert_eq!(e[0].key, "ranks");
        assert!(
            e[0].allowed.starts_with("AlltoAllV runs on 2..=16 ranks"),
            "{}",
            e[0]
        );
        // Without ranks: all 32 devices are the default, limited the same way.
        let (c, e) = Config::from_query("op=alltoallv&topo=910b-4x8");
        assert_eq!(c.ranks, 16);
        assert_eq!(e.len(), 1, "{e:?}");
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
            all.push(Config {
                primitive: op,
                ..d.clone()
            });
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
                        primitive: op,
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
                let es = dtype.size_bytes() as u64;
                let bytes = (bytes - bytes % es).max(es);
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
                primitive: op,
                root,
                ..d.clone()
            });
        }
        // A user-defined topology (every rank count), a fitted profile on a
        // preset and on the custom topology.
        let custom = CustomTopology::parse(CustomTopology::EXAMPLE).unwrap();
        for ranks in [2, 3, 4] {
            all.push(Config {
                topo: CUSTOM.into(),
                custom: Some(custom.clone()),
                ranks,
                ..d.clone()
            });
        }
        all.push(Config {
            profile: Some(test_profile()),
            ..d.clone()
        });
        // The what-ifs.
        for (scheme, block, scale, placement, grad) in [
            (
                Scheme::Int8,
                256,
                ScaleType::Fp16,
                Placement::Hop,
                GradientShape::Normal,
            ),
            (
                Scheme::Fp8e4m3,
                32,
                ScaleType::Fp32,
                Placement::Once,
                GradientShape::HeavyTailed,
            ),
            (
                Scheme::Fp8e5m2,
                4096,
                ScaleType::Fp16,
                Placement::Hop,
                GradientShape::Layered,
            ),
        ] {
            all.push(Config {
                dtype: DType::Fp16,
                bytes: 1 << 20,
                compress: Compression {
                    scheme,
                    block,
                    scale,
                },
                placement,
                grad,
                ..d.clone()
            });
        }
        for (fusion, bucket) in [
            ("llama3-8b", Some(25 << 20)),
            ("30x4MiB", Some(0)),
            ("llama3-70b", None),
        ] {
            all.push(Config {
                dtype: DType::Bf16,
                fusion: Some(fusion.into()),
                bucket,
                ..d.clone()
            });
        }
        all.push(Config {
            topo: CUSTOM.into(),
            custom: Some(custom),
            ranks: 4,
            profile: Some(test_profile()),
            ..d.clone()
        });
        all
    }

    /// A two-segment AllReduce profile with awkward floats (exact f64
    /// round trip through the link).
    fn test_profile() -> Profile {
        use crate::engine::calibrate::Segment;
        use crate::engine::formats::{Collective, Tool};
        Profile {
            source: "pasted log, table at line 7 & more?=".into(),
            tool: Tool::NcclTests,
            collective: Some(Collective::AllReduce),
            ranks: 8,
            physical: None,
            alpha_us: 25.0 / 3.0,
            algbw_gbps: 0.1 + 0.2,
            busbw_gbps: (0.1 + 0.2) * 1.75,
            link_alpha_us: 25.0 / 3.0 / 14.0,
            segments: vec![
                Segment {
                    first_bytes: 8,
                    last_bytes: 65536,
                    alpha_us: 12.345678901234567,
                    algbw_gbps: 3.3333333333333335,
                },
                Segment {
                    first_bytes: 131072,
                    last_bytes: 1 << 30,
                    alpha_us: 25.0 / 3.0,
                    algbw_gbps: 0.1 + 0.2,
                },
            ],
            rows: vec![],
            knots: vec![],
            median_rel_err: 0.012345,
            max_rel_err: 0.0567,
        }
    }

    #[test]
    fn custom_topology_and_profile_links_reproduce_the_same_model() {
        let c = all_configs()
            .into_iter()
            .rfind(|c| c.custom.is_some() && c.profile.is_some())
            .unwrap();
        let q = c.to_query();
        assert!(q.contains("&topo=custom&"), "{q}");
        assert!(
            q.contains("&topology=%7B%22name%22%3A%224-gpu-ring%22"),
            "{q}"
        );
        assert!(q.contains("&profile=%7B%22source%22"), "{q}");
        let (back, e) = Config::from_query(&q);
        assert!(e.is_empty(), "{e:?}");
        assert_eq!(back, c);
        let (t1, t2) = (c.topology().unwrap(), back.topology().unwrap());
        assert_eq!(t1, t2);
        assert_eq!(t1.devices.len(), 4);
        let p = back.profile.as_ref().unwrap();
        for bytes in [1u64 << 10, 100_000, 3 << 20, 1 << 30] {
            assert_eq!(
                p.predict_us(bytes).to_bits(),
                test_profile().predict_us(bytes).to_bits()
            );
        }
        assert_eq!(p.apply(&t2).unwrap(), test_profile().apply(&t1).unwrap());
        // A custom topology's ranks are checked against its own devices.
        let (c2, e) = Config::from_query(&format!("{q}&ranks=5"));
        assert_eq!(c2.ranks, 4);
        assert_eq!(e.len(), 1);
        assert!(e[0].allowed.contains("2..=4"), "{}", e[0]);
        // Without ranks, the default 8 is capped to the 4 devices.
        let topo_only = format!(
            "topo=custom&topology={}",
            form_urlencoded::byte_serialize(c.custom.as_ref().unwrap().to_json().as_bytes())
                .collect::<String>()
        );
        let (c3, e) = Config::from_query(&topo_only);
        assert!(e.is_empty(), "{e:?}");
        assert_eq!((c3.ranks, c3.devices()), (4, Some(4)));
    }

    #[test]
    fn bad_topology_and_profile_values_name_the_key_and_fall_back() {
        let long = "x".repeat(MAX_TOPOLOGY_PARAM_CHARS + 1);
        let cases: Vec<(String, &str, &str, &str)> = vec![
            ("topo=custom".into(), "topology", "topo=custom needs topology=", "910b-8"),
            ("topo=custom&topology=%7B".into(), "topology", "not JSON", "910b-8"),
            (
                "topo=custom&topology=%7B%22devices%22%3A%5B%7B%22id%22%3A%22a%22%7D%5D%2C%22links%22%3A%5B%5D%7D".into(),
                "topology",
                "devices: 1 entries — 2..=64 entries",
                "910b-8",
            ),
            (format!("topo=custom&topology={long}"), "topology", "at most 16384 characters (this one has 16385)", "910b-8"),
            ("topology=%7B%7D".into(), "topology", "read only with topo=custom", "910b-8"),
            ("topo=910a-8&topology=%7B%7D".into(), "topology", "read only with topo=custom (topo is 910a-8)", "910a-8"),
            ("profile=%7B".into(), "profile", "a fitted profile as JSON", "910b-8"),
            (format!("profile={}", "y".repeat(16385)), "profile", "at most 16384 characters (this one has 16385)", "910b-8"),
        ];
        for (q, key, allowed, topo) in cases {
            let (c, e) = Config::from_query(&format!("{q}&redop=max"));
            assert_eq!(c.redop, ReduceOp::Max, "the rest applies: {q}");
            assert_eq!(c.topo, topo, "{q}");
            assert!(c.custom.is_none() && c.profile.is_none(), "{q}");
            assert_eq!(e.len(), 1, "{q}: {e:?}");
            assert_eq!(e[0].key, key, "{q}");
            assert!(!e[0].is_notice());
            assert!(e[0].allowed.contains(allowed), "{q}: {}", e[0]);
            assert!(e[0].value.chars().count() <= 81, "{q}");
        }
        // Profiles that parse but cannot drive the model.
        let mut p = test_profile();
        p.ranks = 1;
        let mut q = test_profile();
        q.segments.reverse();
        let mut r = test_profile();
        r.ranks = MAX_PROFILE_RANKS + 1;
        let mut s = test_profile();
        s.segments[0].algbw_gbps = 0.0;
        for (bad, why) in [
            (p, "ranks must be at least 2"),
            (q, "increasing, non-overlapping"),
            (r, "2..=65536 ranks"),
            (s, "algbw_gbps"),
        ] {
            let e = parse_profile_param(&serde_json::to_string(&bad).unwrap()).unwrap_err();
            assert!(e.contains(why), "{e}");
        }
    }

    #[test]
    fn hostile_topology_and_profile_values_never_panic() {
        for v in [
            "%00",
            "%FF%FE",
            "null",
            "[]",
            "1e999",
            "%7B%22devices%22%3A1%7D",
            "%7B%22segments%22%3A%5B%5D%7D",
            "%22%5Cud800%22",
            "-",
            "%5B%5B%5B%5B%5B%5B%5B%5B%5B%5B",
        ] {
            for q in [format!("topo=custom&topology={v}"), format!("profile={v}")] {
                let (c, e) = Config::from_query(&q);
                assert_eq!(c.topo, "910b-8", "{q}");
                assert_eq!(e.len(), 1, "{q}: {e:?}");
                assert!(e[0].to_string().chars().count() < 700, "{q}: {}", e[0]);
            }
        }
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
            assert_eq!(c.primitive, Primitive::AllGather);
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
            ("redop=mean".into(), "redop", "sum"),
            ("seed=1.5".into(), "seed", "integer"),
            ("seed=18446744073709551616".into(), "seed", "integer"),
            ("bytes=1e400".into(), "bytes", "KiB"),
            ("bytes=-5".into(), "bytes", "non-negative"),
            ("bytes=0".into(), "bytes", "from 1 B to 16 GiB"),
            ("bytes=17GiB".into(), "bytes", "from 1 B to 16 GiB"),
            ("bytes=NaN".into(), "bytes", "KiB"),
            (format!("bytes={long}"), "bytes", "16 GiB"),
            ("ranks=1".into(), "ranks", "2..=8"),
            ("ranks=0".into(), "ranks", "2..=8"),
            ("ranks=9".into(), "ranks", "2..=8"),
            ("topo=910b-2x8&ranks=17".into(), "ranks", "2..=16"),
            ("ranks=four".into(), "ranks", "2..=8"),
            ("ranks=%FF%FE".into(), "ranks", "2..=8"),
            ("op=%E0%A4%A".into(), "op", "allreduce"),
            ("op=%zz".into(), "op", "allreduce"),
            (format!("op={}", "é".repeat(10_000)), "op", "allreduce"),
            ("compress=int4".into(), "compress", "int8"),
            ("compress=int8&dtype=int32".into(), "compress", "fp16"),
            ("compress=int8&block=16".into(), "block", "32..=4096"),
            ("compress=int8&block=5000".into(), "block", "32..=4096"),
            ("compress=int8&scale=bf16".into(), "scale", "fp16, fp32"),
            (
                "compress=int8&placement=twice".into(),
                "placement",
                "hop, once",
            ),
            (
                "compress=int8&placement=once&op=allgather".into(),
                "placement",
                "AllReduce",
            ),
            ("compress=int8&grad=uniform".into(), "grad", "normal"),
            ("fusion=llama4".into(), "fusion", "llama3-8b"),
            (
                "fusion=llama3-8b&op=broadcast".into(),
                "fusion",
                "op=allreduce",
            ),
            (
                "compress=int8&compress_min=2GiB".into(),
                "compress_min",
                "0 (compress every message) to 1 GiB",
            ),
            (
                "compress=int8&compress_min=lots".into(),
                "compress_min",
                "e.g. 4MiB",
            ),
            ("fusion=llama3-8b&bucket=2GiB".into(), "bucket", "25MiB"),
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

    #[test]
    fn slices_round_trip_and_errors_name_key_value_allowed() {
        // Default auto: not written, so older links read the same.
        assert_eq!(Config::default().slices, Slices::Auto);
        assert!(!Config::default().to_query().contains("slices"));
        for k in [1u32, 8, 256] {
            let c = Config {
                slices: Slices::Fixed(k),
                ..Config::default()
            };
            let q = c.to_query();
            assert!(q.contains(&format!("&slices={k}")), "{q}");
            assert_eq!(Config::from_query(&q), (c, vec![]));
        }
        let (c, e) = Config::from_query("v=1&slices=auto");
        assert_eq!((c.slices, e.len()), (Slices::Auto, 0));
        for bad in ["0", "257", "many", "-3", "2.5"] {
            let (c, e) = Config::from_query(&format!("v=1&slices={bad}&ranks=4"));
            assert_eq!(c.slices, Slices::Auto, "{bad}");
            assert_eq!(c.ranks, 4);
            assert_eq!(e.len(), 1, "{bad}: {e:?}");
            assert_eq!(e[0].key, "slices");
            assert_eq!(e[0].value, bad);
            assert_eq!(e[0].allowed, "auto or an integer 1..=256");
            assert_eq!(e[0].severity, Severity::Error);
        }
    }
}
