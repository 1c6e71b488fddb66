//! The new-operation dialog: a form, then Review (PlanOperation, nothing written), then a
//! separate Start (CreateOperation). Every key path here is pure, like `update`.

use super::action::{Effect, Key, KeyCode};
use super::keymap::{self, KeyCommand};
use super::state::{Dialog, FormField, Loaded, NewOpStep, NewOperation, State};
use super::text_field::{self, Edit};
use ichor_model::{ApiError, Cluster, Code, OperationKind, OperationRequest, Reason, Version};

/// Whether a kind takes max unavailable (the rollouts).
pub fn takes_max_unavailable(kind: OperationKind) -> bool {
    kind.takes_max_unavailable()
}

/// The current value of what a kind changes, shown beside the target.
pub fn current_value(c: &Cluster, kind: OperationKind) -> Option<String> {
    match kind {
        OperationKind::Talos => Some(c.talos_version.clone()),
        OperationKind::Kubernetes => Some(c.kubernetes_version.clone()),
        OperationKind::Cni => Some(c.kube_proxy.clone()),
        OperationKind::Ichor => c.ichor_version.clone(),
        OperationKind::Shutdown | OperationKind::CaRotation => None,
    }
}

fn default_target(c: &Cluster, kind: OperationKind) -> String {
    match kind {
        OperationKind::Cni if c.kube_proxy == "replaced" => "enabled".into(),
        OperationKind::Cni => "replaced".into(),
        _ => String::new(),
    }
}

/// What is wrong with the form, if anything: the field, the message id, and its value.
pub fn form_problem(d: &NewOperation) -> Option<(FormField, &'static str)> {
    if d.kind.takes_target() && d.kind != OperationKind::Cni {
        if d.target.trim().is_empty() {
            return Some((FormField::Target, "form-target-required"));
        }
        if Version::parse(&d.target).is_none() {
            return Some((FormField::Target, "form-invalid-version"));
        }
    }
    if takes_max_unavailable(d.kind) && d.max_unavailable.parse::<i32>().map_or(true, |n| n < 1) {
        return Some((FormField::MaxUnavailable, "form-invalid-max"));
    }
    None
}

/// The request the form describes.
pub(crate) fn request(d: &NewOperation) -> OperationRequest {
    OperationRequest {
        namespace: d.namespace.clone(),
        cluster: Some(d.cluster.name.clone()),
        kind: d.kind,
        target: d.kind.takes_target().then(|| d.target.trim().to_string()),
        max_unavailable: if takes_max_unavailable(d.kind) {
            d.max_unavailable.parse().ok()
        } else {
            None
        },
        request_id: None,
        confirmed_plan: None,
    }
}

/// The start the Review on screen describes, bound to that plan.
fn start_request(d: &NewOperation) -> OperationRequest {
    OperationRequest {
        confirmed_plan: d.plan.data.as_ref().map(|p| p.fingerprint.clone()),
        ..request(d)
    }
}

/// Asks for the plan again (R, or after a start that did not happen): the Review shows the
/// cluster as it is now, and the typed name must be typed again for it.
pub(crate) fn replan(state: &mut State) -> Vec<Effect> {
    let Some(Dialog::NewOperation(mut d)) = state.dialog.take() else {
        return Vec::new();
    };
    let mut effects = Vec::new();
    review(state, &mut d, &mut effects);
    state.dialog = Some(Dialog::NewOperation(d));
    effects
}

fn fields(kind: OperationKind) -> Vec<FormField> {
    let mut f = vec![FormField::Kind];
    if kind.takes_target() {
        f.push(FormField::Target);
    }
    if takes_max_unavailable(kind) {
        f.push(FormField::MaxUnavailable);
    }
    f
}

/// Opens the dialog on `cluster`.
pub(crate) fn open(state: &mut State, cluster: Cluster) -> Vec<Effect> {
    let kind = OperationKind::Talos;
    state.dialog = Some(Dialog::NewOperation(Box::new(NewOperation {
        namespace: cluster.namespace.clone(),
        target: default_target(&cluster, kind),
        cluster,
        step: NewOpStep::Form,
        kind,
        field: FormField::Kind,
        max_unavailable: "1".into(),
        plan: Loaded::default(),
        typed_name: String::new(),
        scroll: 0,
        start_error: None,
        settling: false,
        seq: 0,
        production: state.session.production,
    })));
    Vec::new()
}

fn next_seq(state: &mut State) -> u64 {
    state.seq += 1;
    state.seq
}

/// A key while the dialog is open.
pub(crate) fn on_key(state: &mut State, key: Key) -> Vec<Effect> {
    let Some(Dialog::NewOperation(mut d)) = state.dialog.take() else {
        return Vec::new();
    };
    // `?` shows the dialog's keys (no field takes it), over the dialog, which still gets the
    // plan it waits for; not while a start's outcome is awaited or settled.
    // In a text field `?` is text.
    let helps = match d.step {
        NewOpStep::Form | NewOpStep::Review if d.takes_text() => false,
        NewOpStep::Form => true,
        NewOpStep::Review => !d.settling,
        NewOpStep::Starting { .. } => false,
    };
    if key == Key::ch('?') && helps {
        state.dialog = Some(Dialog::keys_over(Dialog::NewOperation(d)));
        return Vec::new();
    }
    let mut effects = Vec::new();
    let keep = match d.step {
        NewOpStep::Form => form_key(state, &mut d, key, &mut effects),
        NewOpStep::Review => review_key(state, &mut d, key, &mut effects),
        // The start is under way: Esc stops waiting for it (it may still happen) and shows the
        // Review as the cluster holds it now; other keys wait.
        NewOpStep::Starting { .. } => {
            if key.code == KeyCode::Esc {
                // The start runs to its end on its worker; its answer is dropped.
                review(state, &mut d, &mut effects);
                d.start_error = Some(ApiError::said(
                    Code::Aborted,
                    Reason::WriteAbandoned,
                    &[("action", "start"), ("operation", &d.cluster.name)],
                ));
            }
            true
        }
    };
    if keep {
        state.dialog = Some(Dialog::NewOperation(d));
    }
    effects
}

fn move_field(d: &mut NewOperation, delta: isize) {
    let f = fields(d.kind);
    let i = f.iter().position(|x| *x == d.field).unwrap_or(0) as isize;
    d.field = f[(i + delta).rem_euclid(f.len() as isize) as usize];
}

/// Returns whether the dialog stays open.
fn form_key(state: &mut State, d: &mut NewOperation, key: Key, effects: &mut Vec<Effect>) -> bool {
    // Text fields take their keys first (printable ones, Backspace, Ctrl-U, Ctrl-W).
    if text_key(d, key) {
        return true;
    }
    if let KeyCode::Char(c) = key.code
        && !key.ctrl
    {
        type_in_form(d, c);
        return true;
    }
    if edit_form(d, key.code) {
        return true;
    }
    match keymap::lookup_in(keymap::FORM, key) {
        Some(KeyCommand::Cancel) => false,
        Some(KeyCommand::NextField) => {
            move_field(d, 1);
            true
        }
        Some(KeyCommand::PrevField) => {
            move_field(d, -1);
            true
        }
        Some(KeyCommand::Submit) => {
            if let Some((field, _)) = form_problem(d) {
                d.field = field;
                return true;
            }
            review(state, d, effects);
            true
        }
        _ => true,
    }
}

/// The other kube-proxy mode.
fn toggle_mode(d: &mut NewOperation) {
    d.target = if d.target == "replaced" {
        "enabled".into()
    } else {
        "replaced".into()
    };
}

/// The kind `delta` steps from the chosen one, round the list.
fn step_kind(d: &mut NewOperation, delta: isize) {
    let all = OperationKind::ALL;
    let i = all.iter().position(|k| *k == d.kind).unwrap_or(0) as isize;
    let next = (i + delta).rem_euclid(all.len() as isize) as usize;
    set_kind(d, all[next]);
}

/// A key in the focused text field (the version, max unavailable); whether it was one.
fn text_key(d: &mut NewOperation, key: Key) -> bool {
    let edit = match d.field {
        FormField::Target if d.kind != OperationKind::Cni => {
            text_field::edit(&mut d.target, key, |_| true, 64)
        }
        // What is not a number is typed too, and the form says so where it is typed.
        FormField::MaxUnavailable => text_field::edit(&mut d.max_unavailable, key, |_| true, 4),
        FormField::Target | FormField::Kind => Edit::NotText,
    };
    edit != Edit::NotText
}

/// A printable key where no text is typed: Space toggles the kube-proxy mode, j/k choose the
/// kind.
fn type_in_form(d: &mut NewOperation, c: char) {
    match (d.field, c) {
        (FormField::Target, ' ') if d.kind == OperationKind::Cni => toggle_mode(d),
        (FormField::Kind, 'j') => step_kind(d, 1),
        (FormField::Kind, 'k') => step_kind(d, -1),
        _ => {}
    }
}

/// Backspace, ←/→ on the kube-proxy mode, ↑/↓ on the kind or between fields. Returns whether
/// the key was one of these.
fn edit_form(d: &mut NewOperation, code: KeyCode) -> bool {
    let cni_mode = d.field == FormField::Target && d.kind == OperationKind::Cni;
    match (d.field, code) {
        (_, KeyCode::Backspace) => {}
        (_, KeyCode::Left | KeyCode::Right) if cni_mode => toggle_mode(d),
        (FormField::Kind, KeyCode::Down) => step_kind(d, 1),
        (FormField::Kind, KeyCode::Up) => step_kind(d, -1),
        (_, KeyCode::Down) => move_field(d, 1),
        (_, KeyCode::Up) => move_field(d, -1),
        _ => return false,
    }
    true
}

fn set_kind(d: &mut NewOperation, kind: OperationKind) {
    d.kind = kind;
    d.target = default_target(&d.cluster, kind);
    d.typed_name.clear();
}

/// Asks for the plan: Review writes nothing.
fn review(state: &mut State, d: &mut NewOperation, effects: &mut Vec<Effect>) {
    d.step = NewOpStep::Review;
    d.typed_name.clear();
    d.seq = next_seq(state);
    d.plan = Loaded {
        data: None,
        error: None,
        loading: true,
    };
    d.scroll = 0;
    effects.push(Effect::Plan {
        seq: d.seq,
        request: request(d),
    });
}

fn review_key(
    state: &mut State,
    d: &mut NewOperation,
    key: Key,
    effects: &mut Vec<Effect>,
) -> bool {
    // The typed-name field exists only while Start is offered; it takes every printable key
    // as typed (a capital too: the name then differs, and Start waits), so Ctrl-R reviews
    // again there.
    let typing = d.takes_text();
    if typing && text_field::edit(&mut d.typed_name, key, |_| true, 253) != Edit::NotText {
        return true;
    }
    let room = state.viewport.dialog;
    let page = room.rows.max(1);
    match keymap::lookup_in(keymap::review(typing), key) {
        Some(KeyCommand::Cancel) => return false,
        Some(KeyCommand::BackToForm) => {
            d.step = NewOpStep::Form;
            d.start_error = None;
            d.typed_name.clear();
        }
        Some(KeyCommand::Refresh) => review(state, d, effects),
        Some(KeyCommand::Up) => {
            let by = if key.code == KeyCode::PageUp { page } else { 1 };
            d.scroll = d.scroll.saturating_sub(by);
        }
        Some(KeyCommand::Down) => {
            let by = if key.code == KeyCode::PageDown { page } else { 1 };
            d.scroll = (d.scroll + by).min(room.last_start());
        }
        Some(KeyCommand::Submit)
            // Start: only with the plan on screen, not blocked, and the name typed exactly.
            if d.can_start() => {
                d.step = NewOpStep::Starting { since: state.now };
                d.start_error = None;
                d.seq = next_seq(state);
                effects.push(Effect::Create {
                    seq: d.seq,
                    request: start_request(d),
                });
            }
        _ => {}
    }
    true
}
