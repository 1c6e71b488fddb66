//! How wide the terminal draws East Asian "ambiguous" characters, asked of it as Vim does for
//! 'ambiwidth' (`t_u7`): print one such character at the top left, ask where the cursor went
//! (`CSI 6n`; the terminal answers `CSI row ; column R`), and read the column: 2 after a
//! narrow character, 3 after a wide one. A terminal that does not answer in time is taken as
//! narrow. An answer that comes later still reaches crossterm's reader, which keeps cursor
//! reports to itself: it never becomes a key.

use std::io::{self, Write};
use std::time::{Duration, Instant};

/// How long the terminal has to answer: the round trip of an SSH link to a bastion host, with
/// room to spare, and short enough not to be felt at start.
pub(crate) const TIMEOUT: Duration = Duration::from_millis(200);

/// The character measured: U+25BD WHITE DOWN-POINTING TRIANGLE (East Asian Width A), the one
/// Vim prints.
const PROBE: &str = "\u{25BD}";

/// What the terminal said.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Answer {
    /// The cursor's column (1-based) after the character.
    Column(u16),
    /// Nothing within the time.
    None,
}

/// Whether the terminal draws ambiguous characters wide: asked, logged, narrow when unsure.
/// Expects raw mode (the answer is not echoed, and comes without a newline).
pub(crate) fn measure(timeout: Duration) -> bool {
    let started = Instant::now();
    let answer = ask(timeout);
    let waited_ms = started.elapsed().as_secs_f64() * 1000.0;
    match answer {
        Ok(Answer::Column(column)) => match wide_from_column(column) {
            Some(wide) => {
                tracing::info!(column, wide, waited_ms, "the terminal says how wide ▽ is");
                wide
            }
            None => {
                tracing::warn!(
                    column,
                    waited_ms,
                    "unexpected cursor column after ▽: narrow"
                );
                false
            }
        },
        Ok(Answer::None) => {
            tracing::info!(waited_ms, "no answer to the cursor query in time: narrow");
            false
        }
        Err(e) => {
            tracing::warn!(error = %e, "cannot ask the terminal: narrow");
            false
        }
    }
}

/// A narrow character leaves the cursor in column 2, a wide one in column 3.
pub(crate) fn wide_from_column(column: u16) -> Option<bool> {
    match column {
        2 => Some(false),
        3 => Some(true),
        _ => None,
    }
}

/// Prints the character at the top left, asks for the cursor position and waits for the
/// answer. Bytes typed meanwhile are read and dropped.
fn ask(timeout: Duration) -> io::Result<Answer> {
    let mut out = io::stdout().lock();
    write!(out, "\x1b[H{PROBE}\x1b[6n")?;
    out.flush()?;
    drop(out);
    let deadline = Instant::now() + timeout;
    let mut seen: Vec<u8> = Vec::with_capacity(32);
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Ok(Answer::None);
        }
        if !readable(left)? {
            continue;
        }
        let mut chunk = [0u8; 64];
        // SAFETY: read(2) into a buffer we own, at most its length.
        let n = unsafe { libc::read(libc::STDIN_FILENO, chunk.as_mut_ptr().cast(), chunk.len()) };
        if n < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        let n = usize::try_from(n).unwrap_or(0);
        if n == 0 {
            return Ok(Answer::None);
        }
        seen.extend_from_slice(&chunk[..n]);
        if let Some((_, column)) = cursor_report(&seen) {
            return Ok(Answer::Column(column));
        }
        // A flood of typing: keep only what may still hold the start of the answer.
        if seen.len() > 256 {
            seen.drain(..seen.len() - 32);
        }
    }
}

/// Whether standard input has bytes to read within `wait`.
fn readable(wait: Duration) -> io::Result<bool> {
    let mut fd = libc::pollfd {
        fd: libc::STDIN_FILENO,
        events: libc::POLLIN,
        revents: 0,
    };
    let ms = libc::c_int::try_from(wait.as_millis().max(1)).unwrap_or(libc::c_int::MAX);
    // SAFETY: poll(2) on one pollfd we own.
    let rc = unsafe { libc::poll(&mut fd, 1, ms) };
    if rc < 0 {
        let e = io::Error::last_os_error();
        return if e.kind() == io::ErrorKind::Interrupted {
            Ok(false)
        } else {
            Err(e)
        };
    }
    Ok(rc > 0 && fd.revents & libc::POLLIN != 0)
}

/// The first cursor position report (`ESC [ row ; column R`) in `bytes`, as (row, column).
pub(crate) fn cursor_report(bytes: &[u8]) -> Option<(u16, u16)> {
    let mut i = 0;
    while let Some(at) = bytes[i..].windows(2).position(|w| w == b"\x1b[") {
        let start = i + at + 2;
        if let Some(found) = report_at(&bytes[start..]) {
            return Some(found);
        }
        i = start;
    }
    None
}

/// `row ; column R` at the start of `rest`.
fn report_at(rest: &[u8]) -> Option<(u16, u16)> {
    let number = |s: &[u8]| -> Option<(u16, usize)> {
        let len = s.iter().take_while(|b| b.is_ascii_digit()).count();
        if len == 0 || len > 5 {
            return None;
        }
        let text = std::str::from_utf8(&s[..len]).ok()?;
        Some((text.parse().ok()?, len))
    };
    let (row, a) = number(rest)?;
    if rest.get(a) != Some(&b';') {
        return None;
    }
    let (column, b) = number(&rest[a + 1..])?;
    (rest.get(a + 1 + b) == Some(&b'R')).then_some((row, column))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cursor_report_is_found_among_other_bytes() {
        assert_eq!(cursor_report(b"\x1b[1;3R"), Some((1, 3)));
        assert_eq!(cursor_report(b"jk\x1b[A\x1b[12;2Rq"), Some((12, 2)));
        assert_eq!(cursor_report(b"\x1b[1;2"), None, "not whole yet");
        assert_eq!(cursor_report(b"\x1b[;3R"), None);
        assert_eq!(cursor_report(b"\x1b[1;3~"), None);
        assert_eq!(cursor_report(b"\x1b[999999;3R"), None);
        assert_eq!(cursor_report(b""), None);
    }

    #[test]
    fn the_column_says_the_width() {
        assert_eq!(wide_from_column(2), Some(false));
        assert_eq!(wide_from_column(3), Some(true));
        assert_eq!(wide_from_column(4), None, "a terminal that is not UTF-8");
        assert_eq!(wide_from_column(1), None);
    }
}
