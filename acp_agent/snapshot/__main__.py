from __future__ import annotations

import sys

from acp_agent.snapshot.cli import main

sys.exit(main())
