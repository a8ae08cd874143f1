//! Placeholder: the rank worker.

/// Worker entry point.
pub fn start() {}
