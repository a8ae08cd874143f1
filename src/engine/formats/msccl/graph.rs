//! What the format-specific stages hand the shared ones: the program as
//! actions (what lands in one IR step), their sides (what one GPU's memory
//! sees of an action) and the runtime's waits between sides.

use crate::engine::schedule::TransferKind;

/// A location in the IR: an IR chunk, or temporary `t` ([`Graph::temps`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) enum Loc {
    Chunk(usize),
    Temp(usize),
}

/// One IR transfer of an action.
#[derive(Clone, Copy, Debug)]
pub(super) struct Part {
    pub src: usize,
    pub dst: usize,
    pub from: Loc,
    pub to: Loc,
    pub count: usize,
    pub kind: TransferKind,
}

/// What happens in one IR step: a local copy / reduce, or a message (with
/// the receiver's local pre-copy first).
#[derive(Clone, Debug)]
pub(super) struct Action {
    pub parts: Vec<Part>,
    /// The operation whose element the transfers are labelled with
    /// ([`Graph::ops`]; a message's receiving side).
    pub origin: usize,
    /// Where the file puts it (`ccl_step`, `ccl_seq`), if it says.
    pub hint: Option<(usize, usize)>,
    /// A message through a connection's buffer: its send (first side) may
    /// run ahead of its receive ([`super::place`]).
    pub buffered: bool,
}

/// What one GPU's memory sees of an action, or a point the runtime
/// synchronizes at (no action, no access).
#[derive(Clone, Debug)]
pub(super) struct Side {
    /// The action it is part of (`None`: a synchronization point).
    pub action: Option<usize>,
    /// The GPU whose memory it reads and writes.
    pub gpu: usize,
    /// The operation that performs it ([`Graph::ops`]).
    pub op: usize,
    /// IR chunk ranges read when the step starts.
    pub reads: Vec<(usize, usize)>,
    /// IR chunk ranges written when the step applies, with the kind.
    pub writes: Vec<(usize, usize, TransferKind)>,
    /// A local copy / reduce.
    pub local: bool,
}

/// A temporary: `size` MSCCL chunks on `gpu`, written by one action and
/// read by a later one (an `rrs` holds its reduced data there).
#[derive(Clone, Copy, Debug)]
pub(super) struct Temp {
    pub gpu: usize,
    pub size: usize,
    pub write: usize,
    pub read: usize,
}

/// An edge `y -> x` between two sides: x waits for y. `weight` 1: x needs a
/// later step; 0: the same step will do. `ordered`: x must be listed after
/// y in that step.
#[derive(Clone, Copy, Debug)]
pub(super) struct Edge {
    pub from: usize,
    pub weight: usize,
    pub ordered: bool,
}

/// The program for the shared stages.
#[derive(Clone, Debug, Default)]
pub(super) struct Graph {
    /// Per operation, the element it comes from (`gpu 3 / tb 1 / step 4`).
    pub ops: Vec<String>,
    pub actions: Vec<Action>,
    pub sides: Vec<Side>,
    /// Per action, its sides (a message: send side, then receive side).
    pub action_sides: Vec<Vec<usize>>,
    /// Per side, the edges into it.
    pub preds: Vec<Vec<Edge>>,
    pub temps: Vec<Temp>,
}

impl Graph {
    /// Adds a side and returns its index.
    pub fn side(&mut self, s: Side) -> usize {
        if let Some(a) = s.action {
            if let Some(v) = self.action_sides.get_mut(a) {
                v.push(self.sides.len());
            }
        }
        self.sides.push(s);
        self.preds.push(Vec::new());
        self.sides.len() - 1
    }

    /// Adds an action and returns its index (its sides come separately).
    pub fn action(&mut self, a: Action) -> usize {
        self.actions.push(a);
        self.action_sides.push(Vec::new());
        self.actions.len() - 1
    }

    /// `x` waits for `y`.
    pub fn edge(&mut self, y: usize, x: usize, weight: usize, ordered: bool) {
        if let Some(p) = self.preds.get_mut(x) {
            p.push(Edge {
                from: y,
                weight,
                ordered,
            });
        }
    }

    /// The element a side comes from.
    pub fn describe(&self, side: usize) -> String {
        self.sides
            .get(side)
            .and_then(|s| self.ops.get(s.op))
            .cloned()
            .unwrap_or_else(|| "algo".into())
    }
}
