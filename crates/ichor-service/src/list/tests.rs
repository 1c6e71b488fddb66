use super::*;
use ichor_model::{Code, MachinePhase, MachineProgress};

fn op(name: &str, minute: i64, cluster: &str, phase: Phase) -> Operation {
    Operation {
        namespace: "default".into(),
        name: name.into(),
        uid: format!("uid-{name}"),
        resource_version: "1".into(),
        cluster: cluster.into(),
        kind_raw: "TalosUpgrade".into(),
        phase,
        created_at: Some(jiff::Timestamp::from_second(1_800_000_000 + minute * 60).unwrap()),
        machines: vec![
            MachineProgress {
                name: "cp-1".into(),
                phase: MachinePhase::Completed,
                message: String::new(),
                started_at: None,
                finished_at: None,
            },
            MachineProgress {
                name: "w-1".into(),
                phase: MachinePhase::Running,
                message: String::new(),
                started_at: None,
                finished_at: None,
            },
            MachineProgress {
                name: "w-2".into(),
                phase: MachinePhase::Skipped,
                message: String::new(),
                started_at: None,
                finished_at: None,
            },
        ],
        ..Operation::default()
    }
}

fn history(n: i64) -> Vec<Operation> {
    (0..n)
        .map(|i| op(&format!("op-{i:03}"), i, "prod", Phase::Completed))
        .collect()
}

fn names(p: &OperationPage) -> Vec<&str> {
    p.operations.iter().map(|o| o.name.as_str()).collect()
}

/// Every page of a query, walked with its tokens.
fn walk(ops: &[Operation], mut q: ListQuery) -> Vec<String> {
    let mut seen = Vec::new();
    loop {
        let p = page(ops.to_vec(), &q).unwrap();
        seen.extend(p.operations.iter().map(|o| o.name.clone()));
        match p.next_page_token {
            Some(t) => q.page_token = Some(t),
            None => return seen,
        }
    }
}

#[test]
fn pages_hold_every_operation_once_newest_first() {
    let ops = history(23);
    let expected: Vec<String> = (0..23).rev().map(|i| format!("op-{i:03}")).collect();
    for size in [1, 3, 7, 23, 50] {
        let q = ListQuery {
            page_size: size,
            ..ListQuery::default()
        };
        assert_eq!(walk(&ops, q), expected, "page size {size}");
    }
    // Same creation time: by name.
    let mut same: Vec<Operation> = ["b", "a", "c"]
        .iter()
        .map(|n| op(n, 0, "prod", Phase::Running))
        .collect();
    same.reverse();
    let q = ListQuery {
        page_size: 1,
        ..ListQuery::default()
    };
    assert_eq!(walk(&same, q), ["a", "b", "c"]);
}

#[test]
fn a_page_after_new_operations_arrived_starts_where_the_last_one_ended() {
    let mut ops = history(10);
    let q = ListQuery {
        page_size: 4,
        ..ListQuery::default()
    };
    let first = page(ops.clone(), &q).unwrap();
    assert_eq!(names(&first), ["op-009", "op-008", "op-007", "op-006"]);
    // Two newer ones arrive, and one the first page showed is deleted.
    ops.push(op("op-new-1", 100, "prod", Phase::Running));
    ops.push(op("op-new-2", 101, "prod", Phase::Running));
    ops.retain(|o| o.name != "op-007");
    let second = page(
        ops,
        &ListQuery {
            page_token: first.next_page_token,
            ..q
        },
    )
    .unwrap();
    assert_eq!(names(&second), ["op-005", "op-004", "op-003", "op-002"]);
    assert_eq!(second.total, 11);
}

#[test]
fn page_size_zero_is_the_default_page_and_a_large_one_is_a_thousand() {
    let ops = history(1200);
    let first = page(ops.clone(), &ListQuery::default()).unwrap();
    assert_eq!(
        first.operations.len(),
        ichor_model::DEFAULT_PAGE_SIZE as usize
    );
    assert!(
        first.next_page_token.is_some(),
        "AIP-158: a token for the rest"
    );
    assert_eq!(first.total, 1200);
    let big = page(
        ops,
        &ListQuery {
            page_size: 5000,
            ..ListQuery::default()
        },
    )
    .unwrap();
    assert_eq!(big.operations.len(), 1000);
    assert!(big.next_page_token.is_some());
    assert_eq!(big.total, 1200);
}

#[test]
fn the_summary_counts_the_machines_instead_of_listing_them() {
    let q = ListQuery {
        view: View::Summary,
        ..ListQuery::default()
    };
    // A finished operation's summary lists no machine; an unfinished one's keeps their phases
    // and times (its pace and estimate are read from them), without their messages.
    let done = page(vec![op("a", 0, "prod", Phase::Completed)], &q).unwrap();
    assert!(done.operations[0].machines.is_empty());
    let mut running = op("a", 0, "prod", Phase::Running);
    running.machines[1].message = "rebooting".into();
    let p = page(vec![running], &q).unwrap();
    let o = &p.operations[0];
    let kept: Vec<(&str, &str)> = o
        .machines
        .iter()
        .map(|m| (m.name.as_str(), m.message.as_str()))
        .collect();
    assert_eq!(kept, [("cp-1", ""), ("w-1", ""), ("w-2", "")]);
    assert_eq!(
        o.summary,
        Some(ichor_model::Progress {
            done: 1,
            total: 2,
            current: Some("w-1".into()),
            failed: None,
        })
    );
    assert_eq!((o.advance().done, o.advance().total), (1, 2));
    // The full view keeps them.
    let full = page(
        vec![op("a", 0, "prod", Phase::Running)],
        &ListQuery::default(),
    )
    .unwrap();
    assert_eq!(full.operations[0].machines.len(), 3);
    assert_eq!(full.operations[0].summary, None);
}

#[test]
fn filters_narrow_before_paging() {
    let mut ops = history(6);
    ops.push(op("eu-one", 50, "prod-eu", Phase::Running));
    ops.push(op("eu-two", 51, "prod-eu", Phase::Failed));
    let mut admin = op("by-admin", 52, "staging", Phase::Paused);
    admin.actor = Some("Alice@Example.com".into());
    ops.push(admin);
    let run = |q: ListQuery| walk(&ops, ListQuery { page_size: 1, ..q });
    let by_cluster = run(ListQuery {
        cluster: Some("prod-eu".into()),
        ..ListQuery::default()
    });
    assert_eq!(by_cluster, ["eu-two", "eu-one"]);
    let by_phase = run(ListQuery {
        phases: vec![Phase::Running, Phase::Paused],
        ..ListQuery::default()
    });
    assert_eq!(by_phase, ["by-admin", "eu-one"]);
    let by_text = run(ListQuery {
        text: "ALICE@".into(),
        ..ListQuery::default()
    });
    assert_eq!(by_text, ["by-admin"]);
    let counted = page(
        ops.clone(),
        &ListQuery {
            text: "op-".into(),
            page_size: 2,
            ..ListQuery::default()
        },
    )
    .unwrap();
    assert_eq!(counted.total, 6);
}

#[test]
fn a_token_is_for_its_own_query_only() {
    let ops = history(5);
    let q = ListQuery {
        page_size: 2,
        cluster: Some("prod".into()),
        ..ListQuery::default()
    };
    let token = page(ops.clone(), &q).unwrap().next_page_token.unwrap();
    // The page size and the view may change between pages.
    let next = ListQuery {
        page_token: Some(token.clone()),
        page_size: 3,
        view: View::Summary,
        ..q.clone()
    };
    assert_eq!(
        names(&page(ops.clone(), &next).unwrap()),
        ["op-002", "op-001", "op-000"]
    );
    for other in [
        ListQuery {
            cluster: Some("staging".into()),
            ..next.clone()
        },
        ListQuery {
            text: "x".into(),
            ..next.clone()
        },
        ListQuery {
            namespace: Some("other".into()),
            ..next.clone()
        },
        ListQuery {
            page_token: Some("not-a-token".into()),
            ..next.clone()
        },
        ListQuery {
            page_token: Some(URL_SAFE_NO_PAD.encode(b"{\"q\":1}")),
            ..next.clone()
        },
    ] {
        let e = page(ops.clone(), &other).unwrap_err();
        assert_eq!(e.code, Code::InvalidArgument);
        assert!(e.message.contains("page token"), "{}", e.message);
        assert!(!e.message.contains("not-a-token"));
    }
}

#[test]
fn an_unchanged_page_comes_back_empty_and_a_change_is_seen() {
    let mut ops = history(30);
    let q = ListQuery {
        page_size: 10,
        view: View::Summary,
        ..ListQuery::default()
    };
    let first = page(ops.clone(), &q).unwrap();
    let again = ListQuery {
        known_version: Some(first.version.clone()),
        ..q.clone()
    };
    let same = page(ops.clone(), &again).unwrap();
    assert!(same.unchanged);
    assert!(same.operations.is_empty());
    assert_eq!(same.version, first.version);
    assert_eq!(same.next_page_token, first.next_page_token);
    // A change below the page does not matter to it; a change on it does.
    ops[0].resource_version = "2".into();
    assert!(page(ops.clone(), &again).unwrap().unchanged);
    ops[29].resource_version = "2".into();
    let changed = page(ops.clone(), &again).unwrap();
    assert!(!changed.unchanged);
    assert_eq!(changed.operations.len(), 10);
    // A new operation changes the first page (and the total).
    ops[29].resource_version = "1".into();
    ops.push(op("op-new", 100, "prod", Phase::Pending));
    assert!(!page(ops, &again).unwrap().unchanged);
}

#[test]
fn arguments_are_checked_before_anything_is_read() {
    let bad = [
        ListQuery {
            text: "x".repeat(101),
            ..ListQuery::default()
        },
        ListQuery {
            text: "a\u{1b}[2J".into(),
            ..ListQuery::default()
        },
        ListQuery {
            phases: vec![Phase::Other("Exploded".into())],
            ..ListQuery::default()
        },
        ListQuery {
            cluster: Some("Not_A_Name".into()),
            ..ListQuery::default()
        },
        ListQuery {
            namespace: Some("UPPER".into()),
            ..ListQuery::default()
        },
        ListQuery {
            page_token: Some("t".repeat(MAX_PAGE_TOKEN + 1)),
            ..ListQuery::default()
        },
        ListQuery {
            known_version: Some("v\u{1b}".repeat(50_000)),
            ..ListQuery::default()
        },
    ];
    for q in bad {
        let e = check(&q).unwrap_err();
        assert_eq!(e.code, Code::InvalidArgument, "{q:?}");
        assert!(!e.message.contains('\u{1b}'));
        assert!(e.message.len() < 200, "{}", e.message);
    }
    let e = check(&ListQuery {
        known_version: Some("0123456789abcdef".repeat(5)),
        ..ListQuery::default()
    })
    .unwrap_err();
    assert_eq!(e.param("what"), Some("known_version"));
    assert!(
        e.message.contains("“0123456789abcdef0123456789abcdef…”"),
        "a short prefix: {}",
        e.message
    );
    assert!(
        check(&ListQuery {
            known_version: Some("f".repeat(MAX_KNOWN_VERSION)),
            ..ListQuery::default()
        })
        .is_ok()
    );
    assert!(
        check(&ListQuery {
            text: "日本語".repeat(33),
            phases: vec![Phase::Running],
            cluster: Some("prod-eu".into()),
            ..ListQuery::default()
        })
        .is_ok()
    );
}

/// A poll can be answered "unchanged" from the operations' metadata alone: a page's version
/// and its next token read nothing else (ListOperations lists metadata only for such a poll).
#[test]
fn a_pages_version_reads_only_what_metadata_carries() {
    let full = history(250);
    let meta: Vec<Operation> = full
        .iter()
        .map(|o| Operation {
            namespace: o.namespace.clone(),
            name: o.name.clone(),
            uid: o.uid.clone(),
            resource_version: o.resource_version.clone(),
            created_at: o.created_at,
            ..Operation::default()
        })
        .collect();
    for view in [View::Summary, View::Full] {
        let mut q = ListQuery {
            view,
            page_size: 100,
            ..ListQuery::everything(Some("default"))
        };
        let a = page(full.clone(), &q).unwrap();
        let b = page(meta.clone(), &q).unwrap();
        assert_eq!(
            (&a.version, &a.next_page_token, a.total),
            (&b.version, &b.next_page_token, b.total)
        );
        q.page_token = a.next_page_token.clone();
        let a = page(full.clone(), &q).unwrap();
        let b = page(meta.clone(), &q).unwrap();
        assert_eq!(
            (&a.version, &a.next_page_token),
            (&b.version, &b.next_page_token)
        );
    }
}

/// Every order walks every operation once in that order, whatever the page size; a token of
/// one order is refused by another; `order_by` reads back what it wrote.
#[test]
fn pages_hold_every_operation_once_in_every_order() {
    use ichor_model::{Order, SortBy};
    let phases = [
        Phase::Completed,
        Phase::Running,
        Phase::Failed,
        Phase::Paused,
    ];
    let ops: Vec<Operation> = (0..17)
        .map(|i| {
            // Names not in creation order, and ties in creation time and state.
            let name = format!("op-{:03}", (i * 7) % 17);
            op(&name, i / 2, "prod", phases[i as usize % 4].clone())
        })
        .collect();
    for by in [SortBy::Age, SortBy::Name, SortBy::State] {
        for reversed in [false, true] {
            let order = Order { by, reversed };
            assert_eq!(Order::from_order_by(order.to_order_by()), Some(order));
            let mut sorted = ops.clone();
            sorted.sort_by(|a, b| order.cmp(a, b));
            let expected: Vec<String> = sorted.iter().map(|o| o.name.clone()).collect();
            for size in [1, 4, 17] {
                let q = ListQuery {
                    page_size: size,
                    order,
                    ..ListQuery::default()
                };
                assert_eq!(walk(&ops, q), expected, "{order:?} by {size}");
            }
        }
    }
    let by_name = |name: &str| ops.iter().find(|o| o.name == name).map(|o| o.name.clone());
    let q = ListQuery {
        page_size: 1,
        order: Order {
            by: SortBy::Name,
            reversed: false,
        },
        ..ListQuery::default()
    };
    assert_eq!(page(ops.clone(), &q).unwrap().operations[0].name, "op-000");
    assert!(by_name("op-016").is_some());
    let running_first = ListQuery {
        page_size: 1,
        order: Order {
            by: SortBy::State,
            reversed: false,
        },
        ..ListQuery::default()
    };
    assert_eq!(
        page(ops.clone(), &running_first).unwrap().operations[0].phase,
        Phase::Running
    );
    let token = page(ops.clone(), &q).unwrap().next_page_token;
    let other = ListQuery {
        page_token: token,
        ..ListQuery::default()
    };
    assert_eq!(
        page(ops.clone(), &other).unwrap_err().code,
        Code::InvalidArgument
    );
    assert_eq!(Order::from_order_by("priority"), None);
    assert_eq!(Order::from_order_by("name up"), None);
    assert_eq!(Order::from_order_by(""), Some(Order::default()));
    assert_eq!(
        Order::from_order_by("create_time desc"),
        Some(Order::default())
    );
}
