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
        let mut topology_raw: Option<String> = None;
        let mut profile_raw: Option<String> = None;
        let mut fusion_raw: Option<String> = None;
        let mut bucket_raw: Option<String> = None;
        let mut faults_raw: Vec<(String, String)> = Vec::new();
        for (k, v) in pairs.iter().map(|(k, v)| (k.as_str(), v.as_str())) {
            let v = v.trim();
            match k {
                "v" => {}
                "op" => match Primitive::from_name(v) {
                    Some(p) => c.primitive = p,
                    None => bad(
                        "op",
                        v,
                        format!(
                            "one of {} (nccl-tests' all_reduce, all_gather, reduce_scatter, ... too)",
                            Primitive::ALL.map(|p| p.name()).join(", ")
                        ),
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
                "topo" => match Topology::preset_devices(v) {
                    Some(_) => c.topo = v.to_string(),
                    None if v == CUSTOM => c.topo = CUSTOM.into(),
                    None if v == MEASURED => c.topo = MEASURED.into(),
                    None => bad(
                        "topo",
                        v,
                        format!(
                            "one of {}, 910b-{{S}}x8 (S = 2..=1024), custom (with topology=<JSON>) or measured (with profile=<JSON>)",
                            Topology::PRESETS.join(", ")
                        ),
                    ),
                },
                "topology" => topology_raw = Some(v.to_string()),
                "profile" => profile_raw = Some(v.to_string()),
                "dtype" => match DType::from_name(v) {
                    Some(d) => c.dtype = d,
                    None => bad("dtype", v, "one of fp32, fp16, bf16, int32, int8".into()),
                },
                "redop" => match ReduceOp::from_name(v) {
                    Some(o) => c.redop = o,
                    None => bad(
                        "redop",
                        v,
                        "one of sum, prod, max, min, avg (avg: NCCL's ncclAvg; HCCL has none)"
                            .into(),
                    ),
                },
                "seed" => match v.parse::<u64>() {
                    Ok(s) => c.seed = s,
                    Err(_) => bad("seed", v, "an integer 0..=18446744073709551615".into()),
                },
                "bytes" => bytes_raw = Some(v.to_string()),
                "ranks" => ranks_raw = Some(v.to_string()),
                "root" => root_raw = Some(v.to_string()),
                "slow" | "late" | "down" => faults_raw.push((k.to_string(), v.to_string())),
                "slices" => match Slices::parse(v) {
                    Ok(x) => c.slices = x,
                    Err(allowed) => bad("slices", v, allowed),
                },
                "compress" => match Scheme::from_name(v) {
                    Some(x) => c.compress.scheme = x,
                    None => bad(
                        "compress",
                        v,
                        format!("one of {}", Scheme::ALL.map(|x| x.name()).join(", ")),
                    ),
                },
                "block" => match v.parse::<usize>() {
                    Ok(b) if BLOCK_RANGE.contains(&b) => c.compress.block = b,
                    _ => bad(
                        "block",
                        v,
                        format!(
                            "an integer {}..={} (elements per scale)",
                            BLOCK_RANGE.start(),
                            BLOCK_RANGE.end()
                        ),
                    ),
                },
                "scale" => match v {
                    "fp16" => c.compress.scale = ScaleType::Fp16,
                    "fp32" => c.compress.scale = ScaleType::Fp32,
                    _ => bad("scale", v, "one of fp16, fp32 (how each block's scale is stored)".into()),
                },
                "placement" => match Placement::from_name(v) {
                    Some(x) => c.placement = x,
                    None => bad("placement", v, "one of hop, once".into()),
                },
                "grad" => match GradientShape::from_name(v) {
                    Some(x) => c.grad = x,
                    None => bad(
                        "grad",
                        v,
                        format!("one of {}", GradientShape::ALL.map(|x| x.name()).join(", ")),
                    ),
                },
                "fusion" => fusion_raw = Some(v.to_string()),
                "bucket" => bucket_raw = Some(v.to_string()),
                "compress_min" => match parse_compress_min(v) {
                    Ok(b) => c.compress_min = b,
                    Err(allowed) => bad("compress_min", v, allowed),
                },
                other => note(other, v, UNKNOWN_KEY.into()),
            }
        }
        // topology depends on topo; profile stands alone.
        match (c.topo == CUSTOM, topology_raw) {
            (true, Some(v)) => match parse_topology_param(&v) {
                Ok(t) => c.custom = Some(t),
                Err(why) => {
                    bad(
                        "topology",
                        &v,
                        format!("{why}; using {}", Config::default().topo),
                    );
                    c.topo = Config::default().topo;
                }
            },
            (true, None) => {
                bad(
                    "topology",
                    "",
                    format!(
                        "topo=custom needs topology=<compact JSON> (schema: docs/custom-topology.md); using {}",
                        Config::default().topo
                    ),
                );
                c.topo = Config::default().topo;
            }
            (false, Some(v)) => bad(
                "topology",
                &v,
                format!("read only with topo=custom (topo is {}); ignored", c.topo),
            ),
            (false, None) => {}
        }
        if let Some(v) = profile_raw {
            match parse_profile_param(&v) {
                Ok(p) => c.profile = Some(p),
                Err(why) => bad("profile", &v, why),
            }
        }
        if c.topo == MEASURED && c.profile.is_none() {
            bad(
                "topo",
                MEASURED,
                format!(
                    "measured is the machine of a fitted profile; give profile=<JSON>; using {}",
                    Config::default().topo
                ),
            );
            c.topo = Config::default().topo;
        }
        // Keys that depend on others: ranks on topo, bytes on dtype.
        if let Some(v) = ranks_raw {
            let devices = c.devices().unwrap_or(8);
            match v.parse::<usize>() {
                Ok(n) if (2..=devices).contains(&n) => c.ranks = n,
                _ => {
                    // The default may exceed a small custom topology.
                    c.ranks = c.ranks.min(devices);
                    bad(
                        "ranks",
                        &v,
                        format!(
                            "an integer 2..={devices} (topology {} has {devices} devices)",
                            c.topo
                        ),
                    )
                }
            }
        } else if let Some(n) = c.default_ranks() {
            // A machine's own device count (a profile's measured ranks) by default.
            c.ranks = n;
        }
        // AlltoAllV's per-pair counts make n² blocks: one limit, said here.
        if c.primitive == Primitive::AlltoAllV && c.ranks > MAX_ALLTOALLV_RANKS {
            bad(
                "ranks",
                &c.ranks.to_string(),
                format!(
                    "AlltoAllV runs on 2..={MAX_ALLTOALLV_RANKS} ranks (its per-pair counts make n² blocks); using {MAX_ALLTOALLV_RANKS}"
                ),
            );
            c.ranks = MAX_ALLTOALLV_RANKS;
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
        // slow, late and down name ranks.
        for (k, v) in faults_raw {
            if let Err(allowed) = c.faults.set(&k, &v, c.ranks) {
                bad(&k, &v, allowed);
            }
        }
        let bytes_given = bytes_raw.is_some();
        if let Some(v) = bytes_raw {
            match crate::engine::units::message_bytes(&v, c.dtype) {
                Ok(b) => c.bytes = b,
                Err((why, fix)) => {
                    if let Some(b) = fix {
                        c.bytes = b;
                    }
                    bad("bytes", &v, why)
                }
            }
        }
        if let Some(v) = bucket_raw {
            match parse_bytes(&v) {
                Ok(b) if b <= MAX_BUCKET_BYTES => c.bucket = Some(b),
                _ => bad(
                    "bucket",
                    &v,
                    "a size from 0 (one AllReduce per tensor) to 1 GiB, e.g. 25MiB (without bucket: DDP's default)".into(),
                ),
            }
        }
        if let Some(v) = fusion_raw {
            if v != "none" {
                match crate::engine::fusion::parse_fusion(&v, c.dtype) {
                    Err(_) => bad(
                        "fusion",
                        &v,
                        "none, llama3-8b, llama3-70b, or COUNTxSIZE with COUNT 1..=10000 and SIZE up to 1 GiB (e.g. 30x4MiB)".into(),
                    ),
                    Ok(_) => {
                        c.fusion = Some(v.clone());
                        // A link without bytes runs the fusion's run bucket
                        // (fusion is AllReduce only: `normalize` below).
                        if !bytes_given && c.primitive == Primitive::AllReduce {
                            if let Some(b) = c.fusion_run_bytes() {
                                c.bytes = b;
                            }
                        }
                    }
                }
            }
        }
        // The what-ifs depend on op, dtype and ranks: the same rules as a
        // control change, each adjustment named.
        for (key, value, why) in c.normalize() {
            bad(key, &value, why);
        }
        // algo depends on op and ranks: an algorithm that does not implement
        // the primitive is named, and auto runs instead.
        if let AlgoChoice::Fixed(a) = c.algo {
            if !a.supports(c.primitive, c.ranks) {
                let names: Vec<&str> = Algorithm::applicable(c.primitive, c.ranks)
                    .iter()
                    .map(|x| x.name())
                    .collect();
                // No algorithm at all (AlltoAllV above MAX_ALLTOALLV_RANKS):
                // say "none", not a dangling "auto, ". What runs instead is
                // the reader's to say (the page: "used algo=auto" from the
                // configuration; cclsim refuses the flag).
                let applicable = if names.is_empty() {
                    "none".to_string()
                } else {
                    format!("auto, {}", names.join(", "))
                };
                bad(
                    "algo",
                    a.name(),
                    format!(
                        "{} does not implement {} on {} ranks; applicable: {applicable}",
                        a.name(),
                        c.primitive.title(),
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
