//! A terminal for the benchmarks: crossterm's backend writing the real escape sequences into
//! memory, with a fixed size instead of asking a tty; each flush (ratatui flushes once per
//! draw) is noted with its time and size, and a text can be waited for: the time from
//! [`Wire::want`] to the flush whose bytes hold it.

use ratatui::Terminal;
use ratatui::backend::{Backend, ClearType, CrosstermBackend, WindowSize};
use ratatui::buffer::Cell;
use ratatui::layout::{Position, Size};
use std::io::{self, Write};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub const SIZE: (u16, u16) = (120, 40);

/// What reached the "terminal": the bytes of each flush (ratatui flushes once per draw), with
/// the time of the flush on tokio's clock.
#[derive(Clone, Default)]
pub struct Wire(Arc<Mutex<WireLog>>);

#[derive(Default)]
pub struct WireLog {
    pending: usize,
    total: usize,
    pub flushes: Vec<(tokio::time::Instant, usize)>,
    /// The text waited for, and since when.
    wanted: Option<(String, Instant)>,
    /// How long each wanted text took to reach a flush.
    pub found: Vec<Duration>,
}

impl Write for Wire {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let mut l = self.0.lock().map_err(|_| io::Error::other("poisoned"))?;
        l.pending += buf.len();
        l.total += buf.len();
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        let mut l = self.0.lock().map_err(|_| io::Error::other("poisoned"))?;
        let n = std::mem::take(&mut l.pending);
        l.flushes.push((tokio::time::Instant::now(), n));
        Ok(())
    }
}

impl Wire {
    pub fn total(&self) -> usize {
        self.0.lock().map(|l| l.total).unwrap_or(0)
    }

    /// Waits for `text` in a flush from now on (the last wait, if any, is dropped).
    pub fn want(&self, text: &str) {
        if let Ok(mut l) = self.0.lock() {
            l.wanted = Some((text.to_string(), Instant::now()));
        }
    }

    /// How many wanted texts have reached a flush, and the times they took.
    pub fn found(&self) -> Vec<Duration> {
        self.0.lock().map(|l| l.found.clone()).unwrap_or_default()
    }

    /// After a flush: when the wanted text is on `screen` (as the terminal shows it once the
    /// flushed bytes are applied), the time it took.
    fn shown(&self, screen: &[Vec<String>]) {
        let Ok(mut l) = self.0.lock() else { return };
        let Some((text, since)) = l.wanted.as_ref() else {
            return;
        };
        if screen
            .iter()
            .any(|row| row.concat().contains(text.as_str()))
        {
            let took = since.elapsed();
            l.wanted = None;
            l.found.push(took);
        }
    }

    /// The flushes so far: when, and how many bytes.
    pub fn flushes(&self) -> Vec<(tokio::time::Instant, usize)> {
        self.0.lock().map(|l| l.flushes.clone()).unwrap_or_default()
    }
}

/// crossterm's backend writing to `Wire`, with a fixed size instead of asking a tty.
/// The screen the bytes make is kept beside them (each cell's symbol), so a text is found once
/// it is on screen, whatever cells the diff left as they were.
pub struct Fixed(CrosstermBackend<Wire>, Wire, Vec<Vec<String>>);

impl Backend for Fixed {
    type Error = io::Error;
    fn draw<'a, I: Iterator<Item = (u16, u16, &'a Cell)>>(&mut self, content: I) -> io::Result<()> {
        let cells: Vec<(u16, u16, &Cell)> = content.collect();
        for (x, y, cell) in &cells {
            if let Some(c) = self
                .2
                .get_mut(usize::from(*y))
                .and_then(|row| row.get_mut(usize::from(*x)))
            {
                *c = cell.symbol().to_string();
            }
        }
        self.0.draw(cells.into_iter())
    }
    fn hide_cursor(&mut self) -> io::Result<()> {
        self.0.hide_cursor()
    }
    fn show_cursor(&mut self) -> io::Result<()> {
        self.0.show_cursor()
    }
    fn get_cursor_position(&mut self) -> io::Result<Position> {
        Ok(Position::ORIGIN)
    }
    fn set_cursor_position<P: Into<Position>>(&mut self, p: P) -> io::Result<()> {
        self.0.set_cursor_position(p)
    }
    fn clear(&mut self) -> io::Result<()> {
        self.0.clear()
    }
    fn clear_region(&mut self, t: ClearType) -> io::Result<()> {
        self.0.clear_region(t)
    }
    fn size(&self) -> io::Result<Size> {
        Ok(Size::new(SIZE.0, SIZE.1))
    }
    fn window_size(&mut self) -> io::Result<WindowSize> {
        Ok(WindowSize {
            columns_rows: Size::new(SIZE.0, SIZE.1),
            pixels: Size::new(0, 0),
        })
    }
    fn flush(&mut self) -> io::Result<()> {
        Backend::flush(&mut self.0)?;
        self.1.shown(&self.2);
        Ok(())
    }
}

pub fn terminal() -> (Terminal<Fixed>, Wire) {
    let wire = Wire::default();
    let screen = vec![vec![" ".to_string(); usize::from(SIZE.0)]; usize::from(SIZE.1)];
    let backend = Fixed(CrosstermBackend::new(wire.clone()), wire.clone(), screen);
    let t = Terminal::new(backend).expect("a terminal");
    (t, wire)
}
