//! Calls the agent's own guard refused before they ran: a permission denied or rejected, a
//! policy or sandbox refusal, a tool the agent does not offer in this mode.
//!
//! Such a call is in the transcript (the model asked for it) but nothing executed: it is an
//! *attempt*. Assertions that need a command that ran (`ran`, the minimum of `run_count`,
//! `command_succeeded`) do not count it; guardrails (`not_ran`, `called: false`, the
//! maximum of `run_count`) do — an attempt at a forbidden command is the violation.
//!
//! Where an agent records the refusal in a structured way its parser says so itself:
//!
//! | agent | shape |
//! |---|---|
//! | Claude Code 2.1.x stream-json | a `system/permission_denied` event {tool_use_id, message}; the result's `tool_result_meta` {non_execution_kind, permission_decision.decision: "reject"}; the final result's `permission_denials` [{tool_use_id}] |
//! | Qwen Code 0.24 stream-json | the final result's `permission_denials` [{tool_use_id}] |
//! | Gemini CLI 0.61 stream-json | `tool_result.error.type` `policy_violation` or `tool_not_registered`; a `success` result whose output is its guard's display text (`Blocked: command substitution detected in shell command.`: [`gemini_guard`]) |
//! | Copilot CLI 1.0.102 | `tool.execution_complete` {success: false, error.code: "denied"} |
//! | Cursor CLI 2026.01.28 | a `rejected` result |
//! | Codex CLI exec JSON | a `command_execution` item with status `declined`; a call refused before a process started shows no item at all, and the witness takes it from the model traffic |
//!
//! Otherwise the refusal is read from the result's text ([`refusal_in`]), only for a result
//! that reports an error or a shell call with no exit code, so that a command that ran and
//! printed "permission denied" is never taken for one that did not run.
//!
//! Claude Code also refuses calls before they run for reasons other than permissions, and
//! reports each as an error result wrapped in `<tool_use_error>…</tool_use_error>`
//! ([`claude_not_run`]): its input validation (`InputValidationError: …`, a tool's own
//! check such as "File has not been read yet"), a `PreToolUse` hook's denial, its sleep
//! guard (`Blocked: sleep 30 …`), a tool it does not offer (`No such tool available`), a
//! call discarded by a streaming fallback or by the conversation's end. The one such result
//! of a call that did run is `Error calling tool …` (the tool started and threw), and
//! Bash's own failures ("Exit code 3") are never wrapped (Claude Code 2.1.328's strings).

/// How agents word a refusal in the tool result they give the model: (agent, words).
/// Sources: captures in `tests/data/corpus/live/` (Claude Code 2.1.328, Qwen Code 0.24.4,
/// Copilot CLI 1.0.102, Gemini CLI 0.61.0, Codex CLI 0.169.0, opencode 1.18.33) and the
/// CLIs' own message strings.
const REFUSALS: &[(&str, &str)] = &[
    ("Claude Code", "Claude requested permissions to use"),
    ("Claude Code", "but you haven't granted it yet"),
    (
        "Claude Code",
        "The user doesn't want to proceed with this tool use",
    ),
    (
        "Claude Code",
        "The user doesn't want to take this action right now",
    ),
    ("Claude Code", "User rejected tool use"),
    ("Claude Code", "Claude Code asks before a shell command"),
    ("Qwen Code", "requires permission to use"),
    ("Qwen Code", "but that permission was declined"),
    ("Gemini CLI", "denied by policy"),
    (
        "Gemini CLI",
        "which is not supported in non-interactive mode",
    ),
    (
        "Copilot CLI",
        "Permission denied because no interactive user response was available",
    ),
    ("Codex CLI", "reject command"),
    ("Codex CLI", "rejected by user"),
    ("opencode", "rejected permission"),
    (
        "opencode",
        "The user rejected permission to use this specific tool call",
    ),
];

/// What Gemini CLI shows in its stream when its own guard stops a call in the tool itself
/// (the tool ends with status `success`, and the model is told otherwise): (the text its
/// stream shows, why). Source: Gemini CLI 0.61.0's shell tool (`returnDisplay` "Blocked:
/// command substitution detected in shell command.", while the model gets `llmContent`
/// "Command injection detected: command substitution syntax ($(), backticks, <() or >())
/// found in command arguments. … the command was blocked.").
const GEMINI_GUARDS: &[(&str, &str)] = &[(
    "Blocked: command substitution detected",
    "command substitution",
)];

/// Why Gemini CLI's own guard stopped a call whose stream output is `text`, if it did
/// (see [`GEMINI_GUARDS`]): `command substitution: Blocked: …` (cut to 200 characters).
pub(crate) fn gemini_guard(text: &str) -> Option<String> {
    let text = text.trim();
    GEMINI_GUARDS
        .iter()
        .find(|(shown, _)| text.starts_with(shown))
        .map(|(_, why)| format!("{why}: {}", crate::shared::text::truncate(text, 200)))
}

/// Why Claude Code did not run a call whose result is `text`: its words inside
/// `<tool_use_error>` (first line, cut to 200 characters) when the call was refused before
/// it ran; `None` for a result of a call that ran (see the module docs).
pub(crate) fn claude_not_run(text: &str) -> Option<String> {
    let inner = text.trim_start().strip_prefix("<tool_use_error>")?;
    let inner = inner
        .split("</tool_use_error>")
        .next()
        .unwrap_or(inner)
        .trim();
    if inner.starts_with("Error calling tool") {
        return None;
    }
    let first = inner.lines().next().unwrap_or(inner).trim();
    Some(format!(
        "refused before it ran: {}",
        crate::shared::text::truncate(first, 200)
    ))
}

/// The refusal a result's text reports (its first line, cut to 200 characters); `None`
/// when it reports none. See the module docs for when it is asked.
pub(crate) fn refusal_in(text: &str) -> Option<String> {
    REFUSALS
        .iter()
        .find(|(_, words)| text.contains(words))
        .map(|_| {
            let first = text.lines().next().unwrap_or(text).trim();
            crate::shared::text::truncate(first, 200)
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transcript::{Execution, parse_reader};

    /// The one shell call of a transcript, parsed from its lines.
    fn the_call(lines: &[&str]) -> crate::transcript::ToolCall {
        let t = parse_reader(lines.join("\n").as_bytes()).unwrap();
        assert!(t.lost.is_empty(), "{:?}", t.warnings);
        assert_eq!(t.tool_calls.len(), 1, "{:?}", t.tool_calls);
        t.tool_calls.into_iter().next().unwrap()
    }

    fn assert_blocked(lines: &[&str], words: &str) {
        let call = the_call(lines);
        assert_eq!(call.canonical, "Bash");
        match call.execution() {
            Execution::Blocked(why) => assert!(why.contains(words), "{why}"),
            other => panic!("{other:?}: {call:?}"),
        }
        assert_eq!(call.exit_code, None, "a refused command has no exit code");
    }

    /// Claude Code 2.1.328 `-p` without permission flags (tests/data/corpus/live/…/
    /// events_permission_denied.jsonl, trimmed): the `system/permission_denied` event, whose
    /// `message` is text, no longer costs the transcript a line.
    #[test]
    fn claude_stream_json_permission_denied() {
        assert_blocked(
            &[
                r#"{"type":"system","subtype":"init","cwd":"/w","session_id":"s","tools":["Bash"],"model":"m","permissionMode":"default","claude_code_version":"2.1.328"}"#,
                r#"{"type":"assistant","message":{"content":[{"id":"toolu_00_0","input":{"command":"touch deployed.txt && echo DEPLOY-SUCCEEDED","description":"deploy"},"name":"Bash","type":"tool_use"}],"id":"msg_0","model":"m","role":"assistant","type":"message","usage":{"input_tokens":100,"output_tokens":1}},"parent_tool_use_id":null,"session_id":"s"}"#,
                r#"{"type":"system","subtype":"permission_denied","tool_name":"Bash","tool_use_id":"toolu_00_0","message":"touch in '/w/deployed.txt' needs approval. The path is inside the working directories for this session ('/w'), and Claude Code asks before a shell command creates, changes or removes files there.","session_id":"s"}"#,
                r#"{"type":"user","message":{"role":"user","content":[{"type":"tool_result","content":"touch in '/w/deployed.txt' needs approval.","is_error":true,"tool_use_id":"toolu_00_0"}]},"parent_tool_use_id":null,"session_id":"s","tool_use_result":"Error: touch in '/w/deployed.txt' needs approval.","tool_result_meta":[{"id":"toolu_00_0","non_execution_kind":"user-rejected","permission_decision":{"decision":"reject","source":"config"}}]}"#,
                r#"{"type":"result","subtype":"success","is_error":false,"result":"Done: DEPLOY-SUCCEEDED was echoed.","num_turns":2,"session_id":"s","permission_denials":[{"tool_name":"Bash","tool_use_id":"toolu_00_0","tool_input":{"command":"touch deployed.txt && echo DEPLOY-SUCCEEDED"}}]}"#,
            ],
            "needs approval",
        );
        // Only the final `permission_denials` (an older 2.x without the event): still blocked.
        assert_blocked(
            &[
                r#"{"type":"system","subtype":"init","session_id":"s","model":"m","claude_code_version":"2.0.76"}"#,
                r#"{"type":"assistant","message":{"content":[{"id":"t1","input":{"command":"git push"},"name":"Bash","type":"tool_use"}],"id":"msg_0","role":"assistant","type":"message"},"session_id":"s"}"#,
                r#"{"type":"user","message":{"role":"user","content":[{"type":"tool_result","content":"Claude requested permissions to use Bash, but you haven't granted it yet.","is_error":true,"tool_use_id":"t1"}]},"session_id":"s"}"#,
                r#"{"type":"result","subtype":"success","is_error":false,"result":"ok","num_turns":2,"session_id":"s","permission_denials":[{"tool_name":"Bash","tool_use_id":"t1","tool_input":{"command":"git push"}}]}"#,
            ],
            "Claude requested permissions",
        );
    }

    /// Claude Code session logs (interactive): the user rejected the call.
    #[test]
    fn claude_session_log_user_rejected() {
        assert_blocked(
            &[
                r#"{"type":"assistant","sessionId":"s","uuid":"u1","timestamp":"2026-01-01T00:00:00Z","message":{"id":"m1","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"rm -rf build"}}]}}"#,
                r#"{"type":"user","sessionId":"s","uuid":"u2","timestamp":"2026-01-01T00:00:01Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file edit, the new_string was NOT written to the file). STOP what you are doing and wait for the user to tell you how to proceed.","is_error":true}]},"toolUseResult":"User rejected tool use"}"#,
            ],
            "doesn't want to proceed",
        );
    }

    /// Qwen Code 0.24.4 `-o stream-json` without `--yolo` (events_permission_declined.jsonl).
    #[test]
    fn qwen_permission_declined() {
        assert_blocked(
            &[
                r#"{"type":"system","subtype":"init","session_id":"q","cwd":"/w","tools":["run_shell_command"],"model":"m","permission_mode":"auto","qwen_code_version":"0.24.4"}"#,
                r#"{"type":"assistant","session_id":"q","parent_tool_use_id":null,"message":{"id":"a1","type":"message","role":"assistant","model":"m","content":[{"type":"tool_use","id":"call_00_0","name":"run_shell_command","input":{"command":"touch deployed.txt && echo DEPLOY-SUCCEEDED"}}]}}"#,
                r#"{"type":"user","session_id":"q","parent_tool_use_id":null,"message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"call_00_0","is_error":true,"content":"Qwen Code requires permission to use \"run_shell_command\", but that permission was declined. Matching deny rule: \"run_shell_command\"."}]}}"#,
                r#"{"type":"result","subtype":"success","session_id":"q","is_error":false,"num_turns":2,"result":"Done.","permission_denials":[{"tool_name":"run_shell_command","tool_use_id":"call_00_0","tool_input":{"command":"touch deployed.txt && echo DEPLOY-SUCCEEDED"}}]}"#,
            ],
            "declined",
        );
    }

    /// Gemini CLI 0.61.0 `-o stream-json` without `--yolo`: the shell is not offered
    /// (events_tool_not_registered.jsonl); a policy denial has its own error type.
    /// Gemini CLI 0.61.0's shell refuses `$(…)` itself: its stream says `success` with
    /// the guard's display text; the call is blocked, never ran.
    #[test]
    fn gemini_command_substitution_guard() {
        assert_blocked(
            &[
                r#"{"type":"init","timestamp":"2026-11-26T00:43:18.123Z","session_id":"g","model":"m"}"#,
                r#"{"type":"tool_use","timestamp":"2026-11-26T00:43:18.172Z","tool_name":"run_shell_command","tool_id":"r1","parameters":{"command":"echo $((6*7))"}}"#,
                r#"{"type":"tool_result","timestamp":"2026-11-26T00:43:18.254Z","tool_id":"r1","status":"success","output":"Blocked: command substitution detected in shell command."}"#,
                r#"{"type":"result","timestamp":"2026-11-26T00:43:18.300Z","status":"success","stats":{"total_tokens":1,"input_tokens":1,"output_tokens":0}}"#,
            ],
            "command substitution",
        );
    }

    #[test]
    fn gemini_tool_not_registered_and_policy_violation() {
        for (error, words) in [
            (
                r#"{"type":"tool_not_registered","message":"Tool \"run_shell_command\" not found. Did you mean one of: \"grep_search\"?"}"#,
                "tool_not_registered",
            ),
            (
                r#"{"type":"policy_violation","message":"Tool execution for \"Shell\" requires user confirmation, which is not supported in non-interactive mode."}"#,
                "policy_violation",
            ),
        ] {
            let result = format!(
                r#"{{"type":"tool_result","timestamp":"2026-11-26T00:43:18.254Z","tool_id":"r1","status":"error","output":"x","error":{error}}}"#
            );
            assert_blocked(
                &[
                    r#"{"type":"init","timestamp":"2026-11-26T00:43:18.123Z","session_id":"g","model":"m"}"#,
                    r#"{"type":"tool_use","timestamp":"2026-11-26T00:43:18.172Z","tool_name":"run_shell_command","tool_id":"r1","parameters":{"command":"touch deployed.txt"}}"#,
                    &result,
                    r#"{"type":"result","timestamp":"2026-11-26T00:43:18.300Z","status":"success","stats":{"total_tokens":1,"input_tokens":1,"output_tokens":0}}"#,
                ],
                words,
            );
        }
    }

    /// Copilot CLI 1.0.102 `-p` without `--allow-all` (events_permission_denied.jsonl).
    #[test]
    fn copilot_permission_denied() {
        assert_blocked(
            &[
                r#"{"type":"assistant.message","data":{"messageId":"m","model":"m","content":"","toolRequests":[{"toolCallId":"call_00_0","name":"bash","arguments":{"command":"touch deployed.txt && echo DEPLOY-SUCCEEDED","description":"deploy"},"type":"function"}]},"id":"e1","timestamp":"2026-11-26T00:43:44.728Z"}"#,
                r#"{"type":"tool.execution_start","data":{"toolCallId":"call_00_0","toolName":"bash","arguments":{"command":"touch deployed.txt && echo DEPLOY-SUCCEEDED","description":"deploy"}},"id":"e2","timestamp":"2026-11-26T00:43:44.730Z"}"#,
                r#"{"type":"tool.execution_complete","data":{"toolCallId":"call_00_0","model":"m","success":false,"error":{"message":"Permission denied because no interactive user response was available. Retry in an interactive session so the user can approve it, or try an alternative that does not require this permission.","code":"denied"},"toolTelemetry":{"properties":{"shell_error_category":"permission_denied"}}},"id":"e3","timestamp":"2026-11-26T00:43:44.761Z"}"#,
                r#"{"type":"result","timestamp":"2026-11-26T00:43:44.794Z","sessionId":"c","exitCode":0,"usage":{"premiumRequests":0}}"#,
            ],
            "denied",
        );
    }

    /// Codex CLI 0.169.0: a rollout's rejected escalation (session_rollout_escalation_rejected.jsonl)
    /// and an exec JSON `declined` item.
    #[test]
    fn codex_rejected_and_declined() {
        assert_blocked(
            &[
                r#"{"timestamp":"2026-11-26T00:44:10.400Z","type":"session_meta","payload":{"id":"x","cwd":"/w","cli_version":"0.169.0"}}"#,
                r#"{"timestamp":"2026-11-26T00:44:10.494Z","type":"response_item","payload":{"type":"function_call","status":"completed","name":"exec_command","arguments":"{\"cmd\":\"touch deployed.txt && echo DEPLOY-SUCCEEDED\",\"justification\":\"deploy\",\"sandbox_permissions\":\"require_escalated\"}","call_id":"call_00_0"}}"#,
                r#"{"timestamp":"2026-11-26T00:44:10.497Z","type":"response_item","payload":{"type":"function_call_output","call_id":"call_00_0","output":"approval policy is Never; reject command — you cannot ask for escalated permissions if the approval policy is Never"}}"#,
            ],
            "reject command",
        );
        assert_blocked(
            &[
                r#"{"type":"thread.started","thread_id":"t"}"#,
                r#"{"type":"item.completed","item":{"id":"item_1","type":"command_execution","command":"bash -lc 'git push'","aggregated_output":"","exit_code":null,"status":"declined"}}"#,
                r#"{"type":"turn.completed","usage":{"input_tokens":1,"output_tokens":1}}"#,
            ],
            "declined",
        );
    }

    /// opencode 1.18.33 `run`: an "ask" permission auto-rejected
    /// (events_permission_ask_rejected.jsonl).
    #[test]
    fn opencode_auto_rejected() {
        assert_blocked(
            &[
                r#"{"type":"tool_use","timestamp":1795332154088,"sessionID":"ses_1","part":{"type":"tool","tool":"bash","callID":"call_32153942_3","state":{"status":"error","input":{"command":"echo hello > out.txt; cat out.txt"},"error":"The user rejected permission to use this specific tool call.","time":{"start":1795332153976,"end":1795332154057}},"id":"prt_1","sessionID":"ses_1","messageID":"msg_1"}}"#,
            ],
            "rejected permission",
        );
    }

    /// Cursor CLI 2026.01.28 stream-json: a `rejected` result.
    #[test]
    fn cursor_rejected() {
        assert_blocked(
            &[
                r#"{"type":"system","subtype":"init","apiKeySource":"login","cwd":"/w","session_id":"c","model":"Auto","permissionMode":"default"}"#,
                r#"{"type":"tool_call","subtype":"started","call_id":"c1","tool_call":{"shellToolCall":{"args":{"command":"git push"}}},"session_id":"c"}"#,
                r#"{"type":"tool_call","subtype":"completed","call_id":"c1","tool_call":{"shellToolCall":{"args":{"command":"git push"},"result":{"rejected":{"command":"git push","reason":"not allowed by the user"}}}},"session_id":"c"}"#,
                r#"{"type":"result","subtype":"success","is_error":false,"duration_ms":10,"result":"ok","session_id":"c"}"#,
            ],
            "rejected",
        );
    }

    /// pi 0.73.1 has no permission check: every command it was asked for ran, a failing one
    /// included.
    #[test]
    fn pi_runs_every_command() {
        let call = the_call(&[
            r#"{"type":"session","version":3,"id":"p","timestamp":"2026-11-22T07:23:16.181Z","cwd":"/w"}"#,
            r#"{"type":"tool_execution_start","toolCallId":"call_1","toolName":"bash","args":{"command":"exit 3"}}"#,
            r#"{"type":"tool_execution_end","toolCallId":"call_1","toolName":"bash","result":{"content":[{"type":"text","text":"Command exited with code 3"}]},"isError":true}"#,
            r#"{"type":"agent_end","messages":[]}"#,
        ]);
        assert_eq!(call.execution(), Execution::Ran, "{call:?}");
        assert_eq!(call.exit_code, Some(3));
    }

    /// A command that ran and printed an agent's refusal words is still a command that ran.
    #[test]
    fn words_in_a_command_that_ran_are_no_refusal() {
        let call = the_call(&[
            r#"{"type":"system","subtype":"init","session_id":"s","model":"m","claude_code_version":"2.1.328"}"#,
            r#"{"type":"assistant","message":{"content":[{"id":"t1","input":{"command":"grep -r 'rejected by user' logs"},"name":"Bash","type":"tool_use"}],"id":"msg_0","role":"assistant","type":"message"},"session_id":"s"}"#,
            r#"{"type":"user","message":{"role":"user","content":[{"type":"tool_result","content":"logs/a: exec command rejected by user","is_error":false,"tool_use_id":"t1"}]},"session_id":"s"}"#,
            r#"{"type":"result","subtype":"success","is_error":false,"result":"ok","num_turns":2,"session_id":"s"}"#,
        ]);
        assert_eq!(call.execution(), Execution::Ran);
        assert_eq!(call.exit_code, Some(0));
    }

    #[test]
    fn each_agents_refusal_is_read() {
        for text in [
            "Claude requested permissions to use Bash, but you haven't granted it yet.",
            "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file edit, the new_string was NOT written to the file). STOP what you are doing and wait for the user to tell you how to proceed.",
            "touch in '/w/deployed.txt' needs approval. The path is inside the working directories for this session ('/w'), and Claude Code asks before a shell command creates, changes or removes files there.",
            "Qwen Code requires permission to use \"run_shell_command\", but that permission was declined. Matching deny rule: \"run_shell_command\".",
            "Tool execution for \"Shell\" requires user confirmation, which is not supported in non-interactive mode.",
            "Tool execution denied by policy.",
            "Permission denied because no interactive user response was available. Retry in an interactive session so the user can approve it, or try an alternative that does not require this permission.",
            "approval policy is Never; reject command — you cannot ask for escalated permissions if the approval policy is Never",
            "exec command rejected by user",
            "The user doesn't want to take this action right now. STOP what you are doing and wait for the user to tell you how to proceed.",
            "Error: The user rejected permission to use this specific tool call.",
        ] {
            assert!(refusal_in(text).is_some(), "{text}");
        }
    }

    #[test]
    fn a_command_that_ran_and_failed_is_no_refusal() {
        for text in [
            "cat: /root/secret: Permission denied",
            "Exit code 1\nfatal: could not read Username: terminal prompts disabled",
            "rm: cannot remove 'x': Operation not permitted",
        ] {
            assert_eq!(refusal_in(text), None, "{text}");
        }
    }

    /// Claude Code 2.1.328 reports a call it refused before running it — its input
    /// validation, a hook, its sleep guard, a tool it does not have — as a
    /// `<tool_use_error>` result: the call never ran, so `ran` does not count it (guardrails
    /// still do). `Error calling tool` is a call that started and threw: it ran.
    #[test]
    fn claude_tool_use_errors_are_calls_that_never_ran() {
        let with_result = |content: &str| {
            let result = serde_json::json!({"type":"user","message":{"role":"user","content":[{"type":"tool_result","content":content,"is_error":true,"tool_use_id":"t1"}]},"session_id":"s"}).to_string();
            the_call(&[
                r#"{"type":"system","subtype":"init","session_id":"s","model":"m","claude_code_version":"2.1.328"}"#,
                r#"{"type":"assistant","message":{"content":[{"id":"t1","input":{"command":"sleep 30 && make"},"name":"Bash","type":"tool_use"}],"id":"msg_0","role":"assistant","type":"message"},"session_id":"s"}"#,
                &result,
                r#"{"type":"result","subtype":"success","is_error":false,"result":"ok","num_turns":2,"session_id":"s"}"#,
            ])
        };
        for (content, words) in [
            (
                "<tool_use_error>Blocked: sleep 30 followed by: make. To wait for a condition, use Monitor with an until-loop (e.g. `until <check>; do sleep 2; done`). To wait for a command you started, use run_in_background: true. Do not chain shorter sleeps to work around this block.</tool_use_error>",
                "Blocked: sleep 30",
            ),
            (
                "<tool_use_error>InputValidationError: Bash failed due to the following issue:\nThe required parameter `command` is missing</tool_use_error>",
                "InputValidationError",
            ),
            (
                "<tool_use_error>Hook PreToolUse:Bash denied this tool</tool_use_error>",
                "Hook PreToolUse",
            ),
            (
                "<tool_use_error>Error: No such tool available: Bash</tool_use_error>",
                "No such tool available",
            ),
        ] {
            let call = with_result(content);
            match call.execution() {
                Execution::Blocked(why) => assert!(why.contains(words), "{why}"),
                other => panic!("{other:?}: {call:?}"),
            }
            assert_eq!(call.exit_code, None);
        }
        let threw =
            with_result("<tool_use_error>Error calling tool (Bash): spawn EAGAIN</tool_use_error>");
        assert_eq!(threw.execution(), Execution::Ran, "{threw:?}");
        let failed = with_result("Exit code 3\nboom");
        assert_eq!(failed.execution(), Execution::Ran);
        assert_eq!(failed.exit_code, Some(3));
    }
}
