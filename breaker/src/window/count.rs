//! A count window: the last N completed calls in a ring buffer, with running totals.

use super::{Mark, Totals};

const FAILURE: u8 = 1;
const SLOW: u8 = 2;

/// The last `capacity` completed calls. Recording is O(1); memory is one byte per slot.
#[derive(Debug)]
pub(crate) struct CountWindow {
    slots: Box<[u8]>,
    /// Next slot to write.
    head: usize,
    totals: Totals,
}

impl CountWindow {
    pub(crate) fn new(capacity: u32) -> Self {
        Self {
            slots: vec![0; capacity.max(1) as usize].into_boxed_slice(),
            head: 0,
            totals: Totals::default(),
        }
    }

    pub(crate) fn record(&mut self, mark: Mark) {
        let capacity = self.slots.len();
        if self.totals.calls as usize == capacity {
            let evicted = self.slots[self.head];
            self.totals.failures -= u32::from(evicted & FAILURE != 0);
            self.totals.slow -= u32::from(evicted & SLOW != 0);
        } else {
            self.totals.calls += 1;
        }
        let bits = if mark.failure { FAILURE } else { 0 } | if mark.slow { SLOW } else { 0 };
        self.slots[self.head] = bits;
        self.totals.failures += u32::from(mark.failure);
        self.totals.slow += u32::from(mark.slow);
        self.head = if self.head + 1 == capacity {
            0
        } else {
            self.head + 1
        };
    }

    pub(crate) fn totals(&self) -> Totals {
        self.totals
    }

    /// The failure bits of the calls in the window, oldest first.
    pub(crate) fn outcomes(&self) -> impl Iterator<Item = bool> + '_ {
        let capacity = self.slots.len();
        let calls = self.totals.calls as usize;
        let oldest = if calls == capacity { self.head } else { 0 };
        (0..calls).map(move |i| self.slots[(oldest + i) % capacity] & FAILURE != 0)
    }

    /// Drops every slow mark, keeping the calls and their failures.
    pub(crate) fn forget_slow(&mut self) {
        self.slots.iter_mut().for_each(|slot| *slot &= !SLOW);
        self.totals.slow = 0;
    }

    pub(crate) fn clear(&mut self) {
        self.head = 0;
        self.totals = Totals::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::window::marks::{FAIL, OK, SLOW_OK};

    #[test]
    fn keeps_only_the_last_n_outcomes() {
        let mut w = CountWindow::new(3);
        for m in [FAIL, FAIL, OK, OK] {
            w.record(m);
        }
        assert_eq!(
            w.totals(),
            Totals {
                calls: 3,
                failures: 1,
                slow: 0
            }
        );
        w.record(SLOW_OK);
        assert_eq!(
            w.totals(),
            Totals {
                calls: 3,
                failures: 0,
                slow: 1
            }
        );
    }

    #[test]
    fn forgetting_slow_marks_keeps_calls_and_failures() {
        let mut w = CountWindow::new(3);
        for m in [SLOW_OK, FAIL, SLOW_OK, OK] {
            w.record(m);
        }
        w.forget_slow();
        let no_slow = Totals {
            calls: 3,
            failures: 1,
            slow: 0,
        };
        assert_eq!(w.totals(), no_slow);
        // The slow call leaving the window takes no slow mark with it.
        w.record(OK);
        w.record(OK);
        assert_eq!(
            w.totals(),
            Totals {
                calls: 3,
                failures: 0,
                slow: 0
            }
        );
        assert_eq!(w.outcomes().collect::<Vec<_>>(), [false, false, false]);
    }

    #[test]
    fn clear_empties_the_window() {
        let mut w = CountWindow::new(2);
        w.record(FAIL);
        w.clear();
        assert_eq!(w.totals(), Totals::default());
        w.record(OK);
        w.record(OK);
        w.record(FAIL);
        assert_eq!(
            w.totals(),
            Totals {
                calls: 2,
                failures: 1,
                slow: 0
            }
        );
    }
}
