//! Drives the app like the runtime does, but in order: each Effect runs against a real client
//! and its result goes back through `update`, until nothing is left to do.
#![allow(dead_code)]

use ichor_app::action::{Action, Effect, Key, KeyCode};
use ichor_app::state::State;
use ichor_app::update::{start, update};
use ichor_model::OperationClient;
use ichor_runtime::perform;
use std::sync::Arc;

pub struct Driver {
    pub state: State,
    pub client: Arc<dyn OperationClient>,
    /// Every effect `update` asked for, in order.
    pub effects: Vec<Effect>,
    /// The language the screen is laid out in (English unless a test says otherwise).
    pub lang: ichor_views::i18n::Lang,
}

impl Driver {
    pub async fn new(state: State, client: Arc<dyn OperationClient>) -> Driver {
        let mut d = Driver {
            state,
            client,
            effects: Vec::new(),
            lang: ichor_views::i18n::Lang::En,
        };
        let first = start(&mut d.state);
        d.run(first).await;
        d
    }

    pub async fn act(&mut self, a: Action) {
        let e = update(&mut self.state, a);
        self.run(e).await;
    }

    pub async fn key(&mut self, k: Key) {
        self.act(Action::Key(k)).await;
    }

    pub async fn code(&mut self, c: KeyCode) {
        self.key(Key::plain(c)).await;
    }

    /// Types each character as a key.
    pub async fn type_text(&mut self, s: &str) {
        for c in s.chars() {
            self.key(Key::ch(c)).await;
        }
    }

    async fn run(&mut self, effects: Vec<Effect>) {
        let mut queue = effects;
        while !queue.is_empty() {
            let e = queue.remove(0);
            self.effects.push(e.clone());
            if let Some(action) = perform(self.client.as_ref(), e).await {
                queue.extend(update(&mut self.state, action));
            }
        }
        self.lay_out();
    }

    /// What the runtime does before each frame: the app learns how the views lay the screen
    /// out at its size, in its language.
    pub fn lay_out(&mut self) {
        let texts = ichor_views::i18n::Texts::new(self.lang);
        let ctx = ichor_views::widgets::Ctx {
            texts: &texts,
            theme: Default::default(),
        };
        let viewport = ichor_views::viewport(&self.state, &ctx, self.state.size);
        if viewport != self.state.viewport {
            update(&mut self.state, Action::Viewport(viewport));
        }
    }

    /// Whether any effect so far would have changed the cluster.
    pub fn wrote(&self) -> bool {
        self.effects.iter().any(Effect::is_write)
    }
}
