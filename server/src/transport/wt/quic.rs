//! QUIC sized for a game: what one WebTransport connection may make the
//! server hold, whatever its client writes.
//!
//! quinn's defaults suit a file server: 100 bidirectional and 100
//! unidirectional streams, 1.25 MB of receive window on each and no bound
//! on their sum, so one connection that never said `hello` could pin about
//! 250 MB. A Skirmish session uses, from the client: the HTTP/3 `CONNECT`
//! stream and its own stream (bidirectional), and HTTP/3's control and two
//! QPACK streams (unidirectional). The windows below let `hello` and the
//! reliable messages through at once and bound the sum, so a connection
//! holds at most [`CONNECTION_WINDOW`] of stream data and
//! [`DATAGRAM_RECEIVE_BUFFER`] of datagrams however many streams it tries
//! to open.

use std::sync::Arc;
use std::time::Duration;

use wtransport::quinn::{self, VarInt};

use super::congestion::FlooredCubic;

/// Bidirectional streams a client may have open: `CONNECT` and ours.
pub const BIDI_STREAMS: u32 = 2;
/// Unidirectional streams a client may have open: HTTP/3's control and
/// QPACK encoder and decoder streams, and one spare (browsers may open a
/// reserved "grease" stream type).
pub const UNI_STREAMS: u32 = 4;
/// Bytes a client may have in flight on one stream, unread.
pub const STREAM_WINDOW: u32 = 64 * 1024;
/// Bytes a client may have in flight on all its streams together.
pub const CONNECTION_WINDOW: u32 = 128 * 1024;
/// Datagrams waiting for the session to read them: a few hundred inputs.
pub const DATAGRAM_RECEIVE_BUFFER: usize = 32 * 1024;
/// Datagrams waiting to be sent (snapshots, pongs); past it the oldest are
/// dropped, as an unreliable channel may: about three seconds of snapshots.
pub const DATAGRAM_SEND_BUFFER: usize = 64 * 1024;
/// Bytes the server may have unacknowledged on one connection's streams.
pub const SEND_WINDOW: u64 = 256 * 1024;
/// Handshakes not yet taken by the accept loop.
pub const MAX_INCOMING: usize = 1024;
/// Bytes buffered for one such handshake, and for all of them.
pub const INCOMING_BUFFER: u64 = 16 * 1024;
/// See [`INCOMING_BUFFER`].
pub const INCOMING_BUFFER_TOTAL: u64 = 4 * 1024 * 1024;
/// How often an idle session is kept alive, and when it is given up.
pub const KEEP_ALIVE: Duration = Duration::from_secs(3);
/// See [`KEEP_ALIVE`].
pub const IDLE_TIMEOUT: Duration = Duration::from_secs(10);

/// The transport settings of every WebTransport connection.
pub fn transport() -> quinn::TransportConfig {
    let mut t = quinn::TransportConfig::default();
    t.max_concurrent_bidi_streams(VarInt::from_u32(BIDI_STREAMS))
        .max_concurrent_uni_streams(VarInt::from_u32(UNI_STREAMS))
        .stream_receive_window(VarInt::from_u32(STREAM_WINDOW))
        .receive_window(VarInt::from_u32(CONNECTION_WINDOW))
        .send_window(SEND_WINDOW)
        .datagram_receive_buffer_size(Some(DATAGRAM_RECEIVE_BUFFER))
        .datagram_send_buffer_size(DATAGRAM_SEND_BUFFER)
        .keep_alive_interval(Some(KEEP_ALIVE))
        .congestion_controller_factory(Arc::new(FlooredCubic::default()));
    // A constant far below QUIC's bound of 2^62 ms.
    if let Ok(idle) = quinn::IdleTimeout::try_from(IDLE_TIMEOUT) {
        t.max_idle_timeout(Some(idle));
    }
    t
}

/// The endpoint's bounds on handshakes waiting to be accepted.
pub fn bound_incoming(config: &mut quinn::ServerConfig) {
    config
        .max_incoming(MAX_INCOMING)
        .incoming_buffer_size(INCOMING_BUFFER)
        .incoming_buffer_size_total(INCOMING_BUFFER_TOTAL);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_windows_bound_what_a_connection_can_pin() {
        // Every stream it may open, each written to its window, stays
        // within the connection's window, which stays in tens of KB.
        let streams = u64::from(BIDI_STREAMS + UNI_STREAMS);
        assert!(u64::from(CONNECTION_WINDOW) < streams * u64::from(STREAM_WINDOW));
        assert!(u64::from(CONNECTION_WINDOW) + DATAGRAM_RECEIVE_BUFFER as u64 <= 256 * 1024);
        // A stream can still carry the largest message a client may send.
        assert!(STREAM_WINDOW as usize >= crate::transport::TRANSPORT_LIMIT);
        assert!(KEEP_ALIVE < IDLE_TIMEOUT);
    }
}
