//! Messages between the page, the rank workers and each other, as pure
//! Rust on every target: the run's request and results (`RunRequest`,
//! `RankOutput`, `RunSummary`, `RunError`, which the UI relies on) and the
//! JSON headers of the wire format. The JS wrapping of those headers is
//! [`super::browser::codec`] (wasm only).

use super::fault::Fault;
use super::machine::{MachineError, Payload, RankMachine};
use crate::engine::dtype::{DType, ReduceOp};
use crate::engine::schedule::Schedule;
use serde::{Deserialize, Serialize};
use thiserror::Error;

/// Everything needed to run one collective on the workers. Plain serde data.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunRequest {
    /// The (verified) schedule. Its ranks are spread over a few workers
    /// ([`super::placement`]).
    pub schedule: Schedule,
    /// Element type.
    pub dtype: DType,
    /// Reduce op.
    pub op: ReduceOp,
    /// Input seed (each worker makes its own input with `engine::input`).
    pub seed: u64,
    /// Elements per rank buffer.
    pub elems: usize,
    /// The run fails with `RunError::Timeout` if not done by then, ms.
    pub timeout_ms: u32,
    /// Compressed transfers ([`crate::engine::compressed`]): each rank is
    /// built with [`super::machine::RankMachine::compressed`]; with
    /// `placement=once` the schedule is the AllGather of the compressed
    /// inputs and `elems` the message's elements. `None`: uncompressed.
    #[serde(default)]
    pub compressed: Option<crate::engine::compressed::CompressedSetup>,
}

impl RunRequest {
    /// Rank `rank`'s state machine for this request: [`RankMachine::new`],
    /// or [`RankMachine::compressed`] when `compressed` is set.
    ///
    /// Errors: [`MachineError`] (see those constructors).
    pub fn rank_machine<P: Payload>(&self, rank: usize) -> Result<RankMachine<P>, MachineError> {
        self.rank_machine_with_progress(rank, &mut || {})
    }

    /// [`Self::rank_machine`], calling `progress` as the input is built
    /// ([`RankMachine::new_with_progress`]): a browser worker posts its
    /// heartbeat from it.
    ///
    /// Errors: as [`Self::rank_machine`].
    pub fn rank_machine_with_progress<P: Payload>(
        &self,
        rank: usize,
        progress: &mut dyn FnMut(),
    ) -> Result<RankMachine<P>, MachineError> {
        match &self.compressed {
            None => RankMachine::new_with_progress(
                &self.schedule,
                rank,
                self.dtype,
                self.op,
                self.seed,
                self.elems,
                progress,
            ),
            Some(setup) => RankMachine::compressed_with_progress(
                &self.schedule,
                rank,
                self.dtype,
                self.op,
                self.seed,
                self.elems,
                setup,
                progress,
            ),
        }
    }
}

/// One rank's result.
#[derive(Clone, Debug, PartialEq)]
pub struct RankOutput {
    /// The rank.
    pub rank: usize,
    /// Its whole final buffer (little-endian elements).
    pub buffer: Vec<u8>,
    /// `samples[s][chunk]`: the value of the first element of each chunk
    /// after `s` steps (`s = 0` is the initial buffer; `steps + 1` rows);
    /// `None` for an empty chunk or one that holds nothing yet.
    pub samples: Vec<Vec<Option<f64>>>,
}

/// The run as a whole.
#[derive(Clone, Debug, PartialEq)]
pub struct RunSummary {
    /// Browser wall time from starting the workers to the last output, ms.
    pub wall_ms: f64,
    /// The collective's own wall time, ms: from the moment the last worker
    /// had its ranks' inputs built (every rank ready, as after the barrier
    /// before a timed `MPI_Allreduce`) to the last rank's output, by the
    /// workers' own clocks; `None` if a worker did not stamp it. Excludes
    /// wasm start-up and input generation, which `wall_ms` includes.
    pub collective_ms: Option<f64>,
    /// Which reduce kernels the workers ran: `"simd128"` (the `worker_simd`
    /// binary, where the browser validates WebAssembly SIMD) or `"scalar"`.
    pub kernels: &'static str,
}

/// Why a run failed. Messages are shown on the page as they are.
#[derive(Clone, Debug, PartialEq, Error)]
pub enum RunError {
    /// Workers could not be created or wired.
    #[error("could not start the rank workers: {0}")]
    Spawn(String),
    /// A worker threw or reported an error.
    #[error("rank {rank}'s worker failed: {message}")]
    Worker { rank: usize, message: String },
    /// Not every rank finished in time.
    #[error("timed out after {ms} ms waiting for ranks {waiting:?}")]
    Timeout { ms: u32, waiting: Vec<usize> },
    /// Every unfinished rank is blocked on a receive and no worker has said
    /// anything for `ms` ms: a message was lost or is late, or a worker died.
    #[error(
        "no progress for {ms} ms: {} (a message was lost or is late, or a worker died)",
        describe_waits(waits)
    )]
    Stalled {
        /// The stall threshold that was exceeded, ms.
        ms: u32,
        /// `(rank, waits for rank, at step)` of every unfinished rank.
        waits: Vec<(usize, usize, usize)>,
    },
    /// As [`RunError::Stalled`], and one worker did not answer the pool's
    /// ping (it was terminated or crashed silently): every rank it hosted
    /// failed with it.
    #[error(
        "no progress for {ms} ms: the worker hosting {} stopped answering (terminated or crashed), so {} failed with it; {} (a worker died)",
        rank_words(ranks),
        if ranks.len() == 1 { "its rank" } else { "all its ranks" },
        describe_waits(waits)
    )]
    WorkerLost {
        /// The stall threshold that was exceeded, ms.
        ms: u32,
        /// The lost worker's index.
        worker: usize,
        /// The ranks it hosted (all failed).
        ranks: Vec<usize>,
        /// `(rank, waits for rank, at step)` of every unfinished rank on the
        /// workers that still answer.
        waits: Vec<(usize, usize, usize)>,
    },
}

/// `rank 3` or `ranks 0–15`.
fn rank_words(ranks: &[usize]) -> String {
    let list = super::placement::WorkerLayout::describe_ranks(ranks);
    if ranks.len() == 1 {
        format!("rank {list}")
    } else {
        format!("ranks {list}")
    }
}

/// Most waits [`describe_waits`] spells out (64 ranks would be a wall of text).
const MAX_WAITS_SHOWN: usize = 8;

/// `rank 2 waits for rank 1 (step 3); ...`, the first [`MAX_WAITS_SHOWN`]
/// of them, then `; and N more ranks wait`.
fn describe_waits(waits: &[(usize, usize, usize)]) -> String {
    let mut s = waits
        .iter()
        .take(MAX_WAITS_SHOWN)
        .map(|(r, from, step)| format!("rank {r} waits for rank {from} (step {step})"))
        .collect::<Vec<_>>()
        .join("; ");
    if waits.len() > MAX_WAITS_SHOWN {
        s.push_str(&format!(
            "; and {} more ranks wait",
            waits.len() - MAX_WAITS_SHOWN
        ));
    }
    s
}

// ---------------------------------------------------------------------------
// The codec.
//
// Every message on the wire (page <-> worker, worker <-> worker) is a plain JS
// object `{ h: string, b?: ArrayBuffer, p?: MessagePort[] }`:
// - `h`: the JSON of one of the header types below ([`ToWorker`],
//   [`Routed`], [`ToPage`]);
// - `b`: the bytes (a chunk's payload, or a rank's final buffer), always
//   transferred, never copied by the structured clone;
// - `p`: the init message's ports, transferred, in the order of
//   `Init::peers`.
// The JSON part is pure Rust (tested natively); the JS wrapping is wasm
// only (`browser::codec`).
// ---------------------------------------------------------------------------

pub use super::machine::ChunkHeader;

/// The header of a chunk between workers: one port carries the messages of
/// every rank pair across that worker pair, so it names both ranks.
/// JSON: `{"from":F,"to":T,"step":S,"first":C,"count":K}`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Routed {
    /// Sending rank.
    pub from: usize,
    /// Receiving rank.
    pub to: usize,
    /// Which chunks.
    #[serde(flatten)]
    pub chunk: ChunkHeader,
}

/// Page -> worker. [`ToWorker::Init`] is the first message a worker
/// receives, sent after the worker said [`ToPage::Ready`]; after it only
/// [`ToWorker::Ping`]s.
// One init per worker per run and pings are rare: boxing the request buys nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ToWorker {
    /// Run the ranks `r` with `worker_of[r] == worker` of `request`;
    /// `peers[i]` is the worker at the other end of the `i`-th transferred
    /// port.
    Init {
        /// This worker's index.
        worker: usize,
        /// The run's rank table ([`super::placement::WorkerLayout::table`]):
        /// `worker_of[rank]` is the worker hosting `rank`.
        worker_of: Vec<usize>,
        /// The run (same for every worker).
        request: RunRequest,
        /// Peer worker of each port, in port order.
        peers: Vec<usize>,
        /// A test-only injected fault ([`Fault`]); `None` in normal runs.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        fault: Option<Fault>,
    },
    /// Are you alive? (The stall watchdog asks; answer [`ToPage::Pong`].)
    Ping,
}

/// Worker -> page.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ToPage {
    /// The worker's wasm is loaded and it listens; send [`ToWorker::Init`].
    Ready,
    /// The rank finished; its final buffer is the message's `b`.
    Done {
        /// The rank.
        rank: usize,
        /// `RankOutput::samples` with each value as its `f64::to_bits`
        /// (JSON cannot carry NaN or infinities).
        samples: Vec<Vec<Option<u64>>>,
        /// When the worker's drain that finished this rank ended, before
        /// any output of it was copied out to be posted, epoch ms
        /// (`performance.timeOrigin + performance.now()` in the worker), so
        /// the page can time the workers without counting its own backlog
        /// nor a co-hosted rank's output copy; `None` if unknown.
        #[serde(default)]
        finished_ms: Option<f64>,
        /// When this rank's worker had built every rank it hosts (inputs
        /// generated, ready for step 0), epoch ms like `finished_ms`;
        /// `None` if unknown.
        #[serde(default)]
        started_ms: Option<f64>,
    },
    /// The rank advanced as far as it can and now waits for a message from
    /// `from` for step `step` (the pool's stall watchdog uses this).
    Waiting {
        /// The rank.
        rank: usize,
        /// The peer it waits for.
        from: usize,
        /// The step of the awaited message.
        step: usize,
    },
    /// The answer to [`ToWorker::Ping`].
    Pong {
        /// The worker's index.
        worker: usize,
    },
    /// The worker is still computing (a heartbeat posted at most every
    /// `worker::HEARTBEAT_MS` while it builds inputs or drains), so the
    /// stall watchdog does not mistake a busy worker for a dead one.
    Working {
        /// The worker's index.
        worker: usize,
    },
    /// The worker failed (bad message, schedule mismatch, panic).
    Failed {
        /// The rank, if the worker knew it yet.
        rank: Option<usize>,
        /// What went wrong, for the page.
        message: String,
    },
}

/// Why a message could not be decoded. Never a panic.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum CodecError {
    /// The message is not an object with a string field `h`.
    #[error("message is not an object with a string header `h`")]
    NoHeader,
    /// `h` is not the JSON of the expected header type.
    #[error("bad {what} header: {reason}")]
    BadHeader {
        /// Which header type was expected.
        what: &'static str,
        /// The JSON error.
        reason: String,
    },
    /// The message lacks its `ArrayBuffer` field `b`.
    #[error("{what} message has no ArrayBuffer `b`")]
    NoBytes {
        /// Which message.
        what: &'static str,
    },
    /// The init message's ports do not match its `peers`.
    #[error("init message has {ports} ports for {peers} peers")]
    Ports {
        /// Ports found.
        ports: usize,
        /// Peers listed.
        peers: usize,
    },
}

/// Encodes a header as the JSON string carried in `h`.
pub fn encode_header<T: Serialize>(header: &T) -> String {
    // Serialising these plain types cannot fail (no maps with non-string keys).
    serde_json::to_string(header).unwrap_or_default()
}

/// Decodes the JSON string `h` as header type `T` (`what` names it in errors).
///
/// Errors: [`CodecError::BadHeader`].
pub fn decode_header<T: serde::de::DeserializeOwned>(
    h: &str,
    what: &'static str,
) -> Result<T, CodecError> {
    serde_json::from_str(h).map_err(|e| CodecError::BadHeader {
        what,
        reason: e.to_string(),
    })
}

/// `RankOutput::samples` -> the bit patterns carried in [`ToPage::Done`].
pub fn samples_to_bits(samples: &[Vec<Option<f64>>]) -> Vec<Vec<Option<u64>>> {
    samples
        .iter()
        .map(|row| row.iter().map(|v| v.map(f64::to_bits)).collect())
        .collect()
}

/// The inverse of [`samples_to_bits`] (bit-exact, NaN and infinities included).
pub fn samples_from_bits(bits: &[Vec<Option<u64>>]) -> Vec<Vec<Option<f64>>> {
    bits.iter()
        .map(|row| row.iter().map(|v| v.map(f64::from_bits)).collect())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::algorithm::{build, Algorithm};
    use crate::engine::collective::Primitive;
    use crate::runtime::fault::FaultKind;

    #[test]
    fn headers_round_trip() {
        let request = RunRequest {
            schedule: build(Algorithm::Ring, Primitive::AllReduce, 4).unwrap(),
            dtype: DType::Bf16,
            op: ReduceOp::Max,
            seed: u64::MAX,
            elems: 1 << 24,
            timeout_ms: 30_000,
            compressed: None,
        };
        let init = ToWorker::Init {
            worker: 1,
            worker_of: vec![0, 1, 1, 2],
            request,
            peers: vec![0, 2],
            fault: Some(Fault {
                kind: FaultKind::Delay { ms: 5 },
                rank: 1,
                step: 2,
            }),
        };
        assert_eq!(
            decode_header::<ToWorker>(&encode_header(&init), "init").unwrap(),
            init
        );
        assert_eq!(encode_header(&ToWorker::Ping), r#"{"kind":"ping"}"#);
        assert_eq!(
            decode_header::<ToWorker>(r#"{"kind":"ping"}"#, "page").unwrap(),
            ToWorker::Ping
        );

        let c = Routed {
            from: 3,
            to: 60,
            chunk: ChunkHeader {
                step: 5,
                first: 7,
                count: 2,
            },
        };
        assert_eq!(
            encode_header(&c),
            r#"{"from":3,"to":60,"step":5,"first":7,"count":2}"#
        );
        assert_eq!(
            decode_header::<Routed>(&encode_header(&c), "chunk").unwrap(),
            c
        );
        for m in [ToPage::Pong { worker: 2 }, ToPage::Working { worker: 3 }] {
            assert_eq!(
                decode_header::<ToPage>(&encode_header(&m), "worker").unwrap(),
                m
            );
        }

        let samples = vec![
            vec![Some(1.5), None, Some(f64::INFINITY)],
            vec![Some(-0.0), Some(f64::NAN), None],
        ];
        let done = ToPage::Done {
            rank: 1,
            samples: samples_to_bits(&samples),
            finished_ms: Some(1.7e12),
            started_ms: Some(1.6e12),
        };
        let back = decode_header::<ToPage>(&encode_header(&done), "worker").unwrap();
        assert_eq!(back, done);
        let ToPage::Done { samples: bits, .. } = back else {
            unreachable!()
        };
        let round = samples_from_bits(&bits);
        assert_eq!(
            samples_to_bits(&round),
            samples_to_bits(&samples),
            "bit-exact, NaN included"
        );

        for m in [
            ToPage::Ready,
            ToPage::Failed {
                rank: None,
                message: "boom".into(),
            },
        ] {
            assert_eq!(
                decode_header::<ToPage>(&encode_header(&m), "worker").unwrap(),
                m
            );
        }
    }

    #[test]
    fn run_errors_name_ranks_and_a_normal_init_has_no_fault() {
        // A normal run's init carries no `fault` at all, and decodes to `None`.
        let init = ToWorker::Init {
            worker: 0,
            worker_of: vec![0, 1],
            request: RunRequest {
                schedule: build(Algorithm::Ring, Primitive::AllReduce, 2).unwrap(),
                dtype: DType::Fp32,
                op: ReduceOp::Sum,
                seed: 1,
                elems: 8,
                timeout_ms: 1000,
                compressed: None,
            },
            peers: vec![1],
            fault: None,
        };
        let h = encode_header(&init);
        assert!(!h.contains("fault"), "{h}");
        assert_eq!(decode_header::<ToWorker>(&h, "init").unwrap(), init);
        let e = RunError::Stalled {
            ms: 1000,
            waits: vec![(1, 0, 2), (2, 1, 2)],
        };
        assert_eq!(
            e.to_string(),
            "no progress for 1000 ms: rank 1 waits for rank 0 (step 2); rank 2 waits for rank 1 (step 2) (a message was lost or is late, or a worker died)"
        );
        let e = RunError::WorkerLost {
            ms: 1200,
            worker: 0,
            ranks: vec![0, 1, 2, 3],
            waits: vec![(4, 3, 1)],
        };
        assert_eq!(
            e.to_string(),
            "no progress for 1200 ms: the worker hosting ranks 0–3 stopped answering (terminated or crashed), so all its ranks failed with it; rank 4 waits for rank 3 (step 1) (a worker died)"
        );
        let e = RunError::Stalled {
            ms: 1000,
            waits: (0..10).map(|r| (r, (r + 9) % 10, 3)).collect(),
        };
        assert_eq!(
            e.to_string(),
            "no progress for 1000 ms: rank 0 waits for rank 9 (step 3); rank 1 waits for rank 0 (step 3); rank 2 waits for rank 1 (step 3); rank 3 waits for rank 2 (step 3); rank 4 waits for rank 3 (step 3); rank 5 waits for rank 4 (step 3); rank 6 waits for rank 5 (step 3); rank 7 waits for rank 6 (step 3); and 2 more ranks wait (a message was lost or is late, or a worker died)"
        );
        let e = RunError::WorkerLost {
            ms: 1000,
            worker: 1,
            ranks: vec![1],
            waits: vec![(2, 1, 1)],
        };
        assert_eq!(
            e.to_string(),
            "no progress for 1000 ms: the worker hosting rank 1 stopped answering (terminated or crashed), so its rank failed with it; rank 2 waits for rank 1 (step 1) (a worker died)"
        );
        let w = ToPage::Waiting {
            rank: 1,
            from: 0,
            step: 4,
        };
        assert_eq!(
            decode_header::<ToPage>(&encode_header(&w), "worker").unwrap(),
            w
        );
    }

    #[test]
    fn bad_headers_are_errors() {
        assert!(matches!(
            decode_header::<Routed>(r#"{"from":0,"step":0,"first":0,"count":1}"#, "chunk"),
            Err(CodecError::BadHeader { what: "chunk", .. })
        ));
        assert!(matches!(
            decode_header::<ChunkHeader>("{", "chunk"),
            Err(CodecError::BadHeader { what: "chunk", .. })
        ));
        assert!(matches!(
            decode_header::<ToPage>(r#"{"kind":"nope"}"#, "worker"),
            Err(CodecError::BadHeader { .. })
        ));
        // `finished_ms` and `started_ms` are optional.
        assert_eq!(
            decode_header::<ToPage>(r#"{"kind":"done","rank":0,"samples":[]}"#, "worker").unwrap(),
            ToPage::Done {
                rank: 0,
                samples: vec![],
                finished_ms: None,
                started_ms: None
            }
        );
        assert!(matches!(
            decode_header::<ToWorker>(r#"{"kind":"init"}"#, "init"),
            Err(CodecError::BadHeader { .. })
        ));
    }
}
