"""A hook script for the tests: records its input, then acts as its first argument says.

record        nothing more (exit 0)
deny-rm       exit 2 with a reason on stderr when the Bash command holds `rm -rf`
print JSON    print JSON (a decision, a context, ...) on stdout
stop-once     block a stop unless a Stop hook already blocked (`stop_hook_active`)
block-secret  block a prompt that mentions a secret
garbage       print text that is no JSON
fail          exit 1 with a message on stderr
sleep FILE    write its pid to FILE, then sleep (a timeout or a cancel ends it)
"""

import json
import os
import sys
import time

payload = json.load(sys.stdin)
with open(os.environ["HOOK_LOG"], "a", encoding="utf-8") as log:
    log.write(
        json.dumps(
            {
                "argv": sys.argv[1:],
                "input": payload,
                "project": os.environ.get("CLAUDE_PROJECT_DIR"),
                "secret": os.environ.get("DEEPSEEK_API_KEY"),
            }
        )
        + "\n"
    )
mode = sys.argv[1]
if mode == "deny-rm" and "rm -rf" in payload["tool_input"].get("command", ""):
    print("rm -rf is not allowed here", file=sys.stderr)
    sys.exit(2)
elif mode == "print":
    print(sys.argv[2])
elif mode == "stop-once" and not payload["stop_hook_active"]:
    print(json.dumps({"decision": "block", "reason": "Run the tests before you stop."}))
elif mode == "block-secret" and "secret" in payload["prompt"]:
    print(json.dumps({"decision": "block", "reason": "Prompts must not carry secrets."}))
elif mode == "garbage":
    print("{this is not json")
elif mode == "fail":
    print("the hook broke", file=sys.stderr)
    sys.exit(1)
elif mode == "sleep":
    with open(sys.argv[2], "w", encoding="utf-8") as pid:
        pid.write(str(os.getpid()))
    time.sleep(60)
