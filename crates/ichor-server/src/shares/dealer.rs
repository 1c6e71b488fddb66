//! Shuffle sharding, as kube-apiserver's API Priority and Fairness deals it
//! (`k8s.io/apiserver/pkg/util/shufflesharding`): a person's hash deals a hand of distinct
//! queues out of a pool's queues, and the person's waiters go to the shortest queue of that
//! hand. Two people share a whole hand rarely (with 64 queues and hands of 6, one pair in
//! 74,974,368), so a person whose hand has a queue the others do not fill is served in turn
//! whatever the others send.

/// The queues a hash deals: `hand` distinct numbers below `deck`, the same for the same hash.
/// `hand` is at most `deck`; both are small (the flags bound them).
pub(crate) fn deal(mut hash: u64, deck: usize, hand: usize) -> Vec<usize> {
    let hand = hand.min(deck);
    let mut remainders = Vec::with_capacity(hand);
    for i in 0..hand {
        // At most `deck`, which fits in u64 on every target Rust supports.
        let size = (deck - i) as u64;
        remainders.push((hash % size) as usize);
        hash /= size;
    }
    let mut cards = Vec::with_capacity(hand);
    for i in 0..hand {
        // The remainder-th card of the deck once the earlier picks are taken out of it.
        let mut card = remainders[i];
        for j in (0..i).rev() {
            if card >= remainders[j] {
                card += 1;
            }
        }
        cards.push(card);
    }
    cards
}

#[cfg(test)]
mod tests {
    use super::deal;
    use std::collections::HashSet;

    #[test]
    fn a_hand_is_distinct_queues_of_the_deck_and_the_same_for_the_same_hash() {
        for hash in (0..5000u64).map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15)) {
            let hand = deal(hash, 64, 6);
            assert_eq!(hand.len(), 6);
            assert!(hand.iter().all(|&q| q < 64), "{hand:?}");
            assert_eq!(hand.iter().collect::<HashSet<_>>().len(), 6, "{hand:?}");
            assert_eq!(hand, deal(hash, 64, 6));
        }
        assert_eq!(deal(7, 1, 1), vec![0]);
        assert_eq!(deal(7, 3, 9).len(), 3, "a hand is at most the deck");
        assert!(deal(7, 0, 0).is_empty());
    }

    #[test]
    fn hands_spread_over_the_deck() {
        let mut seen = [0usize; 64];
        for hash in 0..6400u64 {
            for q in deal(hash.wrapping_mul(0x2545_f491_4f6c_dd1d), 64, 6) {
                seen[q] += 1;
            }
        }
        // 600 a queue on average.
        assert!(seen.iter().all(|&n| n > 400 && n < 800), "{seen:?}");
    }
}
