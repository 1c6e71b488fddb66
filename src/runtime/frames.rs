//! Frames: one is laid out only when what it is drawn from moved (the state's revision, the
//! size, the clock's words on it), written only when its fingerprint differs from the one on
//! screen, and at most one per [`FRAME_INTERVAL`].

use super::workers::Workers;
use super::{Host, Runtime};
use ichor_app::action::Action;
use ichor_app::update::update;
use ichor_views::widgets::Ctx;
use ratatui::Terminal;
use ratatui::backend::Backend;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use tokio::sync::mpsc;

/// The shortest time between two frames: a burst of updates (a relist of 10,000 operations)
/// is drawn once.
const FRAME_INTERVAL: std::time::Duration = std::time::Duration::from_millis(16);

/// What the frame on screen was drawn from: a frame is laid out again only when one of these
/// moved.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Drawn {
    revision: u64,
    size: (u16, u16),
    /// When the clock's words on it (ages, "updated …", a countdown) change next.
    clock_change: Option<jiff::Timestamp>,
}

impl Runtime {
    pub(super) fn ctx(&self) -> Ctx<'_> {
        Ctx {
            texts: &self.texts,
            theme: self.theme,
        }
    }

    /// At most one frame per [`FRAME_INTERVAL`]: waits out the interval since the last draw,
    /// applying what arrives meanwhile, so it joins this frame. Says whether the screen must be
    /// repainted whole.
    pub(super) async fn wait_for_frame<B>(
        &mut self,
        drawn_at: Option<tokio::time::Instant>,
        rx: &mut mpsc::UnboundedReceiver<Action>,
        terminal: &mut Terminal<B>,
        host: &mut dyn Host,
        tx: &mpsc::UnboundedSender<Action>,
        workers: &mut Workers,
    ) -> anyhow::Result<bool>
    where
        B: Backend,
        B::Error: Send + Sync + 'static,
    {
        let Some(at) = drawn_at.filter(|at| at.elapsed() < FRAME_INTERVAL) else {
            return Ok(false);
        };
        tokio::time::sleep_until(at + FRAME_INTERVAL).await;
        let mut repaint = false;
        while let Ok(a) = rx.try_recv() {
            repaint |= self.apply(a, terminal, host, tx, workers)?;
        }
        Ok(repaint)
    }

    /// What a frame drawn now is drawn from.
    pub(super) fn drawn(&self) -> Drawn {
        Drawn {
            revision: self.state.revision,
            size: self.state.size,
            clock_change: ichor_views::next_clock_change(&self.state),
        }
    }

    /// Whether a frame must be laid out: the state moved, the size changed, the clock's words
    /// changed, or the screen was cleared. An answer that changed nothing costs no layout.
    pub(super) fn needs_frame(&self, drawn: Option<Drawn>, cleared: bool) -> bool {
        let Some(d) = drawn else {
            return true;
        };
        cleared
            || d.revision != self.state.revision
            || d.size != self.state.size
            || d.clock_change.is_some_and(|at| self.state.now >= at)
    }

    /// Draws the frame if it differs from the one on screen; says whether it drew. The app
    /// learns first how many rows the views show at this size (it pages by them). The frame is
    /// rendered into the terminal's own buffer and compared with the one on screen by its
    /// fingerprint, so no third copy of the screen is kept.
    pub(super) fn draw_if_changed<B>(
        &mut self,
        terminal: &mut Terminal<B>,
        last: &mut Option<Fingerprint>,
    ) -> anyhow::Result<bool>
    where
        B: Backend,
        B::Error: Send + Sync + 'static,
    {
        let viewport = ichor_views::viewport(&self.state, &self.ctx(), self.state.size);
        if viewport != self.state.viewport {
            update(&mut self.state, Action::Viewport(viewport));
        }
        terminal.autoresize()?;
        let buf = terminal.current_buffer_mut();
        buf.reset();
        ichor_views::render(&self.state, &self.ctx(), buf.area, buf);
        let frame = Fingerprint::of(buf);
        if *last == Some(frame) {
            buf.reset();
            return Ok(false);
        }
        terminal.apply_buffer()?;
        *last = Some(frame);
        Ok(true)
    }
}

/// What identifies a frame: two 64-bit SipHash hashes of the whole buffer (area, symbols,
/// colours, modifiers), each salted with its own first byte, so two frames that differ are told
/// apart but for a chance of about one in 2^128. (Ratatui's `Hash` of a buffer agrees with its
/// `Eq`: a blank cell is one, however it was made.)
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Fingerprint(u64, u64);

impl Fingerprint {
    fn of(buf: &Buffer) -> Fingerprint {
        use std::hash::{Hash, Hasher};
        let hash = |key: u8| {
            let mut h = std::hash::DefaultHasher::new();
            key.hash(&mut h);
            buf.hash(&mut h);
            h.finish()
        };
        Fingerprint(hash(0), hash(1))
    }
}

/// Clears the screen and forgets the frame on it, so the next draw repaints everything.
/// (`Terminal::clear` would ask the terminal for the cursor position, whose answer the input
/// stream may read first; `resize` clears without asking.)
pub(crate) fn full_redraw<B: Backend>(terminal: &mut Terminal<B>) -> Result<(), B::Error> {
    let size = terminal.size()?;
    terminal.resize(Rect::new(0, 0, size.width, size.height))
}

#[cfg(test)]
mod tests {
    use super::Fingerprint;
    use ratatui::buffer::Buffer;
    use ratatui::layout::Rect;
    use ratatui::style::{Color, Style};

    fn screen(text: &str, style: Style) -> Buffer {
        let mut buf = Buffer::empty(Rect::new(0, 0, 20, 2));
        buf.set_string(0, 0, text, style);
        buf
    }

    #[test]
    fn frames_that_differ_in_a_letter_a_colour_or_a_size_are_told_apart() {
        let plain = Fingerprint::of(&screen("Running 2/4", Style::default()));
        assert_eq!(
            plain,
            Fingerprint::of(&screen("Running 2/4", Style::default()))
        );
        assert_ne!(
            plain,
            Fingerprint::of(&screen("Running 3/4", Style::default()))
        );
        let red = Style::default().fg(Color::Red);
        assert_ne!(plain, Fingerprint::of(&screen("Running 2/4", red)));
        let mut wider = Buffer::empty(Rect::new(0, 0, 21, 2));
        wider.set_string(0, 0, "Running 2/4", Style::default());
        assert_ne!(plain, Fingerprint::of(&wider));
    }

    #[test]
    fn a_blank_cell_is_one_however_it_was_made() {
        let mut spaces = screen("Running", Style::default());
        spaces.set_string(0, 1, "    ", Style::default());
        assert_eq!(
            Fingerprint::of(&spaces),
            Fingerprint::of(&screen("Running", Style::default()))
        );
    }
}
