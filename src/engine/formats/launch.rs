//! Command lines that launch a benchmark: which program, and how many
//! processes and nodes the launcher starts.
//!
//! Launchers and their options (before the program; the program's own
//! options after it are returned untouched):
//!
//! | launcher | processes | per node | nodes |
//! |---|---|---|---|
//! | Open MPI `mpirun` / `mpiexec` / `orterun` / `prterun` | `-np N`, `-n N`, `--np N`, `-c N` | `-N n`, `--npernode n`, `-npernode n` | `--host a,b`, `-H a,b` |
//! | MPICH / Intel MPI `mpirun` / `mpiexec(.hydra)` | `-n N`, `-np N` | `-ppn n` | `-hosts a,b` |
//! | Slurm `srun` | `-n N`, `--ntasks=N` (its `-c` is CPUs per task) | `--ntasks-per-node=n` | `-N n`, `--nodes=n` |
//! | Cray `aprun` | `-n N` | `-N n` | — |
//!
//! (Open MPI `mpirun(1)`, MPICH Hydra `mpiexec -help`, Slurm `srun(1)`,
//! Cray `aprun(1)` manual pages.) Without a process count, `per node ×
//! nodes` is used when both are given.

/// A command line that runs a benchmark program.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Launch {
    /// The program's base name (`all_reduce_perf`).
    pub program: String,
    /// The launcher's base name, if any (`mpirun`, `srun`).
    pub launcher: Option<String>,
    /// Processes the launcher starts.
    pub procs: Option<usize>,
    /// Nodes the launcher names.
    pub nodes: Option<usize>,
    /// The program's own arguments.
    pub args: Vec<String>,
}

const LAUNCHERS: [&str; 8] = [
    "mpirun",
    "mpiexec",
    "mpiexec.hydra",
    "orterun",
    "prterun",
    "srun",
    "aprun",
    "jsrun",
];

/// A positive count below 2^20 (more ranks than any machine has is a typo).
pub(crate) fn parse_usize(s: &str) -> Option<usize> {
    if s.is_empty() || s.len() > 7 || !s.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    s.parse().ok().filter(|&n: &usize| n > 0 && n < 1 << 20)
}

fn base(token: &str) -> &str {
    token.rsplit('/').next().unwrap_or(token)
}

/// Parses a command line whose program's base name satisfies
/// `is_program` (`None` if no token does).
pub fn parse(line: &str, is_program: impl Fn(&str) -> bool) -> Option<Launch> {
    let tokens: Vec<&str> = line.split_whitespace().collect();
    let at = tokens.iter().position(|t| is_program(base(t)))?;
    let mut launch = Launch {
        program: base(tokens[at]).to_string(),
        args: tokens[at + 1..].iter().map(|s| s.to_string()).collect(),
        ..Launch::default()
    };
    let Some(start) = tokens[..at]
        .iter()
        .position(|t| LAUNCHERS.contains(&base(t)))
    else {
        return Some(launch);
    };
    let launcher = base(tokens[start]);
    launch.launcher = Some(launcher.to_string());
    let slurm = launcher == "srun";
    let (mut procs, mut per_node, mut nodes) = (None, None, None);
    let opts = &tokens[start + 1..at];
    let mut i = 0;
    while i < opts.len() {
        let (flag, inline) = match opts[i].split_once('=') {
            Some((f, v)) if f.starts_with('-') => (f, Some(v)),
            _ => (opts[i], None),
        };
        let value = inline.or_else(|| opts.get(i + 1).copied());
        let count = value.and_then(parse_usize);
        match flag {
            "-np" | "--np" | "-n" | "--n" | "--ntasks" => procs = count.or(procs),
            // srun's `-c` is CPUs per task, not a process count.
            "-c" if !slurm => procs = count.or(procs),
            "-N" if slurm => nodes = count.or(nodes),
            "-N" | "--npernode" | "-npernode" | "-ppn" | "--ppn" | "--ntasks-per-node" => {
                per_node = count.or(per_node)
            }
            "--nodes" | "--nnodes" => nodes = count.or(nodes),
            "--host" | "-host" | "-H" | "-hosts" | "--hosts" => {
                if let Some(v) = value {
                    nodes = Some(v.split(',').filter(|h| !h.is_empty()).count());
                }
            }
            f => {
                // Glued short forms: `-n16`, `-N2`.
                if let Some(n) = f.strip_prefix("-n").and_then(parse_usize) {
                    procs = Some(n);
                } else if let Some(n) = f.strip_prefix("-N").and_then(parse_usize) {
                    if slurm {
                        nodes = Some(n);
                    } else {
                        per_node = Some(n);
                    }
                }
            }
        }
        i += 1;
    }
    launch.nodes = nodes;
    launch.procs = procs.or(match (per_node, nodes) {
        (Some(p), Some(n)) => p.checked_mul(n),
        _ => None,
    });
    Some(launch)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn perf(b: &str) -> bool {
        b.ends_with("_perf") && b.len() > 5
    }

    #[test]
    fn launchers_and_their_counts() {
        let l = parse(
            "$ mpirun -np 8 --mca pml ob1 ./build/all_reduce_perf -b 8 -g 1",
            perf,
        )
        .unwrap();
        assert_eq!(
            (l.program.as_str(), l.launcher.as_deref(), l.procs, l.nodes),
            ("all_reduce_perf", Some("mpirun"), Some(8), None)
        );
        assert_eq!(l.args, ["-b", "8", "-g", "1"]);
        let l = parse("srun -l -N 2 --ntasks-per-node=8 ./all_gather_perf", perf).unwrap();
        assert_eq!((l.procs, l.nodes), (Some(16), Some(2)));
        let l = parse("srun --nodes=4 --ntasks=32 all_gather_perf", perf).unwrap();
        assert_eq!((l.procs, l.nodes), (Some(32), Some(4)));
        let l = parse("mpirun --host a:8,b:8 -N 8 x/alltoall_perf", perf).unwrap();
        assert_eq!((l.procs, l.nodes), (Some(16), Some(2)));
        let l = parse("mpiexec -hosts n1,n2 -ppn 4 alltoall_perf", perf).unwrap();
        assert_eq!(l.procs, Some(8));
        let l = parse("mpirun -n16 all_reduce_perf", perf).unwrap();
        assert_eq!(l.procs, Some(16));
        let l = parse("./build/all_reduce_perf -b 8 -n 20", perf).unwrap();
        assert_eq!((l.launcher, l.procs), (None, None));
        assert_eq!(parse("echo hello", perf), None);
        assert_eq!(
            parse("mpirun -np 0 all_reduce_perf", perf).unwrap().procs,
            None
        );
    }
}
