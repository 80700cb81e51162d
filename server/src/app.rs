//! What every session and endpoint shares: the configuration, the rooms,
//! the counters, the per-address book and the shutdown signal. It names no
//! transport: WebSocket and WebTransport sessions reach it the same way, and
//! the HTTP layer keeps what is its own (the WebTransport offer) apart.

use std::sync::Arc;

use crate::config::ServerConfig;
use crate::limits::AddressBook;
use crate::metrics::Metrics;
use crate::rooms::Rooms;
use crate::shutdown::Shutdown;

/// What every handler shares.
#[derive(Debug)]
pub struct AppState {
    /// The configuration the server started with.
    pub config: ServerConfig,
    /// The rooms (which also hand out player ids).
    pub rooms: Arc<Rooms>,
    /// The counters.
    pub metrics: Arc<Metrics>,
    /// What each address holds.
    pub book: Arc<AddressBook>,
    /// The shutdown signal, and the sessions it waits for.
    pub shutdown: Shutdown,
}

impl AppState {
    /// The state of a server configured by `config`, with no room open.
    pub fn new(config: ServerConfig) -> Arc<AppState> {
        let metrics = Arc::new(Metrics::default());
        let book = AddressBook::new(config.limits.clone());
        let rooms = Rooms::new(config.rooms.clone(), metrics.clone(), book.clone());
        Arc::new(AppState {
            config,
            rooms,
            metrics,
            book,
            shutdown: Shutdown::default(),
        })
    }
}
