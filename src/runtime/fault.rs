//! The test-only fault mini-language: `KIND:rank=R:step=K` (the page's
//! `fault=` URL key), which makes one rank's worker misbehave so that the
//! failure paths (a worker that throws, dies, loses or delays a message)
//! can be tested end to end: the page's workers (`runtime::browser`) and
//! `cclrun --fault` (`runtime::mpi`) act on it. Pure Rust.

use serde::{Deserialize, Serialize};
use thiserror::Error;

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
    /// The message is sent with its first byte flipped (the receiver's
    /// output then fails its bit-for-bit check, which names the rank, the
    /// chunk and the element).
    Corrupt,
    /// The message is posted `ms` ms late.
    Delay {
        /// The delay, ms.
        ms: u32,
    },
}

/// Why a `fault` value was refused.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[error("one of throw|kill|drop|corrupt:rank=R:step=K or delay:rank=R:step=K:ms=M (R, K, M integers; M <= 600000)")]
pub struct FaultSyntaxError;

impl Fault {
    /// Parses the test-only URL value: `throw:rank=R:step=K`,
    /// `kill:rank=R:step=K`, `drop:rank=R:step=K`, `corrupt:rank=R:step=K`,
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
            Some("corrupt") => (FaultKind::Corrupt, 3),
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
            FaultKind::Corrupt => "corrupts its message".to_string(),
            FaultKind::Delay { ms } => format!("delays its message by {ms} ms"),
        };
        format!(
            "rank {}'s worker {what} at step {} (first run only)",
            self.rank, self.step
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
            Fault::parse("corrupt:rank=3:step=1"),
            f(FaultKind::Corrupt, 3, 1)
        );
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
    }
}
