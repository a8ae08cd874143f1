//! The MPI library's own collectives as the baseline (`cclrun --algo
//! library`): the same inputs and buffer layout as our schedules
//! ([`crate::engine::collective`]), so the same checker reads the output.
//!
//! | primitive | call |
//! |---|---|
//! | AllReduce | `MPI_Allreduce` |
//! | ReduceScatter | `MPI_Reduce_scatter_block` |
//! | AllGather | `MPI_Allgather` |
//! | Broadcast | `MPI_Bcast` (in place) |
//! | Reduce | `MPI_Reduce` |
//! | Scatter | `MPI_Scatter` |
//! | Gather | `MPI_Gather` |
//! | AlltoAll | `MPI_Alltoall` |
//! | Barrier | `MPI_Barrier` |
//! | SendRecv | `MPI_Sendrecv` (rank r sends to r+1, receives from r-1) |
//!
//! AlltoAllV (our MoE-skewed counts) has no baseline here. Reductions run
//! on MPI's own types (`MPI_FLOAT`, `MPI_INT32_T`, `MPI_INT8_T`) with its
//! predefined ops; MPI has no half-precision reduction, so fp16 and bf16
//! reductions have no baseline either ([`LibraryRun::new`] says so). Data
//! movement moves bytes (`MPI_UINT8_T`), any dtype.
//!
//! The block primitives (ReduceScatter, AllGather, Scatter, Gather) need
//! equal blocks: the message's element count must be a multiple of the
//! rank count (`cclrun` rounds sizes down as nccl-tests does).
//!
//! The library's reduction order is its own, so its output is checked
//! against the exact result within the dtype's tolerance
//! ([`crate::engine::check::Checker::check_rank_exact`]), not bit for bit.

use crate::engine::collective::Primitive;
use crate::engine::dtype::{DType, ReduceOp};
use crate::engine::execute::initial_buffer;
use crate::engine::schedule::Schedule;
use mpi::collective::SystemOperation;
use mpi::datatype::Equivalence;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;

/// The MPI call that is the baseline of `p` (`None`: no baseline).
pub fn call_name(p: Primitive) -> Option<&'static str> {
    Some(match p {
        Primitive::AllReduce => "MPI_Allreduce",
        Primitive::ReduceScatter => "MPI_Reduce_scatter_block",
        Primitive::AllGather => "MPI_Allgather",
        Primitive::Broadcast => "MPI_Bcast",
        Primitive::Reduce => "MPI_Reduce",
        Primitive::Scatter => "MPI_Scatter",
        Primitive::Gather => "MPI_Gather",
        Primitive::AlltoAll => "MPI_Alltoall",
        Primitive::Barrier => "MPI_Barrier",
        Primitive::SendRecv => "MPI_Sendrecv",
        Primitive::AlltoAllV => return None,
    })
}

/// Does the baseline of `p` need the element count to be a multiple of the
/// rank count (equal blocks)?
pub fn needs_equal_blocks(p: Primitive) -> bool {
    matches!(
        p,
        Primitive::ReduceScatter | Primitive::AllGather | Primitive::Scatter | Primitive::Gather
    )
}

/// Whether the library has a baseline for `p` on `dtype` with `op`.
///
/// Errors: a sentence naming what is missing and what would work.
pub fn supports(p: Primitive, dtype: DType, op: ReduceOp) -> Result<(), String> {
    if p.reduces() && op == ReduceOp::Avg {
        return Err(
            "MPI has no average (MPI_Op has MPI_SUM, MPI_PROD, MPI_MAX, MPI_MIN ...), so redop avg has no library baseline; use --redop sum"
                .into(),
        );
    }
    if call_name(p).is_none() {
        return Err(format!(
            "the MPI library has no baseline for {} here (our MoE-skewed counts); use --op alltoall",
            p.title()
        ));
    }
    if p.reduces() && matches!(dtype, DType::Fp16 | DType::Bf16) {
        return Err(format!(
            "MPI has no half-precision reduction, so {} on {} has no library baseline; use --dtype fp32, int32 or int8",
            p.title(),
            dtype.name()
        ));
    }
    Ok(())
}

/// An element MPI reduces: read from and written to little-endian bytes.
trait Elem: Equivalence + Copy + Default {
    const SIZE: usize;
    fn read(b: &[u8]) -> Self;
    fn write(self, b: &mut [u8]);
}

macro_rules! elem {
    ($t:ty) => {
        impl Elem for $t {
            const SIZE: usize = std::mem::size_of::<$t>();
            fn read(b: &[u8]) -> Self {
                <$t>::from_le_bytes(b.try_into().expect("SIZE bytes"))
            }
            fn write(self, b: &mut [u8]) {
                b.copy_from_slice(&self.to_le_bytes());
            }
        }
    };
}
elem!(f32);
elem!(i32);
elem!(i8);
elem!(u8);

/// Send and receive buffers of one element type.
struct Bufs<T> {
    send: Vec<T>,
    recv: Vec<T>,
}

impl<T: Elem> Bufs<T> {
    fn new(send: &[u8], recv_len: usize) -> Bufs<T> {
        Bufs {
            send: send.chunks_exact(T::SIZE).map(T::read).collect(),
            recv: vec![T::default(); recv_len],
        }
    }

    fn recv_bytes(&self, out: &mut [u8]) {
        for (x, b) in self.recv.iter().zip(out.chunks_exact_mut(T::SIZE)) {
            x.write(b);
        }
    }

    /// One call of the baseline; `n`, `rank`, `root` of the run.
    fn call(
        &mut self,
        world: &SimpleCommunicator,
        p: Primitive,
        op: ReduceOp,
        rank: usize,
        root: usize,
    ) {
        let n = world.size() as usize;
        let sys = match op {
            ReduceOp::Sum => SystemOperation::sum(),
            ReduceOp::Prod => SystemOperation::product(),
            ReduceOp::Max => SystemOperation::max(),
            ReduceOp::Min => SystemOperation::min(),
            // Refused by `supports`: MPI has no average.
            ReduceOp::Avg => SystemOperation::sum(),
        };
        let root_proc = world.process_at_rank(root as i32);
        let (send, recv) = (&self.send[..], &mut self.recv[..]);
        match p {
            Primitive::AllReduce => world.all_reduce_into(send, recv, sys),
            Primitive::ReduceScatter => world.reduce_scatter_block_into(send, recv, sys),
            Primitive::AllGather => world.all_gather_into(send, recv),
            Primitive::Broadcast => root_proc.broadcast_into(recv),
            Primitive::Reduce if rank == root => root_proc.reduce_into_root(send, recv, sys),
            Primitive::Reduce => root_proc.reduce_into(send, sys),
            Primitive::Scatter if rank == root => root_proc.scatter_into_root(send, recv),
            Primitive::Scatter => root_proc.scatter_into(recv),
            Primitive::Gather if rank == root => root_proc.gather_into_root(send, recv),
            Primitive::Gather => root_proc.gather_into(send),
            Primitive::AlltoAll => world.all_to_all_into(send, recv),
            Primitive::Barrier => world.barrier(),
            Primitive::SendRecv => {
                let next = world.process_at_rank(((rank + 1) % n) as i32);
                let prev = world.process_at_rank(((rank + n - 1) % n) as i32);
                mpi::point_to_point::send_receive_into(send, &next, recv, &prev);
            }
            Primitive::AlltoAllV => {} // refused by `supports`
        }
    }
}

enum Typed {
    F32(Bufs<f32>),
    I32(Bufs<i32>),
    I8(Bufs<i8>),
    Bytes(Bufs<u8>),
}

/// One rank's baseline run of one size: its buffers, prepared once and
/// reused by every iteration.
pub struct LibraryRun {
    primitive: Primitive,
    op: ReduceOp,
    rank: usize,
    root: usize,
    /// The rank's initial buffer in our layout.
    input: Vec<u8>,
    /// Where the received bytes go in our layout.
    recv_at: std::ops::Range<usize>,
    bufs: Typed,
}

impl LibraryRun {
    /// Prepares rank `rank`'s baseline of `schedule`'s primitive (any
    /// schedule of it: only its layout is used) for a message of `elems`
    /// elements of `dtype` with inputs from `seed`, reduced by `op`.
    ///
    /// Errors: [`supports`]'s, or a block primitive whose `elems` is not a
    /// multiple of the rank count.
    pub fn new(
        schedule: &Schedule,
        rank: usize,
        dtype: DType,
        op: ReduceOp,
        seed: u64,
        elems: usize,
    ) -> Result<LibraryRun, String> {
        let p = schedule.primitive;
        supports(p, dtype, op)?;
        let n = schedule.ranks;
        let root = schedule.root;
        if needs_equal_blocks(p) && elems % n != 0 {
            return Err(format!(
                "{} of {elems} elements on {n} ranks: the library's blocks must be equal (a multiple of {n} elements)",
                p.title()
            ));
        }
        let es = dtype.size_bytes();
        let input = initial_buffer(schedule, dtype, seed, rank, elems);
        let blk = |b: usize| p.block_range(n, elems, b);
        let bytes = |r: std::ops::Range<usize>| r.start * es..r.end * es;
        // (send range of `input`, receive elements, where they land) in elements.
        let (send, recv_len, recv_at) = match p {
            Primitive::AllReduce => (0..elems, elems, 0..elems),
            Primitive::ReduceScatter | Primitive::Scatter => (0..elems, elems / n, blk(rank)),
            Primitive::AllGather | Primitive::Gather => (blk(rank), elems, 0..elems),
            Primitive::Broadcast => (0..0, elems, 0..elems),
            Primitive::Reduce => (0..elems, elems, 0..elems),
            Primitive::AlltoAll => {
                let u = blk(0).len();
                (0..n * u, n * u, n * u..2 * n * u)
            }
            Primitive::SendRecv => (blk(0), elems, blk(1)),
            Primitive::Barrier | Primitive::AlltoAllV => (0..0, 0, 0..0),
        };
        let send = &input[bytes(send)];
        let recv_at = bytes(recv_at);
        let mut bufs = if p.reduces() {
            match dtype {
                DType::Fp32 => Typed::F32(Bufs::new(send, recv_len)),
                DType::Int32 => Typed::I32(Bufs::new(send, recv_len)),
                DType::Int8 => Typed::I8(Bufs::new(send, recv_len)),
                DType::Fp16 | DType::Bf16 => unreachable!("refused by supports"),
            }
        } else {
            Typed::Bytes(Bufs::new(send, recv_len * es))
        };
        if p == Primitive::Broadcast {
            // In place: the root's buffer is its input.
            if let Typed::Bytes(b) = &mut bufs {
                b.recv.copy_from_slice(&input);
            }
        }
        Ok(LibraryRun {
            primitive: p,
            op,
            rank,
            root,
            input,
            recv_at,
            bufs,
        })
    }

    /// One call of the library's collective over `world`.
    pub fn run(&mut self, world: &SimpleCommunicator) {
        let (p, op, rank, root) = (self.primitive, self.op, self.rank, self.root);
        match &mut self.bufs {
            Typed::F32(b) => b.call(world, p, op, rank, root),
            Typed::I32(b) => b.call(world, p, op, rank, root),
            Typed::I8(b) => b.call(world, p, op, rank, root),
            Typed::Bytes(b) => b.call(world, p, op, rank, root),
        }
    }

    /// The rank's buffer after the last call, in our layout (what the
    /// checker reads): the input with the received bytes in place; a
    /// non-root rank of Reduce / Gather receives nothing.
    pub fn output(&self) -> Vec<u8> {
        let mut out = self.input.clone();
        let receives = match self.primitive {
            Primitive::Reduce | Primitive::Gather => self.rank == self.root,
            _ => true,
        };
        if receives {
            let at = &mut out[self.recv_at.clone()];
            match &self.bufs {
                Typed::F32(b) => b.recv_bytes(at),
                Typed::I32(b) => b.recv_bytes(at),
                Typed::I8(b) => b.recv_bytes(at),
                Typed::Bytes(b) => b.recv_bytes(at),
            }
        }
        out
    }
}
