//! What every message from a client passes before it is read, whatever the
//! transport: the per-second rate limit (a flood costs no parsing) and the
//! budget of refused messages (more than [`ERROR_BUDGET`] within
//! [`ERROR_WINDOW`] end the connection with `too_many_errors`).

use std::time::Duration;

use skirmish_core::{ErrorCode, ProtocolError};
use tokio::time::Instant;

/// Errors tolerated within [`ERROR_WINDOW`] before the connection is closed.
pub const ERROR_BUDGET: u32 = 10;
/// The window of [`ERROR_BUDGET`].
pub const ERROR_WINDOW: Duration = Duration::from_secs(10);

/// Counts events in fixed windows.
#[derive(Debug)]
struct Window {
    length: Duration,
    start: Instant,
    count: u32,
}

impl Window {
    fn new(length: Duration) -> Window {
        Window {
            length,
            start: Instant::now(),
            count: 0,
        }
    }

    /// Counts one event; how many this window holds.
    fn count(&mut self) -> u32 {
        if self.start.elapsed() >= self.length {
            self.start = Instant::now();
            self.count = 0;
        }
        self.count += 1;
        self.count
    }
}

/// What to do with one message under the rate limit.
#[derive(Debug, PartialEq)]
pub enum Admit {
    /// Read it.
    Read,
    /// Over the limit, the first time this window: answer with the error.
    Refuse(ProtocolError),
    /// Over the limit again: drop it (counted by the caller).
    Drop,
}

/// One connection's rate limit and error budget.
#[derive(Debug)]
pub struct Gate {
    rate: Window,
    budget: Window,
    max_per_sec: u32,
}

impl Gate {
    /// A gate letting `max_per_sec` messages a second through.
    pub fn new(max_per_sec: u32) -> Gate {
        Gate {
            rate: Window::new(Duration::from_secs(1)),
            budget: Window::new(ERROR_WINDOW),
            max_per_sec,
        }
    }

    /// Counts a message against the rate limit.
    pub fn admit(&mut self) -> Admit {
        let count = self.rate.count();
        let max = self.max_per_sec;
        if count <= max {
            Admit::Read
        } else if count == max.saturating_add(1) {
            Admit::Refuse(ProtocolError::new(
                ErrorCode::RateLimited,
                format!("more than {max} messages per second; dropped"),
            ))
        } else {
            Admit::Drop
        }
    }

    /// Counts a refused message; `true` once the error budget is spent.
    /// Rate-limited messages are dropped, not held against the budget.
    pub fn spend(&mut self, code: ErrorCode) -> bool {
        code != ErrorCode::RateLimited && self.budget.count() > ERROR_BUDGET
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_message_over_the_limit_is_refused_the_rest_dropped() {
        let mut gate = Gate::new(3);
        for _ in 0..3 {
            assert_eq!(gate.admit(), Admit::Read);
        }
        assert!(matches!(gate.admit(), Admit::Refuse(e) if e.code == ErrorCode::RateLimited));
        assert_eq!(gate.admit(), Admit::Drop);
    }

    #[test]
    fn the_error_budget_ignores_rate_limiting() {
        let mut gate = Gate::new(3);
        for _ in 0..100 {
            assert!(!gate.spend(ErrorCode::RateLimited));
        }
        for _ in 0..ERROR_BUDGET {
            assert!(!gate.spend(ErrorCode::BadMessage));
        }
        assert!(gate.spend(ErrorCode::BadMessage));
    }
}
