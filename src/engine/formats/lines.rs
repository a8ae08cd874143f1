//! Input lines with launcher prefixes stripped, grouped into streams.
//!
//! Prefixes recognised at the start of a line, in any order and mix (at
//! most [`MAX_PREFIXES`] per line):
//!
//! | prefix | written by | label |
//! |---|---|---|
//! | `[1,0]<stdout>:` / `<stderr>:` / `<stddiag>:` | Open MPI `mpirun --tag-output` (`[jobid,rank]`) | `[1,0]` |
//! | `[0] ` | MPICH / Intel MPI `-prepend-rank`, `mpirun -l` | `[0]` |
//! | ` 0: ` | Slurm `srun -l` / `--label` (task id, right-aligned) | `0` |
//! | `host: ` | pdsh / clush (`%h: `) | `host` |
//! | `[pod/name/container] ` | `kubectl logs --prefix` | `[pod/name/container]` |
//! | `YYYY-MM-DDThh:mm:ss.nnnnnnnnnZ ` | `kubectl logs --timestamps` (RFC 3339) | none |
//!
//! A label names a stream (one rank's or one host's output); timestamps
//! name none. `read` runs a reader per stream, so lines interleaved from
//! several ranks do not cut each other's tables; a launch line without a
//! label (the shell command echoed before the run) applies to every stream.

use super::Table;
use std::collections::HashMap;

/// Most prefixes stripped from one line.
pub const MAX_PREFIXES: usize = 4;

/// One input line.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Line<'a> {
    /// 1-based line number.
    pub no: usize,
    /// Stream id: 0 = no label, else an index into [`Lines::labels`].
    pub stream: usize,
    /// The line without prefixes and trailing `\r`.
    pub body: &'a str,
}

/// Every line of an input, and the stream labels seen.
#[derive(Clone, Debug)]
pub struct Lines<'a> {
    /// The lines, in order.
    pub lines: Vec<Line<'a>>,
    /// Label of each stream id (`labels[0]` is empty).
    pub labels: Vec<String>,
}

/// `[digits,digits]<stdout>:` (or `<stderr>:` / any `<word>:`) at the
/// start: `(label, rest)`.
pub(crate) fn strip_mpirun_tag(l: &str) -> Option<(&str, &str)> {
    let rest = l.strip_prefix('[')?;
    let close = rest.find("]<")?;
    let inside = &rest[..close];
    if !inside
        .split(',')
        .all(|p| !p.is_empty() && p.bytes().all(|c| c.is_ascii_digit()))
    {
        return None;
    }
    let after = &rest[close + 2..];
    let gt = after.find(">:")?;
    if !after[..gt].bytes().all(|c| c.is_ascii_alphabetic()) {
        return None;
    }
    Some((&l[..close + 2], &after[gt + 2..]))
}

/// `[digits] ` (MPICH / Intel MPI rank prefix): `(label, rest)`.
fn strip_rank_bracket(l: &str) -> Option<(&str, &str)> {
    let rest = l.strip_prefix('[')?;
    let close = rest.find("] ")?;
    let inside = &rest[..close];
    if inside.is_empty() || inside.len() > 9 || !inside.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    Some((&l[..close + 2], &rest[close + 2..]))
}

/// `[pod/name/container] ` (kubectl `--prefix`): `(label, rest)`.
fn strip_pod(l: &str) -> Option<(&str, &str)> {
    if !l.starts_with("[pod/") {
        return None;
    }
    let close = l.find("] ")?;
    Some((&l[..close + 1], &l[close + 2..]))
}

/// An RFC 3339 timestamp and one space at the start
/// (`YYYY-MM-DDThh:mm:ss.nnnnnnnnnZ `, `YYYY-MM-DDThh:mm:ss+08:00 `).
fn strip_timestamp(l: &str) -> Option<&str> {
    let b = l.as_bytes();
    let digits =
        |r: std::ops::Range<usize>| r.clone().all(|i| b.get(i).is_some_and(u8::is_ascii_digit));
    if !(digits(0..4)
        && b.get(4) == Some(&b'-')
        && digits(5..7)
        && b.get(7) == Some(&b'-')
        && digits(8..10)
        && b.get(10) == Some(&b'T')
        && digits(11..13)
        && b.get(13) == Some(&b':')
        && digits(14..16)
        && b.get(16) == Some(&b':')
        && digits(17..19))
    {
        return None;
    }
    let mut i = 19;
    if b.get(i) == Some(&b'.') {
        i += 1;
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
    }
    match b.get(i) {
        Some(b'Z') => i += 1,
        Some(b'+') | Some(b'-') => {
            i += 1;
            let start = i;
            while i < start + 5 && b.get(i).is_some_and(|c| c.is_ascii_digit() || *c == b':') {
                i += 1;
            }
        }
        _ => {}
    }
    match b.get(i) {
        Some(b' ') | Some(b'\t') => Some(&l[i + 1..]),
        None => Some(""),
        _ => None,
    }
}

/// `host: ` (pdsh) or ` 0: ` (srun `-l`): a name of letters, digits and
/// `._-` directly followed by `:` and a space (or the end of the line).
fn strip_host(l: &str) -> Option<(&str, &str)> {
    let t = l.trim_start_matches(' ');
    let end = t.find(':')?;
    let name = &t[..end];
    if name.is_empty()
        || name.len() > 64
        || !name.as_bytes()[0].is_ascii_alphanumeric()
        || !name
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'.' | b'_' | b'-'))
    {
        return None;
    }
    let rest = &t[end + 1..];
    if rest.is_empty() {
        return Some((name, rest));
    }
    rest.strip_prefix(' ').map(|r| (name, r))
}

/// Strips every launcher prefix from a line: `(label, body)`; the label
/// joins the labels found (empty if none).
pub fn strip_prefixes(line: &str) -> (String, &str) {
    let mut l = line.trim_end_matches(['\r', '\n']);
    let mut label = String::new();
    for _ in 0..MAX_PREFIXES {
        if let Some(rest) = strip_timestamp(l) {
            l = rest;
            continue;
        }
        let found = strip_mpirun_tag(l)
            .or_else(|| strip_rank_bracket(l))
            .or_else(|| strip_pod(l))
            .or_else(|| strip_host(l));
        match found {
            Some((name, rest)) => {
                if !label.is_empty() {
                    label.push(' ');
                }
                label.push_str(name);
                l = rest;
            }
            None => break,
        }
    }
    (label, l)
}

/// Splits `text` into lines with prefixes stripped, interning the labels.
pub fn split(text: &str) -> Lines<'_> {
    let mut ids: HashMap<String, usize> = HashMap::new();
    let mut labels = vec![String::new()];
    let lines = text
        .lines()
        .enumerate()
        .map(|(i, raw)| {
            let (label, body) = strip_prefixes(raw);
            let stream = if label.is_empty() {
                0
            } else {
                *ids.entry(label).or_insert_with_key(|k| {
                    labels.push(k.clone());
                    labels.len() - 1
                })
            };
            Line {
                no: i + 1,
                stream,
                body,
            }
        })
        .collect();
    Lines { lines, labels }
}

/// A reader of one tool's tables from one stream of lines.
pub(crate) trait StreamReader: Sized {
    /// What a launch line says about the run.
    type Launch: Clone;
    /// Is `body` a command line launching this tool?
    fn launch(body: &str) -> Option<Self::Launch>;
    /// A reader for a stream whose output follows `launch` (the last
    /// unlabelled launch line, if any).
    fn new(launch: Option<Self::Launch>) -> Self;
    /// A launch line: the open table ends, a new run's context starts.
    fn on_launch(&mut self, launch: Self::Launch);
    /// Any other line.
    fn on_line(&mut self, no: usize, body: &str);
    /// The tables read.
    fn finish(self) -> Vec<Table>;
}

/// Runs reader `R` over every stream of `lines`; tables of labelled
/// streams note their label when there are several streams.
pub(crate) fn read<R: StreamReader>(lines: &Lines) -> Vec<Table> {
    let mut readers: Vec<Option<R>> = Vec::new();
    readers.resize_with(lines.labels.len(), || None);
    let mut last: Option<R::Launch> = None;
    for l in &lines.lines {
        if let Some(launch) = R::launch(l.body) {
            if l.stream == 0 {
                for r in readers.iter_mut().flatten() {
                    r.on_launch(launch.clone());
                }
                last = Some(launch);
            } else {
                readers[l.stream]
                    .get_or_insert_with(|| R::new(last.clone()))
                    .on_launch(launch);
            }
            continue;
        }
        readers[l.stream]
            .get_or_insert_with(|| R::new(last.clone()))
            .on_line(l.no, l.body);
    }
    let several = lines.labels.len() > 2;
    let mut out = Vec::new();
    for (id, r) in readers.into_iter().enumerate() {
        let Some(r) = r else { continue };
        for mut t in r.finish() {
            if several && id > 0 {
                t.notes
                    .push(format!("from the lines prefixed `{}`", lines.labels[id]));
            }
            out.push(t);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_prefix_and_their_mixes() {
        let cases = [
            ("[1,0]<stdout>:#  size", "[1,0]", "#  size"),
            ("[1,12]<stderr>: x", "[1,12]", " x"),
            ("[3] #  size", "[3]", "#  size"),
            (" 0: # nThread 1", "0", "# nThread 1"),
            ("12:      8388608", "12", "     8388608"),
            (" 0:", "0", ""),
            ("node-01.cluster: #  size", "node-01.cluster", "#  size"),
            ("2024-05-01T12:00:00.123456789Z #  size", "", "#  size"),
            ("2024-05-01T12:00:00+08:00 x", "", "x"),
            (
                "2024-05-01T12:00:00Z [1,0]<stdout>:   8  2",
                "[1,0]",
                "   8  2",
            ),
            ("host1: [1,3]<stdout>:#", "host1 [1,3]", "#"),
            ("[pod/nccl-0/worker] 8 2", "[pod/nccl-0/worker]", "8 2"),
            // Not prefixes.
            (
                "host0:12978:12978 [0] NCCL INFO x",
                "",
                "host0:12978:12978 [0] NCCL INFO x",
            ),
            (
                "data_size(Bytes): | aveg_time(us):",
                "",
                "data_size(Bytes): | aveg_time(us):",
            ),
            ("#  Rank  0 Group", "", "#  Rank  0 Group"),
            (
                "root@h:~# ./all_reduce_perf",
                "",
                "root@h:~# ./all_reduce_perf",
            ),
            ("[a,0]<stdout>:x", "", "[a,0]<stdout>:x"),
            ("2024-05-01 12:00:00 x", "", "2024-05-01 12:00:00 x"),
        ];
        for (line, label, body) in cases {
            assert_eq!(strip_prefixes(line), (label.to_string(), body), "{line}");
        }
    }

    #[test]
    fn streams_are_interned_by_label() {
        let l = split("a\n[1,0]<stdout>:b\n[1,1]<stdout>:c\r\n[1,0]<stderr>:d");
        assert_eq!(l.labels, ["", "[1,0]", "[1,1]"]);
        let s: Vec<(usize, usize, &str)> =
            l.lines.iter().map(|x| (x.no, x.stream, x.body)).collect();
        assert_eq!(s, [(1, 0, "a"), (2, 1, "b"), (3, 2, "c"), (4, 1, "d")]);
    }
}
