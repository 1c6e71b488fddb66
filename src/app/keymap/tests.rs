use super::*;
use std::collections::HashSet;

#[test]
fn no_key_means_two_things_on_one_screen() {
    for screen in [
        Screen::Operations,
        Screen::Operation,
        Screen::Clusters,
        Screen::Cluster,
    ] {
        let mut seen = HashSet::new();
        for bd in all(screen) {
            for k in bd.keys {
                assert!(seen.insert(*k), "{screen:?}: {k:?} bound twice");
            }
        }
    }
}
