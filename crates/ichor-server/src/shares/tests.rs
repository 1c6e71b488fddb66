use super::*;
use std::time::Duration;

fn pool(capacity: usize, per_person: usize, queues: Queues) -> Shares {
    Shares::new(
        Pool {
            name: "calls_in_flight",
            per_person_name: "calls_per_person",
            anonymous_name: "calls_without_a_token",
            capacity,
            per_person,
            anonymous: 1,
            queues,
        },
        Metrics::new(),
    )
}

fn person(name: &str) -> Person {
    Person::Named(Arc::from(name))
}

const QUEUED: Queues = Queues {
    queues: 64,
    hand: 6,
    length: 50,
};

#[test]
fn a_person_holds_at_most_its_share_and_everyone_at_most_the_pool() {
    let shares = pool(4, 2, Queues::NONE);
    let mallory: Vec<Seat> = (0..2)
        .map(|_| shares.try_take(&person("mallory")).unwrap())
        .collect();
    let e = shares.try_take(&person("mallory")).unwrap_err();
    assert_eq!(
        e,
        Refused {
            limit: "calls_per_person",
            max: 2,
            over_share: true,
        }
    );
    let _alice = shares.try_take(&person("alice")).unwrap();
    let _anonymous = shares.try_take(&Person::Anonymous).unwrap();
    let e = shares.try_take(&Person::Anonymous).unwrap_err();
    assert_eq!(e.limit, "calls_without_a_token", "{e:?}");
    let e = shares.try_take(&person("bob")).unwrap_err();
    assert_eq!(
        e,
        Refused {
            limit: "calls_in_flight",
            max: 4,
            over_share: false,
        }
    );
    drop(mallory);
    assert_eq!(shares.held(&person("mallory")), (2, 0));
    let _bob = shares.try_take(&person("bob")).unwrap();
    let error = e.error();
    assert_eq!(error.code, Code::ResourceExhausted);
    assert_eq!(error.param("limit"), Some("calls_in_flight"));
    assert_eq!(error.param("max"), Some("4"));
}

#[tokio::test(start_paused = true)]
async fn a_person_who_holds_nothing_gets_the_next_free_slot() {
    let shares = pool(4, 3, QUEUED);
    let mut mallory: Vec<Seat> = (0..3)
        .map(|_| shares.try_take(&person("mallory")).unwrap())
        .collect();
    let _carol = shares.try_take(&person("carol")).unwrap();
    // Mallory asks for more first, and more than she may hold: her callers wait.
    let waiting: Vec<_> = (0..20)
        .map(|_| {
            let shares = shares.clone();
            tokio::spawn(async move { shares.take(&person("mallory"), None).await })
        })
        .collect();
    tokio::task::yield_now().await;
    let alice = {
        let shares = shares.clone();
        tokio::spawn(async move { shares.take(&person("alice"), None).await })
    };
    tokio::task::yield_now().await;
    // One of Mallory's slots is given back: Alice, who holds nothing, takes it, though
    // Mallory's callers waited longer.
    mallory.pop();
    let seat = alice.await.unwrap().expect("Alice is served");
    assert_eq!(shares.held(&person("alice")), (4, 1));
    assert_eq!(shares.held(&person("mallory")), (4, 2));
    // Alice gives it back: Mallory is under her share again, and her first waiter takes it.
    drop(seat);
    tokio::task::yield_now().await;
    assert_eq!(shares.held(&person("mallory")), (4, 3));
    for w in waiting {
        w.abort();
    }
}

#[tokio::test(start_paused = true)]
async fn a_waiter_is_refused_when_its_queues_are_full_or_its_wait_ends() {
    let queues = Queues {
        queues: 2,
        hand: 1,
        length: 1,
    };
    let shares = pool(1, 1, queues);
    let _held = shares.try_take(&person("carol")).unwrap();
    let first = {
        let shares = shares.clone();
        tokio::spawn(async move { shares.take(&person("dave"), None).await })
    };
    tokio::task::yield_now().await;
    // Dave's one queue holds one waiter: his next caller is refused at once.
    let e = shares.take(&person("dave"), None).await.unwrap_err();
    assert_eq!(e.limit, "calls_in_flight", "{e:?}");
    let until = Instant::now() + Duration::from_secs(3);
    let started = Instant::now();
    let e = shares.take(&person("erin"), Some(until)).await;
    // Erin's queue may be Dave's (two queues, hands of one): refused at once or after 3 s.
    assert!(e.is_err());
    assert!(started.elapsed() <= Duration::from_secs(3));
    first.abort();
    assert!(first.await.is_err(), "aborted while waiting");
    // The aborted waiter left its queue: the slot given back is not lost to it.
    drop(_held);
    let _next = shares.try_take(&person("frank")).unwrap();
}

#[tokio::test(start_paused = true)]
async fn waiters_are_served_in_turn_across_queues() {
    let shares = pool(1, 1, QUEUED);
    let held = shares.try_take(&person("p0")).unwrap();
    let served = Arc::new(Mutex::new(Vec::new()));
    let mut tasks = Vec::new();
    for p in 1..=3 {
        for _ in 0..3 {
            let (shares, served) = (shares.clone(), served.clone());
            tasks.push(tokio::spawn(async move {
                let seat = shares.take(&person(&format!("p{p}")), None).await.unwrap();
                served.lock().unwrap().push(p);
                tokio::time::sleep(Duration::from_millis(10)).await;
                drop(seat);
            }));
            tokio::task::yield_now().await;
        }
    }
    drop(held);
    for t in tasks {
        t.await.unwrap();
    }
    let order = served.lock().unwrap().clone();
    assert_eq!(order.len(), 9);
    // Nobody is served twice before each of the others once (each holds nothing when a slot
    // frees, so the queues are taken in turn).
    for round in order.chunks(3) {
        let mut r = round.to_vec();
        r.sort();
        assert_eq!(r, vec![1, 2, 3], "{order:?}");
    }
}

#[tokio::test(start_paused = true)]
async fn a_slot_granted_to_a_waiter_that_went_away_goes_to_the_next() {
    let shares = pool(1, 1, Queues::single(10));
    let held = shares.try_take(&person("a")).unwrap();
    let gone = {
        let shares = shares.clone();
        tokio::spawn(async move { shares.take(&person("b"), None).await })
    };
    let next = {
        let shares = shares.clone();
        tokio::spawn(async move { shares.take(&person("c"), None).await })
    };
    tokio::task::yield_now().await;
    gone.abort();
    let _ = gone.await;
    drop(held);
    let seat = next.await.unwrap().expect("served");
    assert_eq!(shares.held(&person("c")), (1, 1));
    drop(seat);
    assert_eq!(shares.held(&person("c")), (0, 0));
}
