//! The progress of an operation as a bar.

/// A bar of `width` cells, `fraction` of them filled (`--ascii` draws it with `#` and `-`).
pub(crate) fn bar(fraction: f64, width: usize) -> String {
    let (full, empty) = ('█', '░');
    let filled = ((fraction.clamp(0.0, 1.0) * width as f64).round() as usize).min(width);
    std::iter::repeat_n(full, filled)
        .chain(std::iter::repeat_n(empty, width - filled))
        .collect()
}
