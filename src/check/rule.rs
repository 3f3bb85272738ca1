//! One rule of `tickloop check` ([`Rule`]): its name and spec section, the
//! function that checks it, and the findings it gives.

use super::finding::{fail, not_checked, pass, Finding};
use super::probe::Probe;
use anyhow::Result;

/// One rule: its name and spec section (as reported) and the function that
/// checks it on the opened Tick.
pub struct Rule {
    pub name: &'static str,
    pub section: &'static str,
    pub check: fn(&Rule, &mut Probe) -> Result<Finding>,
}

impl Rule {
    pub fn pass(&self, detail: impl Into<String>) -> Finding {
        pass(self.name, self.section, detail)
    }

    pub fn fail(&self, detail: impl Into<String>, fix: impl Into<String>) -> Finding {
        fail(self.name, self.section, detail, fix)
    }

    pub fn not_checked(&self, why: impl Into<String>) -> Finding {
        not_checked(self.name, self.section, why)
    }
}
