//! A page's change as a stream sends it to a client that asked for deltas: the rows added or
//! changed, each at its place in the new page, and the rows that left, against the page the
//! client holds (named by its version). The rows kept are those of the page held, in the order
//! they had there: every order of the list is made of the rows' own fields, so rows that did
//! not change keep their order among themselves, and a change that would move them (none
//! today) is sent as the page whole.

use crate::{ApiError, Code, Operation, OperationPage};
use std::collections::{HashMap, HashSet};

/// How to make a page from the page held: see the module's description.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PageDelta {
    /// The version of the page it applies to.
    pub base_version: String,
    /// The version of the page it makes.
    pub version: String,
    /// The new page's rows that are not on the base page as they are there (added, or
    /// changed), in the new page's order, each with its index in the new page.
    pub rows: Vec<(usize, Operation)>,
    /// The base page's rows that are not on the new page, by namespace and name.
    pub removed: Vec<(String, String)>,
    /// How many rows the new page holds.
    pub size: usize,
    /// The new page's next page token and total, as [`OperationPage`] has them.
    pub next_page_token: Option<String>,
    pub total: usize,
}

/// A row's key on a page: namespace and name.
fn key(o: &Operation) -> (&str, &str) {
    (o.namespace.as_str(), o.name.as_str())
}

/// The keys of a page's rows, `None` when one is there twice (no page this server makes).
fn keyed(page: &OperationPage) -> Option<HashMap<(&str, &str), &Operation>> {
    let mut by_key = HashMap::with_capacity(page.operations.len());
    for o in &page.operations {
        if by_key.insert(key(o), o).is_some() {
            return None;
        }
    }
    Some(by_key)
}

impl PageDelta {
    /// What makes `page` from `base`; `None` when the page is better sent whole: either is
    /// unchanged (no rows), a key is on a page twice, or the rows kept would change order.
    pub fn between(base: &OperationPage, page: &OperationPage) -> Option<PageDelta> {
        if base.unchanged || page.unchanged {
            return None;
        }
        let before = keyed(base)?;
        let after = keyed(page)?;
        let mut rows = Vec::new();
        let mut kept_after = Vec::new();
        for (i, o) in page.operations.iter().enumerate() {
            match before.get(&key(o)) {
                Some(was) if *was == o => kept_after.push(key(o)),
                _ => rows.push((i, o.clone())),
            }
        }
        let kept: HashSet<(&str, &str)> = kept_after.iter().copied().collect();
        let kept_before = base.operations.iter().map(key).filter(|k| kept.contains(k));
        if !kept_before.eq(kept_after.iter().copied()) {
            return None;
        }
        let removed = base
            .operations
            .iter()
            .map(key)
            .filter(|k| !after.contains_key(k))
            .map(|(ns, name)| (ns.to_string(), name.to_string()))
            .collect();
        Some(PageDelta {
            base_version: base.version.clone(),
            version: page.version.clone(),
            rows,
            removed,
            size: page.operations.len(),
            next_page_token: page.next_page_token.clone(),
            total: page.total,
        })
    }

    /// The page this makes from `base`, the page held. Refused (UNAVAILABLE: subscribe again,
    /// and the page comes whole) when `base` is not the page it applies to, or when the rows
    /// kept and sent do not fill the new page exactly, each at a place of its own.
    pub fn apply(&self, base: &OperationPage) -> Result<OperationPage, ApiError> {
        let refused = |why: &str| {
            ApiError::new(
                Code::Unavailable,
                format!("a change of the page could not be applied ({why}): subscribe again"),
            )
        };
        if base.unchanged || base.version != self.base_version {
            return Err(refused("it is not against the page held"));
        }
        let gone: HashSet<(&str, &str)> = self
            .removed
            .iter()
            .map(|(ns, name)| (ns.as_str(), name.as_str()))
            .chain(self.rows.iter().map(|(_, o)| key(o)))
            .collect();
        let mut kept = base.operations.iter().filter(|o| !gone.contains(&key(o)));
        let places_ascend = self.rows.windows(2).all(|w| w[0].0 < w[1].0);
        let in_page = self.rows.last().is_none_or(|(i, _)| *i < self.size);
        if !places_ascend || !in_page || kept.clone().count() + self.rows.len() != self.size {
            return Err(refused("its rows do not fill the page"));
        }
        let mut sent = self.rows.iter().peekable();
        let mut operations = Vec::with_capacity(self.size);
        for i in 0..self.size {
            let next = match sent.next_if(|(at, _)| *at == i) {
                Some((_, o)) => Some(o),
                None => kept.next(),
            };
            operations.extend(next.cloned());
        }
        Ok(OperationPage {
            operations,
            next_page_token: self.next_page_token.clone(),
            total: self.total,
            version: self.version.clone(),
            unchanged: false,
        })
    }
}

#[cfg(test)]
mod tests;
