//! Render time of one frame of the Operations screen at 200×50, for 100, 1,000 and 10,000
//! operations. Only the visible rows are laid out, so the time must not grow with the count.
//!
//!     cargo bench --bench render

mod common;

use common::data::{listed, operations};
use ichor_tui::i18n::{Lang, Texts};
use ichor_tui::views::{self, widgets::Ctx, widgets::Theme};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use std::hint::black_box;

fn main() {
    let full = common::full();
    let (runs, iters) = if full { (15, 200) } else { (1, 1) };
    let texts = Texts::new(Lang::En);
    let ctx = Ctx {
        texts: &texts,
        theme: Theme::default(),
    };
    let area = Rect::new(0, 0, 200, 50);
    let mut medians = Vec::new();
    for n in [100, 1_000, 10_000] {
        let state = listed(operations(n), area.width, area.height);
        assert_eq!(state.ops.visible.len(), n);
        let mut buf = Buffer::empty(area);
        let times = common::time_runs(runs, iters, || {
            buf.reset();
            views::render(black_box(&state), &ctx, area, &mut buf);
            black_box(&buf);
        });
        let med = common::median_us(&times);
        medians.push(med);
        common::report(
            &format!("render: Operations screen 200x50, {n} operations"),
            format!("{med:.0} µs/frame (median of {runs} runs × {iters} frames)"),
        );
    }
    if full {
        let ratio = medians[2] / medians[0];
        common::report("render: 10,000 vs 100 operations", format!("{ratio:.2}×"));
    }
}
