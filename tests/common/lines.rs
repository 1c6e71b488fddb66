//! A command running as a child process, its lines (standard output and standard error) as
//! they come, waited for one by one; killed when dropped.
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::Duration;

/// How long a line may take to come: far longer than it takes (a test waits for lines, not
/// for time).
pub const NEVER: Duration = Duration::from_secs(120);

/// Standard output or standard error.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fd {
    Out,
    Err,
}

/// A command running, and the lines it has said.
pub struct Lines {
    child: Child,
    lines: Receiver<(Fd, String)>,
    pub seen: Vec<(Fd, String)>,
}

impl Lines {
    /// Starts `cmd` (standard input closed, both outputs read here).
    pub fn spawn(cmd: &mut Command) -> Lines {
        let mut child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let (tx, lines) = channel();
        let out = child.stdout.take().unwrap();
        let err = child.stderr.take().unwrap();
        for (fd, read) in [
            (Fd::Out, Box::new(out) as Box<dyn std::io::Read + Send>),
            (Fd::Err, Box::new(err)),
        ] {
            let tx = tx.clone();
            std::thread::spawn(move || {
                for line in BufReader::new(read).lines().map_while(Result::ok) {
                    if tx.send((fd, line)).is_err() {
                        return;
                    }
                }
            });
        }
        Lines {
            child,
            lines,
            seen: Vec::new(),
        }
    }

    /// The next line on `fd` that `want` accepts (every line before it kept in `seen`).
    pub fn wait(&mut self, fd: Fd, what: &str, want: impl Fn(&str) -> bool) -> String {
        loop {
            match self.lines.recv_timeout(NEVER) {
                Ok((f, line)) => {
                    self.seen.push((f, line.clone()));
                    if f == fd && want(&line) {
                        return line;
                    }
                }
                Err(_) => panic!("{what}: not said; said so far:\n{:#?}", self.seen),
            }
        }
    }

    /// The next line on `fd`.
    pub fn next(&mut self, fd: Fd, what: &str) -> String {
        self.wait(fd, what, |_| true)
    }

    /// The lines seen on `fd` so far.
    pub fn said(&self, fd: Fd) -> Vec<&str> {
        self.seen
            .iter()
            .filter(|(f, _)| *f == fd)
            .map(|(_, l)| l.as_str())
            .collect()
    }
}

impl Drop for Lines {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// What `line` says after the clock it starts with (`14:03:09 …`, as every line of a follow
/// and every retry does), and `sep` after it; fails when it starts with no clock.
pub fn after_clock<'a>(line: &'a str, sep: &str) -> &'a str {
    let (time, said) = line.split_once(sep).unwrap_or_default();
    assert!(
        jiff::civil::Time::strptime("%H:%M:%S", time).is_ok(),
        "a clock time first: {line}"
    );
    said
}
