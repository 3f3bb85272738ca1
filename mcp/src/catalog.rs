//! The catalog: every running Tick (`hosted:` and `artifact:`) with its
//! tools and revision (and each `shell:` with shell integration, whose
//! state is a resource too), as the bridge last described it. [`Catalog::refresh`]
//! polls tickhost's list and describes an instance again when it is new,
//! its listed revision changed, it was touched (a mutating call through the
//! bridge), or when asked to describe them all.

use crate::hosts::Hosts;
use crate::names;
use crate::notice::{Notice, Notices};
use serde_json::{Map, Value};
use std::collections::{BTreeMap, HashSet};
use std::sync::{Mutex, MutexGuard};
use tickloop_proto::wire::{ClientRequest, InstanceState, ListEntry};

/// One tool of a running Tick, as its descriptor declares it.
#[derive(Debug, Clone, PartialEq)]
pub struct TickTool {
    pub name: String,
    pub description: String,
    pub input_schema: Map<String, Value>,
    pub mutates: bool,
}

/// A running Tick as the bridge last described it.
#[derive(Debug, Clone, PartialEq)]
pub struct Instance {
    pub id: String,
    pub kind: String,
    pub title: String,
    pub revision: String,
    pub tools: Vec<TickTool>,
    pub recover_with: Option<String>,
    /// The revision `list` showed when it was described.
    pub list_revision: Option<String>,
}

impl Instance {
    pub fn from_descriptor(id: &str, d: &Value, list_revision: Option<String>) -> Option<Instance> {
        let text = |key: &str| d.get(key).and_then(Value::as_str).map(str::to_string);
        let tools = d
            .get("tools")?
            .as_array()?
            .iter()
            .filter_map(|t| {
                Some(TickTool {
                    name: t.get("name")?.as_str()?.to_string(),
                    description: t
                        .get("description")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_string(),
                    input_schema: t.get("input_schema")?.as_object()?.clone(),
                    mutates: t.get("mutates").and_then(Value::as_bool).unwrap_or(true),
                })
            })
            .collect();
        let revision = text("revision")?;
        Some(Instance {
            id: id.to_string(),
            kind: text("kind").unwrap_or_default(),
            title: text("title").unwrap_or_default(),
            list_revision: list_revision.or_else(|| Some(revision.clone())),
            revision,
            tools,
            recover_with: text("recover_with"),
        })
    }

    /// A `shell:` instance with shell integration: no tools; its state
    /// (its commands) is a resource.
    pub fn shell(entry: &ListEntry) -> Instance {
        Instance {
            id: entry.id.clone(),
            kind: "shell".into(),
            title: entry.title.clone().unwrap_or_default(),
            revision: String::new(),
            tools: Vec::new(),
            recover_with: None,
            list_revision: None,
        }
    }

    pub fn tool(&self, name: &str) -> Option<&TickTool> {
        self.tools.iter().find(|t| t.name == name)
    }
}

/// Running instances by id.
pub type Instances = BTreeMap<String, Instance>;

/// What a refresh changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Changes {
    /// The tools: instances came or went, or a revision moved.
    pub tools: bool,
    /// The resources: instances came or went.
    pub resources: bool,
}

/// The running Ticks, kept up to date with tickhost.
pub struct Catalog {
    hosts: Hosts,
    notices: Notices,
    /// Running `hosted:` and `artifact:` instances, by id.
    instances: Mutex<Instances>,
    /// Instances to describe again at the next poll.
    dirty: Mutex<HashSet<String>>,
    /// One refresh at a time.
    refresh_lock: tokio::sync::Mutex<()>,
    /// Asks the poller to refresh now.
    wake: tokio::sync::Notify,
}

/// A lock whose holder panicked leaves plain data behind; go on with it.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Catalog {
    pub fn new(hosts: Hosts, notices: Notices) -> Catalog {
        Catalog {
            hosts,
            notices,
            instances: Mutex::new(Instances::new()),
            dirty: Mutex::new(HashSet::new()),
            refresh_lock: tokio::sync::Mutex::new(()),
            wake: tokio::sync::Notify::new(),
        }
    }

    /// `f` of the running instances (under the catalog's lock: `f` must not
    /// call back into the catalog).
    pub fn with<R>(&self, f: impl FnOnce(&Instances) -> R) -> R {
        f(&lock(&self.instances))
    }

    /// Whether `id` runs (as last polled).
    pub fn contains(&self, id: &str) -> bool {
        lock(&self.instances).contains_key(id)
    }

    /// The catalog revision of `id`, if it runs.
    pub fn revision(&self, id: &str) -> Option<String> {
        lock(&self.instances).get(id).map(|i| i.revision.clone())
    }

    /// The id of the instance `instance` names (its id, or its NAME).
    pub fn resolve(&self, instance: &str) -> Option<String> {
        lock(&self.instances)
            .keys()
            .find(|id| id.as_str() == instance || names::instance_name(id) == instance)
            .cloned()
    }

    /// Whether `tool` of `instance` may change anything: yes unless the
    /// catalog knows it as a query.
    pub fn mutates(&self, instance: &str, tool: &str) -> bool {
        lock(&self.instances)
            .values()
            .find(|i| i.id == instance || names::instance_name(&i.id) == instance)
            .and_then(|i| i.tool(tool))
            .is_none_or(|t| t.mutates)
    }

    /// Asks the poller to refresh now.
    pub fn wake(&self) {
        self.wake.notify_one();
    }

    /// Resolves when [`Catalog::wake`] is called.
    pub async fn woken(&self) {
        self.wake.notified().await
    }

    /// Asks the poller to refresh now, re-describing `instance`.
    pub fn touch(&self, instance: &str) {
        lock(&self.dirty).insert(instance.to_string());
        self.wake();
    }

    /// Takes in a descriptor fetched for a call of TickDescribe; a new
    /// revision changes the tool list. Returns the instance's id when it is
    /// in the catalog.
    pub fn learn(&self, instance: &str, descriptor: &Value) -> Option<String> {
        let mut instances = lock(&self.instances);
        let id = instances
            .keys()
            .find(|id| id.as_str() == instance || names::instance_name(id) == instance)
            .cloned();
        let Some(id) = id else {
            drop(instances);
            self.wake();
            return None;
        };
        if let Some(new) = Instance::from_descriptor(&id, descriptor, None) {
            let changed = instances.get(&id).map(|i| &i.revision) != Some(&new.revision);
            instances.insert(id.clone(), new);
            drop(instances);
            if changed {
                self.notices.send(Notice::ToolsChanged);
            }
        }
        Some(id)
    }

    /// Brings the catalog up to date with tickhost's list; returns what
    /// changed, or `None` when the list could not be read.
    pub async fn refresh(&self, describe_all: bool) -> Option<Changes> {
        let _guard = self.refresh_lock.lock().await;
        let list = self.hosts.simple(ClientRequest::List).await.ok()?;
        let entries = ListEntry::all(&list)?;
        let running: Vec<&ListEntry> = entries
            .iter()
            .filter(|e| e.state == InstanceState::Running)
            .collect();
        let old = lock(&self.instances).clone();
        let dirty = std::mem::take(&mut *lock(&self.dirty));
        let mut new = Instances::new();
        for entry in running {
            // Another machine's (`HOST:KIND:NAME`) by its id there.
            let there = tickloop_client::ssh::split_host_id(&entry.id)
                .map_or(entry.id.clone(), |(_, id)| id);
            if there.starts_with("shell:") {
                // A shell with integration: its state is a resource, and it
                // has no tools.
                if entry.shell.is_some() {
                    new.insert(entry.id.clone(), Instance::shell(entry));
                }
                continue;
            }
            if !(there.starts_with("hosted:") || there.starts_with("artifact:")) {
                continue;
            }
            let (id, list_rev) = (entry.id.clone(), entry.revision.clone());
            let previous = old.get(&id);
            let stale = match previous {
                None => true,
                Some(p) => describe_all || dirty.contains(&id) || p.list_revision != list_rev,
            };
            let kept = if stale {
                self.describe(&id, previous).await
            } else {
                previous.cloned()
            };
            if let Some(instance) = kept {
                new.insert(id, instance);
            }
        }
        let revisions = |c: &Instances| -> Vec<(String, String)> {
            c.values()
                .map(|i| (i.id.clone(), i.revision.clone()))
                .collect()
        };
        let changes = Changes {
            tools: revisions(&old) != revisions(&new),
            resources: !old.keys().eq(new.keys()),
        };
        *lock(&self.instances) = new;
        Some(changes)
    }

    /// `id` described afresh; `previous` when the descriptor is not one or
    /// tickhost could not say; `None` when it ended meanwhile.
    async fn describe(&self, id: &str, previous: Option<&Instance>) -> Option<Instance> {
        let request = ClientRequest::Describe {
            instance: id.to_string(),
        };
        match self.hosts.simple(request).await {
            Ok(descriptor) => {
                Instance::from_descriptor(id, &descriptor, None).or_else(|| previous.cloned())
            }
            Err(refusal) if refusal.kind == "ended" || refusal.kind == "no_such_instance" => None,
            Err(_) => previous.cloned(),
        }
    }
}
