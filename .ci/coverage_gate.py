"""Fail when any file of acp_agent/ is under the line+branch coverage floor."""

from __future__ import annotations

import json
import sys

FLOOR = 90.0


def main(path: str) -> int:
    files = json.load(open(path, encoding="utf-8"))["files"]
    failing = []
    for name, data in sorted(files.items()):
        percent = data["summary"]["percent_covered"]
        print(f"{percent:6.1f}%  {name}")
        if name.startswith("acp_agent/") and percent < FLOOR:
            failing.append(name)
    if failing:
        print(f"coverage below {FLOOR:.0f}% in: {', '.join(failing)}", file=sys.stderr)
        return 1
    print(f"every file of acp_agent/ is at or above {FLOOR:.0f}% line+branch coverage")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
