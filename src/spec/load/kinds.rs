//! The one table of assertion kinds: each kind's YAML key, whether it takes `scope:`, and
//! the parser of its value. A new kind is one row here, its parser in its family's file
//! (`tool.rs`, `commands.rs`, `files.rs`, `budget.rs`, `review.rs` — which holds `claims`
//! too —, `user.rs` for the conversation kinds), its variant in
//! [`AssertionKind`] and its evaluation in `src/assertions/`.

use super::super::node::Node;
use super::super::{AssertionKind, Scope};
use super::{Ctx, Fields};

/// One assertion kind.
pub(super) struct Kind {
    /// The key that names the kind in a list item (`- exit_code: 0`).
    pub(super) key: &'static str,
    /// Whether `scope: main|all` may stand beside the key (kinds about tool calls).
    pub(super) scoped: bool,
    /// Reads the key's value (and, for `tool`, its sibling keys); `None` after reporting
    /// every problem as a diagnostic.
    pub(super) parse: fn(&mut Ctx, &Node, &Fields<'_>, Scope) -> Option<AssertionKind>,
}

/// Every assertion kind, in the order suggestions list them.
pub(super) const KINDS: &[Kind] = &[
    Kind {
        key: "tool",
        scoped: true,
        parse: |ctx, _, fields, _| ctx.tool(fields).map(|t| AssertionKind::Tool(Box::new(t))),
    },
    Kind {
        key: "stdout",
        scoped: false,
        parse: |ctx, node, _, _| ctx.review(node).map(AssertionKind::Review),
    },
    Kind {
        key: "exit_code",
        scoped: true,
        parse: |ctx, node, _, scope| {
            ctx.exit_code(node, "exit_code")
                .map(|code| AssertionKind::ExitCode { code, scope })
        },
    },
    Kind {
        key: "output_contains",
        scoped: true,
        parse: |ctx, node, _, scope| {
            ctx.needle(node, "output_contains")
                .map(|text| AssertionKind::OutputContains { text, scope })
        },
    },
    Kind {
        key: "output_equals",
        scoped: true,
        parse: |ctx, node, _, scope| {
            ctx.string(node, "output_equals")
                .map(|text| AssertionKind::OutputEquals { text, scope })
        },
    },
    Kind {
        key: "error_contains",
        scoped: true,
        parse: |ctx, node, _, scope| {
            ctx.needle(node, "error_contains")
                .map(|text| AssertionKind::ErrorContains { text, scope })
        },
    },
    Kind {
        key: "file_exists",
        scoped: false,
        parse: |ctx, node, _, _| {
            ctx.workspace_path(node, "file_exists")
                .map(|path| AssertionKind::FileExists { path })
        },
    },
    Kind {
        key: "file_contains",
        scoped: false,
        parse: |ctx, node, _, _| ctx.file_contains(node),
    },
    Kind {
        key: "ran",
        scoped: true,
        parse: |ctx, node, _, scope| {
            ctx.command_regex(node, "ran", false)
                .map(|pattern| AssertionKind::Ran { pattern, scope })
        },
    },
    Kind {
        key: "not_ran",
        scoped: true,
        parse: |ctx, node, _, scope| {
            ctx.command_regex(node, "not_ran", false)
                .map(|pattern| AssertionKind::NotRan { pattern, scope })
        },
    },
    Kind {
        key: "run_count",
        scoped: true,
        parse: |ctx, node, _, scope| ctx.run_count(node, scope),
    },
    Kind {
        key: "verify",
        scoped: false,
        parse: |ctx, node, _, _| ctx.verify(node).map(AssertionKind::Verify),
    },
    Kind {
        key: "file_absent",
        scoped: false,
        parse: |ctx, node, _, _| {
            ctx.workspace_path(node, "file_absent")
                .map(|path| AssertionKind::FileAbsent { path })
        },
    },
    Kind {
        key: "command_succeeded",
        scoped: true,
        parse: |ctx, node, _, scope| {
            ctx.command_regex(node, "command_succeeded", true)
                .map(|pattern| AssertionKind::CommandSucceeded { pattern, scope })
        },
    },
    Kind {
        key: "wrote",
        scoped: false,
        parse: |ctx, node, _, _| ctx.wrote(node),
    },
    Kind {
        key: "json_file",
        scoped: false,
        parse: |ctx, node, _, _| ctx.json_file(node),
    },
    Kind {
        key: "turns",
        scoped: false,
        parse: |ctx, node, _, _| ctx.budget(node, "turns").map(AssertionKind::Budget),
    },
    Kind {
        key: "cost_usd",
        scoped: false,
        parse: |ctx, node, _, _| ctx.budget(node, "cost_usd").map(AssertionKind::Budget),
    },
    Kind {
        key: "duration",
        scoped: false,
        parse: |ctx, node, _, _| ctx.budget(node, "duration").map(AssertionKind::Budget),
    },
    Kind {
        key: "tool_calls",
        scoped: false,
        parse: |ctx, node, _, _| ctx.budget(node, "tool_calls").map(AssertionKind::Budget),
    },
    Kind {
        key: "skill",
        scoped: true,
        parse: |ctx, _, fields, _| ctx.skill(fields).map(|s| AssertionKind::Skill(Box::new(s))),
    },
    Kind {
        key: "claims",
        scoped: false,
        parse: |ctx, node, _, _| ctx.claims(node),
    },
    Kind {
        key: "asked",
        scoped: false,
        parse: |ctx, node, _, _| ctx.conversation(node, "asked"),
    },
    Kind {
        key: "did_not_ask",
        scoped: false,
        parse: |ctx, node, _, _| ctx.conversation(node, "did_not_ask"),
    },
    Kind {
        key: "user_turns",
        scoped: false,
        parse: |ctx, node, _, _| ctx.conversation(node, "user_turns"),
    },
    Kind {
        key: "elicited",
        scoped: false,
        parse: |ctx, node, _, _| ctx.conversation(node, "elicited"),
    },
];

/// The kind named by `key`.
pub(super) fn find(key: &str) -> Option<&'static Kind> {
    KINDS.iter().find(|k| k.key == key)
}

/// Whether `key` names an assertion kind.
pub(super) fn is_kind(key: &str) -> bool {
    find(key).is_some()
}

/// Every kind's key, in table order.
pub(super) fn keys() -> impl Iterator<Item = &'static str> {
    KINDS.iter().map(|k| k.key)
}
