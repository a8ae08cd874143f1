//! The column vocabulary of tables that are not a tool's own text layout:
//! rccl-tests' `--output_file` CSV and JSON records (`src/common.cu`
//! `Reporter::addResult`: `name`, `nodes`, `ranks`, `ranksPerNode`,
//! `gpusPerRank` or `gpus`, `size`, `type`, `redop`, `inPlace`, `time`,
//! `algBw`, `busBw`, `wrong`; CSV header `numCycle, collective, ranks,
//! rankspernode, gpusperrank | gpus, size, type, redop, inplace, time,
//! algbw, busbw, #wrong`), `cclsim`'s own JSON lines and CSV
//! ([`super::report`]: `collective`, `bytes`, `count`, `type`, `redop`,
//! `root`, `ranks`, `time_us`, `algbw_gbps`, `busbw_gbps`, `wrong`), and
//! tables pasted from a README or wiki (`| Message Size (Bytes) | Time (us)
//! | busbw (GB/s) |`).
//!
//! A column name is read case-insensitively, its unit from a trailing
//! `(unit)` or `_unit` (`Time (ms)`, `time_us`, `algbw_gbps`); without a
//! unit a time is µs and a bandwidth GB/s (1e9 bytes per second), as
//! nccl-tests prints them. A column whose only meaning is a bandwidth unit
//! (`ND GB200 v6 (GB/s)`) is a [`Field::Bandwidth`]: bus or algorithm
//! bandwidth is decided by the text around the table, never guessed.

/// What a column holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Field {
    /// Message size (nccl-tests' `size`).
    Size,
    /// Elements.
    Count,
    /// Element type.
    Type,
    /// Reduce op.
    Redop,
    /// Root rank.
    Root,
    /// Collective name.
    Collective,
    /// Ranks (rccl-tests with MPI: processes).
    Ranks,
    /// GPUs of the run (rccl-tests without MPI: all of them).
    Gpus,
    /// GPUs per process (rccl-tests with MPI).
    GpusPerRank,
    /// Nodes.
    Nodes,
    /// Processes per node.
    RanksPerNode,
    /// In-place flag.
    InPlace,
    /// Time of one collective.
    Time,
    /// algbw.
    Algbw,
    /// busbw.
    Busbw,
    /// A bandwidth whose kind (bus or algorithm) the name does not say.
    Bandwidth,
    /// Wrong elements / error.
    Wrong,
    /// rccl-tests' `numCycle` (`-N` repetition).
    Cycle,
}

/// One column: its field and the factor from its unit to µs (times),
/// GB/s (bandwidths) or bytes (sizes).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Column {
    /// The name as written (for messages).
    pub(crate) name: String,
    /// What it holds, if known.
    pub(crate) field: Option<Field>,
    /// Multiplies a cell into µs / GB/s / bytes.
    pub(crate) scale: f64,
}

/// Splits `Time (ms)` / `time_us` / `algbw_gbps` into a lower-case base
/// name and the unit as written.
fn base_and_unit(name: &str) -> (String, Option<String>) {
    let t = name.trim().trim_start_matches('#').trim();
    if let Some(open) = t.rfind('(') {
        if t.ends_with(')') {
            let unit = t[open + 1..t.len() - 1].trim().to_string();
            return (t[..open].trim().to_ascii_lowercase(), Some(unit));
        }
    }
    let lower = t.to_ascii_lowercase();
    for suffix in ["_us", "_ms", "_gbps", "_bytes"] {
        if let Some(b) = lower.strip_suffix(suffix) {
            let unit = match suffix {
                "_us" => "us",
                "_ms" => "ms",
                "_gbps" => "GB/s",
                _ => "B",
            };
            return (b.to_string(), Some(unit.to_string()));
        }
    }
    (lower, None)
}

/// The factor of a time unit to µs.
fn time_scale(unit: &str) -> Option<f64> {
    match unit.to_ascii_lowercase().as_str() {
        "us" | "µs" | "μs" | "usec" | "microseconds" => Some(1.0),
        "ms" | "msec" | "milliseconds" => Some(1e3),
        "s" | "sec" | "seconds" => Some(1e6),
        "ns" | "nsec" => Some(1e-3),
        _ => None,
    }
}

/// The factor of a bandwidth unit to GB/s (1e9 bytes/s). Case matters:
/// `Gb/s` and `Gbps` are bits.
fn bandwidth_scale(unit: &str) -> Option<f64> {
    match unit {
        "GB/s" | "GBps" | "GB/sec" | "gb/s" => Some(1.0),
        "Gb/s" | "Gbps" | "Gbit/s" => Some(1.0 / 8.0),
        "MB/s" | "MBps" => Some(1e-3),
        "TB/s" => Some(1e3),
        "GiB/s" => Some(1.073_741_824),
        _ => None,
    }
}

/// The factor of a size unit to bytes (binary prefixes, as the tools
/// take sizes: nccl-tests `-b 1K` is 1024).
fn size_scale(unit: &str) -> Option<f64> {
    match unit.to_ascii_lowercase().as_str() {
        "b" | "bytes" | "byte" => Some(1.0),
        "kb" | "kib" | "k" => Some(1024.0),
        "mb" | "mib" | "m" => Some(1048576.0),
        "gb" | "gib" | "g" => Some(1073741824.0),
        _ => None,
    }
}

/// Reads a column name. `Err` names a unit the column cannot be read in.
pub(crate) fn column(name: &str) -> Result<Column, String> {
    let (base, unit) = base_and_unit(name);
    let field = match base.as_str() {
        "size" | "bytes" | "size_bytes" | "message size" | "msg size" | "message_size"
        | "msgsize" | "data size" | "data_size" | "buffer size" => Some(Field::Size),
        "count" | "elements" => Some(Field::Count),
        "type" | "dtype" | "datatype" | "data type" => Some(Field::Type),
        "redop" | "reduce op" => Some(Field::Redop),
        "root" => Some(Field::Root),
        "collective" | "name" | "coll" | "operation" => Some(Field::Collective),
        "ranks" | "nranks" => Some(Field::Ranks),
        "gpus" | "ngpus" => Some(Field::Gpus),
        "gpusperrank" | "gpus_per_rank" => Some(Field::GpusPerRank),
        "nodes" | "nnodes" => Some(Field::Nodes),
        "rankspernode" | "ranks_per_node" => Some(Field::RanksPerNode),
        "inplace" | "in_place" | "in-place" => Some(Field::InPlace),
        "time" | "cputime" | "avg time" | "latency" | "avg latency" | "avg_latency"
        | "aveg_time" | "duration" => Some(Field::Time),
        "algbw" | "alg_bw" | "alg bw" | "algorithm bandwidth" | "alg_bandwidth" => {
            Some(Field::Algbw)
        }
        "busbw" | "bus_bw" | "bus bw" | "bus bandwidth" => Some(Field::Busbw),
        "bandwidth" | "bw" => Some(Field::Bandwidth),
        "wrong" | "#wrong" | "nwrong" | "errors" | "error" => Some(Field::Wrong),
        "numcycle" | "cycle" => Some(Field::Cycle),
        _ => None,
    };
    let unit_bandwidth = unit.as_deref().and_then(bandwidth_scale);
    let field = match (field, unit_bandwidth) {
        // `ND GB200 v6 (GB/s)`: a bandwidth by its unit alone.
        (None, Some(_)) => Some(Field::Bandwidth),
        (f, _) => f,
    };
    let scale = match (field, unit.as_deref()) {
        (_, None) => 1.0,
        (Some(Field::Time), Some(u)) => time_scale(u).ok_or_else(|| {
            format!(
                "column `{}`: time unit `{u}` (expected us, ms, s or ns)",
                name.trim()
            )
        })?,
        (Some(Field::Algbw | Field::Busbw | Field::Bandwidth), Some(u)) => bandwidth_scale(u)
            .ok_or_else(|| {
                format!(
                    "column `{}`: bandwidth unit `{u}` (expected GB/s, MB/s, Gb/s, GiB/s or TB/s)",
                    name.trim()
                )
            })?,
        (Some(Field::Size), Some(u)) => size_scale(u).ok_or_else(|| {
            format!(
                "column `{}`: size unit `{u}` (expected B, KB, MB or GB)",
                name.trim()
            )
        })?,
        _ => 1.0,
    };
    Ok(Column {
        name: name.trim().to_string(),
        field,
        scale,
    })
}

/// A cell without surrounding quotes and spaces.
pub(crate) fn unquote(cell: &str) -> &str {
    let t = cell.trim();
    t.strip_prefix('"')
        .and_then(|x| x.strip_suffix('"'))
        .unwrap_or(t)
        .trim()
}

/// A message size as written in a table: digits (`1048576`, `1,048,576`),
/// or a number and a unit (`1K`, `65K`, `1.5 MB`, `8G`, `64 MiB`).
///
/// A label names a power of two as pasted tables round it: `65K`, `132K`,
/// `524K`, `33M`, `67M`, `134M` are 2^16, 2^17, 2^19, 2^25, 2^26, 2^27
/// written as rounded (or truncated) decimal thousands, millions. So a
/// label within 3.5 % (0.05 in log2) of a power of two, read with decimal
/// or binary prefixes, is that power of two; any other label is read with
/// binary prefixes exactly (`96K` = 98304, `1.5M` = 1572864), as nccl-tests
/// reads `-b`.
pub(crate) fn size_label(cell: &str) -> Option<u64> {
    let t = unquote(cell);
    let plain: String = t.chars().filter(|c| *c != ',' && *c != '_').collect();
    if !plain.is_empty() && plain.len() <= 20 && plain.bytes().all(|c| c.is_ascii_digit()) {
        return plain.parse().ok();
    }
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .filter(|&i| i > 0)?;
    let (num, unit) = (&t[..split], t[split..].trim());
    let value: f64 = num
        .parse()
        .ok()
        .filter(|v: &f64| v.is_finite() && *v > 0.0)?;
    let power = match unit.to_ascii_lowercase().as_str() {
        "b" | "bytes" => 0,
        "k" | "kb" | "kib" => 1,
        "m" | "mb" | "mib" => 2,
        "g" | "gb" | "gib" => 3,
        "t" | "tb" | "tib" => 4,
        _ => return None,
    };
    let binary = value * 1024f64.powi(power);
    let decimal = value * 1000f64.powi(power);
    if binary > 1.8e19 {
        return None;
    }
    for v in [binary, decimal] {
        let l = v.log2();
        if (l - l.round()).abs() <= 0.05 && l.round() >= 0.0 && l.round() < 64.0 {
            return Some(1u64 << (l.round() as u32));
        }
    }
    (binary.fract() == 0.0).then_some(binary as u64)
}

/// A number cell: `Ok(None)` for a missing value (empty, `N/A`, `nan`,
/// `-`), `Err` for text that is not a finite number ≥ 0.
pub(crate) fn number(cell: &str) -> Result<Option<f64>, ()> {
    let t = unquote(cell);
    if t.is_empty() || t == "-" || super::is_missing(t) {
        return Ok(None);
    }
    super::parse_nonneg(t).map(Some).ok_or(())
}

/// An in-place flag: `1`/`0`, `true`/`false`, `in-place`/`out-of-place`.
pub(crate) fn in_place(cell: &str) -> Option<bool> {
    match unquote(cell).to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" | "in-place" | "inplace" => Some(true),
        "0" | "false" | "no" | "out-of-place" | "outofplace" => Some(false),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_name_the_power_of_two_they_round() {
        for (label, bytes) in [
            ("1K", 1024u64),
            ("65K", 65536),
            ("132K", 131072),
            ("524K", 524288),
            ("1M", 1 << 20),
            ("33M", 1 << 25),
            ("67M", 1 << 26),
            ("134M", 1 << 27),
            ("268M", 1 << 28),
            ("536M", 1 << 29),
            ("1G", 1 << 30),
            ("8G", 1 << 33),
            ("64 MiB", 1 << 26),
            ("1KB", 1024),
            ("96K", 98304),
            ("1.5M", 1572864),
            ("1048576", 1 << 20),
            ("1,048,576", 1 << 20),
            ("\"4096\"", 4096),
        ] {
            assert_eq!(size_label(label), Some(bytes), "{label}");
        }
        for bad in ["", "K", "1X", "-1K", "1e3", "99999999999T"] {
            assert_eq!(size_label(bad), None, "{bad}");
        }
    }

    #[test]
    fn names_and_units() {
        let c = column("Message Size (Bytes)").unwrap();
        assert_eq!((c.field, c.scale), (Some(Field::Size), 1.0));
        let c = column("ND GB200 v6 (GB/s)").unwrap();
        assert_eq!(c.field, Some(Field::Bandwidth));
        let c = column("Time (ms)").unwrap();
        assert_eq!((c.field, c.scale), (Some(Field::Time), 1e3));
        let c = column("busbw_gbps").unwrap();
        assert_eq!((c.field, c.scale), (Some(Field::Busbw), 1.0));
        let c = column("algBw").unwrap();
        assert_eq!(c.field, Some(Field::Algbw));
        let c = column("bandwidth (Gbps)").unwrap();
        assert_eq!((c.field, c.scale), (Some(Field::Bandwidth), 0.125));
        assert_eq!(column("#wrong").unwrap().field, Some(Field::Wrong));
        assert_eq!(column("host").unwrap().field, None);
        assert_eq!(
            column("time (fortnights)").unwrap_err(),
            "column `time (fortnights)`: time unit `fortnights` (expected us, ms, s or ns)"
        );
    }
}
