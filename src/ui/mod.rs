//! The page (yew). Placeholder until the UI lands.

/// Mounts the page.
pub fn start() {}
