//! The JS side of the message codec (wasm only): every message on the
//! wire (page <-> worker, worker <-> worker) is a plain JS object
//! `{ h: string, b?: ArrayBuffer, p?: MessagePort[] }` whose `h` is the
//! JSON header of [`crate::runtime::protocol`] (pure, tested natively), `b`
//! the bytes (always transferred), `p` the init message's ports; or, on a
//! port between workers, `{ r: ArrayBuffer }`: a chunk's buffer handed back
//! to its sender once the receiver has consumed it, when the receiver keeps
//! enough of that length already ([`Incoming`]). A worker fills a kept or
//! handed-back buffer with its next chunk of that length ([`BufferPool`])
//! instead of allocating a fresh one.

use crate::runtime::machine::Payload;
use crate::runtime::protocol::{
    decode_header, encode_header, samples_from_bits, CodecError, RankOutput, Routed, ToPage,
    ToWorker,
};
use js_sys::{Array, ArrayBuffer, Object, Reflect, Uint8Array};
use std::cell::RefCell;
use std::rc::Rc;
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

/// How many bytes [`wire`] copies out of wasm memory between two calls of
/// its `progress` hook.
const COPY_PIECE_BYTES: usize = 16 << 20;

fn wire(
    h: String,
    bytes: Option<&[u8]>,
    reuse: Option<ArrayBuffer>,
    ports: &[MessagePort],
    progress: &mut dyn FnMut(),
) -> Wire {
    let obj = Object::new();
    let transfer = Array::new();
    set(&obj, "h", &JsValue::from_str(&h));
    if let Some(bytes) = bytes {
        // One copy out of wasm memory into a transferable buffer: `reuse`
        // if it has the length, else a fresh one.
        let arr = match reuse.filter(|b| b.byte_length() as usize == bytes.len()) {
            Some(b) => Uint8Array::new(&b),
            None => Uint8Array::new_with_length(bytes.len() as u32),
        };
        // In pieces, `progress` after each: a worker copying out a 128 MiB
        // output into a fresh buffer on a loaded machine is otherwise
        // silent for seconds, and the page's stall watchdog took it for a
        // dead worker.
        for a in (0..bytes.len()).step_by(COPY_PIECE_BYTES) {
            let b = (a + COPY_PIECE_BYTES).min(bytes.len());
            arr.subarray(a as u32, b as u32).copy_from(&bytes[a..b]);
            progress();
        }
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
    wire(encode_header(msg), None, None, ports, &mut || {})
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
    encode_chunk_in(header, bytes, None)
}

/// As [`encode_chunk`], copying the bytes into `reuse` (a spare buffer,
/// [`BufferPool::take`]) when its length is theirs; a fresh buffer
/// otherwise.
pub fn encode_chunk_in(header: Routed, bytes: &[u8], reuse: Option<ArrayBuffer>) -> Wire {
    wire(encode_header(&header), Some(bytes), reuse, &[], &mut || {})
}

/// Encodes `{r: buffer}`: a consumed chunk's buffer going back to its
/// sender (transferred).
pub fn encode_returned(buffer: &ArrayBuffer) -> Wire {
    let obj = Object::new();
    set(&obj, "r", buffer);
    Wire {
        message: obj.into(),
        transfer: Array::of1(buffer),
    }
}

/// A message on a port between workers.
#[derive(Debug)]
pub enum PortMessage {
    /// A chunk: its header and a view of its bytes.
    Chunk(Routed, Uint8Array),
    /// A buffer this worker sent, handed back by the receiver.
    Returned(ArrayBuffer),
}

/// Decodes a message on a port between workers: a returned buffer
/// (`{r}`) or a chunk ([`decode_chunk`]).
///
/// Errors: as [`decode_chunk`].
pub fn decode_port(msg: &JsValue) -> Result<PortMessage, CodecError> {
    if let Some(b) = get(msg, "r").and_then(|b| b.dyn_into::<ArrayBuffer>().ok()) {
        return Ok(PortMessage::Returned(b));
    }
    let (h, bytes) = decode_chunk(msg)?;
    Ok(PortMessage::Chunk(h, bytes))
}

/// Spare chunk buffers of one worker, for its next remote sends (a worker
/// sends chunks of few distinct lengths, a ring one): the buffers of chunks
/// it received and consumed ([`Incoming`] keeps up to [`BufferPool::KEEP`]
/// of a length it has sent itself) and those receivers handed back. Reusing one spares
/// allocating, zeroing and page-faulting a fresh `ArrayBuffer` per chunk
/// (about 5 ms for 8 MiB against 1 ms into a mapped one, measured in the
/// 8 × 64 MiB ring run), and the garbage collector a dead one.
#[derive(Debug, Default)]
pub struct BufferPool {
    free: Vec<ArrayBuffer>,
    /// The chunk lengths this worker has sent to another worker (asked
    /// [`BufferPool::take`] for): the only ones worth keeping.
    sent: Vec<usize>,
}

impl BufferPool {
    /// At most this many buffers are kept (the oldest goes first).
    pub const CAP: usize = 8;

    /// A consumed chunk's buffer stays with the worker that received it
    /// while it keeps fewer than this many of that length, if the worker
    /// has sent a chunk of that length itself; else it goes back to its
    /// sender (a gather's root, which sends nothing, keeps nothing). Waiting for the hand-back alone, a ring's sender
    /// found no buffer for about half its chunks: the receiver hands it
    /// back in the middle of its step, and the sender reads its port only
    /// after its own step, whose send comes first. Kept, the buffer of the
    /// chunk a worker just reduced carries that worker's next send.
    pub const KEEP: usize = 2;

    /// True if a buffer of `len` bytes would be kept rather than handed
    /// back: this worker has sent a chunk of that length
    /// ([`Self::take`]) and keeps fewer than [`Self::KEEP`] of it.
    pub fn wants(&self, len: usize) -> bool {
        self.sent.contains(&len)
            && self
                .free
                .iter()
                .filter(|b| b.byte_length() as usize == len)
                .count()
                < Self::KEEP
    }

    /// Keeps `buffer` for a later chunk of its length.
    pub fn put(&mut self, buffer: ArrayBuffer) {
        if self.free.len() == Self::CAP {
            self.free.remove(0);
        }
        self.free.push(buffer);
    }

    /// A kept buffer of exactly `len` bytes, if there is one. Called once
    /// per remote send, so it also notes `len` as a length this worker
    /// sends ([`Self::wants`]).
    pub fn take(&mut self, len: usize) -> Option<ArrayBuffer> {
        if !self.sent.contains(&len) {
            self.sent.push(len);
        }
        let i = self
            .free
            .iter()
            .rposition(|b| b.byte_length() as usize == len)?;
        Some(self.free.swap_remove(i))
    }

    /// How many buffers are kept.
    pub fn len(&self) -> usize {
        self.free.len()
    }

    /// True if none is kept.
    pub fn is_empty(&self) -> bool {
        self.free.is_empty()
    }
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
    encode_to_page_with_progress(msg, buffer, &mut || {})
}

/// [`encode_to_page`], calling `progress` as the buffer is copied out of
/// wasm memory (every 16 MiB): the worker's heartbeat.
pub fn encode_to_page_with_progress(
    msg: &ToPage,
    buffer: Option<&[u8]>,
    progress: &mut dyn FnMut(),
) -> Wire {
    let bytes = if matches!(msg, ToPage::Done { .. }) {
        buffer
    } else {
        None
    };
    wire(encode_header(msg), bytes, None, &[], progress)
}

/// A decoded worker -> page message.
#[derive(Debug)]
pub enum PageEvent {
    /// See [`ToPage::Ready`].
    Ready,
    /// A finished rank (its `buffer` still empty), [`ToPage::Done`]'s
    /// `(started_ms, finished_ms)`, and its final buffer still in JS
    /// memory ([`DoneBytes`]: the page copies it in piece by piece).
    Done(RankOutput, (Option<f64>, Option<f64>), DoneBytes),
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

/// A done rank's final buffer as it arrived (a transferred `ArrayBuffer`),
/// not yet copied into wasm memory: at 128 MiB a rank, one copy is a
/// main-thread task of 0.2–0.6 s on 2 cores, so the page's checks
/// read it a piece at a time ([`crate::engine::check::OutputBytes`],
/// [`DoneBytes::copy_part`]).
#[derive(Debug)]
pub struct DoneBytes(Uint8Array);

impl DoneBytes {
    /// Its length, bytes.
    pub fn len(&self) -> usize {
        self.0.length() as usize
    }

    /// Is it empty?
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Copies bytes `offset..offset + dst.len()` into `dst` (panics, as
    /// `copy_to` does, if the range is outside: callers pass parts of
    /// [`DoneBytes::len`]).
    pub fn copy_part(&self, offset: usize, dst: &mut [u8]) {
        self.0
            .subarray(offset as u32, (offset + dst.len()) as u32)
            .copy_to(dst);
    }

    /// The whole buffer in one copy.
    pub fn to_vec(&self) -> Vec<u8> {
        self.0.to_vec()
    }
}

/// The page checks a done rank's buffer where it arrived: each piece the
/// checker reads is copied into its scratch, never the whole buffer into
/// wasm memory (64 ranks × 16 MiB had grown the page's heap by 16 MiB a
/// rank, each piece of it a main-thread task of 80–130 ms).
impl crate::engine::check::OutputBytes for DoneBytes {
    fn len(&self) -> usize {
        DoneBytes::len(self)
    }
    fn piece<'s>(&'s self, range: std::ops::Range<usize>, scratch: &'s mut Vec<u8>) -> &'s [u8] {
        scratch.resize(range.len(), 0);
        self.copy_part(range.start, scratch);
        scratch
    }
}

/// Decodes a worker -> page message (a done rank's buffer is left in JS
/// memory: [`DoneBytes`]).
///
/// Errors: [`CodecError`] if `h` is malformed or a done message has no `b`.
pub fn decode_to_page(msg: &JsValue) -> Result<PageEvent, CodecError> {
    Ok(match decode_header(&header_str(msg)?, "worker")? {
        ToPage::Ready => PageEvent::Ready,
        ToPage::Done {
            rank,
            samples,
            finished_ms,
            started_ms,
        } => PageEvent::Done(
            RankOutput {
                rank,
                buffer: Vec::new(),
                samples: samples_from_bits(&samples),
            },
            (started_ms, finished_ms),
            DoneBytes(bytes(msg, "done")?),
        ),
        ToPage::Failed { rank, message } => PageEvent::Failed { rank, message },
        ToPage::Waiting { rank, from, step } => PageEvent::Waiting(rank, from, step),
        ToPage::Pong { worker } => PageEvent::Pong(worker),
        ToPage::Working { worker } => PageEvent::Working(worker),
    })
}

/// A chunk's bytes still in JS memory: the rank machine copies a `Copy`
/// straight into its buffer, a `Reduce` piece by piece into a small
/// scratch it reduces from ([`crate::runtime::machine::RECV_PIECE_BYTES`]).
impl Payload for Uint8Array {
    fn byte_len(&self) -> usize {
        self.length() as usize
    }
    fn copy_into(&self, dst: &mut [u8]) {
        self.copy_to(dst);
    }
    fn copy_part_into(&self, offset: usize, dst: &mut [u8]) {
        self.subarray(offset as u32, (offset + dst.len()) as u32)
            .copy_to(dst);
    }
}

/// A chunk that arrived on a port, its bytes still in JS memory (a
/// [`Payload`] like `Uint8Array`). When the rank machine drops it, having
/// consumed it, its `ArrayBuffer` joins this worker's [`BufferPool`] if
/// the pool [wants](BufferPool::wants) one of its length, else it goes back
/// to the sender on `back` ([`encode_returned`]), whose pool keeps it.
/// (The pool is never borrowed while a chunk is consumed; if it were, the
/// buffer would go back.)
#[derive(Debug)]
pub struct Incoming {
    bytes: Uint8Array,
    back: Option<MessagePort>,
    pool: Option<Rc<RefCell<BufferPool>>>,
}

impl Incoming {
    /// `bytes` (a whole transferred buffer, [`decode_port`]), kept in
    /// `pool` or handed back on `back` when dropped (else left to the
    /// garbage collector).
    pub fn new(
        bytes: Uint8Array,
        back: Option<MessagePort>,
        pool: Option<Rc<RefCell<BufferPool>>>,
    ) -> Incoming {
        Incoming { bytes, back, pool }
    }
}

impl Payload for Incoming {
    fn byte_len(&self) -> usize {
        self.bytes.byte_len()
    }
    fn copy_into(&self, dst: &mut [u8]) {
        self.bytes.copy_into(dst);
    }
    fn copy_part_into(&self, offset: usize, dst: &mut [u8]) {
        self.bytes.copy_part_into(offset, dst);
    }
}

impl Drop for Incoming {
    fn drop(&mut self) {
        if self.pool.is_none() && self.back.is_none() {
            return;
        }
        let buffer = self.bytes.buffer();
        let len = buffer.byte_length() as usize;
        if let Some(mut pool) = self.pool.as_ref().and_then(|p| p.try_borrow_mut().ok()) {
            if pool.wants(len) {
                pool.put(buffer);
                return;
            }
        }
        if let Some(port) = self.back.take() {
            let w = encode_returned(&buffer);
            // A closed port (the sender finished or failed) drops it.
            let _ = port.post_message_with_transferable(&w.message, &w.transfer);
        }
    }
}
