//! The module's one error: where, and what.

use thiserror::Error;

/// An import or export error: where (`gpu 3 / tb 1 / step 4`, `algo`) and
/// what. Every error of the module has these two parts, so it is one type.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[error("{at}: {what}")]
pub struct MscclError {
    /// The element, e.g. `gpu 3 / tb 1 / step 4`.
    pub at: String,
    /// What is wrong, with the value and what is allowed.
    pub what: String,
}

pub(super) fn err<T>(at: impl Into<String>, what: impl Into<String>) -> Result<T, MscclError> {
    Err(MscclError {
        at: at.into(),
        what: what.into(),
    })
}
