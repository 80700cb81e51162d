//! Who is near whom: a uniform grid over the world, its cells a quarter
//! of the interest radius, each cell's entities stored together with their
//! positions (cell after cell, in index order within a cell)
//! and the box they fill.
//!
//! A view is found cell by cell: a cell whose box lies within the radius
//! is taken whole and one beyond the reach is skipped, both without a
//! distance per entity; only the cells the view's edge crosses are
//! measured entity by entity. What is found is marked in a bit set the
//! size of the scene and read back in index order, so a view costs no
//! sort. The box is that of the entities themselves (not the cell's
//! square), so an entity outside the world, clamped into an edge cell,
//! is judged where it is, and the result is exactly what measuring every
//! entity would give.

use glam::Vec2;

/// Entities near each other, by cells of a quarter of the interest radius
/// (half measured more entities one by one, an eighth more empty cells:
/// the quarter was quickest, `--example scale 1000 10000 60`).
pub(crate) struct Grid {
    cell: f32,
    columns: usize,
    rows: usize,
    /// Where each cell's entries start in `entries` (one more than the
    /// cells: the last is the end).
    starts: Vec<u32>,
    /// Every entity's index, cell after cell.
    indices: Vec<u32>,
    /// Their positions, in the same order.
    points: Vec<Vec2>,
    /// Each cell's entities' bounding box (min, max); empty cells' is
    /// inverted.
    boxes: Vec<(Vec2, Vec2)>,
}

impl Grid {
    /// The entities at `positions` (by index) in cells of a quarter of `radius`
    /// over a world of `extent` (at most 1,024 cells a side).
    pub(crate) fn new(positions: &[Vec2], radius: f32, extent: Vec2) -> Grid {
        let side = extent.x.max(extent.y).max(1.0);
        let cell = (radius / 4.0).max(side / 1024.0).max(1.0);
        let columns = ((extent.x / cell).ceil() as usize).clamp(1, 1024);
        let rows = ((extent.y / cell).ceil() as usize).clamp(1, 1024);
        let mut grid = Grid {
            cell,
            columns,
            rows,
            starts: vec![0; columns * rows + 1],
            indices: vec![0; positions.len()],
            points: vec![Vec2::ZERO; positions.len()],
            boxes: vec![
                (Vec2::splat(f32::INFINITY), Vec2::splat(f32::NEG_INFINITY));
                columns * rows
            ],
        };
        // A counting sort by cell: counts, then starts, then placement in
        // index order.
        let cells: Vec<usize> = positions.iter().map(|p| grid.cell_index(*p)).collect();
        for &c in &cells {
            grid.starts[c + 1] += 1;
        }
        for c in 0..columns * rows {
            grid.starts[c + 1] += grid.starts[c];
        }
        let mut next: Vec<u32> = grid.starts[..columns * rows].to_vec();
        for (i, (&c, p)) in cells.iter().zip(positions).enumerate() {
            grid.indices[next[c] as usize] = i as u32;
            grid.points[next[c] as usize] = *p;
            next[c] += 1;
            let b = &mut grid.boxes[c];
            (b.0, b.1) = (b.0.min(*p), b.1.max(*p));
        }
        grid
    }

    fn cell_of(&self, p: Vec2) -> (usize, usize) {
        let c = (p.x / self.cell).floor().max(0.0) as usize;
        let r = (p.y / self.cell).floor().max(0.0) as usize;
        (c.min(self.columns - 1), r.min(self.rows - 1))
    }

    fn cell_index(&self, p: Vec2) -> usize {
        let (c, r) = self.cell_of(p);
        r * self.columns + c
    }

    /// The cells the square of half-side `reach` around `at` covers.
    fn cells(&self, at: Vec2, reach: f32) -> impl Iterator<Item = usize> + '_ {
        let (c0, r0) = self.cell_of(at - Vec2::splat(reach));
        let (c1, r1) = self.cell_of(at + Vec2::splat(reach));
        (r0..=r1).flat_map(move |r| (c0..=c1).map(move |c| r * self.columns + c))
    }

    /// Cell `cell`'s entities: their indices and positions.
    fn entries_of(&self, cell: usize) -> (&[u32], &[Vec2]) {
        let span = self.starts[cell] as usize..self.starts[cell + 1] as usize;
        (&self.indices[span.clone()], &self.points[span])
    }

    /// Indices of the entities in the cells `reach` around `at` covers.
    pub(crate) fn near(&self, at: Vec2, reach: f32, out: &mut Vec<usize>) {
        out.clear();
        for cell in self.cells(at, reach) {
            out.extend(self.entries_of(cell).0.iter().map(|&i| i as usize));
        }
    }

    /// Marks in `marks` every entity within `radius` of `at`, and in
    /// `ring` those beyond it but within `keep`.
    pub(crate) fn within(
        &self,
        at: Vec2,
        radius: f32,
        keep: f32,
        marks: &mut Marks,
        ring: &mut Marks,
    ) {
        // `distance` is the root of `distance_squared`, correctly rounded
        // and monotone, so a square this far from the radius's (or the
        // reach's) square decides alone, exactly as the root would.
        let surely_inside = radius * radius * (1.0 - 1e-5);
        let surely_beyond = keep * keep * (1.0 + 1e-5);
        for cell in self.cells(at, keep) {
            let (low, high) = self.boxes[cell];
            if low.x > high.x {
                continue;
            }
            // The box's nearest point to `at`, and its farthest corner:
            // every entity of the cell is at least and at most as far
            // (distances are monotone in each coordinate's gap, rounding
            // included).
            let nearest = at.clamp(low, high);
            if nearest.distance(at) > keep {
                continue;
            }
            let far = Vec2::new(
                if (low.x - at.x).abs() > (high.x - at.x).abs() {
                    low.x
                } else {
                    high.x
                },
                if (low.y - at.y).abs() > (high.y - at.y).abs() {
                    low.y
                } else {
                    high.y
                },
            );
            let (indices, points) = self.entries_of(cell);
            if far.distance(at) <= radius {
                for &i in indices {
                    marks.set(i as usize);
                }
                continue;
            }
            for (&i, &p) in indices.iter().zip(points) {
                // A root only near an edge: well inside the radius, or
                // well beyond the reach, the square says so alone.
                let d2 = p.distance_squared(at);
                if d2 <= surely_inside {
                    marks.set(i as usize);
                } else if d2 <= surely_beyond {
                    let d = d2.sqrt();
                    if d <= radius {
                        marks.set(i as usize);
                    } else if d <= keep {
                        ring.set(i as usize);
                    }
                }
            }
        }
    }
}

/// A set of indices into a scene, read back in index order: one bit each.
#[derive(Debug, Default)]
pub(crate) struct Marks {
    words: Vec<u64>,
}

impl Marks {
    /// Room for indices below `len`, every bit clear.
    pub(crate) fn reset(&mut self, len: usize) {
        self.words.clear();
        self.words.resize(len.div_ceil(64), 0);
    }

    /// Marks `i` (below the length it was reset to).
    pub(crate) fn set(&mut self, i: usize) {
        if let Some(word) = self.words.get_mut(i / 64) {
            *word |= 1 << (i % 64);
        }
    }

    /// Appends every marked index to `out` in order, and clears them.
    pub(crate) fn drain_into(&mut self, out: &mut Vec<usize>) {
        for (w, word) in self.words.iter_mut().enumerate() {
            let mut bits = std::mem::take(word);
            while bits != 0 {
                out.push(w * 64 + bits.trailing_zeros() as usize);
                bits &= bits - 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shared::rng::SeededRng;

    /// Every view the grid finds is what measuring every entity finds,
    /// for entities inside the world, on its edges and outside it.
    #[test]
    fn a_view_is_what_measuring_every_entity_gives() {
        let mut random = SeededRng::new(5);
        let extent = Vec2::new(3000.0, 2000.0);
        let mut coordinate =
            |side: f32| (random.below(1_000_000) as f32 / 1e6) * (side + 400.0) - 200.0;
        let positions: Vec<Vec2> = (0..3000)
            .map(|_| Vec2::new(coordinate(3000.0), coordinate(2000.0)))
            .collect();
        let grid = Grid::new(&positions, 300.0, extent);
        let mut marks = Marks::default();
        for (k, &at) in positions.iter().enumerate().step_by(37) {
            let (radius, keep) = (300.0 + k as f32 % 500.0, 400.0 + k as f32 % 500.0);
            marks.reset(positions.len());
            let mut edge = Marks::default();
            edge.reset(positions.len());
            grid.within(at, radius, keep, &mut marks, &mut edge);
            let (mut seen, mut ring) = (Vec::new(), Vec::new());
            marks.drain_into(&mut seen);
            edge.drain_into(&mut ring);
            let inside: Vec<usize> = (0..positions.len())
                .filter(|&i| positions[i].distance(at) <= radius)
                .collect();
            let beyond: Vec<usize> = (0..positions.len())
                .filter(|&i| {
                    let d = positions[i].distance(at);
                    d > radius && d <= keep
                })
                .collect();
            assert_eq!(seen, inside, "view {k}");
            assert_eq!(ring, beyond, "ring {k}");
        }
    }

    #[test]
    fn marks_read_back_in_order_and_clear() {
        let mut marks = Marks::default();
        marks.reset(200);
        for i in [199, 3, 64, 63, 3, 500] {
            marks.set(i);
        }
        let mut out = vec![7];
        marks.drain_into(&mut out);
        assert_eq!(out, [7, 3, 63, 64, 199]);
        out.clear();
        marks.drain_into(&mut out);
        assert!(out.is_empty());
    }
}
