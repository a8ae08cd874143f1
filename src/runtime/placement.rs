//! Which web worker hosts which rank, and how a message between two ranks
//! travels. Pure Rust (no web types; compiled natively by
//! `tests/runtime_native.rs`). (Not to be confused with
//! `engine::compressed::Placement`, where a compressed run compresses.)
//!
//! A run uses [`worker_count`] workers (never more than ranks). Ranks are
//! assigned in **contiguous, near-equal blocks** ([`WorkerLayout::new`]): worker
//! `k` hosts ranks `ceil(k·n/w) .. ceil((k+1)·n/w)`, so neighbouring ranks
//! (a ring's neighbours, a server's 8 NPUs) share a worker. With the worker
//! count a power of two and `n = 8·S` ranks, every block is a whole number of
//! servers or an equal part of one (64 ranks on 4 workers: 2 servers each; on
//! 16 workers: half a server each).
//!
//! A message between two ranks on the same worker is delivered locally (queued
//! straight into the receiver's machine, no `postMessage`); between workers it
//! goes on the one `MessageChannel` of that worker pair, which is FIFO, so
//! the per-rank-pair FIFO order the rank machine relies on holds either way.

use thiserror::Error;

/// Fewest workers a run may use when it has at least that many ranks, even
/// where `navigator.hardwareConcurrency` reports fewer cores (it may be
/// capped or unknown): workers are threads, a few more than cores only time
/// slice, and 4 keeps a run's message passing genuinely concurrent.
pub const MIN_WORKERS: usize = 4;

/// Most workers a run uses (the old one-worker-per-rank limit): each worker
/// instantiates its own copy of the wasm module (startup time and memory per
/// worker), and more threads than cores only add switching.
pub const MAX_WORKERS: usize = 16;

/// How many workers a run of `ranks` ranks uses:
/// `min(ranks, cap)`, where `cap` is `hardware_concurrency`
/// (`navigator.hardwareConcurrency`; [`MIN_WORKERS`] when unknown) clamped to
/// `MIN_WORKERS..=MAX_WORKERS` and rounded down to a power of two (so that
/// blocks of `8·S` ranks align with servers, see the module doc).
/// Returns 0 only for 0 ranks.
pub fn worker_count(ranks: usize, hardware_concurrency: Option<usize>) -> usize {
    let cap = hardware_concurrency
        .unwrap_or(MIN_WORKERS)
        .clamp(MIN_WORKERS, MAX_WORKERS);
    // Largest power of two <= cap (cap >= 4 here).
    let cap = 1usize << (usize::BITS - 1 - cap.leading_zeros());
    ranks.min(cap)
}

/// Why a placement cannot be built. Never a panic.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum LayoutError {
    /// No ranks, no workers, or more workers than ranks (a worker would idle).
    #[error("cannot place {ranks} ranks on {workers} workers (need 1 <= workers <= ranks)")]
    Shape {
        /// Ranks.
        ranks: usize,
        /// Workers.
        workers: usize,
    },
    /// A worker's rank table does not match the schedule.
    #[error("the rank table has {got} entries for {ranks} ranks, or names a worker outside 0..{workers}, or leaves a worker empty")]
    Table {
        /// Entries in the table.
        got: usize,
        /// Ranks in the schedule.
        ranks: usize,
        /// Workers.
        workers: usize,
    },
}

/// Where a message from one rank to another goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Route {
    /// Both ranks live on this worker: queue it into the receiver directly.
    Local,
    /// The receiver lives on worker `.0`: post it on that worker's port.
    Remote(usize),
}

/// The rank → worker assignment of one run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WorkerLayout {
    worker_of: Vec<usize>,
    workers: usize,
}

impl WorkerLayout {
    /// `ranks` ranks on `workers` workers in contiguous near-equal blocks:
    /// rank `r` on worker `floor(r·workers / ranks)` (block sizes differ by at
    /// most one).
    ///
    /// Errors: [`LayoutError::Shape`] unless `1 <= workers <= ranks`.
    pub fn new(ranks: usize, workers: usize) -> Result<WorkerLayout, LayoutError> {
        if workers == 0 || workers > ranks {
            return Err(LayoutError::Shape { ranks, workers });
        }
        Ok(WorkerLayout {
            worker_of: (0..ranks).map(|r| r * workers / ranks).collect(),
            workers,
        })
    }

    /// A placement from its rank table (`worker_of[rank]`, as carried in the
    /// worker's init message), checked against the schedule's `ranks`.
    ///
    /// Errors: [`LayoutError::Table`] if the table's length is not
    /// `ranks`, names a worker `>= workers`, or leaves a worker without ranks.
    pub fn from_table(
        worker_of: Vec<usize>,
        ranks: usize,
        workers: usize,
    ) -> Result<WorkerLayout, LayoutError> {
        let bad = LayoutError::Table {
            got: worker_of.len(),
            ranks,
            workers,
        };
        if worker_of.len() != ranks || worker_of.iter().any(|&w| w >= workers) {
            return Err(bad);
        }
        let mut used = vec![false; workers];
        for &w in &worker_of {
            used[w] = true;
        }
        if used.contains(&false) {
            return Err(bad);
        }
        Ok(WorkerLayout { worker_of, workers })
    }

    /// Number of ranks.
    pub fn ranks(&self) -> usize {
        self.worker_of.len()
    }

    /// Number of workers.
    pub fn workers(&self) -> usize {
        self.workers
    }

    /// The rank table: `table()[rank]` is the worker hosting `rank`.
    pub fn table(&self) -> &[usize] {
        &self.worker_of
    }

    /// The worker hosting `rank` (`None` outside the run).
    pub fn worker_of(&self, rank: usize) -> Option<usize> {
        self.worker_of.get(rank).copied()
    }

    /// The ranks worker `worker` hosts, ascending.
    pub fn ranks_of(&self, worker: usize) -> Vec<usize> {
        (0..self.ranks())
            .filter(|&r| self.worker_of[r] == worker)
            .collect()
    }

    /// How a message from `from` (hosted here) to `to` travels; `None` if
    /// `to` is not a rank of the run.
    pub fn route(&self, from: usize, to: usize) -> Option<Route> {
        let (a, b) = (self.worker_of(from)?, self.worker_of(to)?);
        Some(if a == b {
            Route::Local
        } else {
            Route::Remote(b)
        })
    }

    /// The worker pairs `(a, b)`, `a < b`, that need a channel for the
    /// communicating rank pairs `rank_pairs` (pairs on one worker need none),
    /// sorted, each once. Pairs naming a rank outside the run are skipped
    /// (the pool refuses them before).
    pub fn worker_pairs(&self, rank_pairs: &[(usize, usize)]) -> Vec<(usize, usize)> {
        let mut pairs: Vec<(usize, usize)> = rank_pairs
            .iter()
            .filter_map(|&(a, b)| Some((self.worker_of(a)?, self.worker_of(b)?)))
            .filter(|(a, b)| a != b)
            .map(|(a, b)| (a.min(b), a.max(b)))
            .collect();
        pairs.sort_unstable();
        pairs.dedup();
        pairs
    }

    /// `ranks` as text: `3`, `0–15`, or `0, 2, 5` (for messages).
    pub fn describe_ranks(ranks: &[usize]) -> String {
        match ranks {
            [] => "none".into(),
            [r] => r.to_string(),
            [a, .., b] if b - a + 1 == ranks.len() => format!("{a}–{b}"),
            _ => ranks
                .iter()
                .map(usize::to_string)
                .collect::<Vec<_>>()
                .join(", "),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn worker_count_clamps_and_rounds() {
        // Unknown or small concurrency: 4 workers (fewer only for fewer ranks).
        assert_eq!(worker_count(64, None), 4);
        assert_eq!(worker_count(64, Some(2)), 4);
        assert_eq!(worker_count(3, Some(2)), 3);
        assert_eq!(worker_count(1, None), 1);
        assert_eq!(worker_count(0, Some(8)), 0);
        // Rounded down to a power of two, capped at 16.
        assert_eq!(worker_count(64, Some(6)), 4);
        assert_eq!(worker_count(64, Some(8)), 8);
        assert_eq!(worker_count(64, Some(12)), 8);
        assert_eq!(worker_count(64, Some(16)), 16);
        assert_eq!(worker_count(64, Some(128)), 16);
        assert_eq!(worker_count(8, Some(128)), 8);
        assert_eq!(worker_count(16, Some(16)), 16);
    }

    #[test]
    fn contiguous_near_equal_blocks() {
        let p = WorkerLayout::new(64, 4).unwrap();
        for w in 0..4 {
            assert_eq!(p.ranks_of(w), (16 * w..16 * w + 16).collect::<Vec<_>>());
        }
        // 8-rank servers of 64 ranks on 16 workers: each server on exactly 2.
        let p = WorkerLayout::new(64, 16).unwrap();
        for s in 0..8 {
            let ws: std::collections::BTreeSet<usize> = (8 * s..8 * s + 8)
                .map(|r| p.worker_of(r).unwrap())
                .collect();
            assert_eq!(ws.into_iter().collect::<Vec<_>>(), vec![2 * s, 2 * s + 1]);
        }
        // Uneven: 10 ranks on 4 workers -> 3, 2, 3, 2.
        let p = WorkerLayout::new(10, 4).unwrap();
        assert_eq!(p.table(), &[0, 0, 0, 1, 1, 2, 2, 2, 3, 3]);
        assert_eq!(p.ranks_of(2), vec![5, 6, 7]);
        // Block sizes differ by at most one, every rank once, for all shapes.
        for n in 1..=64 {
            for w in 1..=n.min(16) {
                let p = WorkerLayout::new(n, w).unwrap();
                let sizes: Vec<usize> = (0..w).map(|k| p.ranks_of(k).len()).collect();
                assert_eq!(sizes.iter().sum::<usize>(), n);
                assert!(sizes.iter().max().unwrap() - sizes.iter().min().unwrap() <= 1);
                assert!(p
                    .table()
                    .windows(2)
                    .all(|x| x[1] == x[0] || x[1] == x[0] + 1));
            }
        }
        assert_eq!(
            WorkerLayout::new(4, 5),
            Err(LayoutError::Shape {
                ranks: 4,
                workers: 5
            })
        );
        assert!(WorkerLayout::new(0, 0).is_err());
        assert!(WorkerLayout::new(3, 0).is_err());
    }

    #[test]
    fn routes_and_worker_pairs() {
        let p = WorkerLayout::new(8, 4).unwrap(); // [0,0,1,1,2,2,3,3]
        assert_eq!(p.route(0, 1), Some(Route::Local));
        assert_eq!(p.route(1, 2), Some(Route::Remote(1)));
        assert_eq!(p.route(7, 0), Some(Route::Remote(0)));
        assert_eq!(p.route(7, 8), None);
        // A ring's pairs: only the block boundaries cross workers.
        let ring: Vec<(usize, usize)> = (0..8).map(|r| (r, (r + 1) % 8)).collect();
        assert_eq!(p.worker_pairs(&ring), vec![(0, 1), (0, 3), (1, 2), (2, 3)]);
        // A full mesh: every worker pair once.
        let mesh: Vec<(usize, usize)> = (0..8)
            .flat_map(|a| (a + 1..8).map(move |b| (a, b)))
            .collect();
        assert_eq!(p.worker_pairs(&mesh).len(), 6);
        // One worker: nothing crosses.
        assert!(WorkerLayout::new(8, 1)
            .unwrap()
            .worker_pairs(&mesh)
            .is_empty());
    }

    #[test]
    fn tables_are_checked() {
        let p = WorkerLayout::from_table(vec![0, 0, 1], 3, 2).unwrap();
        assert_eq!(p, WorkerLayout::new(3, 2).unwrap());
        for (t, n, w) in [
            (vec![0, 0], 3, 2),
            (vec![0, 0, 2], 3, 2),
            (vec![0, 0, 0], 3, 2),
        ] {
            assert!(matches!(
                WorkerLayout::from_table(t, n, w),
                Err(LayoutError::Table { .. })
            ));
        }
        assert_eq!(WorkerLayout::describe_ranks(&[3]), "3");
        assert_eq!(WorkerLayout::describe_ranks(&[0, 1, 2, 3]), "0–3");
        assert_eq!(WorkerLayout::describe_ranks(&[0, 2, 5]), "0, 2, 5");
    }
}
