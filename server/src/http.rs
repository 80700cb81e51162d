//! HTTP on TCP: the accept loop that applies the per-address limits before
//! any HTTP work (and answers a refusal with its status), and the router
//! (the page, `/ws`, `/healthz`, `/rooms`, `/metrics`, `/transport`).

mod accept;
mod router;

pub use accept::accept;
pub use router::Routes;
