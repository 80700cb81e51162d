//! What every session and endpoint shares: the configuration, the rooms,
//! the counters, the per-address book and the shutdown signal. It names no
//! transport: WebSocket and WebTransport sessions reach it the same way, and
//! the HTTP layer keeps what is its own (the WebTransport offer) apart.

use std::sync::Arc;

use crate::config::ServerConfig;
use crate::limits::AddressBook;
use crate::metrics::Metrics;
use crate::rooms::Games;
use crate::shutdown::Shutdown;

/// What every handler shares.
#[derive(Debug)]
pub struct AppState {
    /// The configuration the server started with.
    pub config: ServerConfig,
    /// The rooms of every game hosted (each registry hands out its
    /// game's player ids).
    pub rooms: Games,
    /// The counters.
    pub metrics: Arc<Metrics>,
    /// What each address holds.
    pub book: Arc<AddressBook>,
    /// The shutdown signal, and the sessions it waits for.
    pub shutdown: Shutdown,
}

impl AppState {
    /// The state of a server configured by `config`, with no room open:
    /// `rooms` are the registries of its games, made with `metrics` and
    /// `book` (see [`crate::rooms::Common`]).
    pub fn new(
        config: ServerConfig,
        rooms: Games,
        metrics: Arc<Metrics>,
        book: Arc<AddressBook>,
    ) -> Arc<AppState> {
        Arc::new(AppState {
            config,
            rooms,
            metrics,
            book,
            shutdown: Shutdown::default(),
        })
    }
}
