//! Combat on the server: hitscan shots judged where the shooter saw its targets
//! (lag compensation over each player's pose history), with the shared
//! rules, shot path and ray tests of [`crate::shared::combat`].

use super::{ServerPlayer, World};
use crate::shared::combat::{ray_circle, shot_path};
use crate::shared::protocol::CombatEvent;
use crate::shared::sim::Pose;
use crate::shared::state::PlayerId;
use crate::shared::tick::Tick;

/// A shot waiting to be resolved this tick.
pub(super) struct Shot {
    /// Who fired.
    pub(super) attacker: PlayerId,
    /// The shooter's pose after the move of the input that fired.
    pub(super) from: Pose,
    /// The server tick, with fraction, the shooter saw (`None`: now).
    pub(super) view_tick: Option<f64>,
}

impl ServerPlayer {
    /// The pose at server tick `t` (with fraction), from the history,
    /// interpolated between recorded ticks; clamped to what is recorded.
    fn pose_at(&self, t: f64) -> Pose {
        let (Some(first), Some(last)) = (self.history.front(), self.history.back()) else {
            return self.pose;
        };
        if t <= f64::from(first.0 .0) {
            return first.1;
        }
        if t >= f64::from(last.0 .0) {
            return last.1;
        }
        let base = t.floor();
        let frac = (t - base) as f32;
        let base = Tick(base as u32);
        let i = self.history.partition_point(|(tick, _)| *tick <= base);
        match (self.history.get(i.wrapping_sub(1)), self.history.get(i)) {
            (Some(a), Some(b)) if b.0 == a.0.next() => a.1.lerp(&b.1, frac),
            (Some(a), _) => a.1,
            (None, _) => first.1,
        }
    }
}

impl World {
    /// How many poses each player's history holds.
    pub(super) fn history_len(&self) -> usize {
        (self.rules.history_ms / self.sim.tick_ms.max(1)).max(1) as usize + 1
    }

    /// Records every player's pose at this tick, dropping the oldest beyond
    /// [`World::history_len`].
    pub(super) fn record_history(&mut self) {
        let keep = self.history_len();
        let tick = self.tick;
        for p in self.players.values_mut() {
            if p.history.len() >= keep {
                p.history.pop_front();
            }
            p.history.push_back((tick, p.pose));
        }
    }

    /// Fires `shot` if its shooter is alive and off cooldown: the nearest
    /// living player its ray meets, where the shooter saw it, takes a hit
    /// and may die. Each hit is pushed as one event.
    pub(super) fn resolve_shot(&mut self, shot: &Shot) {
        let tick = self.tick;
        let cooldown = self.rules.cooldown_ticks(&self.sim);
        let Some(shooter) = self.players.get_mut(&shot.attacker) else {
            return;
        };
        if !shooter.is_alive() || !shooter.cooldown.fire(tick, cooldown) {
            return;
        }

        // Where the shooter saw the others: at most max_rewind back, never
        // after the last recorded tick.
        let newest = f64::from(tick.0.saturating_sub(1));
        let oldest = newest - f64::from(self.sim.ticks_of(self.rules.max_rewind_ms));
        let asked = shot.view_tick.filter(|v| v.is_finite()).unwrap_or(newest);
        let view = asked.clamp(oldest.max(0.0), newest);
        if asked < oldest {
            self.stats.rewind_clamped += 1;
        }
        let depth = (f64::from(tick.0) - view) * f64::from(self.sim.tick_ms);
        self.stats.rewind.record(depth as i32);

        let origin = shot.from.position;
        let (dir, reach) = shot_path(&self.sim, &shot.from, self.rules.range);
        let radius = self.sim.player_radius;
        let mut best: Option<(f32, PlayerId)> = None;
        for (&id, target) in &self.players {
            if id == shot.attacker || !target.is_alive() {
                continue;
            }
            let seen = if target.history.is_empty() {
                target.pose
            } else {
                target.pose_at(view)
            };
            if let Some(t) = ray_circle(origin, dir, seen.position, radius) {
                if t <= reach && best.is_none_or(|(bt, _)| t < bt) {
                    best = Some((t, id));
                }
            }
        }
        let Some((t, target_id)) = best else {
            return;
        };
        let respawn_at = self.respawn_tick();
        let Some(target) = self.players.get_mut(&target_id) else {
            return;
        };
        let damage = self.rules.damage.min(target.hp);
        target.hp -= damage;
        let killed = target.hp == 0;
        if killed {
            target.kill(respawn_at);
        }
        self.events.push(CombatEvent {
            server_tick: tick,
            attacker: shot.attacker,
            target: target_id,
            damage,
            hp: target.hp,
            killed,
            from: origin,
            to: origin + dir * t,
        });
    }
}

#[cfg(test)]
mod tests {
    use glam::Vec2;

    use super::*;
    use crate::server::world::tests::{at, fire, input, open, place, shooter_and_target};

    #[test]
    fn a_hit_is_one_event_and_cooldown_holds() {
        let mut w = shooter_and_target(at(600.0, 600.0, 0.0));
        w.receive(PlayerId(1), &[fire(1, None), fire(2, None)]);
        let events = w.step().to_vec();
        assert_eq!(events.len(), 1);
        let e = events[0];
        assert_eq!(
            (e.attacker, e.target, e.damage, e.hp, e.killed),
            (PlayerId(1), PlayerId(2), 20, 80, false)
        );
        assert_eq!(e.from, Vec2::new(200.0, 600.0));
        assert_eq!(e.to, Vec2::new(580.0, 600.0));
        // The second shot one tick later is inside the 250 ms cooldown.
        assert!(w.step().is_empty());
        assert!(w.step().is_empty(), "sent once, never re-fired");
        assert_eq!(w.player(PlayerId(2)).unwrap().hp(), 80);
    }

    #[test]
    fn obstacles_stop_shots_and_range_is_limited() {
        let mut w = shooter_and_target(at(1100.0, 600.0, 0.0));
        w.receive(PlayerId(1), &[fire(1, None)]);
        assert!(w.step().is_empty(), "900 u away: out of range");

        let mut sim = open();
        sim.obstacles
            .push(crate::shared::config::Rect::new(350.0, 550.0, 20.0, 100.0));
        let mut w = World::new(sim, 3);
        w.join(PlayerId(1), "s").unwrap();
        w.join(PlayerId(2), "t").unwrap();
        place(&mut w, PlayerId(1), at(200.0, 600.0, 0.0));
        place(&mut w, PlayerId(2), at(600.0, 600.0, 0.0));
        w.receive(PlayerId(1), &[fire(1, None)]);
        assert!(w.step().is_empty(), "the wall takes the shot");
    }

    /// A world where the target walked +y at 10 u per tick from y = 400 for
    /// 40 ticks: at tick `t` it was at y = 400 + 10 t.
    fn walked_target() -> World {
        let mut w = shooter_and_target(at(600.0, 400.0, std::f32::consts::FRAC_PI_2));
        for t in 1..=40 {
            w.receive(PlayerId(2), &[input(t, 1.0)]);
            w.step();
        }
        assert_eq!(w.player(PlayerId(2)).unwrap().pose().position.y, 800.0);
        w
    }

    /// The shooter at height `y` fires along +x, having seen the world at `view`.
    fn shoot_from(mut w: World, y: f32, view: Option<f64>) -> Vec<CombatEvent> {
        place(&mut w, PlayerId(1), at(200.0, y, 0.0));
        w.receive(PlayerId(1), &[fire(1, view)]);
        w.step().to_vec()
    }

    #[test]
    fn rs10_hits_are_judged_where_the_shooter_saw_the_target() {
        // Seen 3 ticks ago (150 ms) at y = 770: a hit there, although the
        // target is at 800 now.
        let events = shoot_from(walked_target(), 770.0, Some(37.0));
        assert_eq!(events.len(), 1, "hit where it was seen");
        assert_eq!(events[0].to, Vec2::new(580.0, 770.0), "the near edge");
        // Between ticks: seen at 37.5, y = 775.
        assert_eq!(shoot_from(walked_target(), 775.0, Some(37.5)).len(), 1);
        // Without lag compensation the same aim misses.
        assert!(shoot_from(walked_target(), 770.0, None).is_empty());
        assert_eq!(shoot_from(walked_target(), 800.0, None).len(), 1);
    }

    #[test]
    fn rs10_views_older_than_max_rewind_are_clamped_and_counted() {
        // Seen 20 ticks (1 s) before the newest recorded tick 40: clamped
        // to 750 ms (15 ticks) back, tick 25, y = 650.
        assert!(shoot_from(walked_target(), 600.0, Some(20.0)).is_empty());
        let mut w = walked_target();
        place(&mut w, PlayerId(1), at(200.0, 650.0, 0.0));
        w.receive(PlayerId(1), &[fire(1, Some(20.0))]);
        assert_eq!(w.step().len(), 1, "judged at the bound");
        assert_eq!(w.stats().rewind_clamped, 1);
        // Within the bound: not counted, and its depth is recorded.
        let mut w = walked_target();
        place(&mut w, PlayerId(1), at(200.0, 770.0, 0.0));
        w.receive(PlayerId(1), &[fire(1, Some(37.0))]);
        assert_eq!(w.step().len(), 1);
        assert_eq!(w.stats().rewind_clamped, 0);
        assert_eq!(w.stats().rewind.counts[2], 1, "200 ms: the 100-200 bucket");
        // A view from the future is clamped to the newest recorded tick.
        assert_eq!(shoot_from(walked_target(), 800.0, Some(1e9)).len(), 1);
    }
}
