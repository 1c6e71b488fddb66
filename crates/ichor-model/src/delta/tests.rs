use super::*;
use proptest::prelude::*;

fn row(name: &str, rv: u32) -> Operation {
    Operation {
        namespace: "default".into(),
        name: name.into(),
        resource_version: rv.to_string(),
        ..Operation::default()
    }
}

fn page(version: &str, rows: Vec<Operation>) -> OperationPage {
    OperationPage {
        total: rows.len() + 7,
        operations: rows,
        next_page_token: Some(format!("after-{version}")),
        version: version.into(),
        unchanged: false,
    }
}

fn names(p: &OperationPage) -> Vec<&str> {
    p.operations.iter().map(|o| o.name.as_str()).collect()
}

#[test]
fn a_new_row_on_top_sends_it_and_the_row_that_fell_off() {
    let base = page("v1", vec![row("b", 1), row("c", 1), row("d", 1)]);
    let now = page("v2", vec![row("a", 1), row("b", 1), row("c", 1)]);
    let d = PageDelta::between(&base, &now).unwrap();
    assert_eq!(d.rows, vec![(0, row("a", 1))]);
    assert_eq!(d.removed, vec![("default".to_string(), "d".to_string())]);
    assert_eq!((d.base_version.as_str(), d.version.as_str()), ("v1", "v2"));
    assert_eq!(d.apply(&base).unwrap(), now);
}

#[test]
fn a_changed_row_is_sent_in_its_place_and_the_others_are_not() {
    let base = page("v1", vec![row("a", 1), row("b", 1), row("c", 1)]);
    let now = page("v2", vec![row("a", 1), row("b", 2), row("c", 1)]);
    let d = PageDelta::between(&base, &now).unwrap();
    assert_eq!(d.rows, vec![(1, row("b", 2))]);
    assert!(d.removed.is_empty());
    assert_eq!(names(&d.apply(&base).unwrap()), ["a", "b", "c"]);
}

#[test]
fn rows_kept_out_of_their_order_are_sent_whole() {
    let base = page("v1", vec![row("a", 1), row("b", 1)]);
    let now = page("v2", vec![row("b", 1), row("a", 1)]);
    assert_eq!(PageDelta::between(&base, &now), None);
}

#[test]
fn a_delta_against_another_page_is_refused() {
    let base = page("v1", vec![row("a", 1)]);
    let now = page("v2", vec![row("a", 2)]);
    let d = PageDelta::between(&base, &now).unwrap();
    let other = page("v0", vec![row("a", 1)]);
    let e = d.apply(&other).unwrap_err();
    assert_eq!(e.code, Code::Unavailable);
    assert!(e.message.contains("subscribe again"), "{}", e.message);
}

#[test]
fn a_delta_whose_rows_do_not_fill_the_page_is_refused() {
    let base = page("v1", vec![row("a", 1), row("b", 1)]);
    let holes = [
        PageDelta {
            size: 5,
            ..PageDelta::between(&base, &page("v2", vec![row("a", 2), row("b", 1)])).unwrap()
        },
        PageDelta {
            rows: vec![(1, row("x", 1)), (1, row("y", 1))],
            ..PageDelta::between(&base, &base.clone()).unwrap()
        },
        PageDelta {
            rows: vec![(9, row("x", 1))],
            size: 3,
            ..PageDelta::between(&base, &base.clone()).unwrap()
        },
    ];
    for d in holes {
        let e = d.apply(&base).unwrap_err();
        assert_eq!(e.code, Code::Unavailable, "{d:?}");
    }
}

#[test]
fn unchanged_pages_have_no_delta() {
    let base = page("v1", vec![row("a", 1)]);
    let unchanged = OperationPage {
        operations: Vec::new(),
        unchanged: true,
        ..base.clone()
    };
    assert_eq!(PageDelta::between(&unchanged, &base), None);
    assert_eq!(PageDelta::between(&base, &unchanged), None);
    assert!(
        PageDelta::between(&base, &base)
            .unwrap()
            .apply(&unchanged)
            .is_err()
    );
}

/// A page of distinct names out of a small pool (so pages share rows), in an order of its own.
fn any_page(version: &'static str) -> impl Strategy<Value = OperationPage> {
    proptest::collection::btree_map(0u8..24, 0u32..3, 0..12)
        .prop_flat_map(|rows| Just(rows.into_iter().collect::<Vec<_>>()).prop_shuffle())
        .prop_map(move |rows| {
            let rows = rows
                .into_iter()
                .map(|(n, rv)| row(&format!("op-{n:02}"), rv))
                .collect();
            page(version, rows)
        })
}

proptest! {
    /// Whatever the two pages, the delta (when there is one) makes the new page exactly, and
    /// sends no row the page held unchanged in its order.
    #[test]
    fn a_delta_makes_the_new_page_exactly(base in any_page("v1"), now in any_page("v2")) {
        if let Some(d) = PageDelta::between(&base, &now) {
            prop_assert_eq!(d.apply(&base).unwrap(), now.clone());
            prop_assert!(d.rows.len() <= now.operations.len());
            for (_, o) in &d.rows {
                prop_assert!(!base.operations.contains(o), "{o:?} was held as it is");
            }
        }
    }

    /// Pages that only gain rows on top and lose them at the bottom (the list's default order
    /// as operations are created) always have a delta, of the new rows alone.
    #[test]
    fn new_rows_on_top_are_all_a_delta_sends(held in 1usize..12, new in 0usize..5) {
        let all: Vec<Operation> = (0..held + new).map(|i| row(&format!("op-{i:02}"), 1)).collect();
        let base = page("v1", all[new..].to_vec());
        let now = page("v2", all[..held].to_vec());
        let d = PageDelta::between(&base, &now).unwrap();
        prop_assert_eq!(d.rows.len(), new.min(held));
        prop_assert_eq!(d.apply(&base).unwrap(), now);
    }
}
