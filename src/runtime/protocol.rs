//! Messages between the page, the rank workers and each other.
//!
//! CONTRACT (the UI relies on these types; the runtime helper fills in the
//! codec): see `RunRequest`, `RankOutput`, `RunSummary`, `RunError`.

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
        match &self.compressed {
            None => RankMachine::new(
                &self.schedule,
                rank,
                self.dtype,
                self.op,
                self.seed,
                self.elems,
            ),
            Some(setup) => RankMachine::compressed(
                &self.schedule,
                rank,
                self.dtype,
                self.op,
                self.seed,
                self.elems,
                setup,
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
    let list = super::placement::Placement::describe_ranks(ranks);
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

/// A fault injected into a run, for testing the failure paths end to end.
/// It targets one rank; its worker may host other ranks too, and a `kill`
/// takes them all down (the pool reports [`RunError::WorkerLost`]).
/// Never set by a normal run: only a page opened with the test-only URL key
/// `fault` (see [`Fault::parse`]) arms one, for its first run only, and the
/// page then shows a "fault injected" banner.
///
/// The fault fires at the first chunk rank `rank` sends at a step `>= step`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Fault {
    /// What goes wrong.
    pub kind: FaultKind,
    /// The rank whose worker misbehaves.
    pub rank: usize,
    /// The first step at which it does.
    pub step: usize,
}

/// What an injected [`Fault`] does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FaultKind {
    /// The worker throws a JS exception (an uncaught error in the worker).
    Throw,
    /// The worker closes itself silently (as if terminated mid-run).
    Kill,
    /// The message is never posted (lost).
    Drop,
    /// The message is posted `ms` ms late.
    Delay {
        /// The delay, ms.
        ms: u32,
    },
}

/// Why a `fault` value was refused.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[error("one of throw|kill|drop:rank=R:step=K or delay:rank=R:step=K:ms=M (R, K, M integers; M <= 600000)")]
pub struct FaultSyntaxError;

impl Fault {
    /// Parses the test-only URL value: `throw:rank=R:step=K`,
    /// `kill:rank=R:step=K`, `drop:rank=R:step=K`,
    /// `delay:rank=R:step=K:ms=M`. Exactly these fields, in this order.
    ///
    /// Errors: [`FaultSyntaxError`] for anything else.
    pub fn parse(s: &str) -> Result<Fault, FaultSyntaxError> {
        let parts: Vec<&str> = s.trim().split(':').collect();
        let field = |i: usize, name: &str| -> Result<u64, FaultSyntaxError> {
            parts
                .get(i)
                .and_then(|p| p.strip_prefix(name))
                .and_then(|p| p.strip_prefix('='))
                .filter(|d| !d.is_empty() && d.len() <= 9 && d.bytes().all(|c| c.is_ascii_digit()))
                .and_then(|d| d.parse().ok())
                .ok_or(FaultSyntaxError)
        };
        let (kind, len) = match parts.first().copied() {
            Some("throw") => (FaultKind::Throw, 3),
            Some("kill") => (FaultKind::Kill, 3),
            Some("drop") => (FaultKind::Drop, 3),
            Some("delay") => {
                let ms = field(3, "ms")?;
                if ms > 600_000 {
                    return Err(FaultSyntaxError);
                }
                (FaultKind::Delay { ms: ms as u32 }, 4)
            }
            _ => return Err(FaultSyntaxError),
        };
        if parts.len() != len {
            return Err(FaultSyntaxError);
        }
        Ok(Fault {
            kind,
            rank: field(1, "rank")? as usize,
            step: field(2, "step")? as usize,
        })
    }

    /// In words, for the page's banner.
    pub fn describe(&self) -> String {
        let what = match self.kind {
            FaultKind::Throw => "throws".to_string(),
            FaultKind::Kill => "is terminated".to_string(),
            FaultKind::Drop => "loses its message".to_string(),
            FaultKind::Delay { ms } => format!("delays its message by {ms} ms"),
        };
        format!(
            "rank {}'s worker {what} at step {} (first run only)",
            self.rank, self.step
        )
    }
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
// The JSON part is pure Rust (tested natively); the JS wrapping is wasm only.
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
        /// The run's rank table ([`super::placement::Placement::table`]):
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
        /// When the worker posted this, epoch ms (`performance.timeOrigin +
        /// performance.now()` in the worker), so the page can time the
        /// workers without counting its own backlog; `None` if unknown.
        #[serde(default)]
        finished_ms: Option<f64>,
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

#[cfg(target_arch = "wasm32")]
pub use js::*;

/// The JS side of the codec (wasm only).
#[cfg(target_arch = "wasm32")]
mod js {
    use super::*;
    use js_sys::{Array, ArrayBuffer, Object, Reflect, Uint8Array};
    use wasm_bindgen::{JsCast, JsValue};
    use web_sys::MessagePort;

    /// A message ready for `postMessage(message, transfer)`.
    #[derive(Debug)]
    pub struct Wire {
        /// The object `{h, b?, p?}`.
        pub message: JsValue,
        /// What to transfer (the `ArrayBuffer` and ports), never empty-cloned.
        pub transfer: Array,
    }

    fn set(obj: &Object, key: &str, value: &JsValue) {
        // Setting a property on a fresh plain object cannot throw.
        let _ = Reflect::set(obj, &JsValue::from_str(key), value);
    }

    fn get(msg: &JsValue, key: &str) -> Option<JsValue> {
        if !msg.is_object() {
            return None;
        }
        Reflect::get(msg, &JsValue::from_str(key))
            .ok()
            .filter(|v| !v.is_undefined() && !v.is_null())
    }

    fn wire(h: String, bytes: Option<&[u8]>, ports: &[MessagePort]) -> Wire {
        let obj = Object::new();
        let transfer = Array::new();
        set(&obj, "h", &JsValue::from_str(&h));
        if let Some(bytes) = bytes {
            // One copy out of wasm memory into a fresh, transferable buffer.
            let arr = Uint8Array::new_with_length(bytes.len() as u32);
            arr.copy_from(bytes);
            let buf = arr.buffer();
            set(&obj, "b", &buf);
            transfer.push(&buf);
        }
        if !ports.is_empty() {
            let arr = Array::new();
            for p in ports {
                arr.push(p);
                transfer.push(p);
            }
            set(&obj, "p", &arr);
        }
        Wire {
            message: obj.into(),
            transfer,
        }
    }

    fn header_str(msg: &JsValue) -> Result<String, CodecError> {
        get(msg, "h")
            .and_then(|h| h.as_string())
            .ok_or(CodecError::NoHeader)
    }

    fn bytes(msg: &JsValue, what: &'static str) -> Result<Uint8Array, CodecError> {
        get(msg, "b")
            .and_then(|b| b.dyn_into::<ArrayBuffer>().ok())
            .map(|b| Uint8Array::new(&b))
            .ok_or(CodecError::NoBytes { what })
    }

    /// Now, epoch ms: `performance.timeOrigin + performance.now()` of this
    /// thread (page or worker); `None` without a `performance` object.
    pub fn epoch_ms() -> Option<f64> {
        let p = Reflect::get(&js_sys::global(), &JsValue::from_str("performance")).ok()?;
        let p: web_sys::Performance = p.dyn_into().ok()?;
        Some(p.time_origin() + p.now())
    }

    /// Encodes the init message; `ports[i]` goes to the worker whose peer is
    /// `peers[i]` of the [`ToWorker::Init`].
    pub fn encode_to_worker(msg: &ToWorker, ports: &[MessagePort]) -> Wire {
        wire(encode_header(msg), None, ports)
    }

    /// Decodes a page -> worker message and its ports (none for a ping).
    ///
    /// Errors: [`CodecError::NoHeader`], [`CodecError::BadHeader`],
    /// [`CodecError::Ports`] if the port count is not the peer count.
    pub fn decode_to_worker(msg: &JsValue) -> Result<(ToWorker, Vec<MessagePort>), CodecError> {
        let h: ToWorker = decode_header(&header_str(msg)?, "page")?;
        let ports: Vec<MessagePort> = match get(msg, "p") {
            Some(p) => Array::from(&p)
                .iter()
                .filter_map(|p| p.dyn_into::<MessagePort>().ok())
                .collect(),
            None => Vec::new(),
        };
        let peers = match &h {
            ToWorker::Init { peers, .. } => peers.len(),
            ToWorker::Ping => 0,
        };
        if ports.len() != peers {
            return Err(CodecError::Ports {
                ports: ports.len(),
                peers,
            });
        }
        Ok((h, ports))
    }

    /// Encodes a chunk message (the bytes are copied once into a new
    /// `ArrayBuffer`, which is transferred).
    pub fn encode_chunk(header: Routed, bytes: &[u8]) -> Wire {
        wire(encode_header(&header), Some(bytes), &[])
    }

    /// Decodes a chunk message: its header and a view of its bytes (still in
    /// JS memory; the receiver copies them into its buffer).
    ///
    /// Errors: [`CodecError`] if `h` or `b` is missing or malformed.
    pub fn decode_chunk(msg: &JsValue) -> Result<(Routed, Uint8Array), CodecError> {
        let h = decode_header(&header_str(msg)?, "chunk")?;
        Ok((h, bytes(msg, "chunk")?))
    }

    /// Encodes a worker -> page message; `buffer` is the final buffer of
    /// [`ToPage::Done`] (ignored otherwise).
    pub fn encode_to_page(msg: &ToPage, buffer: Option<&[u8]>) -> Wire {
        let bytes = if matches!(msg, ToPage::Done { .. }) {
            buffer
        } else {
            None
        };
        wire(encode_header(msg), bytes, &[])
    }

    /// A decoded worker -> page message.
    #[derive(Debug)]
    pub enum PageEvent {
        /// See [`ToPage::Ready`].
        Ready,
        /// A finished rank, with its buffer copied into wasm memory, and
        /// [`ToPage::Done`]'s `finished_ms`.
        Done(RankOutput, Option<f64>),
        /// See [`ToPage::Failed`].
        Failed {
            /// The rank, if the worker knew it.
            rank: Option<usize>,
            /// What went wrong.
            message: String,
        },
        /// See [`ToPage::Waiting`]: `(rank, from, step)`.
        Waiting(usize, usize, usize),
        /// See [`ToPage::Pong`]: the worker's index.
        Pong(usize),
        /// See [`ToPage::Working`]: the worker's index.
        Working(usize),
    }

    /// Decodes a worker -> page message (copying a done rank's buffer into a
    /// `Vec<u8>`: one copy).
    ///
    /// Errors: [`CodecError`] if `h` is malformed or a done message has no `b`.
    pub fn decode_to_page(msg: &JsValue) -> Result<PageEvent, CodecError> {
        Ok(match decode_header(&header_str(msg)?, "worker")? {
            ToPage::Ready => PageEvent::Ready,
            ToPage::Done {
                rank,
                samples,
                finished_ms,
            } => PageEvent::Done(
                RankOutput {
                    rank,
                    buffer: bytes(msg, "done")?.to_vec(),
                    samples: samples_from_bits(&samples),
                },
                finished_ms,
            ),
            ToPage::Failed { rank, message } => PageEvent::Failed { rank, message },
            ToPage::Waiting { rank, from, step } => PageEvent::Waiting(rank, from, step),
            ToPage::Pong { worker } => PageEvent::Pong(worker),
            ToPage::Working { worker } => PageEvent::Working(worker),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::algorithm::{build, Algorithm};
    use crate::engine::collective::Primitive;

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
    fn faults_parse_strictly() {
        let f = |kind, rank, step| Ok(Fault { kind, rank, step });
        assert_eq!(
            Fault::parse("throw:rank=2:step=1"),
            f(FaultKind::Throw, 2, 1)
        );
        assert_eq!(Fault::parse("kill:rank=0:step=3"), f(FaultKind::Kill, 0, 3));
        assert_eq!(Fault::parse("drop:rank=7:step=0"), f(FaultKind::Drop, 7, 0));
        assert_eq!(
            Fault::parse("delay:rank=1:step=2:ms=3000"),
            f(FaultKind::Delay { ms: 3000 }, 1, 2)
        );
        for bad in [
            "",
            "throw",
            "throw:rank=2",
            "throw:step=1:rank=2",
            "throw:rank=2:step=1:ms=5",
            "delay:rank=1:step=2",
            "delay:rank=1:step=2:ms=600001",
            "explode:rank=1:step=1",
            "throw:rank=-1:step=1",
            "throw:rank=9999999999:step=1",
            "<img src=x>",
        ] {
            assert_eq!(Fault::parse(bad), Err(FaultSyntaxError), "{bad}");
        }
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
        // `finished_ms` is optional.
        assert_eq!(
            decode_header::<ToPage>(r#"{"kind":"done","rank":0,"samples":[]}"#, "worker").unwrap(),
            ToPage::Done {
                rank: 0,
                samples: vec![],
                finished_ms: None
            }
        );
        assert!(matches!(
            decode_header::<ToWorker>(r#"{"kind":"init"}"#, "init"),
            Err(CodecError::BadHeader { .. })
        ));
    }
}
