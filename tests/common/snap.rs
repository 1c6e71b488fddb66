//! Drawing a State into a TestBackend, and the style runs where colour carries meaning.
#![allow(dead_code)]

use ichor_app::action::Action;
use ichor_app::state::State;
use ichor_app::update::update;
use ichor_views as views;
use ichor_views::i18n::{Lang, Texts};
use ichor_views::widgets::{Ctx, Theme};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::style::{Color, Modifier};

/// The sizes every screen is snapshotted at.
pub const SIZES: [(u16, u16); 2] = [(80, 24), (160, 48)];

/// Draws `state`, and checks that the same frame drawn for a terminal that draws East Asian
/// ambiguous characters wide holds none: every screen the tests draw is checked in wide mode.
pub fn draw(state: &State, lang: Lang, w: u16, h: u16, theme: Theme) -> Terminal<TestBackend> {
    let wide = draw_only(
        state,
        lang,
        w,
        h,
        Theme {
            wide_ambiguous: true,
            ..theme
        },
    );
    assert_nothing_ambiguous(wide.backend().buffer());
    draw_only(state, lang, w, h, theme)
}

/// Fails on any cell holding a character of East Asian Width "Ambiguous": one that a terminal
/// drawing those wide would draw over the next cell.
pub fn assert_nothing_ambiguous(buf: &Buffer) {
    for y in 0..buf.area.height {
        for x in 0..buf.area.width {
            let sym = buf[(x, y)].symbol();
            if let Some(c) = sym.chars().find(|c| east_asian_ambiguous(*c)) {
                let row: String = (0..buf.area.width).map(|x| buf[(x, y)].symbol()).collect();
                panic!(
                    "{c:?} (U+{:04X}) at ({x},{y}) in wide mode: {row:?}",
                    u32::from(c)
                );
            }
        }
    }
}

/// Whether `c` has East Asian Width "Ambiguous" (UAX #11, ICU's property data) and takes a
/// column where it is drawn narrow (combining marks take none either way).
pub fn east_asian_ambiguous(c: char) -> bool {
    use icu_properties::CodePointMapData;
    use icu_properties::props::EastAsianWidth;
    use unicode_width::UnicodeWidthChar;
    c.width() == Some(1)
        && CodePointMapData::<EastAsianWidth>::new().get(c) == EastAsianWidth::Ambiguous
}

/// Draws `state` into a fresh terminal of `w`×`h`.
pub fn draw_only(state: &State, lang: Lang, w: u16, h: u16, theme: Theme) -> Terminal<TestBackend> {
    let texts = Texts::new(lang);
    let ctx = Ctx {
        texts: &texts,
        theme,
    };
    let mut state = state.clone();
    update(&mut state, Action::Resize(w, h));
    let viewport = views::viewport(&state, &ctx, (w, h));
    update(&mut state, Action::Viewport(viewport));
    let mut term = Terminal::new(TestBackend::new(w, h)).expect("a test terminal");
    term.draw(|f| views::render(&state, &ctx, f.area(), f.buffer_mut()))
        .expect("drawing");
    term
}

/// The text of row `y` as a person reads it: a wide character once, not followed by the cell
/// it covers.
pub fn row_text(buf: &Buffer, y: u16) -> String {
    let mut out = String::new();
    let mut x = 0;
    while x < buf.area.width {
        let sym = buf[(x, y)].symbol();
        out.push_str(sym);
        x += u16::try_from(unicode_width::UnicodeWidthStr::width(sym).max(1)).unwrap_or(1);
    }
    out
}

/// The rows of `state` drawn at `w`×`h`, as a person reads them ([`row_text`]).
pub fn rows(state: &State, lang: Lang, w: u16, h: u16, theme: Theme) -> Vec<String> {
    let term = draw(state, lang, w, h, theme);
    let buf = term.backend().buffer();
    (0..h).map(|y| row_text(buf, y)).collect()
}

/// The runs of non-default style in a buffer, one line per run.
pub fn styles(buf: &Buffer) -> String {
    let mut out = String::new();
    let area = buf.area;
    for y in 0..area.height {
        let mut x = 0;
        while x < area.width {
            let key = |x: u16| (buf[(x, y)].fg, buf[(x, y)].bg, buf[(x, y)].modifier);
            let k = key(x);
            let start = x;
            let mut text = String::new();
            while x < area.width && key(x) == k {
                text.push_str(buf[(x, y)].symbol());
                x += 1;
            }
            if k != (Color::Reset, Color::Reset, Modifier::empty()) && !text.trim().is_empty() {
                out.push_str(&format!(
                    "{y:>2}:{start:>3}-{:<3} fg={:?} bg={:?} {:?} {:?}\n",
                    x - 1,
                    k.0,
                    k.1,
                    k.2,
                    text.trim()
                ));
            }
        }
    }
    out
}

/// Snapshots a state in English and Japanese at both sizes, named `NAME_LANG_WxH`.
#[macro_export]
macro_rules! snap_all {
    ($name:expr, $state:expr) => {
        for lang in [ichor_views::i18n::Lang::En, ichor_views::i18n::Lang::Ja] {
            for (w, h) in $crate::common::snap::SIZES {
                let term = $crate::common::snap::draw(
                    $state,
                    lang,
                    w,
                    h,
                    ichor_views::widgets::Theme::default(),
                );
                $crate::snapshot!(format!("{}_{}_{w}x{h}", $name, lang.code()), term.backend());
            }
        }
    };
}

/// [`snap_all`] at 40×12 too: the screens this work changed, at every size they are read at.
#[macro_export]
macro_rules! snap_every_size {
    ($name:expr, $state:expr) => {
        $crate::snap_all!($name, $state);
        for lang in [ichor_views::i18n::Lang::En, ichor_views::i18n::Lang::Ja] {
            let term = $crate::common::snap::draw(
                $state,
                lang,
                40,
                12,
                ichor_views::widgets::Theme::default(),
            );
            $crate::snapshot!(format!("{}_{}_40x12", $name, lang.code()), term.backend());
        }
    };
}
