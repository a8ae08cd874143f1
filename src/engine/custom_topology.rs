//! A user-defined machine: a documented JSON schema, its validation (errors
//! name the field, the value and what is allowed), and its conversion into a
//! [`Topology`] the cost model, the planner and the page use like a preset.
//!
//! ## Schema
//!
//! ```json
//! {
//!   "name": "4-gpu-ring",
//!   "title": "4 GPUs: NVLink ring, PCIe switch for the diagonals",
//!   "devices": [
//!     {"id": "g0"}, {"id": "g1"}, {"id": "g2"}, {"id": "g3", "server": 0}
//!   ],
//!   "switches": [{"id": "pcie"}],
//!   "links": [
//!     {"a": "g0", "b": "g1", "kind": "nvlink", "bandwidth_gbps": 50, "latency_us": 2},
//!     {"a": "g1", "b": "g2", "kind": "nvlink", "bandwidth_gbps": 50, "latency_us": 2},
//!     {"a": "g2", "b": "g3", "kind": "nvlink", "bandwidth_gbps": 50, "latency_us": 2},
//!     {"a": "g3", "b": "g0", "kind": "nvlink", "bandwidth_gbps": 50, "latency_us": 2},
//!     {"a": "g0", "b": "pcie", "kind": "pcie", "bandwidth_gbps": 16, "latency_us": 1},
//!     {"a": "g1", "b": "pcie", "kind": "pcie", "bandwidth_gbps": 16, "latency_us": 1},
//!     {"a": "g2", "b": "pcie", "kind": "pcie", "bandwidth_gbps": 16, "latency_us": 1},
//!     {"a": "g3", "b": "pcie", "kind": "pcie", "bandwidth_gbps": 16, "latency_us": 1}
//!   ]
//! }
//! ```
//!
//! | field | type | meaning, allowed values |
//! |---|---|---|
//! | `name` | string, optional | a short name, 1..=[`MAX_NAME_CHARS`] characters (shown in the topology list) |
//! | `title` | string, optional | one line shown above the drawing, ≤ [`MAX_TITLE_CHARS`] characters |
//! | `devices` | array, required | the NPUs / GPUs, 2..=[`MAX_DEVICES`]; rank `r` runs on `devices[r]` |
//! | `devices[i].id` | string, required | unique among devices and switches, 1..=[`MAX_ID_CHARS`] characters, no control characters; drawn as the label |
//! | `devices[i].server` | integer, optional (0) | server index 0..[`MAX_SERVERS`]; devices `8s..8s+8` on server `s` with one switch draw as server boxes |
//! | `switches` | array, optional (`[]`) | nodes that forward traffic but host no rank (NVSwitch, PCIe switch, RoCE fabric), ≤ [`MAX_SWITCHES`] |
//! | `switches[k].id` | string, required | as `devices[i].id` |
//! | `switches[k].server` | integer, optional (0) | informational, 0..[`MAX_SERVERS`] |
//! | `links` | array, required | full-duplex links, 1..=[`MAX_LINKS`] |
//! | `links[j].a`, `.b` | string, required | ids of the two ends (a device or a switch), distinct; at most one link per pair |
//! | `links[j].bandwidth_gbps` | number, required | GB/s (1e9 bytes/s) **per direction**, `0.001 ≤ x ≤ 1e5`: the model's `1/β` |
//! | `links[j].latency_us` | number, required | µs per message on this link, `0` or `0.001 ≤ x ≤ 1e6`: the model's `α` (a route's `α` is the sum over its hops) |
//! | `links[j].kind` | string, optional (`pcie`) | `hccs`, `pcie`, `roce` or `nvlink`: colour and label of the drawing only |
//! | `reduce_gbps` | number, optional | reduction throughput per device, GB/s of reduced bytes (the model's `1/γ`), `0.001 ≤ x ≤ 1e5`; omitted = reductions are free (inline) |
//! | `library` | string, optional (`model`) | whose choices `auto` follows: `hccl`, `nccl`, `mpi` (their selection rules, [`crate::engine::library`]) or `model` (the cost model's fastest) |
//! | `algorithms` | array of strings, optional | with `model`: the algorithms `auto` ranks (names as in `algo=`); omitted = all |
//! | `ccl_buffer_bytes` | integer, optional | the library's staging buffer, bytes, 1024..=2^40: larger messages run in `ceil(S / buffer)` loops (HCCL's `HCCL_BUFFSIZE`; its pipeline holds one buffer per rank a loop); omitted = one loop |
//!
//! Unknown fields are errors (a misspelt `bandwith_gbps` must not be
//! silently ignored). Devices never forward traffic (as in every preset,
//! [`Topology::route`]): two devices communicate over a direct link or a
//! path through switches only, so **every pair of devices must be connected
//! that way** (any algorithm may send between any two ranks).
//!
//! ## Caps
//! The pasted text is at most [`MAX_JSON_CHARS`] characters; the *compact*
//! JSON of the validated topology ([`CustomTopology::to_json`], what the
//! share link carries as `topology=`) at most [`MAX_COMPACT_CHARS`], so every
//! accepted topology fits in a share link.

use super::algorithm::Algorithm;
use super::library::Library;
use super::topology::{Device, Link, LinkKind, Switch, Topology};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::HashMap;
use thiserror::Error;

/// The `topo` URL value of a user-defined topology.
pub const CUSTOM: &str = "custom";
/// Most devices (ranks) of a user topology: the page draws and verifies up
/// to 64 ranks ([`crate::engine::config::MAX_EXECUTED_RANKS`] of them run on
/// workers).
pub const MAX_DEVICES: usize = 64;
/// Most switches of a user topology.
pub const MAX_SWITCHES: usize = 16;
/// Most links of a user topology (a full mesh of 64 devices is 2016).
pub const MAX_LINKS: usize = 2048;
/// Server indices are `0..MAX_SERVERS`.
pub const MAX_SERVERS: usize = 64;
/// Longest node id, characters.
pub const MAX_ID_CHARS: usize = 16;
/// Longest `name`, characters.
pub const MAX_NAME_CHARS: usize = 40;
/// Longest `title`, characters.
pub const MAX_TITLE_CHARS: usize = 120;
/// The bandwidths accepted, GB/s: from 1 MB/s to 100 TB/s (a physical
/// range: a 1e-308 GB/s link is a typo, not a machine).
pub const BANDWIDTH_RANGE_GBPS: (f64, f64) = (1e-3, 1e5);
/// The latencies accepted besides 0, µs: from 1 ns to 1 s.
pub const LATENCY_RANGE_US: (f64, f64) = (1e-3, 1e6);
/// Longest pasted JSON text, characters (256 KiB).
pub const MAX_JSON_CHARS: usize = 256 * 1024;
/// Longest compact JSON of a validated topology, characters: the share
/// link's `topology=` value (before percent-encoding).
pub const MAX_COMPACT_CHARS: usize = 16 * 1024;

/// One node (device or switch) of a [`CustomTopology`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NodeSpec {
    /// Unique id, drawn as the label.
    pub id: String,
    /// Server index.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub server: usize,
}

/// One link of a [`CustomTopology`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LinkSpec {
    /// Id of one end.
    pub a: String,
    /// Id of the other end.
    pub b: String,
    /// Kind (drawing only).
    pub kind: LinkKind,
    /// GB/s per direction.
    pub bandwidth_gbps: f64,
    /// µs per message.
    pub latency_us: f64,
}

/// A validated user-defined topology (module doc for the schema). Build it
/// with [`CustomTopology::parse`]; [`CustomTopology::to_json`] writes the
/// compact form that `parse` reads back to an equal value.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CustomTopology {
    /// Short name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// One-line title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Devices, rank order.
    pub devices: Vec<NodeSpec>,
    /// Switches.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub switches: Vec<NodeSpec>,
    /// Links.
    pub links: Vec<LinkSpec>,
    /// γ throughput, GB/s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reduce_gbps: Option<f64>,
    /// Staging buffer, bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ccl_buffer_bytes: Option<u64>,
    /// Whose library's choices `auto` follows (default: the model's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub library: Option<Library>,
    /// With library `model`: the algorithms `auto` ranks (empty: all).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub algorithms: Vec<Algorithm>,
}

fn is_zero(x: &usize) -> bool {
    *x == 0
}

/// Why a user topology was refused: the field (a JSON path such as
/// `links[2].bandwidth_gbps`), the value found and what is allowed.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[error("{field}: {value} — {allowed}")]
pub struct SpecError {
    /// JSON path of the field (`links[2].a`; `(text)` for the text itself).
    pub field: String,
    /// The value found (shortened to 60 characters).
    pub value: String,
    /// What is allowed.
    pub allowed: String,
}

fn err(
    field: impl Into<String>,
    value: impl Into<String>,
    allowed: impl Into<String>,
) -> SpecError {
    let value: String = value.into();
    let value = if value.chars().count() > 60 {
        format!("{}…", value.chars().take(60).collect::<String>())
    } else {
        value
    };
    SpecError {
        field: field.into(),
        value,
        allowed: allowed.into(),
    }
}

/// Link `l`'s bandwidth and latency (`f` its field path) within the
/// physical ranges the model accepts: a value outside them is a typo, and
/// would otherwise give absurd times instead of an error.
fn check_link_figures(f: &str, l: &LinkSpec) -> Result<(), SpecError> {
    let (blo, bhi) = BANDWIDTH_RANGE_GBPS;
    if !(blo..=bhi).contains(&l.bandwidth_gbps) {
        return Err(err(
            format!("{f}.bandwidth_gbps"),
            l.bandwidth_gbps.to_string(),
            format!("a number from {blo} to {bhi:e}, in GB/s per direction"),
        ));
    }
    let (llo, lhi) = LATENCY_RANGE_US;
    if !((llo..=lhi).contains(&l.latency_us) || l.latency_us == 0.0) {
        return Err(err(
            format!("{f}.latency_us"),
            l.latency_us.to_string(),
            format!("a number 0 or from {llo} to {lhi:e}, in µs"),
        ));
    }
    Ok(())
}

fn show(v: &Value) -> String {
    match v {
        Value::String(s) => format!("\"{s}\""),
        Value::Array(a) => format!("an array of {}", a.len()),
        Value::Object(_) => "an object".into(),
        other => other.to_string(),
    }
}

fn object<'a>(
    v: &'a Value,
    field: &str,
    keys: &[&str],
) -> Result<&'a Map<String, Value>, SpecError> {
    let Value::Object(m) = v else {
        return Err(err(field, show(v), "a JSON object {…}"));
    };
    if let Some(k) = m.keys().find(|k| !keys.contains(&k.as_str())) {
        let path = if field.is_empty() {
            k.clone()
        } else {
            format!("{field}.{k}")
        };
        return Err(err(
            path,
            "present",
            format!("unknown field; allowed: {}", keys.join(", ")),
        ));
    }
    Ok(m)
}

fn path(parent: &str, key: &str) -> String {
    if parent.is_empty() {
        key.to_string()
    } else {
        format!("{parent}.{key}")
    }
}

fn text(
    m: &Map<String, Value>,
    parent: &str,
    key: &str,
    max: usize,
    id: bool,
) -> Result<Option<String>, SpecError> {
    let f = path(parent, key);
    match m.get(key) {
        None => Ok(None),
        Some(Value::String(s)) => {
            let n = s.chars().count();
            let bad_chars = s.chars().any(char::is_control) || (id && s.trim() != s);
            if n == 0 || n > max || bad_chars {
                Err(err(
                    f,
                    show(&Value::String(s.clone())),
                    format!(
                        "a string of 1..={max} characters without control characters{}",
                        if id { " or surrounding spaces" } else { "" }
                    ),
                ))
            } else {
                Ok(Some(s.clone()))
            }
        }
        Some(v) => Err(err(f, show(v), format!("a string of 1..={max} characters"))),
    }
}

/// A figure in a physical range: `lo ≤ x ≤ hi`, or exactly 0 when
/// `zero_ok` (a latency may be 0; 1e-300 is not a latency).
fn number(
    m: &Map<String, Value>,
    parent: &str,
    key: &str,
    (lo, hi): (f64, f64),
    zero_ok: bool,
    unit: &str,
) -> Result<Option<f64>, SpecError> {
    let f = path(parent, key);
    let allowed = || {
        format!(
            "a number {}from {lo} to {hi:e} {unit}",
            if zero_ok { "0 or " } else { "" }
        )
    };
    match m.get(key) {
        None => Ok(None),
        Some(Value::Number(n)) => {
            let x = n.as_f64().unwrap_or(f64::NAN);
            if x.is_finite() && ((lo..=hi).contains(&x) || (zero_ok && x == 0.0)) {
                Ok(Some(x))
            } else {
                Err(err(f, n.to_string(), allowed()))
            }
        }
        Some(v) => Err(err(f, show(v), allowed())),
    }
}

fn integer(
    m: &Map<String, Value>,
    parent: &str,
    key: &str,
    lo: u64,
    hi: u64,
) -> Result<Option<u64>, SpecError> {
    let f = path(parent, key);
    match m.get(key) {
        None => Ok(None),
        Some(Value::Number(n)) => match n.as_u64() {
            Some(x) if (lo..=hi).contains(&x) => Ok(Some(x)),
            _ => Err(err(f, n.to_string(), format!("an integer {lo}..={hi}"))),
        },
        Some(v) => Err(err(f, show(v), format!("an integer {lo}..={hi}"))),
    }
}

fn array<'a>(
    m: &'a Map<String, Value>,
    key: &str,
    lo: usize,
    hi: usize,
    required: bool,
) -> Result<&'a [Value], SpecError> {
    match m.get(key) {
        None if required => Err(err(
            key,
            "missing",
            format!("an array of {lo}..={hi} entries (required)"),
        )),
        None => Ok(&[]),
        Some(Value::Array(a)) if (lo..=hi).contains(&a.len()) => Ok(a.as_slice()),
        Some(Value::Array(a)) => Err(err(
            key,
            format!("{} entries", a.len()),
            format!("{lo}..={hi} entries"),
        )),
        Some(v) => Err(err(
            key,
            show(v),
            format!("an array of {lo}..={hi} entries"),
        )),
    }
}

fn node(v: &Value, field: &str) -> Result<NodeSpec, SpecError> {
    let m = object(v, field, &["id", "server"])?;
    let id = text(m, field, "id", MAX_ID_CHARS, true)?.ok_or_else(|| {
        err(
            path(field, "id"),
            "missing",
            "a unique id string (required)",
        )
    })?;
    let server = integer(m, field, "server", 0, MAX_SERVERS as u64 - 1)?.unwrap_or(0) as usize;
    Ok(NodeSpec { id, server })
}

impl CustomTopology {
    /// Parses and validates a user topology (module doc for the schema).
    /// Never panics, whatever the text.
    ///
    /// Errors: a [`SpecError`] naming the first offending field (JSON path),
    /// its value and what is allowed: text too long or not JSON, unknown
    /// field, missing field, wrong type, too few / too many devices,
    /// switches or links, duplicate id, a link to an unknown id, a self
    /// link, a duplicate link, a bandwidth that is not positive, a negative
    /// latency, an unused switch, a pair of devices without a route, a
    /// compact form longer than [`MAX_COMPACT_CHARS`].
    pub fn parse(json: &str) -> Result<CustomTopology, SpecError> {
        let n = json.chars().count();
        if n > MAX_JSON_CHARS {
            return Err(err(
                "(text)",
                format!("{n} characters"),
                format!("at most {MAX_JSON_CHARS} characters"),
            ));
        }
        let v: Value = serde_json::from_str(json)
            .map_err(|e| err("(text)", "not JSON", format!("a JSON object ({e})")))?;
        let spec = CustomTopology::from_value(&v)?;
        spec.check()?;
        let compact = spec.to_json();
        let c = compact.chars().count();
        if c > MAX_COMPACT_CHARS {
            return Err(err(
                "(text)",
                format!("{c} characters in compact form"),
                format!("at most {MAX_COMPACT_CHARS} characters of compact JSON, so that the share link can carry it (shorten the ids, drop optional fields)"),
            ));
        }
        Ok(spec)
    }

    fn from_value(v: &Value) -> Result<CustomTopology, SpecError> {
        let keys = [
            "name",
            "title",
            "devices",
            "switches",
            "links",
            "reduce_gbps",
            "ccl_buffer_bytes",
            "library",
            "algorithms",
        ];
        let m = object(v, "", &keys).map_err(|mut e| {
            if e.field.is_empty() {
                e.field = "(text)".into();
            }
            e
        })?;
        let name = text(m, "", "name", MAX_NAME_CHARS, false)?;
        let title = text(m, "", "title", MAX_TITLE_CHARS, false)?;
        let devices = array(m, "devices", 2, MAX_DEVICES, true)?
            .iter()
            .enumerate()
            .map(|(i, d)| node(d, &format!("devices[{i}]")))
            .collect::<Result<Vec<_>, _>>()?;
        let switches = array(m, "switches", 0, MAX_SWITCHES, false)?
            .iter()
            .enumerate()
            .map(|(i, d)| node(d, &format!("switches[{i}]")))
            .collect::<Result<Vec<_>, _>>()?;
        let links = array(m, "links", 1, MAX_LINKS, true)?
            .iter()
            .enumerate()
            .map(|(j, l)| {
                let f = format!("links[{j}]");
                let m = object(l, &f, &["a", "b", "kind", "bandwidth_gbps", "latency_us"])?;
                let end = |k: &str| {
                    text(m, &f, k, MAX_ID_CHARS, true)?.ok_or_else(|| {
                        err(
                            path(&f, k),
                            "missing",
                            "the id of a device or switch (required)",
                        )
                    })
                };
                let kind = match m.get("kind") {
                    None => LinkKind::Pcie,
                    Some(k) => serde_json::from_value::<LinkKind>(k.clone()).map_err(|_| {
                        err(path(&f, "kind"), show(k), "one of hccs, pcie, roce, nvlink")
                    })?,
                };
                Ok(LinkSpec {
                    a: end("a")?,
                    b: end("b")?,
                    kind,
                    bandwidth_gbps: number(
                        m,
                        &f,
                        "bandwidth_gbps",
                        BANDWIDTH_RANGE_GBPS,
                        false,
                        "GB/s per direction",
                    )?
                    .ok_or_else(|| {
                        err(
                            path(&f, "bandwidth_gbps"),
                            "missing",
                            "a number from 0.001 to 1e5, GB/s per direction (required)",
                        )
                    })?,
                    latency_us: number(m, &f, "latency_us", LATENCY_RANGE_US, true, "µs")?
                        .ok_or_else(|| {
                            err(
                                path(&f, "latency_us"),
                                "missing",
                                "a number 0 or from 0.001 to 1e6, µs per message (required)",
                            )
                        })?,
                })
            })
            .collect::<Result<Vec<_>, SpecError>>()?;
        Ok(CustomTopology {
            name,
            title,
            devices,
            switches,
            links,
            reduce_gbps: number(m, "", "reduce_gbps", BANDWIDTH_RANGE_GBPS, false, "GB/s")?,
            library: match m.get("library") {
                None => None,
                Some(Value::String(x)) => Some(Library::from_name(x).ok_or_else(|| {
                    err(
                        "library",
                        show(&Value::String(x.clone())),
                        "one of hccl, nccl, mpi, model",
                    )
                })?),
                Some(v) => return Err(err("library", show(v), "one of hccl, nccl, mpi, model")),
            },
            algorithms: match m.get("algorithms") {
                None => Vec::new(),
                Some(Value::Array(a)) if !a.is_empty() && a.len() <= Algorithm::ALL.len() => a
                    .iter()
                    .enumerate()
                    .map(|(i, x)| {
                        x.as_str().and_then(Algorithm::from_name).ok_or_else(|| {
                            err(
                                format!("algorithms[{i}]"),
                                show(x),
                                format!("one of {}", Algorithm::ALL.map(|a| a.name()).join(", ")),
                            )
                        })
                    })
                    .collect::<Result<Vec<_>, _>>()?,
                Some(v) => {
                    return Err(err(
                        "algorithms",
                        show(v),
                        "a non-empty array of algorithm names (with library model)",
                    ))
                }
            },
            ccl_buffer_bytes: integer(m, "", "ccl_buffer_bytes", 1024, 1 << 40)?,
        })
    }

    /// Node index of every id (devices first, then switches).
    fn ids(&self) -> HashMap<&str, usize> {
        self.devices
            .iter()
            .chain(&self.switches)
            .enumerate()
            .map(|(i, n)| (n.id.as_str(), i))
            .collect()
    }

    /// The checks beyond the shape: counts, unique ids, link ends, figures,
    /// duplicate links, unused switches, every device pair routable. They
    /// run in that order and stop at the first error, so the message names
    /// the earliest field at fault.
    fn check(&self) -> Result<(), SpecError> {
        self.check_counts()?;
        self.check_nodes()?;
        self.check_links()?;
        self.check_machine_figures()?;
        self.check_routes()
    }

    /// Device, switch and link counts within their caps, before anything
    /// walks the lists (the caps bound the page's drawing and the route
    /// search).
    fn check_counts(&self) -> Result<(), SpecError> {
        let count = |field: &str, n: usize, lo: usize, hi: usize| {
            if (lo..=hi).contains(&n) {
                Ok(())
            } else {
                Err(err(
                    field,
                    format!("{n} entries"),
                    format!("{lo}..={hi} entries"),
                ))
            }
        };
        count("devices", self.devices.len(), 2, MAX_DEVICES)?;
        count("switches", self.switches.len(), 0, MAX_SWITCHES)?;
        count("links", self.links.len(), 1, MAX_LINKS)
    }

    /// Every node's id is a drawable label and unique among devices and
    /// switches together (links name their ends by id), and its server is
    /// in range. A duplicate names the node that had the id first.
    fn check_nodes(&self) -> Result<(), SpecError> {
        let mut seen: HashMap<&str, String> = HashMap::new();
        let nodes = self
            .devices
            .iter()
            .enumerate()
            .map(|(i, d)| (format!("devices[{i}]"), d))
            .chain(
                self.switches
                    .iter()
                    .enumerate()
                    .map(|(i, d)| (format!("switches[{i}]"), d)),
            );
        for (f, n) in nodes {
            let len = n.id.chars().count();
            if len == 0
                || len > MAX_ID_CHARS
                || n.id.chars().any(char::is_control)
                || n.id.trim() != n.id
            {
                return Err(err(format!("{f}.id"), format!("\"{}\"", n.id), format!("a string of 1..={MAX_ID_CHARS} characters without control characters or surrounding spaces")));
            }
            if n.server >= MAX_SERVERS {
                return Err(err(
                    format!("{f}.server"),
                    n.server.to_string(),
                    format!("an integer 0..={}", MAX_SERVERS - 1),
                ));
            }
            if let Some(first) = seen.get(n.id.as_str()) {
                return Err(err(
                    format!("{f}.id"),
                    format!("\"{}\"", n.id),
                    format!("a unique id; {first} already has it"),
                ));
            }
            seen.insert(&n.id, f);
        }
        Ok(())
    }

    /// The ids a link end may name, for the message refusing an unknown
    /// one: the first 12 and the count beyond, so a long list stays one
    /// readable line.
    fn known_ids(&self) -> String {
        let all: Vec<&str> = self
            .devices
            .iter()
            .chain(&self.switches)
            .map(|n| n.id.as_str())
            .collect();
        if all.len() > 12 {
            format!("{}, … ({} ids)", all[..12].join(", "), all.len())
        } else {
            all.join(", ")
        }
    }

    /// Every link joins two known, different nodes with figures in range,
    /// at most one link per pair (a second would only split what one
    /// faster link models), and every switch has a link: a switch nothing
    /// reaches is a mistake, not a machine.
    fn check_links(&self) -> Result<(), SpecError> {
        let ids = self.ids();
        let mut pairs: HashMap<(usize, usize), usize> = HashMap::new();
        let mut used = vec![false; self.switches.len()];
        for (j, l) in self.links.iter().enumerate() {
            let f = format!("links[{j}]");
            let (a, b) = self.link_ends(&ids, &f, l)?;
            check_link_figures(&f, l)?;
            if let Some(first) = pairs.insert((a.min(b), a.max(b)), j) {
                return Err(err(
                    f,
                    format!("{} – {}", l.a, l.b),
                    format!("at most one link per pair; links[{first}] already joins them (raise its bandwidth instead)"),
                ));
            }
            for x in [a, b] {
                if x >= self.devices.len() {
                    used[x - self.devices.len()] = true;
                }
            }
        }
        if let Some(k) = used.iter().position(|u| !u) {
            return Err(err(
                format!("switches[{k}]"),
                format!("\"{}\"", self.switches[k].id),
                "a switch with at least one link (remove it, or link it)",
            ));
        }
        Ok(())
    }

    /// The node indices of link `l`'s ends (`f` its field path), refusing
    /// an unknown id (listing the known ones) or a link from a node to
    /// itself.
    fn link_ends(
        &self,
        ids: &HashMap<&str, usize>,
        f: &str,
        l: &LinkSpec,
    ) -> Result<(usize, usize), SpecError> {
        let a = *ids.get(l.a.as_str()).ok_or_else(|| {
            err(
                format!("{f}.a"),
                format!("\"{}\"", l.a),
                format!("the id of a device or switch; known: {}", self.known_ids()),
            )
        })?;
        let b = *ids.get(l.b.as_str()).ok_or_else(|| {
            err(
                format!("{f}.b"),
                format!("\"{}\"", l.b),
                format!("the id of a device or switch; known: {}", self.known_ids()),
            )
        })?;
        if a == b {
            return Err(err(
                format!("{f}.b"),
                format!("\"{}\"", l.b),
                "an id other than `a` (a link joins two different nodes)",
            ));
        }
        Ok((a, b))
    }

    /// `reduce_gbps` and `ccl_buffer_bytes` within their ranges, when given.
    fn check_machine_figures(&self) -> Result<(), SpecError> {
        if let Some(g) = self.reduce_gbps {
            let (lo, hi) = BANDWIDTH_RANGE_GBPS;
            if !(lo..=hi).contains(&g) {
                return Err(err(
                    "reduce_gbps",
                    g.to_string(),
                    format!("a number from {lo} to {hi:e}, in GB/s"),
                ));
            }
        }
        if let Some(b) = self.ccl_buffer_bytes {
            if !(1024..=1 << 40).contains(&b) {
                return Err(err(
                    "ccl_buffer_bytes",
                    b.to_string(),
                    "an integer 1024..=1099511627776",
                ));
            }
        }
        Ok(())
    }

    /// Every pair of devices has a route, direct or through switches:
    /// devices do not forward traffic and any algorithm may send between
    /// any two ranks, so a pair without one would leave some schedules
    /// with no cost. Runs last, on a topology whose links are all valid.
    fn check_routes(&self) -> Result<(), SpecError> {
        let t = self.build();
        let adj = t.adjacency();
        for a in 0..t.devices.len() {
            for b in a + 1..t.devices.len() {
                if t.route_with(&adj, a, b).is_err() {
                    return Err(err(
                        "links",
                        format!("no route between {} and {}", self.devices[a].id, self.devices[b].id),
                        "every pair of devices joined by a direct link or a path through switches (devices do not forward traffic; any rank may send to any rank)",
                    ));
                }
            }
        }
        Ok(())
    }

    /// The compact JSON (no spaces, defaults omitted) that
    /// [`CustomTopology::parse`] reads back to an equal value: what the
    /// share link carries.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// Re-validates a value built in code (not from [`CustomTopology::parse`]).
    ///
    /// Errors: as [`CustomTopology::parse`].
    pub fn validate(&self) -> Result<(), SpecError> {
        CustomTopology::parse(&self.to_json()).map(|_| ())
    }

    /// A one-line description: `4 devices, 1 switch, 8 links`.
    pub fn summary(&self) -> String {
        let s = |n: usize, w: &str| format!("{n} {w}{}", if n == 1 { "" } else { "s" });
        let mut parts = vec![s(self.devices.len(), "device")];
        if !self.switches.is_empty() {
            parts.push(s(self.switches.len(), "switch").replace("switchs", "switches"));
        }
        parts.push(s(self.links.len(), "link"));
        parts.join(", ")
    }

    fn build(&self) -> Topology {
        let ids = self.ids();
        Topology {
            name: CUSTOM.into(),
            title: match (&self.title, &self.name) {
                (Some(t), _) => t.clone(),
                (None, Some(n)) => format!("{n}: {}", self.summary()),
                (None, None) => format!("custom: {}", self.summary()),
            },
            devices: self
                .devices
                .iter()
                .map(|d| Device {
                    label: d.id.clone(),
                    server: d.server,
                })
                .collect(),
            links: self
                .links
                .iter()
                .map(|l| Link {
                    a: ids.get(l.a.as_str()).copied().unwrap_or(usize::MAX),
                    b: ids.get(l.b.as_str()).copied().unwrap_or(usize::MAX),
                    kind: l.kind,
                    bandwidth_gbps: l.bandwidth_gbps,
                    latency_us: l.latency_us,
                })
                .collect(),
            reduce_gbps: self.reduce_gbps,
            sources: vec![
                "User-defined topology (pasted JSON): every figure is the user's, not a measurement or a vendor constant.".into(),
            ],
            switches: self
                .switches
                .iter()
                .map(|s| Switch {
                    label: s.id.clone(),
                    server: s.server,
                })
                .collect(),
            ccl_buffer_bytes: self.ccl_buffer_bytes,
            library: self.library.unwrap_or_default(),
            algorithms: self.algorithms.clone(),
            impairment: Default::default(),
            hardware: None,
        }
    }

    /// The [`Topology`] (name [`CUSTOM`]): device `i` = `devices[i]`, switch
    /// `k` = node `devices.len() + k`, links in the given order.
    ///
    /// Errors: as [`CustomTopology::validate`] (a value built in code may be
    /// invalid; one from [`CustomTopology::parse`] never is).
    pub fn topology(&self) -> Result<Topology, SpecError> {
        self.check()?;
        Ok(self.build())
    }

    /// The example of the module doc (4 GPUs, NVLink ring, PCIe switch), as
    /// pretty JSON for the page's "example" button.
    pub const EXAMPLE: &'static str = r#"{
  "name": "4-gpu-ring",
  "title": "4 GPUs: NVLink ring, PCIe switch for the diagonals",
  "devices": [
    {"id": "g0"}, {"id": "g1"}, {"id": "g2"}, {"id": "g3"}
  ],
  "switches": [{"id": "pcie"}],
  "links": [
    {"a": "g0", "b": "g1", "kind": "nvlink", "bandwidth_gbps": 50, "latency_us": 2},
    {"a": "g1", "b": "g2", "kind": "nvlink", "bandwidth_gbps": 50, "latency_us": 2},
    {"a": "g2", "b": "g3", "kind": "nvlink", "bandwidth_gbps": 50, "latency_us": 2},
    {"a": "g3", "b": "g0", "kind": "nvlink", "bandwidth_gbps": 50, "latency_us": 2},
    {"a": "g0", "b": "pcie", "kind": "pcie", "bandwidth_gbps": 16, "latency_us": 1},
    {"a": "g1", "b": "pcie", "kind": "pcie", "bandwidth_gbps": 16, "latency_us": 1},
    {"a": "g2", "b": "pcie", "kind": "pcie", "bandwidth_gbps": 16, "latency_us": 1},
    {"a": "g3", "b": "pcie", "kind": "pcie", "bandwidth_gbps": 16, "latency_us": 1}
  ]
}"#;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bad(json: &str) -> SpecError {
        match CustomTopology::parse(json) {
            Err(e) => e,
            Ok(_) => panic!("accepted: {}", json.chars().take(200).collect::<String>()),
        }
    }

    const MIN: &str = r#"{"devices":[{"id":"a"},{"id":"b"}],"links":[{"a":"a","b":"b","bandwidth_gbps":10,"latency_us":1}]}"#;

    #[test]
    fn the_example_parses_routes_and_round_trips() {
        let s = CustomTopology::parse(CustomTopology::EXAMPLE).unwrap();
        let t = s.topology().unwrap();
        assert_eq!(t.name, "custom");
        assert_eq!(t.devices.len(), 4);
        assert_eq!(t.nodes(), 5);
        assert_eq!(t.links.len(), 8);
        assert_eq!(t.node_label(4), "pcie");
        // Neighbours on the ring: one NVLink hop.
        let r = t.route(0, 1).unwrap();
        assert_eq!(r.hops.len(), 1);
        assert_eq!((r.bandwidth_gbps, r.latency_us), (50.0, 2.0));
        // The diagonal g0 -> g2 goes through the PCIe switch.
        let d = t.route(0, 2).unwrap();
        assert_eq!(d.hops.len(), 2);
        assert_eq!((d.bandwidth_gbps, d.latency_us), (16.0, 2.0));
        assert!(t.validate().is_ok());
        let compact = s.to_json();
        assert!(
            !compact.contains(' ') || compact.contains("GPUs"),
            "{compact}"
        );
        assert_eq!(CustomTopology::parse(&compact).unwrap(), s);
        assert_eq!(s.summary(), "4 devices, 1 switch, 8 links");
    }

    #[test]
    fn defaults_and_awkward_floats_round_trip_exactly() {
        let s = CustomTopology::parse(MIN).unwrap();
        assert_eq!(s.links[0].kind, LinkKind::Pcie);
        assert_eq!(s.devices[1].server, 0);
        assert_eq!(s.topology().unwrap().title, "custom: 2 devices, 1 link");
        let mut w = s.clone();
        w.links[0].bandwidth_gbps = 0.1 + 0.2;
        w.links[0].latency_us = 1.0 / 3.0;
        w.reduce_gbps = Some(std::f64::consts::PI * 1e4);
        w.ccl_buffer_bytes = Some(200 << 20);
        w.name = Some("n/é&=?".into());
        let back = CustomTopology::parse(&w.to_json()).unwrap();
        assert_eq!(back, w);
        assert_eq!(
            back.links[0].bandwidth_gbps.to_bits(),
            (0.1f64 + 0.2).to_bits()
        );
    }

    #[test]
    fn errors_name_the_field_the_value_and_what_is_allowed() {
        let cases: Vec<(String, &str, &str, &str)> = vec![
            ("[1,2]".into(), "(text)", "an array of 2", "object"),
            ("{".into(), "(text)", "not JSON", "line 1"),
            (
                MIN.replace("\"b\",\"bandwidth", "\"z\",\"bandwidth"),
                "links[0].b",
                "\"z\"",
                "known: a, b",
            ),
            (
                MIN.replace(":10,", ":-5,"),
                "links[0].bandwidth_gbps",
                "-5",
                "from 0.001",
            ),
            (
                MIN.replace(":10,", ":0,"),
                "links[0].bandwidth_gbps",
                "0",
                "from 0.001",
            ),
            (
                MIN.replace(":10,", ":\"fast\","),
                "links[0].bandwidth_gbps",
                "\"fast\"",
                "GB/s",
            ),
            (MIN.replace(":10,", ":1e400,"), "(text)", "not JSON", "JSON"),
            (
                MIN.replace("\"latency_us\":1", "\"latency_us\":-1"),
                "links[0].latency_us",
                "-1",
                "0 or from 0.001",
            ),
            (
                MIN.replace("bandwidth_gbps", "bandwith_gbps"),
                "links[0].bandwith_gbps",
                "present",
                "unknown field; allowed: a, b, kind, bandwidth_gbps, latency_us",
            ),
            (
                MIN.replace(",\"latency_us\":1", ""),
                "links[0].latency_us",
                "missing",
                "required",
            ),
            (
                MIN.replace("{\"id\":\"b\"}", "{\"id\":\"a\"}"),
                "devices[1].id",
                "\"a\"",
                "devices[0] already has it",
            ),
            (
                MIN.replace("{\"id\":\"b\"}", "{\"id\":\"b\",\"server\":1.5}"),
                "devices[1].server",
                "1.5",
                "0..=63",
            ),
            (
                MIN.replace("{\"id\":\"b\"}", "{\"id\":\" b\"}"),
                "devices[1].id",
                "\" b\"",
                "surrounding spaces",
            ),
            (
                MIN.replace("\"b\",\"bandwidth", "\"a\",\"bandwidth"),
                "links[0].b",
                "\"a\"",
                "other than `a`",
            ),
            (
                MIN.replace(
                    "\"bandwidth_gbps\"",
                    "\"kind\":\"infiniband\",\"bandwidth_gbps\"",
                ),
                "links[0].kind",
                "\"infiniband\"",
                "hccs, pcie, roce, nvlink",
            ),
            (
                r#"{"devices":[{"id":"a"}],"links":[]}"#.into(),
                "devices",
                "1 entries",
                "2..=64",
            ),
            (
                MIN.replace("]}", "],\"reduce_gbps\":0}"),
                "reduce_gbps",
                "0",
                "from 0.001",
            ),
            (
                MIN.replace("]}", "],\"ccl_buffer_bytes\":5}"),
                "ccl_buffer_bytes",
                "5",
                "1024..=",
            ),
            (
                MIN.replace("\"bandwidth_gbps\":10", "\"bandwidth_gbps\":1e-308"),
                "links[0].bandwidth_gbps",
                "1e-308",
                "from 0.001 to 1e5",
            ),
            (
                MIN.replace("\"latency_us\":1", "\"latency_us\":1e-100"),
                "links[0].latency_us",
                "1e-100",
                "0 or from 0.001",
            ),
            (
                MIN.replace("]}", "],\"switches\":[{\"id\":\"s\"}]}"),
                "switches[0]",
                "\"s\"",
                "at least one link",
            ),
        ];
        for (json, field, value, allowed) in cases {
            let e = bad(&json);
            assert_eq!(e.field, field, "{json}: {e}");
            assert!(e.value.contains(value), "{json}: {e}");
            assert!(e.allowed.contains(allowed), "{json}: {e}");
        }
    }

    #[test]
    fn duplicate_links_disconnected_devices_and_caps() {
        let dup = MIN.replace(
            "}]}",
            "},{\"a\":\"b\",\"b\":\"a\",\"bandwidth_gbps\":1,\"latency_us\":0}]}",
        );
        let e = bad(&dup);
        assert_eq!(e.field, "links[1]");
        assert!(e.allowed.contains("links[0] already joins them"), "{e}");
        // c is linked to nothing reachable from a, b only via a device.
        let gap = r#"{"devices":[{"id":"a"},{"id":"b"},{"id":"c"}],"links":[{"a":"a","b":"b","bandwidth_gbps":1,"latency_us":0},{"a":"b","b":"c","bandwidth_gbps":1,"latency_us":0}]}"#;
        let e = bad(gap);
        assert_eq!(e.field, "links");
        assert_eq!(e.value, "no route between a and c");
        assert!(e.allowed.contains("devices do not forward"), "{e}");
        let many: Vec<String> = (0..65).map(|i| format!("{{\"id\":\"d{i}\"}}")).collect();
        let e = bad(&format!(
            "{{\"devices\":[{}],\"links\":[]}}",
            many.join(",")
        ));
        assert_eq!(
            (e.field.as_str(), e.value.as_str()),
            ("devices", "65 entries")
        );
        assert!(e.allowed.contains("2..=64"));
        let huge = " ".repeat(MAX_JSON_CHARS + 1);
        assert!(bad(&huge).allowed.contains("262144"));
        // 64 devices on one switch: the largest accepted star.
        let devs: Vec<String> = (0..64).map(|i| format!("{{\"id\":\"d{i}\"}}")).collect();
        let links: Vec<String> = (0..64)
            .map(|i| {
                format!("{{\"a\":\"d{i}\",\"b\":\"s\",\"bandwidth_gbps\":100,\"latency_us\":1}}")
            })
            .collect();
        let star = format!(
            "{{\"devices\":[{}],\"switches\":[{{\"id\":\"s\"}}],\"links\":[{}]}}",
            devs.join(","),
            links.join(",")
        );
        let t = CustomTopology::parse(&star).unwrap().topology().unwrap();
        assert_eq!(t.route(3, 60).unwrap().latency_us, 2.0);
        // A 24-device full mesh (276 links) with long ids exceeds the compact cap.
        let ids: Vec<String> = (0..24).map(|i| format!("device-number-{i:02}")).collect();
        let devs: Vec<String> = ids.iter().map(|i| format!("{{\"id\":\"{i}\"}}")).collect();
        let mut links = Vec::new();
        for a in 0..24 {
            for b in a + 1..24 {
                links.push(format!("{{\"a\":\"{}\",\"b\":\"{}\",\"kind\":\"hccs\",\"bandwidth_gbps\":18.3,\"latency_us\":3.4}}", ids[a], ids[b]));
            }
        }
        let e = bad(&format!(
            "{{\"devices\":[{}],\"links\":[{}]}}",
            devs.join(","),
            links.join(",")
        ));
        assert!(e.allowed.contains("share link"), "{e}");
    }

    proptest::proptest! {
        /// Mutations of the example (one character replaced, or the text
        /// cut): refused with a named field, or accepted and round-tripped.
        #[test]
        fn mutated_examples_are_refused_with_a_field_or_round_trip(
            at in 0usize..1200, c in proptest::char::any(), cut in proptest::bool::ANY
        ) {
            let mut chars: Vec<char> = CustomTopology::EXAMPLE.chars().collect();
            let at = at % chars.len();
            if cut { chars.truncate(at) } else { chars[at] = c }
            let text: String = chars.into_iter().collect();
            match CustomTopology::parse(&text) {
                Err(e) => proptest::prop_assert!(!e.field.is_empty() && !e.allowed.is_empty()),
                Ok(s) => {
                    proptest::prop_assert_eq!(CustomTopology::parse(&s.to_json()).unwrap(), s.clone());
                    let t = s.topology().unwrap();
                    for a in 0..t.devices.len() {
                        for b in a + 1..t.devices.len() {
                            proptest::prop_assert!(t.route(a, b).is_ok());
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn messages_read_as_documented() {
        // docs/custom-topology.md quotes these.
        assert_eq!(
            bad(&MIN.replace(":10,", ":-5,")).to_string(),
            "links[0].bandwidth_gbps: -5 — a number from 0.001 to 1e5 GB/s per direction"
        );
        assert_eq!(
            bad("{\"devices\": [").to_string(),
            "(text): not JSON — a JSON object (EOF while parsing a list at line 1 column 13)"
        );
        assert_eq!(
            bad(&MIN.replace("{\"id\":\"b\"}", "{\"id\":\"a\"}")).to_string(),
            "devices[1].id: \"a\" — a unique id; devices[0] already has it"
        );
    }

    #[test]
    fn hostile_text_never_panics() {
        for s in [
            "", "null", "0", "\"x\"", "{}", "{\"devices\":{}}", "{\"devices\":[1,2]}",
            "{\"devices\":[{},{}]}", "{\"devices\":[{\"id\":\"\u{0}\"},{\"id\":\"b\"}]}",
            "{\"devices\":[{\"id\":\"a\"},{\"id\":\"b\"}],\"links\":[{\"a\":1}]}",
            "{\"devices\":[{\"id\":\"a\"},{\"id\":\"b\"}],\"links\":[{\"a\":\"a\",\"b\":\"b\",\"bandwidth_gbps\":1e308,\"latency_us\":-0.0}]}",
            "\u{feff}{}", "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[",
        ] {
            let e = bad(s);
            assert!(!e.field.is_empty() && !e.allowed.is_empty(), "{s}: {e:?}");
            assert!(e.to_string().chars().count() < 600, "{s}");
        }
    }
}
