//! The real binary in a pseudo-terminal, read as a person would: its output goes through a
//! vt100 parser, and tests wait (by polling, with a generous deadline) until the screen says
//! what they expect. Also used by the start-up and memory benchmarks (`benches/`), so it
//! depends on nothing else in `tests/common`.
#![allow(dead_code)]

use portable_pty::{Child, CommandBuilder, MasterPty, PtySize, native_pty_system};
use std::io::{Read, Write};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long any wait may take before the test fails: generous, for a loaded 2-core machine.
pub const DEADLINE: Duration = Duration::from_secs(60);

/// What the reader thread has seen so far.
struct Seen {
    parser: vt100::Parser,
    raw: Vec<u8>,
    eof: bool,
    /// Answers written after their delay ([`Answers::Late`]).
    late_answers: usize,
}

/// The terminal's keys as the bytes a terminal sends for them.
pub mod keys {
    pub const ENTER: &str = "\r";
    pub const ESC: &str = "\u{1b}";
    pub const TAB: &str = "\t";
    pub const DOWN: &str = "\u{1b}[B";
    pub const UP: &str = "\u{1b}[A";
}

/// How the terminal answers "where is the cursor?" (DSR 6, `CSI 6n`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Answers {
    /// As a terminal that draws East Asian ambiguous characters one column wide (xterm).
    #[default]
    Narrow,
    /// As one that draws them two columns wide (Tera Term set to Japanese, `xterm -cjk_width`):
    /// each ambiguous character left of the cursor on its row moved it one more column.
    Wide,
    /// Never: a terminal that does not answer.
    Silent,
    /// As a narrow one, but this long after the question (a slow link).
    Late(Duration),
}

/// A running `ichor-tui` in a pty of a fixed size. Killed (by its pid) on drop unless it has
/// exited.
pub struct Pty {
    master: Box<dyn MasterPty + Send>,
    writer: Arc<Mutex<Box<dyn Write + Send>>>,
    child: Box<dyn Child + Send + Sync>,
    seen: Arc<Mutex<Seen>>,
    reader: Option<std::thread::JoinHandle<()>>,
    pub size: (u16, u16),
}

/// The options of a run.
pub struct Spawn<'a> {
    pub binary: &'a Path,
    pub args: Vec<String>,
    /// Added to a clean environment (PATH, HOME, LANG=en_US.UTF-8, TERM=xterm-256color).
    pub env: Vec<(String, String)>,
    pub cols: u16,
    pub rows: u16,
    /// HOME (so no user config is read) and where the log goes.
    pub home: &'a Path,
    /// How the terminal answers cursor position queries.
    pub answers: Answers,
}

impl<'a> Spawn<'a> {
    /// `BINARY --demo --demo-speed 20 --log-file HOME/log` in a 100×30 terminal.
    pub fn demo(binary: &'a Path, home: &'a Path) -> Spawn<'a> {
        Spawn {
            binary,
            args: vec![
                "--demo".into(),
                "--demo-speed".into(),
                "20".into(),
                "--log-file".into(),
                home.join("log").display().to_string(),
            ],
            env: Vec::new(),
            cols: 100,
            rows: 30,
            home,
            answers: Answers::Narrow,
        }
    }

    /// `BINARY --kubeconfig KUBECONFIG --log-file HOME/log` in a 120×30 terminal.
    pub fn kubeconfig(binary: &'a Path, home: &'a Path, kubeconfig: &Path) -> Spawn<'a> {
        Spawn {
            binary,
            args: vec![
                "--kubeconfig".into(),
                kubeconfig.display().to_string(),
                "--log-file".into(),
                home.join("log").display().to_string(),
            ],
            env: Vec::new(),
            cols: 120,
            rows: 30,
            home,
            answers: Answers::default(),
        }
    }

    pub fn answers(mut self, answers: Answers) -> Self {
        self.answers = answers;
        self
    }

    pub fn size(mut self, cols: u16, rows: u16) -> Self {
        self.cols = cols;
        self.rows = rows;
        self
    }

    pub fn env(mut self, k: &str, v: &str) -> Self {
        self.env.push((k.into(), v.into()));
        self
    }

    pub fn args(mut self, extra: &[&str]) -> Self {
        self.args.extend(extra.iter().map(|s| s.to_string()));
        self
    }

    pub fn start(self) -> Pty {
        Pty::start(self)
    }
}

impl Pty {
    fn start(s: Spawn<'_>) -> Pty {
        let pair = native_pty_system()
            .openpty(PtySize {
                rows: s.rows,
                cols: s.cols,
                pixel_width: 0,
                pixel_height: 0,
            })
            .expect("opening a pty");
        let mut cmd = CommandBuilder::new(s.binary);
        cmd.args(&s.args);
        cmd.env_clear();
        cmd.env("PATH", std::env::var("PATH").unwrap_or_default());
        cmd.env("HOME", s.home);
        cmd.env("XDG_CONFIG_HOME", s.home.join("config"));
        cmd.env("XDG_STATE_HOME", s.home.join("state"));
        cmd.env("LANG", "en_US.UTF-8");
        cmd.env("TERM", "xterm-256color");
        for (k, v) in &s.env {
            cmd.env(k, v);
        }
        cmd.cwd(s.home);
        let child = pair.slave.spawn_command(cmd).expect("spawning ichor-tui");
        drop(pair.slave);
        let mut reader = pair.master.try_clone_reader().expect("the pty's reader");
        let writer = pair.master.take_writer().expect("the pty's writer");
        let seen = Arc::new(Mutex::new(Seen {
            parser: vt100::Parser::new(
                std::num::NonZeroU16::new(s.rows).expect("rows"),
                std::num::NonZeroU16::new(s.cols).expect("columns"),
                0,
            ),
            raw: Vec::new(),
            eof: false,
            late_answers: 0,
        }));
        let writer = Arc::new(Mutex::new(writer));
        let shared = seen.clone();
        let answer = writer.clone();
        let answers = s.answers;
        let reader = std::thread::spawn(move || {
            let mut chunk = [0u8; 16 * 1024];
            // The end of the previous chunk, so a query split across two reads is seen.
            let mut tail: Vec<u8> = Vec::new();
            loop {
                match reader.read(&mut chunk) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => {
                        let mut s = shared.lock().unwrap();
                        s.parser.process(&chunk[..n]);
                        s.raw.extend_from_slice(&chunk[..n]);
                        // Answer "where is the cursor?" (DSR 6) as a terminal does.
                        tail.extend_from_slice(&chunk[..n]);
                        let queries = tail.windows(4).filter(|w| *w == b"\x1b[6n").count();
                        if queries > 0 && answers != Answers::Silent {
                            let screen = s.parser.screen();
                            let (row, col) = screen.cursor_position();
                            let col = col + extra_columns(screen, answers, row, col);
                            let reply = format!("\x1b[{};{}R", row + 1, col + 1).repeat(queries);
                            let answer = answer.clone();
                            let send = move || {
                                let mut w = answer.lock().unwrap();
                                let _ = w.write_all(reply.as_bytes());
                                let _ = w.flush();
                            };
                            match answers {
                                Answers::Late(after) => {
                                    let shared = shared.clone();
                                    std::thread::spawn(move || {
                                        std::thread::sleep(after);
                                        send();
                                        shared.lock().unwrap().late_answers += 1;
                                    });
                                }
                                _ => send(),
                            }
                            tail.clear();
                        }
                        let keep = tail.len().saturating_sub(3);
                        tail.drain(..keep);
                    }
                }
            }
            shared.lock().unwrap().eof = true;
        });
        Pty {
            master: pair.master,
            writer,
            child,
            seen,
            reader: Some(reader),
            size: (s.cols, s.rows),
        }
    }

    pub fn pid(&self) -> u32 {
        self.child.process_id().expect("the child's pid")
    }

    /// The screen as text, one line per row.
    pub fn screen(&self) -> String {
        self.seen.lock().unwrap().parser.screen().contents()
    }

    /// Waits until `n` late answers ([`Answers::Late`]) were written to the program.
    pub fn wait_late_answers(&self, n: usize) {
        let until = Instant::now() + DEADLINE;
        while self.seen.lock().unwrap().late_answers < n {
            assert!(
                Instant::now() < until,
                "{n} late answers not written in {DEADLINE:?}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Every byte the program wrote so far.
    pub fn raw(&self) -> Vec<u8> {
        self.seen.lock().unwrap().raw.clone()
    }

    /// How many bytes the program wrote so far.
    pub fn raw_len(&self) -> usize {
        self.seen.lock().unwrap().raw.len()
    }

    /// Types `s` as the terminal would send it.
    pub fn send(&mut self, s: &str) {
        let mut w = self.writer.lock().unwrap();
        w.write_all(s.as_bytes()).expect("writing to the pty");
        w.flush().expect("flushing the pty");
    }

    /// Types a command line (`:ns platform`) and Enter, in two writes as a person would.
    pub fn command(&mut self, line: &str) {
        self.send(line);
        self.send(keys::ENTER);
    }

    /// Waits until `pred(screen)` holds; fails with the screen after `DEADLINE`.
    pub fn wait_for(&self, what: &str, pred: impl Fn(&str) -> bool) -> String {
        self.try_wait_for(DEADLINE, &pred).unwrap_or_else(|screen| {
            panic!("waited {DEADLINE:?} for {what}; the screen:\n{screen}")
        })
    }

    /// Waits until the screen contains `text`.
    pub fn wait_text(&self, text: &str) -> String {
        self.wait_for(&format!("{text:?}"), |s| s.contains(text))
    }

    /// Waits up to `limit` for `pred(screen)`; `Err(screen)` when it never held.
    pub fn try_wait_for(
        &self,
        limit: Duration,
        pred: &dyn Fn(&str) -> bool,
    ) -> Result<String, String> {
        let until = Instant::now() + limit;
        loop {
            let screen = self.screen();
            if pred(&screen) {
                return Ok(screen);
            }
            if Instant::now() >= until {
                return Err(screen);
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Whether the pty is in raw mode now (no canonical input, no echo).
    pub fn raw_mode(&self) -> bool {
        let fd = self.master.as_raw_fd().expect("the pty's fd");
        // SAFETY: tcgetattr fills the termios we own; the fd is the open pty master.
        let mut t: libc::termios = unsafe { std::mem::zeroed() };
        let rc = unsafe { libc::tcgetattr(fd, &mut t) };
        assert_eq!(rc, 0, "tcgetattr on the pty");
        t.c_lflag & (libc::ICANON | libc::ECHO) == 0
    }

    /// Sends `signal` to the child, by its pid.
    pub fn signal(&self, signal: libc::c_int) {
        let pid = libc::pid_t::try_from(self.pid()).expect("a pid");
        // SAFETY: kill(2) with the pid of our own child.
        let rc = unsafe { libc::kill(pid, signal) };
        assert_eq!(rc, 0, "kill({pid}, {signal})");
    }

    /// Waits for the program to exit and for all its output to be read; returns its exit code.
    pub fn wait_exit(&mut self) -> u32 {
        let until = Instant::now() + DEADLINE;
        let status = loop {
            if let Some(st) = self.child.try_wait().expect("waiting for the child") {
                break st;
            }
            assert!(
                Instant::now() < until,
                "ichor-tui did not exit within {DEADLINE:?}; the screen:\n{}",
                self.screen()
            );
            std::thread::sleep(Duration::from_millis(10));
        };
        // The slave side is closed now: the reader sees the end of the output.
        while !self.seen.lock().unwrap().eof {
            assert!(Instant::now() < until, "the pty's output did not end");
            std::thread::sleep(Duration::from_millis(10));
        }
        if let Some(r) = self.reader.take() {
            let _ = r.join();
        }
        assert!(
            status.signal().is_none(),
            "ichor-tui was killed by {:?}",
            status.signal()
        );
        status.exit_code()
    }
}

/// How many columns further right a terminal that draws ambiguous characters wide has the
/// cursor than the vt100 parser (which draws them narrow): one for each such character left of
/// it on its row.
fn extra_columns(screen: &vt100::Screen, answers: Answers, row: u16, col: u16) -> u16 {
    if answers != Answers::Wide {
        return 0;
    }
    let ambiguous = |c: char| {
        use icu_properties::CodePointMapData;
        use icu_properties::props::EastAsianWidth;
        use unicode_width::UnicodeWidthChar;
        c.width() == Some(1)
            && CodePointMapData::<EastAsianWidth>::new().get(c) == EastAsianWidth::Ambiguous
    };
    let n = (0..col)
        .filter_map(|x| screen.cell(row, x))
        .filter(|cell| cell.contents().chars().any(ambiguous))
        .count();
    u16::try_from(n).unwrap_or(0)
}

impl Drop for Pty {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}
