//! The controlled player: live prediction, reconciliation and what is drawn.
//!
//! The order of operations, each fixed step and each authoritative update:
//! 1. [`LocalPlayer::predict`] sanitizes the step's input, records it as a
//!    [`PredictedMoveStep`] and applies it with [`simulate`] at once.
//! 2. [`LocalPlayer::reconcile`] accepts a newer [`PlayerState`]: its pose is
//!    the new baseline, steps up to its `ack_move_tick` are pruned, the rest
//!    are replayed from the baseline with the same [`simulate`], and the result
//!    is the new predicted pose, the gameplay truth (LPR-1, LPSS-1..3). The
//!    difference between the old and the new prediction goes to the visual
//!    [`Correction`]; the report says how large it was, how many steps were
//!    replayed and whether the visible pose snapped (RS-8).
//! 3. Each rendered frame, [`LocalPlayer::advance_frame`] lets the correction
//!    decay, and [`LocalPlayer::visible_pose`] interpolates between the last two
//!    fixed steps by the frame's fraction and adds the offset.
//!
//! The correction target (the rebuilt prediction of the last accepted state)
//! only changes on an accepted `PlayerState` (LPSS-4); see
//! [`LocalPlayer::rebuilt_pose`].

use glam::Vec2;

use crate::client::pending::{PendingInputs, PushError};
use crate::client::smoothing::{Correction, CorrectionOutcome, SmoothingConfig, SETTLED_DISTANCE};
use crate::shared::config::SimConfig;
use crate::shared::input::MoveInput;
use crate::shared::input::PredictedMoveStep;
use crate::shared::sim::{angle_delta, replay, sanitize, simulate, wrap_angle, Pose};
use crate::shared::state::PlayerState;
use crate::shared::tick::Tick;

/// Why a [`PlayerState`] was not accepted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ReconcileError {
    /// Its server tick is not newer than the last accepted one.
    #[error("stale state for server tick {got}; already accepted {accepted}")]
    Stale {
        /// The newest accepted server tick.
        accepted: Tick,
        /// The refused state's server tick.
        got: Tick,
    },
    /// It holds NaN or infinite numbers.
    #[error("state for server tick {0} has non-finite numbers")]
    NonFinite(Tick),
}

/// What one accepted reconciliation did (RS-8).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ReconcileReport {
    /// The accepted state's server tick.
    pub server_tick: Tick,
    /// The acknowledged input tick.
    pub ack: Option<Tick>,
    /// Steps pruned by the acknowledgement.
    pub pruned: usize,
    /// Steps replayed from the baseline.
    pub replayed: usize,
    /// Distance between the old and the rebuilt prediction.
    pub error: f32,
    /// Absolute rotation between the old and the rebuilt prediction.
    pub error_angle: f32,
    /// What became of the error visually.
    pub outcome: CorrectionOutcome,
}

/// Counters for the HUD and for tests.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LocalStats {
    /// Accepted authoritative states.
    pub accepted: u64,
    /// States refused as not newer than the last accepted one.
    pub rejected_stale: u64,
    /// States refused for non-finite numbers.
    pub rejected_invalid: u64,
    /// Errors at or above the dead zone (smoothed or snapped).
    pub corrections: u64,
    /// Errors below the dead zone, absorbed without a visible change.
    pub absorbed: u64,
    /// Visible snaps: too large, or out of budget.
    pub snaps: u64,
    /// Steps replayed over all reconciliations.
    pub replayed_steps: u64,
    /// Steps refused because the pending buffer was full.
    pub pending_full: u64,
    /// The error of the last counted correction.
    pub last_correction: f32,
    /// The largest error ever counted.
    pub max_correction: f32,
    /// Reconciliations whose error was above [`SETTLED_DISTANCE`]: any
    /// misprediction at all, absorbed or not.
    pub mispredictions: u64,
    /// The largest error of any reconciliation, absorbed ones included.
    pub max_error: f32,
    /// The sum of every counted correction's error (for the mean).
    pub correction_sum: f32,
}

/// The controlled player's prediction and presentation state.
#[derive(Clone, Debug)]
pub struct LocalPlayer {
    sim: SimConfig,
    smoothing: SmoothingConfig,
    pending: PendingInputs,
    authoritative: Option<PlayerState>,
    predicted: Pose,
    previous: Pose,
    rebuilt: Pose,
    correction: Correction,
    stats: LocalStats,
    replay: bool,
}

impl LocalPlayer {
    /// A player at `spawn`, predicting with `sim` and showing corrections
    /// according to `smoothing`, with a pending buffer of the default size.
    pub fn new(sim: SimConfig, smoothing: SmoothingConfig, spawn: Pose) -> LocalPlayer {
        LocalPlayer::with_pending_capacity(sim, smoothing, spawn, PendingInputs::DEFAULT_CAPACITY)
    }

    /// Like [`LocalPlayer::new`] with a pending buffer of `capacity` steps.
    pub fn with_pending_capacity(
        sim: SimConfig,
        smoothing: SmoothingConfig,
        spawn: Pose,
        capacity: usize,
    ) -> LocalPlayer {
        LocalPlayer {
            sim,
            smoothing,
            pending: PendingInputs::with_capacity(capacity),
            authoritative: None,
            predicted: spawn,
            previous: spawn,
            rebuilt: spawn,
            correction: Correction::default(),
            stats: LocalStats::default(),
            replay: true,
        }
    }

    /// Predicts one fixed step of `input` (sanitized first) and records it.
    ///
    /// # Errors
    /// The pending buffer refused the step (see [`PendingInputs::push`]); it
    /// was neither applied nor recorded, and must not be sent. A full buffer
    /// is counted in [`LocalStats::pending_full`].
    pub fn predict(&mut self, input: MoveInput) -> Result<Pose, PushError> {
        self.predict_seen(input, None)
    }

    /// [`LocalPlayer::predict`], for an input made while remote players
    /// were drawn at server tick `view_tick`; the step keeps it until
    /// acknowledged, so every resend carries the same view.
    ///
    /// # Errors
    /// As [`LocalPlayer::predict`].
    pub fn predict_seen(
        &mut self,
        input: MoveInput,
        view_tick: Option<f64>,
    ) -> Result<Pose, PushError> {
        let input = sanitize(input);
        let step = PredictedMoveStep::new(input, self.sim.cadence()).seen_at(view_tick);
        if let Err(e) = self.pending.push(step) {
            if matches!(e, PushError::Full { .. }) {
                self.stats.pending_full += 1;
            }
            return Err(e);
        }
        self.previous = self.predicted;
        self.predicted = simulate(self.predicted, &input, step.duration, &self.sim);
        Ok(self.predicted)
    }

    /// Accepts a newer authoritative state and rebuilds the prediction.
    ///
    /// # Errors
    /// A state not newer than the last accepted one, or with non-finite
    /// numbers, is refused, counted, and changes nothing else.
    pub fn reconcile(&mut self, state: &PlayerState) -> Result<ReconcileReport, ReconcileError> {
        if let Some(accepted) = self.authoritative.map(|a| a.tick) {
            if state.tick <= accepted {
                self.stats.rejected_stale += 1;
                return Err(ReconcileError::Stale {
                    accepted,
                    got: state.tick,
                });
            }
        }
        if !state.is_finite() {
            self.stats.rejected_invalid += 1;
            return Err(ReconcileError::NonFinite(state.tick));
        }
        let first = self.authoritative.is_none();
        self.authoritative = Some(*state);
        self.stats.accepted += 1;

        let pruned = state
            .ack_move_tick
            .map_or(0, |n| self.pending.ack_through(n));
        let (rebuilt, replayed) = if self.replay {
            let rebuilt = replay(state.pose(), self.pending.iter(), &self.sim);
            (rebuilt, self.pending.len())
        } else {
            (state.pose(), 0)
        };
        self.stats.replayed_steps += replayed as u64;

        let old = self.predicted;
        let moved = rebuilt.position - old.position;
        let turned = angle_delta(old.rotation, rebuilt.rotation);
        // Keep the frame interpolation continuous: the previous step moves
        // with the prediction.
        self.previous = Pose {
            position: self.previous.position + moved,
            rotation: wrap_angle(self.previous.rotation + turned),
        };
        self.predicted = rebuilt;
        self.rebuilt = rebuilt;

        let error = moved.length();
        if !first {
            self.stats.max_error = self.stats.max_error.max(error);
            if error > SETTLED_DISTANCE {
                self.stats.mispredictions += 1;
            }
        }
        let outcome = if first {
            self.previous = rebuilt;
            self.correction.clear();
            CorrectionOutcome::Placed
        } else {
            self.correction
                .on_reconcile(-moved, -turned, &self.smoothing)
        };
        match outcome {
            CorrectionOutcome::Smoothed | CorrectionOutcome::Snapped => {
                self.stats.corrections += 1;
                self.stats.last_correction = error;
                self.stats.correction_sum += error;
                self.stats.max_correction = self.stats.max_correction.max(error);
                if outcome == CorrectionOutcome::Snapped {
                    self.stats.snaps += 1;
                }
            }
            CorrectionOutcome::Absorbed => self.stats.absorbed += 1,
            CorrectionOutcome::Placed | CorrectionOutcome::None => {}
        }
        Ok(ReconcileReport {
            server_tick: state.tick,
            ack: state.ack_move_tick,
            pruned,
            replayed,
            error,
            error_angle: turned.abs(),
            outcome,
        })
    }

    /// Accepts `state` as a fresh placement (a respawn, a teleport): the
    /// prediction is rebuilt from it and the visible pose jumps there
    /// without counting a correction or a snap.
    ///
    /// # Errors
    /// As [`LocalPlayer::reconcile`], except that staleness is not checked.
    pub fn place(&mut self, state: &PlayerState) -> Result<ReconcileReport, ReconcileError> {
        self.authoritative = None;
        self.reconcile(state)
    }

    /// Turns replay off (or on again): without it, an accepted state is
    /// taken as the prediction as it is, and the unacknowledged inputs are
    /// not reapplied. Only for showing what replay does; pending inputs are
    /// still pruned, so nothing fills up.
    pub fn set_replay(&mut self, replay: bool) {
        self.replay = replay;
    }

    /// Lets `dt` seconds of frame time pass for the visual correction.
    pub fn advance_frame(&mut self, dt: f32) {
        if self.correction.advance(dt, &self.smoothing) {
            self.stats.snaps += 1;
        }
    }

    /// The pose to draw, `alpha` (0..=1) of the way from the previous fixed
    /// step to the current one, plus the visual correction.
    pub fn visible_pose(&self, alpha: f32) -> Pose {
        let alpha = if alpha.is_finite() {
            alpha.clamp(0.0, 1.0)
        } else {
            1.0
        };
        self.correction
            .apply(&self.previous.lerp(&self.predicted, alpha))
    }

    /// The gameplay truth: the newest predicted pose.
    pub fn predicted_pose(&self) -> Pose {
        self.predicted
    }

    /// The predicted pose one fixed step earlier.
    pub fn previous_pose(&self) -> Pose {
        self.previous
    }

    /// The prediction rebuilt by the last accepted state: the correction
    /// target, constant between accepted states.
    pub fn rebuilt_pose(&self) -> Pose {
        self.rebuilt
    }

    /// The last accepted authoritative state: the baseline.
    pub fn authoritative(&self) -> Option<&PlayerState> {
        self.authoritative.as_ref()
    }

    /// The steps not yet acknowledged.
    pub fn pending(&self) -> &PendingInputs {
        &self.pending
    }

    /// The current visual correction.
    pub fn correction(&self) -> &Correction {
        &self.correction
    }

    /// The counters.
    pub fn stats(&self) -> &LocalStats {
        &self.stats
    }

    /// The movement constants in use.
    pub fn sim_config(&self) -> &SimConfig {
        &self.sim
    }

    /// The smoothing rules in use.
    pub fn smoothing_config(&self) -> &SmoothingConfig {
        &self.smoothing
    }

    /// Changes the smoothing rules, e.g. from a HUD toggle.
    pub fn set_smoothing_config(&mut self, smoothing: SmoothingConfig) {
        self.smoothing = smoothing;
    }

    /// The error between what is drawn at the current step and the truth.
    pub fn visible_error(&self) -> f32 {
        self.correction.offset().length()
    }
}

impl Default for LocalPlayer {
    fn default() -> Self {
        LocalPlayer::new(
            SimConfig::default(),
            SmoothingConfig::default(),
            Pose::new(Vec2::new(100.0, 100.0), 0.0),
        )
    }
}
