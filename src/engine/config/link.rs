//! The link codec: a [`Config`] to and from a URL query string
//! ([`Config::from_query`], [`Config::to_query`]), old links rewritten by
//! [`migrate`], and the two JSON-valued keys (`topology=`, `profile=`).
//! The keys, their values and what is allowed are in the parent
//! module's doc ([`super`]).

use super::*;

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

/// Decodes a `topology=` value: at most [`MAX_TOPOLOGY_PARAM_CHARS`]
/// characters, then [`CustomTopology::parse`].
///
/// Errors: what is allowed, naming the offending field of the JSON.
pub fn parse_topology_param(v: &str) -> Result<CustomTopology, String> {
    let n = v.chars().count();
    if n > MAX_TOPOLOGY_PARAM_CHARS {
        return Err(format!(
            "a compact JSON topology of at most {MAX_TOPOLOGY_PARAM_CHARS} characters (this one has {n})"
        ));
    }
    CustomTopology::parse(v).map_err(|e| format!("a valid topology JSON; {e}"))
}

/// Decodes a `profile=` value: at most [`MAX_PROFILE_PARAM_CHARS`]
/// characters of [`Profile`] JSON that passes [`Profile::validate`], with
/// 1..=[`crate::engine::calibrate::MAX_SEGMENTS`] segments in size order and
/// 2..=[`MAX_PROFILE_RANKS`] ranks.
///
/// Errors: what is allowed.
pub fn parse_profile_param(v: &str) -> Result<Profile, String> {
    let n = v.chars().count();
    if n > MAX_PROFILE_PARAM_CHARS {
        return Err(format!(
            "a profile JSON of at most {MAX_PROFILE_PARAM_CHARS} characters (this one has {n})"
        ));
    }
    let p: Profile = serde_json::from_str(v)
        .map_err(|e| format!("a fitted profile as JSON (cclsim fit's format): {e}"))?;
    p.validate()
        .map_err(|e| format!("a valid fitted profile: {e}"))?;
    if p.ranks > MAX_PROFILE_RANKS {
        return Err(format!(
            "a profile of 2..={MAX_PROFILE_RANKS} ranks (this one has {})",
            p.ranks
        ));
    }
    let max = crate::engine::calibrate::MAX_SEGMENTS;
    if p.segments.len() > max
        || p.segments
            .windows(2)
            .any(|w| w[0].last_bytes >= w[1].first_bytes)
        || p.segments.iter().any(|s| s.first_bytes > s.last_bytes)
    {
        return Err(format!(
            "a profile with 1..={max} segments in increasing, non-overlapping size ranges"
        ));
    }
    // What the page writes back must fit too (`1e5` is written `100000.0`).
    let again = serde_json::to_string(&p).map_or(usize::MAX, |j| j.chars().count());
    if again > MAX_PROFILE_PARAM_CHARS {
        return Err(format!(
            "a profile JSON of at most {MAX_PROFILE_PARAM_CHARS} characters as the page writes it (this one has {again})"
        ));
    }
    Ok(p)
}

/// What a link got wrong, in the order the reader met it: the list
/// [`Config::from_query`] returns. Keys and values are shortened here, once,
/// so no stage can forget to.
#[derive(Default)]
struct Errors(Vec<ConfigError>);

impl Errors {
    /// An invalid value: the key keeps its default (or what the message says).
    fn bad(&mut self, key: &str, value: &str, allowed: String) {
        self.push(key, value, allowed, Severity::Error);
    }

    /// Something ignored that loses nothing the page understands.
    fn note(&mut self, key: &str, value: &str, allowed: String) {
        self.push(key, value, allowed, Severity::Notice);
    }

    fn push(&mut self, key: &str, value: &str, allowed: String, severity: Severity) {
        self.0.push(ConfigError {
            key: shorten(key),
            value: shorten(value),
            allowed,
            severity,
        });
    }
}

/// The raw values of the keys whose meaning depends on other keys (ranks on
/// topo, root on ranks, bytes on dtype, ...). A link may give its keys in
/// any order, so these are held until every key has been seen and then read
/// in dependency order. A repeated key keeps its last value; the faults keep
/// every value, in link order, as each names its own rank.
#[derive(Default)]
struct Deferred {
    topology: Option<String>,
    profile: Option<String>,
    bytes: Option<String>,
    ranks: Option<String>,
    root: Option<String>,
    fusion: Option<String>,
    bucket: Option<String>,
    faults: Vec<(String, String)>,
}

impl Deferred {
    /// Holds `value` if `key` is one of the dependent keys; false otherwise.
    fn hold(&mut self, key: &str, value: &str) -> bool {
        let slot = match key {
            "topology" => &mut self.topology,
            "profile" => &mut self.profile,
            "bytes" => &mut self.bytes,
            "ranks" => &mut self.ranks,
            "root" => &mut self.root,
            "fusion" => &mut self.fusion,
            "bucket" => &mut self.bucket,
            "slow" | "late" | "down" => {
                self.faults.push((key.to_string(), value.to_string()));
                return true;
            }
            _ => return false,
        };
        *slot = Some(value.to_string());
        true
    }
}

/// The link version a query declares (`v=`), 0 for a link older than `v`.
/// An unknown version (a newer page's link) is read as the current one,
/// with a notice, rather than refused: most of its keys still mean the same.
fn link_version(pairs: &[(String, String)], errors: &mut Errors) -> u32 {
    match pairs.iter().find(|(k, _)| k == "v") {
        None => 0,
        Some((_, v)) => match v.trim().parse::<u32>() {
            Ok(n) if (1..=LINK_VERSION).contains(&n) => n,
            _ => {
                errors.note(
                    "v",
                    v,
                    format!("unknown link version; allowed: 1..={LINK_VERSION}; read as version {LINK_VERSION}"),
                );
                LINK_VERSION
            }
        },
    }
}

impl Config {
    /// Decodes a URL query string (with or without the leading `?`).
    /// Returns the configuration (defaults for missing or invalid keys) and
    /// one [`ConfigError`] per invalid value or unknown key.
    ///
    /// Keys that stand alone are read in link order; the rest are held and
    /// read afterwards, each after the keys it depends on, so a link means
    /// the same whatever order its keys come in.
    pub fn from_query(query: &str) -> (Config, Vec<ConfigError>) {
        let mut errors = Errors::default();
        let q = query.strip_prefix('?').unwrap_or(query);
        let pairs: Vec<(String, String)> =
            form_urlencoded::parse(q.as_bytes()).into_owned().collect();
        let version = link_version(&pairs, &mut errors);
        let mut c = Config::default();
        let mut later = Deferred::default();
        for (k, v) in &migrate(version, pairs) {
            c.read_key(k, v.trim(), &mut later, &mut errors);
        }
        c.read_machine(later.topology, later.profile, &mut errors);
        c.read_ranks(later.ranks, &mut errors);
        c.read_rank_keys(later.root, later.faults, &mut errors);
        c.read_sizes(later.bytes, later.bucket, later.fusion, &mut errors);
        // The what-ifs depend on op, dtype and ranks: the same rules as a
        // control change, each adjustment named.
        for (key, value, why) in c.normalize() {
            errors.bad(key, &value, why);
        }
        c.check_algo(&mut errors);
        (c, errors.0)
    }

    /// Reads one key of a link: sets it if it stands alone, holds it in
    /// `later` if it depends on others, and reports an invalid value or an
    /// unknown key. `v` is handled by [`link_version`] before any key.
    fn read_key(&mut self, key: &str, v: &str, later: &mut Deferred, errors: &mut Errors) {
        if key == "v" || later.hold(key, v) {
            return;
        }
        match self
            .set_run_key(key, v)
            .or_else(|| self.set_compression_key(key, v))
        {
            Some(Ok(())) => {}
            Some(Err(allowed)) => errors.bad(key, v, allowed),
            None => errors.note(key, v, UNKNOWN_KEY.into()),
        }
    }

    /// Sets one of the keys that say what runs and where (`op`, `algo`,
    /// `topo`, `dtype`, `redop`, `seed`, `slices`), each valid on its own.
    /// Whether they fit together (an algorithm for the op, a topology's
    /// JSON) is checked once every key is read.
    ///
    /// Returns `None` for any other key, `Some(Err(allowed))` for an invalid
    /// value (the field keeps its value).
    fn set_run_key(&mut self, key: &str, v: &str) -> Option<Result<(), String>> {
        let set = match key {
            "op" => Primitive::from_name(v)
                .map(|p| self.primitive = p)
                .ok_or_else(|| {
                    format!(
                        "one of {} (nccl-tests' all_reduce, all_gather, reduce_scatter, ... too)",
                        Primitive::ALL.map(|p| p.name()).join(", ")
                    )
                }),
            "algo" => AlgoChoice::from_name(v)
                .map(|a| self.algo = a)
                .ok_or_else(|| {
                    format!(
                        "one of auto, {}",
                        Algorithm::ALL.map(|a| a.name()).join(", ")
                    )
                }),
            "topo" => {
                if Topology::preset_devices(v).is_some() || v == CUSTOM || v == MEASURED {
                    self.topo = v.to_string();
                    Ok(())
                } else {
                    Err(format!(
                        "one of {}, 910b-{{S}}x8 (S = 2..=1024), custom (with topology=<JSON>) or measured (with profile=<JSON>)",
                        Topology::PRESETS.join(", ")
                    ))
                }
            }
            "dtype" => DType::from_name(v)
                .map(|d| self.dtype = d)
                .ok_or_else(|| "one of fp32, fp16, bf16, int32, int8".into()),
            "redop" => ReduceOp::from_name(v)
                .map(|o| self.redop = o)
                .ok_or_else(|| {
                    "one of sum, prod, max, min, avg (avg: NCCL's ncclAvg; HCCL has none)".into()
                }),
            "seed" => v
                .parse::<u64>()
                .map(|s| self.seed = s)
                .map_err(|_| "an integer 0..=18446744073709551615".into()),
            "slices" => Slices::parse(v).map(|x| self.slices = x),
            _ => return None,
        };
        Some(set)
    }

    /// Sets one of the compression what-if's keys (`compress`, `block`,
    /// `scale`, `placement`, `grad`, `compress_min`). They are read whatever
    /// the scheme, so a link that turns compression on later keeps them;
    /// whether they apply to the op is [`Config::normalize`]'s to say.
    ///
    /// Returns `None` for any other key, `Some(Err(allowed))` for an invalid
    /// value (the field keeps its value).
    fn set_compression_key(&mut self, key: &str, v: &str) -> Option<Result<(), String>> {
        let set = match key {
            "compress" => Scheme::from_name(v)
                .map(|x| self.compress.scheme = x)
                .ok_or_else(|| format!("one of {}", Scheme::ALL.map(|x| x.name()).join(", "))),
            "block" => match v.parse::<usize>() {
                Ok(b) if BLOCK_RANGE.contains(&b) => {
                    self.compress.block = b;
                    Ok(())
                }
                _ => Err(format!(
                    "an integer {}..={} (elements per scale)",
                    BLOCK_RANGE.start(),
                    BLOCK_RANGE.end()
                )),
            },
            "scale" => match v {
                "fp16" => {
                    self.compress.scale = ScaleType::Fp16;
                    Ok(())
                }
                "fp32" => {
                    self.compress.scale = ScaleType::Fp32;
                    Ok(())
                }
                _ => Err("one of fp16, fp32 (how each block's scale is stored)".into()),
            },
            "placement" => Placement::from_name(v)
                .map(|x| self.placement = x)
                .ok_or_else(|| "one of hop, once".into()),
            "grad" => GradientShape::from_name(v)
                .map(|x| self.grad = x)
                .ok_or_else(|| {
                    format!("one of {}", GradientShape::ALL.map(|x| x.name()).join(", "))
                }),
            "compress_min" => parse_compress_min(v).map(|b| self.compress_min = b),
            _ => return None,
        };
        Some(set)
    }

    /// Reads the machine's JSON keys once `topo` is known: `topology=` only
    /// means something with `topo=custom`, and `topo=measured` is only a
    /// machine with a valid `profile=`. A `topo` left without its JSON falls
    /// back to the default machine rather than a machine nobody described.
    fn read_machine(
        &mut self,
        topology: Option<String>,
        profile: Option<String>,
        errors: &mut Errors,
    ) {
        match (self.topo == CUSTOM, topology) {
            (true, Some(v)) => match parse_topology_param(&v) {
                Ok(t) => self.custom = Some(t),
                Err(why) => {
                    errors.bad(
                        "topology",
                        &v,
                        format!("{why}; using {}", Config::default().topo),
                    );
                    self.topo = Config::default().topo;
                }
            },
            (true, None) => {
                errors.bad(
                    "topology",
                    "",
                    format!(
                        "topo=custom needs topology=<compact JSON> (schema: docs/custom-topology.md); using {}",
                        Config::default().topo
                    ),
                );
                self.topo = Config::default().topo;
            }
            (false, Some(v)) => errors.bad(
                "topology",
                &v,
                format!(
                    "read only with topo=custom (topo is {}); ignored",
                    self.topo
                ),
            ),
            (false, None) => {}
        }
        // profile stands alone: it is read whatever topo is.
        if let Some(v) = profile {
            match parse_profile_param(&v) {
                Ok(p) => self.profile = Some(p),
                Err(why) => errors.bad("profile", &v, why),
            }
        }
        if self.topo == MEASURED && self.profile.is_none() {
            errors.bad(
                "topo",
                MEASURED,
                format!(
                    "measured is the machine of a fitted profile; give profile=<JSON>; using {}",
                    Config::default().topo
                ),
            );
            self.topo = Config::default().topo;
        }
    }

    /// Reads `ranks` once the machine is known, since the machine bounds it
    /// and, without `ranks`, gives it (its own device count, or a profile's
    /// measured ranks). Then applies AlltoAllV's own limit, which depends on
    /// the op and the ranks together.
    fn read_ranks(&mut self, ranks: Option<String>, errors: &mut Errors) {
        if let Some(v) = ranks {
            let devices = self.devices().unwrap_or(8);
            match v.parse::<usize>() {
                Ok(n) if (2..=devices).contains(&n) => self.ranks = n,
                _ => {
                    // The default may exceed a small custom topology.
                    self.ranks = self.ranks.min(devices);
                    errors.bad(
                        "ranks",
                        &v,
                        format!(
                            "an integer 2..={devices} (topology {} has {devices} devices)",
                            self.topo
                        ),
                    )
                }
            }
        } else if let Some(n) = self.default_ranks() {
            self.ranks = n;
        }
        // AlltoAllV's per-pair counts make n² blocks: one limit, said here.
        if self.primitive == Primitive::AlltoAllV && self.ranks > MAX_ALLTOALLV_RANKS {
            errors.bad(
                "ranks",
                &self.ranks.to_string(),
                format!(
                    "AlltoAllV runs on 2..={MAX_ALLTOALLV_RANKS} ranks (its per-pair counts make n² blocks); using {MAX_ALLTOALLV_RANKS}"
                ),
            );
            self.ranks = MAX_ALLTOALLV_RANKS;
        }
    }

    /// Reads the keys that name a rank (`root`; the faults `slow`, `late`,
    /// `down`) once the number of ranks is final, so a link cannot name a
    /// rank that does not run.
    fn read_rank_keys(
        &mut self,
        root: Option<String>,
        faults: Vec<(String, String)>,
        errors: &mut Errors,
    ) {
        if let Some(v) = root {
            match v.parse::<usize>() {
                Ok(r) if r < self.ranks => self.root = r,
                _ => errors.bad(
                    "root",
                    &v,
                    format!(
                        "an integer 0..={} (a rank; ranks={})",
                        self.ranks - 1,
                        self.ranks
                    ),
                ),
            }
        }
        for (k, v) in faults {
            if let Err(allowed) = self.faults.set(&k, &v, self.ranks) {
                errors.bad(&k, &v, allowed);
            }
        }
    }

    /// Reads the size keys (`bytes`, `bucket`, `fusion`) once `op`, `dtype`
    /// and `ranks` are final: `bytes` must be whole elements of the dtype,
    /// and a fusion's buckets depend on the dtype, the bucket cap and the
    /// ranks. A link with a fusion but no `bytes` runs the bucket the page
    /// runs for real, so the fusion and the run show the same message.
    fn read_sizes(
        &mut self,
        bytes: Option<String>,
        bucket: Option<String>,
        fusion: Option<String>,
        errors: &mut Errors,
    ) {
        let bytes_given = bytes.is_some();
        if let Some(v) = bytes {
            match crate::engine::units::message_bytes(&v, self.dtype) {
                Ok(b) => self.bytes = b,
                Err((why, fix)) => {
                    if let Some(b) = fix {
                        self.bytes = b;
                    }
                    errors.bad("bytes", &v, why)
                }
            }
        }
        if let Some(v) = bucket {
            match parse_bytes(&v) {
                Ok(b) if b <= MAX_BUCKET_BYTES => self.bucket = Some(b),
                _ => errors.bad(
                    "bucket",
                    &v,
                    "a size from 0 (one AllReduce per tensor) to 1 GiB, e.g. 25MiB (without bucket: DDP's default)".into(),
                ),
            }
        }
        let Some(v) = fusion.filter(|v| v != "none") else {
            return;
        };
        if crate::engine::fusion::parse_fusion(&v, self.dtype).is_err() {
            errors.bad(
                "fusion",
                &v,
                "none, llama3-8b, llama3-70b, or COUNTxSIZE with COUNT 1..=10000 and SIZE up to 1 GiB (e.g. 30x4MiB)".into(),
            );
            return;
        }
        self.fusion = Some(v);
        // Fusion is AllReduce only ([`Config::normalize`] drops it otherwise).
        if !bytes_given && self.primitive == Primitive::AllReduce {
            if let Some(b) = self.fusion_run_bytes() {
                self.bytes = b;
            }
        }
    }

    /// Checks `algo` against the final op and ranks: an algorithm that does
    /// not implement the primitive is named, and auto runs instead, so a
    /// link never fails to run over its algorithm.
    fn check_algo(&mut self, errors: &mut Errors) {
        let AlgoChoice::Fixed(a) = self.algo else {
            return;
        };
        if a.supports(self.primitive, self.ranks) {
            return;
        }
        let names: Vec<&str> = Algorithm::applicable(self.primitive, self.ranks)
            .iter()
            .map(|x| x.name())
            .collect();
        // No algorithm at all (AlltoAllV above MAX_ALLTOALLV_RANKS): say
        // "none", not a dangling "auto, ". What runs instead is the reader's
        // to say (the page: "used algo=auto" from the configuration; cclsim
        // refuses the flag).
        let applicable = if names.is_empty() {
            "none".to_string()
        } else {
            format!("auto, {}", names.join(", "))
        };
        errors.bad(
            "algo",
            a.name(),
            format!(
                "{} does not implement {} on {} ranks; applicable: {applicable}",
                a.name(),
                self.primitive.title(),
                self.ranks,
            ),
        );
        self.algo = AlgoChoice::Auto;
    }

    /// Encodes every field as a URL query string (without `?`), the version
    /// first (`v=1`), then a fixed key order; `from_query(to_query(c)) ==
    /// (c, [])`.
    pub fn to_query(&self) -> String {
        let mut q = form_urlencoded::Serializer::new(String::new())
            .append_pair("v", &LINK_VERSION.to_string())
            .append_pair("op", self.primitive.name())
            .append_pair("algo", self.algo.name())
            .append_pair("topo", &self.topo)
            .append_pair("bytes", &self.bytes.to_string())
            .append_pair("dtype", self.dtype.name())
            .append_pair("redop", self.redop.name())
            .append_pair("ranks", &self.ranks.to_string())
            .append_pair("seed", &self.seed.to_string())
            .finish();
        if self.primitive.rooted() || self.root != 0 {
            q.push_str(&format!("&root={}", self.root));
        }
        if self.slices != Slices::Auto {
            q.push_str(&format!("&slices={}", self.slices.name()));
        }
        let mut what_if = form_urlencoded::Serializer::new(String::new());
        for k in degrade::KEYS {
            if let Some(v) = self.faults.value(k) {
                what_if.append_pair(k, &v);
            }
        }
        if self.compress.scheme != Scheme::None {
            what_if
                .append_pair("compress", self.compress.scheme.name())
                .append_pair("block", &self.compress.block.to_string())
                .append_pair("scale", self.compress.scale.name())
                .append_pair("placement", self.placement.name())
                .append_pair("grad", self.grad.name());
            if self.compress_min > 0 {
                what_if.append_pair("compress_min", &self.compress_min.to_string());
            }
        }
        if let Some(f) = &self.fusion {
            what_if.append_pair("fusion", f);
            if let Some(b) = self.bucket {
                what_if.append_pair("bucket", &b.to_string());
            }
        }
        let what_if = what_if.finish();
        if !what_if.is_empty() {
            q.push('&');
            q.push_str(&what_if);
        }
        // Written last: the longest values, and read after every other key.
        let mut tail = form_urlencoded::Serializer::new(String::new());
        if let (true, Some(t)) = (self.topo == CUSTOM, &self.custom) {
            tail.append_pair("topology", &t.to_json());
        }
        if let Some(p) = &self.profile {
            tail.append_pair("profile", &serde_json::to_string(p).unwrap_or_default());
        }
        let tail = tail.finish();
        if !tail.is_empty() {
            q.push('&');
            q.push_str(&tail);
        }
        q
    }
}
