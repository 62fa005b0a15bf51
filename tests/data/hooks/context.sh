#!/bin/sh
# A hook whose plain stdout is context for the model (SessionStart, UserPromptSubmit).
cat > /dev/null
echo "The current branch is main."
