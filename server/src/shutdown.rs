//! Shutdown as one small type: the signal every task watches, the count of
//! sessions still saying goodbye, and the one bounded wait for them.
//!
//! Whatever carries a session (WebSocket, WebTransport) holds a
//! [`SessionCount`] for as long as it runs; [`Shutdown::drained`] is the
//! only place that waits for them, for at most [`SHUTDOWN_GRACE`].

use std::time::Duration;

use tokio::sync::watch;

/// How long shutdown waits for sessions to tell their clients why.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(3);

/// The server's shutdown signal and its running sessions.
#[derive(Debug)]
pub struct Shutdown {
    stop: watch::Sender<bool>,
    sessions: watch::Sender<usize>,
}

impl Default for Shutdown {
    fn default() -> Shutdown {
        Shutdown {
            stop: watch::Sender::new(false),
            sessions: watch::Sender::new(0),
        }
    }
}

impl Shutdown {
    /// Tells every task that the server shuts down.
    pub fn signal(&self) {
        self.stop.send_replace(true);
    }

    /// Whether the server shuts down.
    pub fn is_signalled(&self) -> bool {
        *self.stop.borrow()
    }

    /// A receiver that [`Signal::wait`] turns into the signal, for loops that
    /// poll it many times without a new waiter each time.
    pub fn watch(&self) -> Signal {
        Signal(self.stop.subscribe())
    }

    /// Resolves once the server shuts down.
    pub async fn signalled(&self) {
        self.watch().wait().await;
    }

    /// Counts one running session until the returned guard drops.
    pub fn session(&self) -> SessionCount<'_> {
        self.sessions.send_modify(|n| *n += 1);
        SessionCount(self)
    }

    /// Sessions still running.
    pub fn sessions(&self) -> usize {
        *self.sessions.borrow()
    }

    /// Waits until every session has ended, for at most [`SHUTDOWN_GRACE`].
    pub async fn drained(&self) {
        let mut sessions = self.sessions.subscribe();
        let _ = tokio::time::timeout(SHUTDOWN_GRACE, sessions.wait_for(|n| *n == 0)).await;
    }
}

/// One task's view of the shutdown signal.
#[derive(Clone, Debug)]
pub struct Signal(watch::Receiver<bool>);

impl Signal {
    /// Resolves once the server shuts down (or its state is gone).
    pub async fn wait(&mut self) {
        let _ = self.0.wait_for(|stop| *stop).await;
    }
}

/// A running session, counted until dropped.
#[derive(Debug)]
pub struct SessionCount<'a>(&'a Shutdown);

impl Drop for SessionCount<'_> {
    fn drop(&mut self) {
        self.0.sessions.send_modify(|n| *n = n.saturating_sub(1));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn drained_returns_when_the_last_session_ends() {
        let shutdown = Shutdown::default();
        let first = shutdown.session();
        let second = shutdown.session();
        assert_eq!(shutdown.sessions(), 2);
        shutdown.signal();
        assert!(shutdown.is_signalled());
        drop(first);
        drop(second);
        // Returns at once: nothing is left to wait for.
        tokio::time::timeout(Duration::from_millis(500), shutdown.drained())
            .await
            .expect("no session left, no wait");
        assert_eq!(shutdown.sessions(), 0);
    }

    #[tokio::test(start_paused = true)]
    async fn drained_gives_up_after_the_grace() {
        let shutdown = Shutdown::default();
        let _stuck = shutdown.session();
        let started = tokio::time::Instant::now();
        shutdown.drained().await;
        assert!(started.elapsed() >= SHUTDOWN_GRACE);
    }
}
