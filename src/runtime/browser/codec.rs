//! The JS side of the message codec (wasm only): every message on the
//! wire (page <-> worker, worker <-> worker) is a plain JS object
//! `{ h: string, b?: ArrayBuffer, p?: MessagePort[] }` whose `h` is the
//! JSON header of [`crate::runtime::protocol`] (pure, tested natively), `b`
//! the bytes (always transferred), `p` the init message's ports.

use crate::runtime::machine::Payload;
use crate::runtime::protocol::{
    decode_header, encode_header, samples_from_bits, CodecError, RankOutput, Routed, ToPage,
    ToWorker,
};
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
    /// [`ToPage::Done`]'s `(started_ms, finished_ms)`.
    Done(RankOutput, (Option<f64>, Option<f64>)),
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
            started_ms,
        } => PageEvent::Done(
            RankOutput {
                rank,
                buffer: bytes(msg, "done")?.to_vec(),
                samples: samples_from_bits(&samples),
            },
            (started_ms, finished_ms),
        ),
        ToPage::Failed { rank, message } => PageEvent::Failed { rank, message },
        ToPage::Waiting { rank, from, step } => PageEvent::Waiting(rank, from, step),
        ToPage::Pong { worker } => PageEvent::Pong(worker),
        ToPage::Working { worker } => PageEvent::Working(worker),
    })
}

/// A chunk's bytes still in JS memory: the rank machine copies them
/// straight into its buffer (one copy, no intermediate `Vec`).
impl Payload for Uint8Array {
    fn byte_len(&self) -> usize {
        self.length() as usize
    }
    fn copy_into(&self, dst: &mut [u8]) {
        self.copy_to(dst);
    }
}
