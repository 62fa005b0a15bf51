from __future__ import annotations

import sys

from acp_agent.cli import main

sys.exit(main())
