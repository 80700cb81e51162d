//! The connection's decisions, without the browser: which link to try, when
//! to fall back from WebTransport to the WebSocket, and how long to wait
//! before trying again.
//!
//! An attempt starts with the WebSocket when the page asks for it or the
//! browser has no WebTransport; otherwise it asks the server where
//! WebTransport is. With [`Preference::Auto`], WebTransport that is not
//! offered, that the browser refuses, that fails, or that is not up within
//! [`FALLBACK_MS`] of the attempt's start gives way to the WebSocket within
//! the same attempt. Any other failure, and any close of an open link, ends
//! the attempt: the next one starts after the wait core's [`Backoff`] gives
//! for how long the link was up.
//!
//! [`Plan`] takes what happened (the offer, the link came up, the link
//! ended, time passed) and returns the [`Action`] for the connection to
//! carry out; it never touches a socket, so it is tested natively.

use std::time::Duration;

use skirmish_core::Backoff;

/// How long WebTransport has to come up before the WebSocket is used.
pub const FALLBACK_MS: f64 = 3000.0;

/// Which transport the page may use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Preference {
    /// WebTransport if offered and up within [`FALLBACK_MS`], else
    /// WebSocket.
    Auto,
    /// WebSocket only.
    WebSocket,
    /// WebTransport only.
    WebTransport,
}

impl Preference {
    /// From `?transport=`.
    pub fn parse(value: Option<&str>) -> Preference {
        match value {
            Some("websocket") => Preference::WebSocket,
            Some("webtransport") => Preference::WebTransport,
            _ => Preference::Auto,
        }
    }
}

/// The transport of an open connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transport {
    /// WebSocket.
    WebSocket,
    /// WebTransport.
    WebTransport,
}

impl Transport {
    /// Its name, as the HUD and `skirmish.debug()` show it.
    pub fn name(self) -> &'static str {
        match self {
            Transport::WebSocket => "websocket",
            Transport::WebTransport => "webtransport",
        }
    }
}

/// The connection's state, for the status line.
#[derive(Clone, Debug, PartialEq)]
pub enum Status {
    /// Opening a connection.
    Connecting,
    /// Open; `fresh` once, right after opening, to send `hello`.
    Open {
        /// Whether it opened since the last poll.
        fresh: bool,
        /// Over what.
        transport: Transport,
    },
    /// Closed; reconnecting at the given time.
    Waiting {
        /// Why the last connection closed.
        reason: String,
        /// When the next attempt starts (ms, `performance.now()`).
        retry_at: f64,
    },
}

/// What the connection should do next.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Action {
    /// Nothing to do.
    Stay,
    /// Ask the server whether and where it offers WebTransport.
    AskOffer,
    /// Open WebTransport where the server said.
    OpenWebTransport,
    /// Close any link and open the WebSocket.
    OpenWebSocket,
    /// WebTransport did not come up (for this reason): close it and open
    /// the WebSocket.
    FallBack(String),
    /// Close any link; [`Plan::status`] says why and when to retry.
    Close,
}

/// The decisions of one self-healing connection.
#[derive(Clone, Debug)]
pub struct Plan {
    preference: Preference,
    /// Whether the browser has WebTransport at all.
    webtransport: bool,
    backoff: Backoff,
    status: Status,
    stage: Stage,
    /// When the attempt started (ms).
    started_at: f64,
    /// When the link came up (ms), if it did.
    opened_at: Option<f64>,
}

impl Plan {
    /// A plan for `preference` in a browser that has WebTransport or not;
    /// [`Plan::start`] begins the first attempt.
    pub fn new(preference: Preference, webtransport: bool) -> Plan {
        Plan {
            preference,
            webtransport,
            backoff: Backoff::default(),
            status: Status::Connecting,
            stage: Stage::Idle,
            started_at: 0.0,
            opened_at: None,
        }
    }

    /// The connection's state.
    pub fn status(&self) -> &Status {
        &self.status
    }

    /// The transport in use, once open.
    pub fn transport(&self) -> Option<Transport> {
        match &self.status {
            Status::Open { transport, .. } => Some(*transport),
            _ => None,
        }
    }

    /// Begins an attempt at `now`.
    pub fn start(&mut self, now: f64) -> Action {
        self.status = Status::Connecting;
        self.started_at = now;
        self.opened_at = None;
        if self.preference == Preference::WebSocket || !self.webtransport {
            self.stage = Stage::WebSocket;
            Action::OpenWebSocket
        } else {
            self.stage = Stage::Asking;
            Action::AskOffer
        }
    }

    /// A new poll begins: an open connection is no longer fresh.
    pub fn polled(&mut self) {
        if let Status::Open { fresh, .. } = &mut self.status {
            *fresh = false;
        }
    }

    /// The server answered whether it offers WebTransport.
    pub fn offered(&mut self, offered: bool, now: f64) -> Action {
        match (offered, self.preference) {
            (true, _) => {
                self.stage = Stage::WebTransport;
                Action::OpenWebTransport
            }
            (false, Preference::WebTransport) => {
                self.end("the server offers no WebTransport".to_string(), now)
            }
            (false, _) => {
                self.stage = Stage::WebSocket;
                Action::OpenWebSocket
            }
        }
    }

    /// The browser refused to start WebTransport, saying `why`.
    pub fn refused(&mut self, why: &str, now: f64) -> Action {
        if self.may_fall_back() {
            self.stage = Stage::WebSocket;
            Action::FallBack(why.to_string())
        } else {
            self.end(format!("WebTransport: {why}"), now)
        }
    }

    /// The link is up (said again on every poll while it is).
    pub fn opened(&mut self, now: f64) {
        let transport = match self.stage {
            Stage::WebSocket => Transport::WebSocket,
            Stage::WebTransport => Transport::WebTransport,
            Stage::Idle | Stage::Asking => return,
        };
        if self.status == Status::Connecting {
            self.status = Status::Open {
                fresh: true,
                transport,
            };
            self.opened_at = Some(now);
        }
    }

    /// The link ended, saying `why`.
    pub fn closed(&mut self, why: String, now: f64) -> Action {
        if self.may_fall_back() {
            self.stage = Stage::WebSocket;
            Action::FallBack(why)
        } else {
            self.end(why, now)
        }
    }

    /// Time passed to `now`: WebTransport that is still not up gives way,
    /// and a due retry starts.
    pub fn tick(&mut self, now: f64) -> Action {
        let late = self.stage == Stage::WebTransport
            && self.status == Status::Connecting
            && now - self.started_at > FALLBACK_MS;
        if late {
            return self.closed("WebTransport was not ready in time".to_string(), now);
        }
        match self.status {
            Status::Waiting { retry_at, .. } if now >= retry_at => self.start(now),
            _ => Action::Stay,
        }
    }

    /// Whether a failure now means trying the WebSocket instead.
    fn may_fall_back(&self) -> bool {
        self.stage == Stage::WebTransport
            && self.status == Status::Connecting
            && self.preference == Preference::Auto
    }

    /// Ends the attempt: waits for as long as the backoff says.
    fn end(&mut self, reason: String, now: f64) -> Action {
        let uptime = self.opened_at.take().map_or(0.0, |at| (now - at).max(0.0));
        let wait = self
            .backoff
            .on_close(Duration::from_secs_f64(uptime / 1000.0));
        self.stage = Stage::Idle;
        self.status = Status::Waiting {
            reason,
            retry_at: now + wait.as_secs_f64() * 1000.0,
        };
        Action::Close
    }
}

/// Where the current attempt is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stage {
    /// No attempt: waiting to retry.
    Idle,
    /// Waiting for the server's offer.
    Asking,
    /// On WebTransport.
    WebTransport,
    /// On the WebSocket.
    WebSocket,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A plan whose first attempt started at 0 ms, with its first action.
    fn started(preference: Preference, webtransport: bool) -> (Plan, Action) {
        let mut plan = Plan::new(preference, webtransport);
        let first = plan.start(0.0);
        (plan, first)
    }

    fn retry_at(plan: &Plan) -> Option<f64> {
        match plan.status() {
            Status::Waiting { retry_at, .. } => Some(*retry_at),
            _ => None,
        }
    }

    fn reason(plan: &Plan) -> Option<&str> {
        match plan.status() {
            Status::Waiting { reason, .. } => Some(reason),
            _ => None,
        }
    }

    #[test]
    fn the_websocket_is_opened_at_once_when_asked_for_or_the_only_one() {
        assert_eq!(
            started(Preference::WebSocket, true).1,
            Action::OpenWebSocket
        );
        assert_eq!(started(Preference::Auto, false).1, Action::OpenWebSocket);
        assert_eq!(
            started(Preference::WebTransport, false).1,
            Action::OpenWebSocket
        );
        assert_eq!(started(Preference::Auto, true).1, Action::AskOffer);
        assert_eq!(started(Preference::WebTransport, true).1, Action::AskOffer);
    }

    #[test]
    fn offered_webtransport_opens_fresh_once() {
        let (mut plan, _) = started(Preference::Auto, true);
        assert_eq!(plan.offered(true, 10.0), Action::OpenWebTransport);
        assert_eq!(plan.tick(20.0), Action::Stay);
        plan.opened(30.0);
        let open = |fresh| Status::Open {
            fresh,
            transport: Transport::WebTransport,
        };
        assert_eq!(plan.status(), &open(true));
        plan.polled();
        plan.opened(40.0);
        assert_eq!(plan.status(), &open(false));
        assert_eq!(plan.transport(), Some(Transport::WebTransport));
        // Open, it is never late.
        assert_eq!(plan.tick(FALLBACK_MS + 1.0), Action::Stay);
    }

    #[test]
    fn auto_falls_back_when_webtransport_is_not_up_after_three_seconds() {
        let (mut plan, _) = started(Preference::Auto, true);
        plan.offered(true, 100.0);
        assert_eq!(plan.tick(FALLBACK_MS), Action::Stay);
        assert_eq!(
            plan.tick(FALLBACK_MS + 1.0),
            Action::FallBack("WebTransport was not ready in time".to_string())
        );
        assert_eq!(plan.status(), &Status::Connecting);
        // The WebSocket has no deadline of its own.
        assert_eq!(plan.tick(FALLBACK_MS * 3.0), Action::Stay);
        plan.opened(FALLBACK_MS * 3.0);
        assert_eq!(plan.transport(), Some(Transport::WebSocket));
    }

    #[test]
    fn auto_falls_back_when_webtransport_is_refused_missing_or_fails() {
        let (mut plan, _) = started(Preference::Auto, true);
        assert_eq!(plan.offered(false, 5.0), Action::OpenWebSocket);
        let (mut plan, _) = started(Preference::Auto, true);
        plan.offered(true, 5.0);
        assert_eq!(
            plan.refused("bad URL", 6.0),
            Action::FallBack("bad URL".to_string())
        );
        let (mut plan, _) = started(Preference::Auto, true);
        plan.offered(true, 5.0);
        assert_eq!(
            plan.closed("handshake failed".to_string(), 7.0),
            Action::FallBack("handshake failed".to_string())
        );
        assert_eq!(plan.status(), &Status::Connecting);
    }

    #[test]
    fn forced_webtransport_never_falls_back() {
        let (mut plan, _) = started(Preference::WebTransport, true);
        assert_eq!(plan.offered(false, 5.0), Action::Close);
        assert_eq!(reason(&plan), Some("the server offers no WebTransport"));
        let (mut plan, _) = started(Preference::WebTransport, true);
        plan.offered(true, 5.0);
        assert_eq!(plan.refused("bad URL", 6.0), Action::Close);
        assert_eq!(reason(&plan), Some("WebTransport: bad URL"));
        let (mut plan, _) = started(Preference::WebTransport, true);
        plan.offered(true, 5.0);
        assert_eq!(plan.tick(FALLBACK_MS + 1.0), Action::Close);
        assert_eq!(reason(&plan), Some("WebTransport was not ready in time"));
        assert_eq!(retry_at(&plan), Some(FALLBACK_MS + 1.0 + 500.0));
    }

    #[test]
    fn webtransport_that_was_open_does_not_fall_back_when_it_closes() {
        let (mut plan, _) = started(Preference::Auto, true);
        plan.offered(true, 5.0);
        plan.opened(50.0);
        assert_eq!(
            plan.closed("closed (bye)".to_string(), 1000.0),
            Action::Close
        );
        assert_eq!(reason(&plan), Some("closed (bye)"));
    }

    #[test]
    fn failures_wait_longer_each_time_up_to_eight_seconds() {
        let (mut plan, _) = started(Preference::WebSocket, true);
        let mut now = 0.0;
        let mut waits = Vec::new();
        for _ in 0..7 {
            assert_eq!(
                plan.closed("connection failed".to_string(), now),
                Action::Close
            );
            let at = retry_at(&plan).unwrap_or_default();
            waits.push(at - now);
            assert_eq!(plan.tick(at - 1.0), Action::Stay);
            assert_eq!(plan.tick(at), Action::OpenWebSocket);
            assert_eq!(plan.status(), &Status::Connecting);
            now = at;
        }
        assert_eq!(
            waits,
            [500.0, 1000.0, 2000.0, 4000.0, 8000.0, 8000.0, 8000.0]
        );
    }

    #[test]
    fn a_connection_up_for_ten_seconds_resets_the_wait() {
        let (mut plan, _) = started(Preference::WebSocket, true);
        plan.closed("connection failed".to_string(), 0.0);
        plan.tick(500.0);
        plan.closed("connection failed".to_string(), 600.0);
        assert_eq!(retry_at(&plan), Some(1600.0));
        plan.tick(1600.0);
        plan.opened(1700.0);
        plan.closed("closed (1006)".to_string(), 11_700.0);
        assert_eq!(retry_at(&plan), Some(12_200.0));
    }

    #[test]
    fn the_next_attempt_after_a_fallback_tries_webtransport_again() {
        let (mut plan, _) = started(Preference::Auto, true);
        plan.offered(true, 5.0);
        plan.tick(FALLBACK_MS + 1.0);
        assert_eq!(
            plan.closed("connection failed".to_string(), 4000.0),
            Action::Close
        );
        assert_eq!(plan.tick(4500.0), Action::AskOffer);
    }
}
