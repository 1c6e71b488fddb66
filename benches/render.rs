//! Render time of one frame of the Operations screen at 200×50, for 100, 1,000 and 10,000
//! operations. Only the visible rows are laid out, so the time must not grow with the count.
//! And the cost of the one wrap with the kinsoku rules against the wrap before them
//! (`common::wrap_before`), on Japanese and English paragraphs.
//!
//!     cargo bench --bench render

mod common;

use common::data::{listed, operations};
use ichor_views as views;
use ichor_views::i18n::{Lang, Texts};
use ichor_views::widgets::{Ctx, Theme};
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
    wrap_cost(runs, iters);
}

/// A Japanese paragraph as the screens wrap them (a refusal, the failure advice), and an
/// English one, each wrapped at 76 and at 38 columns.
const JA: &str = "edge-tokyo-talos-m4q9z はマシン edge-tokyo-w03 の失敗で停止しています。再開しても何も起きません。自動で再試行もロールバックもされないため、削除してやり直してください（d）。TalosCluster prod-eu は Argo CD（platform-prod-eu）で管理されています。Git で変更してください：spec.talosVersion: v1.9.2 → v1.9.3。";
const EN: &str = "edge-tokyo-talos-m4q9z was paused by a failed machine (edge-tokyo-w03): resuming does nothing. Nothing retries and nothing is rolled back: delete it and start again. TalosCluster prod-eu is tracked by Argo CD (platform-prod-eu). Make the change in Git: spec.talosVersion: v1.9.2 → v1.9.3.";

/// The wrap with the kinsoku rules against the wrap before them, per paragraph.
fn wrap_cost(runs: usize, iters: usize) {
    use ichor_views::text::wrap;
    let iters = iters * 10;
    for (lang, text) in [("ja", JA), ("en", EN)] {
        for w in [76, 38] {
            let mut med = [0.0; 2];
            for (i, f) in [
                wrap as fn(&str, usize) -> Vec<String>,
                common::wrap_before::wrap,
            ]
            .into_iter()
            .enumerate()
            {
                let times = common::time_runs(runs, iters, || {
                    black_box(f(black_box(text), w));
                });
                med[i] = common::median_ns(&times);
            }
            common::report(
                &format!(
                    "wrap: {lang} paragraph ({} chars) at {w} columns",
                    text.chars().count()
                ),
                format!(
                    "{:.1} µs with kinsoku, {:.1} µs before ({:.2}×; median of {runs} runs × {iters})",
                    med[0] / 1000.0,
                    med[1] / 1000.0,
                    med[0] / med[1]
                ),
            );
        }
    }
}
