//! The progress of an operation as a bar.

use crate::model::{Operation, Phase};

/// The fraction of the work done: machines over the passes of a CA rotation.
pub fn fraction(op: &Operation) -> f64 {
    let (done, total) = op.progress();
    if op.phase == Phase::Completed {
        return 1.0;
    }
    if total == 0 {
        return 0.0;
    }
    let (pass, passes) = op
        .ca_rotation
        .as_ref()
        .filter(|c| c.passes > 0 && c.pass > 0)
        .map_or((1.0, 1.0), |c| (f64::from(c.pass), f64::from(c.passes)));
    ((pass - 1.0) + done as f64 / total as f64) / passes
}

/// A bar of `width` cells, `fraction` of them filled (`--ascii` draws it with `#` and `-`).
pub fn bar(fraction: f64, width: usize) -> String {
    let (full, empty) = ('█', '░');
    let filled = ((fraction.clamp(0.0, 1.0) * width as f64).round() as usize).min(width);
    std::iter::repeat_n(full, filled)
        .chain(std::iter::repeat_n(empty, width - filled))
        .collect()
}
