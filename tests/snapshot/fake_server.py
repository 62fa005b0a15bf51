"""A tiny stand-in ACP server for the runner's own tests: it misbehaves on request.

Usage: python fake_server.py [AT_EOF]; AT_EOF is `exit` (default), `fail` (exit 5) or `linger`
(ignore EOF and sleep). A prompt's text picks what the prompt does (see `prompt`); the method
`exit` makes it exit at once.
"""

from __future__ import annotations

import json
import os
import select
import sys
import time
from typing import Any

SESSION_ID = "11111111-2222-3333-4444-555555555555"
REFUSE = "refuse-sessions"
"""A file of this name in the cwd makes `session/new` fail."""


def send(frame: Any) -> None:
    sys.stdout.write(json.dumps(frame) + "\n")
    sys.stdout.flush()


def read() -> Any:
    return json.loads(sys.stdin.readline())


def chunk(text: str, kind: str = "agent_message_chunk") -> None:
    update = {"sessionUpdate": kind, "content": {"type": "text", "text": text}}
    send({"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": SESSION_ID, "update": update}})


def prompt(request_id: Any, text: str) -> None:
    def answer(stop: str = "end_turn") -> None:
        send({"jsonrpc": "2.0", "id": request_id, "result": {"stopReason": stop}})

    if text == "ask":  # two agent requests; report what the client answered
        options = [{"optionId": "yes", "kind": "allow_once"}, {"optionId": "no", "kind": "reject_once"}]
        params = {"sessionId": SESSION_ID, "toolCall": {"toolCallId": "call_1"}, "options": options}
        send({"jsonrpc": "2.0", "id": 0, "method": "session/request_permission", "params": params})
        permission = read()
        send({"jsonrpc": "2.0", "id": 1, "method": "x/unknown", "params": {"path": "/x"}})
        chunk(json.dumps([permission, read()]))
        answer()
    elif text in ("stream", "stream-ignoring-cancel"):  # think, stream, then wait for the cancel
        chunk("thinking", "agent_thought_chunk")
        chunk("partial")
        read()
        answer("cancelled" if text == "stream" else "end_turn")
    elif text == "children":  # two children show tool calls (one twice, one also elsewhere), then the cancel

        def child(kind: str, route: str, session: str = SESSION_ID) -> None:
            meta = {"acpAgent": {"route": route, "parentToolCallId": route.split("/")[-1]}}
            update = {"sessionUpdate": kind, "toolCallId": f"{route}/x", "_meta": meta}
            send({"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": session, "update": update}})

        child("tool_call", "s1/b", "another-session")
        child("tool_call_update", "s1/b")
        child("tool_call", "s1/a")
        child("tool_call", "s1/a")
        early = select.select([sys.stdin], [], [], 0.1)[0]  # a cancel now would not have waited
        child("tool_call", "s1/b")
        read()
        answer("end_turn" if early else "cancelled")
    elif text == "fail":
        send({"jsonrpc": "2.0", "id": request_id, "error": {"code": -32603, "message": "Internal error: boom"}})
    elif text == "noise":  # stdout must carry frames only
        sys.stdout.write("not a frame\n")
        answer()
    elif text == "unasked":  # a response to a request nobody made
        send({"jsonrpc": "2.0", "id": 999, "result": {}})
        answer()
    elif text == "replay-problem":
        print("ERROR acp_agent.llm.replay: replay: ScriptExhausted: no call left", file=sys.stderr, flush=True)
        answer()
    elif text == "exit":
        sys.exit(3)
    elif text != "hang":
        answer()


def main() -> None:
    for line in sys.stdin:
        try:
            request = json.loads(line)
        except ValueError:
            send({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}})
            continue
        if isinstance(request, list):  # a batch: one error per item
            send(
                [
                    {"jsonrpc": "2.0", "id": item.get("id"), "error": {"code": -32600, "message": "no"}}
                    for item in request
                ]
            )
            continue
        method, request_id = request.get("method"), request.get("id")
        if "id" not in request:
            continue  # a notification
        if method == "initialize":
            send({"jsonrpc": "2.0", "id": request_id, "result": {"protocolVersion": 1}})
        elif method == "session/new" and os.path.exists(os.path.join(request["params"]["cwd"], REFUSE)):
            send({"jsonrpc": "2.0", "id": request_id, "error": {"code": -32602, "message": "Invalid params: no"}})
        elif method == "session/new":
            send({"jsonrpc": "2.0", "id": request_id, "result": {"sessionId": SESSION_ID}})
        elif method == "exit":
            sys.exit(3)
        elif method == "session/prompt":
            prompt(request_id, request["params"]["prompt"][0]["text"])
        else:
            send({"jsonrpc": "2.0", "id": request_id, "error": {"code": -32601, "message": "Method not found"}})
    at_eof = sys.argv[1] if len(sys.argv) > 1 else "exit"
    if at_eof == "linger":
        time.sleep(60)
    sys.exit(5 if at_eof == "fail" else 0)


if __name__ == "__main__":
    main()
